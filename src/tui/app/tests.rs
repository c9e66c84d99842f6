//! `App::update` fed with actions; the assertions are about what a user would see.

use super::*;
use crate::rank::{shape::OrderChoice, ResultOrder};
use crate::tui::action::{EditOp, MouseInput, SearchOutcome, SearchStage};
use crate::tui::demo::DemoBackend;
use crate::tui::highlight::highlight;
use std::time::Duration;

const QUERY: &str = "Applying a coupon can make the cart total negative";

pub(crate) fn new_app(size: (u16, u16)) -> App {
    let session = Session {
        repo: "/repo".into(),
        model: "demo".into(),
        device: "cpu".into(),
        label: None,
        initial_query: None,
        // The lists chunk by chunk, whatever the query; grouping has tests of its own.
        order: OrderChoice::Fixed(ResultOrder::Flat),
    };
    App::new(session, Theme::default(), size, History::default())
}

/// Runs commands like the runtime would, but synchronously: searches and file loads answer
/// at once (so tests are deterministic). Editor and clipboard commands are returned.
pub(crate) fn settle(app: &mut App, mut commands: Vec<Command>) -> Vec<Command> {
    let mut left = Vec::new();
    while let Some(command) = commands.pop() {
        let action = match command {
            Command::Search(r) => {
                let hits = r.backend.search(&r.query, r.retriever, r.k).map_err(|e| e.to_string());
                let outcome = |hits, stage| SearchOutcome {
                    column: r.column,
                    generation: r.generation,
                    hits,
                    elapsed: Duration::from_millis(3),
                    stage,
                };
                // As the worker does: a hybrid with a reranker answers twice.
                let reranks = crate::rerank::reorders(r.retriever) && r.backend.rerank_depth().is_some();
                match (reranks, &hits) {
                    (true, Ok(first)) => {
                        let second = r.backend.rerank(&r.query, first).map_err(|e| e.to_string());
                        let second = second.map(|h| h.unwrap_or_else(|| first.clone()));
                        commands.extend(
                            app.update(Action::SearchDone(outcome(hits, SearchStage::RerankFollows))),
                        );
                        Action::SearchDone(outcome(second, SearchStage::Reranked))
                    }
                    _ => Action::SearchDone(outcome(hits, SearchStage::Final)),
                }
            }
            Command::LoadFile { path, backend } => {
                let file =
                    backend.file_source(&path).map(|s| Arc::new(highlight(&path, &s, "base16-ocean.dark")));
                Action::FileLoaded { path, file }
            }
            other => {
                left.push(other);
                continue;
            }
        };
        commands.extend(app.update(action));
    }
    left
}

pub(crate) fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        let action = if c == '\n' { Action::Edit(EditOp::Newline) } else { Action::Insert(c) };
        assert!(app.update(action).is_empty());
    }
}

/// An app with both indexes ready and QUERY searched.
pub(crate) fn searched_app(size: (u16, u16)) -> (App, DemoBackend) {
    let backend = DemoBackend::sample();
    let mut app = new_app(size);
    let commands = app.update(Action::DenseReady(Arc::new(backend.clone())));
    settle(&mut app, commands);
    type_text(&mut app, QUERY);
    let commands = app.update(Action::RunSearch);
    settle(&mut app, commands);
    (app, backend)
}

fn searches(commands: &[Command]) -> Vec<(usize, u64, Retriever)> {
    commands
        .iter()
        .filter_map(|c| match c {
            Command::Search(r) => Some((r.column, r.generation, r.retriever)),
            _ => None,
        })
        .collect()
}

fn outcome(column: usize, generation: u64, chunks: &[u32]) -> Action {
    let hits = chunks.iter().map(|&chunk| crate::index::Hit { chunk, score: 1.0 }).collect();
    let stage = SearchStage::Final;
    Action::SearchDone(SearchOutcome { column, generation, hits: Ok(hits), elapsed: Duration::ZERO, stage })
}

#[test]
fn typing_builds_a_multi_line_issue() {
    let mut app = new_app((100, 30));
    type_text(&mut app, "Bug:\ntotal < 0");
    app.update(Action::Edit(EditOp::Backspace));
    assert_eq!(app.editor.text(), "Bug:\ntotal < ");
    assert_eq!(app.focus, Pane::Editor);
}

#[test]
fn a_paste_lands_in_the_editor_whatever_has_the_focus() {
    let mut app = new_app((100, 30));
    app.update(Action::Focus(Pane::Preview));
    app.update(Action::Paste("Traceback:\r\n```py\n\tcart.total()\n```".into()));
    assert_eq!(app.focus, Pane::Editor);
    assert_eq!(app.editor.lines(), ["Traceback:", "```py", "    cart.total()", "```"]);
}

