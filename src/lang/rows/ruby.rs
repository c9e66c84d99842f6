//! Ruby: methods (`def m`, `def ssl?`, `def self.m`), classes and modules (their methods are
//! theirs, `class << self` included; a module with no method of its own is a namespace);
//! calls with or without parentheses, a bare name that is no local included; `self` implied,
//! mixed-in methods found by name.
//! Grammar: `tree-sitter-ruby`, the tree-sitter organisation's own.

use tree_sitter::Node;

use super::super::rules::{function, text, CallForm, Member, Place, Role, Rules, Syntax};
use super::super::spec::{Family, Lang, LangSpec, Reader};
use super::super::written::{Form, Written};
use super::{file_name, has_dir, no_builtins, no_test_attribute};

pub(in crate::lang) const ROW: LangSpec = LangSpec {
    lang: Lang::Ruby,
    name: "Ruby",
    ids: &["ruby", "rb"],
    // Not `.gemspec`: a package manifest, never the code an issue is about.
    extensions: &["rb", "rake"],
    shares: &[],
    highlight_as: "rb",
    grammar: |_| tree_sitter_ruby::LANGUAGE.into(),
    reader: Reader::Rules,
    syntax: Syntax {
        role,
        calls: &[
            CallForm::Method { kind: "call", name: "method", object: "receiver" },
            // `reset` alone is `self.reset()` unless `reset` is a local: tree-sitter-ruby
            // parses both as an `identifier` (`reset!`, `reset?` and `reset(x)` are `call`s).
            CallForm::Bare { kind: "identifier", binds: LOCALS, not_calls: NOT_CALLS },
        ],
        members: &[Member { kind: "scope_resolution", object: &["scope"], name: "name" }],
        wrappers: &[],
        names: &["identifier", "constant"],
        selves: &["self"],
        self_words: &[],
        supers: &["super"],
        path_roots: &[],
        comments: &["comment"],
        leading: &["comment"],
        attributes: &[],
        constructors: &["initialize"],
        constructor_is_type_name: false,
        not_a_call: super::no_exceptions,
        clauses: false,
        test_definition: derives_from_a_test_case,
    },
    is_test: ruby_test,
    test_attribute: no_test_attribute,
    is_builtin: no_builtins,
    implicit_self: true,
    mixins: true,
    family: Family::Ruby,
    module_anchors: &[],
    docstrings: false,
    mask: blank_long_heredoc_openers,
    barrels: &[],
    stubs: &[],
    library_roots: &["lib", "app"],
    written: WRITTEN,
};

/// Where an identifier binds a local variable: assignments, parameters (of methods, blocks and
/// lambdas), `rescue => e`, `for x in`, pattern matching (tree-sitter-ruby's `locals.scm`).
const LOCALS: &[Place] = &[
    Place { parent: "assignment", field: "left" },
    Place { parent: "operator_assignment", field: "left" },
    Place { parent: "left_assignment_list", field: "" },
    Place { parent: "rest_assignment", field: "" },
    Place { parent: "destructured_left_assignment", field: "" },
    Place { parent: "method_parameters", field: "" },
    Place { parent: "lambda_parameters", field: "" },
    Place { parent: "block_parameters", field: "" },
    Place { parent: "destructured_parameter", field: "" },
    Place { parent: "optional_parameter", field: "name" },
    Place { parent: "keyword_parameter", field: "name" },
    Place { parent: "splat_parameter", field: "name" },
    Place { parent: "hash_splat_parameter", field: "name" },
    Place { parent: "block_parameter", field: "name" },
    Place { parent: "exception_variable", field: "" },
    Place { parent: "for", field: "pattern" },
    Place { parent: "in_clause", field: "pattern" },
    Place { parent: "as_pattern", field: "name" },
    Place { parent: "array_pattern", field: "" },
    Place { parent: "find_pattern", field: "" },
    Place { parent: "keyword_pattern", field: "value" },
];

/// Where an identifier is neither a call nor a local: a call's method name (the `call` is the
/// call), a `def`'s own name, `alias`/`undef` operands, `^x` in a pattern (a local read).
const NOT_CALLS: &[Place] = &[
    Place { parent: "call", field: "method" },
    Place { parent: "method", field: "name" },
    Place { parent: "singleton_method", field: "name" },
    Place { parent: "singleton_method", field: "object" },
    Place { parent: "setter", field: "" },
    Place { parent: "alias", field: "" },
    Place { parent: "undef", field: "" },
    Place { parent: "variable_reference_pattern", field: "" },
];

/// RSpec's `spec/` and `*_spec.rb`, minitest's `*_test.rb` and `test_*.rb`.
fn ruby_test(path: &str) -> bool {
    let file = file_name(path);
    has_dir(path, &["spec"])
        || file.ends_with("_spec.rb")
        || file.ends_with("_test.rb")
        || file.starts_with("test_")
}

