//! The contract between the TUI and the engine.
//!
//! The TUI never touches indexes directly: it sees the engine only through [`Backend`], and it
//! learns about indexing only through [`IndexEvent`]s sent by the `indexer` closure given to
//! [`crate::tui::run`].
//!
//! # How the binary drives it
//! ```ignore
//! let theme = coret::tui::Theme::load(&args.theme)?;
//! let session = Session { repo, model: "all-MiniLM-L6-v2".into(), device: "cpu".into(), ..Session::default() };
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
//! * Send `Bm25Ready` once, then `DenseReady` at most once for that index. The backend sent
//!   with `DenseReady` replaces the earlier one and must answer every retriever.
//! * After `Bm25Ready` the indexer may watch the working tree: [`IndexReporter::wait_for_check`]
//!   returns each time the TUI asks (before a search, after `$EDITOR`) and when a given time
//!   passed without a request (an edit made in another window is seen). When the tree changed,
//!   send `Reindexed` with the new index's BM25 backend (its chunk ids are new), then a
//!   `DenseReady` or `Failed` for that index, as for the first one. `engine_indexer` does all
//!   this for the real engine.
//! * `Failed` before `Bm25Ready` means nothing is searchable; after it, only the dense side failed.
//! * `Progress` may be sent as often as you like (it is cheap); `done <= total`.
//! * Chunk ids are `0..chunk_count()` and stay the same across `Bm25Ready` → `DenseReady`.
//! * Every method is called from background threads (searches) and from the UI thread (chunk
//!   look-ups while rendering), so the cheap ones (`chunk`, `callers`, `callees`) must not block.
//! * If the closure returns without sending `Bm25Ready` or `Failed`, or panics, the TUI says so.

use crate::index::{Hit, Retriever};
use crate::progress::{EmbedWork, Phase, Progress};
use crate::rank::fusion::FusionParams;
use crate::Chunk;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};

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
    /// Calls elsewhere the call graph left unresolved that name `id`, as `(caller, line)`:
    /// callers it could not confirm, shown as call sites so that `id` never reads as dead code.
    fn unresolved_callers(&self, _id: u32) -> Vec<(u32, u32)> {
        Vec::new()
    }
    /// Top `k` chunks for `query`, best first. May be slow (dense encodes the query):
    /// it is only called from search worker threads.
    fn search(&self, query: &str, retriever: Retriever, k: usize) -> anyhow::Result<Vec<Hit>>;
    /// A first answer at once while [`Backend::search`] would wait for the query's chunks to be
    /// embedded (a cold repository): the same ranking over what the dense index holds now.
    /// `None` when `search` answers without waiting. Called from search worker threads.
    fn search_now(&self, _query: &str, _retriever: Retriever, _k: usize) -> anyhow::Result<Option<Vec<Hit>>> {
        Ok(None)
    }
    /// Whether `Retriever::Dense` and `Retriever::Hybrid` work.
    fn has_dense(&self) -> bool;
    /// Whether `Retriever::History` works: false outside a git checkout (or one without
    /// commits), where the history column says so instead of searching.
    fn has_history(&self) -> bool {
        true
    }
    /// While the dense index is partial (query-first: each search has its own chunks embedded
    /// first, the rest still embedding): how many chunks it holds and how many it will.
    /// `None` once complete, or without one.
    fn dense_partial(&self) -> Option<(usize, usize)> {
        None
    }
    /// Which tier made the dense index (`static` or `transformer`), once there is one.
    fn dense_tier(&self) -> Option<&'static str> {
        None
    }
    /// While the dense index is partial: the tier of a search's first answer (`static` where
    /// the static tier answers at once and the transformer's refines it).
    fn first_answer_tier(&self) -> Option<&'static str> {
        None
    }
    /// With a reranker: how many of a hybrid ranking's top hits [`Backend::rerank`] re-orders.
    fn rerank_depth(&self) -> Option<usize> {
        None
    }
    /// `hits` (a hybrid ranking) with their head re-ordered by the reranker; `None` without
    /// one. Slow (a model reads each pair): only called from search worker threads.
    fn rerank(&self, _query: &str, _hits: &[Hit]) -> anyhow::Result<Option<Vec<Hit>>> {
        Ok(None)
    }
    /// How the rankings are made (the test demotion, the hybrid's fusion), for the legend.
    fn fusion(&self) -> FusionParams {
        FusionParams::default()
    }
    /// The whole source of a repository-relative file (for the preview), `None` if unreadable.
    /// Called from the highlight worker thread.
    fn file_source(&self, path: &str) -> Option<String>;
    /// Where a chunk's file lies on disk, for `$EDITOR`; `None`: under [`Session::repo`]
    /// (one checkout). A backend over several checkouts says which one.
    fn file_on_disk(&self, _path: &str) -> Option<PathBuf> {
        None
    }
    /// The engine's searcher behind this backend, when there is one: a backend over several
    /// checkouts ranks their searchers as one ([`crate::rank::many`]).
    fn searcher(&self) -> Option<&crate::rank::Searcher> {
        None
    }
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
    /// Query-first: the chunks the latest search needs, embedded ahead of the rest.
    FirstEmbed {
        done: usize,
        total: usize,
    },
    /// BM25 is searchable (the dense index may still be building).
    Bm25Ready(Arc<dyn Backend>),
    /// The dense index is done; this backend supersedes the BM25-only one.
    DenseReady(Arc<dyn Backend>),
    /// The working tree changed since the last index: this BM25 backend (new chunk ids)
    /// replaces the current one, and a `DenseReady` for it follows. `note` says what changed
    /// ("re-indexed: 1 file changed, +1 chunk").
    Reindexed {
        backend: Arc<dyn Backend>,
        note: String,
    },
    /// Indexing failed; the message is shown in the status bar.
    Failed(String),
    /// A note for the status bar ("loaded index from cache", "skipped 3 binary files").
    Info(String),
}

