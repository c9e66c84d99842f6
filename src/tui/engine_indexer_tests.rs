//! The indexer on a real repository and a tiny model: an edit is seen on the next check, asked
//! for or periodic.

use super::*;
use crate::index::Retriever;
use crate::model::{Encoder, EncoderOptions};
use crate::tui::backend::{Backend, IndexEvent};
use std::path::Path;
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(120);

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Events until one `pick` accepts (what it returns), with what came before it.
fn wait_for<T>(
    rx: &Receiver<IndexEvent>,
    what: &str,
    pick: impl Fn(IndexEvent) -> Result<T, IndexEvent>,
) -> (T, Vec<IndexEvent>) {
    let deadline = Instant::now() + WAIT;
    let mut before = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let event = rx.recv_timeout(left).unwrap_or_else(|e| panic!("no {what}: {e}"));
        if let IndexEvent::Failed(why) = &event {
            panic!("indexing failed while waiting for {what}: {why}");
        }
        match pick(event) {
            Ok(found) => return (found, before),
            Err(other) => before.push(other),
        }
    }
}

/// The complete dense index (the partial one sent first, query-first, is passed over).
fn dense_ready(event: IndexEvent) -> Result<Arc<dyn Backend>, IndexEvent> {
    match event {
        IndexEvent::DenseReady(b) if b.dense_partial().is_none() => Ok(b),
        other => Err(other),
    }
}

fn top_name(backend: &dyn Backend, query: &str, retriever: Retriever) -> Option<String> {
    let hits = backend.search(query, retriever, 5).unwrap();
    hits.first().and_then(|h| backend.chunk(h.chunk)).map(|c| c.name.clone())
}

/// The indexer of `repo` with its cache in `cache` and the tiny model in `model`.
fn indexer(
    repo: &Path,
    cache: std::path::PathBuf,
    model: std::path::PathBuf,
    dense: DenseOptions,
) -> EngineIndexer {
    EngineIndexer {
        repo: repo.to_path_buf(),
        index: IndexOptions { cache_dir: Some(cache), ..IndexOptions::default() },
        fusion: FusionParams::default(),
        dense,
        towers: Box::new(move |_| {
            let encoder = Encoder::load(&model, &candle_core::Device::Cpu, EncoderOptions::default());
            let towers = crate::model::Towers::tied(Arc::new(encoder.map_err(|e| e.to_string())?));
            Ok(crate::rank::searcher::SearchModels { towers, reranker: None })
        }),
        static_table: None,
        static_only: false,
    }
}

