//! Indexing a repository: walk → read → chunk → call graph → BM25, with an incremental cache.
//!
//! The cache holds a manifest (every file's size, mtime, content hash and parsed syntax) and a
//! tantivy index tagged with the manifest's id. An unchanged file is never read again; an
//! edited, added or deleted file updates only its own documents. The manifest is written last
//! and atomically, so an interrupted run leaves the previous consistent cache (or none).

mod bm25_sync;
mod graph_cache;
mod manifest;
mod notes_seen;
mod snapshots;
mod syntax_store;

use crate::cache;
use crate::callgraph::CallGraph;
use crate::chunk::{chunk_file, Chunk, FileSyntax};
use crate::error::{Error, Result};
use crate::index::bm25::{self, Bm25Index, FieldBoosts};
use crate::index::Hit;
use crate::lang::LangSet;
use crate::progress::{Phase, Progress};
use crate::repo::source::{SkipCounts, DEFAULT_MAX_FILE_SIZE};
use crate::repo::walk::walk_sources;
use bm25_sync::{build_bm25_in_memory, sync_bm25_on_disk};
use manifest::{
    load_manifest, manifest_id, read_and_parse, same_files, token_totals, CachedFile, Manifest, OldManifest,
    MANIFEST_FILE, MANIFEST_VERSION,
};
use rayon::prelude::*;
use serde::Serialize;
pub use snapshots::SnapshotIndexer;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;
pub use syntax_store::{load_syntax, save_syntax};

#[derive(Clone, Debug)]
pub struct IndexOptions {
    pub max_file_size: u64,
    /// Cache root override (`--cache-dir`); see [`cache::cache_root`].
    pub cache_dir: Option<PathBuf>,
    /// Build everything in memory and touch no cache.
    pub no_cache: bool,
    /// The languages indexed (`--lang`); all of them by default.
    pub langs: LangSet,
    /// Index vendored, minified, built and generated files too (`--include-generated`;
    /// [`crate::repo::generated`]).
    pub keep_generated: bool,
}

impl Default for IndexOptions {
    fn default() -> Self {
        IndexOptions {
            max_file_size: DEFAULT_MAX_FILE_SIZE,
            cache_dir: None,
            no_cache: false,
            langs: LangSet::all(),
            keep_generated: false,
        }
    }
}

/// How the cache served this run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheState {
    /// Nothing usable: everything was built.
    Cold,
    /// Some files changed and were re-indexed.
    Updated,
    /// Nothing changed.
    Warm,
    /// Caching was off.
    Off,
}

impl CacheState {
    /// For people: `cold cache`, `cache updated`, `warm cache`, `no cache`.
    pub fn describe(self) -> &'static str {
        match self {
            CacheState::Cold => "cold cache",
            CacheState::Updated => "cache updated",
            CacheState::Warm => "warm cache",
            CacheState::Off => "no cache",
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct IndexStats {
    pub files: usize,
    pub chunks: usize,
    pub edges: usize,
    pub skipped: SkipCounts,
    /// Files that parsed with errors (their recovered chunks are indexed).
    pub syntax_errors: usize,
    /// Files read and chunked in this run (the rest came from the cache).
    pub parsed: usize,
    pub cache: CacheState,
    pub seconds: f64,
}

/// Parsed files by blake3 of (path, content); see [`RepoIndex::from_texts`].
pub type SyntaxCache = HashMap<[u8; 32], FileSyntax>;

fn syntax_key(path: &str, text: &str) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    h.update(path.as_bytes());
    h.update(&[0]);
    h.update(text.as_bytes());
    *h.finalize().as_bytes()
}

/// A file of the index and where its chunks sit in the global list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileSpan {
    pub path: String,
    /// Global id of the file's first chunk.
    pub first: u32,
    pub count: u32,
}

/// An indexed repository: its chunks, call graph and BM25 index.
pub struct RepoIndex {
    pub root: PathBuf,
    pub chunks: Vec<Chunk>,
    pub graph: CallGraph,
    pub stats: IndexStats,
    /// Diagnostics (skipped files, cache rebuilds), one line each, for stderr or a log pane.
    pub notes: Vec<String>,
    /// Each indexed file and the global ids of its chunks, in path order.
    pub files: Vec<FileSpan>,
    /// This repository's cache directory, when caching is on (dense vectors live here too).
    pub cache_entry: Option<PathBuf>,
    /// `(path, ordinal within file)` → global chunk id.
    ids: HashMap<(String, usize), u32>,
    bm25: Bm25Index,
    /// What the walk saw when the working tree was indexed (see [`RepoIndex::tree_unchanged`]).
    walked: Option<(u64, LangSet, bool, blake3::Hash)>,
}

