//! The TUI's indexer over the real engine: indexes the repository (BM25 first, then the dense
//! index), then keeps the index in step with the working tree. Each time the TUI asks (before
//! a search, after `$EDITOR`), and every second or so besides, it re-checks the tree as the MCP
//! server does
//! ([`RepoIndex::tree_unchanged`]: a walk and a stat per file); when something changed it
//! re-opens the index through the cache (only edited files are parsed again), sends the new
//! BM25 backend at once, and the dense thread embeds only the chunks its vector store lacks.
//!
//! Two threads: this one (the runtime's indexer thread) owns the index and answers checks; a
//! dense thread loads the towers once and builds the dense index for the newest index, so a
//! check is never stuck behind a model load or a long embedding.

use super::backend::IndexReporter;
use super::terminal::catch;
use crate::engine::{IndexOptions, RepoIndex};
use crate::error::Error;
use crate::index::dense::VectorStore;
use crate::model::static_tier::StaticTable;
use crate::model::Towers;
use crate::progress::{EmbedWork, Phase, Progress};
use crate::rank::dense_retriever::DenseOptions;
use crate::rank::fusion::FusionParams;
use crate::rank::query_first::{build_serving, newest, QueryFirst};
use crate::rank::searcher::{SearchModels, Searcher};
use crate::Chunk;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// Loads the towers (and the reranker, if asked for) on the dense thread (it may provision or
/// read a model for seconds); the error is shown as the dense column's failure.
pub type TowerLoader = Box<dyn FnOnce(&IndexReporter) -> std::result::Result<SearchModels, String> + Send>;

/// What the indexer needs: the repository, how to index it, and how to get the towers.
pub struct EngineIndexer {
    pub repo: PathBuf,
    pub index: IndexOptions,
    pub fusion: FusionParams,
    pub dense: DenseOptions,
    pub towers: TowerLoader,
    /// The static tier (docs/GUIDE.md "Tiers"): the dense column answers from it at once and
    /// until the transformer's index is complete. `None`: the transformer alone (`--dense transformer`).
    pub static_table: Option<Arc<StaticTable>>,
    /// Only the static tier (`--dense static`): the transformer is never loaded.
    pub static_only: bool,
}

/// Besides each search and `$EDITOR`, the tree is checked this often, so that an edit made
/// in another window shows its `re-indexed` note within about a second.
const WATCH_EVERY: Duration = Duration::from_secs(1);
/// The longest wait between two checks (a tree whose walk takes over 3 s).
const WATCH_SLOWEST: Duration = Duration::from_secs(30);

/// The newest index's number. A dense index is sent only while its index is the newest, and
/// `Reindexed` is sent under the same lock, so the TUI never gets a dense backend over chunk
/// ids it has replaced.
type Generation = Arc<Mutex<u64>>;

fn lock(g: &Generation) -> MutexGuard<'_, u64> {
    g.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Build the dense index over this searcher's index.
struct Job {
    generation: u64,
    searcher: Searcher,
}

