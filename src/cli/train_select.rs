//! Which instances the training mode learns from.

use super::args::Args;
use super::Usage;
use coret::eval::instances::{parse_id_list, Instance};
use std::path::Path;

/// The SWE-bench repositories the dev set measures on: never trained on.
const HELD_OUT: [&str; 12] = [
    "sympy/sympy",
    "pytest-dev/pytest",
    "sphinx-doc/sphinx",
    "psf/requests",
    "pylint-dev/pylint",
    "mwaskom/seaborn",
    "pydata/xarray",
    "pallets/flask",
    "astropy/astropy",
    "django/django",
    "matplotlib/matplotlib",
    "scikit-learn/scikit-learn",
];

/// The SWE-bench repository `repo` (`owner/name`) is, or is likely a fork or mirror of (the
/// same name under another owner), whatever the case; `None` for any other.
pub fn held_out(repo: &str) -> Option<&'static str> {
    let name = |r: &str| r.rsplit('/').next().unwrap_or(r).to_ascii_lowercase();
    HELD_OUT.iter().copied().find(|h| h.eq_ignore_ascii_case(repo) || name(h) == name(repo))
}

/// Refuses a file holding an instance of a repository the dev set measures on.
pub fn refuse_held_out(path: &Path, all: &[Instance]) -> anyhow::Result<()> {
    if let Some(r) = all.iter().find(|i| held_out(&i.repo).is_some()) {
        anyhow::bail!(Usage(format!(
            "{}: instance {} is from {}, a repository the dev set measures on; never train or validate on it",
            path.display(),
            r.instance_id,
            r.repo
        )));
    }
    Ok(())
}

/// The training instances: `--train-repos`, the newest `--per-repo` of each repository (after
/// its `--skip-newest` newest), of those the ones with `--min-query-chars` (consecutive
/// commits share most chunks, so same-repository batches share their negatives).
pub fn choose(args: &Args, all: Vec<Instance>) -> Vec<Instance> {
    let keep =
        |repo: &str| args.train_repos.as_deref().is_none_or(|r| parse_id_list(r).iter().any(|x| x == repo));
    let mut by_repo: std::collections::BTreeMap<String, Vec<Instance>> = Default::default();
    let long_enough = |i: &Instance| i.problem_statement.chars().count() >= args.min_query_chars;
    for inst in all.into_iter().filter(|i| keep(&i.repo)) {
        by_repo.entry(inst.repo.clone()).or_default().push(inst);
    }
    let mut chosen = Vec::new();
    for (_, mut list) in by_repo {
        list.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(a.instance_id.cmp(&b.instance_id)));
        let slice = list.into_iter().skip(args.skip_newest).take(args.per_repo.unwrap_or(usize::MAX));
        chosen.extend(slice.filter(long_enough));
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::held_out;

    #[test]
    fn the_swe_bench_repositories_their_forks_and_other_cases_are_held_out() {
        assert_eq!(held_out("pallets/flask"), Some("pallets/flask"));
        assert_eq!(held_out("Django/Django"), Some("django/django"));
        assert_eq!(held_out("someone/scikit-learn"), Some("scikit-learn/scikit-learn"));
        assert_eq!(held_out("python/mypy"), None);
        assert_eq!(held_out("acme/flask-extras"), None);
    }
}