impl RepoIndex {
    /// Indexes the working tree at `root`, reusing and updating the cache.
    pub fn open(root: &Path, opts: &IndexOptions, progress: &dyn Progress) -> Result<RepoIndex> {
        let started = Instant::now();
        let root = validate_root(root)?;
        // The walk cannot count ahead: no total until it is done.
        progress.report(Phase::Walk, 0, 0);
        let walk = walk_sources(&root, opts.max_file_size, opts.langs, opts.keep_generated);
        progress.report(Phase::Walk, walk.files.len(), walk.files.len());
        let no_files = |unreadable| Error::NoSourceFiles {
            root: root.to_path_buf(),
            unreadable,
            langs: opts.langs.names(),
        };
        if walk.files.is_empty() {
            return Err(no_files(false));
        }
        let mut notes = walk.notes;
        let mut skipped = walk.skipped;

        let entry = cache_entry_at(&root, opts)?;
        let old = entry.as_deref().and_then(|dir| load_manifest(dir, &mut notes));
        let (old, old_files) = match old {
            Some(m) => (Some(OldManifest::of(&m)), m.files),
            None => (None, Vec::new()),
        };
        check_cancel(progress)?;

        let (files, parsed) =
            read_and_parse(&walk.files, old_files, opts.max_file_size, &mut skipped, &mut notes, progress)?;
        check_cancel(progress)?;
        if files.is_empty() {
            return Err(no_files(true));
        }
        let id = manifest_id(&files);
        let manifest = Manifest { id, files };

        let n_chunks: usize = manifest.files.iter().map(|f| f.syntax.chunks.len()).sum();
        progress.report(Phase::Bm25, 0, n_chunks);
        let (mut bm25, cache_state) = match entry.as_deref() {
            None => (build_bm25_in_memory(&manifest.files)?, CacheState::Off),
            Some(dir) => sync_bm25_on_disk(dir, old.as_ref(), &manifest, &mut notes)?,
        };
        bm25.set_token_totals(token_totals(&manifest.files));
        progress.report(Phase::Bm25, n_chunks, n_chunks);
        check_cancel(progress)?;
        if let Some(dir) = entry.as_deref() {
            let unchanged = old.as_ref().is_some_and(|o| same_files(o, &manifest));
            if !unchanged {
                // A cache that cannot be written (read-only) costs the next run its warm
                // start, not this run.
                if let Err(e) = cache::write_framed(&dir.join(MANIFEST_FILE), MANIFEST_VERSION, &manifest) {
                    notes.push(format!("cache not written ({e}); the next run starts cold"));
                }
            }
        }
        let cached_graph = entry.as_deref().and_then(|dir| graph_cache::load(dir, &manifest.id, n_chunks));
        let had_graph = cached_graph.is_some();
        let linking = cached_graph.map_or(Linking::Build, Linking::Cached);
        let mut index = assemble(
            root,
            manifest.files,
            bm25,
            skipped,
            parsed,
            cache_state,
            notes,
            started,
            linking,
            progress,
        );
        if let (Some(dir), false) = (entry.as_deref(), had_graph) {
            graph_cache::store(dir, &manifest.id, &index.graph, &mut index.notes);
        }
        index.cache_entry = entry;
        index.walked = Some((opts.max_file_size, opts.langs, opts.keep_generated, walk_digest(&walk.files)));
        Ok(index)
    }

    /// Whether the working tree still holds the files this index was opened from, each with
    /// the same size, mtime, ctime and inode: one walk and a stat per file, nothing read. When
    /// it does, [`RepoIndex::open`] would rebuild this same index from the cache, so a warm
    /// server can skip it (on sympy the open costs ~0.3 s, the walk a fraction of it).
    pub fn tree_unchanged(&self, opts: &IndexOptions) -> bool {
        self.walked.as_ref().is_some_and(|(max, langs, keep, digest)| {
            *max == opts.max_file_size
                && *langs == opts.langs
                && *keep == opts.keep_generated
                && walk_digest(&walk_sources(&self.root, *max, *langs, *keep).files) == *digest
        })
    }

