//! Commit messages as BM25 postings, and file scores for a query.

use std::collections::HashMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::log::CommitRecord;
use crate::index::code_tokens::tokens;
use crate::index::query_terms::query_terms;

/// Okapi BM25 constants, as for chunks.
const K1: f32 = 1.2;
const B: f32 = 0.75;

/// Every commit read so far: message postings, parents (for masking) and changed files.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct HistoryIndex {
    ids: Vec<String>,
    parents: Vec<Vec<u32>>,
    files: Vec<Vec<u32>>,
    /// Message lengths in tokens.
    lens: Vec<u32>,
    paths: Vec<String>,
    postings: HashMap<String, Vec<(u32, u32)>>,
    /// The commits it was read up to (`HEAD` or every ref's tip when read).
    pub tips: Vec<String>,
    #[serde(skip)]
    by_id: HashMap<String, u32>,
    #[serde(skip)]
    by_path: HashMap<String, u32>,
}

/// How file scores are formed from matching commits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HistoryParams {
    /// Only the best-scoring commits count.
    pub top_commits: usize,
    /// Commits that changed more files than this are skipped (mass renames and reformatting
    /// say nothing about one issue).
    pub max_files: usize,
    /// `true`: a file scores the sum of its matching commits' scores; `false`: the best one.
    pub sum: bool,
}

impl Default for HistoryParams {
    fn default() -> Self {
        // The best commit rather than the sum: fused into the hybrid it ranked better on the 51
        // tuning instances (docs/RESULTS.md "Current figures"); a file many weak matches touched is not evidence.
        HistoryParams { top_commits: 50, max_files: 50, sum: false }
    }
}

impl HistoryIndex {
    pub fn len(&self) -> usize {
        self.ids.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
    pub fn contains(&self, id: &str) -> bool {
        self.by_id.contains_key(id)
    }

    /// Rebuilds the lookup tables after deserialising.
    pub fn reindex(&mut self) {
        self.by_id = self.ids.iter().enumerate().map(|(i, id)| (id.clone(), i as u32)).collect();
        self.by_path = self.paths.iter().enumerate().map(|(i, p)| (p.clone(), i as u32)).collect();
    }

    /// Adds commits not yet present (`git log` order; parents may come later in the list).
    pub fn add(&mut self, records: Vec<CommitRecord>) {
        let records: Vec<CommitRecord> =
            records.into_iter().filter(|r| !self.by_id.contains_key(&r.id)).collect();
        for r in &records {
            let n = self.ids.len() as u32;
            self.by_id.insert(r.id.clone(), n);
            self.ids.push(r.id.clone());
        }
        for r in records {
            let n = self.by_id[&r.id];
            // Parents outside the history (a shallow clone's boundary) are left out.
            self.parents.push(r.parents.iter().filter_map(|p| self.by_id.get(p).copied()).collect());
            let files = r.files.iter().map(|f| self.path_id(f)).collect();
            self.files.push(files);
            let mut tf: HashMap<String, u32> = HashMap::new();
            let toks = tokens(&r.message);
            self.lens.push(toks.len() as u32);
            for t in toks {
                *tf.entry(t).or_default() += 1;
            }
            for (t, c) in tf {
                self.postings.entry(t).or_default().push((n, c));
            }
        }
    }

    fn path_id(&mut self, path: &str) -> u32 {
        if let Some(&i) = self.by_path.get(path) {
            return i;
        }
        let i = self.paths.len() as u32;
        self.paths.push(path.to_string());
        self.by_path.insert(path.to_string(), i);
        i
    }

    /// `commit` and every commit it descends from; `None` when `commit` is not in the index.
    pub fn ancestors(&self, commit: &str) -> Option<Vec<bool>> {
        let start = *self.by_id.get(commit)?;
        let mut seen = vec![false; self.ids.len()];
        let mut stack = vec![start];
        while let Some(c) = stack.pop() {
            if std::mem::replace(&mut seen[c as usize], true) {
                continue;
            }
            stack.extend(self.parents[c as usize].iter().copied().filter(|&p| !seen[p as usize]));
        }
        Some(seen)
    }
}

/// A file's history score and how many of the counted commits changed it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FileScore<'a> {
    pub path: &'a str,
    pub score: f32,
    pub commits: u32,
}

