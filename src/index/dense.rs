//! Dense vectors: a persistent store of unit vectors keyed by the hash of the encoder input
//! (and the model), and exact top-k search by cosine similarity.
//!
//! The store is an append-only log of checksummed records, so an embedding run that is
//! interrupted keeps every finished batch: the next run resumes with what is missing. A torn
//! last record fails its checksum and is cut off, never read; a damaged record elsewhere is
//! skipped without losing the records after it. Keys hash the exact encoder
//! input, so an unchanged chunk is embedded once, across edits and across commits.
//!
//! Alias records name a second key for a stored vector: vectors are stored under the hash of
//! their token ids, and the hash of the raw input (cheap to compute, no tokenising) points to
//! it. Inputs that differ only past the token budget (a callee edited beyond what fits) then
//! share one vector.

use crate::error::{Error, Result};
use crate::index::Hit;
use crate::simd::dot;
use rayon::prelude::*;
use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

const RECORD_MAGIC: &[u8; 4] = b"CDV1";
const ALIAS_MAGIC: &[u8; 4] = b"CDA1";

/// Identifies one encoder input under one model configuration.
pub type VectorKey = [u8; 16];

/// Hashes an encoder input (chunk text, neighbour texts) under a model tag.
pub fn vector_key(model_tag: &str, chunk: &str, neighbours: &[String]) -> VectorKey {
    let mut h = blake3::Hasher::new();
    h.update(model_tag.as_bytes());
    h.update(&[0xff]);
    h.update(chunk.as_bytes());
    for n in neighbours {
        h.update(&[0x1f]);
        h.update(n.as_bytes());
    }
    finish_key(h)
}

/// The first 16 bytes of the hash: a key.
fn finish_key(h: blake3::Hasher) -> VectorKey {
    let mut key = [0u8; 16];
    key.copy_from_slice(&h.finalize().as_bytes()[..16]);
    key
}

/// Hashes tokenised encoder input (ids and segment ids) under a model tag.
pub fn token_key(model_tag: &str, ids: &[u32], type_ids: &[u32]) -> VectorKey {
    let mut h = blake3::Hasher::new();
    h.update(model_tag.as_bytes());
    h.update(&[0xfe]);
    for x in ids.iter().chain([&u32::MAX]).chain(type_ids) {
        h.update(&x.to_le_bytes());
    }
    finish_key(h)
}

/// Vectors by key, optionally backed by a log file.
pub struct VectorStore {
    dim: usize,
    /// Key to row of `data`; aliases map to the row of their target.
    index: HashMap<VectorKey, usize>,
    data: Vec<f32>,
    log: Option<PathBuf>,
}

impl VectorStore {
    pub fn in_memory(dim: usize) -> Self {
        VectorStore { dim, index: HashMap::new(), data: Vec::new(), log: None }
    }