/// With the results focused, a paste is a new issue: it replaces the old one (two issues
/// mixed searched for neither), and Ctrl-P brings the old one back.
#[test]
fn a_paste_outside_the_editor_replaces_the_issue_and_keeps_the_old_in_history() {
    let mut app = new_app((100, 30));
    type_text(&mut app, "first issue");
    app.update(Action::Focus(Pane::Left));
    app.update(Action::Paste("second issue".into()));
    assert_eq!(app.editor.text(), "second issue");
    assert!(app.message.as_ref().is_some_and(|m| m.text.contains("Ctrl-P")));
    app.update(Action::HistoryPrev);
    assert_eq!(app.editor.text(), "first issue");
    // In the editor a paste goes in at the cursor, as always.
    app.update(Action::Paste(" and more".into()));
    assert_eq!(app.editor.text(), "first issue and more");
}

/// Growing the terminal leaves no line hidden above while there is room below.
#[test]
fn a_resize_scrolls_the_editor_and_the_lists_back_to_their_first_lines() {
    let (mut app, _backend) = searched_app((100, 30));
    app.update(Action::Focus(Pane::Left));
    for _ in 0..30 {
        app.update(Action::Move(1));
    }
    type_text(&mut app, "\ntwo\nthree\nfour\nfive");
    app.update(Action::Resize(60, 14));
    assert!(app.editor.scroll > 0, "the issue's last line is shown at 60x14");
    app.update(Action::Focus(Pane::Left));
    app.update(Action::Resize(60, 14));
    assert!(app.columns[0].offset > 0, "the selection is shown at 60x14");
    app.update(Action::Resize(160, 60));
    assert_eq!(app.columns[0].offset, 0, "the whole list fits: it starts at its first hit");
    assert_eq!(app.editor.scroll, 0, "the whole issue fits: it starts at its first line");
}

/// After Ctrl-L the results answer an issue no longer on screen: the columns say so, and a
/// search makes them current again.
#[test]
fn results_for_an_earlier_issue_are_marked_until_the_next_search() {
    let (mut app, _backend) = searched_app((100, 30));
    assert!(!app.results_stale());
    app.update(Action::ClearQuery);
    assert!(app.results_stale());
    let screen = crate::tui::snapshot_tests::draw(&app).to_string();
    assert!(screen.contains("earlier issue, Ctrl-S"), "{screen}");
    type_text(&mut app, "tax region");
    let commands = app.update(Action::RunSearch);
    settle(&mut app, commands);
    assert!(!app.results_stale());
}

/// Test files rank lower and are marked `↓`, which the legend under the list explains; T hides
/// them from both lists and shows them again.
#[test]
fn hits_in_test_files_are_marked_and_can_be_hidden() {
    let backend = DemoBackend::new(&[
        ("shop/cart.py", "def cart_total(items):\n    return sum(items)\n"),
        ("tests/test_cart.py", "def test_cart_total():\n    assert cart_total([1, 2]) == 3\n"),
    ]);
    let mut app = new_app((120, 30));
    let commands = app.update(Action::Bm25Ready(Arc::new(backend.with_dense(false))));
    settle(&mut app, commands);
    type_text(&mut app, "cart total");
    let commands = app.update(Action::RunSearch);
    settle(&mut app, commands);
    let is_test =
        |app: &App, h: &crate::index::Hit| app.chunk(h.chunk).is_some_and(|c| c.path.starts_with("tests/"));
    assert!(app.columns[0].hits.iter().any(|h| is_test(&app, h)), "the test file is a hit");
    let screen = crate::tui::snapshot_tests::draw(&app).to_string();
    let row = screen.lines().find(|l| l.contains("test_cart_total")).unwrap_or_else(|| panic!("{screen}"));
    assert!(row.contains("↓ f test_cart_total"), "marked: {screen}");
    assert!(screen.contains("↓ test file, ranked as if at 10× its rank"), "explained: {screen}");

    app.update(Action::ToggleTests);
    assert!(!app.columns[0].hits.is_empty() && !app.columns[0].hits.iter().any(|h| is_test(&app, h)));
    assert!(app.message.as_ref().is_some_and(|m| m.text.contains("hidden")));
    app.update(Action::ToggleTests);
    assert_eq!(app.columns[0].hits, app.columns[0].all_hits);
}

/// Reported: "+7 more rows" under a 7-line issue. The count is of the issue's lines left
/// unseen, not of wrapped rows, and a trailing newline is no line.
#[test]
fn the_unfocused_editor_counts_the_lines_it_hides() {
    let mut app = new_app((80, 24));
    type_text(&mut app, "one\ntwo\nthree\nfour\nfive\nsix\nseven\n");
    app.update(Action::Focus(Pane::Left));
    let screen = crate::tui::snapshot_tests::draw(&app).to_string();
    let shown = screen.lines().filter(|l| ["one", "two", "three"].iter().any(|w| l.contains(w))).count();
    assert!(screen.contains(&format!("+{} more lines", 7 - shown)), "{screen}");
}

