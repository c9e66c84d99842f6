//! Tree-sitter-python chunk extraction (docs/GUIDE.md "Design choices").
//!
//! Chunks are the definitions whose enclosing scopes are only the module and classes:
//! top-level functions, classes (nested ones are `Outer.Inner`) and methods
//! (`Class.method`). A def inside an `if`/`try`/`with` at module or class scope is still
//! a top-level function or a method, as in Python. Functions and classes defined inside a
//! function stay part of that function's chunk, and so do their calls and imports.
//! One extra module chunk per file (`<module>`) holds the top-level statements that are
//! not definitions; its span is the whole file so that the innermost chunk containing a
//! line picks it only outside definitions.
//!
//! Call sites and imports belong to the innermost chunk whose source holds them: a
//! method owns its calls (decorators and default arguments included), a class chunk only
//! those in its header and non-method body statements (`__init__`'s calls are
//! `Class.__init__`'s even though the class text shows `__init__`), the module chunk
//! those outside every definition.

use std::cell::RefCell;
use std::collections::HashSet;

use tree_sitter::{Node, Parser, Tree};

use super::render::{Def, Renderer};
use super::syntax::{AttrAssign, CallSite, ClassInfo, FileSyntax, Import, Imported, Receiver};
use super::text::{children, chunk_at, code_end, node_text, slice, statements};
use super::window::{leftover_lines, windows};
use super::{Chunk, ChunkKind};

/// Qualified name of the module chunk.
pub const MODULE_CHUNK_NAME: &str = "<module>";

thread_local! {
    // One parser per rayon worker: chunk_file runs in parallel and parsers are not Sync.
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

fn parse(source: &str) -> Option<Tree> {
    PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut parser = Parser::new();
            parser.set_language(&tree_sitter_python::LANGUAGE.into()).ok()?;
            *slot = Some(parser);
        }
        let tree = slot.as_mut()?.parse(source, None);
        if tree.is_none() {
            // A failed parse may leave state behind; start the next one afresh.
            *slot = None;
        }
        tree
    })
}

/// Chunks, call sites, imports and classes of one Python file.
pub(super) fn chunk_file(path: &str, source: &str) -> FileSyntax {
    match parse(source) {
        Some(tree) => Extractor::new(path, source).run(tree.root_node()),
        None => FileSyntax::empty(path, true),
    }
}

#[derive(Clone, Copy)]
enum Scope {
    Module,
    /// Inside a class body: the class chunk and the byte range of its `class …:` line(s).
    Class {
        chunk: usize,
        header: (usize, usize),
    },
    /// Inside a function: nested defs are not chunks.
    Function,
}

#[derive(Clone, Copy)]
struct Ctx {
    /// Chunk that owns calls found here (`None`: no module chunk, nothing to own them).
    owner: Option<usize>,
    scope: Scope,
}

struct Extractor<'s> {
    path: &'s str,
    r: Renderer<'s>,
    chunks: Vec<Chunk>,
    /// Call sites per chunk with the byte offset of the called name, for source order.
    calls: Vec<Vec<(usize, CallSite)>>,
    imports: Vec<Import>,
    classes: Vec<ClassInfo>,
    attributes: Vec<AttrAssign>,
    /// Names of the functions and classes defined inside each chunk (not chunks themselves).
    local_defs: Vec<HashSet<String>>,
    /// `@overload` signatures waiting for their implementation, by qualified name.
    overloads: std::collections::HashMap<String, String>,
}

impl<'s> Extractor<'s> {
    fn new(path: &'s str, source: &'s str) -> Self {
        Extractor {
            path,
            r: Renderer::new(source),
            chunks: Vec::new(),
            calls: Vec::new(),
            imports: Vec::new(),
            classes: Vec::new(),
            attributes: Vec::new(),
            local_defs: Vec::new(),
            overloads: Default::default(),
        }
    }

