//! Headless query: `coret-tui PATH --query TEXT|- [--retriever ...] [--top N] [--json [--snippets N]]`;
//! hybrid by default.

use super::args::{Args, DenseTierArg};
use super::progress::BarProgress;
use super::Usage;
use coret::engine::{IndexOptions, RepoIndex};
use coret::index::{Hit, Retriever};
use coret::progress::NoProgress;
use coret::rank::dense_retriever::{Scope, Tier};
use coret::rank::searcher::query_first_size;
use coret::rank::{Ask, Searcher};
use coret::repo::lines::span_lines;
use serde_json::{json, Value};
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

/// Without `--retriever`: the best on the dev set (README "Results"), BM25 alone without a model.
const DEFAULT_RETRIEVER: Retriever = Retriever::Hybrid;

pub fn run(args: &Args, checkout: &Path) -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    let (query, mut tiers) = prepare(args, std::slice::from_ref(&checkout.to_path_buf()))?;
    let loaded = started.elapsed().as_secs_f64();
    let built = searcher_for(args, checkout, &mut tiers, &query)?;
    let fallback = tiers.fallback.clone();
    let retrievers = tiers.retrievers.clone();
    let Built { searcher, device, towers, embedded, coverage, embed_seconds } = built;
    let opts = super::model::dense_options(args);
    store_note(&opts);
    let dense_tier = searcher.dense_tier();
    let searcher_ranks_in_store = store_search_json(&searcher);
    let search_started = std::time::Instant::now();
    let ask = Ask { query: &query, retrievers: &retrievers, top: args.top, rerank: true };
    let answer = searcher.answer(&ask)?;
    // The hybrid's head re-ordered (`stats.rerank`: how deep, how long the reranker took).
    let rerank_stats = answer.reranked.as_ref().map(|r| json!({"depth": r.depth, "seconds": r.seconds}));
    let results = answer.final_lists();
    let timings = Timings {
        model: loaded,
        index: searcher.repo.stats.seconds,
        embed: embed_seconds,
        search: search_started.elapsed().as_secs_f64(),
        total: started.elapsed().as_secs_f64(),
    };
    let index = &searcher.repo;
    let test_weight = searcher.fusion.test_weight;
    if args.json {
        let mut v = to_json(index, &query, &results, test_weight);
        if args.snippets > 0 {
            add_snippets(index, &mut v, &results, args.snippets);
        }
        add_files(index, &mut v, &results, args.order.resolve(&query));
        if let Some(d) = device {
            v["stats"]["device"] = Value::String(d);
        }
        if let Some(t) = &towers {
            v["stats"]["towers"] = serde_json::to_value(t)?;
        }
        if let Some(n) = embedded {
            v["stats"]["embedded"] = Value::from(n);
        }
        if let Some((ranked, of)) = coverage {
            v["stats"]["dense_coverage"] = json!({"ranked": ranked, "of": of});
        }
        if let Some(tier) = dense_tier {
            v["stats"]["dense_tier"] = Value::String(tier.into());
        }
        if let Some(r) = rerank_stats {
            v["stats"]["rerank"] = r;
        }
        if let Some(why) = fallback {
            v["stats"]["fallback"] = Value::String(why);
        }
        if let Some(shared) = &opts.shared {
            v["stats"]["store"] = serde_json::to_value(shared.0.stats())?;
        }
        if let Some(s) = searcher_ranks_in_store {
            v["stats"]["store"]["search"] = s;
        }
        v["stats"]["timings"] = serde_json::to_value(timings)?;
        println!("{}", serde_json::to_string(&v)?);
    } else {
        print_table(index, &results, test_weight, &timings, args.order.resolve(&query));
    }
    Ok(())
}

/// `--store-search`: what ranked where (`stats.store.search`; over several checkouts, each
/// one's `store_search`); `None` where the dense side ranks here.
pub(super) fn store_search_json(searcher: &Searcher) -> Option<Value> {
    let dense = searcher.dense.as_ref()?;
    let s = dense.ranks_in_store()?;
    Some(
        json!({"hnsw_index": s.indexed, "chunks_ranked_here": s.ranked_here(), "chunks": dense.coverage().1}),
    )
}

