//! Call graph over chunks (docs/GUIDE.md "Design choices").
//!
//! Python calls resolve as below; every other language resolves in [`other`] at the level its
//! syntax allows without types (same file, directory, type; never a guess).
//!
//! Each call site is resolved, in order, to: a module-level definition of the same file
//! (function-level imports shadow it); a name bound by `import` / `from … import`
//! (relative imports and package re-exports followed); `mod.f()` through imported
//! modules; `self.m()` / `cls.m()` to the class's method or an in-repository base
//! class's; `self.attr.m()` to a method of the class the class's methods assign to
//! `self.attr` (`self.attr = Class(…)`, or an annotation `self.attr: Class`);
//! `super().m()` to a base class's method; `Class()` to the class chunk.
//! Plain names that none of these find fall back to a repository-unique last name component
//! (not a function or class defined inside the caller: that is the caller's own); names bound to
//! modules outside the repository, ambiguous names and self-calls give no edge, and neither do
//! calls through receivers of unknown type (`x.run()`): no edge is invented.
//!
//! What stays unresolved yet may be in the repository is kept per chunk as written
//! ([`CallGraph::unresolved`]), so that clients can say where the graph has holes; builtins,
//! library calls and built-in type methods (`x.append()`, `", ".join()`) are left out of it.

mod by_name;
mod modules;
mod python;

use std::collections::{HashMap, HashSet};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::chunk::{CallSite, FileSyntax, Receiver};
use by_name::ByName;
pub use modules::{module_name_of, resolve_relative};
use python::{Repo, Target};

/// How many unresolved calls a chunk keeps (the first ones in its source).
pub const MAX_UNRESOLVED: usize = 16;

/// Edges between chunks, indexed by global chunk id: the chunks of `files[0]`, then
/// `files[1]`, … in order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallGraph {
    /// Downstream neighbours, in order of their first call in the caller's source.
    pub callees: Vec<Vec<u32>>,
    /// Upstream neighbours, by ascending caller id.
    pub callers: Vec<Vec<u32>>,
    /// Calls left unresolved that may be in the repository, as written (`ctx.lookup_default`,
    /// `self.console.print`; `….m` for a receiver that is not a dotted name), deduplicated,
    /// in source order, at most [`MAX_UNRESOLVED`] per chunk.
    pub unresolved: Vec<Vec<String>>,
    /// Calls elsewhere left unresolved that name this chunk (`item.acceptNth()` for
    /// `Item.acceptNth`): callers the graph could not confirm, as `(caller, line)`, by
    /// ascending caller id, at most [`MAX_UNRESOLVED`] per chunk. A chunk without resolved
    /// callers is not dead code while this holds some.
    pub unresolved_callers: Vec<Vec<(u32, u32)>>,
}

impl CallGraph {
    /// Global chunk ids are the chunks of files[0], then files[1], ... in order.
    pub fn build(files: &[FileSyntax]) -> CallGraph {
        let repo = Repo::new(files);
        let offsets: Vec<u32> = (0..files.len()).map(|f| repo.global_id(f, 0)).collect();
        let other = ByName::new(files, &offsets);
        type PerChunk = (Vec<u32>, Vec<String>, Vec<(String, u32)>);
        let linked: Vec<PerChunk> = files
            .par_iter()
            .enumerate()
            .flat_map_iter(|(f, file)| {
                let (repo, other) = (&repo, &other);
                let lang = crate::lang::lang_of_path(&file.path);
                let is_builtin = lang.map_or(no_builtins as fn(&str, bool) -> bool, |l| l.spec().is_builtin);
                let by_rules = lang.filter(|l| l.reads_by_rules());
                (0..file.chunks.len() as u32).map(move |local| {
                    let id = repo.global_id(f, local);
                    let sites = file.calls.get(local as usize).map(Vec::as_slice).unwrap_or(&[]);
                    let mut callees = Vec::new();
                    let mut seen = HashSet::new();
                    let mut unresolved = Vec::new();
                    let mut unknown = Vec::new();
                    for site in sites {
                        let target = match by_rules {
                            Some(lang) => other.resolve_call(f, local, lang, site),
                            None => repo.resolve_call(f, local, site),
                        };
                        match target {
                            Target::Chunk(callee) => {
                                if callee != id && seen.insert(callee) {
                                    callees.push(callee);
                                }
                            }
                            Target::Unknown => {
                                if let Some(text) = worth_listing(site, is_builtin) {
                                    if unresolved.len() < MAX_UNRESOLVED && !unresolved.contains(&text) {
                                        unresolved.push(text);
                                    }
                                    unknown.push((site.name.clone(), site.line));
                                }
                            }
                            Target::Outside => {}
                        }
                    }
                    (callees, unresolved, unknown)
                })
            })
            .collect();
        let mut callees = Vec::with_capacity(linked.len());
        let mut unresolved = Vec::with_capacity(linked.len());
        let mut unknown = Vec::with_capacity(linked.len());
        for (c, u, k) in linked {
            callees.push(c);
            unresolved.push(u);
            unknown.push(k);
        }
        let unresolved_callers = unresolved_callers(files, &unknown);
        let mut callers = vec![Vec::new(); callees.len()];
        for (caller, targets) in callees.iter().enumerate() {
            for &callee in targets {
                if let Some(list) = callers.get_mut(callee as usize) {
                    list.push(caller as u32);
                }
            }
        }
        CallGraph { callees, callers, unresolved, unresolved_callers }
    }