/// tree-sitter-ruby 0.23.1's scanner keeps a heredoc identifier's length in one byte and
/// aborts the whole process (a C `assert`) on one of 256 bytes or more, or on a quoted
/// opener whose quote never closes (tree-sitter-ruby#269; fixed on its master, unreleased;
/// found by `scripts/test/fuzz-rows.sh`). Such an opener's `<<` is blanked before parsing: the
/// rest of the file still parses, and a real heredoc identifier is never that long.
fn blank_long_heredoc_openers(src: &str) -> Option<String> {
    const LONGEST: usize = 200;
    let bytes = src.as_bytes();
    let mut masked: Option<Vec<u8>> = None;
    let mut from = 0;
    while let Some(at) = src[from..].find("<<").map(|i| from + i) {
        let mut word = at + 2;
        if matches!(bytes.get(word), Some(b'~' | b'-')) {
            word += 1;
        }
        let length = match bytes.get(word) {
            Some(&quote) if matches!(quote, b'\'' | b'"' | b'`') => {
                bytes[word + 1..].iter().position(|&b| b == quote).unwrap_or(usize::MAX)
            }
            _ => bytes[word..]
                .iter()
                .take_while(|&&b| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80)
                .count(),
        };
        if length >= LONGEST {
            masked.get_or_insert_with(|| bytes.to_vec())[at..at + 2].copy_from_slice(b"  ");
        }
        from = at + 2;
    }
    masked.map(|m| String::from_utf8(m).expect("blanking ASCII keeps UTF-8"))
}

/// A module's or class's name as its definition writes it, `::` between the parts read as the
/// nesting it stands for: `module ActiveRecord::Associations::Builder` is
/// `ActiveRecord.Associations.Builder`, as three nested `module`s are (a leading `::`, the
/// top level, dropped).
fn constant_path(node: Node, src: &str) -> Option<String> {
    let parts: Vec<String> =
        text(node, src).split("::").map(str::trim).filter(|p| !p.is_empty()).map(str::to_string).collect();
    let parts = parts.iter().map(|p| type_name_text(p)).collect::<Option<Vec<_>>>()?;
    (!parts.is_empty()).then(|| parts.join("."))
}

/// A constant's name: a letter or `_` first.
fn type_name_text(part: &str) -> Option<String> {
    part.starts_with(|c: char| c.is_alphabetic() || c == '_').then(|| part.to_string())
}

/// A method's name as Ruby spells it, `?`, `!` and a setter's `=` kept (`ssl?` and `ssl` are
/// two methods); operators (`==`, `[]`) are no chunks.
fn method_name(node: Node, src: &str) -> Option<String> {
    let name = text(node.child_by_field_name("name")?, src).trim();
    (name.starts_with(|c: char| c.is_alphabetic() || c == '_')).then(|| name.to_string())
}

/// `ActiveRecord::Base#save`, `Base.create` (`def self.create`, `class << self`); a `module`
/// with methods of its own is a module.
const WRITTEN: Written =
    Written { path: "::", method: "#", instance: "#", singleton: ".", modules_and_functions: false, form };

fn form(node: Node, _: &str) -> Form {
    match node.kind() {
        "singleton_method" => Form::Singleton,
        "method" if in_singleton_class(node) => Form::Singleton,
        "module" => Form::Module,
        _ => Form::Plain,
    }
}

/// Whether a `def` is in a `class << self` of its class (not in a class nested inside one).
fn in_singleton_class(node: Node) -> bool {
    let mut at = node.parent();
    while let Some(n) = at {
        match n.kind() {
            "singleton_class" => return true,
            "class" | "module" => return false,
            _ => at = n.parent(),
        }
    }
    false
}

fn role<'t>(_: &Rules, node: Node<'t>, src: &str) -> Role<'t> {
    let name = || node.child_by_field_name("name").and_then(|n| constant_path(n, src));
    match node.kind() {
        "method" | "singleton_method" => match method_name(node, src) {
            Some(name) => function(name, node, node),
            None => Role::Other,
        },
        // `module Rack` around classes, no method of its own: a namespace, not a huge class.
        "module" => match (name(), node.child_by_field_name("body")) {
            (Some(name), Some(body)) if !defines_methods(body) => Role::Namespace { name, outer: node, body },
            (Some(name), body) => Role::Type { name, outer: node, body },
            (None, _) => Role::Other,
        },
        // `class Admin::User < Base`: named by its whole path, `Admin.User`, as nesting it in
        // `module Admin` names it (issue 81: one namespace spelled one way).
        "class" => match name() {
            Some(name) => Role::Type { name, outer: node, body: node.child_by_field_name("body") },
            None => Role::Other,
        },
        _ => Role::Other,
    }
}

/// Whether a module's body defines methods of its own (`def m`, `def self.m`, `class << self`):
/// a mixin or a utility module, a type; without any it only wraps definitions.
fn defines_methods(body: Node) -> bool {
    (0..body.named_child_count())
        .filter_map(|i| body.named_child(i))
        .any(|c| matches!(c.kind(), "method" | "singleton_method" | "singleton_class"))
}

/// A class deriving from a test case (`Minitest::Test`, `ActiveSupport::TestCase`,
/// `ActionDispatch::IntegrationTest`, `Test::Unit::TestCase`) is test code wherever its file is:
/// a root `test.rb` of one must not outrank the code it tests (issue 70).
fn derives_from_a_test_case(node: Node, src: &str) -> bool {
    if node.kind() != "class" {
        return false;
    }
    let Some(base) = node.child_by_field_name("superclass").and_then(|s| s.named_child(0)) else {
        return false;
    };
    let base = text(base, src);
    let last = base.rsplit("::").next().unwrap_or(base);
    last.ends_with("Test") || last.ends_with("TestCase")
}