#[test]
fn running_a_search_marks_both_columns_pending() {
    let mut app = new_app((100, 30));
    app.update(Action::DenseReady(Arc::new(DemoBackend::sample())));
    type_text(&mut app, QUERY);
    let commands = app.update(Action::RunSearch);
    let sent = searches(&commands);
    assert_eq!(sent.len(), 2);
    assert_eq!((sent[0].0, sent[0].2), (0, Retriever::Bm25));
    assert_eq!((sent[1].0, sent[1].2), (1, Retriever::Dense));
    assert_ne!(sent[0].1, sent[1].1, "each request has its own generation");
    assert!(app.columns.iter().all(|c| c.status == ColumnStatus::Searching));
    assert_eq!(app.history.entries(), [QUERY]);
}

#[test]
fn results_arrive_and_the_preview_follows_the_first_hit() {
    let (app, backend) = searched_app((100, 30));
    assert!(app.columns.iter().all(|c| c.status == ColumnStatus::Ready && !c.hits.is_empty()));
    let first = app.columns[0].hits[0].chunk;
    assert_eq!(app.current_chunk(), Some(first));
    let chunk = backend.chunk(first).unwrap();
    assert!(matches!(app.files.get(&chunk.path), Cached::Loaded(_)), "the preview's file was loaded");
    assert_eq!(app.preview_scroll, chunk.start_line.saturating_sub(1 + PREVIEW_CONTEXT));
}

#[test]
fn results_of_a_stale_search_are_dropped() {
    let mut app = new_app((100, 30));
    app.update(Action::DenseReady(Arc::new(DemoBackend::sample())));
    type_text(&mut app, "first");
    let old = searches(&app.update(Action::RunSearch));
    type_text(&mut app, " and second");
    let new = searches(&app.update(Action::RunSearch));
    app.update(outcome(0, old[0].1, &[1, 2]));
    assert_eq!(app.columns[0].status, ColumnStatus::Searching, "old results ignored");
    assert!(app.columns[0].hits.is_empty());
    app.update(outcome(0, new[0].1, &[3]));
    assert_eq!(app.columns[0].status, ColumnStatus::Ready);
    assert_eq!(app.columns[0].hits[0].chunk, 3);
    app.update(outcome(0, old[0].1, &[1, 2]));
    assert_eq!(app.columns[0].hits[0].chunk, 3, "late old results do not overwrite new ones");
}

#[test]
fn a_search_before_indexing_waits_for_bm25_then_dense() {
    let backend = DemoBackend::sample();
    let mut app = new_app((100, 30));
    type_text(&mut app, QUERY);
    assert!(app.update(Action::RunSearch).is_empty());
    assert!(app.columns.iter().all(|c| c.status == ColumnStatus::WaitingForIndex));
    assert!(app.message.as_ref().is_some_and(|m| m.text.contains("as soon as the BM25 index is ready")));
    let sent = searches(&app.update(Action::Bm25Ready(Arc::new(backend.with_dense(false)))));
    assert_eq!(sent.iter().map(|s| s.0).collect::<Vec<_>>(), [0], "BM25 runs at once");
    assert!(app.message.is_none(), "the promise is kept, so it is no longer shown");
    assert_eq!(app.columns[1].status, ColumnStatus::WaitingForIndex);
    assert_eq!(app.index.state, IndexState::Bm25Only);
    let sent = searches(&app.update(Action::DenseReady(Arc::new(backend))));
    assert_eq!(
        sent.iter().map(|s| (s.0, s.2)).collect::<Vec<_>>(),
        [(1, Retriever::Dense)],
        "only the dense column re-runs"
    );
    assert_eq!(app.index.state, IndexState::Ready);
}

#[test]
fn selection_moves_within_the_list_and_changes_the_preview() {
    let (mut app, _) = searched_app((100, 30));
    app.update(Action::Focus(Pane::Left));
    let hits = app.columns[0].hits.clone();
    app.update(Action::Move(1));
    assert_eq!(app.current_chunk(), Some(hits[1].chunk));
    app.update(Action::Bottom);
    assert_eq!(app.columns[0].selected, hits.len() - 1);
    app.update(Action::Move(5));
    assert_eq!(app.columns[0].selected, hits.len() - 1, "clamped at the end");
    app.update(Action::Top);
    assert_eq!(app.columns[0].selected, 0);
    app.update(Action::Focus(Pane::Right));
    assert_eq!(
        app.current_chunk(),
        Some(app.columns[1].hits[0].chunk),
        "the preview shows the focused column"
    );
}

