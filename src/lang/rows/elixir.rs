//! Elixir: modules (`defmodule Bank.Ledger`, `defprotocol`, `defimpl P, for: T` as Elixir names
//! it, `P.T`) whose functions (`def`, `defp`, `defmacro`, `defguard`, `defdelegate`; named
//! with their arity, `f/2`, each arity's clauses one chunk) are theirs; `@doc`, `@spec` and comments above a function belong to it.
//! Everything is a call to the grammar: a definition's head and a module attribute are not.
//! Grammar: `tree-sitter-elixir`, elixir-lang's own.

use tree_sitter::Node;

use super::super::rules::{child_of_kind, text, CallForm, Member, Role, Rules, Syntax};
use super::super::spec::{Family, Lang, LangSpec, Reader};
use super::super::written::{Form, Written};
use super::{file_name, no_mask, no_test_attribute};

pub(in crate::lang) const ROW: LangSpec = LangSpec {
    lang: Lang::Elixir,
    name: "Elixir",
    ids: &["elixir", "ex", "exs"],
    extensions: &["ex", "exs"],
    shares: &[],
    highlight_as: "txt",
    grammar: |_| tree_sitter_elixir::LANGUAGE.into(),
    reader: Reader::Rules,
    syntax: Syntax {
        role,
        calls: &[CallForm::Callee { kind: "call", fields: &["target"] }],
        members: &[Member { kind: "dot", object: &["left"], name: "right" }],
        wrappers: &[],
        names: &["identifier", "alias"],
        selves: &[],
        self_words: &["__MODULE__"],
        supers: &[],
        path_roots: &[],
        comments: &["comment"],
        // `@doc "…"`, `@spec f(t) :: t`, `@impl true` above a function.
        leading: &["comment", "unary_operator"],
        attributes: &[],
        constructors: &[],
        constructor_is_type_name: false,
        not_a_call: head_or_attribute,
        clauses: true,
        test_definition: super::no_test_definitions,
    },
    is_test: elixir_test,
    test_attribute: no_test_attribute,
    is_builtin: kernel,
    implicit_self: true,
    mixins: false,
    family: Family::Elixir,
    module_anchors: &[],
    docstrings: false,
    mask: no_mask,
    barrels: &[],
    stubs: &[],
    library_roots: &["lib"],
    written: WRITTEN,
};

/// ExUnit's `test/` (shared) and `*_test.exs`.
fn elixir_test(path: &str) -> bool {
    file_name(path).ends_with("_test.exs")
}

const DEFINES_FUNCTION: &[&str] =
    &["def", "defp", "defmacro", "defmacrop", "defguard", "defguardp", "defdelegate", "defn", "defnp"];

/// Kernel's macros and functions and the special forms: imported everywhere, never a hole.
fn kernel(name: &str, with_receiver: bool) -> bool {
    const KERNEL: &[&str] = &[
        "alias",
        "and",
        "apply",
        "binding",
        "case",
        "cond",
        "def",
        "defdelegate",
        "defexception",
        "defguard",
        "defguardp",
        "defimpl",
        "defmacro",
        "defmacrop",
        "defmodule",
        "defoverridable",
        "defp",
        "defprotocol",
        "defstruct",
        "elem",
        "exit",
        "fn",
        "for",
        "get_in",
        "hd",
        "if",
        "import",
        "in",
        "inspect",
        "is_atom",
        "is_binary",
        "is_boolean",
        "is_function",
        "is_integer",
        "is_list",
        "is_map",
        "is_nil",
        "is_number",
        "is_pid",
        "is_tuple",
        "length",
        "map_size",
        "match?",
        "max",
        "min",
        "not",
        "or",
        "put_elem",
        "put_in",
        "quote",
        "raise",
        "receive",
        "require",
        "reraise",
        "self",
        "send",
        "spawn",
        "spawn_link",
        "struct",
        "super",
        "throw",
        "tl",
        "to_string",
        "try",
        "tuple_size",
        "unless",
        "unquote",
        "unquote_splicing",
        "update_in",
        "use",
        "with",
    ];
    !with_receiver && KERNEL.contains(&name)
}

/// The head of `def f(x)` / `def f(x) when …` / `def f, do: …`, and `@doc "…"`: call-shaped,
/// but no call.
fn head_or_attribute(node: Node, src: &str) -> bool {
    let Some(parent) = node.parent() else {
        return false;
    };
    if parent.kind() == "unary_operator" && parent.child(0).is_some_and(|op| text(op, src) == "@") {
        return true;
    }
    // `f(x) when guard`: the head is the guard's left side.
    let args = match parent.kind() {
        "binary_operator" if parent.child_by_field_name("left") == Some(node) => parent.parent(),
        _ => Some(parent),
    };
    args.filter(|a| a.kind() == "arguments")
        .and_then(|a| a.parent())
        .and_then(|definition| definition.child_by_field_name("target"))
        .is_some_and(|target| DEFINES_FUNCTION.contains(&text(target, src)))
}

