//! Walking a working tree for Python sources, honouring `.gitignore` and `.ignore`.

use super::source::{is_python_path, SkipCounts, SkipReason};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// A Python file found by the walk; its content is read later (and only if it changed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoundFile {
    /// Repository-relative, `/`-separated.
    pub path: String,
    pub abs: PathBuf,
    pub size: u64,
    /// Modification time in nanoseconds since the epoch; 0 when the platform has none.
    pub mtime_ns: u128,
}

#[derive(Debug, Default)]
pub struct WalkResult {
    pub files: Vec<FoundFile>,
    /// Files skipped during the walk itself (too large, unreadable, symlink loops).
    pub skipped: SkipCounts,
    /// One line per skipped entry, for diagnostics.
    pub notes: Vec<String>,
}

/// Lists the `.py` files under `root`, sorted by path. Hidden directories and files, and
/// whatever `.gitignore`/`.ignore` exclude, are left out (also outside a git repository).
/// Symlinks are followed; loops and unreadable entries are counted, never fatal.
pub fn walk_python(root: &Path, max_file_size: u64) -> WalkResult {
    let mut result = WalkResult::default();
    let walker = ignore::WalkBuilder::new(root)
        .hidden(true)
        .git_ignore(true)
        .git_exclude(true)
        .ignore(true)
        .parents(true)
        .require_git(false)
        .follow_links(true)
        .build();
    for entry in walker {
        let entry = match entry {
            Ok(e) => e,
            Err(err) => {
                result.skipped.add(SkipReason::Unreadable);
                result.notes.push(format!("skipped: {err}"));
                continue;
            }
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Some(rel) = relative_path(root, entry.path()) else {
            // A Python file whose name is not UTF-8 cannot be shown or cited faithfully:
            // counted and named (lossily), never silently dropped.
            if entry.path().extension().is_some_and(|e| e == "py") {
                result.skipped.add(SkipReason::NotUtf8);
                result.notes.push(format!("{}: file name is not UTF-8", entry.path().to_string_lossy()));
            }
            continue;
        };
        if !is_python_path(&rel) {
            continue;
        }
        let meta = match entry.metadata() {
            Ok(m) => m,
            Err(err) => {
                result.skipped.add(SkipReason::Unreadable);
                result.notes.push(format!("{rel}: {err}"));
                continue;
            }
        };
        if meta.len() > max_file_size {
            result.skipped.add(SkipReason::TooLarge);
            result.notes.push(format!("{rel}: {} bytes, over the {max_file_size}-byte limit", meta.len()));
            continue;
        }
        let mtime_ns =
            meta.modified().ok().and_then(|t| t.duration_since(UNIX_EPOCH).ok()).map_or(0, |d| d.as_nanos());
        result.files.push(FoundFile {
            path: rel,
            abs: entry.path().to_path_buf(),
            size: meta.len(),
            mtime_ns,
        });
    }
    result.files.sort_by(|a, b| a.path.cmp(&b.path));
    // With symlinks followed, one file can be reached twice; index it once.
    result.files.dedup_by(|a, b| a.path == b.path);
    result
}

/// `root`-relative path with `/` separators, or None for non-UTF-8 names.
fn relative_path(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
    Some(parts?.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_python_file_with_a_non_utf8_name_is_counted_not_lost() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("ok.py"), "def f():\n    pass\n").unwrap();
        let bad = dir.path().join(std::ffi::OsStr::from_bytes(b"caf\xe9.py"));
        std::fs::write(bad, "def g():\n    pass\n").unwrap();
        let walk = walk_python(dir.path(), 1 << 20);
        assert_eq!(walk.files.len(), 1);
        assert_eq!(walk.skipped.not_utf8, 1);
        assert!(walk.notes.iter().any(|n| n.contains("not UTF-8")), "{:?}", walk.notes);
    }
}
