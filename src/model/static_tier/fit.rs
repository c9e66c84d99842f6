//! Fitting a static table to the task with the CoRet loss (docs/GUIDE.md "Tiers"): for each
//! training example, its query against its gold chunks and the negatives of its own repository,
//! `-log softmax(q·c*/τ)` over the gold chunk and the negatives, averaged over its gold chunks.
//! As in the encoder's training (docs/GUIDE.md "Training on a CPU"), a batch holds examples of
//! one repository and one pool of their candidates serves every query of the batch, each query
//! masking its own gold chunks' namesakes: hundreds of negatives per query at no extra cost.
//! Only the rows of the tokens an example holds move (sparse Adam), pulled back towards the
//! distilled rows they started from, so tokens the data never shows keep the tower's meaning.
//!
//! No transformer is in the loop: a pass over thousands of examples takes seconds on a CPU.

use std::collections::HashMap;

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rayon::prelude::*;

use crate::error::{Error, Result};

/// A text as its distinct token ids and the weight each enters its sum with
/// ([`super::weigh::token_weights`]: the repository's idf, a saturating count).
pub type Bag = Vec<(u32, f32)>;

/// One example as bags (special tokens removed); candidates carry their key (`path::name`,
/// the same function across commits).
#[derive(Clone, Debug)]
pub struct BagExample {
    pub repo: String,
    pub query: Bag,
    pub positives: Vec<(String, Bag)>,
    pub negatives: Vec<(String, Bag)>,
}

#[derive(Clone, Debug)]
pub struct FitOptions {
    pub epochs: usize,
    pub lr: f32,
    pub temperature: f32,
    /// Pull of each row towards where it started (per update, scaled by the learning rate).
    pub anchor: f32,
    /// Examples per update.
    pub batch: usize,
    pub seed: u64,
    /// [`regress`]: the weight of the in-batch relational KL term beside the cosine (0: cosine alone).
    pub relational: f32,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions {
            epochs: 1,
            lr: 1e-3,
            temperature: 0.05,
            anchor: 1e-2,
            batch: 32,
            seed: 13,
            relational: 0.0,
        }
    }
}

/// What a pass reports: mean loss, and the share of examples whose gold chunk scored first.
#[derive(Clone, Copy, Debug, Default)]
pub struct EpochReport {
    pub loss: f64,
    pub top1: f64,
}

/// Sparse gradients of one batch: token id → gradient of its row.
type Grads = HashMap<u32, Vec<f32>>;

/// The weighted sum of the rows of `bag` and its norm.
fn pooled(rows: &[f32], dim: usize, bag: &[(u32, f32)]) -> (Vec<f32>, f32) {
    let mut s = vec![0f32; dim];
    for &(id, w) in bag {
        let i = id as usize * dim;
        if let Some(r) = rows.get(i..i + dim) {
            s.iter_mut().zip(r).for_each(|(a, b)| *a += w * b);
        }
    }
    let n = s.iter().map(|x| x * x).sum::<f32>().sqrt();
    (s, n)
}

/// Unit vector of a bag (zeros when its sum is zero).
fn unit(s: &[f32], n: f32) -> Vec<f32> {
    if n > 0.0 {
        s.iter().map(|x| x / n).collect()
    } else {
        vec![0.0; s.len()]
    }
}

/// Adds `g` (a gradient for a bag's unit vector `v` with sum norm `n`) to every token of the bag.
fn back(grads: &mut Grads, dim: usize, bag: &[(u32, f32)], v: &[f32], n: f32, g: &[f32]) {
    if n <= 0.0 {
        return;
    }
    let dot: f32 = v.iter().zip(g).map(|(a, b)| a * b).sum();
    let gs: Vec<f32> = g.iter().zip(v).map(|(gi, vi)| (gi - vi * dot) / n).collect();
    for &(id, w) in bag {
        let row = grads.entry(id).or_insert_with(|| vec![0.0; dim]);
        row.iter_mut().zip(&gs).for_each(|(a, b)| *a += w * b);
    }
}

