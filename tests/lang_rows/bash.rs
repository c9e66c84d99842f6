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