/// What the status bar shows about the session.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Session {
    /// Repository root; `$EDITOR` opens `repo.join(chunk.path)` (unless the backend says
    /// where the file is: [`Backend::file_on_disk`]).
    pub repo: PathBuf,
    /// What the status bar calls the checkouts when there are several (`shop + billing`);
    /// `None`: `repo`'s directory name.
    pub label: Option<String>,
    /// Model name as the user knows it (e.g. `all-MiniLM-L6-v2` or a path).
    pub model: String,
    /// `cpu`, `cuda:0`, ...
    pub device: String,
    /// Text to put in the issue editor at start (searched as soon as BM25 is ready).
    pub initial_query: Option<String>,
    /// How the columns order their hits (`--order`): by the query's shape, or fixed.
    pub order: crate::rank::shape::OrderChoice,
}

/// The indexer's handle: sends [`IndexEvent`]s and implements [`Progress`], so it can be
/// passed straight to the engine's indexing functions.
#[derive(Clone)]
pub struct IndexReporter {
    tx: Sender<IndexEvent>,
    cancel: Arc<AtomicBool>,
    /// The TUI's requests to re-check the working tree (a cancel also wakes the waiter).
    checks_tx: Sender<()>,
    checks: Arc<Mutex<Receiver<()>>>,
}

impl IndexReporter {
    /// A reporter and the receiving end (the TUI's runtime owns the receiver).
    pub fn channel() -> (IndexReporter, Receiver<IndexEvent>) {
        let (tx, rx) = mpsc::channel();
        let (checks_tx, checks) = mpsc::channel();
        let checks = Arc::new(Mutex::new(checks));
        (IndexReporter { tx, cancel: Arc::new(AtomicBool::new(false)), checks_tx, checks }, rx)
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

    pub fn reindexed(&self, backend: Arc<dyn Backend>, note: impl Into<String>) {
        self.send(IndexEvent::Reindexed { backend, note: note.into() });
    }

    /// A handle that can cancel the indexer without keeping its channel open.
    pub fn cancel_handle(&self) -> CancelHandle {
        CancelHandle { cancel: self.cancel.clone(), wake: self.checks_tx.clone() }
    }

    /// A handle for asking the indexer to re-check the working tree.
    pub fn check_handle(&self) -> CheckHandle {
        CheckHandle(self.checks_tx.clone())
    }

    /// Blocks until the TUI asks whether the working tree changed, or for `every` at most (a
    /// check is due then too); requests queued meanwhile count as one. False once the indexer
    /// is cancelled (the user quit): stop watching then.
    pub fn wait_for_check(&self, every: std::time::Duration) -> bool {
        let checks = self.checks.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if self.cancelled() {
            return false;
        }
        if let Err(mpsc::RecvTimeoutError::Disconnected) = checks.recv_timeout(every) {
            return false;
        }
        while checks.try_recv().is_ok() {}
        !self.cancelled()
    }
}

/// Asks an indexer to stop (the TUI does so when the user quits before indexing is done).
#[derive(Clone)]
pub struct CancelHandle {
    cancel: Arc<AtomicBool>,
    /// Wakes an indexer waiting for a check, so it sees the cancel.
    wake: Sender<()>,
}

impl CancelHandle {
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
        let _ = self.wake.send(());
    }
}

/// Asks the indexer to re-check the working tree (before a search, after `$EDITOR`); cheap,
/// never blocks, and does nothing when the indexer does not watch.
#[derive(Clone)]
pub struct CheckHandle(Sender<()>);

impl CheckHandle {
    pub fn request(&self) {
        let _ = self.0.send(());
    }
}

impl Progress for IndexReporter {
    fn report(&self, phase: Phase, done: usize, total: usize) {
        self.send(IndexEvent::Progress { phase, done, total });
    }

    fn report_embed_work(&self, work: EmbedWork) {
        self.send(IndexEvent::EmbedWork(work));
    }

    fn report_first(&self, done: usize, total: usize) {
        self.send(IndexEvent::FirstEmbed { done, total });
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

    #[test]
    fn checks_coalesce_and_a_cancel_ends_the_wait() {
        let (reporter, _rx) = IndexReporter::channel();
        let checks = reporter.check_handle();
        checks.request();
        checks.request();
        let long = std::time::Duration::from_secs(3600);
        assert!(reporter.wait_for_check(long), "a requested check");
        let started = std::time::Instant::now();
        assert!(
            reporter.wait_for_check(std::time::Duration::from_millis(50)),
            "a check is due after the time"
        );
        assert!(started.elapsed() < long);
        let waiter = reporter.clone();
        let watching = std::thread::spawn(move || waiter.wait_for_check(long));
        reporter.cancel_handle().cancel();
        assert!(!watching.join().unwrap(), "the two queued requests were one; the cancel ends the wait");
    }
}
