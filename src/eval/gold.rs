//! Gold chunks and gold files of an instance: which chunks of the base snapshot its patch
//! changes (docs/GUIDE.md "Evaluation").
//!
//! Rules, per edited file (all line numbers are of the pre-image, the base snapshot):
//! - Hunks are first moved to where they really apply in the base file
//!   ([`FilePatch::relocate`]): SWE-bench headers can be off by dozens of lines.
//! - A removed or modified line belongs to the innermost chunk (smallest line span)
//!   containing it. Module chunks only catch lines that no definition contains. Chunk spans
//!   include decorators and docstrings, so edits there belong to the definition.
//! - Whitespace-only lines carry no code: a change block whose removed and added lines are
//!   all blank is ignored, and blank removed lines next to code changes do not make extra
//!   gold chunks (deleting the blank line after a function does not make the module gold).
//! - A pure insertion between old lines `a` and `a+1` (also a block that only replaces blank
//!   lines) belongs to the innermost definition the new code ends up inside:
//!   - one that spans the insertion point (contains both `a` and `a+1`); or
//!   - one that ends just before it (contains `b`, the last non-blank line at or before `a`)
//!     when the first inserted line of code is indented deeper than its `def`/`class` line:
//!     statements appended at the end of a function belong to the function, a method
//!     appended at the end of a class to the class (not to the class's last method), and a
//!     top-level function appended to a file to no definition (so the module chunk);
//!   - an inserted decorator directly above a definition belongs to that definition.
//! - Anything no definition takes goes to the file's module chunk (whatever its span), or,
//!   in a file without one, is listed in [`Gold::unplaced`].
//! - Gold files are the pre-existing files the patch changes lines of and that the index
//!   has chunks for: only those can appear in a chunk ranking, so only they can be found.
//!   New files (and copies), binary files, files outside the index (no supported language), renames
//!   without line changes and files the patch does not apply to yield no gold chunk and no
//!   gold file; they are listed in [`Gold::skipped`] so a report can show them.

use std::collections::BTreeSet;

use serde::Serialize;

use super::patch::{ChangeBlock, FilePatch, PatchSet};
use crate::chunk::{Chunk, ChunkKind};

/// What the index knows of one file of the base snapshot.
#[derive(Clone, Copy, Debug)]
pub struct FileChunks<'a> {
    /// The file's chunks; [`GoldChunk::index`] indexes this slice.
    pub chunks: &'a [Chunk],
    /// The file's text, the one the chunks were made from: hunks are located in it and
    /// insertions placed by its indentation.
    pub source: &'a str,
}

/// A gold chunk: the `index`-th chunk of `path` as given by the lookup.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct GoldChunk {
    pub path: String,
    pub index: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// Created (or copied) by the patch: not in the base snapshot.
    NewFile,
    Binary,
    /// Not in the index: no supported language, or absent from the snapshot.
    NotIndexed,
    /// In the index but without chunks (e.g. an empty `__init__.py`).
    NoChunks,
    /// Renamed or mode changed only.
    NoLineChanges,
    /// A hunk's context is nowhere in the base file (see [`SkippedFile::detail`]).
    PatchMismatch,
}

impl SkipReason {
    /// For people: why a file of the patch holds no gold chunk.
    pub fn describe(self) -> &'static str {
        match self {
            SkipReason::NewFile => "created by the patch",
            SkipReason::Binary => "binary",
            SkipReason::NotIndexed => "not indexed (no supported language, a test file left out, or absent)",
            SkipReason::NoChunks => "has no chunks",
            SkipReason::NoLineChanges => "renamed or mode changed only",
            SkipReason::PatchMismatch => "the patch does not match the base file",
        }
    }
}

