//! `--eval INSTANCES --repos DIR`: retrieval metrics on SWE-bench-style instances.

use super::args::Args;
use super::args::DenseTierArg;
use super::progress::BarProgress;
use super::Usage;
use coret::eval::instances::{parse_id_list, read_instances, select};
use coret::eval::run::{run_eval, DenseEval, EvalConfig, EvalSummary};
use coret::index::Retriever;
use coret::rank::dense_retriever::Tier;
use coret::Error;
use std::io::Write;

pub fn run(args: &Args) -> anyhow::Result<()> {
    let path = args.eval.as_deref().ok_or_else(|| Usage("--eval needs a file".into()))?;
    let repos_dir = args.repos.clone().ok_or_else(|| Usage("--eval needs --repos DIR".into()))?;
    let (all, bad_lines) = read_instances(path).map_err(|e| Usage(e.to_string()))?;
    for e in &bad_lines {
        eprintln!("skipped {e}");
    }
    let ids = args.instances.as_deref().map(parse_id_list);
    let mut selection = select(all, ids.as_deref(), args.limit);
    if args.title_only {
        selection.instances = selection.instances.into_iter().map(|i| i.title_only()).collect();
        eprintln!("queries: each issue's title alone (--title-only)");
    }
    if let Some(id) = selection.unknown_ids.first() {
        anyhow::bail!(Usage(format!(
            "--instances: {id} is not in {}{}",
            path.display(),
            match selection.unknown_ids.len() {
                1 => String::new(),
                n => format!(" (nor are {} more)", n - 1),
            }
        )));
    }
    if selection.instances.is_empty() {
        anyhow::bail!(Usage(format!(
            "{}: no instance to evaluate ({} malformed or duplicate lines)",
            path.display(),
            bad_lines.len()
        )));
    }
    let retrievers = args.retrievers_or(&Retriever::ALL);
    let mut ks = args.k.clone();
    ks.sort_unstable();
    ks.dedup();
    if ks.is_empty() || ks[0] == 0 {
        anyhow::bail!(Usage("--k needs positive cut-offs, e.g. 1,5,10,20".into()));
    }
    let mut device = None;
    let dense = if retrievers.iter().any(|r| matches!(r, Retriever::Dense | Retriever::Hybrid)) {
        // Eval measures a tier as it ranks once warm: `auto` is the transformer.
        let tier = match args.dense {
            DenseTierArg::Static => Tier::Static(super::model::load_static(args)?),
            DenseTierArg::Auto | DenseTierArg::Transformer => {
                let m = super::model::load(args)?;
                device = Some(m.towers.chunk.device().clone());
                Tier::Transformer(m.towers)
            }
        };
        let root = coret::cache::cache_root(args.cache_dir.as_deref())?;
        Some(DenseEval {
            tier,
            opts: super::model::dense_options(args),
            store_dir: coret::eval::run::default_store_dir(&root),
            static_side: match args.mixed_static_weight > 0.0 {
                true => Some(super::model::load_static(args)?),
                false => None,
            },
        })
    } else {
        None
    };
    let rerank = super::model::load_reranker(args, device.as_ref())?;
    if let Some(r) = &rerank {
        eprintln!("{}", super::model::describe_reranker(args, r));
    }
    let cfg = EvalConfig {
        repos_dir,
        keep_generated: args.include_generated,
        retrievers: retrievers.clone(),
        depth: 1000.max(*ks.last().unwrap_or(&1)),
        ks,
        max_file_size: args.max_file_size,
        fusion: super::model::fusion_params(args),
        use_hints: args.use_hints,
        exclude_tests: args.exclude_tests,
        no_module_chunks: args.no_module_chunks,
        dense,
        keep_lists: args.keep_lists,
        query_first: args.query_first,
        rerank,
        // Git history indexes and parsed files; --no-cache keeps both in memory.
        cache_dir: match args.no_cache {
            true => None,
            false => Some(coret::eval::run::default_store_dir(&coret::cache::cache_root(
                args.cache_dir.as_deref(),
            )?)),
        },
    };
    let mut per_instance = match &args.out {
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
            let p = dir.join("instances.jsonl");
            Some((std::fs::File::create(&p).map_err(|e| Error::io(&p, e))?, p))
        }
        None => None,
    };
    let progress = BarProgress::new();
    let summary = run_eval(&selection.instances, &cfg, &progress, &mut |r| {
        if r.status == "failed" {
            let error = r.error.as_deref().unwrap_or("failed");
            // Engine errors already name the instance; say it once.
            let line = if error.starts_with(&format!("{}: ", r.instance_id)) {
                error.to_string()
            } else {
                format!("{}: {error}", r.instance_id)
            };
            progress.println(&line);
        }
        if r.status == "no_gold" {
            progress.println(&format!(
                "{}: no gold chunk: {}",
                r.instance_id,
                r.error.as_deref().unwrap_or("?")
            ));
        }
        if let Some((f, p)) = per_instance.as_mut() {
            let line = serde_json::to_string(r).map_err(|e| Error::context(p.display().to_string(), e))?;
            writeln!(f, "{line}").map_err(|e| Error::io(p.as_path(), e))?;
        }
        Ok(())
    });
    progress.finish();
    let mut summary = summary?;
    for note in &summary.notes {
        eprintln!("note: {note}");
    }
    summary.n_bad_lines = bad_lines.len();
    if let Some(dir) = &args.out {
        let p = dir.join("summary.json");
        coret::cache::write_atomic(&p, serde_json::to_string_pretty(&summary)?.as_bytes())?;
    }
    if args.json {
        println!("{}", serde_json::to_string(&summary)?);
    } else {
        print_table(&summary, &retrievers);
        print_groups(&summary, &retrievers);
    }
    if summary.n_instances > 0 && summary.n_failed == summary.n_instances {
        let first = summary.failed.first().map_or(String::new(), |(id, e)| format!(" (first: {id}: {e})"));
        anyhow::bail!("every instance failed{first}");
    }
    // An eval that scored nothing measured nothing: a failure, whatever the reason.
    if summary.n_with_gold == 0 {
        anyhow::bail!(
            "no instance was scored: {} without gold, {} failed",
            summary.n_without_gold,
            summary.n_failed
        );
    }
    Ok(())
}

