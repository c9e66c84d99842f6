//! Retrieval metrics of one ranking against the gold, and their averages over instances
//! (docs/GUIDE.md "Evaluation"). Ranks are 1-based; a ranking may be full or cut at top-K, and
//! anything it does not reach counts as not found.

use std::collections::HashMap;

use serde::ser::{Serialize, SerializeMap, Serializer};

/// A global chunk id: the position of a chunk in the index.
pub type ChunkId = usize;

/// Named metric values in a fixed order (`perfect_recall@k`…, `recall@k`…,
/// `file_acc@k`…, `mrr`); serialises as a JSON object in that order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Metrics(pub Vec<(String, f64)>);

impl Metrics {
    pub fn get(&self, name: &str) -> Option<f64> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
    }
}

impl Serialize for Metrics {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, value) in &self.0 {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

/// The metrics of one instance.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct InstanceMetrics {
    /// Rank of each gold chunk (in the order given), `None` when the ranking misses it.
    pub gold_ranks: Vec<Option<usize>>,
    /// Gold files (as given, then any other file of a gold chunk) and their file ranks.
    pub gold_files: Vec<String>,
    pub gold_file_ranks: Vec<Option<usize>>,
    pub metrics: Metrics,
}

/// Score `ranking` (best first) against `gold` chunks and `gold_files` at each `k` of `ks`.
/// `path_of` maps a chunk id to its file. `None` when there is no gold chunk: such an
/// instance is reported by the caller and left out of the averages.
pub fn evaluate<'a>(
    ranking: &[ChunkId],
    gold: &[ChunkId],
    gold_files: &[String],
    path_of: impl Fn(ChunkId) -> &'a str,
    ks: &[usize],
) -> Option<InstanceMetrics> {
    let mut gold_chunks: Vec<ChunkId> = Vec::new();
    for &id in gold {
        if !gold_chunks.contains(&id) {
            gold_chunks.push(id);
        }
    }
    if gold_chunks.is_empty() {
        return None;
    }
    // A gold chunk's file is always a gold file.
    let mut files: Vec<String> = Vec::new();
    let chunk_files = gold_chunks.iter().map(|&id| path_of(id).to_string());
    for file in gold_files.iter().cloned().chain(chunk_files) {
        if !files.contains(&file) {
            files.push(file);
        }
    }

    let chunk_rank = first_ranks(ranking.iter().copied());
    let file_rank = first_ranks(ranking.iter().map(|&id| path_of(id)));
    let gold_ranks: Vec<Option<usize>> = gold_chunks.iter().map(|id| chunk_rank.get(id).copied()).collect();
    let gold_file_ranks: Vec<Option<usize>> =
        files.iter().map(|f| file_rank.get(f.as_str()).copied()).collect();

    let mut ks: Vec<usize> = ks.to_vec();
    ks.sort_unstable();
    ks.dedup();
    let within =
        |ranks: &[Option<usize>], k: usize| ranks.iter().filter(|r| r.is_some_and(|r| r <= k)).count();
    let mut metrics = Vec::new();
    for &k in &ks {
        let all = within(&gold_ranks, k) == gold_ranks.len();
        metrics.push((format!("perfect_recall@{k}"), f64::from(u8::from(all))));
    }
    for &k in &ks {
        let found = within(&gold_ranks, k) as f64 / gold_ranks.len() as f64;
        metrics.push((format!("recall@{k}"), found));
    }
    for &k in &ks {
        let all = within(&gold_file_ranks, k) == gold_file_ranks.len();
        metrics.push((format!("file_acc@{k}"), f64::from(u8::from(all))));
    }
    let first = gold_ranks.iter().flatten().min();
    metrics.push(("mrr".to_string(), first.map_or(0.0, |&r| 1.0 / r as f64)));

    Some(InstanceMetrics { gold_ranks, gold_files: files, gold_file_ranks, metrics: Metrics(metrics) })
}

/// The 1-based rank of each distinct item by first appearance; repeats do not take a rank.
fn first_ranks<T: Eq + std::hash::Hash>(items: impl Iterator<Item = T>) -> HashMap<T, usize> {
    let mut ranks = HashMap::new();
    for item in items {
        let next = ranks.len() + 1;
        ranks.entry(item).or_insert(next);
    }
    ranks
}

/// Averages over the instances that have gold.
#[derive(Clone, Debug, Default)]
pub struct Aggregate {
    n: usize,
    sums: Vec<(String, f64)>,
    without_gold: Vec<String>,
}

/// Mean metrics over `n` instances; `without_gold` instances were left out.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Summary {
    pub n: usize,
    pub without_gold: usize,
    #[serde(flatten)]
    pub metrics: Metrics,
}

impl Aggregate {
    pub fn add(&mut self, instance: &InstanceMetrics) {
        self.add_metrics(&instance.metrics);
    }

    /// Adds one instance's metrics to the sums.
    pub fn add_metrics(&mut self, metrics: &Metrics) {
        self.n += 1;
        for (name, value) in &metrics.0 {
            match self.sums.iter_mut().find(|(n, _)| n == name) {
                Some((_, sum)) => *sum += value,
                None => self.sums.push((name.clone(), *value)),
            }
        }
    }

