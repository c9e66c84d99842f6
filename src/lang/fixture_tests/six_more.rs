//! The six rows added through the table alone (C#, Ruby, PHP, Kotlin, Swift, Scala), each on a
//! fixture in `src/lang/fixtures/`.

use super::{calls, chunked, clean_fixture as fixture, expect};

#[test]
fn csharp_classes_constructors_properties_and_this_calls() {
    let file = fixture("Inventory.cs");
    expect(
        &file,
        &[
            ("<module>", "module", 1, 60, "using System;"),
            ("Inventory", "class", 6, 44, "/// <summary>Items on the shelves, by SKU.</summary>"),
            ("Inventory.Inventory", "method", 11, 14, "public class Inventory {"),
            ("Inventory.Total", "method", 18, 21, "public class Inventory {"),
            ("Inventory.Put", "method", 23, 27, "public class Inventory {"),
            ("Inventory.Add", "method", 29, 34, "public class Inventory {"),
            ("Inventory.Sum", "method", 36, 41, "public class Inventory {"),
            ("Inventory.Normalise", "method", 43, 43, "public class Inventory {"),
            ("Audit", "class", 46, 52, "public static class Audit"),
            ("Audit.Record", "method", 48, 51, "public static class Audit {"),
            ("IShelf", "class", 54, 57, "public interface IShelf"),
            ("Unit", "class", 59, 59, "public enum Unit { Piece, Box }"),
        ],
    );
    let class = &file.chunks[1].text;
    assert!(class.contains("Capacity = capacity;"), "the constructor stays whole: {class}");
    assert!(class.contains("public void Add(string sku, int n)\n        { ... }"), "bodies elided: {class}");
    assert!(!class.contains("Audit.Record(clean)"), "bodies elided: {class}");
    assert!(file.chunks[4].text.contains("[Obsolete(\"use Add\")]"), "attributes belong to their method");
    let files = [file];
    assert_eq!(calls(&files, "Inventory.Put").0, ["Inventory.Add"], "this.Add is the class's own");
    assert_eq!(
        calls(&files, "Inventory.Total").0,
        ["Inventory.Sum"],
        "a bare call inside a class: this implied"
    );
    let (callees, unresolved) = calls(&files, "Inventory.Add");
    assert_eq!(callees, ["Inventory.Normalise", "Audit.Record"]);
    assert!(unresolved.is_empty(), "library calls (counts.GetValueOrDefault) are no holes: {unresolved:?}");
}

#[test]
fn ruby_modules_classes_singleton_methods_and_calls_without_parentheses() {
    let file = fixture("cart.rb");
    expect(
        &file,
        &[
            ("<module>", "module", 1, 45, "require \"json\""),
            // Its doc comment, the first thing in `module Shop`, belongs to it.
            ("Shop.Cart", "class", 4, 34, "# A customer's cart."),
            ("Shop.Cart.initialize", "method", 6, 9, "class Cart < Base"),
            ("Shop.Cart.add", "method", 11, 15, "class Cart < Base"),
            ("Shop.Cart.total", "method", 17, 19, "class Cart < Base"),
            ("Shop.Cart.empty", "method", 21, 23, "class Cart < Base"),
            ("Shop.Cart.validate", "method", 27, 29, "class Cart < Base"),
            ("Shop.Cart.touch", "method", 31, 33, "class Cart < Base"),
            ("Shop.Pricing", "class", 36, 40, "module Pricing"),
            ("Shop.Pricing.price_of", "method", 37, 39, "module Pricing"),
            ("checkout", "function", 43, 45, "def checkout(cart)"),
        ],
    );
    assert!(file.chunks[1].text.contains("@items = []"), "initialize stays whole in its class");
    assert!(file.chunks[0].text.contains("module Shop"), "a module around classes only is module code");
    let files = [file];
    assert_eq!(calls(&files, "Shop.Cart.add").0, ["Shop.Cart.validate", "Shop.Cart.touch"]);
    assert_eq!(
        calls(&files, "Shop.Cart.total").0,
        ["Shop.Pricing.price_of"],
        "Pricing.price_of by its module"
    );
    let (callees, unresolved) = calls(&files, "checkout");
    assert!(callees.is_empty(), "cart's class is not known: no edge");
    assert_eq!(unresolved, ["cart.total"], "but the call is listed, not lost");
    assert!(calls(&files, "Shop.Cart.touch").1.is_empty(), "Time.now is the library's");
}

