//! Snapshots of the main screens on ratatui's `TestBackend`, over the in-memory demo backend.
//! Review changes with `cargo insta review` (or `INSTA_UPDATE=always` and read the .snap files).

use crate::index::Retriever;
use crate::progress::Phase;
use crate::tui::action::{Action, Pane};
use crate::tui::app::tests::{new_app, searched_app, settle, type_text};
use crate::tui::app::App;
use crate::tui::backend::Backend;
use crate::tui::demo::DemoBackend;
use crate::tui::ui;
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use std::sync::Arc;
use std::time::{Duration, Instant};

mod newcomer;
mod widths;

pub(crate) fn draw(app: &App) -> TestBackend {
    let mut terminal = Terminal::new(TestBackend::new(app.size.0, app.size.1)).unwrap();
    terminal.draw(|frame| ui::render(app, frame)).unwrap();
    terminal.backend().clone()
}

fn progress(app: &mut App, phase: Phase, done: usize, total: usize, t0: Instant, secs: u64) {
    app.update(Action::IndexProgress { phase, done, total, at: t0 + Duration::from_secs(secs) });
}

#[test]
fn empty() {
    let app = new_app((100, 30));
    insta::assert_snapshot!(draw(&app));
}

#[test]
fn indexing_while_typing() {
    let mut app = new_app((100, 30));
    let t0 = Instant::now();
    progress(&mut app, Phase::Walk, 4, 4, t0, 0);
    progress(&mut app, Phase::Parse, 0, 412, t0, 0);
    progress(&mut app, Phase::Parse, 103, 412, t0, 2);
    type_text(&mut app, "Cart.total goes negative\nwith a SAVE120 coupon");
    insta::assert_snapshot!(draw(&app));
}

#[test]
fn bm25_ready_dense_embedding() {
    let backend = DemoBackend::sample();
    let mut app = new_app((100, 30));
    let t0 = Instant::now();
    progress(&mut app, Phase::Parse, 4, 4, t0, 0);
    let commands = app.update(Action::Bm25Ready(Arc::new(backend.with_dense(false))));
    settle(&mut app, commands);
    let chunks = backend.chunk_count();
    progress(&mut app, Phase::Embed, 0, chunks, t0, 1);
    progress(&mut app, Phase::Embed, chunks / 3, chunks, t0, 4);
    type_text(&mut app, "coupon makes the total negative");
    let commands = app.update(Action::RunSearch);
    settle(&mut app, commands);
    app.update(Action::Focus(Pane::Left));
    insta::assert_snapshot!(draw(&app));
}

#[test]
fn results_with_preview() {
    let (mut app, _) = searched_app((100, 30));
    app.update(Action::Focus(Pane::Left));
    let commands = app.update(Action::Move(1));
    settle(&mut app, commands);
    insta::assert_snapshot!(draw(&app));
}

#[test]
fn results_wide() {
    let (mut app, _) = searched_app((160, 45));
    app.update(Action::Focus(Pane::Right));
    insta::assert_snapshot!(draw(&app));
}

#[test]
fn results_80x24() {
    let (mut app, _) = searched_app((80, 24));
    app.update(Action::Focus(Pane::Left));
    insta::assert_snapshot!(draw(&app));
}

#[test]
fn neighbours_after_a_jump() {
    let (mut app, backend) = searched_app((120, 36));
    let total = backend.id_of("Cart.total").unwrap();
    app.update(Action::Focus(Pane::Left));
    let row = app.columns[0].hits.iter().position(|h| h.chunk == total).unwrap();
    app.update(Action::Move(row as isize));
    app.update(Action::Focus(Pane::Neighbours));
    let target =
        app.neighbours().iter().position(|n| Some(n.chunk) == backend.id_of("apply_discount")).unwrap();
    app.update(Action::Move(target as isize));
    let commands = app.update(Action::Jump);
    settle(&mut app, commands);
    insta::assert_snapshot!(draw(&app));
}

#[test]
fn help_overlay() {
    let (mut app, _) = searched_app((100, 30));
    app.update(Action::ToggleHelp);
    insta::assert_snapshot!(draw(&app));
}

