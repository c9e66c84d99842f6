//! The query adapter: a trained correction of the pooled query vector,
//! `q' = normalize(q + W·q + b)`. `W = 0, b = 0` is the pretrained (tied) query tower, so the
//! adapter only learns a correction. One file (`w` [H, H], `b` [H], f32; see `tower_file`).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use super::tower_file::{self, RawTensor, META_BASE, META_FORMAT};
use crate::error::{Error, Result};

pub const ADAPTER_FORMAT: &str = "coret-query-adapter-v1";

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
        a.name = format!("adapter-{}", &tower_file::digest(&a.to_bytes()?)[..12]);
        Ok(a)
    }

    /// Reads an adapter file; when `FILE.sha256` exists beside it, the content must match it.
    pub fn load(path: &Path) -> Result<Self> {
        let (bytes, expected) = tower_file::read(path)?;
        Self::from_bytes(&bytes, expected.as_deref(), &path.display().to_string())
    }

    /// Parses adapter bytes; `origin` names the file in errors.
    pub fn from_bytes(bytes: &[u8], sha256: Option<&str>, origin: &str) -> Result<Self> {
        let fail = |m: String| Error::context(origin, m);
        let (metadata, base) = tower_file::open(bytes, sha256, origin, ADAPTER_FORMAT, "query adapter")?;
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
        let name = format!("adapter-{}", &tower_file::digest(bytes)[..12]);
        Ok(QueryAdapter { dim, w, b, base, name, metadata })
    }

    /// The file's bytes: safetensors with the format, base and any extra metadata.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let mut meta: BTreeMap<String, String> =
            self.metadata.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        meta.insert(META_FORMAT.into(), ADAPTER_FORMAT.into());
        meta.insert(META_BASE.into(), self.base.clone());
        let tensors = vec![
            RawTensor {
                name: "b".into(),
                dtype: "F32",
                shape: vec![self.dim],
                data: tower_file::f32_bytes(&self.b),
            },
            RawTensor {
                name: "w".into(),
                dtype: "F32",
                shape: vec![self.dim, self.dim],
                data: tower_file::f32_bytes(&self.w),
            },
        ];
        tower_file::to_bytes(tensors, &meta)
    }

    /// Writes the adapter and its `.sha256` beside it.
    pub fn save(&self, path: &Path) -> Result<String> {
        tower_file::save(path, &self.to_bytes()?)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn adapter(dim: usize, base: &str) -> QueryAdapter {
        let w: Vec<f32> = (0..dim * dim).map(|i| (i % 5) as f32 * 0.01).collect();
        QueryAdapter::from_parts(w, vec![0.02; dim], base, [("k".to_string(), "v".to_string())].into())
            .unwrap()
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
}
