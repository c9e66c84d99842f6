//! Chunk texts (docs/GUIDE.md "Design choices"): class summaries, method headers, the module chunk.

use tree_sitter::Node;

use super::text::{children, code_end, from_line_start, is_blank, slice, statements, Lines};

/// Class-body statements that are not definitions (class attributes, `__slots__`, …) are
/// kept in the class chunk when they span at most this many lines; longer ones (big
/// tables, long literals) would eat the encoder's token budget.
pub const MAX_CLASS_ATTR_LINES: usize = 5;

/// A definition found at module or class scope: `outer` is the decorated_definition
/// when there are decorators (the chunk starts there), else the definition itself.
#[derive(Clone, Copy)]
pub(crate) struct Def<'t> {
    pub outer: Node<'t>,
    pub def: Node<'t>,
}

impl<'t> Def<'t> {
    /// `node` as a function or class definition, decorated or not.
    pub fn of(node: Node<'t>) -> Option<Def<'t>> {
        match node.kind() {
            "function_definition" | "class_definition" => Some(Def { outer: node, def: node }),
            "decorated_definition" => {
                let def = node.child_by_field_name("definition")?;
                matches!(def.kind(), "function_definition" | "class_definition")
                    .then_some(Def { outer: node, def })
            }
            _ => None,
        }
    }

    pub fn is_class(&self) -> bool {
        self.def.kind() == "class_definition"
    }
}

/// Definitions inside `node` (not `node` itself) that are not inside another definition,
/// in source order: the defs an `if`/`try`/`with` statement at module or class scope holds.
pub(crate) fn defs_within(node: Node) -> Vec<Def> {
    let mut found = Vec::new();
    let mut stack: Vec<Node> = children(node).into_iter().rev().collect();
    while let Some(n) = stack.pop() {
        match Def::of(n) {
            Some(d) => found.push(d),
            None => stack.extend(children(n).into_iter().rev()),
        }
    }
    found
}

/// Renders chunk texts from one file's source.
pub(crate) struct Renderer<'s> {
    pub src: &'s str,
    pub lines: Lines,
}

impl<'s> Renderer<'s> {
    pub fn new(src: &'s str) -> Self {
        Renderer { src, lines: Lines::new(src) }
    }

    /// Start of `node`'s text, including its indentation when only indentation precedes it.
    pub fn start(&self, node: Node) -> usize {
        from_line_start(self.src, &self.lines, node.start_byte())
    }

