//! One place that answers "rank the chunks for this query with this retriever", for every
//! client: headless query, TUI, eval.

use crate::engine::RepoIndex;
use crate::error::{Error, Result};
use crate::history::{HistoryParams, HistoryView};
use crate::index::dense::VectorStore;
use crate::index::{Hit, Retriever};
use crate::model::static_tier::StaticTable;
use crate::model::Towers;
use crate::progress::Progress;
use crate::rank::dense_retriever::{DenseOptions, DenseSearcher, Scope, Tier};
use crate::rank::fusion::{FusionParams, FUSION_DEPTH};
use crate::rank::hybrid::{demote_tests_in, hybrid, HybridLists};
use crate::rank::mentions::{NamedFiles, NamedSymbols};
use crate::rerank::{self, Reranker};
use std::sync::Arc;

/// What a dense thread loads once, before its first dense index: the towers, and the
/// reranker when one was asked for (it re-orders only the hybrid, which needs the towers).
#[derive(Clone)]
pub struct SearchModels {
    pub towers: Towers,
    pub reranker: Option<Arc<Reranker>>,
}

/// A repository's indexes: BM25 always, dense once built, its git history when it has one;
/// and the second stage that re-orders the hybrid's head, when one is loaded.
pub struct Searcher {
    pub repo: Arc<RepoIndex>,
    pub dense: Option<Arc<DenseSearcher>>,
    pub history: Option<HistoryView>,
    pub fusion: FusionParams,
    pub reranker: Option<Arc<Reranker>>,
    /// The static tier beside a transformer dense index: a third list of the hybrid
    /// (`FusionParams::mixed_static_weight`; docs/GUIDE.md "Tiers"). Unused without a
    /// transformer index or at weight 0.
    pub static_side: Option<Arc<DenseSearcher>>,
}

impl Searcher {
    pub fn bm25_only(repo: Arc<RepoIndex>) -> Self {
        Searcher {
            repo,
            dense: None,
            history: None,
            fusion: FusionParams::default(),
            reranker: None,
            static_side: None,
        }
    }

    /// Adds the dense index: vectors come from the repository's cache entry when it has one
    /// (embedding only what is missing), else from memory.
    pub fn with_dense(
        &self,
        towers: Towers,
        opts: DenseOptions,
        progress: &dyn Progress,
    ) -> Result<Searcher> {
        self.with_dense_scoped(towers, opts, Scope::All, progress)
    }

    /// [`Searcher::with_dense`] over the chunks `scope` names (query-first: see
    /// [`Searcher::query_candidates`]).
    pub fn with_dense_scoped(
        &self,
        towers: Towers,
        opts: DenseOptions,
        scope: Scope,
        progress: &dyn Progress,
    ) -> Result<Searcher> {
        let mut store = self.vector_store(&towers)?;
        self.with_dense_store_scoped(towers, opts, &mut store, scope, progress)
    }

    /// The store the dense index of this repository keeps its vectors in: the cache entry's
    /// log (a new one seeded from a copied index of the same name: `cache::seed_from_namesake`),
    /// or memory without a cache.
    pub fn vector_store(&self, towers: &Towers) -> Result<VectorStore> {
        Ok(match &self.repo.cache_entry {
            Some(entry) => {
                let log = vector_log(entry, towers);
                let identity = crate::repo::git::git_dir_of(&self.repo.root)
                    .and_then(|g| crate::repo::git::identity(&g));
                if !log.exists() {
                    crate::cache::seed_from_kin(&log, identity.as_deref())?;
                } else if let Some(id) = &identity {
                    // A cache from before identities were kept: recorded now, for its kin (a
                    // read-only cache serves without it).
                    let _ = crate::cache::record_identity(entry, id);
                }
                VectorStore::open(&log, towers.chunk.dim())?.0
            }
            None => VectorStore::in_memory(towers.chunk.dim()),
        })
    }

    /// Adds the dense index with vectors from `store` (eval shares one per repository).
    pub fn with_dense_store(
        &self,
        towers: Towers,
        opts: DenseOptions,
        store: &mut VectorStore,
        progress: &dyn Progress,
    ) -> Result<Searcher> {
        self.with_dense_store_scoped(towers, opts, store, Scope::All, progress)
    }

    /// [`Searcher::with_dense_store`] over the chunks `scope` names.
    pub fn with_dense_store_scoped(
        &self,
        towers: Towers,
        opts: DenseOptions,
        store: &mut VectorStore,
        scope: Scope,
        progress: &dyn Progress,
    ) -> Result<Searcher> {
        let (chunks, graph) = (&self.repo.chunks, &self.repo.graph);
        let dense = DenseSearcher::build_scoped(towers, chunks, graph, opts, store, progress, scope)?;
        Ok(Searcher { repo: self.repo.clone(), dense: Some(Arc::new(dense)), ..self.clone_sides() })
    }

    /// Adds a dense index that ranks in the team's store (`--store-search`,
    /// [`DenseSearcher::build_in_store`]): what the store lacks is embedded into this
    /// repository's local vector log and ranked here, the rest in the server.
    pub fn with_dense_in_store(
        &self,
        towers: Towers,
        opts: DenseOptions,
        progress: &dyn Progress,
    ) -> Result<Searcher> {
        let mut store = self.vector_store(&towers)?;
        self.with_dense_in_store_at(towers, opts, &mut store, (progress, None))
    }

