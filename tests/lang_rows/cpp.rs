//! C++'s row on its fixtures (`tests/fixtures/lang/`).

use super::{calls, expect, shared_fixture as fixture};
use coret::chunk::{chunk_file, ChunkKind};

#[test]
fn cpp_templates_namespaces_inline_and_out_of_class_methods() {
    let file = fixture("format.h");
    expect(
        &file,
        &[
            ("<module>", "module", 1, 32, "#pragma once"),
            ("buffer", "class", 6, 19, "template <typename T>"),
            ("buffer.buffer", "method", 9, 9, "template <typename T>"),
            ("buffer.push_back", "method", 10, 13, "template <typename T>"),
            ("buffer.size", "method", 14, 14, "template <typename T>"),
            ("buffer.grow", "method", 21, 24, "template <typename T>"),
            ("format", "function", 26, 30, "inline std::string format(const char* s) {"),
        ],
    );
    assert_eq!(file.chunks[4].kind, ChunkKind::Method, "`buffer<T>::grow` defined outside the class");
    let files = [file];
    assert_eq!(calls(&files, "buffer.push_back").0, ["buffer.grow"], "`this` is implied in C++");
    let (callees, unresolved) = calls(&files, "format");
    assert!(callees.is_empty(), "{callees:?}");
    assert_eq!(unresolved, ["b.push_back"], "a local's method is listed, not guessed");
}

/// fmt's `FMT_BEGIN_NAMESPACE` (and glibc's `__BEGIN_DECLS`) on a line of its own is a macro
/// the grammar cannot expand: without skipping it, the enum after it is no chunk.
#[test]
fn cpp_definitions_after_bare_macro_lines_are_chunks() {
    let file = fixture("color.h");
    expect(
        &file,
        &[
            ("<module>", "module", 1, 16, "#include \"format.h\""),
            ("color", "class", 6, 9, "enum class color : uint32_t {"),
            ("blend", "function", 11, 13, "int blend(color a, color b) {"),
        ],
    );
    assert!(
        file.chunks[1].text.contains("LAST_COLOR"),
        "an enumerator alone on its line stays: {}",
        file.chunks[1].text
    );
    // The same lines in a language whose row does not skip them: a Go file is parsed whole.
    let go = chunk_file("x.go", "package x\n\nFMT_BEGIN_NAMESPACE\nfunc F() {}\n");
    assert!(go.chunks.iter().any(|c| c.name == "F"));
}
