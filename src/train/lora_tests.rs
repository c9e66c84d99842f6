//! Shared pools of negatives and LoRA adapters (DESIGN.md "Training on a CPU").

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use candle_core::Device;

use super::step::{accumulate_grads, Item, PoolBatch};
use super::tests::{assert_close, config, fixed_items, input, opts, prepared, rows, six_updates, StopAfter};
use super::*;
use crate::model::lora::{with_lora, LoraAdapter};
use crate::model::{model_id_of, Encoder, TokenizedInput};
use crate::progress::NoProgress;
use crate::testkit::fixture;

fn seq(ids: &[u32]) -> TokenizedInput {
    TokenizedInput { ids: ids.to_vec(), type_ids: vec![0; ids.len()] }
}

#[test]
fn a_shared_pool_of_one_instance_gives_the_per_instance_loss() {
    let fx = fixture();
    let model = TrainModel::load(&fx.model, &Device::Cpu).unwrap();
    for item in fixed_items(&model) {
        let one = [item];
        let mut g1 = HashMap::new();
        let own = accumulate_grads(&model, &PoolBatch::per_instance(&one), 0.05, 1.0, 64, &mut g1).unwrap();
        let mut g2 = HashMap::new();
        let shared = accumulate_grads(&model, &PoolBatch::shared(&one), 0.05, 1.0, 64, &mut g2).unwrap();
        assert!((own[0] - shared[0]).abs() < 1e-6, "{own:?} vs {shared:?}");
    }
    // Two instances: each query now meets the other's chunks too, so its loss can only grow.
    let items = fixed_items(&model);
    let own = accumulate_grads(&model, &PoolBatch::per_instance(&items), 0.05, 1.0, 64, &mut HashMap::new());
    let shared = accumulate_grads(&model, &PoolBatch::shared(&items), 0.05, 1.0, 64, &mut HashMap::new());
    for (a, b) in own.unwrap().iter().zip(shared.unwrap()) {
        assert!(b > *a, "more negatives, higher loss: {a} vs {b}");
    }
}

#[test]
fn a_query_never_meets_its_golds_namesakes_or_copies_among_its_negatives() {
    let item = |q: u32, golds: &[(&[u32], &str)], negs: &[(&[u32], &str)]| Item {
        query: seq(&[q]),
        positives: golds.iter().map(|(s, _)| seq(s)).collect(),
        negatives: negs.iter().map(|(s, _)| seq(s)).collect(),
        positive_keys: golds.iter().map(|(_, k)| k.to_string()).collect(),
        negative_keys: negs.iter().map(|(_, k)| k.to_string()).collect(),
    };
    let items = [
        item(1, &[(&[10, 11], "a.py::save")], &[(&[20], "a.py::load"), (&[21], "b.py::run")]),
        // Another commit's version of a.py::save (other text, same identity), a copy of the
        // first instance's gold text under another name, and a gold of its own.
        item(
            2,
            &[(&[30], "c.py::parse")],
            &[(&[10, 12], "a.py::save"), (&[10, 11], "d.py::copy"), (&[21], "b.py::run")],
        ),
    ];
    let b = PoolBatch::shared(&items);
    assert_eq!(b.pool.len(), 5, "identical inputs are one pool row: {:?}", b.pool);
    let row = |ids: &[u32]| b.pool.iter().position(|s| s.ids == ids).unwrap();
    assert_eq!(b.golds[0], [row(&[10, 11])]);
    let neg0: Vec<&[u32]> = b.negatives[0].iter().map(|&r| b.pool[r].ids.as_slice()).collect();
    assert!(!neg0.contains(&[10u32, 12].as_slice()), "another version of the gold: {neg0:?}");
    assert!(!neg0.contains(&[10u32, 11].as_slice()), "the gold's own text: {neg0:?}");
    assert!(neg0.contains(&[30u32].as_slice()), "the other instance's gold is a fair negative");
    assert_eq!(neg0.len(), 3, "{neg0:?}");
    // Query 2's gold is c.py::parse; a.py::save in either version is a negative for it, and the
    // text it shares with query 1's gold is one row.
    let neg1: Vec<&[u32]> = b.negatives[1].iter().map(|&r| b.pool[r].ids.as_slice()).collect();
    assert_eq!(neg1.len(), 4, "{neg1:?}");
    assert!(!neg1.contains(&[30u32].as_slice()));
}