impl Gold {
    /// Why the gold is empty, for a `no_gold` instance: each file of the patch and why it gave
    /// nothing.
    pub fn why_empty(&self) -> String {
        let mut parts: Vec<String> = self
            .skipped
            .iter()
            .map(|s| match &s.detail {
                Some(d) => format!("{}: {} ({d})", s.path, s.reason.describe()),
                None => format!("{}: {}", s.path, s.reason.describe()),
            })
            .collect();
        if !self.unplaced.is_empty() {
            parts.push(format!("{} changed line(s) outside any chunk", self.unplaced.len()));
        }
        if parts.is_empty() {
            "the patch changes no file".into()
        } else {
            parts.join("; ")
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SkippedFile {
    pub path: String,
    pub reason: SkipReason,
    /// More about the reason, where there is more to say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Gold {
    /// Distinct gold chunks, by file in patch order, then by chunk index.
    pub chunks: Vec<GoldChunk>,
    /// Gold files (pre-image paths), in patch order.
    pub files: Vec<String>,
    pub skipped: Vec<SkippedFile>,
    /// `(path, old line)` of changes no chunk encloses (module-level code in a file without
    /// module chunk); for an insertion, the old line it follows.
    pub unplaced: Vec<(String, usize)>,
}

/// Compute the gold of `patch`. `lookup` gives the index's view of a base-snapshot path,
/// or `None` for a file the index does not hold.
pub fn gold_chunks<'a>(patch: &PatchSet, lookup: impl Fn(&str) -> Option<FileChunks<'a>>) -> Gold {
    let mut gold = Gold::default();
    for file in &patch.files {
        let path = file.path().to_string();
        let skip = |reason| SkippedFile { path: path.clone(), reason, detail: None };
        if file.is_new_file || file.is_copy {
            gold.skipped.push(skip(SkipReason::NewFile));
            continue;
        }
        if file.is_binary {
            gold.skipped.push(skip(SkipReason::Binary));
            continue;
        }
        if file.hunks.is_empty() {
            gold.skipped.push(skip(SkipReason::NoLineChanges));
            continue;
        }
        let Some(view) = lookup(&path) else {
            gold.skipped.push(skip(SkipReason::NotIndexed));
            continue;
        };
        if view.chunks.is_empty() {
            gold.skipped.push(skip(SkipReason::NoChunks));
            continue;
        }
        let file = match file.relocate(view.source) {
            Ok(file) => file,
            Err(detail) => {
                let detail = Some(detail);
                gold.skipped.push(SkippedFile { detail, ..skip(SkipReason::PatchMismatch) });
                continue;
            }
        };
        let (indices, unplaced) = gold_in_file(&file, view);
        if !gold.files.contains(&path) {
            gold.files.push(path.clone());
        }
        gold.unplaced.extend(unplaced.into_iter().map(|line| (path.clone(), line)));
        for index in indices {
            let chunk = GoldChunk { path: path.clone(), index };
            if !gold.chunks.contains(&chunk) {
                gold.chunks.push(chunk);
            }
        }
    }
    gold
}

/// Chunk indices of one file's changes, and the old lines no chunk took.
fn gold_in_file(file: &FilePatch, view: FileChunks<'_>) -> (BTreeSet<usize>, Vec<usize>) {
    let placer = Placer::new(view);
    let mut indices = BTreeSet::new();
    let mut unplaced = Vec::new();
    let mut add = |found: Option<usize>, line: usize| match found {
        Some(i) => {
            indices.insert(i);
        }
        None => unplaced.push(line),
    };
    for block in file.blocks() {
        let code_removed: Vec<usize> =
            block.removed.iter().filter(|(_, t)| !is_blank(t)).map(|(n, _)| *n).collect();
        if !code_removed.is_empty() {
            for line in code_removed {
                add(placer.line(line), line);
            }
        } else if block.added.iter().any(|t| !is_blank(t)) {
            add(placer.insertion(block), block.after_old_line);
        }
    }
    (indices, unplaced)
}

struct Placer<'a> {
    chunks: &'a [Chunk],
    /// Old lines of the file.
    lines: Vec<&'a str>,
}

impl<'a> Placer<'a> {
    fn new(view: FileChunks<'a>) -> Self {
        Placer { chunks: view.chunks, lines: view.source.lines().collect() }
    }

    /// The innermost definition containing `line`, else the module chunk.
    fn line(&self, line: usize) -> Option<usize> {
        self.innermost(|c| contains(c, line)).or_else(|| self.module())
    }

    /// Where the lines of a pure insertion block end up (see the module comment).
    fn insertion(&self, block: &ChangeBlock) -> Option<usize> {
        let a = block.after_old_line;
        let first_code = block
            .added
            .iter()
            .find(|t| !is_blank(t) && !t.trim_start().starts_with('#'))
            .or_else(|| block.added.iter().find(|t| !is_blank(t)));
        if first_code.is_some_and(|t| t.trim_start().starts_with('@')) {
            if let Some(i) = self.innermost(|c| c.start_line == a + 1) {
                return Some(i);
            }
        }
        let before = self.last_code_line_at_or_before(a);
        let indent = first_code.map(|t| indentation(t));
        let extends = |c: &Chunk| {
            before >= 1
                && contains(c, before)
                && matches!((indent, self.def_indent(c)), (Some(new), Some(def)) if new > def)
        };
        self.innermost(|c| (a >= 1 && contains(c, a) && contains(c, a + 1)) || extends(c))
            .or_else(|| self.module())
    }

    /// The smallest non-module chunk satisfying `pred` (ties: the first).
    fn innermost(&self, pred: impl Fn(&Chunk) -> bool) -> Option<usize> {
        self.chunks
            .iter()
            .enumerate()
            .filter(|(_, c)| c.kind != ChunkKind::Module && pred(c))
            .min_by_key(|(i, c)| (c.end_line.saturating_sub(c.start_line), *i))
            .map(|(i, _)| i)
    }

    fn module(&self) -> Option<usize> {
        self.chunks.iter().position(|c| c.kind == ChunkKind::Module)
    }

    /// The last non-blank old line at or before `a` (0 if none).
    fn last_code_line_at_or_before(&self, a: usize) -> usize {
        let lines = &self.lines;
        (1..=a.min(lines.len())).rev().find(|&n| !is_blank(lines[n - 1])).unwrap_or(0)
    }

    /// Indentation of a chunk's first line (its first decorator or `def`/`class`).
    fn def_indent(&self, chunk: &Chunk) -> Option<usize> {
        let line = self.lines.get(chunk.start_line.checked_sub(1)?)?;
        Some(indentation(line))
    }
}

fn contains(chunk: &Chunk, line: usize) -> bool {
    chunk.start_line <= line && line <= chunk.end_line
}

fn is_blank(text: &str) -> bool {
    text.trim().is_empty()
}

/// Leading whitespace width in columns, tabs to the next multiple of 8 as Python does.
fn indentation(text: &str) -> usize {
    let mut col = 0;
    for c in text.chars() {
        match c {
            ' ' => col += 1,
            '\t' => col = (col / 8 + 1) * 8,
            _ => break,
        }
    }
    col
}

#[cfg(test)]
mod tests;
