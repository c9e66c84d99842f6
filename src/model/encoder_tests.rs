//! Encoder tests on a tiny random BERT written to a temp dir (the real loading path).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use super::*;
use crate::progress::NoProgress;
use crate::progress::{Phase, Progress};
use crate::testkit::{tiny_config, write_config, write_tiny_bert};

fn tiny(vocab: &[&str], opts: EncoderOptions) -> (tempfile::TempDir, Encoder) {
    let dir = tempfile::tempdir().unwrap();
    write_tiny_bert(dir.path(), vocab);
    let enc = Encoder::load(dir.path(), &Device::Cpu, opts).unwrap();
    (dir, enc)
}

fn small_batches() -> EncoderOptions {
    EncoderOptions { max_len: 64, batch_size: 4, ..Default::default() }
}

fn input(chunk: &str, neighbours: &[&str]) -> EncoderInput {
    EncoderInput { chunk: chunk.to_string(), neighbours: neighbours.iter().map(|s| s.to_string()).collect() }
}

fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

fn norm(v: &[f32]) -> f32 {
    v.iter().map(|x| x * x).sum::<f32>().sqrt()
}

#[test]
fn padding_does_not_change_a_vector() {
    let (_d, enc) = tiny(&["load", "config"], EncoderOptions { batch_size: 8, ..small_batches() });
    let short = "load config".to_string();
    let long = "load the config file from disk and parse every line of it ".repeat(3);
    let alone = enc.embed_queries(std::slice::from_ref(&short)).unwrap();
    let batched = enc.embed_queries(&[long, short]).unwrap();
    assert!(max_diff(&alone[0], &batched[1]) < 1e-5);
}

