//! Instances → training examples, through the eval's own code: the base-commit snapshot
//! from git objects, CoRet chunks and call graph (`RepoIndex::from_texts`), the gold chunks
//! of the patch (`eval::gold`), and encoder inputs with downstream neighbours
//! (`dense_retriever::encoder_input`). Instances whose repository is missing, whose snapshot
//! fails, or whose patch touches no chunk are counted and skipped, never fatal.
//! Hard negatives come from BM25 and, given a [`DenseMiner`], from the dense retriever.

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use rand::rngs::StdRng;
use rand::SeedableRng;
use rayon::prelude::*;
use serde::Serialize;

use super::shard::{Candidate, Example, Seq};
use crate::engine::RepoIndex;
use crate::error::{Error, Result};
use crate::eval::instances::Instance;
use crate::eval::snapshot::{index_instance, instance_query, RepoSnapshots, SnapshotOptions};
use crate::index::dense::VectorStore;
use crate::index::Retriever;
use crate::model::tokenize::InputTokenizer;
use crate::model::weights::blake3_u64;
use crate::model::Towers;
use crate::progress::{NoProgress, Phase, Progress};
use crate::rank::dense_retriever::{encoder_input, DenseOptions, Scope};
use crate::rank::searcher::{shared_vector_log, Searcher};
use crate::repo::git::find_repo;

/// BM25's top this-many (with the rest of [`Searcher::query_candidates`]) are what the dense
/// miner ranks: the candidates a never-indexed repository's first dense answer ranks, so the
/// negatives are where the shipped retriever errs, at ~100 chunks embedded per instance
/// rather than a whole snapshot (most of them come back from the vector log).
pub const DENSE_POOL: usize = 100;

#[derive(Clone, Debug)]
pub struct PrepareOptions {
    pub repos_dir: PathBuf,
    pub max_file_size: u64,
    pub dense: DenseOptions,
    /// Negatives sampled per instance.
    pub negatives: usize,
    /// How many of them are hard: BM25's best-ranked non-gold chunks for the query (CoRNStack's
    /// mined negatives; another chunk with a gold chunk's file and name is skipped as a likely
    /// false negative). The rest are random. 0: all random.
    pub bm25_negatives: usize,
    /// How many more are the dense retriever's best-ranked chunks among the candidates of
    /// [`DENSE_POOL`], the gold, its namesakes and BM25's picks left out (SweRank's and
    /// CoRNStack's model-mined negatives). Needs a [`DenseMiner`]. 0: none.
    pub dense_negatives: usize,
    pub max_len: usize,
    pub query_max_len: usize,
    pub seed: u64,
    /// Append `hints_text` to the query (the paper uses the issue alone).
    pub use_hints: bool,
    /// Consistency filter (CoRNStack, SweRank): keep an instance only if BM25 ranks one of its
    /// gold chunks within the top N of its snapshot (0: keep all). A merge message that shares no
    /// word with the code it changed teaches the encoder noise.
    pub consistency_top: usize,
    /// Drop instances with more gold chunks than this (sweeping refactors; 0: no limit).
    pub max_gold: usize,
}

/// The dense retriever that mines hard negatives (the shipped towers, by default), with the
/// directory of each repository's vector log: eval's, whose vectors it shares, since the
/// commits of one repository share most of their chunks.
pub struct DenseMiner {
    pub towers: Towers,
    pub store_dir: PathBuf,
}

/// What happened to the instances that did not become examples.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PrepareReport {
    pub examples: usize,
    /// Instances whose patch touches no indexed chunk.
    pub no_gold: Vec<String>,
    /// Instances with more gold chunks than `max_gold`.
    pub too_many_gold: Vec<String>,
    /// Instances no gold chunk of which BM25 ranks within `consistency_top`.
    pub inconsistent: Vec<String>,
    /// Repositories not found under the repos directory, with their instance counts.
    pub missing_repos: BTreeMap<String, usize>,
    /// Instances whose snapshot or patch could not be read, with the reason.
    pub failed: Vec<(String, String)>,
    /// What the caller should be told (a vector log cut back, or kept in memory), one line each.
    pub notes: Vec<String>,
}

