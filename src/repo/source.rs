//! Deciding whether a file's bytes are indexable source text.

use serde::{Deserialize, Serialize};

/// Why a file was left out of the index. Skips are counted, never fatal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SkipReason {
    Binary,
    TooLarge,
    NotUtf8,
    Unreadable,
    /// A symlink that resolves outside the repository.
    OutsideRoot,
    /// A FIFO, socket or device.
    NotRegular,
    /// Code in a language the index does not take (unsupported, or left out by `--lang`).
    OtherLanguage,
    /// A file of a row whose grammar does not load with the tree-sitter in use.
    NoGrammar,
    /// Under `vendor/`, `third_party/`, `node_modules/` ([`super::generated`]).
    Vendored,
    /// A `.min.` file, or one with a line no person wrote (a bundle).
    Minified,
    /// Committed build output: a source map beside it or a `sourceMappingURL`.
    BuildOutput,
    /// Says so in its first lines (`@generated`, `DO NOT EDIT`).
    Generated,
}

impl std::fmt::Display for SkipReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SkipReason::Binary => "binary",
            SkipReason::TooLarge => "too large",
            SkipReason::NotUtf8 => "not UTF-8",
            SkipReason::Unreadable => "unreadable",
            SkipReason::OutsideRoot => "outside the repository",
            SkipReason::NotRegular => "not a regular file",
            SkipReason::OtherLanguage => "another language",
            SkipReason::NoGrammar => "its grammar does not load",
            SkipReason::Vendored => "vendored",
            SkipReason::Minified => "minified",
            SkipReason::BuildOutput => "build output",
            SkipReason::Generated => "generated",
        })
    }
}

/// Counts of skipped files by reason (the `stats.skipped` object of `--json`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkipCounts {
    pub binary: usize,
    pub too_large: usize,
    pub not_utf8: usize,
    pub unreadable: usize,
    #[serde(default)]
    pub outside_root: usize,
    #[serde(default)]
    pub not_regular: usize,
    /// Code files of languages the index does not take: counted, never an error.
    #[serde(default)]
    pub other_language: usize,
    /// Files of a row whose grammar does not load (`Lang::grammar_loads`): counted, never fatal.
    #[serde(default)]
    pub no_grammar: usize,
    /// Vendored, minified, built and generated files ([`super::generated`]), unless
    /// `--include-generated`.
    #[serde(default)]
    pub vendored: usize,
    #[serde(default)]
    pub minified: usize,
    #[serde(default)]
    pub build_output: usize,
    #[serde(default)]
    pub generated: usize,
}

impl SkipCounts {
    pub fn add(&mut self, reason: SkipReason) {
        match reason {
            SkipReason::Binary => self.binary += 1,
            SkipReason::TooLarge => self.too_large += 1,
            SkipReason::NotUtf8 => self.not_utf8 += 1,
            SkipReason::Unreadable => self.unreadable += 1,
            SkipReason::OutsideRoot => self.outside_root += 1,
            SkipReason::NotRegular => self.not_regular += 1,
            SkipReason::OtherLanguage => self.other_language += 1,
            SkipReason::NoGrammar => self.no_grammar += 1,
            SkipReason::Vendored => self.vendored += 1,
            SkipReason::Minified => self.minified += 1,
            SkipReason::BuildOutput => self.build_output += 1,
            SkipReason::Generated => self.generated += 1,
        }
    }

    /// Each reason with its count, as `stats.skipped` lists them: the one list every count of
    /// skips reads (issue 70: the text said "0 skipped" beside 94 `other_language`).
    pub fn by_reason(&self) -> [(SkipReason, usize); 12] {
        [
            (SkipReason::Binary, self.binary),
            (SkipReason::TooLarge, self.too_large),
            (SkipReason::NotUtf8, self.not_utf8),
            (SkipReason::Unreadable, self.unreadable),
            (SkipReason::OutsideRoot, self.outside_root),
            (SkipReason::NotRegular, self.not_regular),
            (SkipReason::OtherLanguage, self.other_language),
            (SkipReason::NoGrammar, self.no_grammar),
            (SkipReason::Vendored, self.vendored),
            (SkipReason::Minified, self.minified),
            (SkipReason::BuildOutput, self.build_output),
            (SkipReason::Generated, self.generated),
        ]
    }

