use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use candle_core::{Device, Tensor};

use super::step::{accumulate_grads, length_buckets, Item, PoolBatch};
use super::*;
use crate::model::{Encoder, EncoderInput, EncoderOptions, TokenizedInput, DOWN_TOKEN};
use crate::progress::{NoProgress, Progress};
use crate::rank::dense_retriever::DenseOptions;
use crate::testkit::{fixture, Fixture};

/// f32 products: training runs in f32, and these tests compare it with the encoder to 1e-4.
pub(super) fn opts() -> EncoderOptions {
    EncoderOptions {
        max_len: 64,
        batch_size: 8,
        precision: crate::model::Precision::F32,
        ..EncoderOptions::default()
    }
}

pub(super) fn input(chunk: &str, neighbours: &[&str]) -> EncoderInput {
    EncoderInput { chunk: chunk.into(), neighbours: neighbours.iter().map(|s| s.to_string()).collect() }
}

pub(super) fn rows(t: &Tensor) -> Vec<Vec<f32>> {
    t.to_vec2::<f32>().unwrap()
}

pub(super) fn assert_close(a: &[Vec<f32>], b: &[Vec<f32>], tol: f32) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        let worst = x.iter().zip(y).map(|(p, q)| (p - q).abs()).fold(0.0, f32::max);
        assert!(worst < tol, "differ by {worst}");
    }
}

pub(super) fn prepared(fx: &Fixture, model: &TrainModel, negatives: usize) -> Vec<Example> {
    let opts = PrepareOptions {
        repos_dir: fx.repos.clone(),
        max_file_size: 1 << 20,
        dense: DenseOptions::default(),
        negatives,
        bm25_negatives: 0,
        dense_negatives: 0,
        max_len: 64,
        query_max_len: 32,
        seed: 1,
        use_hints: false,
        consistency_top: 0,
        max_gold: 0,
    };
    prepare_examples(&fx.instances, &model.tokenizer, &opts, None, &NoProgress).unwrap().0
}

#[test]
fn training_forward_matches_the_encoder_and_down_starts_as_sep() {
    let fx = fixture();
    let model = TrainModel::load(&fx.model, &Device::Cpu).unwrap();
    let pretrained = Encoder::load(&fx.model, &Device::Cpu, opts()).unwrap();
    assert!(!pretrained.input_tokenizer().has_down_token() && model.tokenizer.has_down_token());
    let inputs = [input("def load(p): return p", &["def parse(t)", "x = 1"]), input("class c", &[])];
    let ours: Vec<TokenizedInput> = inputs.iter().map(|i| model.tokenizer.input(i, 64).unwrap()).collect();
    let theirs: Vec<TokenizedInput> = inputs.iter().map(|i| pretrained.tokenize_input(i).unwrap()).collect();
    assert_ne!(ours[0].ids, theirs[0].ids, "[DOWN] replaces [SEP] between chunk and neighbours");
    let refs: Vec<&TokenizedInput> = ours.iter().collect();
    let got = rows(&model.embed(&refs).unwrap());
    let want = pretrained.embed_tokenized(&theirs, &mut |_, _| Ok(())).unwrap();
    assert_close(&got, &want, 1e-4);
}

pub(super) fn fixed_items(model: &TrainModel) -> Vec<Item> {
    let t = |s: &str, n: &[&str]| model.tokenizer.input(&input(s, n), 64).unwrap();
    vec![
        Item {
            query: t("clamp order wrong", &[]),
            positives: vec![t("def clamp(x, lo, hi): return max(lo, min(x, hi))", &["def max"])],
            negatives: vec![t("def mean(xs)", &[]), t("class model", &["def load"]), t("def first(xs)", &[])],
            positive_keys: vec!["m.py::clamp".into()],
            negative_keys: vec!["m.py::mean".into(), "m.py::model".into(), "m.py::first".into()],
        },
        Item {
            query: t("save config returns", &[]),
            positives: vec![t("def save_config(path, value)", &[]), t("def parse_value(text)", &[])],
            negatives: vec![t("def total(xs)", &[]), t("def load_config(path)", &["def parse_value"])],
            positive_keys: vec!["c.py::save_config".into(), "c.py::parse_value".into()],
            negative_keys: vec!["m.py::total".into(), "c.py::load_config".into()],
        },
    ]
}

