//! What each language's syntax tree means to the chunker and the call graph: which nodes are
//! functions, types, members of a type defined elsewhere (`impl`), scopes to look into, and
//! calls. Python has its own extractor (`chunk/python.rs`); every other row is read here by the
//! one generic extractor (`chunk/generic.rs`).

use tree_sitter::Node;

use super::Lang;

/// What stands before a called name (the chunker makes its `Receiver` of it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Receiver {
    /// `f()`.
    None,
    /// A chain of plain names: `a.b.f()` → `["a", "b"]`; `self`, `this` and `Self` → `["self"]`.
    Path(Vec<String>),
    /// `super.m()`.
    Super,
    /// Anything else: `f().m()`, `x[0].m()`.
    Other,
}

/// What a node is to the chunker.
pub enum Role<'t> {
    /// A function or method: a chunk. Its span starts at `outer` (an `export`, a `template<…>`),
    /// `body` is elided in its type's summary.
    Function {
        name: String,
        outer: Node<'t>,
        body: Option<Node<'t>>,
        /// The type a method defined outside its type's body belongs to: a Go receiver's type,
        /// C++ `Foo::bar`.
        owner: Option<String>,
        /// The name the function calls its receiver by (Go: `s` in `func (s *Server) …`).
        self_name: Option<String>,
    },
    /// A class, struct, trait, interface or enum: a chunk; functions in `body` are its methods.
    Type { name: String, outer: Node<'t>, body: Option<Node<'t>> },
    /// A macro definition (`macro_rules!`, C `#define F(x)`): a chunk of its own kind.
    Macro { name: String, outer: Node<'t> },
    /// An item macro's token tree (`cfg_rt! { pub fn spawn… }`): its insides are parsed again
    /// as items of the language, and their definitions are chunks like any other.
    Items { tokens: Node<'t> },
    /// Methods of a type defined elsewhere (Rust `impl`): no chunk of its own.
    Impl { type_name: String, outer: Node<'t>, body: Node<'t> },
    /// Test code inside a source file (Rust `#[cfg(test)] mod tests`): no chunks, not in the
    /// module chunk either.
    Skip,
    /// Anything else; definitions inside it are still found (`#ifdef`, `namespace`, `mod`).
    Other,
}

/// The syntax rules of one language, for the generic extractor.
pub struct Rules {
    pub lang: Lang,
}

/// Node kinds that are comments or attributes attached to the definition below them.
const LEADING: &[&str] = &["comment", "line_comment", "block_comment", "attribute_item", "decorator"];

/// Identifier-like node kinds.
const NAMES: &[&str] = &[
    "identifier",
    "field_identifier",
    "property_identifier",
    "private_property_identifier",
    "type_identifier",
    "namespace_identifier",
    "shorthand_property_identifier",
];

impl Rules {
    pub fn of(lang: Lang) -> Rules {
        Rules { lang }
    }

    /// Whether a node directly before a definition belongs to it (doc comments, `#[…]`).
    pub fn is_leading(&self, node: Node) -> bool {
        LEADING.contains(&node.kind())
    }

    /// Whether `node` is test code by its language's `test_attribute` rule: an attribute above
    /// it or above an item it is inside (a method of a `#[cfg(test)] impl`).
    pub fn is_test_item(&self, node: Node, src: &str) -> bool {
        let marks = self.lang.spec().test_attribute;
        let mut at = Some(node);
        while let Some(n) = at {
            if attributes_above(n, src).any(|a| marks(&a)) {
                return true;
            }
            at = n.parent();
        }
        false
    }

    pub fn is_comment(&self, node: Node) -> bool {
        matches!(node.kind(), "comment" | "line_comment" | "block_comment")
    }

    pub fn role<'t>(&self, node: Node<'t>, src: &str) -> Role<'t> {
        match self.lang {
            Lang::Python => Role::Other,
            Lang::Rust => rust_role(node, src),
            Lang::Go => go_role(node, src),
            Lang::JavaScript | Lang::TypeScript => js_role(node, src),
            Lang::Java => java_role(node, src),
            Lang::C | Lang::Cpp => c_role(node, src),
        }
    }

    /// A call at `node`: the called name, the node holding it (for its position), and what
    /// stands before it. `new Foo()` and `Foo::new()` are calls of `Foo` and `new`.
    pub fn call<'t>(&self, node: Node<'t>, src: &str) -> Option<(String, Node<'t>, Receiver)> {
        let callee = match (self.lang, node.kind()) {
            (Lang::Java, "method_invocation") => {
                let name = node.child_by_field_name("name")?;
                let receiver = match node.child_by_field_name("object") {
                    None => Receiver::None,
                    Some(object) => receiver_of(object, src),
                };
                return Some((text(name, src).to_string(), name, receiver));
            }
            (Lang::Java, "object_creation_expression") => node.child_by_field_name("type")?,
            (_, "new_expression") => {
                node.child_by_field_name("constructor").or_else(|| node.child_by_field_name("type"))?
            }
            (Lang::Python, _) => return None,
            (_, "call_expression") => node.child_by_field_name("function")?,
            _ => return None,
        };
        let (name, receiver) = split_callee(callee, src)?;
        Some((text(name, src).to_string(), name, receiver))
    }
}