    fn run(mut self, root: Node) -> FileSyntax {
        let module = self.r.module_text(root).map(|text| {
            let len = self.r.src.len();
            self.push_chunk(ChunkKind::Module, MODULE_CHUNK_NAME.to_string(), (0, len), &text)
        });
        // Iterative pre-order walk (source order); deep expressions cannot overflow the stack.
        let mut stack = vec![(root, Ctx { owner: module, scope: Scope::Module }, false)];
        while let Some((node, ctx, opened)) = stack.pop() {
            let mut ctx = ctx;
            let mut skip_def = None;
            let at_def_scope = !matches!(ctx.scope, Scope::Function);
            match node.kind() {
                "decorated_definition" | "function_definition" | "class_definition"
                    if at_def_scope && !opened =>
                {
                    if let Some(d) = Def::of(node) {
                        if let Some(inner) = self.open_def(d, ctx) {
                            ctx = inner;
                            skip_def = Some(d.def.id());
                        }
                    }
                }
                "function_definition" | "class_definition" if !at_def_scope => {
                    self.record_local_def(node, ctx)
                }
                "call" => self.record_call(node, ctx),
                "assignment" => self.record_assignment(node, ctx),
                "import_statement" | "import_from_statement" => {
                    self.record_import(node, ctx);
                    continue;
                }
                _ => {}
            }
            for child in children(node).into_iter().rev() {
                // The definition under a decorated_definition was opened with it.
                let opened = skip_def == Some(child.id());
                stack.push((child, ctx, opened));
            }
        }
        let local_defs = std::mem::take(&mut self.local_defs);
        let calls = self
            .calls
            .into_iter()
            .zip(local_defs)
            .map(|(mut sites, locals)| {
                sites.sort_by_key(|(pos, _)| *pos);
                sites
                    .into_iter()
                    .map(|(_, mut site)| {
                        if site.receiver == Receiver::None && locals.contains(&site.name) {
                            site.receiver = Receiver::Local;
                        }
                        site
                    })
                    .collect()
            })
            .collect();
        let mut chunks = self.chunks;
        let mut calls: Vec<Vec<CallSite>> = calls;
        if module.is_some() {
            // What no definition holds, as the module chunk shows it, cut into windows.
            let cuts: Vec<(usize, usize)> = chunks
                .iter()
                .filter(|c| c.kind != ChunkKind::Module)
                .map(|c| (c.start_byte, c.end_byte))
                .collect();
            let leftover = leftover_lines(self.r.src, &cuts);
            let window_chunks = windows(self.path, self.r.src, &self.r.lines, &leftover);
            calls.extend(window_chunks.iter().map(|_| Vec::new()));
            chunks.extend(window_chunks);
        }
        FileSyntax {
            path: self.path.to_string(),
            chunks,
            calls,
            imports: self.imports,
            classes: self.classes,
            attributes: self.attributes,
            has_syntax_errors: root.has_error(),
        }
    }

    fn push_chunk(&mut self, kind: ChunkKind, name: String, span: (usize, usize), code: &str) -> usize {
        let text = format!("{}\n{}", self.path, code);
        self.chunks.push(chunk_at(self.path, kind, name, span, &self.r.lines, text));
        self.calls.push(Vec::new());
        self.local_defs.push(HashSet::new());
        self.chunks.len() - 1
    }

    /// Makes the chunk for a definition at module or class scope; returns the context
    /// for its insides, or `None` when it has no name (syntax errors).
    fn open_def(&mut self, d: Def, ctx: Ctx) -> Option<Ctx> {
        let name = self.r.def_name(d.def);
        if name.is_empty() {
            return None;
        }
        let span = (d.outer.start_byte(), code_end(d.outer));
        let parent = match ctx.scope {
            Scope::Class { chunk, header } => Some((chunk, header)),
            _ => None,
        };
        let qualified = match parent {
            Some((chunk, _)) => format!("{}.{}", self.chunks[chunk].name, name),
            None => name.to_string(),
        };
        if d.is_class() {
            let text = self.r.class_text(d);
            let chunk = self.push_chunk(ChunkKind::Class, qualified.clone(), span, &text);
            let bases = self.base_names(d.def);
            self.classes.push(ClassInfo { name: qualified, chunk: chunk as u32, bases });
            // The `class …:` line(s) without decorators, for this class's method chunks.
            let header_start = self.r.start(d.def);
            let header = (header_start, header_start + self.r.header(d.def, d.def).len());
            return Some(Ctx { owner: Some(chunk), scope: Scope::Class { chunk, header } });
        }
        // An `@overload` stub is a signature of the implementation that follows it: no hit of
        // its own, its text goes into the implementation's chunk. Its insides still belong
        // to no chunk of their own (the enclosing chunk keeps any calls in the signature).
        if self.is_overload(d) {
            let stubs = self.overloads.entry(qualified).or_default();
            stubs.push_str(self.r.full(d.outer));
            stubs.push('\n');
            return Some(Ctx { owner: ctx.owner, scope: Scope::Function });
        }
        let stubs = self.overloads.remove(&qualified).unwrap_or_default();
        let chunk = match parent {
            Some((_, (start, end))) => {
                let class_line = slice(self.r.src, start, end);
                let text = format!("{class_line}\n{stubs}{}", self.r.full(d.outer));
                self.push_chunk(ChunkKind::Method, qualified, span, &text)
            }
            None => {
                let text = format!("{stubs}{}", self.r.full(d.outer));
                self.push_chunk(ChunkKind::Function, qualified, span, &text)
            }
        };
        Some(Ctx { owner: Some(chunk), scope: Scope::Function })
    }

