//! The call graph kept beside the manifest: a warm open of an unchanged tree reads it instead
//! of resolving every call again (sympy: 0.7–0.9 s of a ~0.9 s warm open). It is keyed by the
//! manifest's id (the files and their bytes) and by the resolver's code (`CORET_GRAPH_CODE`,
//! from build.rs), so a changed file or a changed resolver rebuilds it.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::cache;
use crate::callgraph::CallGraph;

const GRAPH_FILE: &str = "callgraph.bin";
/// The framing's version: the file's layout, not the resolver (that is `CORET_GRAPH_CODE`).
const GRAPH_VERSION: u32 = 1;
const CODE: &str = env!("CORET_GRAPH_CODE");

#[derive(Deserialize)]
struct Stored {
    manifest: String,
    code: String,
    graph: CallGraph,
}

/// [`Stored`] as it is written: the same fields, borrowed.
#[derive(Serialize)]
struct StoredRef<'a> {
    manifest: &'a str,
    code: &'a str,
    graph: &'a CallGraph,
}

/// The graph stored for `manifest_id` by this resolver over `chunks` chunks, if any; anything
/// else (missing, damaged, another tree or resolver) is `None`, and the caller builds it.
pub(super) fn load(dir: &Path, manifest_id: &str, chunks: usize) -> Option<CallGraph> {
    let s: Stored = cache::read_framed(&dir.join(GRAPH_FILE), GRAPH_VERSION).ok()?;
    // The chunk count too: a file whose parse ran past its budget can chunk otherwise on
    // another run with the same bytes, and a graph must never point past the chunks.
    (s.manifest == manifest_id && s.code == CODE && s.graph.callees.len() == chunks).then_some(s.graph)
}

/// Stores `graph` for the next open; a cache that cannot be written costs that open the build.
pub(super) fn store(dir: &Path, manifest_id: &str, graph: &CallGraph, notes: &mut Vec<String>) {
    let s = StoredRef { manifest: manifest_id, code: CODE, graph };
    if let Err(e) = cache::write_framed(&dir.join(GRAPH_FILE), GRAPH_VERSION, &s) {
        notes.push(format!("call graph not cached ({e}); the next open links calls again"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{IndexOptions, RepoIndex};
    use crate::progress::NoProgress;

    fn open(root: &Path, cache: &Path) -> RepoIndex {
        let opts = IndexOptions { cache_dir: Some(cache.to_path_buf()), ..IndexOptions::default() };
        RepoIndex::open(root, &opts, &NoProgress).unwrap()
    }

    /// `caller -> callee` by name, sorted.
    fn edges(idx: &RepoIndex) -> Vec<(String, String)> {
        let mut out: Vec<_> = (0..idx.chunks.len())
            .flat_map(|c| {
                idx.graph.callees[c]
                    .iter()
                    .map(move |&d| (idx.chunks[c].name.clone(), idx.chunks[d as usize].name.clone()))
            })
            .collect();
        out.sort();
        out
    }

    #[test]
    fn a_warm_open_reads_the_graph_and_a_changed_or_damaged_one_is_rebuilt() {
        let repo = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        std::fs::write(
            repo.path().join("a.py"),
            "def helper():\n    return 1\n\n\ndef main():\n    return helper()\n",
        )
        .unwrap();
        let cold = open(repo.path(), cache.path());
        let want = vec![("main".to_string(), "helper".to_string())];
        assert_eq!(edges(&cold), want);
        let entry = cold.cache_entry.clone().unwrap();
        let stored = std::fs::read(entry.join(GRAPH_FILE)).unwrap();

        // Warm: the stored graph is the one used (a tampered copy shows it), keyed by the files.
        let warm = open(repo.path(), cache.path());
        assert_eq!(warm.graph, cold.graph);
        let mut none = cold.graph.clone();
        none.callees.iter_mut().for_each(Vec::clear);
        store(&entry, &load_id(&entry), &none, &mut Vec::new());
        assert!(edges(&open(repo.path(), cache.path())).is_empty(), "the cached graph is read");

        // A changed file: a new manifest, so the graph is linked again, with the new call.
        std::fs::write(
            repo.path().join("b.py"),
            "from a import helper\n\n\ndef other():\n    return helper()\n",
        )
        .unwrap();
        let changed = open(repo.path(), cache.path());
        assert_eq!(edges(&changed), vec![want[0].clone(), ("other".to_string(), "helper".to_string())]);

        // Damaged bytes are rebuilt, never trusted.
        std::fs::remove_file(repo.path().join("b.py")).unwrap();
        let mut bad = stored.clone();
        let last = bad.len() - 1;
        bad[last] ^= 0xff;
        std::fs::write(entry.join(GRAPH_FILE), bad).unwrap();
        assert_eq!(edges(&open(repo.path(), cache.path())), want);

        // Another resolver's graph for the same files is not used.
        let s = StoredRef { manifest: &load_id(&entry), code: "another resolver", graph: &none };
        cache::write_framed(&entry.join(GRAPH_FILE), GRAPH_VERSION, &s).unwrap();
        assert_eq!(edges(&open(repo.path(), cache.path())), want);
    }

    /// The manifest id the entry's stored graph was written for.
    fn load_id(entry: &Path) -> String {
        let s: Stored = cache::read_framed(&entry.join(GRAPH_FILE), GRAPH_VERSION).unwrap();
        s.manifest
    }
}