    /// Opens (or starts) the log at `path`. Records of another dimension are skipped (kept in
    /// the file for the store that reads them); a record that fails its checksum is skipped and
    /// reading resumes at the next intact record; a torn tail is cut. Returns the store and a
    /// note when something was skipped or cut. A log (or cache directory) that cannot be
    /// written is read as it is, and new vectors stay in memory: the note says so.
    pub fn open(path: &Path, dim: usize) -> Result<(Self, Option<String>)> {
        let mut store =
            VectorStore { dim, index: HashMap::new(), data: Vec::new(), log: Some(path.to_path_buf()) };
        let mut notes = Vec::new();
        // Exclusive for the read (and a possible cut): no other process is then half-way
        // through an append, so a torn tail is a crash's leftover, never a live write.
        let mut file = match std::fs::OpenOptions::new().read(true).write(true).open(path) {
            Ok(f) => {
                f.lock().map_err(|e| Error::io(path, e))?;
                f
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && writable_dir(path) => {
                return Ok((store, None))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound || read_only(&e) => {
                store.log = None;
                notes.push("read-only: new vectors are kept in memory only".to_string());
                match std::fs::File::open(path) {
                    Ok(f) => {
                        // Readers share the lock; an append in progress finishes first.
                        f.lock_shared().map_err(|e| Error::io(path, e))?;
                        f
                    }
                    Err(_) => return Ok((store, Some(format!("{}: {}", path.display(), notes.join("; "))))),
                }
            }
            Err(e) => return Err(Error::io(path, e)),
        };
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(|e| Error::io(path, e))?;
        let (mut pos, mut corrupt) = (0, 0);
        // The intact records' byte ranges, for compacting the damaged ones away.
        let mut intact: Vec<std::ops::Range<usize>> = Vec::new();
        while pos < bytes.len() {
            let Some((record, next)) = parse_record(&bytes, pos, dim) else {
                // Not a whole intact record here: skip to the next one, so one damaged record
                // never costs the records behind it. Nothing behind it: a torn tail.
                match next_record(&bytes, pos + 1, dim) {
                    Some(next) => {
                        corrupt += next - pos;
                        pos = next;
                        continue;
                    }
                    None => break,
                }
            };
            match record {
                Record::Vectors(keys, data) => {
                    for (i, key) in keys.into_iter().enumerate() {
                        store.insert(key, &data[i * dim..(i + 1) * dim]);
                    }
                }
                Record::Aliases(pairs) => store.link(&pairs),
                Record::Foreign => {}
            }
            intact.push(pos..next);
            pos = next;
        }
        if corrupt > 0 {
            notes.push(format!("skipped {corrupt} bytes of damaged records"));
        }
        if pos < bytes.len() {
            notes.push(format!("dropped {} bytes of an interrupted write", bytes.len() - pos));
        }
        if store.log.is_some() && corrupt > 0 {
            // Rewritten in place under the lock, so the log does not grow with each repair. A
            // crash half-way leaves intact records and damaged bytes, read as above.
            let kept: Vec<u8> = intact.iter().flat_map(|r| bytes[r.clone()].iter().copied()).collect();
            compact(&mut file, &kept).map_err(|e| Error::io(path, e))?;
            notes.push(format!("compacted the log to {} bytes", kept.len()));
        } else if store.log.is_some() && pos < bytes.len() {
            file.set_len(pos as u64).map_err(|e| Error::io(path, e))?;
        }
        let note = (!notes.is_empty()).then(|| format!("{}: {}", path.display(), notes.join("; ")));
        Ok((store, note))
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Whether new vectors reach the log (false in memory or on a read-only cache).
    pub fn is_persistent(&self) -> bool {
        self.log.is_some()
    }

    /// How many vectors are stored (aliases not counted).
    pub fn len(&self) -> usize {
        self.data.len() / self.dim.max(1)
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    pub fn contains(&self, key: &VectorKey) -> bool {
        self.index.contains_key(key)
    }

    pub fn get(&self, key: &VectorKey) -> Option<&[f32]> {
        self.index.get(key).map(|&i| &self.data[i * self.dim..(i + 1) * self.dim])
    }

    /// Points each alias at its target's vector; pairs whose target is absent are skipped.
    fn link(&mut self, pairs: &[(VectorKey, VectorKey)]) {
        for (alias, target) in pairs {
            if let Some(&row) = self.index.get(target) {
                self.index.insert(*alias, row);
            }
        }
    }

    fn insert(&mut self, key: VectorKey, v: &[f32]) {
        if let Some(&i) = self.index.get(&key) {
            self.data[i * self.dim..(i + 1) * self.dim].copy_from_slice(v);
        } else {
            self.index.insert(key, self.data.len() / self.dim);
            self.data.extend_from_slice(v);
        }
    }

    /// Adds a batch and, for a file-backed store, appends it to the log as one record.
    pub fn add_batch(&mut self, keys: &[VectorKey], vectors: &[Vec<f32>]) -> Result<()> {
        if keys.len() != vectors.len() || vectors.iter().any(|v| v.len() != self.dim) {
            return Err(Error::invalid(format!("vector batch does not match dimension {}", self.dim)));
        }
        if keys.is_empty() {
            return Ok(());
        }
        self.append(&encode_record(keys, vectors))?;
        for (k, v) in keys.iter().zip(vectors) {
            self.insert(*k, v);
        }
        Ok(())
    }

    /// Makes each `(alias, target)` find the target's vector; every target must be stored.
    pub fn add_aliases(&mut self, pairs: &[(VectorKey, VectorKey)]) -> Result<()> {
        if pairs.iter().any(|(_, t)| !self.contains(t)) {
            return Err(Error::invalid("alias to a vector that is not stored"));
        }
        if pairs.is_empty() {
            return Ok(());
        }
        self.append(&encode_aliases(pairs))?;
        self.link(pairs);
        Ok(())
    }

    fn append(&self, record: &[u8]) -> Result<()> {
        let Some(path) = &self.log else { return Ok(()) };
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        // Whole records only, under the lock `open` takes to read.
        f.lock().and_then(|_| f.write_all(record)).and_then(|_| f.sync_data()).map_err(|e| Error::io(path, e))
    }
}

/// Replaces the file's contents with `kept`.
fn compact(file: &mut std::fs::File, kept: &[u8]) -> std::io::Result<()> {
    use std::io::{Seek, SeekFrom};
    file.seek(SeekFrom::Start(0))?;
    file.write_all(kept)?;
    file.set_len(kept.len() as u64)?;
    file.sync_data()
}

/// An error that means "this place cannot be written" (a read-only mount, or permissions).
fn read_only(e: &std::io::Error) -> bool {
    matches!(e.kind(), std::io::ErrorKind::ReadOnlyFilesystem | std::io::ErrorKind::PermissionDenied)
}

/// Whether a log could be started at `path`: its directory exists and takes a new file, or
/// can be created. Probed with a file that is removed at once.
fn writable_dir(path: &Path) -> bool {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut existing = dir;
    while !existing.exists() {
        match existing.parent() {
            Some(p) => existing = p,
            None => return false,
        }
    }
    let probe = existing.join(format!(".coret-probe-{}", std::process::id()));
    match std::fs::File::create(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            true
        }
        Err(e) => !read_only(&e),
    }
}

/// A parsed log record.
enum Record {
    Vectors(Vec<VectorKey>, Vec<f32>),
    Aliases(Vec<(VectorKey, VectorKey)>),
    /// Intact, but written for another dimension (another model).
    Foreign,
}

/// Frames `body` as magic, count, dimension, blake3 of the body, body.
fn frame(magic: &[u8; 4], count: usize, dim: usize, body: &[u8]) -> Vec<u8> {
    let mut rec = Vec::with_capacity(body.len() + 44);
    rec.extend_from_slice(magic);
    rec.extend_from_slice(&(count as u32).to_le_bytes());
    rec.extend_from_slice(&(dim as u32).to_le_bytes());
    rec.extend_from_slice(blake3::hash(body).as_bytes());
    rec.extend_from_slice(body);
    rec
}

fn encode_aliases(pairs: &[(VectorKey, VectorKey)]) -> Vec<u8> {
    let body: Vec<u8> = pairs.iter().flat_map(|(a, t)| a.iter().chain(t).copied()).collect();
    frame(ALIAS_MAGIC, pairs.len(), 0, &body)
}

fn encode_record(keys: &[VectorKey], vectors: &[Vec<f32>]) -> Vec<u8> {
    let dim = vectors.first().map_or(0, |v| v.len());
    let mut body = Vec::with_capacity(keys.len() * (16 + dim * 4));
    for k in keys {
        body.extend_from_slice(k);
    }
    for v in vectors {
        for x in v {
            body.extend_from_slice(&x.to_le_bytes());
        }
    }
    frame(RECORD_MAGIC, keys.len(), dim, &body)
}

/// Parses the record at `pos`; None unless a whole record with a valid checksum starts there.
fn parse_record(bytes: &[u8], pos: usize, dim: usize) -> Option<(Record, usize)> {
    let head = bytes.get(pos..pos + 44)?;
    let count = u32::from_le_bytes(head[4..8].try_into().ok()?) as usize;
    let rec_dim = u32::from_le_bytes(head[8..12].try_into().ok()?) as usize;
    let aliases = match &head[..4] {
        m if m == RECORD_MAGIC => false,
        m if m == ALIAS_MAGIC && rec_dim == 0 => true,
        _ => return None,
    };
    let body_len =
        count.checked_mul(if aliases { 32 } else { rec_dim.checked_mul(4)?.checked_add(16)? })?;
    let body = bytes.get(pos + 44..(pos + 44).checked_add(body_len)?)?;
    if blake3::hash(body).as_bytes() != &head[12..44] {
        return None;
    }
    let next = pos + 44 + body_len;
    if aliases {
        let key = |b: &[u8]| -> VectorKey { b.try_into().unwrap_or_default() };
        let pairs = body.chunks_exact(32).map(|p| (key(&p[..16]), key(&p[16..]))).collect();
        return Some((Record::Aliases(pairs), next));
    }
    // An empty batch reads as empty whatever its dimension (older versions wrote such records
    // with dimension 0).
    if rec_dim != dim && count > 0 {
        return Some((Record::Foreign, next));
    }
    let mut keys = Vec::with_capacity(count);
    for i in 0..count {
        let mut k = [0u8; 16];
        k.copy_from_slice(&body[i * 16..(i + 1) * 16]);
        keys.push(k);
    }
    let mut reader = &body[count * 16..];
    let mut data = vec![0f32; count * dim];
    for x in data.iter_mut() {
        let mut b = [0u8; 4];
        reader.read_exact(&mut b).ok()?;
        *x = f32::from_le_bytes(b);
    }
    Some((Record::Vectors(keys, data), next))
}

/// The start of the first whole, intact record at or after `from`.
fn next_record(bytes: &[u8], from: usize, dim: usize) -> Option<usize> {
    (from..bytes.len().saturating_sub(43)).find(|&p| {
        let m = &bytes[p..p + 4];
        (m == RECORD_MAGIC || m == ALIAS_MAGIC) && parse_record(bytes, p, dim).is_some()
    })
}

/// A dense index over the chunks of one repository: row `i` is chunk `i`'s unit vector.
pub struct DenseIndex {
    dim: usize,
    matrix: Vec<f32>,
}

impl DenseIndex {
    /// Gathers the rows for `keys` (one per chunk, in chunk order) from the store.
    pub fn from_store(store: &VectorStore, keys: &[VectorKey]) -> Result<Self> {
        let dim = store.dim();
        let mut matrix = Vec::with_capacity(keys.len() * dim);
        for (i, k) in keys.iter().enumerate() {
            let v = store.get(k).ok_or_else(|| Error::invalid(format!("chunk {i} has no vector")))?;
            matrix.extend_from_slice(v);
        }
        Ok(DenseIndex { dim, matrix })
    }

    /// Rows already computed (the static tier's), row-major.
    pub fn from_matrix(dim: usize, matrix: Vec<f32>) -> Self {
        DenseIndex { dim, matrix }
    }

    pub fn len(&self) -> usize {
        self.matrix.len() / self.dim.max(1)
    }

    pub fn is_empty(&self) -> bool {
        self.matrix.is_empty()
    }

    /// Chunk `i`'s unit vector.
    pub fn row(&self, i: usize) -> &[f32] {
        &self.matrix[i * self.dim..(i + 1) * self.dim]
    }

    /// Replaces row `i` (an edited chunk's new vector).
    pub fn set_row(&mut self, i: usize, v: &[f32]) {
        self.matrix[i * self.dim..(i + 1) * self.dim].copy_from_slice(v);
    }

    /// Exact top-`k` by cosine similarity (dot product of unit vectors).
    pub fn search(&self, query: &[f32], k: usize) -> Vec<Hit> {
        if query.len() != self.dim || self.is_empty() {
            return Vec::new();
        }
        top_k(&scores(&self.matrix, self.dim, query), k)
    }
}

/// Each row's dot product with `query`: blocks of rows in parallel, each block with the CPU's
/// widest vector unit. A search reads the whole matrix, and scalar dot products made it
/// compute-bound (50,000 × 384 in ~8 ms on two cores).
fn scores(matrix: &[f32], dim: usize, query: &[f32]) -> Vec<f32> {
    const BLOCK: usize = 1024;
    let mut out = vec![0f32; matrix.len() / dim.max(1)];
    out.par_chunks_mut(BLOCK)
        .zip(matrix.par_chunks(BLOCK * dim.max(1)))
        .for_each(|(out, rows)| dots(rows, dim, query, out));
    out
}

vectorised! {
    /// `out[i]` ← row i of `rows` · `query`.
    fn dots(rows: &[f32], dim: usize, query: &[f32], out: &mut [f32]) {
        for (o, row) in out.iter_mut().zip(rows.chunks_exact(dim)) {
            *o = dot(row, query);
        }
    }
}

/// The `k` best scores, best first; ties broken by lower chunk id for stable output.
pub fn top_k(scores: &[f32], k: usize) -> Vec<Hit> {
    let mut ids: Vec<u32> = (0..scores.len() as u32).collect();
    let by_score = |a: &u32, b: &u32| scores[*b as usize].total_cmp(&scores[*a as usize]).then(a.cmp(b));
    let k = k.min(ids.len());
    if k == 0 {
        return Vec::new();
    }
    if k < ids.len() {
        ids.select_nth_unstable_by(k - 1, by_score);
        ids.truncate(k);
    }
    ids.sort_by(by_score);
    ids.into_iter().map(|i| Hit { chunk: i, score: scores[i as usize] }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(v: &[f32]) -> Vec<f32> {
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / n).collect()
    }

    #[test]
    fn the_int8_scan_rescored_in_f32_returns_the_exact_top_k() {
        let dim = 32;
        let mut state = 7u64;
        let mut matrix: Vec<f32> = (0..2000 * dim)
            .map(|_| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
            })
            .collect();
        matrix.chunks_mut(dim).for_each(crate::model::static_tier::normalise);
        let mut exact = DenseIndex::from_matrix(dim, matrix);
        let q8 = Int8Index::from_index(&exact);
        for row in [0usize, 17, 1999] {
            let query = exact.row(row).to_vec();
            assert_eq!(q8.search_rescored(&exact, &query, 10, 200), exact.search(&query, 10));
        }
        // An edited chunk's row, replaced in place, is what the exact search then finds.
        let moved = exact.row(5).to_vec();
        exact.set_row(1234, &moved);
        assert!(exact.search(&moved, 2).iter().any(|h| h.chunk == 1234));
    }

    #[test]
    fn keys_depend_on_model_chunk_and_neighbours() {
        let a = vector_key("m1", "def f(): pass", &[]);
        assert_eq!(a, vector_key("m1", "def f(): pass", &[]));
        assert_ne!(a, vector_key("m2", "def f(): pass", &[]));
        assert_ne!(a, vector_key("m1", "def f(): pass", &["def g(): pass".into()]));
        assert_ne!(vector_key("m", "ab", &["c".into()]), vector_key("m", "a", &["bc".into()]));
    }

    #[test]
    fn exact_top_k_is_ordered_by_cosine() {
        let mut store = VectorStore::in_memory(2);
        let keys: Vec<VectorKey> = (0..4u8).map(|i| [i; 16]).collect();
        let vecs = vec![unit(&[1.0, 0.0]), unit(&[0.0, 1.0]), unit(&[1.0, 1.0]), unit(&[-1.0, 0.2])];
        store.add_batch(&keys, &vecs).unwrap();
        let index = DenseIndex::from_store(&store, &keys).unwrap();
        let hits = index.search(&unit(&[1.0, 0.1]), 3);
        assert_eq!(hits.iter().map(|h| h.chunk).collect::<Vec<_>>(), [0, 2, 1]);
        assert!(hits[0].score > hits[1].score);
        assert_eq!(index.search(&unit(&[1.0, 0.1]), 10).len(), 4);
    }

    #[test]
    fn log_survives_reopen_and_drops_a_torn_tail() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors.log");
        {
            let (mut s, note) = VectorStore::open(&path, 3).unwrap();
            assert!(note.is_none());
            s.add_batch(&[[1; 16]], &[vec![1.0, 0.0, 0.0]]).unwrap();
            s.add_batch(&[[2; 16], [3; 16]], &[vec![0.0, 1.0, 0.0], vec![0.0, 0.0, 1.0]]).unwrap();
        }
        // Simulate a crash in the middle of a third append.
        let mut bytes = std::fs::read(&path).unwrap();
        let good = bytes.len();
        bytes.extend_from_slice(&encode_record(&[[4; 16]], &[vec![0.5, 0.5, 0.5]])[..30]);
        std::fs::write(&path, &bytes).unwrap();

        let (s, note) = VectorStore::open(&path, 3).unwrap();
        assert_eq!(s.len(), 3);
        assert_eq!(s.get(&[2; 16]).unwrap(), &[0.0, 1.0, 0.0]);
        assert!(note.unwrap().contains("dropped"));
        assert_eq!(std::fs::metadata(&path).unwrap().len() as usize, good);

        // A store of another dimension does not read these records, and leaves them be.
        let (other, note) = VectorStore::open(&path, 4).unwrap();
        assert!(other.is_empty());
        assert!(note.is_none(), "{note:?}");
        assert_eq!(std::fs::metadata(&path).unwrap().len() as usize, good);
        assert_eq!(VectorStore::open(&path, 3).unwrap().0.len(), 3);
    }

    #[test]
    fn empty_batches_write_nothing_and_old_empty_records_cost_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors.log");
        let (mut s, _) = VectorStore::open(&path, 2).unwrap();
        s.add_batch(&[], &[]).unwrap();
        s.add_aliases(&[]).unwrap();
        assert!(!path.exists(), "an empty batch appends no record");
        // Earlier versions appended an empty batch as a record of dimension 0; a reopen must
        // read past it, not cut the log there.
        s.add_batch(&[[1; 16]], &[vec![1.0, 0.0]]).unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.extend_from_slice(&frame(RECORD_MAGIC, 0, 0, &[]));
        bytes.extend_from_slice(&encode_record(&[[2; 16]], &[vec![0.0, 1.0]]));
        std::fs::write(&path, &bytes).unwrap();
        let (s, note) = VectorStore::open(&path, 2).unwrap();
        assert!(note.is_none(), "{note:?}");
        assert_eq!(s.get(&[2; 16]).unwrap(), &[0.0, 1.0]);
        assert_eq!(std::fs::read(&path).unwrap(), bytes);
    }

