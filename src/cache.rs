//! On-disk cache: where entries live, and framed files that are written atomically and
//! verified on read, so a half-written, truncated, corrupt or older-format file is detected
//! and rebuilt, never trusted.
//!
//! Frame: magic `CORETC1\0`, format version (u32 LE), payload length (u64 LE), blake3 of the
//! payload (32 bytes), payload (bincode, serde mode).

use crate::error::{Error, Result};
use serde::{de::DeserializeOwned, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"CORETC1\0";
const HEADER_LEN: usize = 8 + 4 + 8 + 32;

/// The cache root: `explicit` (`--cache-dir`), else `$CORET_CACHE_DIR`, else the platform cache
/// directory (e.g. `~/.cache/coret-tui`).
pub fn cache_root(explicit: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = explicit {
        return Ok(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os("CORET_CACHE_DIR").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    directories::ProjectDirs::from("", "", "coret-tui").map(|d| d.cache_dir().to_path_buf()).ok_or_else(
        || {
            Error::invalid(
                "no home directory to put the cache in: pass --cache-dir DIR or set CORET_CACHE_DIR",
            )
        },
    )
}

/// One entry per repository: `<root>/repos/<dir name>-<hash of the absolute path>`.
pub fn repo_entry(root: &Path, repo_abs: &Path) -> PathBuf {
    let name: String = repo_abs
        .file_name()
        .map(|n| n.to_string_lossy().chars().filter(|c| c.is_alphanumeric() || "-_.".contains(*c)).collect())
        .unwrap_or_default();
    let hash = blake3::hash(repo_abs.to_string_lossy().as_bytes()).to_hex();
    root.join("repos").join(format!("{}-{}", if name.is_empty() { "repo" } else { &name }, &hash[..16]))
}

/// Index once, use anywhere: a vector log about to be made for an entry starts as a copy of
/// the same log in another entry of the same directory name under the same root, e.g. a cache
/// built on a GPU machine where the checkout lived at another path, then copied here. Vectors
/// are keyed by the chunk's text and the tower, so a copy can only spare work: what this
/// checkout changed is embedded again, and what it lacks is never read. Of several namesakes,
/// the largest log. Returns the entry it copied from.
pub fn seed_from_namesake(log: &Path) -> Result<Option<PathBuf>> {
    seed_from_kin(log, None)
}

/// The file in an entry that holds its checkout's repository identity
/// ([`crate::repo::git::identity`]).
const IDENTITY: &str = "identity";

/// Records `entry`'s repository identity for the entries after it (unless it holds it).
pub fn record_identity(entry: &Path, identity: &str) -> Result<()> {
    let file = entry.join(IDENTITY);
    if std::fs::read(&file).is_ok_and(|b| b == identity.as_bytes()) {
        return Ok(());
    }
    std::fs::create_dir_all(entry).map_err(|e| Error::io(entry, e))?;
    write_atomic(&file, identity.as_bytes())
}

/// [`seed_from_namesake`], and also from an entry of the same repository under another name
/// (issue 81: `git worktree add`, a second clone, a renamed folder), told by `identity`, which
/// this entry records for the entries after it.
pub fn seed_from_kin(log: &Path, identity: Option<&str>) -> Result<Option<PathBuf>> {
    let (Some(entry), Some(file)) = (log.parent(), log.file_name()) else { return Ok(None) };
    let (Some(repos), Some(this)) = (entry.parent(), entry.file_name().and_then(|n| n.to_str())) else {
        return Ok(None);
    };
    let Some(name) = entry_name(this) else { return Ok(None) };
    // A read-only cache still serves: the identity is a help for later entries, not a need.
    if let Some(id) = identity {
        let _ = record_identity(entry, id);
    }
    let kin = |dir: &Path| {
        identity.is_some_and(|id| std::fs::read(dir.join(IDENTITY)).is_ok_and(|b| b == id.as_bytes()))
    };
    let Ok(dir) = std::fs::read_dir(repos) else { return Ok(None) };
    let source = dir
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n != this && (entry_name(n) == Some(name) || kin(&e.path())))
        })
        .filter_map(|e| {
            let candidate = e.path().join(file);
            Some((std::fs::metadata(&candidate).ok()?.len(), candidate))
        })
        .max();
    let Some((_, source)) = source else { return Ok(None) };
    std::fs::create_dir_all(entry).map_err(|e| Error::io(entry, e))?;
    // Beside the target, then renamed: a reader never meets half a copy.
    let partial = log.with_extension("seeding");
    std::fs::copy(&source, &partial).map_err(|e| Error::io(&source, e))?;
    std::fs::rename(&partial, log).map_err(|e| Error::io(log, e))?;
    Ok(source.parent().map(Path::to_path_buf))
}

