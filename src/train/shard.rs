//! Training examples, ready for the encoder, and the shard file that holds them.
//!
//! An example is one instance reduced to token ids: its query, its gold chunks and a
//! random sample of other chunks of the same snapshot (the negatives), each already laid
//! out as `[CLS] chunk [DOWN] neighbour … [SEP]` by the training tokenizer. Storing ids
//! rather than texts keeps a shard small (a chunk input is at most `max_len` ids, while its
//! neighbours' texts can run to kilobytes) and lets a GPU machine train without
//! repositories, parsing or tokenising. The price: a shard belongs to one tokenizer and
//! one max length, both recorded in its header and checked on use.
//!
//! File (3): zstd of `CORETSHARD3\n` followed by the bincode (serde) of [`CompactShard`]:
//! each distinct chunk once, referenced by index from its examples. Nearby commits of one
//! repository share most of their gold and negative chunks, and a shard travels to a GPU
//! machine in uploads of 64 MiB, so each byte saved is upload time. Version 2 (gzip of
//! `CORETSHARD2\n` and the bincode of [`Shard`], every chunk inline) is still read.

use std::collections::HashMap;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::tokenize::InputTokenizer;
use crate::model::TokenizedInput;

// 2: candidates carry their qualified name. 3: chunks stored once, zstd.
const MAGIC_V2: &[u8; 12] = b"CORETSHARD2\n";
const MAGIC: &[u8; 12] = b"CORETSHARD3\n";
/// zstd's frame magic (little-endian 0xFD2FB528); gzip's is 1f 8b.
const ZSTD_FRAME: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];
/// The most a shard may claim to hold when read (bytes): far above any real one (the 15k
/// plan's is about 25 MB compressed, a few hundred MB decoded).
const DECODE_LIMIT: usize = 1 << 34;
/// High ratio at a speed that is still seconds for a shard of 15k examples.
const ZSTD_LEVEL: i32 = 19;

/// One tokenised sequence: ids, with segment 1 from `split` on (segment 0 before).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Seq {
    pub ids: Vec<u32>,
    pub split: u32,
}

impl Seq {
    /// Segment ids are 0…0 1…1 by construction ([`InputTokenizer`]'s layout).
    pub fn from_tokenized(t: &TokenizedInput) -> Self {
        let split = t.type_ids.iter().position(|&s| s != 0).unwrap_or(t.len());
        Seq { ids: t.ids.clone(), split: split as u32 }
    }

    pub fn to_tokenized(&self) -> TokenizedInput {
        let split = (self.split as usize).min(self.ids.len());
        let mut type_ids = vec![0; self.ids.len()];
        type_ids[split..].fill(1);
        TokenizedInput { ids: self.ids.clone(), type_ids }
    }
}

/// A chunk as the encoder sees it, its file (for file-level validation metrics) and its
/// qualified name (with the path, its identity across the commits of one repository).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Candidate {
    pub path: String,
    pub name: String,
    pub seq: Seq,
}

