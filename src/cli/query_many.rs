//! `coret-tui DIR1 DIR2 … --query TEXT`: several checkouts searched as one
//! ([`coret::rank::many`]). The answer is `--query`'s with each hit naming its `repo`, files
//! grouped per checkout and file, and `repos` giving each checkout's path and index stats.

use super::args::Args;
use super::query::{hit_json, prepare, searcher_for, store_note, store_search_json, Built};
use coret::index::Retriever;
use coret::rank::many::{Checkout, Many, RepoHit};
use serde_json::{json, Value};
use std::path::PathBuf;

pub fn run(args: &Args, paths: &[PathBuf]) -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    let (query, mut tiers) = prepare(args, paths)?;
    let (query, tiers) = (query.as_str(), &mut tiers);
    if tiers.reranker_loaded() {
        eprintln!("note: --rerank re-orders one checkout's hybrid; over several checkouts it is off");
    }
    let names = super::checkouts::names(paths);
    let mut built: Vec<Built> = Vec::new();
    for p in paths {
        built.push(searcher_for(args, p, tiers, query)?);
    }
    store_note(&super::model::dense_options(args));
    let embedded: usize = built.iter().filter_map(|b| b.embedded).sum();
    let dense_tier = built.iter().find_map(|b| b.searcher.dense_tier());
    let test_weight = super::model::fusion_params(args).test_weight;
    let many = Many {
        checkouts: names
            .iter()
            .cloned()
            .zip(built)
            .map(|(name, b)| Checkout { name, searcher: b.searcher })
            .collect(),
        fusion: args.many_fusion,
    };
    let search_started = std::time::Instant::now();
    let results = many.rankings(query, &tiers.retrievers, args.top)?;
    let search_seconds = search_started.elapsed().as_secs_f64();
    if args.json {
        let mut v = to_json(&many, query, &results, test_weight);
        v["stats"]["embedded"] = Value::from(embedded);
        if let Some(tier) = dense_tier {
            v["stats"]["dense_tier"] = Value::String(tier.into());
        }
        if let Some(why) = &tiers.fallback {
            v["stats"]["fallback"] = Value::String(why.clone());
        }
        if let Some(shared) = &super::model::dense_options(args).shared {
            v["stats"]["store"] = serde_json::to_value(shared.0.stats())?;
        }
        v["stats"]["timings"] = json!({"search": search_seconds, "total": started.elapsed().as_secs_f64()});
        println!("{}", serde_json::to_string(&v)?);
    } else {
        print_table(&many, &results);
        let chunks: usize = many.checkouts.iter().map(|c| c.searcher.repo.chunks.len()).sum();
        eprintln!(
            "{} checkouts, {chunks} chunks; {:.2}s in all, ranked in {search_seconds:.2}s",
            many.checkouts.len(),
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

fn to_json(many: &Many, query: &str, results: &[(Retriever, Vec<RepoHit>)], test_weight: f32) -> Value {
    let repos: Vec<Value> = many
        .checkouts
        .iter()
        .map(|c| {
            let s = &c.searcher.repo.stats;
            let mut repo = json!({
                "name": c.name,
                "path": c.searcher.repo.root.display().to_string(),
                "files": s.files,
                "chunks": s.chunks,
                "edges": s.edges,
                "cache": s.cache,
                "notes": c.searcher.repo.notes,
            });
            if let Some(search) = store_search_json(&c.searcher) {
                repo["store_search"] = search;
            }
            repo
        })
        .collect();
    let mut lists = serde_json::Map::new();
    let mut files = serde_json::Map::new();
    for (r, hits) in results {
        let flat: Vec<Value> = hits
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let c = &many.checkouts[h.repo];
                let mut v = hit_json(&c.searcher.repo, i + 1, &h.hit, test_weight);
                v["repo"] = Value::String(c.name.clone());
                v
            })
            .collect();
        files.insert(r.as_str().into(), Value::Array(grouped(many, hits, &flat)));
        lists.insert(r.as_str().into(), Value::Array(flat));
    }
    json!({
        "repos": repos,
        "query": query.chars().take(4096).collect::<String>(),
        "query_chars": query.chars().count(),
        "stats": {"checkouts": many.checkouts.len(), "test_weight": test_weight},
        "results": lists,
        "files": files,
    })
}

/// One entry per file of a checkout, at its best chunk's rank ([`Many::group`]).
fn grouped(many: &Many, hits: &[RepoHit], flat: &[Value]) -> Vec<Value> {
    many.group(hits)
        .iter()
        .enumerate()
        .map(|(i, (repo, g))| {
            let chunks: Vec<Value> = g.hits.iter().filter_map(|h| flat.get(h.rank - 1).cloned()).collect();
            json!({
                "rank": i + 1,
                "repo": many.checkouts[*repo].name,
                "path": g.path,
                "best_rank": g.best_rank(),
                "score": g.best_score(),
                "more": g.more(),
                "chunks": chunks,
            })
        })
        .collect()
}

fn print_table(many: &Many, results: &[(Retriever, Vec<RepoHit>)]) {
    let location = |h: &RepoHit| {
        let c = &many.checkouts[h.repo];
        format!("{}:{}", c.name, c.searcher.repo.chunks[h.hit.chunk as usize].location())
    };
    let width = results.iter().flat_map(|(_, hits)| hits.iter().map(|h| location(h).chars().count())).max();
    for (r, hits) in results {
        println!("{r}");
        if hits.is_empty() {
            println!("  (no results)");
        }
        for (i, h) in hits.iter().enumerate() {
            let c = &many.checkouts[h.repo].searcher.repo.chunks[h.hit.chunk as usize];
            println!(
                "{:>4}  {:>8.3}  {:<w$}  {:<8}  {}",
                i + 1,
                h.hit.score,
                location(h),
                c.shown_kind().as_str(),
                c.written_name(),
                w = width.unwrap_or(0)
            );
        }
    }
}