#[test]
fn vectors_are_unit_length_and_in_input_order() {
    let (_d, enc) = tiny(&[], small_batches());
    let texts: Vec<String> =
        ["x", "a much longer text with many more tokens than the others", "", "b c", "d e f g"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    let all = enc.embed_queries(&texts).unwrap();
    assert_eq!(all.len(), texts.len());
    for (text, vector) in texts.iter().zip(&all) {
        assert_eq!(vector.len(), enc.dim());
        assert!((norm(vector) - 1.0).abs() < 1e-5, "{text:?}");
        let one = enc.embed_queries(std::slice::from_ref(text)).unwrap();
        assert!(max_diff(&one[0], vector) < 1e-5, "{text:?} moved in the batch");
    }
}

#[test]
fn empty_text_embeds() {
    let (_d, enc) = tiny(&[], small_batches());
    let v = enc.embed_inputs(&[input("", &[])], &NoProgress).unwrap();
    assert!((norm(&v[0]) - 1.0).abs() < 1e-5);
    assert!(v[0].iter().all(|x| x.is_finite()));
}

#[test]
fn inputs_without_neighbours_embed_like_queries() {
    let (_d, enc) = tiny(&[], small_batches());
    let text = "def f(x): return x".to_string();
    let q = enc.embed_queries(std::slice::from_ref(&text)).unwrap();
    let c = enc.embed_inputs(&[input(&text, &[])], &NoProgress).unwrap();
    assert!(max_diff(&q[0], &c[0]) < 1e-6);
}

#[test]
fn neighbours_and_their_order_matter() {
    let (_d, enc) = tiny(&["[DOWN]"], small_batches());
    let vs = enc
        .embed_inputs(
            &[
                input("def f(): g() h()", &[]),
                input("def f(): g() h()", &["def g(): 1", "def h(): 2"]),
                input("def f(): g() h()", &["def h(): 2", "def g(): 1"]),
            ],
            &NoProgress,
        )
        .unwrap();
    assert!(max_diff(&vs[0], &vs[1]) > 1e-3);
    assert!(max_diff(&vs[1], &vs[2]) > 1e-3);
}

#[test]
fn long_inputs_are_cut_to_max_len() {
    let opts = EncoderOptions { max_len: 200, ..small_batches() };
    let (_d, enc) = tiny(&[], opts);
    // The shipped tokenizer.json pads and truncates to 128; ours must not.
    assert_eq!(enc.tokenize_query("a b").unwrap().len(), 4);
    let long = "word ".repeat(3000);
    let tokens = enc.tokenize_input(&input(&long, &[&long])).unwrap();
    assert_eq!(tokens.len(), 200);
    let prefix = "word ".repeat(198);
    let v = enc.embed_queries(&[long, prefix]).unwrap();
    assert!(max_diff(&v[0], &v[1]) < 1e-5);
}

#[test]
fn queries_can_have_their_own_max_len() {
    let (_d, enc) = tiny(&[], small_batches());
    let words: Vec<String> = (0..300).map(|i| ((b'a' + (i % 26) as u8) as char).to_string()).collect();
    let long = words.join(" ");
    let at_64 = enc.embed_queries(std::slice::from_ref(&long)).unwrap();
    let at_200 = enc.embed_queries_with_len(std::slice::from_ref(&long), 200).unwrap();
    // 198 words + [CLS] + [SEP] = 200 tokens: the cut the long query gets.
    let prefix = words[..198].join(" ");
    let prefix_at_200 = enc.embed_queries_with_len(&[prefix], 200).unwrap();
    assert!(max_diff(&at_200[0], &prefix_at_200[0]) < 1e-5);
    assert!(max_diff(&at_64[0], &at_200[0]) > 1e-4);
}

#[test]
fn max_len_is_clamped_to_the_models_positions() {
    let opts = EncoderOptions { max_len: 100_000, ..small_batches() };
    let (_d, enc) = tiny(&[], opts);
    let limit = crate::testkit::TINY_MAX_POSITIONS;
    assert_eq!(enc.max_len(), limit);
    let v = enc.embed_queries(&["z ".repeat(limit * 2)]).unwrap();
    assert!((norm(&v[0]) - 1.0).abs() < 1e-5);
}

#[test]
fn forward_pooled_is_a_unit_batch() {
    let (_d, enc) = tiny(&[], small_batches());
    let batch = vec![enc.tokenize_query("a").unwrap(), enc.tokenize_query("b c d").unwrap()];
    let t = enc.forward_pooled(&batch).unwrap();
    assert_eq!(t.dims(), &[2, enc.dim()]);
    let rows = t.to_vec2::<f32>().unwrap();
    assert!(rows.iter().all(|r| (norm(r) - 1.0).abs() < 1e-5));
}

struct Recorder {
    reports: Mutex<Vec<(usize, usize)>>,
    cancel_after: usize,
    calls: AtomicUsize,
}

impl Progress for Recorder {
    fn report(&self, phase: Phase, done: usize, total: usize) {
        assert_eq!(phase, Phase::Embed);
        self.reports.lock().unwrap().push((done, total));
    }
    fn cancelled(&self) -> bool {
        self.calls.fetch_add(1, Ordering::SeqCst) >= self.cancel_after
    }
}

#[test]
fn progress_reaches_total_and_cancel_stops() {
    let (_d, enc) = tiny(&[], EncoderOptions { batch_size: 2, ..small_batches() });
    let inputs: Vec<EncoderInput> = (0..7).map(|i| input(&"t ".repeat(i + 1), &[])).collect();
    let rec = Recorder { reports: Mutex::new(Vec::new()), cancel_after: usize::MAX, calls: 0.into() };
    enc.embed_inputs(&inputs, &rec).unwrap();
    let reports = rec.reports.lock().unwrap().clone();
    assert_eq!(reports.last(), Some(&(7, 7)));
    assert!(reports.windows(2).all(|w| w[0].0 <= w[1].0));

    let rec = Recorder { reports: Mutex::new(Vec::new()), cancel_after: 2, calls: 0.into() };
    let err = enc.embed_inputs(&inputs, &rec).unwrap_err();
    assert!(matches!(err, Error::Cancelled), "{err}");
    assert!(rec.reports.lock().unwrap().iter().all(|&(done, _)| done < 7));
}

#[test]
fn model_id_names_dir_and_weights() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("tiny-model");
    write_tiny_bert(&model, &[]);
    let enc = Encoder::load(&model, &Device::Cpu, small_batches()).unwrap();
    let id = enc.model_id();
    let digest = crate::model::weights::sha256_file(&model.join("model.safetensors")).unwrap();
    assert_eq!(id, format!("tiny-model-{}", &digest[..12]));
    assert!(enc.fingerprint().starts_with(&id) && enc.fingerprint().contains("len64"));
}