/// What every query does first: each checkout checked (a path with no source file of a
/// supported language is one line and exit 2, before any model loads), the query read, the
/// tiers loaded.
pub(super) fn prepare(args: &Args, checkouts: &[std::path::PathBuf]) -> anyhow::Result<(String, Tiers)> {
    for path in checkouts {
        coret::engine::check_checkout(path, args.langs.unwrap_or_default())?;
    }
    let query = read_query(args.query.as_deref().unwrap_or_default())?;
    // One rule for an empty query, a blank one and one of stop words or punctuation alone,
    // before any model loads.
    if let Some(why) = coret::index::query_terms::nothing_to_search(&query) {
        let from = empty_from(args.query.as_deref(), &query);
        anyhow::bail!(Usage(format!("--query: nothing to search for{from}: {why}")));
    }
    Ok((query.clone(), load_tiers(args, &query)?))
}

/// What the dense half loaded, once per process, before any index: the rankings that can be
/// given, the tiers, the reranker.
pub(super) struct Tiers {
    pub retrievers: Vec<Retriever>,
    model: Option<super::model::LoadedModel>,
    table: Option<Arc<coret::model::static_tier::StaticTable>>,
    /// Why the query is answered by BM25 alone, when it is.
    pub fallback: Option<String>,
    reranker: Option<Arc<coret::rerank::Reranker>>,
}

impl Tiers {
    pub fn reranker_loaded(&self) -> bool {
        self.reranker.is_some()
    }
}

/// Loads what the tier asked for before indexing, so a missing model or table fails fast;
/// notes go to stderr.
fn load_tiers(args: &Args, query: &str) -> anyhow::Result<Tiers> {
    let mut retrievers = args.retrievers_or(&[DEFAULT_RETRIEVER]);
    let needs_dense = retrievers.iter().any(|r| matches!(r, Retriever::Dense | Retriever::Hybrid));
    let mut notes: Vec<String> = Vec::new();
    // `auto` is the transformer wherever its model loads; the static tier answers where it
    // cannot, and answers a question or a name at once where the transformer has not embedded
    // its candidates (`static_first`). An issue waits for the transformer: the static tier's
    // hybrid is not within 0.02 MRR of the transformer's on the dev sets (docs/RESULTS.md
    // "The static tier", "The ranking layer").
    let want_transformer = needs_dense && args.dense != DenseTierArg::Static;
    let model = match want_transformer.then(|| super::model::load(args)).transpose() {
        Ok(m) => m,
        // `auto` still answers from the static tier; otherwise BM25 alone, saying why.
        Err(e) if args.dense == DenseTierArg::Auto && e.downcast_ref::<Usage>().is_none() => {
            notes.push(format!("no model could be loaded ({e:#})"));
            None
        }
        Err(e) if args.retriever.is_none() && e.downcast_ref::<Usage>().is_none() => {
            notes.push(format!("no model could be loaded ({e:#})"));
            None
        }
        Err(e) => return Err(e),
    };
    // The static tier where it was asked for, or where `auto` has no transformer.
    let want_static = needs_dense
        && match args.dense {
            DenseTierArg::Static => true,
            // Beside the transformer too when the mixed tier is asked for (a weight above 0).
            DenseTierArg::Auto => {
                model.is_none() || args.mixed_static_weight > 0.0 || static_first(args, query)
            }
            DenseTierArg::Transformer => false,
        };
    let table = match want_static.then(|| super::model::load_static(args)).transpose() {
        Ok(t) => t,
        // A bad table never ranks: the transformer (or BM25) serves alone, and the note says so.
        Err(e) if args.dense == DenseTierArg::Auto => {
            notes.push(format!("{e:#}; the static tier is off"));
            None
        }
        Err(e) => return Err(e),
    };
    let mut fallback = None;
    if needs_dense && model.is_none() && table.is_none() {
        let why = format!("{}; answered by bm25 alone", notes.join("; "));
        fallback = Some(why);
        notes.clear();
        retrievers = vec![Retriever::Bm25];
    }
    if let Some(why) = &fallback {
        eprintln!("note: {why}");
    }
    notes.iter().for_each(|n| eprintln!("note: {n}"));
    let reranker = super::model::load_reranker(args, model.as_ref().map(|m| m.towers.chunk.device()))?;
    if let Some(r) = &reranker {
        eprintln!("{}", super::model::describe_reranker(args, r));
    }
    Ok(Tiers { retrievers, model, table, fallback, reranker })
}

