use super::*;
use crate::eval::snapshot::{index_instance, RepoSnapshots, SnapshotOptions};
use std::fs;

/// The shared fixture helper; these tests need only its success check.
fn git(dir: &Path, args: &[&str]) {
    crate::testkit::git(dir, args);
}

const RUST: &str = "\
/// Computes the retry backoff for the given attempt, doubling each time up to a cap.
///
/// # Examples
#[inline]
pub fn backoff_delay(attempt: u32) -> u64 {
    100u64 << attempt.min(6)
}

/// New.
pub fn new() -> u32 {
    0
}

pub fn undocumented(x: u32) -> u32 {
    x + 1
}

/// Повторяет запрос после ошибки сети, пока не истечёт время ожидания.
pub fn retry_request(x: u32) -> u32 {
    x * 2
}
";

const GO: &str = "\
package config

// ParseConfig reads the YAML file at path and fills in defaults for missing keys.
func ParseConfig(path string) (*Config, error) {
\treturn nil, nil
}

// TODO: remove this once the old loader is gone from every caller.
func legacyLoad() {}
";

const PY: &str = "\
import os


@cache
def resolve_home(user):
    \"\"\"Find the home directory of a user, falling back to the environment e.g. HOME.

    More text.
    \"\"\"
    return os.path.expanduser(user)


class TokenBucket:
    '''A rate limiter that refills tokens at a steady pace.'''

    def take(self):
        return 1
";

const JAVA: &str = "\
package a;

public class Pool {
    /**
     * Returns the connection to the {@link Pool} and wakes one waiting thread.
     *
     * @param c the connection
     */
    @Override
    public void release(Connection c) {
        free.add(c);
    }
}
";

#[test]
fn doc_comments_become_masked_queries_whose_gold_is_their_definition() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("r");
    fs::create_dir_all(dir.join("src")).unwrap();
    fs::write(dir.join("src/retry.rs"), RUST).unwrap();
    fs::write(dir.join("src/config.go"), GO).unwrap();
    fs::write(dir.join("src/home.py"), PY).unwrap();
    fs::write(dir.join("src/Pool.java"), JAVA).unwrap();
    // A test file's docs are not pairs.
    fs::write(dir.join("src/config_test.go"), GO.replace("ParseConfig", "TestParse")).unwrap();
    git(&dir, &["init", "-q", "-b", "main"]);
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "init"]);

    let (pairs, report) = mine_docs(&dir, "acme/widgets", &DocOptions::default()).unwrap();
    let by_query: Vec<(&str, &str)> =
        pairs.iter().map(|p| (p.problem_statement.as_str(), p.language.as_deref().unwrap_or(""))).collect();
    let has = |q: &str| by_query.iter().any(|(x, _)| *x == q);
    assert!(
        has("Computes the retry backoff for the given attempt, doubling each time up to a cap."),
        "{by_query:?}"
    );
    assert!(has("_ reads the YAML file at path and fills in defaults for missing keys."), "{by_query:?}");
    assert!(
        has("Find the home directory of a user, falling back to the environment e.g. HOME."),
        "{by_query:?}"
    );
    assert!(has("A rate limiter that refills tokens at a steady pace."), "{by_query:?}");
    assert!(has("Returns the connection to the _ and wakes one waiting thread."), "{by_query:?}");
    assert_eq!(pairs.len(), 5, "{by_query:?}");
    let count = |s: DocSkip| report.skipped.get(&s).copied().unwrap_or(0);
    assert_eq!(count(DocSkip::Script), 1, "{:?}", report.skipped);
    assert_eq!(count(DocSkip::Boilerplate), 1, "{:?}", report.skipped);
    assert!(count(DocSkip::Short) >= 1, "`New.` is too short: {:?}", report.skipped);
    assert!(count(DocSkip::NoDoc) >= 2, "{:?}", report.skipped);
    assert_eq!(report.kept, 5);
    assert_eq!(report.per_language.values().sum::<usize>(), 5);

    // Every pair's gold, as the eval computes it at the base commit, is its definition alone.
    let opts = SnapshotOptions {
        max_file_size: DEFAULT_MAX_FILE_SIZE,
        exclude_tests: false,
        link_calls: false,
        keep_generated: false,
    };
    let mut snaps = RepoSnapshots::default();
    for p in &pairs {
        assert!(p.instance_id.starts_with("acme__widgets-doc-"), "{}", p.instance_id);
        let snap = index_instance(p, &dir.join(".git"), opts, &mut snaps).unwrap();
        assert_eq!(snap.gold.chunks.len(), 1, "{}: {:?}", p.problem_statement, snap.gold);
        let chunk = &snap.index.chunks[snap.gold_ids[0]];
        let expected = match p.problem_statement.split_whitespace().next().unwrap() {
            "Computes" => "backoff_delay",
            "_" => "ParseConfig",
            "Find" => "resolve_home",
            "A" => "TokenBucket",
            _ => "release",
        };
        assert!(chunk.name.ends_with(expected), "{} -> {}", p.problem_statement, chunk.name);
    }

    // A cap keeps a hash-ordered sample, the same one each time.
    let few = DocOptions { max_pairs: 2, ..DocOptions::default() };
    let (a, ra) = mine_docs(&dir, "acme/widgets", &few).unwrap();
    let (b, _) = mine_docs(&dir, "acme/widgets", &few).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.len(), 2);
    assert_eq!(ra.skipped.get(&DocSkip::Capped), Some(&3));
}

#[test]
fn a_name_defined_twice_in_one_file_gives_two_pairs_with_their_own_ids() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("r");
    fs::create_dir_all(dir.join("src")).unwrap();
    let pool = "\
/// A thread safe pool that works in an alloc-only context.
#[cfg(not(feature = \"std\"))]
pub struct Pool {
    n: u32,
}

/// A thread safe pool utilizing std-only features for its locking.
#[cfg(feature = \"std\")]
pub struct Pool {
    n: u64,
}
";
    fs::write(dir.join("src/pool.rs"), pool).unwrap();
    git(&dir, &["init", "-q", "-b", "main"]);
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "init"]);
    let (pairs, _) = mine_docs(&dir, "acme/pools", &DocOptions::default()).unwrap();
    assert_eq!(pairs.len(), 2, "{pairs:?}");
    assert_ne!(pairs[0].instance_id, pairs[1].instance_id);
}

#[test]
fn masking_takes_the_definitions_names_in_any_form() {
    assert_eq!(mask("ParseConfig reads the file.", "ParseConfig"), "_ reads the file.");
    assert_eq!(mask("Like Pool.release(), but waits.", "Pool.release"), "Like _, but waits.");
    assert_eq!(mask("Calls `release` on the pool's lock", "Pool.release"), "Calls _ on the _ lock");
    // Parts shorter than three characters and words merely containing the name stay.
    assert_eq!(mask("Opens a file; reopens on error", "io.open"), "Opens a file; reopens on error");
    assert_eq!(mask("Open the file for writing", "open"), "_ the file for writing");
}

#[test]
fn a_path_that_is_no_repository_is_an_error_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let err = mine_docs(tmp.path(), "acme/widgets", &DocOptions::default()).unwrap_err();
    assert!(err.to_string().contains(&tmp.path().display().to_string()), "{err}");
}
