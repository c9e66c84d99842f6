//! Dense and hybrid retrieval through the binary, on a tiny random BERT the test writes.
#[path = "../src/testkit.rs"]
mod testkit;

mod common;

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;

/// The transformer's tier: these tests are about it (`auto` has its own test below).
fn coret(cache: &Path, model: &Path) -> Command {
    let mut cmd = Command::cargo_bin("coret-tui").unwrap();
    cmd.env("CORET_CACHE_DIR", cache).env("CORET_MODEL", model).env("CORET_OFFLINE", "1");
    cmd.env("CORET_DENSE", "transformer");
    cmd
}

#[test]
fn auto_answers_a_question_from_the_static_tier_until_the_transformer_covers_it_and_an_issue_waits() {
    let repo = common::fixture_repo();
    let tmp = tempfile::tempdir().unwrap();
    let model = tmp.path().join("model");
    tiny_model(&model);
    let cache = tmp.path().join("cache");
    let query = |text: &str, extra: &[&str]| {
        let mut cmd = coret(&cache, &model);
        cmd.env("CORET_DENSE", "auto").arg(repo.path()).args(["--query", text, "--json"]).args(extra);
        run_json(&mut cmd)
    };
    // A question on a cold checkout: the static tier at once (issue 80), nothing embedded.
    let cold = query("total price", &[]);
    assert_eq!(cold["stats"]["dense_tier"], "static", "{}", cold["stats"]);
    assert!(cold["stats"].get("device").is_none(), "the transformer did not run: {}", cold["stats"]);
    // An issue waits for the transformer (query-first), whatever the cache holds.
    let issue =
        "The total price is wrong when a discount applies\n\nWith a discount of ten percent the cart \
                 total still shows the full price, and the tax is computed on the wrong amount as well.";
    let waited = query(issue, &[]);
    assert_eq!(waited["stats"]["dense_tier"], "transformer", "{}", waited["stats"]);
    // Once the transformer holds every chunk, the question is its.
    query("total price", &["--wait-index"]);
    let warm = query("total price", &[]);
    assert_eq!(warm["stats"]["dense_tier"], "transformer", "{}", warm["stats"]);
    let pinned = query("total price", &["--dense", "static"]);
    assert_eq!(pinned["stats"]["dense_tier"], "static", "{}", pinned["stats"]);
    assert!(pinned["stats"]["towers"]["chunk"].as_str().unwrap().starts_with("static-"));
    assert!(pinned["stats"].get("device").is_none(), "no model loaded for the static tier");
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
    let args = [
        "--query",
        "total price with discount",
        "--retriever",
        "all",
        "--json",
        "--top",
        "5",
        "--wait-index",
    ];
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
    let device = first["stats"]["device"].as_str().unwrap();
    assert!(
        device.starts_with("cpu (") && ["f32", "bf16", "int8"].iter().any(|p| device.contains(p)),
        "names the kernels: {device}"
    );
    let chunks = first["stats"]["chunks"].as_u64().unwrap();
    assert_eq!(first["stats"]["embedded"].as_u64().unwrap(), chunks);

    let second = run_json(coret(&cache, &model).arg(repo.path()).args(args));
    assert_eq!(second["stats"]["embedded"], 0, "an unchanged repository is not embedded again");
    assert_eq!(first["results"]["dense"], second["results"]["dense"]);

    common::write(repo.path(), "shop/extra.py", "def shipping_cost(weight):\n    return weight * 2\n");
    let third = run_json(coret(&cache, &model).arg(repo.path()).args(args));
    assert_eq!(third["stats"]["embedded"], 1, "only the new chunk is embedded");
}

