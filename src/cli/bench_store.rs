//! `--bench store-scale --store URL --repos MIRRORS --out DIR [--top N] [--bench-queries FILE]`:
//! the team's store at scale (issue 71, item 5). N vectors (default 1,000,000) of real chunks
//! from the mirrors' repositories (HEAD, then older commits, distinct chunks only) embedded by
//! the static tier (the transformer would take hours here; the width is the same, 384); then,
//! for each size in 10k, 100k, … N: the insert rate through the store's own write path, the
//! HNSW build's time, size and the server process's peak memory, recall@10 of the server's
//! search ([`SharedVectors::nearest`]) against an exact f32 search, and its latency p50/p99
//! with 8 clients at once. Queries are the issue texts of FILE (a .jsonl with
//! `problem_statement`), else held-out chunks. The vectors are kept in DIR, so a rerun skips
//! the embedding.

use super::args::Args;
use super::Usage;
use coret::index::dense::{vector_key, DenseIndex, VectorKey};
use coret::index::shared::SharedVectors;
use std::collections::HashSet;
use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

const DIM: usize = 384;
const CLIENTS: usize = 8;
const QUERIES: usize = 200;
/// Each client's searches in the latency run.
const PER_CLIENT: usize = 50;

pub fn run(args: &Args) -> anyhow::Result<()> {
    let url = args.store.as_deref().ok_or_else(|| Usage("--bench store-scale needs --store URL".into()))?;
    let out = args.out.clone().ok_or_else(|| Usage("--bench store-scale needs --out DIR".into()))?;
    let mirrors = args.repos.clone().ok_or_else(|| Usage("--bench store-scale needs --repos DIR".into()))?;
    let n = if args.top == 20 { 1_000_000 } else { args.top };
    std::fs::create_dir_all(&out)?;
    let table = super::model::load_static(args)?;
    anyhow::ensure!(table.dim() == DIM, "the static table is {} wide; this benchmark is {DIM}", table.dim());
    let (keys, matrix) = real_vectors(&table, &mirrors, &out, n)?;
    let queries = query_vectors(&table, args.bench_queries.as_deref(), &matrix)?;
    println!("benchmark: store-scale, {} real chunk vectors x {DIM}, {} queries", keys.len(), queries.len());
    let store = SharedVectors::connect(url, None)?;
    let sizes = match args.bench_sizes.is_empty() {
        true => vec![10_000, 100_000, 1_000_000],
        false => args.bench_sizes.clone(),
    };
    println!("HNSW {:?}; {CLIENTS} clients x {PER_CLIENT} searches each for the latency", args.bench_hnsw);
    for size in sizes.into_iter().map(|s| s.min(keys.len())) {
        step(&store, url, &keys[..size], &matrix[..size * DIM], &queries, args.bench_hnsw)?;
    }
    Ok(())
}

/// One size: insert, build, recall, latency; one table row on stdout.
fn step(
    store: &SharedVectors,
    url: &str,
    keys: &[VectorKey],
    matrix: &[f32],
    queries: &[Vec<f32>],
    hnsw: coret::index::shared::HnswParams,
) -> anyhow::Result<()> {
    let n = keys.len();
    let tower = format!("bench-scale-{n}");
    let mut admin = connect(url)?;
    // A bulk load: no index of this tower yet (an index left by an earlier run would be kept up
    // row by row, the live rate measured below).
    let (index_name, _) = coret::index::shared::search_index_sql(&tower, DIM, hnsw);
    admin.batch_execute(&format!("DROP INDEX IF EXISTS {index_name}"))?;
    admin.execute("DELETE FROM coret_vectors WHERE tower = $1", &[&tower])?;
    let insert_s = put_rows(store, &tower, keys, matrix, 0..n)?;
    // The build in this connection, so its peak memory is this backend's.
    let pid: i32 = admin.query_one("SELECT pg_backend_pid()", &[])?.get(0);
    admin.batch_execute("SET maintenance_work_mem = '3GB'; SET max_parallel_maintenance_workers = 1")?;
    let t = Instant::now();
    build_index(&mut admin, &tower, hnsw)?;
    let build_s = t.elapsed().as_secs_f64();
    let peak_mib = peak_rss_of(pid);
    let size_mib: i64 = admin.query_one("SELECT pg_relation_size(to_regclass($1))", &[&index_name])?.get(0);
    // Writes with the index live: the last 2,000 rows deleted and written again (a new tuple
    // each, added to the graph as a team's writes would be).
    let live = n.saturating_sub(2_000)..n;
    let gone: Vec<&[u8]> = keys[live.clone()].iter().map(|k| k.as_slice()).collect();
    admin.execute("DELETE FROM coret_vectors WHERE tower = $1 AND key = ANY($2)", &[&tower, &gone])?;
    let live_s = put_rows(store, &tower, keys, matrix, live.clone())?;
    // Exact top 10 by f32 cosine here.
    let exact = DenseIndex::from_matrix(DIM, matrix.to_vec());
    let truth: Vec<Vec<u32>> =
        queries.iter().map(|q| exact.search(q, 10).iter().map(|h| h.chunk).collect()).collect();
    let row_of: std::collections::HashMap<VectorKey, u32> =
        keys.iter().zip(0u32..).map(|(k, i)| (*k, i)).collect();
    let mut cells = Vec::new();
    // One bit a dimension orders candidates coarsely: it needs more of them.
    let tried: &[usize] = match hnsw.quant {
        coret::index::shared::Quant::Half => &[40, 64, 100, 150, 200],
        coret::index::shared::Quant::Bit => &[200, 400, 800],
    };
    for &candidates in tried {
        let mut found = 0usize;
        for (q, want) in queries.iter().zip(&truth) {
            let got = store
                .nearest(&tower, q, 10, candidates, hnsw.quant)
                .ok_or_else(|| anyhow::anyhow!("the store stopped answering"))?;
            let got: HashSet<u32> = got.iter().filter_map(|(k, _)| row_of.get(k).copied()).collect();
            found += want.iter().filter(|w| got.contains(w)).count();
        }
        let recall = found as f64 / (queries.len() * 10) as f64;
        let (p50, p99) = latency(url, &tower, queries, candidates, hnsw.quant)?;
        cells.push(format!("ef {candidates}: recall@10 {recall:.3}, p50 {p50:.1} ms, p99 {p99:.1} ms"));
    }
    println!(
        "{n:>9} vectors | insert {insert_s:.1} s ({:.0}/s; with the index live {:.0}/s) | HNSW build {build_s:.1} s, index {:.0} MiB, backend peak RSS {peak_mib:.0} MiB | {}",
        n as f64 / insert_s,
        live.len() as f64 / live_s,
        size_mib as f64 / 1048576.0,
        cells.join(" | ")
    );
    Ok(())
}

