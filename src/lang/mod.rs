//! The table of languages (docs/GUIDE.md "Languages"): one row per language, read by the walk,
//! the chunker, the call graph, the preview's highlighting, eval, the miner and `--lang`.
//! A row (`rows/<language>.rs`) holds everything a language needs: its extensions, grammar,
//! syntax rules (`rules::Syntax`), test rules, built-ins, family and which reader reads it.
//! Adding a language is adding a variant to [`Lang`], its row file, its grammar crate and a
//! fixture; nothing outside `src/lang/` names a language.

pub mod roles;
mod rows;
pub(crate) mod rules;
mod set;
mod spec;
pub mod written;

pub use rules::{Receiver, Rules};
pub use set::{LangSet, UnknownLanguage};
pub use spec::{Family, Lang, LangSpec, Reader};
pub use written::{Form, Spelling, Written};

/// Python's built-ins, for Python's own resolver.
pub(crate) use rows::python_builtins;

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
    rows::elixir::ROW,
    rows::bash::ROW,
    rows::haskell::ROW,
    rows::lua::ROW,
    rows::zig::ROW,
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

    /// Whether its grammar loads with the tree-sitter in use (a grammar crate built for
    /// another ABI does not): checked once per language; its files are skipped and counted
    /// when not (`stats.skipped.no_grammar`).
    pub fn grammar_loads(self) -> bool {
        static LOADS: std::sync::OnceLock<Vec<(Lang, bool)>> = std::sync::OnceLock::new();
        let loads = LOADS.get_or_init(|| {
            LANGUAGES
                .iter()
                .map(|s| {
                    let ok = s
                        .extensions
                        .iter()
                        .chain(s.shares)
                        .all(|ext| tree_sitter::Parser::new().set_language(&(s.grammar)(ext)).is_ok());
                    (s.lang, ok)
                })
                .collect()
        });
        loads.iter().any(|&(l, ok)| l == self && ok)
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
/// How many arguments the call at `call` passes, where the language names its functions by
/// arity (Elixir's `f/2`), so that a call reaches the definition of its arity; `None` elsewhere.
pub fn call_arity(lang: Lang, call: tree_sitter::Node) -> Option<u8> {
    (lang == Lang::Elixir).then(|| rows::elixir::call_arity(call).min(u8::MAX as usize) as u8)
}

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
/// `test/` directories, except below a row's library roots (Elixir's and Ruby's `lib/`,
/// Java's `src/main/`: library code); each row adds its own (`_test.go`, `*.spec.ts`,
/// `src/test/`, …).
/// Patches that fix issues rarely edit tests, so eval can measure an index without them.
pub fn is_test_path(path: &str) -> bool {
    let lang = lang_of_path(path);
    let roots = lang.map_or(&[][..], |l| l.spec().library_roots);
    let dirs: Vec<&str> = path.split('/').collect();
    let dirs = &dirs[..dirs.len().saturating_sub(1)];
    // A test directory counts unless a library root of the row comes before it.
    let in_test_dir = dirs
        .iter()
        .enumerate()
        .any(|(i, d)| (*d == "tests" || *d == "test") && !dirs[..i].iter().any(|r| roots.contains(r)));
    in_test_dir || lang.is_some_and(|l| (l.spec().is_test)(path))
}

#[cfg(test)]
mod tests;
