//! The table of languages (docs/GUIDE.md "Languages"): one row per language, read by the walk,
//! the chunker, the call graph, the preview's highlighting, eval, the miner and `--lang`.
//! A row (`rows/<language>.rs`) holds everything a language needs: its extensions, grammar,
//! syntax rules (`rules::Syntax`), test rules, built-ins, family and which reader reads it.
//! Adding a language is adding a variant to [`Lang`], its row file, its grammar crate and a
//! fixture; nothing outside `src/lang/` names a language.

#[doc(hidden)]
pub mod fuzz;
mod rows;
pub(crate) mod rules;
mod set;

use serde::{Deserialize, Serialize};

pub use rules::{Receiver, Rules};
pub use set::{LangSet, UnknownLanguage};

/// Python's built-ins, for Python's own resolver.
pub(crate) use rows::python_builtins;

/// A supported language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    Python,
    Rust,
    Go,
    JavaScript,
    TypeScript,
    Java,
    C,
    Cpp,
    CSharp,
    Ruby,
    Php,
    Kotlin,
    Swift,
    Scala,
}

/// Languages whose definitions calls of one another may reach: TypeScript calls JavaScript,
/// C++ calls C, Kotlin and Scala call Java.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    Python,
    Rust,
    Go,
    Web,
    Jvm,
    Native,
    Dotnet,
    Ruby,
    Php,
    Swift,
}

/// Which chunker and call resolver read a language.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reader {
    /// Python's own extractor (`chunk/python.rs`: decorators, class attributes, imports) and
    /// module-aware resolver (`callgraph/resolve.rs`).
    Python,
    /// The generic extractor (`chunk/generic.rs`) reading the row's [`rules::Syntax`], and the
    /// name-level resolver (`callgraph/other.rs`).
    Rules,
}

/// One row of the table.
pub struct LangSpec {
    pub lang: Lang,
    /// For people: `C++`.
    pub name: &'static str,
    /// What `--lang` accepts, the first one canonical (`cpp`).
    pub ids: &'static [&'static str],
    /// File extensions without the dot, lowercase; the first row that lists one owns it.
    pub extensions: &'static [&'static str],
    /// Extensions this row does not own but that selecting it with `--lang` keeps: C keeps
    /// `.h`, which C++ owns (its grammar parses both dialects' headers).
    pub shares: &'static [&'static str],
    /// The extension syntect knows this language by (`js` for TypeScript; `txt`, plain, where
    /// syntect's defaults have no syntax).
    pub highlight_as: &'static str,
    /// The tree-sitter grammar for a file with this extension (TypeScript's `.tsx` has its own).
    pub grammar: fn(&str) -> tree_sitter::Language,
    /// Which chunker and resolver read it.
    pub reader: Reader,
    /// What its syntax tree means, for the generic reader.
    pub syntax: rules::Syntax,
    /// The ecosystem's test files, beyond the `tests/` and `test/` directories every row shares.
    pub is_test: fn(&str) -> bool,
    /// Whether an attribute or annotation above an item (its text, whitespace removed) marks
    /// the item as test code in a source file (Rust `#[test]`, `#[cfg(test)]`); what it marks,
    /// methods inside included, is demoted, hidden by `T` and left to BM25 like a test file.
    pub test_attribute: fn(&str) -> bool,
    /// Whether an unresolved call of this name (with a receiver or not) is most likely the
    /// language's own (Python's `parts.append`, `x.__enter__`): not listed as a hole.
    pub is_builtin: fn(&str, bool) -> bool,
    /// Whether a bare call `f()` inside a class body may be a method of that class
    /// (`this` implied: Java, C++, C#, Kotlin, Swift, Scala), tried before free functions.
    pub implicit_self: bool,
    /// Languages whose definitions calls of this one may reach.
    pub family: Family,
    /// Whether the hybrid lifts a file's module chunk after the file's best hit
    /// (`FusionParams::module_weight`): fixes in these languages often add the import, `use`
    /// or `#include` they need (measured on the multi-language dev set, docs/RESULTS.md
    /// session 28). Off for Python, where the Python dev set has not measured it.
    pub lifts_module: bool,
    /// Whether a line holding one upper-case identifier alone (`FMT_BEGIN_NAMESPACE`,
    /// `__BEGIN_DECLS`) is an object-like macro the grammar cannot expand: the parser skips
    /// it, so the definition it precedes parses as one (`chunk::macros::bare_macro_lines`).
    pub skips_bare_macros: bool,
}

/// Every supported language, in `--lang` listing order.
pub static LANGUAGES: &[LangSpec] = &[
    rows::python::ROW,
    rows::rust::ROW,
    rows::go::ROW,
    rows::js::JAVASCRIPT,
    rows::js::TYPESCRIPT,
    rows::java::ROW,
    rows::c::C,
    rows::c::CPP,
    rows::csharp::ROW,
    rows::ruby::ROW,
    rows::php::ROW,
    rows::kotlin::ROW,
    rows::swift::ROW,
    rows::scala::ROW,
];

/// The languages for people, in table order: `Python, Rust, …, C++, C#`.
pub fn names() -> String {
    LANGUAGES.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
}

/// The canonical `--lang` ids, in table order: `python, rust, …`.
pub fn ids() -> String {
    LANGUAGES.iter().map(|s| s.ids[0]).collect::<Vec<_>>().join(", ")
}

impl Lang {
    /// This language's row.
    pub fn spec(self) -> &'static LangSpec {
        LANGUAGES.iter().find(|s| s.lang == self).expect("every Lang has a row")
    }

    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// The canonical `--lang` id (`cpp`).
    pub fn id(self) -> &'static str {
        self.spec().ids[0]
    }

    /// The language the multi-language dev set's `language` field names (`js`, `ts`, `c++`, …).
    pub fn from_id(id: &str) -> Option<Lang> {
        let id = id.trim().to_ascii_lowercase();
        LANGUAGES.iter().find(|s| s.ids.contains(&id.as_str())).map(|s| s.lang)
    }

    /// The tree-sitter grammar for a file of this language with extension `ext`.
    pub fn grammar(self, ext: &str) -> tree_sitter::Language {
        (self.spec().grammar)(ext)
    }

    /// Whether the generic reader reads it (every row but Python).
    pub fn reads_by_rules(self) -> bool {
        self.spec().reader == Reader::Rules
    }
}

/// The lowercase extension of a path's file name (`""` when it has none).
pub fn extension(path: &str) -> String {
    let file = path.rsplit('/').next().unwrap_or(path);
    match file.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => ext.to_ascii_lowercase(),
        _ => String::new(),
    }
}

/// The language a file is indexed as, by its extension.
pub fn lang_of_path(path: &str) -> Option<Lang> {
    let ext = extension(path);
    if ext.is_empty() {
        return None;
    }
    LANGUAGES.iter().find(|s| s.extensions.contains(&ext.as_str())).map(|s| s.lang)
}

/// Is this a source file of any supported language?
pub fn is_source_path(path: &str) -> bool {
    lang_of_path(path).is_some()
}

/// Is this a test file by its ecosystem's conventions? Every language shares the `tests/` and
/// `test/` directories; each row adds its own (`_test.go`, `*.spec.ts`, `src/test/`, …).
/// Patches that fix issues rarely edit tests, so eval can measure an index without them.
pub fn is_test_path(path: &str) -> bool {
    let in_test_dir = path.split('/').rev().skip(1).any(|dir| dir == "tests" || dir == "test");
    in_test_dir || lang_of_path(path).is_some_and(|l| (l.spec().is_test)(path))
}

#[cfg(test)]
mod fixture_tests;
#[cfg(test)]
mod tests;
