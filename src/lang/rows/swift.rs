//! Swift: functions, initialisers, classes, structs, enums, actors and protocols; an
//! `extension Foo { … }` adds methods to `Foo` without a chunk of its own; `self` implied.
//! Grammar: `tree-sitter-swift` (alex-pinkus), the maintained one the tree-sitter wiki lists.

use tree_sitter::Node;

use super::super::rules::{field_text, function, type_name, CallForm, Member, Role, Rules, Syntax, Wrapper};
use super::super::spec::{Family, Lang, LangSpec, Reader};
use super::super::written::Written;
use super::{file_name, has_dir, no_builtins, no_test_attribute};

pub(in crate::lang) const ROW: LangSpec = LangSpec {
    lang: Lang::Swift,
    name: "Swift",
    ids: &["swift"],
    extensions: &["swift"],
    shares: &[],
    // syntect's defaults have no Swift; Go's (`func`, `var`, `struct`, `switch`) colours it best.
    highlight_as: "go",
    grammar: |_| tree_sitter_swift::LANGUAGE.into(),
    reader: Reader::Rules,
    syntax: Syntax {
        role,
        calls: &[CallForm::FirstChild { kind: "call_expression" }],
        members: &[Member { kind: "navigation_expression", object: &["target"], name: "suffix" }],
        wrappers: &[Wrapper { kind: "navigation_suffix", field: "suffix" }],
        names: &["simple_identifier", "type_identifier"],
        selves: &["self_expression"],
        self_words: &[],
        supers: &["super_expression"],
        path_roots: &[],
        comments: &["comment", "multiline_comment"],
        leading: &["comment", "multiline_comment"],
        attributes: &[],
        constructors: &["init"],
        constructor_is_type_name: false,
        not_a_call: super::no_exceptions,
        clauses: false,
        test_definition: super::no_test_definitions,
    },
    is_test: swift_test,
    test_attribute: no_test_attribute,
    is_builtin: no_builtins,
    implicit_self: true,
    mixins: false,
    family: Family::Swift,
    module_anchors: &[],
    docstrings: false,
    mask: super::no_mask,
    barrels: &[],
    stubs: &[],
    library_roots: &[],
    written: Written::DOTTED,
};

/// SwiftPM's `Tests/` (and `IntegrationTests/`, any folder ending in `Tests`), test packages
/// under `Fixtures/`, and `*Tests.swift`, `*Test.swift`.
fn swift_test(path: &str) -> bool {
    let file = file_name(path);
    has_dir(path, &["Fixtures"])
        || path.split('/').rev().skip(1).any(|d| d.ends_with("Tests"))
        || file.ends_with("Tests.swift")
        || file.ends_with("Test.swift")
}

fn role<'t>(_: &Rules, node: Node<'t>, src: &str) -> Role<'t> {
    match node.kind() {
        "function_declaration" => match field_text(node, "name", src) {
            Some(name) => function(name, node, node),
            None => Role::Other,
        },
        "init_declaration" => function("init".into(), node, node),
        "class_declaration" => {
            let name = node.child_by_field_name("name").and_then(|n| type_name(n, src));
            let body = node.child_by_field_name("body");
            let extension =
                node.child_by_field_name("declaration_kind").is_some_and(|k| k.kind() == "extension");
            match (name, body) {
                (Some(type_name), Some(body)) if extension => Role::Impl { type_name, outer: node, body },
                (Some(name), body) => Role::Type { name, outer: node, body },
                (None, _) => Role::Other,
            }
        }
        "protocol_declaration" => match node.child_by_field_name("name").and_then(|n| type_name(n, src)) {
            Some(name) => Role::Type { name, outer: node, body: node.child_by_field_name("body") },
            None => Role::Other,
        },
        _ => Role::Other,
    }
}
