//! Indexing many snapshots of one repository (eval's and training's base commits), each from
//! what the last one left: parsed files by content, and one BM25 index in which a snapshot
//! replaces only the files that changed. A training shard indexes hundreds of commits of a
//! repository, most of which change a few files; rebuilding BM25 for each was most of the
//! cost (0.7 s of 1.2 s per sqlalchemy commit).

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

use super::{assemble_snapshot, parse_texts, RepoIndex, SyntaxCache};
use crate::error::Result;
use crate::index::bm25::Bm25Snapshots;

#[derive(Default)]
pub struct SnapshotIndexer {
    syntax: SyntaxCache,
    bm25: Option<Bm25Snapshots>,
    /// Path → cache key (path and content) of each file the BM25 index holds.
    held: HashMap<String, [u8; 32]>,
}

impl SnapshotIndexer {
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts from parsed files kept from an earlier run.
    pub fn with_syntax(syntax: SyntaxCache) -> Self {
        SnapshotIndexer { syntax, ..Self::default() }
    }

    /// The parsed files, to keep for a later run.
    pub fn syntax(&self) -> &SyntaxCache {
        &self.syntax
    }

    /// [`RepoIndex::from_texts_with`] for the next snapshot: the same index, built from the
    /// files that differ from the last snapshot's.
    pub fn index(
        &mut self,
        root: PathBuf,
        texts: &[(String, String)],
        link_calls: bool,
    ) -> Result<RepoIndex> {
        let started = Instant::now();
        let (files, parsed) = parse_texts(texts, &mut self.syntax);
        let now: HashMap<&str, [u8; 32]> = files.iter().map(|f| (f.path.as_str(), f.hash)).collect();
        let gone: Vec<[u8; 32]> =
            self.held.iter().filter(|(p, k)| now.get(p.as_str()) != Some(k)).map(|(_, k)| *k).collect();
        let removed = gone.iter().filter_map(|k| self.syntax.get(k)).map(|s| s.chunks.as_slice());
        let added = files
            .iter()
            .filter(|f| self.held.get(&f.path) != Some(&f.hash))
            .map(|f| f.syntax.chunks.as_slice());
        let bm25 = match &mut self.bm25 {
            Some(b) => b,
            None => self.bm25.insert(Bm25Snapshots::new()?),
        };
        if let Err(e) = bm25.replace(removed, added) {
            // Half-applied: the next snapshot starts over.
            self.bm25 = None;
            self.held.clear();
            return Err(e);
        }
        self.held = files.iter().map(|f| (f.path.clone(), f.hash)).collect();
        let view = bm25.view()?;
        Ok(assemble_snapshot(root, files, view, parsed, started, link_calls))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(files: &[(&str, &str)]) -> Vec<(String, String)> {
        files.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect()
    }

    fn ranking(index: &RepoIndex, query: &str) -> Vec<(String, String)> {
        let hits = index.search_bm25(query, 50).unwrap();
        hits.iter()
            .map(|h| &index.chunks[h.chunk as usize])
            .map(|c| (c.path.clone(), c.name.clone()))
            .collect()
    }

    /// Commits that edit, add, delete and rename files: each snapshot's index holds the
    /// snapshot's chunks, and BM25 ranks them as a fresh build does.
    #[test]
    fn each_snapshot_indexes_as_a_fresh_build() {
        let commits = [
            texts(&[
                ("a.py", "def save_file(path):\n    write(path)\n"),
                ("b.py", "def load_file(path):\n    return read(path)\n\ndef cache_path(p):\n    return p\n"),
            ]),
            texts(&[
                ("a.py", "def save_file(path, data):\n    write(path, data)\n"),
                ("b.py", "def load_file(path):\n    return read(path)\n\ndef cache_path(p):\n    return p\n"),
                ("c.py", "def parse_header(raw):\n    return raw.split(':')\n"),
            ]),
            texts(&[
                ("b.py", "def load_file(path):\n    return read(path)\n\ndef cache_path(p):\n    return p\n"),
                ("d.py", "def parse_header(raw):\n    return raw.split(':')\n"),
            ]),
        ];
        let mut kept = SnapshotIndexer::new();
        for (i, files) in commits.iter().enumerate() {
            let got = kept.index(format!("r@{i}").into(), files, true).unwrap();
            let fresh =
                RepoIndex::from_texts(format!("r@{i}").into(), files, &mut SyntaxCache::new()).unwrap();
            let names =
                |x: &RepoIndex| x.chunks.iter().map(|c| (c.path.clone(), c.name.clone())).collect::<Vec<_>>();
            assert_eq!(names(&got), names(&fresh), "commit {i}");
            assert_eq!(got.graph.edge_count(), fresh.graph.edge_count(), "commit {i}");
            for q in ["save the file path", "parse header", "load cache path"] {
                assert_eq!(ranking(&got, q), ranking(&fresh, q), "commit {i}: {q}");
            }
        }
        let last = kept.index("r@2".into(), &commits[2], true).unwrap();
        assert!(
            ranking(&last, "save_file write data").iter().all(|(p, _)| p != "a.py"),
            "a deleted file is gone"
        );
        assert_eq!(last.stats.parsed, 0, "an unchanged snapshot parses nothing");
    }
}