impl Candidate {
    /// `path::name`: the same function in another commit's snapshot has the same key.
    pub fn key(&self) -> String {
        format!("{}::{}", self.path, self.name)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Example {
    pub instance_id: String,
    pub repo: String,
    pub query: Seq,
    /// The gold chunks (at least one).
    pub positives: Vec<Candidate>,
    /// Up to the requested number of non-gold chunks of the same snapshot, sampled at random.
    pub negatives: Vec<Candidate>,
    /// Chunks in the snapshot.
    pub snapshot_chunks: usize,
}

/// What the ids depend on; a shard is used only with a matching tokenizer and max length.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardHeader {
    /// [`tokenizer_digest`] of the tokenizer that produced the ids.
    pub tokenizer: String,
    pub max_len: usize,
    pub query_max_len: usize,
    /// Encoder-input options (`dense_retriever::DenseOptions`) the chunks were laid out with.
    pub inputs: String,
    /// Negatives sampled per instance (fewer where a snapshot has fewer chunks).
    pub negatives: usize,
    pub seed: u64,
    /// The instances file the shard was prepared from.
    pub source: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub header: ShardHeader,
    pub examples: Vec<Example>,
}

/// blake3 of the vocabulary (token, id) pairs in id order, and of the `[DOWN]` id.
pub fn tokenizer_digest(tok: &InputTokenizer) -> String {
    let mut vocab: Vec<(String, u32)> = tok.tokenizer().get_vocab(true).into_iter().collect();
    vocab.sort_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
    let mut h = blake3::Hasher::new();
    for (token, id) in &vocab {
        h.update(token.as_bytes());
        h.update(&id.to_le_bytes());
    }
    h.update(&tok.down_id().to_le_bytes());
    h.finalize().to_hex()[..16].to_string()
}

/// On disk: every distinct chunk once, examples pointing into `chunks`.
#[derive(Serialize, Deserialize)]
struct CompactShard {
    header: ShardHeader,
    chunks: Vec<Candidate>,
    examples: Vec<CompactExample>,
}

#[derive(Serialize, Deserialize)]
struct CompactExample {
    instance_id: String,
    repo: String,
    query: Seq,
    positives: Vec<u32>,
    negatives: Vec<u32>,
    snapshot_chunks: usize,
}

impl CompactShard {
    fn of(shard: &Shard) -> Self {
        let mut index: HashMap<&Candidate, u32> = HashMap::new();
        let mut chunks: Vec<Candidate> = Vec::new();
        let mut examples = Vec::with_capacity(shard.examples.len());
        for e in &shard.examples {
            let (mut positives, mut negatives) = (Vec::new(), Vec::new());
            for (list, out) in [(&e.positives, &mut positives), (&e.negatives, &mut negatives)] {
                for c in list {
                    let id = *index.entry(c).or_insert_with(|| {
                        chunks.push(c.clone());
                        (chunks.len() - 1) as u32
                    });
                    out.push(id);
                }
            }
            examples.push(CompactExample {
                instance_id: e.instance_id.clone(),
                repo: e.repo.clone(),
                query: e.query.clone(),
                positives,
                negatives,
                snapshot_chunks: e.snapshot_chunks,
            });
        }
        CompactShard { header: shard.header.clone(), chunks, examples }
    }

    fn into_shard(self, path: &Path) -> Result<Shard> {
        let chunks = self.chunks;
        let resolve = |ids: Vec<u32>| -> Result<Vec<Candidate>> {
            ids.into_iter()
                .map(|i| {
                    chunks.get(i as usize).cloned().ok_or_else(|| {
                        Error::context(path.display().to_string(), format!("corrupt shard: no chunk {i}"))
                    })
                })
                .collect()
        };
        let mut examples = Vec::with_capacity(self.examples.len());
        for e in self.examples {
            examples.push(Example {
                instance_id: e.instance_id,
                repo: e.repo,
                query: e.query,
                positives: resolve(e.positives)?,
                negatives: resolve(e.negatives)?,
                snapshot_chunks: e.snapshot_chunks,
            });
        }
        Ok(Shard { header: self.header, examples })
    }
}

/// Writes `shard` to `path` (format 3) through a temporary file beside it and a rename.
pub fn write_shard(path: &Path, shard: &Shard) -> Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| Error::io(dir, e))?;
    {
        let file = BufWriter::new(tmp.as_file());
        let mut z = zstd::Encoder::new(file, ZSTD_LEVEL).map_err(|e| Error::io(path, e))?;
        // A damaged file then fails its checksum instead of yielding other examples.
        z.include_checksum(true).map_err(|e| Error::io(path, e))?;
        z.write_all(MAGIC).map_err(|e| Error::io(path, e))?;
        bincode::serde::encode_into_std_write(CompactShard::of(shard), &mut z, bincode::config::standard())
            .map_err(|e| Error::context(path.display().to_string(), e))?;
        let mut file = z.finish().map_err(|e| Error::io(path, e))?;
        file.flush().map_err(|e| Error::io(path, e))?;
    }
    tmp.as_file().sync_all().map_err(|e| Error::io(path, e))?;
    #[cfg(unix)]
    {
        // Temporary files are private; a shard is data to share like any output.
        use std::os::unix::fs::PermissionsExt;
        let _ = tmp.as_file().set_permissions(std::fs::Permissions::from_mode(0o644));
    }
    tmp.persist(path).map_err(|e| Error::io(path, e.error))?;
    Ok(())
}

/// Writes `shard` in format 2 (gzip, every chunk inline): how shards were stored before,
/// kept to measure what format 3 saves (`examples/shard_size.rs`) and to test reading old files.
#[doc(hidden)]
pub fn write_shard_v2(path: &Path, shard: &Shard) -> Result<()> {
    let file = std::fs::File::create(path).map_err(|e| Error::io(path, e))?;
    let mut gz = flate2::write::GzEncoder::new(BufWriter::new(file), flate2::Compression::default());
    gz.write_all(MAGIC_V2).map_err(|e| Error::io(path, e))?;
    bincode::serde::encode_into_std_write(shard, &mut gz, bincode::config::standard())
        .map_err(|e| Error::context(path.display().to_string(), e))?;
    gz.finish().and_then(|mut f| f.flush()).map_err(|e| Error::io(path, e))
}