#[test]
fn unsupported_architecture_is_named() {
    let dir = tempfile::tempdir().unwrap();
    write_tiny_bert(dir.path(), &[]);
    let mut config = tiny_config(100);
    config["model_type"] = "gpt2".into();
    config["architectures"] = serde_json::json!(["GPT2LMHeadModel"]);
    write_config(dir.path(), &config);
    let err = Encoder::load(dir.path(), &Device::Cpu, small_batches()).err().unwrap().to_string();
    assert!(err.contains("config.json") && err.contains("gpt2"), "{err}");
}

#[test]
fn tokenizer_larger_than_embedding_table_is_rejected() {
    // E.g. training added [DOWN] to the tokenizer but did not grow the embeddings.
    let dir = tempfile::tempdir().unwrap();
    write_tiny_bert(dir.path(), &[]);
    let tokenizer = Tokenizer::from_file(dir.path().join("tokenizer.json")).unwrap();
    let config = crate::model::config::parse_bert_config(
        &tiny_config(10).to_string(),
        std::path::Path::new("config.json"),
    )
    .unwrap();
    let varmap = candle_nn::VarMap::new();
    let vb = VarBuilder::from_varmap(&varmap, DType::F32, &Device::Cpu);
    let bert = BertModel::load(vb, &config).unwrap();
    let err = Encoder::from_parts(bert, tokenizer, config, Device::Cpu, small_batches(), "t".into())
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("vocab_size"), "{err}");
}

#[test]
fn missing_weights_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    write_tiny_bert(dir.path(), &[]);
    std::fs::remove_file(dir.path().join("model.safetensors")).unwrap();
    let err = Encoder::load(dir.path(), &Device::Cpu, small_batches()).err().unwrap().to_string();
    assert!(err.contains("model.safetensors"), "{err}");
}

#[test]
fn encoder_can_move_to_an_indexing_thread() {
    fn shareable<T: Send + Sync>() {}
    shareable::<Encoder>();
}

/// Weights edited in place, same size and mtime: the fingerprint (and so every vector cache
/// key) changes, because it hashes the bytes loaded, not the file's stamp.
#[test]
fn weights_edited_in_place_with_size_and_mtime_kept_get_a_new_fingerprint() {
    let (dir, before) = tiny(&["alpha"], EncoderOptions::default());
    let path = dir.path().join("model.safetensors");
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1; // inside the last tensor's data
    bytes[last] ^= 0x01;
    std::fs::write(&path, &bytes).unwrap();
    std::fs::File::options().write(true).open(&path).unwrap().set_modified(mtime).unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), mtime);
    let after = Encoder::load(dir.path(), &Device::Cpu, EncoderOptions::default()).unwrap();
    assert_ne!(before.fingerprint(), after.fingerprint());
}

#[test]
fn trained_files_match_the_weights_by_hash_not_by_directory_name() {
    let default = "all-MiniLM-L6-v2-53aa51172d14";
    assert!(same_weights(default, default));
    assert!(same_weights(default, "minilm-53aa51172d14"), "another directory, the same weights");
    assert!(same_weights(default, "snapshots-53aa51172d14"));
    assert!(!same_weights(default, "all-MiniLM-L6-v2-0123456789ab"), "the same name, other weights");
    assert!(!same_weights(default, "model"));
}

/// Incremental = clean to the bit (issue 73): a chunk's vector must not depend on the batch
/// it was computed in (an edit, a resume or a read-only cache batch it otherwise than a clean
/// build), in f32, bf16 and int8 (where the CPU has them; elsewhere they run f32).
#[test]
fn a_vector_is_the_same_bits_alone_and_in_batches_of_other_lengths() {
    for precision in [Precision::F32, Precision::Bf16, Precision::Int8] {
        let opts = EncoderOptions { batch_size: 8, precision, ..small_batches() };
        let (_d, enc) = tiny(&["load", "config", "parse"], opts);
        let target = "load config and parse it".to_string();
        let others: Vec<String> = vec![
            "parse ".repeat(40),
            "x".into(),
            "load the config file from disk and parse every line of it ".repeat(2),
            "config".into(),
            "".into(),
        ];
        let alone = enc.embed_queries(std::slice::from_ref(&target)).unwrap().remove(0);
        for n in 1..=others.len() {
            let mut batch: Vec<String> = others[..n].to_vec();
            batch.insert(n / 2, target.clone());
            let vectors = enc.embed_queries(&batch).unwrap();
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&vectors[n / 2]), bits(&alone), "{precision}: batch of {} moved it", n + 1);
        }
    }
}