    #[test]
    fn a_damaged_record_costs_only_itself() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors.log");
        let (mut s, _) = VectorStore::open(&path, 2).unwrap();
        for i in 1..=3u8 {
            s.add_batch(&[[i; 16]], &[vec![f32::from(i), 1.0]]).unwrap();
        }
        // One flipped bit in the second record's vector.
        let mut bytes = std::fs::read(&path).unwrap();
        let record = encode_record(&[[2; 16]], &[vec![2.0, 1.0]]).len();
        bytes[record + 44 + 16] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        let (s, note) = VectorStore::open(&path, 2).unwrap();
        assert_eq!(s.len(), 2);
        assert!(s.contains(&[1; 16]) && !s.contains(&[2; 16]));
        assert_eq!(s.get(&[3; 16]).unwrap(), &[3.0, 1.0], "the record after the damage is read");
        let note = note.unwrap();
        assert!(note.contains(&format!("skipped {record} bytes")), "{note}");
        assert!(note.contains("compacted"), "{note}");
        // The damaged bytes are gone, so repairs do not grow the log; the rest reads the same.
        assert_eq!(std::fs::read(&path).unwrap().len(), bytes.len() - record);
        drop(s);
        let (mut s, note) = VectorStore::open(&path, 2).unwrap();
        assert!(note.is_none(), "{note:?}");
        assert_eq!((s.get(&[1; 16]).unwrap(), s.get(&[3; 16]).unwrap()), (&[1.0, 1.0][..], &[3.0, 1.0][..]));
        s.add_batch(&[[2; 16]], &[vec![2.0, 1.0]]).unwrap();
        assert_eq!(std::fs::read(&path).unwrap().len(), bytes.len(), "re-embedded once, not twice");
    }

    #[test]
    fn open_waits_for_an_append_in_progress() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors.log");
        VectorStore::open(&path, 2).unwrap().0.add_batch(&[[1; 16]], &[vec![1.0, 0.0]]).unwrap();
        // Another process mid-append: it holds the lock and has written half a record.
        let writer = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        writer.lock().unwrap();
        let record = encode_record(&[[2; 16]], &[vec![0.0, 1.0]]);
        (&writer).write_all(&record[..20]).unwrap();
        let reader = std::thread::spawn({
            let path = path.clone();
            move || VectorStore::open(&path, 2).unwrap()
        });
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(!reader.is_finished(), "open must wait for the writer");
        (&writer).write_all(&record[20..]).unwrap();
        writer.unlock().unwrap();
        let (store, note) = reader.join().unwrap();
        assert!(note.is_none(), "nothing torn: {note:?}");
        assert_eq!(store.len(), 2);
    }

    #[test]
    fn aliases_share_a_vector_and_survive_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors.log");
        {
            let (mut s, _) = VectorStore::open(&path, 2).unwrap();
            s.add_batch(&[[1; 16]], &[vec![1.0, 0.0]]).unwrap();
            s.add_aliases(&[([7; 16], [1; 16]), ([8; 16], [1; 16])]).unwrap();
            assert!(s.add_aliases(&[([9; 16], [5; 16])]).is_err(), "alias to a missing vector");
            assert_eq!(s.len(), 1, "aliases store no vector");
        }
        let (s, note) = VectorStore::open(&path, 2).unwrap();
        assert!(note.is_none());
        assert_eq!(s.get(&[8; 16]).unwrap(), &[1.0, 0.0]);
        assert!(!s.contains(&[9; 16]));
        let index = DenseIndex::from_store(&s, &[[7; 16], [1; 16]]).unwrap();
        assert_eq!(index.search(&[1.0, 0.0], 2).len(), 2);
    }

    #[test]
    fn token_keys_depend_on_ids_segments_and_model() {
        let a = token_key("m", &[101, 7, 102], &[0, 0, 0]);
        assert_eq!(a, token_key("m", &[101, 7, 102], &[0, 0, 0]));
        assert_ne!(a, token_key("m", &[101, 7, 102], &[0, 1, 1]));
        assert_ne!(a, token_key("n", &[101, 7, 102], &[0, 0, 0]));
        assert_ne!(a, vector_key("m", "x", &[]));
    }
}