    /// Every file skipped, whatever the reason (the sum of `stats.skipped`).
    pub fn total(&self) -> usize {
        self.by_reason().iter().map(|(_, n)| n).sum()
    }

    /// For people: `94 skipped (another language 94)`, `0 skipped`.
    pub fn describe(&self) -> String {
        let reasons: Vec<String> =
            self.by_reason().iter().filter(|(_, n)| *n > 0).map(|(why, n)| format!("{why} {n}")).collect();
        match reasons.is_empty() {
            true => "0 skipped".to_string(),
            false => format!("{} skipped ({})", self.total(), reasons.join(", ")),
        }
    }
}

/// Default limit on a source file's size; generated or vendored giants rarely hold the code to edit.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 1024 * 1024;

pub use crate::lang::{is_source_path, is_test_path};

/// Extensions of code that may have no row in the language table: counted when a walk meets
/// them, so a user sees what an index leaves out. One the table owns is never counted here.
const OTHER_CODE: &[&str] = &[
    "m", "mm", "lua", "pl", "pm", "r", "jl", "dart", "ex", "exs", "erl", "hs", "ml", "clj", "groovy", "vue",
    "svelte", "zig", "nim", "fs", "vb",
];

/// Code in a language without a row in the table (`.lua`, `.dart`, …).
pub fn is_other_code_path(path: &str) -> bool {
    !is_source_path(path) && OTHER_CODE.contains(&crate::lang::extension(path).as_str())
}

/// Turns raw bytes into source text, or says why not. A NUL byte in the first 8 KiB marks a
/// binary file (git's heuristic); anything else must be valid UTF-8.
pub fn decode_source(bytes: Vec<u8>, max_size: u64) -> Result<String, SkipReason> {
    if bytes.len() as u64 > max_size {
        return Err(SkipReason::TooLarge);
    }
    let head = &bytes[..bytes.len().min(8192)];
    if head.contains(&0) {
        return Err(SkipReason::Binary);
    }
    let mut text = String::from_utf8(bytes).map_err(|_| SkipReason::NotUtf8)?;
    // A UTF-8 byte-order mark is legal in Python sources but would shift byte offsets.
    if text.starts_with('\u{feff}') {
        text.drain(..3);
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_bytes() {
        assert_eq!(decode_source(b"x = 1\n".to_vec(), 100).unwrap(), "x = 1\n");
        assert_eq!(decode_source(b"x\0y".to_vec(), 100), Err(SkipReason::Binary));
        assert_eq!(decode_source(vec![0xff, 0xfe, b'a'], 100), Err(SkipReason::NotUtf8));
        assert_eq!(decode_source(vec![b'a'; 101], 100), Err(SkipReason::TooLarge));
        assert_eq!(decode_source("\u{feff}x = 1".as_bytes().to_vec(), 100).unwrap(), "x = 1");
    }

    #[test]
    fn recognises_test_files() {
        for p in [
            "tests/test_a.py",
            "pkg/tests/helpers.py",
            "test_x.py",
            "a/b_test.py",
            "conftest.py",
            "sympy/core/tests/x.py",
        ] {
            assert!(is_test_path(p), "{p}");
        }
        for p in ["pkg/testing_utils.py", "src/contest.py", "latest.py", "pkg/test.py"] {
            assert!(!is_test_path(p), "{p}");
        }
    }

    #[test]
    fn counts_skips() {
        let mut c = SkipCounts::default();
        c.add(SkipReason::Binary);
        c.add(SkipReason::NotUtf8);
        c.add(SkipReason::NotUtf8);
        assert_eq!((c.binary, c.not_utf8, c.total()), (1, 2, 3));
        assert_eq!(c.describe(), "3 skipped (binary 1, not UTF-8 2)");
        assert_eq!(SkipCounts::default().describe(), "0 skipped");
    }

    /// Issue 70: the text summary said "0 skipped" where `stats.skipped` counted 94 files of
    /// other languages; both count every field now.
    #[test]
    fn the_text_counts_every_skip_the_json_counts() {
        let mut c = SkipCounts::default();
        for reason in [SkipReason::OtherLanguage, SkipReason::OtherLanguage, SkipReason::NoGrammar] {
            c.add(reason);
        }
        let json = serde_json::to_value(c).unwrap();
        let listed: u64 = json.as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum();
        assert_eq!(c.total() as u64, listed);
        assert_eq!(c.describe(), "3 skipped (another language 2, its grammar does not load 1)");
    }
}
