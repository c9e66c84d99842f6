//! Dense and hybrid retrieval through the binary, on a tiny random BERT the test writes.
#[path = "../src/testkit.rs"]
mod testkit;

mod common;

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;

fn coret(cache: &Path, model: &Path) -> Command {
    let mut cmd = Command::cargo_bin("coret-tui").unwrap();
    cmd.env("CORET_CACHE_DIR", cache).env("CORET_MODEL", model).env("CORET_OFFLINE", "1");
    cmd
}

fn tiny_model(dir: &Path) {
    testkit::write_tiny_bert(dir, &["cart", "total", "price", "discount", "tax", "def", "return"]);
}

fn run_json(cmd: &mut Command) -> Value {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

#[test]
fn all_three_rankings_come_back_and_vectors_are_reused() {
    let repo = common::fixture_repo();
    let tmp = tempfile::tempdir().unwrap();
    let model = tmp.path().join("model");
    tiny_model(&model);
    let cache = tmp.path().join("cache");
    let args = ["--query", "total price with discount", "--retriever", "all", "--json", "--top", "5"];
    let first = run_json(coret(&cache, &model).arg(repo.path()).args(args));
    for r in ["bm25", "dense", "hybrid"] {
        let list = first["results"][r].as_array().unwrap_or_else(|| panic!("no {r} results"));
        // BM25 lists only chunks that share a term with the query; the others rank everything.
        if r == "bm25" {
            assert!((1..=5).contains(&list.len()), "{r}: {}", list.len());
        } else {
            assert_eq!(list.len(), 5, "{r}");
        }
        assert_eq!(list[0]["rank"], 1);
        assert!(list[0]["score"].is_number());
    }
    assert_eq!(first["stats"]["device"], "cpu");
    let chunks = first["stats"]["chunks"].as_u64().unwrap();
    assert_eq!(first["stats"]["embedded"].as_u64().unwrap(), chunks);

    let second = run_json(coret(&cache, &model).arg(repo.path()).args(args));
    assert_eq!(second["stats"]["embedded"], 0, "an unchanged repository is not embedded again");
    assert_eq!(first["results"]["dense"], second["results"]["dense"]);

    common::write(repo.path(), "shop/extra.py", "def shipping_cost(weight):\n    return weight * 2\n");
    let third = run_json(coret(&cache, &model).arg(repo.path()).args(args));
    assert_eq!(third["stats"]["embedded"], 1, "only the new chunk is embedded");
}

#[test]
fn cuda_in_a_cpu_build_and_a_missing_model_are_clear_errors() {
    let repo = common::fixture_repo();
    let tmp = tempfile::tempdir().unwrap();
    let model = tmp.path().join("model");
    tiny_model(&model);
    let out = coret(tmp.path(), &model)
        .arg(repo.path())
        .args(["--query", "x", "--retriever", "dense", "--device", "cuda"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.to_lowercase().contains("cuda"), "{err}");

    let out = coret(tmp.path(), &tmp.path().join("nowhere"))
        .arg(repo.path())
        .args(["--query", "x", "--retriever", "hybrid"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("nowhere"));
}
