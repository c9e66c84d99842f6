//! The dense CoRet retriever over a repository: builds encoder inputs from chunks and their
//! downstream call-graph neighbours, embeds what the vector store lacks, and searches.

use crate::callgraph::CallGraph;
use crate::chunk::Chunk;
use crate::error::{Error, Result};
use crate::index::dense::{token_key, vector_key, DenseIndex, VectorKey, VectorStore};
use crate::index::Hit;
use crate::model::static_tier::weigh::Idf;
use crate::model::static_tier::StaticTable;
use crate::model::{pipeline, Encoder, EncoderInput, TokenizedInput, Towers};
use crate::progress::{EmbedWork, Phase, Progress};
use rayon::prelude::*;
use std::collections::HashSet;
use std::sync::Arc;

mod server;
pub use server::ServerIndex;

/// Choices that change what the encoder sees (and so the cache keys).
#[derive(Clone, Debug, PartialEq)]
pub struct DenseOptions {
    /// Give each chunk its downstream neighbours (`--callgraph`; off by default).
    pub use_callgraph: bool,
    /// At most this many callees, in first-call order.
    pub max_neighbours: usize,
    /// Keep the file-path line at the top of each chunk (`--no-path` drops it).
    pub use_path: bool,
    /// Token budget of a query (issues are long; the default model has 512 positions).
    pub query_max_len: usize,
    /// Leave test files out of the dense index (BM25 keeps them). Changes no embedding, so
    /// it is not part of the cache tag.
    pub skip_tests: bool,
    /// The static tier weighs tokens by the repository's idf (docs/RESULTS.md "The static tier").
    pub static_idf: bool,
    /// The team's vector store (`--store`): asked before embedding, given what was embedded.
    /// Changes no embedding.
    pub shared: Option<crate::index::shared::SharedHandle>,
    /// Rank the transformer's dense side in that store (`--store-search`,
    /// [`DenseSearcher::build_in_store`]). Changes no embedding.
    pub rank_in_store: bool,
}

impl Default for DenseOptions {
    fn default() -> Self {
        // Measured on the 51 tuning instances (docs/RESULTS.md "Current figures"): the pretrained chunk tower
        // ranks better without the `[SEP]`-joined callees, and test chunks in the dense
        // ranking only crowd out code (dense PR@5 0.216 with tests demoted, 0.255 without);
        // leaving them out also embeds a third fewer chunks on a typical repository.
        DenseOptions {
            use_callgraph: false,
            max_neighbours: 8,
            use_path: true,
            // With the trained adapters (docs/RESULTS.md "Current figures"), the hybrid on the 51 at query
            // budgets 128 / 192 / 256 / 320 / 384 / 512 tokens: PR@5 0.451 / 0.490 / 0.510 /
            // 0.510 / 0.510 / 0.490, MRR 0.435 / 0.424 / 0.424 / 0.422 / 0.421 / 0.419. An
            // issue's opening states the problem; its tail (logs, long code) blurs the vector.
            query_max_len: 256,
            skip_tests: true,
            static_idf: true,
            shared: None,
            rank_in_store: false,
        }
    }
}

impl DenseOptions {
    /// A tag for cache keys: everything here that changes an embedding.
    pub fn tag(&self) -> String {
        format!("cg{}n{}p{}", u8::from(self.use_callgraph), self.max_neighbours, u8::from(self.use_path))
    }
}

/// Drops the first line (the file path) of a chunk text.
pub fn without_path(text: &str) -> &str {
    text.split_once('\n').map_or("", |(_, rest)| rest)
}

/// The encoder input of every chunk, in chunk order.
pub fn encoder_inputs(chunks: &[Chunk], graph: &CallGraph, opts: &DenseOptions) -> Vec<EncoderInput> {
    (0..chunks.len()).map(|i| encoder_input(chunks, graph, opts, i)).collect()
}

/// The encoder input of chunk `i`: its text and its first downstream neighbours' texts.
pub fn encoder_input(chunks: &[Chunk], graph: &CallGraph, opts: &DenseOptions, i: usize) -> EncoderInput {
    let text = |c: &Chunk| if opts.use_path { c.text.clone() } else { without_path(&c.text).to_string() };
    let neighbours = if opts.use_callgraph {
        graph.callees[i].iter().take(opts.max_neighbours).map(|&n| text(&chunks[n as usize])).collect()
    } else {
        Vec::new()
    };
    EncoderInput { chunk: text(&chunks[i]), neighbours }
}

/// How many inputs are embedded between two appends to the vector log: the work an
/// interruption can lose.
const SLICE: usize = 512;

/// The most vectors a query-first build embeds beyond the query's candidates to complete an
/// index that lacks only those (and no more than a tenth of the index: a cache partly filled
/// by earlier queries stays query-first): about a second of the transformer on 2 cores.
pub const EDITS_COMPLETED: usize = 64;

