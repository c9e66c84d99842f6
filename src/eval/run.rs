//! The evaluation loop: for each instance, index the base-commit snapshot (from git objects),
//! derive the gold from the patch, rank with each retriever, score. Failures are recorded per
//! instance and the run goes on.

use super::instances::Instance;
use super::metrics::{evaluate, grouped, Aggregate, Metrics, Summary};
use super::snapshot::{index_instance, instance_query, InstanceSnapshot, RepoSnapshots, SnapshotOptions};
use crate::engine::{load_syntax, save_syntax, RepoIndex, SnapshotIndexer, SyntaxCache};
use crate::error::{Error, Result};
use crate::history::{extend_history, open_history, HistoryIndex, HistoryView};
use crate::index::dense::VectorStore;
use crate::index::{Hit, Retriever};
use crate::progress::{EmbedOnly, Phase, Progress};
use crate::rank::dense_retriever::{DenseOptions, Scope, Tier};
use crate::rank::fusion::FusionParams;
use crate::rank::{Answer, Ask, Searcher};
use crate::repo::git::find_repo;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// The dense side of an evaluation: the towers and where the chunk tower's vectors are kept.
pub struct DenseEval {
    /// The transformer's towers or the static tier (`--dense`).
    pub tier: Tier,
    pub opts: DenseOptions,
    /// One vector log per repository lives here, shared by all its commits.
    pub store_dir: PathBuf,
    /// The static tier beside the transformer (the mixed tier), when its weight is above 0.
    pub static_side: Option<Arc<crate::model::static_tier::StaticTable>>,
}

pub struct EvalConfig {
    pub repos_dir: PathBuf,
    /// Index vendored, minified, built and generated files too (`--include-generated`).
    pub keep_generated: bool,
    pub retrievers: Vec<Retriever>,
    pub ks: Vec<usize>,
    /// How deep each ranking goes (MRR and ranks beyond this count as not found).
    pub depth: usize,
    pub max_file_size: u64,
    pub fusion: FusionParams,
    /// Append `hints_text` to the query (the paper uses the issue alone).
    pub use_hints: bool,
    /// Leave test files out of the index (gold is never in them).
    pub exclude_tests: bool,
    /// Treat module-level chunks as absent: out of the rankings and out of the gold. The
    /// paper's chunking has no module chunks, so this is the setting comparable with it.
    pub no_module_chunks: bool,
    pub dense: Option<DenseEval>,
    /// Where each repository's eval caches are kept: its history index
    /// (`<owner>+<name>.history`) and its parsed files (`.syntax`). `None`: in memory only.
    pub cache_dir: Option<PathBuf>,
    /// Keep the top this-many hits of each ranking in the per-instance results (0: none), so
    /// fusions and rerankings can be studied without running the retrievers again.
    pub keep_lists: usize,
    /// Rank dense over a query-first candidate set alone (BM25's top N and the rest of
    /// [`Searcher::query_candidates`]), as a never-indexed repository's first answer does.
    pub query_first: Option<usize>,
    /// Re-orders the hybrid's head with a cross-encoder: the ranking `rerank`.
    pub rerank: Option<Arc<crate::rerank::Reranker>>,
}

impl EvalConfig {
    /// `<cache_dir>/<owner>+<name>.<kind>`.
    fn cache_file(&self, repo: &str, kind: &str) -> Option<PathBuf> {
        self.cache_dir.as_ref().map(|d| d.join(format!("{}.{kind}", repo.replace('/', "+"))))
    }

    /// Calls are linked only for a ranking that follows them: the dense chunk input with
    /// callees, or graph propagation in the hybrid.
    fn snapshot_options(&self) -> SnapshotOptions {
        let dense_callees = self.dense.as_ref().is_some_and(|d| d.opts.use_callgraph);
        let propagates = self.retrievers.contains(&Retriever::Hybrid) && self.fusion.graph_weight > 0.0;
        SnapshotOptions {
            max_file_size: self.max_file_size,
            exclude_tests: self.exclude_tests,
            link_calls: dense_callees || propagates,
            keep_generated: self.keep_generated,
        }
    }

