//! The file format shared by trained weights laid over a model (LoRA adapters, tower layers):
//! one safetensors file whose metadata says what it is (`coret.format`) and which model it was
//! trained from (`coret.base`), with a `FILE.sha256` beside it that loading checks.
//!
//! Files are written by hand with sorted metadata and tensor names (the safetensors crate
//! orders metadata by hash), so the same weights always give the same bytes and sha256.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::weights::hex;
use crate::error::{Error, Result};

pub const META_FORMAT: &str = "coret.format";
pub const META_BASE: &str = "coret.base";

/// One tensor to write: name, safetensors dtype name (`F32`, `F16`), shape, little-endian data.
pub struct RawTensor {
    pub name: String,
    pub dtype: &'static str,
    pub shape: Vec<usize>,
    pub data: Vec<u8>,
}

/// The sha256 of `bytes`, hex.
pub fn digest(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// A file's name for caches and logs: `<prefix>-<first 12 hex digits of its sha256>`.
pub fn short_name(prefix: &str, bytes: &[u8]) -> String {
    format!("{prefix}-{}", &digest(bytes)[..12])
}

/// Rounds every value to f16 (so what is used is what is saved) and orders the tensors by
/// name (so equal contents give equal files).
pub fn round_to_f16(tensors: &mut [super::LayerTensor]) {
    for t in tensors.iter_mut() {
        t.values.iter_mut().for_each(|x| *x = half::f16::from_f32(*x).to_f32());
    }
    tensors.sort_by(|a, b| a.name.cmp(&b.name));
}

/// `FILE.sha256` beside `path`.
pub fn sidecar(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!("{name}.sha256"))
}

/// A file's bytes and the sha256 recorded beside it, if any.
pub fn read(path: &Path) -> Result<(Vec<u8>, Option<String>)> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let expected = std::fs::read_to_string(sidecar(path)).ok();
    Ok((bytes, expected))
}

/// Checks `bytes` against a recorded sha256 (first word of the sidecar's text).
pub fn verify(bytes: &[u8], expected: Option<&str>, origin: &str) -> Result<()> {
    let Some(expected) = expected else { return Ok(()) };
    let expected = expected.split_whitespace().next().unwrap_or("");
    let actual = digest(bytes);
    if expected.eq_ignore_ascii_case(&actual) {
        Ok(())
    } else {
        Err(Error::context(
            origin,
            format!("sha256 {actual} does not match the recorded {expected}: truncated or corrupt file"),
        ))
    }
}

/// The metadata of a tower file (its `coret.format` is checked by the caller).
fn metadata(bytes: &[u8], origin: &str) -> Result<HashMap<String, String>> {
    let (_, meta) = safetensors::SafeTensors::read_metadata(bytes).map_err(|e| {
        Error::context(origin, format!("truncated or corrupt, or not a tower file (safetensors: {e})"))
    })?;
    Ok(meta.metadata().clone().unwrap_or_default())
}

/// Checks `bytes` against `sha256`, then that the metadata names `format`; the metadata and the
/// model it names (`coret.base`). `what` names the kind in errors ("LoRA adapter file").
pub fn open(
    bytes: &[u8],
    sha256: Option<&str>,
    origin: &str,
    format: &str,
    what: &str,
) -> Result<(HashMap<String, String>, String)> {
    verify(bytes, sha256, origin)?;
    let meta = metadata(bytes, origin)?;
    if meta.get(META_FORMAT).map(String::as_str) != Some(format) {
        return Err(Error::context(origin, format!("not a {what} (metadata {META_FORMAT} is not {format})")));
    }
    let base = meta
        .get(META_BASE)
        .cloned()
        .ok_or_else(|| Error::context(origin, format!("no {META_BASE} in metadata")))?;
    Ok((meta, base))
}

/// The bytes of a safetensors file holding `tensors` (written in name order) and `meta`.
pub fn to_bytes(mut tensors: Vec<RawTensor>, meta: &BTreeMap<String, String>) -> Result<Vec<u8>> {
    tensors.sort_by(|a, b| a.name.cmp(&b.name));
    let mut header = serde_json::Map::new();
    header.insert(
        "__metadata__".into(),
        serde_json::to_value(meta).map_err(|e| Error::invalid(e.to_string()))?,
    );
    let mut offset = 0;
    for t in &tensors {
        let end = offset + t.data.len();
        header.insert(
            t.name.clone(),
            serde_json::json!({"dtype": t.dtype, "shape": t.shape, "data_offsets": [offset, end]}),
        );
        offset = end;
    }
    // Insertion order or sorted (serde_json's `preserve_order`): deterministic either way.
    let mut text = serde_json::to_string(&header).map_err(|e| Error::invalid(e.to_string()))?;
    // The data starts 8-byte aligned, as safetensors writes it.
    while text.len() % 8 != 0 {
        text.push(' ');
    }
    let mut bytes = Vec::with_capacity(8 + text.len() + offset);
    bytes.extend_from_slice(&(text.len() as u64).to_le_bytes());
    bytes.extend_from_slice(text.as_bytes());
    for t in tensors {
        bytes.extend(t.data);
    }
    Ok(bytes)
}

/// Writes `bytes` to `path` and their sha256 beside it; returns the sha256.
pub fn save(path: &Path, bytes: &[u8]) -> Result<String> {
    let sum = digest(bytes);
    std::fs::write(path, bytes).map_err(|e| Error::io(path, e))?;
    let side = sidecar(path);
    std::fs::write(&side, format!("{sum}\n")).map_err(|e| Error::io(&side, e))?;
    Ok(sum)
}

/// Tensors stored as f16 (trained layers, LoRA factors) as `RawTensor`s to write.
pub fn f16_raw(tensors: &[super::LayerTensor]) -> Vec<RawTensor> {
    tensors
        .iter()
        .map(|t| RawTensor {
            name: t.name.clone(),
            dtype: "F16",
            shape: t.shape.clone(),
            data: t.values.iter().flat_map(|x| half::f16::from_f32(*x).to_le_bytes()).collect(),
        })
        .collect()
}

/// Every tensor of a safetensors file that must hold f16 only, as f32 values in name order;
/// `what` names the kind of file in errors ("tower layers file", "LoRA adapter").
pub fn read_f16(bytes: &[u8], origin: &str, what: &str) -> Result<Vec<super::LayerTensor>> {
    let fail = |m: String| Error::context(origin, m);
    let st = safetensors::SafeTensors::deserialize(bytes)
        .map_err(|e| fail(format!("truncated or corrupt {what} (safetensors: {e})")))?;
    let mut tensors = Vec::new();
    for (name, view) in st.tensors() {
        if view.dtype() != safetensors::Dtype::F16 {
            return Err(fail(format!("tensor `{name}` is {:?}, expected F16", view.dtype())));
        }
        let values =
            view.data().chunks_exact(2).map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f32()).collect();
        tensors.push(super::LayerTensor { name, shape: view.shape().to_vec(), values });
    }
    tensors.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(tensors)
}
