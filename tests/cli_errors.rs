//! One rule for bad input through the binary: usage errors exit 2 and name the flag or file,
//! explicit flags beat environment defaults, an eval that scored nothing fails, and a closed
//! pipe ends the program quietly.

mod common;

use assert_cmd::Command;
use std::path::Path;

fn coret(cache: &Path) -> Command {
    let mut cmd = Command::cargo_bin("coret-tui").unwrap();
    cmd.env("CORET_CACHE_DIR", cache)
        .env_remove("CORET_MODEL")
        .env_remove("CORET_STORE")
        .env("CORET_OFFLINE", "1");
    cmd
}

/// Exit code and stderr of a run that must fail.
fn fails(cmd: &mut Command) -> (i32, String) {
    let out = cmd.output().unwrap();
    assert!(!out.status.success(), "succeeded: {}", String::from_utf8_lossy(&out.stdout));
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn impossible_flag_values_are_usage_errors_naming_the_flag() {
    let repo = common::fixture_repo();
    let cache = tempfile::tempdir().unwrap();
    let q = |extra: &[&str]| {
        let mut c = coret(cache.path());
        c.arg(repo.path()).args(["--query", "cart total"]).args(extra);
        c
    };
    for (args, flag) in [
        (&["--top", "-1"][..], "--top"),
        (&["--max-file-size", "-1"][..], "--max-file-size"),
        (&["--retriever", "dense", "--model", "/nonexistent"][..], "--model"),
        (&["--retriever", "dense", "--weights", "/nonexistent.safetensors"][..], "--weights"),
        // Ranking in the store needs one.
        (&["--store-search"][..], "--store-search"),
    ] {
        let (code, err) = fails(&mut q(args));
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(flag), "{args:?}: the error does not name {flag}: {err}");
    }
    if !cfg!(feature = "cuda") {
        let (code, err) = fails(&mut q(&["--retriever", "dense", "--device", "cuda"]));
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("--device"), "{err}");
    }
    let (code, err) = fails(coret(cache.path()).arg(repo.path()).arg("--json"));
    assert_eq!(code, 2);
    assert!(err.contains("--query"), "a hint about --query: {err}");
    // Issue 70: `--lang ''` read "(supported: at least one language)".
    let (code, err) = fails(&mut q(&["--lang", ""]));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--lang") && err.contains("no language named") && err.contains("python, rust"),
        "{err}"
    );
}

/// Reported (issue #61): without a terminal, a missing path read "the TUI needs a terminal".
#[test]
fn a_missing_path_is_named_with_or_without_a_terminal() {
    let cache = tempfile::tempdir().unwrap();
    let missing = cache.path().join("no-such-checkout");
    let (code, err) = fails(coret(cache.path()).arg(&missing));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no-such-checkout") && !err.contains("needs a terminal"), "{err}");
    let repo = common::fixture_repo();
    let (code, err) = fails(coret(cache.path()).arg(repo.path()));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("needs a terminal"), "a good path without a terminal: {err}");
}

#[test]
fn no_cache_wins_over_the_cache_directory_from_the_environment() {
    let repo = common::fixture_repo();
    let cache = tempfile::tempdir().unwrap();
    let out = coret(cache.path())
        .arg(repo.path())
        .args(["--query", "cart", "--json", "--no-cache", "--retriever", "bm25"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 0, "nothing written to the cache");
}

#[test]
fn an_eval_that_scores_nothing_fails() {
    let cache = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "\n\n").unwrap();
    let missing_fields = dir.path().join("fields.jsonl");
    std::fs::write(&missing_fields, "{\"instance_id\": \"a-1\"}\n{\"instance_id\": \"a-2\"}\n").unwrap();
    let garbage = dir.path().join("garbage.jsonl.gz");
    std::fs::write(&garbage, b"\x00\xffnot gzip at all").unwrap();
    for file in [&empty, &missing_fields, &garbage] {
        let (code, err) =
            fails(coret(cache.path()).arg("--eval").arg(file).args(["--repos", "/nonexistent"]));
        assert_ne!(code, 0, "{}: {err}", file.display());
        assert!(err.contains(&*file.file_name().unwrap().to_string_lossy()), "names the file: {err}");
    }
    let one = dir.path().join("one.jsonl");
    let line = serde_json::json!({"instance_id": "o__r-1", "repo": "o/r", "base_commit": "abc",
        "problem_statement": "x", "patch": "not a diff"});
    std::fs::write(&one, format!("{line}\n")).unwrap();
    let (code, err) = fails(coret(cache.path()).arg("--eval").arg(&one).args(["--repos", "/nonexistent"]));
    assert_ne!(code, 0, "{err}");
    let (code, err) = fails(coret(cache.path()).arg("--eval").arg(&one).args([
        "--repos",
        "/nonexistent",
        "--instances",
        "nope-1",
    ]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("nope-1"), "names the unknown id: {err}");
}

#[cfg(unix)]
#[test]
fn a_closed_pipe_ends_the_program_quietly() {
    let repo = common::fixture_repo();
    let cache = tempfile::tempdir().unwrap();
    let bin = assert_cmd::cargo::cargo_bin("coret-tui");
    for json in ["", "--json"] {
        let script = format!(
            "CORET_CACHE_DIR='{}' '{}' '{}' --query 'cart total price' --retriever bm25 --top 200 {json} 2>err | true; \
             echo ${{PIPESTATUS[0]}}; cat err",
            cache.path().display(),
            bin.display(),
            repo.path().display()
        );
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(&script)
            .current_dir(cache.path())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let code = text.lines().next().unwrap_or("");
        assert!(code == "0" || code == "141", "exit {code}: {text}");
        assert!(!text.contains("panicked") && !text.contains("Broken pipe"), "{text}");
    }
}
