//! The contract between the TUI and the engine.
//!
//! The TUI never touches indexes directly: it sees the engine only through [`Backend`], and it
//! learns about indexing only through [`IndexEvent`]s sent by the `indexer` closure given to
//! [`crate::tui::run`].
//!
//! # How the binary drives it
//! ```ignore
//! let theme = coret::tui::Theme::load(&args.theme)?;
//! let session = Session { repo, model: "all-MiniLM-L6-v2".into(), device: "cpu".into(), initial_query: None };
//! coret::tui::run(session, theme, Box::new(move |reporter: IndexReporter| {
//!     // Runs on a background thread. `reporter` implements `coret::progress::Progress`,
//!     // so it can be handed to the engine as is (its `cancelled()` turns true once the
//!     // user quits, so long phases can stop early).
//!     let index = match RepoIndex::open(&repo, &IndexOptions::default(), &reporter) {
//!         Ok(index) => index,
//!         Err(e) => return reporter.failed(e.to_string()),
//!     };
//!     let bm25 = Searcher::bm25_only(Arc::new(index));
//!     reporter.bm25_ready(Arc::new(Searcher::bm25_only(bm25.repo.clone()))); // BM25 column usable
//!     let towers = Towers::tied(encoder);
//!     match bm25.with_dense(towers, DenseOptions::default(), &reporter) { // Phase::Embed progress
//!         Ok(full) => reporter.dense_ready(Arc::new(full)),
//!         Err(e) => reporter.failed(format!("dense index: {e}")), // BM25 stays usable
//!     }
//! }))?;
//! ```
//!
//! # Rules
//! * Send `Bm25Ready` once, then `DenseReady` at most once. The backend sent with
//!   `DenseReady` replaces the earlier one and must answer every retriever.
//! * `Failed` before `Bm25Ready` means nothing is searchable; after it, only the dense side failed.
//! * `Progress` may be sent as often as you like (it is cheap); `done <= total`.
//! * Chunk ids are `0..chunk_count()` and stay the same across `Bm25Ready` → `DenseReady`.
//! * Every method is called from background threads (searches) and from the UI thread (chunk
//!   look-ups while rendering), so the cheap ones (`chunk`, `callers`, `callees`) must not block.
//! * If the closure returns without sending `Bm25Ready` or `Failed`, or panics, the TUI says so.

use crate::progress::{EmbedWork, Phase, Progress};
use crate::search::{FusionParams, Hit, Retriever};
use crate::Chunk;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;

/// Read-only view of an indexed repository.
pub trait Backend: Send + Sync {
    /// Number of chunks; ids are `0..chunk_count()`.
    fn chunk_count(&self) -> usize;
    /// The chunk with this id, `None` if out of range.
    fn chunk(&self, id: u32) -> Option<&Chunk>;
    /// Chunks that call `id` (in-repository call graph), in a stable order.
    fn callers(&self, id: u32) -> Vec<u32>;
    /// Chunks that `id` calls, in a stable order.
    fn callees(&self, id: u32) -> Vec<u32>;
    /// Calls of `id` the call graph left unresolved, as written (`ctx.lookup_default`), in
    /// source order: shown, never jumped to.
    fn unresolved(&self, _id: u32) -> Vec<String> {
        Vec::new()
    }
    /// Top `k` chunks for `query`, best first. May be slow (dense encodes the query):
    /// it is only called from search worker threads.
    fn search(&self, query: &str, retriever: Retriever, k: usize) -> anyhow::Result<Vec<Hit>>;
    /// Whether `Retriever::Dense` and `Retriever::Hybrid` work.
    fn has_dense(&self) -> bool;
    /// How the rankings are made (the test demotion, the hybrid's fusion), for the legend.
    fn fusion(&self) -> FusionParams {
        FusionParams::default()
    }
    /// The whole source of a repository-relative file (for the preview), `None` if unreadable.
    /// Called from the highlight worker thread.
    fn file_source(&self, path: &str) -> Option<String>;
}

