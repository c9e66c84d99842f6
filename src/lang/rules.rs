//! What a language's syntax tree means to the chunker and the call graph. Each row of the table
//! fills in a [`Syntax`]: a role function (which nodes are functions, types, members of a type
//! defined elsewhere, scopes to look into) and, as data, how its calls, member accesses, names
//! and receivers are spelled. The generic extractor (`chunk/generic.rs`) reads every row whose
//! reader is [`Reader::Rules`](super::Reader); Python's reader has its own extractor.

use serde::{Deserialize, Serialize};
use tree_sitter::Node;

/// What stands before a called name, in every language.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Receiver {
    /// `foo()`.
    None,
    /// A dotted chain of plain names: `a.b.foo()` → `["a", "b"]`; `self`, `this`, `Self` and
    /// `$this` → `["self"]`.
    Path(Vec<String>),
    /// `super().m()`, `super.m()`, `base.M()`.
    Super,
    /// Anything else: `f().m()`, `x[0].m()`, `"".join()`.
    Other,
    /// None, and the name is a function or class defined inside the calling chunk
    /// (`def inner(): …` then `inner()`): part of the chunk itself, never another chunk.
    Local,
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
        /// C++ `Foo::bar`, Kotlin `fun Foo.bar()`.
        owner: Option<String>,
        /// The name the function calls its receiver by (Go: `s` in `func (s *Server) …`).
        self_name: Option<String>,
    },
    /// A class, struct, trait, interface, module or enum: a chunk; functions in `body` are its
    /// methods.
    Type { name: String, outer: Node<'t>, body: Option<Node<'t>> },
    /// A macro definition (`macro_rules!`, C `#define F(x)`): a chunk of its own kind.
    Macro { name: String, outer: Node<'t> },
    /// An item macro's token tree (`cfg_rt! { pub fn spawn… }`): its insides are parsed again
    /// as items of the language, and their definitions are chunks like any other.
    Items { tokens: Node<'t> },
    /// A namespace and nothing more (a Ruby `module` that wraps classes but defines no method of
    /// its own): no chunk of its own, which would span every definition inside it and compete
    /// with them as one huge class; its name still qualifies theirs (`Rack.Request`), and its
    /// header and `end` lines are module-level code.
    Namespace { name: String, outer: Node<'t>, body: Node<'t> },
    /// Methods of a type defined elsewhere (Rust `impl`, Swift `extension`): no chunk of its own.
    Impl { type_name: String, outer: Node<'t>, body: Node<'t> },
    /// Test code inside a source file (Rust `#[cfg(test)] mod tests`): no chunks, not in the
    /// module chunk either.
    Skip,
    /// Anything else; definitions inside it are still found (`#ifdef`, `namespace`, `mod`).
    Other,
}

/// How a call is spelled in one node kind.
pub enum CallForm {
    /// The callee expression is the first of `fields` present; its last name is the called
    /// name, the rest its receiver: `a.b.f()`, `Foo::new()`, `new Foo()`.
    Callee { kind: &'static str, fields: &'static [&'static str] },
    /// The callee expression is the node's first named child (Kotlin's and Swift's calls).
    FirstChild { kind: &'static str },
    /// The called name is in field `name`, the receiver in field `object` (Java's
    /// `method_invocation`, Ruby's `call`, PHP's `member_call_expression`).
    Method { kind: &'static str, name: &'static str, object: &'static str },
    /// A bare name that calls a method of the receiver, `self` implied, unless a local
    /// variable of that name is bound before it in the same definition (Ruby's `reset` for
    /// `self.reset()`: tree-sitter-ruby parses it as an `identifier`, as it does a local).
    /// Where it binds a local (`x = …`, a parameter) is in `binds`; where it is neither a call
    /// nor a local (a `def`'s own name, a call's method name) is in `not_calls`.
    Bare { kind: &'static str, binds: &'static [Place], not_calls: &'static [Place] },
}

/// A name's place in its parent: the parent's kind and the field the name is in (empty: any
/// child of it).
pub struct Place {
    pub parent: &'static str,
    pub field: &'static str,
}

impl Place {
    /// Whether `node`, a child of `parent`, stands here.
    fn holds(&self, parent: Node, node: Node) -> bool {
        parent.kind() == self.parent
            && (self.field.is_empty() || parent.child_by_field_name(self.field) == Some(node))
    }
}

/// What a bare name is where it stands ([`CallForm::Bare`]).
#[derive(Debug, PartialEq, Eq)]
pub enum BareName {
    /// It binds a local variable of this name (an assignment's left side, a parameter).
    Binds(String),
    /// It calls this name unless a local of the name is bound before it.
    Calls(String),
}

impl CallForm {
    fn kind(&self) -> &'static str {
        match self {
            CallForm::Callee { kind, .. }
            | CallForm::FirstChild { kind }
            | CallForm::Method { kind, .. }
            | CallForm::Bare { kind, .. } => kind,
        }
    }
}

/// How a member access or a path is spelled: `a.b`, `a::b`, `a->b`, `A::B`.
pub struct Member {
    pub kind: &'static str,
    /// The object: the first of these fields present; none listed: the first named child.
    pub object: &'static [&'static str],
    /// The member's name: this field; empty: the last named child.
    pub name: &'static str,
}

/// A node around a name that adds nothing to it (generics, Swift's navigation suffix): the
/// name is in `field`, or the first named child when it is empty.
pub struct Wrapper {
    pub kind: &'static str,
    pub field: &'static str,
}

/// A language's syntax as the generic extractor reads it: one per row of the table.
pub struct Syntax {
    /// What a node is: a function, a type, an `impl`, a scope to look into.
    pub role: for<'t> fn(&Rules, Node<'t>, &str) -> Role<'t>,
    pub calls: &'static [CallForm],
    pub members: &'static [Member],
    pub wrappers: &'static [Wrapper],
    /// Identifier-like node kinds.
    pub names: &'static [&'static str],
    /// Node kinds that are the receiver itself (`self`, `this`).
    pub selves: &'static [&'static str],
    /// Names that are the receiver itself where the grammar parses them as names (Rust's
    /// `Self`, PHP's `$this`, Scala's `this`).
    pub self_words: &'static [&'static str],
    /// Node kinds that are the parent type's receiver (`super`, `base`).
    pub supers: &'static [&'static str],
    /// Node kinds a path may start with besides names (Rust's `crate::`, `super::`).
    pub path_roots: &'static [&'static str],
    pub comments: &'static [&'static str],
    /// Comments and attributes directly above a definition that belong to it.
    pub leading: &'static [&'static str],
    /// Attribute node kinds the row's `test_attribute` rule reads (`#[test]`).
    pub attributes: &'static [&'static str],
    /// Method names that construct their type: they stay whole in its summary, as `__init__`
    /// does in a Python class chunk.
    pub constructors: &'static [&'static str],
    /// Whether a method named as its type is a constructor (Java, C++, C#).
    pub constructor_is_type_name: bool,
    /// Whether a call-shaped node is no call: a definition's own head (Elixir's `def f(x)` is a
    /// call of `def` whose argument is the call-shaped `f(x)`), a module attribute (`@doc "…"`).
    pub not_a_call: fn(Node, &str) -> bool,
    /// Whether a function is written as clauses, one after another under one name (Elixir's
    /// `def f(0)` then `def f(n)`, Haskell's equations): adjacent clauses are one chunk, so that
    /// a call of the name finds one definition, not several to choose from.
    pub clauses: bool,
    /// Whether a definition is test code by what it is, wherever its file lies: a Ruby class
    /// deriving from `Minitest::Test` (a root `test.rb` defining one is a test).
    pub test_definition: fn(Node, &str) -> bool,
}

