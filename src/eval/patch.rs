//! Unified diffs (git format) as per-file changes against the pre-image: which old lines
//! are removed or modified, and where pure insertions go. Hunk bodies are read by their
//! line counts, so a removed line that happens to start with `--` is never mistaken for
//! a file header.

use std::collections::BTreeSet;
use std::fmt;

/// All file changes of one patch, in patch order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PatchSet {
    pub files: Vec<FilePatch>,
}

/// The changes to one file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FilePatch {
    /// Pre-image path without the `a/` prefix; `None` for a new file.
    pub old_path: Option<String>,
    /// Post-image path without the `b/` prefix; `None` for a deleted file.
    pub new_path: Option<String>,
    pub is_new_file: bool,
    pub is_deleted: bool,
    /// A copy (`copy from`/`copy to`): the pre-image file itself is untouched.
    pub is_copy: bool,
    /// `Binary files … differ` or a `GIT binary patch`: no line information.
    pub is_binary: bool,
    pub hunks: Vec<Hunk>,
}

/// One `@@ -a,b +c,d @@` hunk.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hunk {
    /// As in the header; after [`FilePatch::relocate`], where the hunk really applies.
    pub old_start: usize,
    pub old_count: usize,
    pub new_start: usize,
    pub new_count: usize,
    /// The context and removed lines, in order: what the hunk expects in the old file.
    pub pre_image: Vec<String>,
    /// Runs of consecutive `-`/`+` lines, in order.
    pub blocks: Vec<ChangeBlock>,
}

/// A maximal run of removed and added lines between context lines (or hunk edges).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChangeBlock {
    /// The old line just before the block (0: the top of the file). For a pure insertion
    /// this is the insertion point: the new lines go between old lines `after_old_line`
    /// and `after_old_line + 1`.
    pub after_old_line: usize,
    /// `(old line number, text without the '-')`, 1-based.
    pub removed: Vec<(usize, String)>,
    /// Added lines, without the `+`.
    pub added: Vec<String>,
}

impl ChangeBlock {
    /// Lines were only added: nothing of the pre-image changed.
    pub fn is_pure_insertion(&self) -> bool {
        self.removed.is_empty()
    }
}

impl FilePatch {
    /// All change blocks of all hunks, in order.
    pub fn blocks(&self) -> impl Iterator<Item = &ChangeBlock> {
        self.hunks.iter().flat_map(|h| h.blocks.iter())
    }

    /// The pre-image path where there is one, else the new path.
    pub fn path(&self) -> &str {
        self.old_path.as_deref().or(self.new_path.as_deref()).unwrap_or_default()
    }

    pub fn is_rename(&self) -> bool {
        !self.is_copy && matches!((&self.old_path, &self.new_path), (Some(old), Some(new)) if old != new)
    }

    /// Old line numbers that the patch removes or modifies.
    pub fn removed_lines(&self) -> BTreeSet<usize> {
        self.blocks().flat_map(|b| b.removed.iter().map(|(n, _)| *n)).collect()
    }

    /// Old lines after which lines are purely inserted (0: before the first line).
    pub fn insertion_points(&self) -> BTreeSet<usize> {
        self.blocks().filter(|b| b.is_pure_insertion()).map(|b| b.after_old_line).collect()
    }
}

/// Where and why a patch could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatchError {
    /// 1-based line of the patch text.
    pub line: usize,
    pub message: String,
}

impl fmt::Display for PatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "patch line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for PatchError {}

/// Parse a unified diff. Text outside file sections (a commit message, a `-- ` signature)
/// is ignored; a malformed hunk is an error.
pub fn parse_patch(text: &str) -> Result<PatchSet, PatchError> {
    let lines: Vec<&str> = text.lines().collect();
    let mut parser = Parser { lines: &lines, pos: 0, files: Vec::new(), current: None };
    parser.run()?;
    Ok(PatchSet { files: parser.files })
}

struct Parser<'a> {
    lines: &'a [&'a str],
    pos: usize,
    files: Vec<FilePatch>,
    /// The file being read, and whether its `---`/`+++` pair was seen.
    current: Option<(FilePatch, bool)>,
}

