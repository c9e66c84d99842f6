//! The MCP server's dense thread: loads the towers once, then builds the dense index for the
//! newest index it is sent. Vectors stay in one store across builds (the cache entry's log, or
//! memory without a cache), so a rebuild after an edit embeds only the changed chunks.

use super::state::Shared;
use crate::error::Error;
use crate::index::dense::VectorStore;
use crate::progress::{Phase, Progress};
use crate::rank::dense_retriever::DenseOptions;
use crate::rank::query_first::{build_serving, newest, QueryFirst};
use crate::rank::searcher::{SearchModels, Searcher};
use std::sync::mpsc::Receiver;
use std::sync::Arc;

/// Loads the towers (and the reranker, if asked for) on the dense thread (it may provision the
/// model); the error says why not.
pub type TowerLoader = Box<dyn FnOnce() -> std::result::Result<SearchModels, String> + Send>;

/// How to build the dense index: the towers' loader and the dense options.
pub struct DenseSetup {
    pub load: TowerLoader,
    pub opts: DenseOptions,
    /// The static tier: installed at once for every index, until the transformer's is complete.
    pub static_table: Option<Arc<crate::model::static_tier::StaticTable>>,
}

/// Build the dense index for this searcher's index (generation `generation`).
pub(super) struct Job {
    pub generation: u64,
    pub searcher: Arc<Searcher>,
}

pub(super) fn spawn(setup: DenseSetup, jobs: Receiver<Job>, shared: Arc<Shared>) -> std::io::Result<()> {
    std::thread::Builder::new().name("coret-mcp-dense".into()).spawn(move || run(setup, jobs, &shared))?;
    Ok(())
}

/// Installs the static tier's index for `job` (computed at once).
fn serve_static(setup: &DenseSetup, job: &Job, shared: &Shared) {
    let Some(table) = &setup.static_table else { return };
    match job.searcher.with_static(table.clone(), setup.opts.clone()) {
        Ok(Searcher { dense: Some(dense), .. }) => shared.install_dense(job.generation, dense),
        Ok(_) => shared.fail_dense(Some(job.generation), "no static index was built".into()),
        Err(e) => shared.fail_dense(Some(job.generation), format!("static tier: {e}")),
    }
}

/// The transformer wherever its model loads; the static tier where it does not (or where it
/// alone was asked for), for every index the thread is sent.
fn run(setup: DenseSetup, jobs: Receiver<Job>, shared: &Shared) {
    let DenseSetup { load, opts, static_table } = setup;
    let setup = DenseSetup { load: Box::new(|| Err(String::new())), opts, static_table };
    let towers = match load() {
        Ok(models) => {
            if let Some(r) = models.reranker {
                shared.set_reranker(r);
            }
            models.towers
        }
        Err(_) if setup.static_table.is_some() => {
            while let Some(job) = newest(&jobs) {
                if shared.start_build(job.generation) {
                    serve_static(&setup, &job, shared);
                }
            }
            return;
        }
        Err(why) => return shared.fail_dense(None, why),
    };
    let mut store: Option<VectorStore> = None;
    while let Some(job) = newest(&jobs) {
        if !shared.start_build(job.generation) {
            continue;
        }
        if store.is_none() {
            match job.searcher.vector_store(&towers) {
                Ok(s) => store = Some(s),
                Err(e) => {
                    shared.fail_dense(Some(job.generation), format!("opening the vector store: {e}"));
                    continue;
                }
            }
        }
        let Some(store) = store.as_mut() else { continue };
        // The static tier beside it first (computed at once): questions and names answer from
        // it while the transformer embeds.
        if let Some(table) = &setup.static_table {
            if let Ok(Searcher { dense: Some(side), .. }) =
                job.searcher.with_static(table.clone(), setup.opts.clone())
            {
                shared.install_static_side(job.generation, side);
            }
        }
        let progress = BuildProgress { shared, generation: job.generation };
        if setup.opts.rank_in_store {
            // Ranked in the team's store; what it holds serves at once (a partial index) while
            // the rest is embedded.
            let publish = |partial: Searcher| {
                if let Some(dense) = partial.dense {
                    shared.install_partial(job.generation, dense);
                }
            };
            let built = job.searcher.with_dense_in_store_at(
                towers.clone(),
                setup.opts.clone(),
                store,
                (&progress, Some(&publish)),
            );
            match built {
                Ok(Searcher { dense: Some(dense), .. }) => shared.install_dense(job.generation, dense),
                Ok(_) => shared.fail_dense(Some(job.generation), "no dense index was built".into()),
                Err(Error::Cancelled) => {}
                Err(e) => shared.fail_dense(Some(job.generation), format!("ranking in the store: {e}")),
            }
            continue;
        }
        // Query-first: a `locate` meanwhile ranks over a partial index, its own chunks first.
        let (handle, requests) = QueryFirst::channel();
        let publish = |partial: Searcher| match partial.dense {
            Some(dense) => shared.install_partial(job.generation, dense),
            None => true,
        };
        let opts = setup.opts.clone();
        match build_serving(
            &job.searcher,
            towers.clone(),
            opts,
            store,
            &requests,
            handle,
            &progress,
            &publish,
        ) {
            Ok(Searcher { dense: Some(dense), .. }) => shared.install_dense(job.generation, dense),
            Ok(_) => shared.fail_dense(Some(job.generation), "no dense index was built".into()),
            // A newer index superseded this one; its job is queued.
            Err(Error::Cancelled) => {}
            Err(e) => shared.fail_dense(Some(job.generation), format!("building the dense index: {e}")),
        }
    }
}

/// Embedding progress into the shared status; cancelled once a newer index exists.
struct BuildProgress<'a> {
    shared: &'a Shared,
    generation: u64,
}

impl Progress for BuildProgress<'_> {
    fn report(&self, phase: Phase, done: usize, total: usize) {
        if phase == Phase::Embed {
            self.shared.report_embedding(done, total);
        }
    }

    fn cancelled(&self) -> bool {
        self.shared.latest() != self.generation
    }
}
