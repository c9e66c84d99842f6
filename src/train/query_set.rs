//! Query-tower training data (README "Towers"): per instance, the pretrained query vector, the
//! gold chunks' vectors and a pool of candidate negatives, all read from the frozen chunk
//! tower's vector log — so each distinct chunk input is embedded once, ever, and reused by every
//! commit, epoch and run.
//!
//! Negatives are mined (CoRNStack): the frozen dense ranking's and BM25's top candidates plus
//! random chunks of the same snapshot. Likely false negatives are left out of the pool: another
//! chunk with a gold chunk's file and name (an `@overload` stub, a redefinition) and vectors
//! that nearly equal a gold vector. Consistency filtering drops an instance whose gold no
//! retriever ranks within the top `consistency_top`.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::{Deserialize, Serialize};

use crate::engine::SyntaxCache;
use crate::error::{Error, Result};
use crate::eval::instances::Instance;
use crate::eval::snapshot::{index_instance, instance_query, SnapshotOptions};
use crate::index::dense::{vector_key, VectorKey, VectorStore};
use crate::model::Towers;
use crate::progress::{EmbedOnly, Phase, Progress};
use crate::repo::git::find_repo;
use crate::semantic::{DenseOptions, DenseSearcher};

/// Cosine above which a candidate counts as a copy of a gold chunk (a likely false negative).
pub const NEAR_DUPLICATE: f32 = 0.98;

#[derive(Clone, Debug)]
pub struct QuerySetOptions {
    pub repos_dir: PathBuf,
    /// The frozen chunk tower's vector logs (`<repo>.vectors`), shared with eval.
    pub store_dir: PathBuf,
    pub max_file_size: u64,
    /// The chunk tower's input (must match what searches use).
    pub dense: DenseOptions,
    /// Candidates kept per instance from the dense ranking, from BM25, and at random.
    pub dense_top: usize,
    pub bm25_top: usize,
    pub random: usize,
    /// Keep an instance only if some gold chunk ranks within this many by BM25 or dense
    /// (0: keep all, for validation, whose pool is then the whole snapshot).
    pub consistency_top: usize,
    /// Skip instances whose patch touches more chunks than this (big refactors teach little).
    pub max_gold: usize,
    /// Keep module-level chunks as gold and negatives. Off by default: a pull request edits
    /// its files' imports as a side effect, so module chunks are gold far more often than in
    /// issues, and an adapter trained with them learned to rank them first (README "Results").
    pub module_chunks: bool,
    pub seed: u64,
}

/// One training (or validation) instance.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct QueryExample {
    pub instance_id: String,
    /// The query text as eval builds it (what a trained query encoder reads).
    pub text: String,
    /// The chunk tower's own (pretrained) query vector, unit length.
    pub query: Vec<f32>,
    /// Rows of [`QuerySet::vectors`].
    pub gold: Vec<u32>,
    pub pool: Vec<u32>,
}

/// Examples and the vector table they index (each distinct chunk vector once).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct QuerySet {
    pub dim: usize,
    pub chunk_tower: String,
    pub vectors: Vec<f32>,
    pub examples: Vec<QueryExample>,
    /// Why instances were left out, with counts (`no_gold`, `too_many_gold`, `inconsistent`, …).
    pub dropped: BTreeMap<String, usize>,
}

impl QuerySet {
    pub fn row(&self, i: u32) -> &[f32] {
        &self.vectors[i as usize * self.dim..(i as usize + 1) * self.dim]
    }
    pub fn rows(&self) -> usize {
        self.vectors.len() / self.dim.max(1)
    }

    /// Adds `other`'s examples (their rows renumbered after this set's); both must come from
    /// the same chunk tower.
    pub fn merge(&mut self, other: QuerySet) -> Result<()> {
        if other.chunk_tower != self.chunk_tower || other.dim != self.dim {
            return Err(Error::invalid(format!(
                "prepared with chunk tower {} (dim {}), this set with {} (dim {})",
                other.chunk_tower, other.dim, self.chunk_tower, self.dim
            )));
        }
        let offset = self.rows() as u32;
        self.vectors.extend(other.vectors);
        self.examples.extend(other.examples.into_iter().map(|mut e| {
            e.gold.iter_mut().chain(e.pool.iter_mut()).for_each(|r| *r += offset);
            e
        }));
        for (k, v) in other.dropped {
            *self.dropped.entry(k).or_default() += v;
        }
        Ok(())
    }

