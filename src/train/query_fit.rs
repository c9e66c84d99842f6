//! Training the query adapter (README "Towers") with the CoRet loss against frozen chunk
//! vectors: gradients flow only through the adapter, so a step costs a few small matrix
//! products and an epoch over thousands of instances takes seconds on a CPU.
//!
//! Negatives are drawn per step from each instance's mined pool by a softmax over the current
//! query tower's similarities at an annealed temperature (CoRNStack's curriculum): early steps
//! see nearly random negatives, late steps the hardest ones.

use std::collections::HashMap;

use candle_core::{DType, Device, Tensor, Var, D};
use candle_nn::optim::{AdamW, Optimizer, ParamsAdamW};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

use super::query_set::{dot, QueryExample, QuerySet};
use crate::error::{Error, Result};
use crate::model::QueryAdapter;

#[derive(Clone, Debug, Serialize)]
pub struct QueryFitConfig {
    pub epochs: usize,
    /// Instances per update.
    pub batch: usize,
    /// Negatives sampled per instance and step.
    pub negatives: usize,
    pub lr: f64,
    pub weight_decay: f64,
    /// Temperature of the CoRet loss (τ).
    pub tau: f64,
    /// Sampling temperature of the negatives at the first and the last step (geometric decay).
    pub sample_temp_start: f32,
    pub sample_temp_end: f32,
    /// 0: a full matrix `W`; r > 0: `W = U·Vᵀ` of rank r (fewer parameters to fit).
    pub rank: usize,
    /// 0: train the adapter; n > 0: retrain the encoder's top n layers instead
    /// (`query_layers_fit`).
    pub layers: usize,
    /// Query tokens the layers see (the eval's `--query-max-len`).
    pub query_max_len: usize,
    pub seed: u64,
}

impl Default for QueryFitConfig {
    fn default() -> Self {
        QueryFitConfig {
            epochs: 10,
            batch: 32,
            negatives: 256,
            lr: 1e-3,
            weight_decay: 0.01,
            tau: 0.05,
            sample_temp_start: 1.0,
            sample_temp_end: 0.05,
            rank: 0,
            layers: 0,
            query_max_len: 512,
            seed: 0,
        }
    }
}

impl QueryFitConfig {
    /// The negatives' sampling temperature after `step` of `total` updates: geometric from the
    /// first to the last (the curriculum: nearly random early, hardest late).
    pub fn sample_temp(&self, step: usize, total: usize) -> f32 {
        let frac = step as f32 / total.max(1) as f32;
        self.sample_temp_start * (self.sample_temp_end / self.sample_temp_start).powf(frac)
    }
}

/// Ranking quality of a query tower over validation examples (pool = whole snapshot).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct PoolMetrics {
    pub n: usize,
    pub mrr: f64,
    pub perfect_recall_5: f64,
    pub perfect_recall_20: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct EpochLog {
    pub epoch: usize,
    pub loss: f64,
    pub sample_temp: f32,
    pub val: Option<PoolMetrics>,
    pub seconds: f64,
}

/// A query tower under training, as [`run_epochs`] drives it.
pub(crate) trait Trainee {
    type Weights;
    /// One update on the training examples `batch`, negatives sampled at `temp`; its loss.
    fn step(&mut self, batch: &[usize], temp: f32, rng: &mut StdRng) -> Result<f64>;
    /// A copy of the current weights.
    fn weights(&self) -> Result<Self::Weights>;
    /// The current weights' metrics on the validation set, if there is one.
    fn validate(&self) -> Result<Option<PoolMetrics>>;
}