    /// [`Searcher::with_dense_in_store`] with the local vector log already open (a dense
    /// thread keeps one across rebuilds); `partial` is given a searcher over what the store
    /// holds while the rest is embedded (a TUI or MCP dense thread serves it).
    pub fn with_dense_in_store_at(
        &self,
        towers: Towers,
        opts: DenseOptions,
        store: &mut VectorStore,
        (progress, partial): (&dyn Progress, Option<&dyn Fn(Searcher)>),
    ) -> Result<Searcher> {
        let serve = |d: DenseSearcher| {
            if let Some(publish) = partial {
                publish(Searcher { repo: self.repo.clone(), dense: Some(Arc::new(d)), ..self.clone_sides() });
            }
        };
        let (chunks, graph) = (&self.repo.chunks[..], &self.repo.graph);
        // Beside the vector log: `vectors-TOWER.log` → `token-keys-TOWER.bin`.
        let keys = self.repo.cache_entry.as_ref().map(|entry| {
            let log = vector_log(entry, &towers);
            let name = log.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            log.with_file_name(name.replacen("vectors-", "token-keys-", 1).replace(".log", ".bin"))
        });
        let dense = DenseSearcher::build_in_store(
            towers,
            (chunks, graph),
            opts,
            (store, keys.as_deref()),
            (progress, partial.map(|_| &serve as &dyn Fn(DenseSearcher))),
        )?;
        Ok(Searcher { repo: self.repo.clone(), dense: Some(Arc::new(dense)), ..self.clone_sides() })
    }

    /// Adds the static tier's dense index over every chunk (docs/GUIDE.md "Tiers"), computed
    /// at once.
    pub fn with_static(&self, table: Arc<StaticTable>, opts: DenseOptions) -> Result<Searcher> {
        let dense = DenseSearcher::build_static(table, &self.repo.chunks, opts)?;
        Ok(Searcher { repo: self.repo.clone(), dense: Some(Arc::new(dense)), ..self.clone_sides() })
    }

    /// This searcher with the static tier beside its dense index, as the hybrid's third list
    /// (the mixed tier).
    pub fn with_static_side(&self, table: Arc<StaticTable>, opts: DenseOptions) -> Result<Searcher> {
        let side = DenseSearcher::build_static(table, &self.repo.chunks, opts)?;
        Ok(Searcher { dense: self.dense.clone(), static_side: Some(Arc::new(side)), ..self.clone_sides() })
    }

    /// Whether the hybrid fuses the static tier beside the transformer's ranking.
    pub fn mixes_static(&self) -> bool {
        let transformer = self.dense.as_ref().is_some_and(|d| !matches!(d.tier(), Tier::Static(_)));
        transformer && self.static_side.is_some() && self.fusion.mixed_static_weight > 0.0
    }

