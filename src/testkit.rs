//! Test fixtures, compiled only into tests: a tiny random BERT written to disk like a real
//! checkpoint (tests exercise the real loading and embedding path in milliseconds) and a small
//! git repository with instances whose patches come from real `git diff`s.
//!
//! Not part of the library's API: unit tests reach it as `crate::testkit` (`#[cfg(test)]`),
//! integration tests include this same file with `#[path = "../src/testkit.rs"] mod testkit;`.
//! So it names the library `coret::` (lib.rs has `extern crate self as coret`) and uses only
//! public items. Everything panics on failure.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use candle_core::{DType, Device};
use candle_nn::{VarBuilder, VarMap};
use candle_transformers::models::bert::BertModel;
use serde_json::{json, Value};

use coret::eval::instances::Instance;
use coret::model::config::parse_bert_config;

const SPECIALS: [&str; 5] = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];
pub const TINY_MAX_POSITIONS: usize = 256;

/// Writes `config.json`, `tokenizer.json` and `model.safetensors` of a 2-layer, hidden-32
/// BERT into `dir`. The vocabulary holds the BERT specials, single letters, digits and
/// punctuation (so any ASCII text tokenises), then `vocab` (e.g. whole words, `[DOWN]`).
/// Like all-MiniLM's, the tokenizer file pads and truncates to a fixed 128.
pub fn write_tiny_bert(dir: &Path, vocab: &[&str]) {
    write_bert(dir, vocab, None);
}

/// [`write_tiny_bert`] with weights drawn from `seed` instead of the thread's RNG, so every
/// run (and every machine) embeds alike: for snapshot tests and the TUI demo.
pub fn write_seeded_bert(dir: &Path, vocab: &[&str], seed: u64) {
    write_bert(dir, vocab, Some(seed));
}

fn write_bert(dir: &Path, vocab: &[&str], seed: Option<u64>) {
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
    if let Some(seed) = seed {
        reseed(&varmap, seed);
    }
    varmap.save(dir.join("model.safetensors")).expect("save tiny weights");
}

