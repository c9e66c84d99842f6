//! Rank fusion: how the hybrid combines BM25, dense, history and the call graph, and how
//! test chunks are demoted.

use crate::index::Hit;
use crate::lang::Lang;
use std::fmt;
use std::str::FromStr;

/// How the hybrid combines its rankings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FusionMethod {
    /// Reciprocal rank fusion: each list gives `weight / (rrf_k + rank)`.
    Rrf,
    /// Standardised scores: each list gives `weight ×` its score above the score at
    /// [`FUSION_DEPTH`], in units of the standard deviation of its first [`FUSION_DEPTH`] scores.
    Score,
}

impl fmt::Display for FusionMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FusionMethod::Rrf => "rrf",
            FusionMethod::Score => "score",
        })
    }
}

impl FromStr for FusionMethod {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "rrf" => Ok(FusionMethod::Rrf),
            "score" => Ok(FusionMethod::Score),
            other => Err(format!("unknown fusion `{other}` (expected score or rrf)")),
        }
    }
}

/// How many candidates each ranking gives the hybrid, and how many of a list's first scores
/// [`FusionMethod::Score`] standardises (hits further down add nothing). One constant, so the
/// TUI, a headless query and eval fuse alike. 1,000 rather than 200: measured on the 51 tuning
/// instances (docs/RESULTS.md "Current figures"), the statistics of the deeper head rank the gold higher.
pub const FUSION_DEPTH: usize = 1000;

/// Parameters of the hybrid ranking.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FusionParams {
    pub method: FusionMethod,
    /// Reciprocal-rank-fusion constant: larger flattens the head of each list.
    pub rrf_k: f32,
    pub bm25_weight: f32,
    pub dense_weight: f32,
    /// The dense weight when the static tier made the dense ranking (docs/GUIDE.md "Tiers").
    pub static_weight: f32,
    /// The static tier's share beside the transformer's ranking in the mixed tier (0: not
    /// fused; docs/GUIDE.md "Tiers").
    pub mixed_static_weight: f32,
    /// Extra score for chunks of files the query names: first-place votes (RRF) or standard
    /// deviations (score fusion).
    pub path_boost: f32,
    /// Extra score for chunks the query names (`Class.method`, a unique `function_name`):
    /// standard deviations or first-place votes, times the strength of the mention
    /// ([`crate::rank::mentions::NamedSymbols::strengths`]).
    pub symbol_boost: f32,
    /// In the BM25 and dense rankings (and so in the hybrid, which fuses them), a chunk of a
    /// test file at rank r is ranked as if at r / test_weight (1 leaves tests in place, 0 puts
    /// them after everything else).
    pub test_weight: f32,
    /// Weight of the history ranking in the hybrid (0: not fused).
    pub history_weight: f32,
    /// Call-graph propagation in the hybrid: each of the top fused chunks passes this share of
    /// its score to its callers and callees (0: none).
    pub graph_weight: f32,
    /// In the hybrid, a file's module chunk (its imports, constants) scores at least this
    /// share of the best score of its file's chunks among the top fused hits (0: off). A fix
    /// that edits a function often adds the import it needs.
    pub module_weight: f32,
    /// The languages whose module code `module_weight` lifts: fixes in them often add the
    /// import, `use` or `#include` they need (multi-language dev set, docs/RESULTS.md session
    /// 28). Not Python, where the Python dev set has not measured it, nor the six rows of
    /// session 33, whose dev files' hybrid MRR it lowered, nor the five of session 38, whose
    /// dev files were measured without it.
    pub module_languages: crate::lang::LangSet,
    /// In the hybrid, for a query that is a name (`Router`, `Runtime::spawn`: see
    /// [`crate::rank::names`]): extra score for the chunks that define it, times the strength
    /// of the definition (standard deviations or first-place votes; 0: off).
    pub name_boost: f32,
    /// In the hybrid, for a short question ([`crate::rank::QueryShape::Question`]): extra score
    /// for the ranked chunks of files whose name or directories match the question's words,
    /// per word matched (0: off).
    pub path_word_boost: f32,
    /// How the history retriever scores files.
    pub history: crate::history::HistoryParams,
    /// The ranking layer's other signals ([`crate::rank::layer`]).
    pub signals: crate::rank::layer::SignalWeights,
}