    /// Indexes in-memory sources (a git snapshot for eval) without touching the disk cache.
    /// `syntax_cache` keeps parsed files by (path, content) across calls, so the snapshots of
    /// one repository at many commits parse each file version once.
    pub fn from_texts(
        root: PathBuf,
        texts: &[(String, String)],
        syntax_cache: &mut SyntaxCache,
    ) -> Result<RepoIndex> {
        Self::from_texts_with(root, texts, syntax_cache, true)
    }

    /// [`RepoIndex::from_texts`]; without `link_calls` the call graph has no edges.
    pub fn from_texts_with(
        root: PathBuf,
        texts: &[(String, String)],
        syntax_cache: &mut SyntaxCache,
        link_calls: bool,
    ) -> Result<RepoIndex> {
        let started = Instant::now();
        let (files, parsed) = parse_texts(texts, syntax_cache);
        let bm25 = build_bm25_in_memory(&files)?;
        Ok(assemble_snapshot(root, files, bm25, parsed, started, link_calls))
    }

    /// BM25 ranking of the top `k` chunks for `query`.
    pub fn search_bm25(&self, query: &str, k: usize) -> Result<Vec<Hit>> {
        self.search_bm25_with(query, k, FieldBoosts::default())
    }

    pub fn search_bm25_with(&self, query: &str, k: usize, boosts: FieldBoosts) -> Result<Vec<Hit>> {
        Ok(bm25::to_global(self.bm25.search(query, k, boosts)?, &self.ids))
    }

    /// The chunks of `path`, if the index holds that file.
    pub fn file_chunks(&self, path: &str) -> Option<&[Chunk]> {
        let f = self.file_span(path)?;
        Some(&self.chunks[f.first as usize..(f.first + f.count) as usize])
    }

    /// The indexed file at `path` and the global ids of its chunks.
    pub fn file_span(&self, path: &str) -> Option<&FileSpan> {
        let i = self.files.binary_search_by(|f| f.path.as_str().cmp(path)).ok()?;
        Some(&self.files[i])
    }

    /// Reads a chunk's whole file from the working tree (for previews).
    pub fn file_source(&self, path: &str) -> Option<String> {
        std::fs::read_to_string(self.root.join(path)).ok()
    }
}

/// What a client checks before it loads anything: `root` is a directory the walk finds a
/// source file of `langs` in. The error is the one [`RepoIndex::open`] would give after the walk.
pub fn check_checkout(root: &Path, langs: LangSet) -> Result<PathBuf> {
    let root = validate_root(root)?;
    if !crate::repo::walk::has_source_file(&root, langs) {
        return Err(Error::NoSourceFiles { root, unreadable: false, langs: langs.names() });
    }
    Ok(root)
}

/// The cache entry of the checkout at `root` (`None` with `no_cache`): where its manifest,
/// parses and vectors live, and where the processes serving it meet (`mcp::owner`).
pub fn cache_entry_of(root: &Path, opts: &IndexOptions) -> Result<Option<PathBuf>> {
    cache_entry_at(&validate_root(root)?, opts)
}

fn cache_entry_at(canonical_root: &Path, opts: &IndexOptions) -> Result<Option<PathBuf>> {
    if opts.no_cache {
        return Ok(None);
    }
    Ok(Some(cache::repo_entry(&cache::cache_root(opts.cache_dir.as_deref())?, canonical_root)))
}

fn validate_root(root: &Path) -> Result<PathBuf> {
    let bad = |source| Error::Root { path: root.to_path_buf(), source };
    let meta = std::fs::metadata(root).map_err(bad)?;
    if !meta.is_dir() {
        return Err(bad(std::io::Error::new(std::io::ErrorKind::NotADirectory, "not a directory")));
    }
    std::fs::canonicalize(root).map_err(bad)
}

pub(crate) fn check_cancel(progress: &dyn Progress) -> Result<()> {
    if progress.cancelled() {
        Err(Error::Cancelled)
    } else {
        Ok(())
    }
}

/// The walked files' paths and stamps, in walk order.
fn walk_digest(files: &[crate::repo::walk::FoundFile]) -> blake3::Hash {
    let mut h = blake3::Hasher::new();
    for f in files {
        h.update(f.path.as_bytes());
        h.update(&[0]);
        for n in [f.size, f.mtime_ns as u64, (f.mtime_ns >> 64) as u64, f.ctime_ns, f.ino] {
            h.update(&n.to_le_bytes());
        }
    }
    h.finalize()
}

