//! `--train-reranker`: the cross-encoder of [`crate::rerank`] trained on prepared shards.
//!
//! Each example is one group: the issue paired with each of its gold chunks and with its
//! hardest negatives (the shard keeps BM25's best-ranked non-gold chunks first, then random
//! ones); the loss is listwise, `log Σ_all e^s − log Σ_gold e^s`, which is the softmax
//! cross-entropy with every gold counted right. The encoder learns through LoRA adapters that
//! start from the shipped CoRet adapters (what already knows code and issues), the head from
//! zero (every pair scores alike at first, so the first updates teach the head and the adapters
//! follow). Updates, checkpoints, `--resume` and the log are the encoder training's
//! ([`super::trainer`]): the head travels in the checkpoint's optimizer file as
//! [`HEAD_TENSOR`].

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use candle_core::{DType, Tensor, Var, D};

use super::checkpoint::{self, plan_mismatch, CheckpointState, Plan};
use super::optim::{clip_grad_norm, AdamW, AdamWParams, Schedule};
use super::shard::Example;
use super::trainer::{epoch_order, examples_digest, LogEvent, Resume, LOG_FILE};
use super::weights::TrainModel;
use crate::error::{Error, Result};
use crate::model::TokenizedInput;
use crate::progress::Progress;
use crate::rerank::{pair, RerankSpec, HEAD_TENSOR, SCORE_SCALE};

#[derive(Clone, Debug)]
pub struct RerankTrainConfig {
    pub output: PathBuf,
    pub epochs: usize,
    pub max_steps: Option<usize>,
    /// Examples (groups) per update.
    pub batch: usize,
    /// Pairs per group: the golds first, then negatives up to this count.
    pub group: usize,
    pub lr: f64,
    /// Warm-up updates; `None`: a tenth of the run.
    pub warmup: Option<usize>,
    pub weight_decay: f64,
    pub clip_norm: f64,
    pub seed: u64,
    /// A checkpoint every this many updates (and at the end).
    pub checkpoint_every: usize,
    pub spec: RerankSpec,
}

#[derive(Clone, Debug, Default)]
pub struct RerankSummary {
    pub steps: usize,
    pub losses: Vec<f64>,
    pub seconds: f64,
    /// Stopped by `progress.cancelled()` before the last update (after a checkpoint).
    pub cancelled: bool,
}

/// The pairs of one example: its golds (at most `group - 1`, so a negative always stays),
/// then its first negatives; and how many golds lead.
pub fn group_pairs(ex: &Example, group: usize, spec: &RerankSpec) -> (Vec<TokenizedInput>, usize) {
    let golds = ex.positives.len().min(group.saturating_sub(1).max(1));
    let negatives = group.saturating_sub(golds);
    let pairs = ex.positives[..golds]
        .iter()
        .chain(ex.negatives.iter().take(negatives))
        .map(|c| pair::join(&ex.query.ids, &c.seq.ids, spec.max_len, spec.query_len))
        .collect();
    (pairs, golds)
}

/// `log Σ e^s − log Σ_{first golds} e^s` of a group's scores [n].
pub fn listwise_loss(scores: &Tensor, golds: usize) -> candle_core::Result<Tensor> {
    let all = scores.log_sum_exp(D::Minus1)?;
    let gold = scores.narrow(0, 0, golds)?.log_sum_exp(D::Minus1)?;
    all - gold
}

/// The group's scores [n]: pooled pair vectors times the head, scaled ([`SCORE_SCALE`]).
fn scores(model: &TrainModel, head: &Var, pairs: &[TokenizedInput]) -> Result<Tensor> {
    let refs: Vec<&TokenizedInput> = pairs.iter().collect();
    let pooled = model.embed(&refs)?;
    pooled
        .matmul(&head.as_tensor().unsqueeze(1).map_err(|e| Error::context("reranker head", e))?)
        .and_then(|s| s.squeeze(1)? * SCORE_SCALE as f64)
        .map_err(|e| Error::context("reranker scores", e))
}

