//! What the team's store could not take yet (it was down), kept on disk so that a later
//! process sends it (issue 71, item 4): a write outlives the process that made it. One file per
//! store under the cache root, appended and drained under an exclusive lock, so two processes
//! never send or lose the same rows; a torn tail (a crash mid-append) is dropped on reading.
//! Sending twice is harmless anyway: the store keeps one row per key.

use crate::error::{Error, Result};
use crate::index::dense::VectorKey;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// One spooled vector: its tower, key and vector.
pub type Row = (String, VectorKey, Vec<f32>);

pub struct Spool {
    path: PathBuf,
}

impl Spool {
    /// The spool of the store shown as `store` (its URL without the password) under `root`.
    pub fn at(root: &Path, store: &str) -> Spool {
        let name = &blake3::hash(store.as_bytes()).to_hex()[..16];
        Spool { path: root.join("store-spool").join(format!("{name}.spool")) }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Adds `rows`, synced before the lock is let go.
    pub fn append(&self, rows: &[Row]) -> Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        let io = |e| Error::io(&self.path, e);
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let mut f = std::fs::OpenOptions::new().create(true).append(true).open(&self.path).map_err(io)?;
        f.lock().map_err(io)?;
        let mut bytes = Vec::new();
        for (tower, key, v) in rows {
            bytes.extend_from_slice(&(tower.len() as u32).to_le_bytes());
            bytes.extend_from_slice(tower.as_bytes());
            bytes.extend_from_slice(key);
            bytes.extend_from_slice(&(v.len() as u32).to_le_bytes());
            v.iter().for_each(|x| bytes.extend_from_slice(&x.to_le_bytes()));
        }
        f.write_all(&bytes).and_then(|()| f.sync_data()).map_err(io)
    }

    /// Hands every spooled row to `send`, holding the lock; empties the spool when `send` says
    /// they were taken. Returns how many were sent (0 with nothing spooled or not taken).
    pub fn drain(&self, send: impl FnOnce(&[Row]) -> bool) -> Result<usize> {
        let io = |e| Error::io(&self.path, e);
        let mut f = match std::fs::OpenOptions::new().read(true).write(true).open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(io(e)),
        };
        f.lock().map_err(io)?;
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes).map_err(io)?;
        let rows = parse(&bytes);
        if rows.is_empty() || !send(&rows) {
            return Ok(0);
        }
        f.set_len(0).and_then(|()| f.rewind()).and_then(|()| f.sync_data()).map_err(io)?;
        Ok(rows.len())
    }
}

/// The whole rows of `bytes`; a torn tail is left out.
fn parse(bytes: &[u8]) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut at = 0;
    let u32_at =
        |at: usize| bytes.get(at..at + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize);
    loop {
        let Some(n) = u32_at(at) else { return rows };
        let Some(tower) = bytes.get(at + 4..at + 4 + n).and_then(|b| std::str::from_utf8(b).ok()) else {
            return rows;
        };
        let k = at + 4 + n;
        let Some(key) = bytes.get(k..k + 16).and_then(|b| VectorKey::try_from(b).ok()) else { return rows };
        let Some(dim) = u32_at(k + 16) else { return rows };
        let Some(body) = bytes.get(k + 20..k + 20 + dim * 4) else { return rows };
        let v = body.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        rows.push((tower.to_string(), key, v));
        at = k + 20 + dim * 4;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spooled_rows_are_sent_once_and_a_torn_tail_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::at(dir.path(), "postgres://w:***@h/db");
        spool.append(&[("t".into(), [1; 16], vec![0.5, -1.0])]).unwrap();
        spool.append(&[("tower-b".into(), [2; 16], vec![2.0; 3])]).unwrap();
        // A crash half-way through a third append.
        let mut f = std::fs::OpenOptions::new().append(true).open(spool.path()).unwrap();
        f.write_all(&[9, 0, 0, 0, b't']).unwrap();
        // Not taken (the store went down again): kept.
        assert_eq!(spool.drain(|_| false).unwrap(), 0);
        let mut seen = Vec::new();
        assert_eq!(
            spool
                .drain(|rows| {
                    seen = rows.to_vec();
                    true
                })
                .unwrap(),
            2
        );
        assert_eq!(
            seen,
            vec![("t".to_string(), [1; 16], vec![0.5, -1.0]), ("tower-b".to_string(), [2; 16], vec![2.0; 3])]
        );
        assert_eq!(spool.drain(|_| panic!("nothing is left to send")).unwrap(), 0);
    }
}