#[test]
fn an_edit_is_re_indexed_unasked_and_only_its_chunk_is_embedded() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, cache, model) = (tmp.path().join("repo"), tmp.path().join("cache"), tmp.path().join("model"));
    write(&repo, "shop/cart.py", "def total_price(items):\n    return sum(items)\n");
    write(&repo, "shop/tax.py", "def with_vat(amount):\n    return amount * 1.2\n");
    crate::testkit::write_tiny_bert(&model, &["def", "return", "palette", "colours"]);
    let (reporter, rx) = IndexReporter::channel();
    let cancel = reporter.cancel_handle();
    let indexer = indexer(&repo, cache, model, DenseOptions::default());
    let thread = std::thread::spawn(move || indexer.run(reporter));

    let (first, before) = wait_for(&rx, "the first dense index", dense_ready);
    let chunks = first.chunk_count();
    // Query-first: a cold repository's dense column answers before its embedding is done.
    let partial = before.iter().find_map(|e| match e {
        IndexEvent::DenseReady(b) => b.dense_partial(),
        _ => None,
    });
    assert_eq!(partial, Some((0, chunks)), "a partial index (nothing cached yet) came first");
    // Nothing changed: the periodic checks meanwhile send nothing (the next event is the edit's).
    std::thread::sleep(Duration::from_millis(1500));
    let mut text = std::fs::read_to_string(repo.join("shop/cart.py")).unwrap();
    text.push_str("\n\ndef frobnicate_widget_colours(palette):\n    return palette\n");
    std::fs::write(repo.join("shop/cart.py"), text).unwrap();
    // No request after the edit (made as if in another window): the periodic check sees it.

    let ((backend, note), before) = wait_for(&rx, "the re-index", |e| match e {
        IndexEvent::Reindexed { backend, note } => Ok((backend, note)),
        other => Err(other),
    });
    assert!(before.iter().all(|e| matches!(e, IndexEvent::Info(_))), "only notes before the re-index");
    assert_eq!(note, "re-indexed: 1 file changed, +1 chunk");
    assert_eq!(backend.chunk_count(), chunks + 1);
    assert!(!backend.has_dense(), "the dense index follows");
    let query = "frobnicate the widget colours";
    assert_eq!(
        top_name(backend.as_ref(), query, Retriever::Bm25).as_deref(),
        Some("frobnicate_widget_colours")
    );

    let (dense, progress) = wait_for(&rx, "the re-index's dense index", dense_ready);
    assert_eq!(dense.chunk_count(), chunks + 1);
    assert!(dense.has_dense());
    let embedded = progress.iter().rev().find_map(|e| match e {
        IndexEvent::Progress { phase: Phase::Embed, total, .. } => Some(*total),
        _ => None,
    });
    assert_eq!(embedded, Some(1), "only the new function is embedded");
    assert!(dense.search(query, Retriever::Hybrid, 5).is_ok());

    cancel.cancel();
    let deadline = Instant::now() + WAIT;
    while !thread.is_finished() {
        assert!(Instant::now() < deadline, "the indexer did not stop on cancel");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_note_counts_changed_added_and_removed_files() {
    let open = |files: &[(&str, &str)]| {
        let texts: Vec<(String, String)> =
            files.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect();
        RepoIndex::from_texts("r".into(), &texts, &mut Default::default()).unwrap()
    };
    let old = open(&[("a.py", "def f():\n    pass\n"), ("b.py", "def g():\n    pass\n")]);
    let new =
        open(&[("a.py", "def f():\n    return 1\n"), ("c.py", "def h():\n    pass\n\ndef i():\n    pass\n")]);
    assert_eq!(
        describe_change(&old, &new),
        "re-indexed: 1 file changed, 1 file added, 1 file removed, +1 chunk"
    );
    assert_eq!(describe_change(&new, &new), "re-indexed: same chunk count");
}

#[test]
fn a_store_that_is_down_is_one_status_line_and_the_dense_column_still_comes() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, cache, model) = (tmp.path().join("repo"), tmp.path().join("cache"), tmp.path().join("model"));
    write(&repo, "shop/cart.py", "def total_price(items):\n    return sum(items)\n");
    crate::testkit::write_tiny_bert(&model, &["def", "return", "total", "price"]);
    // A port nothing listens on: refused at once.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let store = crate::index::shared::SharedVectors::connect(
        &format!("postgres://w:pw@127.0.0.1:{port}/coret"),
        None,
    )
    .unwrap();
    let (reporter, rx) = IndexReporter::channel();
    let cancel = reporter.cancel_handle();
    let shared = Some(crate::index::shared::SharedHandle(store));
    let indexer = indexer(&repo, cache, model, DenseOptions { shared, ..DenseOptions::default() });
    let thread = std::thread::spawn(move || indexer.run(reporter));
    let (backend, _) = wait_for(&rx, "the dense index", dense_ready);
    assert!(top_name(backend.as_ref(), "total price", Retriever::Dense).is_some());
    let (line, _) = wait_for(&rx, "the store's status line", |e| match e {
        IndexEvent::Info(line) if line.starts_with("store ") => Ok(line),
        other => Err(other),
    });
    assert!(line.contains("not answering") && !line.contains(":pw@"), "{line}");
    cancel.cancel();
    thread.join().unwrap();
}