    /// Whether a ranking needs the git history: the history retriever, or a hybrid that fuses it.
    fn needs_history(&self) -> bool {
        self.retrievers.contains(&Retriever::History)
            || (self.retrievers.contains(&Retriever::Hybrid) && self.fusion.history_weight > 0.0)
    }
}

/// A gold chunk as reported per instance.
#[derive(Clone, Debug, Serialize)]
pub struct GoldOut {
    pub path: String,
    pub name: String,
    pub kind: &'static str,
    pub start_line: usize,
    pub end_line: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct InstanceResult {
    pub instance_id: String,
    pub repo: String,
    /// The instance's `language` field, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// `ok`, `no_gold` or `failed`.
    pub status: &'static str,
    /// Why it failed, or why it has no gold chunk.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub gold: Vec<GoldOut>,
    pub gold_files: Vec<String>,
    /// Per retriever: each gold chunk's rank (null beyond the ranking's depth).
    pub ranks: BTreeMap<&'static str, Vec<Option<usize>>>,
    pub metrics: BTreeMap<&'static str, Metrics>,
    pub chunks: usize,
    /// Dense runs: chunk inputs embedded for this snapshot, and new inputs whose token ids
    /// were already embedded (the rest came from the vector log).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedded: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reused: Option<usize>,
    pub seconds: f64,
    /// With [`EvalConfig::keep_lists`]: each ranking's head, best first.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub lists: BTreeMap<&'static str, Vec<ListedHit>>,
}

/// One hit of a kept ranking: where it is, its retriever's score, whether it is gold.
#[derive(Clone, Debug, Serialize)]
pub struct ListedHit {
    #[serde(flatten)]
    pub chunk: GoldOut,
    pub score: f32,
    pub gold: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct EvalSummary {
    pub n_instances: usize,
    pub n_with_gold: usize,
    pub n_without_gold: usize,
    pub n_failed: usize,
    /// Malformed lines of the instances file (reported and skipped).
    pub n_bad_lines: usize,
    pub seconds: f64,
    pub retrievers: BTreeMap<&'static str, Summary>,
    /// The same per group of instances ([`groups_of`]): `language:rust`, `gold:1`, `gold:2-5`,
    /// `gold:6+`, so that large fixes (where every gold chunk in the top 5 is out of reach by
    /// construction) are read apart.
    pub groups: BTreeMap<String, BTreeMap<&'static str, Summary>>,
    pub failed: Vec<(String, String)>,
    /// Instances without a gold chunk, each with why.
    pub without_gold: Vec<(String, String)>,
    /// Diagnostics (e.g. a torn vector log that was cut back), one line each.
    pub notes: Vec<String>,
    /// The dense retriever's chunk and query towers (absent for BM25-only runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub towers: Option<crate::model::TowerNames>,
}

/// Runs the evaluation; `on_result` sees each instance as it finishes (for `instances.jsonl`).
pub fn run_eval(
    instances: &[Instance],
    cfg: &EvalConfig,
    progress: &dyn Progress,
    on_result: &mut dyn FnMut(&InstanceResult) -> Result<()>,
) -> Result<EvalSummary> {
    let started = Instant::now();
    let mut order: Vec<usize> = (0..instances.len()).collect();
    // Instances of one repository in a row share the parse cache and the vector log.
    order.sort_by(|&a, &b| instances[a].repo.cmp(&instances[b].repo));
    let mut aggregates: BTreeMap<&'static str, Aggregate> = BTreeMap::new();
    let mut grouped: BTreeMap<String, BTreeMap<&'static str, Aggregate>> = BTreeMap::new();
    let mut summary_failed = Vec::new();
    let mut without_gold = Vec::new();
    let mut notes = Vec::new();
    let mut state: Option<RepoState> = None;
    for (done, &i) in order.iter().enumerate() {
        if progress.cancelled() {
            return Err(Error::Cancelled);
        }
        progress.report(Phase::Instances, done, instances.len());
        let inst = &instances[i];
        if state.as_ref().is_none_or(|s| s.repo != inst.repo) {
            if let Some(done) = state.take() {
                done.save(cfg, &mut notes);
            }
            state = Some(RepoState::new(&inst.repo, cfg, &mut notes)?);
        }
        let st = state.as_mut().ok_or_else(|| Error::invalid("no repository state"))?;
        let t = Instant::now();
        let evaluated = evaluate_instance(inst, cfg, st, &EmbedOnly(progress));
        for n in st.notes.drain(..) {
            if !notes.contains(&n) {
                notes.push(n);
            }
        }
        let result = match evaluated {
            Ok(mut r) => {
                r.seconds = t.elapsed().as_secs_f64();
                r
            }
            // Ctrl-C while embedding: stop the run, not just this instance.
            Err(Error::Cancelled) => return Err(Error::Cancelled),
            Err(e) => failed(inst, e.to_string(), t),
        };
        match result.status {
            "ok" => {
                for (name, m) in &result.metrics {
                    aggregates.entry(name).or_default().add_metrics(m);
                    for group in groups_of(&result) {
                        grouped.entry(group).or_default().entry(name).or_default().add_metrics(m);
                    }
                }
            }
            "no_gold" => {
                without_gold.push((result.instance_id.clone(), result.error.clone().unwrap_or_default()))
            }
            _ => summary_failed.push((result.instance_id.clone(), result.error.clone().unwrap_or_default())),
        }
        on_result(&result)?;
    }
    if let Some(done) = state.take() {
        done.save(cfg, &mut notes);
    }
    progress.report(Phase::Instances, instances.len(), instances.len());
    let n_with_gold = instances.len() - without_gold.len() - summary_failed.len();
    Ok(EvalSummary {
        n_instances: instances.len(),
        n_with_gold,
        n_without_gold: without_gold.len(),
        n_failed: summary_failed.len(),
        n_bad_lines: 0,
        seconds: started.elapsed().as_secs_f64(),
        retrievers: aggregates.into_iter().map(|(k, a)| (k, a.summary())).collect(),
        groups: grouped
            .into_iter()
            .map(|(g, by)| (g, by.into_iter().map(|(k, a)| (k, a.summary())).collect()))
            .collect(),
        failed: summary_failed,
        without_gold,
        notes,
        towers: cfg.dense.as_ref().map(|d| d.tier.names()),
    })
}

/// The groups an instance with gold counts in: its language (when the instance names one) and
/// the size of its fix in gold chunks (1, 2–5, more than 5).
pub fn groups_of(result: &InstanceResult) -> Vec<String> {
    let mut groups = Vec::new();
    if let Some(lang) = &result.language {
        let lang = crate::lang::Lang::from_id(lang).map_or(lang.to_ascii_lowercase(), |l| l.id().to_string());
        groups.push(format!("language:{lang}"));
    }
    groups.push(
        match result.gold.len() {
            0 | 1 => "gold:1",
            2..=5 => "gold:2-5",
            _ => "gold:6+",
        }
        .to_string(),
    );
    groups
}

fn failed(inst: &Instance, error: String, t: Instant) -> InstanceResult {
    InstanceResult {
        instance_id: inst.instance_id.clone(),
        repo: inst.repo.clone(),
        language: inst.language.clone(),
        status: "failed",
        error: Some(error),
        gold: Vec::new(),
        gold_files: Vec::new(),
        ranks: BTreeMap::new(),
        metrics: BTreeMap::new(),
        chunks: 0,
        embedded: None,
        reused: None,
        seconds: t.elapsed().as_secs_f64(),
        lists: BTreeMap::new(),
    }
}

/// What instances of one repository share.
struct RepoState {
    repo: String,
    git_dir: Result<PathBuf, String>,
    snapshots: RepoSnapshots,
    /// Parsed files when they were loaded: more at the end means they are saved again.
    syntax_loaded: usize,
    vectors: Option<VectorStore>,
    /// Every commit read so far; each instance searches the ancestors of its `base_commit`.
    history: Option<Arc<HistoryIndex>>,
    /// Notes for the summary (e.g. a shallow mirror), each once.
    notes: Vec<String>,
}

impl RepoState {
    fn new(repo: &str, cfg: &EvalConfig, notes: &mut Vec<String>) -> Result<Self> {
        let git_dir = find_repo(&cfg.repos_dir, repo).map_err(|e| e.to_string());
        let vectors = match &cfg.dense {
            // The static tier keeps no vectors: it computes them with each snapshot.
            Some(d) if matches!(d.tier, Tier::Transformer(_)) => {
                let file = crate::rank::searcher::shared_vector_log(&d.store_dir, repo);
                let (store, note) = VectorStore::open(&file, d.tier.dim())?;
                notes.extend(note);
                Some(store)
            }
            _ => None,
        };
        let (syntax, note) = match cfg.cache_file(repo, "syntax") {
            Some(file) => load_syntax(&file),
            None => (SyntaxCache::new(), None),
        };
        notes.extend(note);
        Ok(RepoState {
            repo: repo.to_string(),
            git_dir,
            syntax_loaded: syntax.len(),
            snapshots: RepoSnapshots { indexer: SnapshotIndexer::with_syntax(syntax), ..Default::default() },
            vectors,
            history: None,
            notes: Vec::new(),
        })
    }

