//! Kotlin's row on its fixtures (`src/lang/fixtures/`).

use super::{calls, chunked, clean_fixture as fixture, expect};

#[test]
fn kotlin_companions_secondary_constructors_and_extension_functions() {
    let file = fixture("Repository.kt");
    expect(
        &file,
        &[
            ("<module>", "module", 1, 36, "package shop.data"),
            ("Repository", "class", 5, 28, "/** Keeps orders in memory. */"),
            ("Repository.constructor", "method", 9, 9, "class Repository(private val capacity: Int) {"),
            ("Repository.add", "method", 11, 15, "class Repository(private val capacity: Int) {"),
            ("Repository.check", "method", 17, 19, "class Repository(private val capacity: Int) {"),
            ("Repository.trim", "method", 21, 23, "class Repository(private val capacity: Int) {"),
            ("Repository.empty", "method", 26, 26, "class Repository(private val capacity: Int) {"),
            ("Order", "class", 30, 30, "data class Order(val id: Int)"),
            ("Repository.addAll", "method", 32, 34, "fun Repository.addAll(list: List<Order>) {"),
            ("largest", "function", 36, 36, "fun largest(a: Int, b: Int): Int = max(a, b)"),
        ],
    );
    let files = [file];
    assert_eq!(calls(&files, "Repository.add").0, ["Repository.check", "Repository.trim"]);
    assert_eq!(calls(&files, "Repository.empty").0, ["Repository"], "Repository() constructs the class");
    assert_eq!(
        calls(&files, "Repository.addAll").0,
        ["Repository.add"],
        "an extension sees its type's methods"
    );
    assert!(calls(&files, "largest").0.is_empty(), "kotlin.math.max is the library's");
}

/// A broken Kotlin file (a mutated fixture, found by `scripts/test/fuzz-rows.sh`) on which the
/// grammar's error recovery runs for minutes: the parse gives up at its budget and the file
/// comes back as module code in windows, marked as not parsed, instead of hanging the index.
#[test]
fn a_parse_that_outlives_its_budget_ends_without_definitions() {
    let file = chunked("src/lang/fixtures/slow/recovery.kt");
    assert!(file.has_syntax_errors);
    assert!(!file.chunks.is_empty(), "its code is still embedded and searchable");
    assert!(file
        .chunks
        .iter()
        .all(|c| c.kind == coret::chunk::ChunkKind::Module || c.kind == coret::chunk::ChunkKind::Window));
}