    /// A node's full source lines, original indentation kept, trailing comments dropped.
    pub fn full(&self, node: Node) -> &'s str {
        slice(self.src, self.start(node), code_end(node))
    }

    /// End of a definition's header: just past the `:` that opens its body.
    fn colon_end(&self, def: Node) -> usize {
        let colon = children(def).into_iter().find(|c| c.kind() == ":" && !c.is_named());
        match (colon, def.child_by_field_name("body")) {
            (Some(c), _) => c.end_byte(),
            (None, Some(body)) => body.start_byte(),
            (None, None) => code_end(def),
        }
    }

    /// Decorators (when `from` is the decorated node) and the `def …:` / `class …:` line(s).
    pub fn header(&self, from: Node, def: Node) -> &'s str {
        slice(self.src, self.start(from), self.colon_end(def)).trim_end()
    }

    /// Indentation of the body's first line, or the def's own plus four spaces when the
    /// body shares the header's line.
    fn body_indent(&self, d: Def) -> String {
        if let Some(body) = d.def.child_by_field_name("body") {
            let start = body.start_byte();
            let line_start = self.lines.line_start(start);
            let prefix = slice(self.src, line_start, start);
            if self.lines.line_of(start) > self.lines.line_of(self.colon_end(d.def)) && is_blank(prefix) {
                return prefix.to_string();
            }
        }
        let outer_start = d.outer.start_byte();
        let own = slice(self.src, self.lines.line_start(outer_start), outer_start);
        let own = if is_blank(own) { own } else { "" };
        format!("{own}    ")
    }

    /// Header plus an indented `...`: how a class chunk shows a method or nested class.
    pub fn elided(&self, d: Def) -> String {
        format!("{}\n{}...", self.header(d.outer, d.def), self.body_indent(d))
    }

    /// `node`'s lines with each of `defs` replaced by `replace(def)` (an empty replacement
    /// removes the def's lines); whitespace-only lines are dropped.
    fn splice(&self, node: Node, defs: &[Def], replace: impl Fn(Def) -> Option<String>) -> String {
        let end = code_end(node);
        let mut pos = self.start(node);
        let mut out = String::new();
        for d in defs {
            let Some(replacement) = replace(*d) else {
                continue;
            };
            let cut_start = self.start(d.outer).max(pos);
            let mut cut_end = code_end(d.outer).max(cut_start);
            let line_end = self.lines.line_end(cut_end.saturating_sub(1).max(cut_start));
            let rest = slice(self.src, cut_end, line_end).trim();
            if rest.is_empty() || rest.starts_with('#') {
                cut_end = line_end;
            }
            out.push_str(slice(self.src, pos, cut_start));
            if !replacement.is_empty() {
                out.push_str(&replacement);
                out.push('\n');
            }
            pos = cut_end;
        }
        out.push_str(slice(self.src, pos, end));
        let kept: Vec<&str> = out.lines().filter(|l| !is_blank(l.trim_end_matches('\r'))).collect();
        kept.join("\n")
    }

    /// Class chunk body (after the path line): decorators and header, docstring, short
    /// non-method statements, `__init__` in full, other methods and nested classes as
    /// header plus `...`.
    pub fn class_text(&self, class: Def) -> String {
        let mut pieces = vec![self.header(class.outer, class.def).to_string()];
        let Some(body) = class.def.child_by_field_name("body") else {
            return pieces.join("\n");
        };
        // Methods in full (`__init__`) need no replacement; everything else is elided.
        let member = |d: Def| -> Option<String> {
            if !d.is_class() && self.def_name(d.def) == "__init__" {
                None
            } else {
                Some(self.elided(d))
            }
        };
        for (i, stmt) in statements(body).into_iter().enumerate() {
            if let Some(d) = Def::of(stmt) {
                pieces.push(member(d).unwrap_or_else(|| self.full(stmt).to_string()));
                continue;
            }
            let inner = defs_within(stmt);
            if !inner.is_empty() {
                pieces.push(self.splice(stmt, &inner, member));
            } else if (i == 0 && is_docstring(stmt)) || self.line_count(stmt) <= MAX_CLASS_ATTR_LINES {
                // `class A: pass` puts the body on the header's line: give it its own, indented.
                if self.start(stmt) == stmt.start_byte()
                    && self.start(stmt) != self.lines.line_start(stmt.start_byte())
                {
                    pieces.push(format!("{}{}", self.body_indent(class), self.full(stmt)));
                } else {
                    pieces.push(self.full(stmt).to_string());
                }
            }
        }
        pieces.retain(|p| !p.trim().is_empty());
        pieces.join("\n")
    }

    /// Module chunk body: every top-level statement that is not a definition, in order,
    /// with definitions nested in `if`/`try`/… removed. `None` when there is none.
    pub fn module_text(&self, root: Node) -> Option<String> {
        let pieces: Vec<String> = statements(root)
            .into_iter()
            .filter(|s| Def::of(*s).is_none())
            .map(|s| {
                let inner = defs_within(s);
                if inner.is_empty() {
                    self.full(s).to_string()
                } else {
                    self.splice(s, &inner, |_| Some(String::new()))
                }
            })
            .filter(|p| !p.trim().is_empty())
            .collect();
        (!pieces.is_empty()).then(|| pieces.join("\n"))
    }

    pub fn def_name(&self, def: Node) -> &'s str {
        def.child_by_field_name("name").map(|n| slice(self.src, n.start_byte(), n.end_byte())).unwrap_or("")
    }

    fn line_count(&self, node: Node) -> usize {
        let (start, end) = (node.start_byte(), code_end(node));
        self.lines.last_line(start, end) + 1 - self.lines.line_of(start)
    }
}

/// A bare string statement (any quote style or prefix, implicit concatenation too).
fn is_docstring(stmt: Node) -> bool {
    stmt.kind() == "expression_statement"
        && stmt.named_child_count() == 1
        && stmt.named_child(0).is_some_and(|c| matches!(c.kind(), "string" | "concatenated_string"))
}
