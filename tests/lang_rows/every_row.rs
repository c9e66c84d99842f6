//! What every row's chunks and calls must honour, on the shared fixtures (`tests/fixtures/lang/`).

use super::{calls, shared_fixture as fixture};
use coret::callgraph::CallGraph;
use coret::chunk::chunk_file;

#[test]
fn a_name_several_definitions_share_is_listed_not_guessed() {
    let a = chunk_file("pkg/a/util.go", "package a\n\nfunc Helper() {}\n");
    let b = chunk_file("pkg/b/util.go", "package b\n\nfunc Helper() {}\n");
    let c = chunk_file("cmd/main.go", "package main\n\nfunc run() {\n\tHelper()\n\ta.Helper()\n}\n");
    let files = [a, b, c];
    let (callees, unresolved) = calls(&files, "run");
    assert_eq!(callees.len(), 1, "only `a.Helper()` names its package: {callees:?}");
    assert_eq!(unresolved, ["Helper"]);
    let graph = CallGraph::build(&files);
    assert_eq!(graph.callees[5], [1], "`a.Helper` is pkg/a's: {:?}", graph.callees);
}

#[test]
fn every_language_row_has_a_test_rule_for_its_files_and_items() {
    use coret::lang::{is_test_path, Lang};
    for (path, lang) in [
        ("src/core_test.go", Lang::Go),
        ("src/cart.test.js", Lang::JavaScript),
        ("src/__tests__/cart.ts", Lang::TypeScript),
        ("src/test/java/com/x/Cart.java", Lang::Java),
        ("tests/zbuf.c", Lang::C),
        ("test/format.cc", Lang::Cpp),
        ("src/tests.rs", Lang::Rust),
    ] {
        assert!(is_test_path(path), "{} {path}", lang.name());
    }
    let rust = Lang::Rust.spec().test_attribute;
    assert!(rust("#[test]") && rust("#[cfg(test)]") && rust("#[tokio::test]"));
    assert!(!rust("#[cfg(not(test))]") && !rust("#[inline]") && !rust("#[cfg(any(test,feature=\"x\"))]"));
}

#[test]
fn unresolved_calls_are_kept_as_call_sites_of_the_chunks_they_name() {
    let files = [fixture("terminal.go")];
    let graph = CallGraph::build(&files);
    let all: Vec<&str> = files[0].chunks.iter().map(|c| c.name.as_str()).collect();
    let id = |n: &str| all.iter().position(|c| *c == n).unwrap();
    assert!(graph.callers[id("Window.Height")].is_empty(), "`t.pwindow` has no known type");
    assert_eq!(graph.unresolved_callers[id("Window.Height")], [(id("Terminal.resize") as u32, 16)]);
    assert!(graph.unresolved_callers[id("Terminal.margin")].is_empty(), "resolved: a caller, not a site");
}