/// Redraws every weight but the layer norms' (ones and zeros, as initialised) from a
/// splitmix64 stream keyed by `seed` and the tensor's name, uniform in ±0.1.
fn reseed(varmap: &VarMap, seed: u64) {
    let vars = varmap.data().lock().expect("varmap lock");
    for (name, var) in vars.iter().filter(|(name, _)| !name.contains("LayerNorm")) {
        let mut state = name.bytes().fold(seed, |h, b| h.rotate_left(5) ^ u64::from(b));
        let values: Vec<f32> = (0..var.elem_count())
            .map(|_| {
                state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
                let mut z = state;
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                z ^= z >> 31;
                ((z >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 0.2
            })
            .collect();
        let tensor = candle_core::Tensor::from_vec(values, var.shape(), &Device::Cpu).expect("seeded tensor");
        var.set(&tensor).expect("set seeded weights");
    }
}

/// Writes only `config.json`, e.g. to test rejection of other architectures.
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

pub struct Fixture {
    pub tmp: tempfile::TempDir,
    pub repos: PathBuf,
    pub model: PathBuf,
    pub instances: Vec<Instance>,
}

const WORDS: &[&str] = &["def", "return", "self", "class", "load", "save", "parse", "config", "value"];

/// Runs git in `dir` with a fixed identity and returns its stdout; panics on failure
/// (test fixtures only: unit tests, integration tests).
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

const FILES: &[(&str, &str)] = &[
    (
        "pkg/config.py",
        "def load_config(path):\n    return parse_value(path)\n\n\ndef save_config(path, value):\n    \
         return value\n\n\ndef parse_value(text):\n    return text.strip()\n",
    ),
    (
        "pkg/model.py",
        "class Model:\n    def __init__(self):\n        self.value = 1\n\n    def load(self, path):\n        \
         return load_config(path)\n\n    def save(self):\n        return self.value\n",
    ),
    (
        "pkg/util.py",
        "def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n\n\ndef mean(xs):\n    return sum(xs) / \
         len(xs)\n\n\ndef total(xs):\n    return sum(xs)\n\n\ndef first(xs):\n    return xs[0]\n",
    ),
];

/// (file, old line, new line, issue text) of each instance's fix.
const FIXES: &[(&str, &str, &str, &str)] = &[
    ("pkg/config.py", "    return text.strip()", "    return text.strip().lower()", "parse value keeps case"),
    ("pkg/util.py", "    return max(lo, min(x, hi))", "    return min(hi, max(x, lo))", "clamp order wrong"),
    ("pkg/model.py", "        return self.value", "        return self.value + 0", "model save value"),
    ("pkg/util.py", "    return sum(xs) / len(xs)", "    return sum(xs) / max(1, len(xs))", "mean of empty"),
    ("pkg/util.py", "    return xs[0]", "    return xs[0] if xs else None", "first of empty list"),
    ("pkg/config.py", "    return value", "    return value or path", "save config returns"),
];

/// Writes the fixture; panics on failure (tests only).
pub fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let model = tmp.path().join("model");
    write_tiny_bert(&model, WORDS);
    let repos = tmp.path().join("repos");
    let work = repos.join("acme+proj");
    std::fs::create_dir_all(work.join("pkg")).unwrap();
    git(&work, &["init", "-q"]);
    for (path, text) in FILES {
        std::fs::write(work.join(path), text).unwrap();
    }
    std::fs::write(work.join("README.md"), "# proj\n").unwrap();
    git(&work, &["add", "."]);
    git(&work, &["commit", "-q", "-m", "base"]);
    let base = git(&work, &["rev-parse", "HEAD"]).trim().to_string();
    let mut instances = Vec::new();
    let mut make = |id: String, repo: &str, file: &str, old: &str, new: &str, issue: &str| {
        let path = work.join(file);
        let before = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, before.replacen(old, new, 1)).unwrap();
        let patch = git(&work, &["diff"]);
        std::fs::write(&path, before).unwrap();
        instances.push(Instance {
            instance_id: id,
            repo: repo.to_string(),
            base_commit: base.clone(),
            problem_statement: issue.to_string(),
            patch,
            hints_text: None,
            created_at: None,
            language: None,
        });
    };
    for (i, (file, old, new, issue)) in FIXES.iter().enumerate() {
        make(format!("proj-{i}"), "acme/proj", file, old, new, issue);
    }
    make("proj-readme".into(), "acme/proj", "README.md", "# proj", "# proj!", "typo in readme");
    make("gone-1".into(), "acme/gone", "pkg/util.py", "return xs[0]", "return xs[1]", "x");
    Fixture { tmp, repos, model, instances }
}

/// `n` reproducible pseudo-random values in [-0.5, 0.5) (xorshift64 from `seed`).
pub fn noise(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        })
        .collect()
}

/// A static table over [`write_tiny_bert`]'s vocabulary and `vocab`: each token's row a
/// pseudo-random vector of width `dim` drawn from its id (nearly orthogonal to the others), so
/// that texts sharing tokens are near. For the static tier's tests.
pub fn tiny_static_table(vocab: &[&str], dim: usize) -> coret::model::static_tier::StaticTable {
    let dir = tempfile::tempdir().expect("tempdir");
    write_tiny_bert(dir.path(), vocab);
    let json = std::fs::read_to_string(dir.path().join("tokenizer.json")).expect("tiny tokenizer");
    let n = tiny_vocab(vocab).len();
    let mut state = 0x5EED_u64;
    let rows: Vec<f32> = (0..n * dim)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        })
        .collect();
    coret::model::static_tier::StaticTable::from_rows(&rows, dim, &json, "tiny", "test")
        .expect("tiny table")
        .0
}