/// What the indexer tells the TUI.
pub enum IndexEvent {
    Progress {
        phase: Phase,
        done: usize,
        total: usize,
    },
    /// The embedding's tokens and cached vectors, beside its `Progress` reports.
    EmbedWork(EmbedWork),
    /// BM25 is searchable (the dense index may still be building).
    Bm25Ready(Arc<dyn Backend>),
    /// The dense index is done; this backend supersedes the BM25-only one.
    DenseReady(Arc<dyn Backend>),
    /// Indexing failed; the message is shown in the status bar.
    Failed(String),
    /// A note for the status bar ("loaded index from cache", "skipped 3 binary files").
    Info(String),
}

/// What the status bar shows about the session.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Session {
    /// Repository root; `$EDITOR` opens `repo.join(chunk.path)`.
    pub repo: PathBuf,
    /// Model name as the user knows it (e.g. `all-MiniLM-L6-v2` or a path).
    pub model: String,
    /// `cpu`, `cuda:0`, ...
    pub device: String,
    /// Text to put in the issue editor at start (searched as soon as BM25 is ready).
    pub initial_query: Option<String>,
}

/// The indexer's handle: sends [`IndexEvent`]s and implements [`Progress`], so it can be
/// passed straight to the engine's indexing functions.
#[derive(Clone)]
pub struct IndexReporter {
    tx: Sender<IndexEvent>,
    cancel: Arc<AtomicBool>,
}

impl IndexReporter {
    /// A reporter and the receiving end (the TUI's runtime owns the receiver).
    pub fn channel() -> (IndexReporter, Receiver<IndexEvent>) {
        let (tx, rx) = mpsc::channel();
        (IndexReporter { tx, cancel: Arc::new(AtomicBool::new(false)) }, rx)
    }

    /// Sends an event; `false` once the TUI has gone (stop working then).
    pub fn send(&self, event: IndexEvent) -> bool {
        self.tx.send(event).is_ok()
    }

    pub fn bm25_ready(&self, backend: Arc<dyn Backend>) {
        self.send(IndexEvent::Bm25Ready(backend));
    }

    pub fn dense_ready(&self, backend: Arc<dyn Backend>) {
        self.send(IndexEvent::DenseReady(backend));
    }

    pub fn failed(&self, message: impl Into<String>) {
        self.send(IndexEvent::Failed(message.into()));
    }

    pub fn info(&self, message: impl Into<String>) {
        self.send(IndexEvent::Info(message.into()));
    }

    /// A handle that can cancel the indexer without keeping its channel open.
    pub fn cancel_handle(&self) -> CancelHandle {
        CancelHandle(self.cancel.clone())
    }
}

/// Asks an indexer to stop (the TUI does so when the user quits before indexing is done).
#[derive(Clone)]
pub struct CancelHandle(Arc<AtomicBool>);

impl CancelHandle {
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

impl Progress for IndexReporter {
    fn report(&self, phase: Phase, done: usize, total: usize) {
        self.send(IndexEvent::Progress { phase, done, total });
    }

    fn report_embed_work(&self, work: EmbedWork) {
        self.send(IndexEvent::EmbedWork(work));
    }

    fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reporter_forwards_progress_and_cancellation_is_shared_by_clones() {
        let (reporter, rx) = IndexReporter::channel();
        let clone = reporter.clone();
        clone.report(Phase::Embed, 3, 10);
        assert!(matches!(
            rx.recv().unwrap(),
            IndexEvent::Progress { phase: Phase::Embed, done: 3, total: 10 }
        ));
        assert!(!clone.cancelled());
        let handle = reporter.cancel_handle();
        drop(reporter);
        handle.cancel();
        assert!(clone.cancelled());
        drop(rx);
        assert!(!clone.send(IndexEvent::Info("gone".into())), "send reports a closed TUI");
    }
}