fn text<'s>(node: Node, src: &'s str) -> &'s str {
    src.get(node.start_byte()..node.end_byte()).unwrap_or("")
}

fn field_text(node: Node, field: &str, src: &str) -> Option<String> {
    let t = text(node.child_by_field_name(field)?, src).trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// `Foo<T>`, `&mut foo::Foo`, `*Foo` → `Foo`: the last plain name of a type expression.
pub fn type_name(node: Node, src: &str) -> Option<String> {
    let t = text(node, src);
    let base = t.split('<').next().unwrap_or(t);
    let last = base.rsplit([':', '.', '&', '*', ' ', '(', '[']).find(|p| !p.is_empty())?;
    let last = last.trim();
    (last.chars().next()?.is_alphabetic() || last.starts_with('_')).then(|| last.to_string())
}

/// The called name's node and its receiver, through member accesses, paths and generics.
fn split_callee<'t>(node: Node<'t>, src: &str) -> Option<(Node<'t>, Receiver)> {
    if NAMES.contains(&node.kind()) {
        return Some((node, Receiver::None));
    }
    match node.kind() {
        // `parse::<T>()`, `make<T>()`: the function under the generics.
        "generic_function" => split_callee(node.child_by_field_name("function")?, src),
        "template_function" | "generic_type" => split_callee(node.child_by_field_name("name")?, src),
        "parenthesized_expression" => None,
        _ => {
            let (object, name) = member_parts(node)?;
            let (name, inner) = match split_callee(name, src) {
                Some((n, Receiver::None)) => (n, None),
                // `a::b::c` in C++ nests to the right: `a` then `b::c`.
                Some((n, Receiver::Path(p))) => (n, Some(p)),
                _ => return None,
            };
            let receiver = match (object.map(|o| receiver_of(o, src)), inner) {
                (None, None) => Receiver::None,
                (None, Some(p)) => Receiver::Path(p),
                (Some(Receiver::Path(mut p)), Some(rest)) => {
                    p.extend(rest);
                    Receiver::Path(p)
                }
                (Some(r), None) => r,
                (Some(_), Some(_)) => Receiver::Other,
            };
            Some((name, receiver))
        }
    }
}

/// `(object, name)` of a member access or path, in any of the grammars' spellings.
fn member_parts(node: Node) -> Option<(Option<Node>, Node)> {
    let (object_field, name_field) = match node.kind() {
        "field_expression" => {
            (if node.child_by_field_name("value").is_some() { "value" } else { "argument" }, "field")
        }
        "selector_expression" => ("operand", "field"),
        "member_expression" => ("object", "property"),
        "scoped_identifier" | "scoped_type_identifier" => ("path", "name"),
        "qualified_identifier" => ("scope", "name"),
        _ => return None,
    };
    Some((node.child_by_field_name(object_field), node.child_by_field_name(name_field)?))
}

/// What stands before a called name: `self`/`this`/`Self` as `["self"]`, a chain of plain
/// names as its parts, anything else as `Other`.
pub fn receiver_of(node: Node, src: &str) -> Receiver {
    match path_of(node, src) {
        Some(parts) => Receiver::Path(parts),
        None if node.kind() == "super" => Receiver::Super,
        None => Receiver::Other,
    }
}

fn path_of(node: Node, src: &str) -> Option<Vec<String>> {
    match node.kind() {
        "self" | "this" => return Some(vec!["self".into()]),
        "crate" | "super" if node.parent().is_some_and(|p| p.kind() == "scoped_identifier") => {
            return Some(vec![text(node, src).to_string()])
        }
        k if NAMES.contains(&k) => {
            let t = text(node, src);
            return Some(vec![if t == "Self" { "self".into() } else { t.to_string() }]);
        }
        "generic_type" | "template_type" => return path_of(node.child_by_field_name("name")?, src),
        _ => {}
    }
    let (object, name) = member_parts(node)?;
    let mut parts = match object {
        Some(o) => path_of(o, src)?,
        None => Vec::new(),
    };
    parts.extend(path_of(name, src)?);
    Some(parts)
}

fn function<'t>(name: String, outer: Node<'t>, def: Node<'t>) -> Role<'t> {
    Role::Function { name, outer, body: def.child_by_field_name("body"), owner: None, self_name: None }
}

