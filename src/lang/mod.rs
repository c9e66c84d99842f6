//! The table of languages (docs/GUIDE.md "Languages"): one row per language, read by the walk,
//! the chunker, the call graph, the preview's highlighting, eval, the miner and `--lang`.
//! Adding a language is adding a row here and its syntax rules in `rules.rs`.

pub(crate) mod rules;
mod set;

use serde::{Deserialize, Serialize};

pub use rules::Rules;
pub use set::{LangSet, UnknownLanguage};

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
    /// The extension syntect knows this language by (TypeScript has no syntax in syntect's
    /// defaults; JavaScript's colours it well).
    pub highlight_as: &'static str,
    /// The ecosystem's test files, beyond the `tests/` and `test/` directories every row shares.
    pub is_test: fn(&str) -> bool,
    /// Whether an attribute or annotation above an item (its text, whitespace removed) marks
    /// the item as test code in a source file (Rust `#[test]`, `#[cfg(test)]`); what it marks,
    /// methods inside included, is demoted, hidden by `T` and left to BM25 like a test file.
    pub test_attribute: fn(&str) -> bool,
    /// Whether a bare call `f()` inside a class body may be a method of that class
    /// (`this` implied: Java, C++), tried before free functions.
    pub implicit_self: bool,
    /// Languages whose definitions calls of this one may reach (TypeScript calls JavaScript).
    pub family: u8,
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
    LangSpec {
        lang: Lang::Python,
        name: "Python",
        ids: &["python", "py"],
        extensions: &["py"],
        shares: &[],
        highlight_as: "py",
        is_test: python_test,
        test_attribute: no_test_attribute,
        implicit_self: false,
        family: 0,
        lifts_module: false,
        skips_bare_macros: false,
    },
    LangSpec {
        lang: Lang::Rust,
        name: "Rust",
        ids: &["rust", "rs"],
        extensions: &["rs"],
        shares: &[],
        highlight_as: "rs",
        is_test: rust_test,
        test_attribute: rust_test_attribute,
        implicit_self: false,
        family: 1,
        lifts_module: true,
        skips_bare_macros: false,
    },
    LangSpec {
        lang: Lang::Go,
        name: "Go",
        ids: &["go", "golang"],
        extensions: &["go"],
        shares: &[],
        highlight_as: "go",
        is_test: go_test,
        test_attribute: no_test_attribute,
        implicit_self: false,
        family: 2,
        lifts_module: true,
        skips_bare_macros: false,
    },
    LangSpec {
        lang: Lang::JavaScript,
        name: "JavaScript",
        ids: &["javascript", "js"],
        extensions: &["js", "mjs", "cjs", "jsx"],
        shares: &[],
        highlight_as: "js",
        is_test: js_test,
        test_attribute: no_test_attribute,
        implicit_self: false,
        family: 3,
        lifts_module: true,
        skips_bare_macros: false,
    },
    LangSpec {
        lang: Lang::TypeScript,
        name: "TypeScript",
        ids: &["typescript", "ts"],
        extensions: &["ts", "tsx", "mts", "cts"],
        shares: &[],
        highlight_as: "js",
        is_test: js_test,
        test_attribute: no_test_attribute,
        implicit_self: false,
        family: 3,
        lifts_module: true,
        skips_bare_macros: false,
    },
    LangSpec {
        lang: Lang::Java,
        name: "Java",
        ids: &["java"],
        extensions: &["java"],
        shares: &[],
        highlight_as: "java",
        is_test: java_test,
        test_attribute: no_test_attribute,
        implicit_self: true,
        family: 4,
        lifts_module: true,
        skips_bare_macros: false,
    },
    LangSpec {
        lang: Lang::C,
        name: "C",
        ids: &["c"],
        extensions: &["c"],
        shares: &["h"],
        highlight_as: "c",
        is_test: c_test,
        test_attribute: no_test_attribute,
        implicit_self: false,
        family: 5,
        lifts_module: true,
        skips_bare_macros: true,
    },
    LangSpec {
        lang: Lang::Cpp,
        name: "C++",
        ids: &["cpp", "c++", "cxx"],
        extensions: &["cc", "cpp", "cxx", "c++", "hpp", "hh", "hxx", "h++", "ipp", "tpp", "inl", "h"],
        shares: &[],
        highlight_as: "cpp",
        is_test: c_test,
        test_attribute: no_test_attribute,
        implicit_self: true,
        family: 5,
        lifts_module: true,
        skips_bare_macros: true,
    },
];

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
        match self {
            Lang::Python => tree_sitter_python::LANGUAGE.into(),
            Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
            Lang::Go => tree_sitter_go::LANGUAGE.into(),
            Lang::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Lang::TypeScript if ext == "tsx" => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Lang::Java => tree_sitter_java::LANGUAGE.into(),
            Lang::C => tree_sitter_c::LANGUAGE.into(),
            Lang::Cpp => tree_sitter_cpp::LANGUAGE.into(),
        }
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

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn has_dir(path: &str, names: &[&str]) -> bool {
    path.split('/').rev().skip(1).any(|dir| names.contains(&dir))
}