#[test]
fn jumping_to_a_neighbour_and_back() {
    let (mut app, backend) = searched_app((100, 30));
    let total = backend.id_of("Cart.total").unwrap();
    let discount = backend.id_of("apply_discount").unwrap();
    app.update(Action::Focus(Pane::Left));
    let row = app.columns[0].hits.iter().position(|h| h.chunk == total).expect("Cart.total is ranked");
    app.update(Action::Move(row as isize));
    app.update(Action::Focus(Pane::Neighbours));
    let target = app
        .neighbours()
        .iter()
        .position(|n| n.chunk == discount && n.direction == Direction::Callee)
        .unwrap();
    app.update(Action::Move(target as isize));
    let commands = app.update(Action::Jump);
    settle(&mut app, commands);
    assert_eq!(app.current_chunk(), Some(discount));
    assert_eq!(app.neighbour_selected, 0);
    assert!(app.neighbours().iter().any(|n| n.chunk == total && n.direction == Direction::Caller));
    app.update(Action::Back);
    assert_eq!(app.current_chunk(), Some(total));
    assert_eq!(app.neighbour_selected, target, "the selection we jumped from is restored");
    app.update(Action::Back);
    assert_eq!(app.current_chunk(), Some(total), "nothing more to go back to");
    assert!(app.message.is_some());
}

#[test]
fn after_a_jump_the_result_list_again_drives_preview_open_and_copy() {
    let (mut app, backend) = searched_app((100, 30));
    let total = backend.id_of("Cart.total").unwrap();
    app.update(Action::Focus(Pane::Left));
    let row = app.columns[0].hits.iter().position(|h| h.chunk == total).expect("Cart.total is ranked");
    app.update(Action::Move(row as isize));
    app.update(Action::Focus(Pane::Neighbours));
    let commands = app.update(Action::Jump);
    settle(&mut app, commands);
    assert_ne!(app.current_chunk(), Some(total), "jumped away");
    // Back to the same result column, then down one row: everything follows that row.
    app.update(Action::Focus(Pane::Left));
    assert_eq!(app.current_chunk(), Some(total));
    app.update(Action::Move(1));
    let selected = app.columns[0].selected_hit().unwrap().chunk;
    assert_eq!(app.current_chunk(), Some(selected));
    let chunk = backend.chunk(selected).unwrap().clone();
    let left = app.update(Action::CopyLocation);
    assert!(
        matches!(left.as_slice(), [Command::Copy(text)] if *text == format!("{}:{}", chunk.path, chunk.start_line)),
        "{left:?}"
    );
}

#[test]
fn toggling_hybrid_re_runs_the_right_column_and_drops_its_old_results() {
    let (mut app, _) = searched_app((100, 30));
    let dense_generation = app.columns[1].generation;
    let sent = searches(&app.update(Action::ToggleHybrid));
    assert_eq!(app.columns[1].retriever, Retriever::Hybrid);
    assert_eq!(sent.iter().map(|s| (s.0, s.2)).collect::<Vec<_>>(), [(1, Retriever::Hybrid)]);
    app.update(outcome(1, dense_generation, &[0]));
    assert_eq!(app.columns[1].status, ColumnStatus::Searching, "a dense answer is not a hybrid one");
    app.update(outcome(1, sent[0].1, &[4, 5]));
    assert_eq!(app.columns[1].hits.len(), 2);
    app.update(Action::ToggleHybrid);
    assert_eq!(app.columns[1].retriever, Retriever::History);
    app.update(Action::ToggleHybrid);
    assert_eq!(app.columns[1].retriever, Retriever::Dense);
}

#[test]
fn the_history_column_shows_one_row_per_file_unless_an_order_was_chosen() {
    use crate::rank::ResultOrder;
    let (mut app, _) = searched_app((100, 30));
    app.update(Action::ToggleHybrid);
    app.update(Action::ToggleHybrid);
    assert_eq!(app.columns[1].retriever, Retriever::History);
    // History scores a file once for all its chunks: its rows are files (issue 81). (The demo
    // backend has no git history: its answer is delivered as a history backend's would be.)
    app.columns[1].status = ColumnStatus::Searching;
    app.update(outcome(1, app.columns[1].generation, &[4, 5]));
    assert_eq!(app.columns[1].order, ResultOrder::Grouped);
    // `f` is the user's choice, and holds for history too: chunk by chunk here.
    app.update(Action::ToggleOrder);
    if app.columns[0].order != ResultOrder::Flat {
        app.update(Action::ToggleOrder);
    }
    let chosen = app.columns[0].order;
    app.columns[1].status = ColumnStatus::Searching;
    app.update(outcome(1, app.columns[1].generation, &[4, 5]));
    assert_eq!(app.columns[1].order, chosen);
    assert_eq!(chosen, ResultOrder::Flat);
}

