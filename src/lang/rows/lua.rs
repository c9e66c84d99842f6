//! Lua: functions (`function f`, `local function f`, `local f = function`), tables built with
//! fields (`local Widget = { … }`, `Base:extend{ … }`) as types with their function fields, and
//! the functions of a module table (`function M.f`, `function M:m`, `M.f = function`) as
//! methods of `M`, whose `self` is `M`; calls with `.` and `:`.
//! Grammar: `tree-sitter-lua`, tree-sitter-grammars' own.

use tree_sitter::Node;

use super::super::rules::{field_text, function, text, type_name, CallForm, Member, Role, Rules, Syntax};
use super::super::spec::{Family, Lang, LangSpec, Reader};
use super::super::written::{Form, Written};
use super::{file_name, has_dir, no_exceptions, no_mask, no_test_attribute};

pub(in crate::lang) const ROW: LangSpec = LangSpec {
    lang: Lang::Lua,
    name: "Lua",
    ids: &["lua"],
    extensions: &["lua"],
    shares: &[],
    highlight_as: "lua",
    grammar: |_| tree_sitter_lua::LANGUAGE.into(),
    reader: Reader::Rules,
    syntax: Syntax {
        role,
        calls: &[CallForm::Callee { kind: "function_call", fields: &["name"] }],
        members: &[
            Member { kind: "dot_index_expression", object: &["table"], name: "field" },
            Member { kind: "method_index_expression", object: &["table"], name: "method" },
        ],
        wrappers: &[],
        names: &["identifier"],
        selves: &[],
        // `self` is a plain name to the grammar.
        self_words: &["self"],
        supers: &[],
        path_roots: &[],
        comments: &["comment"],
        leading: &["comment"],
        attributes: &[],
        constructors: &["new"],
        constructor_is_type_name: false,
        not_a_call: no_exceptions,
        clauses: false,
        test_definition: super::no_test_definitions,
    },
    is_test: lua_test,
    test_attribute: no_test_attribute,
    is_builtin: lua_builtin,
    implicit_self: false,
    mixins: false,
    family: Family::Lua,
    module_anchors: &[],
    docstrings: false,
    mask: no_mask,
    barrels: &["init.lua"],
    stubs: &[],
    library_roots: &[],
    written: WRITTEN,
};

/// busted's `spec/` and `*_spec.lua`, and `*_test.lua` / `test_*.lua`.
fn lua_test(path: &str) -> bool {
    let file = file_name(path);
    has_dir(path, &["spec"])
        || file.ends_with("_spec.lua")
        || file.ends_with("_test.lua")
        || file.starts_with("test_")
}

/// The standard library's global functions: never the repository's, never a hole.
fn lua_builtin(name: &str, with_receiver: bool) -> bool {
    const GLOBALS: &[&str] = &[
        "assert",
        "collectgarbage",
        "dofile",
        "error",
        "getmetatable",
        "ipairs",
        "load",
        "loadfile",
        "loadstring",
        "next",
        "pairs",
        "pcall",
        "print",
        "rawequal",
        "rawget",
        "rawlen",
        "rawset",
        "require",
        "select",
        "setmetatable",
        "tonumber",
        "tostring",
        "type",
        "unpack",
        "xpcall",
    ];
    // The standard library's modules, called as written (`table.insert`, `string.format`).
    const MODULES: [&str; 9] =
        ["table", "string", "math", "io", "os", "coroutine", "debug", "utf8", "package"];
    let module = name.split_once('.').is_some_and(|(m, rest)| MODULES.contains(&m) && !rest.contains('.'));
    !with_receiver && (GLOBALS.contains(&name) || module)
}

/// The table a value builds: a table constructor with fields, or one passed alone to a call
/// (`Base:extend{ … }`, a class library's idiom).
fn table_of(value: Node) -> Option<Node> {
    let table = match value.kind() {
        "table_constructor" => value,
        "function_call" => {
            let args = value.child_by_field_name("arguments")?;
            (args.named_child_count() == 1).then(|| args.named_child(0))??
        }
        _ => return None,
    };
    (table.kind() == "table_constructor" && table.named_child_count() > 0).then_some(table)
}