#[test]
fn every_parameter_gets_a_gradient_and_slicing_does_not_change_it() {
    let fx = fixture();
    let model = TrainModel::load(&fx.model, &Device::Cpu).unwrap();
    let items = PoolBatch::per_instance(&fixed_items(&model));
    let mut direct = HashMap::new();
    let l1 = accumulate_grads(&model, &items, 0.05, 0.5, 64, &mut direct).unwrap();
    let mut sliced = HashMap::new();
    let l2 = accumulate_grads(&model, &items, 0.05, 0.5, 3, &mut sliced).unwrap();
    assert_eq!(l1.len(), 2);
    assert!(l1.iter().zip(&l2).all(|(a, b)| (a - b).abs() < 1e-5), "{l1:?} {l2:?}");
    let names = model.tensors();
    assert_eq!(direct.len(), names.len(), "a parameter got no gradient");
    for (name, g) in &direct {
        let norm = g.sqr().unwrap().sum_all().unwrap().to_scalar::<f32>().unwrap();
        // Position rows past the longest input and unused vocabulary rows stay zero, but
        // every tensor as a whole must be reached by backpropagation.
        assert!(norm > 0.0, "{name} has a zero gradient");
        let s = &sliced[name];
        let diff = (g - s).unwrap().abs().unwrap().max_all().unwrap().to_scalar::<f32>().unwrap();
        let scale = g.abs().unwrap().max_all().unwrap().to_scalar::<f32>().unwrap();
        assert!(diff <= 1e-3 * scale.max(1e-3), "{name}: sliced gradient differs by {diff} (scale {scale})");
    }
}

#[test]
fn with_frozen_lower_layers_slicing_does_not_change_the_gradient() {
    let fx = fixture();
    let mut model = TrainModel::load(&fx.model, &Device::Cpu).unwrap();
    model.train_top_layers(1).unwrap();
    let items = PoolBatch::per_instance(&fixed_items(&model));
    let mut direct = HashMap::new();
    let l1 = accumulate_grads(&model, &items, 0.05, 0.5, 64, &mut direct).unwrap();
    let mut sliced = HashMap::new();
    let l2 = accumulate_grads(&model, &items, 0.05, 0.5, 3, &mut sliced).unwrap();
    assert!(l1.iter().zip(&l2).all(|(a, b)| (a - b).abs() < 1e-5), "{l1:?} {l2:?}");
    assert!(!direct.is_empty());
    assert_eq!(direct.keys().collect::<std::collections::BTreeSet<_>>(), sliced.keys().collect());
    for (name, g) in &direct {
        let diff = (g - &sliced[name]).unwrap().abs().unwrap().max_all().unwrap().to_scalar::<f32>().unwrap();
        let scale = g.abs().unwrap().max_all().unwrap().to_scalar::<f32>().unwrap();
        assert!(diff <= 1e-3 * scale.max(1e-3), "{name}: sliced gradient differs by {diff} (scale {scale})");
    }
}

#[test]
fn a_long_query_does_not_pad_its_chunks_to_its_length() {
    let seq = |len: usize| TokenizedInput { ids: vec![1; len], type_ids: vec![0; len] };
    let seqs: Vec<TokenizedInput> = [512, 40, 200, 90, 60, 256, 130, 10].into_iter().map(seq).collect();
    let refs: Vec<&TokenizedInput> = seqs.iter().collect();
    let buckets = length_buckets(&refs);
    let mut all: Vec<usize> = buckets.iter().flatten().copied().collect();
    all.sort();
    assert_eq!(all, (0..seqs.len()).collect::<Vec<_>>(), "every sequence once");
    for b in &buckets {
        let (lo, hi) = (refs[b[0]].len(), refs[*b.last().unwrap()].len());
        assert!(hi <= (2 * lo).max(64), "bucket {lo}..{hi} pads too much");
    }
    let query = buckets.iter().find(|b| b.contains(&0)).unwrap();
    assert!(query.iter().all(|&i| refs[i].len() > 256), "the 512-token query is padded alone");
}

/// Mean losses of six AdamW updates on the fixed batch; `check` sees each update's gradients.
pub(super) fn six_updates(model: &TrainModel, check: impl Fn(&HashMap<String, Tensor>)) -> Vec<f32> {
    let items = PoolBatch::per_instance(&fixed_items(model));
    let vars = model.varmap.data().lock().unwrap().clone();
    let mut opt = optim::AdamW::new(vars, optim::AdamWParams::default()).unwrap();
    let mut losses = Vec::new();
    for _ in 0..6 {
        let mut grads = HashMap::new();
        let l = accumulate_grads(model, &items, 0.05, 0.5, 64, &mut grads).unwrap();
        check(&grads);
        losses.push(l.iter().sum::<f32>() / 2.0);
        opt.step(&grads, 1e-3).unwrap();
    }
    losses
}