#[test]
fn history_recalls_previous_queries_and_keeps_the_draft() {
    let mut app = new_app((100, 30));
    app.update(Action::DenseReady(Arc::new(DemoBackend::sample())));
    for query in ["first issue", "second issue"] {
        app.update(Action::ClearQuery);
        type_text(&mut app, query);
        app.update(Action::RunSearch);
    }
    app.update(Action::ClearQuery);
    type_text(&mut app, "draft");
    let mut recall = |action| {
        app.update(action);
        app.editor.text()
    };
    assert_eq!(recall(Action::HistoryPrev), "second issue");
    assert_eq!(recall(Action::HistoryPrev), "first issue");
    assert_eq!(recall(Action::HistoryNext), "second issue");
    assert_eq!(recall(Action::HistoryNext), "draft");
}

#[test]
fn a_blank_issue_is_not_searched() {
    let mut app = new_app((100, 30));
    app.update(Action::DenseReady(Arc::new(DemoBackend::sample())));
    type_text(&mut app, "  \n ");
    assert!(app.update(Action::RunSearch).is_empty());
    assert!(app.message.as_ref().is_some_and(|m| m.error));
}

#[test]
fn indexing_failures_are_reported() {
    let mut app = new_app((100, 30));
    type_text(&mut app, QUERY);
    app.update(Action::RunSearch);
    app.update(Action::IndexFailed("cannot read /repo: permission denied".into()));
    assert!(matches!(&app.index.state, IndexState::Failed(m) if m.contains("permission")));
    assert!(matches!(&app.columns[0].status, ColumnStatus::Failed(m) if m.contains("permission")));

    let mut app = new_app((100, 30));
    app.update(Action::Bm25Ready(Arc::new(DemoBackend::sample().with_dense(false))));
    app.update(Action::IndexerStopped);
    assert!(app.index.dense_error.as_ref().is_some_and(|e| e.contains("dense")));
    assert!(!app.index.busy(), "no gauge for a dense index that will not come");
}

#[test]
fn open_and_copy_act_on_the_selection() {
    let (mut app, backend) = searched_app((100, 30));
    app.update(Action::Focus(Pane::Left));
    let chunk = backend.chunk(app.current_chunk().unwrap()).unwrap().clone();
    let commands = app.update(Action::OpenInEditor);
    let left = settle(&mut app, commands);
    match left.as_slice() {
        [Command::OpenEditor { file, line }] => {
            assert_eq!(file, &std::path::Path::new("/repo").join(&chunk.path));
            assert_eq!(*line, chunk.start_line);
        }
        other => panic!("expected OpenEditor, got {other:?}"),
    }
    let left = app.update(Action::CopyLocation);
    assert!(
        matches!(left.as_slice(), [Command::Copy(text)] if *text == format!("{}:{}", chunk.path, chunk.start_line))
    );
    // The terminal never confirms an OSC 52 write: the message must not claim a copy.
    let said = app.message.as_ref().map(|m| m.text.clone()).unwrap_or_default();
    assert!(said.contains("sent to the clipboard") && !said.contains("copied"), "{said}");
}

#[test]
fn clicking_a_row_selects_it_and_the_wheel_scrolls_the_preview() {
    let (mut app, _) = searched_app((100, 30));
    let area = app.areas().columns[1];
    let commands = app.update(Action::Mouse(MouseInput::Click { x: area.x + 3, y: area.y + 1 + 2 }));
    settle(&mut app, commands);
    assert_eq!(app.focus, Pane::Right);
    assert_eq!(app.columns[1].selected, 2);
    app.update(Action::Focus(Pane::Preview));
    app.update(Action::Top);
    assert_eq!(app.preview_scroll, 0);
    let preview = app.areas().preview;
    app.update(Action::Mouse(MouseInput::ScrollDown { x: preview.x + 2, y: preview.y + 2 }));
    assert_eq!(app.preview_scroll, 3);
}

#[test]
fn the_layout_adapts_to_the_terminal_size() {
    let (mut app, _) = searched_app((220, 60));
    let wide = app.areas();
    assert_eq!(wide.preview.y, wide.columns[0].y, "wide: preview beside the results");
    app.update(Action::Resize(160, 45));
    let stacked = app.areas();
    assert!(stacked.preview.y > stacked.columns[0].y, "160 columns: the lists get the full width");
    assert!(stacked.columns[0].width > wide.columns[0].width - 2, "and are no narrower than at 220");
    app.update(Action::Resize(80, 24));
    let narrow = app.areas();
    assert!(narrow.preview.y > narrow.columns[0].y, "narrow: preview below the results");
    app.update(Action::Resize(60, 24));
    let tiny = app.areas();
    assert!(tiny.columns[1].y > tiny.columns[0].y, "very narrow: result columns stack");
    app.update(Action::Focus(Pane::Left));
    assert_eq!(app.areas().editor.height, 3, "short terminal: the unfocused editor shrinks");
}

