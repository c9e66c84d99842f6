//! The grouped view of a ranking: one group per file, at its best chunk's rank, the file's
//! other ranked chunks nested beneath in ranking order. A file's module chunk (its imports,
//! constants) belongs to its file's group and never heads it while the file has another chunk
//! in the ranking: it takes no row of its own. Every client that shows files (the TUI's
//! columns, the JSON answer, MCP `locate`) and eval's grouped metrics read this one view.

use crate::engine::RepoIndex;
use crate::index::Hit;

/// One ranked chunk inside a group, with its rank in the flat ranking (1-based).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GroupedHit {
    pub rank: usize,
    pub hit: Hit,
}

/// One file's chunks in a ranking. `hits[0]` is the file's row (its best chunk that is not
/// the module chunk, or the module chunk when it is the file's only hit); the others follow in
/// ranking order.
#[derive(Clone, Debug, PartialEq)]
pub struct FileGroup {
    pub path: String,
    pub hits: Vec<GroupedHit>,
}

impl FileGroup {
    /// The chunk that stands for the file.
    pub fn head(&self) -> &GroupedHit {
        &self.hits[0]
    }

    /// The flat rank of the file's best chunk: where the group stands.
    pub fn best_rank(&self) -> usize {
        self.hits.iter().map(|h| h.rank).min().unwrap_or(usize::MAX)
    }

    /// The best score among the file's chunks.
    pub fn best_score(&self) -> f32 {
        self.hits.iter().map(|h| h.hit.score).fold(f32::NEG_INFINITY, f32::max)
    }

    /// How many chunks are nested beneath the head.
    pub fn more(&self) -> usize {
        self.hits.len() - 1
    }
}

/// Groups `hits` (best first) by file: `path_of` gives a chunk's file (`None`: the hit is left
/// out), `is_module` whether it is its file's module chunk. Groups come in the order of their
/// best chunk; every hit of the ranking lands in exactly one group.
pub fn group_hits<'a>(
    hits: &[Hit],
    path_of: impl Fn(u32) -> Option<&'a str>,
    is_module: impl Fn(u32) -> bool,
) -> Vec<FileGroup> {
    let mut index: std::collections::HashMap<&'a str, usize> = std::collections::HashMap::new();
    let mut groups: Vec<FileGroup> = Vec::new();
    for (i, &hit) in hits.iter().enumerate() {
        let Some(path) = path_of(hit.chunk) else { continue };
        let at = *index.entry(path).or_insert_with(|| {
            groups.push(FileGroup { path: path.to_string(), hits: Vec::new() });
            groups.len() - 1
        });
        groups[at].hits.push(GroupedHit { rank: i + 1, hit });
    }
    // The head is the best hit that is not a module chunk (the hits are in rank order).
    for g in &mut groups {
        if let Some(p) = g.hits.iter().position(|h| !is_module(h.hit.chunk)).filter(|&p| p > 0) {
            let head = g.hits.remove(p);
            g.hits.insert(0, head);
        }
    }
    groups
}

/// [`group_hits`] over `repo`'s chunks.
pub fn group_in(repo: &RepoIndex, hits: &[Hit]) -> Vec<FileGroup> {
    group_hits(
        hits,
        |id| repo.chunks.get(id as usize).map(|c| c.path.as_str()),
        |id| repo.chunks.get(id as usize).is_some_and(|c| c.kind == crate::chunk::ChunkKind::Module),
    )
}

/// The grouped order as a chunk list, as a person reads the collapsed rows: every group's head
/// in group order, then the nested chunks in their flat order (they are reached by expanding a
/// row, after every row). Eval scores chunk metrics (PR@k, MRR) of the grouped order on it.
pub fn rows_then_nested(groups: &[FileGroup]) -> Vec<Hit> {
    let mut out: Vec<Hit> = groups.iter().map(|g| g.head().hit).collect();
    let mut nested: Vec<GroupedHit> = groups.iter().flat_map(|g| g.hits[1..].iter().copied()).collect();
    nested.sort_by_key(|h| h.rank);
    out.extend(nested.into_iter().map(|h| h.hit));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hits(ids: &[u32]) -> Vec<Hit> {
        ids.iter().enumerate().map(|(i, &chunk)| Hit { chunk, score: 10.0 - i as f32 }).collect()
    }

    /// Chunks 0-3 in a.rs (0 its module), 10-11 in b.rs (10 its module), 20 in c.rs.
    fn path_of(id: u32) -> Option<&'static str> {
        match id {
            0..=3 => Some("a.rs"),
            10..=11 => Some("b.rs"),
            20 => Some("c.rs"),
            _ => None,
        }
    }

    fn is_module(id: u32) -> bool {
        id == 0 || id == 10
    }

    fn shape(groups: &[FileGroup]) -> Vec<(String, Vec<u32>)> {
        groups.iter().map(|g| (g.path.clone(), g.hits.iter().map(|h| h.hit.chunk).collect())).collect()
    }

    #[test]
    fn one_group_per_file_at_its_best_rank_the_rest_nested_in_rank_order() {
        let groups = group_hits(&hits(&[2, 0, 20, 11, 1, 3]), path_of, is_module);
        assert_eq!(
            shape(&groups),
            [
                ("a.rs".to_string(), vec![2, 0, 1, 3]),
                ("c.rs".to_string(), vec![20]),
                ("b.rs".to_string(), vec![11])
            ]
        );
        assert_eq!(groups.iter().map(FileGroup::best_rank).collect::<Vec<_>>(), [1, 3, 4]);
        assert_eq!(groups[0].more(), 3);
        assert_eq!(groups[0].hits.iter().map(|h| h.rank).collect::<Vec<_>>(), [1, 2, 5, 6]);
    }

    #[test]
    fn a_module_chunk_never_heads_a_file_with_another_hit_and_takes_no_row() {
        // a.rs's module chunk ranks first: a.rs still stands at rank 1, headed by chunk 3.
        let groups = group_hits(&hits(&[0, 10, 3, 20]), path_of, is_module);
        assert_eq!(
            shape(&groups),
            [
                ("a.rs".to_string(), vec![3, 0]),
                ("b.rs".to_string(), vec![10]),
                ("c.rs".to_string(), vec![20])
            ]
        );
        assert_eq!(groups[0].best_rank(), 1);
        assert_eq!(groups[0].head().rank, 3);
        // A module chunk alone heads its file.
        assert_eq!(groups[1].head().hit.chunk, 10);
    }

    #[test]
    fn rows_then_nested_reads_the_collapsed_rows_first() {
        let groups = group_hits(&hits(&[2, 1, 20, 11, 3]), path_of, is_module);
        let order: Vec<u32> = rows_then_nested(&groups).iter().map(|h| h.chunk).collect();
        assert_eq!(order, [2, 20, 11, 1, 3]);
    }

    #[test]
    fn unknown_chunks_are_left_out_and_an_empty_ranking_has_no_group() {
        assert!(group_hits(&[], path_of, is_module).is_empty());
        let groups = group_hits(&hits(&[99, 1]), path_of, is_module);
        assert_eq!(shape(&groups), [("a.rs".to_string(), vec![1])]);
        assert_eq!(groups[0].head().rank, 2);
    }
}
