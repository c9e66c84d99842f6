//! Toy retrievers for the demo backend: a real BM25 over identifier pieces, a "dense" cosine
//! over character trigrams (different enough to disagree with BM25), and reciprocal rank fusion.

use crate::search::Hit;
use std::collections::HashMap;

/// Identifier-aware tokens: split on non-alphanumerics and camelCase, lowercased.
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        let mut piece = String::new();
        let mut prev_lower = false;
        for c in word.chars() {
            if c.is_uppercase() && prev_lower && !piece.is_empty() {
                out.push(std::mem::take(&mut piece).to_lowercase());
            }
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
            piece.push(c);
        }
        out.push(piece.to_lowercase());
    }
    out.retain(|t| t.len() > 1);
    out
}

pub struct Bm25 {
    docs: Vec<HashMap<String, f32>>,
    lengths: Vec<f32>,
    df: HashMap<String, f32>,
}

impl Bm25 {
    pub fn new(texts: &[&str]) -> Self {
        let mut df: HashMap<String, f32> = HashMap::new();
        let mut docs = Vec::new();
        let mut lengths = Vec::new();
        for text in texts {
            let toks = tokens(text);
            let mut tf: HashMap<String, f32> = HashMap::new();
            for t in &toks {
                *tf.entry(t.clone()).or_default() += 1.0;
            }
            for t in tf.keys() {
                *df.entry(t.clone()).or_default() += 1.0;
            }
            lengths.push(toks.len() as f32);
            docs.push(tf);
        }
        Bm25 { docs, lengths, df }
    }

    pub fn scores(&self, query: &str) -> Vec<f32> {
        let (k1, b) = (1.2, 0.75);
        let n = self.docs.len() as f32;
        let avg = self.lengths.iter().sum::<f32>() / n.max(1.0);
        let mut q = tokens(query);
        q.sort();
        q.dedup();
        self.docs
            .iter()
            .zip(&self.lengths)
            .map(|(tf, len)| {
                q.iter()
                    .filter_map(|t| Some((tf.get(t)?, self.df.get(t)?)))
                    .map(|(f, df)| {
                        let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
                        idf * f * (k1 + 1.0) / (f + k1 * (1.0 - b + b * len / avg.max(1.0)))
                    })
                    .sum()
            })
            .collect()
    }
}

/// Cosine similarity of character-trigram counts.
pub fn trigram_scores(query: &str, texts: &[&str]) -> Vec<f32> {
    let q = trigrams(query);
    texts.iter().map(|t| cosine(&q, &trigrams(t))).collect()
}

fn trigrams(text: &str) -> HashMap<[char; 3], f32> {
    let chars: Vec<char> = text.to_lowercase().chars().filter(|c| c.is_alphanumeric() || *c == ' ').collect();
    let mut out = HashMap::new();
    for w in chars.windows(3) {
        *out.entry([w[0], w[1], w[2]]).or_insert(0.0) += 1.0;
    }
    out
}

fn cosine(a: &HashMap<[char; 3], f32>, b: &HashMap<[char; 3], f32>) -> f32 {
    let dot: f32 = a.iter().filter_map(|(k, x)| Some(x * b.get(k)?)).sum();
    let norm = |m: &HashMap<[char; 3], f32>| m.values().map(|v| v * v).sum::<f32>().sqrt();
    let denom = norm(a) * norm(b);
    if denom == 0.0 {
        0.0
    } else {
        dot / denom
    }
}

/// Best-first hits with a positive score; ties broken by id so results are deterministic.
pub fn top_k(scores: &[f32], k: usize) -> Vec<Hit> {
    let mut hits: Vec<Hit> = scores
        .iter()
        .enumerate()
        .filter(|(_, s)| **s > 0.0)
        .map(|(i, s)| Hit { chunk: i as u32, score: *s })
        .collect();
    hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.chunk.cmp(&b.chunk)));
    hits.truncate(k);
    hits
}

/// Reciprocal rank fusion (k = 60) of two rankings.
pub fn rrf(a: &[Hit], b: &[Hit], k: usize) -> Vec<Hit> {
    let mut fused: HashMap<u32, f32> = HashMap::new();
    for list in [a, b] {
        for (rank, hit) in list.iter().enumerate() {
            *fused.entry(hit.chunk).or_default() += 1.0 / (60.0 + rank as f32 + 1.0);
        }
    }
    let mut scores = vec![0.0; fused.keys().max().map_or(0, |m| *m as usize + 1)];
    for (id, s) in fused {
        scores[id as usize] = s;
    }
    top_k(&scores, k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_split_identifiers() {
        assert_eq!(tokens("applyDiscount tax_for(x)"), ["apply", "discount", "tax", "for"]);
    }

    #[test]
    fn bm25_prefers_documents_with_rare_query_terms() {
        let bm25 = Bm25::new(&["coupon discount", "cart items", "cart total"]);
        let hits = top_k(&bm25.scores("negative coupon"), 10);
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].chunk, 0);
    }

    #[test]
    fn rrf_rewards_agreement() {
        let a = [Hit { chunk: 1, score: 9.0 }, Hit { chunk: 2, score: 8.0 }];
        let b = [Hit { chunk: 2, score: 0.9 }, Hit { chunk: 3, score: 0.8 }];
        assert_eq!(rrf(&a, &b, 10)[0].chunk, 2);
    }
}
