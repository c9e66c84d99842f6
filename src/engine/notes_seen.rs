//! Which of an index's notes are new since the last run over its cache. A warm run repeats the
//! walk's and the parser's notes word for word (a file too large, a binary, a syntax error):
//! stderr says each once, until it changes (issue 70); `stats.notes` in `--json` keeps them all.

use super::RepoIndex;
use crate::cache;
use std::collections::HashSet;

/// The notes the last run printed, in the repository's cache entry.
const SEEN_FILE: &str = "notes.seen";
/// Bumped when the file's layout changes.
const SEEN_VERSION: u32 = 1;

impl RepoIndex {
    /// The notes of this index that the last run over the same cache did not have, in order;
    /// records this run's for the next. Without a cache, every note is new. A cache that
    /// cannot be read or written costs only a repeated note.
    pub fn notes_new_since_last_run(&self) -> Vec<&str> {
        let Some(entry) = self.cache_entry.as_deref() else {
            return self.notes.iter().map(String::as_str).collect();
        };
        let path = entry.join(SEEN_FILE);
        let seen: Vec<String> = cache::read_framed(&path, SEEN_VERSION).unwrap_or_default();
        if seen != self.notes {
            let _ = cache::write_framed(&path, SEEN_VERSION, &self.notes);
        }
        let seen: HashSet<&str> = seen.iter().map(String::as_str).collect();
        self.notes.iter().map(String::as_str).filter(|n| !seen.contains(n)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::IndexOptions;
    use super::*;
    use crate::progress::NoProgress;

    /// A binary and an over-long file beside the code: their notes come once, on the cold run;
    /// a warm run over the same tree says nothing new, a new skip is said again.
    #[test]
    fn a_warm_run_repeats_no_note() {
        let repo = tempfile::tempdir().unwrap();
        std::fs::write(repo.path().join("app.py"), "def run():\n    return 1\n").unwrap();
        std::fs::write(repo.path().join("blob.py"), b"x = 1\0\0").unwrap();
        let cache = tempfile::tempdir().unwrap();
        let opts = IndexOptions { cache_dir: Some(cache.path().to_path_buf()), ..IndexOptions::default() };
        let open = || RepoIndex::open(repo.path(), &opts, &NoProgress).unwrap();
        let cold = open();
        assert!(cold.notes.iter().any(|n| n.contains("blob.py")), "{:?}", cold.notes);
        assert_eq!(cold.notes_new_since_last_run(), cold.notes, "the cold run says every note");
        let warm = open();
        assert_eq!(warm.notes, cold.notes, "the index still has them (stats.notes)");
        assert!(warm.notes_new_since_last_run().is_empty(), "{:?}", warm.notes);
        std::fs::write(repo.path().join("more.py"), b"y = 2\0").unwrap();
        let changed = open();
        assert_eq!(changed.notes_new_since_last_run(), ["more.py: skipped, binary"]);
        let off = IndexOptions { no_cache: true, ..opts.clone() };
        let uncached = RepoIndex::open(repo.path(), &off, &NoProgress).unwrap();
        assert_eq!(uncached.notes_new_since_last_run().len(), 2, "without a cache, every note");
    }
}