/// `testing/`, `test_*.py`, `*_test.py`, `conftest.py`.
fn python_test(path: &str) -> bool {
    let file = file_name(path);
    has_dir(path, &["testing"])
        || file.starts_with("test_")
        || file.ends_with("_test.py")
        || file == "conftest.py"
}

/// `benches/` is no test but is never the code an issue is about either; `tests.rs` holds a
/// crate's `mod tests;`. (`#[cfg(test)]` modules inside a file are left out by the chunker.)
fn rust_test(path: &str) -> bool {
    let file = file_name(path);
    has_dir(path, &["benches"])
        || file == "tests.rs"
        || file.ends_with("_test.rs")
        || file.ends_with("_tests.rs")
}

/// `#[test]`, `#[cfg(test)]`, `#[bench]` and the test attributes of test crates
/// (`#[tokio::test]`, `#[tokio::test(flavor = …)]`, `#[rstest]`, `#[test_case(…)]`);
/// not `#[cfg(not(test))]` nor `#[cfg(any(test, …))]`, which build outside tests too.
fn rust_test_attribute(attr: &str) -> bool {
    let Some(inner) = attr.strip_prefix("#[").and_then(|a| a.strip_suffix(']')) else {
        return false;
    };
    let path = inner.split('(').next().unwrap_or(inner);
    let last = path.rsplit("::").next().unwrap_or(path);
    inner == "cfg(test)" || matches!(last, "test" | "bench" | "rstest" | "test_case" | "quickcheck")
}

/// Languages whose in-file tests the path rule already covers (Go's `_test.go`, Java's
/// `src/test/`, JS `*.test.*`), or that have none the syntax shows.
fn no_test_attribute(_: &str) -> bool {
    false
}

/// `_test.go` files and `testdata/`.
fn go_test(path: &str) -> bool {
    file_name(path).ends_with("_test.go") || has_dir(path, &["testdata"])
}

/// `*.test.*`, `*.spec.*`, `__tests__/`, `__mocks__/`.
fn js_test(path: &str) -> bool {
    let file = file_name(path);
    file.contains(".test.") || file.contains(".spec.") || has_dir(path, &["__tests__", "__mocks__"])
}

/// Maven's and Gradle's `src/test/` (already a `test/` directory) and `*Test.java` files.
fn java_test(path: &str) -> bool {
    let file = file_name(path);
    file.ends_with("Test.java") || file.ends_with("Tests.java")
}

/// `testing/`, `*_test.c(c)`, `*_unittest.cc`.
fn c_test(path: &str) -> bool {
    let file = file_name(path);
    let stem = file.rsplit_once('.').map_or(file, |(s, _)| s);
    has_dir(path, &["testing"]) || stem.ends_with("_test") || stem.ends_with("_unittest")
}

#[cfg(test)]
mod tests;
