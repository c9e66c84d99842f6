//! Snapshots of the main screens on ratatui's `TestBackend`, over the in-memory demo backend.
//! Review changes with `cargo insta review` (or `INSTA_UPDATE=always` and read the .snap files).

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
