//! Training instances from a repository's commit history (the hidden mode's `--mine`): each
//! commit whose cleaned message reads like an issue, paired with the functions its changes
//! edit in any language of the table (`crate::lang`), in the `train-prs` format ([`Instance`]).
//!
//! Per commit, newest history first read, oldest first decided (so an original comes before
//! its copies):
//! - root commits and merges (two or more parents) are skipped; a squash has one parent;
//! - reverts and cherry-picks are skipped on their messages' marks;
//! - the message, a backport's prefix ([`strip_backport`]) off, is cleaned ([`clean_message`])
//!   and must keep `min_message` characters;
//! - the patch is `git diff PARENT COMMIT` of the non-test source files the commit changes
//!   (tests are left out as SWE-bench's patches leave them out); a commit changing only
//!   tests, or no supported language, is skipped;
//! - gold: the eval's rules ([`gold_chunks`] on [`parse_patch`]) over the parent's files, each
//!   chunked as the index chunks it; 1..=`max_gold` chunks are kept;
//! - duplicates: a message whose [`message_key`] was already kept (a backport if it carried a
//!   backport prefix), or a patch with the same [`patch_key`] as a kept one.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::mine_message::{clean_message, is_cherry_pick, is_revert, message_key, strip_backport};
use crate::chunk::chunk_file;
use crate::error::{Error, Result};
use crate::eval::gold::{gold_chunks, FileChunks, Gold};
use crate::eval::instances::Instance;
use crate::eval::patch::parse_patch;
use crate::history::log::parse_log;
use crate::repo::git::{git_dir_of, log_history, read_snapshot, rev_parse, run_git};
use crate::repo::source::{decode_source, is_source_path, is_test_path, DEFAULT_MAX_FILE_SIZE};

/// What the miner keeps.
#[derive(Clone, Debug)]
pub struct MineOptions {
    /// Cleaned messages shorter than this (characters) are skipped.
    pub min_message: usize,
    /// Most gold chunks of a kept commit.
    pub max_gold: usize,
    /// Only the newest N commits of the history are read.
    pub max_commits: Option<usize>,
    /// Only commits not reachable from this revision (`REF..HEAD`).
    pub since: Option<String>,
    /// Larger source files are left out, as the index leaves them out.
    pub max_file_size: u64,
}

impl Default for MineOptions {
    fn default() -> Self {
        MineOptions {
            // git's convention keeps a subject within 72 characters (50 recommended), so 100 keeps
            // only messages with a body: at least a sentence on what was wrong or why. The dev
            // issues run far longer (shortest 230, median ~990 characters); a higher bar would
            // keep few commits of most projects, and `--min-query-chars` can raise it at training.
            min_message: 100,
            // As training's `--max-gold`: a commit editing more is rarely one issue's fix.
            max_gold: 8,
            max_commits: None,
            since: None,
            max_file_size: DEFAULT_MAX_FILE_SIZE,
        }
    }
}

/// Why a commit gave no instance (the summary's counts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Skip {
    Root,
    Merge,
    Revert,
    CherryPick,
    NoSource,
    TestsOnly,
    ShortMessage,
    /// The parent's files could not be read or the diff not parsed.
    Unreadable,
    /// The source changes touch no chunk of the parent (only new files, blank lines, …).
    NoGold,
    TooManyGold,
    Backport,
    SameMessage,
    SamePatch,
}

impl Skip {
    pub fn name(self) -> &'static str {
        match self {
            Skip::Root => "root",
            Skip::Merge => "merge",
            Skip::Revert => "revert",
            Skip::CherryPick => "cherry-pick",
            Skip::NoSource => "no supported language",
            Skip::TestsOnly => "tests only",
            Skip::ShortMessage => "short message",
            Skip::Unreadable => "unreadable",
            Skip::NoGold => "no gold",
            Skip::TooManyGold => "too many gold",
            Skip::Backport => "backport",
            Skip::SameMessage => "same message",
            Skip::SamePatch => "same patch",
        }
    }
}

/// One mined instance and its gold, as the eval computes it at the base commit.
#[derive(Clone, Debug)]
pub struct Mined {
    pub instance: Instance,
    pub gold: Gold,
    /// `path::qualified name` of each gold chunk, in the gold's order.
    pub gold_names: Vec<String>,
}

/// What mining saw.
#[derive(Clone, Debug, Default)]
pub struct MineReport {
    /// The git directory read.
    pub git_dir: PathBuf,
    pub seen: usize,
    pub kept: usize,
    pub skipped: BTreeMap<Skip, usize>,
    /// Characters of each kept query, sorted.
    pub message_chars: Vec<usize>,
}