    /// Decorated with `@overload` (or `@typing.overload`, `@t.overload`).
    fn is_overload(&self, d: Def) -> bool {
        children(d.outer).into_iter().filter(|c| c.kind() == "decorator").any(|c| {
            let name = node_text(self.r.src, c).trim_start_matches('@').trim();
            name == "overload" || name.ends_with(".overload")
        })
    }

    fn base_names(&self, class: Node) -> Vec<String> {
        let Some(args) = class.child_by_field_name("superclasses") else {
            return Vec::new();
        };
        statements(args)
            .into_iter()
            .filter_map(|arg| {
                let expr = match arg.kind() {
                    "subscript" => arg.child_by_field_name("value")?,
                    _ => arg,
                };
                Some(self.dotted(expr)?.join("."))
            })
            .collect()
    }

    /// `a.b.c` as `["a", "b", "c"]` when it is a chain of plain names.
    fn dotted(&self, node: Node) -> Option<Vec<String>> {
        let mut parts = Vec::new();
        let mut node = node;
        loop {
            match node.kind() {
                "identifier" => {
                    parts.push(node_text(self.r.src, node).to_string());
                    break;
                }
                "attribute" => {
                    parts.push(node_text(self.r.src, node.child_by_field_name("attribute")?).to_string());
                    node = node.child_by_field_name("object")?;
                }
                _ => return None,
            }
        }
        parts.reverse();
        parts.iter().all(|p| !p.is_empty()).then_some(parts)
    }

    fn record_call(&mut self, call: Node, ctx: Ctx) {
        let Some(owner) = ctx.owner else { return };
        let Some(func) = call.child_by_field_name("function") else {
            return;
        };
        let (name_node, receiver) = match func.kind() {
            "identifier" => (func, Receiver::None),
            "attribute" => {
                let (Some(attr), Some(object)) =
                    (func.child_by_field_name("attribute"), func.child_by_field_name("object"))
                else {
                    return;
                };
                (attr, self.receiver(object))
            }
            _ => return,
        };
        let name = node_text(self.r.src, name_node);
        // `super()` is the receiver of the call that matters (`super().m()`).
        if name.is_empty() || (name == "super" && receiver == Receiver::None) {
            return;
        }
        let pos = name_node.start_byte();
        let line = self.r.lines.line_of(pos) as u32;
        self.calls[owner].push((
            pos,
            CallSite { name: name.to_string(), receiver, line, self_written: None, arity: None },
        ));
    }

    /// A function or class defined inside a chunk: calls to its name stay inside the chunk.
    fn record_local_def(&mut self, def: Node, ctx: Ctx) {
        let (Some(owner), Some(name)) = (ctx.owner, def.child_by_field_name("name")) else {
            return;
        };
        let name = node_text(self.r.src, name);
        if !name.is_empty() {
            self.local_defs[owner].insert(name.to_string());
        }
    }

