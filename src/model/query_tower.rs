//! The query tower (README "Towers"): what turns an issue into a vector, apart from the chunk
//! tower that embeds (and caches) every chunk.
//!
//! The query tower is the chunk tower's encoder followed by a small trained **adapter** on the
//! pooled query vector: `q' = normalize(q + W·q + b)`. `W = 0, b = 0` is the pretrained (tied)
//! query tower, so the adapter only learns a correction. Chunk vectors never depend on it: a
//! new query tower re-embeds nothing.
//!
//! An adapter is one safetensors file (`w` [H, H], `b` [H], f32) whose metadata names the chunk
//! tower it was trained against (`coret.base`, the encoder's model id). The project ships its
//! own (`models/query-tower.safetensors`, compiled into the binary and sha256-checked against
//! `models/query-tower.sha256`); `--query-model trained` uses it, `--query-model FILE` loads
//! another, and the default (`pretrained`) uses none: measured on held-out sympy, the shipped
//! adapter did not beat the pretrained query tower (README "Results").

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};

use super::encoder::Encoder;
use super::weights::hex;
use crate::error::{Error, Result};

/// The adapter shipped with the project, trained by its own `--train --tower query` from
/// `train-prs` (see `models/README.md`).
const BUILTIN: &[u8] = include_bytes!("../../models/query-tower.safetensors");
const BUILTIN_SHA256: &str = include_str!("../../models/query-tower.sha256");
const BUILTIN_NAME: &str = "models/query-tower.safetensors (built in)";

/// Metadata keys of an adapter file.
pub const META_FORMAT: &str = "coret.format";
pub const META_BASE: &str = "coret.base";
const FORMAT: &str = "coret-query-adapter-v1";

/// Which query tower a run uses (`--query-model`).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum QueryTowerChoice {
    /// The project's trained adapter, when it was trained for the chunk tower in use.
    Trained,
    /// The chunk tower itself (tied, as the paper): no adapter. The default: the shipped
    /// adapter gained a little on the tuning instances and lost on held-out sympy (README
    /// "Results").
    #[default]
    Pretrained,
    /// An adapter file.
    File(PathBuf),
}

impl std::str::FromStr for QueryTowerChoice {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.trim() {
            "" => Err("empty query model (expected default, pretrained or an adapter file)".into()),
            "trained" | "adapter" => Ok(QueryTowerChoice::Trained),
            "pretrained" | "tied" | "none" | "default" => Ok(QueryTowerChoice::Pretrained),
            path => Ok(QueryTowerChoice::File(PathBuf::from(path))),
        }
    }
}

/// A trained correction of the pooled query vector.
#[derive(Clone, Debug, PartialEq)]
pub struct QueryAdapter {
    dim: usize,
    /// Row-major [dim, dim].
    w: Vec<f32>,
    b: Vec<f32>,
    /// The chunk tower's model id this adapter was trained against.
    base: String,
    /// `adapter-<sha256 prefix>`.
    name: String,
    metadata: HashMap<String, String>,
}

impl QueryAdapter {
    /// The zero correction (the pretrained query tower), for training to start from.
    pub fn identity(dim: usize, base: &str) -> Self {
        QueryAdapter {
            dim,
            w: vec![0.0; dim * dim],
            b: vec![0.0; dim],
            base: base.to_string(),
            name: "adapter-untrained".into(),
            metadata: HashMap::new(),
        }
    }

    pub fn from_parts(
        w: Vec<f32>,
        b: Vec<f32>,
        base: &str,
        metadata: HashMap<String, String>,
    ) -> Result<Self> {
        let dim = b.len();
        if w.len() != dim * dim || dim == 0 {
            return Err(Error::invalid(format!("query adapter: w has {} values for dim {dim}", w.len())));
        }
        let mut a = QueryAdapter { dim, w, b, base: base.to_string(), name: String::new(), metadata };
        a.name = format!("adapter-{}", &hex(&Sha256::digest(a.to_bytes()?))[..12]);
        Ok(a)
    }

    /// The built-in adapter, checked against its recorded sha256.
    pub fn builtin() -> Result<Self> {
        Self::from_bytes(BUILTIN, Some(BUILTIN_SHA256.trim()), BUILTIN_NAME)
    }

