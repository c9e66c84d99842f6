//! `--mine`: a small history mined into a gzipped instances file; the held-out repositories,
//! a bad path and a history without Python refused on one line with exit 2.
#[path = "../src/testkit.rs"]
mod testkit;

use assert_cmd::Command;
use std::path::Path;

fn mine(git_dir: &Path, repo: &str, out: &Path) -> std::process::Output {
    Command::cargo_bin("coret-tui")
        .unwrap()
        .arg("--mine")
        .arg(git_dir)
        .args(["--repo-name", repo, "--mine-out"])
        .arg(out)
        .output()
        .unwrap()
}

#[test]
fn mines_a_history_into_instances_with_a_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("widgets");
    std::fs::create_dir_all(dir.join("pkg")).unwrap();
    testkit::git(&dir, &["init", "-q"]);
    std::fs::write(dir.join("pkg/core.py"), "def add(a, b):\n    return a + b\n").unwrap();
    testkit::git(&dir, &["add", "-A"]);
    testkit::git(&dir, &["commit", "-q", "-m", "Initial import"]);
    std::fs::write(dir.join("pkg/core.py"), "def add(a, b):\n    return int(a) + int(b)\n").unwrap();
    testkit::git(&dir, &["add", "-A"]);
    let message = "Make add() convert its arguments to int (#4)\n\nadd('1', 2) concatenated or failed \
                   instead of adding; both arguments are converted first.\n\nSigned-off-by: A <a@b.c>";
    testkit::git(&dir, &["commit", "-q", "-m", message]);

    let out = tmp.path().join("data/mined.jsonl.gz");
    let run = mine(&dir, "acme/widgets", &out);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(stderr.contains("2 commits seen, 1 kept") && stderr.contains("root 1"), "{stderr}");
    assert!(stderr.contains("median"), "{stderr}");
    let (instances, errors) = coret::eval::instances::read_instances(&out).unwrap();
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(instances.len(), 1);
    assert_eq!(instances[0].repo, "acme/widgets");
    assert_eq!(
        instances[0].problem_statement,
        "Make add() convert its arguments to int\n\nadd('1', 2) concatenated or failed instead of adding; both \
         arguments are converted first."
    );
    assert!(instances[0].patch.contains("+    return int(a) + int(b)"));

    for (git_dir, repo, named) in [
        (dir.as_path(), "pallets/flask", "pallets/flask"),
        (dir.as_path(), "someone/sympy", "sympy/sympy"),
        (&tmp.path().join("missing"), "acme/widgets", "missing"),
    ] {
        let run = mine(git_dir, repo, &tmp.path().join("x.jsonl"));
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(stderr.contains(named), "{stderr}");
    }
    assert!(!tmp.path().join("x.jsonl").exists());
}

#[test]
fn a_history_without_source_code_is_a_one_line_error_and_mining_is_hidden_from_help() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("docs");
    std::fs::create_dir_all(&dir).unwrap();
    testkit::git(&dir, &["init", "-q"]);
    std::fs::write(dir.join("README.md"), "# docs\n").unwrap();
    testkit::git(&dir, &["add", "-A"]);
    testkit::git(&dir, &["commit", "-q", "-m", "Docs"]);
    let run = mine(&dir, "acme/docs", &tmp.path().join("x.jsonl"));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("docs/.git") && stderr.contains("supported language"), "{stderr}");

    let help = Command::cargo_bin("coret-tui").unwrap().arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    for flag in ["--mine", "--repo-name", "--min-message", "--max-commits", "--since"] {
        assert!(!help.contains(flag), "{flag} shows in --help");
    }
}
