//! Chunks of every language the generic reader reads (`lang::Reader::Rules`), from the language table's syntax rules
//! (`lang/rules.rs`): one chunk per function, per type (class, struct, trait, interface, enum)
//! and per method, plus a module chunk per file, as for Python.
//!
//! - A method's text is its type's header line (`impl<T> Display for Foo<T> {`,
//!   `public class Foo extends Bar {`) followed by its source; a method defined outside its type
//!   (Go receivers, C++ `Foo::bar`) names the type in its own signature.
//! - A type's text is its declaration with the bodies of its methods and nested types elided
//!   (`{ ... }`); constructors stay whole (`Rules::is_constructor`), as `__init__` does in a
//!   Python class chunk.
//! - Doc comments and attributes directly above a definition belong to it (text and span).
//! - The module chunk holds what no chunk holds (imports, constants, macros, `impl` headers);
//!   its span is the whole file, so only lines outside every definition fall to it.
//! - Test code inside a source file (Rust `#[cfg(test)]` modules) yields no chunk; other items
//!   the language marks as tests (`#[test] fn` at the top level, `#[cfg(test)] fn`) are chunks
//!   marked `test` (`Rules::is_test_item`).

use std::cell::RefCell;
use std::collections::HashSet;

use tree_sitter::{Node, Parser, Tree};

use super::macros::{self, MAX_MACRO_DEPTH};
use super::syntax::{CallSite, ClassInfo, FileSyntax, Receiver};
use super::text::{children, chunk_at, is_blank, slice, Lines};
use super::window::{joined, leftover_lines, windows};
use super::{Chunk, ChunkKind, MODULE_CHUNK_NAME};
use crate::lang::rules::{BareName, Role};
use crate::lang::{extension, Lang, Rules};

thread_local! {
    // One parser per rayon worker (parsers are not Sync); its grammar is set per file.
    static PARSER: RefCell<Parser> = RefCell::new(Parser::new());
}

fn parse(lang: Lang, path: &str, source: &str) -> Option<Tree> {
    PARSER.with(|cell| {
        let mut parser = cell.borrow_mut();
        parser.set_language(&lang.grammar(&extension(path))).ok()?;
        // The whole file (a thread's parser may keep ranges from elsewhere).
        parser.set_included_ranges(&[]).ok()?;
        let masked = (lang.spec().mask)(source);
        let tree = parse_in_time(&mut parser, masked.as_deref().unwrap_or(source));
        if tree.is_none() {
            parser.reset();
        }
        tree
    })
}

/// How long one file may take to parse: a grammar can fall into error recovery that takes
/// minutes on a broken file (tree-sitter-kotlin-ng on a mutated fixture, found by
/// `scripts/test/fuzz-rows.sh`); past this the file yields no definitions instead of a hang.
/// Real files parse in milliseconds; the budget grows with size for generated giants.
fn parse_budget(len: usize) -> std::time::Duration {
    std::time::Duration::from_millis(2_000 + len as u64 / 50)
}

/// `text` parsed, or `None` when the parse outlives [`parse_budget`].
fn parse_in_time(parser: &mut Parser, text: &str) -> Option<Tree> {
    let started = std::time::Instant::now();
    let budget = parse_budget(text.len());
    let bytes = text.as_bytes();
    let mut past_budget = |_: &tree_sitter::ParseState| started.elapsed() > budget;
    let options = tree_sitter::ParseOptions::new().progress_callback(&mut past_budget);
    parser.parse_with_options(&mut |at, _| &bytes[at.min(bytes.len())..], None, Some(options))
}

/// Chunks and call sites of one file of `lang` (a row the generic reader reads).
pub fn chunk_file(lang: Lang, path: &str, source: &str) -> FileSyntax {
    match parse(lang, path, source) {
        Some(tree) => Extractor::new(lang, path, source).run(Some(tree.root_node())),
        // No tree (the parse outlived its budget): the file is module code, in windows, so
        // every line is still embedded and searchable.
        None => Extractor::new(lang, path, source).run(None),
    }
}