#[test]
fn a_few_updates_lower_the_loss_on_a_fixed_batch() {
    let fx = fixture();
    let model = TrainModel::load(&fx.model, &Device::Cpu).unwrap();
    let losses = six_updates(&model, |_| {});
    assert!(losses[5] < losses[0] * 0.7, "loss did not fall: {losses:?}");
}

#[test]
fn frozen_lower_layers_on_the_cpu_pass_give_the_same_embeddings() {
    let fx = fixture();
    let mut model = TrainModel::load(&fx.model, &Device::Cpu).unwrap();
    let inputs = [input("def save(self)", &[]), input("saving a file twice loses the first copy", &[])];
    let toks: Vec<TokenizedInput> = inputs.iter().map(|i| model.tokenizer.input(i, 64).unwrap()).collect();
    let refs: Vec<&TokenizedInput> = toks.iter().collect();
    let all_differentiable = rows(&model.embed(&refs).unwrap());
    model.train_top_layers(1).unwrap();
    assert!(model.frozen_on_cpu_pass(), "the fixture model qualifies for the CPU pass");
    assert_close(&rows(&model.embed(&refs).unwrap()), &all_differentiable, 1e-5);
}

#[test]
fn with_top_layers_only_those_learn_and_they_load_as_tower_layers_giving_the_same_embeddings() {
    let fx = fixture();
    let mut model = TrainModel::load(&fx.model, &Device::Cpu).unwrap();
    let n = model.bert.num_layers();
    assert!(model.train_top_layers(n + 1).is_err());
    model.train_top_layers(1).unwrap();
    assert_eq!(model.trained_top_layers(), 1);
    let top = format!("encoder.layer.{}.", n - 1);
    // Copies: `tensors()` shares storage with the variables the optimizer updates in place.
    let before: HashMap<String, Tensor> =
        model.tensors().into_iter().map(|(k, t)| (k, t.copy().unwrap())).collect();
    let losses = six_updates(&model, |grads| {
        assert!(!grads.is_empty() && grads.keys().all(|k| k.starts_with(&top)), "{:?}", grads.keys());
    });
    assert!(losses[5] < losses[0], "loss did not fall: {losses:?}");
    for (name, t) in model.tensors() {
        let same =
            (&t - &before[&name]).unwrap().abs().unwrap().max_all().unwrap().to_scalar::<f32>().unwrap()
                == 0.0;
        assert_eq!(same, !name.starts_with(&top), "{name}: only the top layer changes");
    }

    // What ships is those layers (f16) laid over the pretrained model for both towers.
    let tensors = model.top_layer_tensors().unwrap();
    assert!(tensors.iter().all(|t| t.name.starts_with(&top)));
    let meta = [(
        crate::model::tower_layers::META_TOWERS.to_string(),
        crate::model::tower_layers::BOTH_TOWERS.to_string(),
    )]
    .into();
    let layers = crate::model::TowerLayers::from_tensors(
        tensors,
        &crate::model::model_id_of(&fx.model).unwrap(),
        meta,
    )
    .unwrap();
    let pretrained = Encoder::load(&fx.model, &Device::Cpu, opts()).unwrap();
    let tower = crate::model::with_tower_layers(&pretrained, &layers, "layers").unwrap();
    let inputs = [input("def save(self)", &[]), input("issue text", &[])];
    let want = tower.embed_inputs(&inputs, &NoProgress).unwrap();
    let ours: Vec<TokenizedInput> = inputs.iter().map(|i| model.tokenizer.input(i, 64).unwrap()).collect();
    let refs: Vec<&TokenizedInput> = ours.iter().collect();
    assert_close(&rows(&model.embed(&refs).unwrap()), &want, 2e-3);
}

