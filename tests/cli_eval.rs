//! `--eval` end to end on a git repository the test builds: gold from patches, metrics by hand,
//! and every kind of bad input reported per instance while the run goes on.
#[path = "../src/testkit.rs"]
mod testkit;

mod common;

use assert_cmd::Command;
use serde_json::{json, Value};
use std::io::Write;
use std::path::Path;

fn git(dir: &Path, args: &[&str]) -> String {
    testkit::git(dir, args).trim().to_string()
}

const V1: &str = "\
def parse_header(line):
    key, value = line.split(':', 1)
    return key.strip(), value.strip()


def render_page(title):
    return '<h1>' + title + '</h1>'
";

/// `DIR/acme+web/repo` holding two commits; returns (repos dir guard, first commit, second).
fn fixture() -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("acme+web/repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    common::write(&repo, "web/http.py", V1);
    common::write(&repo, "web/__init__.py", "");
    common::write(&repo, "README.md", "docs\n");
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "one"]);
    let first = git(&repo, &["rev-parse", "HEAD"]);
    common::write(&repo, "web/views.py", "def index(request):\n    return render(request)\n");
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "two"]);
    let second = git(&repo, &["rev-parse", "HEAD"]);
    (dir, first, second)
}

const PATCH_PARSE: &str = "\
diff --git a/web/http.py b/web/http.py
--- a/web/http.py
+++ b/web/http.py
@@ -1,3 +1,3 @@
 def parse_header(line):
-    key, value = line.split(':', 1)
+    key, _, value = line.partition(':')
     return key.strip(), value.strip()
";

const PATCH_DOCS: &str = "\
diff --git a/README.md b/README.md
--- a/README.md
+++ b/README.md
@@ -1 +1 @@
-docs
+more docs
";

fn instance(id: &str, commit: &str, issue: &str, patch: &str) -> String {
    json!({"instance_id": id, "repo": "acme/web", "base_commit": commit, "problem_statement": issue, "patch": patch})
        .to_string()
}

