//! Kotlin: functions, extension functions (`fun Foo.bar()` is a method of `Foo`), classes,
//! interfaces, objects and companion objects (their functions belong to the class), secondary
//! constructors; `this` implied. Grammar: `tree-sitter-kotlin-ng`, tree-sitter-grammars'
//! maintained one (the older `tree-sitter-kotlin` crate pins tree-sitter below 0.25).

use tree_sitter::Node;

use super::super::rules::{
    child_of_kind, field_text, text, type_name, CallForm, Member, Role, Rules, Syntax,
};
use super::super::spec::{Family, Lang, LangSpec, Reader};
use super::super::written::Written;
use super::{file_name, no_builtins, no_test_attribute};

pub(in crate::lang) const ROW: LangSpec = LangSpec {
    lang: Lang::Kotlin,
    name: "Kotlin",
    ids: &["kotlin", "kt"],
    // Not `.kts`: mostly Gradle build scripts, never the code an issue is about.
    extensions: &["kt"],
    shares: &[],
    // syntect's defaults have no Kotlin; Scala's keywords (`val`, `var`, `object`) are its nearest.
    highlight_as: "scala",
    grammar: |_| tree_sitter_kotlin_ng::LANGUAGE.into(),
    reader: Reader::Rules,
    syntax: Syntax {
        role,
        calls: &[CallForm::FirstChild { kind: "call_expression" }],
        members: &[Member { kind: "navigation_expression", object: &[], name: "" }],
        wrappers: &[],
        names: &["identifier"],
        selves: &["this_expression"],
        self_words: &[],
        supers: &["super_expression"],
        path_roots: &[],
        comments: &["line_comment", "block_comment"],
        leading: &["line_comment", "block_comment"],
        attributes: &[],
        constructors: &["constructor"],
        constructor_is_type_name: false,
        not_a_call: super::no_exceptions,
        clauses: false,
        test_definition: super::no_test_definitions,
    },
    is_test: kotlin_test,
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

/// `src/test/` (a `test/` directory already), multiplatform source sets (`commonTest/`,
/// `jvmTest/`, `androidTest/`), `testFixtures/`, and `*Test.kt`, `*Tests.kt`.
fn kotlin_test(path: &str) -> bool {
    let file = file_name(path);
    file.ends_with("Test.kt")
        || file.ends_with("Tests.kt")
        || path.split('/').rev().skip(1).any(|d| d.ends_with("Test") || d == "testFixtures")
}

fn role<'t>(_: &Rules, node: Node<'t>, src: &str) -> Role<'t> {
    match node.kind() {
        "function_declaration" => {
            let Some(name) = field_text(node, "name", src) else {
                return Role::Other;
            };
            Role::Function {
                name,
                outer: node,
                body: child_of_kind(node, &["function_body"]),
                owner: extended_type(node, src),
                self_name: None,
            }
        }
        "secondary_constructor" => Role::Function {
            name: "constructor".into(),
            outer: node,
            body: child_of_kind(node, &["block"]),
            owner: None,
            self_name: None,
        },
        "class_declaration" | "object_declaration" => match field_text(node, "name", src) {
            Some(name) => Role::Type {
                name,
                outer: node,
                body: child_of_kind(node, &["class_body", "enum_class_body"]),
            },
            None => Role::Other,
        },
        _ => Role::Other,
    }
}

/// `fun Foo.bar()`: the type before the name, when the function extends one (and is not
/// inside a class, where it is that class's method).
fn extended_type(node: Node, src: &str) -> Option<String> {
    let name = node.child_by_field_name("name")?;
    let receiver = (0..node.named_child_count())
        .filter_map(|i| node.named_child(i))
        .take_while(|c| c.start_byte() < name.start_byte())
        .find(|c| matches!(c.kind(), "user_type" | "nullable_type" | "type"))?;
    let between = src.get(receiver.end_byte()..name.start_byte())?;
    (between.trim() == ".")
        .then(|| type_name(receiver, src))
        .flatten()
        .filter(|_| !text(receiver, src).is_empty())
}
