//! The TUI over a tiny sample project ("shop") on the real engine: tree-sitter chunks, the call
//! graph, tantivy's BM25, the dense index and the hybrid fusion all come from the library; only
//! the model is a stand-in, a 2-layer BERT with seeded random weights (so its rankings mean
//! little, but every run and machine ranks alike). For the TUI's tests and
//! `examples/tui_demo.rs`.
//!
//! Not part of the library's API: the library compiles it for its tests only, the example
//! includes this file with `#[path]` (beside `src/testkit.rs`, which writes the model). So it
//! names the library `coret::` and uses only public items; each includer uses part of it.
#![allow(dead_code)]

mod sample;

use coret::engine::{RepoIndex, SyntaxCache};
use coret::index::dense::VectorStore;
use coret::index::{Hit, Retriever};
use coret::model::{Encoder, EncoderOptions, Precision, Towers};
use coret::progress::{NoProgress, Phase};
use coret::rank::dense_retriever::DenseOptions;
use coret::rank::fusion::FusionParams;
use coret::rank::searcher::Searcher;
use coret::tui::{Backend, IndexEvent, IndexReporter};
use coret::Chunk;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// The sample's words the stand-in model knows as whole tokens (the rest spell out in letters).
const VOCAB: &[&str] = &[
    "cart", "total", "price", "prices", "discount", "coupon", "tax", "amount", "stock", "order", "checkout",
    "reserve", "sku", "quantity", "def", "return", "class", "self",
];

/// The sample files and a [`Searcher`] over them.
#[derive(Clone)]
pub struct DemoBackend {
    files: Arc<BTreeMap<String, String>>,
    searcher: Arc<Searcher>,
}

impl DemoBackend {
    /// The built-in sample project with its dense index (built once per process).
    pub fn sample() -> Self {
        static SAMPLE: OnceLock<DemoBackend> = OnceLock::new();
        SAMPLE.get_or_init(|| DemoBackend::new(sample::FILES)).clone()
    }

    /// A backend over `(path, source)` files, with the dense index. Panics if the engine fails
    /// (the files and model are fixed, so that is a bug).
    pub fn new(files: &[(&str, &str)]) -> Self {
        let texts: Vec<(String, String)> =
            files.iter().map(|(p, s)| (p.to_string(), s.to_string())).collect();
        let repo =
            RepoIndex::from_texts("shop".into(), &texts, &mut SyntaxCache::new()).expect("index sample");
        let bm25 = Searcher::bm25_only(Arc::new(repo));
        let towers = Towers::tied(Arc::new(stand_in_model()));
        let mut store = VectorStore::in_memory(towers.chunk.dim());
        let searcher = bm25
            .with_dense_store(towers, DenseOptions::default(), &mut store, &NoProgress)
            .expect("embed sample");
        DemoBackend { files: Arc::new(texts.into_iter().collect()), searcher: Arc::new(searcher) }
    }

    /// The same backend with or without the dense side (to mimic "BM25 ready, dense pending").
    pub fn with_dense(&self, dense: bool) -> Self {
        let s = &self.searcher;
        let searcher = Searcher { dense: if dense { s.dense.clone() } else { None }, ..s.clone_sides() };
        DemoBackend { files: self.files.clone(), searcher: Arc::new(searcher) }
    }

    /// Id of the chunk with this qualified name (tests use it to avoid hard-coding ids).
    pub fn id_of(&self, name: &str) -> Option<u32> {
        self.searcher.repo.chunks.iter().position(|c| c.name == name).map(|i| i as u32)
    }

    /// Writes the sample files under `dir`, so that `$EDITOR` can open them in the demo.
    pub fn write_files(&self, dir: &Path) -> std::io::Result<()> {
        for (path, source) in self.files.iter() {
            let target = dir.join(path);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(target, source)?;
        }
        Ok(())
    }
}

/// The seeded tiny BERT, written to a temporary directory and loaded like any checkpoint.
fn stand_in_model() -> Encoder {
    let dir = tempfile::tempdir().expect("temporary model directory");
    crate::testkit::write_seeded_bert(dir.path(), VOCAB, 7);
    // f32, the reference: the demo and its snapshots read the same on every CPU, whatever
    // `auto` measures there.
    let opts = EncoderOptions { precision: Precision::F32, ..EncoderOptions::default() };
    Encoder::load(dir.path(), &candle_core::Device::Cpu, opts).expect("load stand-in model")
}

impl Backend for DemoBackend {
    fn chunk_count(&self) -> usize {
        self.searcher.chunk_count()
    }

    fn chunk(&self, id: u32) -> Option<&Chunk> {
        Backend::chunk(self.searcher.as_ref(), id)
    }

    fn callers(&self, id: u32) -> Vec<u32> {
        self.searcher.callers(id)
    }

    fn callees(&self, id: u32) -> Vec<u32> {
        self.searcher.callees(id)
    }

    fn unresolved(&self, id: u32) -> Vec<String> {
        self.searcher.unresolved(id)
    }

    fn unresolved_callers(&self, id: u32) -> Vec<(u32, u32)> {
        self.searcher.unresolved_callers(id)
    }

