//! Background threads: one search worker per results column and one highlight worker. Each
//! drains its queue and serves only the newest request (older ones are stale by then), and
//! reports back as an [`Action`] on the runtime's channel.

use crate::index::Hit;
use crate::rerank::reorders;
use crate::tui::action::{Action, SearchOutcome, SearchRequest, SearchStage};
use crate::tui::backend::Backend;
use crate::tui::highlight::{highlight, HighlightedFile};
use crate::tui::terminal::catch;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::thread;
use std::time::Instant;

pub struct FileRequest {
    pub path: String,
    pub backend: Arc<dyn Backend>,
}

/// Senders to the workers; dropping them ends the threads.
pub struct Workers {
    search: Vec<Sender<SearchRequest>>,
    files: Sender<FileRequest>,
}

impl Workers {
    pub fn spawn(actions: Sender<Action>, syntax_theme: String) -> std::io::Result<Workers> {
        let mut search = Vec::new();
        for column in 0..2 {
            let (tx, rx) = mpsc::channel();
            let actions = actions.clone();
            thread::Builder::new()
                .name(format!("coret-tui-search-{column}"))
                .spawn(move || search_worker(rx, actions))?;
            search.push(tx);
        }
        let (files, rx) = mpsc::channel();
        thread::Builder::new()
            .name("coret-tui-highlight".into())
            .spawn(move || highlight_worker(rx, actions, syntax_theme))?;
        Ok(Workers { search, files })
    }

    pub fn search(&self, request: SearchRequest) {
        if let Some(tx) = self.search.get(request.column) {
            let _ = tx.send(request);
        }
    }

    pub fn load_file(&self, request: FileRequest) {
        let _ = self.files.send(request);
    }
}

/// The newest request in the queue, after blocking for the first; `skipped` sees the rest.
fn newest<T>(rx: &Receiver<T>, mut skipped: impl FnMut(T)) -> Option<T> {
    let mut request = rx.recv().ok()?;
    while let Ok(newer) = rx.try_recv() {
        skipped(std::mem::replace(&mut request, newer));
    }
    Some(request)
}

/// The newest request already waiting, if any: it makes the current search's next answer
/// moot, so it goes first.
fn waiting<T>(rx: &Receiver<T>) -> Option<T> {
    std::iter::from_fn(|| rx.try_recv().ok()).last()
}

fn search_worker(rx: Receiver<SearchRequest>, actions: Sender<Action>) {
    let mut next = None;
    while let Some(request) = next.take().or_else(|| newest(&rx, drop)) {
        let started = Instant::now();
        // On a cold repository the answer waits for the query's chunks to be embedded: show
        // the one over what is embedded already first.
        let now = catch(|| request.backend.search_now(&request.query, request.retriever, request.k));
        if let Ok(Ok(Some(hits))) = now {
            if !report(&actions, &request, Ok(hits), started, SearchStage::RefineFollows) {
                return;
            }
            if let Some(newer) = waiting(&rx) {
                next = Some(newer);
                continue;
            }
        }
        let hits = match catch(|| request.backend.search(&request.query, request.retriever, request.k)) {
            Ok(Ok(hits)) => Ok(hits),
            Ok(Err(e)) => Err(format!("{} search failed: {e:#}", request.retriever)),
            Err(panic) => Err(format!("{} search panicked: {panic}", request.retriever)),
        };
        let reranks = reorders(request.retriever) && request.backend.rerank_depth().is_some();
        let stage = if reranks && hits.is_ok() { SearchStage::RerankFollows } else { SearchStage::Final };
        let first = hits.as_ref().ok().filter(|_| stage == SearchStage::RerankFollows).cloned();
        if !report(&actions, &request, hits, started, stage) {
            return;
        }
        let Some(hybrid) = first else { continue };
        if let Some(newer) = waiting(&rx) {
            next = Some(newer);
            continue;
        }
        let started = Instant::now();
        let reranked = match catch(|| request.backend.rerank(&request.query, &hybrid)) {
            Ok(Ok(hits)) => Ok(hits.unwrap_or(hybrid)),
            Ok(Err(e)) => Err(format!("reranking failed: {e:#}")),
            Err(panic) => Err(format!("reranking panicked: {panic}")),
        };
        if !report(&actions, &request, reranked, started, SearchStage::Reranked) {
            return;
        }
    }
}