/// Issue 70: `def ssl?` is `ssl?`, not `ssl` (which `empty?` and `empty` would share), and a
/// call of `ssl?` reaches it.
#[test]
fn ruby_method_names_keep_their_question_and_bang_marks() {
    let file = fixture("request.rb");
    let names: Vec<&str> = file.chunks.iter().map(|c| c.name.as_str()).collect();
    for name in [
        "Rack.Request.buffered_body!",
        "Rack.Request.Helpers.ssl?",
        "Rack.Request.Helpers.empty?",
        "Rack.Request.Helpers.empty",
    ] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    assert!(!names.contains(&"Rack.Request.Helpers.ssl"), "{names:?}");
    let files = [file];
    assert_eq!(calls(&files, "Rack.Request.Helpers.secure_cookies").0, ["Rack.Request.Helpers.ssl?"]);
}

/// Issue 70: in Ruby a bare name that is no local (`parse_cookies_from_header`) is a call on
/// `self`, and so is `get_header(HTTPS)`; a method a module mixes in (`include Env`) is found
/// by its name in the file; locals and parameters are no calls.
#[test]
fn ruby_calls_without_a_receiver_reach_the_class_and_its_mixins() {
    let files = [fixture("request.rb")];
    assert_eq!(
        calls(&files, "Rack.Request.initialize"),
        (vec!["Rack.Request.parse_cookies_from_header".into(), "Rack.Request.buffered_body!".into()], vec![]),
        "a bare name and a bang method, `self` implied"
    );
    assert_eq!(
        calls(&files, "Rack.Request.parse_cookies_from_header"),
        (vec!["Rack.Request.Env.get_header".into()], vec![]),
        "`header` is a local: no call; `get_header` is Env's, mixed in"
    );
    assert_eq!(
        calls(&files, "Rack.Request.Helpers.scheme").0,
        ["Rack.Request.Env.get_header", "Rack.Request.Helpers.forwarded_scheme"],
    );
    assert_eq!(calls(&files, "Rack.Request.Helpers.ssl?").0, ["Rack.Request.Helpers.scheme"]);
    assert_eq!(
        calls(&files, "Rack.Request.Helpers.forwarded_scheme"),
        (vec![], vec![]),
        "`scheme` is the parameter here, not the method"
    );
    assert_eq!(calls(&files, "Rack.Request.Helpers.empty?"), (vec![], vec![]), "no `content_length` here");
}

/// A bare name several types define, none the caller's own, is listed, never guessed; a
/// repository-unique one is an edge; a local of that name is no call at all.
#[test]
fn ruby_bare_calls_several_types_define_are_listed_not_guessed() {
    let chunk = crate::chunk::chunk_file;
    let files = [
        chunk(
            "lib/app.rb",
            "class App
  def run
    flush
    render
  end

  def quiet
    flush = 0
    flush
  end
end
",
        ),
        chunk(
            "lib/a.rb",
            "module A
  def flush
  end

  def render
  end
end
",
        ),
        chunk(
            "lib/b.rb",
            "module B
  def flush
  end
end
",
        ),
    ];
    assert_eq!(calls(&files, "App.run"), (vec!["A.render".into()], vec!["flush".into()]));
    assert_eq!(calls(&files, "App.quiet"), (vec![], vec![]), "`flush = 0` makes `flush` a local");
}

/// Issue 70: `module Rack` around a whole file defines no method of its own: a namespace
/// that qualifies its classes' names, not one class chunk spanning them all.
#[test]
fn a_ruby_module_that_only_wraps_definitions_is_no_class_chunk() {
    let file = fixture("request.rb");
    let kind = |name: &str| file.chunks.iter().find(|c| c.name == name).map(|c| c.kind.as_str());
    assert_eq!(kind("Rack"), None, "no chunk spans the file as a class");
    assert_eq!(kind("Rack.Request"), Some("class"));
    assert_eq!(kind("Rack.Request.Helpers"), Some("class"), "a mixin with methods stays a type");
    let module = &file.chunks[0];
    assert_eq!(module.kind.as_str(), "module");
    assert!(
        module.text.contains("module Rack"),
        "the wrapper's lines are module-level code: {}",
        module.text
    );
    let method = file.chunks.iter().find(|c| c.name == "Rack.Request.Helpers.ssl?").unwrap();
    assert!(
        method.text.contains("module Helpers\n"),
        "a method shows its own type's header: {}",
        method.text
    );
}

