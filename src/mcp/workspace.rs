//! The warm state behind the MCP tools: the current index and its searcher, re-read before
//! every call, and the dense index that a background thread keeps up with it.

use super::dense_worker::DenseSetup;
use super::dense_worker::{self, Job};
use super::state::{lock, Current, Shared};
use super::tools::{self, LocateAnswer, LocateRequest, RetrieverName, ToolError};
use super::DenseStatus;
use crate::engine::{CacheState, IndexOptions, RepoIndex};
use crate::error::{Error, Result};
use crate::history::HistoryView;
use crate::index::Retriever;
use crate::progress::NoProgress;
use crate::rank::fusion::FusionParams;
use crate::rank::searcher::Searcher;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How long a call waits for the dense index to catch up with an edit (a few changed chunks
/// embed in well under this) before BM25 answers alone; a `locate` waits less when its
/// [`super::LOCATE_WAIT`] ends sooner.
const DENSE_CATCH_UP: Duration = Duration::from_secs(3);
/// At most this many chunks left to embed count as "nearly there" (a second or two on a CPU).
const NEARLY_EMBEDDED: usize = 64;

#[derive(Clone, Debug)]
pub struct WorkspaceOptions {
    pub index: IndexOptions,
    pub fusion: FusionParams,
    /// What `locate` ranks by when a call names no retriever (None: the hybrid whenever a dense
    /// index exists, a partial one included, else BM25).
    pub default_retriever: Option<Retriever>,
}

/// One repository, indexed and kept warm for tool calls.
pub struct Workspace {
    root: PathBuf,
    opts: WorkspaceOptions,
    shared: Arc<Shared>,
    /// One re-read of the repository (and its cache) at a time; it holds when the last re-read
    /// that finished had started.
    refresh: Mutex<Option<Instant>>,
    /// The dense thread's queue; None when the dense index is off.
    jobs: Option<Sender<Job>>,
    /// The checkout's git history for `retriever: history`, read on the first such call.
    history: std::sync::OnceLock<Option<HistoryView>>,
}

impl Workspace {
    /// Serves `index` (from [`RepoIndex::open`]) at once; with `dense`, starts the thread that
    /// loads the towers and builds the dense index.
    pub fn new(index: RepoIndex, opts: WorkspaceOptions, dense: Option<DenseSetup>) -> Result<Workspace> {
        let root = index.root.clone();
        let history = history_for(&index, &opts.fusion);
        let searcher =
            Arc::new(Searcher { history, fusion: opts.fusion, ..Searcher::bm25_only(Arc::new(index)) });
        let status = if dense.is_some() { DenseStatus::Loading } else { DenseStatus::Off };
        let shared = Arc::new(Shared {
            current: Mutex::new(Current { searcher: searcher.clone(), generation: 0, dense: status }),
            dense_changed: Condvar::new(),
            generation: AtomicU64::new(0),
            embedded: AtomicUsize::new(0),
            to_embed: AtomicUsize::new(0),
            reranker: Default::default(),
        });
        let jobs = match dense {
            Some(setup) => {
                let (tx, rx) = mpsc::channel();
                // The receiver is alive: this cannot fail.
                let _ = tx.send(Job { generation: 0, searcher });
                dense_worker::spawn(setup, rx, shared.clone())
                    .map_err(|e| Error::context("starting the dense index thread", e))?;
                Some(tx)
            }
            None => None,
        };
        Ok(Workspace { root, opts, shared, refresh: Mutex::new(None), jobs, history: Default::default() })
    }

    /// The repository root (canonical).
    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn default_retriever(&self) -> Option<Retriever> {
        self.opts.default_retriever
    }

    /// The searcher and dense status as they stand, without re-reading the repository.
    pub fn current(&self) -> (Arc<Searcher>, DenseStatus) {
        self.shared.snapshot()
    }

    /// Re-reads the repository through the cache (only edited files are parsed again) and
    /// returns the searcher over it. When the chunks changed, the dense index is rebuilt on
    /// its thread; a call waits a little for it when it was ready before the edit.
    pub fn refresh(&self) -> Result<(Arc<Searcher>, DenseStatus)> {
        self.refresh_until(Instant::now() + DENSE_CATCH_UP)
    }

    /// [`Workspace::refresh`], waiting for the dense index to catch up with an edit at most
    /// until `catch_up`.
    fn refresh_until(&self, catch_up: Instant) -> Result<(Arc<Searcher>, DenseStatus)> {
        let asked = Instant::now();
        let mut last = lock(&self.refresh);
        // A re-read that started after this call came in saw every edit made before it: its
        // answer stands for this call too (eight clients at once walk the tree once, not eight
        // times in a row).
        if last.is_some_and(|started| started >= asked) {
            drop(last);
            return Ok(self.shared.snapshot());
        }
        let started = Instant::now();
        let reread = self.reread(catch_up);
        if reread.is_ok() {
            *last = Some(started);
        }
        reread
    }

    /// The re-read itself, under the refresh lock.
    fn reread(&self, catch_up: Instant) -> Result<(Arc<Searcher>, DenseStatus)> {
        let (current, _) = self.shared.snapshot();
        // Nothing on disk moved since a re-read that found the cache warm: that re-read's
        // index stands (its stats stay true), and the call skips the open.
        let settled = matches!(current.repo.stats.cache, CacheState::Warm | CacheState::Off);
        if settled && current.repo.tree_unchanged(&self.opts.index) {
            return Ok(self.shared.snapshot());
        }
        drop(current);
        let index = RepoIndex::open(&self.root, &self.opts.index, &NoProgress)?;
        let old = lock(&self.shared.current).searcher.clone();
        let unchanged = index.chunks == old.repo.chunks && index.graph == old.repo.graph;
        drop(old);
        if unchanged {
            // The fresh index (its stats say what the cache did) with the same dense index; the
            // dense thread may have installed one since `old` was read.
            let mut cur = lock(&self.shared.current);
            let s = &cur.searcher;
            let next = Searcher { repo: Arc::new(index), dense: s.dense.clone(), ..s.clone_sides() };
            cur.searcher = Arc::new(next);
            drop(cur);
            return Ok(self.shared.snapshot());
        }
        let history = history_for(&index, &self.opts.fusion);
        let searcher =
            Arc::new(Searcher { history, fusion: self.opts.fusion, ..Searcher::bm25_only(Arc::new(index)) });
        let (generation, was_ready) = {
            let mut cur = lock(&self.shared.current);
            cur.generation += 1;
            self.shared.generation.store(cur.generation, Ordering::SeqCst);
            cur.searcher = searcher.clone();
            let was_ready = cur.dense.is_ready();
            if matches!(cur.dense, DenseStatus::Ready | DenseStatus::Building { .. }) {
                self.shared.start_counting();
                cur.dense = DenseStatus::Building { done: 0, total: 0 };
            }
            (cur.generation, was_ready)
        };
        let queued = self.jobs.as_ref().is_some_and(|tx| tx.send(Job { generation, searcher }).is_ok());
        if queued && was_ready {
            self.shared.wait_for_dense(generation, catch_up.saturating_duration_since(Instant::now()));
        }
        Ok(self.shared.snapshot())
    }
}

impl Workspace {
    /// [`Workspace::refresh`], then, while the dense index is nearly ready (the model loading
    /// — over cached vectors that is all it lacks — or a few chunks left to embed), waits for
    /// it until `deadline` at most: the first answer is then the hybrid, not BM25 alone. A cold
    /// index with thousands of chunks to embed is not waited for.
    pub fn refresh_for_search(&self, deadline: Instant) -> Result<(Arc<Searcher>, DenseStatus)> {
        let mut now = self.refresh_until(deadline.min(Instant::now() + DENSE_CATCH_UP))?;
        while nearly_ready(&now.1) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(25));
            now = self.shared.snapshot();
        }
        Ok(now)
    }

    /// One `locate` call: re-reads the repository and ranks, waiting for the dense side `wait`
    /// at most in all (the server's is [`super::LOCATE_WAIT`]): the model loading, a rebuild
    /// after an edit, and a partial index embedding this chunks share it.
    pub fn locate(
        &self,
        req: &LocateRequest,
        wait: Duration,
    ) -> std::result::Result<LocateAnswer, ToolError> {
        const NO_HISTORY: &str =
            "history: this checkout has no git history to search (not a git repository, or no commits)";
        let deadline = Instant::now() + wait;
        let (searcher, dense) = self.searcher_for(req, deadline)?;
        if req.retriever == Some(RetrieverName::History) && searcher.history.is_none() {
            return Err(ToolError::Argument { arg: "retriever", message: NO_HISTORY.into() });
        }
        tools::locate_within(&searcher, &dense, self.default_retriever(), req, deadline)
    }

    /// The searcher a `locate` ranks with: the repository re-read, the dense side waited for
    /// until `deadline` (bm25 and history need nothing of it and do not wait), the history
    /// added when the request asks for it and the checkout has one.
    pub(super) fn searcher_for(
        &self,
        req: &LocateRequest,
        deadline: Instant,
    ) -> Result<(Arc<Searcher>, DenseStatus)> {
        let asked = req.retriever.map(Retriever::from).or(self.default_retriever());
        let (searcher, dense) = if matches!(asked, Some(Retriever::Bm25 | Retriever::History)) {
            self.refresh_until(Instant::now())?
        } else {
            self.refresh_for_search(deadline)?
        };
        let searcher = match req.retriever == Some(RetrieverName::History) {
            true => self.with_history(searcher.clone()).unwrap_or(searcher),
            false => searcher,
        };
        Ok((searcher, dense))
    }
}