/// Which chunks a build embeds and ranks over.
#[derive(Clone, Copy, Debug, Default)]
pub enum Scope<'a> {
    /// Every chunk (tests aside, per [`DenseOptions::skip_tests`]): the full index.
    #[default]
    All,
    /// Embeds only these chunks (those a query needs first) and ranks over every chunk the
    /// store has a vector for: these and whatever earlier runs embedded. A cold repository
    /// answers in seconds; the rest is embedded later.
    First(&'a [u32]),
    /// Embeds these and ranks over these alone: what a never-indexed repository's first
    /// answer ranks over (eval measures query-first with it, whatever the store holds).
    Only(&'a [u32]),
}

/// A repository's full dense index, planned: the chunks it holds (tests aside, per
/// [`DenseOptions::skip_tests`]) and each one's vector key, computed once. Embedding and
/// indexing (all of it, or the part a query needs first) work from it by position.
pub struct DensePlan {
    /// The chunk id at each position, ascending.
    rows: Vec<u32>,
    keys: Vec<VectorKey>,
}

/// What an encoder input is made of: the chunks, their call graph and the options.
pub type InputSource<'a> = (&'a [Chunk], &'a CallGraph, &'a DenseOptions);

impl DensePlan {
    pub fn new(encoder: &Encoder, chunks: &[Chunk], graph: &CallGraph, opts: &DenseOptions) -> Self {
        let rows: Vec<u32> = (0..chunks.len())
            .filter(|&i| !(opts.skip_tests && chunks[i].is_test()))
            .map(|i| i as u32)
            .collect();
        // Keyed by the encoder's fingerprint and the input options: new weights, a cache of their own.
        let tag = format!("{}|{}", encoder.fingerprint(), opts.tag());
        let keys = rows
            .par_iter()
            .map(|&i| {
                let input = encoder_input(chunks, graph, opts, i as usize);
                vector_key(&tag, &input.chunk, &input.neighbours)
            })
            .collect();
        DensePlan { rows, keys }
    }

    /// How many chunks the full index holds.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The chunk id at each position.
    pub fn rows(&self) -> &[u32] {
        &self.rows
    }

    /// Chunk `id`'s position, unless the plan leaves it out.
    pub fn position(&self, id: u32) -> Option<usize> {
        self.rows.binary_search(&id).ok()
    }

    /// The positions `include` accepts whose vectors `store` lacks, each key once.
    pub fn missing(&self, store: &VectorStore, include: impl Fn(usize) -> bool) -> Vec<usize> {
        let mut seen = HashSet::new();
        (0..self.len())
            .filter(|&p| include(p) && !store.contains(&self.keys[p]) && seen.insert(self.keys[p]))
            .collect()
    }

    /// Of `positions`, those whose vectors `store` lacks, each key once: the cost of a batch
    /// or a query's candidates, not of the whole plan.
    pub fn missing_among(
        &self,
        store: &VectorStore,
        positions: impl IntoIterator<Item = usize>,
    ) -> Vec<usize> {
        let mut seen = HashSet::new();
        let mut out: Vec<usize> = positions
            .into_iter()
            .filter(|&p| !store.contains(&self.keys[p]) && seen.insert(self.keys[p]))
            .collect();
        out.sort_unstable();
        out
    }

    /// The positions whose vectors `store` has.
    pub fn available(&self, store: &VectorStore) -> Vec<usize> {
        (0..self.len()).filter(|&p| store.contains(&self.keys[p])).collect()
    }

    /// Embeds the inputs at `positions` (missing from `store`, see [`DensePlan::missing`])
    /// through one pipeline (`model::pipeline`), appending to the store every `slice` vectors
    /// (batches hold at most `slice` inputs), so an interrupted run resumes. Reports
    /// `Phase::Embed` over these positions. Returns how many were embedded: inputs whose token
    /// ids are stored already (an edit past the token budget, a duplicate) are not.
    pub fn embed(
        &self,
        encoder: &Encoder,
        (chunks, graph, opts): InputSource,
        store: &mut VectorStore,
        positions: &[usize],
        progress: &dyn Progress,
        slice: usize,
    ) -> Result<usize> {
        let slice = slice.max(1);
        let total = positions.len();
        progress.report(Phase::Embed, 0, total);
        // Tokenised up front, on every core: the token keys say what needs no forward pass,
        // and the ETA follows tokens from the start.
        let tokenized: Vec<TokenizedInput> = positions
            .par_iter()
            .map(|&p| {
                let chunk = self.rows[p] as usize;
                encoder
                    .tokenize_input(&encoder_input(chunks, graph, opts, chunk))
                    .map_err(|e| Error::context(format!("tokenising chunk {}", chunks[chunk].key()), e))
            })
            .collect::<Result<_>>()?;
        crate::engine::check_cancel(progress)?;
        let ttag = format!("{}|tokens", encoder.fingerprint());
        let tkeys: Vec<VectorKey> =
            tokenized.par_iter().map(|t| token_key(&ttag, &t.ids, &t.type_ids)).collect();
        let mut fresh = HashSet::new();
        let mut new: Vec<usize> =
            (0..total).filter(|&j| !store.contains(&tkeys[j]) && fresh.insert(tkeys[j])).collect();
        // The team's store first: what another machine embedded is not embedded again.
        let tower = encoder.fingerprint();
        if let Some(shared) = &opts.shared {
            let wanted: Vec<VectorKey> = new.iter().map(|&j| tkeys[j]).collect();
            let found = shared.0.fetch(&tower, encoder.dim(), &wanted)?;
            if !found.is_empty() {
                let (keys, vectors): (Vec<VectorKey>, Vec<Vec<f32>>) = found.into_iter().unzip();
                store.add_batch(&keys, &vectors)?;
                new.retain(|&j| !store.contains(&tkeys[j]));
            }
        }
        let share = |keys: &[VectorKey], vectors: &[Vec<f32>]| {
            if let Some(shared) = &opts.shared {
                let rows: Vec<(VectorKey, Vec<f32>)> =
                    keys.iter().copied().zip(vectors.iter().cloned()).collect();
                shared.0.put(&tower, &rows);
            }
        };
        let tokens_total: usize = tokenized.iter().map(TokenizedInput::len).sum();
        let known_tokens = tokens_total - new.iter().map(|&j| tokenized[j].len()).sum::<usize>();
        let known = total - new.len();
        let work = EmbedWork { cached: self.len() - total, tokens_done: 0, tokens_total };
        progress.report_embed_work(work);
        let (mut keys, mut vectors) = (Vec::new(), Vec::new());
        let mut stored = 0;
        let run = pipeline::run(
            encoder,
            new.len(),
            slice,
            &|b| Ok(tokenized[new[b]].clone()),
            &mut |rows, done, tokens| {
                for (b, v) in rows {
                    keys.push(tkeys[new[b]]);
                    vectors.push(v);
                }
                if keys.len() >= slice {
                    store.add_batch(&keys, &vectors)?;
                    share(&keys, &vectors);
                    stored += keys.len();
                    (keys, vectors) = (Vec::new(), Vec::new());
                }
                progress.report(Phase::Embed, known + done, total);
                progress.report_embed_work(EmbedWork { tokens_done: known_tokens + tokens, ..work });
                if progress.cancelled() {
                    return Err(Error::Cancelled);
                }
                Ok(())
            },
        );
        // Vectors first, then every raw key whose token key is stored (an interrupted run
        // keeps its finished batches). A crash between the two appends leaves vectors whose
        // raw keys are re-derived (tokenised, found) on the next run.
        store.add_batch(&keys, &vectors)?;
        share(&keys, &vectors);
        stored += keys.len();
        let aliases: Vec<(VectorKey, VectorKey)> = positions
            .iter()
            .zip(&tkeys)
            .filter(|(_, t)| store.contains(t))
            .map(|(&p, &t)| (self.keys[p], t))
            .collect();
        store.add_aliases(&aliases)?;
        run?;
        progress.report(Phase::Embed, total, total);
        progress.report_embed_work(EmbedWork { tokens_done: tokens_total, ..work });
        Ok(stored)
    }