/// Issue 70: a preprocessor line inside a class header (`#if NET5_0_OR_GREATER` before a
/// base list) never names the class; directives anywhere (`#region`, both branches of an
/// `#if`) leave the definitions around them whole.
#[test]
fn csharp_directives_in_a_class_header_do_not_rename_the_class() {
    let source = "using System;\n\nnamespace Dapper\n{\n    public static partial class SqlMapper\n    {\n        public partial class GridReader\n#if NET5_0_OR_GREATER\n            : IAsyncDisposable\n#endif\n        {\n            #region Reading\n            public T Read<T>() { return ReadImpl<T>(); }\n            #endregion\n\n#if DEBUG\n            private T ReadImpl<T>() { return default; }\n#else\n            private T ReadImpl<T>() { return default(T); }\n#endif\n        }\n    }\n}\n";
    let file = crate::chunk::chunk_file("Dapper/SqlMapper.GridReader.cs", source);
    let names: Vec<&str> = file.chunks.iter().map(|c| c.name.as_str()).collect();
    assert!(names.contains(&"SqlMapper.GridReader"), "{names:?}");
    assert!(names.contains(&"SqlMapper.GridReader.Read"), "{names:?}");
    assert!(!names.iter().any(|n| n.contains("NET5_0_OR_GREATER")), "{names:?}");
    let class = file.chunks.iter().find(|c| c.name == "SqlMapper.GridReader").unwrap();
    assert!(class.text.contains("#if NET5_0_OR_GREATER"), "texts come from the original: {}", class.text);
    assert_eq!((class.start_line, class.end_line), (7, 21));
}

#[test]
fn php_classes_this_self_and_functions_in_a_namespace() {
    let file = fixture("Kernel.php");
    expect(
        &file,
        &[
            ("<module>", "module", 1, 46, "<?php"),
            ("Kernel", "class", 7, 36, "/**"),
            ("Kernel.__construct", "method", 14, 17, "class Kernel extends BaseKernel {"),
            ("Kernel.handle", "method", 19, 25, "class Kernel extends BaseKernel {"),
            ("Kernel.prepare", "method", 27, 30, "class Kernel extends BaseKernel {"),
            ("Kernel.dispatch", "method", 32, 35, "class Kernel extends BaseKernel {"),
            ("Terminable", "class", 38, 41, "interface Terminable"),
            ("format_response", "function", 43, 46, "function format_response($response)"),
        ],
    );
    assert!(file.chunks[6].text.contains("public function terminate($request, $response);"));
    let files = [file];
    let (callees, unresolved) = calls(&files, "Kernel.handle");
    assert_eq!(
        callees,
        ["Kernel.prepare", "Kernel.dispatch", "format_response"],
        "$this->, self:: and a function"
    );
    assert!(unresolved.is_empty(), "Logger::info is outside the repository: {unresolved:?}");
    assert!(calls(&files, "Kernel.prepare").0.is_empty(), "$request->withHeader is no edge");
}

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

#[test]
fn swift_classes_extensions_protocols_and_self_calls() {
    let file = fixture("Session.swift");
    expect(
        &file,
        &[
            ("<module>", "module", 1, 47, "import Foundation"),
            ("Session", "class", 3, 26, "/// A signed-in user's session."),
            ("Session.init", "method", 8, 11, "final class Session {"),
            ("Session.refresh", "method", 13, 17, "final class Session {"),
            ("Session.notify", "method", 19, 21, "final class Session {"),
            ("Session.defaultExpiry", "method", 23, 25, "final class Session {"),
            ("Session.invalidate", "method", 31, 34, "extension Session {"),
            ("Store", "class", 37, 39, "protocol Store {"),
            ("Token", "class", 41, 43, "struct Token {"),
            ("log", "function", 45, 47, "func log(_ message: String) {"),
        ],
    );
    assert!(file.chunks[0].text.contains("var isExpired"), "an extension's properties stay in module code");
    let files = [file];
    assert_eq!(calls(&files, "Session.refresh").0, ["Session.defaultExpiry", "log", "Session.notify"]);
    assert_eq!(calls(&files, "Session.invalidate").0, ["Session.refresh"], "self implied in an extension");
    let (callees, unresolved) = calls(&files, "Session.notify");
    assert!(callees.is_empty() && unresolved.is_empty(), "NotificationCenter is Foundation's");
}

