//! The weights' sha256: identifies a model in cache keys and verifies a download.
//!
//! Hashing 90 MB takes a noticeable fraction of a second, so the digest is remembered in a
//! small side file keyed by the weights' size and modification time. A read-only model
//! directory just means hashing every time.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// sha256 of a file, hex; streams the file.
pub fn sha256_file(path: &Path) -> Result<String> {
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf).map_err(|e| Error::io(path, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex(&hasher.finalize()))
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Like [`sha256_file`], remembered in `<file>.sha256` while size and mtime stay the same.
pub fn sha256_cached(path: &Path) -> Result<String> {
    let stamp = stamp(path)?;
    let side = side_file(path);
    if let Ok(text) = std::fs::read_to_string(&side) {
        if let Some(digest) = text.trim().strip_prefix(&format!("{stamp} ")) {
            if digest.len() == 64 && digest.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Ok(digest.to_string());
            }
        }
    }
    let digest = sha256_file(path)?;
    // Best effort: the model directory may be read-only.
    let _ = std::fs::write(&side, format!("{stamp} {digest}\n"));
    Ok(digest)
}

fn side_file(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".sha256");
    path.with_file_name(name)
}

fn stamp(path: &Path) -> Result<String> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    let mtime =
        meta.modified().ok().and_then(|t| t.duration_since(UNIX_EPOCH).ok()).map_or(0, |d| d.as_nanos());
    Ok(format!("v1 {} {}", meta.len(), mtime))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_is_sha256_and_cache_follows_content() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.bin");
        std::fs::write(&path, b"abc").unwrap();
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(sha256_cached(&path).unwrap(), abc);
        assert!(side_file(&path).exists());
        assert_eq!(sha256_cached(&path).unwrap(), abc);
        // A different size invalidates the remembered digest.
        std::fs::write(&path, b"abcd").unwrap();
        assert_eq!(sha256_cached(&path).unwrap(), sha256_file(&path).unwrap());
        assert_ne!(sha256_cached(&path).unwrap(), abc);
    }
}
