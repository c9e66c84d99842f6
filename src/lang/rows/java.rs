//! Java: methods, constructors, classes, interfaces, enums, records; `this` implied in calls.

use tree_sitter::Node;

use super::super::rules::{field_text, function, named, CallForm, Role, Rules, Syntax};
use super::super::spec::{Family, Lang, LangSpec, Reader};
use super::super::written::Written;
use super::{file_name, C_FAMILY};

pub(in crate::lang) const ROW: LangSpec = LangSpec {
    lang: Lang::Java,
    name: "Java",
    ids: &["java"],
    extensions: &["java"],
    shares: &[],
    highlight_as: "java",
    grammar: |_| tree_sitter_java::LANGUAGE.into(),
    reader: Reader::Rules,
    syntax: Syntax {
        role,
        calls: &[
            CallForm::Method { kind: "method_invocation", name: "name", object: "object" },
            CallForm::Callee { kind: "object_creation_expression", fields: &["type"] },
        ],
        ..C_FAMILY
    },
    is_test: java_test,
    test_attribute: super::no_test_attribute,
    is_builtin: super::no_builtins,
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

/// Maven's and Gradle's `src/test/` (already a `test/` directory) and `*Test.java` files.
fn java_test(path: &str) -> bool {
    let file = file_name(path);
    file.ends_with("Test.java") || file.ends_with("Tests.java")
}

fn role<'t>(_: &Rules, node: Node<'t>, src: &str) -> Role<'t> {
    match node.kind() {
        "method_declaration" | "constructor_declaration" | "compact_constructor_declaration" => {
            match (field_text(node, "name", src), node.child_by_field_name("body")) {
                (Some(name), Some(_)) => function(name, node, node),
                _ => Role::Other,
            }
        }
        "class_declaration"
        | "interface_declaration"
        | "enum_declaration"
        | "record_declaration"
        | "annotation_type_declaration" => {
            named(node, src, |name| Role::Type { name, outer: node, body: node.child_by_field_name("body") })
        }
        _ => Role::Other,
    }
}