impl PrepareReport {
    pub fn skipped(&self) -> usize {
        self.no_gold.len()
            + self.too_many_gold.len()
            + self.inconsistent.len()
            + self.missing_repos.values().sum::<usize>()
            + self.failed.len()
    }
}

/// Builds examples in the instances' order. `progress` gets `Phase::Parse` per instance
/// and may cancel. `miner` picks the dense negatives (`opts.dense_negatives`).
pub fn prepare_examples(
    instances: &[Instance],
    tokenizer: &InputTokenizer,
    opts: &PrepareOptions,
    miner: Option<&DenseMiner>,
    progress: &dyn Progress,
) -> Result<(Vec<Example>, PrepareReport)> {
    if opts.dense_negatives > 0 && miner.is_none() {
        return Err(Error::invalid("dense negatives need a model to mine them with"));
    }
    let miner = miner.filter(|_| opts.dense_negatives > 0);
    let mut report = PrepareReport::default();
    // Group by repository so the kept snapshot index and the vector log serve its many commits.
    let mut order: Vec<usize> = (0..instances.len()).collect();
    order.sort_by(|&a, &b| instances[a].repo.cmp(&instances[b].repo).then(a.cmp(&b)));
    let mut out: Vec<(usize, Example)> = Vec::new();
    let mut current: Option<RepoState> = None;
    for (done, &i) in order.iter().enumerate() {
        if progress.cancelled() {
            return Err(Error::Cancelled);
        }
        progress.report(Phase::Parse, done, instances.len());
        let inst = &instances[i];
        if current.as_ref().is_none_or(|st| st.repo != inst.repo) {
            current = Some(RepoState::open(&inst.repo, opts, miner, &mut report.notes)?);
        }
        let Some(st) = current.as_mut() else { continue };
        let Ok(git_dir) = st.git_dir.as_ref() else {
            *report.missing_repos.entry(inst.repo.clone()).or_default() += 1;
            continue;
        };
        let dense = miner.zip(st.vectors.as_mut());
        let id = inst.instance_id.clone();
        match example_of(inst, git_dir, &mut st.snapshots, dense, tokenizer, opts) {
            Ok(Outcome::Example(example)) => out.push((i, *example)),
            Ok(Outcome::NoGold) => report.no_gold.push(id),
            Ok(Outcome::TooManyGold) => report.too_many_gold.push(id),
            Ok(Outcome::Inconsistent) => report.inconsistent.push(id),
            Err(Error::Cancelled) => return Err(Error::Cancelled),
            Err(e) => report.failed.push((id, e.to_string())),
        }
    }
    progress.report(Phase::Parse, instances.len(), instances.len());
    out.sort_by_key(|(i, _)| *i);
    report.examples = out.len();
    Ok((out.into_iter().map(|(_, e)| e).collect(), report))
}

/// What the instances of one repository share.
struct RepoState {
    repo: String,
    git_dir: std::result::Result<PathBuf, String>,
    snapshots: RepoSnapshots,
    /// The miner's vectors of this repository's chunks (with a miner).
    vectors: Option<VectorStore>,
}

impl RepoState {
    fn open(
        repo: &str,
        opts: &PrepareOptions,
        miner: Option<&DenseMiner>,
        notes: &mut Vec<String>,
    ) -> Result<RepoState> {
        let git_dir = find_repo(&opts.repos_dir, repo).map_err(|e| e.to_string());
        let vectors = match miner.filter(|_| git_dir.is_ok()) {
            Some(m) => {
                let file = shared_vector_log(&m.store_dir, repo);
                let (store, note) = VectorStore::open(&file, m.towers.chunk.dim())?;
                notes.extend(note.map(|n| format!("{repo}: {n}")));
                Some(store)
            }
            None => None,
        };
        Ok(RepoState { repo: repo.to_string(), git_dir, snapshots: RepoSnapshots::default(), vectors })
    }
}

