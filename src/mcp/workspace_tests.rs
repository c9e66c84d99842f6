use super::*;
use crate::engine::CacheState;
use crate::mcp::tools::{locate, LocateRequest, RetrieverName};
use crate::mcp::TowerLoader;
use crate::mcp::LOCATE_WAIT;
use crate::model::{Encoder, EncoderOptions, Towers};
use crate::rank::dense_retriever::DenseOptions;
use crate::rank::searcher::SearchModels;
use std::sync::Arc;
use std::time::Instant;

fn write(root: &Path, rel: &str, text: &str) {
    std::fs::create_dir_all(root.join(rel).parent().unwrap()).unwrap();
    std::fs::write(root.join(rel), text).unwrap();
}

/// A repository and a cache directory, both temporary.
fn repo() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let root = base.join("repo");
    write(&root, "pkg/alpha.py", "def alpha():\n    return beta()\n\n\ndef beta():\n    return 1\n");
    write(&root, "pkg/gamma.py", "class Gamma:\n    def run(self):\n        return 2\n");
    (dir, root, base.join("cache"))
}

fn workspace(root: &Path, cache: &Path, dense: Option<DenseSetup>) -> Workspace {
    let index = IndexOptions { cache_dir: Some(cache.to_path_buf()), ..IndexOptions::default() };
    let opts = WorkspaceOptions { index, fusion: FusionParams::default(), default_retriever: None };
    let first = RepoIndex::open(root, &opts.index, &NoProgress).unwrap();
    Workspace::new(first, opts, dense).unwrap()
}

fn tiny_towers(dir: PathBuf) -> DenseSetup {
    let load = Box::new(move || {
        crate::testkit::write_tiny_bert(&dir, &["alpha", "beta", "gamma", "delta", "run", "return", "def"]);
        let opts = EncoderOptions { max_len: 64, ..EncoderOptions::default() };
        let encoder = Encoder::load(&dir, &candle_core::Device::Cpu, opts).map_err(|e| e.to_string())?;
        Ok(SearchModels { towers: Towers::tied(Arc::new(encoder)), reranker: None })
    });
    DenseSetup { load, opts: DenseOptions::default(), static_table: None }
}