/// The history as one search sees it: all of it, or only the commits `mask` allows.
#[derive(Clone)]
pub struct HistoryView {
    pub index: Arc<HistoryIndex>,
    mask: Option<Arc<Vec<bool>>>,
    n: usize,
    avg_len: f32,
    /// The indexed directory's path inside the repository (`src/`; empty at the top level):
    /// history paths are relative to the top, the index's to the directory.
    prefix: String,
}

impl HistoryView {
    pub fn new(index: Arc<HistoryIndex>, mask: Option<Vec<bool>>) -> Self {
        let allowed = |i: usize| mask.as_ref().is_none_or(|m| m[i]);
        let (mut n, mut total) = (0usize, 0u64);
        for (i, &len) in index.lens.iter().enumerate() {
            if allowed(i) {
                n += 1;
                total += len as u64;
            }
        }
        let avg_len = if n == 0 { 1.0 } else { (total as f32 / n as f32).max(1.0) };
        HistoryView { index, mask: mask.map(Arc::new), n, avg_len, prefix: String::new() }
    }

    /// This view for an index of the repository's subdirectory `dir` (`/`-separated, relative
    /// to the top level): files outside it drop out, and the rest are named relative to it.
    pub fn within(mut self, dir: &str) -> Self {
        let dir = dir.trim_matches('/');
        self.prefix = if dir.is_empty() { String::new() } else { format!("{dir}/") };
        self
    }

    /// Commits this view searches.
    pub fn commits(&self) -> usize {
        self.n
    }

    fn allowed(&self, c: u32) -> bool {
        self.mask.as_ref().is_none_or(|m| m[c as usize])
    }

    /// BM25 scores of the allowed commits' messages for `query`, best first.
    pub fn score_commits(&self, query: &str) -> Vec<(u32, f32)> {
        let ix = &self.index;
        let mut scores: HashMap<u32, f32> = HashMap::new();
        for (term, qtf) in query_terms(query) {
            let Some(list) = ix.postings.get(&term) else { continue };
            let df = list.iter().filter(|(c, _)| self.allowed(*c)).count();
            if df == 0 {
                continue;
            }
            let idf = (1.0 + (self.n as f32 - df as f32 + 0.5) / (df as f32 + 0.5)).ln();
            for &(c, tf) in list.iter().filter(|(c, _)| self.allowed(*c)) {
                let tf = tf as f32;
                let norm = K1 * (1.0 - B + B * ix.lens[c as usize] as f32 / self.avg_len);
                *scores.entry(c).or_default() += qtf as f32 * idf * tf * (K1 + 1.0) / (tf + norm);
            }
        }
        let mut ranked: Vec<(u32, f32)> = scores.into_iter().collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked
    }

    /// Files by the scores of the best-matching commits that changed them, best first.
    pub fn score_files(&self, query: &str, params: HistoryParams) -> Vec<(&str, f32)> {
        self.rank_files(query, params).into_iter().map(|f| (f.path, f.score)).collect()
    }

    /// Files by score, best first. Every file a commit changed gets the same score from it, so
    /// ties are common (a fix and its test): they go to the file more matching commits changed
    /// (more evidence), then by path.
    pub fn rank_files(&self, query: &str, params: HistoryParams) -> Vec<FileScore<'_>> {
        let ix = &self.index;
        let mut files: HashMap<u32, (f32, u32)> = HashMap::new();
        let useful = self
            .score_commits(query)
            .into_iter()
            .filter(|(c, _)| {
                let n = ix.files[*c as usize].len();
                n > 0 && n <= params.max_files
            })
            .take(params.top_commits);
        for (c, score) in useful {
            for &f in &ix.files[c as usize] {
                let (s, n) = files.entry(f).or_default();
                *s = if params.sum { *s + score } else { s.max(score) };
                *n += 1;
            }
        }
        let mut ranked: Vec<FileScore> = files
            .into_iter()
            .filter_map(|(f, (score, commits))| {
                let path = ix.paths[f as usize].strip_prefix(self.prefix.as_str())?;
                Some(FileScore { path, score, commits })
            })
            .collect();
        ranked.sort_by(|a, b| {
            b.score.total_cmp(&a.score).then(b.commits.cmp(&a.commits)).then(a.path.cmp(b.path))
        });
        ranked
    }
}