    /// The dense index over the positions `ranked` (ascending; every one in `store`).
    pub fn searcher(
        &self,
        towers: Towers,
        opts: DenseOptions,
        store: &VectorStore,
        ranked: &[usize],
    ) -> Result<DenseSearcher> {
        let keys: Vec<VectorKey> = ranked.iter().map(|&p| self.keys[p]).collect();
        let index = DenseIndex::from_store(store, &keys)?;
        let rows = ranked.iter().map(|&p| self.rows[p]).collect();
        Ok(DenseSearcher {
            tier: Tier::Transformer(towers),
            idf: None,
            index,
            rows,
            eligible: self.len(),
            opts,
            embedded: 0,
            reused: 0,
            first: None,
            server: None,
        })
    }
}

/// Where a partial index's searches ask for their chunks first: whatever is still filling the
/// index (`query_first::QueryFirst`, the background builder). The index knows only this, not
/// who fills it, so the dependency runs one way: builder → index.
pub trait FillFirst: Send + Sync {
    /// Asks for `ids` to be embedded first and waits, at most `timeout`, for the index over
    /// them and everything embedded before; `None` when the filler is gone or too slow.
    fn first(&self, ids: Vec<u32>, timeout: std::time::Duration) -> Option<Arc<DenseSearcher>>;
}

/// What embeds a dense index's chunks and its queries: the transformer's towers, or the
/// static tier's table (docs/GUIDE.md "Tiers").
#[derive(Clone)]
pub enum Tier {
    Transformer(Towers),
    Static(Arc<StaticTable>),
}

impl Tier {
    /// What answers say produced them: `transformer` or `static`.
    pub fn name(&self) -> &'static str {
        match self {
            Tier::Transformer(_) => "transformer",
            Tier::Static(_) => "static",
        }
    }

    /// The width of its vectors.
    pub fn dim(&self) -> usize {
        match self {
            Tier::Transformer(t) => t.chunk.dim(),
            Tier::Static(table) => table.dim(),
        }
    }

    /// What stats and summaries call the chunk and query side.
    pub fn names(&self) -> crate::model::TowerNames {
        match self {
            Tier::Transformer(t) => t.names(),
            Tier::Static(table) => crate::model::TowerNames {
                chunk: table.name().to_string(),
                query: format!("{} (tied)", table.name()),
            },
        }
    }
}

/// A dense index over one repository, with the tier that made it (chunk) and queries it.
pub struct DenseSearcher {
    tier: Tier,
    /// The static tier's repository idf (queries are weighed as its chunks were).
    idf: Option<Arc<Idf>>,
    index: DenseIndex,
    /// The chunk id of each index row, ascending (test chunks may be left out; a query-first
    /// build holds only the chunks with vectors so far).
    rows: Vec<u32>,
    /// How many chunks the full index holds (`rows.len()` once complete).
    eligible: usize,
    opts: DenseOptions,
    /// How many chunk inputs this build embedded (the rest came from the store).
    pub embedded: usize,
    /// How many new inputs needed no embedding: their token ids were embedded before (they
    /// differ from a stored input only past the token budget).
    pub reused: usize,
    /// While the index is partial and still being built: where a search asks for its chunks.
    first: Option<Arc<dyn FillFirst>>,
    /// Set when the team's store ranks (`--store-search`): `index` is then empty.
    server: Option<server::ServerIndex>,
}