/// Whether a table constructor's function fields are definitions: the table is assigned
/// (`local M = { … }`, `M.sub = { … }`), returned as a module (`return { … }`), or the one
/// argument of a call that makes a type (`Base:extend{ … }`); nested in such a table too.
fn owns_its_functions(table: Node) -> bool {
    let Some(parent) = table.parent() else { return false };
    match parent.kind() {
        "expression_list" => {
            parent.parent().is_some_and(|p| matches!(p.kind(), "assignment_statement" | "return_statement"))
        }
        "return_statement" => true,
        "arguments" if parent.named_child_count() == 1 => parent
            .parent()
            .and_then(|call| call.parent())
            .is_some_and(|p| p.kind() == "expression_list" || p.kind() == "return_statement"),
        "field" => parent.parent().is_some_and(owns_its_functions),
        _ => false,
    }
}

/// `M.f` or `M:m` as `(owner, name)`: the table's last name owns the function.
fn owned(name: Node, src: &str) -> Option<(Option<String>, String)> {
    match name.kind() {
        "identifier" => Some((None, text(name, src).to_string())),
        "dot_index_expression" => Some((
            name.child_by_field_name("table").and_then(|t| type_name(t, src)),
            field_text(name, "field", src)?,
        )),
        "method_index_expression" => Some((
            name.child_by_field_name("table").and_then(|t| type_name(t, src)),
            field_text(name, "method", src)?,
        )),
        _ => None,
    }
}

/// `M:m` for a method defined with `:` (its `self` implied), `M.f` for a table's function.
const WRITTEN: Written = Written { instance: ":", form, ..Written::DOTTED };

fn form(node: Node, _: &str) -> Form {
    let name = node.child_by_field_name("name");
    if node.kind() == "function_declaration" && name.is_some_and(|n| n.kind() == "method_index_expression") {
        Form::Instance
    } else {
        Form::Plain
    }
}

fn role<'t>(_: &Rules, node: Node<'t>, src: &str) -> Role<'t> {
    let as_function = |name: Node, outer: Node<'t>, def: Node<'t>| match owned(name, src) {
        Some((None, name)) => function(name, outer, def),
        Some((owner @ Some(_), name)) => {
            Role::Function { name, outer, body: def.child_by_field_name("body"), owner, self_name: None }
        }
        None => Role::Other,
    };
    match node.kind() {
        "function_declaration" => match node.child_by_field_name("name") {
            Some(name) => as_function(name, node, node),
            None => Role::Other,
        },
        // `M.f = function(…) … end`, `local f = function(…) … end`: one name, one function;
        // `local Widget = { … }` or `Base:extend{ … }`: a table of fields and functions, a type.
        "assignment_statement" => {
            let (Some(names), Some(values)) = (node.named_child(0), node.named_child(1)) else {
                return Role::Other;
            };
            let (Some(name), Some(value)) = (names.named_child(0), values.named_child(0)) else {
                return Role::Other;
            };
            if names.named_child_count() != 1 || values.named_child_count() != 1 {
                return Role::Other;
            }
            let outer = node.parent().filter(|p| p.kind() == "variable_declaration").unwrap_or(node);
            match (value.kind(), table_of(value)) {
                ("function_definition", _) => as_function(name, outer, value),
                (_, Some(table)) => match owned(name, src) {
                    Some((_, name)) => Role::Type { name, outer, body: Some(table) },
                    None => Role::Other,
                },
                _ => Role::Other,
            }
        }
        // `paint = function(self) … end` inside a table that is a type or a module: the
        // table's function. In a table passed to a call beside other arguments
        // (`nvim_create_autocmd(ev, { callback = function() … end })`) it is an option's
        // anonymous function: a chunk named `callback` would draw every `callback(…)` of the
        // file to it (issue 81).
        "field" => match (node.child_by_field_name("name"), node.child_by_field_name("value")) {
            (Some(name), Some(value))
                if name.kind() == "identifier"
                    && value.kind() == "function_definition"
                    && node.parent().is_some_and(owns_its_functions) =>
            {
                function(text(name, src).to_string(), node, value)
            }
            _ => Role::Other,
        },
        _ => Role::Other,
    }
}
