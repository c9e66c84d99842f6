//! Fuzzing every row's chunker and call resolver: fixtures mutated at random (ranges cut,
//! repeated and spliced, brackets, quotes and definition keywords inserted, truncated) must
//! neither panic nor yield a chunk or call site outside their file. `examples/fuzz_rows.rs`
//! runs it at scale (`scripts/test/fuzz-rows.sh`); `tests/fuzz_rows.rs` runs a hundred per row.

use std::panic::{catch_unwind, AssertUnwindSafe};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use coret::callgraph::CallGraph;
use coret::chunk::chunk_file;

/// Pieces that stress a grammar and its rules: brackets, quotes, comments, the keywords that
/// open definitions in the table's languages, macros the C rows skip, a BOM, non-ASCII.
const PIECES: &[&str] = &[
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    "<",
    ">",
    "\"",
    "'",
    "`",
    "/*",
    "*/",
    "//",
    "#",
    "\n",
    "\n\n",
    "    ",
    "\t",
    "<?php ",
    "?>",
    "def ",
    "end\n",
    "class ",
    "fn ",
    "func ",
    "fun ",
    "function ",
    "impl ",
    "struct ",
    "trait ",
    "object ",
    "module ",
    "extension ",
    "namespace ",
    "template <typename T>\n",
    "::",
    ".",
    "->",
    "=>",
    ";",
    ",",
    "$this->",
    "self.",
    "this.",
    "super.",
    "new ",
    "@",
    "\\",
    "#[test]\n",
    "#[cfg(test)]\n",
    "#define F(x) x\n",
    "FMT_BEGIN_NAMESPACE\n",
    "macro_rules! m { () => {} }\n",
    "m! { fn f() {} }\n",
    "\u{feff}",
    "é",
    "日本",
    "\r\n",
];

/// What a run found: the inputs tried and, for the first few failures, what broke.
#[derive(Debug, Default)]
pub struct Report {
    pub inputs: u64,
    pub failures: u64,
    /// Up to [`MAX_KEPT`] failures: the message and the input that caused it.
    pub kept: Vec<(String, String)>,
}

pub const MAX_KEPT: usize = 5;

/// One mutated text made from `seeds`.
pub fn mutate(rng: &mut StdRng, seeds: &[Vec<char>]) -> String {
    let mut chars = seeds[rng.random_range(0..seeds.len())].clone();
    for _ in 0..rng.random_range(1..=4) {
        let len = chars.len();
        let at = rng.random_range(0..=len);
        let to = (at + rng.random_range(1..=96)).min(len);
        match rng.random_range(0..6) {
            0 => {
                chars.drain(at..to);
            }
            1 => {
                let piece = chars[at..to].to_vec();
                let into = rng.random_range(0..=len);
                chars.splice(into..into, piece);
            }
            2 => {
                let piece = PIECES[rng.random_range(0..PIECES.len())];
                chars.splice(at..at, piece.chars());
            }
            3 => chars.truncate(at),
            4 => {
                let other = &seeds[rng.random_range(0..seeds.len())];
                let from = rng.random_range(0..=other.len());
                let until = (from + rng.random_range(1..=256)).min(other.len());
                chars.splice(at..to, other[from..until].iter().copied());
            }
            _ => {
                if at < len {
                    chars[at] = char::from_u32(rng.random_range(0x20..0x3000)).unwrap_or('?');
                }
            }
        }
    }
    chars.into_iter().collect()
}

/// Chunks `text` as the file `path` and builds its call graph; says what is wrong, if anything.
pub fn check(path: &str, text: &str) -> Result<(), String> {
    let file = chunk_file(path, text);
    let lines = text.matches('\n').count() + 1;
    for c in &file.chunks {
        let span_ok = c.start_byte <= c.end_byte
            && c.end_byte <= text.len()
            && text.is_char_boundary(c.start_byte)
            && text.is_char_boundary(c.end_byte);
        if !span_ok || c.start_line == 0 || c.start_line > c.end_line || c.end_line > lines {
            return Err(format!(
                "chunk {} spans bytes {}..{}, lines {}-{} of a {}-byte, {lines}-line file",
                c.name,
                c.start_byte,
                c.end_byte,
                c.start_line,
                c.end_line,
                text.len()
            ));
        }
        if !c.text.starts_with(path) {
            return Err(format!("chunk {}'s text does not start with its path", c.name));
        }
    }
    if let Some(site) = file.calls.iter().flatten().find(|s| s.line == 0 || s.line as usize > lines) {
        return Err(format!("call {} on line {} of {lines}", site.name, site.line));
    }
    let graph = CallGraph::build(std::slice::from_ref(&file));
    if graph.callees.iter().flatten().any(|&c| c as usize >= file.chunks.len()) {
        return Err("a call edge to a chunk that does not exist".into());
    }
    Ok(())
}

/// `inputs` mutations of `seeds` (texts of files named like `path`), from random seed `seed`.
pub fn run(path: &str, seeds: &[String], inputs: u64, seed: u64) -> Report {
    run_with(path, seeds, inputs, seed, |_| {})
}

/// As [`run`], each input written to `trace` before it is checked.
pub fn run_traced(path: &str, seeds: &[String], inputs: u64, seed: u64, trace: &std::path::Path) -> Report {
    run_with(path, seeds, inputs, seed, |text| {
        let _ = std::fs::write(trace, text);
    })
}

fn run_with(path: &str, seeds: &[String], inputs: u64, seed: u64, before: impl Fn(&str)) -> Report {
    let seeds: Vec<Vec<char>> = seeds.iter().map(|s| s.chars().collect()).collect();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut report = Report::default();
    for _ in 0..inputs {
        let text = mutate(&mut rng, &seeds);
        before(&text);
        let outcome = catch_unwind(AssertUnwindSafe(|| check(path, &text)));
        let problem = match outcome {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(e),
            Err(panic) => Some(format!(
                "panic: {}",
                panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| panic.downcast_ref::<&str>().copied())
                    .unwrap_or("?")
            )),
        };
        report.inputs += 1;
        if let Some(problem) = problem {
            report.failures += 1;
            if report.kept.len() < MAX_KEPT {
                report.kept.push((problem, text));
            }
        }
    }
    report
}

/// The fixtures of every row, as `(language, [(path, text)])` in table order: the eight first
/// rows' under `tests/fixtures/lang/`, the others' (and a Python file) under `src/lang/fixtures/`.
pub fn fixture_seeds(crate_root: &std::path::Path) -> Vec<(coret::lang::Lang, Vec<(String, String)>)> {
    let mut files: Vec<(String, String)> = Vec::new();
    for dir in ["tests/fixtures/lang", "src/lang/fixtures"] {
        let Ok(entries) = std::fs::read_dir(crate_root.join(dir)) else { continue };
        for entry in entries.flatten() {
            let rel = format!("{dir}/{}", entry.file_name().to_string_lossy());
            if let Ok(text) = std::fs::read_to_string(entry.path()) {
                files.push((rel, text));
            }
        }
    }
    files.sort();
    coret::lang::LANGUAGES
        .iter()
        .map(|spec| {
            let own = files
                .iter()
                .filter(|(p, _)| coret::lang::lang_of_path(p) == Some(spec.lang))
                .cloned()
                .collect();
            (spec.lang, own)
        })
        .collect()
}