/// A type whose body is being read: its qualified name and the header its methods show.
struct TypeCtx {
    name: String,
    header: String,
}

#[derive(Clone, Copy)]
enum Scope {
    /// Where definitions are chunks; inside a type (or `impl`) body they are its methods.
    Defs { ty: Option<usize> },
    /// Inside a function: nothing nested is a chunk.
    Function,
}

#[derive(Clone, Copy)]
struct Ctx {
    /// The chunk that owns calls found here.
    owner: usize,
    scope: Scope,
}

struct Extractor<'s> {
    rules: Rules,
    lang: Lang,
    path: &'s str,
    src: &'s str,
    lines: Lines,
    chunks: Vec<Chunk>,
    calls: Vec<Vec<(usize, CallSite)>>,
    /// The name each chunk calls its receiver by, when not `self`/`this` (Go).
    self_names: Vec<Option<String>>,
    /// The local variables each chunk has bound so far, in source order: a bare name of one
    /// is no call (`CallForm::Bare`).
    locals: Vec<HashSet<String>>,
    classes: Vec<ClassInfo>,
    types: Vec<TypeCtx>,
    /// Byte ranges no module chunk shows: every chunk's span, and test code.
    cuts: Vec<(usize, usize)>,
}

impl<'s> Extractor<'s> {
    fn new(lang: Lang, path: &'s str, src: &'s str) -> Self {
        Extractor {
            rules: lang.spec().rules(),
            lang,
            path,
            src,
            lines: Lines::new(src),
            chunks: Vec::new(),
            calls: Vec::new(),
            self_names: Vec::new(),
            locals: Vec::new(),
            classes: Vec::new(),
            types: Vec::new(),
            cuts: Vec::new(),
        }
    }

    fn run(mut self, root: Option<Node>) -> FileSyntax {
        // The module chunk comes first and owns the calls outside every definition; its text
        // is known only once every definition has been cut out.
        let module =
            self.push_chunk(ChunkKind::Module, MODULE_CHUNK_NAME.into(), (0, self.src.len()), String::new());
        if let Some(root) = root {
            self.walk(root, Ctx { owner: module, scope: Scope::Defs { ty: None } }, 0);
        }
        self.finish(root.is_none_or(|r| r.has_error()))
    }

