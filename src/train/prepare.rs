//! Instances → training examples, through the eval's own code: the base-commit snapshot
//! from git objects, CoRet chunks and call graph (`RepoIndex::from_texts`), the gold chunks
//! of the patch (`eval::gold`), and encoder inputs with downstream neighbours
//! (`semantic::encoder_input`). Instances whose repository is missing, whose snapshot
//! fails, or whose patch touches no chunk are counted and skipped, never fatal.

use std::collections::BTreeMap;
use std::path::PathBuf;

use rand::rngs::StdRng;
use rand::SeedableRng;
use rayon::prelude::*;
use serde::Serialize;

use super::shard::{Candidate, Example, Seq};
use crate::engine::SyntaxCache;
use crate::error::{Error, Result};
use crate::eval::instances::Instance;
use crate::eval::snapshot::{index_instance, instance_query, SnapshotOptions};
use crate::model::tokenize::InputTokenizer;
use crate::progress::{Phase, Progress};
use crate::repo::git::find_repo;
use crate::semantic::{encoder_input, DenseOptions};

#[derive(Clone, Debug)]
pub struct PrepareOptions {
    pub repos_dir: PathBuf,
    pub max_file_size: u64,
    pub dense: DenseOptions,
    /// Negatives sampled per instance.
    pub negatives: usize,
    pub max_len: usize,
    pub query_max_len: usize,
    pub seed: u64,
    /// Append `hints_text` to the query (the paper uses the issue alone).
    pub use_hints: bool,
}

/// What happened to the instances that did not become examples.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PrepareReport {
    pub examples: usize,
    /// Instances whose patch touches no indexed chunk.
    pub no_gold: Vec<String>,
    /// Repositories not found under the repos directory, with their instance counts.
    pub missing_repos: BTreeMap<String, usize>,
    /// Instances whose snapshot or patch could not be read, with the reason.
    pub failed: Vec<(String, String)>,
}

impl PrepareReport {
    pub fn skipped(&self) -> usize {
        self.no_gold.len() + self.missing_repos.values().sum::<usize>() + self.failed.len()
    }
}

/// Builds examples in the instances' order. `progress` gets `Phase::Parse` per instance
/// and may cancel.
pub fn prepare_examples(
    instances: &[Instance],
    tokenizer: &InputTokenizer,
    opts: &PrepareOptions,
    progress: &dyn Progress,
) -> Result<(Vec<Example>, PrepareReport)> {
    let mut report = PrepareReport::default();
    // Group by repository so the parse cache serves the many commits of one repository.
    let mut order: Vec<usize> = (0..instances.len()).collect();
    order.sort_by(|&a, &b| instances[a].repo.cmp(&instances[b].repo).then(a.cmp(&b)));
    let mut out: Vec<(usize, Example)> = Vec::new();
    let mut current: Option<(String, std::result::Result<PathBuf, String>, SyntaxCache)> = None;
    for (done, &i) in order.iter().enumerate() {
        if progress.cancelled() {
            return Err(Error::Cancelled);
        }
        progress.report(Phase::Parse, done, instances.len());
        let inst = &instances[i];
        if current.as_ref().is_none_or(|(repo, _, _)| *repo != inst.repo) {
            let git_dir = find_repo(&opts.repos_dir, &inst.repo).map_err(|e| e.to_string());
            current = Some((inst.repo.clone(), git_dir, SyntaxCache::new()));
        }
        let Some((_, git_dir, syntax)) = current.as_mut() else { continue };
        let Ok(git_dir) = git_dir.as_ref() else {
            *report.missing_repos.entry(inst.repo.clone()).or_default() += 1;
            continue;
        };
        match example_of(inst, git_dir, syntax, tokenizer, opts) {
            Ok(Some(example)) => out.push((i, example)),
            Ok(None) => report.no_gold.push(inst.instance_id.clone()),
            Err(e) => report.failed.push((inst.instance_id.clone(), e.to_string())),
        }
    }
    progress.report(Phase::Parse, instances.len(), instances.len());
    out.sort_by_key(|(i, _)| *i);
    report.examples = out.len();
    Ok((out.into_iter().map(|(_, e)| e).collect(), report))
}

fn example_of(
    inst: &Instance,
    git_dir: &std::path::Path,
    syntax: &mut SyntaxCache,
    tokenizer: &InputTokenizer,
    opts: &PrepareOptions,
) -> Result<Option<Example>> {
    // The tied training's chunk input lists callees.
    let snapshot_opts =
        SnapshotOptions { max_file_size: opts.max_file_size, exclude_tests: false, link_calls: true };
    let snap = index_instance(inst, git_dir, snapshot_opts, syntax)?;
    let mut gold = snap.gold_ids.clone();
    gold.sort_unstable();
    gold.dedup();
    if gold.is_empty() {
        return Ok(None);
    }
    let index = &snap.index;
    let others: Vec<usize> = (0..index.chunks.len()).filter(|i| gold.binary_search(i).is_err()).collect();
    let mut rng = StdRng::seed_from_u64(opts.seed ^ blake3_u64(&inst.instance_id));
    let picked = rand::seq::index::sample(&mut rng, others.len(), opts.negatives.min(others.len()));
    let negatives: Vec<usize> = picked.into_iter().map(|k| others[k]).collect();
    let candidate = |&id: &usize| -> Result<Candidate> {
        let input = encoder_input(&index.chunks, &index.graph, &opts.dense, id);
        let t = tokenizer.input(&input, opts.max_len)?;
        Ok(Candidate { path: index.chunks[id].path.clone(), seq: Seq::from_tokenized(&t) })
    };
    let query = tokenizer.query(&instance_query(inst, opts.use_hints), opts.query_max_len)?;
    Ok(Some(Example {
        instance_id: inst.instance_id.clone(),
        repo: inst.repo.clone(),
        query: Seq::from_tokenized(&query),
        positives: snap.gold_ids.iter().map(candidate).collect::<Result<_>>()?,
        negatives: negatives.par_iter().map(candidate).collect::<Result<_>>()?,
        snapshot_chunks: index.chunks.len(),
    }))
}

/// A stable 64-bit hash of a string (for per-instance seeds).
pub fn blake3_u64(s: &str) -> u64 {
    let h = blake3::hash(s.as_bytes());
    u64::from_le_bytes(h.as_bytes()[..8].try_into().unwrap_or_default())
}
