//! The two towers of the dense retriever (docs/GUIDE.md "Towers"): the chunk
//! tower embeds (and caches) every chunk, the query tower embeds the issue. They are tied, as
//! in the paper: one encoder, whatever weights it was loaded with (`--weights`,
//! `--tower-layers`), serves both. Untied query towers trained against frozen chunk vectors
//! were measured and removed (docs/RESULTS.md "Removed query-side experiments").

use std::sync::Arc;

use super::encoder::Encoder;
use crate::error::{Error, Result};

/// The towers of the dense retriever: one encoder for chunks and queries. Chunk vectors are
/// cached keyed by this encoder's fingerprint.
#[derive(Clone)]
pub struct Towers {
    pub chunk: Arc<Encoder>,
}

impl Towers {
    /// Tied towers: the chunk tower embeds queries too.
    pub fn tied(chunk: Arc<Encoder>) -> Self {
        Towers { chunk }
    }

    /// One query's unit vector, at most `max_len` tokens.
    pub fn embed_query(&self, text: &str, max_len: usize) -> Result<Vec<f32>> {
        let mut rows = self.chunk.embed_queries_with_len(&[text.to_string()], max_len)?;
        rows.pop().ok_or_else(|| Error::invalid("the encoder returned no query vector"))
    }

    /// Names both towers for stats and status lines (with `bf16` where the products run so).
    pub fn names(&self) -> TowerNames {
        let chunk = match self.chunk.precision() {
            crate::model::Precision::F32 => self.chunk.model_id(),
            p => format!("{} {p}", self.chunk.model_id()),
        };
        TowerNames { query: format!("{chunk} (tied)"), chunk }
    }
}

/// What the JSON stats, the eval summary and the TUI call the towers.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct TowerNames {
    pub chunk: String,
    pub query: String,
}
