//! What the MCP server's tool calls and its dense thread share: the current searcher, its
//! generation, the dense index's status and progress.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use super::DenseStatus;
use crate::rank::dense_retriever::DenseSearcher;
use crate::rank::searcher::Searcher;
use crate::rerank::Reranker;

/// What the tool calls and the dense thread share.
pub(super) struct Shared {
    pub(super) current: Mutex<Current>,
    /// Signalled when the dense index is installed or fails.
    pub(super) dense_changed: Condvar,
    /// The current generation, for the dense thread's cancellation checks.
    pub(super) generation: AtomicU64,
    pub(super) embedded: AtomicUsize,
    pub(super) to_embed: AtomicUsize,
    /// Set by the dense thread with the towers; every dense searcher installed carries it.
    pub(super) reranker: std::sync::OnceLock<Arc<Reranker>>,
}

pub(super) struct Current {
    pub(super) searcher: Arc<Searcher>,
    /// Bumped whenever the index changes; a dense index built for an older one is dropped.
    pub(super) generation: u64,
    pub(super) dense: DenseStatus,
}

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Shared {
    pub(super) fn snapshot(&self) -> (Arc<Searcher>, DenseStatus) {
        let cur = lock(&self.current);
        let status = match cur.dense {
            DenseStatus::Building { .. } => DenseStatus::Building {
                done: self.embedded.load(Ordering::Relaxed),
                total: self.to_embed.load(Ordering::Relaxed),
            },
            ref other => other.clone(),
        };
        (cur.searcher.clone(), status)
    }

    pub(super) fn start_counting(&self) {
        self.embedded.store(0, Ordering::Relaxed);
        self.to_embed.store(0, Ordering::Relaxed);
    }

    pub(super) fn wait_for_dense(&self, generation: u64, timeout: Duration) {
        let cur = lock(&self.current);
        let _ = self.dense_changed.wait_timeout_while(cur, timeout, |c| {
            c.generation == generation && matches!(c.dense, DenseStatus::Building { .. })
        });
    }

    /// The latest generation (the dense thread stops a build that fell behind it).
    pub(super) fn latest(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    pub(super) fn report_embedding(&self, done: usize, total: usize) {
        self.embedded.store(done, Ordering::Relaxed);
        self.to_embed.store(total, Ordering::Relaxed);
    }

    /// Marks a build for `generation` as started; false when a newer index superseded it.
    pub(super) fn start_build(&self, generation: u64) -> bool {
        let mut cur = lock(&self.current);
        if cur.generation != generation {
            return false;
        }
        self.start_counting();
        cur.dense = DenseStatus::Building { done: 0, total: 0 };
        true
    }

    /// The reranker the dense thread loaded with the towers (once).
    pub(super) fn set_reranker(&self, reranker: Arc<Reranker>) {
        let _ = self.reranker.set(reranker);
    }

    /// Installs a dense index built for `generation`, unless the index moved on since.
    pub(super) fn install_dense(&self, generation: u64, dense: Arc<DenseSearcher>) {
        let mut cur = lock(&self.current);
        if cur.generation == generation {
            let reranker = self.reranker.get().cloned();
            let next = Searcher { dense: Some(dense), reranker, ..cur.searcher.clone_sides() };
            cur.searcher = Arc::new(next);
            cur.dense = DenseStatus::Ready;
        }
        self.dense_changed.notify_all();
    }

    /// Serves a partial dense index built for `generation` (the build goes on; the status
    /// stays `Building`). False once the index moved on, so the build stops.
    pub(super) fn install_partial(&self, generation: u64, dense: Arc<DenseSearcher>) -> bool {
        let mut cur = lock(&self.current);
        if cur.generation != generation {
            return false;
        }
        let reranker = self.reranker.get().cloned();
        cur.searcher = Arc::new(Searcher { dense: Some(dense), reranker, ..cur.searcher.clone_sides() });
        drop(cur);
        self.dense_changed.notify_all();
        true
    }

    /// Puts the static tier beside `generation`'s index: a question or a name is answered from it
    /// at once while the transformer has not embedded its candidates (issue 80). Later dense
    /// indexes keep it (`Searcher::clone_sides`).
    pub(super) fn install_static_side(&self, generation: u64, side: Arc<DenseSearcher>) {
        let mut cur = lock(&self.current);
        if cur.generation == generation {
            cur.searcher = Arc::new(Searcher {
                static_side: Some(side),
                dense: cur.searcher.dense.clone(),
                ..cur.searcher.clone_sides()
            });
        }
        drop(cur);
        self.dense_changed.notify_all();
    }

    /// The dense index failed for `generation` (`None`: for good, e.g. no model).
    pub(super) fn fail_dense(&self, generation: Option<u64>, why: String) {
        let mut cur = lock(&self.current);
        if generation.is_none_or(|g| g == cur.generation) {
            cur.dense = DenseStatus::Failed(why);
        }
        self.dense_changed.notify_all();
    }
}
