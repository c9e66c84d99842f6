//! The TUI's [`Backend`] over several checkouts (`coret-tui DIR1 DIR2 …`): one chunk id space
//! over every checkout's chunks (each checkout's ids shifted by the chunks before it), paths
//! shown as `NAME/path` so every row names its checkout, and each search ranked as one over
//! the union ([`crate::rank::many`]: BM25 per checkout, the hybrid over the union).

use super::backend::Backend;
use crate::index::{Hit, Retriever};
use crate::rank::fusion::FusionParams;
use crate::rank::many::{Checkout, Many, ManyFusion};
use crate::rank::Searcher;
use crate::Chunk;
use std::path::PathBuf;
use std::sync::Arc;

/// One checkout inside a [`ManyBackend`].
pub struct Part {
    /// The name its rows carry (`NAME/path`).
    pub name: String,
    /// Its root on disk, for `$EDITOR`.
    pub root: PathBuf,
    pub backend: Arc<dyn Backend>,
}

/// Several checkouts' backends as one.
pub struct ManyBackend {
    parts: Vec<Part>,
    /// Where each part's ids start.
    offsets: Vec<u32>,
    /// Every chunk with its path under its checkout's name.
    chunks: Vec<Chunk>,
}

impl ManyBackend {
    pub fn new(parts: Vec<Part>) -> ManyBackend {
        let mut offsets = Vec::with_capacity(parts.len());
        let mut chunks = Vec::new();
        for p in &parts {
            offsets.push(chunks.len() as u32);
            let count = p.backend.chunk_count() as u32;
            chunks.extend(
                (0..count)
                    .filter_map(|id| p.backend.chunk(id))
                    .map(|c| Chunk { path: format!("{}/{}", p.name, c.path), ..c.clone() }),
            );
        }
        ManyBackend { parts, offsets, chunks }
    }

    /// The part an id belongs to, and its id there.
    fn local(&self, id: u32) -> Option<(usize, u32)> {
        let part = self.offsets.partition_point(|&o| o <= id).checked_sub(1)?;
        let local = id - self.offsets[part];
        (local < self.parts[part].backend.chunk_count() as u32).then_some((part, local))
    }

    fn ids(&self, part: usize, local: Vec<u32>) -> Vec<u32> {
        local.into_iter().map(|id| id + self.offsets[part]).collect()
    }

    /// The part a shown path (`NAME/path`) is in, and its path there; the longest name that
    /// fits wins (names may hold a `/`).
    fn split<'a>(&self, path: &'a str) -> Option<(&Part, &'a str)> {
        self.parts
            .iter()
            .filter_map(|p| Some((p, path.strip_prefix(p.name.as_str())?.strip_prefix('/')?)))
            .max_by_key(|(p, _)| p.name.len())
    }

    /// The checkouts searched as one, over each one's searcher as it stands.
    fn many(&self) -> anyhow::Result<Many> {
        let checkouts = self
            .parts
            .iter()
            .map(|p| {
                let s = p.backend.searcher().ok_or_else(|| {
                    anyhow::anyhow!("{}: this backend cannot be searched with others", p.name)
                })?;
                Ok(Checkout {
                    name: p.name.clone(),
                    searcher: Searcher { dense: s.dense.clone(), ..s.clone_sides() },
                })
            })
            .collect::<anyhow::Result<_>>()?;
        Ok(Many { checkouts, fusion: ManyFusion::Union })
    }
}

impl Backend for ManyBackend {
    fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    fn chunk(&self, id: u32) -> Option<&Chunk> {
        self.chunks.get(id as usize)
    }

    fn callers(&self, id: u32) -> Vec<u32> {
        self.local(id).map_or_else(Vec::new, |(p, l)| self.ids(p, self.parts[p].backend.callers(l)))
    }

    fn callees(&self, id: u32) -> Vec<u32> {
        self.local(id).map_or_else(Vec::new, |(p, l)| self.ids(p, self.parts[p].backend.callees(l)))
    }

    fn unresolved(&self, id: u32) -> Vec<String> {
        self.local(id).map_or_else(Vec::new, |(p, l)| self.parts[p].backend.unresolved(l))
    }

    fn unresolved_callers(&self, id: u32) -> Vec<(u32, u32)> {
        let Some((p, l)) = self.local(id) else { return Vec::new() };
        let offset = self.offsets[p];
        self.parts[p].backend.unresolved_callers(l).into_iter().map(|(c, line)| (c + offset, line)).collect()
    }

