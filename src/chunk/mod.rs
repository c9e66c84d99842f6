//! CoRet chunks (docs/GUIDE.md "Design choices"): one per function, class and method, plus an
//! optional module-level chunk per file, in every language of the table (`crate::lang`).

use serde::{Deserialize, Serialize};

mod generic;
mod macros;
mod python;
mod render;
mod shown;
mod syntax;
mod text;
mod window;

pub use python::MODULE_CHUNK_NAME;
pub use render::MAX_CLASS_ATTR_LINES;
pub use syntax::{AttrAssign, CallSite, ClassInfo, FileSyntax, Import, Imported, Receiver};
pub use window::WINDOW_LINES;

/// Chunks, call sites, imports and classes of one source file, by its language (the
/// extension decides; a file of no supported language yields nothing).
/// `path` is repository-relative with `/` separators; it starts every chunk text.
pub fn chunk_file(path: &str, source: &str) -> FileSyntax {
    match crate::lang::lang_of_path(path) {
        Some(lang) if lang.reads_by_rules() => generic::chunk_file(lang, path, source),
        Some(_) => python::chunk_file(path, source),
        None => FileSyntax::empty(path, false),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum ChunkKind {
    Function,
    Class,
    Method,
    Module,
    /// A macro definition: Rust `macro_rules!`, C `#define F(x)`.
    Macro,
    /// About [`WINDOW_LINES`] lines of a long module chunk's code (`<module>:120-160`).
    Window,
}

impl ChunkKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChunkKind::Function => "function",
            ChunkKind::Class => "class",
            ChunkKind::Method => "method",
            ChunkKind::Module => "module",
            ChunkKind::Macro => "macro",
            ChunkKind::Window => "window",
        }
    }
}

/// One retrievable unit of code.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chunk {
    /// Repository-relative path with `/` separators.
    pub path: String,
    pub kind: ChunkKind,
    /// Qualified name: `func`, `Class`, `Class.method`, `Outer.Inner.m`; `<module>` for module chunks,
    /// `<module>:FIRST-LAST` for windows.
    pub name: String,
    pub start_byte: usize,
    pub end_byte: usize,
    /// 1-based, inclusive.
    pub start_line: usize,
    /// 1-based, inclusive.
    pub end_line: usize,
    /// What the retrievers see; starts with the file path.
    pub text: String,
    /// Test code inside a source file by its language's rule (Rust `#[test]`, `#[cfg(test)]`
    /// items); test files are known by their path. Read it through [`Chunk::is_test`].
    pub test: bool,
    /// What its language calls it where [`ChunkKind`] does not say (a singleton method, a
    /// macro defined as a function is): how it is shown, [`Chunk::written_name`].
    #[serde(default)]
    pub form: crate::lang::Form,
}

/// A qualified name's own part, what a call or a query names it by: `m` of `A.B.m`, `fun` of
/// Elixir's `Mod.fun/2` (a function is named with its arity there, and called without it).
pub fn own_name(name: &str) -> &str {
    let name = without_arity(name);
    name.rsplit('.').next().unwrap_or(name)
}

/// A qualified name without the arity Elixir names a function with: `Mod.fun` of `Mod.fun/2`.
pub fn without_arity(name: &str) -> &str {
    match name.rsplit_once('/') {
        Some((head, arity))
            if !head.is_empty()
                && !head.ends_with('.')
                && !arity.is_empty()
                && arity.bytes().all(|b| b.is_ascii_digit()) =>
        {
            head
        }
        _ => name,
    }
}

/// The arity a definition is named with (`2` of `Mod.fun/2`); `None` where names carry none.
pub fn named_arity(name: &str) -> Option<u8> {
    let own = name.rsplit('.').next().unwrap_or(name);
    own.rsplit_once('/').and_then(|(head, arity)| (!head.is_empty()).then(|| arity.parse().ok()).flatten())
}

/// Labels for a list of neighbours (one chunk's callers, or its callees), each `(label, first
/// line)`: the label, and where two read the same (C# overloads: `SqlMapper.Execute` twice)
/// each of those with its line, `SqlMapper.Execute:123`, so they can be told apart.
pub fn told_apart(labels: &[(String, usize)]) -> Vec<String> {
    let repeated = |label: &String| labels.iter().filter(|(l, _)| l == label).count() > 1;
    labels
        .iter()
        .map(|(label, line)| if repeated(label) { format!("{label}:{line}") } else { label.clone() })
        .collect()
}

impl Chunk {
    /// Stable human-readable key, `path::qualified_name`.
    pub fn key(&self) -> String {
        format!("{}::{}", self.path, self.name)
    }

    /// Where the chunk is, for people: `src/cli.rs:10-24`. A module chunk spans its whole file
    /// but holds only what no other chunk does (imports, constants), so it reads
    /// `src/cli.rs · module-level code`, never as a hit on the whole file.
    pub fn location(&self) -> String {
        match self.kind {
            ChunkKind::Module => format!("{} · module-level code", self.path),
            _ => format!("{}:{}-{}", self.path, self.start_line, self.end_line),
        }
    }

    /// Whether this is test code: an item its language marks as a test, or any chunk of a test
    /// file (`crate::lang::is_test_path`). Every client demotes, hides and skips tests by this.
    pub fn is_test(&self) -> bool {
        self.test || crate::lang::is_test_path(&self.path)
    }
}

#[cfg(test)]
mod tests;
