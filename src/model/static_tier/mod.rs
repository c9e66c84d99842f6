//! The static tier (docs/GUIDE.md "Tiers"): one vector per vocabulary token, a text's vector
//! the normalised sum of its tokens' rows (each row already scaled by its token's weight).
//! It costs a lookup per token, so a repository's every chunk is embedded at BM25's pace and
//! every client can answer at once, while the transformer embeds in the background.
//!
//! The table is distilled from this project's own chunk tower (`build`) and fitted with the
//! CoRet loss (`fit`); the file is a safetensors like the adapters (`coret.format`
//! `coret-static/1`, int8 rows with a scale each, the tokenizer in its metadata so the tier
//! needs nothing else), with a `.sha256` beside it, compiled into the binary.

pub mod build;
pub mod fit;
pub mod weigh;
pub mod words;

use std::collections::BTreeMap;
use std::path::Path;

use rayon::prelude::*;

use super::tower_file::{self, RawTensor};
use crate::error::{Error, Result};
use words::WordPieces;

pub const STATIC_FORMAT: &str = "coret-static/1";
const META_TOKENIZER: &str = "coret.tokenizer";
const META_DIM: &str = "coret.dim";
const META_RECIPE: &str = "coret.recipe";
const ROWS: &str = "rows";
const SCALES: &str = "scales";
/// A chunk's tokens read at most (a 10 MB minified line costs no more than this).
pub const MAX_TOKENS: usize = 16_384;
/// The command that rebuilds the shipped table, named in every error about it.
pub const REBUILD: &str = "scripts/static/build.sh";

/// A static embedding table and the tokenizer its rows belong to.
pub struct StaticTable {
    dim: usize,
    rows: Vec<f32>,
    words: WordPieces,
    name: String,
    base: String,
    recipe: String,
}

impl StaticTable {
    /// From a file's bytes, checked against `sha256` when given; errors name `origin` and the
    /// command that rebuilds the table.
    pub fn from_bytes(bytes: &[u8], sha256: Option<&str>, origin: &str) -> Result<Self> {
        Self::parse(bytes, sha256, origin)
            .map_err(|e| Error::context(format!("{origin} (rebuild it with {REBUILD})"), e))
    }

    fn parse(bytes: &[u8], sha256: Option<&str>, origin: &str) -> Result<Self> {
        let (meta, base) = tower_file::open(bytes, sha256, origin, STATIC_FORMAT, "static table")?;
        let bad = |what: String| Error::context(origin.to_string(), what);
        let json = meta.get(META_TOKENIZER).ok_or_else(|| bad(format!("no {META_TOKENIZER} in metadata")))?;
        let tokenizer = tokenizers::Tokenizer::from_bytes(json.as_bytes())
            .map_err(|e| bad(format!("its tokenizer does not load: {e}")))?;
        let vocab = tokenizer.get_vocab_size(true);
        let st =
            safetensors::SafeTensors::deserialize(bytes).map_err(|e| bad(format!("safetensors: {e}")))?;
        let q = st.tensor(ROWS).map_err(|e| bad(format!("{ROWS}: {e}")))?;
        let s = st.tensor(SCALES).map_err(|e| bad(format!("{SCALES}: {e}")))?;
        let (shape, sshape) = (q.shape().to_vec(), s.shape().to_vec());
        if q.dtype() != safetensors::Dtype::I8 || s.dtype() != safetensors::Dtype::F32 {
            return Err(bad(format!("{ROWS} must be I8 and {SCALES} F32")));
        }
        if shape.len() != 2 || shape[0] != vocab || sshape != [vocab] || shape[1] == 0 {
            return Err(bad(format!(
                "rows {shape:?} and scales {sshape:?} do not fit its vocabulary of {vocab} tokens"
            )));
        }
        let dim = shape[1];
        let scales: Vec<f32> =
            s.data().chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        if scales.iter().any(|x| !x.is_finite()) {
            return Err(bad("a row's scale is not finite".into()));
        }
        let rows: Vec<f32> =
            q.data().iter().enumerate().map(|(i, &b)| b as i8 as f32 * scales[i / dim]).collect();
        let words = WordPieces::new(tokenizer, origin)?;
        let name = tower_file::short_name("static", bytes);
        let recipe = meta.get(META_RECIPE).cloned().unwrap_or_default();
        Ok(StaticTable { dim, rows, words, name, base, recipe })
    }

    /// Reads a table file, checking it against the `.sha256` beside it when there is one.
    pub fn load(path: &Path) -> Result<Self> {
        let origin = path.display().to_string();
        let (bytes, sha) = tower_file::read(path)
            .map_err(|e| Error::context(format!("{origin} (rebuild it with {REBUILD})"), e))?;
        Self::from_bytes(&bytes, sha.as_deref(), &origin)
    }

    /// The table shipped in the binary (`models/coret-static.safetensors`).
    pub fn builtin() -> Result<Self> {
        let (bytes, sha) = BUILTIN;
        Self::from_bytes(bytes, Some(sha), "models/coret-static.safetensors (built in)")
    }

    /// A table from rows (vocabulary × `dim`, f32) and the tokenizer they belong to: what
    /// `build` and `fit` produce, quantised as the file will hold it.
    pub fn from_rows(
        rows: &[f32],
        dim: usize,
        tokenizer_json: &str,
        base: &str,
        recipe: &str,
    ) -> Result<(Self, Vec<u8>)> {
        let bytes = to_file_bytes(rows, dim, tokenizer_json, base, recipe)?;
        let table = Self::from_bytes(&bytes, None, "static table")?;
        Ok((table, bytes))
    }