#[test]
fn an_initial_query_runs_once_bm25_is_ready() {
    let session = Session { initial_query: Some(QUERY.into()), ..Session::default() };
    let mut app = App::new(session, Theme::default(), (100, 30), History::default());
    assert_eq!(app.editor.text(), QUERY);
    let sent = searches(&app.update(Action::Bm25Ready(Arc::new(DemoBackend::sample()))));
    assert_eq!(sent.len(), 2);
}

#[test]
fn after_a_search_the_focus_is_on_the_results_so_j_moves_the_selection() {
    let (mut app, _) = searched_app((100, 30));
    assert_eq!(app.focus, Pane::Left, "Ctrl-S hands the keys to the results");
    let before = app.editor.text();
    let first = app.columns[0].selected_hit().map(|h| h.chunk);
    let j = crossterm::event::Event::Key(crossterm::event::KeyEvent::new(
        crossterm::event::KeyCode::Char('j'),
        crossterm::event::KeyModifiers::NONE,
    ));
    let action = crate::tui::keymap::map_event(&app, j).expect("j is bound on the results");
    app.update(action);
    assert_eq!(app.editor.text(), before, "j does not type into the issue");
    assert_ne!(app.columns[0].selected_hit().map(|h| h.chunk), first, "j selects the second hit");
}

fn key(app: &App, code: crossterm::event::KeyCode) -> Option<Action> {
    let modifiers = crossterm::event::KeyModifiers::NONE;
    let event = crossterm::event::Event::Key(crossterm::event::KeyEvent::new(code, modifiers));
    crate::tui::keymap::map_event(app, event)
}

/// Reported: Tab from the call graph landed in the issue editor, and `y` there typed a "y"
/// into the issue. Tab and Shift-Tab cycle the result panes only.
#[test]
fn tab_and_shift_tab_cycle_the_result_panes_and_never_the_editor() {
    use crossterm::event::KeyCode;
    let (mut app, _) = searched_app((120, 40));
    for (code, expected) in [
        (KeyCode::Tab, [Pane::Right, Pane::Preview, Pane::Neighbours, Pane::Left]),
        (KeyCode::BackTab, [Pane::Neighbours, Pane::Preview, Pane::Right, Pane::Left]),
    ] {
        for pane in expected.iter().cycle().take(8) {
            let action = key(&app, code).expect("Tab is bound everywhere");
            app.update(action);
            assert_eq!(app.focus, *pane, "{code:?}");
        }
    }
    // From the editor, entered on purpose with `i`, Tab goes to the results like Esc.
    app.update(key(&app, KeyCode::Char('i')).unwrap());
    assert_eq!(app.focus, Pane::Editor);
    app.update(key(&app, KeyCode::BackTab).unwrap());
    assert_eq!(app.focus, Pane::Left);
}

#[test]
fn keys_in_the_result_panes_never_type_into_the_issue() {
    use crossterm::event::KeyCode;
    let (mut app, _) = searched_app((120, 40));
    let issue = app.editor.text();
    for _ in 0..Pane::TAB_CYCLE.len() {
        let pane = app.focus;
        let copy = key(&app, KeyCode::Char('y')).unwrap();
        assert!(matches!(copy, Action::CopyLocation), "y copies in {pane:?}");
        app.update(copy);
        // A reflexive Esc steps back to the result list, then `y` still copies.
        app.update(key(&app, KeyCode::Esc).map_or(Action::Sequence(vec![]), |a| a));
        assert_ne!(app.focus, Pane::Editor, "Esc in {pane:?} entered the editor");
        assert!(matches!(key(&app, KeyCode::Char('y')), Some(Action::CopyLocation)));
        app.update(Action::Focus(pane));
        app.update(key(&app, KeyCode::Tab).unwrap());
    }
    assert_eq!(app.editor.text(), issue, "the issue is untouched");
    app.update(key(&app, KeyCode::Char('i')).unwrap());
    app.update(key(&app, KeyCode::Char('y')).unwrap());
    assert_eq!(app.editor.text(), format!("{issue}y"), "in the editor, entered with i, y is text");
}

const CART: &str =
    "class Cart:\n    def total_price(self):\n        return with_vat(self.subtotal())\n\n    \
                    def subtotal(self):\n        return sum(self.prices)\n";