/// The epoch loop every query tower shares: shuffled batches over `examples` training examples,
/// the curriculum's temperature per update, a log per epoch (epoch 0: before training), and the
/// weights of the epoch with the best validation MRR (the last epoch without validation).
/// `started` is when preparing began, so logged seconds include it.
pub(crate) fn run_epochs<T: Trainee>(
    trainee: &mut T,
    examples: usize,
    cfg: &QueryFitConfig,
    started: std::time::Instant,
    cancelled: &dyn Fn() -> bool,
    on_epoch: &mut dyn FnMut(&EpochLog),
) -> Result<(T::Weights, Vec<EpochLog>)> {
    use rand::seq::SliceRandom;
    let mut rng = StdRng::seed_from_u64(cfg.seed);
    let log0 = EpochLog {
        epoch: 0,
        loss: f64::NAN,
        sample_temp: cfg.sample_temp_start,
        val: trainee.validate()?,
        seconds: started.elapsed().as_secs_f64(),
    };
    on_epoch(&log0);
    let mut best = (log0.val.as_ref().map_or(f64::NEG_INFINITY, |m| m.mrr), trainee.weights()?);
    let mut logs = vec![log0];
    let steps_per_epoch = examples.div_ceil(cfg.batch.max(1));
    let total_steps = (steps_per_epoch * cfg.epochs).max(1);
    let mut step = 0;
    let mut order: Vec<usize> = (0..examples).collect();
    for epoch in 1..=cfg.epochs {
        order.shuffle(&mut rng);
        let (mut loss_sum, mut temp) = (0.0, cfg.sample_temp_start);
        for batch in order.chunks(cfg.batch.max(1)) {
            if cancelled() {
                return Err(Error::Cancelled);
            }
            temp = cfg.sample_temp(step, total_steps);
            loss_sum += trainee.step(batch, temp, &mut rng)?;
            step += 1;
        }
        let log = EpochLog {
            epoch,
            loss: loss_sum / steps_per_epoch as f64,
            sample_temp: temp,
            val: trainee.validate()?,
            seconds: started.elapsed().as_secs_f64(),
        };
        on_epoch(&log);
        let score = log.val.as_ref().map_or(epoch as f64, |m| m.mrr);
        if score > best.0 || log.val.is_none() {
            best = (score, trainee.weights()?);
        }
        logs.push(log);
    }
    Ok((best.1, logs))
}

fn adapter_err(e: candle_core::Error) -> Error {
    Error::context("query adapter", e)
}

/// The adapter under training: `W` (whole, or factors `U·Vᵀ`) and `b`.
struct AdapterTrainee<'a> {
    train: &'a QuerySet,
    val: Option<&'a QuerySet>,
    base: &'a str,
    cfg: &'a QueryFitConfig,
    factors: Vec<Var>,
    b: Var,
    opt: AdamW,
}

impl AdapterTrainee<'_> {
    fn weight(&self) -> candle_core::Result<Tensor> {
        match self.factors.as_slice() {
            [w] => Ok(w.as_tensor().clone()),
            [u, v] => u.matmul(&v.t()?),
            _ => candle_core::bail!("adapter factors"),
        }
    }
}

impl Trainee for AdapterTrainee<'_> {
    type Weights = QueryAdapter;

    fn step(&mut self, batch: &[usize], temp: f32, rng: &mut StdRng) -> Result<f64> {
        let current = self.weights()?;
        let examples: Vec<&QueryExample> = batch.iter().map(|&i| &self.train.examples[i]).collect();
        let now: Vec<Vec<f32>> = examples.iter().map(|e| current.apply(&e.query)).collect();
        let tensors = batch_tensors(self.train, &examples, &now, self.cfg.negatives, temp, rng, &Device::Cpu)
            .map_err(adapter_err)?;
        let loss = self
            .weight()
            .and_then(|w| batch_loss(&w, &self.b, &tensors, self.cfg.tau))
            .map_err(adapter_err)?;
        let value = loss.to_scalar::<f32>().map_err(adapter_err)? as f64;
        self.opt.backward_step(&loss).map_err(adapter_err)?;
        Ok(value)
    }

    fn weights(&self) -> Result<QueryAdapter> {
        let w = self
            .weight()
            .and_then(|w| w.flatten_all())
            .and_then(|t| t.to_vec1::<f32>())
            .map_err(adapter_err)?;
        let b = self.b.to_vec1::<f32>().map_err(adapter_err)?;
        QueryAdapter::from_parts(w, b, self.base, HashMap::new())
    }

    fn validate(&self) -> Result<Option<PoolMetrics>> {
        let Some(v) = self.val else { return Ok(None) };
        Ok(Some(pool_metrics(v, &adapted(v, &self.weights()?))))
    }
}