impl Workspace {
    /// `searcher` with the checkout's git history, read once (the hybrid's own history, when
    /// `--history-weight` fuses it, is kept); None when there is no history to search.
    pub fn with_history(&self, searcher: Arc<Searcher>) -> Option<Arc<Searcher>> {
        if searcher.history.is_some() {
            return Some(searcher);
        }
        let history = self
            .history
            .get_or_init(|| {
                crate::history::checkout_history(&self.root, searcher.repo.cache_entry.as_deref()).0
            })
            .clone()?;
        Some(Arc::new(Searcher {
            dense: searcher.dense.clone(),
            history: Some(history),
            ..searcher.clone_sides()
        }))
    }
}

fn nearly_ready(status: &DenseStatus) -> bool {
    match *status {
        DenseStatus::Loading => true,
        DenseStatus::Building { done, total } => total.saturating_sub(done) <= NEARLY_EMBEDDED,
        _ => false,
    }
}

/// The checkout's git history when the hybrid fuses it (`--history-weight` above 0).
fn history_for(index: &RepoIndex, fusion: &FusionParams) -> Option<HistoryView> {
    if fusion.history_weight > 0.0 {
        crate::history::checkout_history(&index.root, index.cache_entry.as_deref()).0
    } else {
        None
    }
}

#[cfg(test)]
#[path = "workspace_tests.rs"]
mod tests;