/// In-memory sources as index files in path order, parsed through `syntax_cache` (each file's
/// `hash` is its cache key: path and content); and how many were parsed now.
fn parse_texts(texts: &[(String, String)], syntax_cache: &mut SyntaxCache) -> (Vec<CachedFile>, usize) {
    let keys: Vec<[u8; 32]> = texts.par_iter().map(|(p, t)| syntax_key(p, t)).collect();
    let todo: Vec<usize> = (0..texts.len()).filter(|&i| !syntax_cache.contains_key(&keys[i])).collect();
    let parsed_now: Vec<([u8; 32], FileSyntax)> =
        todo.par_iter().map(|&i| (keys[i], chunk_file(&texts[i].0, &texts[i].1))).collect();
    let parsed = parsed_now.len();
    syntax_cache.extend(parsed_now);
    let mut files: Vec<CachedFile> = keys
        .iter()
        .filter_map(|k| Some((k, syntax_cache.get(k)?)))
        .map(|(k, syntax)| CachedFile {
            path: syntax.path.clone(),
            stamp: Default::default(),
            tokens: [0; 3],
            hash: *k,
            syntax: syntax.clone(),
        })
        .collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    (files, parsed)
}

/// [`assemble`] for in-memory sources: no cache, nothing skipped, no progress.
fn assemble_snapshot(
    root: PathBuf,
    files: Vec<CachedFile>,
    bm25: Bm25Index,
    parsed: usize,
    started: Instant,
    link_calls: bool,
) -> RepoIndex {
    let skipped = SkipCounts::default();
    let none = &crate::progress::NoProgress;
    let linking = if link_calls { Linking::Build } else { Linking::Unlinked };
    assemble(root, files, bm25, skipped, parsed, CacheState::Off, Vec::new(), started, linking, none)
}

/// Where [`assemble`] gets the call graph.
enum Linking {
    Build,
    /// No edges (eval snapshots that never look at neighbours).
    Unlinked,
    /// Read from the cache for these very files ([`graph_cache`]).
    Cached(CallGraph),
}

#[allow(clippy::too_many_arguments)]
fn assemble(
    root: PathBuf,
    files: Vec<CachedFile>,
    bm25: Bm25Index,
    skipped: SkipCounts,
    parsed: usize,
    cache: CacheState,
    mut notes: Vec<String>,
    started: Instant,
    linking: Linking,
    progress: &dyn Progress,
) -> RepoIndex {
    let syntax_errors = files.iter().filter(|f| f.syntax.has_syntax_errors).count();
    for f in files.iter().filter(|f| f.syntax.has_syntax_errors) {
        notes.push(format!("{}: syntax errors; indexed what the parser recovered", f.path));
    }
    let syntaxes: Vec<FileSyntax> = files.into_iter().map(|f| f.syntax).collect();
    let n_chunks = syntaxes.iter().map(|s| s.chunks.len()).sum();
    progress.report(Phase::CallGraph, 0, n_chunks);
    let graph = match linking {
        Linking::Build => CallGraph::build(&syntaxes),
        Linking::Unlinked => CallGraph::unlinked(n_chunks),
        Linking::Cached(graph) => graph,
    };
    progress.report(Phase::CallGraph, n_chunks, n_chunks);
    let files_count = syntaxes.len();
    let mut ids = HashMap::new();
    let mut chunks = Vec::new();
    let mut spans = Vec::with_capacity(files_count);
    for s in syntaxes {
        spans.push(FileSpan {
            path: s.path.clone(),
            first: chunks.len() as u32,
            count: s.chunks.len() as u32,
        });
        for (ord, c) in s.chunks.into_iter().enumerate() {
            ids.insert((s.path.clone(), ord), chunks.len() as u32);
            chunks.push(c);
        }
    }
    let stats = IndexStats {
        files: files_count,
        chunks: chunks.len(),
        edges: graph.edge_count(),
        skipped,
        syntax_errors,
        parsed,
        cache,
        seconds: started.elapsed().as_secs_f64(),
    };
    RepoIndex { root, chunks, graph, stats, notes, files: spans, cache_entry: None, ids, bm25, walked: None }
}

#[cfg(test)]
mod cache_tests;
