//! The hybrid ranking's steps, after the retrievers have ranked: fusing BM25's and the dense
//! lists (with the static tier's and the history's when they are fused), what the query names
//! lifted, tests demoted, module code following its file's hit, call-graph propagation.

use crate::engine::RepoIndex;
use crate::index::Hit;
use crate::rank::fusion::{demote_tests, fuse, FusionParams};
use crate::rank::layer;
use crate::rank::mentions::{NamedFiles, NamedSymbols};
use crate::rank::QueryShape;

/// [`demote_tests`] by `Chunk::is_test` of `repo`'s chunks.
pub fn demote_tests_in(repo: &RepoIndex, hits: Vec<Hit>, weight: f32) -> Vec<Hit> {
    demote_tests(hits, weight, |c| repo.chunks.get(c as usize).is_some_and(|ch| ch.is_test()))
}

/// The rankings a hybrid fuses; an empty list takes no part.
#[derive(Clone, Copy, Default)]
pub struct HybridLists<'a> {
    pub bm25: &'a [Hit],
    pub dense: &'a [Hit],
    pub history: &'a [Hit],
    /// The static tier beside a transformer's `dense` (the mixed tier).
    pub static_side: &'a [Hit],
}

/// The hybrid ranking: the fusion (`params.method`) of `lists`, each with its weight, with the
/// boosts for chunks the query names.
pub fn hybrid(repo: &RepoIndex, query: &str, lists: HybridLists, params: FusionParams, k: usize) -> Vec<Hit> {
    hybrid_union(&[HybridPart { repo, lists }], query, params, k).into_iter().map(|(_, h)| h).collect()
}

/// One checkout's part of a hybrid over several ([`hybrid_union`]).
#[derive(Clone, Copy)]
pub struct HybridPart<'a> {
    pub repo: &'a RepoIndex,
    pub lists: HybridLists<'a>,
}

/// The hybrid over several checkouts as one (issue 71): each retriever's lists merged into one
/// by score ([`merge_by_score`]: BM25's scores are each checkout's own, the dense cosines are
/// one encoder's), fused once over the union, so one checkout's weak matches never outrank
/// another's strong ones; the steps that follow a repository's structure (the call graph,
/// module code, types before their members) then run within each checkout. Hits are (part,
/// hit) with the part's own chunk ids, best first. One part is the single-checkout hybrid.
pub fn hybrid_union(parts: &[HybridPart], query: &str, params: FusionParams, k: usize) -> Vec<(usize, Hit)> {
    let offsets: Vec<u32> = parts
        .iter()
        .scan(0u32, |next, p| {
            let at = *next;
            *next += p.repo.chunks.len() as u32;
            Some(at)
        })
        .collect();
    let union = |pick: for<'x> fn(&HybridLists<'x>) -> &'x [Hit]| -> Vec<Hit> {
        let lists: Vec<Vec<Hit>> = parts
            .iter()
            .zip(&offsets)
            .map(|(p, &at)| {
                pick(&p.lists).iter().map(|h| Hit { chunk: h.chunk + at, score: h.score }).collect()
            })
            .collect();
        merge_by_score(&lists).into_iter().map(|(_, h)| h).collect()
    };
    let (bm25, dense) = (union(|l| l.bm25), union(|l| l.dense));
    let (history, static_side) = (union(|l| l.history), union(|l| l.static_side));
    // The ranking layer's first signal: the query's shape sets the dense side's share.
    let shape = QueryShape::of(query);
    let dense_scale = layer::dense_scale(shape, &params.signals);
    let lists = [
        (bm25.as_slice(), params.bm25_weight),
        (dense.as_slice(), params.dense_weight * dense_scale),
        (history.as_slice(), params.history_weight),
        (static_side.as_slice(), params.mixed_static_weight * dense_scale),
    ];
    let mut bonus = std::collections::HashMap::new();
    for (p, &at) in parts.iter().zip(&offsets) {
        let mut own = mention_bonus(p.repo, query, params);
        layer::definitions::add_bonus(p.repo, query, shape, &params, [p.lists.bm25, p.lists.dense], &mut own);
        bonus.extend(own.into_iter().map(|(id, b)| (id + at, b)));
    }
    // A name query's types lead their members (`names::types_lead_members`), with the boost.
    let types_lead = params.name_boost > 0.0 && shape == QueryShape::Name;
    let reorders = params.graph_weight > 0.0
        || params.module_weight > 0.0
        || types_lead
        || layer::reorders(shape, &params.signals);
    let fused = fuse(&lists, params, if reorders { usize::MAX } else { k }, &bonus);
    // Back to each part's own ids, in fused order.
    let mut own: Vec<Vec<Hit>> = vec![Vec::new(); parts.len()];
    for h in fused {
        let part = offsets.partition_point(|&at| at <= h.chunk) - 1;
        own[part].push(Hit { chunk: h.chunk - offsets[part], score: h.score });
    }
    let own: Vec<Vec<Hit>> = own
        .into_iter()
        .zip(parts)
        .map(|(mut hits, p)| {
            let repo = p.repo;
            if params.graph_weight > 0.0 {
                hits = propagate(&repo.graph, hits, params.graph_weight);
            }
            if types_lead {
                hits = crate::rank::names::types_lead_members(query, hits, |id| repo.chunks.get(id as usize));
            }
            if params.module_weight > 0.0 {
                hits = modules_follow(repo, hits, params.module_weight, params.module_languages);
            }
            layer::rerank(repo, shape, hits, &params)
        })
        .collect();
    let mut merged = merge_by_score(&own);
    merged.truncate(k);
    merged
}

