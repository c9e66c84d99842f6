//! One ranked results column and its selection.

use crate::index::{Hit, Retriever};
use crate::rank::group::group_hits;
use crate::rank::ResultOrder;
use std::collections::HashSet;
use std::time::Duration;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ColumnStatus {
    /// No search yet.
    Idle,
    /// A search is wanted but the index it needs is not ready.
    WaitingForIndex,
    /// A search is running (earlier hits, if any, stay visible meanwhile).
    Searching,
    /// The search's first answer is shown (over the chunks embedded when it ran); the answer
    /// over its own chunks, embedded first, is coming.
    Refining,
    Ready,
    Failed(String),
}

#[derive(Clone, Debug)]
pub struct ResultsColumn {
    pub retriever: Retriever,
    pub status: ColumnStatus,
    /// What the list shows, one hit a row: `ranked` in the column's `order` (grouped: each
    /// file's row, and the chunks nested beneath it where the file is expanded).
    pub hits: Vec<Hit>,
    /// How each row of `hits` shows (same length).
    pub rows: Vec<RowInfo>,
    /// The flat ranking: `all_hits`, less those in test files while they are hidden.
    pub ranked: Vec<Hit>,
    pub all_hits: Vec<Hit>,
    /// Chunk by chunk, or one row per file ([`crate::rank::group`]).
    pub order: ResultOrder,
    /// Files whose nested chunks are shown (grouped order).
    pub expanded: HashSet<String>,
    /// Grouped order: each ranked chunk's file row.
    file_rank: std::collections::HashMap<u32, usize>,
    pub selected: usize,
    /// First visible row.
    pub offset: usize,
    /// Generation of the latest search sent for this column; older results are dropped.
    pub generation: u64,
    pub elapsed: Option<Duration>,
    /// The reranker's second answer to the latest search (hybrid columns with a reranker).
    pub rerank: RerankStatus,
}

/// How one row of a column shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowInfo {
    /// The rank the row shows: the chunk's in the flat order, its file's in the grouped one.
    pub rank: usize,
    /// A chunk nested beneath its file's row (grouped order, the file expanded).
    pub nested: bool,
    /// A file's row: how many of its chunks are nested beneath it.
    pub more: usize,
    /// A file's row whose nested chunks are shown.
    pub expanded: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RerankStatus {
    /// No reranking for this list.
    Off,
    /// The hybrid's order is shown; the reranked one is coming.
    Pending,
    /// The list is the reranked order: its top `depth` by the reranker's score (which took
    /// `took`), the rest in the hybrid's order.
    Done { took: Duration, depth: usize },
}

impl ResultsColumn {
    pub fn new(retriever: Retriever) -> Self {
        ResultsColumn {
            retriever,
            status: ColumnStatus::Idle,
            hits: Vec::new(),
            rows: Vec::new(),
            ranked: Vec::new(),
            all_hits: Vec::new(),
            order: ResultOrder::Flat,
            expanded: HashSet::new(),
            file_rank: Default::default(),
            selected: 0,
            offset: 0,
            generation: 0,
            elapsed: None,
            rerank: RerankStatus::Off,
        }
    }

    pub fn selected_hit(&self) -> Option<Hit> {
        self.hits.get(self.selected).copied()
    }

    /// The rank this column shows for `chunk`: its own (flat order) or its file's row
    /// (grouped order, shown or nested).
    pub fn rank_of(&self, chunk: u32) -> Option<usize> {
        match self.hits.iter().position(|h| h.chunk == chunk) {
            Some(row) => self.rows.get(row).map(|r| r.rank).or(Some(row + 1)),
            None if self.order == ResultOrder::Grouped => self.file_rank.get(&chunk).copied(),
            None => None,
        }
    }

    /// Lays `ranked` out in rows by `order` and `expanded`: `path_of` gives a chunk's file and
    /// whether it is the file's module chunk. The selection stays on the same chunk where it
    /// is still shown, else on its file's row.
    pub fn layout(&mut self, path_of: impl Fn(u32) -> Option<(String, bool)>) {
        let before = self.selected_hit().map(|h| h.chunk);
        let (mut hits, mut rows) = (Vec::new(), Vec::new());
        self.file_rank.clear();
        match self.order {
            ResultOrder::Flat => {
                hits.clone_from(&self.ranked);
                rows = (1..=hits.len())
                    .map(|rank| RowInfo { rank, nested: false, more: 0, expanded: false })
                    .collect();
            }
            ResultOrder::Grouped => {
                let info: std::collections::HashMap<u32, (String, bool)> =
                    self.ranked.iter().filter_map(|h| path_of(h.chunk).map(|p| (h.chunk, p))).collect();
                let groups = group_hits(
                    &self.ranked,
                    |id| info.get(&id).map(|(p, _)| p.as_str()),
                    |id| info.get(&id).is_some_and(|(_, m)| *m),
                );
                for (i, g) in groups.iter().enumerate() {
                    let expanded = g.more() > 0 && self.expanded.contains(&g.path);
                    let rank = i + 1;
                    hits.push(g.head().hit);
                    rows.push(RowInfo { rank, nested: false, more: g.more(), expanded });
                    for h in &g.hits {
                        self.file_rank.insert(h.hit.chunk, rank);
                    }
                    if expanded {
                        for h in &g.hits[1..] {
                            hits.push(h.hit);
                            rows.push(RowInfo { rank, nested: true, more: 0, expanded: false });
                        }
                    }
                }
            }
        }
        self.hits = hits;
        self.rows = rows;
        let row = before.and_then(|c| {
            self.hits.iter().position(|h| h.chunk == c).or_else(|| {
                let rank = self.file_rank.get(&c)?;
                self.rows.iter().position(|r| r.rank == *rank && !r.nested)
            })
        });
        self.selected = row.unwrap_or(0).min(self.hits.len().saturating_sub(1));
    }