/// Polls the dense status until it settles (neither loading nor building).
fn settled(ws: &Workspace) -> DenseStatus {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let status = ws.current().1;
        if !matches!(status, DenseStatus::Loading | DenseStatus::Building { .. }) || Instant::now() > deadline
        {
            return status;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn ask(issue: &str) -> LocateRequest {
    LocateRequest { issue: issue.into(), top_k: None, retriever: None, include_tests: false }
}

#[test]
fn the_dense_index_builds_in_the_background_and_follows_edits() {
    let (dir, root, cache) = repo();
    let ws = workspace(&root, &cache, Some(tiny_towers(dir.path().join("model"))));
    assert_eq!(settled(&ws), DenseStatus::Ready);
    let (searcher, dense) = ws.refresh().unwrap();
    let answer = locate(&searcher, &dense, None, &ask("alpha calls beta")).unwrap();
    assert_eq!((answer.retriever.as_str(), answer.dense_ready), ("hybrid", true));
    assert_eq!(answer.retrievers_used, ["bm25", "dense"]);
    assert_eq!(answer.index.cache, "warm");

    write(&root, "pkg/delta.py", "def delta():\n    return alpha()\n");
    let (searcher, _) = ws.refresh().unwrap();
    assert_eq!(searcher.repo.stats.cache, CacheState::Updated);
    assert!(searcher.repo.chunks.iter().any(|c| c.name == "delta"), "the edit is in the index at once");
    assert_eq!(settled(&ws), DenseStatus::Ready);
    let (searcher, _) = ws.current();
    let dense = searcher.dense.as_ref().expect("rebuilt for the edited index");
    assert_eq!(dense.len(), searcher.repo.chunks.len());
    assert_eq!(dense.embedded, 1, "only the new chunk was embedded");
}

#[test]
fn a_model_that_does_not_load_leaves_bm25_answering_and_says_why() {
    let (_dir, root, cache) = repo();
    let load: TowerLoader = Box::new(|| Err("--model /nonexistent: no such file or directory".into()));
    let ws = workspace(
        &root,
        &cache,
        Some(DenseSetup { load, opts: DenseOptions::default(), static_table: None }),
    );
    let status = settled(&ws);
    assert_eq!(status, DenseStatus::Failed("--model /nonexistent: no such file or directory".into()));
    let (searcher, dense) = ws.refresh().unwrap();
    let hybrid =
        LocateRequest { retriever: Some(super::super::tools::RetrieverName::Hybrid), ..ask("alpha") };
    let answer = locate(&searcher, &dense, None, &hybrid).unwrap();
    assert_eq!(answer.retriever, "bm25");
    assert!(answer.dense_status.contains("/nonexistent"), "{}", answer.dense_status);
    assert!(answer.note.unwrap().contains("answered by bm25"));
}

#[test]
fn without_a_model_the_dense_index_is_off_and_each_call_sees_the_files_as_they_are() {
    let (_dir, root, cache) = repo();
    let ws = workspace(&root, &cache, None);
    assert_eq!(ws.current().1, DenseStatus::Off);
    let (first, _) = ws.refresh().unwrap();
    assert_eq!(first.repo.stats.cache, CacheState::Warm);
    let (again, _) = ws.refresh().unwrap();
    assert!(Arc::ptr_eq(&first, &again), "nothing on disk changed: the warm index stands");

    // An edit that keeps the size and the mtime (`touch -r`, `cp -p`) is still seen.
    let file = root.join("pkg/gamma.py");
    let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
    std::fs::write(&file, "class Gamma:\n    def zun(self):\n        return 2\n").unwrap();
    std::fs::File::options().write(true).open(&file).unwrap().set_modified(mtime).unwrap();
    let (edited, _) = ws.refresh().unwrap();
    assert!(edited.repo.chunks.iter().any(|c| c.name == "Gamma.zun"), "the same-size edit is seen");

    std::fs::remove_file(root.join("pkg/gamma.py")).unwrap();
    let (after, _) = ws.refresh().unwrap();
    assert!(after.repo.chunks.iter().all(|c| c.path != "pkg/gamma.py"), "a deleted file leaves the index");
    assert_eq!(after.repo.stats.cache, CacheState::Updated);
}

#[test]
fn the_first_locate_waits_for_a_model_that_is_loading_rather_than_answer_bm25_alone() {
    let (dir, root, cache) = repo();
    let model = dir.path().join("model");
    let towers = tiny_towers(model);
    // A model that takes a moment to load, as the real one does (~0.4 s, more when cold).
    let slow: TowerLoader = Box::new(move || {
        std::thread::sleep(Duration::from_millis(300));
        (towers.load)()
    });
    let ws = workspace(
        &root,
        &cache,
        Some(DenseSetup { load: slow, opts: DenseOptions::default(), static_table: None }),
    );
    assert_eq!(ws.current().1, DenseStatus::Loading);
    let answer = ws.locate(&ask("alpha calls beta"), LOCATE_WAIT).unwrap();
    assert_eq!((answer.retriever.as_str(), answer.dense_ready), ("hybrid", true), "{}", answer.dense_status);
}

/// Issue #53: a model that loads for longer than a call waits (a cold start) must not hold
/// the first `locate`: BM25 answers within the wait and the answer says why.
#[test]
fn a_model_slower_than_the_wait_leaves_bm25_answering_within_it_and_says_so() {
    let (_dir, root, cache) = repo();
    // It never loads: the thread outlives the test without touching its files.
    let slow: TowerLoader = Box::new(|| {
        std::thread::sleep(Duration::from_secs(4));
        Err("too slow".into())
    });
    let ws = workspace(
        &root,
        &cache,
        Some(DenseSetup { load: slow, opts: DenseOptions::default(), static_table: None }),
    );
    let wait = Duration::from_millis(300);
    let start = Instant::now();
    let answer = ws.locate(&ask("alpha calls beta"), wait).unwrap();
    let took = start.elapsed();
    assert!(took < Duration::from_secs(3), "answered within the wait, not after the model: {took:?}");
    assert_eq!((answer.retriever.as_str(), answer.dense_ready), ("bm25", false));
    assert_eq!(answer.retrievers_used, ["bm25"]);
    assert_eq!((answer.dense_status.as_str(), answer.dense_coverage), ("loading the model", None));
    let note = answer.note.as_deref().unwrap_or_default();
    assert_eq!(note, "answered by bm25 alone: the dense index is loading the model");
    assert!(!answer.files.is_empty());

    // bm25 asked for does not wait at all.
    let bm25 = LocateRequest { retriever: Some(RetrieverName::Bm25), ..ask("alpha calls beta") };
    let start = Instant::now();
    let answer = ws.locate(&bm25, Duration::from_secs(30)).unwrap();
    assert!(start.elapsed() < Duration::from_secs(3), "{:?}", start.elapsed());
    assert_eq!((answer.retriever.as_str(), answer.note.as_deref()), ("bm25", None));
}

#[test]
fn history_is_searchable_in_a_git_checkout_and_refused_with_a_reason_elsewhere() {
    let (_dir, root, cache) = repo();
    let ws = workspace(&root, &cache, None);
    assert!(ws.with_history(ws.current().0).is_none(), "no git repository: nothing to search");

    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"])
            .args(args)
            .current_dir(&root)
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "Gamma.run returns the wrong constant"]);
    let ws = workspace(&root, &cache, None);
    let searcher = ws.with_history(ws.current().0).expect("a checkout with commits");
    let req =
        LocateRequest { retriever: Some(RetrieverName::History), ..ask("gamma returns the wrong constant") };
    let answer = locate(&searcher, &ws.current().1, None, &req).unwrap();
    assert_eq!(answer.retriever, "history");
    assert!(!answer.files.is_empty(), "the commit's files rank");
}