    /// Every definition and call under `root` (pre-order, source order); `depth` counts the
    /// item macros around it.
    fn walk(&mut self, root: Node, ctx: Ctx, depth: usize) {
        // Each node with its parent: tree-sitter finds a parent only by descending from the root.
        let mut stack = vec![(root, ctx, None)];
        while let Some((node, ctx, parent)) = stack.pop() {
            if let Scope::Defs { ty } = ctx.scope {
                // Comments outside definitions (licence headers) would crowd the module chunk.
                if ty.is_none() && self.rules.is_comment(node) {
                    self.cuts.push((node.start_byte(), node.end_byte()));
                    continue;
                }
                match self.rules.role(node, self.src) {
                    Role::Function { name, outer, body: _, owner, self_name } => {
                        let chunk = self.open_function(ChunkKind::Function, name, outer, ty, owner);
                        self.self_names[chunk] = self_name;
                        push_children(&mut stack, outer, Ctx { owner: chunk, scope: Scope::Function });
                        continue;
                    }
                    Role::Macro { name, outer } => {
                        let chunk = self.open_function(ChunkKind::Macro, name, outer, None, None);
                        push_children(&mut stack, outer, Ctx { owner: chunk, scope: Scope::Function });
                        continue;
                    }
                    Role::Type { name, outer, body } => {
                        let (chunk, inner) = self.open_type(name, outer, body, ty);
                        match body {
                            Some(body) => push_children(&mut stack, body, Ctx { owner: chunk, scope: inner }),
                            None => {
                                push_children(&mut stack, outer, Ctx { owner: chunk, scope: Scope::Function })
                            }
                        }
                        continue;
                    }
                    Role::Namespace { name, outer, body } => {
                        let name = match ty {
                            Some(t) => format!("{}.{name}", self.types[t].name),
                            None => name,
                        };
                        let header = self.header(outer, Some(body));
                        self.types.push(TypeCtx { name, header });
                        let inner = Scope::Defs { ty: Some(self.types.len() - 1) };
                        push_children(&mut stack, body, Ctx { owner: ctx.owner, scope: inner });
                        continue;
                    }
                    Role::Impl { type_name, outer, body } => {
                        let header = self.header(outer, Some(body));
                        self.types.push(TypeCtx { name: type_name, header });
                        let inner = Scope::Defs { ty: Some(self.types.len() - 1) };
                        push_children(&mut stack, body, Ctx { owner: ctx.owner, scope: inner });
                        continue;
                    }
                    Role::Items { tokens } if depth < MAX_MACRO_DEPTH => {
                        if let Some(tree) = macros::parse_items(self.lang, self.path, self.src, tokens) {
                            self.walk(tree.root_node(), ctx, depth + 1);
                        }
                        continue;
                    }
                    Role::Skip => {
                        let start = self.leading_start(node);
                        self.cuts.push((start, node.end_byte()));
                        continue;
                    }
                    Role::Items { .. } | Role::Other => {}
                }
            }
            if let Some((name, at, receiver)) = self.rules.call(node, self.src) {
                let arity = crate::lang::call_arity(self.lang, node);
                self.record_call(ctx.owner, name, at, receiver, arity);
            } else if let Some(bare) = self.rules.bare_name(node, parent, self.src) {
                // Source order: a local is bound before the names that read it.
                match bare {
                    BareName::Binds(name) => {
                        self.locals[ctx.owner].insert(name);
                    }
                    BareName::Calls(name) if !self.locals[ctx.owner].contains(&name) => {
                        self.record_call(ctx.owner, name, node, Receiver::None, None);
                    }
                    BareName::Calls(_) => {}
                }
            }
            push_children(&mut stack, node, ctx);
        }
    }

    fn finish(mut self, has_syntax_errors: bool) -> FileSyntax {
        let leftover = leftover_lines(self.src, &self.cuts);
        let window_chunks = windows(self.path, self.src, &self.lines, &leftover);
        let mut calls: Vec<Vec<CallSite>> = std::mem::take(&mut self.calls)
            .into_iter()
            .map(|mut sites| {
                sites.sort_by_key(|(pos, _)| *pos);
                sites.into_iter().map(|(_, site)| site).collect()
            })
            .collect();
        let mut chunks = self.chunks;
        let mut classes = self.classes;
        if leftover.is_empty() {
            // Nothing outside the definitions: no module chunk (its calls were none).
            chunks.remove(0);
            calls.remove(0);
            for class in &mut classes {
                class.chunk -= 1;
            }
        } else {
            chunks[0].text = format!("{}\n{}", self.path, joined(self.src, &leftover));
        }
        calls.extend(window_chunks.iter().map(|_| Vec::new()));
        chunks.extend(window_chunks);
        FileSyntax {
            path: self.path.to_string(),
            chunks,
            calls,
            imports: Vec::new(),
            classes,
            attributes: Vec::new(),
            has_syntax_errors,
        }
    }

    fn push_chunk(&mut self, kind: ChunkKind, name: String, span: (usize, usize), text: String) -> usize {
        self.chunks.push(chunk_at(self.path, kind, name, span, &self.lines, text));
        self.calls.push(Vec::new());
        self.self_names.push(None);
        self.locals.push(HashSet::new());
        self.chunks.len() - 1
    }

