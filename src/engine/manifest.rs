//! The cache manifest: every file's size, mtime, content hash and parsed syntax, so that an
//! unchanged file is never read again.

use super::check_cancel;
use crate::cache::{self, CacheMiss};
use crate::chunk::{chunk_file, FileSyntax};
use crate::error::Result;
use crate::index::bm25::token_counts;
use crate::progress::{Phase, Progress};
use crate::repo::source::{decode_source, SkipCounts, SkipReason};
use crate::repo::walk::FoundFile;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

include!(concat!(env!("OUT_DIR"), "/parse_code.rs"));

/// The parse cache's framing version: build.rs's hash of the code that decides a file's chunks
/// (`PARSE_CODE_PATHS`, from the same file: everything `chunk_file` and the manifest's token
/// counts depend on, and Cargo.lock's grammar crates), so that a binary with another chunker,
/// row or grammar rebuilds every cached parse instead of serving yesterday's chunks (issue 73);
/// no number to remember to bump.
pub(super) const MANIFEST_VERSION: u32 = PARSE_CODE;

pub(super) const MANIFEST_FILE: &str = "manifest.bin";

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct CachedFile {
    pub(super) path: String,
    pub(super) stamp: Stamp,
    pub(super) hash: [u8; 32],
    pub(super) syntax: FileSyntax,
    /// The BM25 fields' token counts of the file's chunks (`bm25::token_counts`): summed, they
    /// are the exact statistics an incrementally updated index scores with.
    pub(super) tokens: [u64; 3],
}

/// What tells an unchanged file without reading it: size, mtime, ctime and inode (as git's index
/// does). A zero mtime (no clock) never counts as unchanged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Stamp {
    pub(super) size: u64,
    pub(super) mtime_ns: u64,
    pub(super) ctime_ns: u64,
    pub(super) ino: u64,
}

impl Stamp {
    pub(super) fn of(f: &FoundFile) -> Stamp {
        Stamp { size: f.size, mtime_ns: f.mtime_ns as u64, ctime_ns: f.ctime_ns, ino: f.ino }
    }

    fn trusted_equal(&self, other: &Stamp) -> bool {
        self == other && self.mtime_ns != 0
    }
}

#[derive(Debug, Serialize, Deserialize)]
pub(super) struct Manifest {
    pub(super) id: String,
    pub(super) files: Vec<CachedFile>,
}

/// What is kept of the previous manifest once its files are handed over for reuse.
pub(super) struct OldManifest {
    pub(super) id: String,
    /// (path, content hash, stamp) in path order.
    pub(super) files: Vec<(String, [u8; 32], Stamp)>,
}

impl OldManifest {
    pub(super) fn of(m: &Manifest) -> Self {
        OldManifest {
            id: m.id.clone(),
            files: m.files.iter().map(|f| (f.path.clone(), f.hash, f.stamp)).collect(),
        }
    }
}

pub(super) fn load_manifest(dir: &Path, notes: &mut Vec<String>) -> Option<Manifest> {
    match cache::read_framed::<Manifest>(&dir.join(MANIFEST_FILE), MANIFEST_VERSION) {
        Ok(m) => Some(m),
        Err(CacheMiss::Absent) => None,
        Err(miss) => {
            notes.push(format!("cache {}: {miss}; rebuilding", dir.display()));
            // Nothing in a directory whose manifest we cannot trust is trusted either.
            let _ = std::fs::remove_dir_all(dir);
            None
        }
    }
}

/// A file read and chunked, or why not (the reason and a line naming the file).
type ReadResult = Result<CachedFile, (SkipReason, String)>;

/// Reuses cached syntax for files whose [`Stamp`] (or, failing that, content hash) is
/// unchanged; reads and chunks the rest in parallel. Returns the files, sorted by path, and how
/// many were parsed.
pub(super) fn read_and_parse(
    found: &[FoundFile],
    old_files: Vec<CachedFile>,
    max_file_size: u64,
    skipped: &mut SkipCounts,
    notes: &mut Vec<String>,
    progress: &dyn Progress,
) -> Result<(Vec<CachedFile>, usize)> {
    let mut old_by_path: HashMap<String, CachedFile> =
        old_files.into_iter().map(|f| (f.path.clone(), f)).collect();
    let mut files = Vec::with_capacity(found.len());
    let mut pending = Vec::new();
    for f in found {
        let unchanged = old_by_path.get(&f.path).is_some_and(|c| c.stamp.trusted_equal(&Stamp::of(f)));
        match old_by_path.remove(&f.path) {
            Some(c) if unchanged => files.push(c),
            Some(c) => pending.push((f, Some(c))),
            None => pending.push((f, None)),
        }
    }
    let total = pending.len();
    let done = AtomicUsize::new(0);
    progress.report(Phase::Parse, 0, total);
    let results: Vec<(ReadResult, bool)> = pending
        .into_par_iter()
        .map(|(f, cached)| {
            let n = done.fetch_add(1, Ordering::Relaxed) + 1;
            if n.is_multiple_of(64) || n == total {
                progress.report(Phase::Parse, n, total);
            }
            if progress.cancelled() {
                return (Err((SkipReason::Unreadable, String::new())), false);
            }
            let bytes = match std::fs::read(&f.abs) {
                Ok(b) => b,
                Err(e) => {
                    return (Err((SkipReason::Unreadable, format!("{}: unreadable: {e}", f.path))), false)
                }
            };
            let stamp = Stamp::of(f);
            let hash = *blake3::hash(&bytes).as_bytes();
            if let Some(c) = cached.filter(|c| c.hash == hash) {
                return (Ok(CachedFile { stamp, ..c }), false);
            }
            match decode_source(bytes, max_file_size) {
                Ok(text) => {
                    let syntax = chunk_file(&f.path, &text);
                    let tokens = token_counts(&syntax.chunks);
                    (Ok(CachedFile { path: f.path.clone(), stamp, hash, syntax, tokens }), true)
                }
                Err(r) => (Err((r, format!("{}: skipped, {r}", f.path))), false),
            }
        })
        .collect();
    check_cancel(progress)?;
    let mut parsed = 0;
    for (r, was_parsed) in results {
        parsed += usize::from(was_parsed);
        match r {
            Ok(f) => files.push(f),
            Err((reason, note)) => {
                skipped.add(reason);
                notes.push(note);
            }
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok((files, parsed))
}

/// A manifest's id names its content: the same files with the same bytes give the same id.
pub(super) fn manifest_id(files: &[CachedFile]) -> String {
    let mut h = blake3::Hasher::new();
    h.update(&MANIFEST_VERSION.to_le_bytes());
    for f in files {
        h.update(f.path.as_bytes());
        h.update(&[0]);
        h.update(&f.hash);
    }
    h.finalize().to_hex()[..32].to_string()
}

/// The BM25 fields' token totals over `files`.
pub(super) fn token_totals(files: &[CachedFile]) -> [u64; 3] {
    files.iter().fold([0; 3], |t, f| [t[0] + f.tokens[0], t[1] + f.tokens[1], t[2] + f.tokens[2]])
}

pub(super) fn same_files(a: &OldManifest, b: &Manifest) -> bool {
    a.id == b.id
        && a.files.len() == b.files.len()
        && a.files.iter().zip(&b.files).all(|(x, y)| x.2 == y.stamp)
}
