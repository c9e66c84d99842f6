//! Hashes: the weights' sha256 identifies a model in cache keys and verifies a download; a
//! name's 64-bit blake3 seeds what must draw alike in every run (LoRA factors, negatives).
//!
//! The encoder hashes the very bytes it loads (51 ms for all-MiniLM's 90 MB with the CPU's SHA
//! instructions), so weights edited in place, even with size and mtime kept, get a new
//! fingerprint and never meet the old weights' vectors.

use std::io::Read;
use std::path::Path;

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

/// sha256 of bytes in memory, hex.
pub fn sha256_bytes(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// A stable 64-bit hash of a string (for per-instance seeds).
pub fn blake3_u64(s: &str) -> u64 {
    let h = blake3::hash(s.as_bytes());
    u64::from_le_bytes(h.as_bytes()[..8].try_into().unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_and_bytes_digests_are_sha256() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.bin");
        std::fs::write(&path, b"abc").unwrap();
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(sha256_file(&path).unwrap(), abc);
        assert_eq!(sha256_bytes(b"abc"), abc);
    }
}
