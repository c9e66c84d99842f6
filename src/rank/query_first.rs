//! Query-first dense indexing. A repository's chunks are embedded in the background, a batch
//! at a time; a search that arrives before they are all done asks for the chunks it needs
//! (see [`Searcher::query_candidates`]), which jump the queue, and ranks over what is embedded
//! by then. A cold repository answers in seconds instead of after its whole embedding.

use crate::engine::check_cancel;
use crate::error::{Error, Result};
use crate::index::dense::VectorStore;
use crate::model::Towers;
use crate::progress::{EmbedWork, Phase, Progress};
use crate::rank::dense_retriever::{DenseOptions, DensePlan, DenseSearcher, FillFirst};
use crate::rank::searcher::Searcher;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Inputs embedded between two looks at the request queue: a search waits at most about one
/// batch (≈ 2 s on two cores) before its own chunks start.
const BATCH: usize = 64;
/// Background batches between two published partial indexes (each copies every vector).
const PUBLISH_EVERY: usize = 8;

/// A search's request: embed these chunks first, then answer with the index as it stands.
pub struct Request {
    ids: Vec<u32>,
    reply: Sender<Arc<DenseSearcher>>,
}

/// The handle a partial dense index carries: searches ask through it for their chunks first.
pub struct QueryFirst {
    requests: Mutex<Sender<Request>>,
}

impl QueryFirst {
    /// A handle and the queue the builder serves ([`build_serving`]).
    pub fn channel() -> (Arc<QueryFirst>, Receiver<Request>) {
        let (tx, rx) = mpsc::channel();
        (Arc::new(QueryFirst { requests: Mutex::new(tx) }), rx)
    }
}

impl FillFirst for QueryFirst {
    /// Asks for `ids` to be embedded first and waits, at most `timeout`, for the dense index
    /// over them and everything embedded before. `None` when the builder is gone (finished or
    /// failed) or too slow: the caller ranks with the index it has.
    fn first(&self, ids: Vec<u32>, timeout: Duration) -> Option<Arc<DenseSearcher>> {
        let (reply, answer) = mpsc::channel();
        let sent = self.requests.lock().unwrap_or_else(|p| p.into_inner()).send(Request { ids, reply });
        sent.ok()?;
        answer.recv_timeout(timeout).ok()
    }
}

/// The newest job in a dense thread's queue, after blocking for the first: older ones are
/// stale (the index moved on). `None` once the queue's senders are gone.
pub fn newest<T>(jobs: &Receiver<T>) -> Option<T> {
    let mut job = jobs.recv().ok()?;
    while let Ok(newer) = jobs.try_recv() {
        job = newer;
    }
    Some(job)
}

