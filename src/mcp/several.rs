//! One MCP server over several checkouts (`coret-tui --mcp DIR1 DIR2 …`, or a workspace
//! file): each checkout is its own warm [`Workspace`] (its index, cache entry and dense
//! thread), `locate` ranks them as one ([`crate::rank::many`]: BM25 per checkout, the hybrid
//! over the union) and every file and chunk names its checkout (`repo`), which `neighbours`
//! and `read` then take.

use super::tools::{
    self, bm25_note, checked_top_k, located, CheckoutSummary, DenseCoverage, DenseSide, IndexSummary,
    LocateAnswer, LocateRequest, LocatedFile, ToolError,
};
use super::{DenseStatus, Workspace};
use crate::index::Retriever;
use crate::rank::many::{Checkout, Many, ManyFusion};
use crate::rank::searcher::Searcher;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The checkouts one server serves, each under the name its rows carry.
pub struct Several {
    pub checkouts: Vec<(String, Arc<Workspace>)>,
}

/// One checkout's part of a `locate`: its searcher and dense side as they stood.
struct Part<'a> {
    name: &'a str,
    searcher: Arc<Searcher>,
    status: DenseStatus,
    side: DenseSide,
}

impl Several {
    /// The names, for the server's instructions and for errors.
    pub fn names(&self) -> Vec<&str> {
        self.checkouts.iter().map(|(n, _)| n.as_str()).collect()
    }

    /// The checkout a `neighbours` or `read` call names.
    pub fn pick(&self, repo: Option<&str>) -> Result<(&str, &Arc<Workspace>), ToolError> {
        let names = self.names().join(", ");
        let Some(repo) = repo.map(str::trim) else {
            return Err(ToolError::Argument {
                arg: "repo",
                message: format!(
                    "this server serves several checkouts ({names}); name one, as `locate` does"
                ),
            });
        };
        self.checkouts.iter().find(|(n, _)| n == repo).map(|(n, ws)| (n.as_str(), ws)).ok_or_else(|| {
            ToolError::Argument {
                arg: "repo",
                message: format!("`{repo}` is not one of this server's checkouts ({names})"),
            }
        })
    }

    /// One `locate` over every checkout, waiting for the dense sides `wait` at most in all.
    /// The hybrid (or dense) ranking needs every checkout's dense side: where one cannot rank
    /// by the deadline, BM25 answers for all, and the note names the checkout and why (a
    /// hybrid over some checkouts' dense lists would weigh them unlike the rest).
    pub fn locate(&self, req: &LocateRequest, wait: Duration) -> Result<LocateAnswer, ToolError> {
        let top_k = checked_top_k(req)?;
        let deadline = Instant::now() + wait;
        let default = self.checkouts.first().and_then(|(_, ws)| ws.default_retriever());
        let asked = req.retriever.map(Retriever::from).or(default);
        let wants_dense = matches!(asked, None | Some(Retriever::Dense | Retriever::Hybrid));
        let mut parts = Vec::new();
        for (name, ws) in &self.checkouts {
            let (searcher, status) = ws.searcher_for(req, deadline)?;
            let side = match wants_dense {
                true => DenseSide::within(&searcher, &req.issue, deadline)?,
                false => DenseSide::Standing(searcher.dense.clone()),
            };
            parts.push(Part { name, searcher, status, side });
        }
        if asked == Some(Retriever::History) && parts.iter().all(|p| p.searcher.history.is_none()) {
            return Err(ToolError::Argument {
                arg: "retriever",
                message: "history: none of these checkouts has git history to search".into(),
            });
        }
        let all_rank = parts.iter().all(|p| matches!(p.side, DenseSide::Ranks(_)));
        let (retriever, note) = match asked {
            Some(r @ (Retriever::Bm25 | Retriever::History)) => (r, None),
            _ if all_rank => (asked.unwrap_or(Retriever::Hybrid), partial_note(&parts)),
            _ => (Retriever::Bm25, bm25_notes(&parts, asked)),
        };
        let mut fusion = parts[0].searcher.fusion;
        fusion.test_weight = if req.include_tests { 1.0 } else { 0.0 };
        let many = Many {
            checkouts: parts
                .iter()
                .map(|p| {
                    let dense = match &p.side {
                        DenseSide::Ranks(d) => Some(d.clone()),
                        _ => None,
                    };
                    let searcher = Searcher { dense, fusion, ..p.searcher.clone_sides() };
                    Checkout { name: p.name.to_string(), searcher }
                })
                .collect(),
            fusion: ManyFusion::Union,
        };
        let mut hits =
            many.rankings(&req.issue, &[retriever], top_k)?.pop().map(|(_, h)| h).unwrap_or_default();
        let is_test = |h: &crate::rank::many::RepoHit| {
            many.checkouts[h.repo].searcher.repo.chunks.get(h.hit.chunk as usize).is_none_or(|c| c.is_test())
        };
        hits.retain(|h| req.include_tests || !is_test(h));
        let mut sources: Vec<HashMap<String, Option<String>>> = vec![HashMap::new(); parts.len()];
        let files = many
            .group(&hits)
            .into_iter()
            .enumerate()
            .map(|(i, (repo, g))| {
                let index = &many.checkouts[repo].searcher.repo;
                let name = &many.checkouts[repo].name;
                let chunks = g
                    .hits
                    .iter()
                    .map(|h| {
                        let c = &index.chunks[h.hit.chunk as usize];
                        let chunk = located(index, &mut sources[repo], h.rank, h.hit.score, c);
                        tools::LocatedChunk { repo: Some(name.clone()), ..chunk }
                    })
                    .collect();
                LocatedFile { rank: i + 1, repo: Some(name.clone()), path: g.path, chunks }
            })
            .collect();
        let coverages: Vec<Option<(usize, usize)>> =
            parts.iter().map(|p| p.side.index().map(|d| d.coverage())).collect();
        let statuses: Vec<String> =
            parts.iter().zip(&coverages).map(|(p, c)| p.status.describe(*c)).collect();
        let coverage =
            coverages.iter().try_fold((0, 0), |(r, o), c| c.map(|(ranked, of)| (r + ranked, o + of)));
        let has_history = parts.iter().any(|p| p.searcher.history.is_some());
        let first = &parts[0].searcher;
        Ok(LocateAnswer {
            retriever: retriever.as_str().into(),
            retrievers_used: tools::retrievers_used(retriever, &fusion, has_history, false),
            dense_ready: coverage.is_some_and(|(ranked, of)| ranked == of),
            dense_status: one_or_each(&parts, &statuses),
            dense_coverage: coverage.map(|(ranked, of)| DenseCoverage { ranked, of }),
            dense_tier: first
                .dense_tier()
                .filter(|_| matches!(retriever, Retriever::Dense | Retriever::Hybrid))
                .map(str::to_string),
            note,
            index: summed(parts.iter().map(|p| tools::summary(&p.searcher.repo))),
            store: first.dense.as_ref().and_then(|d| d.store_stats()),
            repos: Some(
                parts
                    .iter()
                    .zip(statuses)
                    .map(|(p, dense_status)| CheckoutSummary {
                        name: p.name.to_string(),
                        root: p.searcher.repo.root.display().to_string(),
                        index: tools::summary(&p.searcher.repo),
                        dense_status,
                    })
                    .collect(),
            ),
            query_shape: crate::rank::QueryShape::of(&req.issue).as_str().into(),
            files,
        })
    }
}