/// The directory name an entry (`<name>-<16 hex digits>`, [`repo_entry`]) was made for.
fn entry_name(entry: &str) -> Option<&str> {
    let (name, hash) = entry.rsplit_once('-')?;
    (hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit())).then_some(name)
}

/// Why a cache file was not used.
#[derive(Debug, thiserror::Error)]
pub enum CacheMiss {
    #[error("no cache file")]
    Absent,
    #[error("written by another build or format version")]
    Stale,
    #[error("corrupt or truncated: {0}")]
    Corrupt(String),
}

/// Serialises `value` into `path` atomically: a temporary file beside it, flushed to disk, then
/// renamed over the target.
pub fn write_framed<T: Serialize>(path: &Path, version: u32, value: &T) -> Result<()> {
    let payload = bincode::serde::encode_to_vec(value, bincode::config::standard())
        .map_err(|e| Error::context(path.display().to_string(), e))?;
    write_framed_bytes(path, version, &payload)
}

/// [`write_framed`] of a payload already encoded (e.g. compressed).
pub fn write_framed_bytes(path: &Path, version: u32, payload: &[u8]) -> Result<()> {
    let mut header = Vec::with_capacity(HEADER_LEN);
    header.extend_from_slice(MAGIC);
    header.extend_from_slice(&version.to_le_bytes());
    header.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    header.extend_from_slice(blake3::hash(payload).as_bytes());
    // Header and payload written in turn: a large payload is never copied.
    write_atomic_parts(path, &[&header, payload])
}

/// Writes `bytes` to `path` through a temporary file and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_parts(path, &[bytes])
}

fn write_atomic_parts(path: &Path, parts: &[&[u8]]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let file_name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{file_name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        for part in parts {
            f.write_all(part)?;
        }
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io(path, e)
    })
}

/// Reads a file written by [`write_framed`], checking magic, version, length and checksum.
pub fn read_framed<T: DeserializeOwned>(path: &Path, version: u32) -> Result<T, CacheMiss> {
    let payload = read_framed_bytes(path, version)?;
    bincode::serde::decode_from_slice(&payload, bincode::config::standard())
        .map(|(v, _)| v)
        .map_err(|e| CacheMiss::Corrupt(e.to_string()))
}

