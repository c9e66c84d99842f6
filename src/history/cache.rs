//! The history index on disk, extended with new commits only: a commit already read is never
//! read again, so a checkout that gained ten commits reads ten, and eval, which asks for one
//! `base_commit` after another, reads each stretch of history once.

use std::path::Path;

use super::index::HistoryIndex;
use super::log::parse_log;
use crate::cache::{read_framed, write_framed, CacheMiss};
use crate::error::Result;
use crate::repo::git::{log_history, rev_parse};

const VERSION: u32 = 1;

/// The history up to `rev` (e.g. `HEAD` or a commit hash) of the repository at `git_dir`,
/// with the full hash `rev` names: from `cache` when it already holds that commit, else
/// extended by one `git log` of the commits it lacks and saved back. `Ok(None)` with a note
/// when `rev` names no commit (an empty repository).
pub fn load_history(
    git_dir: &Path,
    rev: &str,
    cache: Option<&Path>,
    note: &mut dyn FnMut(String),
) -> Result<Option<(HistoryIndex, String)>> {
    let mut index = open_history(cache, note);
    Ok(extend_history(&mut index, git_dir, rev, cache, note)?.map(|tip| (index, tip)))
}

/// The index `cache` holds, or an empty one (a note says when a damaged file is dropped).
pub fn open_history(cache: Option<&Path>, note: &mut dyn FnMut(String)) -> HistoryIndex {
    match cache.map(|p| (p, read_framed::<HistoryIndex>(p, VERSION))) {
        Some((_, Ok(mut ix))) => {
            ix.reindex();
            ix
        }
        Some((p, Err(CacheMiss::Corrupt(why)))) => {
            note(format!("{}: {why}; rebuilding the history index", p.display()));
            HistoryIndex::default()
        }
        _ => HistoryIndex::default(),
    }
}

/// Makes sure `index` holds `rev` and everything before it, reading only the commits it lacks
/// (one `git log TIP ^KNOWN…`) and saving to `cache` when it read any. The full hash of `rev`,
/// or `None` with a note when `rev` names no commit. A shallow clone's history is partial:
/// a note says so once.
pub fn extend_history(
    index: &mut HistoryIndex,
    git_dir: &Path,
    rev: &str,
    cache: Option<&Path>,
    note: &mut dyn FnMut(String),
) -> Result<Option<String>> {
    let Some(tip) = rev_parse(git_dir, rev) else {
        note(format!("{}: no commit {rev}, so no history to search", git_dir.display()));
        return Ok(None);
    };
    if index.contains(&tip) {
        return Ok(Some(tip));
    }
    if index.is_empty() && git_dir.join("shallow").exists() {
        note(format!("{}: a shallow clone, so the history searched is partial", git_dir.display()));
    }
    let mut revs = vec![tip.clone()];
    revs.extend(index.tips.iter().map(|t| format!("^{t}")));
    let refs: Vec<&str> = revs.iter().map(String::as_str).collect();
    index.add(parse_log(&log_history(git_dir, &refs)?));
    index.tips.push(tip.clone());
    if let Some(p) = cache {
        write_framed(p, VERSION, index)?;
    }
    Ok(Some(tip))
}