    /// Reads an adapter file; when `FILE.sha256` exists beside it, the content must match it.
    pub fn load(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        let side = path.with_file_name(format!(
            "{}.sha256",
            path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
        ));
        let expected = std::fs::read_to_string(&side).ok();
        Self::from_bytes(&bytes, expected.as_deref().map(str::trim), &path.display().to_string())
    }

    /// Parses adapter bytes; `origin` names the file in errors.
    pub fn from_bytes(bytes: &[u8], sha256: Option<&str>, origin: &str) -> Result<Self> {
        let fail = |m: String| Error::context(origin, m);
        let digest = hex(&Sha256::digest(bytes));
        if let Some(expected) = sha256 {
            let expected = expected.split_whitespace().next().unwrap_or("");
            if !expected.eq_ignore_ascii_case(&digest) {
                return Err(fail(format!(
                    "sha256 {digest} does not match the recorded {expected}: truncated or corrupt query adapter"
                )));
            }
        }
        let (_, meta) = safetensors::SafeTensors::read_metadata(bytes)
            .map_err(|e| fail(format!("truncated or corrupt, or not a query adapter (safetensors: {e})")))?;
        let metadata = meta.metadata().clone().unwrap_or_default();
        if metadata.get(META_FORMAT).map(String::as_str) != Some(FORMAT) {
            return Err(fail(format!("not a query adapter (metadata {META_FORMAT} is not {FORMAT})")));
        }
        let base =
            metadata.get(META_BASE).cloned().ok_or_else(|| fail(format!("no {META_BASE} in metadata")))?;
        let tensors = safetensors::SafeTensors::deserialize(bytes)
            .map_err(|e| fail(format!("truncated or corrupt query adapter (safetensors: {e})")))?;
        let read = |name: &str| -> Result<(Vec<usize>, Vec<f32>)> {
            let t = tensors.tensor(name).map_err(|e| fail(format!("tensor `{name}`: {e}")))?;
            if t.dtype() != safetensors::Dtype::F32 {
                return Err(fail(format!("tensor `{name}` is {:?}, expected F32", t.dtype())));
            }
            let values =
                t.data().chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
            Ok((t.shape().to_vec(), values))
        };
        let (w_shape, w) = read("w")?;
        let (b_shape, b) = read("b")?;
        let dim = b.len();
        if b_shape != [dim] || w_shape != [dim, dim] {
            return Err(fail(format!("shapes w {w_shape:?}, b {b_shape:?} are not [H, H] and [H]")));
        }
        if w.iter().chain(&b).any(|x| !x.is_finite()) {
            return Err(fail("non-finite weights".into()));
        }
        Ok(QueryAdapter { dim, w, b, base, name: format!("adapter-{}", &digest[..12]), metadata })
    }

    /// The file's bytes: safetensors with the format, base and any extra metadata. Written by
    /// hand with sorted keys (the safetensors crate orders metadata by hash), so the same
    /// weights always give the same bytes and sha256.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let mut meta: std::collections::BTreeMap<&str, &str> =
            self.metadata.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        meta.insert(META_FORMAT, FORMAT);
        meta.insert(META_BASE, &self.base);
        let (b_len, w_len) = (self.dim * 4, self.dim * self.dim * 4);
        let header = serde_json::json!({
            "__metadata__": meta,
            "b": {"dtype": "F32", "shape": [self.dim], "data_offsets": [0, b_len]},
            "w": {"dtype": "F32", "shape": [self.dim, self.dim], "data_offsets": [b_len, b_len + w_len]},
        });
        let mut text =
            serde_json::to_string(&header).map_err(|e| Error::invalid(format!("query adapter: {e}")))?;
        // The data starts 8-byte aligned, as safetensors writes it.
        while text.len() % 8 != 0 {
            text.push(' ');
        }
        let mut bytes = Vec::with_capacity(8 + text.len() + b_len + w_len);
        bytes.extend_from_slice(&(text.len() as u64).to_le_bytes());
        bytes.extend_from_slice(text.as_bytes());
        bytes.extend(self.b.iter().flat_map(|x| x.to_le_bytes()));
        bytes.extend(self.w.iter().flat_map(|x| x.to_le_bytes()));
        Ok(bytes)
    }

    /// Writes the adapter and its `.sha256` beside it.
    pub fn save(&self, path: &Path) -> Result<String> {
        let bytes = self.to_bytes()?;
        let digest = hex(&Sha256::digest(&bytes));
        std::fs::write(path, &bytes).map_err(|e| Error::io(path, e))?;
        let side = path.with_file_name(format!(
            "{}.sha256",
            path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
        ));
        std::fs::write(&side, format!("{digest}\n")).map_err(|e| Error::io(&side, e))?;
        Ok(digest)
    }

    pub fn dim(&self) -> usize {
        self.dim
    }
    pub fn base(&self) -> &str {
        &self.base
    }
    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn weights(&self) -> (&[f32], &[f32]) {
        (&self.w, &self.b)
    }
    pub fn metadata(&self) -> &HashMap<String, String> {
        &self.metadata
    }

    /// `normalize(q + W·q + b)`.
    pub fn apply(&self, q: &[f32]) -> Vec<f32> {
        let mut out: Vec<f32> = (0..self.dim)
            .map(|i| {
                let row = &self.w[i * self.dim..(i + 1) * self.dim];
                q[i] + self.b[i] + row.iter().zip(q).map(|(w, x)| w * x).sum::<f32>()
            })
            .collect();
        let norm = out.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
        out.iter_mut().for_each(|x| *x /= norm);
        out
    }
}

