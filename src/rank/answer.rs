//! The front door of ranking: search → rerank → truncate, spelled once for every client
//! (the TUI, `--query`, MCP `locate`, eval); the clients only present what it returns, and
//! [`Answer::groups`] is the view by file they all show.

use crate::engine::RepoIndex;
use crate::error::Result;
use crate::index::{Hit, Retriever};
use crate::rank::group::{group_in, FileGroup};
use crate::rank::searcher::Searcher;

/// What a client asks: a query, the rankings it wants, how many hits of each.
#[derive(Clone, Copy, Debug)]
pub struct Ask<'a> {
    pub query: &'a str,
    pub retrievers: &'a [Retriever],
    pub top: usize,
    /// Run the second stage over the rankings it re-orders (the hybrid), when the searcher
    /// has one. A client that shows the hybrid first and the re-ordered one later asks
    /// without it and calls [`Searcher::rerank`] itself (the TUI).
    pub rerank: bool,
}

/// The second stage's re-ordering of one ranking.
#[derive(Clone, Debug)]
pub struct Reranked {
    pub retriever: Retriever,
    /// The re-ordered ranking, `top` long.
    pub hits: Vec<Hit>,
    /// How deep in the first ranking it re-ordered.
    pub depth: usize,
    pub seconds: f64,
}

/// Each ranking asked for, in the order asked, `top` long; and the reranked one, if any.
#[derive(Clone, Debug, Default)]
pub struct Answer {
    pub lists: Vec<(Retriever, Vec<Hit>)>,
    pub reranked: Option<Reranked>,
}

impl Answer {
    /// The ranking a person reads for `retriever`: the reranked one where there is one.
    pub fn final_hits(&self, retriever: Retriever) -> &[Hit] {
        match &self.reranked {
            Some(r) if r.retriever == retriever => &r.hits,
            _ => self.lists.iter().find(|(r, _)| *r == retriever).map_or(&[], |(_, h)| h.as_slice()),
        }
    }

    /// Every ranking asked for as a person reads it ([`Answer::final_hits`]), in order.
    pub fn final_lists(&self) -> Vec<(Retriever, Vec<Hit>)> {
        self.lists.iter().map(|(r, _)| (*r, self.final_hits(*r).to_vec())).collect()
    }

    /// [`Answer::final_hits`] grouped by file, as every client shows files.
    pub fn groups(&self, repo: &RepoIndex, retriever: Retriever) -> Vec<FileGroup> {
        group_in(repo, self.final_hits(retriever))
    }
}

impl Searcher {
    /// The one call every client ranks with (module docs).
    pub fn answer(&self, ask: &Ask) -> Result<Answer> {
        let reranks = ask.rerank && self.reranker.is_some();
        let depth = if reranks { self.rerank_depth(ask.top) } else { ask.top };
        let mut lists = self.rankings(ask.query, ask.retrievers, depth)?;
        let mut reranked = None;
        if reranks {
            if let Some((retriever, hits)) = lists.iter().find(|(r, _)| crate::rerank::reorders(*r)) {
                let started = std::time::Instant::now();
                if let Some(mut hits) = self.rerank(ask.query, hits)? {
                    hits.truncate(ask.top);
                    let seconds = started.elapsed().as_secs_f64();
                    reranked =
                        Some(Reranked { retriever: *retriever, hits, depth: self.rerank_depth(0), seconds });
                }
            }
        }
        lists.iter_mut().for_each(|(_, hits)| hits.truncate(ask.top));
        Ok(Answer { lists, reranked })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SyntaxCache;
    use std::sync::Arc;

    fn searcher() -> Searcher {
        let files: Vec<(String, String)> = (0..12)
            .map(|i| {
                (format!("src/m{i}.py"), format!("def parse_header_{i}(v):\n    return v.split(':')[{i}]\n"))
            })
            .collect();
        Searcher::bm25_only(Arc::new(
            RepoIndex::from_texts("r".into(), &files, &mut SyntaxCache::new()).unwrap(),
        ))
    }

    #[test]
    fn an_answer_is_the_searchers_rankings_cut_to_top_and_grouped_by_file() {
        let s = searcher();
        let ask = Ask { query: "parse header split", retrievers: &[Retriever::Bm25], top: 5, rerank: true };
        let answer = s.answer(&ask).unwrap();
        let full = s.search("parse header split", Retriever::Bm25, 50).unwrap();
        assert_eq!(answer.lists.len(), 1);
        assert_eq!(answer.final_hits(Retriever::Bm25), &full[..5], "the same order, cut to 5");
        assert!(answer.reranked.is_none(), "no reranker: nothing re-ordered");
        let groups = answer.groups(&s.repo, Retriever::Bm25);
        assert_eq!(groups.len(), 5, "one file per chunk here");
        assert!(answer.final_hits(Retriever::Dense).is_empty(), "a ranking not asked for is empty");
    }
}
