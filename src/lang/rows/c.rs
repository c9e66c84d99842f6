//! C and C++ (one family: C++ calls C): functions, methods defined outside their class
//! (`Foo::bar`), structs, classes, typedefs, templates, function-like macros; lines holding a
//! bare macro (`FMT_BEGIN_NAMESPACE`) skipped so the definitions after them parse.

use tree_sitter::Node;

use super::super::rules::{field_text, text, type_name, with_outer, Role, Rules, Syntax};
use super::super::spec::{Family, Lang, LangSpec, Reader};
use super::super::written::Written;
use super::{has_dir, stem, C_FAMILY};

pub(in crate::lang) const C: LangSpec = LangSpec {
    lang: Lang::C,
    name: "C",
    ids: &["c"],
    extensions: &["c"],
    // C keeps `.h`, which C++ owns (its grammar parses both dialects' headers).
    shares: &["h"],
    highlight_as: "c",
    grammar: |_| tree_sitter_c::LANGUAGE.into(),
    reader: Reader::Rules,
    syntax: Syntax { role, ..C_FAMILY },
    is_test: c_test,
    test_attribute: super::no_test_attribute,
    is_builtin: super::no_builtins,
    implicit_self: false,
    mixins: false,
    family: Family::Native,
    module_anchors: &[],
    docstrings: false,
    mask: blank_bare_macros,
    barrels: &[],
    stubs: &[],
    library_roots: &[],
    written: Written::DOTTED,
};

pub(in crate::lang) const CPP: LangSpec = LangSpec {
    lang: Lang::Cpp,
    name: "C++",
    ids: &["cpp", "c++", "cxx"],
    extensions: &["cc", "cpp", "cxx", "c++", "hpp", "hh", "hxx", "h++", "ipp", "tpp", "inl", "h"],
    shares: &[],
    highlight_as: "cpp",
    grammar: |_| tree_sitter_cpp::LANGUAGE.into(),
    implicit_self: true,
    ..C
};

/// The source with its bare macro lines blanked: the lines holding one upper-case identifier
/// of four or more characters alone (`FMT_BEGIN_NAMESPACE`, `__BEGIN_DECLS`), after a line
/// that ends a statement, a block or a directive (so an enumerator or an operand on a line of
/// its own stays). The grammar cannot expand such an object-like macro; blanked, the
/// definition after it parses as one, in the file's own positions. `None` when there is none.
fn blank_bare_macros(src: &str) -> Option<String> {
    let mut masked: Option<Vec<u8>> = None;
    let mut after_boundary = true;
    let mut offset = 0;
    for line in src.split_inclusive('\n') {
        let code = line.trim();
        if after_boundary && is_bare_macro(code) {
            let start = offset + (line.len() - line.trim_start().len());
            let bytes = masked.get_or_insert_with(|| src.as_bytes().to_vec());
            bytes[start..start + code.len()].fill(b' ');
        } else if !code.is_empty() {
            after_boundary = code.starts_with('#')
                || code.starts_with("//")
                || [";", "{", "}", "*/"].iter().any(|end| code.ends_with(end));
        }
        offset += line.len();
    }
    masked.map(|m| String::from_utf8(m).expect("blanking ASCII keeps UTF-8"))
}

/// `FMT_BEGIN_NAMESPACE`: an upper-case identifier, four characters or more, alone.
fn is_bare_macro(code: &str) -> bool {
    code.len() >= 4
        && code.starts_with(|c: char| c.is_ascii_uppercase() || c == '_')
        && code.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        && code.bytes().any(|b| b.is_ascii_uppercase())
}

/// `testing/`, `*_test.c(c)`, `*_unittest.cc`.
fn c_test(path: &str) -> bool {
    let stem = stem(path);
    has_dir(path, &["testing"]) || stem.ends_with("_test") || stem.ends_with("_unittest")
}

fn role<'t>(rules: &Rules, node: Node<'t>, src: &str) -> Role<'t> {
    match node.kind() {
        "function_definition" => {
            let Some(declarator) = node.child_by_field_name("declarator").and_then(function_declarator)
            else {
                return Role::Other;
            };
            let Some(name_node) = declarator.child_by_field_name("declarator") else {
                return Role::Other;
            };
            // `void Foo::bar()`, `ns::Foo::bar`: a method of `Foo` defined outside its class.
            let (name, owner) = match rules.path_of(name_node, src) {
                Some(parts) if parts.len() >= 2 => {
                    (parts[parts.len() - 1].clone(), Some(parts[parts.len() - 2].clone()))
                }
                _ => (text(name_node, src).trim().to_string(), None),
            };
            if name.is_empty() {
                return Role::Other;
            }
            Role::Function {
                name,
                outer: node,
                body: node.child_by_field_name("body"),
                owner,
                self_name: None,
            }
        }
        "preproc_function_def" => match field_text(node, "name", src) {
            Some(name) => Role::Macro { name, outer: node },
            None => Role::Other,
        },
        "class_specifier" | "struct_specifier" | "union_specifier" | "enum_specifier" => {
            match (node.child_by_field_name("name"), node.child_by_field_name("body")) {
                (Some(name), Some(body)) => match type_name(name, src) {
                    Some(name) => Role::Type { name, outer: outer_declaration(node), body: Some(body) },
                    None => Role::Other,
                },
                _ => Role::Other,
            }
        }
        // `typedef struct { … } Name;`: the typedef names the struct.
        "type_definition" => {
            let spec = node.child_by_field_name("type").filter(|t| {
                t.child_by_field_name("body").is_some() && t.child_by_field_name("name").is_none()
            });
            let name = node.child_by_field_name("declarator").and_then(|d| type_name(d, src));
            match (spec, name) {
                (Some(spec), Some(name)) => {
                    Role::Type { name, outer: node, body: spec.child_by_field_name("body") }
                }
                _ => Role::Other,
            }
        }
        // `template <typename T> …`: the template line starts the chunk.
        "template_declaration" => {
            let inner = (0..node.named_child_count())
                .filter_map(|i| node.named_child(i))
                .find(|c| !matches!(c.kind(), "template_parameter_list" | "requires_clause"));
            match inner {
                Some(inner) => with_outer(role(rules, inner, src), node),
                None => Role::Other,
            }
        }
        _ => Role::Other,
    }
}

/// A named struct or class declared with a typedef or a variable (`typedef struct S {…} S;`)
/// starts at that declaration.
fn outer_declaration(spec: Node) -> Node {
    match spec.parent() {
        Some(p) if matches!(p.kind(), "type_definition" | "declaration") => p,
        _ => spec,
    }
}

/// The `function_declarator` inside pointer and reference declarators (`char *f(void)`).
fn function_declarator(node: Node) -> Option<Node> {
    let mut node = node;
    for _ in 0..8 {
        if node.kind() == "function_declarator" {
            return Some(node);
        }
        node = node.child_by_field_name("declarator").or_else(|| {
            (0..node.named_child_count())
                .filter_map(|i| node.named_child(i))
                .find(|c| c.kind().ends_with("declarator"))
        })?;
    }
    None
}