/// The loss of one example and its gradients; whether its first gold chunk scored above every negative.
fn example_grads(rows: &[f32], dim: usize, ex: &BagExample, tau: f32) -> (f64, bool, Grads) {
    let mut grads = Grads::new();
    let (qs, qn) = pooled(rows, dim, &ex.query);
    let q = unit(&qs, qn);
    let negs: Vec<(Vec<f32>, f32)> = ex.negatives.iter().map(|(_, b)| pooled(rows, dim, b)).collect();
    let neg_units: Vec<Vec<f32>> = negs.iter().map(|(s, n)| unit(s, *n)).collect();
    let neg_scores: Vec<f32> = neg_units.iter().map(|c| dot(&q, c) / tau).collect();
    let mut gq = vec![0f32; dim];
    let mut gneg = vec![0f32; negs.len()];
    let (mut loss, mut first) = (0f64, false);
    let scale = 1.0 / ex.positives.len().max(1) as f32;
    for (k, (_, pos)) in ex.positives.iter().enumerate() {
        let (ps, pn) = pooled(rows, dim, pos);
        let p = unit(&ps, pn);
        let sp = dot(&q, &p) / tau;
        if k == 0 {
            first = neg_scores.iter().all(|&s| s < sp);
        }
        let max = neg_scores.iter().copied().fold(sp, f32::max);
        let z: f32 = (sp - max).exp() + neg_scores.iter().map(|s| (s - max).exp()).sum::<f32>();
        loss += (-(sp - max - z.ln())) as f64 * scale as f64;
        // d loss / d score: softmax − one-hot, over the gold chunk and the negatives.
        let gp = ((sp - max).exp() / z - 1.0) * scale / tau;
        gq.iter_mut().zip(&p).for_each(|(a, b)| *a += gp * b);
        let gpv: Vec<f32> = q.iter().map(|x| gp * x).collect();
        back(&mut grads, dim, pos, &p, pn, &gpv);
        for (j, s) in neg_scores.iter().enumerate() {
            let g = (s - max).exp() / z * scale / tau;
            gneg[j] += g;
            gq.iter_mut().zip(&neg_units[j]).for_each(|(a, b)| *a += g * b);
        }
    }
    for (j, (_, bag)) in ex.negatives.iter().enumerate() {
        let gv: Vec<f32> = q.iter().map(|x| gneg[j] * x).collect();
        back(&mut grads, dim, bag, &neg_units[j], negs[j].1, &gv);
    }
    back(&mut grads, dim, &ex.query, &q, qn, &gq);
    (loss, first, grads)
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Trains `rows` (vocabulary × `dim`) in place; `on_epoch` hears each pass's report, with the rows as they stand.
pub fn fit(
    rows: &mut [f32],
    dim: usize,
    examples: &[BagExample],
    opts: &FitOptions,
    on_epoch: &mut dyn FnMut(usize, EpochReport, &[f32]),
) -> Result<()> {
    if examples.is_empty() {
        return Err(Error::NoExamples);
    }
    let mut adam = SparseAdam::new(rows);
    let mut rng = rand::rngs::StdRng::seed_from_u64(opts.seed);
    for epoch in 0..opts.epochs {
        let (mut loss, mut top1) = (0f64, 0usize);
        for batch in repo_batches(examples, opts.batch.max(1), &mut rng) {
            let frozen: &[f32] = rows;
            let (l, t, grads) = pool_grads(frozen, dim, examples, &batch, opts.temperature);
            loss += l;
            top1 += t;
            adam.step(rows, dim, grads, batch.len() as f32, opts);
        }
        let report =
            EpochReport { loss: loss / examples.len() as f64, top1: top1 as f64 / examples.len() as f64 };
        on_epoch(epoch + 1, report, rows);
    }
    Ok(())
}

/// One query of a batch: its loss, whether its first gold chunk came first, each pool entry's
/// coefficient in its gradient, and its unit vector with its sum's norm.
type QueryPart = (f64, bool, Vec<f32>, (Vec<f32>, f32));

/// Batches of at most `size` examples of one repository each, in a random order.
fn repo_batches(examples: &[BagExample], size: usize, rng: &mut rand::rngs::StdRng) -> Vec<Vec<usize>> {
    let mut by_repo: std::collections::BTreeMap<&str, Vec<usize>> = Default::default();
    for (i, ex) in examples.iter().enumerate() {
        by_repo.entry(ex.repo.as_str()).or_default().push(i);
    }
    let mut batches = Vec::new();
    for (_, mut ids) in by_repo {
        ids.shuffle(rng);
        batches.extend(ids.chunks(size).map(<[usize]>::to_vec));
    }
    batches.shuffle(rng);
    batches
}

/// One batch through one pool: every candidate of its examples once (by key), each query
/// scored against every pool entry but its own gold chunks' namesakes. Returns the summed loss,
/// how many queries put their first gold chunk first, and the gradients.
fn pool_grads(
    rows: &[f32],
    dim: usize,
    examples: &[BagExample],
    batch: &[usize],
    tau: f32,
) -> (f64, usize, Grads) {
    let mut keys: HashMap<&str, usize> = HashMap::new();
    let mut pool: Vec<&[(u32, f32)]> = Vec::new();
    for &i in batch {
        let ex = &examples[i];
        for (key, bag) in ex.positives.iter().chain(&ex.negatives) {
            keys.entry(key.as_str()).or_insert_with(|| {
                pool.push(bag);
                pool.len() - 1
            });
        }
    }
    let sums: Vec<(Vec<f32>, f32)> = pool.par_iter().map(|b| pooled(rows, dim, b)).collect();
    let units: Vec<Vec<f32>> = sums.iter().map(|(s, n)| unit(s, *n)).collect();
    let per: Vec<QueryPart> = batch
        .par_iter()
        .map(|&i| {
            let ex = &examples[i];
            let (qs, qn) = pooled(rows, dim, &ex.query);
            let q = unit(&qs, qn);
            let scores: Vec<f32> = units.iter().map(|c| dot(&q, c) / tau).collect();
            let gold: Vec<usize> =
                ex.positives.iter().filter_map(|(k, _)| keys.get(k.as_str()).copied()).collect();
            let negative: Vec<usize> = (0..pool.len()).filter(|j| !gold.contains(j)).collect();
            let mut coef = vec![0f32; pool.len()];
            let (mut loss, mut first) = (0f64, false);
            let scale = 1.0 / gold.len().max(1) as f32;
            for (k, &p) in gold.iter().enumerate() {
                let sp = scores[p];
                if k == 0 {
                    first = negative.iter().all(|&j| scores[j] < sp);
                }
                let max = negative.iter().map(|&j| scores[j]).fold(sp, f32::max);
                let z: f32 =
                    (sp - max).exp() + negative.iter().map(|&j| (scores[j] - max).exp()).sum::<f32>();
                loss += (-(sp - max - z.ln())) as f64 * scale as f64;
                coef[p] += ((sp - max).exp() / z - 1.0) * scale / tau;
                for &j in &negative {
                    coef[j] += (scores[j] - max).exp() / z * scale / tau;
                }
            }
            (loss, first, coef, (q, qn))
        })
        .collect();
    let (mut total, mut firsts) = (0f64, 0);
    // Each pool entry's gradient: Σ over queries of coefficient × query vector; each query's:
    // Σ over the pool of coefficient × entry.
    let mut gpool = vec![vec![0f32; dim]; pool.len()];
    let mut grads = Grads::new();
    for (&i, (l, f, coef, (q, qn))) in batch.iter().zip(&per) {
        total += l;
        firsts += usize::from(*f);
        let mut gq = vec![0f32; dim];
        for (j, c) in coef.iter().enumerate().filter(|(_, c)| **c != 0.0) {
            gpool[j].iter_mut().zip(q).for_each(|(a, b)| *a += c * b);
            gq.iter_mut().zip(&units[j]).for_each(|(a, b)| *a += c * b);
        }
        back(&mut grads, dim, &examples[i].query, q, *qn, &gq);
    }
    for (j, g) in gpool.iter().enumerate() {
        back(&mut grads, dim, pool[j], &units[j], sums[j].1, g);
    }
    (total, firsts, grads)
}

/// Mean loss and top-1 share of `examples` under `rows`, without training (validation).
pub fn evaluate(rows: &[f32], dim: usize, examples: &[BagExample], tau: f32) -> EpochReport {
    let parts: Vec<(f64, bool)> = examples
        .par_iter()
        .map(|ex| {
            let (l, first, _) = example_grads(rows, dim, ex, tau);
            (l, first)
        })
        .collect();
    let n = examples.len().max(1) as f64;
    EpochReport {
        loss: parts.iter().map(|p| p.0).sum::<f64>() / n,
        top1: parts.iter().filter(|p| p.1).count() as f64 / n,
    }
}

/// A text as a bag of ids and the chunk tower's unit vector of it: what the table is
/// regressed towards before the CoRet loss (the tower's meaning on real code and issues,
/// where the vocabulary pass saw each token alone).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct BagTarget {
    pub ids: Bag,
    pub target: Vec<f32>,
}

