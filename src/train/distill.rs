//! A smaller student distilled from the chunk tower (issue 82), by the static table's recipe:
//! the tower's own vectors of code and prose texts (the harvest, `--static-harvest`) are the
//! targets; the loss is `1 − cos` to each target plus an in-batch relational term (the KL
//! divergence from the tower's similarity distribution over the batch to the student's), so the
//! student learns how texts stand to one another, which is what a ranking reads. Every weight
//! learns; the student starts from a subset of the tower's layers ([`TrainModel::keep_layers`]).
//!
//! Checkpoints are the trainer's (`OUTPUT/checkpoint`, [`checkpoint::save`]); the data order is
//! a function of (seed, epoch), so the step count is all a resumed run needs.

use std::io::Write;
use std::path::PathBuf;

use candle_core::{DType, Tensor};
use serde::Serialize;

use super::checkpoint::{self, CheckpointState, Plan};
use super::optim::{clip_grad_norm, AdamW, AdamWParams, Schedule};
use super::step::{embed_bucketed, grads_by_name};
use super::trainer::epoch_order;
use super::weights::TrainModel;
use crate::error::{Error, Result};
use crate::model::TokenizedInput;

/// One text as the tower read it, and the tower's unit vector of it.
#[derive(Clone)]
pub struct Pair {
    pub input: TokenizedInput,
    pub target: Vec<f32>,
}

#[derive(Clone, Debug)]
pub struct DistillConfig {
    pub output: PathBuf,
    pub batch: usize,
    pub steps: usize,
    pub warmup: usize,
    pub lr: f64,
    /// The relational term's weight (0: cosine alone).
    pub relational: f64,
    /// The temperature of both similarity distributions.
    pub tau: f64,
    pub clip: f64,
    pub seed: u64,
    /// Updates between checkpoints (each with a validation).
    pub every: usize,
    /// blake3 of what the pairs are (their sources, in order): a resumed run must see the same.
    pub digest: String,
}

#[derive(Clone, Debug, Serialize)]
#[serde(tag = "event", rename_all = "lowercase")]
pub enum DistillEvent {
    Step { step: usize, loss: f64, cosine: f64, lr: f64, grad_norm: f64, seconds: f64 },
    Val { step: usize, cosine: f64, lowest: f64 },
    Checkpoint { step: usize, path: PathBuf },
}

const LOG_FILE: &str = "distill-log.jsonl";

/// The loss of one batch, `mean(1 − cos(student, tower))` + `relational ×` the mean KL
/// divergence from the tower's in-batch similarity distribution (each text against the batch's
/// others, softmax of cosine / τ) to the student's; and the batch's mean cosine.
pub fn distill_loss(
    emb: &Tensor,
    targets: &Tensor,
    tau: f64,
    relational: f64,
) -> candle_core::Result<(Tensor, f64)> {
    let b = emb.dim(0)?;
    let cos = (emb * targets)?.sum(1)?;
    let mean_cos = cos.mean_all()?.to_scalar::<f32>()? as f64;
    let mut loss = cos.neg()?.mean_all()?.affine(1.0, 1.0)?;
    if relational > 0.0 && b > 1 {
        // Each text's own similarity is taken out of both distributions.
        let mask = (Tensor::eye(b, DType::F32, emb.device())? * -1e4)?;
        let logits = |v: &Tensor| (v.matmul(&v.t()?)? / tau)?.add(&mask);
        let log_q = candle_nn::ops::log_softmax(&logits(emb)?, 1)?;
        let log_p = candle_nn::ops::log_softmax(&logits(targets)?, 1)?;
        let kl = (log_p.exp()? * (log_p - log_q)?)?.sum_all()?;
        loss = (loss + (kl * (relational / b as f64))?)?;
    }
    Ok((loss, mean_cos))
}

/// The mean and lowest cosine between the student's vectors of `pairs` and their targets.
pub fn cosine_to_targets(model: &TrainModel, pairs: &[Pair], batch: usize) -> Result<(f64, f64)> {
    let (mut sum, mut lowest) = (0f64, f64::MAX);
    for part in pairs.chunks(batch.max(1)) {
        let emb = embed_bucketed(model, &part.iter().map(|p| &p.input).collect::<Vec<_>>())?;
        let rows = emb.detach().to_vec2::<f32>().map_err(terr)?;
        for (row, p) in rows.iter().zip(part) {
            let c: f32 = row.iter().zip(&p.target).map(|(a, b)| a * b).sum();
            sum += c as f64;
            lowest = lowest.min(c as f64);
        }
    }
    Ok((sum / pairs.len().max(1) as f64, if pairs.is_empty() { 0.0 } else { lowest }))
}