    /// Keeps the parsed files for the next run when this one parsed new ones; a cache that
    /// cannot be written costs the next run's time, not this run's results.
    fn save(self, cfg: &EvalConfig, notes: &mut Vec<String>) {
        let Some(file) = cfg.cache_file(&self.repo, "syntax") else { return };
        if self.snapshots.indexer.syntax().len() > self.syntax_loaded {
            if let Err(e) = save_syntax(&file, self.snapshots.indexer.syntax()) {
                notes.push(format!("parsed files not kept: {e}"));
            }
        }
    }
}

fn evaluate_instance(
    inst: &Instance,
    cfg: &EvalConfig,
    st: &mut RepoState,
    progress: &dyn Progress,
) -> Result<InstanceResult> {
    let git_dir = st.git_dir.clone().map_err(|m| Error::context(&inst.instance_id, m))?;
    let InstanceSnapshot { index, gold, gold_ids } =
        index_instance(inst, &git_dir, cfg.snapshot_options(), &mut st.snapshots)?;
    let any_gold = !gold_ids.is_empty();
    let gold_ids: Vec<usize> = gold_ids.into_iter().filter(|&id| ranked(cfg, &index, id)).collect();
    let mut result = InstanceResult {
        instance_id: inst.instance_id.clone(),
        repo: inst.repo.clone(),
        language: inst.language.clone(),
        status: "ok",
        error: None,
        gold: gold_ids.iter().map(|&id| gold_out(&index, id)).collect(),
        gold_files: gold.files.clone(),
        ranks: BTreeMap::new(),
        metrics: BTreeMap::new(),
        chunks: index.chunks.len(),
        embedded: None,
        reused: None,
        seconds: 0.0,
        lists: BTreeMap::new(),
    };
    if gold_ids.is_empty() {
        result.status = "no_gold";
        result.error = Some(if any_gold {
            "its only gold chunks are module-level code, left out by --no-module-chunks".into()
        } else {
            gold.why_empty()
        });
        return Ok(result);
    }
    let query = instance_query(inst, cfg.use_hints);
    let (index, lists) = rankings(index, &query, &inst.base_commit, cfg, st, &mut result, progress)?;
    for (name, ranking) in lists {
        let ids: Vec<usize> =
            ranking.iter().map(|h| h.chunk as usize).filter(|&id| ranked(cfg, &index, id)).collect();
        let path_of = |id: usize| index.chunks[id].path.as_str();
        if let Some(mut m) = evaluate(&ids, &gold_ids, &gold.files, path_of, &cfg.ks) {
            // The grouped view's figures beside the flat ones (rank::group).
            let module = |id: usize| is_module(&index, id);
            m.metrics.0.extend(grouped(&ids, &gold_ids, &m.gold_files, path_of, module, &cfg.ks).0);
            result.ranks.insert(name, m.gold_ranks.clone());
            result.metrics.insert(name, m.metrics);
        }
        if cfg.keep_lists > 0 {
            let kept = ranking
                .iter()
                .filter(|h| ranked(cfg, &index, h.chunk as usize))
                .take(cfg.keep_lists)
                .map(|h| ListedHit {
                    chunk: gold_out(&index, h.chunk as usize),
                    score: h.score,
                    gold: gold_ids.contains(&(h.chunk as usize)),
                })
                .collect();
            result.lists.insert(name, kept);
        }
    }
    Ok(result)
}

/// Each retriever's ranking, by name.
type Rankings = Vec<(&'static str, Vec<Hit>)>;

fn rankings(
    index: RepoIndex,
    query: &str,
    base_commit: &str,
    cfg: &EvalConfig,
    st: &mut RepoState,
    result: &mut InstanceResult,
    progress: &dyn Progress,
) -> Result<(Arc<RepoIndex>, Rankings)> {
    let need_dense = cfg.retrievers.iter().any(|&r| matches!(r, Retriever::Dense | Retriever::Hybrid));
    let mut searcher = Searcher { fusion: cfg.fusion, ..Searcher::bm25_only(Arc::new(index)) };
    if need_dense {
        let Some(d) = &cfg.dense else {
            return Err(Error::invalid("dense retrieval needs a model"));
        };
        searcher = match (&d.tier, st.vectors.as_mut()) {
            (Tier::Transformer(towers), Some(store)) => {
                let candidates = cfg
                    .query_first
                    .map(|n| searcher.query_candidates(query, n, d.opts.skip_tests))
                    .transpose()?;
                let scope = candidates.as_deref().map_or(Scope::All, Scope::Only);
                searcher.with_dense_store_scoped(towers.clone(), d.opts.clone(), store, scope, progress)?
            }
            // The static tier covers every chunk at once: query-first has nothing to wait for.
            (Tier::Static(table), _) => searcher.with_static(table.clone(), d.opts.clone())?,
            (Tier::Transformer(_), None) => {
                return Err(Error::invalid("the transformer's vector store is not open"))
            }
        };
        if let (Some(table), Tier::Transformer(_)) = (&d.static_side, &d.tier) {
            searcher = searcher.with_static_side(table.clone(), d.opts.clone())?;
        }
        if let Some(dense) = &searcher.dense {
            result.embedded = Some(dense.embedded);
            result.reused = Some(dense.reused);
        }
    }
    if cfg.needs_history() {
        searcher.history = history_before(cfg, st, base_commit)?;
    }
    searcher.reranker = cfg.rerank.clone();
    let ask = Ask { query, retrievers: &cfg.retrievers, top: cfg.depth, rerank: true };
    let Answer { lists, reranked } = searcher.answer(&ask)?;
    let reranked = reranked.map(|r| r.hits);
    let mut lists: Rankings = lists.into_iter().map(|(r, hits)| (r.as_str(), hits)).collect();
    lists.extend(reranked.map(|hits| ("rerank", hits)));
    Ok((searcher.repo.clone(), lists))
}

/// The history as it stood at `base_commit`: its ancestors only, so no later commit counts.
fn history_before(cfg: &EvalConfig, st: &mut RepoState, base_commit: &str) -> Result<Option<HistoryView>> {
    let git_dir = st.git_dir.clone().map_err(|m| Error::context(&st.repo, m))?;
    let cache = cfg.cache_file(&st.repo, "history");
    let notes = &mut st.notes;
    let index =
        st.history.get_or_insert_with(|| Arc::new(open_history(cache.as_deref(), &mut |n| notes.push(n))));
    let tip = extend_history(Arc::make_mut(index), &git_dir, base_commit, cache.as_deref(), &mut |n| {
        notes.push(n)
    })?;
    Ok(tip.and_then(|t| index.ancestors(&t)).map(|mask| HistoryView::new(index.clone(), Some(mask))))
}

fn is_module(index: &RepoIndex, id: usize) -> bool {
    index.chunks[id].kind == crate::chunk::ChunkKind::Module
}

/// Whether chunk `id` takes part in the scoring: `--no-module-chunks` leaves module chunks
/// out of the rankings, the gold and the kept lists alike.
fn ranked(cfg: &EvalConfig, index: &RepoIndex, id: usize) -> bool {
    !(cfg.no_module_chunks && is_module(index, id))
}

fn gold_out(index: &RepoIndex, id: usize) -> GoldOut {
    let c = &index.chunks[id];
    GoldOut {
        path: c.path.clone(),
        name: c.name.clone(),
        kind: c.kind.as_str(),
        start_line: c.start_line,
        end_line: c.end_line,
    }
}

/// Where eval keeps its vectors by default: `<cache root>/eval`.
pub fn default_store_dir(cache_root: &Path) -> PathBuf {
    cache_root.join("eval")
}