/// The checked payload of a file written by [`write_framed_bytes`].
pub fn read_framed_bytes(path: &Path, version: u32) -> Result<Vec<u8>, CacheMiss> {
    let mut bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(CacheMiss::Absent),
        Err(e) => return Err(CacheMiss::Corrupt(e.to_string())),
    };
    if bytes.len() < HEADER_LEN || &bytes[..8] != MAGIC {
        return Err(CacheMiss::Corrupt("bad header".into()));
    }
    let file_version = u32::from_le_bytes(bytes[8..12].try_into().unwrap_or_default());
    if file_version != version {
        return Err(CacheMiss::Stale);
    }
    let len = u64::from_le_bytes(bytes[12..20].try_into().unwrap_or_default()) as usize;
    let payload = &bytes[HEADER_LEN..];
    if payload.len() != len {
        return Err(CacheMiss::Corrupt(format!("expected {len} payload bytes, found {}", payload.len())));
    }
    if blake3::hash(payload).as_bytes() != &bytes[20..52] {
        return Err(CacheMiss::Corrupt("checksum mismatch".into()));
    }
    bytes.drain(..HEADER_LEN);
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_detects_damage() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.bin");
        let value = vec![("a".to_string(), 1u64), ("b".to_string(), 2)];
        write_framed(&path, 3, &value).unwrap();
        let back: Vec<(String, u64)> = read_framed(&path, 3).unwrap();
        assert_eq!(back, value);

        assert!(matches!(read_framed::<Vec<(String, u64)>>(&path, 4), Err(CacheMiss::Stale)));

        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        assert!(matches!(read_framed::<Vec<(String, u64)>>(&path, 3), Err(CacheMiss::Corrupt(_))));

        let mut flipped = bytes.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 0xff;
        std::fs::write(&path, &flipped).unwrap();
        assert!(matches!(read_framed::<Vec<(String, u64)>>(&path, 3), Err(CacheMiss::Corrupt(_))));

        assert!(matches!(read_framed::<u8>(&dir.path().join("none"), 3), Err(CacheMiss::Absent)));
    }

    #[test]
    fn atomic_write_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        write_atomic(&dir.path().join("f"), b"hello").unwrap();
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, [std::ffi::OsString::from("f")]);
    }

    #[test]
    fn a_new_entry_starts_from_a_namesakes_vectors_and_only_from_a_namesake() {
        let root = tempfile::tempdir().unwrap();
        let built = repo_entry(root.path(), Path::new("/gpu/box/proj"));
        std::fs::create_dir_all(&built).unwrap();
        std::fs::write(built.join("vectors-m.log"), b"vectors").unwrap();
        let other = repo_entry(root.path(), Path::new("/gpu/box/other"));
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(other.join("vectors-m.log"), b"other vectors, longer").unwrap();

        let here = repo_entry(root.path(), Path::new("/home/me/proj")).join("vectors-m.log");
        assert_eq!(seed_from_namesake(&here).unwrap(), Some(built.clone()));
        assert_eq!(std::fs::read(&here).unwrap(), b"vectors");
        let unrelated = repo_entry(root.path(), Path::new("/home/me/else")).join("vectors-m.log");
        assert_eq!(seed_from_namesake(&unrelated).unwrap(), None);
        let other_tower = repo_entry(root.path(), Path::new("/srv/proj")).join("vectors-n.log");
        assert_eq!(seed_from_namesake(&other_tower).unwrap(), None, "another tower's log is not a namesake");
    }

    #[test]
    fn a_new_entry_starts_from_the_vectors_of_another_checkout_of_the_same_repository() {
        let root = tempfile::tempdir().unwrap();
        let first = repo_entry(root.path(), Path::new("/home/me/proj")).join("vectors-m.log");
        assert_eq!(seed_from_kin(&first, Some("abc123")).unwrap(), None, "nothing to start from");
        std::fs::write(&first, b"proj's vectors").unwrap();
        // A worktree under another name, same root commit: seeded.
        let worktree = repo_entry(root.path(), Path::new("/home/me/proj-fix")).join("vectors-m.log");
        let from = seed_from_kin(&worktree, Some("abc123")).unwrap();
        assert_eq!(from.as_deref(), first.parent());
        assert_eq!(std::fs::read(&worktree).unwrap(), b"proj's vectors");
        // Another repository under another name: not.
        let stranger = repo_entry(root.path(), Path::new("/home/me/else")).join("vectors-m.log");
        assert_eq!(seed_from_kin(&stranger, Some("fff000")).unwrap(), None);
        assert_eq!(seed_from_kin(&stranger, None).unwrap(), None);
    }

    #[test]
    fn entries_differ_by_absolute_path() {
        let root = Path::new("/c");
        assert_ne!(repo_entry(root, Path::new("/a/proj")), repo_entry(root, Path::new("/b/proj")));
        assert!(repo_entry(root, Path::new("/a/proj")).to_string_lossy().contains("proj-"));
    }
}