impl EngineIndexer {
    /// Runs until the TUI quits (the reporter is cancelled).
    pub fn run(self, reporter: IndexReporter) {
        let EngineIndexer { repo, index: opts, fusion, dense, towers, static_table, static_only } = self;
        let index = match RepoIndex::open(&repo, &opts, &reporter) {
            Ok(i) => Arc::new(i),
            Err(e) => return reporter.failed(e.to_string()),
        };
        let s = &index.stats;
        reporter.info(format!(
            "indexed {} files, {} chunks, {} call edges, {}; {}",
            s.files,
            s.chunks,
            s.edges,
            s.skipped.describe(),
            s.cache.describe()
        ));
        let bm25 = |repo: Arc<RepoIndex>| Searcher { fusion, ..Searcher::bm25_only(repo) };
        reporter.bm25_ready(Arc::new(bm25(index.clone())));
        let generation: Generation = Arc::new(Mutex::new(0));
        let (jobs, rx) = mpsc::channel();
        // The receiver is alive: this cannot fail.
        let _ = jobs.send(Job { generation: 0, searcher: bm25(index.clone()) });
        let dense_thread = {
            let (reporter, generation) = (reporter.clone(), generation.clone());
            std::thread::Builder::new().name("coret-tui-dense".into()).spawn(move || {
                let last_word = reporter.clone();
                let tiers = Tiers { towers, static_table, static_only };
                if let Err(panic) = catch(move || build_dense(tiers, dense, rx, &reporter, &generation)) {
                    last_word.failed(format!("dense index: the dense thread panicked: {panic}"));
                }
            })
        };
        if let Err(e) = dense_thread {
            reporter.failed(format!("dense index: cannot start its thread: {e}"));
        }
        // The index the TUI searches, and the one the latest check opened (the same chunks
        // when only stamps moved, e.g. a file saved unchanged).
        let (mut served, mut checked) = (index.clone(), index);
        let mut every = WATCH_EVERY;
        while reporter.wait_for_check(every) {
            let walk = std::time::Instant::now();
            let unchanged = checked.tree_unchanged(&opts);
            // A tree that is slow to walk is walked less often: a tenth of the time at most.
            every = (walk.elapsed() * 10).clamp(WATCH_EVERY, WATCH_SLOWEST);
            if unchanged {
                continue;
            }
            let quiet = Quiet(&reporter);
            let fresh = match RepoIndex::open(&repo, &opts, &quiet) {
                Ok(i) => Arc::new(i),
                Err(Error::Cancelled) => return,
                Err(e) => {
                    reporter.info(format!("re-indexing failed: {e}"));
                    continue;
                }
            };
            checked = fresh.clone();
            if fresh.chunks == served.chunks && fresh.graph == served.graph {
                continue;
            }
            let note = describe_change(&served, &fresh);
            served = fresh;
            let mut g = lock(&generation);
            *g += 1;
            reporter.reindexed(Arc::new(bm25(served.clone())), note);
            // Without a dense thread (no model, or it failed) nobody listens: fine.
            let _ = jobs.send(Job { generation: *g, searcher: bm25(served.clone()) });
        }
    }
}

/// What the dense thread serves with: the transformer (loaded there) and the static tier.
struct Tiers {
    towers: TowerLoader,
    static_table: Option<Arc<StaticTable>>,
    static_only: bool,
}

