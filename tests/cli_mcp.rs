//! `coret-tui --mcp PATH` end to end with an independent client: the official Python MCP SDK
//! (tests/mcp_client.py) starts the server on stdio and calls its tools. Also the headless
//! query's `--snippets` and the `--mcp` usage errors.

mod common;

use assert_cmd::Command as AssertCommand;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const INSTALL: &str = "python3 -m pip install 'mcp>=1.9,<2'";

fn python() -> String {
    std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_string())
}

/// Runs `tests/SCRIPT` with the binary cargo built and asserts that every check in it passed.
fn run_client(script: &str) {
    let python = python();
    match Command::new(&python).args(["-c", "import mcp"]).output() {
        Err(e) => {
            panic!("`{python}` did not run ({e}): this test needs Python 3 with the mcp package: {INSTALL}")
        }
        Ok(out) if !out.status.success() => panic!(
            "this test needs the Python MCP SDK: run `pip install mcp` ({INSTALL}); `import mcp` said: {}",
            String::from_utf8_lossy(&out.stderr).trim().lines().last().unwrap_or_default()
        ),
        Ok(_) => {}
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join(script);
    let out_dir = tempfile::tempdir().unwrap();
    let (stdout, stderr) = (out_dir.path().join("stdout"), out_dir.path().join("stderr"));
    let mut child = Command::new(&python)
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_coret-tui"))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout).unwrap())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(300);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let (stdout, stderr) =
        (std::fs::read_to_string(stdout).unwrap(), std::fs::read_to_string(stderr).unwrap());
    let status = status.unwrap_or_else(|| panic!("the MCP client ran past 300 s\nstderr:\n{stderr}"));
    assert!(status.success(), "the MCP client failed ({status})\nstdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.contains("all checks passed"), "stdout:\n{stdout}");
}

#[test]
fn an_independent_mcp_client_locates_reads_and_sees_edits() {
    run_client("mcp_client.py");
}

/// Issue 73: servers on one checkout share one index (the first owns it, the others attach),
/// every client sees every edit, and a SIGKILL of the owner costs the others nothing.
#[test]
fn servers_on_one_checkout_share_its_owner_and_survive_its_death() {
    run_client("mcp_many.py");
}

#[test]
fn snippets_add_each_hits_first_lines_to_the_json_and_the_query_can_come_from_stdin() {
    let repo = common::fixture_repo();
    let cache = tempfile::tempdir().unwrap();
    let out = AssertCommand::cargo_bin("coret-tui")
        .unwrap()
        .env("CORET_CACHE_DIR", cache.path())
        .arg(repo.path())
        .args(["--query", "-", "--json", "--snippets", "2", "--retriever", "bm25"])
        .write_stdin("apply_discount rate")
        .output()
        .unwrap();
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["query"], "apply_discount rate");
    let top = &v["results"]["bm25"][0];
    assert_eq!(top["name"], "apply_discount");
    assert_eq!(
        top["code"],
        "def apply_discount(amount, rate=0.1):\n    \"\"\"Take the loyalty discount off.\"\"\""
    );
    assert_eq!(top["code_lines"], 3);

    let plain = AssertCommand::cargo_bin("coret-tui")
        .unwrap()
        .env("CORET_CACHE_DIR", cache.path())
        .arg(repo.path())
        .args(["--query", "discount", "--snippets", "2"])
        .output()
        .unwrap();
    assert_eq!(plain.status.code(), Some(2), "--snippets without --json is a usage error");
}

#[test]
fn mcp_usage_errors_exit_2_and_name_what_is_wrong() {
    let run = |args: &[&str]| {
        let out = AssertCommand::cargo_bin("coret-tui").unwrap().args(args).write_stdin("").output().unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (code, stderr) = run(&["--mcp", "/nonexistent/repo"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("/nonexistent/repo"), "{stderr}");
    let repo = common::fixture_repo();
    let path = repo.path().to_str().unwrap();
    let (code, stderr) = run(&["--mcp", path, "--retriever", "history", "--no-cache"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--retriever history"), "{stderr}");
    let (code, stderr) = run(&["--mcp", path, "--query", "x"]);
    assert_eq!(code, Some(2), "{stderr}");
}
