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
//! File: gzip of `CORETSHARD2\n` followed by the bincode (serde) of [`Shard`].

use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::tokenize::InputTokenizer;
use crate::model::TokenizedInput;

// 2: candidates carry their qualified name.
const MAGIC: &[u8; 12] = b"CORETSHARD2\n";

/// One tokenised sequence: ids, with segment 1 from `split` on (segment 0 before).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
    /// Encoder-input options (`semantic::DenseOptions`) the chunks were laid out with.
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

/// Writes `shard` to `path` through a temporary file beside it and a rename.
pub fn write_shard(path: &Path, shard: &Shard) -> Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| Error::io(dir, e))?;
    {
        let file = BufWriter::new(tmp.as_file());
        let mut gz = flate2::write::GzEncoder::new(file, flate2::Compression::default());
        gz.write_all(MAGIC).map_err(|e| Error::io(path, e))?;
        bincode::serde::encode_into_std_write(shard, &mut gz, bincode::config::standard())
            .map_err(|e| Error::context(path.display().to_string(), e))?;
        let mut file = gz.finish().map_err(|e| Error::io(path, e))?;
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

/// Whether `path` is a shard (rather than an instances file).
pub fn is_shard(path: &Path) -> Result<bool> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut head = [0u8; MAGIC.len()];
    let mut gz = flate2::read::GzDecoder::new(BufReader::new(file));
    Ok(gz.read_exact(&mut head).is_ok() && &head == MAGIC)
}

pub fn read_shard(path: &Path) -> Result<Shard> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut gz = BufReader::new(flate2::read::GzDecoder::new(BufReader::new(file)));
    let mut head = [0u8; MAGIC.len()];
    gz.read_exact(&mut head).map_err(|e| Error::io(path, e))?;
    if &head != MAGIC {
        return Err(Error::context(path.display().to_string(), "not a coret-tui training shard"));
    }
    bincode::serde::decode_from_std_read(&mut gz, bincode::config::standard())
        .map_err(|e| Error::context(path.display().to_string(), format!("corrupt shard: {e}")))
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
        let jsonl = dir.path().join("i.jsonl");
        std::fs::write(&jsonl, "{\"instance_id\": \"x\"}\n").unwrap();
        assert!(!is_shard(&jsonl).unwrap());
        assert!(read_shard(&jsonl).is_err());
    }
}