    /// `self.name = value` inside a method (its insides included). In a chained
    /// `self.a = self.b = X()` each `assignment` node records its own target, with the
    /// innermost value.
    fn record_assignment(&mut self, node: Node, ctx: Ctx) {
        let (Some(owner), Scope::Function) = (ctx.owner, ctx.scope) else {
            return;
        };
        if self.chunks[owner].kind != ChunkKind::Method {
            return;
        }
        let Some(attr) = node.child_by_field_name("left").and_then(|left| self.self_attribute(left)) else {
            return;
        };
        let mut value = node.child_by_field_name("right");
        while let Some(inner) = value.filter(|v| v.kind() == "assignment") {
            value = inner.child_by_field_name("right");
        }
        let annotation = node
            .child_by_field_name("type")
            .and_then(|t| if t.kind() == "type" { t.named_child(0) } else { Some(t) })
            .and_then(|t| self.dotted(t));
        let called = value
            .filter(|v| v.kind() == "call")
            .and_then(|call| call.child_by_field_name("function"))
            .and_then(|f| self.dotted(f));
        let class = match value {
            // A declaration (`self.h: Helper`) or `None` types the attribute only by its annotation.
            None => annotation,
            Some(v) if v.kind() == "none" => annotation,
            Some(_) => called.or(annotation),
        };
        if class.is_none() && value.is_none_or(|v| v.kind() == "none") {
            return;
        }
        self.attributes.push(AttrAssign { chunk: owner as u32, attr, class });
    }

    /// `name` when `node` is `self.name`.
    fn self_attribute(&self, node: Node) -> Option<String> {
        if node.kind() != "attribute" {
            return None;
        }
        let object = node.child_by_field_name("object")?;
        if object.kind() != "identifier" || node_text(self.r.src, object) != "self" {
            return None;
        }
        let attr = node_text(self.r.src, node.child_by_field_name("attribute")?);
        (!attr.is_empty()).then(|| attr.to_string())
    }

    fn receiver(&self, object: Node) -> Receiver {
        if object.kind() == "call" {
            let callee = object.child_by_field_name("function");
            if callee.is_some_and(|f| f.kind() == "identifier" && node_text(self.r.src, f) == "super") {
                return Receiver::Super;
            }
        }
        match self.dotted(object) {
            Some(path) => Receiver::Path(path),
            None => Receiver::Other,
        }
    }

    fn record_import(&mut self, node: Node, ctx: Ctx) {
        let scope = match ctx.scope {
            Scope::Function => ctx.owner.map(|o| o as u32),
            _ => None,
        };
        let (level, module) = if node.kind() == "import_from_statement" {
            match node.child_by_field_name("module_name") {
                Some(m) if m.kind() == "relative_import" => {
                    let mut level = 0;
                    let mut module = String::new();
                    for part in children(m) {
                        match part.kind() {
                            "import_prefix" => {
                                level += node_text(self.r.src, part).matches('.').count() as u32
                            }
                            "dotted_name" => module = self.dotted_name(part),
                            _ => {}
                        }
                    }
                    (level, module)
                }
                Some(m) => (0, self.dotted_name(m)),
                None => return,
            }
        } else {
            (0, String::new())
        };
        let push = |this: &mut Self, module: String, what: Imported, alias: Option<String>| {
            if !(module.is_empty() && level == 0) {
                this.imports.push(Import { level, module, what, alias, scope });
            }
        };
        let is_from = node.kind() == "import_from_statement";
        if is_from && children(node).iter().any(|c| c.kind() == "wildcard_import") {
            push(self, module, Imported::All, None);
            return;
        }
        let mut cursor = node.walk();
        let names: Vec<Node> = node.children_by_field_name("name", &mut cursor).collect();
        for name in names {
            let (target, alias) = match name.kind() {
                "aliased_import" => {
                    let alias =
                        name.child_by_field_name("alias").map(|a| node_text(self.r.src, a).to_string());
                    match name.child_by_field_name("name") {
                        Some(n) => (self.dotted_name(n), alias),
                        None => continue,
                    }
                }
                "dotted_name" => (self.dotted_name(name), None),
                _ => continue,
            };
            if target.is_empty() {
                continue;
            }
            if is_from {
                push(self, module.clone(), Imported::Name(target), alias);
            } else {
                push(self, target, Imported::Module, alias);
            }
        }
    }

    /// `a . b` → `a.b` (identifiers joined, whitespace and comments ignored).
    fn dotted_name(&self, node: Node) -> String {
        let parts: Vec<&str> = statements(node)
            .into_iter()
            .filter(|c| c.kind() == "identifier")
            .map(|c| node_text(self.r.src, c))
            .collect();
        parts.join(".")
    }
}
