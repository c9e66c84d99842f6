//! PHP: functions, methods, classes, interfaces, traits and enums inside namespaces; calls on
//! `$this`, `self::` and `Foo::`. Grammar: `tree-sitter-php`'s PHP dialect (with embedded
//! HTML), the tree-sitter organisation's own.

use tree_sitter::Node;

use super::super::rules::{function, named, CallForm, Member, Role, Rules, Syntax};
use super::super::spec::{Family, Lang, LangSpec, Reader};
use super::super::written::Written;
use super::{file_name, no_builtins, no_test_attribute};

pub(in crate::lang) const ROW: LangSpec = LangSpec {
    lang: Lang::Php,
    name: "PHP",
    ids: &["php"],
    extensions: &["php"],
    shares: &[],
    highlight_as: "php",
    grammar: |_| tree_sitter_php::LANGUAGE_PHP.into(),
    reader: Reader::Rules,
    syntax: Syntax {
        role,
        calls: &[
            CallForm::Callee { kind: "function_call_expression", fields: &["function"] },
            CallForm::Method { kind: "member_call_expression", name: "name", object: "object" },
            CallForm::Method { kind: "nullsafe_member_call_expression", name: "name", object: "object" },
            CallForm::Method { kind: "scoped_call_expression", name: "name", object: "scope" },
            CallForm::FirstChild { kind: "object_creation_expression" },
        ],
        members: &[
            Member { kind: "qualified_name", object: &[], name: "" },
            Member { kind: "namespace_name", object: &[], name: "" },
        ],
        wrappers: &[],
        // `$this` reads as the receiver itself; `self::` as a name the resolver knows.
        names: &["name", "variable_name", "relative_scope"],
        selves: &[],
        self_words: &["$this"],
        supers: &[],
        path_roots: &[],
        comments: &["comment"],
        leading: &["comment", "attribute_list"],
        attributes: &[],
        constructors: &["__construct"],
        constructor_is_type_name: false,
        not_a_call: super::no_exceptions,
        clauses: false,
        test_definition: super::no_test_definitions,
    },
    is_test: php_test,
    test_attribute: no_test_attribute,
    is_builtin: no_builtins,
    implicit_self: false,
    mixins: false,
    family: Family::Php,
    module_anchors: &[],
    docstrings: false,
    mask: super::no_mask,
    barrels: &[],
    stubs: &[],
    library_roots: &[],
    written: Written::DOTTED,
};

/// PHPUnit's `*Test.php`.
fn php_test(path: &str) -> bool {
    file_name(path).ends_with("Test.php")
}

fn role<'t>(_: &Rules, node: Node<'t>, src: &str) -> Role<'t> {
    match node.kind() {
        // An interface's or abstract class's method without a body is part of its type's chunk.
        "function_definition" | "method_declaration" if node.child_by_field_name("body").is_some() => {
            named(node, src, |name| function(name, node, node))
        }
        "class_declaration" | "interface_declaration" | "trait_declaration" | "enum_declaration" => {
            named(node, src, |name| Role::Type { name, outer: node, body: node.child_by_field_name("body") })
        }
        _ => Role::Other,
    }
}
