//! The headless query end to end: `coret-tui PATH --query TEXT --json`, exit codes, cache.

mod common;

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;

/// No model can be loaded here (its data directory cannot be created, so nothing is fetched),
/// and the transformer is the dense tier (`CORET_DENSE`): the default hybrid query falls back to
/// BM25 alone, which is what these tests check (the static tier's tests pass `--dense auto`).
fn coret(cache: &Path) -> Command {
    let blocker = cache.join("not-a-directory");
    if !blocker.exists() {
        std::fs::write(&blocker, "").unwrap();
    }
    let mut cmd = Command::cargo_bin("coret-tui").unwrap();
    cmd.env("CORET_CACHE_DIR", cache).env_remove("CORET_MODEL").env("CORET_OFFLINE", "1");
    cmd.env("CORET_DATA_DIR", blocker.join("data")).env("CORET_DENSE", "transformer");
    cmd
}

fn query_json(repo: &Path, cache: &Path, query: &str) -> Value {
    let out = coret(cache).arg(repo).args(["--query", query, "--json"]).output().unwrap();
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("stdout is exactly one JSON object")
}

#[test]
fn json_output_follows_the_schema_and_ranks_the_named_method_first() {
    let repo = common::fixture_repo();
    let cache = tempfile::tempdir().unwrap();
    let v = query_json(repo.path(), cache.path(), "total_price ignores the discount");
    assert_eq!(v["repo"], std::fs::canonicalize(repo.path()).unwrap().display().to_string());
    assert_eq!(v["query"], "total_price ignores the discount");
    let stats = &v["stats"];
    for key in ["files", "chunks", "edges", "seconds"] {
        assert!(stats[key].is_number(), "stats.{key} missing");
    }
    for key in ["binary", "too_large", "not_utf8", "unreadable"] {
        assert!(stats["skipped"][key].is_u64(), "stats.skipped.{key} missing");
    }
    let top = &v["results"]["bm25"][0];
    assert_eq!(top["rank"], 1);
    assert_eq!(top["path"], "shop/cart.py");
    assert_eq!(top["kind"], "method");
    assert_eq!(top["name"], "Cart.total_price");
    assert!(top["score"].as_f64().unwrap() > 0.0);
    assert!(top["start_line"].as_u64().unwrap() < top["end_line"].as_u64().unwrap());
    let callees: Vec<&str> = top["callees"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    assert!(callees.contains(&"shop/pricing.py::apply_discount"), "{callees:?}");
    assert!(callees.contains(&"shop/tax.py::with_vat"), "{callees:?}");
    assert!(v["results"].get("dense").is_none());
}

#[test]
fn skips_bad_files_and_honours_ignores() {
    let repo = common::fixture_repo();
    let cache = tempfile::tempdir().unwrap();
    let v = query_json(repo.path(), cache.path(), "function");
    assert_eq!(v["stats"]["skipped"]["binary"], 1);
    assert_eq!(v["stats"]["skipped"]["not_utf8"], 1);
    let names: Vec<String> = v["results"]["bm25"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap().to_string())
        .collect();
    assert!(!names.iter().any(|n| n == "ignored_function" || n == "hidden_function"), "{names:?}");
    // The file with a syntax error still yields what the parser recovered.
    assert!(names.iter().any(|n| n == "ok_function"), "{names:?}");
    // Six Python files are indexable: cart, pricing, tax, __init__, broken (+ none from the loop).
    assert_eq!(v["stats"]["files"], 5);
    let notes = v["stats"]["notes"].as_array().unwrap();
    assert!(notes.iter().any(|n| n.as_str().unwrap().contains("binary")), "{notes:?}");

    // Issue 70: a warm run does not repeat the notes on stderr (`stats.notes` keeps them), and
    // the text summary counts the skips `stats.skipped` counts.
    let warm = coret(cache.path()).arg(repo.path()).args(["--query", "function"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&warm.stderr);
    assert!(!stderr.contains("skipped, binary") && !stderr.contains("syntax errors;"), "{stderr}");
    let skipped: u64 = v["stats"]["skipped"].as_object().unwrap().values().map(|n| n.as_u64().unwrap()).sum();
    assert!(stderr.contains(&format!("{skipped} skipped (binary 1, not UTF-8 1")), "{stderr}");
}

#[test]
fn too_large_files_are_skipped_and_counted() {
    let repo = common::fixture_repo();
    let cache = tempfile::tempdir().unwrap();
    let out = coret(cache.path())
        .arg(repo.path())
        .args(["--query", "x", "--json", "--max-file-size", "100"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["stats"]["skipped"]["too_large"].as_u64().unwrap() >= 2);
}

#[test]
fn cache_is_reused_updated_after_an_edit_and_rebuilt_when_truncated() {
    let repo = common::fixture_repo();
    let cache = tempfile::tempdir().unwrap();
    let first = query_json(repo.path(), cache.path(), "discount");
    assert_eq!(first["stats"]["cache"], "cold");
    let second = query_json(repo.path(), cache.path(), "discount");
    assert_eq!(second["stats"]["cache"], "warm");
    assert_eq!(first["results"], second["results"]);

    common::write(repo.path(), "shop/pricing.py", "def apply_coupon(amount, code):\n    return amount - 5\n");
    let third = query_json(repo.path(), cache.path(), "apply coupon");
    assert_eq!(third["stats"]["cache"], "updated");
    assert_eq!(third["results"]["bm25"][0]["name"], "apply_coupon");
    let stale = query_json(repo.path(), cache.path(), "apply_discount");
    assert!(stale["results"]["bm25"].as_array().unwrap().iter().all(|r| r["name"] != "apply_discount"));

    // Truncate the manifest: the next run must notice and rebuild, not trust it.
    let manifest = walkdir(cache.path()).into_iter().find(|p| p.ends_with("manifest.bin")).expect("manifest");
    let bytes = std::fs::read(&manifest).unwrap();
    std::fs::write(&manifest, &bytes[..bytes.len() / 2]).unwrap();
    let out =
        coret(cache.path()).arg(repo.path()).args(["--query", "apply coupon", "--json"]).output().unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["stats"]["cache"], "cold");
    assert_eq!(v["results"]["bm25"][0]["name"], "apply_coupon");
    assert!(String::from_utf8_lossy(&out.stderr).contains("rebuilding"));
}

fn walkdir(root: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn query_from_stdin_and_readable_output() {
    let repo = common::fixture_repo();
    let cache = tempfile::tempdir().unwrap();
    let out =
        coret(cache.path()).arg(repo.path()).args(["--query", "-"]).write_stdin("with_vat").output().unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    let first = stdout.lines().nth(1).unwrap();
    assert!(first.contains("shop/tax.py:4-5") && first.contains("with_vat"), "{stdout}");
    // The kind column starts at the same place on every row, however long the location.
    let rows: Vec<&str> = stdout.lines().filter(|l| l.starts_with("   ")).collect();
    assert!(rows.len() > 1, "{stdout}");
    let starts: Vec<usize> = rows
        .iter()
        .map(|r| {
            ["function", "method", "class", "module"]
                .iter()
                .filter_map(|k| r.find(&format!("  {k}")))
                .min()
                .unwrap()
        })
        .collect();
    assert!(starts.windows(2).all(|w| w[0] == w[1]), "columns do not align:\n{stdout}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("indexed in") && stderr.contains("in all"),
        "the time says what it measures: {stderr}"
    );

    let empty = coret(cache.path()).arg(repo.path()).args(["--query", "-"]).write_stdin("").output().unwrap();
    assert_eq!(empty.status.code(), Some(2), "an empty query from stdin is a usage error");
    assert!(String::from_utf8_lossy(&empty.stderr).contains("stdin was empty"));
    let blank =
        coret(cache.path()).arg(repo.path()).args(["--query", "-"]).write_stdin(" \n\t\n").output().unwrap();
    assert_eq!(blank.status.code(), Some(2), "a blank query from stdin is a usage error");
    assert!(String::from_utf8_lossy(&blank.stderr).contains("stdin held only whitespace"));
}

#[test]
fn exit_code_2_for_bad_paths_and_requests() {
    let cache = tempfile::tempdir().unwrap();
    let missing = coret(cache.path()).args(["/no/such/dir", "--query", "x"]).output().unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/no/such/dir"));

    let repo = common::fixture_repo();
    let file = repo.path().join("README.md");
    let not_dir = coret(cache.path()).arg(&file).args(["--query", "x"]).output().unwrap();
    assert_eq!(not_dir.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&not_dir.stderr).contains("not a directory"));

    let empty = tempfile::tempdir().unwrap();
    common::write(empty.path(), "notes.txt", "no python here");
    let none = coret(cache.path()).arg(empty.path()).args(["--query", "x"]).output().unwrap();
    assert_eq!(none.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&none.stderr).contains("files to index"));
    // Each is one line before any work (no model note, no progress), wherever a model could load.
    for out in [&missing, &not_dir, &none] {
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "one line: {err}");
    }

    let both = coret(cache.path())
        .arg(repo.path())
        .args(["--query", "x", "--no-cache", "--cache-dir"])
        .arg(cache.path())
        .output()
        .unwrap();
    assert_eq!(both.status.code(), Some(2));
    let err = String::from_utf8_lossy(&both.stderr);
    assert!(err.contains("--no-cache") && err.contains("--cache-dir"), "both flags named: {err}");

    // A reranker directory that is not one is named before any model loads.
    let no_reranker = cache.path().join("no-such-reranker");
    let out = coret(cache.path())
        .arg(repo.path())
        .args(["--query", "x", "--rerank"])
        .arg(&no_reranker)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--rerank") && err.contains("no-such-reranker") && err.lines().count() == 1,
        "{err}"
    );

    let bad =
        coret(cache.path()).arg(repo.path()).args(["--query", "x", "--retriever", "magic"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("`all`"), "the error names every accepted value");
}

