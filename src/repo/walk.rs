//! Walking a working tree for source files of the languages asked for, honouring
//! `.gitignore` and `.ignore`.

use super::generated;
use super::source::{is_other_code_path, SkipCounts, SkipReason};
use crate::lang::{is_source_path, LangSet};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// A source file found by the walk; its content is read later (and only if it changed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoundFile {
    /// Repository-relative, `/`-separated.
    pub path: String,
    pub abs: PathBuf,
    pub size: u64,
    /// Modification time in nanoseconds since the epoch; 0 when the platform has none.
    pub mtime_ns: u128,
    /// Inode-change time (ns) and inode number, 0 where the platform has none. With size and
    /// mtime they tell an unchanged file as git does: `touch -r`, `cp -p`, `rsync -t` and
    /// `tar x` restore the mtime, but not the ctime or the inode.
    pub ctime_ns: u64,
    pub ino: u64,
}

#[derive(Debug, Default)]
pub struct WalkResult {
    pub files: Vec<FoundFile>,
    /// Files skipped during the walk itself (too large, unreadable, symlink loops).
    pub skipped: SkipCounts,
    /// One line per skipped entry, for diagnostics.
    pub notes: Vec<String>,
}

/// Lists the source files of `langs` under `root`, sorted by path. Hidden directories and
/// files, and whatever `.gitignore`/`.ignore` exclude, are left out (also outside a git
/// repository). Symlinks are followed; loops and unreadable entries are counted, never fatal;
/// code in other languages (or left out by `langs`) is counted as such; vendored, minified,
/// built and generated files ([`super::generated`]) too, unless `keep_generated`.
pub fn walk_sources(root: &Path, max_file_size: u64, langs: LangSet, keep_generated: bool) -> WalkResult {
    let mut result = WalkResult::default();
    let root_real = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    // (path relative to the real root, the file as the walk found it)
    let mut found: Vec<(String, FoundFile)> = Vec::new();
    // What the generated-file rule left out, for their siblings (`generated::built_siblings`).
    let mut left_out: Vec<(String, SkipReason)> = Vec::new();
    for entry in walker(root) {
        let entry = match entry {
            Ok(e) => e,
            Err(err) => {
                result.skipped.add(SkipReason::Unreadable);
                result.notes.push(format!("skipped: {err}"));
                continue;
            }
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            // A FIFO, socket or device named like a source: counted, never opened (a FIFO blocks).
            let special = entry.file_type().is_some_and(|t| !t.is_dir() && !t.is_symlink());
            if special && entry.path().to_str().is_some_and(|p| langs.takes(p)) {
                result.skipped.add(SkipReason::NotRegular);
                result.notes.push(format!("{}: not a regular file", entry.path().display()));
            }
            continue;
        }
        let Some(rel) = relative_path(root, entry.path()) else {
            // A source file whose name is not UTF-8 cannot be shown or cited faithfully:
            // counted and named (lossily), never silently dropped.
            if langs.takes(&entry.path().to_string_lossy()) {
                result.skipped.add(SkipReason::NotUtf8);
                result.notes.push(format!("{}: file name is not UTF-8", entry.path().to_string_lossy()));
            }
            continue;
        };
        if !langs.takes(&rel) {
            if is_source_path(&rel) || is_other_code_path(&rel) {
                result.skipped.add(SkipReason::OtherLanguage);
            }
            continue;
        }
        if let Some(lang) = crate::lang::lang_of_path(&rel).filter(|l| !l.grammar_loads()) {
            result.skipped.add(SkipReason::NoGrammar);
            result
                .notes
                .push(format!("{rel}: the {} grammar does not load with this tree-sitter", lang.name()));
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
        if let Some(why) =
            (!keep_generated).then(|| generated::of_file(&rel, entry.path(), meta.len())).flatten()
        {
            result.skipped.add(why);
            result.notes.push(format!("{rel}: skipped, {why} (--include-generated takes it in)"));
            left_out.push((rel, why));
            continue;
        }
        let real = match std::fs::canonicalize(entry.path()) {
            Ok(r) => r,
            Err(err) => {
                result.skipped.add(SkipReason::Unreadable);
                result.notes.push(format!("{rel}: {err}"));
                continue;
            }
        };
        // A symlink may lead out of the repository (`up -> ..`): never index what is not in it.
        let Some(real_rel) = relative_path(&root_real, &real) else {
            result.skipped.add(SkipReason::OutsideRoot);
            result.notes.push(format!("{rel}: resolves to {}, outside the repository", real.display()));
            continue;
        };
        let mtime_ns =
            meta.modified().ok().and_then(|t| t.duration_since(UNIX_EPOCH).ok()).map_or(0, |d| d.as_nanos());
        let (ctime_ns, ino) = change_stamp(&meta);
        found.push((
            real_rel.clone(),
            FoundFile {
                path: rel,
                abs: entry.path().to_path_buf(),
                size: meta.len(),
                mtime_ns,
                ctime_ns,
                ino,
            },
        ));
    }
    let left: Vec<(&str, SkipReason)> = left_out.iter().map(|(p, r)| (p.as_str(), *r)).collect();
    let siblings: std::collections::HashSet<String> =
        generated::built_siblings(found.iter().map(|(_, f)| f.path.as_str()), &left)
            .into_iter()
            .map(String::from)
            .collect();
    found.retain(|(_, f)| {
        let built = siblings.contains(&f.path);
        if built {
            result.skipped.add(SkipReason::BuildOutput);
            result.notes.push(format!(
                "{}: skipped, build output beside its other builds (--include-generated takes it in)",
                f.path
            ));
        }
        !built
    });
    // With symlinks followed, one file can be reached by several paths (`up -> ..` reaches the
    // whole repository again): index it once, under its own path where the walk reached it so.
    found.sort_by(|(ra, a), (rb, b)| {
        ra.cmp(rb).then((a.path != *ra).cmp(&(b.path != *rb))).then(a.path.cmp(&b.path))
    });
    found.dedup_by(|(ra, _), (rb, _)| ra == rb);
    result.files = found.into_iter().map(|(_, f)| f).collect();
    result.files.sort_by(|a, b| a.path.cmp(&b.path));
    result.files.dedup_by(|a, b| a.path == b.path);
    result
}

/// The walk both [`walk_sources`] and [`has_source_file`] take.
fn walker(root: &Path) -> ignore::Walk {
    ignore::WalkBuilder::new(root)
        .hidden(true)
        .git_ignore(true)
        .git_exclude(true)
        .ignore(true)
        .parents(true)
        .require_git(false)
        .follow_links(true)
        .build()
}

/// Whether the walk would find at least one source file of `langs` under `root`: stops at the
/// first, so a client can refuse a directory without one before loading anything.
pub fn has_source_file(root: &Path, langs: LangSet) -> bool {
    walker(root).flatten().any(|e| {
        e.file_type().is_some_and(|t| t.is_file())
            && relative_path(root, e.path()).is_some_and(|rel| langs.takes(&rel))
    })
}

#[cfg(unix)]
fn change_stamp(meta: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    let ctime = (meta.ctime().max(0) as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(meta.ctime_nsec().max(0) as u64);
    (ctime, meta.ino())
}

#[cfg(not(unix))]
fn change_stamp(_: &std::fs::Metadata) -> (u64, u64) {
    (0, 0)
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
        let walk = walk_sources(dir.path(), 1 << 20, LangSet::all(), false);
        assert_eq!(walk.files.len(), 1);
        assert_eq!(walk.skipped.not_utf8, 1);
        assert!(walk.notes.iter().any(|n| n.contains("not UTF-8")), "{:?}", walk.notes);
    }

    #[test]
    fn a_directory_without_source_has_no_source_file() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!has_source_file(dir.path(), LangSet::all()), "empty");
        std::fs::write(dir.path().join("README.md"), "# not python\n").unwrap();
        std::fs::create_dir_all(dir.path().join(".hidden")).unwrap();
        std::fs::write(dir.path().join(".hidden/x.py"), "x = 1\n").unwrap();
        assert!(!has_source_file(dir.path(), LangSet::all()), "hidden files are not walked");
        std::fs::create_dir_all(dir.path().join("pkg")).unwrap();
        std::fs::write(dir.path().join("pkg/m.py"), "x = 1\n").unwrap();
        assert!(has_source_file(dir.path(), LangSet::all()));
    }
}

#[cfg(all(test, unix))]
mod symlink_tests {
    use super::*;

    #[test]
    fn a_symlink_out_of_the_repository_is_not_followed_out_and_each_file_is_indexed_once() {
        let outer = tempfile::tempdir().unwrap();
        std::fs::write(outer.path().join("outside.py"), "def secret():\n    pass\n").unwrap();
        let root = outer.path().join("repo");
        std::fs::create_dir_all(root.join("pkg")).unwrap();
        std::fs::write(root.join("pkg/a.py"), "def a():\n    pass\n").unwrap();
        std::os::unix::fs::symlink("..", root.join("up")).unwrap();
        std::os::unix::fs::symlink(outer.path().join("outside.py"), root.join("linked.py")).unwrap();
        std::os::unix::fs::symlink("pkg/a.py", root.join("alias.py")).unwrap();
        let walk = walk_sources(&root, 1 << 20, LangSet::all(), false);
        let paths: Vec<&str> = walk.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["pkg/a.py"], "{:?}", walk.notes);
        assert!(walk.skipped.outside_root >= 2, "{:?} {:?}", walk.skipped, walk.notes);
        assert!(walk.notes.iter().any(|n| n.contains("outside the repository")), "{:?}", walk.notes);
    }
}