/// Builds `searcher`'s full dense index into `store`, serving query-first requests between
/// batches. `publish` gets a searcher over each partial index (the first at once, over the
/// vectors already stored; its dense side answers queries through `handle`) and returns false
/// to stop (the client went away or the index moved on: then `Error::Cancelled`, and what was
/// embedded stays in the store). Returns the searcher over the complete index.
#[allow(clippy::too_many_arguments)]
pub fn build_serving(
    searcher: &Searcher,
    towers: Towers,
    opts: DenseOptions,
    store: &mut VectorStore,
    requests: &Receiver<Request>,
    handle: Arc<QueryFirst>,
    progress: &dyn Progress,
    publish: &dyn Fn(Searcher) -> bool,
) -> Result<Searcher> {
    let repo = &searcher.repo;
    let source = (&repo.chunks[..], &repo.graph, &opts);
    let plan = DensePlan::new(&towers.chunk, &repo.chunks, &repo.graph, &opts);
    // Published partial indexes carry the handle (a search through them asks for its chunks);
    // the one a request gets back does not (it already has them).
    let answer =
        |store: &VectorStore| plan.searcher(towers.clone(), opts.clone(), store, &plan.available(store));
    let partial = |store: &VectorStore| -> Result<Arc<DenseSearcher>> {
        Ok(Arc::new(answer(store)?.with_query_first(handle.clone())))
    };
    let with = |dense: Arc<DenseSearcher>| Searcher { dense: Some(dense), ..searcher.clone_sides() };
    let todo = plan.missing(store, |_| true);
    let total = todo.len();
    let mut done = 0;
    if todo.is_empty() {
        return finish(&plan, towers, opts, store, searcher, done);
    }
    if !publish(with(partial(store)?)) {
        return Err(Error::Cancelled);
    }
    let mut since_publish = 0;
    let mut next = 0;
    while next < todo.len() {
        check_cancel(progress)?;
        let mut served = false;
        while let Ok(req) = requests.try_recv() {
            let need = plan.missing_among(store, req.ids.iter().filter_map(|&id| plan.position(id)));
            progress.report_first(0, need.len());
            let step = Offset { inner: progress, done, total, first: Some(need.len()) };
            done += plan.embed(&towers.chunk, source, store, &need, &step, BATCH)?;
            progress.report_first(need.len(), need.len());
            let _ = req.reply.send(Arc::new(answer(store)?));
            served = true;
        }
        let batch = &todo[next..todo.len().min(next + BATCH)];
        next += batch.len();
        let need = plan.missing_among(store, batch.iter().copied());
        let step = Offset { inner: progress, done, total, first: None };
        done += plan.embed(&towers.chunk, source, store, &need, &step, BATCH)?;
        since_publish += 1;
        if served || since_publish >= PUBLISH_EVERY {
            since_publish = 0;
            if !publish(with(partial(store)?)) {
                return Err(Error::Cancelled);
            }
        }
    }
    finish(&plan, towers, opts, store, searcher, done)
}

/// The searcher over the complete index (`embedded` of its chunks embedded by this build).
fn finish(
    plan: &DensePlan,
    towers: Towers,
    opts: DenseOptions,
    store: &VectorStore,
    searcher: &Searcher,
    embedded: usize,
) -> Result<Searcher> {
    let mut dense = plan.searcher(towers, opts, store, &plan.available(store))?;
    dense.embedded = embedded;
    Ok(Searcher { dense: Some(Arc::new(dense)), ..searcher.clone_sides() })
}

/// One step's `Phase::Embed` reports as part of the whole build's; its token counts cover only
/// the step, so they are not passed on (the client's ETA follows the chunk rate, which is even
/// here: batches are in path order, not sorted by length).
struct Offset<'a> {
    inner: &'a dyn Progress,
    done: usize,
    total: usize,
    /// A search's own chunks (this many): the step reports them as `report_first` too.
    first: Option<usize>,
}

