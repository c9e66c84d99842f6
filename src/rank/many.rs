//! Several checkouts searched as one (issue 71, item 2): `coret-tui DIR1 DIR2 …` or a
//! workspace file. Each checkout keeps its own index (BM25, call graph, dense vectors, its
//! cache entry); a query ranks each one's lists as a single checkout would, then
//! [`hybrid_union`] fuses their union, so the answer is one ranking whose rows name their
//! checkout.

use crate::chunk::ChunkKind;
use crate::error::Result;
use crate::index::{Hit, Retriever};
use crate::rank::group::{group_hits, FileGroup};
use crate::rank::hybrid::{hybrid_union, merge_by_score, HybridPart};
use crate::rank::searcher::{Lists, Searcher};

/// One checkout of a search over several: the name its rows show, and its searcher.
pub struct Checkout {
    pub name: String,
    pub searcher: Searcher,
}

/// A ranked chunk of one of several checkouts: `repo` indexes [`Many::checkouts`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RepoHit {
    pub repo: usize,
    pub hit: Hit,
}

/// Checkouts searched together.
pub struct Many {
    pub checkouts: Vec<Checkout>,
    pub fusion: ManyFusion,
}

/// How the hybrid spans checkouts (docs/RESULTS.md "Several checkouts as one").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ManyFusion {
    /// One fusion over the union of the checkouts' lists ([`hybrid_union`]).
    #[default]
    Union,
    /// Each checkout's own hybrid, the results merged by fused score.
    Each,
}

impl Many {
    /// The top `k` of each ranking asked for over every checkout: BM25's, dense's and the
    /// history's lists merged by score, each checkout's order kept; the hybrid fused over the
    /// union ([`hybrid_union`]) with the first checkout's fusion parameters (every checkout
    /// has the same tiers: they are loaded once).
    pub fn rankings(
        &self,
        query: &str,
        retrievers: &[Retriever],
        k: usize,
    ) -> Result<Vec<(Retriever, Vec<RepoHit>)>> {
        let lists: Vec<Lists> = self
            .checkouts
            .iter()
            .map(|c| c.searcher.lists(query, retrievers, k).map(Option::unwrap_or_default))
            .collect::<Result<_>>()?;
        let merged = |pick: fn(&Lists) -> &Vec<Hit>| {
            let each: Vec<Vec<Hit>> = lists.iter().map(|l| pick(l).clone()).collect();
            merge_by_score(&each)
        };
        Ok(retrievers
            .iter()
            .map(|&r| {
                let mut hits = match r {
                    Retriever::Bm25 => merged(|l| &l.bm25),
                    Retriever::Dense => merged(|l| &l.dense),
                    Retriever::History => merged(|l| &l.history),
                    Retriever::Hybrid if self.fusion == ManyFusion::Each => {
                        let each: Vec<Vec<Hit>> = self
                            .checkouts
                            .iter()
                            .zip(&lists)
                            .map(|(c, l)| {
                                crate::rank::hybrid::hybrid(
                                    &c.searcher.repo,
                                    query,
                                    l.for_fusion(),
                                    l.fusion,
                                    k,
                                )
                            })
                            .collect();
                        merge_by_score(&each)
                    }
                    Retriever::Hybrid => {
                        let parts: Vec<HybridPart> = self
                            .checkouts
                            .iter()
                            .zip(&lists)
                            .map(|(c, l)| HybridPart { repo: &c.searcher.repo, lists: l.for_fusion() })
                            .collect();
                        let params = lists.first().map(|l| l.fusion).unwrap_or_default();
                        hybrid_union(&parts, query, params, k)
                    }
                };
                hits.truncate(k);
                (r, hits.into_iter().map(|(repo, hit)| RepoHit { repo, hit }).collect())
            })
            .collect())
    }
}