impl Parser<'_> {
    fn run(&mut self) -> Result<(), PatchError> {
        while self.pos < self.lines.len() {
            let line = self.lines[self.pos].trim_end_matches('\r');
            if let Some(rest) = line.strip_prefix("diff --git ") {
                self.finish_file();
                let (old, new) = split_git_header(rest);
                let file = FilePatch { old_path: old, new_path: new, ..Default::default() };
                self.current = Some((file, false));
            } else if line.starts_with("--- ") && self.next_starts_with("+++ ") {
                self.file_headers(line)?;
                self.pos += 1;
            } else if line.starts_with("@@") {
                self.hunk(line)?;
                continue;
            } else if let Some((file, seen_headers)) = &mut self.current {
                if !*seen_headers && file.hunks.is_empty() {
                    extended_header(file, line);
                }
            }
            self.pos += 1;
        }
        self.finish_file();
        Ok(())
    }

    fn next_starts_with(&self, prefix: &str) -> bool {
        self.lines.get(self.pos + 1).is_some_and(|l| l.starts_with(prefix))
    }

    fn finish_file(&mut self) {
        if let Some((file, _)) = self.current.take() {
            self.files.push(file);
        }
    }

    /// `--- OLD` / `+++ NEW`. Starts a new file unless it belongs to a `diff --git` header.
    fn file_headers(&mut self, minus: &str) -> Result<(), PatchError> {
        let plus = self.lines[self.pos + 1].trim_end_matches('\r');
        let old = header_path(&minus[4..], "a/");
        let new = header_path(&plus[4..], "b/");
        if !matches!(&self.current, Some((f, false)) if f.hunks.is_empty()) {
            self.finish_file();
            self.current = Some((FilePatch::default(), false));
        }
        if let Some((file, seen)) = &mut self.current {
            *seen = true;
            if old.is_none() {
                file.is_new_file = true;
            }
            if new.is_none() {
                file.is_deleted = true;
            }
            file.old_path = old;
            file.new_path = new;
        }
        Ok(())
    }

    /// One `@@ -a,b +c,d @@` hunk and its body; leaves `pos` after the body.
    fn hunk(&mut self, header: &str) -> Result<(), PatchError> {
        let header_line = self.pos + 1;
        let error = |message: String| PatchError { line: header_line, message };
        let (old_start, old_count, new_start, new_count) =
            parse_hunk_header(header).ok_or_else(|| error(format!("bad hunk header {header:?}")))?;
        let mut hunk = Hunk { old_start, old_count, new_start, new_count, ..Default::default() };
        let (mut old_left, mut new_left) = (old_count, new_count);
        let Some((file, _)) = &mut self.current else {
            return Err(error("hunk before any file header".into()));
        };
        // `-a,0` means "after line a"; otherwise the hunk starts at line a.
        let mut old_line = if old_left == 0 { old_start } else { old_start.saturating_sub(1) };
        let mut block: Option<ChangeBlock> = None;
        self.pos += 1;
        while old_left > 0 || new_left > 0 {
            let Some(&raw) = self.lines.get(self.pos) else {
                return Err(error(format!(
                    "hunk ends early: {old_left} old and {new_left} new lines missing"
                )));
            };
            let line_no = self.pos + 1;
            let mut chars = raw.chars();
            let (marker, body) = (chars.next(), chars.as_str());
            match marker {
                // An empty line is a context line whose trailing space was stripped.
                Some(' ') | None if old_left > 0 && new_left > 0 => {
                    hunk.blocks.extend(block.take());
                    hunk.pre_image.push(body.to_string());
                    old_line += 1;
                    old_left -= 1;
                    new_left -= 1;
                }
                Some('-') if old_left > 0 => {
                    old_line += 1;
                    old_left -= 1;
                    let b = block.get_or_insert_with(|| new_block(old_line - 1));
                    b.removed.push((old_line, body.to_string()));
                    hunk.pre_image.push(body.to_string());
                }
                Some('+') if new_left > 0 => {
                    new_left -= 1;
                    block.get_or_insert_with(|| new_block(old_line)).added.push(body.to_string());
                }
                Some('\\') => {}
                _ => {
                    return Err(PatchError {
                        line: line_no,
                        message: format!(
                            "unexpected line in hunk ({old_left} old, {new_left} new lines left): {raw:?}"
                        ),
                    })
                }
            }
            self.pos += 1;
        }
        hunk.blocks.extend(block);
        file.hunks.push(hunk);
        // A trailing "\ No newline at end of file" belongs to the last line.
        while self.lines.get(self.pos).is_some_and(|l| l.starts_with('\\')) {
            self.pos += 1;
        }
        Ok(())
    }
}

fn new_block(after_old_line: usize) -> ChangeBlock {
    ChangeBlock { after_old_line, ..Default::default() }
}