    /// The tier that made the dense half of the hybrid: `static`, `transformer`, or `mixed`
    /// (both fused); `None` without a dense index.
    pub fn dense_tier(&self) -> Option<&'static str> {
        let dense = self.dense.as_ref()?;
        Some(if self.mixes_static() { "mixed" } else { dense.tier().name() })
    }

    /// The chunks a query needs embedded first when the dense index is not complete: BM25's
    /// top `bm25_top` of the chunks the dense index holds (`skip_tests`: test files are left
    /// out before the top is taken, so that the candidates are the best of what the ranking
    /// will show), every such chunk of the files the query names and of the symbols it names,
    /// and the callers and callees of BM25's top 10 (the hybrid's graph and mention boosts
    /// reach those). Ascending chunk ids, no repeats.
    pub fn query_candidates(&self, query: &str, bm25_top: usize, skip_tests: bool) -> Result<Vec<u32>> {
        let repo = &self.repo;
        let kept = |id: u32| !(skip_tests && repo.chunks.get(id as usize).is_some_and(|c| c.is_test()));
        // Deeper until `bm25_top` kept chunks or BM25 has no more: tests can fill its head.
        let mut depth = bm25_top;
        let bm25 = loop {
            let hits = repo.search_bm25(query, depth)?;
            let exhausted = hits.len() < depth || depth >= repo.chunks.len();
            let top: Vec<Hit> = hits.into_iter().filter(|h| kept(h.chunk)).take(bm25_top).collect();
            if top.len() >= bm25_top || exhausted {
                break top;
            }
            depth = depth.saturating_mul(4);
        };
        let mut ids: Vec<u32> = bm25.iter().map(|h| h.chunk).collect();
        for h in bm25.iter().take(CANDIDATE_NEIGHBOURS_OF) {
            let c = h.chunk as usize;
            ids.extend(repo.graph.callees.get(c).into_iter().flatten());
            ids.extend(repo.graph.callers.get(c).into_iter().flatten());
        }
        let named = NamedFiles::of(query);
        for span in repo.files.iter().filter(|f| named.names(&f.path)) {
            ids.extend(span.first..span.first + span.count);
        }
        let symbols = NamedSymbols::of(query);
        if !symbols.is_empty() {
            let chunks = repo.chunks.iter().zip(0u32..).map(|(c, id)| (id, c.name.as_str()));
            ids.extend(symbols.strengths(chunks).into_keys());
        }
        ids.retain(|&id| kept(id));
        ids.sort_unstable();
        ids.dedup();
        Ok(ids)
    }

    /// This searcher without its dense index (the same repository, history, fusion and
    /// reranker).
    pub fn clone_sides(&self) -> Searcher {
        Searcher {
            repo: self.repo.clone(),
            dense: None,
            history: self.history.clone(),
            fusion: self.fusion,
            reranker: self.reranker.clone(),
            static_side: self.static_side.clone(),
        }
    }

    /// `hits` (a hybrid ranking) with their head re-ordered by the reranker (see
    /// [`Reranker::rerank`]); `None` without a reranker. Separate from [`Searcher::rankings`]
    /// so a client can show the hybrid's order first and the reranked one when it is ready.
    pub fn rerank(&self, query: &str, hits: &[Hit]) -> Result<Option<Vec<Hit>>> {
        let Some(reranker) = &self.reranker else { return Ok(None) };
        let chunks = &self.repo.chunks;
        reranker.rerank(query, hits, |id| rerank::input_of(&chunks[id as usize])).map(Some)
    }

    /// How deep a hybrid ranking must go for [`Searcher::rerank`] to re-order its top `k`.
    pub fn rerank_depth(&self, k: usize) -> usize {
        self.reranker.as_ref().map_or(k, |r| r.spec.depth.max(k))
    }

    pub fn has_dense(&self) -> bool {
        self.dense.is_some()
    }

    /// The top `k` chunks for `query` by `retriever`. Test chunks are demoted in the BM25 and
    /// dense rankings (`fusion.test_weight`), so the hybrid fuses demoted rankings.
    pub fn search(&self, query: &str, retriever: Retriever, k: usize) -> Result<Vec<Hit>> {
        Ok(self.rankings(query, &[retriever], k)?.pop().map(|(_, hits)| hits).unwrap_or_default())
    }

    /// The top `k` of each ranking asked for, in order, sharing one BM25 search and one query
    /// embedding between them.
    pub fn rankings(
        &self,
        query: &str,
        retrievers: &[Retriever],
        k: usize,
    ) -> Result<Vec<(Retriever, Vec<Hit>)>> {
        self.rankings_over(query, retrievers, k, Wait::ForCandidates)
    }

    /// While the dense index is partial and still being built (query-first): the top `k` by
    /// `retriever` over what it holds now, without waiting for this query's own chunks, the
    /// first of a cold search's two answers ([`Searcher::search`] gives the second). `None`
    /// when `search` would not wait: BM25, or a complete index.
    /// With the static tier beside the partial index (`static_side`), that first answer is the
    /// static tier's, over every chunk (issue 80: a cold checkout answers at once at the static
    /// hybrid's quality, and the transformer's answer follows).
    pub fn search_now(&self, query: &str, retriever: Retriever, k: usize) -> Result<Option<Vec<Hit>>> {
        let waits = self.dense.as_ref().is_some_and(|d| d.query_first().is_some());
        if !matches!(retriever, Retriever::Dense | Retriever::Hybrid) || !waits {
            return Ok(None);
        }
        if let Some(side) = self.static_side.clone().filter(|_| !self.mixes_static()) {
            let first = Searcher { dense: Some(side), static_side: None, ..self.clone_sides() };
            return Ok(Some(first.search(query, retriever, k)?));
        }
        let mut ranked = self.rankings_over(query, &[retriever], k, Wait::No)?;
        Ok(ranked.pop().map(|(_, hits)| hits))
    }

    /// The tier of [`Searcher::search_now`]'s first answer: `static` where the static tier
    /// answers while the transformer's index is partial; `None` where no first answer comes.
    pub fn first_answer_tier(&self) -> Option<&'static str> {
        let waits = self.dense.as_ref().is_some_and(|d| d.query_first().is_some());
        match (waits, &self.static_side) {
            (true, Some(_)) if !self.mixes_static() => Some("static"),
            (true, _) => self.dense_tier(),
            (false, _) => None,
        }
    }

    fn rankings_over(
        &self,
        query: &str,
        retrievers: &[Retriever],
        k: usize,
        wait: Wait,
    ) -> Result<Vec<(Retriever, Vec<Hit>)>> {
        let Some(lists) = self.lists_over(query, retrievers, k, wait)? else {
            return Ok(retrievers.iter().map(|&r| (r, Vec::new())).collect());
        };
        Ok(retrievers
            .iter()
            .map(|&r| {
                let mut hits = match r {
                    Retriever::Bm25 => lists.bm25.clone(),
                    Retriever::Dense => lists.dense.clone(),
                    Retriever::Hybrid => hybrid(&self.repo, query, lists.for_fusion(), lists.fusion, k),
                    Retriever::History => lists.history.clone(),
                };
                hits.truncate(k);
                (r, hits)
            })
            .collect())
    }

    /// Each retriever's list for `query` (`depth` deep where the hybrid or demotion needs it),
    /// tests demoted, before any fusion: what [`Searcher::rankings`] ranks from here, and
    /// what [`crate::rank::many`] fuses over several checkouts. `None` for a query with no
    /// searchable word.
    pub fn lists(&self, query: &str, retrievers: &[Retriever], k: usize) -> Result<Option<Lists>> {
        self.lists_over(query, retrievers, k, Wait::ForCandidates)
    }

    fn lists_over(
        &self,
        query: &str,
        retrievers: &[Retriever],
        k: usize,
        wait: Wait,
    ) -> Result<Option<Lists>> {
        // A query with no searchable word (`??? !!!`, `the and of it is`) gets no ranking from
        // any retriever, never a confident order of chunks it says nothing about (issue 70).
        if crate::index::query_terms::query_terms(query).is_empty() {
            return Ok(None);
        }
        let w = self.fusion.test_weight;
        let fused = retrievers.contains(&Retriever::Hybrid);
        let fuse_history = fused && self.fusion.history_weight > 0.0 && self.history.is_some();
        let history_asked = retrievers.contains(&Retriever::History);
        // Demoting tests lifts chunks from below `k`, so rank deeper first.
        let depth = if w < 1.0 || fused { k.max(FUSION_DEPTH) } else { k };
        let wants = |r| retrievers.contains(&r) || fused;
        // The history ranking breaks ties within a file by BM25.
        let bm25 = if wants(Retriever::Bm25) || history_asked || fuse_history {
            demote_tests_in(&self.repo, self.repo.search_bm25(query, depth)?, w)
        } else {
            Vec::new()
        };
        let mut dense_fused = usize::MAX;
        let mut fusion = self.fusion;
        let dense = if wants(Retriever::Dense) {
            let d = self.dense_over(query, wait)?;
            if !d.is_complete() {
                dense_fused = PARTIAL_FUSION_DEPTH;
            }
            // Each tier has its own measured share of the hybrid.
            if matches!(d.tier(), Tier::Static(_)) {
                fusion.dense_weight = fusion.static_weight;
            }
            demote_tests_in(&self.repo, d.search(query, depth)?, w)
        } else {
            Vec::new()
        };
        let static_side = match &self.static_side {
            Some(side) if fused && self.mixes_static() => {
                demote_tests_in(&self.repo, side.search(query, depth)?, w)
            }
            _ => Vec::new(),
        };
        let history = match &self.history {
            Some(view) if history_asked || fuse_history => {
                let ranked = history_ranking(&self.repo, view, query, &bm25, self.fusion.history, depth);
                demote_tests_in(&self.repo, ranked, w)
            }
            None if history_asked => {
                return Err(Error::invalid("no git history to search (not a git repository, or no commits)"))
            }
            _ => Vec::new(),
        };
        Ok(Some(Lists { bm25, dense, dense_fused, static_side, history, fusion }))
    }

    /// The dense index to rank `query` with: the one built, or, while that is partial and
    /// still being built, the one its builder returns once the chunks this query needs are
    /// embedded (at most [`QUERY_FIRST_WAIT`] later; else the partial one as it is).
    pub fn dense_for(&self, query: &str) -> Result<Arc<DenseSearcher>> {
        self.dense_over(query, Wait::ForCandidates)
    }

    /// [`Searcher::dense_for`], or with `Wait::No` the index as it stands.
    fn dense_over(&self, query: &str, wait: Wait) -> Result<Arc<DenseSearcher>> {
        let dense = self.dense.clone().ok_or_else(|| Error::invalid("the dense index is not ready"))?;
        let Some(first) = dense.query_first().filter(|_| matches!(wait, Wait::ForCandidates)) else {
            return Ok(dense);
        };
        let top = query_first_size(self.repo.chunks.len());
        let candidates = self.query_candidates(query, top, dense.skips_tests())?;
        Ok(first.first(candidates, QUERY_FIRST_WAIT).unwrap_or(dense))
    }
}