    /// Count an instance that has no gold chunk; it does not enter the averages.
    pub fn add_without_gold(&mut self, instance_id: &str) {
        self.without_gold.push(instance_id.to_string());
    }

    pub fn without_gold(&self) -> &[String] {
        &self.without_gold
    }

    pub fn summary(&self) -> Summary {
        let n = self.n.max(1) as f64;
        let metrics = self.sums.iter().map(|(name, sum)| (name.clone(), sum / n)).collect();
        Summary { n: self.n, without_gold: self.without_gold.len(), metrics: Metrics(metrics) }
    }
}

#[cfg(test)]
mod tests;

/// The cut-off of the NDCG and file recall the grouped metrics report.
pub const NDCG_AT: usize = 10;

/// The metrics of the grouped view of `ranking` ([`crate::rank::group`]): one row per file at
/// its best chunk's rank, a file's module chunk nested in its file's group. Chunk metrics of the
/// grouped order read the rows first, then the chunks nested beneath them
/// ([`crate::rank::group::rows_then_nested`]): `grouped_perfect_recall@k` and `grouped_mrr`.
/// File metrics: `file_ndcg@10` over the rows (binary gain, a gold file counting at its row),
/// `file_recall@10` (the share of gold files among the first ten rows), `file_mrr` (the first
/// gold file's row); and `chunk_ndcg@10`, the same NDCG over the flat chunk list with a gold
/// file counting at its first chunk, the figure the grouped one is compared with. `files`
/// are the instance's gold files as [`evaluate`] gives them (`InstanceMetrics::gold_files`).
pub fn grouped<'a>(
    ranking: &[ChunkId],
    gold: &[ChunkId],
    files: &[String],
    path_of: impl Fn(ChunkId) -> &'a str,
    is_module: impl Fn(ChunkId) -> bool,
    ks: &[usize],
) -> Metrics {
    use crate::index::Hit;
    use crate::rank::group::{group_hits, rows_then_nested};
    let hits: Vec<Hit> = ranking.iter().map(|&id| Hit { chunk: id as u32, score: 0.0 }).collect();
    let groups = group_hits(&hits, |id| Some(path_of(id as usize)), |id| is_module(id as usize));
    let order: Vec<ChunkId> = rows_then_nested(&groups).iter().map(|h| h.chunk as usize).collect();
    let chunk_rank = first_ranks(order.iter().copied());
    let mut gold_chunks: Vec<ChunkId> = gold.to_vec();
    gold_chunks.sort_unstable();
    gold_chunks.dedup();
    let gold_ranks: Vec<Option<usize>> = gold_chunks.iter().map(|id| chunk_rank.get(id).copied()).collect();
    let row: HashMap<&str, usize> =
        groups.iter().enumerate().map(|(i, g)| (g.path.as_str(), i + 1)).collect();
    let file_rows: Vec<Option<usize>> = files.iter().map(|f| row.get(f.as_str()).copied()).collect();
    // The flat chunk list: a file counts at its first chunk's rank.
    let mut first_chunk: HashMap<&str, usize> = HashMap::new();
    for (i, &id) in ranking.iter().enumerate() {
        first_chunk.entry(path_of(id)).or_insert(i + 1);
    }
    let file_firsts: Vec<Option<usize>> =
        files.iter().map(|f| first_chunk.get(f.as_str()).copied()).collect();

    let mut ks: Vec<usize> = ks.to_vec();
    ks.sort_unstable();
    ks.dedup();
    let mut metrics = Vec::new();
    let within =
        |ranks: &[Option<usize>], k: usize| ranks.iter().filter(|r| r.is_some_and(|r| r <= k)).count();
    for &k in &ks {
        let all = !gold_ranks.is_empty() && within(&gold_ranks, k) == gold_ranks.len();
        metrics.push((format!("grouped_perfect_recall@{k}"), f64::from(u8::from(all))));
    }
    let mrr = |ranks: &[Option<usize>]| ranks.iter().flatten().min().map_or(0.0, |&r| 1.0 / r as f64);
    metrics.push(("grouped_mrr".to_string(), mrr(&gold_ranks)));
    metrics.push((format!("chunk_ndcg@{NDCG_AT}"), ndcg(&file_firsts, NDCG_AT)));
    metrics.push((format!("file_ndcg@{NDCG_AT}"), ndcg(&file_rows, NDCG_AT)));
    let recall = if files.is_empty() { 0.0 } else { within(&file_rows, NDCG_AT) as f64 / files.len() as f64 };
    metrics.push((format!("file_recall@{NDCG_AT}"), recall));
    metrics.push(("file_mrr".to_string(), mrr(&file_rows)));
    Metrics(metrics)
}

/// Binary-gain NDCG@k of relevant items found at `ranks` (1-based; `None`: not found): each
/// found within k gains 1 / log2(rank + 1), over the best possible for that many items.
pub fn ndcg(ranks: &[Option<usize>], k: usize) -> f64 {
    let dcg: f64 = ranks.iter().flatten().filter(|&&r| r <= k).map(|&r| 1.0 / (r as f64 + 1.0).log2()).sum();
    let ideal: f64 = (1..=ranks.len().min(k)).map(|r| 1.0 / (r as f64 + 1.0).log2()).sum();
    if ideal > 0.0 {
        dcg / ideal
    } else {
        0.0
    }
}