/// Distinct chunks and chunk references in `shard`: what storing each chunk once saves.
pub fn chunk_counts(shard: &Shard) -> (usize, usize) {
    let compact = CompactShard::of(shard);
    let refs = compact.examples.iter().map(|e| e.positives.len() + e.negatives.len()).sum();
    (compact.chunks.len(), refs)
}

/// A shard file's decompressed stream, past its magic line, and that line.
type ShardStream = (Box<dyn Read>, [u8; 12]);

/// The decompressed stream of a shard file of either format, and its magic line.
fn open_stream(path: &Path) -> Result<Option<ShardStream>> {
    let mut file = BufReader::new(std::fs::File::open(path).map_err(|e| Error::io(path, e))?);
    let mut frame = [0u8; 4];
    let n = file.read(&mut frame).map_err(|e| Error::io(path, e))?;
    let rest = std::io::Cursor::new(frame[..n].to_vec()).chain(file);
    let mut stream: Box<dyn Read> = if n == 4 && frame == ZSTD_FRAME {
        Box::new(BufReader::new(zstd::Decoder::new(rest).map_err(|e| Error::io(path, e))?))
    } else if n >= 2 && frame[..2] == [0x1f, 0x8b] {
        Box::new(BufReader::new(flate2::read::GzDecoder::new(rest)))
    } else {
        return Ok(None);
    };
    let mut head = [0u8; 12];
    if stream.read_exact(&mut head).is_err() || (&head != MAGIC && &head != MAGIC_V2) {
        return Ok(None);
    }
    Ok(Some((stream, head)))
}

/// Whether `path` is a shard (rather than an instances file).
pub fn is_shard(path: &Path) -> Result<bool> {
    Ok(open_stream(path)?.is_some())
}

pub fn read_shard(path: &Path) -> Result<Shard> {
    let corrupt = |e: bincode::error::DecodeError| {
        Error::context(path.display().to_string(), format!("corrupt shard: {e}"))
    };
    let Some((mut stream, head)) = open_stream(path)? else {
        return Err(Error::context(path.display().to_string(), "not a coret-tui training shard"));
    };
    // A damaged length prefix must be an error, not an allocation of exabytes.
    let config = bincode::config::standard().with_limit::<DECODE_LIMIT>();
    if &head == MAGIC_V2 {
        return bincode::serde::decode_from_std_read(&mut stream, config).map_err(corrupt);
    }
    let compact: CompactShard = bincode::serde::decode_from_std_read(&mut stream, config).map_err(corrupt)?;
    compact.into_shard(path)
}