/// The syntax rules of one language, for the generic extractor (`LangSpec::rules`).
pub struct Rules {
    syntax: &'static Syntax,
    /// The row's `test_attribute` rule.
    marks_test: fn(&str) -> bool,
}

impl Rules {
    pub fn new(syntax: &'static Syntax, marks_test: fn(&str) -> bool) -> Rules {
        Rules { syntax, marks_test }
    }

    /// Whether a node directly before a definition belongs to it (doc comments, `#[…]`).
    pub fn is_leading(&self, node: Node) -> bool {
        self.syntax.leading.contains(&node.kind())
    }

    /// Whether `node` is test code by its language's `test_attribute` rule: an attribute above
    /// it or above an item it is inside (a method of a `#[cfg(test)] impl`).
    pub fn is_test_item(&self, node: Node, src: &str) -> bool {
        let marks = self.marks_test;
        let mut at = Some(node);
        while let Some(n) = at {
            if (self.syntax.test_definition)(n, src) || self.attributes_above(n, src).any(|a| marks(&a)) {
                return true;
            }
            at = n.parent();
        }
        false
    }

    pub fn is_comment(&self, node: Node) -> bool {
        self.syntax.comments.contains(&node.kind())
    }

    pub fn role<'t>(&self, node: Node<'t>, src: &str) -> Role<'t> {
        (self.syntax.role)(self, node, src)
    }

    /// Whether adjacent functions of one name are clauses of one definition ([`Syntax::clauses`]).
    pub fn has_clauses(&self) -> bool {
        self.syntax.clauses
    }

    /// Whether method `method` of type `type_name` constructs it.
    pub fn is_constructor(&self, method: &str, type_name: &str) -> bool {
        (self.syntax.constructor_is_type_name && method == type_name)
            || self.syntax.constructors.contains(&method)
    }

    /// A call at `node`: the called name, the node holding it (for its position), and what
    /// stands before it. `new Foo()` and `Foo::new()` are calls of `Foo` and `new`.
    pub fn call<'t>(&self, node: Node<'t>, src: &str) -> Option<(String, Node<'t>, Receiver)> {
        let kind = node.kind();
        let form = self.syntax.calls.iter().find(|f| f.kind() == kind)?;
        if (self.syntax.not_a_call)(node, src) {
            return None;
        }
        let callee = match form {
            CallForm::Method { name, object, .. } => {
                let name = node.child_by_field_name(name)?;
                let receiver = match node.child_by_field_name(object) {
                    None => Receiver::None,
                    Some(object) => self.receiver_of(object, src),
                };
                return Some((text(name, src).to_string(), name, receiver));
            }
            CallForm::Callee { fields, .. } => fields.iter().find_map(|f| node.child_by_field_name(f))?,
            CallForm::FirstChild { .. } => node.named_child(0)?,
            // Whether a bare name calls depends on the locals before it: `bare_name`.
            CallForm::Bare { .. } => return None,
        };
        let (name, receiver) = self.split_callee(callee, src)?;
        Some((text(name, src).to_string(), name, receiver))
    }

    /// A bare name at `node` (a child of `parent`) that binds a local or may call a method
    /// ([`CallForm::Bare`]); `None` for any other node, and for a name that is neither (a
    /// `def`'s own name).
    pub fn bare_name(&self, node: Node, parent: Option<Node>, src: &str) -> Option<BareName> {
        let kind = node.kind();
        let (binds, not_calls) = self.syntax.calls.iter().find_map(|f| match f {
            CallForm::Bare { kind: k, binds, not_calls } if *k == kind => Some((binds, not_calls)),
            _ => None,
        })?;
        let at = |place: &Place| parent.is_some_and(|parent| place.holds(parent, node));
        if not_calls.iter().any(at) {
            return None;
        }
        let name = text(node, src).to_string();
        if name.is_empty() {
            return None;
        }
        Some(if binds.iter().any(at) { BareName::Binds(name) } else { BareName::Calls(name) })
    }

    fn is_name(&self, node: Node) -> bool {
        self.syntax.names.contains(&node.kind())
    }

    /// The name inside a wrapper node (`parse::<T>`, `.suffix`), when `node` is one.
    fn unwrap<'t>(&self, node: Node<'t>) -> Option<Node<'t>> {
        let w = self.syntax.wrappers.iter().find(|w| w.kind == node.kind())?;
        if w.field.is_empty() {
            node.named_child(0)
        } else {
            node.child_by_field_name(w.field)
        }
    }

    /// `(object, name)` of a member access or path, in this language's spellings.
    fn member_parts<'t>(&self, node: Node<'t>) -> Option<(Option<Node<'t>>, Node<'t>)> {
        let m = self.syntax.members.iter().find(|m| m.kind == node.kind())?;
        let object = if m.object.is_empty() {
            node.named_child(0).filter(|_| node.named_child_count() > 1)
        } else {
            m.object.iter().find_map(|f| node.child_by_field_name(f))
        };
        let name = if m.name.is_empty() {
            node.named_child(node.named_child_count().checked_sub(1)?)?
        } else {
            node.child_by_field_name(m.name)?
        };
        Some((object, name))
    }

    /// The called name's node and its receiver, through member accesses, paths and wrappers.
    fn split_callee<'t>(&self, node: Node<'t>, src: &str) -> Option<(Node<'t>, Receiver)> {
        if self.is_name(node) {
            return Some((node, Receiver::None));
        }
        if let Some(inner) = self.unwrap(node) {
            return self.split_callee(inner, src);
        }
        let (object, name) = self.member_parts(node)?;
        let (name, inner) = match self.split_callee(name, src) {
            Some((n, Receiver::None)) => (n, None),
            // `a::b::c` in C++ nests to the right: `a` then `b::c`.
            Some((n, Receiver::Path(p))) => (n, Some(p)),
            _ => return None,
        };
        let receiver = match (object.map(|o| self.receiver_of(o, src)), inner) {
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

    /// What stands before a called name: the receiver itself as `["self"]`, a chain of plain
    /// names as its parts, `super` as `Super`, anything else as `Other`.
    pub fn receiver_of(&self, node: Node, src: &str) -> Receiver {
        match self.path_of(node, src) {
            Some(parts) => Receiver::Path(parts),
            None if self.syntax.supers.contains(&node.kind()) => Receiver::Super,
            None => Receiver::Other,
        }
    }

    /// A chain of plain names (`a.b.c`, `ns::Foo::bar`) as its parts.
    pub fn path_of(&self, node: Node, src: &str) -> Option<Vec<String>> {
        let kind = node.kind();
        if self.syntax.selves.contains(&kind) {
            return Some(vec!["self".into()]);
        }
        if self.syntax.path_roots.contains(&kind)
            && node.parent().is_some_and(|p| self.syntax.members.iter().any(|m| m.kind == p.kind()))
        {
            return Some(vec![text(node, src).to_string()]);
        }
        if self.is_name(node) {
            let t = text(node, src);
            // One node may hold a dotted name (Elixir's alias `Bank.Ledger`, a Haskell module
            // qualifier `Data.Map`): its parts, as if written as member accesses.
            return Some(
                t.split('.')
                    .filter(|part| !part.is_empty())
                    .map(|part| {
                        if self.syntax.self_words.contains(&part) {
                            "self".into()
                        } else {
                            part.to_string()
                        }
                    })
                    .collect(),
            );
        }
        if let Some(inner) = self.unwrap(node) {
            return self.path_of(inner, src);
        }
        let (object, name) = self.member_parts(node)?;
        let mut parts = match object {
            Some(o) => self.path_of(o, src)?,
            None => Vec::new(),
        };
        parts.extend(self.path_of(name, src)?);
        Some(parts)
    }

    /// The attributes right above `node` (comments between them skipped), whitespace removed,
    /// nearest first.
    pub fn attributes_above<'t>(&self, node: Node<'t>, src: &'t str) -> impl Iterator<Item = String> + 't {
        let syntax = self.syntax;
        let mut prev = node.prev_named_sibling();
        std::iter::from_fn(move || loop {
            let p = prev?;
            prev = p.prev_named_sibling();
            if syntax.attributes.contains(&p.kind()) {
                return Some(text(p, src).chars().filter(|c| !c.is_whitespace()).collect());
            }
            if !syntax.comments.contains(&p.kind()) {
                prev = None;
                return None;
            }
        })
    }
}

pub(crate) fn text<'s>(node: Node, src: &'s str) -> &'s str {
    src.get(node.start_byte()..node.end_byte()).unwrap_or("")
}

