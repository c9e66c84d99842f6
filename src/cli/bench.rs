//! `--bench`: rerunnable speed and memory figures (never timed tests).
//!
//! `--bench index PATH`: indexes PATH cold (fresh cache) and warm (same cache, unchanged tree),
//! each in its own process so that peak memory is per run, and prints files, chunks, edges,
//! seconds and peak RSS. `embed` and `query` (dense) are in `bench_dense`, `rerank` in
//! `bench_rerank`.

use super::args::Args;
use super::Usage;
use coret::engine::RepoIndex;
use coret::progress::{Phase, Progress};
use std::process::Command;
use std::sync::Mutex;
use std::time::Instant;

pub fn run(args: &Args, what: &str) -> anyhow::Result<()> {
    match what {
        "index" => bench_index(args),
        "index-once" => index_once(args),
        "embed" => super::bench_dense::embed(args),
        "query" => super::bench_dense::query(args),
        "history" => bench_history(args),
        "rerank" => super::bench_rerank::run(args),
        "static" => super::bench_static::run(args),
        "static-scale" => super::bench_static::scale(args),
        "store-scale" => super::bench_store::run(args),
        other => {
            anyhow::bail!(Usage(format!(
                "unknown benchmark `{other}` (expected: index, embed, query, history, rerank, static, static-scale, store-scale)"
            )))
        }
    }
}

fn bench_index(args: &Args) -> anyhow::Result<()> {
    let cache = tempfile::tempdir()?;
    let exe = std::env::current_exe()?;
    println!("benchmark: index {}", args.path.display());
    for label in ["cold", "warm", "warm"] {
        let out = Command::new(&exe)
            .arg(&args.path)
            .args(["--bench", "index-once", "--cache-dir"])
            .arg(cache.path())
            .args(["--max-file-size", &args.max_file_size.to_string()])
            .output()?;
        if !out.status.success() {
            anyhow::bail!("benchmark run failed: {}", String::from_utf8_lossy(&out.stderr).trim());
        }
        println!("{label:>5}: {}", String::from_utf8_lossy(&out.stdout).trim());
    }
    Ok(())
}

/// `--bench history PATH` (a checkout or a bare repository): reads the history of `HEAD` into a
/// fresh cache (cold), then again from the cache (warm), then scores one query over it.
fn bench_history(args: &Args) -> anyhow::Result<()> {
    let git_dir = coret::repo::git::git_dir_of(&args.path)
        .ok_or_else(|| Usage(format!("{}: not a git repository", args.path.display())))?;
    let dir = tempfile::tempdir()?;
    let cache = dir.path().join("history.bin");
    println!("benchmark: history {}", args.path.display());
    for label in ["cold", "warm"] {
        let t = Instant::now();
        let loaded =
            coret::history::load_history(&git_dir, "HEAD", Some(&cache), &mut |n| eprintln!("note: {n}"))?;
        let secs = t.elapsed().as_secs_f64();
        let Some((index, _)) = loaded else { anyhow::bail!("no commits") };
        let bytes = std::fs::metadata(&cache).map(|m| m.len()).unwrap_or(0);
        println!(
            "{label:>5}: commits {} seconds {secs:.3} cache_mib {:.1}",
            index.len(),
            bytes as f64 / (1 << 20) as f64
        );
        if label == "warm" {
            let view = coret::history::HistoryView::new(std::sync::Arc::new(index), None);
            let t = Instant::now();
            let files = view.score_files(
                "simplify returns a wrong result for sqrt of a negative rational",
                Default::default(),
            );
            println!("query: {} files scored in {:.1} ms", files.len(), t.elapsed().as_secs_f64() * 1e3);
        }
    }
    Ok(())
}

fn index_once(args: &Args) -> anyhow::Result<()> {
    let opts = super::query::index_options(args);
    let t = Instant::now();
    let timing = PhaseTimes::default();
    let index = RepoIndex::open(&args.path, &opts, &timing)?;
    let secs = t.elapsed().as_secs_f64();
    let s = &index.stats;
    println!(
        "files {} chunks {} edges {} parsed {} cache {:?} seconds {:.3} peak_rss_mib {:.1} phases [{}]",
        s.files,
        s.chunks,
        s.edges,
        s.parsed,
        s.cache,
        secs,
        super::peak_rss::peak_rss_mib(),
        timing.summary(t)
    );
    Ok(())
}

/// Records when each phase was first reported, to split a run's time by phase.
#[derive(Default)]
struct PhaseTimes {
    starts: Mutex<Vec<(Phase, Instant)>>,
}

impl Progress for PhaseTimes {
    fn report(&self, phase: Phase, _: usize, _: usize) {
        let mut s = self.starts.lock().unwrap_or_else(|p| p.into_inner());
        if s.last().is_none_or(|(p, _)| *p != phase) {
            s.push((phase, Instant::now()));
        }
    }
}

impl PhaseTimes {
    /// `phase seconds` for each phase, the last one running until now.
    fn summary(&self, _start: Instant) -> String {
        let s = self.starts.lock().unwrap_or_else(|p| p.into_inner());
        let end = Instant::now();
        s.iter()
            .enumerate()
            .map(|(i, (p, t))| {
                let next = s.get(i + 1).map_or(end, |(_, n)| *n);
                format!("{p} {:.2}s", (next - *t).as_secs_f64())
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}