/// Sends one answer to `request` (its hits, the time since `started`); false once the runtime
/// is gone.
fn report(
    actions: &Sender<Action>,
    request: &SearchRequest,
    hits: Result<Vec<Hit>, String>,
    started: Instant,
    stage: SearchStage,
) -> bool {
    let outcome = SearchOutcome {
        column: request.column,
        generation: request.generation,
        hits,
        elapsed: started.elapsed(),
        stage,
    };
    actions.send(Action::SearchDone(outcome)).is_ok()
}

fn highlight_worker(rx: Receiver<FileRequest>, actions: Sender<Action>, syntax_theme: String) {
    loop {
        let mut skipped = Vec::new();
        let Some(request) = newest(&rx, |r: FileRequest| skipped.push(r.path)) else {
            return;
        };
        for path in skipped {
            let _ = actions.send(Action::FileSkipped { path });
        }
        let file = catch(|| {
            let source = request.backend.file_source(&request.path)?;
            Some(Arc::new(highlight(&request.path, &source, &syntax_theme)))
        })
        .unwrap_or(None::<Arc<HighlightedFile>>);
        if actions.send(Action::FileLoaded { path: request.path, file }).is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::Retriever;
    use crate::tui::demo::DemoBackend;
    use std::time::Duration;

    #[test]
    fn workers_answer_searches_and_file_loads() {
        let (tx, rx) = mpsc::channel();
        let workers = Workers::spawn(tx, "base16-ocean.dark".into()).unwrap();
        let backend: Arc<dyn Backend> = Arc::new(DemoBackend::sample());
        let query = "coupon discount".to_string();
        workers.search(SearchRequest {
            column: 1,
            generation: 7,
            query,
            retriever: Retriever::Dense,
            k: 5,
            backend: backend.clone(),
        });
        workers.load_file(FileRequest { path: "shop/cart.py".into(), backend: backend.clone() });
        workers.load_file(FileRequest { path: "nope.py".into(), backend });
        let (mut searched, mut loaded, mut missing) = (false, false, false);
        for _ in 0..3 {
            match rx.recv_timeout(Duration::from_secs(20)).unwrap() {
                Action::SearchDone(o) => {
                    searched = o.column == 1 && o.generation == 7 && o.hits.is_ok_and(|h| !h.is_empty())
                }
                Action::FileLoaded { path, file } if path == "shop/cart.py" => {
                    loaded = file.is_some_and(|f| f.len() > 10)
                }
                Action::FileLoaded { path, file } if path == "nope.py" => missing = file.is_none(),
                Action::FileSkipped { path } => {
                    // Coalesced behind the later request: fine, but then that one must arrive.
                    assert_eq!(path, "shop/cart.py");
                    loaded = true;
                }
                _ => panic!("unexpected action"),
            }
        }
        assert!(searched && loaded && missing);
    }

    /// The demo backend answering a cold search twice: at once in reverse, then properly.
    struct Cold(DemoBackend);

    impl Backend for Cold {
        crate::tui::demo::forward_to_demo!();
        fn search_now(
            &self,
            query: &str,
            retriever: Retriever,
            k: usize,
        ) -> anyhow::Result<Option<Vec<crate::index::Hit>>> {
            Ok(Some(self.0.search(query, retriever, k)?.into_iter().rev().collect()))
        }
        fn has_dense(&self) -> bool {
            true
        }
    }

    #[test]
    fn a_cold_search_answers_first_at_once_then_over_its_own_chunks() {
        let (tx, rx) = mpsc::channel();
        let workers = Workers::spawn(tx, "base16-ocean.dark".into()).unwrap();
        let demo = DemoBackend::sample();
        let query = "coupon discount".to_string();
        let full = demo.search(&query, Retriever::Dense, 5).unwrap();
        let backend: Arc<dyn Backend> = Arc::new(Cold(demo));
        workers.search(SearchRequest {
            column: 1,
            generation: 3,
            query,
            retriever: Retriever::Dense,
            k: 5,
            backend,
        });
        let mut stages = Vec::new();
        for _ in 0..2 {
            match rx.recv_timeout(Duration::from_secs(20)).unwrap() {
                Action::SearchDone(o) => stages.push((o.stage, o.hits.unwrap())),
                _ => panic!("unexpected action"),
            }
        }
        assert_eq!(stages[0].0, SearchStage::RefineFollows);
        assert_eq!(stages[0].1, full.iter().rev().copied().collect::<Vec<_>>());
        assert_eq!(stages[1].0, SearchStage::Final);
        assert_eq!(stages[1].1, full);
    }
}
