//! Keeping the on-disk BM25 index in step with the manifest, and never trusting a damaged one.
//!
//! tantivy checks little when it opens an index: flipped bytes in a segment give wrong scores
//! or a panic at search time. So after every change the index's files are fingerprinted into
//! `bm25.sums` (a framed cache file), and an index whose files no longer match, or that does
//! not open, is deleted and rebuilt with a note. One process at a time syncs an entry (an
//! exclusive lock on `bm25.lock`), so a concurrent update is never mistaken for damage.

use super::manifest::{CachedFile, Manifest, OldManifest};
use super::CacheState;
use crate::cache::{read_framed, write_framed, CacheMiss};
use crate::error::{Error, Result};
use crate::index::bm25::Bm25Index;
use std::collections::{HashMap, HashSet};
use std::path::Path;

const BM25_DIR: &str = "bm25";
const SUMS_FILE: &str = "bm25.sums";
const LOCK_FILE: &str = "bm25.lock";
const SUMS_VERSION: u32 = 1;

/// `(file name, length, blake3)` of every file of the index directory but tantivy's locks.
type Sums = Vec<(String, u64, [u8; 32])>;

pub(super) fn build_bm25_in_memory(files: &[CachedFile]) -> Result<Bm25Index> {
    let mut idx = Bm25Index::in_memory()?;
    idx.update([], files.iter().flat_map(|f| f.syntax.chunks.iter().enumerate()), "memory")?;
    Ok(idx)
}

/// Brings the on-disk BM25 index in line with `new`: incremental when it belongs to `old` and
/// its files are intact, rebuilt otherwise. Falls back to memory if the directory cannot be
/// used (read-only, or another writer that does not take our lock).
pub(super) fn sync_bm25_on_disk(
    entry: &Path,
    old: Option<&OldManifest>,
    new: &Manifest,
    notes: &mut Vec<String>,
) -> Result<(Bm25Index, CacheState)> {
    let dir = entry.join(BM25_DIR);
    let attempt = |notes: &mut Vec<String>| -> Result<(Bm25Index, CacheState)> {
        let _lock = lock_entry(entry)?;
        let reusable = old.and_then(|o| match check_sums(entry, &dir) {
            Ok(()) => Some(o),
            Err(why) => {
                if dir.exists() {
                    notes.push(format!("bm25 cache {} {why}; rebuilding it", dir.display()));
                }
                None
            }
        });
        let opened = reusable.map(|o| (o, Bm25Index::open_or_create(&dir)));
        let (state, idx) = match opened {
            Some((o, Ok(mut idx))) if idx.commit_tag().as_deref() == Some(o.id.as_str()) => {
                if o.id == new.id {
                    return Ok((idx, CacheState::Warm));
                }
                update_incrementally(&mut idx, o, new)?;
                (CacheState::Updated, idx)
            }
            other => {
                if let Some((_, Err(e))) = other {
                    notes.push(format!("bm25 cache {} does not open ({e}); rebuilding it", dir.display()));
                }
                (CacheState::Cold, rebuild(&dir, new)?)
            }
        };
        write_sums(entry, &dir)?;
        Ok((idx, state))
    };
    match attempt(notes) {
        Ok(r) => Ok(r),
        Err(e) => {
            notes.push(format!("bm25 cache {}: {e}; using an in-memory index", dir.display()));
            Ok((build_bm25_in_memory(&new.files)?, CacheState::Cold))
        }
    }
}

fn update_incrementally(idx: &mut Bm25Index, old: &OldManifest, new: &Manifest) -> Result<()> {
    let old_hash: HashMap<&str, &[u8; 32]> = old.files.iter().map(|f| (f.0.as_str(), &f.1)).collect();
    let new_paths: HashSet<&str> = new.files.iter().map(|f| f.path.as_str()).collect();
    let changed: Vec<&CachedFile> =
        new.files.iter().filter(|f| old_hash.get(f.path.as_str()) != Some(&&f.hash)).collect();
    let removed = old.files.iter().map(|f| f.0.as_str()).filter(|p| !new_paths.contains(p));
    let remove: Vec<&str> = removed.chain(changed.iter().map(|f| f.path.as_str())).collect();
    idx.update(remove, changed.iter().flat_map(|f| f.syntax.chunks.iter().enumerate()), &new.id)
}

fn rebuild(dir: &Path, new: &Manifest) -> Result<Bm25Index> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    let mut idx = Bm25Index::open_or_create(dir)?;
    idx.update([], new.files.iter().flat_map(|f| f.syntax.chunks.iter().enumerate()), &new.id)?;
    Ok(idx)
}

/// Blocks until this process is the only one syncing `entry`; released when dropped.
fn lock_entry(entry: &Path) -> Result<std::fs::File> {
    std::fs::create_dir_all(entry).map_err(|e| Error::io(entry, e))?;
    let path = entry.join(LOCK_FILE);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| Error::io(&path, e))?;
    file.lock().map_err(|e| Error::io(&path, e))?;
    Ok(file)
}

fn fingerprint(dir: &Path) -> Result<Sums> {
    let mut sums = Sums::new();
    for item in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let item = item.map_err(|e| Error::io(dir, e))?;
        let name = item.file_name().to_string_lossy().into_owned();
        if name.ends_with(".lock") || !item.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let bytes = std::fs::read(item.path()).map_err(|e| Error::io(item.path(), e))?;
        sums.push((name, bytes.len() as u64, *blake3::hash(&bytes).as_bytes()));
    }
    sums.sort();
    Ok(sums)
}

fn write_sums(entry: &Path, dir: &Path) -> Result<()> {
    write_framed(&entry.join(SUMS_FILE), SUMS_VERSION, &fingerprint(dir)?)
}

/// Why the index in `dir` cannot be trusted, if it cannot (a phrase: "is damaged (…)").
fn check_sums(entry: &Path, dir: &Path) -> std::result::Result<(), String> {
    let want: Sums = match read_framed(&entry.join(SUMS_FILE), SUMS_VERSION) {
        Ok(sums) => sums,
        // A cache written before fingerprints existed: not damaged, just unverifiable.
        Err(CacheMiss::Absent) => return Err("has no fingerprints yet (an older version wrote it)".into()),
        Err(e) => return Err(format!("is damaged ({SUMS_FILE}: {e})")),
    };
    let have = fingerprint(dir).map_err(|e| e.to_string())?;
    if have == want {
        return Ok(());
    }
    let want_names: HashMap<&str, _> = want.iter().map(|(n, l, h)| (n.as_str(), (l, h))).collect();
    let have_names: HashMap<&str, _> = have.iter().map(|(n, l, h)| (n.as_str(), (l, h))).collect();
    let differs = want_names.iter().find(|(n, v)| have_names.get(*n) != Some(v)).map(|(n, _)| *n);
    let extra = have_names.keys().find(|n| !want_names.contains_key(*n)).copied();
    let what = match (differs, extra) {
        (Some(n), _) if have_names.contains_key(n) => format!("{n} changed"),
        (Some(n), _) => format!("{n} is missing"),
        (None, Some(n)) => format!("unexpected file {n}"),
        (None, None) => "files changed".to_string(),
    };
    Err(format!("is damaged ({what})"))
}
