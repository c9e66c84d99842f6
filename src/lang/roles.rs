//! What a file is for, beyond source and tests: examples, documentation, benchmarks, fixtures,
//! compatibility shims, type stubs and re-export barrels. A person asking where something is
//! done means the code that does it; these files mention the same words and names without
//! being it, so the ranking layer ranks them down ([`crate::rank::layer`]), never out.
//! Directory words are shared by every language; stubs and barrels are row facts
//! ([`super::LangSpec::stubs`], [`super::LangSpec::barrels`]).

use super::lang_of_path;

/// A file's role, by its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathRole {
    Source,
    Example,
    Doc,
    Bench,
    Fixture,
    /// `compat.py`, `legacy/`, `shims/`, `polyfills/`: code kept for other versions.
    Compat,
    /// Declarations only (`.d.ts`, `.pyi`).
    Stub,
}

impl PathRole {
    pub fn as_str(self) -> &'static str {
        match self {
            PathRole::Source => "source",
            PathRole::Example => "example",
            PathRole::Doc => "doc",
            PathRole::Bench => "bench",
            PathRole::Fixture => "fixture",
            PathRole::Compat => "compat",
            PathRole::Stub => "stub",
        }
    }
}

const EXAMPLE_DIRS: [&str; 6] = ["example", "examples", "sample", "samples", "demo", "demos"];
const DOC_DIRS: [&str; 3] = ["doc", "docs", "documentation"];
const BENCH_DIRS: [&str; 4] = ["bench", "benches", "benchmark", "benchmarks"];
const FIXTURE_DIRS: [&str; 5] = ["fixture", "fixtures", "__fixtures__", "testdata", "test-data"];
/// Directory names and file stems (`_compat.py`) of compatibility code.
const COMPAT_WORDS: [&str; 8] =
    ["compat", "_compat", "legacy", "shim", "shims", "polyfill", "polyfills", "deprecated"];

/// The role of the file at `path` (repository-relative, `/`-separated).
pub fn path_role(path: &str) -> PathRole {
    let lower = path.to_ascii_lowercase();
    let mut parts: Vec<&str> = lower.split('/').collect();
    let file = parts.pop().unwrap_or_default();
    if lang_of_path(path).is_some_and(|l| l.spec().stubs.iter().any(|s| file.ends_with(s))) {
        return PathRole::Stub;
    }
    let stem = file.split('.').next().unwrap_or_default();
    let any_dir = |words: &[&str]| parts.iter().any(|d| words.contains(d));
    if any_dir(&FIXTURE_DIRS) {
        PathRole::Fixture
    } else if any_dir(&EXAMPLE_DIRS) {
        PathRole::Example
    } else if any_dir(&BENCH_DIRS) {
        PathRole::Bench
    } else if any_dir(&DOC_DIRS) {
        PathRole::Doc
    } else if any_dir(&COMPAT_WORDS) || COMPAT_WORDS.contains(&stem) {
        PathRole::Compat
    } else {
        PathRole::Source
    }
}

/// Whether `path` has a name its row's packages re-export through (`__init__.py`, `index.ts`,
/// `mod.rs`); it is a barrel when it also defines nothing (the ranking layer checks that).
pub fn is_barrel_name(path: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or(path);
    lang_of_path(path).is_some_and(|l| l.spec().barrels.contains(&file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_come_from_directory_words_and_the_rows_stub_endings() {
        assert_eq!(path_role("src/flask/app.py"), PathRole::Source);
        assert_eq!(path_role("examples/tutorial/flaskr/db.py"), PathRole::Example);
        assert_eq!(path_role("docs/conf.py"), PathRole::Doc);
        assert_eq!(path_role("benches/parse.rs"), PathRole::Bench);
        assert_eq!(path_role("internal/testdata/gen.go"), PathRole::Fixture);
        assert_eq!(path_role("src/requests/compat.py"), PathRole::Compat);
        assert_eq!(path_role("lib/legacy/old.js"), PathRole::Compat);
        assert_eq!(path_role("types/index.d.ts"), PathRole::Stub);
        // A JavaScript file's `.d.ts`-like name is not a stub: the ending is TypeScript's row fact.
        assert_eq!(path_role("src/index.d.js"), PathRole::Source);
        // Words inside a name are not directories: `docstring.py`, `examples_util.rs`.
        assert_eq!(path_role("src/docstring.py"), PathRole::Source);
        assert_eq!(path_role("src/examples_util.rs"), PathRole::Source);
    }

    #[test]
    fn barrel_names_are_each_rows_own() {
        assert!(is_barrel_name("src/flask/__init__.py"));
        assert!(is_barrel_name("src/index.ts"));
        assert!(is_barrel_name("tokio/src/sync/mod.rs"));
        assert!(!is_barrel_name("src/__init__.rs"));
        assert!(!is_barrel_name("src/index.go"));
    }
}