#[test]
fn without_a_model_the_static_tier_answers_and_the_transformer_alone_falls_back_to_bm25() {
    let repo = common::fixture_repo();
    let cache = tempfile::tempdir().unwrap();
    // The default tier: the static tier is built in and needs no model.
    let out = coret(cache.path())
        .arg(repo.path())
        .args(["--query", "discount", "--json", "--dense", "auto"])
        .output()
        .unwrap();
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let results: Vec<&String> = v["results"].as_object().unwrap().keys().collect();
    assert_eq!(results, ["hybrid"]);
    assert_eq!(v["stats"]["dense_tier"], "static", "{}", v["stats"]);
    assert!(v["stats"].get("fallback").is_none());

    // The transformer alone: without its model, BM25 answers and says why.
    let out = coret(cache.path())
        .arg(repo.path())
        .args(["--query", "discount", "--json", "--dense", "transformer"])
        .output()
        .unwrap();
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let results: Vec<&String> = v["results"].as_object().unwrap().keys().collect();
    assert_eq!(results, ["bm25"], "hybrid needs the model");
    let why = v["stats"]["fallback"].as_str().expect("stats.fallback says why");
    assert!(why.contains("bm25 alone"), "{why}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("answered by bm25 alone"));

    // Asked for by name, a retriever that needs the model is an error, not a quiet substitute.
    let out = coret(cache.path())
        .arg(repo.path())
        .args(["--query", "discount", "--json", "--retriever", "hybrid", "--dense", "transformer"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(out.stdout.is_empty(), "no results printed");
}

#[test]
fn a_bad_static_table_is_one_line_naming_it_and_the_rebuild_command() {
    let repo = common::fixture_repo();
    let cache = tempfile::tempdir().unwrap();
    let bad = cache.path().join("table.safetensors");
    std::fs::write(&bad, b"not a table").unwrap();
    let out = coret(cache.path())
        .arg(repo.path())
        .args(["--query", "discount", "--json", "--dense", "static", "--static-table"])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("table.safetensors") && err.contains("scripts/static/build.sh"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(out.stdout.is_empty());
    // With `auto`, the static tier is left out with a note; without a model BM25 answers alone.
    let out = coret(cache.path())
        .arg(repo.path())
        .args(["--query", "discount", "--json", "--dense", "auto", "--static-table"])
        .arg(&bad)
        .output()
        .unwrap();
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["results"].get("bm25").is_some() && v["stats"].get("dense_tier").is_none(), "{v}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("scripts/static/build.sh"));
}

/// Reported: in JSON rank 1 scored 8.676 and rank 2 9.772. Scores stay the retriever's; a hit
/// the ranking counted lower (a test file's) says so, and the others are in score order.
#[test]
fn json_marks_demoted_test_hits_whose_scores_are_out_of_order() {
    let repo = tempfile::tempdir().unwrap();
    let code: String = (0..6).map(|i| format!("def cart_step_{i}(cart):\n    return cart\n\n")).collect();
    common::write(repo.path(), "shop/cart.py", code + "def cart_total(items):\n    return sum(items)\n");
    let test =
        "def test_cart_total():\n    # cart total, cart total, cart total\n    assert cart_total([1]) == 1\n";
    common::write(repo.path(), "tests/test_cart.py", test);
    let cache = tempfile::tempdir().unwrap();
    let v = query_json(repo.path(), cache.path(), "cart total cart_total");
    assert_eq!(v["stats"]["test_weight"].as_f64().map(|w| (w * 10.0).round()), Some(1.0));
    let hits = v["results"]["bm25"].as_array().unwrap();
    assert_eq!(hits[0]["path"], "shop/cart.py", "{hits:?}");
    for h in hits {
        let in_tests = h["path"].as_str().unwrap().starts_with("tests/");
        assert_eq!(h["demoted"].as_bool(), Some(in_tests), "{h}");
    }
    let kept: Vec<f64> =
        hits.iter().filter(|h| h["demoted"] == false).map(|h| h["score"].as_f64().unwrap()).collect();
    assert!(kept.windows(2).all(|w| w[0] >= w[1]), "{hits:?}");
    let score = |h: &Value| h["score"].as_f64().unwrap();
    let out_of_order = hits.windows(2).any(|w| w[1]["demoted"] == true && score(&w[1]) > score(&w[0]));
    assert!(out_of_order, "the case the flag explains: {hits:?}");
}

#[test]
fn a_mixed_repository_indexes_every_language_and_lang_restricts_it() {
    let repo = tempfile::tempdir().unwrap();
    common::write(repo.path(), "py/cart.py", "def cart_total(items):\n    return sum(items)\n");
    common::write(
        repo.path(),
        "src/cart.rs",
        "pub struct Cart;\n\nimpl Cart {\n    pub fn cart_total(&self) -> u32 {\n        0\n    }\n}\n",
    );
    common::write(
        repo.path(),
        "web/cart.ts",
        "export function cartTotal(items: number[]) {\n  return 0;\n}\n",
    );
    common::write(repo.path(), "legacy/cart.rb", "def cart_total; end\n");
    common::write(repo.path(), "legacy/cart.dart", "int cartTotal() => 0;\n");
    let cache = tempfile::tempdir().unwrap();

    let v = query_json(repo.path(), cache.path(), "cart total");
    let paths: Vec<&str> =
        v["results"]["bm25"].as_array().unwrap().iter().map(|h| h["path"].as_str().unwrap()).collect();
    for path in ["py/cart.py", "src/cart.rs", "web/cart.ts", "legacy/cart.rb"] {
        assert!(paths.contains(&path), "{path} in {paths:?}");
    }
    let method =
        v["results"]["bm25"].as_array().unwrap().iter().find(|h| h["path"] == "src/cart.rs").unwrap();
    assert!(["Cart.cart_total", "Cart"].contains(&method["name"].as_str().unwrap()), "{method}");
    assert_eq!(v["stats"]["files"], 4);
    assert_eq!(v["stats"]["skipped"]["other_language"], 1, "the Dart file (no row) is counted, not indexed");

    let out = coret(cache.path())
        .arg(repo.path())
        .args(["--query", "cart total", "--json", "--lang", "rust"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let paths: Vec<&str> =
        v["results"]["bm25"].as_array().unwrap().iter().map(|h| h["path"].as_str().unwrap()).collect();
    assert!(!paths.is_empty() && paths.iter().all(|p| *p == "src/cart.rs"), "{paths:?}");

    let bad =
        coret(cache.path()).arg(repo.path()).args(["--query", "x", "--lang", "cobol"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown language 'cobol'"));

    let none = coret(cache.path()).arg(repo.path()).args(["--query", "x", "--lang", "go"]).output().unwrap();
    assert_eq!(none.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&none.stderr).contains("no Go files to index"),
        "{}",
        String::from_utf8_lossy(&none.stderr)
    );
}

#[cfg(unix)]
#[test]
fn a_latin1_path_query_or_stdin_is_answered_not_a_panic() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let parent = tempfile::tempdir().unwrap();
    let repo = parent.path().join(OsStr::from_bytes(b"caf\xe9"));
    std::fs::create_dir_all(&repo).unwrap();
    common::write(&repo, "menu.py", "def cafe_menu():\n    return []\n");
    let cache = tempfile::tempdir().unwrap();

    let out = coret(cache.path())
        .arg(&repo)
        .arg("--query")
        .arg(OsStr::from_bytes(b"Caf\xe9 menu"))
        .arg("--json")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["query"], "Caf\u{fffd} menu");
    assert_eq!(v["results"]["bm25"][0]["name"], "cafe_menu");

    let out = coret(cache.path())
        .arg(&repo)
        .args(["--query", "-", "--json"])
        .write_stdin(b"the caf\xe9 menu is empty\n".to_vec())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["results"]["bm25"][0]["name"], "cafe_menu");
}

#[test]
fn a_huge_issue_is_searched_whole_but_not_echoed_whole() {
    let repo = common::fixture_repo();
    let cache = tempfile::tempdir().unwrap();
    let issue = format!("total_price ignores the discount\n{}", "log line without meaning\n".repeat(40_000));
    let out = coret(cache.path())
        .arg(repo.path())
        .args(["--query", "-", "--json"])
        .write_stdin(issue.clone())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(out.stdout.len() < 64 * 1024, "{} bytes of JSON for a 1 MB issue", out.stdout.len());
    assert_eq!(v["query_chars"], issue.chars().count());
    assert!(v["query"].as_str().unwrap().starts_with("total_price ignores the discount"));
    assert_eq!(v["results"]["bm25"][0]["name"], "Cart.total_price");
}

/// `files` groups the same ranking by file (chunks nested, each as in `results`); `order` and
/// `query_shape` say which order a person is shown; a one-letter query and a thousand
/// identifiers answer.
#[test]
fn json_groups_hits_by_file_and_says_the_order() {
    let repo = common::fixture_repo();
    let cache = tempfile::tempdir().unwrap();
    let v = query_json(repo.path(), cache.path(), "total_price ignores the discount");
    assert_eq!((v["order"].as_str(), v["query_shape"].as_str()), (Some("grouped"), Some("question")));
    let flat = v["results"]["bm25"].as_array().unwrap();
    let files = v["files"]["bm25"].as_array().unwrap();
    let nested: usize = files.iter().map(|f| f["chunks"].as_array().unwrap().len()).sum();
    assert_eq!(nested, flat.len(), "every hit in one file");
    let paths: Vec<&str> = files.iter().map(|f| f["path"].as_str().unwrap()).collect();
    let mut distinct = paths.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(paths.len(), distinct.len(), "{paths:?}");
    assert_eq!(files[0]["rank"], 1);
    assert_eq!(files[0]["chunks"][0], flat[0], "the best hit stands for its file");
    for f in files {
        let chunks = f["chunks"].as_array().unwrap();
        assert!(chunks.iter().all(|c| c["path"] == f["path"]));
        assert_eq!(f["more"].as_u64().unwrap() as usize, chunks.len() - 1);
    }
    let issue = "The cart's total price ignores the discount.\n\nSteps: add two items, apply a 10% \
                 discount code, check out; the total shown is the full price and the order is \
                 charged without the discount that the summary page listed before.";
    let v = query_json(repo.path(), cache.path(), issue);
    assert_eq!((v["order"].as_str(), v["query_shape"].as_str()), (Some("flat"), Some("issue")));
    let v = query_json(repo.path(), cache.path(), "Cart");
    assert_eq!(v["query_shape"], "name");
    for query in ["x".to_string(), (0..1000).map(|i| format!("ident_{i} ")).collect::<String>()] {
        let v = query_json(repo.path(), cache.path(), &query);
        assert!(v["files"]["bm25"].is_array(), "{query:.20} answers");
    }
}

/// Issue 70: Dapper's two `SqlMapper.Execute` overloads read alike among `callers`; each key
/// carries its line where two would read the same.
#[test]
fn overloads_among_callers_carry_their_lines() {
    let repo = tempfile::tempdir().unwrap();
    common::write(
        repo.path(),
        "Dapper/SqlMapper.cs",
        "namespace Dapper\n{\n    public static partial class SqlMapper\n    {\n\
         public static int Execute(string sql)\n        {\n            return ExecuteImpl(sql, null);\n        }\n\n\
         public static int Execute(string sql, object param)\n        {\n            return ExecuteImpl(sql, param);\n        }\n\n\
         private static int ExecuteImpl(string sql, object param)\n        {\n            return 0;\n        }\n    }\n}\n",
    );
    let cache = tempfile::tempdir().unwrap();
    let v = query_json(repo.path(), cache.path(), "ExecuteImpl");
    let hits = v["results"]["bm25"].as_array().unwrap();
    let imp = hits.iter().find(|h| h["name"] == "SqlMapper.ExecuteImpl").expect("ExecuteImpl ranked");
    let callers: Vec<&str> = imp["callers"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    assert_eq!(
        callers,
        ["Dapper/SqlMapper.cs::SqlMapper.Execute:5", "Dapper/SqlMapper.cs::SqlMapper.Execute:10"]
    );
}

/// Several checkouts as one (issue 71, item 2): `coret-tui DIR1 DIR2 --query`, or a workspace
/// file listing them.
#[test]
fn several_checkouts_are_searched_as_one_and_each_hit_names_its_own() {
    let shop = common::fixture_repo();
    let api = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(api.path().join("limits")).unwrap();
    std::fs::write(
        api.path().join("limits/bucket.py"),
        "class TokenBucket:\n    def refill_tokens(self, now):\n        self.tokens = min(self.capacity, self.tokens + now)\n",
    )
    .unwrap();
    let cache = tempfile::tempdir().unwrap();
    let ask = |paths: &[&Path], query: &str| -> Value {
        let out = coret(cache.path()).args(paths).args(["--query", query, "--json"]).output().unwrap();
        assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    for order in [[shop.path(), api.path()], [api.path(), shop.path()]] {
        let v = ask(&order, "refill tokens in the bucket");
        assert_eq!(v["repos"].as_array().unwrap().len(), 2);
        let top = &v["results"]["bm25"][0];
        assert_eq!(top["path"], "limits/bucket.py", "{top}");
        assert_eq!(top["name"], "TokenBucket.refill_tokens");
        let api_name = api.path().file_name().unwrap().to_str().unwrap();
        assert_eq!(top["repo"], api_name);
        let v = ask(&order, "total_price ignores the discount");
        let top = &v["results"]["bm25"][0];
        assert_eq!(
            (top["path"].as_str(), top["name"].as_str()),
            (Some("shop/cart.py"), Some("Cart.total_price"))
        );
        assert_eq!(top["repo"], shop.path().file_name().unwrap().to_str().unwrap());
        let file = &v["files"]["bm25"][0];
        assert_eq!(
            (file["repo"].clone(), file["path"].as_str()),
            (top["repo"].clone(), Some("shop/cart.py"))
        );
    }
    // A workspace file: one checkout per line, relative to the file, `#` comments.
    let ws = tempfile::tempdir().unwrap();
    let list = ws.path().join("team.workspace");
    std::fs::write(
        &list,
        format!("# the team\n{}\n{}  # the API\n", shop.path().display(), api.path().display()),
    )
    .unwrap();
    let v = ask(&[list.as_path()], "refill tokens in the bucket");
    assert_eq!(v["repos"].as_array().unwrap().len(), 2);
    assert_eq!(v["results"]["bm25"][0]["path"], "limits/bucket.py");
    // A line that names no directory: one line naming the file and line, exit 2.
    std::fs::write(&list, format!("{}\nno/such/checkout\n", shop.path().display())).unwrap();
    let out = coret(cache.path()).arg(&list).args(["--query", "x"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("team.workspace:2") && err.contains("no/such/checkout"), "{err}");
}
