//! A cold repository's two answers (#53 item 5): the hybrid over what is embedded at once,
//! marked, then the answer over the issue's own chunks replacing it, the user's chunk kept.

use super::tests::{new_app, settle, type_text};
use super::*;
use crate::index::Hit;
use crate::tui::action::{SearchOutcome, SearchStage};
use crate::tui::demo::DemoBackend;
use std::time::Duration;

const QUERY: &str = "Applying a coupon can make the cart total negative";

fn chunks(hits: &[Hit]) -> Vec<u32> {
    hits.iter().map(|h| h.chunk).collect()
}

fn deliver(
    app: &mut App,
    column: usize,
    generation: u64,
    hits: Result<Vec<Hit>, String>,
    stage: SearchStage,
) {
    let outcome = SearchOutcome { column, generation, hits, elapsed: Duration::ZERO, stage };
    let commands = app.update(Action::SearchDone(outcome));
    settle(app, commands);
}

/// Types the query and runs the search; every column's work is done but the dense column's,
/// whose generation is returned for the test to deliver its answers by hand.
fn search_holding_the_dense_column(app: &mut App) -> u64 {
    type_text(app, QUERY);
    let commands = app.update(Action::RunSearch);
    let generation = commands
        .iter()
        .find_map(|c| match c {
            Command::Search(r) if r.column == 1 => Some(r.generation),
            _ => None,
        })
        .expect("the dense column searched");
    let others: Vec<Command> =
        commands.into_iter().filter(|c| !matches!(c, Command::Search(r) if r.column == 1)).collect();
    settle(app, others);
    generation
}

#[test]
fn the_first_answer_shows_at_once_marked_and_the_second_replaces_it_keeping_the_users_chunk() {
    let demo = DemoBackend::sample();
    let mut app = new_app((120, 30));
    let commands = app.update(Action::DenseReady(Arc::new(demo.clone())));
    settle(&mut app, commands);
    let generation = search_holding_the_dense_column(&mut app);
    let full = demo.search(QUERY, Retriever::Dense, 50).unwrap();
    let first: Vec<Hit> = full.iter().rev().copied().collect();

    // A failed first answer changes nothing: the second is still awaited.
    deliver(&mut app, 1, generation, Err("partial index gone".into()), SearchStage::RefineFollows);
    assert_eq!(app.columns[1].status, ColumnStatus::Searching);
    deliver(&mut app, 1, generation, Ok(first.clone()), SearchStage::RefineFollows);
    assert_eq!(app.columns[1].status, ColumnStatus::Refining);
    assert_eq!(chunks(&app.columns[1].all_hits), chunks(&first));
    let screen = crate::tui::snapshot_tests::draw(&app);
    let text: String = screen.buffer().content().iter().map(|c| c.symbol()).collect();
    assert!(
        text.contains("hits so far") || text.contains("embedding…"),
        "the first answer is marked: {text}"
    );

    // The user moves to the first answer's third hit; an older search's answer is dropped.
    app.active_column = 1;
    app.columns[1].select(2, 10);
    let kept = app.columns[1].hits[2].chunk;
    deliver(&mut app, 1, generation - 1, Ok(full.clone()), SearchStage::Final);
    assert_eq!(app.columns[1].status, ColumnStatus::Refining);
    deliver(&mut app, 1, generation, Ok(full.clone()), SearchStage::Final);
    let column = &app.columns[1];
    assert_eq!(column.status, ColumnStatus::Ready);
    assert_eq!(chunks(&column.all_hits), chunks(&full));
    assert_eq!(column.selected_hit().map(|h| h.chunk), Some(kept), "the selection follows the chunk");
    let screen = crate::tui::snapshot_tests::draw(&app);
    let text: String = screen.buffer().content().iter().map(|c| c.symbol()).collect();
    assert!(!text.contains("so far") && !text.contains("this issue needs"), "the final answer is not marked");
}

/// Reported (issue #61): "0 hits · first answer, refining…" over "Searching…" for 20 s while
/// the status bar said "CoRet answers now". The column says what it waits for, with the count
/// and the time left; the bar claims no answer.
#[test]
fn a_cold_column_says_which_chunks_it_waits_for_and_how_long() {
    let mut app = new_app((220, 30));
    let commands = app.update(Action::DenseReady(Arc::new(demo_partial())));
    settle(&mut app, commands);
    let generation = search_holding_the_dense_column(&mut app);
    deliver(&mut app, 1, generation, Ok(Vec::new()), SearchStage::RefineFollows);
    let t0 = std::time::Instant::now();
    app.update(Action::FirstEmbed { done: 0, total: 180, at: t0 });
    app.update(Action::FirstEmbed { done: 40, total: 180, at: t0 + Duration::from_secs(2) });
    let screen = crate::tui::snapshot_tests::draw(&app);
    let text: String = screen.buffer().content().iter().map(|c| c.symbol()).collect();
    assert!(text.contains("Embedding the 180 chunks this issue needs: 40/180, ~7 s"), "{text}");
    assert!(!text.contains(" 0 hits") && !text.contains("Searching…"), "{text}");
    assert!(!text.contains("answers now"), "nothing is answered yet: {text}");
}

/// The demo backend with its dense index said to be partial (query-first, still embedding).
fn demo_partial() -> impl crate::tui::Backend {
    struct Partial(DemoBackend);
    impl crate::tui::Backend for Partial {
        crate::tui::demo::forward_to_demo!();
        fn has_dense(&self) -> bool {
            true
        }
        fn dense_partial(&self) -> Option<(usize, usize)> {
            Some((100, 900))
        }
    }
    Partial(DemoBackend::sample())
}