#[test]
fn a_retriever_that_does_not_exist_is_named_with_the_valid_ones() {
    let err = serde_json::from_str::<LocateRequest>(r#"{"issue": "x", "retriever": "bm52"}"#).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("`bm52`") && msg.contains("bm25, dense, hybrid or history"), "{msg}");
    let ok: LocateRequest = serde_json::from_str(r#"{"issue": "x", "retriever": "History"}"#).unwrap();
    assert_eq!(ok.retriever, Some(RetrieverName::History));
}

#[test]
fn a_reranker_loaded_with_the_towers_reorders_the_hybrid_and_says_so() {
    let (dir, root, cache) = repo();
    let model_dir = dir.path().join("model");
    let towers = tiny_towers(model_dir.clone());
    let rerank_dir = dir.path().join("rr");
    let with_reranker: TowerLoader = Box::new(move || {
        let models = (towers.load)()?;
        // A reranker as `--train-reranker` saves one (untrained: every pair scores alike).
        let mut model = crate::train::TrainModel::load(&model_dir, &candle_core::Device::Cpu).unwrap();
        model.use_lora(4, 8.0).unwrap();
        let head = candle_core::Var::zeros(
            model.config.hidden_size,
            candle_core::DType::F32,
            &candle_core::Device::Cpu,
        )
        .unwrap();
        let spec = crate::rerank::RerankSpec { max_len: 48, query_len: 16, depth: 5 };
        std::fs::create_dir_all(&rerank_dir).unwrap();
        let id = crate::model::model_id_of(&model_dir).unwrap();
        crate::train::rerank::save_reranker(&rerank_dir, &model, &head, &spec, &id, Default::default())
            .unwrap();
        let base = Encoder::load(
            &model_dir,
            &candle_core::Device::Cpu,
            EncoderOptions { max_len: 64, ..Default::default() },
        )
        .unwrap();
        let reranker = crate::rerank::Reranker::load(&rerank_dir, &base).map_err(|e| e.to_string())?;
        Ok(SearchModels { reranker: Some(Arc::new(reranker)), ..models })
    });
    let ws = workspace(
        &root,
        &cache,
        Some(DenseSetup { load: with_reranker, opts: DenseOptions::default(), static_table: None }),
    );
    assert_eq!(settled(&ws), DenseStatus::Ready);
    let (searcher, dense) = ws.refresh().unwrap();
    let answer = locate(&searcher, &dense, None, &ask("alpha calls beta")).unwrap();
    assert_eq!(answer.retrievers_used, ["bm25", "dense", "rerank"]);
    assert!(!answer.files.is_empty());
    let bm25 = LocateRequest { retriever: Some(RetrieverName::Bm25), ..ask("alpha calls beta") };
    let answer = locate(&searcher, &dense, None, &bm25).unwrap();
    assert_eq!(answer.retrievers_used, ["bm25"], "only the hybrid is reranked");
    // An edit rebuilds the dense index; the reranker stays with it.
    write(&root, "pkg/delta.py", "def delta():\n    return alpha()\n");
    ws.refresh().unwrap();
    assert_eq!(settled(&ws), DenseStatus::Ready);
    assert!(ws.current().0.reranker.is_some(), "the rebuilt searcher keeps the reranker");
}
