//! Python: its own extractor (`chunk/python.rs`) and module-aware resolver
//! (`callgraph/python.rs`) read it; the generic rules below are empty.

use super::super::rules::{Role, Syntax};
use super::super::spec::{Family, Lang, LangSpec, Reader};
use super::super::written::Written;
use super::python_builtins::{is_builtin_method, is_dunder};
use super::{file_name, has_dir, no_test_attribute};

pub(in crate::lang) const ROW: LangSpec = LangSpec {
    lang: Lang::Python,
    name: "Python",
    ids: &["python", "py"],
    extensions: &["py"],
    shares: &[],
    highlight_as: "py",
    grammar: |_| tree_sitter_python::LANGUAGE.into(),
    reader: Reader::Python,
    syntax: Syntax {
        role: |_, _, _| Role::Other,
        calls: &[],
        members: &[],
        wrappers: &[],
        names: &[],
        selves: &[],
        self_words: &[],
        supers: &[],
        path_roots: &[],
        comments: &[],
        leading: &[],
        attributes: &[],
        constructors: &["__init__"],
        constructor_is_type_name: false,
        not_a_call: super::no_exceptions,
        clauses: false,
        test_definition: super::no_test_definitions,
    },
    is_test: python_test,
    test_attribute: no_test_attribute,
    is_builtin,
    implicit_self: false,
    mixins: false,
    family: Family::Python,
    module_anchors: &[],
    docstrings: true,
    mask: super::no_mask,
    barrels: &["__init__.py"],
    stubs: &[".pyi"],
    library_roots: &[],
    written: Written::DOTTED,
};

/// `testing/`, `test_*.py`, `*_test.py`, `conftest.py`.
fn python_test(path: &str) -> bool {
    let file = file_name(path);
    has_dir(path, &["testing"])
        || file.starts_with("test_")
        || file.ends_with("_test.py")
        || file == "conftest.py"
}

/// A built-in type's method on an unknown receiver (`parts.append`, `", ".join`) or a protocol
/// method (`x.__enter__`): not a hole in the graph.
fn is_builtin(name: &str, with_receiver: bool) -> bool {
    is_dunder(name) || (with_receiver && is_builtin_method(name))
}
