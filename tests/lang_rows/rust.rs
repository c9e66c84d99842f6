//! Rust's row on its fixtures (`tests/fixtures/lang/`).

use super::{calls, expect, shape, shared_fixture as fixture};
use coret::chunk::ChunkKind;

#[test]
fn rust_functions_types_impl_methods_and_no_test_module() {
    let file = fixture("shapes.rs");
    expect(
        &file,
        &[
            ("<module>", "module", 1, 56, "use std::fmt;"),
            ("Circle", "class", 4, 8, "/// A circle of some radius."),
            ("Shape", "class", 10, 15, "pub trait Shape {"),
            ("Shape.describe", "method", 12, 14, "pub trait Shape {"),
            ("Circle.new", "method", 18, 20, "impl Circle {"),
            ("Circle.checked", "method", 22, 24, "impl Circle {"),
            ("Circle.area", "method", 28, 31, "impl Shape for Circle {"),
            ("Circle.fmt", "method", 35, 37, "impl fmt::Display for Circle {"),
            ("clamp", "function", 40, 42, "fn clamp(x: f64) -> f64 {"),
            ("total_area", "function", 44, 46, "pub fn total_area(shapes: &[Circle]) -> f64 {"),
        ],
    );
    let trait_text = &file.chunks[2].text;
    assert!(trait_text.contains("fn area(&self) -> f64;"), "signatures stay: {trait_text}");
    assert!(trait_text.contains("fn describe(&self) -> String { ... }"), "bodies elided: {trait_text}");
    assert!(!file.chunks[0].text.contains("circle_area"), "#[cfg(test)] code is in no chunk");
    let files = [file];
    assert_eq!(calls(&files, "Circle.new").0, ["Circle.checked"], "Self::checked is the type's own");
    assert_eq!(calls(&files, "Circle.checked").0, ["clamp"]);
    let (callees, unresolved) = calls(&files, "total_area");
    assert_eq!(callees, ["Circle.new"], "`s.area()` has no known receiver type: no edge");
    assert!(unresolved.contains(&"….area".to_string()), "{unresolved:?}");
    assert!(
        !unresolved.iter().any(|u| u.contains("unknown_helper")),
        "a name the repository never defines is not a hole"
    );
}

#[test]
fn rust_item_macros_are_parsed_as_items_and_macro_rules_are_macros() {
    let file = fixture("cfg_macros.rs");
    let got = shape(&file);
    let want = [
        ("<module>", "module", 1, 47, "use std::io;"),
        ("cfg_rt", "macro", 4, 8, "macro_rules! cfg_rt {"),
        ("spawn", "function", 11, 14, "/// Spawns a task."),
        ("JoinHandle", "class", 16, 18, "pub struct JoinHandle {"),
        ("JoinHandle.abort", "method", 21, 23, "impl JoinHandle {"),
        ("Runtime", "class", 27, 29, "pub struct Runtime {"),
        ("Runtime.block_on", "method", 33, 35, "impl Runtime {"),
        ("connect", "function", 43, 43, "pub fn connect() {}"),
    ];
    let want: Vec<(String, &str, usize, usize, String)> =
        want.iter().map(|(n, k, a, b, t)| (n.to_string(), *k, *a, *b, t.to_string())).collect();
    assert_eq!(got[..want.len()], want[..], "{got:#?}");
    let src = std::fs::read_to_string(format!("{}/{}", env!("CARGO_MANIFEST_DIR"), file.path)).unwrap();
    for c in &file.chunks[1..] {
        let code = &c.text[c.text.find('\n').unwrap() + 1..];
        let last = code.lines().last().unwrap_or("").trim();
        assert!(src[c.start_byte..c.end_byte].ends_with(last), "{}: spans are the file's bytes", c.name);
    }
    // `bad!`'s body is no list of items: what parses is kept, the rest stays in the module chunk.
    assert!(got[want.len()..].iter().all(|c| c.2 == 47), "{got:#?}");
    let module = &file.chunks[0].text;
    assert!(module.contains("cfg_rt! {") && module.contains("mod tcp;"), "{module}");
    assert!(!module.contains("schedule(task)") && !module.contains("self.enter()"), "{module}");
    let abort = file.chunks.iter().position(|c| c.name == "JoinHandle.abort").unwrap();
    let sites: Vec<&str> = file.calls[abort].iter().map(|s| s.name.as_str()).collect();
    assert_eq!(sites, ["cancel"], "calls inside item macros are read");
}

#[test]
fn rust_test_items_outside_a_test_module_are_test_chunks() {
    let file = fixture("bench_cmd.rs");
    let tests: Vec<(&str, bool)> = file
        .chunks
        .iter()
        .filter(|c| c.kind != ChunkKind::Module)
        .map(|c| (c.name.as_str(), c.test))
        .collect();
    assert_eq!(
        tests,
        [
            ("parse_time", false),
            ("parses_seconds", true),
            ("parses_async", true),
            ("fixture", true),
            ("Runner.fake", true),
            ("Runner", false),
            ("Runner.run", false),
        ],
        "#[test], #[tokio::test(…)], #[cfg(test)] items and methods of a #[cfg(test)] impl"
    );
    assert!(file.chunks.iter().filter(|c| c.test).all(|c| c.is_test()));
}
