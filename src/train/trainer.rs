//! The training loop: epochs over shuffled examples, `batch × accum` instances per update,
//! validation and checkpoints on a schedule, a JSON-lines log in `OUTPUT/train-log.jsonl`.

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use candle_core::Tensor;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::Serialize;

use super::checkpoint::{self, plan_mismatch, CheckpointState, Plan};
use super::optim::{clip_grad_norm, AdamW, AdamWParams, Schedule};
use super::shard::{Candidate, Example};
use super::step::{accumulate_grads, Item, PoolBatch};
use super::validate::{validate, ValResult, ValSet};
use super::weights::TrainModel;
use crate::error::{Error, Result};
use crate::model::weights::blake3_u64;
use crate::model::EncoderOptions;
use crate::progress::Progress;

pub const LOG_FILE: &str = "train-log.jsonl";

#[derive(Clone, Debug)]
pub struct TrainConfig {
    pub output: PathBuf,
    pub epochs: usize,
    /// Stop after this many updates (the schedule then spans them).
    pub max_steps: Option<usize>,
    /// Negatives per instance per step, drawn from the example's pool.
    pub negatives: usize,
    pub lr: f64,
    /// Warm-up updates; `None`: a tenth of the run.
    pub warmup: Option<usize>,
    pub weight_decay: f64,
    /// Global gradient-norm clip (0: off).
    pub clip_norm: f64,
    /// Instances per micro-batch (embedded together).
    pub batch: usize,
    /// Micro-batches of one repository's instances sharing one pool of negatives (DESIGN.md
    /// "Training on a CPU"); false: random micro-batches, each instance its own negatives.
    pub shared_pool: bool,
    /// Micro-batches per update.
    pub accum: usize,
    pub temperature: f64,
    /// Most sequences per differentiable forward pass (see `step`).
    pub grad_slice: usize,
    pub seed: u64,
    /// Validate every K updates; `None`: at the end of each epoch.
    pub val_every: Option<usize>,
    pub ks: Vec<usize>,
    /// Encoder settings of the validation snapshots.
    pub encoder: EncoderOptions,
}

#[derive(Clone, Debug, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum LogEvent {
    Start { examples: usize, steps_per_epoch: usize, total_steps: usize, warmup: usize, resumed_at: usize },
    Step { step: usize, epoch: usize, loss: f64, lr: f64, grad_norm: f64, instances: usize, seconds: f64 },
    Val { step: usize, epoch: usize, result: ValResult },
    Checkpoint { step: usize, path: PathBuf },
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct TrainSummary {
    pub steps: usize,
    /// Mean loss of each update, in order (this run only, not before a resume).
    pub losses: Vec<f64>,
    pub validations: Vec<(usize, ValResult)>,
    pub seconds: f64,
}

/// Where a resumed run starts.
pub struct Resume {
    pub state: CheckpointState,
    pub optimizer: HashMap<String, Tensor>,
}

/// The order of examples in `epoch`: a shuffle seeded by (seed, epoch).
pub fn epoch_order(n: usize, seed: u64, epoch: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    order.shuffle(&mut StdRng::seed_from_u64(seed ^ (epoch as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)));
    order
}

/// The micro-batches of `epoch`, as example indices. Shared pools: each micro-batch is up to
/// `batch` consecutive examples of one repository (the input lists each repository's newest
/// first, so their snapshots are close and share most chunks), the micro-batches shuffled.
/// Otherwise: the shuffled examples cut into micro-batches.
pub fn epoch_batches(
    examples: &[Example],
    batch: usize,
    shared_pool: bool,
    seed: u64,
    epoch: usize,
) -> Vec<Vec<usize>> {
    let batch = batch.max(1);
    if !shared_pool {
        return epoch_order(examples.len(), seed, epoch).chunks(batch).map(<[usize]>::to_vec).collect();
    }
    let mut by_repo: Vec<(&str, Vec<usize>)> = Vec::new();
    for (i, e) in examples.iter().enumerate() {
        match by_repo.iter_mut().find(|(r, _)| *r == e.repo) {
            Some((_, list)) => list.push(i),
            None => by_repo.push((&e.repo, vec![i])),
        }
    }
    let mut batches: Vec<Vec<usize>> =
        by_repo.iter().flat_map(|(_, list)| list.chunks(batch).map(<[usize]>::to_vec)).collect();
    let order = epoch_order(batches.len(), seed, epoch);
    order.into_iter().map(|k| std::mem::take(&mut batches[k])).collect()
}

