//! Bash (and POSIX sh): functions, however declared (`f() {…}`, `function f {…}`, a subshell
//! body); a command whose name is one of the repository's functions calls it. Any other command
//! is a program, not a hole in the call graph.
//! Grammar: `tree-sitter-bash`, the tree-sitter organisation's own.

use tree_sitter::Node;

use super::super::rules::{function, named, CallForm, Role, Rules, Syntax, Wrapper};
use super::super::spec::{Family, Lang, LangSpec, Reader};
use super::super::written::Written;
use super::{file_name, no_exceptions, no_mask, no_test_attribute};

pub(in crate::lang) const ROW: LangSpec = LangSpec {
    lang: Lang::Bash,
    name: "Bash",
    ids: &["bash", "sh", "shell"],
    extensions: &["sh", "bash"],
    shares: &[],
    highlight_as: "sh",
    grammar: |_| tree_sitter_bash::LANGUAGE.into(),
    reader: Reader::Rules,
    syntax: Syntax {
        role,
        calls: &[CallForm::Callee { kind: "command", fields: &["name"] }],
        members: &[],
        wrappers: &[Wrapper { kind: "command_name", field: "" }],
        names: &["word"],
        selves: &[],
        self_words: &[],
        supers: &[],
        path_roots: &[],
        comments: &["comment"],
        leading: &["comment"],
        attributes: &[],
        constructors: &[],
        constructor_is_type_name: false,
        not_a_call: no_exceptions,
        clauses: false,
        test_definition: super::no_test_definitions,
    },
    is_test: shell_test,
    test_attribute: no_test_attribute,
    is_builtin: programs,
    implicit_self: false,
    mixins: false,
    family: Family::Shell,
    module_anchors: &[],
    docstrings: false,
    mask: no_mask,
    barrels: &[],
    stubs: &[],
    library_roots: &[],
    written: Written::DOTTED,
};

/// `test_*.sh`, `*_test.sh` (shunit2, bash_unit); the shared `tests/` and `test/` folders.
fn shell_test(path: &str) -> bool {
    let file = file_name(path);
    file.starts_with("test_") || file.ends_with("_test.sh") || file.ends_with("_test.bash")
}

/// A command the repository does not define is a program (`git`, `sed`) or a builtin (`cd`).
fn programs(_: &str, _: bool) -> bool {
    true
}

fn role<'t>(_: &Rules, node: Node<'t>, src: &str) -> Role<'t> {
    match node.kind() {
        "function_definition" => named(node, src, |name| function(name, node, node)),
        _ => Role::Other,
    }
}