const TAX: &str = "def with_vat(amount):\n    return amount * 1.2\n";
const NEW_FUNCTION: &str = "\n\ndef frobnicate_widget_colours(palette):\n    return palette\n";

/// The indexer found an edit: the new index replaces the old at once, the search runs again
/// on it (the selection stays on its chunk), the status counts the new chunks and says why.
#[test]
fn a_re_index_re_runs_the_search_on_the_new_index_and_keeps_the_selection() {
    let old = DemoBackend::new(&[("shop/cart.py", CART), ("shop/tax.py", TAX)]);
    let cart = format!("{CART}{NEW_FUNCTION}");
    let new = DemoBackend::new(&[("shop/cart.py", &cart), ("shop/tax.py", TAX)]);
    let mut app = new_app((120, 40));
    let commands = app.update(Action::DenseReady(Arc::new(old.clone())));
    settle(&mut app, commands);
    type_text(&mut app, "cart total price subtotal with vat");
    let commands = app.update(Action::RunSearch);
    assert!(commands.iter().any(|c| matches!(c, Command::CheckIndex)), "each search checks for edits");
    settle(&mut app, commands);
    app.update(Action::Move(1));
    let selected = |app: &App, column: usize| {
        app.columns[column].selected_hit().and_then(|h| app.chunk(h.chunk)).map(|c| c.key())
    };
    let before = selected(&app, 0).expect("a second hit");

    let note = "re-indexed: 1 file changed, +1 chunk".to_string();
    let commands =
        app.update(Action::Reindexed { backend: Arc::new(new.with_dense(false)), note: note.clone() });
    assert_eq!(searches(&commands).iter().map(|s| s.0).collect::<Vec<_>>(), [0], "BM25 again at once");
    assert_eq!(app.columns[1].status, ColumnStatus::WaitingForIndex, "the dense index follows");
    assert_eq!(app.index.state, IndexState::Bm25Only);
    assert_eq!(app.message.as_ref().map(|m| m.text.as_str()), Some(note.as_str()));
    assert_eq!(app.backend.as_ref().map(|b| b.chunk_count()), Some(old.chunk_count() + 1));
    assert_eq!(app.index.chunks, Some(old.chunk_count() + 1));
    settle(&mut app, commands);
    assert_eq!(selected(&app, 0), Some(before), "the same chunk is selected on the new index");

    let commands = app.update(Action::DenseReady(Arc::new(new)));
    settle(&mut app, commands);
    assert_eq!(app.columns[1].status, ColumnStatus::Ready);
    assert_eq!(app.index.state, IndexState::Ready);
    assert_eq!(app.message.as_ref().map(|m| m.text.as_str()), Some(note.as_str()), "the note stays");
    // The new function is found.
    app.update(Action::ClearQuery);
    type_text(&mut app, "frobnicate the widget colours");
    let commands = app.update(Action::RunSearch);
    settle(&mut app, commands);
    assert_eq!(selected(&app, 0).as_deref(), Some("shop/cart.py::frobnicate_widget_colours"));
}

#[test]
fn coming_back_from_the_editor_checks_for_edits() {
    let (mut app, _) = searched_app((100, 30));
    assert!(matches!(app.update(Action::EditorClosed(Ok(()))).as_slice(), [Command::CheckIndex]));
    let commands = app.update(Action::EditorClosed(Err("vi exited with 1".into())));
    assert!(matches!(commands.as_slice(), [Command::CheckIndex]), "the file may be saved all the same");
}

/// Reported: `T` moved the selection from hit 3 to hit 1. Each list keeps the hit it had
/// selected, and a hidden test hit hands the selection to the next hit that stays.
#[test]
fn hiding_tests_keeps_the_selected_hit() {
    let backend = DemoBackend::new(&[
        ("shop/cart.py", "def cart_total(items):\n    return sum(items)\n"),
        ("shop/order.py", "def order_total(cart):\n    return cart_total(cart)\n"),
        ("shop/refund.py", "def refund_total(cart):\n    return -cart_total(cart)\n"),
        ("tests/test_cart.py", "def test_cart_total():\n    assert cart_total([1, 2]) == 3\n"),
    ]);
    let mut app = new_app((120, 30));
    let commands = app.update(Action::Bm25Ready(Arc::new(backend.with_dense(false))));
    settle(&mut app, commands);
    type_text(&mut app, "cart total");
    let commands = app.update(Action::RunSearch);
    settle(&mut app, commands);
    let name = |app: &App| {
        let hit = app.columns[0].selected_hit().unwrap();
        app.chunk(hit.chunk).unwrap().name.clone()
    };
    let code_rows: Vec<usize> = (0..app.columns[0].hits.len())
        .filter(|&i| !app.chunk(app.columns[0].hits[i].chunk).unwrap().path.starts_with("tests/"))
        .collect();
    let last_code = *code_rows.last().unwrap();
    let rows = crate::tui::app::list_rows(app.areas().columns[0]);
    app.columns[0].select(last_code, rows);
    let before = name(&app);
    app.update(Action::ToggleTests);
    assert_eq!(name(&app), before, "hidden tests leave the selection on its hit");
    app.update(Action::ToggleTests);
    assert_eq!(name(&app), before, "shown again, the same hit");
}