    fn search(&self, query: &str, retriever: Retriever, k: usize) -> anyhow::Result<Vec<Hit>> {
        Backend::search(self.searcher.as_ref(), query, retriever, k)
    }

    fn has_dense(&self) -> bool {
        Backend::has_dense(self.searcher.as_ref())
    }

    fn has_history(&self) -> bool {
        Backend::has_history(self.searcher.as_ref())
    }

    fn fusion(&self) -> FusionParams {
        self.searcher.fusion
    }

    /// From memory: the index's root is not a directory.
    fn file_source(&self, path: &str) -> Option<String> {
        self.files.get(path).cloned()
    }
}

/// Plays a plausible indexing run over `backend`: walk, parse, call graph, BM25 (then
/// `Bm25Ready`), embeddings (then `DenseReady`), sleeping `step` between progress reports.
pub fn simulate_indexing(reporter: IndexReporter, backend: DemoBackend, step: Duration) {
    let files = backend.files.len();
    let chunks = backend.chunk_count();
    let phases =
        [(Phase::Walk, files), (Phase::Parse, files), (Phase::CallGraph, chunks), (Phase::Bm25, chunks)];
    for (phase, total) in phases {
        for done in 0..=total {
            if !reporter.send(IndexEvent::Progress { phase, done, total }) {
                return;
            }
            std::thread::sleep(step / 4);
        }
    }
    reporter.bm25_ready(Arc::new(backend.with_dense(false)));
    for done in 0..=chunks {
        if !reporter.send(IndexEvent::Progress { phase: Phase::Embed, done, total: chunks }) {
            return;
        }
        std::thread::sleep(step);
    }
    reporter.dense_ready(Arc::new(backend));
}

/// Inside `impl Backend for Wrapper(DemoBackend)`: the methods a test's stand-in backend keeps
/// as the demo has them (chunks, call graph, search, sources), so it spells out only the ones
/// it changes.
#[allow(unused_macros)] // examples/tui_demo.rs includes this file too
macro_rules! forward_to_demo {
    () => {
        fn chunk_count(&self) -> usize {
            self.0.chunk_count()
        }
        fn chunk(&self, id: u32) -> Option<&crate::Chunk> {
            self.0.chunk(id)
        }
        fn callers(&self, id: u32) -> Vec<u32> {
            self.0.callers(id)
        }
        fn callees(&self, id: u32) -> Vec<u32> {
            self.0.callees(id)
        }
        fn search(
            &self,
            query: &str,
            retriever: crate::index::Retriever,
            k: usize,
        ) -> anyhow::Result<Vec<crate::index::Hit>> {
            self.0.search(query, retriever, k)
        }
        fn file_source(&self, path: &str) -> Option<String> {
            self.0.file_source(path)
        }
    };
}
#[allow(unused_imports)]
pub(crate) use forward_to_demo;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_has_a_call_graph_in_both_directions() {
        let b = DemoBackend::sample();
        let total = b.id_of("Cart.total").unwrap();
        let discount = b.id_of("apply_discount").unwrap();
        assert!(b.callees(total).contains(&discount));
        assert!(b.callers(discount).contains(&total));
        assert!(b.file_source("shop/cart.py").unwrap().contains("class Cart"));
    }

    #[test]
    fn retrievers_rank_the_relevant_chunk_and_dense_can_be_withheld() {
        let b = DemoBackend::sample();
        let query = "coupon discount makes the amount negative";
        let bm25 = b.search(query, Retriever::Bm25, 5).unwrap();
        assert_eq!(bm25[0].chunk, b.id_of("apply_discount").unwrap());
        assert!(bm25.len() <= 5);
        let dense = b.search(query, Retriever::Dense, 5).unwrap();
        assert_eq!(
            dense,
            b.search(query, Retriever::Dense, 5).unwrap(),
            "the stand-in model is deterministic"
        );
        assert!(!b.search(query, Retriever::Hybrid, 5).unwrap().is_empty());
        assert!(b.with_dense(false).search(query, Retriever::Dense, 5).is_err());
        assert!(b.search(query, Retriever::History, 5).is_err(), "the sample has no git history");
    }

    #[test]
    fn the_stand_in_model_embeds_alike_every_time() {
        let query = "coupon discount";
        let a = DemoBackend::new(sample::FILES).search(query, Retriever::Dense, 10).unwrap();
        let b = DemoBackend::new(sample::FILES).search(query, Retriever::Dense, 10).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn simulated_indexing_ends_with_both_indexes() {
        let (reporter, rx) = IndexReporter::channel();
        simulate_indexing(reporter, DemoBackend::sample(), Duration::ZERO);
        let events: Vec<_> = rx.iter().collect();
        let bm25 = events.iter().position(|e| matches!(e, IndexEvent::Bm25Ready(b) if !b.has_dense()));
        let dense = events.iter().position(|e| matches!(e, IndexEvent::DenseReady(b) if b.has_dense()));
        assert!(bm25.unwrap() < dense.unwrap());
    }
}