    /// `static-<sha256 prefix>`: vector caches are keyed by it.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The model the table was distilled from.
    pub fn base(&self) -> &str {
        &self.base
    }
    /// How it was made (the build's and the fit's settings).
    pub fn recipe(&self) -> &str {
        &self.recipe
    }
    pub fn dim(&self) -> usize {
        self.dim
    }
    pub fn vocab_size(&self) -> usize {
        self.rows.len() / self.dim
    }
    /// The weighted rows, vocabulary × dim (as dequantised from the file).
    pub fn rows(&self) -> &[f32] {
        &self.rows
    }
    pub fn words(&self) -> &WordPieces {
        &self.words
    }
    /// The weighted row of token `id` (zeros past the vocabulary).
    pub fn row(&self, id: u32) -> Option<&[f32]> {
        let i = id as usize;
        self.rows.get(i * self.dim..(i + 1) * self.dim)
    }

    /// The token ids of `text` this tier reads (at most [`MAX_TOKENS`]).
    pub fn ids(&self, text: &str) -> Result<Vec<u32>> {
        let mut out = Vec::new();
        self.words.extend_ids(text, &mut out, MAX_TOKENS)?;
        Ok(out)
    }

    /// The unit vector of a bag of ids; all zeros (never NaN) for a text with no token.
    pub fn embed_ids(&self, ids: &[u32]) -> Vec<f32> {
        self.embed_weighted(ids, None)
    }

    /// [`StaticTable::embed_ids`] with each token weighed by the repository's `idf` and a
    /// saturating count (`weigh`).
    pub fn embed_weighted(&self, ids: &[u32], idf: Option<&weigh::Idf>) -> Vec<f32> {
        let mut v = vec![0f32; self.dim];
        for (id, w) in weigh::token_weights(ids, idf) {
            if let Some(row) = self.row(id) {
                v.iter_mut().zip(row).for_each(|(a, b)| *a += w * b);
            }
        }
        normalise(&mut v);
        v
    }

    /// `text`'s unit vector.
    pub fn embed(&self, text: &str) -> Result<Vec<f32>> {
        Ok(self.embed_ids(&self.ids(text)?))
    }

    /// Every text's unit vector, on every core, in order.
    pub fn embed_all<S: AsRef<str> + Sync>(&self, texts: &[S]) -> Result<Vec<Vec<f32>>> {
        texts.par_iter().map(|t| self.embed(t.as_ref())).collect()
    }
}

/// Scales `v` to unit length; a zero (or non-finite) vector becomes all zeros.
pub fn normalise(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 && norm.is_finite() {
        v.iter_mut().for_each(|x| *x /= norm);
    } else {
        v.iter_mut().for_each(|x| *x = 0.0);
    }
}

/// The file's bytes: int8 rows with a scale each (a row's largest magnitude maps to 127).
fn to_file_bytes(
    rows: &[f32],
    dim: usize,
    tokenizer_json: &str,
    base: &str,
    recipe: &str,
) -> Result<Vec<u8>> {
    if dim == 0 || !rows.len().is_multiple_of(dim) || rows.iter().any(|x| !x.is_finite()) {
        return Err(Error::invalid("static rows must be finite and a whole number of rows"));
    }
    let vocab = rows.len() / dim;
    let mut q = Vec::with_capacity(rows.len());
    let mut scales = Vec::with_capacity(vocab * 4);
    for row in rows.chunks_exact(dim) {
        let max = row.iter().fold(0f32, |m, x| m.max(x.abs()));
        let scale = if max > 0.0 { max / 127.0 } else { 0.0 };
        scales.extend_from_slice(&scale.to_le_bytes());
        q.extend(row.iter().map(|x| {
            if scale > 0.0 {
                (x / scale).round().clamp(-127.0, 127.0) as i8 as u8
            } else {
                0
            }
        }));
    }
    let meta: BTreeMap<String, String> = [
        (tower_file::META_FORMAT.to_string(), STATIC_FORMAT.to_string()),
        (tower_file::META_BASE.to_string(), base.to_string()),
        (META_DIM.to_string(), dim.to_string()),
        (META_RECIPE.to_string(), recipe.to_string()),
        (META_TOKENIZER.to_string(), tokenizer_json.to_string()),
    ]
    .into();
    let tensors = vec![
        RawTensor { name: ROWS.into(), dtype: "I8", shape: vec![vocab, dim], data: q },
        RawTensor { name: SCALES.into(), dtype: "F32", shape: vec![vocab], data: scales },
    ];
    tower_file::to_bytes(tensors, &meta)
}

/// Writes a table file and its `.sha256` beside it; returns the sha256.
pub fn write(path: &Path, bytes: &[u8]) -> Result<String> {
    let sha = tower_file::digest(bytes);
    crate::cache::write_atomic(path, bytes)?;
    crate::cache::write_atomic(&tower_file::sidecar(path), format!("{sha}\n").as_bytes())?;
    Ok(sha)
}

/// The project's own table, compiled in, with its sha256 (`scripts/static/build.sh`).
const BUILTIN: (&[u8], &str) = (
    include_bytes!("../../../models/coret-static.safetensors"),
    include_str!("../../../models/coret-static.sha256"),
);

#[cfg(test)]
mod tests;
