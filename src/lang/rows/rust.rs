//! Rust: items, `impl` blocks, item macros re-read as items, `#[test]` / `#[cfg(test)]` code.

use tree_sitter::Node;

use super::super::rules::{function, named, type_name, Role, Rules, Syntax};
use super::super::spec::{Family, Lang, LangSpec, Reader};
use super::super::written::Written;
use super::{file_name, has_dir, C_FAMILY};

pub(in crate::lang) const ROW: LangSpec = LangSpec {
    lang: Lang::Rust,
    name: "Rust",
    ids: &["rust", "rs"],
    extensions: &["rs"],
    shares: &[],
    highlight_as: "rs",
    grammar: |_| tree_sitter_rust::LANGUAGE.into(),
    reader: Reader::Rules,
    syntax: Syntax { role, path_roots: &["crate", "super"], attributes: &["attribute_item"], ..C_FAMILY },
    is_test: rust_test,
    test_attribute: rust_test_attribute,
    is_builtin: super::no_builtins,
    implicit_self: false,
    mixins: false,
    family: Family::Rust,
    module_anchors: &["crate", "super", "self"],
    docstrings: false,
    mask: super::no_mask,
    barrels: &["mod.rs", "lib.rs"],
    stubs: &[],
    library_roots: &[],
    written: Written::DOTTED,
};

/// `benches/` is no test but is never the code an issue is about either; `tests.rs` holds a
/// crate's `mod tests;`. (`#[cfg(test)]` modules inside a file are left out by the chunker.)
fn rust_test(path: &str) -> bool {
    let file = file_name(path);
    has_dir(path, &["benches"])
        || file == "tests.rs"
        || file.ends_with("_test.rs")
        || file.ends_with("_tests.rs")
}

/// `#[test]`, `#[cfg(test)]`, `#[bench]` and the test attributes of test crates
/// (`#[tokio::test]`, `#[tokio::test(flavor = …)]`, `#[rstest]`, `#[test_case(…)]`);
/// not `#[cfg(not(test))]` nor `#[cfg(any(test, …))]`, which build outside tests too.
fn rust_test_attribute(attr: &str) -> bool {
    let Some(inner) = attr.strip_prefix("#[").and_then(|a| a.strip_suffix(']')) else {
        return false;
    };
    let path = inner.split('(').next().unwrap_or(inner);
    let last = path.rsplit("::").next().unwrap_or(path);
    inner == "cfg(test)" || matches!(last, "test" | "bench" | "rstest" | "test_case" | "quickcheck")
}

fn role<'t>(rules: &Rules, node: Node<'t>, src: &str) -> Role<'t> {
    match node.kind() {
        "function_item" => named(node, src, |name| function(name, node, node)),
        "macro_definition" => named(node, src, |name| Role::Macro { name, outer: node }),
        // `cfg_rt! { … }` among items (not a macro call inside an expression).
        "macro_invocation" if is_item_level(node) => {
            let tokens = (0..node.named_child_count())
                .filter_map(|i| node.named_child(i))
                .find(|c| c.kind() == "token_tree");
            match tokens {
                Some(tokens) => Role::Items { tokens },
                None => Role::Other,
            }
        }
        "struct_item" | "enum_item" | "union_item" => {
            named(node, src, |name| Role::Type { name, outer: node, body: None })
        }
        "trait_item" => {
            named(node, src, |name| Role::Type { name, outer: node, body: node.child_by_field_name("body") })
        }
        "impl_item" => {
            let ty = node.child_by_field_name("type").and_then(|t| type_name(t, src));
            match (ty, node.child_by_field_name("body")) {
                (Some(type_name), Some(body)) => Role::Impl { type_name, outer: node, body },
                _ => Role::Other,
            }
        }
        "mod_item" if rules.attributes_above(node, src).any(|a| a.contains("cfg(test)")) => Role::Skip,
        _ => Role::Other,
    }
}

/// Whether a node stands among items: in a file, a `mod` or an `impl` (through the statement
/// the grammar may wrap it in).
fn is_item_level(node: Node) -> bool {
    let parent = match node.parent() {
        Some(p) if p.kind() == "expression_statement" => p.parent(),
        p => p,
    };
    parent.is_some_and(|p| matches!(p.kind(), "source_file" | "declaration_list"))
}