enum Outcome {
    Example(Box<Example>),
    NoGold,
    TooManyGold,
    Inconsistent,
}

fn example_of(
    inst: &Instance,
    git_dir: &std::path::Path,
    snapshots: &mut RepoSnapshots,
    dense: Option<(&DenseMiner, &mut VectorStore)>,
    tokenizer: &InputTokenizer,
    opts: &PrepareOptions,
) -> Result<Outcome> {
    // The tied training's chunk input lists callees.
    let snapshot_opts = SnapshotOptions {
        max_file_size: opts.max_file_size,
        exclude_tests: false,
        link_calls: true,
        keep_generated: false,
    };
    let snap = index_instance(inst, git_dir, snapshot_opts, snapshots)?;
    let mut gold = snap.gold_ids.clone();
    gold.sort_unstable();
    gold.dedup();
    if gold.is_empty() {
        return Ok(Outcome::NoGold);
    }
    if opts.max_gold > 0 && gold.len() > opts.max_gold {
        return Ok(Outcome::TooManyGold);
    }
    let index = Arc::new(snap.index);
    let query_text = instance_query(inst, opts.use_hints);
    if opts.consistency_top > 0 {
        let top = index.search_bm25(&query_text, opts.consistency_top)?;
        if !top.iter().any(|h| gold.binary_search(&(h.chunk as usize)).is_ok()) {
            return Ok(Outcome::Inconsistent);
        }
    }
    let mut hard = hard_negatives(&index, &gold, &query_text, opts.bm25_negatives.min(opts.negatives))?;
    if let Some((miner, store)) = dense {
        let n = opts.dense_negatives.min(opts.negatives - hard.len());
        let picked = dense_negatives(&index, miner, store, &opts.dense, &gold, &hard, &query_text, n)?;
        hard.extend(picked);
    }
    let others: Vec<usize> =
        (0..index.chunks.len()).filter(|i| gold.binary_search(i).is_err() && !hard.contains(i)).collect();
    let mut rng = StdRng::seed_from_u64(opts.seed ^ blake3_u64(&inst.instance_id));
    let random = (opts.negatives - hard.len()).min(others.len());
    let picked = rand::seq::index::sample(&mut rng, others.len(), random);
    let negatives: Vec<usize> = hard.iter().copied().chain(picked.into_iter().map(|k| others[k])).collect();
    let candidate = |&id: &usize| -> Result<Candidate> {
        let input = encoder_input(&index.chunks, &index.graph, &opts.dense, id);
        let t = tokenizer.input(&input, opts.max_len)?;
        let chunk = &index.chunks[id];
        Ok(Candidate { path: chunk.path.clone(), name: chunk.name.clone(), seq: Seq::from_tokenized(&t) })
    };
    let query = tokenizer.query(&query_text, opts.query_max_len)?;
    Ok(Outcome::Example(Box::new(Example {
        instance_id: inst.instance_id.clone(),
        repo: inst.repo.clone(),
        query: Seq::from_tokenized(&query),
        positives: snap.gold_ids.iter().map(candidate).collect::<Result<_>>()?,
        negatives: negatives.par_iter().map(candidate).collect::<Result<_>>()?,
        snapshot_chunks: index.chunks.len(),
    })))
}

/// Up to `n` of BM25's best-ranked chunks for `query` that are neither gold (`gold` sorted)
/// nor share a gold chunk's file and name (an `@overload` stub, a redefinition).
fn hard_negatives(index: &RepoIndex, gold: &[usize], query: &str, n: usize) -> Result<Vec<usize>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let fair = fair_negative(index, gold);
    let hits = index.search_bm25(query, 2 * n + gold.len())?;
    Ok(hits.into_iter().map(|h| h.chunk as usize).filter(|&c| fair(c)).take(n).collect())
}