/// One checkout's rankings before fusion ([`Searcher::lists`]), tests demoted.
#[derive(Clone, Debug, Default)]
pub struct Lists {
    pub bm25: Vec<Hit>,
    pub dense: Vec<Hit>,
    /// How much of `dense` the hybrid fuses: a partial index's head only.
    pub dense_fused: usize,
    pub static_side: Vec<Hit>,
    pub history: Vec<Hit>,
    /// The fusion's parameters for this checkout's dense tier.
    pub fusion: FusionParams,
}

impl Lists {
    /// What the hybrid fuses.
    pub fn for_fusion(&self) -> HybridLists<'_> {
        HybridLists {
            bm25: &self.bm25,
            dense: &self.dense[..self.dense.len().min(self.dense_fused)],
            history: &self.history,
            static_side: &self.static_side,
        }
    }
}

/// Whether a ranking over a partial dense index waits for the query's own chunks.
#[derive(Clone, Copy)]
enum Wait {
    ForCandidates,
    No,
}

/// Query-first: the callers and callees of this many of BM25's best are embedded with them.
const CANDIDATE_NEIGHBOURS_OF: usize = 10;

/// Query-first: how many of BM25's best a query embeds before the dense index is complete
/// (README "Dense answers on a cold repository": the hybrid over these against the full one),
/// on a repository of 5,000 chunks or more; a smaller one takes a tenth of its chunks
/// ([`query_first_size`]).
pub const QUERY_FIRST_BM25: usize = 500;

/// The fewest of BM25's best a cold query embeds first, however small the repository.
pub const QUERY_FIRST_MIN: usize = 100;

/// How many of BM25's best a cold query over `chunks` chunks embeds first: a tenth of the
/// repository between [`QUERY_FIRST_MIN`] and [`QUERY_FIRST_BM25`]. On a ~1,000-chunk checkout
/// 500 candidates (and their neighbours) were half of it: fzf's first dense answer came at
/// 23 s on 2 cores, 8 s at 100 (docs/RESULTS.md "A smaller first set"). On the dev sets' large
/// repositories 100 candidates rank about as well as 200 and 500 (same section).
pub fn query_first_size(chunks: usize) -> usize {
    (chunks / 10).clamp(QUERY_FIRST_MIN, QUERY_FIRST_BM25)
}

/// How many of a partial dense ranking's hits the hybrid fuses (a complete one gives
/// [`FUSION_DEPTH`]). Over the query-first candidates alone, the list's lower part is BM25's
/// weak matches, not the repository's thousandth-best chunk, and standardising over it made the
/// hybrid lean on BM25. On the 51 tuning instances, candidates of BM25's top 500 (README "Dense
/// answers on a cold repository"), hybrid PR@5 / PR@20 / MRR fusing the whole list 0.471 /
/// 0.686 / 0.459, its top 200 0.510 / 0.686 / 0.448 (the full index's PR@5), 100 0.490 / 0.667
/// / 0.463, 50 0.490 / 0.667 / 0.465; sympy held out at 200: 0.364 / 0.491 / 0.286.
pub const PARTIAL_FUSION_DEPTH: usize = 200;

/// How long a search waits for its query-first chunks (a few hundred: seconds on a CPU).
pub const QUERY_FIRST_WAIT: std::time::Duration = std::time::Duration::from_secs(120);

/// Where a repository's cache entry keeps the chunk tower's vectors: one log per chunk tower.
pub fn vector_log(entry: &std::path::Path, towers: &Towers) -> std::path::PathBuf {
    let name: String = towers
        .chunk
        .fingerprint()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' })
        .collect();
    entry.join(format!("vectors-{name}.log"))
}

/// Where eval keeps a repository's vectors: one log per repository
/// (`owner/name`), shared by all its commits.
pub fn shared_vector_log(store_dir: &std::path::Path, repo: &str) -> std::path::PathBuf {
    store_dir.join(format!("{}.vectors", repo.replace('/', "+")))
}

