//! An in-memory [`Backend`] over a tiny fake Python project, for `examples/tui_demo.rs` and the
//! TUI's tests. Deterministic: same query, same ranking.

mod chunker;
mod rank;
mod sample;

use crate::progress::Phase;
use crate::search::{Hit, Retriever};
use crate::tui::backend::{Backend, IndexReporter};
use crate::Chunk;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// In-memory chunks, call graph and toy retrievers.
#[derive(Clone)]
pub struct DemoBackend {
    files: BTreeMap<String, String>,
    chunks: Vec<Chunk>,
    callees: Vec<Vec<u32>>,
    callers: Vec<Vec<u32>>,
    bm25: Arc<rank::Bm25>,
    dense: bool,
}

impl DemoBackend {
    /// The built-in sample project, with the dense retriever available.
    pub fn sample() -> Self {
        DemoBackend::new(sample::FILES)
    }

    /// A backend over `(path, source)` files.
    pub fn new(files: &[(&str, &str)]) -> Self {
        let chunks: Vec<Chunk> =
            files.iter().flat_map(|(path, src)| chunker::chunk_file(path, src)).collect();
        let callees = chunker::callees(&chunks);
        let mut callers = vec![Vec::new(); chunks.len()];
        for (from, targets) in callees.iter().enumerate() {
            for to in targets {
                callers[*to as usize].push(from as u32);
            }
        }
        let texts: Vec<&str> = chunks.iter().map(|c| c.text.as_str()).collect();
        DemoBackend {
            files: files.iter().map(|(p, s)| (p.to_string(), s.to_string())).collect(),
            bm25: Arc::new(rank::Bm25::new(&texts)),
            chunks,
            callees,
            callers,
            dense: true,
        }
    }

    /// The same backend with or without the dense side (to mimic "BM25 ready, dense pending").
    pub fn with_dense(&self, dense: bool) -> Self {
        DemoBackend { dense, ..self.clone() }
    }

    /// Id of the chunk with this qualified name (tests use it to avoid hard-coding ids).
    pub fn id_of(&self, name: &str) -> Option<u32> {
        self.chunks.iter().position(|c| c.name == name).map(|i| i as u32)
    }

    /// Writes the sample files under `dir`, so that `$EDITOR` can open them in the demo.
    pub fn write_files(&self, dir: &Path) -> std::io::Result<()> {
        for (path, source) in &self.files {
            let target = dir.join(path);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(target, source)?;
        }
        Ok(())
    }

    fn texts(&self) -> Vec<&str> {
        self.chunks.iter().map(|c| c.text.as_str()).collect()
    }
}

impl Backend for DemoBackend {
    fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    fn chunk(&self, id: u32) -> Option<&Chunk> {
        self.chunks.get(id as usize)
    }

    fn callers(&self, id: u32) -> Vec<u32> {
        self.callers.get(id as usize).cloned().unwrap_or_default()
    }

    fn callees(&self, id: u32) -> Vec<u32> {
        self.callees.get(id as usize).cloned().unwrap_or_default()
    }

    fn search(&self, query: &str, retriever: Retriever, k: usize) -> anyhow::Result<Vec<Hit>> {
        if retriever != Retriever::Bm25 && !self.dense {
            anyhow::bail!("the dense index is not built yet");
        }
        let bm25 = || rank::top_k(&self.bm25.scores(query), k.max(100));
        let dense = || rank::top_k(&rank::trigram_scores(query, &self.texts()), k.max(100));
        let mut hits = match retriever {
            Retriever::Bm25 => bm25(),
            Retriever::Dense => dense(),
            Retriever::Hybrid => rank::rrf(&bm25(), &dense(), k),
            Retriever::History => anyhow::bail!("the demo has no git history"),
        };
        hits.truncate(k);
        Ok(hits)
    }

    fn has_dense(&self) -> bool {
        self.dense
    }

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
            if !reporter.send(crate::tui::IndexEvent::Progress { phase, done, total }) {
                return;
            }
            std::thread::sleep(step / 4);
        }
    }
    reporter.bm25_ready(Arc::new(backend.with_dense(false)));
    for done in 0..=chunks {
        if !reporter.send(crate::tui::IndexEvent::Progress { phase: Phase::Embed, done, total: chunks }) {
            return;
        }
        std::thread::sleep(step);
    }
    reporter.dense_ready(Arc::new(backend));
}

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
        assert!(!b.search(query, Retriever::Hybrid, 5).unwrap().is_empty());
        assert!(b.with_dense(false).search(query, Retriever::Dense, 5).is_err());
    }

    #[test]
    fn simulated_indexing_ends_with_both_indexes() {
        let (reporter, rx) = IndexReporter::channel();
        simulate_indexing(reporter, DemoBackend::sample(), Duration::ZERO);
        let events: Vec<_> = rx.iter().collect();
        let bm25 =
            events.iter().position(|e| matches!(e, crate::tui::IndexEvent::Bm25Ready(b) if !b.has_dense()));
        let dense =
            events.iter().position(|e| matches!(e, crate::tui::IndexEvent::DenseReady(b) if b.has_dense()));
        assert!(bm25.unwrap() < dense.unwrap());
    }
}
