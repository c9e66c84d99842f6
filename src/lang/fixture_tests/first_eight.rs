//! The first eight rows on their fixtures (`tests/fixtures/lang/`, which eval's gold tests share).

use super::{calls, chunked, expect, shape};
use crate::callgraph::CallGraph;
use crate::chunk::{chunk_file, ChunkKind, FileSyntax};

fn fixture(name: &str) -> FileSyntax {
    chunked(&format!("tests/fixtures/lang/{name}"))
}

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
fn go_functions_types_and_receiver_methods() {
    let file = fixture("server.go");
    expect(
        &file,
        &[
            ("<module>", "module", 1, 34, "package server"),
            ("Server", "class", 6, 10, "// Server holds the listener state."),
            ("Handler", "class", 12, 15, "// Handler handles one request."),
            ("NewServer", "function", 17, 20, "// NewServer makes a server."),
            ("defaultPort", "function", 22, 24, "func defaultPort() int {"),
            ("Server.Serve", "method", 26, 30, "// Serve starts serving."),
            ("Server.log", "method", 32, 34, "func (s *Server) log(msg string) {"),
        ],
    );
    let files = [file];
    assert_eq!(calls(&files, "NewServer").0, ["defaultPort"]);
    let (callees, unresolved) = calls(&files, "Server.Serve");
    assert_eq!(callees, ["Server.log"], "`s.log()` through the receiver's own name");
    assert!(unresolved.is_empty(), "fmt.Errorf is a library's: {unresolved:?}");
}

#[test]
fn javascript_classes_functions_arrows_and_assigned_functions() {
    let file = fixture("cart.js");
    expect(
        &file,
        &[
            ("<module>", "module", 1, 31, "'use strict';"),
            ("Cart", "class", 4, 19, "/**"),
            ("Cart.constructor", "method", 8, 10, "class Cart {"),
            ("Cart.total", "method", 12, 14, "class Cart {"),
            ("Cart.subtotal", "method", 16, 18, "class Cart {"),
            ("sum", "function", 21, 23, "function sum(xs) {"),
            ("emptyCart", "function", 25, 25, "const emptyCart = () => new Cart([]);"),
            ("exports.send", "function", 27, 29, "exports.send = function send(body) {"),
        ],
    );
    let class_text = &file.chunks[1].text;
    assert!(class_text.contains("this.items = items || [];"), "the constructor stays whole: {class_text}");
    assert!(class_text.contains("total() { ... }"), "{class_text}");
    let files = [file];
    assert_eq!(calls(&files, "Cart.total").0, ["Cart.subtotal"]);
    assert_eq!(calls(&files, "emptyCart").0, ["Cart"], "`new Cart` is the class");
    let (callees, unresolved) = calls(&files, "exports.send");
    assert_eq!(callees, ["emptyCart"]);
    assert_eq!(unresolved, ["….total"], "a method on an unknown receiver is listed, not guessed");
}

#[test]
fn typescript_interfaces_enums_classes_and_exports() {
    let file = fixture("store.ts");
    expect(
        &file,
        &[
            ("<module>", "module", 1, 26, "import { Item } from './item';"),
            ("Store", "class", 3, 5, "export interface Store {"),
            ("Mode", "class", 7, 10, "export enum Mode {"),
            ("MemoryStore", "class", 12, 22, "export class MemoryStore implements Store {"),
            ("MemoryStore.get", "method", 15, 17, "export class MemoryStore implements Store {"),
            ("MemoryStore.put", "method", 19, 21, "export class MemoryStore implements Store {"),
            ("normalize", "function", 24, 26, "export function normalize(id: string): string {"),
        ],
    );
    let files = [file];
    assert_eq!(calls(&files, "MemoryStore.put").0, ["normalize"]);
}

#[test]
fn java_classes_constructors_methods_and_nested_classes() {
    let file = fixture("Parser.java");
    expect(
        &file,
        &[
            ("<module>", "module", 1, 30, "package com.example.json;"),
            ("Parser", "class", 5, 30, "/**"),
            ("Parser.Parser", "method", 11, 13, "public class Parser extends Base {"),
            ("Parser.next", "method", 15, 17, "public class Parser extends Base {"),
            ("Parser.peek", "method", 19, 21, "public class Parser extends Base {"),
            ("Parser.Token", "class", 23, 29, "static class Token {"),
            ("Parser.Token.kind", "method", 26, 28, "static class Token {"),
        ],
    );
    let files = [file];
    assert_eq!(calls(&files, "Parser.next").0, ["Parser.peek"], "`this` is implied in Java");
}

#[test]
fn c_functions_macros_and_typedef_structs() {
    let file = fixture("zbuf.c");
    expect(
        &file,
        &[
            ("<module>", "module", 1, 20, "#include <stdlib.h>"),
            ("ZBUF_MIN", "macro", 4, 4, "#define ZBUF_MIN(a, b) ((a) < (b) ? (a) : (b))"),
            ("zbuf_t", "class", 6, 9, "typedef struct {"),
            ("zbuf_cap", "function", 11, 13, "static size_t zbuf_cap(size_t n) {"),
            ("zbuf_new", "function", 15, 20, "/* Makes a buffer. */"),
        ],
    );
    let files = [file];
    assert_eq!(calls(&files, "zbuf_cap").0, ["ZBUF_MIN"]);
    assert_eq!(calls(&files, "zbuf_new").0, ["zbuf_cap"], "malloc is the C library's");
}

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

#[test]
fn every_language_row_has_a_test_rule_for_its_files_and_items() {
    use crate::lang::{is_test_path, Lang};
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
fn go_unresolved_calls_keep_the_receiver_name_as_written() {
    let files = [fixture("terminal.go")];
    let (callees, unresolved) = calls(&files, "Terminal.resize");
    assert_eq!(callees, ["Terminal.margin"], "`t.margin()` resolves through the receiver");
    assert_eq!(unresolved, ["t.pwindow.Height"], "as the code says it, not `self.pwindow.Height`");
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
