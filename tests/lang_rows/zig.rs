//! Zig's row on `src/lang/fixtures/queue.zig`.

use super::{calls, clean_fixture, expect};

#[test]
fn zig_containers_bound_to_names_own_their_functions_and_tests_are_no_chunks() {
    let file = clean_fixture("queue.zig");
    expect(
        &file,
        &[
            ("<module>", "module", 1, 51, "const std = @import(\"std\");"),
            ("Job", "class", 5, 13, "/// A job waiting to run."),
            ("Job.isUrgent", "method", 10, 12, "pub const Job ="),
            ("Queue", "class", 15, 35, "pub const Queue = struct {"),
            ("Queue.init", "method", 21, 23, "pub const Queue ="),
            ("Queue.push", "method", 25, 30, "pub const Queue ="),
            ("Queue.isFull", "method", 32, 34, "pub const Queue ="),
            ("State", "class", 37, 37, "pub const State = enum { idle, busy };"),
            ("sortByPriority", "function", 39, 41, "fn sortByPriority(jobs: []Job) void {"),
            ("lessThan", "function", 43, 45, "fn lessThan(_: void, a: Job, b: Job) bool {"),
        ],
    );
    let module = &file.chunks[0].text;
    assert!(!module.contains("a full queue refuses a job"), "a test block is test code: {module}");
    let queue = &file.chunks[3].text;
    assert!(queue.contains("return .{ .items"), "init constructs: it stays whole in its type: {queue}");
    assert!(!queue.contains("try self.items.append(job)"), "other bodies are elided: {queue}");
    let files = [file];
    assert_eq!(
        calls(&files, "Queue.push").0,
        ["Queue.isFull", "sortByPriority"],
        "self.isFull() is the container's"
    );
}

/// Issue 70's bad input: a file that is one `comptime` block is module code, not a failure.
#[test]
fn a_file_of_one_comptime_block_is_module_code() {
    let source =
        "comptime {\n    @setEvalBranchQuota(10000);\n    var i = 0;\n    while (i < 10) : (i += 1) {}\n}\n";
    let file = coret::chunk::chunk_file("src/quota.zig", source);
    assert!(!file.has_syntax_errors);
    let kinds: Vec<&str> = file.chunks.iter().map(|c| c.kind.as_str()).collect();
    assert_eq!(kinds, ["module"], "one module chunk holds it");
    assert!(file.chunks[0].text.contains("@setEvalBranchQuota"));
}