fn plan_of(examples: &[Example], cfg: &RerankTrainConfig, model: &TrainModel) -> Plan {
    let steps_per_epoch = examples.len().div_ceil(cfg.batch);
    let total = (steps_per_epoch * cfg.epochs).min(cfg.max_steps.unwrap_or(usize::MAX)).max(1);
    Plan {
        examples: examples.len(),
        examples_digest: examples_digest(examples),
        batch: cfg.batch,
        accum: 1,
        epochs: cfg.epochs,
        total_steps: total,
        warmup: cfg.warmup.unwrap_or(total / 10).min(total),
        seed: cfg.seed,
        negatives: cfg.group,
        lr: cfg.lr,
        temperature: 0.0,
        train_layers: 0,
        shared_pool: false,
        lora_rank: model.lora_rank(),
        // The pair layout fixes what the ids mean: a resume must keep it.
        rerank_pairs: Some((cfg.spec.max_len, cfg.spec.query_len)),
    }
}

/// Trains `model`'s adapters and `head` ([hidden], f32) in place; checkpoints into
/// `cfg.output` every `checkpoint_every` updates, at the end and once `progress.cancelled()`
/// (then stops early, `cancelled` set: what was learned so far is the caller's to keep).
pub fn train_reranker(
    model: &TrainModel,
    head: &Var,
    examples: &[Example],
    cfg: &RerankTrainConfig,
    resume: Option<Resume>,
    progress: &dyn Progress,
    on_event: &mut dyn FnMut(&LogEvent),
) -> Result<RerankSummary> {
    let examples: Vec<&Example> =
        examples.iter().filter(|e| !e.positives.is_empty() && !e.negatives.is_empty()).collect();
    if examples.is_empty() {
        return Err(Error::NoExamples);
    }
    if model.lora_rank() == 0 {
        return Err(Error::invalid("the reranker trains LoRA adapters: give --lora-rank"));
    }
    let started = Instant::now();
    std::fs::create_dir_all(&cfg.output).map_err(|e| Error::io(&cfg.output, e))?;
    let owned: Vec<Example> = examples.iter().map(|e| (*e).clone()).collect();
    let plan = plan_of(&owned, cfg, model);
    let mut vars = model.varmap.data().lock().unwrap_or_else(|p| p.into_inner()).clone();
    vars.insert(HEAD_TENSOR.to_string(), head.clone());
    let params = AdamWParams { weight_decay: cfg.weight_decay, ..AdamWParams::default() };
    let mut opt = AdamW::new(vars, params).map_err(|e| Error::context("optimizer", e))?;
    let mut step = 0;
    if let Some(r) = resume {
        if let Some(diff) = plan_mismatch(&r.state.plan, &plan) {
            return Err(Error::ResumeMismatch(diff));
        }
        let saved = r
            .optimizer
            .get(HEAD_TENSOR)
            .ok_or_else(|| Error::invalid("the checkpoint has no reranker head"))?;
        head.set(saved).map_err(|e| Error::context("reranker head", e))?;
        opt.load_state(&r.optimizer, r.state.adam_t).map_err(|e| Error::context("optimizer state", e))?;
        step = r.state.step;
    }
    let schedule = Schedule { peak: plan.lr, warmup: plan.warmup, total: plan.total_steps };
    let steps_per_epoch = owned.len().div_ceil(plan.batch);
    let path = cfg.output.join(LOG_FILE);
    let mut log =
        OpenOptions::new().create(true).append(true).open(&path).map_err(|e| Error::io(&path, e))?;
    let mut emit = |event: LogEvent| -> Result<()> {
        on_event(&event);
        let line = serde_json::to_string(&event).map_err(|e| Error::context(LOG_FILE, e))?;
        writeln!(log, "{line}").map_err(|e| Error::io(&path, e))
    };
    emit(LogEvent::Start {
        examples: owned.len(),
        steps_per_epoch,
        total_steps: plan.total_steps,
        warmup: plan.warmup,
        resumed_at: step,
    })?;
    let save = |step: usize, opt: &AdamW| -> Result<PathBuf> {
        let mut state = opt.state();
        state.insert(
            HEAD_TENSOR.to_string(),
            head.as_tensor().copy().map_err(|e| Error::context("reranker head", e))?,
        );
        let st = CheckpointState { step, adam_t: opt.t, plan: plan.clone() };
        checkpoint::save(&cfg.output, model, &state, &st)
    };
    let mut summary = RerankSummary::default();
    while step < plan.total_steps {
        let epoch = step / steps_per_epoch;
        let order = epoch_order(owned.len(), plan.seed, epoch);
        let at = (step % steps_per_epoch) * plan.batch;
        let chosen = &order[at..(at + plan.batch).min(order.len())];
        let t = Instant::now();
        let mut grads: HashMap<String, Tensor> = HashMap::new();
        let mut loss_sum = 0.0;
        for &i in chosen {
            let (pairs, golds) = group_pairs(&owned[i], plan.negatives, &cfg.spec);
            let s = scores(model, head, &pairs)?;
            let loss = listwise_loss(&s, golds).map_err(|e| Error::context("reranker loss", e))?;
            loss_sum += loss.to_dtype(DType::F64).and_then(|l| l.to_scalar::<f64>()).unwrap_or(f64::NAN);
            let scaled = (loss / chosen.len() as f64).map_err(|e| Error::context("reranker loss", e))?;
            let g = scaled.backward().map_err(|e| Error::context("backward", e))?;
            for (name, var) in opt.vars() {
                if let Some(gv) = g.get(var.as_tensor()) {
                    let sum = match grads.remove(name) {
                        Some(prev) => (prev + gv).map_err(|e| Error::context("gradients", e))?,
                        None => gv.clone(),
                    };
                    grads.insert(name.to_string(), sum);
                }
            }
            if progress.cancelled() {
                break;
            }
        }
        let grad_norm =
            clip_grad_norm(&mut grads, cfg.clip_norm).map_err(|e| Error::context("gradients", e))?;
        let lr = schedule.lr(step);
        opt.step(&grads, lr).map_err(|e| Error::context("optimizer", e))?;
        step += 1;
        let loss = loss_sum / chosen.len().max(1) as f64;
        summary.losses.push(loss);
        let seconds = t.elapsed().as_secs_f64();
        emit(LogEvent::Step { step, epoch, loss, lr, grad_norm, instances: chosen.len(), seconds })?;
        let last = step == plan.total_steps;
        let stop = progress.cancelled();
        if last || stop || (cfg.checkpoint_every > 0 && step % cfg.checkpoint_every == 0) {
            let path = save(step, &opt)?;
            emit(LogEvent::Checkpoint { step, path })?;
        }
        if stop && !last {
            summary.cancelled = true;
            break;
        }
    }
    summary.steps = step;
    summary.seconds = started.elapsed().as_secs_f64();
    Ok(summary)
}

