//! Per-file syntax facts: the chunks plus what the call graph needs to resolve calls
//! (call sites, imports, class bases). Cached on disk, so everything is serde.

use serde::{Deserialize, Serialize};

use super::Chunk;

/// Everything extracted from one Python file.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FileSyntax {
    /// Repository-relative path with `/` separators.
    pub path: String,
    /// In source order (a module chunk, when present, comes first).
    pub chunks: Vec<Chunk>,
    /// `calls[i]`: call sites syntactically owned by `chunks[i]`, in source order.
    pub calls: Vec<Vec<CallSite>>,
    /// File-level and function-level imports, in source order.
    pub imports: Vec<Import>,
    /// Every class that is a chunk, with its base-class expressions.
    pub classes: Vec<ClassInfo>,
    /// `self.name = …` assignments in methods, in source order (for `self.name.m()`).
    pub attributes: Vec<AttrAssign>,
    /// Tree-sitter reported ERROR/MISSING nodes; the chunks are what it recovered.
    pub has_syntax_errors: bool,
}

impl FileSyntax {
    pub fn empty(path: &str, has_syntax_errors: bool) -> Self {
        FileSyntax {
            path: path.to_string(),
            chunks: Vec::new(),
            calls: Vec::new(),
            imports: Vec::new(),
            classes: Vec::new(),
            attributes: Vec::new(),
            has_syntax_errors,
        }
    }
}

/// What stands before the called name: one type for every language (`crate::lang::Receiver`).
pub use crate::lang::Receiver;

/// One `call` node, before resolution.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallSite {
    /// The called name: `foo` in `foo()`, `a.b.foo()` and `f().foo()`.
    pub name: String,
    pub receiver: Receiver,
    /// 1-based line of the called name.
    pub line: u32,
    /// The receiver's name as written where the chunker reads it as `self` (Go's `t` in
    /// `func (t *Terminal) …`), so that clients show the call as the code says it.
    pub self_written: Option<String>,
    /// The arguments passed, where the language names functions by arity (Elixir): the call
    /// reaches the definition of its arity (`f/2`), not every `f`.
    pub arity: Option<u8>,
}

/// What an import statement brings in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Imported {
    /// `import a.b [as m]`.
    Module,
    /// `from m import name [as alias]`.
    Name(String),
    /// `from m import *`.
    All,
}

/// One imported name (an `import a, b` statement yields two).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Import {
    /// Number of leading dots of a relative import; 0 for absolute imports.
    pub level: u32,
    /// Dotted module after the dots; empty for `from . import x`.
    pub module: String,
    pub what: Imported,
    pub alias: Option<String>,
    /// Index (into `FileSyntax::chunks`) of the function or method the import sits in;
    /// `None` for module- and class-level imports.
    pub scope: Option<u32>,
}

impl Import {
    /// The name this import binds in its scope (`None` for `*`).
    pub fn bound_name(&self) -> Option<&str> {
        if let Some(alias) = &self.alias {
            return Some(alias);
        }
        match &self.what {
            // `import a.b` binds `a`.
            Imported::Module => self.module.split('.').next().filter(|s| !s.is_empty()),
            Imported::Name(name) => Some(name),
            Imported::All => None,
        }
    }
}

/// A class chunk and its bases, for `self.m()` through in-repository base classes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassInfo {
    /// Qualified name, as the chunk's: `Outer.Inner`.
    pub name: String,
    /// Index into `FileSyntax::chunks`.
    pub chunk: u32,
    /// Dotted base-class expressions (`Base`, `mod.Base`; `Generic[T]` → `Generic`);
    /// keyword arguments and other expressions are left out.
    pub bases: Vec<String>,
}

/// `self.name = value` in a method: what types `self.name.m()` for the call graph.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttrAssign {
    /// Index into `FileSyntax::chunks` of the method that assigns.
    pub chunk: u32,
    /// The attribute: `helper` in `self.helper = Helper()`.
    pub attr: String,
    /// The dotted callee when the value is a call of plain names (`Helper(…)`,
    /// `mod.Helper(…)`) or, failing that, the dotted annotation (`self.h: Helper = …`);
    /// `None` for any other value (`None` itself is not recorded: it types nothing).
    pub class: Option<Vec<String>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn import(module: &str, what: Imported, alias: Option<&str>) -> Import {
        Import { level: 0, module: module.into(), what, alias: alias.map(String::from), scope: None }
    }

    #[test]
    fn bound_names_follow_python_binding_rules() {
        assert_eq!(import("a.b", Imported::Module, None).bound_name(), Some("a"));
        assert_eq!(import("a.b", Imported::Module, Some("m")).bound_name(), Some("m"));
        assert_eq!(import("a", Imported::Name("x".into()), None).bound_name(), Some("x"));
        assert_eq!(import("a", Imported::Name("x".into()), Some("y")).bound_name(), Some("y"));
        assert_eq!(import("a", Imported::All, None).bound_name(), None);
    }
}