/// Trains an adapter on `train` (see [`run_epochs`] for epochs, logs and the epoch kept).
pub fn fit_adapter(
    train: &QuerySet,
    val: Option<&QuerySet>,
    base: &str,
    cfg: &QueryFitConfig,
    cancelled: &dyn Fn() -> bool,
    on_epoch: &mut dyn FnMut(&EpochLog),
) -> Result<(QueryAdapter, Vec<EpochLog>)> {
    let dim = train.dim;
    if train.examples.is_empty() {
        return Err(Error::invalid("no training examples"));
    }
    let started = std::time::Instant::now();
    let dev = Device::Cpu;
    let b = Var::zeros(dim, DType::F32, &dev).map_err(adapter_err)?;
    // Full rank: W itself. Low rank: U random and V zero, so W = U·Vᵀ starts at zero.
    let factors = if cfg.rank == 0 {
        vec![Var::zeros((dim, dim), DType::F32, &dev).map_err(adapter_err)?]
    } else {
        let u = Var::randn(0f32, 1.0 / (dim as f32).sqrt(), (dim, cfg.rank), &dev).map_err(adapter_err)?;
        vec![u, Var::zeros((dim, cfg.rank), DType::F32, &dev).map_err(adapter_err)?]
    };
    let params = ParamsAdamW { lr: cfg.lr, weight_decay: cfg.weight_decay, ..Default::default() };
    let mut vars = factors.clone();
    vars.push(b.clone());
    let opt = AdamW::new(vars, params).map_err(adapter_err)?;
    let mut trainee = AdapterTrainee { train, val, base, cfg, factors, b, opt };
    run_epochs(&mut trainee, train.examples.len(), cfg, started, cancelled, on_epoch)
}

/// One update's inputs: a row per (instance, gold chunk).
pub struct BatchTensors {
    /// [R, H] pretrained query vectors.
    pub queries: Tensor,
    /// [R, H] the gold chunk of each row.
    pub gold: Tensor,
    /// [R, K, H] sampled negatives; [R, K] 0 or a large negative for padding.
    pub negatives: Tensor,
    pub neg_mask: Tensor,
    /// [R] 1 / (|C*| · instances): the loss averages gold within an instance, then instances.
    pub weights: Tensor,
    /// [R] u32: the example (position in the batch) each row belongs to.
    pub example_of_row: Tensor,
}

/// The rows of one update; negatives are sampled by `current`, each example's query vector
/// under the query tower being trained.
pub fn batch_tensors(
    set: &QuerySet,
    examples: &[&QueryExample],
    current: &[Vec<f32>],
    k: usize,
    temp: f32,
    rng: &mut impl Rng,
    dev: &Device,
) -> candle_core::Result<BatchTensors> {
    let dim = set.dim;
    let k = k.max(1);
    let (mut q, mut g, mut n, mut mask, mut wts, mut of_row) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut rows = 0;
    for (e, (ex, qa)) in examples.iter().zip(current).enumerate() {
        let scores: Vec<f32> = ex.pool.iter().map(|&r| dot(qa, set.row(r))).collect();
        let picked = sample_by_softmax(&scores, k, temp, rng);
        for &gold in &ex.gold {
            q.extend_from_slice(&ex.query);
            g.extend_from_slice(set.row(gold));
            for j in 0..k {
                match picked.get(j) {
                    Some(&p) => {
                        n.extend_from_slice(set.row(ex.pool[p]));
                        mask.push(0.0f32);
                    }
                    None => {
                        n.extend(std::iter::repeat_n(0.0f32, dim));
                        mask.push(-1e4);
                    }
                }
            }
            wts.push(1.0 / (ex.gold.len() * examples.len()) as f32);
            of_row.push(e as u32);
            rows += 1;
        }
    }
    Ok(BatchTensors {
        queries: Tensor::from_vec(q, (rows, dim), dev)?,
        gold: Tensor::from_vec(g, (rows, dim), dev)?,
        negatives: Tensor::from_vec(n, (rows, k, dim), dev)?,
        neg_mask: Tensor::from_vec(mask, (rows, k), dev)?,
        weights: Tensor::from_vec(wts, rows, dev)?,
        example_of_row: Tensor::from_vec(of_row, rows, dev)?,
    })
}