/// The dense status when every checkout's reads the same, else each one's by name.
fn one_or_each(parts: &[Part], statuses: &[String]) -> String {
    match statuses.iter().all(|s| *s == statuses[0]) {
        true => statuses[0].clone(),
        false => {
            parts.iter().zip(statuses).map(|(p, s)| format!("{}: {s}", p.name)).collect::<Vec<_>>().join("; ")
        }
    }
}

/// The checkouts whose dense index ranked over part of its chunks.
fn partial_note(parts: &[Part]) -> Option<String> {
    let partial: Vec<String> = parts
        .iter()
        .filter_map(|p| {
            let (ranked, of) = p.side.index()?.coverage();
            (ranked < of).then(|| format!("{} over {ranked} of {of} chunks", p.name))
        })
        .collect();
    (!partial.is_empty()).then(|| {
        format!(
            "dense ranked {}: this issue's candidates first, the rest are still being embedded",
            partial.join(", ")
        )
    })
}

/// Why BM25 answered: each checkout whose dense side could not rank, by name.
fn bm25_notes(parts: &[Part], asked: Option<Retriever>) -> Option<String> {
    let notes: Vec<String> = parts
        .iter()
        .filter(|p| !matches!(p.side, DenseSide::Ranks(_)))
        .filter_map(|p| {
            let status = p.status.describe(p.side.index().map(|d| d.coverage()));
            let late = matches!(p.side, DenseSide::Late(_));
            bm25_note(asked, &p.status, &status, late).map(|n| format!("{}: {n}", p.name))
        })
        .collect();
    (!notes.is_empty()).then(|| notes.join("; "))
}

/// The checkouts' indexes as one: counts summed, the cache state where all agree (else
/// `mixed`; `repos` gives each).
fn summed(each: impl Iterator<Item = IndexSummary>) -> IndexSummary {
    let mut all: Option<IndexSummary> = None;
    for s in each {
        all = Some(match all {
            None => s,
            Some(a) => IndexSummary {
                files: a.files + s.files,
                chunks: a.chunks + s.chunks,
                call_edges: a.call_edges + s.call_edges,
                cache: if a.cache == s.cache { a.cache } else { "mixed".into() },
            },
        });
    }
    all.unwrap_or(IndexSummary { files: 0, chunks: 0, call_edges: 0, cache: String::new() })
}