/// Copies the regular files under `from` to `to` (a checkout or a cache directory moved to
/// another machine).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Index once, use anywhere (README): a cache built for a checkout at one path (a GPU machine,
/// CI), copied with the checkout to another path, embeds nothing again there, and a file
/// changed since embeds only its own chunks.
#[test]
fn a_copied_index_embeds_nothing_again_and_a_changed_file_only_its_chunks() {
    let tmp = tempfile::tempdir().unwrap();
    let model = tmp.path().join("model");
    tiny_model(&model);
    let fixture = common::fixture_repo();
    let (built_at, used_at) = (tmp.path().join("gpu/shop-repo"), tmp.path().join("laptop/shop-repo"));
    copy_tree(fixture.path(), &built_at);
    let args = ["--query", "total price with discount", "--retriever", "dense", "--json", "--wait-index"];
    let built_cache = tmp.path().join("built-cache");
    let first = run_json(coret(&built_cache, &model).arg(&built_at).args(args));
    let chunks = first["stats"]["chunks"].as_u64().unwrap();
    assert!(chunks > 5 && first["stats"]["embedded"].as_u64() == Some(chunks), "{}", first["stats"]);

    copy_tree(&built_at, &used_at);
    let copied_cache = tmp.path().join("copied-cache");
    copy_tree(&built_cache, &copied_cache);
    let there = run_json(coret(&copied_cache, &model).arg(&used_at).args(args));
    assert_eq!(there["stats"]["embedded"], 0, "the copied vectors serve the checkout at its new path");
    assert_eq!(there["results"]["dense"], first["results"]["dense"]);

    common::write(&used_at, "shop/extra.py", "def shipping_cost(weight):\n    return weight * 2\n");
    let changed = run_json(coret(&copied_cache, &model).arg(&used_at).args(args));
    assert_eq!(changed["stats"]["embedded"], 1, "only the new file's chunk is embedded");
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

    // A path that is no checkout fails before the model loads: one line, exit 2.
    let out = coret(tmp.path(), &model).args(["/no/such/path", "--query", "x"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("/no/such/path") && !err.contains("tower"), "{err}");
}

/// Ctrl-C while `--query` embeds: the run stops at once with 130, and what was embedded
/// before the interrupt is kept (the next run reuses it instead of starting over).
#[test]
fn sigint_during_dense_embedding_exits_130_at_once_and_keeps_the_finished_slices() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("big");
    // Enough chunks that the tiny model is still embedding when the first slice is logged.
    for f in 0..200 {
        let body: String = (0..200)
            .map(|i| format!("def price_{f}_{i}(cart, tax):\n    return cart.total * tax + {i}\n\n\n"))
            .collect();
        common::write(&repo, &format!("pkg/m{f}.py"), body);
    }
    let model = tmp.path().join("model");
    tiny_model(&model);
    let cache = tmp.path().join("cache");
    let args = ["--query", "total price", "--retriever", "dense", "--json", "--wait-index"];
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("coret-tui"))
        .env("CORET_CACHE_DIR", &cache)
        .env("CORET_MODEL", &model)
        .env("CORET_OFFLINE", "1")
        .env("CORET_DENSE", "transformer")
        .arg(&repo)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while vector_log_bytes(&cache) == 0 {
        assert!(child.try_wait().unwrap().is_none(), "finished before the first slice was seen");
        assert!(started.elapsed().as_secs() < 120, "no vectors logged within 2 minutes");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let kill = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(kill.success());
    let interrupted = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "SIGINT exits 130");
    assert!(interrupted.elapsed().as_secs() < 10, "stopped at once, not after the embedding");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("stopping after the work in hand"),
        "the first Ctrl-C says what happens: {stderr}"
    );

    let resumed = run_json(coret(&cache, &model).arg(&repo).args(args));
    let stats = &resumed["stats"];
    let (chunks, embedded) = (stats["chunks"].as_u64().unwrap(), stats["embedded"].as_u64().unwrap());
    assert!(
        embedded < chunks,
        "the slices embedded before Ctrl-C are reused ({embedded} of {chunks} embedded again)"
    );
}

/// Bytes in the cache's vector logs.
fn vector_log_bytes(cache: &Path) -> u64 {
    let mut total = 0;
    let mut dirs = vec![cache.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.to_string_lossy().contains("vectors") {
                total += entry.metadata().map(|m| m.len()).unwrap_or(0);
            }
        }
    }
    total
}

/// A read-only view of `dir` at a new path: a read-only bind mount (root) or, failing that,
/// the directory itself with its write bits removed (other users). `None` where neither
/// makes writes fail (then the test says so and checks nothing).
struct ReadOnly {
    path: std::path::PathBuf,
    mounted: bool,
}

impl ReadOnly {
    fn of(dir: &Path, mount_point: &Path) -> Option<ReadOnly> {
        std::fs::create_dir_all(mount_point).unwrap();
        let sh = |cmd: String| {
            std::process::Command::new("sh").args(["-c", &cmd]).status().is_ok_and(|s| s.success())
        };
        let (m, d) = (mount_point.display(), dir.display());
        if sh(format!("mount --bind '{d}' '{m}' 2>/dev/null && mount -o remount,ro,bind '{m}' 2>/dev/null")) {
            return Some(ReadOnly { path: mount_point.to_path_buf(), mounted: true });
        }
        sh(format!("chmod -R a-w '{d}'"));
        if std::fs::write(dir.join("probe"), b"x").is_err() {
            return Some(ReadOnly { path: dir.to_path_buf(), mounted: false });
        }
        None
    }
}

