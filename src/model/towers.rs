//! The two towers of the dense retriever (docs/GUIDE.md "Towers"): the chunk
//! tower embeds (and caches) every chunk, the query tower embeds the issue. They are tied, as
//! in the paper: one encoder, whatever weights it was loaded with (`--weights`,
//! `--tower-layers`), serves both. Untied query towers trained against frozen chunk vectors
//! were measured and removed (docs/RESULTS.md "Removed query-side experiments").

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use super::encoder::Encoder;
use crate::error::{Error, Result};

/// The towers of the dense retriever: one encoder for chunks and queries. Chunk vectors are
/// cached keyed by this encoder's fingerprint.
#[derive(Clone)]
pub struct Towers {
    pub chunk: Arc<Encoder>,
    /// The last queries' vectors: an agent asks again after each edit, and a search after an
    /// index update, the TUI's two columns and the MCP server's attached clients repeat one
    /// text; its vector depends on the text, the length and the encoder alone.
    recent: Arc<Mutex<VecDeque<RecentQuery>>>,
}

/// A query's text, the length it was embedded at and its vector.
type RecentQuery = (String, usize, Vec<f32>);

/// How many query vectors [`Towers`] keeps.
const RECENT_QUERIES: usize = 64;

impl Towers {
    /// Tied towers: the chunk tower embeds queries too.
    pub fn tied(chunk: Arc<Encoder>) -> Self {
        Towers { chunk, recent: Default::default() }
    }

    /// One query's unit vector, at most `max_len` tokens.
    pub fn embed_query(&self, text: &str, max_len: usize) -> Result<Vec<f32>> {
        let recent = || self.recent.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, _, v)) = recent().iter().find(|(t, n, _)| *n == max_len && t == text) {
            return Ok(v.clone());
        }
        let mut rows = self.chunk.embed_queries_with_len(&[text.to_string()], max_len)?;
        let v = rows.pop().ok_or_else(|| Error::invalid("the encoder returned no query vector"))?;
        let mut recent = recent();
        if recent.len() == RECENT_QUERIES {
            recent.pop_front();
        }
        recent.push_back((text.to_string(), max_len, v.clone()));
        Ok(v)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::EncoderOptions;

    /// A repeated query is answered from the towers' cache with the very vector the encoder
    /// gives it; another length or another text is embedded anew.
    #[test]
    fn a_repeated_query_gets_the_encoders_own_vector_back() {
        let dir = tempfile::tempdir().unwrap();
        crate::testkit::write_tiny_bert(dir.path(), &["cart", "total", "discount", "price"]);
        let opts = EncoderOptions { max_len: 64, ..EncoderOptions::default() };
        let encoder = Arc::new(Encoder::load(dir.path(), &candle_core::Device::Cpu, opts).unwrap());
        let towers = Towers::tied(encoder.clone());
        let fresh =
            |text: &str, n: usize| encoder.embed_queries_with_len(&[text.to_string()], n).unwrap().remove(0);
        let first = towers.embed_query("cart total discount", 32).unwrap();
        let again = towers.embed_query("cart total discount", 32).unwrap();
        assert_eq!(first, fresh("cart total discount", 32));
        assert_eq!(again, first, "the cached vector is the encoder's, to the bit");
        let short = towers.embed_query("cart total discount", 2).unwrap();
        assert_eq!(short, fresh("cart total discount", 2), "another length is its own entry");
        assert_ne!(short, first);
        for i in 0..RECENT_QUERIES + 1 {
            towers.embed_query(&format!("price {i}"), 32).unwrap();
        }
        assert_eq!(towers.recent.lock().unwrap().len(), RECENT_QUERIES, "the cache stays bounded");
    }
}