/// Writes `rows` of the vectors through the store's own write path; seconds.
fn put_rows(
    store: &SharedVectors,
    tower: &str,
    keys: &[VectorKey],
    matrix: &[f32],
    rows: std::ops::Range<usize>,
) -> anyhow::Result<f64> {
    let t = Instant::now();
    for part in rows.collect::<Vec<_>>().chunks(10_000) {
        let batch: Vec<(VectorKey, Vec<f32>)> =
            part.iter().map(|&i| (keys[i], matrix[i * DIM..(i + 1) * DIM].to_vec())).collect();
        store.put(tower, &batch);
    }
    anyhow::ensure!(store.stats().pending == 0, "the store did not take every vector: {:?}", store.stats());
    Ok(t.elapsed().as_secs_f64())
}

/// The store's own index for this tower, built now (dropped first, so the time is a build's).
fn build_index(
    admin: &mut postgres::Client,
    tower: &str,
    hnsw: coret::index::shared::HnswParams,
) -> anyhow::Result<String> {
    let (name, sql) = coret::index::shared::search_index_sql(tower, DIM, hnsw);
    admin.batch_execute(&format!("DROP INDEX IF EXISTS {name}"))?;
    admin.batch_execute(&sql)?;
    Ok(name)
}

/// p50 and p99 of `CLIENTS` clients each searching `PER_CLIENT` times at once.
fn latency(
    url: &str,
    tower: &str,
    queries: &[Vec<f32>],
    candidates: usize,
    quant: coret::index::shared::Quant,
) -> anyhow::Result<(f64, f64)> {
    let times = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| -> anyhow::Result<()> {
        let mut handles = Vec::new();
        for c in 0..CLIENTS {
            let times = &times;
            handles.push(s.spawn(move || -> anyhow::Result<()> {
                let store = SharedVectors::connect(url, None)?;
                for i in 0..PER_CLIENT {
                    let q = &queries[(c * PER_CLIENT + i) % queries.len()];
                    let t = Instant::now();
                    store
                        .nearest(tower, q, 10, candidates, quant)
                        .ok_or_else(|| anyhow::anyhow!("no answer"))?;
                    times.lock().unwrap_or_else(|p| p.into_inner()).push(t.elapsed().as_secs_f64() * 1e3);
                }
                Ok(())
            }));
        }
        for h in handles {
            h.join().map_err(|_| anyhow::anyhow!("a client panicked"))??;
        }
        Ok(())
    })?;
    let mut t = times.into_inner().unwrap_or_default();
    t.sort_by(f64::total_cmp);
    let at = |p: f64| t[((t.len() as f64 * p).ceil() as usize).clamp(1, t.len()) - 1];
    Ok((at(0.50), at(0.99)))
}

fn connect(url: &str) -> anyhow::Result<postgres::Client> {
    Ok(url.parse::<postgres::Config>()?.connect(postgres::NoTls)?)
}

