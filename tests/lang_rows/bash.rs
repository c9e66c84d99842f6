//! Bash's row on `src/lang/fixtures/deploy.sh`.

use super::{calls, clean_fixture, expect};

#[test]
fn bash_functions_in_every_form_and_commands_that_call_them() {
    let file = clean_fixture("deploy.sh");
    expect(
        &file,
        &[
            ("<module>", "module", 1, 40, "set -euo pipefail"),
            ("log", "function", 7, 10, "# Print a message with a timestamp."),
            ("fail", "function", 12, 15, "function fail {"),
            ("upload", "function", 17, 21, "upload() {"),
            ("restart_all", "function", 23, 28, "restart_all() ("),
            ("check_health", "function", 30, 32, "check_health() {"),
            ("main", "function", 34, 38, "main() {"),
        ],
    );
    let files = [file];
    let (callees, unresolved) = calls(&files, "upload");
    assert_eq!(callees, ["fail", "log"], "after ||, in a list");
    assert!(unresolved.is_empty(), "rsync is a program, not a hole: {unresolved:?}");
    assert_eq!(calls(&files, "restart_all").0, ["check_health"], "a subshell body, a for loop");
    assert_eq!(calls(&files, "main").0, ["fail", "upload", "restart_all"]);
    assert_eq!(calls(&files, "<module>").0, ["main"], "the script's last line calls main");
}

/// Issue 70's bad input: a 20,000-line script is chunked (its functions, its top-level code in
/// windows), in one pass, without a hang or a panic.
#[test]
fn a_twenty_thousand_line_script_is_chunked() {
    let mut source = String::from("#!/bin/bash\nset -e\n");
    for i in 0..2_500 {
        source.push_str(&format!("step_{i}() {{\n  echo \"step {i}\"\n  helper_{i} \"$@\"\n}}\n"));
        source.push_str(&format!("[[ -n \"$X\" ]] && step_{i} a b\necho done {i}\nexport V{i}=1\n\n"));
    }
    assert!(source.lines().count() >= 20_000);
    let file = coret::chunk::chunk_file("build.sh", &source);
    let functions = file.chunks.iter().filter(|c| c.name.starts_with("step_")).count();
    assert!(functions > 0, "its functions are chunks");
    assert!(file.chunks.iter().all(|c| c.end_line <= source.lines().count()));
}
