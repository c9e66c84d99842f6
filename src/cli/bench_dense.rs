//! Dense benchmarks.
//!
//! `--bench embed PATH`: embeds the first `--bench-chunks` chunks of PATH (chunk text only, so
//! that sentence-transformers sees exactly the same inputs) and prints, on the same inputs, the
//! tokenizer stage's tokens/s (every core and one thread), the forward pass's alone, and the
//! pipeline's with where its time went, then chunks/s, tokens/s and peak RSS; with `--st-python PY` it then runs `scripts/bench/bench_sentence_transformers.py` on
//! the same texts, model, max length and batch size, side by side.
//!
//! `--bench query PATH`: latency of embedding a query (short, medium, long) plus an exact
//! search over 50,000 chunk vectors.

use super::args::Args;
use super::peak_rss::peak_rss_mib;
use coret::engine::RepoIndex;
use coret::index::dense::{DenseIndex, VectorStore};
use coret::model::bench::{bench_stages, write_bench_texts};
use coret::model::EncoderInput;
use coret::progress::NoProgress;
use rand::{Rng, SeedableRng};
use std::process::Command;
use std::time::Instant;

pub fn embed(args: &Args) -> anyhow::Result<()> {
    let m = super::model::load(args)?;
    let opts = super::query::index_options(args);
    let index = RepoIndex::open(&args.path, &opts, &NoProgress)?;
    let inputs: Vec<EncoderInput> =
        index.chunks.iter().take(args.bench_chunks).map(|c| EncoderInput::new(c.text.clone())).collect();
    let dir = tempfile::tempdir()?;
    let texts = dir.path().join("texts.jsonl");
    write_bench_texts(&texts, &inputs)?;
    println!(
        "benchmark: embed {} chunks of {} (max_len {}, batch {}, device {}, {} threads)",
        inputs.len(),
        args.path.display(),
        args.max_len,
        args.batch_size,
        m.device,
        rayon::current_num_threads()
    );
    let stages = bench_stages(&m.towers.chunk, &inputs)?;
    println!("{stages}");
    println!(
        "coret ({} forward): {}; peak_rss_mib {:.1}",
        m.towers.chunk.forward_name(),
        stages.pipeline,
        peak_rss_mib()
    );
    if let Some(py) = &args.st_python {
        let model_dir = coret::model::resolve_model_dir(args.model.as_deref(), &super::model::log_line)?;
        // The source tree this binary was built from, else the current directory (a binary
        // copied to another machine runs from a checkout there).
        let script = [env!("CARGO_MANIFEST_DIR"), "."]
            .iter()
            .map(|root| std::path::Path::new(root).join("scripts/bench/bench_sentence_transformers.py"))
            .find(|p| p.is_file())
            .ok_or_else(|| anyhow::anyhow!("scripts/bench/bench_sentence_transformers.py not found"))?;
        let st_device = if m.device.starts_with("cuda") { "cuda" } else { "cpu" };
        // f32 is the reference; with bf16 products also sentence-transformers in bf16, so
        // the like-for-like ratio is in the same run.
        let mut dtypes = vec!["f32"];
        // sentence-transformers in bf16 wherever the hardware has bf16 products (torch uses
        // AMX tiles where the CPU has them), whatever precision this run's encoder chose: the
        // #48 goal is measured against the faster of the two.
        if m.towers.chunk.precision() == coret::model::Precision::Bf16 || coret::model::bf16::supported() {
            dtypes.push("bf16");
        }
        for dtype in dtypes {
            let out = Command::new(py)
                .arg(&script)
                .arg(&texts)
                .arg("--model")
                .arg(&model_dir)
                .args(["--max-seq-length", &args.max_len.to_string()])
                .args(["--batch-size", &args.batch_size.to_string()])
                .args(["--threads", &rayon::current_num_threads().to_string()])
                .args(["--device", st_device, "--dtype", dtype])
                .output()?;
            let text = String::from_utf8_lossy(&out.stdout);
            if !out.status.success() {
                anyhow::bail!(
                    "sentence-transformers benchmark failed: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                );
            }
            println!("sentence-transformers: {}", text.trim());
        }
    }
    Ok(())
}

/// The index sizes `--bench query` measures: a large repository, and a 100,000-chunk one
/// (Django or Home Assistant core) whose exact search must stay within a query's budget.
const QUERY_CHUNKS: [usize; 2] = [50_000, 100_000];

pub fn query(args: &Args) -> anyhow::Result<()> {
    let m = super::model::load(args)?;
    for n in QUERY_CHUNKS {
        query_over(&m, args, n)?;
    }
    Ok(())
}

fn query_over(m: &super::model::LoadedModel, args: &Args, n: usize) -> anyhow::Result<()> {
    let dim = m.towers.chunk.dim();
    // Random unit vectors: search cost depends on the count and dimension, not the values.
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let mut store = VectorStore::in_memory(dim);
    let mut keys = Vec::with_capacity(n);
    for batch in 0..(n / 1000) {
        let mut bk = Vec::new();
        let mut bv = Vec::new();
        for i in 0..1000 {
            let mut key = [0u8; 16];
            key[..8].copy_from_slice(&((batch * 1000 + i) as u64).to_le_bytes());
            let v: Vec<f32> = (0..dim).map(|_| rng.random::<f32>() - 0.5).collect();
            let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            bk.push(key);
            bv.push(v.iter().map(|x| x / n).collect());
        }
        store.add_batch(&bk, &bv)?;
        keys.extend(bk);
    }
    let index = DenseIndex::from_store(&store, &keys)?;
    let sentence = "Session.send ignores the proxies from the environment when trust_env is set. ";
    println!(
        "benchmark: query latency over {n} chunks (dim {dim}, device {}, query max_len {})",
        m.device, args.query_max_len
    );
    for words in [1usize, 8, 40] {
        let text = sentence.repeat(words);
        let tokens = m.towers.chunk.input_tokenizer().query(&text, args.query_max_len)?.len();
        let mut times = Vec::new();
        for _ in 0..7 {
            let t = Instant::now();
            // The encoder itself: the towers would answer a repeated text from their cache.
            let q = m.towers.chunk.embed_queries_with_len(std::slice::from_ref(&text), args.query_max_len)?;
            let hits = index.search(&q[0], 20);
            times.push(t.elapsed().as_secs_f64() * 1000.0);
            assert_eq!(hits.len(), 20);
        }
        times.sort_by(f64::total_cmp);
        println!(
            "  query of {tokens:>3} tokens: embed + search median {:.1} ms (min {:.1})",
            times[3], times[0]
        );
    }
    let q = vec![1.0 / (dim as f32).sqrt(); dim];
    let mut times = Vec::new();
    for _ in 0..7 {
        let t = Instant::now();
        let _ = index.search(&q, 20);
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    println!("  search only: median {:.2} ms", times[3]);
    Ok(())
}