/// The loss `1 − cos(static(bag), target)` of one target and its gradients.
fn target_grads(rows: &[f32], dim: usize, t: &BagTarget) -> (f64, Grads) {
    let mut grads = Grads::new();
    let (s, n) = pooled(rows, dim, &t.ids);
    let v = unit(&s, n);
    let loss = 1.0 - dot(&v, &t.target) as f64;
    let g: Vec<f32> = t.target.iter().map(|x| -x).collect();
    back(&mut grads, dim, &t.ids, &v, n, &g);
    (loss, grads)
}

/// The in-batch relational term (issue 80): for each text of the batch, the KL divergence from
/// the tower's similarity distribution over the batch's other texts (softmax of cosines / τ) to
/// the table's, times `weight`, summed over the batch; with its gradients. Cosine alone matches
/// each vector to its target; this matches how the texts stand to one another, which is what a
/// ranking reads.
fn relational_grads(rows: &[f32], dim: usize, batch: &[&BagTarget], tau: f32, weight: f32) -> (f64, Grads) {
    let mut grads = Grads::new();
    let b = batch.len();
    if b < 2 {
        return (0.0, grads);
    }
    let pooled: Vec<(Vec<f32>, f32)> = batch.iter().map(|t| pooled(rows, dim, &t.ids)).collect();
    let v: Vec<Vec<f32>> = pooled.iter().map(|(s, n)| unit(s, *n)).collect();
    let softmax = |logits: Vec<f32>| {
        let max = logits.iter().copied().fold(f32::MIN, f32::max);
        let e: Vec<f32> = logits.iter().map(|x| (x - max).exp()).collect();
        let z: f32 = e.iter().sum();
        e.into_iter().map(|x| x / z).collect::<Vec<f32>>()
    };
    let mut gv = vec![vec![0f32; dim]; b];
    let mut loss = 0f64;
    for i in 0..b {
        let others: Vec<usize> = (0..b).filter(|&j| j != i).collect();
        let p = softmax(others.iter().map(|&j| dot(&batch[i].target, &batch[j].target) / tau).collect());
        let q = softmax(others.iter().map(|&j| dot(&v[i], &v[j]) / tau).collect());
        for (k, &j) in others.iter().enumerate() {
            if p[k] > 0.0 {
                loss += (p[k] * (p[k] / q[k].max(1e-12)).ln()) as f64;
            }
            // d KL / d logit = q − p; the logit is v_i · v_j / τ.
            let c = weight * (q[k] - p[k]) / tau;
            for d in 0..dim {
                gv[i][d] += c * v[j][d];
                gv[j][d] += c * v[i][d];
            }
        }
    }
    for i in 0..b {
        back(&mut grads, dim, &batch[i].ids, &v[i], pooled[i].1, &gv[i]);
    }
    (weight as f64 * loss, grads)
}

