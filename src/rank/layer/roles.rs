//! Path priors by role ([`crate::lang::roles`]): a chunk of an example, doc, benchmark,
//! fixture, compat shim or type stub, or of a re-export barrel (a barrel-named file that defines
//! nothing), scores × the prior. Tests have their own demotion before fusion
//! ([`crate::rank::fusion::demote_tests`]).

use crate::chunk::ChunkKind;
use crate::engine::RepoIndex;
use crate::index::Hit;
use crate::lang::roles::{is_barrel_name, path_role, PathRole};

/// Whether `path` is a barrel in `repo`: its name is one its row re-exports through and none of
/// its chunks defines anything (module code and windows only).
pub fn is_barrel(repo: &RepoIndex, path: &str) -> bool {
    if !is_barrel_name(path) {
        return false;
    }
    let Some(span) = repo.file_span(path) else { return false };
    (span.first..span.first + span.count).all(|id| {
        repo.chunks.get(id as usize).is_none_or(|c| matches!(c.kind, ChunkKind::Module | ChunkKind::Window))
    })
}

/// Whether a chunk at `path` is of a role the prior ranks down.
pub fn ranked_down(repo: &RepoIndex, path: &str) -> bool {
    path_role(path) != PathRole::Source || is_barrel(repo, path)
}

/// Each hit of a ranked-down file × `prior`; best first again.
pub fn apply_priors(repo: &RepoIndex, mut hits: Vec<Hit>, prior: f32) -> Vec<Hit> {
    let mut memo: std::collections::HashMap<&str, bool> = std::collections::HashMap::new();
    for h in hits.iter_mut() {
        let Some(c) = repo.chunks.get(h.chunk as usize) else { continue };
        if *memo.entry(c.path.as_str()).or_insert_with(|| ranked_down(repo, &c.path)) {
            h.score *= prior;
        }
    }
    super::sort_hits(&mut hits);
    hits
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rank::layer::tests::repo_of;

    #[test]
    fn examples_docs_and_barrels_go_below_the_code_they_mention() {
        let repo = repo_of(&[
            ("src/pkg/__init__.py", "from .router import Router\n__all__ = ['Router']\n"),
            ("src/pkg/router.py", "class Router:\n    def add(self, rule):\n        pass\n"),
            ("examples/app.py", "def main():\n    r = Router()\n"),
            ("src/pkg/util/__init__.py", "def helper():\n    return 1\n"),
        ]);
        let id = |path: &str| repo.file_span(path).unwrap().first;
        assert!(is_barrel(&repo, "src/pkg/__init__.py"));
        assert!(!is_barrel(&repo, "src/pkg/util/__init__.py"), "it defines a function");
        let hits = vec![
            Hit { chunk: id("src/pkg/__init__.py"), score: 3.0 },
            Hit { chunk: id("examples/app.py"), score: 2.5 },
            Hit { chunk: id("src/pkg/router.py"), score: 2.0 },
            Hit { chunk: id("src/pkg/util/__init__.py"), score: 1.0 },
        ];
        let ranked = apply_priors(&repo, hits.clone(), 0.5);
        let order: Vec<&str> = ranked.iter().map(|h| repo.chunks[h.chunk as usize].path.as_str()).collect();
        assert_eq!(
            order,
            ["src/pkg/router.py", "src/pkg/__init__.py", "examples/app.py", "src/pkg/util/__init__.py"]
        );
        assert_eq!(apply_priors(&repo, hits.clone(), 1.0), hits, "a prior of 1 changes nothing");
    }
}
