//! The TUI's [`Backend`] over the real engine.

use super::backend::Backend;
use crate::index::{Hit, Retriever};
use crate::rank::fusion::FusionParams;
use crate::rank::{Ask, Searcher};
use crate::Chunk;

impl Backend for Searcher {
    fn chunk_count(&self) -> usize {
        self.repo.chunks.len()
    }

    fn chunk(&self, id: u32) -> Option<&Chunk> {
        self.repo.chunks.get(id as usize)
    }

    fn callers(&self, id: u32) -> Vec<u32> {
        self.repo.graph.callers.get(id as usize).cloned().unwrap_or_default()
    }

    fn callees(&self, id: u32) -> Vec<u32> {
        self.repo.graph.callees.get(id as usize).cloned().unwrap_or_default()
    }

    fn unresolved(&self, id: u32) -> Vec<String> {
        self.repo.graph.unresolved.get(id as usize).cloned().unwrap_or_default()
    }

    fn unresolved_callers(&self, id: u32) -> Vec<(u32, u32)> {
        self.repo.graph.unresolved_callers.get(id as usize).cloned().unwrap_or_default()
    }

    fn search(&self, query: &str, retriever: Retriever, k: usize) -> anyhow::Result<Vec<Hit>> {
        // The reranked order follows as its own answer (`Backend::rerank`), so not here.
        let ask = Ask { query, retrievers: &[retriever], top: k, rerank: false };
        Ok(self.answer(&ask)?.lists.pop().map(|(_, hits)| hits).unwrap_or_default())
    }

    fn search_now(&self, query: &str, retriever: Retriever, k: usize) -> anyhow::Result<Option<Vec<Hit>>> {
        Ok(Searcher::search_now(self, query, retriever, k)?)
    }

    fn has_dense(&self) -> bool {
        Searcher::has_dense(self)
    }

    fn has_history(&self) -> bool {
        self.history.is_some()
    }

    fn dense_partial(&self) -> Option<(usize, usize)> {
        self.dense.as_ref().filter(|d| !d.is_complete()).map(|d| d.coverage())
    }

    fn dense_tier(&self) -> Option<&'static str> {
        Searcher::dense_tier(self)
    }

    fn first_answer_tier(&self) -> Option<&'static str> {
        Searcher::first_answer_tier(self)
    }

    fn rerank_depth(&self) -> Option<usize> {
        self.reranker.as_ref().map(|r| r.spec.depth)
    }

    fn rerank(&self, query: &str, hits: &[Hit]) -> anyhow::Result<Option<Vec<Hit>>> {
        Ok(Searcher::rerank(self, query, hits)?)
    }

    fn fusion(&self) -> FusionParams {
        self.fusion
    }

    fn file_source(&self, path: &str) -> Option<String> {
        self.repo.file_source(path)
    }

    fn searcher(&self) -> Option<&Searcher> {
        Some(self)
    }
}