fn rust_role<'t>(node: Node<'t>, src: &str) -> Role<'t> {
    match node.kind() {
        "function_item" => match field_text(node, "name", src) {
            Some(name) => function(name, node, node),
            None => Role::Other,
        },
        "macro_definition" => match field_text(node, "name", src) {
            Some(name) => Role::Macro { name, outer: node },
            None => Role::Other,
        },
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
        "struct_item" | "enum_item" | "union_item" => match field_text(node, "name", src) {
            Some(name) => Role::Type { name, outer: node, body: None },
            None => Role::Other,
        },
        "trait_item" => match field_text(node, "name", src) {
            Some(name) => Role::Type { name, outer: node, body: node.child_by_field_name("body") },
            None => Role::Other,
        },
        "impl_item" => {
            let ty = node.child_by_field_name("type").and_then(|t| type_name(t, src));
            match (ty, node.child_by_field_name("body")) {
                (Some(type_name), Some(body)) => Role::Impl { type_name, outer: node, body },
                _ => Role::Other,
            }
        }
        "mod_item" if is_cfg_test(node, src) => Role::Skip,
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

/// `#[cfg(test)]` among the attributes right above `node`.
fn is_cfg_test(node: Node, src: &str) -> bool {
    attributes_above(node, src).any(|a| a.contains("cfg(test)"))
}

/// The attributes right above `node` (comments between them skipped), whitespace removed,
/// nearest first.
fn attributes_above<'t>(node: Node<'t>, src: &'t str) -> impl Iterator<Item = String> + 't {
    let mut prev = node.prev_named_sibling();
    std::iter::from_fn(move || loop {
        let p = prev?;
        prev = p.prev_named_sibling();
        match p.kind() {
            "attribute_item" => return Some(text(p, src).chars().filter(|c| !c.is_whitespace()).collect()),
            "line_comment" | "block_comment" => {}
            _ => {
                prev = None;
                return None;
            }
        }
    })
}

fn go_role<'t>(node: Node<'t>, src: &str) -> Role<'t> {
    match node.kind() {
        "function_declaration" => match field_text(node, "name", src) {
            Some(name) => function(name, node, node),
            None => Role::Other,
        },
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
        "type_spec" => match field_text(node, "name", src) {
            // A lone `type X struct {…}` starts at its `type` keyword.
            Some(name) => {
                let outer = match node.parent() {
                    Some(p) if p.kind() == "type_declaration" && p.named_child_count() == 1 => p,
                    _ => node,
                };
                Role::Type { name, outer, body: None }
            }
            None => Role::Other,
        },
        _ => Role::Other,
    }
}

fn js_role<'t>(node: Node<'t>, src: &str) -> Role<'t> {
    match node.kind() {
        "function_declaration" | "generator_function_declaration" | "method_definition" => {
            match field_text(node, "name", src) {
                Some(name) => function(name, node, node),
                None => Role::Other,
            }
        }
        "class_declaration" | "abstract_class_declaration" | "class" => match field_text(node, "name", src) {
            Some(name) => Role::Type { name, outer: node, body: node.child_by_field_name("body") },
            None => Role::Other,
        },
        "interface_declaration" | "enum_declaration" => match field_text(node, "name", src) {
            Some(name) => Role::Type { name, outer: node, body: None },
            None => Role::Other,
        },
        // `export function f() {}`, `export default class A {}`: the export starts the chunk.
        "export_statement" => match node.child_by_field_name("declaration") {
            Some(decl) => with_outer(js_role(decl, src), node),
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
            js_value(name, node, value)
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
            js_value(name, node, value)
        }
        // A class field holding a function: `onClick = () => {}`.
        "public_field_definition" | "field_definition" => {
            let name = field_text(node, "name", src).or_else(|| field_text(node, "property", src));
            match (name, node.child_by_field_name("value")) {
                (Some(name), Some(value)) => js_value(name, node, value),
                _ => Role::Other,
            }
        }
        _ => Role::Other,
    }
}

/// A named value that is a function or class: a chunk starting at `outer`.
fn js_value<'t>(name: String, outer: Node<'t>, value: Node<'t>) -> Role<'t> {
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

/// The same role, its span starting at `outer`.
fn with_outer<'t>(role: Role<'t>, outer: Node<'t>) -> Role<'t> {
    match role {
        Role::Function { name, body, owner, self_name, .. } => {
            Role::Function { name, outer, body, owner, self_name }
        }
        Role::Type { name, body, .. } => Role::Type { name, outer, body },
        Role::Impl { type_name, body, .. } => Role::Impl { type_name, outer, body },
        Role::Macro { name, .. } => Role::Macro { name, outer },
        other => other,
    }
}

fn java_role<'t>(node: Node<'t>, src: &str) -> Role<'t> {
    match node.kind() {
        "method_declaration" | "constructor_declaration" | "compact_constructor_declaration" => {
            match (field_text(node, "name", src), node.child_by_field_name("body")) {
                (Some(name), Some(_)) => function(name, node, node),
                _ => Role::Other,
            }
        }
        "class_declaration"
        | "interface_declaration"
        | "enum_declaration"
        | "record_declaration"
        | "annotation_type_declaration" => match field_text(node, "name", src) {
            Some(name) => Role::Type { name, outer: node, body: node.child_by_field_name("body") },
            None => Role::Other,
        },
        _ => Role::Other,
    }
}

fn c_role<'t>(node: Node<'t>, src: &str) -> Role<'t> {
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
            let (name, owner) = match path_of(name_node, src) {
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
                Some(inner) => with_outer(c_role(inner, src), node),
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