    /// Number of (caller, callee) edges.
    /// A graph without edges over `chunks` chunks, for clients that never follow calls (a
    /// BM25 or plain dense eval): linking calls costs as much as building the BM25 index.
    pub fn unlinked(chunks: usize) -> CallGraph {
        CallGraph {
            callees: vec![Vec::new(); chunks],
            callers: vec![Vec::new(); chunks],
            unresolved: vec![Vec::new(); chunks],
            unresolved_callers: vec![Vec::new(); chunks],
        }
    }

    pub fn edge_count(&self) -> usize {
        self.callees.iter().map(Vec::len).sum()
    }
}

/// Per chunk, the unresolved calls (`unknown[caller]`: name and line) that name it: its own
/// name's last component (`acceptNth` of `Item.acceptNth`). Module chunks are never called.
fn unresolved_callers(files: &[FileSyntax], unknown: &[Vec<(String, u32)>]) -> Vec<Vec<(u32, u32)>> {
    let mut by_name: HashMap<&str, Vec<u32>> = HashMap::new();
    let chunks = files.iter().flat_map(|f| f.chunks.iter());
    for (id, chunk) in chunks.enumerate() {
        if chunk.kind != crate::chunk::ChunkKind::Module {
            let last = crate::chunk::own_name(&chunk.name);
            by_name.entry(last).or_default().push(id as u32);
        }
    }
    let mut out = vec![Vec::new(); unknown.len()];
    for (caller, sites) in unknown.iter().enumerate() {
        for (name, line) in sites {
            for &callee in by_name.get(name.as_str()).map(Vec::as_slice).unwrap_or(&[]) {
                let list: &mut Vec<(u32, u32)> = &mut out[callee as usize];
                if callee as usize != caller && list.len() < MAX_UNRESOLVED {
                    list.push((caller as u32, *line));
                }
            }
        }
    }
    out
}

fn no_builtins(_: &str, _: bool) -> bool {
    false
}

/// An unresolved call as written, unless the file's language says it is most likely its own
/// (`LangSpec::is_builtin`: Python's `parts.append`, `x.__enter__`).
fn worth_listing(site: &CallSite, is_builtin: fn(&str, bool) -> bool) -> Option<String> {
    let name = site.name.as_str();
    let with_receiver = !matches!(site.receiver, Receiver::None | Receiver::Local);
    if is_builtin(name, with_receiver) {
        return None;
    }
    let written = match &site.receiver {
        Receiver::None | Receiver::Local => name.to_string(),
        Receiver::Path(path) => {
            // Go's receiver as the code names it (`t.pwindow.Height`), not the `self` it resolved as.
            let mut parts: Vec<&str> = path.iter().map(String::as_str).collect();
            if let (Some(first), Some(own)) = (parts.first_mut(), site.self_written.as_deref()) {
                if *first == "self" {
                    *first = own;
                }
            }
            format!("{}.{name}", parts.join("."))
        }
        Receiver::Super => format!("super().{name}"),
        Receiver::Other => format!("….{name}"),
    };
    // A module's function as written (Lua's `table.insert`) may be the language's own too.
    let qualified = matches!(site.receiver, Receiver::Path(_));
    (!(qualified && is_builtin(&written, false))).then_some(written)
}

#[cfg(test)]
mod tests;
