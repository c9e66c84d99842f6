//! Validation during training, with the eval's metrics.
//!
//! Full validation ranks every chunk of each validation snapshot (`eval::run::run_eval`,
//! dense retriever): the real number, but embedding whole repositories takes minutes per
//! snapshot on a CPU. The **candidate proxy** ranks each instance's gold chunks among a
//! fixed random sample of N other chunks of the same snapshot (sampled once, when the
//! validation set is prepared, so every validation sees the same candidates). Its numbers
//! are higher than full-repository ones and only comparable with each other: use them to
//! see training move, not to report retrieval quality.

use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;

use super::shard::Example;
use crate::error::Result;
use crate::eval::instances::Instance;
use crate::eval::metrics::{evaluate, Aggregate, Summary};
use crate::eval::run::{run_eval, DenseEval, EvalConfig};
use crate::index::Retriever;
use crate::model::{Encoder, TokenizedInput};
use crate::progress::NoProgress;
use crate::rank::dense_retriever::DenseOptions;
use crate::rank::fusion::FusionParams;

/// What validation runs on.
pub enum ValSet {
    /// Gold among sampled candidates (the examples' negatives).
    Candidates(Vec<Example>),
    /// Whole snapshots through the eval loop.
    Full { instances: Vec<Instance>, repos_dir: PathBuf, dense: DenseOptions, max_file_size: u64 },
}

#[derive(Clone, Debug, Serialize)]
pub struct ValResult {
    /// `candidates-N` (N: the most candidates an instance had) or `full`.
    pub kind: String,
    pub summary: Summary,
    pub seconds: f64,
}

/// Validates `encoder` (a snapshot of the weights being trained) at cut-offs `ks`.
pub fn validate(encoder: Arc<Encoder>, set: &ValSet, ks: &[usize]) -> Result<ValResult> {
    let started = std::time::Instant::now();
    let (kind, summary) = match set {
        ValSet::Candidates(examples) => {
            let n = examples.iter().map(|e| e.negatives.len()).max().unwrap_or(0);
            (format!("candidates-{n}"), candidate_proxy(&encoder, examples, ks)?)
        }
        ValSet::Full { instances, repos_dir, dense, max_file_size } => {
            ("full".to_string(), full_eval(encoder, instances, repos_dir, dense, *max_file_size, ks)?)
        }
    };
    Ok(ValResult { kind, summary, seconds: started.elapsed().as_secs_f64() })
}

/// Each example's gold ranked among gold + its negatives, by cosine with the query.
pub fn candidate_proxy(encoder: &Encoder, examples: &[Example], ks: &[usize]) -> Result<Summary> {
    let mut agg = Aggregate::default();
    for ex in examples {
        let mut seqs: Vec<TokenizedInput> = vec![ex.query.to_tokenized()];
        let cands: Vec<_> = ex.positives.iter().chain(&ex.negatives).collect();
        seqs.extend(cands.iter().map(|c| c.seq.to_tokenized()));
        let vecs = encoder.embed_tokenized(&seqs, &mut |_, _| Ok(()))?;
        let (q, rest) = vecs.split_first().ok_or_else(|| crate::Error::invalid("empty example"))?;
        let scores: Vec<f32> = rest.iter().map(|c| c.iter().zip(q).map(|(a, b)| a * b).sum()).collect();
        let mut ranking: Vec<usize> = (0..scores.len()).collect();
        ranking.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
        let gold: Vec<usize> = (0..ex.positives.len()).collect();
        if let Some(m) = evaluate(&ranking, &gold, &[], |id| cands[id].path.as_str(), ks) {
            agg.add(&m);
        }
    }
    Ok(agg.summary())
}

fn full_eval(
    encoder: Arc<Encoder>,
    instances: &[Instance],
    repos_dir: &std::path::Path,
    dense: &DenseOptions,
    max_file_size: u64,
    ks: &[usize],
) -> Result<Summary> {
    // Vectors of a training snapshot are never reused: keep them out of the user's cache.
    let store = tempfile::tempdir().map_err(|e| crate::Error::io(std::env::temp_dir(), e))?;
    let cfg = EvalConfig {
        repos_dir: repos_dir.to_path_buf(),
        keep_generated: false,
        retrievers: vec![Retriever::Dense],
        ks: ks.to_vec(),
        depth: 1000.max(ks.iter().copied().max().unwrap_or(1)),
        max_file_size,
        fusion: FusionParams::default(),
        use_hints: false,
        exclude_tests: false,
        no_module_chunks: false,
        cache_dir: None,
        keep_lists: 0,
        query_first: None,
        rerank: None,
        dense: Some(DenseEval {
            tier: crate::rank::dense_retriever::Tier::Transformer(crate::model::Towers::tied(encoder)),
            opts: dense.clone(),
            store_dir: store.path().to_path_buf(),
            static_side: None,
        }),
    };
    let summary = run_eval(instances, &cfg, &NoProgress, &mut |_| Ok(()))?;
    Ok(summary.retrievers.get(Retriever::Dense.as_str()).cloned().unwrap_or(Summary {
        n: 0,
        without_gold: summary.n_without_gold,
        metrics: Default::default(),
    }))
}