impl DenseSearcher {
    /// Embeds the chunks missing from `store` (appending them as it goes, so an interrupted
    /// run resumes) and builds the index.
    pub fn build(
        towers: Towers,
        chunks: &[Chunk],
        graph: &CallGraph,
        opts: DenseOptions,
        store: &mut VectorStore,
        progress: &dyn Progress,
    ) -> Result<Self> {
        Self::build_in_slices(towers, chunks, graph, opts, store, progress, SLICE, Scope::All)
    }

    /// [`DenseSearcher::build`] over the chunks `scope` names.
    pub fn build_scoped(
        towers: Towers,
        chunks: &[Chunk],
        graph: &CallGraph,
        opts: DenseOptions,
        store: &mut VectorStore,
        progress: &dyn Progress,
        scope: Scope,
    ) -> Result<Self> {
        Self::build_in_slices(towers, chunks, graph, opts, store, progress, SLICE, scope)
    }

    /// [`DenseSearcher::build_scoped`] appending to the store every `slice` inputs.
    #[allow(clippy::too_many_arguments)]
    pub fn build_in_slices(
        towers: Towers,
        chunks: &[Chunk],
        graph: &CallGraph,
        opts: DenseOptions,
        store: &mut VectorStore,
        progress: &dyn Progress,
        slice: usize,
        scope: Scope,
    ) -> Result<Self> {
        let plan = DensePlan::new(&towers.chunk, chunks, graph, &opts);
        let wanted: Option<HashSet<u32>> = match scope {
            Scope::All => None,
            Scope::First(ids) | Scope::Only(ids) => Some(ids.iter().copied().collect()),
        };
        let in_scope = |p: usize| wanted.as_ref().is_none_or(|w| w.contains(&plan.rows[p]));
        let mut missing = plan.missing(store, in_scope);
        if let Scope::First(_) = scope {
            // A cache that lacks only a few vectors besides the query's (the chunks edited
            // since it was filled; every run, where it is read-only) embeds those too: a
            // partial index fuses differently (`PARTIAL_FUSION_DEPTH`) and would answer
            // otherwise than a clean build from the first rank (issue 81).
            let all = plan.missing(store, |_| true);
            if all.len() - missing.len() <= EDITS_COMPLETED.min(plan.len() / 10) {
                missing = all;
            }
        }
        let embedded = plan.embed(&towers.chunk, (chunks, graph, &opts), store, &missing, progress, slice)?;
        let ranked: Vec<usize> = match scope {
            Scope::All => (0..plan.len()).collect(),
            Scope::First(_) => plan.available(store),
            Scope::Only(_) => (0..plan.len()).filter(|&p| in_scope(p)).collect(),
        };
        let mut dense = plan.searcher(towers, opts, store, &ranked)?;
        (dense.embedded, dense.reused) = (embedded, missing.len() - embedded);
        Ok(dense)
    }

    /// How many chunks this index ranks over, and how many the full index would: a
    /// query-first build ranks over fewer until the rest are embedded.
    pub fn coverage(&self) -> (usize, usize) {
        (self.rows.len(), self.eligible)
    }

    /// Whether test files are left out of this index (so of a query's candidates too).
    pub fn skips_tests(&self) -> bool {
        self.opts.skip_tests
    }

    /// Whether this index holds every one of `ids` that the full index would (a query's
    /// candidates: whether the transformer has covered them).
    pub fn holds_all(&self, ids: &[u32]) -> bool {
        if self.is_complete() {
            return true;
        }
        let held: HashSet<u32> = self.rows.iter().copied().collect();
        ids.iter().all(|id| held.contains(id))
    }

    /// How many of `ids` this index holds.
    pub fn holds_count(&self, ids: &[u32]) -> usize {
        let held: HashSet<u32> = self.rows.iter().copied().collect();
        ids.iter().filter(|id| held.contains(id)).count()
    }

    /// Whether every chunk the full index would hold is in this one.
    pub fn is_complete(&self) -> bool {
        self.rows.len() == self.eligible
    }

    /// This partial index, answering through `handle` (its builder is still embedding).
    pub fn with_query_first(mut self, handle: Arc<dyn FillFirst>) -> Self {
        self.first = Some(handle);
        self
    }

    /// Where a search asks for its chunks first, while this index is partial and being built.
    pub fn query_first(&self) -> Option<&Arc<dyn FillFirst>> {
        self.first.as_ref().filter(|_| !self.is_complete())
    }

    /// The transformer's chunk tower, unless the static tier made this index.
    pub fn encoder(&self) -> Option<&Encoder> {
        match &self.tier {
            Tier::Transformer(t) => Some(&t.chunk),
            Tier::Static(_) => None,
        }
    }

    /// Which tier made this index: `transformer` or `static`.
    pub fn tier(&self) -> &Tier {
        &self.tier
    }

    /// Chunk `chunk`'s vector, unless the index left it out (or the store holds it).
    pub fn vector(&self, chunk: usize) -> Option<&[f32]> {
        if self.server.is_some() {
            return None;
        }
        let row = self.rows.binary_search(&(chunk as u32)).ok()?;
        Some(self.index.row(row))
    }

    /// How many chunks the index holds.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The `k` chunks nearest to a query vector.
    fn search_vector(&self, query: &[f32], k: usize) -> Vec<Hit> {
        if let Some(hits) = self.search_in_store(query, k) {
            return hits;
        }
        let mut hits = self.index.search(query, k);
        for h in &mut hits {
            h.chunk = self.rows[h.chunk as usize];
        }
        hits
    }

