//! A tiny randomly initialised BERT checkpoint, written to disk like a real one, so tests
//! exercise the real loading and embedding path in milliseconds.

use std::path::Path;

use candle_core::{DType, Device};
use candle_nn::{VarBuilder, VarMap};
use candle_transformers::models::bert::BertModel;
use serde_json::{json, Value};

use super::config::parse_bert_config;

const SPECIALS: [&str; 5] = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];
pub const TINY_MAX_POSITIONS: usize = 256;

/// Writes `config.json`, `tokenizer.json` and `model.safetensors` of a 2-layer, hidden-32
/// BERT into `dir`. The vocabulary holds the BERT specials, single letters, digits and
/// punctuation (so any ASCII text tokenises), then `vocab` (e.g. whole words, `[DOWN]`).
/// Like all-MiniLM's, the tokenizer file pads and truncates to a fixed 128.
#[doc(hidden)]
pub fn write_tiny_bert(dir: &Path, vocab: &[&str]) {
    std::fs::create_dir_all(dir).expect("create tiny model dir");
    let tokens = tiny_vocab(vocab);
    let config = tiny_config(tokens.len());
    write_json(&dir.join("config.json"), &config);
    write_json(&dir.join("tokenizer.json"), &tiny_tokenizer(&tokens));
    let config =
        parse_bert_config(&config.to_string(), Path::new("tiny config.json")).expect("tiny config parses");
    let varmap = VarMap::new();
    let vb = VarBuilder::from_varmap(&varmap, DType::F32, &Device::Cpu);
    BertModel::load(vb, &config).expect("initialise tiny bert");
    varmap.save(dir.join("model.safetensors")).expect("save tiny weights");
}

/// Writes only `config.json`, e.g. to test rejection of other architectures.
#[doc(hidden)]
pub fn write_config(dir: &Path, config: &Value) {
    write_json(&dir.join("config.json"), config);
}

pub fn tiny_config(vocab_size: usize) -> Value {
    json!({
        "architectures": ["BertModel"],
        "model_type": "bert",
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "hidden_size": 32,
        "initializer_range": 0.02,
        "intermediate_size": 64,
        "layer_norm_eps": 1e-12,
        "max_position_embeddings": TINY_MAX_POSITIONS,
        "num_attention_heads": 2,
        "num_hidden_layers": 2,
        "pad_token_id": 0,
        "position_embedding_type": "absolute",
        "type_vocab_size": 2,
        "vocab_size": vocab_size,
    })
}

fn tiny_vocab(extra: &[&str]) -> Vec<String> {
    let mut tokens: Vec<String> = SPECIALS.iter().map(|s| s.to_string()).collect();
    let singles = ('a'..='z').chain('0'..='9').map(String::from);
    let pieces = ('a'..='z').chain('0'..='9').map(|c| format!("##{c}"));
    let punct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~".chars().map(String::from);
    for token in singles.chain(pieces).chain(punct).chain(extra.iter().map(|s| s.to_string())) {
        if !tokens.contains(&token) {
            tokens.push(token);
        }
    }
    tokens
}

fn tiny_tokenizer(tokens: &[String]) -> Value {
    let vocab: serde_json::Map<String, Value> =
        tokens.iter().enumerate().map(|(i, t)| (t.clone(), json!(i))).collect();
    let id = |t: &str| tokens.iter().position(|x| x == t).expect("special token");
    let special = |t: &str| json!({"SpecialToken": {"id": t, "type_id": 0}});
    let special1 = |t: &str| json!({"SpecialToken": {"id": t, "type_id": 1}});
    let added: Vec<Value> = tokens
        .iter()
        .enumerate()
        .filter(|(_, t)| t.starts_with('[') && t.ends_with(']') && t.len() > 2)
        .map(|(i, t)| {
            json!({"id": i, "content": t, "single_word": false, "lstrip": false,
                   "rstrip": false, "normalized": false, "special": true})
        })
        .collect();
    json!({
        "version": "1.0",
        "truncation": {"direction": "Right", "max_length": 128, "strategy": "LongestFirst", "stride": 0},
        "padding": {"strategy": {"Fixed": 128}, "direction": "Right", "pad_to_multiple_of": null,
                    "pad_id": 0, "pad_type_id": 0, "pad_token": "[PAD]"},
        "added_tokens": added,
        "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
                       "strip_accents": null, "lowercase": true},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [special("[CLS]"), {"Sequence": {"id": "A", "type_id": 0}}, special("[SEP]")],
            "pair": [special("[CLS]"), {"Sequence": {"id": "A", "type_id": 0}}, special("[SEP]"),
                     {"Sequence": {"id": "B", "type_id": 1}}, special1("[SEP]")],
            "special_tokens": {
                "[CLS]": {"id": "[CLS]", "ids": [id("[CLS]")], "tokens": ["[CLS]"]},
                "[SEP]": {"id": "[SEP]", "ids": [id("[SEP]")], "tokens": ["[SEP]"]},
            }
        },
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": vocab},
    })
}

fn write_json(path: &Path, value: &Value) {
    let text = serde_json::to_string_pretty(value).expect("serialise json");
    std::fs::write(path, text).expect("write tiny model file");
}