/// blake3 of the examples' instance ids in order: a resumed run must see the same examples.
pub fn examples_digest<'a>(examples: impl IntoIterator<Item = &'a Example>) -> String {
    let mut h = blake3::Hasher::new();
    for e in examples {
        h.update(e.instance_id.as_bytes());
        h.update(&[0]);
    }
    h.finalize().to_hex()[..16].to_string()
}

fn plan_of(examples: &[Example], cfg: &TrainConfig, model: &TrainModel) -> Plan {
    let micro = epoch_batches(examples, cfg.batch, cfg.shared_pool, cfg.seed, 0).len();
    let steps_per_epoch = micro.div_ceil(cfg.accum.max(1));
    let full = steps_per_epoch * cfg.epochs.max(1);
    let total_steps = cfg.max_steps.map_or(full, |m| m.min(full)).max(1);
    Plan {
        examples: examples.len(),
        examples_digest: examples_digest(examples),
        batch: cfg.batch.max(1),
        accum: cfg.accum.max(1),
        epochs: cfg.epochs.max(1),
        total_steps,
        warmup: cfg.warmup.unwrap_or(total_steps / 10).min(total_steps),
        seed: cfg.seed,
        negatives: cfg.negatives,
        lr: cfg.lr,
        temperature: cfg.temperature,
        train_layers: model.trained_top_layers(),
        shared_pool: cfg.shared_pool,
        lora_rank: model.lora_rank(),
        rerank_pairs: None,
    }
}

/// The sequences of example `idx` for `epoch`: its own pool of negatives, subsampled to
/// `negatives` with a seed of (seed, epoch, instance).
fn item_of(ex: &Example, idx: usize, plan: &Plan, epoch: usize) -> Item {
    let pool = &ex.negatives;
    let picked: Vec<usize> = if pool.len() <= plan.negatives {
        (0..pool.len()).collect()
    } else {
        let seed = plan.seed ^ blake3_u64(&format!("{epoch}/{idx}/{}", ex.instance_id));
        rand::seq::index::sample(&mut StdRng::seed_from_u64(seed), pool.len(), plan.negatives).into_vec()
    };
    Item {
        query: ex.query.to_tokenized(),
        positives: ex.positives.iter().map(|c| c.seq.to_tokenized()).collect(),
        negatives: picked.iter().map(|&i| pool[i].seq.to_tokenized()).collect(),
        positive_keys: ex.positives.iter().map(Candidate::key).collect(),
        negative_keys: picked.iter().map(|&i| pool[i].key()).collect(),
    }
}

/// Sends each event to the caller and appends it to `OUTPUT/train-log.jsonl`.
struct Reporter<'a> {
    file: std::fs::File,
    path: PathBuf,
    on_event: &'a mut dyn FnMut(&LogEvent),
}

impl Reporter<'_> {
    fn emit(&mut self, event: LogEvent) -> Result<()> {
        (self.on_event)(&event);
        let line = serde_json::to_string(&event).map_err(|e| Error::context(LOG_FILE, e))?;
        writeln!(self.file, "{line}").map_err(|e| Error::io(&self.path, e))
    }
}

/// What the loop's helpers share.
struct Run<'a> {
    model: &'a TrainModel,
    cfg: &'a TrainConfig,
    plan: Plan,
    val: Option<&'a ValSet>,
    steps_per_epoch: usize,
}

impl Run<'_> {
    fn validate(&self, rep: &mut Reporter, summary: &mut TrainSummary, step: usize) -> Result<()> {
        let Some(set) = self.val else { return Ok(()) };
        let encoder = self.model.to_encoder(self.cfg.encoder.clone(), format!("train-step{step}"))?;
        let result = validate(Arc::new(encoder), set, &self.cfg.ks)?;
        summary.validations.push((step, result.clone()));
        rep.emit(LogEvent::Val { step, epoch: step / self.steps_per_epoch, result })
    }

    fn checkpoint(&self, rep: &mut Reporter, step: usize, opt: &AdamW) -> Result<()> {
        let state = CheckpointState { step, adam_t: opt.t, plan: self.plan.clone() };
        let path = checkpoint::save(&self.cfg.output, self.model, &opt.state(), &state)?;
        rep.emit(LogEvent::Checkpoint { step, path })
    }
}