/// Git's extended header lines between `diff --git` and the first hunk.
fn extended_header(file: &mut FilePatch, line: &str) {
    if line.starts_with("new file mode") {
        file.is_new_file = true;
        file.old_path = None;
    } else if line.starts_with("deleted file mode") {
        file.is_deleted = true;
        file.new_path = None;
    } else if let Some(p) = line.strip_prefix("rename from ") {
        file.old_path = Some(unquote(p));
    } else if let Some(p) = line.strip_prefix("rename to ") {
        file.new_path = Some(unquote(p));
    } else if let Some(p) = line.strip_prefix("copy from ") {
        file.is_copy = true;
        file.old_path = Some(unquote(p));
    } else if let Some(p) = line.strip_prefix("copy to ") {
        file.new_path = Some(unquote(p));
    } else if line.starts_with("Binary files ") || line == "GIT binary patch" {
        file.is_binary = true;
    }
}

/// `-a[,b] +c[,d] @@ …` → (a, b, c, d); an omitted count is 1.
fn parse_hunk_header(header: &str) -> Option<(usize, usize, usize, usize)> {
    let rest = header.strip_prefix("@@ -")?;
    let (ranges, _) = rest.split_once(" @@")?;
    let (old, new) = ranges.split_once(" +")?;
    let range = |r: &str| -> Option<(usize, usize)> {
        match r.split_once(',') {
            Some((start, count)) => Some((start.parse().ok()?, count.parse().ok()?)),
            None => Some((r.parse().ok()?, 1)),
        }
    };
    let (a, b) = range(old)?;
    let (c, d) = range(new)?;
    Some((a, b, c, d))
}

/// The path of a `---`/`+++` line: drops a tab-separated timestamp, unquotes, strips the
/// `a/` or `b/` prefix; `/dev/null` is `None`.
fn header_path(raw: &str, prefix: &str) -> Option<String> {
    let raw = if raw.starts_with('"') { raw } else { raw.split('\t').next().unwrap_or(raw) };
    let path = unquote(raw.trim_end());
    if path == "/dev/null" {
        return None;
    }
    Some(path.strip_prefix(prefix).map(str::to_string).unwrap_or(path))
}

/// Paths of `diff --git a/OLD b/NEW`. Unquoted paths may contain spaces, so when both
/// halves name the same file the split is taken in the middle.
fn split_git_header(rest: &str) -> (Option<String>, Option<String>) {
    let rest = rest.trim_end();
    if rest.starts_with('"') {
        if let Some(end) = closing_quote(rest) {
            let old = unquote(&rest[..=end]);
            let new = unquote(rest[end + 1..].trim_start());
            return (strip(&old, "a/"), strip(&new, "b/"));
        }
    }
    let half = rest.len() / 2;
    if rest.len() % 2 == 1 && rest.is_char_boundary(half) && rest[half..].starts_with(' ') {
        let (old, new) = (&rest[..half], &rest[half + 1..]);
        if old.get(2..) == new.get(2..) {
            return (strip(old, "a/"), strip(new, "b/"));
        }
    }
    match rest.find(" b/").or_else(|| rest.find(" \"b/")) {
        Some(i) => (strip(&rest[..i], "a/"), strip(&unquote(&rest[i + 1..]), "b/")),
        None => (None, None),
    }
}

fn strip(path: &str, prefix: &str) -> Option<String> {
    Some(path.strip_prefix(prefix).unwrap_or(path).to_string())
}

fn closing_quote(s: &str) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in s.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return Some(i),
            _ => {}
        }
    }
    None
}

/// Undo git's C-style quoting (`"a/caf\303\251.py"`); unquoted text is returned as is.
fn unquote(s: &str) -> String {
    let Some(inner) = s.strip_prefix('"').and_then(|s| s.strip_suffix('"')) else {
        return s.to_string();
    };
    let mut bytes = Vec::with_capacity(inner.len());
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            let mut buf = [0; 4];
            bytes.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            continue;
        }
        match chars.next() {
            Some('n') => bytes.push(b'\n'),
            Some('t') => bytes.push(b'\t'),
            Some('r') => bytes.push(b'\r'),
            Some(d @ '0'..='7') => {
                let mut value = d as u32 - '0' as u32;
                for _ in 0..2 {
                    if let Some(&d @ '0'..='7') = chars.peek() {
                        value = value * 8 + (d as u32 - '0' as u32);
                        chars.next();
                    }
                }
                bytes.push(value as u8);
            }
            Some(other) => {
                let mut buf = [0; 4];
                bytes.extend_from_slice(other.encode_utf8(&mut buf).as_bytes());
            }
            None => bytes.push(b'\\'),
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

mod relocate;

#[cfg(test)]
mod tests;
