//! Headless query: `coret-tui PATH --query TEXT [--retriever ...] [--top N] [--json]`.

use super::args::Args;
use super::progress::BarProgress;
use coret::engine::{IndexOptions, RepoIndex};
use coret::search::{Hit, Retriever};
use coret::Error;
use serde_json::{json, Value};
use std::io::Read;

pub fn run(args: &Args) -> anyhow::Result<()> {
    let query = read_query(args.query.as_deref().unwrap_or_default())?;
    for r in &args.retriever.0 {
        if *r != Retriever::Bm25 {
            anyhow::bail!(Error::Usage(format!(
                "the {r} retriever is not available in this build yet; use --retriever bm25"
            )));
        }
    }
    let opts = IndexOptions {
        max_file_size: args.max_file_size,
        cache_dir: args.cache_dir.clone(),
        no_cache: args.no_cache,
    };
    let progress = BarProgress::new();
    let index = RepoIndex::open(&args.path, &opts, &progress);
    progress.finish();
    let index = index?;
    for note in &index.notes {
        eprintln!("note: {note}");
    }
    let mut results = Vec::new();
    for &r in &args.retriever.0 {
        let hits = match r {
            Retriever::Bm25 => index.search_bm25(&query, args.top)?,
            _ => unreachable!("rejected above"),
        };
        results.push((r, hits));
    }
    if args.json {
        println!("{}", serde_json::to_string(&to_json(&index, &query, &results))?);
    } else {
        print_table(&index, &results);
    }
    Ok(())
}

fn read_query(arg: &str) -> anyhow::Result<String> {
    if arg != "-" {
        return Ok(arg.to_string());
    }
    let mut s = String::new();
    std::io::stdin()
        .read_to_string(&mut s)
        .map_err(|e| anyhow::anyhow!("reading the query from stdin: {e}"))?;
    Ok(s)
}

fn neighbour_keys(index: &RepoIndex, ids: &[u32]) -> Vec<String> {
    ids.iter().filter_map(|&i| index.chunks.get(i as usize)).map(|c| c.key()).collect()
}

fn hit_json(index: &RepoIndex, rank: usize, hit: &Hit) -> Value {
    let c = &index.chunks[hit.chunk as usize];
    let id = hit.chunk as usize;
    json!({
        "rank": rank,
        "score": hit.score,
        "path": c.path,
        "kind": c.kind.as_str(),
        "name": c.name,
        "start_line": c.start_line,
        "end_line": c.end_line,
        "callees": neighbour_keys(index, &index.graph.callees[id]),
        "callers": neighbour_keys(index, &index.graph.callers[id]),
    })
}

pub fn to_json(index: &RepoIndex, query: &str, results: &[(Retriever, Vec<Hit>)]) -> Value {
    let s = &index.stats;
    let mut map = serde_json::Map::new();
    for (r, hits) in results {
        let list: Vec<Value> = hits.iter().enumerate().map(|(i, h)| hit_json(index, i + 1, h)).collect();
        map.insert(r.as_str().to_string(), Value::Array(list));
    }
    json!({
        "repo": index.root.display().to_string(),
        "query": query,
        "stats": {
            "files": s.files,
            "chunks": s.chunks,
            "edges": s.edges,
            "skipped": s.skipped,
            "syntax_errors": s.syntax_errors,
            "cache": s.cache,
            "seconds": s.seconds,
        },
        "results": map,
    })
}

fn print_table(index: &RepoIndex, results: &[(Retriever, Vec<Hit>)]) {
    for (r, hits) in results {
        println!("{r}");
        if hits.is_empty() {
            println!("  (no results)");
        }
        for (i, h) in hits.iter().enumerate() {
            let c = &index.chunks[h.chunk as usize];
            println!(
                "{:>4}  {:>8.3}  {}:{}-{}  {:<8}  {}",
                i + 1,
                h.score,
                c.path,
                c.start_line,
                c.end_line,
                c.kind.as_str(),
                c.name
            );
        }
    }
    let s = &index.stats;
    eprintln!(
        "{} files, {} chunks, {} call edges, {} skipped, {:.2}s ({:?} cache)",
        s.files,
        s.chunks,
        s.edges,
        s.skipped.total(),
        s.seconds,
        s.cache
    );
}