    fn open_function(
        &mut self,
        kind: ChunkKind,
        name: String,
        outer: Node,
        ty: Option<usize>,
        owner: Option<String>,
    ) -> usize {
        let mut start = self.leading_start(outer);
        let end = outer.end_byte();
        let (kind, name, header) = match (ty, owner) {
            (Some(t), _) => {
                let ty = &self.types[t];
                (ChunkKind::Method, format!("{}.{name}", ty.name), Some(ty.header.clone()))
            }
            (None, Some(owner)) => (ChunkKind::Method, format!("{owner}.{name}"), None),
            (None, None) => (kind, name, None),
        };
        let clause_of = self.earlier_clause(&name, kind, outer);
        if let Some(first) = clause_of {
            start = self.chunks[first].start_byte;
        }
        self.cuts.push((start, end));
        let code = self.lines_of(start, end);
        let text = match header {
            Some(header) => format!("{}\n{header}\n{code}", self.path),
            None => format!("{}\n{code}", self.path),
        };
        let chunk = match clause_of {
            Some(first) => {
                let merged = chunk_at(self.path, kind, name, (start, end), &self.lines, text);
                self.chunks[first] = Chunk { test: self.chunks[first].test, ..merged };
                first
            }
            None => self.push_chunk(kind, name, (start, end), text),
        };
        self.chunks[chunk].test |= self.rules.is_test_item(outer, self.src);
        self.chunks[chunk].form = (self.lang.spec().written.form)(outer, self.src);
        chunk
    }

    /// The chunk this function continues as a further clause ([`Rules::has_clauses`]): the last
    /// chunk opened, when it is a function of the same name and kind and only comments stand
    /// between its end and `outer`.
    fn earlier_clause(&self, name: &str, kind: ChunkKind, outer: Node) -> Option<usize> {
        if !self.rules.has_clauses() {
            return None;
        }
        let last = self.chunks.len().checked_sub(1).filter(|&i| i > 0)?;
        let prev = &self.chunks[last];
        if prev.kind != kind || prev.name != name || prev.end_byte > outer.start_byte() {
            return None;
        }
        let mut between = outer.prev_sibling();
        while let Some(node) = between.filter(|n| n.end_byte() > prev.end_byte) {
            if !self.rules.is_comment(node) && !self.rules.is_leading(node) {
                return None;
            }
            between = node.prev_sibling();
        }
        between.is_some_and(|n| n.end_byte() == prev.end_byte).then_some(last)
    }

    /// The type's chunk and the scope of its body.
    fn open_type(
        &mut self,
        name: String,
        outer: Node,
        body: Option<Node>,
        ty: Option<usize>,
    ) -> (usize, Scope) {
        let start = self.leading_start(outer);
        let end = outer.end_byte();
        self.cuts.push((start, end));
        let qualified = match ty {
            Some(t) => format!("{}.{name}", self.types[t].name),
            None => name.clone(),
        };
        let summary = self.type_text(start, end, &name, body);
        let text = format!("{}\n{summary}", self.path);
        let chunk = self.push_chunk(ChunkKind::Class, qualified.clone(), (start, end), text);
        self.chunks[chunk].test = self.rules.is_test_item(outer, self.src);
        self.chunks[chunk].form = (self.lang.spec().written.form)(outer, self.src);
        self.classes.push(ClassInfo { name: qualified.clone(), chunk: chunk as u32, bases: Vec::new() });
        let header = self.header(outer, body);
        self.types.push(TypeCtx { name: qualified, header });
        (chunk, Scope::Defs { ty: Some(self.types.len() - 1) })
    }

    fn record_call(&mut self, owner: usize, name: String, at: Node, receiver: Receiver, arity: Option<u8>) {
        if name.is_empty() {
            return;
        }
        // Go names its receiver: `s.helper()` in `func (s *Server) …` is a call on self.
        let (receiver, self_written) = match (receiver, &self.self_names[owner]) {
            (Receiver::Path(mut path), Some(own)) if path.first() == Some(own) => {
                path[0] = "self".into();
                (Receiver::Path(path), Some(own.clone()))
            }
            (receiver, _) => (receiver, None),
        };
        let pos = at.start_byte();
        let line = self.lines.line_of(pos) as u32;
        self.calls[owner].push((pos, CallSite { name, receiver, line, self_written, arity }));
    }

