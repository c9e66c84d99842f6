//! The history retriever (Gandhi et al., "Repository-level code search with neural retrieval
//! methods"; docs/GUIDE.md "History"): BM25 over the messages of a repository's past commits finds
//! the commits most like the issue, and the files those commits changed are the files the issue
//! likely touches. Each file gets the summed scores of the matching commits that changed it,
//! and its chunks are ranked by that file score (ties by the number of matching commits that
//! changed the file, then by the chunk's BM25 rank).
//!
//! `log` reads commits from one `git log`; `index` keeps their message terms as postings and
//! scores them, optionally only over the commits a mask allows (in eval: the ancestors of the
//! instance's `base_commit`, so a later commit never counts); `cache` keeps the index on disk
//! and extends it with new commits only.

pub mod cache;
pub mod index;
pub mod log;

pub use cache::{extend_history, load_history, open_history};
pub use index::{FileScore, HistoryIndex, HistoryParams, HistoryView};

#[cfg(test)]
mod tests;

/// The history of the checkout at `root` (its `HEAD`), cached in `cache_entry/history.bin`:
/// for the TUI and `--query`; `root` may be a subdirectory of the clone. A directory outside any
/// git repository, or one without commits, has none; the notes say why, and errors reading git become a note too, so
/// the other retrievers go on.
pub fn checkout_history(
    root: &std::path::Path,
    cache_entry: Option<&std::path::Path>,
) -> (Option<HistoryView>, Vec<String>) {
    let mut notes = Vec::new();
    // `coret-tui .` inside `flask/src` searches the clone's history, within `src/`.
    let found = root.ancestors().find_map(|top| crate::repo::git::git_dir_of(top).map(|g| (top, g)));
    let Some((top, git_dir)) = found else {
        notes.push("not a git repository: history is unavailable".to_string());
        return (None, notes);
    };
    let within: Vec<String> = root
        .strip_prefix(top)
        .unwrap_or(std::path::Path::new(""))
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let cache = cache_entry.map(|e| e.join("history.bin"));
    match load_history(&git_dir, "HEAD", cache.as_deref(), &mut |n| notes.push(n)) {
        Ok(Some((index, _))) => {
            let view = HistoryView::new(std::sync::Arc::new(index), None).within(&within.join("/"));
            (Some(view), notes)
        }
        Ok(None) => (None, notes),
        Err(e) => {
            notes.push(format!("history: {e}"));
            (None, notes)
        }
    }
}
