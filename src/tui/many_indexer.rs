//! The TUI's indexer over several checkouts: one [`EngineIndexer`] per checkout, each on its
//! own thread with its own reporter (its index, cache entry, dense thread and watch), and this
//! loop between them and the TUI. It sends the TUI one [`ManyBackend`] over all of them: BM25
//! once every checkout has its index, the dense side once every checkout has its dense index
//! (a hybrid over some checkouts' dense lists would weigh them unlike the rest), and a
//! `Reindexed` naming the checkout whenever one changes. The TUI's check requests reach every
//! checkout; quitting cancels them all.

use super::backend::{Backend, IndexEvent, IndexReporter};
use super::engine_indexer::{EngineIndexer, TowerLoader};
use super::many_backend::{ManyBackend, Part};
use super::terminal::catch;
use crate::progress::{Phase, Progress};
use crate::rank::searcher::SearchModels;
use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One checkout of several: the name its rows carry, and its indexer.
pub struct NamedIndexer {
    pub name: String,
    pub indexer: EngineIndexer,
}

/// Several checkouts indexed for one TUI.
pub struct ManyIndexer {
    pub checkouts: Vec<NamedIndexer>,
}

/// What the loop knows of one checkout.
struct Slot {
    name: String,
    root: PathBuf,
    backend: Option<Arc<dyn Backend>>,
    /// Its last progress report, summed with the others' of the same phase for the gauge.
    progress: Option<(Phase, usize, usize)>,
}

impl ManyIndexer {
    /// Runs until the TUI quits (the reporter is cancelled) and every checkout's indexer ended.
    pub fn run(self, reporter: IndexReporter) {
        let (merged_tx, merged) = mpsc::channel::<(usize, IndexEvent)>();
        let mut slots = Vec::new();
        let (mut checks, mut cancels) = (Vec::new(), Vec::new());
        for (i, NamedIndexer { name, indexer }) in self.checkouts.into_iter().enumerate() {
            let (sub, events) = IndexReporter::channel();
            checks.push(sub.check_handle());
            cancels.push(sub.cancel_handle());
            slots.push(Slot {
                name: name.clone(),
                root: indexer.repo.clone(),
                backend: None,
                progress: None,
            });
            let last_word = sub.clone();
            let started = std::thread::Builder::new().name(format!("coret-tui-index-{i}")).spawn(move || {
                if let Err(panic) = catch(move || indexer.run(sub)) {
                    last_word.failed(format!("the indexer panicked: {panic}"));
                }
            });
            if let Err(e) = started {
                return reporter.failed(format!("{name}: cannot start its indexer: {e}"));
            }
            let tx = merged_tx.clone();
            // Ends when the checkout's indexer ends (its reporter's last clone is dropped).
            let _ = std::thread::Builder::new().name(format!("coret-tui-events-{i}")).spawn(move || {
                for event in events {
                    if tx.send((i, event)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(merged_tx);
        // The TUI's check requests go to every checkout; its quit cancels them all.
        let watcher = reporter.clone();
        let _ = std::thread::Builder::new().name("coret-tui-checks".into()).spawn(move || {
            while watcher.wait_for_check(Duration::from_secs(3600)) {
                checks.iter().for_each(|c| c.request());
            }
            cancels.iter().for_each(|c| c.cancel());
        });
        let mut bm25_sent = false;
        for (i, event) in merged {
            if reporter.cancelled() {
                return;
            }
            let name = slots[i].name.clone();
            match event {
                IndexEvent::Progress { phase, done, total } => {
                    slots[i].progress = Some((phase, done, total));
                    let (done, total) = slots
                        .iter()
                        .filter_map(|s| s.progress.filter(|p| p.0 == phase))
                        .fold((0, 0), |(d, t), (_, sd, st)| (d + sd, t + st));
                    reporter.report(phase, done, total);
                }
                IndexEvent::EmbedWork(work) => reporter.report_embed_work(work),
                IndexEvent::FirstEmbed { done, total } => reporter.report_first(done, total),
                IndexEvent::Bm25Ready(backend) => {
                    slots[i].backend = Some(backend);
                    if !bm25_sent {
                        if let Some(all) = combined(&slots) {
                            bm25_sent = true;
                            reporter.bm25_ready(Arc::new(all));
                        }
                    }
                }
                IndexEvent::DenseReady(backend) => {
                    slots[i].backend = Some(backend);
                    match combined(&slots) {
                        Some(all) if bm25_sent && all.has_dense() => reporter.dense_ready(Arc::new(all)),
                        _ => {}
                    }
                }
                IndexEvent::Reindexed { backend, note } => {
                    slots[i].backend = Some(backend);
                    if let Some(all) = combined(&slots).filter(|_| bm25_sent) {
                        reporter.reindexed(Arc::new(all), format!("{name}: {note}"));
                    }
                }
                IndexEvent::Failed(why) => reporter.failed(format!("{name}: {why}")),
                IndexEvent::Info(note) => reporter.info(format!("{name}: {note}")),
            }
        }
    }
}

/// Every checkout's backend as one, once each has one.
fn combined(slots: &[Slot]) -> Option<ManyBackend> {
    let parts = slots
        .iter()
        .map(|s| Some(Part { name: s.name.clone(), root: s.root.clone(), backend: s.backend.clone()? }))
        .collect::<Option<Vec<Part>>>()?;
    Some(ManyBackend::new(parts))
}

/// One loader for each of `n` checkouts, sharing `load`: the first dense thread to ask loads
/// the models (the others wait for it) and every one gets the same towers.
pub fn shared_loader(load: TowerLoader, n: usize) -> Vec<TowerLoader> {
    type Loaded = (Option<TowerLoader>, Option<Result<SearchModels, String>>);
    let shared: Arc<Mutex<Loaded>> = Arc::new(Mutex::new((Some(load), None)));
    (0..n)
        .map(|_| {
            let shared = shared.clone();
            let each: TowerLoader = Box::new(move |reporter: &IndexReporter| {
                let mut s = shared.lock().unwrap_or_else(|p| p.into_inner());
                if s.1.is_none() {
                    let load = s.0.take();
                    s.1 = Some(
                        load.map_or_else(|| Err("the models' loader ran before".into()), |l| l(reporter)),
                    );
                }
                s.1.clone().unwrap_or_else(|| Err("the models did not load".into()))
            });
            each
        })
        .collect()
}
