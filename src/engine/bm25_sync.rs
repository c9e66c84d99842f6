//! Keeping the on-disk BM25 index in step with the manifest.

use super::manifest::{CachedFile, Manifest, OldManifest};
use super::CacheState;
use crate::error::Result;
use crate::index::bm25::Bm25Index;
use std::collections::HashMap;
use std::path::Path;

const BM25_DIR: &str = "bm25";

pub(super) fn build_bm25_in_memory(files: &[CachedFile]) -> Result<Bm25Index> {
    let mut idx = Bm25Index::in_memory()?;
    idx.update([], files.iter().flat_map(|f| f.syntax.chunks.iter().enumerate()), "memory")?;
    Ok(idx)
}

/// Brings the on-disk BM25 index in line with `new`: incremental when it belongs to `old`,
/// rebuilt otherwise. Falls back to memory if the directory cannot be used (e.g. another
/// process holds the writer lock).
pub(super) fn sync_bm25_on_disk(
    entry: &Path,
    old: Option<&OldManifest>,
    new: &Manifest,
    notes: &mut Vec<String>,
) -> Result<(Bm25Index, CacheState)> {
    let dir = entry.join(BM25_DIR);
    let attempt = || -> Result<(Bm25Index, CacheState)> {
        let mut idx = Bm25Index::open_or_create(&dir)?;
        let tag = idx.commit_tag();
        match old.filter(|o| tag.as_deref() == Some(o.id.as_str())) {
            Some(o) if o.id == new.id => Ok((idx, CacheState::Warm)),
            Some(o) => {
                let old_hash: HashMap<&str, &[u8; 32]> =
                    o.files.iter().map(|f| (f.0.as_str(), &f.1)).collect();
                let new_paths: std::collections::HashSet<&str> =
                    new.files.iter().map(|f| f.path.as_str()).collect();
                let changed: Vec<&CachedFile> =
                    new.files.iter().filter(|f| old_hash.get(f.path.as_str()) != Some(&&f.hash)).collect();
                let removed = o.files.iter().map(|f| f.0.as_str()).filter(|p| !new_paths.contains(p));
                let remove: Vec<&str> = removed.chain(changed.iter().map(|f| f.path.as_str())).collect();
                idx.update(remove, changed.iter().flat_map(|f| f.syntax.chunks.iter().enumerate()), &new.id)?;
                Ok((idx, CacheState::Updated))
            }
            None => {
                drop(idx);
                let _ = std::fs::remove_dir_all(&dir);
                let mut idx = Bm25Index::open_or_create(&dir)?;
                idx.update([], new.files.iter().flat_map(|f| f.syntax.chunks.iter().enumerate()), &new.id)?;
                Ok((idx, CacheState::Cold))
            }
        }
    };
    match attempt() {
        Ok(r) => Ok(r),
        Err(e) => {
            notes.push(format!("bm25 cache {}: {e}; using an in-memory index", dir.display()));
            Ok((build_bm25_in_memory(&new.files)?, CacheState::Cold))
        }
    }
}
