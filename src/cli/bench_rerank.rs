//! `--bench rerank PATH --rerank DIR`: how long the reranker takes to re-score the top K of a
//! ranking of PATH for an issue-length query, at K = 20, 30 and 50 (#46's cost goal: K = 30 in
//! ≤ 1.5 s on two cores). The candidates are BM25's top 50 for the query (real chunks of the
//! repository; the reranker's cost depends on their lengths, not on which ranking chose them).

use super::args::Args;
use super::Usage;
use coret::rerank::input_of;
use std::time::Instant;

/// About 170 tokens: a typical issue fills the reranker's issue share (160 positions).
const ISSUE: &str = "Session.send ignores the proxies from the environment when trust_env is set, so a \
request made through a session with a proxy configured in HTTPS_PROXY goes out directly. The \
adapter is built before the environment is merged into the request's settings, and the proxy \
manager caches the connection pool without the proxy. Expected: the environment's proxy is used \
unless the request passes proxies explicitly. Steps: export HTTPS_PROXY, create a Session, call \
get on an https URL, and watch the connection bypass the proxy. The same request through the \
module-level get uses the proxy. This started after the merge_environment_settings change; \
rebuild_proxies is called on redirects only.";

pub fn run(args: &Args) -> anyhow::Result<()> {
    if args.rerank.is_none() {
        anyhow::bail!(Usage("--bench rerank needs --rerank DIR (a reranker to time)".into()));
    }
    let m = super::model::load(args)?;
    let reranker = super::model::load_reranker(args, Some(m.towers.chunk.device()))?
        .ok_or_else(|| anyhow::anyhow!("no reranker loaded"))?;
    let index = super::query::open_index(args, &super::query::index_options(args))?;
    let hits = index.search_bm25(ISSUE, 50)?;
    println!(
        "benchmark: reranking the top K of {} ({} chunks) for an issue of {} characters; pairs of {} \
         positions (issue ≤ {}), {} threads, {}",
        args.path.display(),
        index.chunks.len(),
        ISSUE.len(),
        reranker.spec.max_len,
        reranker.spec.query_len,
        rayon::current_num_threads(),
        m.device
    );
    for k in [20, 30, 50] {
        let inputs: Vec<_> = hits.iter().take(k).map(|h| input_of(&index.chunks[h.chunk as usize])).collect();
        let mut times = Vec::new();
        for _ in 0..5 {
            let t = Instant::now();
            let scores = reranker.score(ISSUE, &inputs)?;
            times.push(t.elapsed().as_secs_f64());
            assert_eq!(scores.len(), inputs.len());
        }
        times.sort_by(f64::total_cmp);
        println!(
            "  K = {:>2}: median {:.2} s (min {:.2} s) for {} pairs",
            k,
            times[2],
            times[0],
            inputs.len()
        );
    }
    Ok(())
}
