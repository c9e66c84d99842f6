//! The second stage (#46): a cross-encoder that reads the issue and a candidate together and
//! re-orders the hybrid's head.
//!
//! The model is the dense encoder's own architecture (all-MiniLM-L6-v2 with LoRA adapters,
//! trained from the shipped CoRet adapters by `--train-reranker`) reading one
//! `[CLS] issue [SEP] chunk [SEP]` pair ([`pair::join`]); its mean-pooled, unit-length output
//! times a learned vector ([`HEAD_FILE`]) is the pair's score. Mean pooling rather than `[CLS]`
//! because that is what the adapters it starts from were trained to make meaningful.
//!
//! A reranker directory holds the adapters ([`ADAPTER_FILE`]), the head and [`SPEC_FILE`]
//! (lengths and depth).

pub mod pair;

use std::path::Path;

use candle_core::Device;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::chunk::Chunk;
use crate::error::{Error, Result};
use crate::index::{Hit, Retriever};
use crate::model::lora::{with_lora, LoraAdapter};
use crate::model::{Encoder, EncoderInput};

pub const ADAPTER_FILE: &str = "coret-lora.safetensors";
pub const HEAD_FILE: &str = "rerank-head.safetensors";
pub const SPEC_FILE: &str = "reranker.json";
/// The head's tensor name in [`HEAD_FILE`].
pub const HEAD_TENSOR: &str = "rerank.head";
/// Scores are `SCORE_SCALE · pooled · head`. The pooled vector has unit length, so without a
/// scale a head growing from zero at Adam's pace (~lr per update) keeps every score within
/// hundredths of the others and the softmax flat for hundreds of updates: session 25's first
/// run (80 updates, unscaled) ended at its starting loss and ranked the 51 worse than random.
/// 20 is the encoder's own 1/τ (τ = 0.05).
pub const SCORE_SCALE: f32 = 20.0;

/// How pairs are laid out and how deep the re-ordering goes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RerankSpec {
    /// Positions of a pair.
    pub max_len: usize,
    /// Positions the issue may take at most (with its `[CLS]` and `[SEP]`).
    pub query_len: usize,
    /// The hybrid's top this-many are re-scored; the rest keep their order below them.
    pub depth: usize,
}

impl RerankSpec {
    /// `dir/reranker.json`.
    pub fn read(dir: &Path) -> Result<RerankSpec> {
        let path = dir.join(SPEC_FILE);
        let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
        serde_json::from_str(&text).map_err(|e| Error::context(path.display().to_string(), e))
    }
}

impl Default for RerankSpec {
    fn default() -> Self {
        // 384 positions: a 512-position pair costs 1.5× more per candidate on the CPU.
        RerankSpec { max_len: 384, query_len: 160, depth: 20 }
    }
}

/// Whether a ranking is one the reranker re-orders: the hybrid's alone (the default ranking,
/// whose head it was measured on). Every client asks here.
pub fn reorders(retriever: Retriever) -> bool {
    retriever == Retriever::Hybrid
}

/// A candidate as the reranker reads it: its text, path first, without call-graph neighbours
/// (as the training shards hold chunks).
pub fn input_of(chunk: &Chunk) -> EncoderInput {
    EncoderInput { chunk: chunk.text.clone(), neighbours: Vec::new() }
}

pub struct Reranker {
    encoder: Encoder,
    head: Vec<f32>,
    pub spec: RerankSpec,
}

impl Reranker {
    /// Loads `dir` over `base`, the pretrained encoder its adapters were trained on (its
    /// weights kept; `max_len` at least the spec's).
    pub fn load(dir: &Path, base: &Encoder) -> Result<Reranker> {
        let spec = RerankSpec::read(dir)?;
        let adapter_path = dir.join(ADAPTER_FILE);
        let adapter = LoraAdapter::load(&adapter_path)?;
        let encoder = with_lora(base, &adapter, &adapter_path.display().to_string())?;
        let head_path = dir.join(HEAD_FILE);
        let ctx = head_path.display().to_string();
        let tensors =
            candle_core::safetensors::load(&head_path, &Device::Cpu).map_err(|e| Error::context(&ctx, e))?;
        let head = tensors
            .get(HEAD_TENSOR)
            .ok_or_else(|| Error::context(&ctx, format!("no tensor {HEAD_TENSOR}")))?
            .flatten_all()
            .and_then(|t| t.to_vec1::<f32>())
            .map_err(|e| Error::context(&ctx, e))?;
        if head.len() != encoder.dim() {
            return Err(Error::context(
                ctx,
                format!("a head of {} for a {}-wide encoder", head.len(), encoder.dim()),
            ));
        }
        if encoder.max_len() < spec.max_len {
            return Err(Error::invalid(format!(
                "the reranker reads {} positions; the encoder was loaded for {}",
                spec.max_len,
                encoder.max_len()
            )));
        }
        Ok(Reranker { encoder, head, spec })
    }

    /// One score per candidate for `query` (higher: more likely to be edited).
    pub fn score(&self, query: &str, candidates: &[EncoderInput]) -> Result<Vec<f32>> {
        let tok = self.encoder.input_tokenizer();
        let q = tok.query(query, self.spec.query_len)?;
        let pairs = candidates
            .par_iter()
            .map(|c| {
                let chunk = tok.input(c, self.spec.max_len)?;
                Ok(pair::join(&q.ids, &chunk.ids, self.spec.max_len, self.spec.query_len))
            })
            .collect::<Result<Vec<_>>>()?;
        let pooled = self.encoder.embed_tokenized(&pairs, &mut |_, _| Ok(()))?;
        Ok(pooled
            .iter()
            .map(|v| SCORE_SCALE * v.iter().zip(&self.head).map(|(a, b)| a * b).sum::<f32>())
            .collect())
    }

    /// `hits` with the first [`RerankSpec::depth`] re-ordered by score (their scores replaced
    /// by the reranker's); the rest follow in their order. `input_of(chunk)` is the candidate as
    /// the dense encoder reads it.
    pub fn rerank(
        &self,
        query: &str,
        hits: &[Hit],
        input_of: impl Fn(u32) -> EncoderInput,
    ) -> Result<Vec<Hit>> {
        let depth = self.spec.depth.min(hits.len());
        let inputs: Vec<EncoderInput> = hits[..depth].iter().map(|h| input_of(h.chunk)).collect();
        let scores = self.score(query, &inputs)?;
        let mut head: Vec<(usize, Hit)> = hits[..depth]
            .iter()
            .zip(scores)
            .map(|(h, s)| Hit { chunk: h.chunk, score: s })
            .enumerate()
            .collect();
        // Ties keep the hybrid's order.
        head.sort_by(|a, b| b.1.score.total_cmp(&a.1.score).then(a.0.cmp(&b.0)));
        Ok(head.into_iter().map(|(_, h)| h).chain(hits[depth..].iter().cloned()).collect())
    }
}