impl Drop for ReadOnly {
    fn drop(&mut self) {
        let cmd = if self.mounted {
            format!("umount '{}'", self.path.display())
        } else {
            format!("chmod -R u+w '{}'", self.path.display())
        };
        let _ = std::process::Command::new("sh").args(["-c", &cmd]).status();
    }
}

/// A read-only cache answers a warm dense query from its vectors, and an empty one still
/// answers (embedding in memory), each with a note instead of an error.
#[test]
fn a_read_only_cache_answers_dense_queries() {
    let repo = common::fixture_repo();
    let tmp = tempfile::tempdir().unwrap();
    let model = tmp.path().join("model");
    tiny_model(&model);
    let (cache, empty) = (tmp.path().join("cache"), tmp.path().join("empty"));
    std::fs::create_dir_all(&empty).unwrap();
    let args = ["--query", "total price with discount", "--retriever", "dense", "--json", "--top", "5"];
    let warm = run_json(coret(&cache, &model).arg(repo.path()).args(args));
    let (Some(ro_cache), Some(ro_empty)) = (
        ReadOnly::of(&cache, &tmp.path().join("ro-cache")),
        ReadOnly::of(&empty, &tmp.path().join("ro-empty")),
    ) else {
        eprintln!(
            "a_read_only_cache_answers_dense_queries: cannot make a read-only directory here; not checked"
        );
        return;
    };
    let again = run_json(coret(&ro_cache.path, &model).arg(repo.path()).args(args));
    assert_eq!(again["stats"]["embedded"], 0, "the vectors come from the read-only cache");
    assert_eq!(again["results"]["dense"], warm["results"]["dense"]);

    let out = coret(&ro_empty.path, &model).arg(repo.path()).args(args).output().unwrap();
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let cold: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(cold["results"]["dense"], warm["results"]["dense"]);
    let err = String::from_utf8_lossy(&out.stderr).to_lowercase();
    assert!(err.contains("cache not written") && err.contains("read-only"), "the note says why: {err}");
}

#[test]
fn a_query_without_retriever_is_hybrid() {
    let repo = common::fixture_repo();
    let tmp = tempfile::tempdir().unwrap();
    let model = tmp.path().join("model");
    tiny_model(&model);
    let cache = tmp.path().join("cache");
    let v = run_json(coret(&cache, &model).arg(repo.path()).args(["--query", "total price", "--json"]));
    let results: Vec<&String> = v["results"].as_object().unwrap().keys().collect();
    assert_eq!(results, ["hybrid"]);
    assert!(v["stats"].get("fallback").is_none(), "{v}");
}

/// A cold repository answers after embedding only what the query needs first; the answer says
/// over how many chunks dense ranked, a later query ranks over more, and `--wait-index` over all.
#[test]
fn a_cold_query_embeds_its_candidates_first_and_later_ones_rank_over_more() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    for f in 0..40 {
        let body: String =
            (0..10).map(|i| format!("def helper_{f}_{i}(x):\n    return x + {i}\n\n\n")).collect();
        common::write(&repo, &format!("pkg/m{f}.py"), body);
    }
    common::write(&repo, "shop/cart.py", "def total_price(cart):\n    return sum(cart)\n\n\ndef apply_discount(cart, tax):\n    return total_price(cart) * tax\n");
    let model = tmp.path().join("model");
    tiny_model(&model);
    let cache = tmp.path().join("cache");
    let query = |q: &str, extra: &[&str]| {
        let mut args = vec!["--query", q, "--json", "--top", "5"];
        args.extend_from_slice(extra);
        run_json(coret(&cache, &model).arg(&repo).args(&args))
    };
    let first = query("total price with discount", &[]);
    let coverage = |v: &Value| {
        (
            v["stats"]["dense_coverage"]["ranked"].as_u64().unwrap(),
            v["stats"]["dense_coverage"]["of"].as_u64().unwrap(),
        )
    };
    let (ranked, of) = coverage(&first);
    assert_eq!(of, 402, "every chunk outside the tests");
    assert!(ranked >= 2 && ranked < of, "only the candidates: {ranked} of {of}");
    assert_eq!(first["stats"]["embedded"].as_u64().unwrap(), ranked, "nothing else was embedded");
    let names: Vec<&str> =
        first["results"]["hybrid"].as_array().unwrap().iter().map(|h| h["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"total_price") && names.contains(&"apply_discount"), "{names:?}");

    let second = query("helper 7 returns x", &[]);
    assert!(coverage(&second).0 > ranked, "the first query's vectors are kept and ranked over too");

    let full = query("total price", &["--wait-index"]);
    assert_eq!(coverage(&full), (of, of));
}
