//! Scala 2 and 3: functions, classes, traits, objects and enums (braces or indentation);
//! `this` implied. Grammar: `tree-sitter-scala`, the tree-sitter organisation's own.

use tree_sitter::Node;

use super::super::rules::{function, named, CallForm, Member, Role, Rules, Syntax, Wrapper};
use super::super::spec::{Family, Lang, LangSpec, Reader};
use super::super::written::Written;
use super::{file_name, has_dir, no_builtins, no_test_attribute};

pub(in crate::lang) const ROW: LangSpec = LangSpec {
    lang: Lang::Scala,
    name: "Scala",
    ids: &["scala"],
    // Not `.sc`: Mill build files and worksheets.
    extensions: &["scala"],
    shares: &[],
    highlight_as: "scala",
    grammar: |_| tree_sitter_scala::LANGUAGE.into(),
    reader: Reader::Rules,
    syntax: Syntax {
        role,
        calls: &[
            CallForm::Callee { kind: "call_expression", fields: &["function"] },
            CallForm::FirstChild { kind: "instance_expression" },
        ],
        members: &[Member { kind: "field_expression", object: &["value"], name: "field" }],
        wrappers: &[
            Wrapper { kind: "generic_function", field: "function" },
            Wrapper { kind: "generic_type", field: "type" },
        ],
        names: &["identifier", "type_identifier"],
        selves: &["this"],
        self_words: &["this"],
        supers: &["super"],
        path_roots: &[],
        comments: &["comment", "block_comment"],
        leading: &["comment", "block_comment"],
        attributes: &[],
        constructors: &["this"],
        constructor_is_type_name: false,
        not_a_call: super::no_exceptions,
        clauses: false,
        test_definition: super::no_test_definitions,
    },
    is_test: scala_test,
    test_attribute: no_test_attribute,
    is_builtin: no_builtins,
    implicit_self: true,
    mixins: false,
    family: Family::Jvm,
    module_anchors: &[],
    docstrings: false,
    mask: super::no_mask,
    barrels: &[],
    stubs: &[],
    library_roots: &["main"],
    written: Written::DOTTED,
};

/// `src/test/` (a `test/` directory already), sbt's scripted tests (`src/sbt-test/`), and
/// ScalaTest's, MUnit's and specs2's names.
fn scala_test(path: &str) -> bool {
    let file = file_name(path);
    has_dir(path, &["sbt-test"])
        || ["Test.scala", "Tests.scala", "Spec.scala", "Suite.scala"].iter().any(|s| file.ends_with(s))
}

fn role<'t>(_: &Rules, node: Node<'t>, src: &str) -> Role<'t> {
    match node.kind() {
        "function_definition" => named(node, src, |name| function(name, node, node)),
        "class_definition" | "trait_definition" | "object_definition" | "enum_definition" => {
            named(node, src, |name| Role::Type { name, outer: node, body: node.child_by_field_name("body") })
        }
        _ => Role::Other,
    }
}