    /// The file row the selected row belongs to (itself, or the row it is nested under).
    pub fn selected_file_row(&self) -> Option<usize> {
        (0..=self.selected.min(self.rows.len().checked_sub(1)?)).rev().find(|&i| !self.rows[i].nested)
    }

    /// Clears the hits (new retriever, or a new search that cannot run yet).
    pub fn reset(&mut self, status: ColumnStatus) {
        self.status = status;
        self.hits.clear();
        self.rows.clear();
        self.ranked.clear();
        self.file_rank.clear();
        self.all_hits.clear();
        self.selected = 0;
        self.offset = 0;
        self.elapsed = None;
        self.rerank = RerankStatus::Off;
    }

    /// Selects row `index` (clamped); `rows` is the visible height. Returns whether it moved.
    pub fn select(&mut self, index: usize, rows: usize) -> bool {
        let before = self.selected;
        self.selected = index.min(self.hits.len().saturating_sub(1));
        self.offset = scroll_to_show(self.offset, self.selected, rows);
        before != self.selected
    }

    pub fn move_by(&mut self, delta: isize, rows: usize) -> bool {
        self.select(self.selected.saturating_add_signed(delta), rows)
    }
}

/// The smallest change to `offset` that keeps `selected` within `rows` visible rows.
pub fn scroll_to_show(offset: usize, selected: usize, rows: usize) -> usize {
    let rows = rows.max(1);
    if selected < offset {
        selected
    } else if selected >= offset + rows {
        selected + 1 - rows
    } else {
        offset
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(n: u32) -> ResultsColumn {
        let mut c = ResultsColumn::new(Retriever::Bm25);
        c.ranked = (0..n).map(|i| Hit { chunk: i * 10, score: 1.0 }).collect();
        c.layout(|id| Some((format!("f{}.rs", id / 20), false)));
        c
    }

    #[test]
    fn grouped_rows_nest_a_files_chunks_and_expand_in_place() {
        // Chunks 0, 10 in f0.rs; 20, 30 in f1.rs; 40 in f2.rs.
        let mut c = column(5);
        c.order = ResultOrder::Grouped;
        c.layout(|id| Some((format!("f{}.rs", id / 20), false)));
        assert_eq!(c.hits.iter().map(|h| h.chunk).collect::<Vec<_>>(), [0, 20, 40]);
        assert_eq!(c.rows.iter().map(|r| (r.rank, r.more)).collect::<Vec<_>>(), [(1, 1), (2, 1), (3, 0)]);
        assert_eq!(c.rank_of(30), Some(2), "a nested chunk counts at its file's row");
        c.select(1, 10);
        c.expanded.insert("f1.rs".into());
        c.layout(|id| Some((format!("f{}.rs", id / 20), false)));
        assert_eq!(c.hits.iter().map(|h| h.chunk).collect::<Vec<_>>(), [0, 20, 30, 40]);
        assert!(c.rows[2].nested && c.rows[1].expanded);
        assert_eq!(c.selected, 1, "the selection stays on its chunk");
        c.select(2, 10);
        assert_eq!(c.selected_file_row(), Some(1));
        c.expanded.clear();
        c.layout(|id| Some((format!("f{}.rs", id / 20), false)));
        assert_eq!((c.selected, c.hits.len()), (1, 3), "collapsed: back on the file's row");
    }

    #[test]
    fn selection_clamps_and_scrolls_into_view() {
        let mut c = column(10);
        assert!(c.move_by(5, 3));
        assert_eq!((c.selected, c.offset), (5, 3));
        assert!(c.move_by(100, 3));
        assert_eq!((c.selected, c.offset), (9, 7));
        assert!(c.move_by(-100, 3));
        assert_eq!((c.selected, c.offset), (0, 0));
        assert!(!c.move_by(-1, 3), "already at the top");
    }

    #[test]
    fn rank_is_one_based() {
        assert_eq!(column(5).rank_of(30), Some(4));
        assert_eq!(column(5).rank_of(31), None);
    }
}
