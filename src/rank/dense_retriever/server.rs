//! The dense side ranked in the team's store (`--store-search`, issue 71): the server's HNSW
//! index over the tower's vectors, its candidates rescored exactly there
//! ([`SharedVectors::nearest`]), so a client holds no vector of the chunks a teammate or CI
//! embedded. Each chunk's input is tokenised here (its token key is what the store keys its
//! vector by); what the store lacks is embedded here, given to it, and ranked here too (a
//! read-only role cannot give it), the two lists merged by their exact cosines.

use super::{encoder_input, DenseOptions, DensePlan, DenseSearcher, Tier, SLICE};
use crate::callgraph::CallGraph;
use crate::chunk::Chunk;
use crate::error::{Error, Result};
use crate::index::dense::{token_key, DenseIndex, VectorKey, VectorStore};
use crate::index::shared::{Quant, SharedVectors};
use crate::index::Hit;
use crate::model::Towers;
use crate::progress::Progress;
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// Candidates the server's graph search keeps before its exact rescoring, at least: the
/// recall@10 of 0.956 measured at 1M vectors (docs/RESULTS.md "The store at scale").
const MIN_CANDIDATES: usize = 200;
/// The most a search asks of the server (pgvector's `hnsw.ef_search` stops there).
const MOST: usize = 1000;

/// Where a store-ranked [`DenseSearcher`] finds its neighbours.
pub struct ServerIndex {
    store: Arc<SharedVectors>,
    tower: String,
    /// Each input's token key → the chunks with that input.
    chunks_of: Arc<HashMap<VectorKey, Vec<u32>>>,
    /// The chunks embedded here that the store lacked, ranked here.
    local: DenseIndex,
    local_rows: Vec<u32>,
    /// Whether the tower has its HNSW index (else the server scans it exactly).
    pub indexed: bool,
}

impl ServerIndex {
    /// How many chunks rank here (embedded here: the store lacked them).
    pub fn ranked_here(&self) -> usize {
        self.local_rows.len()
    }

    /// The `k` nearest chunks: the server's list mapped to this checkout's chunks (rows of
    /// other checkouts and older commits are dropped), merged with the local one by cosine.
    /// A store that stops answering leaves the local list (its trouble is in the stats).
    fn search(&self, query: &[f32], k: usize) -> Vec<Hit> {
        let asked = k.min(MOST);
        let found = self.store.nearest(&self.tower, query, asked, asked.max(MIN_CANDIDATES), Quant::Half);
        let mut hits: Vec<Hit> = found
            .unwrap_or_default()
            .into_iter()
            // pgvector stores no NaN; a cosine that is not finite is never ranked.
            .filter(|(_, score)| score.is_finite())
            .flat_map(|(key, score)| {
                self.chunks_of.get(&key).into_iter().flatten().map(move |&chunk| Hit { chunk, score })
            })
            .collect();
        let mut local = self.local.search(query, k);
        for h in &mut local {
            h.chunk = self.local_rows[h.chunk as usize];
        }
        hits.extend(local);
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.chunk.cmp(&b.chunk)));
        let mut seen = std::collections::HashSet::new();
        hits.retain(|h| seen.insert(h.chunk));
        hits.truncate(k);
        hits
    }
}