#[test]
fn help_overlay_scrolled_at_80x24() {
    let mut app = new_app((80, 24));
    app.update(Action::ToggleHelp);
    app.update(Action::Page(1));
    insta::assert_snapshot!(draw(&app));
}

#[test]
fn an_index_failure_shows_in_every_column() {
    let mut app = new_app((100, 30));
    app.update(Action::IndexFailed("no Python files to index under /tmp/empty".into()));
    let screen = format!("{:?}", draw(&app));
    assert_eq!(screen.matches("Indexing failed").count(), 2, "{screen}");
    assert!(!screen.contains("Indexing…"), "{screen}");
}

/// Flask-like names and paths: two `send_static_file` methods of different classes, a long
/// class name, long test names, deep paths and three-digit lines.
fn long_names_app(size: (u16, u16)) -> App {
    const PAD: &str = "\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n";
    let padded = |body: &str| format!("{}{body}", PAD.repeat(3));
    let files: Vec<(&str, String)> = vec![
        (
            "src/flask/app.py",
            padded(
                "class Flask:\n    def send_static_file(self, filename):\n        \"\"\"Send a static file.\"\"\"\n        return send_from_directory(self.static_folder, filename)\n\n    def get_send_file_max_age(self, filename):\n        \"\"\"Max age of a static file.\"\"\"\n        return None\n",
            ),
        ),
        (
            "src/flask/sansio/blueprints.py",
            padded(
                "class Blueprint:\n    def send_static_file(self, filename):\n        \"\"\"Send a static file of the blueprint.\"\"\"\n        return send_from_directory(self.static_folder, filename)\n",
            ),
        ),
        (
            "src/flask/sessions.py",
            padded(
                "class SecureCookieSessionInterface:\n    def get_signing_serializer(self, app):\n        \"\"\"Signs the session cookie of a static file.\"\"\"\n        return app.secret_key\n",
            ),
        ),
        (
            "src/flask/helpers.py",
            padded("def send_from_directory(directory, path):\n    \"\"\"Send a static file from a directory.\"\"\"\n    return path\n"),
        ),
        (
            "tests/integration/static/test_send_static_file.py",
            padded(
                "def test_blueprint_send_static_file_with_max_age():\n    Blueprint().send_static_file('static file max age')\n\ndef test_flask_send_static_file():\n    Flask().send_static_file('static file')\n",
            ),
        ),
        (
            "tests/test_config.py",
            padded("def test_from_prefixed_env_nested():\n    send_static_file('static file')\n"),
        ),
    ];
    let files: Vec<(&str, &str)> = files.iter().map(|(p, s)| (*p, s.as_str())).collect();
    let backend = DemoBackend::new(&files);
    let mut app = crate::tui::app::tests::new_app(size);
    let commands = app.update(Action::DenseReady(Arc::new(backend)));
    settle(&mut app, commands);
    type_text(&mut app, "send_static_file ignores the max age of a static file sent from a blueprint");
    let commands = app.update(Action::RunSearch);
    settle(&mut app, commands);
    app
}

/// The text of each list row of column `index` on screen, with its hit's chunk.
fn rows(app: &App, screen: &TestBackend, index: usize) -> Vec<(String, crate::Chunk)> {
    let area = app.areas().columns[index];
    let column = &app.columns[index];
    let buffer = screen.buffer();
    let visible = crate::tui::app::list_rows(area).min(column.hits.len());
    (0..visible)
        .map(|i| {
            let y = area.y + 1 + i as u16;
            let text: String = (area.x + 1..area.right() - 1).map(|x| buffer[(x, y)].symbol()).collect();
            let chunk = app.chunk(column.hits[column.offset + i].chunk).unwrap().clone();
            (text, chunk)
        })
        .collect()
}