/// Int8 copies of unit vectors (each component × 127, rounded): a quarter of the memory and
/// of the bytes a scan reads; its top candidates are re-scored in f32, so the order of what it
/// returns is exact.
pub struct Int8Index {
    dim: usize,
    rows: Vec<i8>,
}

impl Int8Index {
    pub fn from_index(flat: &DenseIndex) -> Self {
        let rows = flat.matrix.par_iter().map(|x| quantise(*x)).collect();
        Int8Index { dim: flat.dim, rows }
    }

    /// The `k` best of `flat` among the int8 scan's top `candidates`, scored in f32.
    pub fn search_rescored(&self, flat: &DenseIndex, query: &[f32], k: usize, candidates: usize) -> Vec<Hit> {
        if query.len() != self.dim || self.rows.is_empty() {
            return Vec::new();
        }
        let q: Vec<i8> = query.iter().map(|x| quantise(*x)).collect();
        const BLOCK: usize = 4096;
        let mut out = vec![0f32; self.rows.len() / self.dim];
        out.par_chunks_mut(BLOCK)
            .zip(self.rows.par_chunks(BLOCK * self.dim))
            .for_each(|(out, rows)| dots_i8(rows, self.dim, &q, out));
        let mut hits: Vec<Hit> = top_k(&out, candidates)
            .into_iter()
            .map(|h| Hit { chunk: h.chunk, score: dot(flat.row(h.chunk as usize), query) })
            .collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.chunk.cmp(&b.chunk)));
        hits.truncate(k);
        hits
    }
}

fn quantise(x: f32) -> i8 {
    (x * 127.0).round().clamp(-127.0, 127.0) as i8
}

vectorised! {
    /// `out[i]` ← row i of `rows` · `query`, in integers (i8 × i8 summed in i32).
    fn dots_i8(rows: &[i8], dim: usize, query: &[i8], out: &mut [f32]) {
        for (o, row) in out.iter_mut().zip(rows.chunks_exact(dim)) {
            let mut acc = [0i32; 16];
            for (r, q) in row.chunks_exact(16).zip(query.chunks_exact(16)) {
                for l in 0..16 {
                    acc[l] += i32::from(r[l]) * i32::from(q[l]);
                }
            }
            let tail: i32 = row.chunks_exact(16).remainder().iter().zip(query.chunks_exact(16).remainder())
                .map(|(a, b)| i32::from(*a) * i32::from(*b)).sum();
            *o = (acc.iter().sum::<i32>() + tail) as f32;
        }
    }
}