/// Whether `--dense auto` may answer `query` from the static tier at once, where the
/// transformer has not covered its candidates: a question or a name
/// ([`coret::rank::QueryShape::static_answers_at_once`]), unless `--wait-index` asks for every
/// chunk or the mixed tier fuses both.
fn static_first(args: &Args, query: &str) -> bool {
    args.dense == DenseTierArg::Auto
        && !args.wait_index
        && args.mixed_static_weight <= 0.0
        && coret::rank::QueryShape::of(query).static_answers_at_once()
}

/// One checkout's searcher and what building its dense index did.
pub(super) struct Built {
    pub searcher: Searcher,
    pub device: Option<String>,
    pub towers: Option<coret::model::TowerNames>,
    pub embedded: Option<usize>,
    pub coverage: Option<(usize, usize)>,
    pub embed_seconds: f64,
}

/// Indexes `path` and builds what `tiers` loaded over it: the history where a ranking needs
/// it (a checkout without one drops `history` from `--retriever all`), the dense index
/// query-first unless `--wait-index`.
pub(super) fn searcher_for(
    args: &Args,
    path: &Path,
    tiers: &mut Tiers,
    query: &str,
) -> anyhow::Result<Built> {
    let index = open_index_at(path, &index_options(args))?;
    let mut searcher = Searcher::bm25_only(Arc::new(index));
    searcher.fusion = super::model::fusion_params(args);
    searcher.reranker = tiers.reranker.clone();
    let retrievers = &mut tiers.retrievers;
    let fuses_history = retrievers.contains(&Retriever::Hybrid) && searcher.fusion.history_weight > 0.0;
    if retrievers.contains(&Retriever::History) || fuses_history {
        let (history, notes) =
            coret::history::checkout_history(&searcher.repo.root, searcher.repo.cache_entry.as_deref());
        notes.iter().for_each(|n| eprintln!("note: {n}"));
        if history.is_none() && args.asked_all() {
            eprintln!("note: no git history in {}: --retriever all ranks without history", path.display());
            retrievers.retain(|r| *r != Retriever::History);
        }
        searcher.history = history;
    }
    let (mut device, mut towers, mut embedded, mut coverage) = (None, None, None, None);
    let embed_started = std::time::Instant::now();
    let opts = super::model::dense_options(args);
    // A question or a name where the transformer has not embedded its candidates: the static
    // tier answers at once, and says so; where it has, the transformer answers from its cache.
    let (mut model, mut table) = (tiers.model.as_ref(), tiers.table.clone());
    if let (Some(m), true) = (model, table.is_some() && static_first(args, query)) {
        let n = args.query_first.unwrap_or_else(|| query_first_size(searcher.repo.chunks.len()));
        let candidates = searcher.query_candidates(query, n, opts.skip_tests)?;
        let cached =
            searcher.with_dense_scoped(m.towers.clone(), opts.clone(), Scope::First(&[]), &NoProgress)?;
        let held = cached.dense.as_ref().map_or(0, |d| d.holds_count(&candidates));
        if held == candidates.len() {
            (searcher, device, towers, model, table) =
                (cached, Some(m.device.clone()), Some(m.towers.names()), None, None);
        } else {
            eprintln!(
                "note: the static tier answered at once ({}); the transformer holds {held} of this query's {} \
                 candidates (--dense transformer or --wait-index waits for it)",
                coret::rank::QueryShape::of(query),
                candidates.len()
            );
            model = None;
        }
    }
    if let Some(m) = model {
        // Query-first unless asked to wait: the chunks this query needs, then the answer.
        let wanted = match args.wait_index {
            true => None,
            false => {
                let n = args.query_first.unwrap_or_else(|| query_first_size(searcher.repo.chunks.len()));
                Some(searcher.query_candidates(query, n, opts.skip_tests)?)
            }
        };
        let progress = match &wanted {
            Some(_) => BarProgress::noting(&format!(
                " this query's chunks, of {} (--wait-index: all)",
                searcher.repo.chunks.len()
            )),
            None => BarProgress::new(),
        };
        towers = Some(m.towers.names());
        let scope = wanted.as_deref().map_or(Scope::All, Scope::First);
        let dense = match opts.rank_in_store {
            true => searcher.with_dense_in_store(m.towers.clone(), opts.clone(), &progress),
            false => searcher.with_dense_scoped(m.towers.clone(), opts.clone(), scope, &progress),
        };
        progress.finish();
        searcher = dense?;
        device = Some(m.device.clone());
    }
    match (table, searcher.dense.is_some()) {
        (Some(t), false) => {
            towers = Some(Tier::Static(t.clone()).names());
            searcher = searcher.with_static(t, opts.clone())?;
        }
        (Some(t), true) => searcher = searcher.with_static_side(t, opts.clone())?,
        (None, _) => {}
    }
    if let Some(d) = searcher.dense.as_ref() {
        embedded = Some(d.embedded);
        coverage = Some(d.coverage());
        if !d.is_complete() {
            let (ranked, of) = d.coverage();
            eprintln!(
                "note: dense ranked over {ranked} of {of} chunks (those this query needs first and those \
                 cached); --wait-index embeds the rest first"
            );
        }
    }
    let embed_seconds = embed_started.elapsed().as_secs_f64();
    Ok(Built { searcher, device, towers, embedded, coverage, embed_seconds })
}