impl MineReport {
    /// The `q`-quantile (0..=1, nearest rank) of the kept queries' lengths.
    pub fn message_quantile(&self, q: f64) -> Option<usize> {
        let v = &self.message_chars;
        (!v.is_empty()).then(|| v[((v.len() - 1) as f64 * q).round() as usize])
    }
}

/// Mines `path` (a bare repository, a `.git` directory or a work tree) for `repo`
/// (`owner/name`). Errors name the path: not a git repository, or a history (of the commits
/// asked for) that changes no source file of a supported language.
pub fn mine(path: &Path, repo: &str, opts: &MineOptions) -> Result<(Vec<Mined>, MineReport)> {
    let git_dir = git_dir_of(path).ok_or_else(|| Error::Root {
        path: path.to_path_buf(),
        source: std::io::Error::new(std::io::ErrorKind::NotFound, "not a git repository"),
    })?;
    if rev_parse(&git_dir, "HEAD").is_none() {
        return Err(Error::NoSourceHistory { git_dir });
    }
    let mut revs: Vec<String> = vec!["HEAD".into()];
    if let Some(since) = &opts.since {
        let sha = rev_parse(&git_dir, since).ok_or_else(|| {
            Error::context(git_dir.display().to_string(), format!("--since {since}: no such commit"))
        })?;
        revs.push(format!("^{sha}"));
    }
    if let Some(n) = opts.max_commits {
        revs.push(format!("--max-count={n}"));
    }
    let revs: Vec<&str> = revs.iter().map(String::as_str).collect();
    let mut commits = parse_log(&log_history(&git_dir, &revs)?);
    if !commits.iter().any(|c| c.files.iter().any(|f| is_source_path(f))) {
        return Err(Error::NoSourceHistory { git_dir });
    }
    let dates = commit_dates(&git_dir, &revs)?;
    commits.reverse(); // oldest first: an original is decided before its copies
    let mut report = MineReport { git_dir: git_dir.clone(), seen: commits.len(), ..Default::default() };
    let mut skip = |why: Skip| *report.skipped.entry(why).or_default() += 1;

    // Cheap rules first, on the log alone.
    let mut candidates = Vec::new();
    for c in commits {
        let why = match c.parents.len() {
            0 => Some(Skip::Root),
            1 => None,
            _ => Some(Skip::Merge),
        };
        let why = why.or_else(|| {
            if is_revert(&c.message) {
                Some(Skip::Revert)
            } else if is_cherry_pick(&c.message) {
                Some(Skip::CherryPick)
            } else {
                None
            }
        });
        if let Some(why) = why {
            skip(why);
            continue;
        }
        let sources: Vec<&String> = c.files.iter().filter(|f| is_source_path(f)).collect();
        let code: Vec<String> = sources.iter().filter(|f| !is_test_path(f)).map(|f| f.to_string()).collect();
        if code.is_empty() {
            skip(if sources.is_empty() { Skip::NoSource } else { Skip::TestsOnly });
            continue;
        }
        // The prefix goes first: cleaning would take `Backport PR #12:` for a reference.
        let (text, backport) = strip_backport(&c.message);
        let query = clean_message(text);
        if query.chars().count() < opts.min_message {
            skip(Skip::ShortMessage);
            continue;
        }
        candidates.push(Candidate { id: c.id, parent: c.parents[0].clone(), query, backport, paths: code });
    }

    // The diffs and their gold, in parallel (git processes and parsing), in order.
    let outcomes: Vec<std::result::Result<Outcome, Skip>> =
        candidates.par_iter().map(|c| outcome(&git_dir, c, opts)).collect();

    let (owner, name) = repo.split_once('/').unwrap_or(("", repo));
    let mut messages = HashSet::new();
    let mut patches = HashSet::new();
    let mut mined = Vec::new();
    for (c, result) in candidates.into_iter().zip(outcomes) {
        let found = match result {
            Ok(found) => found,
            Err(why) => {
                skip(why);
                continue;
            }
        };
        if !messages.insert(message_key(&c.query)) {
            skip(if c.backport { Skip::Backport } else { Skip::SameMessage });
            continue;
        }
        if !patches.insert(patch_key(&found.patch)) {
            skip(Skip::SamePatch);
            continue;
        }
        let instance = Instance {
            instance_id: format!("{owner}__{name}-{}", &c.id[..c.id.len().min(12)]),
            repo: repo.to_string(),
            base_commit: c.parent,
            problem_statement: c.query,
            patch: found.patch,
            hints_text: None,
            created_at: dates.get(&c.id).cloned(),
            // The language of the first file the fix edits: eval and training report by it.
            language: c.paths.first().and_then(|p| crate::lang::lang_of_path(p)).map(|l| l.id().to_string()),
        };
        mined.push(Mined { instance, gold: found.gold, gold_names: found.gold_names });
    }
    report.kept = mined.len();
    report.message_chars = mined.iter().map(|m| m.instance.problem_statement.chars().count()).collect();
    report.message_chars.sort_unstable();
    Ok((mined, report))
}

