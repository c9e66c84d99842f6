//! One ranked results column and its selection.

use crate::search::{Hit, Retriever};
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
    /// What the list shows: `all_hits`, less those in test files while they are hidden.
    pub hits: Vec<Hit>,
    pub all_hits: Vec<Hit>,
    pub selected: usize,
    /// First visible row.
    pub offset: usize,
    /// Generation of the latest search sent for this column; older results are dropped.
    pub generation: u64,
    pub elapsed: Option<Duration>,
    /// The reranker's second answer to the latest search (hybrid columns with a reranker).
    pub rerank: RerankStatus,
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
            all_hits: Vec::new(),
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

    /// 1-based rank of `chunk` in this column.
    pub fn rank_of(&self, chunk: u32) -> Option<usize> {
        self.hits.iter().position(|h| h.chunk == chunk).map(|i| i + 1)
    }

    /// Clears the hits (new retriever, or a new search that cannot run yet).
    pub fn reset(&mut self, status: ColumnStatus) {
        self.status = status;
        self.hits.clear();
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
        c.hits = (0..n).map(|i| Hit { chunk: i * 10, score: 1.0 }).collect();
        c
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