/// The two towers of the dense retriever: the chunk tower (an encoder whose vectors are cached,
/// keyed by it alone) and the query tower (the same encoder plus an optional adapter).
#[derive(Clone)]
pub struct Towers {
    pub chunk: Arc<Encoder>,
    pub adapter: Option<Arc<QueryAdapter>>,
}

impl Towers {
    /// Tied towers: the chunk tower embeds queries too.
    pub fn tied(chunk: Arc<Encoder>) -> Self {
        Towers { chunk, adapter: None }
    }

    /// The towers `choice` asks for on top of `chunk`. The built-in adapter applies only to the
    /// chunk tower it was trained for; otherwise the query tower is the pretrained one and the
    /// returned note says why. An adapter file for another chunk tower is an error.
    pub fn with_choice(chunk: Arc<Encoder>, choice: &QueryTowerChoice) -> Result<(Self, Option<String>)> {
        let adapter = match choice {
            QueryTowerChoice::Pretrained => return Ok((Self::tied(chunk), None)),
            QueryTowerChoice::Trained => {
                let a = QueryAdapter::builtin()?;
                if a.base != chunk.model_id() || a.dim != chunk.dim() {
                    let note = format!(
                        "the built-in query tower was trained for {}, not {}: queries use the chunk tower",
                        a.base,
                        chunk.model_id()
                    );
                    return Ok((Self::tied(chunk), Some(note)));
                }
                a
            }
            QueryTowerChoice::File(path) => {
                let a = QueryAdapter::load(path)?;
                if a.base != chunk.model_id() || a.dim != chunk.dim() {
                    return Err(Error::context(
                        path.display().to_string(),
                        format!(
                            "query adapter trained for {} (dim {}), the chunk tower is {} (dim {})",
                            a.base,
                            a.dim,
                            chunk.model_id(),
                            chunk.dim()
                        ),
                    ));
                }
                a
            }
        };
        Ok((Towers { chunk, adapter: Some(Arc::new(adapter)) }, None))
    }

    /// One query's unit vector, at most `max_len` tokens.
    pub fn embed_query(&self, text: &str, max_len: usize) -> Result<Vec<f32>> {
        let q = self.embed_query_pretrained(text, max_len)?;
        Ok(match &self.adapter {
            Some(a) => a.apply(&q),
            None => q,
        })
    }

    /// The chunk tower's own vector for a query (what adapters are trained on).
    pub fn embed_query_pretrained(&self, text: &str, max_len: usize) -> Result<Vec<f32>> {
        let mut rows = self.chunk.embed_queries_with_len(&[text.to_string()], max_len)?;
        Ok(rows.pop().unwrap_or_default())
    }

    /// Names both towers for stats and status lines.
    pub fn names(&self) -> TowerNames {
        TowerNames {
            chunk: self.chunk.model_id(),
            query: match &self.adapter {
                Some(a) => format!("{} + {}", self.chunk.model_id(), a.name),
                None => format!("{} (tied)", self.chunk.model_id()),
            },
        }
    }
}

