//! The ranking layer (issue 80): the named signals every hybrid answer passes, whichever tiers
//! fed it (BM25 alone, the static tier, the transformer, mixed), after fusion and before
//! grouping. The best static-embedding tools get most of their score here rather than from
//! their model. Each signal is one function with its weight in [`SignalWeights`] (part of
//! [`FusionParams`]), tested beside it and measured on and off (docs/RESULTS.md "The ranking
//! layer"):
//!
//! - the query's shape ([`QueryShape`]) sets the dense side's share of the fusion
//!   ([`dense_scale`]);
//! - definitions: a name query's definitions lead, a name inside prose lifts its definition at
//!   a share of that ([`definitions`]);
//! - path words: files whose name or directories match a question's words ([`definitions`]);
//! - path priors by role: examples, docs, benchmarks, fixtures, compat shims, type stubs and
//!   re-export barrels ranked down ([`roles`]);
//! - file evidence: a file with several strong chunks lifts its best one, and in the flat list
//!   each further chunk of one file decays ([`evidence`]).

pub mod definitions;
pub mod evidence;
pub mod roles;

use crate::engine::RepoIndex;
use crate::index::Hit;
use crate::rank::fusion::FusionParams;
use crate::rank::QueryShape;

/// The ranking layer's weights beyond the fusion's own (`name_boost`, `path_word_boost`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SignalWeights {
    /// The dense side's fusion weight for a short question, times the tier's own (1: as for an
    /// issue).
    pub question_dense: f32,
    /// The same for a name query.
    pub name_dense: f32,
    /// A code name inside a question (`why does spawn_blocking block`) lifts its definitions by
    /// `name_boost` × this (0: off); a bare name query gets the whole `name_boost`.
    pub inline_name: f32,
    /// A file's further strong chunks among the first [`evidence::EVIDENCE_TOP`] lift its best
    /// chunk by this share of their scores (0: off).
    pub file_evidence: f32,
    /// In the flat list, the n-th further chunk of one file scores × `file_decay`ⁿ (1: off).
    pub file_decay: f32,
    /// A chunk of an example, doc, benchmark, fixture, compat shim, type stub or re-export
    /// barrel scores × this (1: off).
    pub role_prior: f32,
    /// Whether evidence, decay and role priors also rank issues (they always rank questions
    /// and names).
    pub on_issues: bool,
}

impl Default for SignalWeights {
    /// Measured on the questions set's 500 tuning queries, static tier (docs/RESULTS.md "The
    /// ranking layer": each signal on and off, then together); the held-out 260 and the first
    /// ten repositories' 200 agreed. Issues do not take them (`on_issues`) until measured on
    /// the dev sets.
    fn default() -> Self {
        SignalWeights {
            // 2 or 0.5 moved NDCG by less than noise or lost: the tier's own weight holds.
            question_dense: 1.0,
            name_dense: 1.0,
            inline_name: 0.5,
            file_evidence: 0.3,
            file_decay: 0.7,
            role_prior: 0.5,
            on_issues: false,
        }
    }
}

impl SignalWeights {
    /// Every signal off: the hybrid as fusion alone left it (the ablation's baseline).
    pub fn off() -> Self {
        SignalWeights {
            question_dense: 1.0,
            name_dense: 1.0,
            inline_name: 0.0,
            file_evidence: 0.0,
            file_decay: 1.0,
            role_prior: 1.0,
            on_issues: false,
        }
    }
}

/// The share of the dense side in the fusion for `shape`, times the tier's weight.
pub fn dense_scale(shape: QueryShape, w: &SignalWeights) -> f32 {
    match shape {
        QueryShape::Question => w.question_dense,
        QueryShape::Name => w.name_dense,
        QueryShape::Issue => 1.0,
    }
}

/// Whether [`rerank`] changes anything for a query of `shape`.
pub fn reorders(shape: QueryShape, w: &SignalWeights) -> bool {
    let applies = shape != QueryShape::Issue || w.on_issues;
    applies && (w.file_evidence > 0.0 || w.file_decay < 1.0 || w.role_prior < 1.0)
}

/// The signals that follow fusion, in order: role priors, file evidence, the flat list's
/// per-file decay. `hits` are one checkout's, best first; the result is best first, ties by
/// chunk id.
pub fn rerank(repo: &RepoIndex, shape: QueryShape, hits: Vec<Hit>, params: &FusionParams) -> Vec<Hit> {
    let w = &params.signals;
    if !reorders(shape, w) {
        return hits;
    }
    let mut hits = hits;
    if w.role_prior < 1.0 {
        hits = roles::apply_priors(repo, hits, w.role_prior);
    }
    if w.file_evidence > 0.0 {
        hits = evidence::lift_best_of_file(repo, hits, w.file_evidence);
    }
    if w.file_decay < 1.0 {
        hits = evidence::decay_within_file(repo, hits, w.file_decay);
    }
    hits
}

/// Best first, ties by chunk id: the order every signal leaves.
pub(crate) fn sort_hits(hits: &mut [Hit]) {
    hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.chunk.cmp(&b.chunk)));
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::rank::hybrid::{hybrid, HybridLists};

    fn on() -> FusionParams {
        FusionParams::default()
    }

    fn files_of(repo: &RepoIndex, hits: &[Hit]) -> Vec<String> {
        hits.iter().map(|h| repo.chunks[h.chunk as usize].path.clone()).collect()
    }

    #[test]
    fn a_question_is_answered_by_the_file_that_does_it_not_its_example_and_issues_are_left_alone() {
        let repo = repo_of(&[
            ("examples/retry_demo.py", "def demo():\n    retry(delay=backoff(3))\n    retry(delay=backoff(4))\n"),
            (
                "src/pkg/retry.py",
                "def retry(delay):\n    return delay\n\ndef backoff(n):\n    return 2 ** n\n\ndef jitter(delay):\n    return delay\n",
            ),
            ("src/pkg/other.py", "def other():\n    pass\n"),
        ]);
        let top = |query: &str, p: FusionParams| {
            let bm25 = repo.search_bm25(query, 50).unwrap();
            files_of(&repo, &hybrid(&repo, query, HybridLists { bm25: &bm25, ..Default::default() }, p, 10))
        };
        let question = "where is the retry backoff delay computed";
        assert_eq!(QueryShape::of(question), QueryShape::Question);
        let with = top(question, on());
        assert_eq!(with[0], "src/pkg/retry.py", "{with:?}");
        assert!(with.iter().position(|p| p.starts_with("examples/")) > Some(0), "{with:?}");
        // The same words as an issue: the layer's post-fusion signals stay off.
        let issue = format!(
            "{question}\n\n{}",
            "The retry backoff delay grows too fast and the demo shows it. ".repeat(4)
        );
        assert_eq!(QueryShape::of(&issue), QueryShape::Issue);
        assert_eq!(top(&issue, on()), top(&issue, FusionParams::default().without_ranking_layer()));
    }

    /// A repository of these files, indexed in memory.
    pub(crate) fn repo_of(files: &[(&str, &str)]) -> RepoIndex {
        let files: Vec<(String, String)> =
            files.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect();
        RepoIndex::from_texts("r".into(), &files, &mut crate::engine::SyntaxCache::new()).unwrap()
    }
}
