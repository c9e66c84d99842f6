//! Retrievers and rank fusion.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Which ranking a caller asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Retriever {
    Bm25,
    Dense,
    Hybrid,
}

impl Retriever {
    pub const ALL: [Retriever; 3] = [Retriever::Bm25, Retriever::Dense, Retriever::Hybrid];

    pub fn as_str(self) -> &'static str {
        match self {
            Retriever::Bm25 => "bm25",
            Retriever::Dense => "dense",
            Retriever::Hybrid => "hybrid",
        }
    }
}

impl fmt::Display for Retriever {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Retriever {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "bm25" => Ok(Retriever::Bm25),
            "dense" | "coret" => Ok(Retriever::Dense),
            "hybrid" => Ok(Retriever::Hybrid),
            other => Err(format!("unknown retriever `{other}` (expected bm25, dense or hybrid)")),
        }
    }
}

/// One ranked result: a global chunk id and its retriever's score (higher is better).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hit {
    pub chunk: u32,
    pub score: f32,
}

/// Parameters of the hybrid ranking.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FusionParams {
    /// Reciprocal-rank-fusion constant: larger flattens the head of each list.
    pub rrf_k: f32,
    pub bm25_weight: f32,
    pub dense_weight: f32,
}

impl Default for FusionParams {
    fn default() -> Self {
        FusionParams { rrf_k: 60.0, bm25_weight: 1.0, dense_weight: 1.0 }
    }
}

/// Reciprocal rank fusion: each list contributes `weight / (rrf_k + rank)` to a chunk's score
/// (rank from 1). Rank-based, so BM25's unbounded scores and cosine similarities need no
/// calibration against each other. Returns the top `k`, best first.
pub fn fuse_rrf(bm25: &[Hit], dense: &[Hit], params: FusionParams, k: usize) -> Vec<Hit> {
    let mut scores: std::collections::HashMap<u32, f32> = std::collections::HashMap::new();
    for (list, weight) in [(bm25, params.bm25_weight), (dense, params.dense_weight)] {
        for (i, h) in list.iter().enumerate() {
            *scores.entry(h.chunk).or_default() += weight / (params.rrf_k + (i + 1) as f32);
        }
    }
    let mut hits: Vec<Hit> = scores.into_iter().map(|(chunk, score)| Hit { chunk, score }).collect();
    hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.chunk.cmp(&b.chunk)));
    hits.truncate(k);
    hits
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hits(ids: &[u32]) -> Vec<Hit> {
        ids.iter().map(|&chunk| Hit { chunk, score: 0.0 }).collect()
    }

    #[test]
    fn rrf_rewards_agreement() {
        let fused = fuse_rrf(&hits(&[1, 2, 3]), &hits(&[3, 4, 1]), FusionParams::default(), 10);
        let order: Vec<u32> = fused.iter().map(|h| h.chunk).collect();
        // 1: 1/61 + 1/63; 3: 1/63 + 1/61 (tie, lower id first); 2: 1/62; 4: 1/62.
        assert_eq!(order, [1, 3, 2, 4]);
        let expected = 1.0 / 61.0 + 1.0 / 63.0;
        assert!((fused[0].score - expected).abs() < 1e-6);
    }

    #[test]
    fn weights_can_silence_a_retriever() {
        let p = FusionParams { dense_weight: 0.0, ..FusionParams::default() };
        let fused = fuse_rrf(&hits(&[5, 6]), &hits(&[7]), p, 2);
        assert_eq!(fused.iter().map(|h| h.chunk).collect::<Vec<_>>(), [5, 6]);
    }

    #[test]
    fn parses_retriever_names() {
        assert_eq!("BM25".parse::<Retriever>(), Ok(Retriever::Bm25));
        assert_eq!("coret".parse::<Retriever>(), Ok(Retriever::Dense));
        assert!("x".parse::<Retriever>().is_err());
    }
}