struct Candidate {
    id: String,
    parent: String,
    query: String,
    backport: bool,
    /// The non-test source files the commit changes.
    paths: Vec<String>,
}

struct Outcome {
    patch: String,
    gold: Gold,
    gold_names: Vec<String>,
}

/// The commit's patch (non-test source files) and its gold at the parent, or why not.
fn outcome(git_dir: &Path, c: &Candidate, opts: &MineOptions) -> std::result::Result<Outcome, Skip> {
    let patch = source_diff(git_dir, &c.parent, &c.id, &c.paths).map_err(|_| Skip::Unreadable)?;
    let parsed = parse_patch(&patch).map_err(|_| Skip::Unreadable)?;
    let wanted: HashSet<&str> = parsed.files.iter().map(|f| f.path()).collect();
    let snapshot = read_snapshot(git_dir, &c.parent, |p| wanted.contains(p)).map_err(|_| Skip::Unreadable)?;
    // Each file chunked as the index chunks it (chunks do not depend on other files).
    let files: Vec<(String, String, Vec<crate::chunk::Chunk>)> = snapshot
        .files
        .into_iter()
        .filter(|(p, _)| is_source_path(p))
        .filter_map(|(p, bytes)| {
            let text = decode_source(bytes, opts.max_file_size).ok()?;
            let chunks = chunk_file(&p, &text).chunks;
            Some((p, text, chunks))
        })
        .collect();
    let view = |path: &str| files.iter().find(|(p, _, _)| p == path);
    let gold =
        gold_chunks(&parsed, |path| view(path).map(|(_, source, chunks)| FileChunks { chunks, source }));
    if gold.chunks.is_empty() {
        return Err(Skip::NoGold);
    }
    if gold.chunks.iter().any(|g| is_test_path(&g.path)) {
        return Err(Skip::TestsOnly); // a test file renamed out of the tests
    }
    if gold.chunks.len() > opts.max_gold {
        return Err(Skip::TooManyGold);
    }
    let gold_names = gold
        .chunks
        .iter()
        .filter_map(|g| view(&g.path).and_then(|(_, _, chunks)| chunks.get(g.index)).map(|c| c.key()))
        .collect();
    Ok(Outcome { patch, gold, gold_names })
}

/// `git diff PARENT COMMIT -- PATHS` as SWE-bench writes patches: unified, three lines of
/// context, `a/` and `b/` prefixes, renames detected, whatever the user's git configuration.
fn source_diff(git_dir: &Path, parent: &str, commit: &str, paths: &[String]) -> Result<String> {
    let mut args: Vec<&str> = vec![
        "--literal-pathspecs",
        "-c",
        "core.quotepath=off",
        "diff",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "-M",
        "-U3",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        parent,
        commit,
        "--",
    ];
    args.extend(paths.iter().map(String::as_str));
    Ok(String::from_utf8_lossy(&run_git(git_dir, &args)?).into_owned())
}

/// The commit date (`YYYY-MM-DD`, as `train-prs` has it) of each commit of `revs`.
fn commit_dates(git_dir: &Path, revs: &[&str]) -> Result<HashMap<String, String>> {
    let mut args = vec!["log", "--format=%H %cs"];
    args.extend_from_slice(revs);
    args.push("--");
    let out = run_git(git_dir, &args)?;
    Ok(String::from_utf8_lossy(&out)
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(id, date)| (id.to_string(), date.to_string()))
        .collect())
}

/// What `git patch-id` hashes, without a process: each file's path and its changed lines
/// with whitespace removed (line numbers and context ignored), so the same change made twice
/// (a cherry-pick without `-x`, a backport) has the same key.
pub fn patch_key(patch: &str) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    for line in patch.lines() {
        let keep = line.starts_with("diff --git ")
            || (line.starts_with('+') && !line.starts_with("+++"))
            || (line.starts_with('-') && !line.starts_with("---"));
        if keep {
            let squeezed: String = line.chars().filter(|c| !c.is_whitespace()).collect();
            h.update(squeezed.as_bytes());
            h.update(b"\n");
        }
    }
    *h.finalize().as_bytes()
}

#[cfg(test)]
#[path = "mine_tests.rs"]
mod tests;