    /// Embeds `query` (up to `query_max_len` tokens) and returns the `k` nearest chunks.
    pub fn search(&self, query: &str, k: usize) -> Result<Vec<Hit>> {
        let v = self.embed_query(query)?;
        Ok(self.search_vector(&v, k))
    }

    pub fn embed_query(&self, query: &str) -> Result<Vec<f32>> {
        match &self.tier {
            Tier::Transformer(t) => t.embed_query(query, self.opts.query_max_len),
            Tier::Static(table) => {
                let mut ids = Vec::new();
                table.words().extend_ids(query, &mut ids, self.opts.query_max_len)?;
                Ok(table.embed_weighted(&ids, self.idf.as_deref()))
            }
        }
    }

    /// The team's store behind this index (`--store`): what it gave and took; `None` without one.
    pub fn store_stats(&self) -> Option<crate::index::shared::SharedStats> {
        self.opts.shared.as_ref().map(|s| s.0.stats())
    }

    /// The static tier's index over every chunk the plan holds (tests aside, per
    /// [`DenseOptions::skip_tests`]), computed at once on every core (thousands of chunks a
    /// second): each chunk tokenised, the repository's idf taken over them, each vector summed.
    /// Nothing is cached: the idf moves with every edit, and recomputing costs about what
    /// reading a cache would.
    pub fn build_static(table: Arc<StaticTable>, chunks: &[Chunk], opts: DenseOptions) -> Result<Self> {
        let rows: Vec<u32> = (0..chunks.len())
            .filter(|&i| !(opts.skip_tests && chunks[i].is_test()))
            .map(|i| i as u32)
            .collect();
        let use_path = opts.use_path;
        let bags: Vec<Vec<u32>> = rows
            .par_iter()
            .map(|&i| {
                let c = &chunks[i as usize];
                let text = if use_path { c.text.as_str() } else { without_path(&c.text) };
                table.ids(text).map_err(|e| Error::context(format!("static tier, chunk {}", c.key()), e))
            })
            .collect::<Result<_>>()?;
        let idf = opts.static_idf.then(|| Arc::new(Idf::from_bags(&bags, table.vocab_size())));
        let matrix: Vec<f32> =
            bags.par_iter().flat_map_iter(|b| table.embed_weighted(b, idf.as_deref())).collect();
        let index = DenseIndex::from_matrix(table.dim(), matrix);
        let (eligible, embedded) = (rows.len(), rows.len());
        Ok(DenseSearcher {
            tier: Tier::Static(table),
            idf,
            index,
            rows,
            eligible,
            opts,
            embedded,
            reused: 0,
            first: None,
            server: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{RepoIndex, SyntaxCache};
    use crate::model::EncoderOptions;
    use crate::testkit::write_tiny_bert;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    fn repo(extra: &str) -> RepoIndex {
        let files = vec![
            (
                "a.py".to_string(),
                format!("def alpha():\n    return beta()\n\ndef beta():\n    return 1\n{extra}"),
            ),
            ("b.py".to_string(), "class Gamma:\n    def run(self):\n        return alpha()\n".to_string()),
        ];
        RepoIndex::from_texts("r".into(), &files, &mut SyntaxCache::new()).unwrap()
    }

    fn encoder(dir: &std::path::Path) -> Arc<Encoder> {
        write_tiny_bert(dir, &["alpha", "beta", "gamma", "run", "return", "def", "class"]);
        let opts = EncoderOptions { max_len: 64, ..EncoderOptions::default() };
        Arc::new(Encoder::load(dir, &candle_core::Device::Cpu, opts).unwrap())
    }

    /// The paper's input (callees joined), which these tests exercise.
    fn with_callees() -> DenseOptions {
        DenseOptions { use_callgraph: true, ..DenseOptions::default() }
    }

    fn build(enc: &Arc<Encoder>, r: &RepoIndex, store: &mut VectorStore) -> DenseSearcher {
        build_with(Towers::tied(enc.clone()), r, with_callees(), store)
    }

    fn build_with(
        towers: Towers,
        r: &RepoIndex,
        opts: DenseOptions,
        store: &mut VectorStore,
    ) -> DenseSearcher {
        DenseSearcher::build(towers, &r.chunks, &r.graph, opts, store, &crate::progress::NoProgress).unwrap()
    }

    /// Builds into the log at `log` in slices of `slice` inputs until the fourth progress
    /// report cancels it (the phase's start, the slice's start, then one per batch), and
    /// reopens the log as the next run would.
    fn interrupted_build(
        enc: &Arc<Encoder>,
        r: &RepoIndex,
        log: &std::path::Path,
        slice: usize,
    ) -> VectorStore {
        let (mut store, _) = VectorStore::open(log, enc.dim()).unwrap();
        let cancel = CancelAfter(AtomicUsize::new(0), 4);
        let towers = Towers::tied(enc.clone());
        let err = DenseSearcher::build_in_slices(
            towers,
            &r.chunks,
            &r.graph,
            with_callees(),
            &mut store,
            &cancel,
            slice,
            Scope::All,
        );
        assert!(matches!(err, Err(crate::Error::Cancelled)));
        VectorStore::open(log, enc.dim()).unwrap().0
    }

    /// Issue 81: a cache filled before one function was edited (or read-only, where the edit's
    /// vector is never stored) ranked a query-first search over all but that chunk, and the
    /// partial index fused otherwise than a clean build. A few missing vectors are embedded
    /// too; a cold cache stays query-first.
    #[test]
    fn a_query_first_build_completes_a_cache_that_lacks_only_the_edited_chunks() {
        let dir = tempfile::tempdir().unwrap();
        let enc = encoder(dir.path());
        let functions = |edited: &str| -> RepoIndex {
            let mut files: Vec<(String, String)> = (0..12)
                .map(|f| {
                    (
                        format!("m{f:02}.py"),
                        format!("def run_{f}():\n    return alpha()\n\ndef beta_{f}():\n    return {f}\n"),
                    )
                })
                .collect();
            files.push(("z.py".into(), format!("def gamma():\n    return {edited}\n")));
            RepoIndex::from_texts("r".into(), &files, &mut SyntaxCache::new()).unwrap()
        };
        let before = functions("1");
        let mut store = VectorStore::in_memory(enc.dim());
        build_with(Towers::tied(enc.clone()), &before, DenseOptions::default(), &mut store);
        let after = functions("beta_3() + alpha()");
        let first = after.chunks.iter().position(|c| c.name == "run_0").unwrap() as u32;
        let scoped = |store: &mut VectorStore| {
            let (chunks, graph, progress) = (&after.chunks, &after.graph, &crate::progress::NoProgress);
            let scope = Scope::First(std::slice::from_ref(&first));
            let towers = Towers::tied(enc.clone());
            DenseSearcher::build_scoped(
                towers,
                chunks,
                graph,
                DenseOptions::default(),
                store,
                progress,
                scope,
            )
            .unwrap()
        };
        let edited = scoped(&mut store);
        let (ranked, of) = edited.coverage();
        assert_eq!(ranked, of, "the edited chunk embedded too");
        let clean = build_with(
            Towers::tied(enc.clone()),
            &after,
            DenseOptions::default(),
            &mut VectorStore::in_memory(enc.dim()),
        );
        let ids = |d: &DenseSearcher| {
            d.search("gamma beta", 10).unwrap().iter().map(|h| h.chunk).collect::<Vec<_>>()
        };
        assert_eq!(ids(&edited), ids(&clean));
        // A cold cache embeds the query's chunks only.
        let cold = scoped(&mut VectorStore::in_memory(enc.dim()));
        assert!(cold.coverage().0 < cold.coverage().1, "{:?}", cold.coverage());
    }

    /// Cancels after `after` progress reports.
    struct CancelAfter(AtomicUsize, usize);
    impl Progress for CancelAfter {
        fn report(&self, _: Phase, _: usize, _: usize) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
        fn cancelled(&self) -> bool {
            self.0.load(Ordering::SeqCst) >= self.1
        }
    }

    #[test]
    fn neighbours_follow_callees_and_path_can_be_dropped() {
        let r = repo("");
        let inputs = encoder_inputs(&r.chunks, &r.graph, &with_callees());
        let alpha = r.chunks.iter().position(|c| c.name == "alpha").unwrap();
        assert_eq!(inputs[alpha].neighbours.len(), 1);
        assert!(inputs[alpha].neighbours[0].contains("def beta"));
        let off = DenseOptions { use_callgraph: false, use_path: false, ..DenseOptions::default() };
        let plain = encoder_inputs(&r.chunks, &r.graph, &off);
        assert!(plain[alpha].neighbours.is_empty());
        assert!(plain[alpha].chunk.starts_with("def alpha"));
    }

    #[test]
    fn test_files_stay_out_of_the_dense_index_unless_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let enc = encoder(&dir.path().join("m"));
        let files = vec![
            ("pkg/a.py".to_string(), "def alpha():\n    return 1\n".to_string()),
            ("tests/test_a.py".to_string(), "def test_alpha():\n    assert alpha() == 1\n".to_string()),
        ];
        let r = RepoIndex::from_texts("r".into(), &files, &mut SyntaxCache::new()).unwrap();
        let test_chunk = r.chunks.iter().position(|c| c.path.starts_with("tests/")).unwrap() as u32;
        let mut store = VectorStore::in_memory(enc.dim());
        let build = |opts: DenseOptions, store: &mut VectorStore| {
            build_with(Towers::tied(enc.clone()), &r, opts, store)
        };
        let skip = build(DenseOptions::default(), &mut store);
        assert_eq!(skip.embedded, r.chunks.len() - 1, "the test chunk is not embedded");
        let hits = skip.search("test alpha", 10).unwrap();
        assert_eq!(hits.len(), r.chunks.len() - 1);
        assert!(hits.iter().all(|h| h.chunk != test_chunk));
        assert!(skip.vector(test_chunk as usize).is_none());
        let all = build(DenseOptions { skip_tests: false, ..DenseOptions::default() }, &mut store);
        assert_eq!(all.embedded, 1, "only the test chunk is new");
        assert!(all.search("test alpha", 10).unwrap().iter().any(|h| h.chunk == test_chunk));
    }

    #[test]
    fn tied_tower_layers_make_a_new_chunk_tower_with_its_own_cache() {
        let dir = tempfile::tempdir().unwrap();
        let enc = encoder(&dir.path().join("m"));
        let r = repo("");
        let log = dir.path().join("v.log");
        let (mut store, _) = VectorStore::open(&log, enc.dim()).unwrap();
        let plain = build(&enc, &r, &mut store);
        let layer = |towers: &str| {
            let t = crate::model::LayerTensor {
                name: "encoder.layer.1.output.dense.bias".into(),
                shape: vec![enc.dim()],
                values: vec![0.3; enc.dim()],
            };
            let meta = [(crate::model::tower_layers::META_TOWERS.to_string(), towers.to_string())].into();
            crate::model::TowerLayers::from_tensors(vec![t], &enc.model_id(), meta).unwrap()
        };
        let both = layer(crate::model::tower_layers::BOTH_TOWERS);
        let layered = Arc::new(crate::model::with_tower_layers(&enc, &both, "both.safetensors").unwrap());
        assert_ne!(layered.fingerprint(), enc.fingerprint(), "new chunk vectors get their own cache key");
        assert!(layered.model_id().starts_with(&enc.model_id()) && layered.model_id().contains("layers-"));
        let (mut store, _) = VectorStore::open(&log, enc.dim()).unwrap();
        let relaid = build(&layered, &r, &mut store);
        assert_eq!(relaid.embedded, r.chunks.len(), "every chunk is embedded by the new tower");
        let alpha = r.chunks.iter().position(|c| c.name == "alpha").unwrap();
        assert_ne!(relaid.vector(alpha).unwrap(), plain.vector(alpha).unwrap());
        assert_ne!(
            relaid.embed_query("alpha").unwrap(),
            plain.embed_query("alpha").unwrap(),
            "tied: queries too"
        );

        // Layers an older build trained for the query tower alone are refused, naming the file.
        let query_only = layer("query");
        let err =
            crate::model::with_tower_layers(&enc, &query_only, "q.safetensors").err().unwrap().to_string();
        assert!(err.contains("q.safetensors") && err.contains("query tower only"), "{err}");
        let err =
            crate::model::with_tower_layers(&layered, &both, "both.safetensors").err().unwrap().to_string();
        assert!(
            err.contains("layers trained from"),
            "laid over the model they were trained from only: {err}"
        );
    }

    /// Keeps every embedding-work report.
    #[derive(Default)]
    struct RecordWork(std::sync::Mutex<Vec<EmbedWork>>);
    impl Progress for RecordWork {
        fn report(&self, _: Phase, _: usize, _: usize) {}
        fn report_embed_work(&self, work: EmbedWork) {
            self.0.lock().unwrap().push(work);
        }
    }

    #[test]
    fn vectors_are_reused_after_an_edit_and_an_interrupted_run_resumes() {
        let dir = tempfile::tempdir().unwrap();
        let enc = encoder(&dir.path().join("m"));
        let log = dir.path().join("v.log");
        let r = repo("");
        let n = r.chunks.len();

        // Interrupt after the first slice of one input has been appended.
        let mut store = interrupted_build(&enc, &r, &log, 1);
        let saved = store.len();
        assert!(saved >= 1 && saved < n, "{saved} of {n} saved");

        let work = RecordWork::default();
        let full = DenseSearcher::build_in_slices(
            Towers::tied(enc.clone()),
            &r.chunks,
            &r.graph,
            with_callees(),
            &mut store,
            &work,
            1,
            Scope::All,
        )
        .unwrap();
        assert_eq!(full.embedded, n - saved, "the resumed run embeds only what is missing");
        let reports = work.0.into_inner().unwrap();
        let (first, last) = (reports[0], reports[reports.len() - 1]);
        assert_eq!(first.cached, saved, "the resumed run says what it kept");
        assert_eq!((first.tokens_done, last.tokens_done), (0, last.tokens_total));
        assert!(reports.windows(2).all(|w| w[0].tokens_done <= w[1].tokens_done), "{reports:?}");
        let again = build(&enc, &r, &mut store);
        assert_eq!(again.embedded, 0);

        // A new function: only it (and the module chunk, if its text changed) is embedded.
        let edited = repo("\ndef delta():\n    return 2\n");
        let after = build(&enc, &edited, &mut store);
        assert_eq!(after.embedded, 1);
        assert_eq!(after.search("delta", 10).unwrap().len(), edited.chunks.len());
    }

    #[test]
    fn an_interrupt_inside_a_slice_keeps_the_finished_batches() {
        let dir = tempfile::tempdir().unwrap();
        write_tiny_bert(&dir.path().join("m"), &["alpha", "beta", "gamma", "run", "return", "def"]);
        // One input per batch, one slice for the whole repository: a small repository
        // interrupted half-way must not lose everything.
        let opts = EncoderOptions { max_len: 64, batch_size: 1, ..EncoderOptions::default() };
        let enc = Arc::new(Encoder::load(&dir.path().join("m"), &candle_core::Device::Cpu, opts).unwrap());
        let log = dir.path().join("v.log");
        let r = repo("");
        let n = r.chunks.len();
        assert!(n >= 3, "{n}");
        let mut store = interrupted_build(&enc, &r, &log, SLICE);
        let kept = store.len();
        assert!(kept >= 1 && kept < n, "{kept} of {n} kept");
        let resumed = build(&enc, &r, &mut store);
        assert_eq!(resumed.embedded, n - kept, "the rerun embeds only what is missing");
        let mut clean = VectorStore::in_memory(enc.dim());
        let fresh = build(&enc, &r, &mut clean);
        assert_eq!(resumed.search("alpha", n).unwrap(), fresh.search("alpha", n).unwrap());
    }

    #[test]
    fn an_edit_past_the_token_budget_reuses_the_stored_vectors() {
        let dir = tempfile::tempdir().unwrap();
        let enc = encoder(&dir.path().join("m"));
        // beta is far longer than the 64-token budget; alpha's input ends inside beta's text.
        let files = |last: &str| {
            let body = "    x = alpha\n".repeat(80);
            let a = format!("def alpha():\n    return beta()\n\ndef beta():\n{body}    return {last}\n");
            RepoIndex::from_texts("r".into(), &[("a.py".to_string(), a)], &mut SyntaxCache::new()).unwrap()
        };
        let mut store = VectorStore::in_memory(enc.dim());
        let original = files("1");
        let names: Vec<&str> = original.chunks.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["alpha", "beta"]);
        let first = build(&enc, &original, &mut store);
        assert_eq!((first.embedded, first.reused), (2, 0));
        let stored = store.len();

        let edited = files("2");
        let again = build(&enc, &edited, &mut store);
        assert_eq!((again.embedded, again.reused), (0, 2), "alpha's and beta's token ids are unchanged");
        assert_eq!(store.len(), stored, "no vector was added");
        let before = first.search("alpha beta", 3).unwrap();
        let after = again.search("alpha beta", 3).unwrap();
        assert_eq!(before, after);
    }

    #[test]
    fn empty_and_very_long_queries_work() {
        let dir = tempfile::tempdir().unwrap();
        let enc = encoder(&dir.path().join("m"));
        let r = repo("");
        let mut store = VectorStore::in_memory(enc.dim());
        let d = build(&enc, &r, &mut store);
        assert_eq!(d.search("", 3).unwrap().len(), 3);
        let long = "alpha beta gamma ".repeat(5000);
        let hits = d.search(&long, 3).unwrap();
        assert_eq!(hits.len(), 3);
        assert!(hits[0].score.is_finite());
    }

    #[test]
    fn the_static_tier_indexes_every_chunk_at_once_and_ranks_by_shared_tokens() {
        let table = Arc::new(crate::testkit::tiny_static_table(&["alpha", "beta", "gamma", "run"], 64));
        let r = repo("");
        let d = DenseSearcher::build_static(table.clone(), &r.chunks, DenseOptions::default()).unwrap();
        assert_eq!(d.tier().name(), "static");
        assert!(d.is_complete() && d.len() == r.chunks.len());
        let top = d.search("gamma run", 1).unwrap();
        assert_eq!(r.chunks[top[0].chunk as usize].path, "b.py", "{top:?}");
        // Built again (another process, an edit elsewhere): the same vectors to the bit.
        let again = DenseSearcher::build_static(table, &r.chunks, DenseOptions::default()).unwrap();
        assert_eq!(again.search("gamma run", 3).unwrap(), d.search("gamma run", 3).unwrap());
        // A query with no token the table knows gives a defined ranking (zeros), never NaN.
        assert!(d.search("", 3).unwrap().iter().all(|h| h.score.is_finite()));
    }

    /// The mixed tier: the static tier as the hybrid's third list beside the transformer's;
    /// the answer says so, and at weight 0 it is today's hybrid to the bit.
    #[test]
    fn the_mixed_tier_fuses_the_static_tier_beside_the_transformer_and_says_so() {
        use crate::index::Retriever;
        use crate::rank::fusion::FusionParams;
        use crate::rank::Searcher;
        let dir = tempfile::tempdir().unwrap();
        let enc = encoder(dir.path());
        let table = Arc::new(crate::testkit::tiny_static_table(&["alpha", "beta", "gamma", "run"], 64));
        let r = Arc::new(repo(""));
        let mut store = VectorStore::in_memory(enc.dim());
        let two_way = Searcher::bm25_only(r.clone())
            .with_dense_store(
                Towers::tied(enc.clone()),
                with_callees(),
                &mut store,
                &crate::progress::NoProgress,
            )
            .unwrap();
        assert_eq!(two_way.dense_tier(), Some("transformer"));
        let off = two_way.with_static_side(table.clone(), DenseOptions::default()).unwrap();
        assert_eq!(off.dense_tier(), Some("transformer"), "weight 0: not fused");
        let query = "gamma run alpha";
        let hybrid = |s: &Searcher| s.search(query, Retriever::Hybrid, 5).unwrap();
        assert_eq!(hybrid(&off), hybrid(&two_way));
        // The static list alone (the others silenced, no boosts): the hybrid is its order.
        let fusion = FusionParams {
            bm25_weight: 0.0,
            dense_weight: 0.0,
            mixed_static_weight: 1.0,
            path_boost: 0.0,
            symbol_boost: 0.0,
            name_boost: 0.0,
            path_word_boost: 0.0,
            module_weight: 0.0,
            ..FusionParams::default()
        };
        let mixed = Searcher { fusion, ..off.clone_sides() };
        let mixed = Searcher { dense: off.dense.clone(), ..mixed };
        assert_eq!(mixed.dense_tier(), Some("mixed"));
        let static_alone = table_ranking(&table, &r, query);
        let top = hybrid(&mixed);
        assert_eq!(top[0].chunk, static_alone, "the static tier's best leads");
        assert!(top.iter().all(|h| h.score.is_finite()));
    }

    fn table_ranking(table: &Arc<StaticTable>, r: &RepoIndex, query: &str) -> u32 {
        let d = DenseSearcher::build_static(table.clone(), &r.chunks, DenseOptions::default()).unwrap();
        d.search(query, 1).unwrap()[0].chunk
    }
}