    /// Where a definition's chunk starts: the doc comments and attributes directly above it
    /// (no blank line between, nothing else on their lines).
    fn leading_start(&self, outer: Node) -> usize {
        let mut start = outer.start_byte();
        let mut prev = node_before(outer);
        while let Some(p) = prev.filter(|p| self.rules.is_leading(*p)) {
            let gap = slice(self.src, p.end_byte(), start);
            let own_line = is_blank(slice(self.src, self.lines.line_start(p.start_byte()), p.start_byte()));
            if gap.matches('\n').count() > 1 || !own_line || !gap.trim().is_empty() {
                break;
            }
            start = p.start_byte();
            prev = node_before(p);
        }
        start
    }

    /// `start..end` from the start of its first line when only indentation precedes it.
    fn lines_of(&self, start: usize, end: usize) -> String {
        slice(self.src, self.text_start(start), end).to_string()
    }

    fn text_start(&self, start: usize) -> usize {
        let line_start = self.lines.line_start(start);
        if is_blank(slice(self.src, line_start, start)) {
            line_start
        } else {
            start
        }
    }

    /// A type's header as its methods show it: the declaration up to its body's opening brace.
    fn header(&self, outer: Node, body: Option<Node>) -> String {
        let start = outer.start_byte();
        let head = match body {
            Some(body) => {
                let brace = slice(self.src, body.start_byte(), body.start_byte() + 1);
                format!(
                    "{}{}",
                    slice(self.src, start, body.start_byte()).trim_end(),
                    if brace == "{" { " {" } else { "" }
                )
            }
            None => slice(self.src, start, self.lines.line_end(start)).trim_end().to_string(),
        };
        let line_start = self.lines.line_start(start);
        let indent = slice(self.src, line_start, start);
        let indent = if is_blank(indent) { indent } else { "" };
        format!("{indent}{}", head.trim_start())
    }

    /// The type's declaration with its methods' and nested types' bodies elided.
    fn type_text(&self, start: usize, end: usize, name: &str, body: Option<Node>) -> String {
        let mut elided: Vec<(usize, usize)> = Vec::new();
        if let Some(body) = body {
            let mut stack = children(body);
            while let Some(member) = stack.pop() {
                let inner = match self.rules.role(member, self.src) {
                    Role::Function { name: m, body: Some(b), .. } if !self.rules.is_constructor(&m, name) => {
                        Some(b)
                    }
                    Role::Function { .. } | Role::Macro { .. } | Role::Items { .. } => None,
                    Role::Type { body: Some(b), .. } | Role::Impl { body: b, .. } => Some(b),
                    Role::Type { .. } => None,
                    Role::Skip => {
                        elided.push((self.leading_start(member), member.end_byte()));
                        continue;
                    }
                    Role::Namespace { .. } | Role::Other => {
                        stack.extend(children(member));
                        continue;
                    }
                };
                if let Some(b) = inner {
                    elided.push((b.start_byte(), b.end_byte()));
                }
            }
        }
        elided.sort();
        let mut out = String::new();
        let mut pos = self.text_start(start);
        for (a, b) in elided {
            if a < pos {
                continue;
            }
            out.push_str(slice(self.src, pos, a));
            out.push_str(if slice(self.src, a, a + 1) == "{" { "{ ... }" } else { "..." });
            pos = b;
        }
        out.push_str(slice(self.src, pos, end));
        drop_blank_lines(&out)
    }
}

/// The node just before `node` in the source: its previous sibling, or, for the first node of a
/// body that starts where it does, the body's. Grammars hang comments between a header and
/// its body's first statement on the header's node (Ruby's `module Rack` + RDoc + `class
/// Static`): the doc comment of the first class is no sibling of it.
fn node_before(node: Node) -> Option<Node> {
    let mut at = node;
    loop {
        if let Some(prev) = at.prev_sibling() {
            return Some(prev);
        }
        let parent = at.parent()?;
        if parent.start_byte() != at.start_byte() {
            return None;
        }
        at = parent;
    }
}

fn drop_blank_lines(text: &str) -> String {
    text.lines().map(str::trim_end).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("\n")
}

fn push_children<'t>(stack: &mut Vec<(Node<'t>, Ctx, Option<Node<'t>>)>, node: Node<'t>, ctx: Ctx) {
    for child in children(node).into_iter().rev() {
        stack.push((child, ctx, Some(node)));
    }
}
