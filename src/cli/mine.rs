//! `--mine GIT_DIR --repo-name OWNER/NAME --mine-out FILE`: training instances from a
//! repository's commit history (`coret::train::mine`), written atomically, with a summary on
//! stderr. Never the repositories the dev set or SWE-bench measure on.

use super::args::Args;
use super::train_select::held_out;
use super::Usage;
use coret::eval::instances::write_instances;
use coret::train::mine::{mine, MineOptions};
use coret::train::mine_docs::{mine_docs, DocOptions};
use std::path::Path;

pub fn run(args: &Args) -> anyhow::Result<()> {
    let path = args.mine.as_deref().ok_or_else(|| Usage("--mine needs a git directory".into()))?;
    let repo = args
        .repo_name
        .as_deref()
        .ok_or_else(|| Usage("--mine needs --repo-name OWNER/NAME (the instances' repo)".into()))?;
    if !matches!(repo.split_once('/'), Some((o, n)) if !o.is_empty() && !n.is_empty() && !n.contains('/')) {
        anyhow::bail!(Usage(format!("--repo-name {repo:?} is not owner/name")));
    }
    if let Some(h) = held_out(repo) {
        anyhow::bail!(Usage(format!(
            "--repo-name {repo}: {h} is a repository the dev set or SWE-bench measures on (or a fork of it); never mine it"
        )));
    }
    let out = args.mine_out.as_deref().ok_or_else(|| Usage("--mine needs --mine-out FILE".into()))?;
    if args.mine_docs {
        return docs(args, path, repo, out);
    }
    let opts = MineOptions {
        min_message: args.min_message,
        max_commits: args.max_commits,
        since: args.since.clone(),
        max_file_size: args.max_file_size,
        ..MineOptions::default()
    };
    let (mined, report) = mine(path, repo, &opts)?;
    let instances: Vec<_> = mined.into_iter().map(|m| m.instance).collect();
    write_instances(out, &instances)?;
    let skipped: Vec<String> = report.skipped.iter().map(|(why, n)| format!("{} {n}", why.name())).collect();
    eprintln!(
        "{repo} ({}): {} commits seen, {} kept -> {}",
        report.git_dir.display(),
        report.seen,
        report.kept,
        out.display()
    );
    eprintln!("skipped: {}", if skipped.is_empty() { "none".into() } else { skipped.join(", ") });
    if let (Some(p25), Some(p50), Some(p75)) =
        (report.message_quantile(0.25), report.message_quantile(0.5), report.message_quantile(0.75))
    {
        eprintln!("kept messages (characters): p25 {p25}, median {p50}, p75 {p75}");
    }
    Ok(())
}

/// `--mine-docs`: doc-comment pairs of HEAD, with a summary per skip reason and language.
fn docs(args: &Args, path: &Path, repo: &str, out: &Path) -> anyhow::Result<()> {
    let opts =
        DocOptions { max_pairs: args.max_pairs, max_file_size: args.max_file_size, ..DocOptions::default() };
    let (pairs, report) = mine_docs(path, repo, &opts)?;
    write_instances(out, &pairs)?;
    let list = |m: Vec<String>| if m.is_empty() { "none".to_string() } else { m.join(", ") };
    eprintln!(
        "{repo} ({}): {} definitions seen, {} doc pairs kept -> {}",
        &report.commit[..report.commit.len().min(12)],
        report.seen,
        report.kept,
        out.display()
    );
    eprintln!(
        "skipped: {}",
        list(report.skipped.iter().map(|(why, n)| format!("{} {n}", why.name())).collect())
    );
    eprintln!(
        "kept per language: {}",
        list(report.per_language.iter().map(|(l, n)| format!("{l} {n}")).collect())
    );
    Ok(())
}