/// The dense thread: the history once, then a dense index for the newest index it is sent.
/// The transformer's (towers loaded once, one vector store throughout, so an edit embeds only
/// its chunks; its first partial index served at once, query-first) wherever its model loads;
/// the static tier's where it does not, or where it alone was asked for (`--dense static`).
fn build_dense(
    tiers: Tiers,
    opts: DenseOptions,
    jobs: Receiver<Job>,
    reporter: &IndexReporter,
    generation: &Generation,
) {
    let Some(first) = newest(&jobs) else { return };
    // The history column is served with the dense index (the right column waits for it).
    let repo = &first.searcher.repo;
    let (history, notes) = crate::history::checkout_history(&repo.root, repo.cache_entry.as_deref());
    notes.into_iter().for_each(|n| reporter.info(n));
    let Tiers { towers: load, static_table, static_only } = tiers;
    // The static tier answers at once, while the model loads and the transformer embeds
    // (issue 80); the transformer's answers replace it as they come.
    let first_tier = static_table.clone().filter(|_| !static_only);
    if let Some(table) = &first_tier {
        if let Ok(s) = first.searcher.with_static(table.clone(), opts.clone()) {
            let g = lock(generation);
            if *g == first.generation && !reporter.cancelled() {
                reporter.dense_ready(Arc::new(Searcher { history: history.clone(), ..s }));
            }
        }
    }
    let loaded = match static_only {
        true => Err("--dense static".to_string()),
        false => load(reporter),
    };
    let SearchModels { towers, reranker } = match (loaded, static_table) {
        (Ok(models), _) => models,
        (Err(why), None) => return reporter.failed(why),
        (Err(why), Some(table)) => {
            if !static_only {
                reporter.info(format!("{why}; the static tier answers instead"));
            }
            return serve_static(table, opts, first, &jobs, reporter, generation, history);
        }
    };
    // What every dense backend sent carries besides its index: the history and the reranker.
    // A partial index carries the static tier beside it: a search's first answer
    // (`Searcher::search_now`) is the static tier's while its own chunks are embedded.
    let serving = |s: Searcher| {
        let s = Searcher { history: history.clone(), reranker: reranker.clone(), ..s };
        match (&first_tier, s.dense.as_ref().is_some_and(|d| !d.is_complete())) {
            (Some(table), true) => s.with_static_side(table.clone(), opts.clone()).unwrap_or(s),
            _ => s,
        }
    };
    let mut store = match first.searcher.vector_store(&towers) {
        Ok(s) => s,
        Err(e) => return reporter.failed(format!("dense index: opening the vector store: {e}")),
    };
    let mut job = Some(first);
    while let Some(Job { generation: mine, searcher }) = job.take().or_else(|| newest(&jobs)) {
        let progress = DenseProgress { reporter, generation, mine };
        let (built, doing) = match opts.rank_in_store {
            true => (
                build_in_store(&searcher, &towers, &opts, &mut store, &progress, &serving),
                "ranking in the store: ",
            ),
            false => (build_query_first(&searcher, &towers, &opts, &mut store, &progress, &serving), ""),
        };
        let g = lock(generation);
        match built {
            _ if *g != mine || reporter.cancelled() => {}
            Ok(full) => {
                reporter.dense_ready(Arc::new(serving(full)));
                store_note(&opts, reporter);
            }
            Err(e) => reporter.failed(format!("dense index: {doing}{e}")),
        }
    }
}

/// Query-first: the first partial index (over the vectors already cached) is served at once,
/// and each search through it has its own chunks embedded before the rest. Later partial
/// indexes are not sent: a search through the first one already ranks over all that is
/// embedded by then, and re-running searches on its own would move the rows.
fn build_query_first(
    searcher: &Searcher,
    towers: &Towers,
    opts: &DenseOptions,
    store: &mut VectorStore,
    progress: &DenseProgress,
    serving: &dyn Fn(Searcher) -> Searcher,
) -> crate::error::Result<Searcher> {
    let (handle, requests) = QueryFirst::channel();
    let sent_partial = std::cell::Cell::new(false);
    let publish = |partial: Searcher| {
        progress.while_current(|| {
            if !sent_partial.replace(true) {
                progress.reporter.dense_ready(Arc::new(serving(partial)));
            }
        })
    };
    build_serving(searcher, towers.clone(), opts.clone(), store, &requests, handle, progress, &publish)
}

/// Ranked in the team's store (`--store-search`); what it holds serves at once (a partial
/// index) while the rest is embedded.
fn build_in_store(
    searcher: &Searcher,
    towers: &Towers,
    opts: &DenseOptions,
    store: &mut VectorStore,
    progress: &DenseProgress,
    serving: &dyn Fn(Searcher) -> Searcher,
) -> crate::error::Result<Searcher> {
    let publish = |partial: Searcher| {
        progress.while_current(|| progress.reporter.dense_ready(Arc::new(serving(partial))));
    };
    searcher.with_dense_in_store_at(towers.clone(), opts.clone(), store, (progress, Some(&publish)))
}

/// The team's store (`--store`) in the status bar after a dense build: what it gave and took,
/// or why it is not answering (the local cache answered).
fn store_note(opts: &DenseOptions, reporter: &IndexReporter) {
    let Some(store) = &opts.shared else { return };
    let s = store.0.stats();
    reporter.info(match &s.trouble {
        Some(why) => format!("store {}: {why}", s.store),
        None if s.pending > 0 => {
            format!(
                "store {}: {} vectors from it, {} to it, {} waiting",
                s.store, s.pulled, s.pushed, s.pending
            )
        }
        None => format!("store {}: {} vectors from it, {} to it", s.store, s.pulled, s.pushed),
    });
}

