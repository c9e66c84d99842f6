//! Parsed files kept between runs for clients that index many snapshots of one repository
//! (eval): content-addressed, so a file version parsed once is never parsed again, and framed
//! like every cache file, so a damaged or older-format store is ignored and rewritten.

use super::manifest::MANIFEST_VERSION;
use super::SyntaxCache;
use crate::cache::{read_framed_bytes, write_framed_bytes, CacheMiss};
use crate::error::{Error, Result};
use std::path::Path;

/// The store at `path`, or an empty one (with a note saying why, unless there was none yet).
pub fn load_syntax(path: &Path) -> (SyntaxCache, Option<String>) {
    // Same chunking output as the repository manifest: one version says when both are stale.
    let decoded = read_framed_bytes(path, MANIFEST_VERSION).and_then(|packed| {
        let payload =
            lz4_flex::decompress_size_prepended(&packed).map_err(|e| CacheMiss::Corrupt(e.to_string()))?;
        bincode::serde::decode_from_slice(&payload, bincode::config::standard())
            .map(|(cache, _)| cache)
            .map_err(|e| CacheMiss::Corrupt(e.to_string()))
    });
    match decoded {
        Ok(cache) => (cache, None),
        Err(CacheMiss::Absent) => (SyntaxCache::new(), None),
        Err(why) => (SyntaxCache::new(), Some(format!("{}: {why}; parsing again", path.display()))),
    }
}

/// Writes `cache` to `path` atomically.
pub fn save_syntax(path: &Path, cache: &SyntaxCache) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    let payload = bincode::serde::encode_to_vec(cache, bincode::config::standard())
        .map_err(|e| Error::context(path.display().to_string(), e))?;
    // Source text compresses about fivefold (sympy's store: 552 MB raw).
    write_framed_bytes(path, MANIFEST_VERSION, &lz4_flex::compress_prepend_size(&payload))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RepoIndex;

    #[test]
    fn a_saved_store_parses_nothing_again_and_damage_is_reported_not_trusted() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("eval").join("o+r.syntax");
        let texts = vec![("a.py".to_string(), "def f():\n    return 1\n".to_string())];
        let mut cache = SyntaxCache::new();
        let first = RepoIndex::from_texts("r".into(), &texts, &mut cache).unwrap();
        assert_eq!(first.stats.parsed, 1);
        save_syntax(&path, &cache).unwrap();

        let (mut loaded, note) = load_syntax(&path);
        assert!(note.is_none());
        let again = RepoIndex::from_texts("r".into(), &texts, &mut loaded).unwrap();
        assert_eq!(again.stats.parsed, 0, "every file came from the store");
        assert_eq!(again.chunks, first.chunks);

        let mut bytes = std::fs::read(&path).unwrap();
        let mid = bytes.len() / 2;
        bytes[mid] ^= 0xff;
        std::fs::write(&path, bytes).unwrap();
        let (empty, note) = load_syntax(&path);
        assert!(empty.is_empty());
        assert!(note.unwrap().contains("o+r.syntax"));
        let (none, note) = load_syntax(&tmp.path().join("absent.syntax"));
        assert!(none.is_empty() && note.is_none());
    }
}
