//! docs/ARCHITECTURE.md held to the tree: the map a new contributor reads first must not name a
//! module that is gone, nor leave out a folder that exists.
//!
//! The rules, simple enough to check mechanically (the doc states the same convention):
//! - Every folder under `src/` has a row: a table line whose first cell holds the folder as a
//!   backticked path ending in `/` (`` | `src/rank/` | … | ``).
//! - Every `src/…` path the doc names exists. A path runs until a character no path here holds,
//!   so `src/lang/rows/<language>.rs` is checked as `src/lang/rows/`.
//! - Every Rust path the doc names (`a::b…`, optionally after `crate::` or `coret::`) resolves:
//!   its lower-case segments are modules, each `a/b.rs` or `a/b/mod.rs` under `src/`, up to the
//!   first capitalised segment (a type or constant, not followed further) or a segment written as
//!   a call, `f()` (a function of the module reached). A lower-case last segment without `()`
//!   must therefore be a module: that is what catches a module that moved. A path that starts
//!   with a capital (`Searcher::answer`) names members of a type and is not checked.
//!
//! Folder names written bare inside a row (`walk`, `source`) are prose, not checked.

use std::fs;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn architecture() -> String {
    fs::read_to_string(root().join("docs/ARCHITECTURE.md")).expect("docs/ARCHITECTURE.md")
}

/// Every folder under `src/`, as `src/a/b/`, sorted.
fn folders_under_src() -> Vec<String> {
    fn walk(dir: &Path, rel: &str, out: &mut Vec<String>) {
        for entry in fs::read_dir(dir).expect("readable src/") {
            let entry = entry.unwrap();
            if entry.file_type().unwrap().is_dir() {
                let name = entry.file_name().into_string().expect("UTF-8 folder name");
                let rel = format!("{rel}{name}/");
                out.push(rel.clone());
                walk(&entry.path(), &rel, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root().join("src"), "src/", &mut out);
    out.sort();
    out
}

/// The inline code spans of a piece of text.
fn backticked(text: &str) -> impl Iterator<Item = &str> {
    text.split('`').skip(1).step_by(2)
}

/// The folders of `folders` with no row of their own in `doc`.
fn folders_without_a_row(doc: &str, folders: &[String]) -> Vec<String> {
    let in_first_cells: Vec<&str> = doc
        .lines()
        .filter(|l| l.starts_with('|'))
        .filter_map(|l| l.split('|').nth(1))
        .flat_map(backticked)
        .collect();
    folders.iter().filter(|f| !in_first_cells.contains(&f.as_str())).cloned().collect()
}

fn is_path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/')
}

/// The `src/…` paths `doc` names that do not exist under `root`.
fn missing_src_paths(doc: &str, root: &Path) -> Vec<String> {
    let mut missing = Vec::new();
    for (at, _) in doc.match_indices("src/") {
        // `tests/src/x` or `../src/x` is not a path of this crate's `src/`.
        if doc[..at].chars().next_back().is_some_and(is_path_char) {
            continue;
        }
        let run: String = doc[at..].chars().take_while(|&c| is_path_char(c)).collect();
        let path = run.trim_end_matches('.'); // a sentence's full stop
        if !root.join(path).exists() {
            missing.push(path.to_string());
        }
    }
    missing
}

/// The Rust paths `doc` names (runs of identifier characters holding `::`), each with whether it
/// is written as a call.
fn rust_paths(doc: &str) -> Vec<(String, bool)> {
    let is_part = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':';
    let mut paths = Vec::new();
    let mut rest = doc;
    while let Some(start) = rest.find(is_part) {
        let after = &rest[start..];
        let len = after.find(|c: char| !is_part(c)).unwrap_or(after.len());
        let run = after[..len].trim_matches(':');
        if run.contains("::") {
            paths.push((run.to_string(), after[len..].starts_with("()")));
        }
        rest = &after[len..];
    }
    paths
}

/// Why `path` does not resolve to modules under `src`, or `None` when it does.
fn unresolved(path: &str, call: bool, src: &Path) -> Option<String> {
    let segments: Vec<&str> = path.split("::").collect();
    let segments = match segments[0] {
        "crate" | "coret" => &segments[1..],
        _ => &segments[..],
    };
    let mut dir = src.to_path_buf();
    for (i, seg) in segments.iter().enumerate() {
        if seg.starts_with(|c: char| c.is_ascii_uppercase()) || (call && i == segments.len() - 1 && i > 0) {
            return None;
        }
        let file = dir.join(format!("{seg}.rs"));
        let folder = dir.join(seg);
        if !file.is_file() && !folder.join("mod.rs").is_file() {
            let shown = dir.strip_prefix(root()).unwrap_or(&dir).display().to_string();
            return Some(format!("`{path}`: no module `{seg}` ({shown}/{seg}.rs or {shown}/{seg}/mod.rs)"));
        }
        // `a/b.rs` may have its submodules in `a/b/`, as `a/b/mod.rs` does.
        dir = folder;
    }
    None
}

fn unresolved_rust_paths(doc: &str, src: &Path) -> Vec<String> {
    rust_paths(doc).iter().filter_map(|(path, call)| unresolved(path, *call, src)).collect()
}

#[test]
fn every_folder_under_src_has_its_row_in_the_architecture() {
    let missing = folders_without_a_row(&architecture(), &folders_under_src());
    assert!(missing.is_empty(), "docs/ARCHITECTURE.md has no row for {missing:?}");
}

#[test]
fn every_src_path_the_architecture_names_exists() {
    let missing = missing_src_paths(&architecture(), root());
    assert!(missing.is_empty(), "docs/ARCHITECTURE.md names paths that do not exist: {missing:?}");
}

#[test]
fn every_module_the_architecture_names_is_where_it_says() {
    let wrong = unresolved_rust_paths(&architecture(), &root().join("src"));
    assert!(wrong.is_empty(), "docs/ARCHITECTURE.md: {wrong:#?}");
}

/// The checks themselves: each catches the mistake it exists for, and passes what is right.
#[test]
fn the_checks_catch_a_deleted_row_a_stale_path_and_a_moved_module() {
    let doc = architecture();
    let row = doc.lines().find(|l| l.starts_with("| `src/rerank/`")).expect("a row for src/rerank/");
    let without = doc.replace(&format!("{row}\n"), "");
    assert_eq!(folders_without_a_row(&without, &folders_under_src()), ["src/rerank/"]);

    let stale = "`src/mcp/code.rs` and `src/rank/` (`src/lib.rs`.)";
    assert_eq!(missing_src_paths(stale, root()), ["src/mcp/code.rs"]);

    let src = root().join("src");
    let moved = "`search::fuse`, `mcp::code`, `searcher::Searcher`, `repo::lines::span_lines`";
    assert_eq!(unresolved_rust_paths(moved, &src).len(), 4, "{:?}", unresolved_rust_paths(moved, &src));
    let right = "`crate::rank::fusion`, `rank::fusion::FusionParams`, `eval::patch::relocate`, \
                 `mcp::serve_stdio()`, `coret::tui`, `Searcher::answer`";
    assert_eq!(unresolved_rust_paths(right, &src), Vec::<String>::new());
}