/// Checks that `header`'s ids were made by `tok` at `max_len`; the error says what to do.
pub fn check_compatible(
    header: &ShardHeader,
    tok: &InputTokenizer,
    max_len: usize,
    what: &Path,
) -> Result<()> {
    let digest = tokenizer_digest(tok);
    if header.tokenizer != digest {
        return Err(Error::IncompatibleShard {
            path: what.to_path_buf(),
            reason: format!(
                "prepared with another tokenizer ({} vs the model's {digest}); prepare it again \
                 with this --init model",
                header.tokenizer
            ),
        });
    }
    if header.max_len != max_len {
        return Err(Error::IncompatibleShard {
            path: what.to_path_buf(),
            reason: format!("prepared at --max-len {} but training asks for {max_len}", header.max_len),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seq_round_trips_segment_ids() {
        let t = TokenizedInput { ids: vec![2, 7, 8, 9, 3], type_ids: vec![0, 0, 0, 1, 1] };
        let s = Seq::from_tokenized(&t);
        assert_eq!(s.split, 3);
        assert_eq!(s.to_tokenized(), t);
        let single = TokenizedInput { ids: vec![2, 7, 3], type_ids: vec![0, 0, 0] };
        assert_eq!(Seq::from_tokenized(&single).to_tokenized(), single);
    }

    #[test]
    fn shard_round_trips_and_is_told_apart_from_instances() {
        let dir = tempfile::tempdir().unwrap();
        let seq = Seq { ids: vec![1, 2, 3], split: 2 };
        let cand = Candidate { path: "a.py".into(), name: "f".into(), seq: seq.clone() };
        let shard = Shard {
            header: ShardHeader {
                tokenizer: "abc".into(),
                max_len: 64,
                query_max_len: 128,
                inputs: "cg1n8p1".into(),
                negatives: 4,
                seed: 7,
                source: "x.jsonl".into(),
            },
            examples: vec![Example {
                instance_id: "i-1".into(),
                repo: "o/r".into(),
                query: seq,
                positives: vec![cand.clone()],
                negatives: vec![cand.clone(), cand],
                snapshot_chunks: 10,
            }],
        };
        let path = dir.path().join("s.shard");
        write_shard(&path, &shard).unwrap();
        assert!(is_shard(&path).unwrap());
        assert_eq!(read_shard(&path).unwrap(), shard);
        // Version 2 (gzip, chunks inline) is still read.
        let v2 = dir.path().join("v2.shard");
        write_shard_v2(&v2, &shard).unwrap();
        assert!(is_shard(&v2).unwrap());
        assert_eq!(read_shard(&v2).unwrap(), shard);
        let jsonl = dir.path().join("i.jsonl");
        std::fs::write(&jsonl, "{\"instance_id\": \"x\"}\n").unwrap();
        assert!(!is_shard(&jsonl).unwrap());
        assert!(read_shard(&jsonl).is_err());
    }

    #[test]
    fn a_chunk_shared_by_examples_is_stored_once() {
        let dir = tempfile::tempdir().unwrap();
        let big = |name: &str, seed: u32| Candidate {
            path: "pkg/mod.py".into(),
            name: name.into(),
            seq: Seq { ids: (0..256).map(|i| (i * 7919 + seed * 104729) % 30000).collect(), split: 9 },
        };
        let example = |i: usize| Example {
            instance_id: format!("i-{i}"),
            repo: "o/r".into(),
            query: Seq { ids: vec![1, i as u32], split: 2 },
            positives: vec![big("gold", 1)],
            negatives: (0..8).map(|k| big(&format!("n{k}"), 2 + k)).collect(),
            snapshot_chunks: 100,
        };
        let header = ShardHeader {
            tokenizer: "abc".into(),
            max_len: 256,
            query_max_len: 256,
            inputs: "x".into(),
            negatives: 8,
            seed: 0,
            source: "s".into(),
        };
        let one = Shard { header: header.clone(), examples: vec![example(0)] };
        let many = Shard { header, examples: (0..50).map(example).collect() };
        let (p1, p50) = (dir.path().join("1.shard"), dir.path().join("50.shard"));
        write_shard(&p1, &one).unwrap();
        write_shard(&p50, &many).unwrap();
        assert_eq!(read_shard(&p50).unwrap(), many);
        assert_eq!(chunk_counts(&many), (9, 450));
        let size = |p: &Path| std::fs::metadata(p).unwrap().len();
        // 49 more examples over the same nine chunks add their queries and indices, not chunks.
        assert!(size(&p50) < size(&p1) + 50 * 64, "{} vs {}", size(&p50), size(&p1));
    }

    #[test]
    fn a_truncated_or_damaged_shard_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let cand = |n: u32| Candidate {
            path: "a.py".into(),
            name: format!("f{n}"),
            seq: Seq { ids: vec![n; 200], split: 3 },
        };
        let shard = Shard {
            header: ShardHeader {
                tokenizer: "abc".into(),
                max_len: 256,
                query_max_len: 256,
                inputs: "x".into(),
                negatives: 4,
                seed: 0,
                source: "s".into(),
            },
            examples: (0..20)
                .map(|i| Example {
                    instance_id: format!("i-{i}"),
                    repo: "o/r".into(),
                    query: Seq { ids: vec![1, 2, i], split: 3 },
                    positives: vec![cand(i)],
                    negatives: (0..4).map(|k| cand(100 + i * 4 + k)).collect(),
                    snapshot_chunks: 9,
                })
                .collect(),
        };
        let good = dir.path().join("good.shard");
        write_shard(&good, &shard).unwrap();
        let bytes = std::fs::read(&good).unwrap();
        let truncated = dir.path().join("truncated.shard");
        std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
        let mut flipped = bytes.clone();
        let at = bytes.len() * 2 / 3;
        flipped[at] ^= 0x5a;
        let damaged = dir.path().join("damaged.shard");
        std::fs::write(&damaged, &flipped).unwrap();
        for path in [&truncated, &damaged] {
            let err = read_shard(path).expect_err("a broken shard must not read").to_string();
            assert!(err.contains(&path.display().to_string()), "{err}");
        }
    }
}