#[test]
fn saved_model_has_down_and_reloads_with_the_same_embeddings() {
    let fx = fixture();
    let model = TrainModel::load(&fx.model, &Device::Cpu).unwrap();
    let mut grads = HashMap::new();
    accumulate_grads(&model, &PoolBatch::per_instance(&fixed_items(&model)), 0.05, 1.0, 64, &mut grads)
        .unwrap();
    let vars = model.varmap.data().lock().unwrap().clone();
    optim::AdamW::new(vars, optim::AdamWParams::default()).unwrap().step(&grads, 1e-3).unwrap();
    let out = fx.tmp.path().join("out");
    model.save(&out).unwrap();

    let old_vocab = crate::model::config::load_bert_config(&fx.model).unwrap().vocab_size;
    let config = crate::model::config::load_bert_config(&out).unwrap();
    assert_eq!(config.vocab_size, old_vocab + 1);
    let tok = tokenizers::Tokenizer::from_file(out.join("tokenizer.json")).unwrap();
    assert_eq!(tok.token_to_id(DOWN_TOKEN), Some(old_vocab as u32));
    assert_eq!(tok.get_vocab_size(true), old_vocab + 1);

    let loaded = Encoder::load(&out, &Device::Cpu, opts()).unwrap();
    assert!(loaded.input_tokenizer().has_down_token());
    let inputs = [input("def save(self)", &["def load", "def parse"]), input("issue text", &[])];
    let want = loaded.embed_inputs(&inputs, &NoProgress).unwrap();
    let ours: Vec<TokenizedInput> = inputs.iter().map(|i| model.tokenizer.input(i, 64).unwrap()).collect();
    let refs: Vec<&TokenizedInput> = ours.iter().collect();
    assert_close(&rows(&model.embed(&refs).unwrap()), &want, 1e-4);
    let before = Encoder::load(&fx.model, &Device::Cpu, opts()).unwrap();
    let old = before.embed_inputs(&inputs[1..], &NoProgress).unwrap();
    assert!((old[0][0] - want[1][0]).abs() > 1e-6, "the update changed nothing");
}

#[test]
fn prepare_uses_the_eval_gold_and_reports_skips() {
    let fx = fixture();
    let model = TrainModel::load(&fx.model, &Device::Cpu).unwrap();
    let opts = PrepareOptions {
        repos_dir: fx.repos.clone(),
        max_file_size: 1 << 20,
        dense: DenseOptions::default(),
        negatives: 4,
        bm25_negatives: 0,
        dense_negatives: 0,
        max_len: 64,
        query_max_len: 32,
        seed: 1,
        use_hints: false,
        consistency_top: 0,
        max_gold: 0,
    };
    let (examples, report) =
        prepare_examples(&fx.instances, &model.tokenizer, &opts, None, &NoProgress).unwrap();
    assert_eq!(examples.len(), 6);
    assert_eq!(report.no_gold, ["proj-readme"]);
    assert_eq!(report.missing_repos.get("acme/gone"), Some(&1));
    let clamp = &examples[1];
    assert_eq!(clamp.instance_id, "proj-1");
    assert_eq!(clamp.positives.len(), 1);
    assert_eq!(clamp.positives[0].path, "pkg/util.py");
    assert_eq!(clamp.negatives.len(), 4);
    assert!(clamp.negatives.iter().all(|n| n.seq != clamp.positives[0].seq), "a negative is the gold");
    let gold = model.tokenizer.input(&input("pkg/util.py\ndef clamp(x, lo, hi):", &[]), 64).unwrap();
    assert_eq!(clamp.positives[0].seq.ids[..8], gold.ids[..8], "the gold chunk is clamp");
    let again = prepare_examples(&fx.instances, &model.tokenizer, &opts, None, &NoProgress).unwrap().0;
    assert_eq!(again, examples, "sampling is seeded");
}

#[test]
fn proxy_ranks_a_positive_identical_to_the_query_first() {
    let fx = fixture();
    let model = TrainModel::load(&fx.model, &Device::Cpu).unwrap();
    let mut examples = prepared(&fx, &model, 4);
    for ex in &mut examples {
        ex.positives[0].seq = ex.query.clone();
    }
    let encoder = model.to_encoder(opts(), "t".into()).unwrap();
    let summary = validate::candidate_proxy(&encoder, &examples, &[1, 5]).unwrap();
    assert_eq!(summary.n, 6);
    assert_eq!(summary.metrics.get("recall@1"), Some(examples_recall1(&examples)));
    assert!(summary.metrics.get("mrr").unwrap() > 0.99);
}

/// Recall@1 when each instance's first positive is always ranked first.
fn examples_recall1(examples: &[Example]) -> f64 {
    examples.iter().map(|e| 1.0 / e.positives.len() as f64).sum::<f64>() / examples.len() as f64
}

/// Stops training after `after` updates, as Ctrl-C would.
pub(super) struct StopAfter {
    pub(super) steps: Arc<AtomicUsize>,
    pub(super) after: usize,
}

impl Progress for StopAfter {
    fn report(&self, _: crate::progress::Phase, _: usize, _: usize) {}
    fn cancelled(&self) -> bool {
        self.steps.load(Ordering::SeqCst) >= self.after
    }
}