#[test]
fn scala_classes_companion_objects_traits_and_this_calls() {
    let file = fixture("Ledger.scala");
    expect(
        &file,
        &[
            ("<module>", "module", 1, 35, "package shop.ledger"),
            ("Ledger", "class", 5, 21, "/** Entries of one account. */"),
            ("Ledger.this", "method", 9, 9, "class Ledger(owner: String) {"),
            ("Ledger.post", "method", 11, 16, "class Ledger(owner: String) {"),
            ("Ledger.audit", "method", 18, 18, "class Ledger(owner: String) {"),
            ("Ledger.balance", "method", 20, 20, "class Ledger(owner: String) {"),
            ("Ledger", "class", 23, 26, "object Ledger {"),
            ("Ledger.check", "method", 24, 24, "object Ledger {"),
            ("Ledger.open", "method", 25, 25, "object Ledger {"),
            ("Entry", "class", 28, 28, "case class Entry(amount: BigDecimal)"),
            ("Account", "class", 30, 33, "trait Account {"),
            ("Account.describe", "method", 32, 32, "trait Account {"),
            ("summary", "function", 35, 35, "def summary(l: Ledger): String = l.balance.toString"),
        ],
    );
    let files = [file];
    let (callees, unresolved) = calls(&files, "Ledger.post");
    assert_eq!(callees, ["Entry", "Ledger.audit", "Ledger.check"], "Entry(…), this.audit, Ledger.check");
    assert!(unresolved.is_empty(), "{unresolved:?}");
    assert_eq!(
        calls(&files, "Ledger.open").1,
        ["Ledger"],
        "class and object share the name: listed, not guessed"
    );
}

/// tree-sitter-ruby 0.23.1 aborts the process on a heredoc identifier of 256 bytes or more
/// (tree-sitter-ruby#269): the row blanks such an opener, so the file is indexed, not fatal.
#[test]
fn ruby_long_heredoc_openers_neither_abort_nor_hide_the_definitions_after_them() {
    let word = "W".repeat(300);
    let source = format!(
        "def before\n  x = <<~{word}\n    text\n  {word}\nend\n\ndef unclosed\n  @items <<' [item]\nend\n\ndef after(a)\n  a << 'ok'\nend\n"
    );
    let file = crate::chunk::chunk_file("lib/odd.rb", &source);
    let names: Vec<&str> = file.chunks.iter().map(|c| c.name.as_str()).collect();
    assert!(names.contains(&"before"), "{names:?}");
    assert!(file.chunks.iter().all(|c| source.get(c.start_byte..c.end_byte).is_some()));
    let after = file.chunks.iter().find(|c| c.name == "after");
    assert!(after.is_none_or(|c| c.text.contains("a << 'ok'")), "spans come from the original text");
}

/// A broken Kotlin file (a mutated fixture, found by `scripts/fuzz-rows.sh`) on which the
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
        .all(|c| c.kind == crate::chunk::ChunkKind::Module || c.kind == crate::chunk::ChunkKind::Window));
}

/// Issue 70: a root `test.rb` that defines a test case is test code (demoted, hidden by `T`,
/// left to BM25), though its path names no test directory; a class of the same file deriving
/// from anything else is not.
#[test]
fn ruby_classes_deriving_from_a_test_case_are_test_code_wherever_they_are() {
    let source = "class TestControllerTest < ActionDispatch::IntegrationTest\n  def test_index\n    get \"/\"\n  end\nend\n\nclass Widget < ApplicationRecord\n  def size\n    1\n  end\nend\n\nclass CartTest < Minitest::Test\nend\n";
    let file = crate::chunk::chunk_file("test.rb", source);
    let test: Vec<(&str, bool)> = file.chunks.iter().map(|c| (c.name.as_str(), c.is_test())).collect();
    assert_eq!(
        test,
        [
            ("TestControllerTest", true),
            ("TestControllerTest.test_index", true),
            ("Widget", false),
            ("Widget.size", false),
            ("CartTest", true),
        ]
    );
}