/// Every row shows a name that tells it from the others (its last part, and the start of its
/// class) and its file and line, whatever the width.
#[test]
fn every_row_keeps_a_distinguishing_name_and_its_path_and_line() {
    for size in [(100, 30), (160, 45), (220, 60)] {
        for right in [Retriever::Dense, Retriever::Hybrid] {
            let mut app = long_names_app(size);
            if right == Retriever::Hybrid {
                let commands = app.update(Action::ToggleHybrid);
                settle(&mut app, commands);
            }
            let screen = draw(&app);
            for index in 0..2 {
                let rows = rows(&app, &screen, index);
                assert!(rows.len() >= 5, "{size:?}: {screen:?}");
                for (row, chunk) in rows {
                    let (qualifier, last) = chunk.name.rsplit_once('.').unwrap_or(("", &chunk.name));
                    let file = chunk.path.rsplit('/').next().unwrap();
                    let line = format!(":{}", chunk.start_line);
                    let at = row.find(&format!(".{last}")).or_else(|| row.find(last));
                    let whole = last.len() <= 24;
                    assert!(!whole || at.is_some(), "{size:?} `{}` lost its last part: {row}", chunk.name);
                    if let (Some(at), false) = (at, qualifier.is_empty()) {
                        let shown = row[..at].rsplit(' ').next().unwrap();
                        let q = qualifier.chars().next().unwrap().to_string();
                        // `…` marks a class given up for the method (a row that fits at no step).
                        let marked = shown.starts_with(&q) || shown == "…";
                        assert!(marked, "{size:?} `{}` lost its class: {row}", chunk.name);
                    }
                    if !whole {
                        let (head, tail) = (&last[..6], &last[last.len() - 6..]);
                        assert!(row.contains(head) && row.contains(tail), "{size:?}: {row}");
                    }
                    assert!(row.contains(&line), "{size:?} `{}` lost its line: {row}", chunk.name);
                    let file_start = &file[..file.len().min(4)];
                    assert!(row.contains(file_start), "{size:?} `{}` lost its file: {row}", chunk.name);
                    // From 160 columns a short file name is never cut (below, the marks on every
                    // row can leave a long name's row too little).
                    if size.0 >= 160 && file.len() + line.len() <= 20 {
                        assert!(row.contains(&format!("{file}{line}")), "{size:?}: {row}");
                    }
                }
            }
        }
    }
}

/// The hybrid marks the hits the issue names outright (they are lifted for it) and says so
/// under the list; the other hits and the other columns carry no mark.
#[test]
fn the_hybrid_marks_the_hits_the_issue_names() {
    let mut app = long_names_app((160, 45));
    let commands = app.update(Action::ToggleHybrid);
    settle(&mut app, commands);
    let screen = draw(&app);
    let hybrid = app.columns.iter().position(|c| c.retriever == Retriever::Hybrid).expect("a hybrid column");
    let mut marked = 0;
    for index in 0..2 {
        for (row, chunk) in rows(&app, &screen, index) {
            let own = chunk.name.rsplit('.').next().unwrap();
            let named = index == hybrid && own == "send_static_file";
            assert_eq!(row.contains('•'), named, "`{}` in column {index}: {row}", chunk.name);
            marked += usize::from(named);
        }
    }
    assert!(marked >= 2, "{screen:?}");
    let area = app.areas().columns[hybrid];
    let bottom: String =
        (area.x..area.right()).map(|x| screen.buffer()[(x, area.bottom() - 1)].symbol()).collect();
    assert!(bottom.contains("• named in the issue"), "{bottom}");
}

#[test]
fn long_names_at_100x30() {
    insta::assert_snapshot!(draw(&long_names_app((100, 30))));
}

#[test]
fn long_names_at_160x45() {
    insta::assert_snapshot!(draw(&long_names_app((160, 45))));
}

#[test]
fn long_names_at_220x60() {
    insta::assert_snapshot!(draw(&long_names_app((220, 60))));
}

/// Grouped by file at 80, 120 and 200 columns: one row per file, `+N` for its other hits,
/// the first file with others expanded beneath its row.
#[test]
fn grouped_by_file_at_three_widths() {
    for size in [(80, 24), (120, 36), (200, 50)] {
        let (mut app, _) = searched_app(size);
        app.update(Action::Focus(Pane::Left));
        app.update(Action::ToggleOrder);
        let row = app.columns[0].rows.iter().position(|r| r.more > 0).unwrap_or(0);
        app.update(Action::Move(row as isize));
        app.update(Action::ToggleExpand);
        app.message = None;
        insta::assert_snapshot!(format!("grouped_{}x{}", size.0, size.1), draw(&app));
    }
}
