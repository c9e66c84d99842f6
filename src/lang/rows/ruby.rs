//! Ruby: methods (`def m`, `def self.m`), classes and modules (their methods are theirs,
//! `class << self` included); calls with or without parentheses; `self` implied.
//! Grammar: `tree-sitter-ruby`, the tree-sitter organisation's own.

use tree_sitter::Node;

use super::super::rules::{function, type_name, CallForm, Member, Role, Rules, Syntax};
use super::super::spec::{Family, Lang, LangSpec, Reader};
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
        calls: &[CallForm::Method { kind: "call", name: "method", object: "receiver" }],
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
    },
    is_test: ruby_test,
    test_attribute: no_test_attribute,
    is_builtin: no_builtins,
    implicit_self: true,
    family: Family::Ruby,
    lifts_module: true,
    skips_bare_macros: false,
};

/// RSpec's `spec/` and `*_spec.rb`, minitest's `*_test.rb` and `test_*.rb`.
fn ruby_test(path: &str) -> bool {
    let file = file_name(path);
    has_dir(path, &["spec"])
        || file.ends_with("_spec.rb")
        || file.ends_with("_test.rb")
        || file.starts_with("test_")
}

fn role<'t>(_: &Rules, node: Node<'t>, src: &str) -> Role<'t> {
    let name = || node.child_by_field_name("name").and_then(|n| type_name(n, src));
    match node.kind() {
        "method" | "singleton_method" => match name() {
            Some(name) => function(name, node, node),
            None => Role::Other,
        },
        // `class Admin::User < Base`: named by its last constant.
        "class" | "module" => match name() {
            Some(name) => Role::Type { name, outer: node, body: node.child_by_field_name("body") },
            None => Role::Other,
        },
        _ => Role::Other,
    }
}
