//! One instance's base-commit snapshot, indexed, with the gold chunks its patch touches.
//!
//! Shared by the eval loop and by training, so both see the same chunks, call graph and
//! gold rules.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::gold::{gold_chunks, FileChunks, Gold};
use super::instances::Instance;
use super::patch::parse_patch;
use crate::engine::{RepoIndex, SnapshotIndexer};
use crate::error::{Error, Result};
use crate::repo::generated;
use crate::repo::git::{read_snapshot_with, BlobCache};
use crate::repo::source::{decode_source, is_source_path, is_test_path, SkipReason};

/// An instance's snapshot index and its gold.
pub struct InstanceSnapshot {
    pub index: RepoIndex,
    pub gold: Gold,
    /// Global chunk ids of the gold chunks, in the gold's order; empty when the patch
    /// touches no indexed chunk.
    pub gold_ids: Vec<usize>,
}

/// What goes into an instance's snapshot index.
#[derive(Clone, Copy, Debug)]
pub struct SnapshotOptions {
    /// Larger source files are left out.
    pub max_file_size: u64,
    /// Leave test files out of the index.
    pub exclude_tests: bool,
    /// Link calls into a call graph (only the callees' chunk input and graph propagation use
    /// it; without, the graph has no edges).
    pub link_calls: bool,
    /// Index vendored, minified, built and generated files too ([`crate::repo::generated`]).
    pub keep_generated: bool,
}

/// What indexing one snapshot of a repository leaves for the next: the blobs read, the parsed
/// files and the BM25 index. Instances of one repository share one.
#[derive(Default)]
pub struct RepoSnapshots {
    pub blobs: BlobCache,
    pub indexer: SnapshotIndexer,
}

/// Reads `inst`'s base commit from `git_dir`, indexes its source files and places the patch's
/// gold chunks. Errors name the instance. `snapshots` carries blobs, parsed files and the BM25
/// index from one snapshot of the repository to the next.
pub fn index_instance(
    inst: &Instance,
    git_dir: &Path,
    opts: SnapshotOptions,
    snapshots: &mut RepoSnapshots,
) -> Result<InstanceSnapshot> {
    let fail = |m: String| Error::context(&inst.instance_id, m);
    let patch =
        parse_patch(&inst.patch).map_err(|e| fail(format!("patch line {}: {}", e.line, e.message)))?;
    let wanted = |p: &str| is_source_path(p) && !(opts.exclude_tests && is_test_path(p));
    let snapshot = read_snapshot_with(git_dir, &inst.base_commit, wanted, &mut snapshots.blobs)
        .map_err(|e| fail(e.to_string()))?;
    // The checkout's rule (`crate::repo::generated`): vendored, minified, built and generated
    // files are not the code an issue is about; nor the other builds of a bundle left out.
    let mut files = snapshot.files;
    if !opts.keep_generated {
        let why = |(p, bytes): &(String, Vec<u8>)| {
            let (head, tail) = generated::head_and_tail(bytes);
            generated::by_path(p).or_else(|| generated::by_content(head, tail))
        };
        let left_out: Vec<(String, SkipReason)> =
            files.iter().filter_map(|f| why(f).map(|r| (f.0.clone(), r))).collect();
        let left: Vec<(&str, SkipReason)> = left_out.iter().map(|(p, r)| (p.as_str(), *r)).collect();
        let mut drop: std::collections::HashSet<String> =
            generated::built_siblings(files.iter().map(|(p, _)| p.as_str()), &left)
                .into_iter()
                .map(String::from)
                .collect();
        drop.extend(left_out.into_iter().map(|(p, _)| p));
        files.retain(|(p, _)| !drop.contains(p));
    }
    let texts: Vec<(String, String)> = files
        .into_iter()
        .filter_map(|(p, bytes)| decode_source(bytes, opts.max_file_size).ok().map(|t| (p, t)))
        .collect();
    let root = PathBuf::from(format!("{}@{}", inst.repo, inst.base_commit));
    let index = snapshots.indexer.index(root, &texts, opts.link_calls)?;
    let sources: HashMap<&str, &str> = texts.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    let gold = gold_chunks(&patch, |path| {
        let chunks = index.file_chunks(path)?;
        let source = sources.get(path)?;
        Some(FileChunks { chunks, source })
    });
    let gold_ids: Vec<usize> =
        gold.chunks.iter().filter_map(|g| Some(index.file_span(&g.path)?.first as usize + g.index)).collect();
    Ok(InstanceSnapshot { index, gold, gold_ids })
}

/// The retrieval query of an instance: the issue, and its hints when asked for and present.
pub fn instance_query(inst: &Instance, use_hints: bool) -> String {
    match (&inst.hints_text, use_hints) {
        (Some(h), true) if !h.trim().is_empty() => format!("{}\n{}", inst.problem_statement, h),
        _ => inst.problem_statement.clone(),
    }
}