fn print_table(s: &EvalSummary, retrievers: &[Retriever]) {
    println!(
        "{} instances: {} with gold, {} without gold, {} failed, {} bad lines; {:.1}s",
        s.n_instances, s.n_with_gold, s.n_without_gold, s.n_failed, s.n_bad_lines, s.seconds
    );
    let cols = columns(s, retrievers);
    let Some(first) = cols.first().and_then(|c| s.retrievers.get(c)) else {
        println!("(no instance with gold was scored)");
        return;
    };
    print!("{:<26}", "metric");
    for c in &cols {
        print!("{c:>10}");
    }
    println!();
    print!("{:<26}", "n");
    for c in &cols {
        print!("{:>10}", s.retrievers[c].n);
    }
    println!();
    for (name, _) in &first.metrics.0 {
        print!("{name:<26}");
        for c in &cols {
            print!("{:>10.3}", s.retrievers[c].metrics.get(name).unwrap_or(f64::NAN));
        }
        println!();
    }
}

/// Per language and per fix size, one row each: PR@5, PR@20, MRR, recall@20 and file
/// accuracy@1 of every ranking (the cut-offs a run did not ask for print as `-`).
fn print_groups(s: &EvalSummary, retrievers: &[Retriever]) {
    if s.groups.len() < 2 {
        return;
    }
    const METRICS: [(&str, &str); 8] = [
        ("perfect_recall@5", "PR@5"),
        ("perfect_recall@20", "PR@20"),
        ("mrr", "MRR"),
        ("recall@20", "R@20"),
        ("file_acc@1", "F@1"),
        ("grouped_perfect_recall@5", "gPR@5"),
        ("grouped_mrr", "gMRR"),
        ("file_ndcg@10", "fND10"),
    ];
    let cols = columns(s, retrievers);
    println!();
    print!("{:<25}", "");
    for c in &cols {
        print!("  |{c:^56}");
    }
    println!();
    print!("{:<20}{:>5}", "group", "n");
    for _ in &cols {
        print!("  |");
        for (_, short) in METRICS {
            print!("{short:>7}");
        }
    }
    println!();
    for (group, by) in &s.groups {
        let n = cols.iter().find_map(|c| by.get(c)).map_or(0, |m| m.n);
        print!("{group:<20}{n:>5}");
        for c in &cols {
            print!("  |");
            for (name, _) in METRICS {
                match by.get(c).and_then(|m| m.metrics.get(name)) {
                    Some(v) => print!("{v:>7.3}"),
                    None => print!("{:>7}", "-"),
                }
            }
        }
        println!();
    }
}

/// The rankings a run scored, in the order asked for; the reranker's column (`--rerank`)
/// follows the retrievers'.
fn columns<'a>(s: &EvalSummary, retrievers: &'a [Retriever]) -> Vec<&'a str> {
    retrievers.iter().map(|r| r.as_str()).chain(["rerank"]).filter(|r| s.retrievers.contains_key(r)).collect()
}