/// Up to `n` of the dense retriever's best-ranked chunks for `query` among the candidates of
/// [`DENSE_POOL`] that are fair negatives (see [`fair_negative`]) and not in `taken`. The
/// candidates' vectors come from `store` or are embedded into it.
#[allow(clippy::too_many_arguments)]
pub fn dense_negatives(
    index: &Arc<RepoIndex>,
    miner: &DenseMiner,
    store: &mut VectorStore,
    opts: &DenseOptions,
    gold: &[usize],
    taken: &[usize],
    query: &str,
    n: usize,
) -> Result<Vec<usize>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let searcher = Searcher::bm25_only(index.clone());
    let candidates = searcher.query_candidates(query, DENSE_POOL, opts.skip_tests)?;
    let scope = Scope::Only(&candidates);
    let searcher =
        searcher.with_dense_store_scoped(miner.towers.clone(), opts.clone(), store, scope, &NoProgress)?;
    let fair = fair_negative(index, gold);
    let hits = searcher.search(query, Retriever::Dense, candidates.len())?;
    Ok(hits
        .into_iter()
        .map(|h| h.chunk as usize)
        .filter(|&c| fair(c) && !taken.contains(&c))
        .take(n)
        .collect())
}

/// Whether a chunk may be a negative: not gold (`gold` sorted), and not sharing a gold chunk's
/// file and name (an `@overload` stub, a redefinition: likely a false negative).
fn fair_negative<'a>(index: &'a RepoIndex, gold: &[usize]) -> impl Fn(usize) -> bool + 'a {
    let named = |c: usize| (index.chunks[c].path.as_str(), index.chunks[c].name.as_str());
    let gold_names: HashSet<(&str, &str)> = gold.iter().map(|&g| named(g)).collect();
    let gold = gold.to_vec();
    move |c| gold.binary_search(&c).is_err() && !gold_names.contains(&named(c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SyntaxCache;
    use crate::model::{Encoder, EncoderOptions, Precision};
    use candle_core::Device;

    fn index_of(files: &[(&str, &str)]) -> RepoIndex {
        let texts: Vec<(String, String)> =
            files.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect();
        RepoIndex::from_texts("r".into(), &texts, &mut SyntaxCache::new()).unwrap()
    }

    /// The miner's picks are the highest-cosine candidates of BM25's pool, computed here from
    /// the encoder's own vectors: never the gold, its namesake or BM25's picks, and their
    /// vectors are kept, so the repository's next commit embeds nothing it already has.
    #[test]
    fn dense_negatives_are_the_best_cosines_of_the_pool_beyond_bm25s_picks() {
        let dir = tempfile::tempdir().unwrap();
        let words = ["save", "file", "load", "path", "write", "read", "close", "open", "cache"];
        crate::testkit::write_tiny_bert(&dir.path().join("m"), &words);
        let eopts = EncoderOptions { precision: Precision::F32, ..EncoderOptions::default() };
        let encoder = Encoder::load(&dir.path().join("m"), &Device::Cpu, eopts).unwrap();
        let towers = Towers::tied(Arc::new(encoder));
        let index = Arc::new(index_of(&[
            ("a.py", "def save_file(path):\n    write_file(path)\n"),
            ("b.py", "def save_file(path):\n    pass\n\ndef save_all(paths):\n    save_file(paths)\n"),
            ("b2.py", "def save_file(path):\n    return path\n"),
            ("c.py", "def load_file(path):\n    read(path)\n\ndef read_cache(path):\n    open(path)\n"),
            ("d.py", "def close_file(f):\n    f.close()\n\ndef open_file(path):\n    return open(path)\n"),
            ("e.py", "def write_cache(path, data):\n    save_file(path)\n\ndef unrelated():\n    return 1\n"),
        ]));
        let id = |path: &str, name: &str| {
            index.chunks.iter().position(|c| c.path == path && c.name == name).unwrap()
        };
        let gold = vec![id("b.py", "save_file")];
        let query = "save_file loses the file path when saving the cache";
        let taken = hard_negatives(&index, &gold, query, 2).unwrap();
        let miner = DenseMiner { towers: towers.clone(), store_dir: dir.path().join("store") };
        let mut store = VectorStore::in_memory(towers.chunk.dim());
        let opts = DenseOptions::default();
        let got = dense_negatives(&index, &miner, &mut store, &opts, &gold, &taken, query, 3).unwrap();

        let candidates =
            Searcher::bm25_only(index.clone()).query_candidates(query, DENSE_POOL, true).unwrap();
        let inputs: Vec<_> = candidates
            .iter()
            .map(|&c| encoder_input(&index.chunks, &index.graph, &opts, c as usize))
            .collect();
        let vectors = towers.chunk.embed_inputs(&inputs, &NoProgress).unwrap();
        let q = towers.embed_query(query, opts.query_max_len).unwrap();
        let cosine = |v: &Vec<f32>| v.iter().zip(&q).map(|(a, b)| a * b).sum::<f32>();
        let mut scored: Vec<(f32, usize)> =
            candidates.iter().zip(&vectors).map(|(&c, v)| (cosine(v), c as usize)).collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        let fair = fair_negative(&index, &gold);
        let want: Vec<usize> =
            scored.into_iter().map(|(_, c)| c).filter(|&c| fair(c) && !taken.contains(&c)).take(3).collect();
        assert_eq!(got, want, "the dense ranking's best fair candidates");
        assert_eq!(got.len(), 3);
        assert!(got.iter().all(|c| !taken.contains(c) && !gold.contains(c)), "{got:?} {taken:?}");

        let kept = store.len();
        assert!(kept >= candidates.len(), "the pool's vectors are kept: {kept}");
        let again = dense_negatives(&index, &miner, &mut store, &opts, &gold, &taken, query, 3).unwrap();
        assert_eq!((again, store.len()), (got, kept), "a second mining embeds nothing new");
        assert!(dense_negatives(&index, &miner, &mut store, &opts, &gold, &taken, query, 0)
            .unwrap()
            .is_empty());
    }

    #[test]
    fn hard_negatives_are_bm25s_best_non_gold_chunks_without_the_golds_namesakes() {
        let texts: Vec<(String, String)> = [
            ("a.py", "def save_file(path):\n    write_file(path)\n"),
            ("b.py", "def save_file(path):\n    pass\n\ndef save_all(paths):\n    save_file(paths)\n"),
            ("c.py", "def load_file(path):\n    read(path)\n"),
            ("d.py", "def unrelated():\n    return 1\n"),
        ]
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .to_vec();
        let index = RepoIndex::from_texts("r".into(), &texts, &mut SyntaxCache::new()).unwrap();
        let id = |path: &str, name: &str| {
            index.chunks.iter().position(|c| c.path == path && c.name == name).unwrap()
        };
        let gold = vec![id("b.py", "save_file")];
        let query = "save_file loses the file when saving";
        let all = hard_negatives(&index, &gold, query, 10).unwrap();
        assert!(!all.contains(&gold[0]), "never the gold chunk");
        let bm25: Vec<usize> =
            index.search_bm25(query, 10).unwrap().iter().map(|h| h.chunk as usize).collect();
        let want: Vec<usize> = bm25.into_iter().filter(|&c| c != gold[0]).collect();
        assert_eq!(all, want, "BM25's order, gold left out");
        assert!(all.contains(&id("a.py", "save_file")), "another file's save_file is a fair negative");
        assert_eq!(hard_negatives(&index, &gold, query, 1).unwrap(), all[..1]);
        assert!(hard_negatives(&index, &gold, query, 0).unwrap().is_empty());

        // A chunk with the gold's file and name (a redefinition) is a likely false negative.
        let texts = vec![(
            "e.py".to_string(),
            "def save_file(path):\n    pass\n\ndef save_file(path):\n    write_file(path)\n".to_string(),
        )];
        let index = RepoIndex::from_texts("r".into(), &texts, &mut SyntaxCache::new()).unwrap();
        let twins: Vec<usize> =
            (0..index.chunks.len()).filter(|&c| index.chunks[c].name == "save_file").collect();
        assert_eq!(twins.len(), 2);
        let got = hard_negatives(&index, &twins[..1], query, 10).unwrap();
        assert!(!got.contains(&twins[1]), "{got:?}");
    }
}
