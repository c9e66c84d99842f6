//! The rows of the language table, one file per language (C and C++ share theirs, as do
//! JavaScript and TypeScript): each holds the row's facts, its syntax rules and its test rule.
//! The spellings the first eight grammars share are here, so that their rows read the same
//! node kinds the one generic extractor always read.

use super::rules::{CallForm, Member, Role, Syntax, Wrapper};

pub(super) mod bash;
pub(super) mod c;
pub(super) mod csharp;
pub(super) mod elixir;
pub(super) mod go;
pub(super) mod haskell;
pub(super) mod java;
pub(super) mod js;
pub(super) mod kotlin;
pub(super) mod lua;
pub(super) mod php;
pub(super) mod python;
pub(crate) mod python_builtins;
pub(super) mod ruby;
pub(super) mod rust;
pub(super) mod scala;
pub(super) mod swift;
pub(super) mod zig;

/// Identifier-like node kinds of the C-family grammars.
pub(super) const NAMES: &[&str] = &[
    "identifier",
    "field_identifier",
    "property_identifier",
    "private_property_identifier",
    "type_identifier",
    "namespace_identifier",
    "shorthand_property_identifier",
];

/// Member accesses and paths of the C-family grammars.
pub(super) const MEMBERS: &[Member] = &[
    Member { kind: "field_expression", object: &["value", "argument"], name: "field" },
    Member { kind: "selector_expression", object: &["operand"], name: "field" },
    Member { kind: "member_expression", object: &["object"], name: "property" },
    Member { kind: "scoped_identifier", object: &["path"], name: "name" },
    Member { kind: "scoped_type_identifier", object: &["path"], name: "name" },
    Member { kind: "qualified_identifier", object: &["scope"], name: "name" },
];

/// `parse::<T>()`, `make<T>()`, `Foo<T>`: the name under the generics.
pub(super) const WRAPPERS: &[Wrapper] = &[
    Wrapper { kind: "generic_function", field: "function" },
    Wrapper { kind: "template_function", field: "name" },
    Wrapper { kind: "generic_type", field: "name" },
    Wrapper { kind: "template_type", field: "name" },
];

/// `f()`, `a.b()`, `new Foo()`.
pub(super) const CALLS: &[CallForm] = &[
    CallForm::Callee { kind: "new_expression", fields: &["constructor", "type"] },
    CallForm::Callee { kind: "call_expression", fields: &["function"] },
];

pub(super) const SELVES: &[&str] = &["self", "this"];
/// Rust's `Self::m()`.
pub(super) const SELF_WORDS: &[&str] = &["Self"];
pub(super) const SUPERS: &[&str] = &["super"];
pub(super) const COMMENTS: &[&str] = &["comment", "line_comment", "block_comment"];
/// Doc comments, Rust attributes and decorators above a definition.
pub(super) const LEADING: &[&str] =
    &["comment", "line_comment", "block_comment", "attribute_item", "decorator"];
/// JS `constructor`, Rust's conventional `new`.
pub(super) const CONSTRUCTORS: &[&str] = &["constructor", "new"];

/// The syntax the first eight grammars share (C-family spellings): each of their rows gives
/// its role function and what differs.
pub(super) const C_FAMILY: Syntax = Syntax {
    role: |_, _, _| Role::Other,
    calls: CALLS,
    members: MEMBERS,
    wrappers: WRAPPERS,
    names: NAMES,
    selves: SELVES,
    self_words: SELF_WORDS,
    supers: SUPERS,
    path_roots: &[],
    comments: COMMENTS,
    leading: LEADING,
    attributes: &[],
    constructors: CONSTRUCTORS,
    constructor_is_type_name: true,
    not_a_call: no_exceptions,
    clauses: false,
    test_definition: no_test_definitions,
};

/// Languages whose in-file tests the path rule already covers, or that have none the syntax
/// shows.
pub(super) fn no_test_attribute(_: &str) -> bool {
    false
}

/// Languages whose call-shaped nodes are all calls.
pub(super) fn no_exceptions(_: tree_sitter::Node, _: &str) -> bool {
    false
}

/// Languages whose tests are known by their paths and attributes alone.
pub(super) fn no_test_definitions(_: tree_sitter::Node, _: &str) -> bool {
    false
}

/// Grammars that read every source safely.
pub(super) fn no_mask(_: &str) -> Option<String> {
    None
}

/// Languages with no built-ins the call graph needs to tell from the repository's names.
pub(super) fn no_builtins(_: &str, _: bool) -> bool {
    false
}

pub(super) fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

pub(super) fn has_dir(path: &str, names: &[&str]) -> bool {
    path.split('/').rev().skip(1).any(|dir| names.contains(&dir))
}

/// A file's name without its extension.
pub(super) fn stem(path: &str) -> &str {
    let file = file_name(path);
    file.rsplit_once('.').map_or(file, |(s, _)| s)
}