#[test]
fn lora_starts_as_the_pretrained_model_learns_only_adapters_and_ships_as_a_checked_file() {
    let fx = fixture();
    let mut model = TrainModel::load(&fx.model, &Device::Cpu).unwrap();
    let inputs = [input("def save(self)", &[]), input("saving a file twice loses the first copy", &[])];
    let toks: Vec<TokenizedInput> = inputs.iter().map(|i| model.tokenizer.input(i, 64).unwrap()).collect();
    let refs: Vec<&TokenizedInput> = toks.iter().collect();
    let before = rows(&model.embed(&refs).unwrap());
    assert!(model.use_lora(0, 1.0).is_err());
    model.use_lora(4, 8.0).unwrap();
    assert_eq!(model.lora_rank(), 4);
    assert_close(&rows(&model.embed(&refs).unwrap()), &before, 1e-6);
    let names: Vec<String> = model.tensors().into_keys().collect();
    assert!(names.iter().all(|n| n.ends_with(".lora_a") || n.ends_with(".lora_b")), "{names:?}");
    assert_eq!(names.len(), 2 * 6 * model.bert.num_layers(), "six linear layers per encoder layer");

    let losses = six_updates(&model, |grads| {
        assert!(grads.keys().all(|k| k.contains(".lora_")), "only adapters get gradients");
    });
    assert!(losses[5] < losses[0], "loss did not fall: {losses:?}");
    let trained = rows(&model.embed(&refs).unwrap());

    // What ships: f16 adapters merged into the pretrained weights, for both towers.
    let base = model_id_of(&fx.model).unwrap();
    let adapter =
        model.lora_adapter(&base, [("coret.command".to_string(), "test".to_string())].into()).unwrap();
    let path = fx.tmp.path().join("coret-lora.safetensors");
    let digest = adapter.save(&path).unwrap();
    assert_eq!(digest.len(), 64);
    let back = LoraAdapter::load(&path).unwrap();
    assert!(back.tensors() == adapter.tensors(), "the factors round-trip (f16)");
    assert_eq!(
        (back.name(), back.base(), back.rank(), back.alpha()),
        (adapter.name(), base.as_str(), 4, 8.0)
    );
    assert_eq!(back.metadata().get("coret.command").map(String::as_str), Some("test"));
    let pretrained = Encoder::load(&fx.model, &Device::Cpu, opts()).unwrap();
    let merged = with_lora(&pretrained, &back, "adapter").unwrap();
    assert_ne!(merged.model_id(), pretrained.model_id(), "its own vector cache");
    let got = merged.embed_inputs(&inputs, &NoProgress).unwrap();
    assert_close(&got, &trained, 2e-3);

    // `--lora-init`: a new run starts from the file, and refuses another rank's.
    let mut again = TrainModel::load(&fx.model, &Device::Cpu).unwrap();
    again.use_lora(4, 8.0).unwrap();
    again.start_lora_from(&back, &base, "adapter").unwrap();
    assert_close(&rows(&again.embed(&refs).unwrap()), &trained, 2e-3);
    let mut other = TrainModel::load(&fx.model, &Device::Cpu).unwrap();
    other.use_lora(2, 4.0).unwrap();
    let err = other.start_lora_from(&back, &base, "adapter.safetensors").unwrap_err().to_string();
    assert!(err.contains("adapter.safetensors") && err.contains("rank 4"), "{err}");

    // A truncated copy, or one whose checksum does not match, is an error naming the file.
    let bytes = std::fs::read(&path).unwrap();
    let cut = fx.tmp.path().join("cut.safetensors");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let err = LoraAdapter::load(&cut).unwrap_err().to_string();
    assert!(err.contains("cut.safetensors") && err.contains("truncated"), "{err}");
    std::fs::write(fx.tmp.path().join("bad.safetensors"), &bytes).unwrap();
    std::fs::write(fx.tmp.path().join("bad.safetensors.sha256"), "00".repeat(32)).unwrap();
    let err = LoraAdapter::load(&fx.tmp.path().join("bad.safetensors")).unwrap_err().to_string();
    assert!(err.contains("bad.safetensors") && err.contains("sha256"), "{err}");
}

#[test]
fn an_interrupted_lora_run_with_shared_pools_resumes_to_the_same_losses() {
    let fx = fixture();
    let lora = |m: &mut TrainModel| m.use_lora(4, 8.0).unwrap();
    let mut base = TrainModel::load(&fx.model, &Device::Cpu).unwrap();
    let examples = prepared(&fx, &base, 5);
    lora(&mut base);
    let cfg = |dir: &str| {
        let mut c = config(fx.tmp.path().join(dir));
        c.shared_pool = true;
        c.batch = 3;
        c
    };
    let straight = train(&base, &examples, None, &cfg("straight"), None, &NoProgress, &mut |_| {}).unwrap();
    assert_eq!(straight.steps, 4, "6 examples of one repository in pools of 3, 2 epochs");

    let mut first = TrainModel::load(&fx.model, &Device::Cpu).unwrap();
    lora(&mut first);
    let steps = Arc::new(AtomicUsize::new(0));
    let stop = StopAfter { steps: steps.clone(), after: 1 };
    let mut count = |e: &LogEvent| {
        if matches!(e, LogEvent::Step { .. }) {
            steps.fetch_add(1, Ordering::SeqCst);
        }
    };
    let out = cfg("interrupted");
    assert!(train(&first, &examples, None, &out, None, &stop, &mut count).is_err());
    let ck = checkpoint::load(&out.output, &Device::Cpu).unwrap();
    assert_eq!((ck.state.step, ck.model.lora_rank()), (1, 4), "the checkpoint keeps its adapters");
    let resume = Resume { state: ck.state, optimizer: ck.optimizer };
    let rest = train(&ck.model, &examples, None, &out, Some(resume), &NoProgress, &mut |_| {}).unwrap();
    assert_eq!(rest.losses.len(), 3);
    for (a, b) in rest.losses.iter().zip(&straight.losses[1..]) {
        assert!((a - b).abs() < 1e-5, "{:?} vs {:?}", rest.losses, straight.losses);
    }
}