fn terr(e: candle_core::Error) -> Error {
    Error::context("distillation step", e)
}

fn plan_of(cfg: &DistillConfig, n: usize) -> Plan {
    Plan {
        examples: n,
        examples_digest: cfg.digest.clone(),
        batch: cfg.batch,
        accum: 1,
        epochs: (cfg.steps * cfg.batch).div_ceil(n.max(1)),
        total_steps: cfg.steps,
        warmup: cfg.warmup,
        seed: cfg.seed,
        negatives: 0,
        lr: cfg.lr,
        temperature: cfg.tau,
        train_layers: 0,
        shared_pool: false,
        lora_rank: 0,
        rerank_pairs: None,
    }
}

/// The pairs of update `step` (0-based): the `step`-th run of `batch` through the shuffled
/// epochs, so a resumed run continues exactly where the checkpoint stopped.
fn batch_of(n: usize, batch: usize, seed: u64, step: usize) -> Vec<usize> {
    let start = step * batch;
    let (mut epoch, mut order) = (start / n, epoch_order(n, seed, start / n));
    (start..start + batch)
        .map(|at| {
            if at / n != epoch {
                epoch = at / n;
                order = epoch_order(n, seed, epoch);
            }
            order[at % n]
        })
        .collect()
}

/// Distils `model` towards `pairs` for `cfg.steps` updates from `resume` (a checkpoint's state
/// and optimizer moments), validating on `val` at every checkpoint and at the end; writes the
/// student into `cfg.output/student` when done. `on_event` sees every log line.
pub fn distill(
    model: &TrainModel,
    pairs: &[Pair],
    val: &[Pair],
    cfg: &DistillConfig,
    resume: Option<(CheckpointState, std::collections::HashMap<String, Tensor>)>,
    on_event: &mut dyn FnMut(&DistillEvent),
) -> Result<()> {
    if pairs.len() < 2 {
        return Err(Error::NoExamples);
    }
    let plan = plan_of(cfg, pairs.len());
    let vars = model.varmap.data().lock().unwrap_or_else(|p| p.into_inner()).clone();
    let mut opt = AdamW::new(vars, AdamWParams::default()).map_err(terr)?;
    let mut first = 0;
    if let Some((state, moments)) = resume {
        if let Some(diff) = checkpoint::plan_mismatch(&state.plan, &plan) {
            return Err(Error::invalid(format!("--resume: the run differs from its checkpoint ({diff})")));
        }
        opt.load_state(&moments, state.adam_t).map_err(terr)?;
        first = state.step;
    }
    let log_path = cfg.output.join(LOG_FILE);
    let mut log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .map_err(|e| Error::io(&log_path, e))?;
    let mut emit = |event: DistillEvent| -> Result<()> {
        on_event(&event);
        let line = serde_json::to_string(&event).map_err(|e| Error::context(LOG_FILE, e))?;
        writeln!(log, "{line}").map_err(|e| Error::io(&log_path, e))
    };
    let schedule = Schedule { peak: cfg.lr, warmup: cfg.warmup, total: cfg.steps };
    let validate = |step: usize, emit: &mut dyn FnMut(DistillEvent) -> Result<()>| -> Result<()> {
        if val.is_empty() {
            return Ok(());
        }
        let (cosine, lowest) = cosine_to_targets(model, val, cfg.batch)?;
        emit(DistillEvent::Val { step, cosine, lowest })
    };
    for step in first..cfg.steps {
        let started = std::time::Instant::now();
        let picked = batch_of(pairs.len(), cfg.batch, cfg.seed, step);
        let inputs: Vec<&TokenizedInput> = picked.iter().map(|&i| &pairs[i].input).collect();
        let emb = embed_bucketed(model, &inputs)?;
        let flat: Vec<f32> = picked.iter().flat_map(|&i| pairs[i].target.iter().copied()).collect();
        let targets =
            Tensor::from_vec(flat, (picked.len(), pairs[0].target.len()), emb.device()).map_err(terr)?;
        let (loss, cosine) = distill_loss(&emb, &targets, cfg.tau, cfg.relational).map_err(terr)?;
        let value = loss.to_scalar::<f32>().map_err(terr)? as f64;
        let mut grads = grads_by_name(model, &loss.backward().map_err(terr)?)?;
        let grad_norm = clip_grad_norm(&mut grads, cfg.clip).map_err(terr)?;
        let lr = schedule.lr(step);
        opt.step(&grads, lr).map_err(terr)?;
        let seconds = started.elapsed().as_secs_f64();
        emit(DistillEvent::Step { step: step + 1, loss: value, cosine, lr, grad_norm, seconds })?;
        let done = step + 1;
        if done % cfg.every.max(1) == 0 || done == cfg.steps {
            validate(done, &mut emit)?;
            let state = CheckpointState { step: done, adam_t: opt.t, plan: plan.clone() };
            let path = checkpoint::save(&cfg.output, model, &opt.state(), &state)?;
            emit(DistillEvent::Checkpoint { step: done, path })?;
        }
    }
    model.save(&cfg.output.join("student"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit_rows(rows: &[[f32; 3]]) -> Tensor {
        let flat: Vec<f32> = rows
            .iter()
            .flat_map(|r| {
                let n = r.iter().map(|x| x * x).sum::<f32>().sqrt();
                r.iter().map(move |x| x / n)
            })
            .collect();
        Tensor::from_vec(flat, (rows.len(), 3), &candle_core::Device::Cpu).unwrap()
    }

    #[test]
    fn the_loss_is_zero_when_the_student_matches_the_tower_and_grows_as_it_drifts() {
        let tower = unit_rows(&[[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [0.0, 0.0, 1.0]]);
        let (same, cos) = distill_loss(&tower, &tower, 0.05, 1.0).unwrap();
        assert!(same.to_scalar::<f32>().unwrap().abs() < 1e-5);
        assert!((cos - 1.0).abs() < 1e-6);
        // Each vector close to its target, but the first two now nearer each other than the
        // tower has them: the relational term sees what cosine alone barely does.
        let drifted = unit_rows(&[[1.0, 0.1, 0.0], [0.8, 0.6, 0.0], [0.0, 0.1, 1.0]]);
        let (cos_only, _) = distill_loss(&drifted, &tower, 0.05, 0.0).unwrap();
        let (both, _) = distill_loss(&drifted, &tower, 0.05, 1.0).unwrap();
        let (cos_only, both) = (cos_only.to_scalar::<f32>().unwrap(), both.to_scalar::<f32>().unwrap());
        assert!(cos_only > 0.0 && both > cos_only + 0.01, "cosine {cos_only}, with relational {both}");
    }

    #[test]
    fn batches_run_through_shuffled_epochs_without_repeating_within_one() {
        let n = 10;
        let all: Vec<usize> = (0..5).flat_map(|s| batch_of(n, 4, 7, s)).collect();
        let mut first: Vec<usize> = all[..n].to_vec();
        first.sort();
        assert_eq!(first, (0..n).collect::<Vec<_>>(), "each pair once in the first epoch");
        assert_eq!(batch_of(n, 4, 7, 3), all[12..16].to_vec(), "a step's batch is the same when resumed");
    }
}

#[cfg(test)]
mod student_tests {
    use super::*;
    use crate::testkit::{write_seeded_bert, write_tiny_bert};
    use candle_core::Device;

    const TEXTS: [&str; 12] = [
        "def load(path): return open(path).read()",
        "class Config: pass",
        "fix the cache when the file is missing",
        "def save(data, path): write(path, data)",
        "parse the header of a request",
        "return the first item or none",
        "def mean(xs): return sum(xs) / len(xs)",
        "raise an error on an empty list",
        "struct Point { x: i32, y: i32 }",
        "fn main() { println!(\"hi\") }",
        "the session cookie expires too early",
        "def close(self): self.file.close()",
    ];

    fn embed_rows(model: &TrainModel, texts: &[&str]) -> Vec<Vec<f32>> {
        let inputs: Vec<TokenizedInput> =
            texts.iter().map(|t| model.tokenizer.query(t, 64).unwrap()).collect();
        let emb = embed_bucketed(model, &inputs.iter().collect::<Vec<_>>()).unwrap();
        emb.to_vec2::<f32>().unwrap()
    }

    #[test]
    fn a_student_keeps_the_chosen_layers_and_saves_as_a_smaller_model() {
        let dir = tempfile::tempdir().unwrap();
        write_seeded_bert(dir.path(), &[], 11);
        let full = TrainModel::load(dir.path(), &Device::Cpu).unwrap();
        let mut same = TrainModel::load(dir.path(), &Device::Cpu).unwrap();
        same.keep_layers(&[0, 1]).unwrap();
        assert_eq!(embed_rows(&full, &TEXTS), embed_rows(&same, &TEXTS), "all layers kept: the same model");

        let mut top = TrainModel::load(dir.path(), &Device::Cpu).unwrap();
        top.keep_layers(&[1]).unwrap();
        assert_eq!(top.bert.num_layers(), 1);
        assert_ne!(embed_rows(&full, &TEXTS), embed_rows(&top, &TEXTS));
        let saved = dir.path().join("student");
        top.save(&saved).unwrap();
        let config: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(saved.join("config.json")).unwrap()).unwrap();
        assert_eq!(config["num_hidden_layers"], 1);
        let back = TrainModel::load(&saved, &Device::Cpu).unwrap();
        assert_eq!(embed_rows(&back, &TEXTS), embed_rows(&top, &TEXTS), "the saved student embeds alike");

        let err = TrainModel::load(dir.path(), &Device::Cpu).unwrap().keep_layers(&[0, 2]).unwrap_err();
        assert!(err.to_string().contains("layers 0..2"), "{err}");
    }

    #[test]
    fn distillation_brings_the_student_towards_the_towers_vectors_and_resumes_where_it_stopped() {
        let tmp = tempfile::tempdir().unwrap();
        let (tower_dir, student_dir) = (tmp.path().join("tower"), tmp.path().join("init"));
        write_seeded_bert(&tower_dir, &[], 3);
        write_tiny_bert(&student_dir, &[]);
        let tower = TrainModel::load(&tower_dir, &Device::Cpu).unwrap();
        let mut student = TrainModel::load(&student_dir, &Device::Cpu).unwrap();
        student.keep_layers(&[1]).unwrap();
        let targets = embed_rows(&tower, &TEXTS);
        let pairs: Vec<Pair> = TEXTS
            .iter()
            .zip(targets)
            .map(|(t, target)| Pair { input: student.tokenizer.query(t, 64).unwrap(), target })
            .collect();
        let (before, _) = cosine_to_targets(&student, &pairs, 4).unwrap();
        let out = tmp.path().join("out");
        std::fs::create_dir_all(&out).unwrap();
        let cfg = DistillConfig {
            output: out.clone(),
            batch: 4,
            steps: 60,
            warmup: 5,
            lr: 3e-3,
            relational: 1.0,
            tau: 0.05,
            clip: 1.0,
            seed: 1,
            every: 30,
            digest: "test".into(),
        };
        let mut events = Vec::new();
        distill(&student, &pairs, &pairs[..4], &cfg, None, &mut |e| events.push(format!("{e:?}"))).unwrap();
        let (after, _) = cosine_to_targets(&student, &pairs, 4).unwrap();
        assert!(after > before + 0.1, "cosine to the tower {before:.3} → {after:.3}");
        assert_eq!(events.iter().filter(|e| e.starts_with("Val")).count(), 2);
        let saved = TrainModel::load(&out.join("student"), &Device::Cpu).unwrap();
        assert_eq!(embed_rows(&saved, &TEXTS), embed_rows(&student, &TEXTS));

        // The checkpoint at 60 resumes a run of 60 with nothing left to do; another plan is refused.
        let ck = checkpoint::load(&out, &Device::Cpu).unwrap();
        assert_eq!(ck.state.step, 60);
        let mut quiet = |_: &DistillEvent| {};
        let longer = DistillConfig { lr: 1e-3, ..cfg.clone() };
        let err = distill(
            &ck.model,
            &pairs,
            &[],
            &longer,
            Some((ck.state.clone(), ck.optimizer.clone())),
            &mut quiet,
        )
        .unwrap_err();
        assert!(err.to_string().contains("lr"), "{err}");
    }
}