/// The history retriever's chunk ranking: chunks of the files the matching commits changed,
/// by file score, then by how many matching commits changed the file; within a tie, chunks
/// BM25 ranks first, in BM25 order, then the rest in file order. At most `depth`.
pub fn history_ranking(
    repo: &RepoIndex,
    view: &HistoryView,
    query: &str,
    bm25: &[Hit],
    params: HistoryParams,
    depth: usize,
) -> Vec<Hit> {
    let bm25_rank: std::collections::HashMap<u32, usize> =
        bm25.iter().enumerate().map(|(i, h)| (h.chunk, i)).collect();
    // Only the scored files' chunks are visited (files the snapshot lacks are skipped).
    let mut hits: Vec<(f32, u32, usize, u32)> = view
        .rank_files(query, params)
        .into_iter()
        .filter_map(|f| repo.file_span(f.path).map(|span| (f, span)))
        .flat_map(|(f, span)| (span.first..span.first + span.count).map(move |id| (f.score, f.commits, id)))
        .map(|(score, commits, id)| (score, commits, bm25_rank.get(&id).copied().unwrap_or(usize::MAX), id))
        .collect();
    hits.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)).then(a.3.cmp(&b.3)));
    hits.truncate(depth);
    hits.into_iter().map(|(score, _, _, chunk)| Hit { chunk, score }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::ChunkKind;
    use crate::engine::SyntaxCache;
    use crate::rank::hybrid::{modules_follow, propagate};

    #[test]
    fn a_small_repository_embeds_a_tenth_of_itself_first_a_large_one_bm25s_500() {
        assert_eq!(query_first_size(1_000), QUERY_FIRST_MIN, "fzf's size: the first answer within seconds");
        assert_eq!(query_first_size(3_000), 300);
        assert_eq!(query_first_size(5_000), QUERY_FIRST_BM25);
        assert_eq!(query_first_size(40_000), QUERY_FIRST_BM25, "the dev sets' repositories: as before");
    }

    #[test]
    fn a_test_weight_of_zero_ranks_test_chunks_last() {
        let files = vec![
            (
                "tests/test_parse.py".to_string(),
                "def test_parse_header():\n    parse_header('a: b')\n".to_string(),
            ),
            ("pkg/parse.py".to_string(), "def parse_header(line):\n    return line.split(':')\n".to_string()),
        ];
        let repo = Arc::new(RepoIndex::from_texts("r".into(), &files, &mut SyntaxCache::new()).unwrap());
        let mut searcher = Searcher::bm25_only(repo.clone());
        let path = |hits: &[Hit]| repo.chunks[hits[0].chunk as usize].path.clone();
        let query = "test parse header";
        searcher.fusion.test_weight = 1.0;
        assert_eq!(path(&searcher.search(query, Retriever::Bm25, 5).unwrap()), "tests/test_parse.py");
        searcher.fusion.test_weight = 0.0;
        let hits = searcher.search(query, Retriever::Bm25, 5).unwrap();
        assert_eq!(path(&hits), "pkg/parse.py");
        assert!(
            hits.iter().any(|h| repo.chunks[h.chunk as usize].path == "tests/test_parse.py"),
            "still listed"
        );
    }

    #[test]
    fn the_hybrid_lifts_the_function_an_issue_names_over_one_that_only_shares_its_words() {
        let files = vec![
            (
                "net/url.py".to_string(),
                "def parse(url):\n    return url\n\ndef port(url):\n    # the port after parse: a url with a port gives that port\n    return 80\n"
                    .to_string(),
            ),
            (
                "net/other.py".to_string(),
                "def port_number(x):\n    table = load_table(x)\n    rows = [r for r in table if r.valid]\n    return len(rows)\n"
                    .to_string(),
            ),
        ];
        let repo = RepoIndex::from_texts("r".into(), &files, &mut SyntaxCache::new()).unwrap();
        let query = "Calling `port_number` after parse gives the wrong port for a url with a port";
        let bm25 = repo.search_bm25(query, 10).unwrap();
        let top = |symbol_boost| {
            // The ranking layer's own lift of a name inside a question is measured elsewhere.
            let p = FusionParams { symbol_boost, ..FusionParams::default().without_ranking_layer() };
            let hits = hybrid(&repo, query, HybridLists { bm25: &bm25, ..Default::default() }, p, 10);
            repo.chunks[hits[0].chunk as usize].name.clone()
        };
        assert_ne!(top(0.0), "port_number", "BM25 alone prefers the words");
        assert_eq!(top(FusionParams::default().symbol_boost), "port_number");
    }

    #[test]
    fn history_ranks_the_files_past_commits_changed_and_the_hybrid_fuses_it_by_weight() {
        use crate::history::{log::CommitRecord, HistoryIndex};
        let files = vec![
            (
                "net/url.py".to_string(),
                "def parse(u):\n    return u\n\ndef port(u):\n    return 80\n".to_string(),
            ),
            (
                "net/other.py".to_string(),
                "def port_number(x):\n    table = load_table(x)\n    rows = [r for r in table if r.valid]\n    return len(rows)\n"
                    .to_string(),
            ),
        ];
        let repo = RepoIndex::from_texts("r".into(), &files, &mut SyntaxCache::new()).unwrap();
        let mut index = HistoryIndex::default();
        index.add(vec![CommitRecord {
            id: "abcdef1".into(),
            parents: vec![],
            message: "Fix the URL parser crash".into(),
            files: vec!["net/url.py".into()],
        }]);
        let view = HistoryView::new(Arc::new(index), None);
        let query = "URL parser crash on port";
        let bm25 = repo.search_bm25(query, 10).unwrap();
        let ranked = history_ranking(&repo, &view, query, &bm25, HistoryParams::default(), 10);
        let paths: Vec<&str> = ranked.iter().map(|h| repo.chunks[h.chunk as usize].path.as_str()).collect();
        assert!(!paths.is_empty() && paths.iter().all(|p| *p == "net/url.py"), "{paths:?}");
        let names: Vec<&str> = ranked.iter().map(|h| repo.chunks[h.chunk as usize].name.as_str()).collect();
        let by_bm25: Vec<&str> = bm25
            .iter()
            .map(|h| &repo.chunks[h.chunk as usize])
            .filter(|c| c.path == "net/url.py")
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(names[..by_bm25.len()], by_bm25[..], "within the file, BM25 order first");

        let only_history = ranked[ranked.len() - 1];
        let without = hybrid(
            &repo,
            query,
            HybridLists { history: &ranked, ..Default::default() },
            FusionParams { history_weight: 0.0, ..Default::default() },
            10,
        );
        assert!(without.is_empty(), "weight 0 leaves the history out");
        let with = hybrid(
            &repo,
            query,
            HybridLists { history: &ranked, ..Default::default() },
            FusionParams { history_weight: 0.15, ..Default::default() },
            10,
        );
        assert!(with.iter().any(|h| h.chunk == only_history.chunk));
    }

    /// One commit changed a module and its tests: every chunk of both files ties on the
    /// commit's score, and the tests used to lead the block (they match the issue's words).
    #[test]
    fn history_ranks_code_before_tests_it_ties_with_and_breaks_file_ties_by_matching_commits() {
        use crate::history::{log::CommitRecord, HistoryIndex};
        let tests: String =
            (0..12).map(|i| format!("def test_parser_crash_{i}():\n    parse('x')\n\n")).collect();
        let files = vec![
            (
                "yarl/url.py".to_string(),
                "def parse(u):\n    return u\n\ndef port(u):\n    return 80\n".to_string(),
            ),
            ("tests/test_url.py".to_string(), tests),
            ("yarl/other.py".to_string(), "def helper():\n    pass\n".to_string()),
        ];
        let repo = Arc::new(RepoIndex::from_texts("r".into(), &files, &mut SyntaxCache::new()).unwrap());
        let record = |id: &str, message: &str, files: &[&str]| CommitRecord {
            id: id.into(),
            parents: vec![],
            message: message.into(),
            files: files.iter().map(|f| f.to_string()).collect(),
        };
        let mut index = HistoryIndex::default();
        index.add(vec![
            record(
                "aaaaaaa",
                "Fix the URL parser crash",
                &["yarl/url.py", "tests/test_url.py", "yarl/other.py"],
            ),
            record("bbbbbbb", "parser: a comment", &["yarl/url.py"]),
        ]);
        let mut searcher = Searcher::bm25_only(repo.clone());
        searcher.history = Some(HistoryView::new(Arc::new(index), None));
        let hits = searcher.search("URL parser crash", Retriever::History, 20).unwrap();
        let paths: Vec<&str> = hits.iter().map(|h| repo.chunks[h.chunk as usize].path.as_str()).collect();
        // url.py and other.py tie on the best commit; url.py has a second matching commit.
        assert_eq!(paths[..3], ["yarl/url.py", "yarl/url.py", "yarl/other.py"], "{paths:?}");
        assert!(paths[3..].iter().all(|p| *p == "tests/test_url.py"), "{paths:?}");
    }

    /// Names as queries: `Router` means where it is defined, not the function that says it
    /// most; a short question's words lift the file named like them.
    #[test]
    fn a_name_query_finds_its_definition_and_a_question_its_files_name() {
        let files = vec![
            (
                "src/app.rs".to_string(),
                "fn build() {\n    let router = Router::new();\n    let r2 = Router::new();\n    Router::merge(router, r2);\n    // Router Router Router\n}\n"
                    .to_string(),
            ),
            ("src/router.rs".to_string(), "pub struct Router {\n    routes: Vec<u8>,\n}\n".to_string()),
            ("src/runtime/init.rs".to_string(), "fn start() {\n    let threads = 4;\n}\n".to_string()),
            ("src/other.rs".to_string(), "fn start_runtime() {\n    let threads = 2;\n}\n".to_string()),
        ];
        let repo = RepoIndex::from_texts("r".into(), &files, &mut SyntaxCache::new()).unwrap();
        let top = |query: &str, p: FusionParams| {
            let bm25 = repo.search_bm25(query, 10).unwrap();
            let hits = hybrid(&repo, query, HybridLists { bm25: &bm25, ..Default::default() }, p, 10);
            let c = &repo.chunks[hits[0].chunk as usize];
            format!("{}::{}", c.path, c.name)
        };
        let off = FusionParams { name_boost: 0.0, path_word_boost: 0.0, ..Default::default() };
        let on = FusionParams::default();
        assert_eq!(top("Router", on), "src/router.rs::Router");
        assert_eq!(top("where is the Router struct", on), "src/router.rs::Router");
        let question = "how are the threads of the runtime initialized";
        assert_eq!(top(question, on), "src/runtime/init.rs::start");
        // Without the boosts the mentions and the shared words compete; with them the
        // definition and the file named like the question lead by the boost.
        let score = |query: &str, p: FusionParams, path: &str| {
            let bm25 = repo.search_bm25(query, 10).unwrap();
            let hits = hybrid(&repo, query, HybridLists { bm25: &bm25, ..Default::default() }, p, 10);
            let margin =
                |h: &Hit| if repo.chunks[h.chunk as usize].path == path { h.score } else { -h.score };
            hits.iter().take(2).map(margin).sum::<f32>()
        };
        assert!(score("Router", on, "src/router.rs") > score("Router", off, "src/router.rs"));
        assert!(score(question, on, "src/runtime/init.rs") > score(question, off, "src/runtime/init.rs"));
        // An issue takes neither boost.
        let issue = format!("{question}. {}", "The runtime starts fewer threads than configured. ".repeat(4));
        let bm25 = repo.search_bm25(&issue, 10).unwrap();
        assert_eq!(
            hybrid(&repo, &issue, HybridLists { bm25: &bm25, ..Default::default() }, on, 10),
            hybrid(&repo, &issue, HybridLists { bm25: &bm25, ..Default::default() }, off, 10)
        );
    }

    /// tokio's `task/local.rs` (issue 70 item 9): the `LocalSet` struct inside `cfg_rt!` under
    /// a 200-line doc comment, then short methods that each say `LocalSet` two or three times.
    fn local_set_repo() -> RepoIndex {
        const PROSE: [&str; 8] = [
            "In some cases, it is necessary to run one or more futures that do not implement Send",
            "and thus are unsafe to send between threads. In these cases, a local task set may be",
            "used to schedule one or more futures to run together on the same thread.",
            "For example, the following code will not compile: the reference counted pointer",
            "does not implement Send, and thus may not be sent between threads or spawned.",
            "Awaiting the set drives every task spawned on it until all of them complete, which",
            "can be used to run several futures together and drive the whole set until they finish.",
            "Note: awaiting can only be done inside a runtime; use a new thread for something else.",
        ];
        let doc: String = (0..200).map(|i| format!("    /// {}\n", PROSE[i % PROSE.len()])).collect();
        let method = |name: &str, body: &str| {
            format!("impl LocalSet {{\n    /// Part of the local set.\n    pub fn {name}(&self) -> LocalSet {{\n        {body}\n    }}\n}}\n\n")
        };
        let methods: String = [
            ("enter", "LocalSet::new()"),
            ("id", "LocalSet::new()"),
            ("tick", "LocalSet::new()"),
            ("with", "LocalSet::new()"),
        ]
        .iter()
        .map(|(n, b)| method(n, b))
        .collect();
        let local = format!(
            "use std::cell::Cell;\n\ncfg_rt! {{\n    /// A set of tasks which are executed on the same thread.\n{doc}    \
             pub struct LocalSet {{\n        tick: Cell<u8>,\n    }}\n}}\n\n{methods}\
             impl Default for LocalSet {{\n    fn default() -> LocalSet {{\n        LocalSet::new()\n    }}\n}}\n"
        );
        let files = vec![("tokio/src/task/local.rs".to_string(), local)];
        RepoIndex::from_texts("r".into(), &files, &mut SyntaxCache::new()).unwrap()
    }

    /// Reported (issue 70): `LocalSet` on tokio ranked `LocalSet.default` first, the struct
    /// (inside `cfg_rt!`, under a 200-line doc comment) seventh in BM25 and not first in the
    /// hybrid. The chunker finds the struct in the macro, doc and all; the hybrid ranks it
    /// first, above its methods, where the dense list ranks them above it as the BM25 does.
    #[test]
    fn a_name_query_ranks_its_type_above_the_types_own_methods() {
        let repo = local_set_repo();
        let id = |name: &str| repo.chunks.iter().position(|c| c.name == name).unwrap() as u32;
        let set = &repo.chunks[id("LocalSet") as usize];
        assert_eq!((set.kind, set.start_line), (ChunkKind::Class, 4), "the struct, its doc comment first");
        let bm25 = repo.search_bm25("LocalSet", 10).unwrap();
        let name_of = |h: &Hit| repo.chunks[h.chunk as usize].name.clone();
        assert_ne!(name_of(&bm25[0]), "LocalSet", "BM25 alone prefers the short methods");
        let methods = ["LocalSet.default", "LocalSet.enter", "LocalSet.id", "LocalSet.tick", "LocalSet.with"];
        let dense: Vec<Hit> = methods
            .iter()
            .chain(&["<module>", "LocalSet"])
            .zip([0.82, 0.74, 0.73, 0.72, 0.71, 0.70, 0.69])
            .map(|(n, score)| Hit { chunk: id(n), score })
            .collect();
        for dense in [&dense[..], &[]] {
            let lists = HybridLists { bm25: &bm25, dense, ..Default::default() };
            let hits = hybrid(&repo, "LocalSet", lists, FusionParams::default(), 10);
            assert_eq!(name_of(&hits[0]), "LocalSet", "{:?}", hits.iter().map(name_of).collect::<Vec<_>>());
        }
    }

    /// A query of one character or of a thousand identifiers answers, never panics.
    #[test]
    fn odd_queries_answer_without_panic() {
        let files = vec![("src/a.rs".to_string(), "fn x() {}\nfn ident_7() {}\n".to_string())];
        let repo = Arc::new(RepoIndex::from_texts("r".into(), &files, &mut SyntaxCache::new()).unwrap());
        let searcher = Searcher::bm25_only(repo.clone());
        let many: String = (0..1000).map(|i| format!("ident_{i} ")).collect();
        for query in ["x", "?", "é", many.as_str()] {
            let bm25 = searcher.search(query, Retriever::Bm25, 10).unwrap();
            let fused = hybrid(
                &repo,
                query,
                HybridLists { bm25: &bm25, ..Default::default() },
                FusionParams::default(),
                10,
            );
            let groups = crate::rank::group::group_in(&repo, &fused);
            assert!(groups.iter().map(|g| g.hits.len()).sum::<usize>() == fused.len());
        }
        let bm25 = searcher.search(&many, Retriever::Bm25, 10).unwrap();
        assert_eq!(repo.chunks[bm25[0].chunk as usize].name, "ident_7");
        let bm25 = searcher.search("x", Retriever::Bm25, 10).unwrap();
        let one = hybrid(
            &repo,
            "x",
            HybridLists { bm25: &bm25, ..Default::default() },
            FusionParams::default(),
            10,
        );
        assert_eq!(repo.chunks[one[0].chunk as usize].name, "x", "a one-letter name is a name");
    }

    #[test]
    fn propagation_lifts_the_callers_and_callees_of_top_chunks() {
        let graph = crate::callgraph::CallGraph {
            callees: vec![vec![2], vec![], vec![], vec![]],
            callers: vec![vec![], vec![], vec![0], vec![]],
            unresolved: vec![vec![]; 4],
            unresolved_callers: vec![vec![]; 4],
        };
        let hits =
            vec![Hit { chunk: 0, score: 1.0 }, Hit { chunk: 1, score: 0.5 }, Hit { chunk: 3, score: 0.4 }];
        let out = propagate(&graph, hits.clone(), 0.6);
        let order: Vec<u32> = out.iter().map(|h| h.chunk).collect();
        assert_eq!(order, [0, 2, 1, 3], "the callee of the best chunk enters above the rest");
        assert!((out[0].score - 1.0).abs() < 1e-6, "0 gets nothing back from 2 (2 is not in the top list)");
        let none = propagate(&graph, hits, 0.0);
        assert_eq!(none.iter().map(|h| h.chunk).collect::<Vec<_>>(), [0, 1, 3, 2]);
    }

    #[test]
    fn a_files_module_chunk_follows_its_best_hit() {
        let texts = vec![
            ("src/a.rs".to_string(), "use std::fmt;\n\nfn parse() {}\n".to_string()),
            ("src/b.rs".to_string(), "use std::io;\n\nfn other() {}\n".to_string()),
        ];
        let repo = RepoIndex::from_texts("r".into(), &texts, &mut crate::engine::SyntaxCache::new()).unwrap();
        let id = |path: &str, name: &str| {
            repo.chunks.iter().position(|c| c.path == path && c.name == name).unwrap() as u32
        };
        let (parse, other) = (id("src/a.rs", "parse"), id("src/b.rs", "other"));
        let (module_a, module_b) = (id("src/a.rs", "<module>"), id("src/b.rs", "<module>"));
        let hits = vec![
            Hit { chunk: parse, score: 1.0 },
            Hit { chunk: other, score: 0.6 },
            Hit { chunk: module_b, score: 0.1 },
        ];
        let order: Vec<u32> = modules_follow(&repo, hits, 0.8, FusionParams::default().module_languages)
            .iter()
            .map(|h| h.chunk)
            .collect();
        assert_eq!(order, [parse, module_a, other, module_b], "a.rs's module comes right after its hit");

        // Python's row does not lift its modules (not measured on the Python dev set).
        let texts = vec![("a.py".to_string(), "import os\n\ndef parse():\n    pass\n".to_string())];
        let repo = RepoIndex::from_texts("r".into(), &texts, &mut crate::engine::SyntaxCache::new()).unwrap();
        let parse = repo.chunks.iter().position(|c| c.name == "parse").unwrap() as u32;
        let out = modules_follow(
            &repo,
            vec![Hit { chunk: parse, score: 1.0 }],
            0.8,
            FusionParams::default().module_languages,
        );
        assert_eq!(out.iter().map(|h| h.chunk).collect::<Vec<_>>(), [parse]);
    }

    /// A long file's module-level code is cut into windows, and a fix's edit there is gold in
    /// a window: the file's best-ranked window follows its best hit, not the module chunk.
    #[test]
    fn where_a_file_has_windows_its_best_window_follows_its_best_hit() {
        let consts: String = (0..120).map(|i| format!("const C{i}: u32 = {i};\n")).collect();
        let texts = vec![("src/a.rs".to_string(), format!("use std::fmt;\n{consts}\nfn parse() {{}}\n"))];
        let repo = RepoIndex::from_texts("r".into(), &texts, &mut crate::engine::SyntaxCache::new()).unwrap();
        let of = |kind: ChunkKind| -> Vec<u32> {
            (0u32..).zip(&repo.chunks).filter(|(_, c)| c.kind == kind).map(|(id, _)| id).collect()
        };
        let (windows, module) = (of(ChunkKind::Window), of(ChunkKind::Module)[0]);
        assert!(windows.len() >= 3, "120 lines of constants are cut into windows");
        let parse = repo.chunks.iter().position(|c| c.name == "parse").unwrap() as u32;
        let hits = vec![
            Hit { chunk: parse, score: 1.0 },
            Hit { chunk: module, score: 0.2 },
            Hit { chunk: windows[2], score: 0.1 },
            Hit { chunk: windows[0], score: 0.05 },
        ];
        let order: Vec<u32> = modules_follow(&repo, hits, 0.8, FusionParams::default().module_languages)
            .iter()
            .map(|h| h.chunk)
            .collect();
        assert_eq!(
            order,
            [parse, windows[2], module, windows[0]],
            "the best window, not the module, is lifted"
        );
    }

    #[test]
    fn a_query_with_no_searchable_word_ranks_nothing_in_any_column() {
        let files = vec![("a.py".to_string(), "def alpha():\n    return beta()\n".to_string())];
        let repo = RepoIndex::from_texts("r".into(), &files, &mut crate::engine::SyntaxCache::new()).unwrap();
        let table = Arc::new(crate::testkit::tiny_static_table(&["alpha", "beta"], 16));
        let searcher = Searcher::bm25_only(Arc::new(repo)).with_static(table, Default::default()).unwrap();
        let all = [Retriever::Bm25, Retriever::Dense, Retriever::Hybrid];
        for query in ["??? !!! ...", "the and of it is", ""] {
            for (r, hits) in searcher.rankings(query, &all, 10).unwrap() {
                assert!(hits.is_empty(), "{r:?} ranked {hits:?} for {query:?}");
            }
        }
        let answered = searcher.rankings("alpha", &all, 10).unwrap();
        assert!(answered.iter().all(|(_, hits)| !hits.is_empty()), "{answered:?}");
    }
}