/// Reported (issue #61): outside git the history column read "history search failed".
#[test]
fn without_git_the_history_column_says_history_is_unavailable() {
    let (mut app, _) = searched_app((100, 30));
    app.update(Action::ToggleHybrid);
    let sent = searches(&app.update(Action::ToggleHybrid));
    assert_eq!(app.columns[1].retriever, Retriever::History);
    assert!(sent.is_empty(), "nothing to search: {sent:?}");
    match &app.columns[1].status {
        ColumnStatus::Failed(text) => {
            assert!(text.contains("not a git repository") && !text.contains("failed"), "{text}")
        }
        other => panic!("{other:?}"),
    }
}

/// Grouped by file: one row per file at its best hit, `x` shows the file's other hits beneath
/// its row and hides them again, the preview follows the selected (nested) hit, and `f`
/// switches to chunk by chunk and back.
#[test]
fn grouped_rows_expand_and_collapse_in_place() {
    let (mut app, _) = searched_app((120, 36));
    app.update(Action::Focus(Pane::Left));
    app.update(Action::ToggleOrder);
    let column = &app.columns[0];
    assert_eq!(column.order, ResultOrder::Grouped);
    let paths: Vec<String> = column.hits.iter().map(|h| app.chunk(h.chunk).unwrap().path.clone()).collect();
    let mut distinct = paths.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(paths.len(), distinct.len(), "one row per file: {paths:?}");
    assert_eq!(column.rows.iter().map(|r| r.more + 1).sum::<usize>(), column.ranked.len());
    // The first file with other hits: select it and expand.
    let row = column.rows.iter().position(|r| r.more > 0).expect("some file has several hits");
    let more = column.rows[row].more;
    let rows_before = column.hits.len();
    app.update(Action::Move(row as isize));
    app.update(Action::ToggleExpand);
    let column = &app.columns[0];
    assert_eq!(column.hits.len(), rows_before + more);
    assert!(column.rows[row].expanded && column.rows[row + 1..=row + more].iter().all(|r| r.nested));
    assert_eq!(column.selected, row, "the selection stays on the file's row");
    // The preview follows a nested hit.
    app.update(Action::Move(1));
    let nested = app.columns[0].hits[row + 1].chunk;
    assert_eq!(app.columns[0].selected_hit().map(|h| h.chunk), Some(nested));
    let screen = crate::tui::snapshot_tests::draw(&app);
    let text: String = screen.buffer().content().iter().map(|c| c.symbol()).collect();
    assert!(text.contains(&format!("−{more}")) && text.contains("· "), "expanded rows show: {text}");
    // Collapsing from a nested hit goes back to its file's row.
    app.update(Action::ToggleExpand);
    assert_eq!(app.columns[0].hits.len(), rows_before);
    assert_eq!(app.columns[0].selected, row);
    // Chunk by chunk again: every hit its own row.
    app.update(Action::ToggleOrder);
    assert_eq!(app.columns[0].hits, app.columns[0].ranked);
    // `x` in the flat order explains itself and changes nothing.
    app.update(Action::ToggleExpand);
    assert!(app.message.as_ref().is_some_and(|m| m.text.contains("chunk by chunk")));
}

/// The order follows the query's shape unless fixed: a short question is answered by files,
/// an issue chunk by chunk.
#[test]
fn the_order_follows_the_query_shape() {
    let backend = DemoBackend::sample();
    let session = Session { order: OrderChoice::Auto, ..Session::default() };
    let mut app = App::new(session, Theme::default(), (120, 36), History::default());
    let commands = app.update(Action::DenseReady(Arc::new(backend.clone())));
    settle(&mut app, commands);
    type_text(&mut app, "coupon total");
    let commands = app.update(Action::RunSearch);
    settle(&mut app, commands);
    assert_eq!(app.columns[0].order, ResultOrder::Grouped);
    let issue = "Applying a coupon can make the cart total negative. When the discount is larger than \
                 the subtotal the checkout shows a negative amount and the payment provider rejects it.";
    app.update(Action::ClearQuery);
    type_text(&mut app, issue);
    let commands = app.update(Action::RunSearch);
    settle(&mut app, commands);
    assert_eq!(app.columns[0].order, ResultOrder::Flat);
}