/// Regresses `rows` towards the tower's vectors of `targets` (sparse Adam, as [`fit`]);
/// `on_epoch` hears each pass's mean loss.
pub fn regress(
    rows: &mut [f32],
    dim: usize,
    targets: &[BagTarget],
    opts: &FitOptions,
    on_epoch: &mut dyn FnMut(usize, f64, &[f32]),
) -> Result<()> {
    if targets.is_empty() {
        return Err(Error::NoExamples);
    }
    let mut adam = SparseAdam::new(rows);
    let mut order: Vec<usize> = (0..targets.len()).collect();
    let mut rng = rand::rngs::StdRng::seed_from_u64(opts.seed);
    for epoch in 0..opts.epochs {
        order.shuffle(&mut rng);
        let mut loss = 0f64;
        for batch in order.chunks(opts.batch.max(1) * 4) {
            let frozen: &[f32] = rows;
            let parts: Vec<(f64, Grads)> =
                batch.par_iter().map(|&i| target_grads(frozen, dim, &targets[i])).collect();
            let mut grads = Grads::new();
            for (l, g) in parts {
                loss += l;
                merge(&mut grads, g);
            }
            if opts.relational > 0.0 {
                let batch: Vec<&BagTarget> = batch.iter().map(|&i| &targets[i]).collect();
                let (l, g) = relational_grads(frozen, dim, &batch, opts.temperature, opts.relational);
                loss += l;
                merge(&mut grads, g);
            }
            adam.step(rows, dim, grads, batch.len() as f32, opts);
        }
        on_epoch(epoch + 1, loss / targets.len() as f64, rows);
    }
    Ok(())
}