/// The static tier's index for every index the thread is sent (each computed at once).
fn serve_static(
    table: Arc<StaticTable>,
    opts: DenseOptions,
    first: Job,
    jobs: &Receiver<Job>,
    reporter: &IndexReporter,
    generation: &Generation,
    history: Option<crate::history::HistoryView>,
) {
    let mut job = Some(first);
    while let Some(Job { generation: mine, searcher }) = job.take().or_else(|| newest(jobs)) {
        let built = searcher.with_static(table.clone(), opts.clone());
        let g = lock(generation);
        match built {
            _ if *g != mine || reporter.cancelled() => {}
            Ok(s) => reporter.dense_ready(Arc::new(Searcher { history: history.clone(), ..s })),
            Err(e) => reporter.failed(format!("static tier: {e}")),
        }
    }
}

/// A re-open reports nothing (it takes a moment) but stops when the TUI quits.
struct Quiet<'a>(&'a IndexReporter);

impl Progress for Quiet<'_> {
    fn report(&self, _: Phase, _: usize, _: usize) {}

    fn cancelled(&self) -> bool {
        self.0.cancelled()
    }
}

/// The embedding's progress for the gauge; cancelled once a newer index exists.
struct DenseProgress<'a> {
    reporter: &'a IndexReporter,
    generation: &'a Generation,
    mine: u64,
}

impl DenseProgress<'_> {
    /// Runs `send` while this build's index is still the newest and the TUI still there, under
    /// the generation lock (`Reindexed` is sent under it too); whether it ran.
    fn while_current(&self, send: impl FnOnce()) -> bool {
        let g = lock(self.generation);
        let current = *g == self.mine && !self.reporter.cancelled();
        if current {
            send();
        }
        current
    }
}

impl Progress for DenseProgress<'_> {
    fn report(&self, phase: Phase, done: usize, total: usize) {
        self.reporter.report(phase, done, total);
    }

    fn report_embed_work(&self, work: EmbedWork) {
        self.reporter.report_embed_work(work);
    }

    fn report_first(&self, done: usize, total: usize) {
        self.reporter.report_first(done, total);
    }

    fn cancelled(&self) -> bool {
        self.reporter.cancelled() || *lock(self.generation) != self.mine
    }
}

/// `re-indexed: 1 file changed, +1 chunk`: files whose chunks differ, added and removed, and
/// the change in the chunk count.
pub fn describe_change(old: &RepoIndex, new: &RepoIndex) -> String {
    fn chunks_of(index: &RepoIndex) -> HashMap<&str, &[Chunk]> {
        index.files.iter().map(|f| (f.path.as_str(), index.file_chunks(&f.path).unwrap_or(&[]))).collect()
    }
    let (before, after) = (chunks_of(old), chunks_of(new));
    let changed = after.iter().filter(|(p, c)| before.get(*p).is_some_and(|b| b != *c)).count();
    let added = after.keys().filter(|p| !before.contains_key(*p)).count();
    let removed = before.keys().filter(|p| !after.contains_key(*p)).count();
    let files = |n: usize| if n == 1 { "1 file".to_string() } else { format!("{n} files") };
    let mut parts = Vec::new();
    if changed > 0 {
        parts.push(format!("{} changed", files(changed)));
    }
    if added > 0 {
        parts.push(format!("{} added", files(added)));
    }
    if removed > 0 {
        parts.push(format!("{} removed", files(removed)));
    }
    let delta = new.chunks.len() as i64 - old.chunks.len() as i64;
    parts.push(match delta {
        0 => "same chunk count".to_string(),
        1 | -1 => format!("{delta:+} chunk"),
        _ => format!("{delta:+} chunks"),
    });
    format!("re-indexed: {}", parts.join(", "))
}

#[cfg(test)]
#[path = "engine_indexer_tests.rs"]
mod tests;