    fn search(&self, query: &str, retriever: Retriever, k: usize) -> anyhow::Result<Vec<Hit>> {
        let ranked = self.many()?.rankings(query, &[retriever], k)?.pop().map(|(_, hits)| hits);
        Ok(ranked
            .unwrap_or_default()
            .into_iter()
            .map(|h| Hit { chunk: h.hit.chunk + self.offsets[h.repo], score: h.hit.score })
            .collect())
    }

    /// Every checkout's: a hybrid over some checkouts' dense lists would weigh them unlike the rest.
    fn has_dense(&self) -> bool {
        self.parts.iter().all(|p| p.backend.has_dense())
    }

    fn has_history(&self) -> bool {
        self.parts.iter().any(|p| p.backend.has_history())
    }

    /// The chunks embedded over every checkout, while one is partial.
    fn dense_partial(&self) -> Option<(usize, usize)> {
        let each: Vec<Option<(usize, usize)>> =
            self.parts.iter().map(|p| p.backend.dense_partial()).collect();
        each.iter().any(Option::is_some).then(|| {
            let whole = |p: &Part| (p.backend.chunk_count(), p.backend.chunk_count());
            self.parts
                .iter()
                .zip(&each)
                .map(|(p, e)| e.unwrap_or_else(|| whole(p)))
                .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
        })
    }

    fn dense_tier(&self) -> Option<&'static str> {
        self.parts.first().and_then(|p| p.backend.dense_tier())
    }

    fn fusion(&self) -> FusionParams {
        self.parts.first().map(|p| p.backend.fusion()).unwrap_or_default()
    }

    fn file_source(&self, path: &str) -> Option<String> {
        let (part, path) = self.split(path)?;
        part.backend.file_source(path)
    }

    fn file_on_disk(&self, path: &str) -> Option<PathBuf> {
        let (part, path) = self.split(path)?;
        Some(part.root.join(path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{RepoIndex, SyntaxCache};

    /// A checkout on disk under `dir` (the preview reads its files).
    fn part(dir: &std::path::Path, name: &str, files: &[(&str, &str)]) -> Part {
        let root = dir.join(name);
        for (p, t) in files {
            std::fs::create_dir_all(root.join(p).parent().unwrap()).unwrap();
            std::fs::write(root.join(p), t).unwrap();
        }
        let texts: Vec<(String, String)> =
            files.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect();
        let repo = RepoIndex::from_texts(root.clone(), &texts, &mut SyntaxCache::new()).unwrap();
        let table = Arc::new(crate::model::static_tier::StaticTable::builtin().unwrap());
        let searcher = Searcher::bm25_only(Arc::new(repo)).with_static(table, Default::default()).unwrap();
        Part { name: name.into(), root, backend: Arc::new(searcher) }
    }

    #[test]
    fn rows_name_their_checkout_and_the_call_graph_stays_inside_each() {
        let dir = tempfile::tempdir().unwrap();
        let shop = part(
            dir.path(),
            "shop",
            &[("cart.py", "def total(cart):\n    return apply_discount(cart)\n\n\ndef apply_discount(cart):\n    return cart\n")],
        );
        let billing = part(
            dir.path(),
            "billing",
            &[("invoice.py", "def render_invoice_pdf(order):\n    return pdf_document(order)\n\n\ndef pdf_document(order):\n    return order\n")],
        );
        let first = shop.backend.chunk_count() as u32;
        let many = ManyBackend::new(vec![shop, billing]);
        assert_eq!(many.chunk_count(), first as usize + 2);
        let hits = many.search("render the invoice pdf document", Retriever::Hybrid, 3).unwrap();
        let top = many.chunk(hits[0].chunk).unwrap();
        assert_eq!((top.path.as_str(), top.name.as_str()), ("billing/invoice.py", "render_invoice_pdf"));
        let callees: Vec<&str> =
            many.callees(hits[0].chunk).iter().map(|&c| many.chunk(c).unwrap().name.as_str()).collect();
        assert_eq!(callees, ["pdf_document"], "the callee within billing, not shop's chunk of the same id");
        assert!(many.file_source("billing/invoice.py").is_some_and(|s| s.contains("render_invoice_pdf")));
        assert_eq!(many.file_on_disk("billing/invoice.py"), Some(dir.path().join("billing/invoice.py")));
        assert_eq!(many.file_on_disk("elsewhere/invoice.py"), None);
        let discount = many.search("apply the discount to the cart", Retriever::Bm25, 1).unwrap();
        assert_eq!(many.chunk(discount[0].chunk).unwrap().path, "shop/cart.py");
        assert!(many.has_dense() && many.dense_tier() == Some("static"));
    }
}