    pub fn save(&self, path: &Path) -> Result<()> {
        crate::cache::write_framed(path, QUERY_SET_VERSION, self)
    }

    pub fn load(path: &Path) -> Result<Self> {
        crate::cache::read_framed(path, QUERY_SET_VERSION).map_err(|e| {
            Error::context(path.display().to_string(), format!("not a prepared query set ({e:?})"))
        })
    }
}

/// 2: examples carry their query text.
const QUERY_SET_VERSION: u32 = 2;

/// What preparing cost and kept.
#[derive(Clone, Debug, Default, Serialize)]
pub struct QuerySetReport {
    pub instances: usize,
    pub kept: usize,
    pub embedded: usize,
    pub seconds: f64,
}

/// Prepares `instances` (grouped by repository, in the given order within one).
pub fn prepare_query_set(
    instances: &[Instance],
    towers: &Towers,
    opts: &QuerySetOptions,
    progress: &dyn Progress,
    on_note: &mut dyn FnMut(&str),
) -> Result<(QuerySet, QuerySetReport)> {
    let started = std::time::Instant::now();
    let encoder = &towers.chunk;
    let mut set = QuerySet { dim: encoder.dim(), chunk_tower: encoder.fingerprint(), ..Default::default() };
    let mut report = QuerySetReport { instances: instances.len(), ..Default::default() };
    let mut rows: HashMap<VectorKey, u32> = HashMap::new();
    let mut by_repo: BTreeMap<&str, Vec<&Instance>> = BTreeMap::new();
    for inst in instances {
        by_repo.entry(inst.repo.as_str()).or_default().push(inst);
    }
    let query_tag = format!("{}|query{}", encoder.fingerprint(), opts.dense.query_max_len);
    let (mut query_store, note) = VectorStore::open(&opts.store_dir.join("queries.vectors"), encoder.dim())?;
    note.iter().for_each(|n| on_note(n));
    let mut rng = rand::rngs::StdRng::seed_from_u64(opts.seed);
    let mut done = 0;
    // Test files never hold gold; the chunk input may list callees.
    let snapshot_opts = SnapshotOptions {
        max_file_size: opts.max_file_size,
        exclude_tests: true,
        link_calls: opts.dense.use_callgraph,
    };
    for (repo, list) in by_repo {
        let git_dir = match find_repo(&opts.repos_dir, repo) {
            Ok(dir) => dir,
            Err(e) => {
                // A missing repository costs its own instances, counted, not the run.
                on_note(&format!("{repo}: {e}; its {} instances skipped", list.len()));
                *set.dropped.entry("missing_repository".into()).or_default() += list.len();
                done += list.len();
                continue;
            }
        };
        let file = crate::searcher::shared_vector_log(&opts.store_dir, repo);
        let (mut store, note) = VectorStore::open(&file, encoder.dim())?;
        note.iter().for_each(|n| on_note(n));
        let mut syntax = SyntaxCache::new();
        for inst in list {
            progress.report(Phase::Instances, done, instances.len());
            done += 1;
            if progress.cancelled() {
                return Err(Error::Cancelled);
            }
            let snap = match index_instance(inst, &git_dir, snapshot_opts, &mut syntax) {
                Ok(s) => s,
                Err(e) => {
                    on_note(&format!("{}: {e}", inst.instance_id));
                    *set.dropped.entry("failed".into()).or_default() += 1;
                    continue;
                }
            };
            let gold = snap.gold_ids.clone();
            let reason = if gold.is_empty() {
                Some("no_gold")
            } else if gold.len() > opts.max_gold {
                Some("too_many_gold")
            } else {
                None
            };
            if let Some(r) = reason {
                *set.dropped.entry(r.into()).or_default() += 1;
                continue;
            }
            let index = &snap.index;
            let dense = DenseSearcher::build(
                Towers::tied(encoder.clone()),
                &index.chunks,
                &index.graph,
                opts.dense.clone(),
                &mut store,
                &EmbedOnly(progress),
            )?;
            report.embedded += dense.embedded;
            let text = instance_query(inst, false);
            let qkey = vector_key(&query_tag, &text, &[]);
            let query = match query_store.get(&qkey) {
                Some(v) => v.to_vec(),
                None => {
                    let v = towers.embed_query_pretrained(&text, opts.dense.query_max_len)?;
                    query_store.add_batch(&[qkey], std::slice::from_ref(&v))?;
                    v
                }
            };
            let n = index.chunks.len();
            let whole = opts.consistency_top == 0;
            let dense_hits =
                dense.search_vector(&query, if whole { n } else { opts.dense_top.max(opts.consistency_top) });
            let bm25_hits = index.search_bm25(&text, opts.bm25_top.max(opts.consistency_top))?;
            if !whole {
                let within = |hits: &[crate::search::Hit]| {
                    hits.iter().take(opts.consistency_top).any(|h| gold.contains(&(h.chunk as usize)))
                };
                if !within(&dense_hits) && !within(&bm25_hits) {
                    *set.dropped.entry("inconsistent".into()).or_default() += 1;
                    continue;
                }
            }
            let mut pool: Vec<usize> = if whole {
                (0..n).collect()
            } else {
                let mut p: Vec<usize> =
                    dense_hits.iter().take(opts.dense_top).map(|h| h.chunk as usize).collect();
                p.extend(bm25_hits.iter().take(opts.bm25_top).map(|h| h.chunk as usize));
                let mut all: Vec<usize> = (0..n).collect();
                all.shuffle(&mut rng);
                p.extend(all.into_iter().take(opts.random));
                p
            };
            let usable = |c: usize| {
                dense.vector(c).is_some()
                    && (opts.module_chunks || index.chunks[c].kind != crate::chunk::ChunkKind::Module)
            };
            let gold: Vec<usize> = gold.into_iter().filter(|&g| usable(g)).collect();
            if gold.is_empty() {
                *set.dropped.entry("only_module_gold".into()).or_default() += 1;
                continue;
            }
            let mut seen = HashSet::new();
            pool.retain(|&c| usable(c) && seen.insert(c));
            let vec_of = |c: usize| dense.vector(c).unwrap_or(&[]);
            let gold_vecs: Vec<&[f32]> = gold.iter().map(|&g| vec_of(g)).collect();
            let gold_names: HashSet<(&str, &str)> = gold
                .iter()
                .map(|&g| (index.chunks[g].path.as_str(), index.chunks[g].name.as_str()))
                .collect();
            pool.retain(|&c| {
                let ch = &index.chunks[c];
                !gold.contains(&c)
                    && !gold_names.contains(&(ch.path.as_str(), ch.name.as_str()))
                    && !gold_vecs.iter().any(|g| dot(g, vec_of(c)) > NEAR_DUPLICATE)
            });
            // Vector-table rows, shared across the repository's commits by input key.
            // Keys only for the chunks kept (gold and pool), not the whole snapshot.
            let tag = format!("{}|{}", encoder.fingerprint(), opts.dense.tag());
            let mut row_of = |c: usize| -> u32 {
                let input = crate::semantic::encoder_input(&index.chunks, &index.graph, &opts.dense, c);
                let key = vector_key(&tag, &input.chunk, &input.neighbours);
                *rows.entry(key).or_insert_with(|| {
                    set.vectors.extend_from_slice(vec_of(c));
                    (set.vectors.len() / set.dim - 1) as u32
                })
            };
            let gold_rows: Vec<u32> = gold.iter().map(|&g| row_of(g)).collect();
            let pool_rows: Vec<u32> = pool.iter().map(|&c| row_of(c)).collect();
            set.examples.push(QueryExample {
                instance_id: inst.instance_id.clone(),
                text,
                query,
                gold: gold_rows,
                pool: pool_rows,
            });
        }
    }
    progress.report(Phase::Instances, instances.len(), instances.len());
    report.kept = set.examples.len();
    report.seconds = started.elapsed().as_secs_f64();
    Ok((set, report))
}

pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Encoder, EncoderOptions};
    use crate::progress::NoProgress;
    use std::sync::Arc;

    #[test]
    fn merged_sets_keep_every_example_pointing_at_its_own_vectors() {
        let one = |id: &str, v: [f32; 2], tower: &str| QuerySet {
            dim: 2,
            chunk_tower: tower.into(),
            vectors: vec![v[0], v[1], 0.0, 1.0],
            examples: vec![QueryExample {
                instance_id: id.into(),
                text: id.into(),
                query: vec![1.0, 0.0],
                gold: vec![0],
                pool: vec![1],
            }],
            dropped: [("no_gold".to_string(), 1)].into(),
        };
        let mut a = one("a", [1.0, 0.0], "t");
        a.merge(one("b", [0.6, 0.8], "t")).unwrap();
        assert_eq!(a.examples.len(), 2);
        assert_eq!(a.row(a.examples[1].gold[0]), &[0.6, 0.8]);
        assert_eq!(a.row(a.examples[1].pool[0]), &[0.0, 1.0]);
        assert_eq!(a.row(a.examples[0].gold[0]), &[1.0, 0.0]);
        assert_eq!(a.dropped["no_gold"], 2);
        assert!(a.merge(one("c", [1.0, 0.0], "other")).is_err(), "another chunk tower's vectors do not mix");
    }

    #[test]
    fn mined_pools_never_hold_gold_and_inconsistent_pairs_are_counted() {
        let fx = crate::testkit::fixture();
        let opts = EncoderOptions { max_len: 64, ..EncoderOptions::default() };
        let enc = Arc::new(Encoder::load(&fx.model, &candle_core::Device::Cpu, opts).unwrap());
        let towers = Towers::tied(enc.clone());
        let store = tempfile::tempdir().unwrap();
        let mut o = QuerySetOptions {
            repos_dir: fx.repos.clone(),
            store_dir: store.path().to_path_buf(),
            max_file_size: 1 << 20,
            dense: DenseOptions::default(),
            dense_top: 4,
            bm25_top: 4,
            random: 2,
            consistency_top: 0,
            max_gold: 8,
            module_chunks: true,
            seed: 3,
        };
        let acme: Vec<Instance> = fx.instances.iter().filter(|i| i.repo == "acme/proj").cloned().collect();
        let (set, report) = prepare_query_set(&acme, &towers, &o, &NoProgress, &mut |_| {}).unwrap();
        // An instance whose repository is not under --repos is counted, not fatal.
        let mut notes = Vec::new();
        let (with_gone, _) =
            prepare_query_set(&fx.instances, &towers, &o, &NoProgress, &mut |n| notes.push(n.to_string()))
                .unwrap();
        assert_eq!(with_gone.dropped.get("missing_repository"), Some(&1));
        assert_eq!(with_gone.examples.len(), set.examples.len());
        assert!(notes.iter().any(|n| n.contains("acme/gone")), "{notes:?}");
        assert!(report.kept >= 5, "{report:?} {:?}", set.dropped);
        assert_eq!(set.dropped.get("no_gold"), Some(&1), "the README-only patch has no gold chunk");
        for ex in &set.examples {
            assert!(!ex.gold.is_empty());
            assert!(ex.pool.iter().all(|p| !ex.gold.contains(p)), "{}: gold in pool", ex.instance_id);
            for &p in &ex.pool {
                for &g in &ex.gold {
                    assert!(dot(set.row(p), set.row(g)) <= NEAR_DUPLICATE, "near-copy of gold kept");
                }
            }
            let q = (ex.query.iter().map(|x| x * x).sum::<f32>()).sqrt();
            assert!((q - 1.0).abs() < 1e-4);
        }

        // A second run embeds nothing: the vectors come from the log.
        let (_, again) = prepare_query_set(&acme, &towers, &o, &NoProgress, &mut |_| {}).unwrap();
        assert_eq!(again.embedded, 0);

        // Consistency filtering: with a top-1 requirement some random-model pairs fail it.
        o.consistency_top = 1;
        let (strict, _) = prepare_query_set(&acme, &towers, &o, &NoProgress, &mut |_| {}).unwrap();
        let dropped = strict.dropped.get("inconsistent").copied().unwrap_or(0);
        assert_eq!(strict.examples.len() + dropped, set.examples.len());
        for ex in &strict.examples {
            assert!(ex.pool.len() <= o.dense_top + o.bm25_top + o.random);
        }
    }
}
