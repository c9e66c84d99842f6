//! Go: functions, methods with receivers (their type and the name they call it by), types.

use tree_sitter::Node;

use super::super::rules::{field_text, function, named, type_name, Role, Rules, Syntax};
use super::super::spec::{Family, Lang, LangSpec, Reader};
use super::super::written::Written;
use super::{file_name, has_dir, C_FAMILY};

pub(in crate::lang) const ROW: LangSpec = LangSpec {
    lang: Lang::Go,
    name: "Go",
    ids: &["go", "golang"],
    extensions: &["go"],
    shares: &[],
    highlight_as: "go",
    grammar: |_| tree_sitter_go::LANGUAGE.into(),
    reader: Reader::Rules,
    syntax: Syntax { role, ..C_FAMILY },
    is_test: go_test,
    test_attribute: super::no_test_attribute,
    is_builtin: super::no_builtins,
    implicit_self: false,
    mixins: false,
    family: Family::Go,
    module_anchors: &[],
    docstrings: false,
    mask: super::no_mask,
    barrels: &["doc.go"],
    stubs: &[],
    library_roots: &[],
    written: Written::DOTTED,
};

/// `_test.go` files and `testdata/`.
fn go_test(path: &str) -> bool {
    file_name(path).ends_with("_test.go") || has_dir(path, &["testdata"])
}

fn role<'t>(_: &Rules, node: Node<'t>, src: &str) -> Role<'t> {
    match node.kind() {
        "function_declaration" => named(node, src, |name| function(name, node, node)),
        "method_declaration" => {
            let Some(name) = field_text(node, "name", src) else {
                return Role::Other;
            };
            // `func (s *Server) Serve()`: the receiver's type and the name it goes by.
            let param = node.child_by_field_name("receiver").and_then(|r| r.named_child(0));
            let owner = param.and_then(|p| p.child_by_field_name("type")).and_then(|t| type_name(t, src));
            let self_name = param.and_then(|p| field_text(p, "name", src));
            Role::Function { name, outer: node, body: node.child_by_field_name("body"), owner, self_name }
        }
        // A lone `type X struct {…}` starts at its `type` keyword.
        "type_spec" => named(node, src, |name| {
            let outer = match node.parent() {
                Some(p) if p.kind() == "type_declaration" && p.named_child_count() == 1 => p,
                _ => node,
            };
            Role::Type { name, outer, body: None }
        }),
        _ => Role::Other,
    }
}