impl Many {
    /// `hits` (one ranking, best first) grouped as one checkout's are ([`group_hits`]): one
    /// group per checkout and file, at its best chunk's rank. Each group comes with the index
    /// of its checkout; its hits keep their checkout's chunk ids and their flat ranks.
    pub fn group(&self, hits: &[RepoHit]) -> Vec<(usize, FileGroup)> {
        let chunk = |h: &RepoHit| self.checkouts[h.repo].searcher.repo.chunks.get(h.hit.chunk as usize);
        // Positions stand in for chunk ids while grouping: ids repeat across checkouts.
        let keys: Vec<Option<(usize, &str)>> =
            hits.iter().map(|h| chunk(h).map(|c| (h.repo, c.path.as_str()))).collect();
        let key_text: Vec<Option<String>> =
            keys.iter().map(|k| k.map(|(repo, path)| format!("{repo}\u{0}{path}"))).collect();
        let positions: Vec<Hit> =
            hits.iter().zip(0u32..).map(|(h, i)| Hit { chunk: i, score: h.hit.score }).collect();
        let is_module = |i: u32| chunk(&hits[i as usize]).is_some_and(|c| c.kind == ChunkKind::Module);
        group_hits(&positions, |i| key_text[i as usize].as_deref(), is_module)
            .into_iter()
            .map(|mut g| {
                let (repo, path) = keys[g.head().hit.chunk as usize].unwrap_or_default();
                for h in &mut g.hits {
                    h.hit = hits[h.rank - 1].hit;
                }
                g.path = path.to_string();
                (repo, g)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{RepoIndex, SyntaxCache};
    use std::sync::Arc;

    fn checkout(name: &str, files: &[(&str, &str)]) -> Checkout {
        let texts: Vec<(String, String)> =
            files.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect();
        let repo = RepoIndex::from_texts(name.into(), &texts, &mut SyntaxCache::new()).unwrap();
        // The static tier: the hybrid needs a dense side, and it needs no model file.
        let table = Arc::new(crate::model::static_tier::StaticTable::builtin().unwrap());
        let searcher = Searcher::bm25_only(Arc::new(repo)).with_static(table, Default::default()).unwrap();
        Checkout { name: name.into(), searcher }
    }

    fn filler(n: usize) -> Vec<(String, String)> {
        (0..n)
            .map(|i| (format!("util/m{i}.py"), format!("def helper_{i}(x):\n    return x + {i}\n")))
            .collect()
    }

    #[test]
    fn one_checkout_alone_ranks_as_a_single_checkout_search() {
        let files = filler(10);
        let mut refs: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
        refs.push(("billing/invoice.py", "def render_invoice(order):\n    return format_total(order)\n"));
        let one = checkout("shop", &refs);
        let alone = one
            .searcher
            .rankings("render the invoice total", &[Retriever::Bm25, Retriever::Hybrid], 5)
            .unwrap();
        let many = Many { checkouts: vec![one], fusion: ManyFusion::Union };
        let together =
            many.rankings("render the invoice total", &[Retriever::Bm25, Retriever::Hybrid], 5).unwrap();
        for ((r, a), (r2, t)) in alone.iter().zip(&together) {
            assert_eq!(r, r2);
            let t: Vec<Hit> = t.iter().map(|h| h.hit).collect();
            assert_eq!(a, &t, "{r}: the same order and scores");
        }
    }

    #[test]
    fn the_checkout_that_holds_the_answer_leads_whichever_comes_first() {
        let files = filler(12);
        let mut web: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
        web.push(("app/routes.py", "def index(request):\n    return render(request)\n"));
        let api = [
            ("rate/limiter.py", "class RateLimiter:\n    def allow_request(self, client):\n        return self.bucket.take(client)\n"),
            ("rate/bucket.py", "class TokenBucket:\n    def take(self, client):\n        return True\n"),
        ];
        let query = "rate limiter rejects a request when the token bucket is empty";
        for order in [[0, 1], [1, 0]] {
            let mut parts = [Some(checkout("web", &web)), Some(checkout("api", &api))];
            let checkouts = order.iter().map(|&i| parts[i].take().unwrap()).collect();
            let many = Many { checkouts, fusion: ManyFusion::Union };
            let ranked = many.rankings(query, &[Retriever::Hybrid], 5).unwrap();
            let head = ranked[0].1[0];
            let c = &many.checkouts[head.repo];
            assert_eq!(c.name, "api");
            assert!(c.searcher.repo.chunks[head.hit.chunk as usize].path.starts_with("rate/"));
            // Every hit names a chunk of its own checkout.
            for h in &ranked[0].1 {
                assert!((h.hit.chunk as usize) < many.checkouts[h.repo].searcher.repo.chunks.len());
            }
        }
    }
}