pub(super) fn config(output: std::path::PathBuf) -> TrainConfig {
    TrainConfig {
        output,
        epochs: 2,
        max_steps: None,
        negatives: 3,
        lr: 1e-3,
        warmup: Some(1),
        weight_decay: 0.01,
        clip_norm: 1.0,
        batch: 2,
        shared_pool: false,
        accum: 1,
        temperature: 0.05,
        grad_slice: 16,
        seed: 3,
        val_every: None,
        ks: vec![1, 5],
        encoder: opts(),
    }
}

#[test]
fn resume_continues_where_an_interrupted_run_stopped() {
    let fx = fixture();
    let base = TrainModel::load(&fx.model, &Device::Cpu).unwrap();
    let examples = prepared(&fx, &base, 5);
    let val = ValSet::Candidates(examples[..2].to_vec());
    let straight_out = fx.tmp.path().join("straight");
    let cfg = config(straight_out.clone());
    let straight = train(&base, &examples, Some(&val), &cfg, None, &NoProgress, &mut |_| {}).unwrap();
    assert_eq!(straight.steps, 6, "3 updates per epoch, 2 epochs");
    assert_eq!(straight.validations.len(), 3, "before, after epoch 1, after epoch 2");
    let log = std::fs::read_to_string(straight_out.join(trainer::LOG_FILE)).unwrap();
    assert_eq!(log.lines().filter(|l| l.contains("\"event\":\"step\"")).count(), 6);
    assert!(Encoder::load(&straight_out, &Device::Cpu, opts()).unwrap().input_tokenizer().has_down_token());

    let out = fx.tmp.path().join("interrupted");
    let cfg = config(out.clone());
    let first = TrainModel::load(&fx.model, &Device::Cpu).unwrap();
    let steps = Arc::new(AtomicUsize::new(0));
    let stop = StopAfter { steps: steps.clone(), after: 2 };
    let mut count = |e: &LogEvent| {
        if matches!(e, LogEvent::Step { .. }) {
            steps.fetch_add(1, Ordering::SeqCst);
        }
    };
    let err = train(&first, &examples, Some(&val), &cfg, None, &stop, &mut count).unwrap_err();
    assert!(matches!(err, crate::Error::Cancelled), "{err}");

    let ck = checkpoint::load(&out, &Device::Cpu).unwrap();
    assert_eq!(ck.state.step, 2);
    let resume = Resume { state: ck.state, optimizer: ck.optimizer };
    let rest = train(&ck.model, &examples, Some(&val), &cfg, Some(resume), &NoProgress, &mut |_| {}).unwrap();
    assert_eq!(rest.steps, 6);
    assert_eq!(rest.losses.len(), 4, "the resumed run does updates 3 to 6");
    assert!((rest.losses[3] - straight.losses[5]).abs() < 1e-4, "{:?} vs {:?}", rest.losses, straight.losses);
    let a = base.tensors();
    let b = ck.model.tensors();
    for (name, t) in &a {
        let diff = (t - &b[name]).unwrap().abs().unwrap().max_all().unwrap().to_scalar::<f32>().unwrap();
        assert!(diff < 1e-4, "{name} differs by {diff} after resuming");
    }

    let mut other = config(out.clone());
    other.batch = 3;
    let ck = checkpoint::load(&out, &Device::Cpu).unwrap();
    let resume = Resume { state: ck.state, optimizer: ck.optimizer };
    let err = train(&ck.model, &examples, None, &other, Some(resume), &NoProgress, &mut |_| {});
    assert!(err.unwrap_err().to_string().contains("batch"), "a changed plan is refused by name");
}

#[test]
fn full_validation_ranks_whole_snapshots_through_the_eval_loop() {
    let fx = fixture();
    let model = TrainModel::load(&fx.model, &Device::Cpu).unwrap();
    let set = ValSet::Full {
        instances: fx.instances.clone(),
        repos_dir: fx.repos.clone(),
        dense: DenseOptions::default(),
        max_file_size: 1 << 20,
    };
    let encoder = Arc::new(model.to_encoder(opts(), "t".into()).unwrap());
    let result = validate::validate(encoder, &set, &[1, 50]).unwrap();
    assert_eq!(result.kind, "full");
    assert_eq!(result.summary.n, 6, "the readme-only and missing-repository instances are left out");
    // Every chunk of the small snapshot is ranked, so all gold is found within 50.
    assert_eq!(result.summary.metrics.get("recall@50"), Some(1.0));
}
