//! A cold repository's two answers (#53 item 5): the hybrid over what is embedded at once,
//! marked, then the answer over the issue's own chunks replacing it, the user's chunk kept.

use super::tests::{new_app, settle, type_text};
use super::*;
use crate::search::Hit;
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

#[test]
fn the_first_answer_shows_at_once_marked_and_the_second_replaces_it_keeping_the_users_chunk() {
    let demo = DemoBackend::sample();
    let mut app = new_app((120, 30));
    let commands = app.update(Action::DenseReady(Arc::new(demo.clone())));
    settle(&mut app, commands);
    type_text(&mut app, QUERY);
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
    settle(&mut app, others);
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
    assert!(text.contains("first answer"), "the first answer is marked as such");

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
    assert!(!text.contains("first answer"), "the final answer is not marked");
}
