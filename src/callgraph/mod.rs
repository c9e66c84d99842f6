//! Call graph over chunks (docs/GUIDE.md "Design choices").
//!
//! Each call site is resolved, in order, to: a module-level definition of the same file
//! (function-level imports shadow it); a name bound by `import` / `from … import`
//! (relative imports and package re-exports followed); `mod.f()` through imported
//! modules; `self.m()` / `cls.m()` to the class's method or an in-repository base
//! class's; `super().m()` to a base class's method; `Class()` to the class chunk.
//! Names that none of these find fall back to a repository-unique last name component;
//! names bound to modules outside the repository, ambiguous names and self-calls give no edge,
//! and neither do built-in type methods (`x.append()`, `d.items()`) on unresolved receivers.

mod modules;
mod resolve;

use std::collections::HashSet;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::chunk::FileSyntax;
pub use modules::{module_name_of, resolve_relative};
use resolve::Repo;

/// Edges between chunks, indexed by global chunk id: the chunks of `files[0]`, then
/// `files[1]`, … in order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallGraph {
    /// Downstream neighbours, in order of their first call in the caller's source.
    pub callees: Vec<Vec<u32>>,
    /// Upstream neighbours, by ascending caller id.
    pub callers: Vec<Vec<u32>>,
}

impl CallGraph {
    /// Global chunk ids are the chunks of files[0], then files[1], ... in order.
    pub fn build(files: &[FileSyntax]) -> CallGraph {
        let repo = Repo::new(files);
        let callees: Vec<Vec<u32>> = files
            .par_iter()
            .enumerate()
            .flat_map_iter(|(f, file)| {
                let repo = &repo;
                (0..file.chunks.len() as u32).map(move |local| {
                    let id = repo.global_id(f, local);
                    let sites = file.calls.get(local as usize).map(Vec::as_slice).unwrap_or(&[]);
                    let mut seen = HashSet::new();
                    sites
                        .iter()
                        .filter_map(|site| repo.resolve_call(f, local, site))
                        .filter(|&callee| callee != id && seen.insert(callee))
                        .collect()
                })
            })
            .collect();
        let mut callers = vec![Vec::new(); callees.len()];
        for (caller, targets) in callees.iter().enumerate() {
            for &callee in targets {
                if let Some(list) = callers.get_mut(callee as usize) {
                    list.push(caller as u32);
                }
            }
        }
        CallGraph { callees, callers }
    }

    /// Number of (caller, callee) edges.
    /// A graph without edges over `chunks` chunks, for clients that never follow calls (a
    /// BM25 or plain dense eval): linking calls costs as much as building the BM25 index.
    pub fn unlinked(chunks: usize) -> CallGraph {
        CallGraph { callees: vec![Vec::new(); chunks], callers: vec![Vec::new(); chunks] }
    }

    pub fn edge_count(&self) -> usize {
        self.callees.iter().map(Vec::len).sum()
    }
}

#[cfg(test)]
mod tests;
