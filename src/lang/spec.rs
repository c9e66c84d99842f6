//! The shape of a row of the language table: what a language is ([`Lang`]), the languages
//! whose calls reach one another ([`Family`]), which reader reads it ([`Reader`]) and every
//! fact and rule a row holds ([`LangSpec`]). The rows themselves are in `rows/`.

use serde::{Deserialize, Serialize};

use super::rules;

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
    Elixir,
    Bash,
    Haskell,
    Lua,
    Zig,
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
    Elixir,
    Shell,
    Haskell,
    Lua,
    Zig,
}

/// Which chunker and call resolver read a language.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reader {
    /// Python's own extractor (`chunk/python.rs`: decorators, class attributes, imports) and
    /// module-aware resolver (`callgraph/python.rs`).
    Python,
    /// The generic extractor (`chunk/generic.rs`) reading the row's [`rules::Syntax`], and the
    /// name-level resolver (`callgraph/by_name.rs`).
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
    /// Whether a bare call (or `self.m`) that neither the caller's own type nor a free function
    /// answers may still be a method of another type: Ruby's mixins (`include Helpers` gives
    /// every including class `Helpers#ssl?`). Such a call then resolves to the method of that
    /// name in the same file, else to the repository's only one, and is listed when several fit.
    pub mixins: bool,
    /// Languages whose definitions calls of this one may reach.
    pub family: Family,
    /// Words that start a module path relative to the package (Rust's `crate`, `super`,
    /// `self`): an issue's `crate::a::B` names `a` or `a/B` with the row's first extension.
    pub module_anchors: &'static [&'static str],
    /// Whether a definition's documentation is inside its body (Python's docstrings) rather
    /// than in the comments above it.
    pub docstrings: bool,
    /// A copy of a source with what the grammar cannot read blanked byte for byte (`None`:
    /// parse it as it is); spans, lines and texts still come from the original. C and C++
    /// blank bare macro lines (`FMT_BEGIN_NAMESPACE`), Ruby heredoc openers its scanner
    /// aborts on.
    pub mask: fn(&str) -> Option<String>,
    /// File names that re-export a package's names (Python's `__init__.py`, `index.ts`,
    /// Rust's `mod.rs`): such a file that defines nothing itself is a barrel, ranked down
    /// ([`crate::lang::roles`]), since the code a person wants is where the names are defined.
    pub barrels: &'static [&'static str],
    /// File-name endings of type stubs (`.d.ts`): declarations whose code is elsewhere.
    pub stubs: &'static [&'static str],
    /// Directories whose contents are the library, so that a `test/` below them is library
    /// code (Elixir's `lib/phoenix_live_view/test/`: `Phoenix.LiveViewTest`, shipped to users),
    /// not a test directory; the row's own test rule ([`LangSpec::is_test`]) still applies.
    pub library_roots: &'static [&'static str],
    /// How people write its names and kinds (Ruby's `A::B#m`), for display only.
    pub written: super::written::Written,
}

impl LangSpec {
    /// The row's syntax rules, as the generic extractor reads them.
    pub fn rules(&'static self) -> rules::Rules {
        rules::Rules::new(&self.syntax, self.test_attribute)
    }
}