fn merge(into: &mut Grads, g: Grads) {
    for (id, row) in g {
        match into.get_mut(&id) {
            Some(acc) => acc.iter_mut().zip(&row).for_each(|(a, b)| *a += b),
            None => {
                into.insert(id, row);
            }
        }
    }
}

/// Adam over the rows a batch touched (each row keeps its own step count), with a pull
/// towards the rows it started from.
struct SparseAdam {
    init: Vec<f32>,
    m: Vec<f32>,
    v: Vec<f32>,
    steps: HashMap<u32, i32>,
}

impl SparseAdam {
    fn new(rows: &[f32]) -> Self {
        SparseAdam {
            init: rows.to_vec(),
            m: vec![0.0; rows.len()],
            v: vec![0.0; rows.len()],
            steps: HashMap::new(),
        }
    }

    fn step(&mut self, rows: &mut [f32], dim: usize, grads: Grads, n: f32, opts: &FitOptions) {
        let (b1, b2, eps) = (0.9f32, 0.999f32, 1e-8f32);
        for (id, g) in grads {
            let r = id as usize;
            if (r + 1) * dim > rows.len() {
                continue;
            }
            let t = self.steps.entry(id).or_insert(0);
            *t += 1;
            let (c1, c2) = (1.0 - b1.powi(*t), 1.0 - b2.powi(*t));
            for (j, gj) in g.iter().enumerate() {
                let k = r * dim + j;
                let gk = gj / n + opts.anchor * (rows[k] - self.init[k]);
                self.m[k] = b1 * self.m[k] + (1.0 - b1) * gk;
                self.v[k] = b2 * self.v[k] + (1.0 - b2) * gk * gk;
                rows[k] -= opts.lr * (self.m[k] / c1) / ((self.v[k] / c2).sqrt() + eps);
            }
        }
    }
}

#[cfg(test)]
mod relational_tests {
    use super::*;

    fn loss_of(rows: &[f32], dim: usize, batch: &[&BagTarget]) -> f64 {
        relational_grads(rows, dim, batch, 0.5, 1.0).0
    }

    #[test]
    fn the_relational_gradient_matches_finite_differences() {
        let dim = 3;
        let mut rows: Vec<f32> = (0..5 * dim).map(|i| ((i * 37 % 11) as f32 - 5.0) / 7.0).collect();
        let t = |ids: &[(u32, f32)], target: [f32; 3]| {
            let n = target.iter().map(|x| x * x).sum::<f32>().sqrt();
            BagTarget { ids: ids.to_vec(), target: target.iter().map(|x| x / n).collect() }
        };
        let targets = [
            t(&[(0, 1.0), (1, 0.5)], [1.0, 0.2, 0.0]),
            t(&[(2, 1.0)], [0.1, 1.0, 0.3]),
            t(&[(3, 1.0), (4, 2.0)], [0.9, 0.1, 0.5]),
        ];
        let batch: Vec<&BagTarget> = targets.iter().collect();
        let (_, grads) = relational_grads(&rows, dim, &batch, 0.5, 1.0);
        for (id, d) in [(0u32, 0usize), (2, 1), (4, 2)] {
            let at = id as usize * dim + d;
            let eps = 1e-3;
            rows[at] += eps;
            let up = loss_of(&rows, dim, &batch);
            rows[at] -= 2.0 * eps;
            let down = loss_of(&rows, dim, &batch);
            rows[at] += eps;
            let numeric = (up - down) / (2.0 * eps as f64);
            let analytic = grads.get(&id).map_or(0.0, |g| g[d]) as f64;
            assert!((numeric - analytic).abs() < 1e-2, "row {id} dim {d}: {numeric} vs {analytic}");
        }
    }

    #[test]
    fn a_table_that_relates_texts_as_the_tower_does_has_no_relational_loss() {
        // Each text one token whose row is its target: the distributions agree exactly.
        let dim = 2;
        let rows = vec![1.0, 0.0, 0.0, 1.0, 0.6, 0.8];
        let targets: Vec<BagTarget> = (0..3u32)
            .map(|i| BagTarget {
                ids: vec![(i, 1.0)],
                target: rows[i as usize * 2..i as usize * 2 + 2].to_vec(),
            })
            .collect();
        let batch: Vec<&BagTarget> = targets.iter().collect();
        assert!(relational_grads(&rows, dim, &batch, 0.1, 1.0).0.abs() < 1e-9);
    }
}