impl Default for FusionParams {
    fn default() -> Self {
        // Measured on the 51 dev instances outside sympy with the pretrained model (docs/RESULTS.md
        // "Current figures"): demoting tests lifts dense PR@5 from 0.12 to 0.22 (they crowd out the code
        // that calls what the issue names); 0.1 rather than 0 keeps a test that matches far
        // better in sight.
        FusionParams {
            method: FusionMethod::Score,
            rrf_k: 60.0,
            bm25_weight: 1.0,
            // Score fusion with the trained adapters, measured on the 51 (docs/RESULTS.md "Current figures"):
            // PR@5 0.471 / 0.451 / 0.471 / 0.431 / 0.431 at dense weights 1 / 1.5 / 2 / 3 / 4
            // with the shipped adapters (0.431 / 0.451 / 0.471 / 0.431 / 0.451 with the ones
            // before), MRR best at 2 both times; a trained dense ranking earns a larger share
            // than the pretrained one did (0.8 to 1.2 tied then).
            dense_weight: 2.0,
            // The static tier's share, measured on the 51 (docs/RESULTS.md "The static tier").
            static_weight: 0.5,
            // Not fused until measured better than the two-way hybrid on both dev sets
            // (issue 72's rule; docs/RESULTS.md "The static tier").
            mixed_static_weight: 0.0,
            // With those adapters, on the 51: PR@5 / PR@20 0.471 / 0.627 without the boost,
            // 0.490 / 0.627 at 0.5, 0.490 / 0.647 at 1, 0.490 / 0.667 at 2 (MRR 0.421 to
            // 0.418); held-out sympy agreed at 1 (PR@20 0.545 → 0.564). An issue that names a
            // file, in a path or a traceback, usually means code in it.
            path_boost: 1.0,
            // On the 51, query budget 256: MRR 0.424 without, 0.438 / 0.449 / 0.458 / 0.458
            // at 1 / 1.5 / 2 / 3 (PR@5 0.510 to 0.529); held-out sympy 0.311 → 0.301 in
            // MRR but 0.345 → 0.400 in PR@5 at 2.
            symbol_boost: 2.0,
            test_weight: 0.1,
            // Under rank fusion the history gained a little PR@20 and MRR at 0.15; under score
            // fusion it costs the 51 tuning instances MRR at every weight tried (docs/RESULTS.md
            // "Current figures"), so it is not fused by default.
            history_weight: 0.0,
            graph_weight: 0.0,
            // On the multi-language dev set (query-first 200), hybrid PR@5 / PR@20 / MRR 0.201 /
            // 0.353 / 0.447 without, 0.201 / 0.357 / 0.448 at 0.5, 0.210 / 0.397 / 0.457 at 0.8,
            // 0.241 / 0.411 / 0.469 at 0.95, 0.241 / 0.411 / 0.449 at 1 (the module then comes
            // before its hit). Python's row does not lift modules: not measured there.
            module_weight: 0.95,
            module_languages: [
                Lang::Rust,
                Lang::Go,
                Lang::JavaScript,
                Lang::TypeScript,
                Lang::Java,
                Lang::C,
                Lang::Cpp,
            ]
            .into_iter()
            .fold(crate::lang::LangSet::none(), crate::lang::LangSet::with),
            // A definition of the name asked for should lead: 3 standard deviations is more
            // than BM25's lead of a chunk that merely repeats the name (docs/RESULTS.md,
            // "Files or chunks first"). Issues never take it (they are not names).
            name_boost: 3.0,
            // Weak: a word shared with a file name is a hint, not a mention (issues never take it).
            path_word_boost: 0.3,
            history: Default::default(),
            signals: Default::default(),
        }
    }
}

