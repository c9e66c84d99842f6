//! `--bench static PATH`: the static tier's speed on a repository's chunks beside the
//! tokenizer's (`--bench embed` measures the transformer on the same chunks), and
//! `--bench static-scale N`: a flat search over N vectors (f32 and int8 with a float rescoring
//! of the int8 top 1,000), its memory and the update of one edited file's chunks.

use super::args::Args;
use coret::engine::{IndexOptions, RepoIndex};
use coret::model::static_tier::StaticTable;
use coret::progress::NoProgress;
use rayon::prelude::*;
use std::time::Instant;

pub fn run(args: &Args) -> anyhow::Result<()> {
    let table = super::model::load_static(args)?;
    let opts = IndexOptions { no_cache: true, ..super::query::index_options(args) };
    let t = Instant::now();
    let index = RepoIndex::open(&args.path, &opts, &NoProgress)?;
    let index_s = t.elapsed().as_secs_f64();
    let texts: Vec<&str> = index.chunks.iter().map(|c| c.text.as_str()).collect();
    println!(
        "benchmark: static {} ({} chunks; structure + BM25 in {index_s:.2} s; {} threads)",
        args.path.display(),
        texts.len(),
        rayon::current_num_threads()
    );
    // The tokenizer alone, as the transformer's pipeline runs it (every text whole).
    let tok = table.words().tokenizer();
    let t = Instant::now();
    let tokens: usize = texts.par_iter().map(|x| tok.encode(*x, false).map(|e| e.len()).unwrap_or(0)).sum();
    let s = t.elapsed().as_secs_f64();
    println!(
        "tokenizer      : {:>9.0} chunks/s {:>10.0} tokens/s",
        texts.len() as f64 / s,
        tokens as f64 / s
    );
    // A fresh table (empty word memo), then again with every word remembered.
    let fresh = match &args.static_table {
        Some(p) => StaticTable::load(p)?,
        None => StaticTable::builtin()?,
    };
    for label in ["static (cold)", "static (warm)"] {
        let t = Instant::now();
        let vectors = fresh.embed_all(&texts)?;
        let s = t.elapsed().as_secs_f64();
        println!(
            "{label:<15}: {:>9.0} chunks/s {:>10.0} tokens/s ({} vectors in {s:.2} s)",
            texts.len() as f64 / s,
            tokens as f64 / s,
            vectors.len()
        );
    }
    // The whole first index of a never-indexed checkout with the static tier: structure, BM25
    // and every chunk's static vector, no cache (what `--query --dense static` does cold).
    let t = Instant::now();
    let index = RepoIndex::open(&args.path, &opts, &NoProgress)?;
    let searcher = coret::rank::searcher::Searcher::bm25_only(std::sync::Arc::new(index));
    let searcher = searcher.with_static(table, super::model::dense_options(args))?;
    println!(
        "cold index with the static tier: {:.2} s ({} chunks in the dense index)",
        t.elapsed().as_secs_f64(),
        searcher.dense.as_ref().map_or(0, |d| d.len())
    );
    Ok(())
}

/// `--bench static-scale`: `--top N` vectors (default 1,000,000) of the table's width.
pub fn scale(args: &Args) -> anyhow::Result<()> {
    let n = if args.top == 20 { 1_000_000 } else { args.top };
    let dim = super::model::load_static(args)?.dim();
    let rss0 = super::peak_rss::peak_rss_mib();
    let t = Instant::now();
    // Random unit vectors: their search cost is the same as real ones'.
    let mut matrix: Vec<f32> = (0..n * dim)
        .into_par_iter()
        .map(|i| {
            // splitmix64 of the index: independent components, so rows are not collinear.
            let mut z = (i as u64).wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        })
        .collect();
    matrix.par_chunks_mut(dim).for_each(coret::model::static_tier::normalise);
    let fill = t.elapsed().as_secs_f64();
    let query: Vec<f32> = matrix[..dim].to_vec();
    let index = coret::index::dense::DenseIndex::from_matrix(dim, matrix);
    let mut f32_ms = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let hits = index.search(&query, 10);
        f32_ms.push(t.elapsed().as_secs_f64() * 1e3);
        anyhow::ensure!(hits.first().is_some_and(|h| h.chunk == 0), "row 0 is its own nearest neighbour");
    }
    let t = Instant::now();
    let q8 = coret::index::dense::Int8Index::from_index(&index);
    let quantise = t.elapsed().as_secs_f64();
    let mut i8_ms = Vec::new();
    let mut agree = 0;
    for _ in 0..5 {
        let t = Instant::now();
        let hits = q8.search_rescored(&index, &query, 10, 1000);
        i8_ms.push(t.elapsed().as_secs_f64() * 1e3);
        agree = hits.iter().zip(index.search(&query, 10)).filter(|(a, b)| a.chunk == b.chunk).count();
    }
    // One edited file: its few chunks' vectors replaced in place.
    let t = Instant::now();
    let mut index = index;
    for row in 0..20 {
        index.set_row(row * 997, &query);
    }
    let update_ms = t.elapsed().as_secs_f64() * 1e3;
    let med = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!("benchmark: static-scale {n} vectors x {dim} ({} threads)", rayon::current_num_threads());
    println!(
        "fill {fill:.2} s; f32 matrix {:.0} MiB, int8 copy {:.0} MiB",
        (n * dim * 4) as f64 / 1048576.0,
        (n * dim) as f64 / 1048576.0
    );
    println!("search f32 exact : median {:.1} ms of 5", med(&mut f32_ms));
    println!("search int8 + f32 rescoring of its top 1,000: median {:.1} ms of 5 (quantised in {quantise:.2} s; top 10 agrees with exact on {agree}/10)", med(&mut i8_ms));
    println!("update of 20 chunks' vectors: {update_ms:.3} ms");
    println!("peak RSS {:.0} MiB (before: {rss0:.0} MiB)", super::peak_rss::peak_rss_mib());
    Ok(())
}
