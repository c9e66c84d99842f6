//! The hybrid column with a reranker: the hybrid's order at once, the reranked one after it,
//! marked, and never an answer of an older search.

use super::tests::{new_app, settle, type_text};
use super::*;
use crate::index::Hit;
use crate::rank::fusion::FusionParams;
use crate::tui::action::{SearchOutcome, SearchStage};
use crate::tui::demo::DemoBackend;
use std::time::Duration;

/// The demo backend with a stand-in reranker that reverses the hybrid's top three.
struct Reversing(DemoBackend);

const DEPTH: usize = 3;

impl Backend for Reversing {
    crate::tui::demo::forward_to_demo!();
    fn has_dense(&self) -> bool {
        self.0.has_dense()
    }
    fn fusion(&self) -> FusionParams {
        self.0.fusion()
    }
    fn rerank_depth(&self) -> Option<usize> {
        Some(DEPTH)
    }
    fn rerank(&self, _query: &str, hits: &[Hit]) -> anyhow::Result<Option<Vec<Hit>>> {
        let depth = DEPTH.min(hits.len());
        let head = hits[..depth].iter().rev().map(|h| Hit { chunk: h.chunk, score: 9.0 });
        Ok(Some(head.chain(hits[depth..].iter().copied()).collect()))
    }
}

fn chunks(hits: &[Hit]) -> Vec<u32> {
    hits.iter().map(|h| h.chunk).collect()
}

/// An app over the reversing backend with the right column on the hybrid and QUERY typed.
fn hybrid_app() -> (App, DemoBackend) {
    let demo = DemoBackend::sample();
    let mut app = new_app((120, 30));
    let commands = app.update(Action::DenseReady(Arc::new(Reversing(demo.clone()))));
    settle(&mut app, commands);
    let commands = app.update(Action::ToggleHybrid);
    settle(&mut app, commands);
    assert_eq!(app.columns[1].retriever, Retriever::Hybrid);
    type_text(&mut app, "Applying a coupon can make the cart total negative");
    (app, demo)
}

#[test]
fn the_reranked_order_replaces_the_hybrids_and_is_marked() {
    let (mut app, demo) = hybrid_app();
    let commands = app.update(Action::RunSearch);
    settle(&mut app, commands);
    let hybrid =
        demo.search("Applying a coupon can make the cart total negative", Retriever::Hybrid, 50).unwrap();
    assert!(hybrid.len() > DEPTH, "the sample ranks more than the depth");
    let column = &app.columns[1];
    let mut expected: Vec<u32> = chunks(&hybrid[..DEPTH]).into_iter().rev().collect();
    expected.extend(chunks(&hybrid[DEPTH..]));
    assert_eq!(chunks(&column.all_hits), expected, "the head reversed, the rest in the hybrid's order");
    assert!(matches!(column.rerank, RerankStatus::Done { depth: DEPTH, .. }));
    assert_eq!(column.selected, 0, "an untouched list selects the reranked first hit");
    // The BM25 column is never reranked.
    assert_eq!(app.columns[0].rerank, RerankStatus::Off);
    let screen = crate::tui::snapshot_tests::draw(&app);
    let marks = screen.buffer().content().iter().filter(|c| c.symbol() == "↻").count();
    assert!(marks >= 1, "the reranked list is marked");
}

#[test]
fn a_user_who_moved_keeps_their_chunk_and_an_older_searchs_rerank_is_dropped() {
    let (mut app, _) = hybrid_app();
    let commands = app.update(Action::RunSearch);
    // The first answer only: the hybrid's order, the rerank pending.
    let search = commands.iter().find_map(|c| match c {
        Command::Search(r) if r.column == 1 => Some((r.generation, r.backend.clone(), r.query.clone())),
        _ => None,
    });
    let (generation, backend, query) = search.expect("the hybrid column searched");
    let others: Vec<Command> =
        commands.into_iter().filter(|c| !matches!(c, Command::Search(r) if r.column == 1)).collect();
    settle(&mut app, others);
    let hybrid = backend.search(&query, Retriever::Hybrid, 50).unwrap();
    let outcome = |hits: Vec<Hit>, generation, stage| {
        Action::SearchDone(SearchOutcome {
            column: 1,
            generation,
            hits: Ok(hits),
            elapsed: Duration::ZERO,
            stage,
        })
    };
    deliver(&mut app, outcome(hybrid.clone(), generation, SearchStage::RerankFollows));
    assert_eq!(app.columns[1].rerank, RerankStatus::Pending);
    assert_eq!(chunks(&app.columns[1].all_hits), chunks(&hybrid));
    // The user moves to the hybrid's second hit while the reranker works.
    app.active_column = 1;
    app.columns[1].select(1, 10);
    let kept = app.columns[1].hits[1].chunk;
    let reranked = backend.rerank(&query, &hybrid).unwrap().unwrap();
    // An answer of an older search is dropped.
    deliver(&mut app, outcome(reranked.clone(), generation - 1, SearchStage::Reranked));
    assert_eq!(app.columns[1].rerank, RerankStatus::Pending);
    deliver(&mut app, outcome(reranked.clone(), generation, SearchStage::Reranked));
    let column = &app.columns[1];
    assert_eq!(chunks(&column.all_hits), chunks(&reranked));
    assert_eq!(column.selected_hit().map(|h| h.chunk), Some(kept), "the selection follows the chunk");
}

fn deliver(app: &mut App, action: Action) {
    let commands = app.update(action);
    settle(app, commands);
}