impl FusionParams {
    /// The hybrid with every signal of the ranking layer off ([`crate::rank::layer`]): fusion,
    /// mentions, tests, module code and the graph alone. The ablation's baseline.
    pub fn without_ranking_layer(self) -> FusionParams {
        FusionParams {
            name_boost: 0.0,
            path_word_boost: 0.0,
            signals: crate::rank::layer::SignalWeights::off(),
            ..self
        }
    }
}

/// Each position's standardised score for [`FusionMethod::Score`]: how far the list's score
/// at that position stands above the score at [`FUSION_DEPTH`] (or the list's last), in
/// standard deviations of the first [`FUSION_DEPTH`] scores; 0 from there on. BM25's unbounded
/// scores and cosine similarities become comparable, and unlike ranks they keep how far the
/// head of a list stands out. Test demotion reorders hits but keeps their scores, so position
/// i takes the i-th best of those scores: a demoted hit counts where it was put.
fn standardised(list: &[Hit]) -> Vec<f32> {
    let n = list.len().min(FUSION_DEPTH);
    if n == 0 {
        return Vec::new();
    }
    let mut head: Vec<f32> = list[..n].iter().map(|h| h.score).collect();
    head.sort_by(|a, b| b.total_cmp(a));
    let mean = head.iter().sum::<f32>() / n as f32;
    let sd = (head.iter().map(|x| (x - mean) * (x - mean)).sum::<f32>() / n as f32).sqrt();
    let sd = if sd > f32::EPSILON { sd } else { 1.0 };
    let floor = head[n - 1];
    let mut out: Vec<f32> = head.iter().map(|x| (x - floor) / sd).collect();
    out.resize(list.len(), 0.0);
    out
}

/// Fuses weighted lists by `params.method`, plus each chunk's `bonus` (a chunk the query names:
/// see [`crate::rank::mentions`]), in standard deviations (score fusion) or first-place votes (rrf);
/// a named chunk no list ranked joins the candidates. Best `k` first, ties by chunk id.
pub fn fuse(
    lists: &[(&[Hit], f32)],
    params: FusionParams,
    k: usize,
    bonus: &std::collections::HashMap<u32, f32>,
) -> Vec<Hit> {
    let mut scores: std::collections::HashMap<u32, f32> = std::collections::HashMap::new();
    // A list of weight 0 (or less) is silenced: it adds no candidates of its own either.
    for &(list, weight) in lists.iter().filter(|(_, w)| *w > 0.0) {
        match params.method {
            FusionMethod::Rrf => {
                for (i, h) in list.iter().enumerate() {
                    *scores.entry(h.chunk).or_default() += weight / (params.rrf_k + (i + 1) as f32);
                }
            }
            FusionMethod::Score => {
                for (h, z) in list.iter().zip(standardised(list)) {
                    *scores.entry(h.chunk).or_default() += weight * z;
                }
            }
        }
    }
    let unit = match params.method {
        FusionMethod::Rrf => 1.0 / (params.rrf_k + 1.0),
        FusionMethod::Score => 1.0,
    };
    for (&chunk, &b) in bonus.iter().filter(|(_, b)| **b > 0.0) {
        *scores.entry(chunk).or_default() += unit * b;
    }
    let mut hits: Vec<Hit> = scores.into_iter().map(|(chunk, score)| Hit { chunk, score }).collect();
    hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.chunk.cmp(&b.chunk)));
    hits.truncate(k);
    hits
}