/// What the JSON stats, the eval summary and the TUI call the towers.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct TowerNames {
    pub chunk: String,
    pub query: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adapter(dim: usize, base: &str) -> QueryAdapter {
        let w: Vec<f32> = (0..dim * dim).map(|i| (i % 5) as f32 * 0.01).collect();
        QueryAdapter::from_parts(w, vec![0.02; dim], base, [("k".to_string(), "v".to_string())].into())
            .unwrap()
    }

    #[test]
    fn the_shipped_adapter_loads_its_checksum_holds_and_it_fits_the_default_chunk_tower() {
        let a = QueryAdapter::builtin().unwrap();
        assert_eq!(a.dim(), 384);
        assert!(
            a.base().starts_with("all-MiniLM-L6-v2-53aa51172d14"),
            "trained for the default model: {}",
            a.base()
        );
        let digest = hex(&Sha256::digest(BUILTIN));
        assert_eq!(digest, BUILTIN_SHA256.trim());
        assert!(BUILTIN.len() <= 8 << 20, "the artifact stays under 8 MB");
        let changed = a.apply(&{
            let mut q = vec![0.0; 384];
            q[0] = 1.0;
            q
        });
        assert!((changed.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-4, "unit output");
    }

    #[test]
    fn a_saved_adapter_round_trips_and_a_truncated_copy_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.safetensors");
        let a = adapter(8, "base-1");
        a.save(&path).unwrap();
        let back = QueryAdapter::load(&path).unwrap();
        assert_eq!(back.weights(), a.weights());
        assert_eq!(back.base(), "base-1");
        assert_eq!(back.name(), a.name());
        assert_eq!(back.metadata().get("k").map(String::as_str), Some("v"));

        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 10]).unwrap();
        let err = QueryAdapter::load(&path).unwrap_err().to_string();
        assert!(err.contains("q.safetensors") && err.contains("truncated or corrupt"), "{err}");
        // Without the recorded checksum the format itself still catches it.
        std::fs::remove_file(path.with_file_name("q.safetensors.sha256")).unwrap();
        let err = QueryAdapter::load(&path).unwrap_err().to_string();
        assert!(err.contains("q.safetensors") && err.contains("truncated or corrupt"), "{err}");
        let missing = QueryAdapter::load(&dir.path().join("none.safetensors")).unwrap_err().to_string();
        assert!(missing.contains("none.safetensors"), "{missing}");
    }

    #[test]
    fn the_same_weights_give_the_same_bytes() {
        let meta = |order: &[usize]| -> HashMap<String, String> {
            order.iter().map(|i| (format!("key{i}"), format!("value{i}"))).collect()
        };
        let w = vec![0.5; 16];
        let a =
            QueryAdapter::from_parts(w.clone(), vec![0.1; 4], "b", meta(&[0, 1, 2, 3, 4, 5, 6, 7])).unwrap();
        let b = QueryAdapter::from_parts(w, vec![0.1; 4], "b", meta(&[7, 6, 5, 4, 3, 2, 1, 0])).unwrap();
        assert_eq!(a.to_bytes().unwrap(), b.to_bytes().unwrap());
        assert_eq!(a.name(), b.name());
        let back = QueryAdapter::from_bytes(&a.to_bytes().unwrap(), None, "x").unwrap();
        assert_eq!(back.metadata().len(), 10, "eight keys, format and base");
    }

    #[test]
    fn zero_weights_are_the_pretrained_query_tower() {
        let a = QueryAdapter::identity(3, "b");
        let q = [0.6, 0.8, 0.0];
        let out = a.apply(&q);
        assert!(out.iter().zip(q).all(|(x, y)| (x - y).abs() < 1e-6), "{out:?}");
    }

    #[test]
    fn query_model_names_parse() {
        assert_eq!("trained".parse::<QueryTowerChoice>().unwrap(), QueryTowerChoice::Trained);
        assert_eq!("default".parse::<QueryTowerChoice>().unwrap(), QueryTowerChoice::default());
        assert_eq!("pretrained".parse::<QueryTowerChoice>().unwrap(), QueryTowerChoice::Pretrained);
        assert_eq!(
            "x.safetensors".parse::<QueryTowerChoice>().unwrap(),
            QueryTowerChoice::File("x.safetensors".into())
        );
        assert!("".parse::<QueryTowerChoice>().is_err());
    }
}