/// Writes what [`crate::rerank::Reranker::load`] reads into `dir`: the adapters (trained on
/// `base_id`, with `metadata`), the head and the pair layout. Returns the adapters' sha256.
pub fn save_reranker(
    dir: &std::path::Path,
    model: &TrainModel,
    head: &Var,
    spec: &RerankSpec,
    base_id: &str,
    metadata: HashMap<String, String>,
) -> Result<String> {
    use crate::rerank::{ADAPTER_FILE, HEAD_FILE, SPEC_FILE};
    let digest = model.lora_adapter(base_id, metadata)?.save(&dir.join(ADAPTER_FILE))?;
    let head = head.as_tensor().copy().map_err(|e| Error::context("reranker head", e))?;
    super::weights::save_tensors(&[(HEAD_TENSOR.to_string(), head)].into(), &dir.join(HEAD_FILE))?;
    let json = serde_json::to_string_pretty(spec).map_err(|e| Error::context(SPEC_FILE, e))?;
    crate::cache::write_atomic(&dir.join(SPEC_FILE), json.as_bytes())?;
    Ok(digest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{model_id_of, Encoder, EncoderInput, EncoderOptions};
    use crate::progress::NoProgress;
    use crate::rerank::Reranker;
    use crate::testkit::fixture;
    use crate::train::shard::{Candidate, Seq};
    use candle_core::Device;

    fn cand(ids: &[u32]) -> Candidate {
        Candidate {
            path: "a.py".into(),
            name: "f".into(),
            seq: Seq { ids: ids.to_vec(), split: ids.len() as u32 },
        }
    }

    /// The test model with rank-4 adapters, as `--train-reranker` starts from.
    fn tiny_model() -> (crate::testkit::Fixture, TrainModel) {
        let fx = fixture();
        let mut model = TrainModel::load(&fx.model, &Device::Cpu).unwrap();
        model.use_lora(4, 8.0).unwrap();
        (fx, model)
    }

    #[test]
    fn a_saved_reranker_round_trips_and_a_truncated_or_foreign_file_is_one_line_naming_it() {
        let (fx, model) = tiny_model();
        let spec = RerankSpec { max_len: 24, query_len: 8, depth: 7 };
        let values: Vec<f32> = (0..model.config.hidden_size).map(|i| i as f32 / 100.0).collect();
        let head = Var::from_vec(values.clone(), model.config.hidden_size, &Device::Cpu).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let base_id = model_id_of(&fx.model).unwrap();
        save_reranker(dir.path(), &model, &head, &spec, &base_id, HashMap::new()).unwrap();
        let opts = EncoderOptions { max_len: 24, ..EncoderOptions::default() };
        let base = Encoder::load(&fx.model, &Device::Cpu, opts).unwrap();
        let loaded = Reranker::load(dir.path(), &base).unwrap();
        assert_eq!(loaded.spec, spec, "the pair layout and depth come back");
        let input = EncoderInput { chunk: "def load config".into(), neighbours: Vec::new() };
        let score = loaded.score("load config", &[input]).unwrap()[0];
        assert!(score.is_finite() && score != 0.0, "the head came back, not zeros: {score}");

        use crate::rerank::{ADAPTER_FILE, HEAD_FILE};
        let head_path = dir.path().join(HEAD_FILE);
        let bytes = std::fs::read(&head_path).unwrap();
        let one_line_naming = |what: &str| {
            let e = Reranker::load(dir.path(), &base).err().expect(what).to_string();
            assert!(e.contains(&head_path.display().to_string()) && !e.contains('\n'), "{what}: {e}");
        };
        std::fs::write(&head_path, &bytes[..bytes.len() / 2]).unwrap();
        one_line_naming("a truncated head");
        std::fs::copy(dir.path().join(ADAPTER_FILE), &head_path).unwrap();
        one_line_naming("adapters where the head should be");
    }

    #[test]
    fn the_loss_is_the_golds_softmax_cross_entropy() {
        let s = Tensor::new(&[2.0f32, 0.0, 0.0], &Device::Cpu).unwrap();
        let loss = listwise_loss(&s, 1).unwrap().to_scalar::<f32>().unwrap();
        let expected = -(2f32.exp() / (2f32.exp() + 2.0)).ln();
        assert!((loss - expected).abs() < 1e-5, "{loss} vs {expected}");
        let two = listwise_loss(&s, 2).unwrap().to_scalar::<f32>().unwrap();
        assert!(two < loss, "a second gold counted right lowers the loss");
    }

    #[test]
    fn a_group_puts_golds_first_and_always_keeps_a_negative() {
        let ex = Example {
            instance_id: "x".into(),
            repo: "o/r".into(),
            query: Seq { ids: vec![101, 5, 102], split: 3 },
            positives: (0..5).map(|i| cand(&[101, 10 + i, 102])).collect(),
            negatives: (0..9).map(|i| cand(&[101, 50 + i, 102])).collect(),
            snapshot_chunks: 100,
        };
        let spec = RerankSpec::default();
        let (pairs, golds) = group_pairs(&ex, 4, &spec);
        assert_eq!((pairs.len(), golds), (4, 3));
        assert_eq!(pairs[0].ids, vec![101, 5, 102, 10, 102]);
        assert_eq!(pairs[3].ids, vec![101, 5, 102, 50, 102], "then the first (hardest) negative");
        let (pairs, golds) = group_pairs(&ex, 8, &spec);
        assert_eq!((pairs.len(), golds), (8, 5));
    }

    #[test]
    fn a_trained_reranker_puts_the_chunk_the_issue_is_about_first_and_resumes() {
        let (fx, model) = tiny_model();
        let spec = RerankSpec { max_len: 24, query_len: 8, depth: 3 };
        let tok = &model.tokenizer;
        let chunk = |text: &str| {
            let input = EncoderInput { chunk: text.into(), neighbours: Vec::new() };
            Candidate {
                path: "pkg/a.py".into(),
                name: text.into(),
                seq: Seq::from_tokenized(&tok.input(&input, 24).unwrap()),
            }
        };
        // The issue names what the gold does; the negatives do other things.
        let texts = [
            ("load config", "def load config"),
            ("save value", "def save value"),
            ("parse self", "def parse self"),
        ];
        let examples: Vec<Example> = texts
            .iter()
            .enumerate()
            .map(|(i, (issue, gold))| Example {
                instance_id: format!("x-{i}"),
                repo: "acme/proj".into(),
                query: Seq::from_tokenized(&tok.query(issue, 16).unwrap()),
                positives: vec![chunk(gold)],
                negatives: texts.iter().filter(|(_, g)| g != gold).map(|(_, g)| chunk(g)).collect(),
                snapshot_chunks: 3,
            })
            .collect();
        let out = tempfile::tempdir().unwrap();
        let cfg = RerankTrainConfig {
            output: out.path().to_path_buf(),
            epochs: 40,
            max_steps: None,
            batch: 3,
            group: 3,
            lr: 2e-3,
            warmup: Some(2),
            weight_decay: 0.0,
            clip_norm: 1.0,
            seed: 0,
            checkpoint_every: 15,
            spec: spec.clone(),
        };
        let head = Var::zeros(model.config.hidden_size, DType::F32, &Device::Cpu).unwrap();
        let s = train_reranker(&model, &head, &examples, &cfg, None, &NoProgress, &mut |_| {}).unwrap();
        assert_eq!(s.steps, 40);
        assert!((s.losses[0] - 3f64.ln()).abs() < 1e-4, "a zero head scores all alike: {}", s.losses[0]);
        let tail = s.losses[35..].iter().sum::<f64>() / 5.0;
        assert!(tail < 0.5 * s.losses[0], "it learns: {:?}", s.losses);

        let base_id = model_id_of(&fx.model).unwrap();
        save_reranker(out.path(), &model, &head, &spec, &base_id, HashMap::new()).unwrap();
        let opts = EncoderOptions { max_len: 24, ..EncoderOptions::default() };
        let base = Encoder::load(&fx.model, &Device::Cpu, opts).unwrap();
        let reranker = Reranker::load(out.path(), &base).unwrap();
        let input = |t: &str| EncoderInput { chunk: t.into(), neighbours: Vec::new() };
        let candidates: Vec<EncoderInput> = texts.iter().map(|(_, g)| input(g)).collect();
        for (i, (issue, _)) in texts.iter().enumerate() {
            let scores = reranker.score(issue, &candidates).unwrap();
            let best = (0..3).max_by(|&a, &b| scores[a].total_cmp(&scores[b])).unwrap();
            assert_eq!(best, i, "{issue}: {scores:?}");
        }
        // The gold ranked 7th by the hybrid (the others are the other issues' chunks) moves
        // up; the list is the top 8 re-ordered, then the rest in the hybrid's order.
        let order = [1u32, 2, 11, 12, 21, 22, 0, 31, 32, 41];
        let hits: Vec<crate::index::Hit> =
            order.iter().map(|&c| crate::index::Hit { chunk: c, score: 0.0 }).collect();
        let text_of = |c: u32| input(texts[(c % 10) as usize % texts.len()].1);
        let mut deeper = reranker;
        deeper.spec.depth = 8;
        let reranked: Vec<u32> =
            deeper.rerank("load config", &hits, text_of).unwrap().iter().map(|h| h.chunk).collect();
        assert_eq!(reranked[0], 0, "{reranked:?}");
        let (mut head, mut top8) = (reranked[..8].to_vec(), order[..8].to_vec());
        head.sort_unstable();
        top8.sort_unstable();
        assert_eq!(head, top8, "the head is a permutation of the hybrid's top 8");
        assert_eq!(reranked[8..], order[8..], "below the depth nothing moves");

        // A resumed run continues from the checkpoint's head and moments to the same end.
        let ck = checkpoint::load(out.path(), &Device::Cpu).unwrap();
        assert_eq!(ck.state.step, 40);
        assert!(ck.optimizer.contains_key(HEAD_TENSOR));
        let other = RerankTrainConfig { spec: RerankSpec { query_len: 9, ..spec }, ..cfg };
        let resume = Resume { state: ck.state, optimizer: ck.optimizer };
        let head2 = Var::zeros(model.config.hidden_size, DType::F32, &Device::Cpu).unwrap();
        let err =
            train_reranker(&ck.model, &head2, &examples, &other, Some(resume), &NoProgress, &mut |_| {});
        assert!(matches!(err, Err(Error::ResumeMismatch(_))), "another pair layout is another run");

        // Ctrl-C: the update in hand ends, a checkpoint is written, the caller keeps the rest.
        let steps = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let stop = crate::train::tests::StopAfter { steps: steps.clone(), after: 2 };
        let out2 = tempfile::tempdir().unwrap();
        let short = RerankTrainConfig { output: out2.path().to_path_buf(), checkpoint_every: 0, ..other };
        let count = |e: &LogEvent| {
            if matches!(e, LogEvent::Step { .. }) {
                steps.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        };
        let s = train_reranker(&model, &head2, &examples, &short, None, &stop, &mut { count }).unwrap();
        assert!(s.cancelled && s.steps == 2, "{s:?}");
        assert_eq!(checkpoint::load(out2.path(), &Device::Cpu).unwrap().state.step, 2);
    }
}