/// Demotes the hits for which `is_test` holds: the hit at rank r (from 1) is re-ranked at
/// r / `weight`; others keep r, and ties keep the original order. Scores stay the retriever's.
/// Hits of equal score share the rank of the first of them (the retriever does not tell them
/// apart), so a test never stays ahead of a non-test it ties with: the history ranking gives
/// every chunk of a file one score, and a test file's chunks used to lead such a block.
pub fn demote_tests(hits: Vec<Hit>, weight: f32, is_test: impl Fn(u32) -> bool) -> Vec<Hit> {
    if weight >= 1.0 {
        return hits;
    }
    let mut rank = 0.0;
    let mut previous = None;
    let mut keyed: Vec<(f32, usize, Hit)> = hits
        .into_iter()
        .enumerate()
        .map(|(i, h)| {
            if previous != Some(h.score) {
                rank = (i + 1) as f32;
                previous = Some(h.score);
            }
            let at = if !is_test(h.chunk) {
                rank
            } else if weight > 0.0 {
                rank / weight
            } else {
                f32::INFINITY
            };
            (at, i, h)
        })
        .collect();
    keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    keyed.into_iter().map(|(_, _, h)| h).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bonus_lifts_the_chunk_it_names_and_brings_in_one_no_list_ranked() {
        let bonus: std::collections::HashMap<u32, f32> = [(2, 1.0), (9, 5.0)].into_iter().collect();
        for method in [FusionMethod::Score, FusionMethod::Rrf] {
            let p = FusionParams { method, ..FusionParams::default() };
            let fused = fuse(&[(&hits(&[1, 2]), 1.0), (&hits(&[1, 2]), 0.25)], p, 3, &bonus);
            assert_eq!(fused.iter().map(|h| h.chunk).collect::<Vec<_>>(), [9, 2, 1], "{method}");
        }
    }

    fn scored(pairs: &[(u32, f32)]) -> Vec<Hit> {
        pairs.iter().map(|&(chunk, score)| Hit { chunk, score }).collect()
    }

    fn order(lists: &[(&[Hit], f32)], method: FusionMethod) -> Vec<u32> {
        let p = FusionParams { method, ..FusionParams::default() };
        fuse(lists, p, 10, &Default::default()).iter().map(|h| h.chunk).collect()
    }

    #[test]
    fn score_fusion_lets_a_clear_winner_of_one_list_beat_a_middling_hit_of_both() {
        // Dense puts 7 far ahead of everything; 2 is second in both lists, never close to a top.
        let bm25 = scored(&[(1, 9.0), (2, 8.0), (3, 7.9), (4, 7.8), (5, 7.7), (6, 7.6)]);
        let dense = scored(&[(7, 0.90), (2, 0.52), (8, 0.51), (9, 0.50), (10, 0.50), (11, 0.49)]);
        let lists: [(&[Hit], f32); 2] = [(&bm25, 1.0), (&dense, 1.0)];
        let score = order(&lists, FusionMethod::Score);
        let pos = |o: &[u32], c: u32| o.iter().position(|&x| x == c).unwrap();
        assert!(pos(&score, 7) < pos(&score, 2), "{score:?}");
        // Rank fusion only sees ranks: 2 (second twice) beats 7 (first once).
        let rrf = order(&lists, FusionMethod::Rrf);
        assert!(pos(&rrf, 2) < pos(&rrf, 7), "{rrf:?}");
    }

    #[test]
    fn score_fusion_ignores_each_lists_scale_and_offset() {
        let bm25 = scored(&[(1, 12.0), (2, 7.0), (3, 6.5), (4, 3.0), (5, 1.0)]);
        let dense = scored(&[(3, 0.8), (5, 0.7), (1, 0.4), (6, 0.35), (2, 0.1)]);
        let rescaled: Vec<Hit> = bm25.iter().map(|h| Hit { score: 40.0 * h.score + 3.0, ..*h }).collect();
        assert_eq!(
            order(&[(&bm25, 1.0), (&dense, 1.0)], FusionMethod::Score),
            order(&[(&rescaled, 1.0), (&dense, 1.0)], FusionMethod::Score)
        );
    }

    #[test]
    fn score_fusion_keeps_test_demotion_and_its_depth() {
        // Test chunk 10 scored best but was demoted to the end: it counts as the last, not the first.
        let list = scored(&[(1, 5.0), (2, 4.0), (3, 3.0), (10, 9.0)]);
        let z = standardised(&list);
        assert!(z.windows(2).all(|w| w[0] >= w[1]), "{z:?}");
        assert_eq!(z[3], 0.0);
        // Beyond FUSION_DEPTH a hit adds nothing.
        let long: Vec<Hit> =
            (0..FUSION_DEPTH as u32 + 5).map(|c| Hit { chunk: c, score: -(c as f32) }).collect();
        let z = standardised(&long);
        assert!(z[0] > 0.0 && z[FUSION_DEPTH..].iter().all(|&x| x == 0.0));
    }

    fn hits(ids: &[u32]) -> Vec<Hit> {
        ids.iter().map(|&chunk| Hit { chunk, score: 0.0 }).collect()
    }

    #[test]
    fn test_chunks_are_demoted_by_their_weight() {
        // Chunks 10 and 11 are tests, at ranks 1 and 3; falling scores (ties share a rank).
        let ids = [10, 1, 11, 2, 3, 4, 5, 6];
        let list: Vec<Hit> =
            ids.iter().zip(0..).map(|(&chunk, i)| Hit { chunk, score: -(i as f32) }).collect();
        let is_test = |c: u32| c >= 10;
        let order =
            |w: f32| demote_tests(list.clone(), w, is_test).iter().map(|h| h.chunk).collect::<Vec<_>>();
        assert_eq!(order(1.0), [10, 1, 11, 2, 3, 4, 5, 6]);
        // Weight 0.5: rank 1 -> 2, rank 3 -> 6; ties keep the original order.
        assert_eq!(order(0.5), [10, 1, 2, 3, 11, 4, 5, 6]);
        assert_eq!(order(0.0), [1, 2, 3, 4, 5, 6, 10, 11]);
    }

    #[test]
    fn a_test_tied_with_non_tests_goes_after_them() {
        // One file score for five chunks (the history ranking): tests 10 and 11 lead the tie.
        let tied = |c: u32| Hit { chunk: c, score: 7.0 };
        let list = vec![tied(10), tied(11), tied(1), tied(2), tied(3), Hit { chunk: 4, score: 5.0 }];
        let order = demote_tests(list, 0.5, |c| c >= 10).iter().map(|h| h.chunk).collect::<Vec<_>>();
        // The tie shares rank 1: the tests count at 2, after the block's non-tests and before
        // chunk 4 at rank 6.
        assert_eq!(order, [1, 2, 3, 10, 11, 4]);
    }

    /// Rank fusion of two lists, BM25's and dense's weights from `p`.
    fn fuse_rrf(bm25: &[Hit], dense: &[Hit], p: FusionParams, k: usize) -> Vec<Hit> {
        let p = FusionParams { method: FusionMethod::Rrf, ..p };
        fuse(&[(bm25, p.bm25_weight), (dense, p.dense_weight)], p, k, &Default::default())
    }

    #[test]
    fn rrf_rewards_agreement() {
        let equal = FusionParams { dense_weight: 1.0, ..FusionParams::default() };
        let fused = fuse_rrf(&hits(&[1, 2, 3]), &hits(&[3, 4, 1]), equal, 10);
        let order: Vec<u32> = fused.iter().map(|h| h.chunk).collect();
        // 1: 1/61 + 1/63; 3: 1/63 + 1/61 (tie, lower id first); 2: 1/62; 4: 1/62.
        assert_eq!(order, [1, 3, 2, 4]);
        let expected = 1.0 / 61.0 + 1.0 / 63.0;
        assert!((fused[0].score - expected).abs() < 1e-6);
    }

    #[test]
    fn weights_can_silence_a_retriever() {
        let p = FusionParams { dense_weight: 0.0, ..FusionParams::default() };
        let fused = fuse_rrf(&hits(&[5, 6]), &hits(&[7]), p, 3);
        assert_eq!(
            fused.iter().map(|h| h.chunk).collect::<Vec<_>>(),
            [5, 6],
            "7 comes only from the silenced list"
        );
    }
}
