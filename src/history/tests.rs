use std::path::Path;
use std::sync::Arc;

use super::*;
use crate::testkit::git;

fn commit(dir: &Path, file: &str, text: &str, message: &str) -> String {
    let path = dir.join(file);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", message]);
    git(dir, &["rev-parse", "HEAD"]).trim().to_string()
}

/// Three commits up to `base`, then one after it that matches the query best.
fn repo(dir: &Path) -> (String, String) {
    git(dir, &["init", "-q"]);
    commit(dir, "net/url.py", "def parse(u):\n    pass\n", "Add a parser for URLs");
    commit(
        dir,
        "net/url.py",
        "def parse(u):\n    return u\n",
        "Fix crash in the URL parser when the port is missing",
    );
    let base = commit(dir, "README.md", "docs\n", "Update the readme");
    let after = commit(dir, "net/port.py", "PORT = 1\n", "Fix port crash: missing port in URL parser crash");
    (base, after)
}

#[test]
fn a_commit_after_base_never_counts_and_before_it_ranks_the_file_it_changed() {
    let tmp = tempfile::tempdir().unwrap();
    let (base, after) = repo(tmp.path());
    let git_dir = tmp.path().join(".git");
    let (index, tip) = load_history(&git_dir, &after, None, &mut |_| {}).unwrap().unwrap();
    assert_eq!((index.len(), tip.as_str()), (4, after.as_str()));
    let index = Arc::new(index);
    let query = "The URL parser crashes when the port is missing";

    let at_base = HistoryView::new(index.clone(), Some(index.ancestors(&base).unwrap()));
    assert_eq!(at_base.commits(), 3);
    let files = at_base.score_files(query, HistoryParams::default());
    assert_eq!(files.first().map(|f| f.0), Some("net/url.py"), "{files:?}");
    assert!(files.iter().all(|f| f.0 != "net/port.py"), "a later commit leaked: {files:?}");

    let everything = HistoryView::new(index, None);
    let files = everything.score_files(query, HistoryParams::default());
    assert!(files.iter().any(|f| f.0 == "net/port.py"), "{files:?}");
}

#[test]
fn the_cache_is_extended_with_new_commits_only() {
    let tmp = tempfile::tempdir().unwrap();
    let (base, after) = repo(tmp.path());
    let git_dir = tmp.path().join(".git");
    let cache = tmp.path().join("h.bin");
    let (first, _) = load_history(&git_dir, &base, Some(&cache), &mut |_| {}).unwrap().unwrap();
    assert_eq!(first.len(), 3);
    let mut again = open_history(Some(&cache), &mut |n| panic!("{n}"));
    assert_eq!(again.len(), 3, "read back from the cache");
    assert!(again.contains(&base) && !again.contains(&after));
    extend_history(&mut again, &git_dir, &after, Some(&cache), &mut |_| {}).unwrap();
    assert_eq!(again.len(), 4, "one commit added");
    assert_eq!(open_history(Some(&cache), &mut |_| {}).len(), 4);

    std::fs::write(&cache, b"garbage").unwrap();
    let mut notes = Vec::new();
    assert!(open_history(Some(&cache), &mut |n| notes.push(n)).is_empty());
    assert!(notes.iter().any(|n| n.contains("h.bin") && n.contains("rebuilding")), "{notes:?}");
}

#[test]
fn no_git_and_an_empty_history_give_a_note_not_an_error() {
    let plain = tempfile::tempdir().unwrap();
    let (view, notes) = checkout_history(plain.path(), None);
    assert!(view.is_none());
    assert!(notes.iter().any(|n| n.contains("not a git repository: history is unavailable")), "{notes:?}");

    let empty = tempfile::tempdir().unwrap();
    git(empty.path(), &["init", "-q"]);
    let (view, notes) = checkout_history(empty.path(), None);
    assert!(view.is_none());
    assert!(notes.iter().any(|n| n.contains("no commit HEAD")), "{notes:?}");
}

#[test]
fn a_subdirectory_of_a_clone_searches_its_history_within_the_subdirectory() {
    let tmp = tempfile::tempdir().unwrap();
    repo(tmp.path());
    commit(tmp.path(), "docs/port.py", "X = 1\n", "Fix the port crash in the docs example");
    let (view, notes) = checkout_history(&tmp.path().join("net"), None);
    let view = view.unwrap_or_else(|| panic!("no history from a subdirectory: {notes:?}"));
    let files = view.score_files("port crash in the URL parser", HistoryParams::default());
    let names: Vec<&str> = files.iter().map(|f| f.0).collect();
    assert!(names.contains(&"port.py") && names.contains(&"url.py"), "named from net/: {names:?}");
    assert!(!names.iter().any(|n| n.contains("docs") || n.contains('/')), "outside net/: {names:?}");
}

#[test]
fn commit_scores_are_okapi_bm25() {
    let mut index = HistoryIndex::default();
    let rec = |id: &str, message: &str| log::CommitRecord {
        id: id.into(),
        parents: vec![],
        message: message.into(),
        files: vec!["a.py".into()],
    };
    index.add(vec![rec("aaaaaaa", "alpha"), rec("bbbbbbb", "alpha beta beta")]);
    let view = HistoryView::new(Arc::new(index), None);
    // N = 2, df(beta) = 1: idf = ln(1 + 1.5 / 1.5) = ln 2; |d| = 3, avg 2:
    // tf part = 2 · 2.2 / (2 + 1.2 · (0.25 + 0.75 · 1.5)) = 4.4 / 3.65.
    let expected = 2f32.ln() * 4.4 / 3.65;
    let scores = view.score_commits("beta");
    assert_eq!(scores.len(), 1);
    assert!((scores[0].1 - expected).abs() < 1e-5, "{scores:?} vs {expected}");
    // A term the query repeats counts each time (query-term frequency).
    let twice = view.score_commits("beta beta");
    assert!((twice[0].1 - 2.0 * expected).abs() < 1e-5);
}

#[test]
fn git_log_records_parse_with_their_files() {
    let raw = b"\x1eabc1234\x1fdef5678\x1fFix the thing\n\nLonger body\x1f\n\npkg/a.py\npkg/b.py\n\x1edef5678\x1f\x1fInitial\x1f\n\npkg/a.py\n";
    let commits = log::parse_log(raw);
    assert_eq!(commits.len(), 2);
    assert_eq!(commits[0].parents, vec!["def5678"]);
    assert_eq!(commits[0].message, "Fix the thing\n\nLonger body");
    assert_eq!(commits[0].files, vec!["pkg/a.py", "pkg/b.py"]);
    assert!(commits[1].parents.is_empty());
}