/// The CoRet loss of a batch through the adapter `q' = normalize(q + q·Wᵀ + b)`.
pub fn batch_loss(w: &Tensor, b: &Tensor, t: &BatchTensors, tau: f64) -> candle_core::Result<Tensor> {
    let q = (t.queries.matmul(&w.t()?)? + &t.queries)?.broadcast_add(b)?;
    let norm = q.sqr()?.sum_keepdim(1)?.sqrt()?.maximum(1e-12)?;
    coret_loss(&q.broadcast_div(&norm)?, t, tau)
}

/// The CoRet loss of a batch given each row's unit query vector `q` [R, H]: softmax
/// cross-entropy of the gold against the sampled negatives at temperature τ, weighted.
pub fn coret_loss(q: &Tensor, t: &BatchTensors, tau: f64) -> candle_core::Result<Tensor> {
    let pos = ((q * &t.gold)?.sum_keepdim(1)? / tau)?; // [R, 1]
    let neg = (t.negatives.matmul(&q.unsqueeze(2)?)?.squeeze(2)? / tau)?; // [R, K]
    let neg = (neg + &t.neg_mask)?;
    let logits = Tensor::cat(&[&pos, &neg], 1)?;
    let max = logits.max_keepdim(D::Minus1)?.detach();
    let lse = (logits.broadcast_sub(&max)?.exp()?.sum_keepdim(D::Minus1)?.log()? + max)?;
    ((lse - pos)?.squeeze(1)? * &t.weights)?.sum_all()
}

/// `k` distinct indices drawn without replacement with probabilities ∝ exp(score / temp)
/// (Gumbel top-k). Fewer when there are fewer scores.
pub fn sample_by_softmax(scores: &[f32], k: usize, temp: f32, rng: &mut impl Rng) -> Vec<usize> {
    let temp = temp.max(1e-4);
    let mut keyed: Vec<(f32, usize)> = scores
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            let u: f32 = rng.random_range(f32::MIN_POSITIVE..1.0);
            (s / temp - (-u.ln()).ln(), i)
        })
        .collect();
    let k = k.min(keyed.len());
    if k == 0 {
        return Vec::new();
    }
    keyed.select_nth_unstable_by(k - 1, |a, b| b.0.total_cmp(&a.0));
    keyed.truncate(k);
    keyed.into_iter().map(|(_, i)| i).collect()
}

/// Each example's query vector through `adapter`.
pub fn adapted(set: &QuerySet, adapter: &QueryAdapter) -> Vec<Vec<f32>> {
    set.examples.iter().map(|e| adapter.apply(&e.query)).collect()
}