fn eval(instances: &Path, repos: &Path, out: &Path, extra: &[&str]) -> Value {
    let output = Command::cargo_bin("coret-tui")
        .unwrap()
        .env("CORET_CACHE_DIR", out.join("cache"))
        .arg("--eval")
        .arg(instances)
        .arg("--repos")
        .arg(repos)
        .args(["--retriever", "bm25", "--json", "--k", "1,5", "--out"])
        .arg(out)
        .args(extra)
        .output()
        .unwrap();
    assert!(output.status.success(), "stderr: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).expect("one JSON summary")
}

#[test]
fn metrics_match_hand_computation_and_bad_instances_are_reported() {
    let (repos, first, second) = fixture();
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("instances.jsonl");
    let lines = [
        // parse_header is named by the issue: rank 1, so every metric is 1.
        instance("ok-1", &first, "parse_header crashes when the header line has no colon", PATCH_PARSE),
        // Same fix at the second commit: the snapshot there has one more file.
        instance("ok-2", &second, "header parsing crashes on a line without a colon", PATCH_PARSE),
        instance("docs-only", &first, "typo in the docs", PATCH_DOCS),
        instance("no-commit", "0123456789abcdef0123456789abcdef01234567", "x", PATCH_PARSE),
        "{not json".to_string(),
    ];
    std::fs::write(&file, lines.join("\n")).unwrap();
    let out = tmp.path().join("out");
    let s = eval(&file, repos.path(), &out, &[]);
    assert_eq!(s["n_instances"], 4);
    assert_eq!(s["n_bad_lines"], 1);
    assert_eq!(s["n_failed"], 1);
    assert_eq!(s["n_without_gold"], 1);
    assert_eq!(s["n_with_gold"], 2);
    let bm25 = &s["retrievers"]["bm25"];
    assert_eq!(bm25["n"], 2);
    assert_eq!(bm25["perfect_recall@1"], 1.0, "{bm25}");
    assert_eq!(bm25["mrr"], 1.0);
    assert_eq!(bm25["file_acc@1"], 1.0);
    assert!(s["failed"][0][1].as_str().unwrap().contains("0123456789abcdef"), "{s}");
    // A `no_gold` instance says why: its patch touches only a file the index does not hold.
    assert_eq!(s["without_gold"][0][0], "docs-only");
    let why = s["without_gold"][0][1].as_str().unwrap();
    assert!(why.contains("README.md: not indexed"), "{why}");

    let per: Vec<Value> = std::fs::read_to_string(out.join("instances.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(per.len(), 4);
    let ok = per.iter().find(|r| r["instance_id"] == "ok-1").unwrap();
    assert_eq!(ok["gold"][0]["name"], "parse_header");
    assert_eq!(ok["gold"][0]["kind"], "function");
    assert_eq!(ok["ranks"]["bm25"][0], 1);
    let summary: Value = serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["n_with_gold"], 2);
}

#[test]
fn gzipped_instances_and_a_missing_repository() {
    let (repos, first, _) = fixture();
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("instances.jsonl.gz");
    let mut gz =
        flate2::write::GzEncoder::new(std::fs::File::create(&file).unwrap(), flate2::Compression::fast());
    writeln!(
        gz,
        "{}",
        instance(
            "ok",
            &first,
            "render_page title",
            "\
diff --git a/web/http.py b/web/http.py
--- a/web/http.py
+++ b/web/http.py
@@ -6,2 +6,2 @@ def parse_header(line):
 def render_page(title):
-    return '<h1>' + title + '</h1>'
+    return f'<h1>{title}</h1>'
"
        )
    )
    .unwrap();
    let other = json!({"instance_id": "elsewhere", "repo": "acme/missing", "base_commit": first,
                       "problem_statement": "x", "patch": PATCH_PARSE});
    writeln!(gz, "{other}").unwrap();
    gz.finish().unwrap();
    let s = eval(&file, repos.path(), &tmp.path().join("out"), &[]);
    assert_eq!(s["n_instances"], 2);
    assert_eq!(s["n_failed"], 1);
    assert!(s["failed"][0][1].as_str().unwrap().contains("acme"), "{s}");
    assert_eq!(s["retrievers"]["bm25"]["perfect_recall@1"], 1.0);
}

#[test]
fn dense_and_hybrid_are_scored_with_a_model() {
    let (repos, first, second) = fixture();
    let tmp = tempfile::tempdir().unwrap();
    let model = tmp.path().join("model");
    testkit::write_tiny_bert(&model, &["parse", "header", "render", "page", "def", "return"]);
    let file = tmp.path().join("instances.jsonl");
    let lines = [
        instance("a", &first, "parse_header crashes without a colon", PATCH_PARSE),
        instance("b", &second, "parse_header crashes without a colon", PATCH_PARSE),
    ];
    std::fs::write(&file, lines.join("\n")).unwrap();
    let out = tmp.path().join("out");
    let output = Command::cargo_bin("coret-tui")
        .unwrap()
        .env("CORET_CACHE_DIR", out.join("cache"))
        .env("CORET_MODEL", &model)
        .arg("--eval")
        .arg(&file)
        .arg("--repos")
        .arg(repos.path())
        .args(["--json", "--k", "1,5", "--out"])
        .arg(out.join("run"))
        .output()
        .unwrap();
    assert!(output.status.success(), "stderr: {}", String::from_utf8_lossy(&output.stderr));
    let s: Value = serde_json::from_slice(&output.stdout).unwrap();
    let per_instance = std::fs::read_to_string(out.join("run/instances.jsonl")).unwrap();
    let embedded: Vec<u64> = per_instance
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["embedded"].as_u64().unwrap())
        .collect();
    assert_eq!(embedded, [2, 1], "the second commit embeds only its changed chunk");
    for r in ["bm25", "dense", "hybrid"] {
        let m = &s["retrievers"][r];
        assert_eq!(m["n"], 2, "{r}: {s}");
        let mrr = m["mrr"].as_f64().unwrap();
        assert!(mrr > 0.0 && mrr <= 1.0, "{r}: {mrr}");
    }
    // Both snapshots share their chunks: the vector log holds each distinct input once.
    let log = out.join("cache/eval/acme+web.vectors");
    let (store, _) = coret::index::dense::VectorStore::open(&log, 32).unwrap();
    assert_eq!(store.len(), 3, "parse_header, render_page, index");
    // Two appended batches (2 vectors, then only the new one), each followed by the aliases
    // of its raw input keys (32 bytes a pair); 44-byte header per record.
    let bytes = std::fs::metadata(&log).unwrap().len();
    assert_eq!(bytes, 3 * (16 + 4 * 32) + 3 * 32 + 4 * 44);
}