/// Several rankings as one, each one's order kept: at each step the best-scored head of the
/// lists comes next (ties to the earlier list). A list whose order is not by its scores (tests
/// demoted by rank) keeps that order. (part, hit), best first.
pub fn merge_by_score(lists: &[Vec<Hit>]) -> Vec<(usize, Hit)> {
    let mut next = vec![0usize; lists.len()];
    let mut out = Vec::with_capacity(lists.iter().map(Vec::len).sum());
    loop {
        let best = (0..lists.len()).filter_map(|i| lists[i].get(next[i]).map(|h| (i, h))).reduce(|a, b| {
            if b.1.score > a.1.score {
                b
            } else {
                a
            }
        });
        let Some((i, h)) = best else { return out };
        out.push((i, *h));
        next[i] += 1;
    }
}

/// A file's module-level code scores at least `weight` × the best score of its file's chunks
/// among the top [`PROPAGATE_TOP`] hits, in `languages` ([`FusionParams::module_languages`]): its best-ranked window where its leftover code is
/// cut into windows (a fix's module-level edit is gold in a window then, never in the module
/// chunk), else its module chunk. Best first, ties by chunk id.
pub fn modules_follow(
    repo: &RepoIndex,
    hits: Vec<Hit>,
    weight: f32,
    languages: crate::lang::LangSet,
) -> Vec<Hit> {
    use crate::chunk::ChunkKind;
    let mut scores: std::collections::HashMap<u32, f32> = hits.iter().map(|h| (h.chunk, h.score)).collect();
    // Each file's best-ranked window (`hits` is best first).
    let mut best_window: std::collections::HashMap<&str, u32> = std::collections::HashMap::new();
    for h in &hits {
        if let Some(c) = repo.chunks.get(h.chunk as usize).filter(|c| c.kind == ChunkKind::Window) {
            best_window.entry(c.path.as_str()).or_insert(h.chunk);
        }
    }
    for h in hits.iter().take(PROPAGATE_TOP) {
        let Some(chunk) = repo.chunks.get(h.chunk as usize) else { continue };
        if !crate::lang::lang_of_path(&chunk.path).is_some_and(|l| languages.contains(l)) {
            continue;
        }
        let Some(span) = repo.file_span(&chunk.path) else { continue };
        let kind_of = |id: u32| repo.chunks.get(id as usize).map(|c| c.kind);
        let ids = span.first..span.first + span.count;
        let target = match ids.clone().any(|id| kind_of(id) == Some(ChunkKind::Window)) {
            true => best_window.get(chunk.path.as_str()).copied(),
            false => ids.clone().find(|&id| kind_of(id) == Some(ChunkKind::Module)),
        };
        if let Some(target) = target.filter(|&t| t != h.chunk) {
            let score = scores.entry(target).or_insert(f32::MIN);
            *score = score.max(weight * h.score);
        }
    }
    let mut out: Vec<Hit> = scores.into_iter().map(|(chunk, score)| Hit { chunk, score }).collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.chunk.cmp(&b.chunk)));
    out
}

/// Each chunk's bonus for being named by the query: `path_boost` for every chunk of a file it
/// names, plus `symbol_boost` times the strength of the mention of the chunk's own name.
fn mention_bonus(repo: &RepoIndex, query: &str, params: FusionParams) -> std::collections::HashMap<u32, f32> {
    let mut bonus = std::collections::HashMap::new();
    if params.path_boost > 0.0 {
        let named = NamedFiles::of(query);
        for span in repo.files.iter().filter(|f| named.names(&f.path)) {
            for id in span.first..span.first + span.count {
                *bonus.entry(id).or_default() += params.path_boost;
            }
        }
    }
    if params.symbol_boost > 0.0 {
        let named = NamedSymbols::of(query);
        if !named.is_empty() {
            let chunks = repo.chunks.iter().zip(0u32..).map(|(c, id)| (id, c.name.as_str()));
            for (id, strength) in named.strengths(chunks) {
                *bonus.entry(id).or_default() += params.symbol_boost * strength;
            }
        }
    }
    bonus
}

/// How many of the best fused chunks pass score to their call-graph neighbours.
const PROPAGATE_TOP: usize = 20;

/// Call-graph score propagation: each of the top [`PROPAGATE_TOP`] hits adds `weight` × its
/// score to every caller and callee (a chunk whose neighbours match the issue is likely
/// involved too). Best first, ties by chunk id.
pub fn propagate(graph: &crate::callgraph::CallGraph, hits: Vec<Hit>, weight: f32) -> Vec<Hit> {
    let mut scores: std::collections::HashMap<u32, f32> = hits.iter().map(|h| (h.chunk, h.score)).collect();
    for h in hits.iter().take(PROPAGATE_TOP) {
        let i = h.chunk as usize;
        let callees = graph.callees.get(i).map(Vec::as_slice).unwrap_or_default();
        let callers = graph.callers.get(i).map(Vec::as_slice).unwrap_or_default();
        for &n in callees.iter().chain(callers) {
            if n != h.chunk {
                *scores.entry(n).or_default() += weight * h.score;
            }
        }
    }
    let mut out: Vec<Hit> = scores.into_iter().map(|(chunk, score)| Hit { chunk, score }).collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.chunk.cmp(&b.chunk)));
    out
}