pub(crate) fn field_text(node: Node, field: &str, src: &str) -> Option<String> {
    let t = text(node.child_by_field_name(field)?, src).trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// The first named child of one of these kinds.
pub(crate) fn child_of_kind<'t>(node: Node<'t>, kinds: &[&str]) -> Option<Node<'t>> {
    (0..node.named_child_count()).filter_map(|i| node.named_child(i)).find(|c| kinds.contains(&c.kind()))
}

/// `Foo<T>`, `&mut foo::Foo`, `*Foo` → `Foo`: the last plain name of a type expression.
pub fn type_name(node: Node, src: &str) -> Option<String> {
    let t = text(node, src);
    let base = t.split('<').next().unwrap_or(t);
    let last = base.rsplit([':', '.', '&', '*', ' ', '(', '[', '\\']).find(|p| !p.is_empty())?;
    let last = last.trim().trim_end_matches(['?', '!']);
    (last.chars().next()?.is_alphabetic() || last.starts_with('_')).then(|| last.to_string())
}

/// A function chunk named `name` from `outer`, its body in `def`'s `body` field.
pub(crate) fn function<'t>(name: String, outer: Node<'t>, def: Node<'t>) -> Role<'t> {
    Role::Function { name, outer, body: def.child_by_field_name("body"), owner: None, self_name: None }
}

/// A function or type named by field `name` of `node`; `Other` when it has no name.
pub(crate) fn named<'t>(node: Node<'t>, src: &str, make: impl FnOnce(String) -> Role<'t>) -> Role<'t> {
    match field_text(node, "name", src) {
        Some(name) => make(name),
        None => Role::Other,
    }
}

/// The same role, its span starting at `outer`.
pub(crate) fn with_outer<'t>(role: Role<'t>, outer: Node<'t>) -> Role<'t> {
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