impl DenseSearcher {
    /// A dense index that ranks in the team's store (`opts.shared`): every eligible chunk's
    /// input tokenised, the store asked which it holds, the rest embedded here (into `store`,
    /// the local cache, and given to the team's) and ranked here. The tower's HNSW index is
    /// built first if this role may. An error when there is no store, or it does not answer.
    /// `partial`, when the store lacks some inputs: given the index over what it holds (and
    /// what the local cache does) before the rest is embedded, to serve meanwhile.
    /// `token_keys`: where each input's token key is remembered by its plan key (the cache
    /// entry's; `None`: every input is tokenised each time).
    pub fn build_in_store(
        towers: Towers,
        (chunks, graph): (&[Chunk], &CallGraph),
        opts: DenseOptions,
        (store, token_keys): (&mut VectorStore, Option<&Path>),
        (progress, partial): (&dyn Progress, Option<&dyn Fn(DenseSearcher)>),
    ) -> Result<Self> {
        let shared = opts.shared.clone().ok_or_else(|| Error::invalid("--store-search needs --store URL"))?.0;
        let down =
            || Error::invalid(format!("--store-search: the store {} is not answering", shared.shown()));
        let encoder = &towers.chunk;
        let plan = DensePlan::new(encoder, chunks, graph, &opts);
        let ttag = format!("{}|tokens", encoder.fingerprint());
        let known = token_keys.map(read_pairs).unwrap_or_default();
        let tkeys: Vec<VectorKey> = (0..plan.len())
            .into_par_iter()
            .map(|p| {
                if let Some(t) = known.get(&plan.keys[p]) {
                    return Ok(*t);
                }
                let chunk = plan.rows[p] as usize;
                let t = encoder
                    .tokenize_input(&encoder_input(chunks, graph, &opts, chunk))
                    .map_err(|e| Error::context(format!("tokenising chunk {}", chunks[chunk].key()), e))?;
                Ok(token_key(&ttag, &t.ids, &t.type_ids))
            })
            .collect::<Result<_>>()?;
        if let Some(file) = token_keys {
            let new: Vec<(VectorKey, VectorKey)> = (0..plan.len())
                .filter(|&p| !known.contains_key(&plan.keys[p]))
                .map(|p| (plan.keys[p], tkeys[p]))
                .collect();
            append_pairs(file, &new)?;
        }
        let tower = encoder.fingerprint();
        let held = shared.held(&tower, &tkeys).ok_or_else(down)?;
        let indexed = shared.ensure_search_index(&tower, encoder.dim()).ok_or_else(down)?;
        let mut chunks_of: HashMap<VectorKey, Vec<u32>> = HashMap::new();
        for (p, key) in tkeys.iter().enumerate() {
            chunks_of.entry(*key).or_default().push(plan.rows[p]);
        }
        let chunks_of = Arc::new(chunks_of);
        // The index over the store's vectors and the local ones at `local` (positions), ranking
        // over `ranked` (chunk ids, ascending).
        let make = |store: &VectorStore, local: &[usize], ranked: Vec<u32>| -> Result<DenseSearcher> {
            let keys: Vec<VectorKey> = local.iter().map(|&p| plan.keys[p]).collect();
            let server = ServerIndex {
                store: shared.clone(),
                tower: tower.clone(),
                chunks_of: chunks_of.clone(),
                local: DenseIndex::from_store(store, &keys)?,
                local_rows: local.iter().map(|&p| plan.rows[p]).collect(),
                indexed,
            };
            Ok(DenseSearcher {
                tier: Tier::Transformer(towers.clone()),
                idf: None,
                index: DenseIndex::from_matrix(towers.chunk.dim(), Vec::new()),
                eligible: plan.len(),
                rows: ranked,
                opts: opts.clone(),
                embedded: 0,
                reused: 0,
                first: None,
                server: Some(server),
            })
        };
        let here: Vec<usize> = (0..plan.len()).filter(|&p| !held.contains(&tkeys[p])).collect();
        let missing = plan.missing_among(store, here.iter().copied());
        if let (Some(publish), false) = (partial, missing.is_empty()) {
            // Served while the rest is embedded: what the store holds and what this cache does
            // (nothing, when neither holds any: a ranking over no chunk is no answer).
            let cached: Vec<usize> =
                here.iter().copied().filter(|&p| store.contains(&plan.keys[p])).collect();
            let ranked: Vec<u32> = (0..plan.len())
                .filter(|&p| held.contains(&tkeys[p]) || store.contains(&plan.keys[p]))
                .map(|p| plan.rows[p])
                .collect();
            if !ranked.is_empty() {
                publish(make(store, &cached, ranked)?);
            }
        }
        let embedded = plan.embed(encoder, (chunks, graph, &opts), store, &missing, progress, SLICE)?;
        let mut full = make(store, &here, plan.rows.clone())?;
        (full.embedded, full.reused) = (embedded, missing.len() - embedded);
        Ok(full)
    }

    /// The store this index ranks in, when it does ([`DenseSearcher::build_in_store`]).
    pub fn ranks_in_store(&self) -> Option<&ServerIndex> {
        self.server.as_ref()
    }

    /// [`ServerIndex::search`] where the store ranks, else `None`.
    pub(super) fn search_in_store(&self, query: &[f32], k: usize) -> Option<Vec<Hit>> {
        self.server.as_ref().map(|s| s.search(query, k))
    }
}

/// The remembered (plan key, token key) pairs: 32-byte records; a torn tail is ignored, and a
/// file that cannot be read costs only the tokenising.
fn read_pairs(file: &Path) -> HashMap<VectorKey, VectorKey> {
    let bytes = std::fs::read(file).unwrap_or_default();
    bytes
        .chunks_exact(32)
        .filter_map(|r| Some((r[..16].try_into().ok()?, r[16..].try_into().ok()?)))
        .collect()
}

/// Appends `pairs` in one write, after cutting a torn tail a crash left (the records after
/// it would be read out of step).
fn append_pairs(file: &Path, pairs: &[(VectorKey, VectorKey)]) -> Result<()> {
    if pairs.is_empty() {
        return Ok(());
    }
    let io = |e| Error::io(file, e);
    let body: Vec<u8> = pairs.iter().flat_map(|(a, b)| a.iter().chain(b.iter()).copied()).collect();
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(file).map_err(io)?;
    let len = f.metadata().map_err(io)?.len();
    if len % 32 != 0 {
        f.set_len(len - len % 32).map_err(io)?;
    }
    std::io::Write::write_all(&mut f, &body).map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn remembered_token_keys_survive_a_torn_tail() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("token-keys.bin");
        let pair = |i: u8| ([i; 16], [i + 100; 16]);
        append_pairs(&file, &[pair(1), pair(2)]).unwrap();
        // A crash mid-append: half a record.
        std::fs::OpenOptions::new().append(true).open(&file).unwrap().write_all(&[7; 20]).unwrap();
        assert_eq!(read_pairs(&file).len(), 2, "the torn tail is ignored");
        append_pairs(&file, &[pair(3)]).unwrap();
        let known = read_pairs(&file);
        assert_eq!(known.len(), 3, "the next append cut the tail first: {known:?}");
        assert_eq!(known.get(&[3; 16]), Some(&[103; 16]));
        assert!(read_pairs(&dir.path().join("missing.bin")).is_empty());
    }
}