/// VmHWM of a server process (the server runs on this machine in the benchmark).
fn peak_rss_of(pid: i32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// `n` distinct real chunks' static vectors (zero vectors left out), from `DIR/vectors.bin`
/// when an earlier run left `n` there.
fn real_vectors(
    table: &coret::model::static_tier::StaticTable,
    mirrors: &Path,
    out: &Path,
    n: usize,
) -> anyhow::Result<(Vec<VectorKey>, Vec<f32>)> {
    let file = out.join("vectors.bin");
    if let Ok(mut f) = std::fs::File::open(&file) {
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes)?;
        let row = 16 + DIM * 4;
        if bytes.len() / row >= n {
            let rows = bytes.chunks_exact(row).take(n);
            let (mut keys, mut matrix) = (Vec::with_capacity(n), Vec::with_capacity(n * DIM));
            for r in rows {
                keys.push(r[..16].try_into()?);
                matrix.extend(r[16..].chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])));
            }
            return Ok((keys, matrix));
        }
    }
    let mut seen: HashSet<VectorKey> = HashSet::new();
    let (mut keys, mut matrix) = (Vec::new(), Vec::new());
    let mut sources = std::fs::File::create(out.join("sources.tsv"))?;
    let repos = git_dirs(mirrors)?;
    // HEAD of every repository first, then each one further back, until there are `n`.
    'outer: for back in [0usize, 2000, 500, 1000, 4000, 250, 3000, 6000, 1500, 8000, 10000, 15000, 20000] {
        for (name, git_dir) in &repos {
            let Some(commit) = first_parent_at(git_dir, back) else { continue };
            let Ok(snapshot) =
                coret::repo::git::read_snapshot(git_dir, &commit, coret::repo::source::is_source_path)
            else {
                continue;
            };
            let texts: Vec<String> = snapshot
                .files
                .into_iter()
                .filter_map(|(p, bytes)| {
                    let text = coret::repo::source::decode_source(bytes, 1 << 20).ok()?;
                    Some(coret::chunk::chunk_file(&p, &text).chunks.into_iter().map(|c| c.text))
                })
                .flatten()
                .collect();
            let fresh: Vec<(VectorKey, String)> = texts
                .into_iter()
                .map(|t| (vector_key("bench-scale", &t, &[]), t))
                .filter(|(k, _)| seen.insert(*k))
                .collect();
            let vectors = table.embed_all(&fresh.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>())?;
            let before = keys.len();
            for ((k, _), v) in fresh.iter().zip(vectors) {
                if v.iter().all(|x| *x == 0.0) {
                    continue;
                }
                keys.push(*k);
                matrix.extend(v);
                if keys.len() == n {
                    break;
                }
            }
            writeln!(sources, "{name}\t{commit}\t{}", keys.len() - before)?;
            eprintln!("{name} @ {}: {} chunks (total {})", &commit[..12], keys.len() - before, keys.len());
            if keys.len() == n {
                break 'outer;
            }
        }
    }
    anyhow::ensure!(keys.len() == n, "the mirrors hold {} distinct chunks, fewer than {n}", keys.len());
    let mut f = std::io::BufWriter::new(std::fs::File::create(&file)?);
    for (i, k) in keys.iter().enumerate() {
        f.write_all(k)?;
        for x in &matrix[i * DIM..(i + 1) * DIM] {
            f.write_all(&x.to_le_bytes())?;
        }
    }
    f.flush()?;
    Ok((keys, matrix))
}

/// Every `DIR/<owner>+<name>/repo` bare repository, by name.
fn git_dirs(mirrors: &Path) -> anyhow::Result<Vec<(String, PathBuf)>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(mirrors)? {
        let entry = entry?;
        let repo = entry.path().join("repo");
        if repo.join("HEAD").is_file() {
            out.push((entry.file_name().to_string_lossy().into_owned(), repo));
        }
    }
    out.sort();
    Ok(out)
}

/// The commit `back` first-parent steps behind HEAD, if the history is that long.
fn first_parent_at(git_dir: &Path, back: usize) -> Option<String> {
    let rev = format!("HEAD~{back}");
    coret::repo::git::rev_parse(git_dir, &rev)
}

/// The static vectors of the issue texts in `file`, else every 5,000th chunk's (held out only
/// in the sense that it is a query: it is also in the index, as a user's own code may be).
fn query_vectors(
    table: &coret::model::static_tier::StaticTable,
    file: Option<&Path>,
    matrix: &[f32],
) -> anyhow::Result<Vec<Vec<f32>>> {
    let Some(file) = file else {
        let rows = matrix.len() / DIM;
        return Ok((0..QUERIES)
            .map(|i| (i * rows / QUERIES) * DIM)
            .map(|at| matrix[at..at + DIM].to_vec())
            .collect());
    };
    let mut texts = Vec::new();
    for line in std::io::BufReader::new(std::fs::File::open(file)?).lines() {
        let v: serde_json::Value = serde_json::from_str(&line?)?;
        if let Some(t) = v["problem_statement"].as_str() {
            texts.push(t.to_string());
        }
    }
    texts.truncate(QUERIES);
    Ok(table.embed_all(&texts)?.into_iter().filter(|v| v.iter().any(|x| *x != 0.0)).collect())
}