/// What a `def` defines, named as Elixir names it, with its arity: `f/2` from its head (`f(x,
/// y)`, `f(x, y) when …`; `f` is `f/0`). Each arity is its own function, so `f/1` and `f/2`
/// written one after the other are two chunks, not clauses of one. A head with defaults
/// (`f(x, y \\ 0)`) is named by its most arguments, as ExDoc names it.
fn function_name(definition: Node, src: &str) -> Option<String> {
    let head = child_of_kind(definition, &["arguments"])?.named_child(0)?;
    let head = match head.kind() {
        "binary_operator" => head.child_by_field_name("left")?,
        _ => head,
    };
    let (name, arity) = match head.kind() {
        "call" => (head.child_by_field_name("target")?, argument_count(head)),
        "identifier" => (head, 0),
        _ => return None,
    };
    (name.kind() == "identifier").then(|| format!("{}/{arity}", text(name, src)))
}

/// How many arguments a call passes: those in its parentheses (a keyword list is one), its
/// `do` block (one more), and the left side of a pipe (`x |> f(y)` is `f/2`).
pub(in crate::lang) fn call_arity(call: Node) -> usize {
    let block =
        (0..call.named_child_count()).filter_map(|i| call.named_child(i)).any(|c| c.kind() == "do_block");
    let piped = call.parent().is_some_and(|p| {
        p.kind() == "binary_operator"
            && p.child_by_field_name("right") == Some(call)
            && p.child_by_field_name("operator").is_some_and(|op| op.kind() == "|>")
    });
    argument_count(call) + usize::from(block) + usize::from(piped)
}

fn argument_count(call: Node) -> usize {
    child_of_kind(call, &["arguments"]).map_or(0, |a| a.named_child_count())
}

/// A module's name as written (`Bank.Ledger`): `defimpl Printable, for: Account` is
/// `Printable.Account`.
fn module_name(definition: Node, src: &str) -> Option<String> {
    let args = child_of_kind(definition, &["arguments"])?;
    let name = text(args.named_child(0).filter(|n| n.kind() == "alias")?, src).to_string();
    let target = || {
        let keywords = args.named_child(1).filter(|n| n.kind() == "keywords")?;
        (0..keywords.named_child_count()).filter_map(|i| keywords.named_child(i)).find_map(|pair| {
            let key = text(pair.child_by_field_name("key")?, src).trim_end_matches([':', ' ']);
            let value = pair.child_by_field_name("value")?;
            (key == "for").then(|| text(value, src).to_string())
        })
    };
    Some(match target() {
        Some(target) => format!("{name}.{target}"),
        None => name,
    })
}

/// Modules and their functions (`defp` is no method, `defmodule` no class); `defmacro` and
/// `defguard` define macros.
const WRITTEN: Written = Written { modules_and_functions: true, form, ..Written::DOTTED };

fn form(node: Node, src: &str) -> Form {
    const DEFINES_MACRO: &[&str] = &["defmacro", "defmacrop", "defguard", "defguardp"];
    let target = node.child_by_field_name("target").map(|t| text(t, src));
    if target.is_some_and(|t| DEFINES_MACRO.contains(&t)) {
        Form::Macro
    } else {
        Form::Plain
    }
}

fn role<'t>(_: &Rules, node: Node<'t>, src: &str) -> Role<'t> {
    if node.kind() != "call" {
        return Role::Other;
    }
    let Some(target) = node.child_by_field_name("target").filter(|t| t.kind() == "identifier") else {
        return Role::Other;
    };
    let body =
        (0..node.named_child_count()).filter_map(|i| node.named_child(i)).find(|c| c.kind() == "do_block");
    match text(target, src) {
        "defmodule" | "defprotocol" | "defimpl" => match (module_name(node, src), body) {
            (Some(name), Some(body)) => Role::Type { name, outer: node, body: Some(body) },
            _ => Role::Other,
        },
        word if DEFINES_FUNCTION.contains(&word) => match function_name(node, src) {
            Some(name) => Role::Function { name, outer: node, body, owner: None, self_name: None },
            None => Role::Other,
        },
        _ => Role::Other,
    }
}