/// The store's one status line while it has trouble.
pub(super) fn store_note(opts: &coret::rank::dense_retriever::DenseOptions) {
    if let Some(trouble) = opts.shared.as_ref().and_then(|s| s.0.stats().trouble) {
        let shown = opts.shared.as_ref().map_or("", |s| s.0.shown());
        eprintln!("note: store {shown}: {trouble}");
    }
}

/// Where a query with nothing to search came from, for its error: stdin that was empty, or
/// held only whitespace (issue 70: a blank line read "stdin was empty").
fn empty_from(arg: Option<&str>, query: &str) -> &'static str {
    match (arg, query.is_empty()) {
        (Some("-"), true) => " (stdin was empty)",
        (Some("-"), false) => " (stdin held only whitespace)",
        _ => "",
    }
}

fn read_query(arg: &str) -> anyhow::Result<String> {
    if arg != "-" {
        return Ok(arg.to_string());
    }
    let mut bytes = Vec::new();
    std::io::stdin()
        .read_to_end(&mut bytes)
        .map_err(|e| anyhow::anyhow!("reading the query from stdin: {e}"))?;
    // An issue pasted from a mail or a log may carry a Latin-1 byte: keep the rest of it.
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The neighbours' keys, an overload's with its line (`coret::chunk::told_apart`).
fn neighbour_keys(index: &RepoIndex, ids: &[u32]) -> Vec<String> {
    let chunks = ids.iter().filter_map(|&i| index.chunks.get(i as usize));
    coret::chunk::told_apart(&chunks.map(|c| (c.key(), c.start_line)).collect::<Vec<_>>())
}

/// Whether a hit was ranked as if at rank / `test_weight` (a test file's): its `score` stays the
/// retriever's, so it may exceed the scores ranked above it.
fn demoted(index: &RepoIndex, hit: &Hit, test_weight: f32) -> bool {
    test_weight < 1.0 && index.chunks[hit.chunk as usize].is_test()
}

pub(super) fn hit_json(index: &RepoIndex, rank: usize, hit: &Hit, test_weight: f32) -> Value {
    let c = &index.chunks[hit.chunk as usize];
    let id = hit.chunk as usize;
    json!({
        "rank": rank,
        "score": hit.score,
        "demoted": demoted(index, hit, test_weight),
        "path": c.path,
        "kind": c.shown_kind().as_str(),
        "name": c.written_name(),
        "start_line": c.start_line,
        "end_line": c.end_line,
        "callees": neighbour_keys(index, &index.graph.callees[id]),
        "callers": neighbour_keys(index, &index.graph.callers[id]),
        "unresolved": index.graph.unresolved.get(id).cloned().unwrap_or_default(),
    })
}

/// `--snippets N`: each hit's first `n` lines of code (`code`) and the chunk's line count
/// (`code_lines`), read from the working tree once per file.
fn add_snippets(index: &RepoIndex, v: &mut Value, results: &[(Retriever, Vec<Hit>)], n: usize) {
    let mut sources = std::collections::HashMap::new();
    for (r, hits) in results {
        let Some(list) = v["results"][r.as_str()].as_array_mut() else { continue };
        for (entry, hit) in list.iter_mut().zip(hits) {
            let c = &index.chunks[hit.chunk as usize];
            let source = sources.entry(c.path.as_str()).or_insert_with(|| index.file_source(&c.path));
            let code = match source {
                Some(text) => span_lines(text, c.start_line, c.end_line, n),
                None => span_lines(coret::rank::dense_retriever::without_path(&c.text), 1, usize::MAX, n),
            };
            entry["code"] = Value::String(code.text);
            entry["code_lines"] = Value::from(code.total);
        }
    }
}

/// The grouped view beside the flat lists: `files` holds, per ranking, one entry per file at
/// its best chunk's rank (`rank` counts files, `best_rank` is that chunk's rank in `results`),
/// its ranked chunks nested in `chunks` (the row's chunk first, each as in `results`); the
/// module chunk belongs to its file ([`coret::rank::group`]). `order` says which of the two
/// a person is shown for this query (`--order`; auto: by `query_shape`).
pub fn add_files(
    index: &RepoIndex,
    v: &mut Value,
    results: &[(Retriever, Vec<Hit>)],
    (order, shape): (coret::rank::ResultOrder, coret::rank::QueryShape),
) {
    let mut files = serde_json::Map::new();
    for (r, hits) in results {
        let flat = v["results"][r.as_str()].as_array().cloned().unwrap_or_default();
        let groups = coret::rank::group::group_in(index, hits);
        let list: Vec<Value> = groups
            .iter()
            .enumerate()
            .map(|(i, g)| {
                let chunks: Vec<Value> =
                    g.hits.iter().filter_map(|h| flat.get(h.rank - 1).cloned()).collect();
                json!({
                    "rank": i + 1,
                    "path": g.path,
                    "best_rank": g.best_rank(),
                    "score": g.best_score(),
                    "more": g.more(),
                    "chunks": chunks,
                })
            })
            .collect();
        files.insert(r.as_str().to_string(), Value::Array(list));
    }
    v["files"] = Value::Object(files);
    v["order"] = Value::String(order.as_str().into());
    v["query_shape"] = Value::String(shape.as_str().into());
}

/// How much of the query the JSON echoes: a 2 MB log pasted as an issue is searched whole but
/// not printed back whole (`query_chars` gives its full length).
const ECHO_CHARS: usize = 4096;

fn echoed(query: &str) -> String {
    match query.char_indices().nth(ECHO_CHARS) {
        Some((cut, _)) => format!("{}…", &query[..cut]),
        None => query.to_string(),
    }
}

/// Each hit's `score` is its retriever's; `demoted` says the ranking counted it lower (tests).
pub fn to_json(index: &RepoIndex, query: &str, results: &[(Retriever, Vec<Hit>)], test_weight: f32) -> Value {
    let s = &index.stats;
    let mut map = serde_json::Map::new();
    for (r, hits) in results {
        let list: Vec<Value> =
            hits.iter().enumerate().map(|(i, h)| hit_json(index, i + 1, h, test_weight)).collect();
        map.insert(r.as_str().to_string(), Value::Array(list));
    }
    json!({
        "repo": index.root.display().to_string(),
        "query": echoed(query),
        "query_chars": query.chars().count(),
        "stats": {
            "files": s.files,
            "chunks": s.chunks,
            "edges": s.edges,
            "skipped": s.skipped,
            "syntax_errors": s.syntax_errors,
            // Every note of the index, also those stderr said on an earlier run.
            "notes": index.notes,
            "cache": s.cache,
            "seconds": s.seconds,
            "test_weight": test_weight,
        },
        "results": map,
    })
}

/// One table per retriever, its columns aligned across the lists; the totals on stderr. A `↓`
/// after a score marks a demoted hit (a test file's), as in the TUI.
fn print_table(
    index: &RepoIndex,
    results: &[(Retriever, Vec<Hit>)],
    test_weight: f32,
    t: &Timings,
    (order, shape): (coret::rank::ResultOrder, coret::rank::QueryShape),
) {
    let location = |h: &Hit| index.chunks[h.chunk as usize].location();
    let width = results.iter().flat_map(|(_, hits)| hits.iter().map(|h| location(h).chars().count())).max();
    for (r, hits) in results {
        println!("{r}");
        if hits.is_empty() {
            println!("  (no results)");
        }
        let line = |rank: String, h: &Hit| {
            let c = &index.chunks[h.chunk as usize];
            println!(
                "{:>4}  {:>8.3}{} {:<w$}  {:<8}  {}",
                rank,
                h.score,
                if demoted(index, h, test_weight) { "↓" } else { " " },
                location(h),
                c.shown_kind().as_str(),
                c.written_name(),
                w = width.unwrap_or(0)
            );
        };
        match order {
            coret::rank::ResultOrder::Flat => {
                hits.iter().enumerate().for_each(|(i, h)| line((i + 1).to_string(), h))
            }
            // One row per file, its other chunks beneath (indented by their flat rank).
            coret::rank::ResultOrder::Grouped => {
                for (i, g) in coret::rank::group::group_in(index, hits).iter().enumerate() {
                    line((i + 1).to_string(), &g.head().hit);
                    g.hits[1..].iter().for_each(|h| line(format!("·{}", h.rank), &h.hit));
                }
            }
        }
    }
    eprintln!("order: {order} ({shape} query; --order flat|grouped|auto)");
    let s = &index.stats;
    let cache = s.cache.describe();
    eprintln!(
        "{} files, {} chunks, {} call edges, {}; {:.2}s in all: indexed in {:.2}s ({cache}), embedded in {:.2}s, ranked in {:.2}s",
        s.files,
        s.chunks,
        s.edges,
        s.skipped.describe(),
        t.total,
        t.index,
        t.embed,
        t.search,
    );
}

/// Where a headless query's wall time went, in seconds (`stats.timings`). `total` is from
/// launch to the results; `model` is what came before indexing (reading the query, loading
/// the model), `index` the structural index (walk, parse, call graph, BM25; `stats.seconds`),
/// `embed` the dense index (embedding what the vector cache lacks), `search` the rankings.
#[derive(serde::Serialize)]
struct Timings {
    model: f64,
    index: f64,
    embed: f64,
    search: f64,
    total: f64,
}

/// The index options the flags ask for.
pub(super) fn index_options(args: &Args) -> IndexOptions {
    IndexOptions {
        max_file_size: args.max_file_size,
        cache_dir: args.cache_dir.clone(),
        no_cache: args.no_cache,
        langs: args.langs.unwrap_or_default(),
        keep_generated: args.include_generated,
    }
}

/// Indexes `args.path` with a progress bar on stderr and prints there the index's notes that
/// are new since the last run over its cache (a warm run does not repeat them; `--json` lists
/// them all in `stats.notes`).
pub(super) fn open_index(args: &Args, opts: &IndexOptions) -> anyhow::Result<RepoIndex> {
    open_index_at(&args.path, opts)
}

/// [`open_index`] of `path`.
pub(super) fn open_index_at(path: &Path, opts: &IndexOptions) -> anyhow::Result<RepoIndex> {
    let progress = BarProgress::new();
    let index = RepoIndex::open(path, opts, &progress);
    progress.finish();
    let index = index?;
    let notes = index.notes_new_since_last_run();
    // A checkout with thousands of vendored or generated files should not bury the results.
    const MAX_NOTES: usize = 20;
    for note in notes.iter().take(MAX_NOTES) {
        eprintln!("note: {note}");
    }
    if notes.len() > MAX_NOTES {
        eprintln!("note: … and {} more", notes.len() - MAX_NOTES);
    }
    Ok(index)
}