/// Trains `model` in place on `examples`; writes checkpoints, the log and, at the end, the
/// model itself into `cfg.output`. Stops with [`Error::Cancelled`] (after a checkpoint) once
/// `progress.cancelled()`. `on_event` sees every log event (e.g. to print it).
pub fn train(
    model: &TrainModel,
    examples: &[Example],
    val: Option<&ValSet>,
    cfg: &TrainConfig,
    resume: Option<Resume>,
    progress: &dyn Progress,
    on_event: &mut dyn FnMut(&LogEvent),
) -> Result<TrainSummary> {
    if examples.is_empty() {
        return Err(Error::NoExamples);
    }
    let started = Instant::now();
    std::fs::create_dir_all(&cfg.output).map_err(|e| Error::io(&cfg.output, e))?;
    let plan = plan_of(examples, cfg, model);
    let vars = model.varmap.data().lock().unwrap_or_else(|p| p.into_inner()).clone();
    let params = AdamWParams { weight_decay: cfg.weight_decay, ..AdamWParams::default() };
    let mut opt = AdamW::new(vars, params).map_err(|e| Error::context("optimizer", e))?;
    let mut step = 0;
    if let Some(r) = resume {
        if let Some(diff) = plan_mismatch(&r.state.plan, &plan) {
            return Err(Error::ResumeMismatch(diff));
        }
        opt.load_state(&r.optimizer, r.state.adam_t).map_err(|e| Error::context("optimizer state", e))?;
        step = r.state.step;
    }
    let schedule = Schedule { peak: plan.lr, warmup: plan.warmup, total: plan.total_steps };
    let steps_per_epoch =
        epoch_batches(examples, plan.batch, plan.shared_pool, plan.seed, 0).len().div_ceil(plan.accum);
    let path = cfg.output.join(LOG_FILE);
    let file = OpenOptions::new().create(true).append(true).open(&path).map_err(|e| Error::io(&path, e))?;
    let mut rep = Reporter { file, path, on_event };
    rep.emit(LogEvent::Start {
        examples: examples.len(),
        steps_per_epoch,
        total_steps: plan.total_steps,
        warmup: plan.warmup,
        resumed_at: step,
    })?;
    let run = Run { model, cfg, plan, val, steps_per_epoch };
    let plan = &run.plan;
    let mut summary = TrainSummary::default();
    if step == 0 {
        run.validate(&mut rep, &mut summary, 0)?;
    }
    let mut batches = (usize::MAX, Vec::new());
    while step < plan.total_steps {
        let epoch = step / steps_per_epoch;
        if batches.0 != epoch {
            batches = (epoch, epoch_batches(examples, plan.batch, plan.shared_pool, plan.seed, epoch));
        }
        let at = (step % steps_per_epoch) * plan.accum;
        let chosen = &batches.1[at..(at + plan.accum).min(batches.1.len())];
        let instances: usize = chosen.iter().map(Vec::len).sum();
        let t = Instant::now();
        let mut grads = HashMap::new();
        let mut losses = Vec::new();
        let weight = 1.0 / instances.max(1) as f64;
        for micro in chosen {
            let items: Vec<Item> = micro.iter().map(|&i| item_of(&examples[i], i, plan, epoch)).collect();
            let batch =
                if plan.shared_pool { PoolBatch::shared(&items) } else { PoolBatch::per_instance(&items) };
            losses.extend(accumulate_grads(
                model,
                &batch,
                plan.temperature,
                weight,
                cfg.grad_slice,
                &mut grads,
            )?);
        }
        let grad_norm =
            clip_grad_norm(&mut grads, cfg.clip_norm).map_err(|e| Error::context("gradients", e))?;
        let lr = schedule.lr(step);
        opt.step(&grads, lr).map_err(|e| Error::context("optimizer", e))?;
        step += 1;
        let loss = losses.iter().map(|&l| l as f64).sum::<f64>() / losses.len().max(1) as f64;
        summary.losses.push(loss);
        let seconds = t.elapsed().as_secs_f64();
        rep.emit(LogEvent::Step { step, epoch, loss, lr, grad_norm, instances, seconds })?;
        let last = step == plan.total_steps;
        let epoch_end = step % steps_per_epoch == 0;
        let val_due = match cfg.val_every {
            Some(k) => k > 0 && step % k == 0,
            None => epoch_end,
        };
        if val_due || last {
            run.validate(&mut rep, &mut summary, step)?;
        }
        let stop = progress.cancelled();
        if val_due || epoch_end || last || stop {
            run.checkpoint(&mut rep, step, &opt)?;
        }
        if stop && !last {
            return Err(Error::Cancelled);
        }
    }
    model.save(&cfg.output)?;
    summary.steps = step;
    summary.seconds = started.elapsed().as_secs_f64();
    Ok(summary)
}
