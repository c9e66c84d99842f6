//! How much each token of a text counts in its static vector: its row (already scaled by its
//! global SIF weight) times the repository's inverse document frequency of the token (BM25's,
//! over the repository's chunks: a word every file uses says nothing about which one an issue
//! means), times a saturating count (`1 + ln tf`: a token repeated fifty times is not fifty
//! times the evidence).

use std::collections::HashMap;

/// Inverse document frequencies of token ids over one repository's chunks.
#[derive(Clone, Debug)]
pub struct Idf {
    weights: Vec<f32>,
}

impl Idf {
    /// BM25's idf, `ln(1 + (N − df + 0.5) / (df + 0.5))`, of every id in `vocab` over `bags`
    /// (one bag of ids per document).
    pub fn from_bags<B: AsRef<[u32]>>(bags: &[B], vocab: usize) -> Self {
        let mut df = vec![0u32; vocab];
        let mut seen = vec![u32::MAX; vocab];
        for (d, bag) in bags.iter().enumerate() {
            for &id in bag.as_ref() {
                let i = id as usize;
                if i < vocab && seen[i] != d as u32 {
                    seen[i] = d as u32;
                    df[i] += 1;
                }
            }
        }
        let n = bags.len() as f32;
        let weights = df.iter().map(|&d| (1.0 + (n - d as f32 + 0.5) / (d as f32 + 0.5)).ln()).collect();
        Idf { weights }
    }

    /// The weight of token `id` (that of an unseen token past the vocabulary's end).
    pub fn weight(&self, id: u32) -> f32 {
        self.weights
            .get(id as usize)
            .copied()
            .unwrap_or_else(|| self.weights.iter().copied().fold(0.0, f32::max))
    }
}

/// Each distinct id of `ids` and the weight it enters the sum with: `idf × (1 + ln tf)`
/// (`idf` 1 without an [`Idf`]).
pub fn token_weights(ids: &[u32], idf: Option<&Idf>) -> Vec<(u32, f32)> {
    let mut tf: HashMap<u32, u32> = HashMap::with_capacity(ids.len());
    for &id in ids {
        *tf.entry(id).or_insert(0) += 1;
    }
    let mut out: Vec<(u32, f32)> = tf
        .into_iter()
        .map(|(id, n)| (id, idf.map_or(1.0, |w| w.weight(id)) * (1.0 + (n as f32).ln())))
        .collect();
    // A fixed order: the same bag always sums in the same order, so to the same bits.
    out.sort_unstable_by_key(|p| p.0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_in_every_document_weighs_least_and_repeats_saturate() {
        let bags = vec![vec![1, 2], vec![1, 3], vec![1, 3, 3]];
        let idf = Idf::from_bags(&bags, 5);
        assert!(idf.weight(1) < idf.weight(3) && idf.weight(3) < idf.weight(2));
        assert!(idf.weight(4) > idf.weight(2), "never seen: rarest");
        let w = token_weights(&[3, 3, 3, 3, 2], Some(&idf));
        let (w3, w2) = (w.iter().find(|p| p.0 == 3).unwrap().1, w.iter().find(|p| p.0 == 2).unwrap().1);
        assert!(w3 < 4.0 * idf.weight(3) && w3 > idf.weight(3), "four repeats count less than four times");
        assert!((w2 - idf.weight(2)).abs() < 1e-6);
        assert!(token_weights(&[], Some(&idf)).is_empty());
    }
}
