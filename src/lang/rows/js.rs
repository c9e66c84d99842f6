//! JavaScript and TypeScript (one family: TypeScript calls JavaScript): declarations,
//! `export`ed ones, functions held by variables, assignments and class fields.

use tree_sitter::Node;

use super::super::rules::{field_text, function, named, text, with_outer, Role, Rules, Syntax};
use super::super::spec::{Family, Lang, LangSpec, Reader};
use super::super::written::Written;
use super::{file_name, has_dir, C_FAMILY};

const SYNTAX: Syntax = Syntax { role, ..C_FAMILY };

pub(in crate::lang) const JAVASCRIPT: LangSpec = LangSpec {
    lang: Lang::JavaScript,
    name: "JavaScript",
    ids: &["javascript", "js"],
    extensions: &["js", "mjs", "cjs", "jsx"],
    shares: &[],
    highlight_as: "js",
    grammar: |_| tree_sitter_javascript::LANGUAGE.into(),
    reader: Reader::Rules,
    syntax: SYNTAX,
    is_test: js_test,
    test_attribute: super::no_test_attribute,
    is_builtin: super::no_builtins,
    implicit_self: false,
    mixins: false,
    family: Family::Web,
    module_anchors: &[],
    docstrings: false,
    mask: super::no_mask,
    barrels: &["index.js", "index.mjs", "index.cjs", "index.jsx"],
    stubs: &[],
    library_roots: &[],
    written: Written::DOTTED,
};

pub(in crate::lang) const TYPESCRIPT: LangSpec = LangSpec {
    lang: Lang::TypeScript,
    name: "TypeScript",
    ids: &["typescript", "ts"],
    extensions: &["ts", "tsx", "mts", "cts"],
    // TypeScript has no syntax in syntect's defaults; JavaScript's colours it well.
    highlight_as: "js",
    grammar: |ext| match ext {
        "tsx" => tree_sitter_typescript::LANGUAGE_TSX.into(),
        _ => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
    },
    barrels: &["index.ts", "index.tsx", "index.mts", "index.cts"],
    // Declarations only: the code they describe is elsewhere (or not in the repository).
    stubs: &[".d.ts", ".d.mts", ".d.cts"],
    ..JAVASCRIPT
};

/// `*.test.*`, `*.spec.*`, `__tests__/`, `__mocks__/`.
fn js_test(path: &str) -> bool {
    let file = file_name(path);
    file.contains(".test.") || file.contains(".spec.") || has_dir(path, &["__tests__", "__mocks__"])
}

fn role<'t>(_: &Rules, node: Node<'t>, src: &str) -> Role<'t> {
    declaration(node, src)
}

fn declaration<'t>(node: Node<'t>, src: &str) -> Role<'t> {
    match node.kind() {
        "function_declaration" | "generator_function_declaration" | "method_definition" => {
            named(node, src, |name| function(name, node, node))
        }
        "class_declaration" | "abstract_class_declaration" | "class" => {
            named(node, src, |name| Role::Type { name, outer: node, body: node.child_by_field_name("body") })
        }
        "interface_declaration" | "enum_declaration" => {
            named(node, src, |name| Role::Type { name, outer: node, body: None })
        }
        // `export function f() {}`, `export default class A {}`: the export starts the chunk.
        "export_statement" => match node.child_by_field_name("declaration") {
            Some(decl) => with_outer(declaration(decl, src), node),
            None => Role::Other,
        },
        // `const f = () => {}`, `let f = function () {}`.
        "lexical_declaration" | "variable_declaration" if node.named_child_count() == 1 => {
            let Some(decl) = node.named_child(0).filter(|d| d.kind() == "variable_declarator") else {
                return Role::Other;
            };
            let (Some(name), Some(value)) =
                (field_text(decl, "name", src), decl.child_by_field_name("value"))
            else {
                return Role::Other;
            };
            value_role(name, node, value)
        }
        // `res.send = function send(body) {}`, `Foo.prototype.bar = () => {}`.
        "expression_statement" => {
            let Some(assign) = node.named_child(0).filter(|a| a.kind() == "assignment_expression") else {
                return Role::Other;
            };
            let (Some(left), Some(value)) =
                (assign.child_by_field_name("left"), assign.child_by_field_name("right"))
            else {
                return Role::Other;
            };
            let name: String = text(left, src).chars().filter(|c| !c.is_whitespace()).collect();
            let name = name.replace(".prototype.", ".");
            if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || "_$.".contains(c)) {
                return Role::Other;
            }
            value_role(name, node, value)
        }
        // A class field holding a function: `onClick = () => {}`.
        "public_field_definition" | "field_definition" => {
            let name = field_text(node, "name", src).or_else(|| field_text(node, "property", src));
            match (name, node.child_by_field_name("value")) {
                (Some(name), Some(value)) => value_role(name, node, value),
                _ => Role::Other,
            }
        }
        _ => Role::Other,
    }
}

/// A named value that is a function or class: a chunk starting at `outer`.
fn value_role<'t>(name: String, outer: Node<'t>, value: Node<'t>) -> Role<'t> {
    match value.kind() {
        "arrow_function" | "function_expression" | "function" | "generator_function" => Role::Function {
            name,
            outer,
            body: value.child_by_field_name("body").filter(|b| b.kind() == "statement_block"),
            owner: None,
            self_name: None,
        },
        "class" => Role::Type { name, outer, body: value.child_by_field_name("body") },
        _ => Role::Other,
    }
}