impl Progress for Offset<'_> {
    fn report(&self, phase: Phase, done: usize, _total: usize) {
        if phase == Phase::Embed {
            self.inner.report(phase, (self.done + done).min(self.total), self.total);
            if let Some(n) = self.first {
                self.inner.report_first(done.min(n), n);
            }
        }
    }
    fn report_embed_work(&self, _work: EmbedWork) {}
    fn cancelled(&self) -> bool {
        self.inner.cancelled()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{RepoIndex, SyntaxCache};
    use crate::index::Retriever;
    use crate::model::{Encoder, EncoderOptions};
    use crate::progress::NoProgress;

    /// `files` files of ten functions each; `pkg/cart.py` holds the two a query is after.
    fn repo(files: usize) -> Searcher {
        let mut texts: Vec<(String, String)> = (0..files)
            .map(|f| {
                let body =
                    (0..10).map(|i| format!("def helper_{f}_{i}(x):\n    return x + {i}\n\n\n")).collect();
                (format!("pkg/m{f:03}.py"), body)
            })
            .collect();
        let cart = "def total_price(cart):\n    return sum(cart)\n\n\ndef apply_discount(cart):\n    return total_price(cart)\n";
        texts.push(("pkg/zz_cart.py".into(), cart.into()));
        Searcher::bm25_only(Arc::new(
            RepoIndex::from_texts("r".into(), &texts, &mut SyntaxCache::new()).unwrap(),
        ))
    }

    /// Holds the build before its first batch until opened: the test's search must reach it
    /// while the build is partial, however fast the tiny model embeds (it raced before).
    #[derive(Default)]
    struct Gate {
        open: Mutex<bool>,
        opened: std::sync::Condvar,
    }

    impl Gate {
        fn open(&self) {
            *self.open.lock().unwrap() = true;
            self.opened.notify_all();
        }
    }

    impl Progress for Gate {
        fn report(&self, _: crate::progress::Phase, _: usize, _: usize) {}
        fn cancelled(&self) -> bool {
            let open = self.open.lock().unwrap();
            drop(self.opened.wait_while(open, |open| !*open).unwrap());
            false
        }
    }

    fn towers(dir: &std::path::Path) -> Towers {
        crate::testkit::write_tiny_bert(
            dir,
            &["total", "price", "cart", "discount", "helper", "return", "def"],
        );
        let opts = EncoderOptions { max_len: 64, ..EncoderOptions::default() };
        Towers::tied(Arc::new(Encoder::load(dir, &candle_core::Device::Cpu, opts).unwrap()))
    }

    #[test]
    fn the_candidates_are_the_best_of_what_the_dense_index_holds_tests_left_out_first() {
        // Twenty test files match the query better than the code does: the top 5 must still be
        // five code chunks, not the tests' (which the dense index leaves out).
        let mut texts: Vec<(String, String)> = (0..20)
            .map(|i| {
                (
                    format!("tests/test_{i:02}.py"),
                    format!("def test_total_price_{i}():\n    total_price(total_price)\n"),
                )
            })
            .collect();
        for i in 0..8 {
            texts.push((format!("pkg/m{i}.py"), format!("def price_{i}(cart):\n    return total(cart)\n")));
        }
        let searcher = Searcher::bm25_only(Arc::new(
            RepoIndex::from_texts("r".into(), &texts, &mut SyntaxCache::new()).unwrap(),
        ));
        let chunks = &searcher.repo.chunks;
        let candidates = searcher.query_candidates("total price", 5, true).unwrap();
        assert!(candidates.iter().all(|&c| chunks[c as usize].path.starts_with("pkg/")), "no test chunk");
        assert_eq!(candidates.len(), 5, "five code chunks, counted after the test filter");
        let with_tests = searcher.query_candidates("total price", 5, false).unwrap();
        assert!(with_tests.iter().any(|&c| chunks[c as usize].path.starts_with("tests/")));
    }

    #[test]
    fn a_search_during_the_build_gets_its_chunks_first_and_the_build_then_completes() {
        let dir = tempfile::tempdir().unwrap();
        let searcher = repo(60);
        let towers = towers(dir.path());
        let (handle, requests) = QueryFirst::channel();
        let (published_tx, published) = mpsc::channel::<Searcher>();
        let published_tx = Mutex::new(published_tx);
        let query = "total price with a discount";
        let candidates = searcher.query_candidates(query, 50, true).unwrap();
        let cart: Vec<u32> = (0..searcher.repo.chunks.len() as u32)
            .filter(|&i| searcher.repo.chunks[i as usize].path == "pkg/zz_cart.py")
            .collect();
        assert!(cart.iter().all(|c| candidates.contains(c)), "the query's own chunks are candidates");

        let gate = Gate::default();
        let complete = std::thread::scope(|scope| {
            let gate = &gate;
            let build = scope.spawn(move || {
                let mut store = VectorStore::in_memory(towers.chunk.dim());
                let publish = |s: Searcher| published_tx.lock().unwrap().send(s).is_ok();
                let opts = DenseOptions::default();
                build_serving(&searcher, towers.clone(), opts, &mut store, &requests, handle, gate, &publish)
            });
            // The first partial index comes at once, before any embedding (nothing was cached).
            let first = published.recv().unwrap();
            let dense = first.dense.clone().unwrap();
            assert!(!dense.is_complete());
            // The first of two answers comes at once, over what is embedded (nothing yet): the
            // hybrid is BM25's then; BM25 alone never waits, so it has no first answer.
            let now = first.search_now(query, Retriever::Hybrid, 10).unwrap().expect("a first answer");
            assert!(!now.is_empty());
            assert!(first.search_now(query, Retriever::Bm25, 10).unwrap().is_none());
            assert_eq!(first.first_answer_tier(), Some("transformer"));
            // With the static tier beside the partial index (issue 80), the first answer is the
            // static tier's over every chunk, as a static searcher ranks.
            let table = Arc::new(crate::model::static_tier::StaticTable::builtin().unwrap());
            let beside = first.with_static_side(table.clone(), DenseOptions::default()).unwrap();
            assert_eq!(beside.first_answer_tier(), Some("static"));
            let static_only = first.clone_sides().with_static(table, DenseOptions::default()).unwrap();
            assert_eq!(
                beside.search_now(query, Retriever::Hybrid, 10).unwrap().unwrap(),
                static_only.search(query, Retriever::Hybrid, 10).unwrap()
            );
            // A search through it asks for its chunks and ranks over them: the cart is embedded
            // first although its file is last in the background's order.
            // The gate opens once the search has asked (it asks at once, then waits).
            scope.spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(200));
                gate.open();
            });
            let answered = first.dense_for(query).unwrap();
            let (ranked, of) = answered.coverage();
            assert!(ranked < of, "answered before the whole index: {ranked} of {of}");
            assert!(
                cart.iter().all(|&c| answered.vector(c as usize).is_some()),
                "the cart was embedded first"
            );
            let ranked_first = Searcher { dense: Some(answered), ..first.clone_sides() };
            let hits = ranked_first.search(query, Retriever::Dense, 700).unwrap();
            assert_eq!(hits.len(), ranked, "dense ranks over what is embedded");
            build.join().unwrap().unwrap()
        });
        assert!(
            complete.search_now(query, Retriever::Hybrid, 10).unwrap().is_none(),
            "a complete index answers once"
        );
        let dense = complete.dense.unwrap();
        assert!(dense.is_complete() && dense.query_first().is_none());
        assert_eq!(dense.coverage(), (602, 602), "600 helpers and the cart's two functions");
    }

    /// Stops the build after `after` embedding reports, as Ctrl-C or quitting does.
    struct CancelAfter(std::sync::atomic::AtomicUsize, usize);

    impl Progress for CancelAfter {
        fn report(&self, _: Phase, _: usize, _: usize) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        fn cancelled(&self) -> bool {
            self.0.load(std::sync::atomic::Ordering::Relaxed) >= self.1
        }
    }

    #[test]
    fn an_interrupted_build_keeps_what_it_embedded_and_the_next_one_goes_on_from_there() {
        let dir = tempfile::tempdir().unwrap();
        let searcher = repo(30);
        let towers = towers(dir.path());
        let mut store = VectorStore::in_memory(towers.chunk.dim());
        let (handle, requests) = QueryFirst::channel();
        let stop = CancelAfter(Default::default(), 6);
        let opts = DenseOptions::default();
        let publish = |_: Searcher| true;
        let built = build_serving(
            &searcher,
            towers.clone(),
            opts.clone(),
            &mut store,
            &requests,
            handle,
            &stop,
            &publish,
        );
        assert!(matches!(built, Err(Error::Cancelled)), "stopped");
        let kept = store.len();
        assert!(kept > 0 && kept < 302, "some batches were kept: {kept} of 302");

        let (handle, requests) = QueryFirst::channel();
        let done =
            build_serving(&searcher, towers, opts, &mut store, &requests, handle, &NoProgress, &publish)
                .unwrap();
        let dense = done.dense.unwrap();
        assert!(dense.is_complete());
        assert_eq!(dense.embedded, 302 - kept, "only what the first build had not embedded");
    }
}
