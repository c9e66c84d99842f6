//! Zig: functions, and containers bound to a name (`const Queue = struct {…}`, enums, unions,
//! opaques) whose functions are their methods; `self` and `Self` are the container. `test`
//! blocks are test code inside a source file: no chunks, left to BM25's test rule like Rust's
//! `#[cfg(test)]` modules.
//! Grammar: `tree-sitter-zig`, tree-sitter-grammars' own.

use tree_sitter::Node;

use super::super::rules::{child_of_kind, function, named, text, CallForm, Member, Role, Rules, Syntax};
use super::super::spec::{Family, Lang, LangSpec, Reader};
use super::super::written::Written;
use super::{file_name, no_builtins, no_exceptions, no_mask, no_test_attribute};

pub(in crate::lang) const ROW: LangSpec = LangSpec {
    lang: Lang::Zig,
    name: "Zig",
    ids: &["zig"],
    extensions: &["zig"],
    shares: &[],
    highlight_as: "txt",
    grammar: |_| tree_sitter_zig::LANGUAGE.into(),
    reader: Reader::Rules,
    syntax: Syntax {
        role,
        calls: &[CallForm::Callee { kind: "call_expression", fields: &["function"] }],
        members: &[Member { kind: "field_expression", object: &["object"], name: "member" }],
        wrappers: &[],
        names: &["identifier"],
        selves: &[],
        // A method's receiver is conventionally `self`; `Self = @This()` names the container.
        self_words: &["self", "Self"],
        supers: &[],
        path_roots: &[],
        comments: &["comment"],
        leading: &["comment"],
        attributes: &[],
        constructors: &["init"],
        constructor_is_type_name: false,
        not_a_call: no_exceptions,
        clauses: false,
        test_definition: super::no_test_definitions,
    },
    is_test: zig_test,
    test_attribute: no_test_attribute,
    is_builtin: no_builtins,
    implicit_self: false,
    mixins: false,
    family: Family::Zig,
    module_anchors: &[],
    docstrings: false,
    mask: no_mask,
    barrels: &[],
    stubs: &[],
    library_roots: &[],
    written: Written::DOTTED,
};

/// `*_test.zig`, `*_tests.zig`, `test_*.zig`, `test.zig` and `tests.zig` beside the shared
/// `tests/` and `test/`; most Zig tests are `test` blocks inside source files.
fn zig_test(path: &str) -> bool {
    let file = file_name(path);
    ["_test.zig", "_tests.zig"].iter().any(|end| file.ends_with(end))
        || file.starts_with("test_")
        || file == "test.zig"
        || file == "tests.zig"
}

const CONTAINERS: &[&str] =
    &["struct_declaration", "enum_declaration", "union_declaration", "opaque_declaration"];

fn role<'t>(_: &Rules, node: Node<'t>, src: &str) -> Role<'t> {
    match node.kind() {
        "function_declaration" => named(node, src, |name| function(name, node, node)),
        // `const Queue = struct { … };`: the container is a type named by its binding.
        "variable_declaration" => {
            match (child_of_kind(node, &["identifier"]), child_of_kind(node, CONTAINERS)) {
                (Some(name), Some(body)) => {
                    Role::Type { name: text(name, src).to_string(), outer: node, body: Some(body) }
                }
                _ => Role::Other,
            }
        }
        "test_declaration" => Role::Skip,
        _ => Role::Other,
    }
}