/// Each gold chunk's rank among gold and pool by the similarities of `queries` (one per
/// example); the metrics of the whole set.
pub fn pool_metrics(set: &QuerySet, queries: &[Vec<f32>]) -> PoolMetrics {
    let mut m = PoolMetrics { n: set.examples.len(), ..Default::default() };
    for (ex, q) in set.examples.iter().zip(queries) {
        let pool: Vec<f32> = ex.pool.iter().map(|&r| dot(q, set.row(r))).collect();
        let gold: Vec<f32> = ex.gold.iter().map(|&r| dot(q, set.row(r))).collect();
        let ranks: Vec<usize> = gold
            .iter()
            .map(|&s| 1 + pool.iter().filter(|&&p| p > s).count() + gold.iter().filter(|&&o| o > s).count())
            .collect();
        let best = ranks.iter().copied().min().unwrap_or(usize::MAX);
        let worst = ranks.iter().copied().max().unwrap_or(usize::MAX);
        m.mrr += 1.0 / best as f64;
        m.perfect_recall_5 += f64::from(u8::from(worst <= 5));
        m.perfect_recall_20 += f64::from(u8::from(worst <= 20));
    }
    let n = m.n.max(1) as f64;
    m.mrr /= n;
    m.perfect_recall_5 /= n;
    m.perfect_recall_20 /= n;
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::query_set::QueryExample;

    /// A set in 4 dimensions: the query leans towards e0, the gold is e1, negatives e0 and
    /// elsewhere — so the pretrained ranking puts a negative first and the adapter must learn
    /// to turn the query towards e1.
    fn toy_set() -> QuerySet {
        let rows: Vec<[f32; 4]> =
            vec![[0.0, 1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]];
        let examples = (0..8)
            .map(|i| QueryExample {
                instance_id: format!("toy-{i}"),
                text: String::new(),
                query: vec![0.8, 0.6 - 0.01 * i as f32, 0.0, 0.0],
                gold: vec![0],
                pool: vec![1, 2, 3],
            })
            .collect();
        QuerySet {
            dim: 4,
            chunk_tower: "toy".into(),
            vectors: rows.iter().flatten().copied().collect(),
            examples,
            dropped: Default::default(),
        }
    }

    #[test]
    fn adapter_steps_lower_the_loss_and_leave_the_chunk_vectors_alone() {
        let set = toy_set();
        let before = set.vectors.clone();
        let cfg =
            QueryFitConfig { epochs: 30, batch: 4, negatives: 3, lr: 0.05, ..QueryFitConfig::default() };
        let mut losses = Vec::new();
        let (adapter, logs) =
            fit_adapter(&set, Some(&set), "toy", &cfg, &|| false, &mut |e| losses.push(e.loss)).unwrap();
        assert!(losses[1] > losses[losses.len() - 1] * 1.5, "loss fell: {losses:?}");
        assert_eq!(set.vectors, before, "chunk vectors are frozen");
        let first = logs[0].val.clone().unwrap();
        let last = pool_metrics(&set, &adapted(&set, &adapter));
        assert!(first.mrr < 1.0 && last.mrr == 1.0, "gold first after training: {first:?} -> {last:?}");
        assert_eq!(adapter.base(), "toy");
    }

    #[test]
    fn a_low_rank_adapter_learns_the_toy_task_too() {
        let set = toy_set();
        let cfg = QueryFitConfig {
            epochs: 40,
            batch: 4,
            negatives: 3,
            lr: 0.05,
            rank: 2,
            ..QueryFitConfig::default()
        };
        let (adapter, _) = fit_adapter(&set, None, "toy", &cfg, &|| false, &mut |_| {}).unwrap();
        assert_eq!(pool_metrics(&set, &adapted(&set, &adapter)).mrr, 1.0);
    }

    #[test]
    fn loss_on_a_fixed_batch_falls_with_query_side_steps() {
        let set = toy_set();
        let examples: Vec<&QueryExample> = set.examples.iter().collect();
        let dev = Device::Cpu;
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let start: Vec<Vec<f32>> = examples.iter().map(|e| e.query.clone()).collect();
        let batch = batch_tensors(&set, &examples, &start, 3, 1.0, &mut rng, &dev).unwrap();
        let w = Var::zeros((4, 4), DType::F32, &dev).unwrap();
        let b = Var::zeros(4, DType::F32, &dev).unwrap();
        let mut opt =
            AdamW::new(vec![w.clone(), b.clone()], ParamsAdamW { lr: 0.05, ..Default::default() }).unwrap();
        let loss = |w: &Var, b: &Var| batch_loss(w, b, &batch, 0.05).unwrap().to_scalar::<f32>().unwrap();
        let l0 = loss(&w, &b);
        for _ in 0..20 {
            opt.backward_step(&batch_loss(&w, &b, &batch, 0.05).unwrap()).unwrap();
        }
        let l1 = loss(&w, &b);
        assert!(l1 < l0 * 0.5, "{l0} -> {l1}");
    }

    #[test]
    fn sampling_follows_the_temperature() {
        let scores: Vec<f32> = (0..100).map(|i| i as f32 / 100.0).collect();
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let mean_top = |temp: f32, rng: &mut rand::rngs::StdRng| {
            let picks: Vec<usize> =
                (0..200).flat_map(|_| sample_by_softmax(&scores, 10, temp, rng)).collect();
            picks.iter().sum::<usize>() as f64 / picks.len() as f64
        };
        let cold = mean_top(0.001, &mut rng);
        let warm = mean_top(0.05, &mut rng);
        let hot = mean_top(100.0, &mut rng);
        assert!(cold > 94.0, "near zero temperature takes the 10 hardest: {cold}");
        assert!(warm < cold && warm > hot, "{cold} > {warm} > {hot}");
        assert!((hot - 49.5).abs() < 5.0, "a high temperature is nearly uniform: {hot}");
        let distinct: std::collections::HashSet<usize> =
            sample_by_softmax(&scores, 50, 1.0, &mut rng).into_iter().collect();
        assert_eq!(distinct.len(), 50, "without replacement");
        assert_eq!(sample_by_softmax(&scores[..3], 10, 1.0, &mut rng).len(), 3);
    }
}
