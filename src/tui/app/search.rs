//! Searching and indexing: running searches, accepting only the latest results, and reacting
//! to the indexer's events.

use super::{scroll_to_show, App, ColumnStatus, IndexState, RerankStatus, ResultsColumn, RESULTS_K};
use crate::index::query_terms::query_terms;
use crate::index::{Hit, Retriever};
use crate::tui::action::{Command, Pane, SearchOutcome, SearchRequest, SearchStage};
use crate::tui::backend::Backend;
use std::sync::Arc;

/// What the history column says where there is no history to search.
pub(super) const NO_HISTORY: &str =
    "History is unavailable: not a git repository (or no commits yet). t turns the column back to CoRet.";

impl App {
    pub(super) fn run_search(&mut self, commands: &mut Vec<Command>) {
        if self.editor.is_blank() {
            return self.error("type or paste an issue first");
        }
        let query = self.editor.text();
        self.history.push(&query);
        self.query_terms = query_terms(&query).into_iter().map(|(t, _)| t).collect();
        self.last_query = Some(query);
        self.nav.clear();
        self.reselect = [None, None];
        self.index.first = None;
        // The issue is in; the next keys (j, k, Enter) are for the results, as in a search box.
        if self.focus == Pane::Editor {
            let column = self.active_column;
            self.focus(if column == 0 { Pane::Left } else { Pane::Right });
        }
        if let IndexState::Failed(e) = &self.index.state {
            let text = format!("cannot search: indexing failed: {e}");
            return self.error(text);
        }
        if self.backend.is_none() {
            self.search_pending = true;
            for column in &mut self.columns {
                column.reset(ColumnStatus::WaitingForIndex);
            }
            return self.info("the search will run as soon as the BM25 index is ready");
        }
        for column in 0..self.columns.len() {
            self.search_column(column, commands);
        }
        // Edits since the last search (in `$EDITOR` or elsewhere): when the indexer finds
        // any, `Reindexed` brings the new index and these searches run again on it.
        commands.push(Command::CheckIndex);
    }

    /// Sends the latest query to one column's retriever, if its index is ready.
    pub(super) fn search_column(&mut self, index: usize, commands: &mut Vec<Command>) {
        let (Some(query), Some(backend)) = (self.last_query.clone(), self.backend.clone()) else {
            return;
        };
        let column = &mut self.columns[index];
        if column.retriever != Retriever::Bm25 && !backend.has_dense() {
            let status = match &self.index.dense_error {
                Some(e) => ColumnStatus::Failed(format!("dense index unavailable: {e}")),
                None => ColumnStatus::WaitingForIndex,
            };
            return column.reset(status);
        }
        if column.retriever == Retriever::History && !backend.has_history() {
            return column.reset(ColumnStatus::Failed(NO_HISTORY.into()));
        }
        self.next_generation += 1;
        column.generation = self.next_generation;
        column.status = ColumnStatus::Searching;
        commands.push(Command::Search(SearchRequest {
            column: index,
            generation: self.next_generation,
            query,
            retriever: column.retriever,
            k: RESULTS_K,
            backend,
        }));
    }

    /// Accepts results only from the latest search of their column: the latest search wins.
    pub(super) fn search_done(&mut self, outcome: SearchOutcome) {
        if outcome.stage == SearchStage::Reranked {
            return self.reranked(outcome);
        }
        let Some(column) = self.columns.get(outcome.column) else {
            return;
        };
        let waiting = matches!(column.status, ColumnStatus::Searching | ColumnStatus::Refining);
        if outcome.generation != column.generation || !waiting {
            return;
        }
        // A first answer that fails says nothing the second will not: keep waiting for it.
        if outcome.stage == SearchStage::RefineFollows && outcome.hits.is_err() {
            return;
        }
        // The second answer keeps the chunk the user moved to in the first.
        if column.status == ColumnStatus::Refining && column.selected > 0 {
            if let Some(key) = column.selected_hit().and_then(|h| self.chunk(h.chunk)).map(|c| c.key()) {
                self.reselect[outcome.column].get_or_insert(key);
            }
        }
        let column = &mut self.columns[outcome.column];
        match outcome.hits {
            Ok(hits) => {
                let refining = outcome.stage == SearchStage::RefineFollows;
                column.reset(if refining { ColumnStatus::Refining } else { ColumnStatus::Ready });
                column.all_hits = hits;
                column.elapsed = Some(outcome.elapsed);
                if outcome.stage == SearchStage::RerankFollows {
                    column.rerank = RerankStatus::Pending;
                }
            }
            Err(e) => column.reset(ColumnStatus::Failed(e)),
        }
        self.filter_hits(outcome.column);
        if let Some(key) = self.reselect[outcome.column].take() {
            self.select_chunk(outcome.column, &key);
        }
        if outcome.column == self.active_column {
            self.nav.clear();
        }
    }

    /// The reranked order replaces the hybrid's of the same search. A user who moved down the
    /// hybrid's list keeps the chunk they are on (the preview does not jump); otherwise the
    /// new first hit is selected.
    fn reranked(&mut self, outcome: SearchOutcome) {
        let index = outcome.column;
        let Some(column) = self.columns.get(index) else { return };
        let current = outcome.generation == column.generation && column.status == ColumnStatus::Ready;
        if !current || column.rerank != RerankStatus::Pending {
            return;
        }
        let hits = match outcome.hits {
            Ok(hits) => hits,
            Err(e) => {
                self.columns[index].rerank = RerankStatus::Off;
                return self.error(format!("{e}; the hybrid's order stands"));
            }
        };
        let kept = column.selected_hit().filter(|_| column.selected > 0);
        let key = kept.and_then(|h| self.chunk(h.chunk)).map(|c| c.key());
        let depth = self.backend.as_ref().and_then(|b| b.rerank_depth()).unwrap_or(hits.len());
        let column = &mut self.columns[index];
        column.all_hits = hits;
        column.rerank = RerankStatus::Done { took: outcome.elapsed, depth };
        self.filter_hits(index);
        if let Some(key) = key {
            self.select_chunk(index, &key);
        }
        if index == self.active_column {
            self.nav.clear();
        }
    }

    /// Hides or shows hits in test files in both columns (their ranks stay the retrievers').
    /// Each column keeps the hit it had selected (a hidden test hit: the first one below it that
    /// stays, else the last).
    pub(super) fn toggle_tests(&mut self) {
        self.hide_tests = !self.hide_tests;
        for column in 0..self.columns.len() {
            let c = &self.columns[column];
            let (from, all) = (c.selected_hit(), &c.all_hits);
            let start = from.and_then(|h| all.iter().position(|a| a.chunk == h.chunk)).unwrap_or(0);
            let kept = |h: &Hit| !self.hide_tests || !self.chunk(h.chunk).is_some_and(|c| c.is_test());
            let target = all[start..].iter().find(|h| kept(h)).or_else(|| all.iter().rev().find(|h| kept(h)));
            let key = target.and_then(|h| self.chunk(h.chunk)).map(|c| c.key());
            self.filter_hits(column);
            if let Some(key) = key {
                self.select_chunk(column, &key);
            }
        }
        self.nav.clear();
        let hidden: usize = self.columns.iter().map(|c| c.all_hits.len() - c.hits.len()).sum();
        self.info(match self.hide_tests {
            true => format!("hits in test files hidden ({hidden}); T shows them"),
            false => "hits in test files shown".to_string(),
        });
    }

    /// The column's list from its hits and the test-file filter, in the order for the query
    /// (grouped or flat); the selection starts over.
    fn filter_hits(&mut self, index: usize) {
        let hide = self.hide_tests;
        let keep: Vec<Hit> = self.columns[index]
            .all_hits
            .iter()
            .filter(|h| !hide || !self.chunk(h.chunk).is_some_and(|c| c.is_test()))
            .copied()
            .collect();
        // History ranks files (each chunk of a file scores as its file): one row per file, unless
        // the user chose an order (issue 81: one file's 14 chunks at one score).
        let order = match (self.columns[index].retriever, self.order_override) {
            (Retriever::History, None) => crate::rank::ResultOrder::Grouped,
            _ => self.order(),
        };
        let column = &mut self.columns[index];
        column.hits.clear();
        column.ranked = keep;
        column.order = order;
        self.layout_column(index);
        let column = &mut self.columns[index];
        column.selected = 0;
        column.offset = 0;
    }

    /// The order the lists show: the user's (`f`), else the session's for the latest query's
    /// shape ([`crate::rank::QueryShape`]).
    pub fn order(&self) -> crate::rank::ResultOrder {
        self.order_override
            .unwrap_or_else(|| self.session.order.resolve(self.last_query.as_deref().unwrap_or("")).0)
    }

    /// Lays column `index`'s ranking out in rows again (its order or expanded files changed).
    fn layout_column(&mut self, index: usize) {
        let retriever = self.columns[index].retriever;
        let mut column = std::mem::replace(&mut self.columns[index], ResultsColumn::new(retriever));
        column
            .layout(|id| self.chunk(id).map(|c| (c.path.clone(), c.kind == crate::chunk::ChunkKind::Module)));
        let rows = super::list_rows(self.areas().columns[index]);
        column.offset = scroll_to_show(column.offset, column.selected, rows);
        self.columns[index] = column;
    }

    /// Shows or hides the chunks nested beneath the selected file's row; the selection goes to
    /// that row.
    pub(super) fn toggle_expand(&mut self) {
        let index = self.active_column;
        let column = &self.columns[index];
        if column.order != crate::rank::ResultOrder::Grouped {
            return self
                .info("chunk by chunk: every hit has its own row (f groups them by file)".to_string());
        }
        let Some(row) = column.selected_file_row() else { return };
        if column.rows[row].more == 0 {
            return self.info("this file has no other hit".to_string());
        }
        let Some(path) = self.chunk(column.hits[row].chunk).map(|c| c.path.clone()) else { return };
        let column = &mut self.columns[index];
        if !column.expanded.remove(&path) {
            column.expanded.insert(path);
        }
        column.selected = row;
        self.layout_column(index);
        self.nav.clear();
    }

    /// Both columns: one row per file, or chunk by chunk. Each keeps the chunk it had
    /// selected where that is still a row (else its file's row).
    pub(super) fn toggle_order(&mut self) {
        use crate::rank::ResultOrder;
        let order = match self.order() {
            ResultOrder::Flat => ResultOrder::Grouped,
            ResultOrder::Grouped => ResultOrder::Flat,
        };
        self.order_override = Some(order);
        for index in 0..self.columns.len() {
            self.columns[index].order = order;
            self.layout_column(index);
        }
        self.nav.clear();
        self.info(
            match order {
                ResultOrder::Grouped => {
                    "one row per file, its other hits beneath (x shows them); f: chunk by chunk"
                }
                ResultOrder::Flat => "chunk by chunk; f: one row per file",
            }
            .to_string(),
        );
    }

    /// Selects the hit whose chunk has this key (`Chunk::key`), if the column lists it.
    fn select_chunk(&mut self, index: usize, key: &str) {
        let found =
            self.columns[index].hits.iter().position(|h| self.chunk(h.chunk).is_some_and(|c| c.key() == key));
        if let Some(row) = found {
            let rows = super::list_rows(self.areas().columns[index]);
            self.columns[index].select(row, rows);
        }
    }

    /// Cycles the right column through CoRet dense, hybrid and history, and re-runs its search.
    pub(super) fn toggle_hybrid(&mut self, commands: &mut Vec<Command>) {
        let column = &mut self.columns[1];
        column.retriever = match column.retriever {
            Retriever::Dense => Retriever::Hybrid,
            Retriever::Hybrid => Retriever::History,
            _ => Retriever::Dense,
        };
        self.reselect[1] = None;
        column.reset(if self.last_query.is_some() {
            ColumnStatus::WaitingForIndex
        } else {
            ColumnStatus::Idle
        });
        if self.active_column == 1 {
            self.nav.clear();
        }
        let label = match self.columns[1].retriever {
            Retriever::Hybrid => "right column: hybrid (BM25 + CoRet fusion)",
            Retriever::History => "right column: history (files of past commits like the issue)",
            _ => "right column: CoRet dense",
        };
        self.info(label);
        if !self.search_pending {
            self.search_column(1, commands);
        }
    }

    pub(super) fn bm25_ready(&mut self, backend: Arc<dyn Backend>, commands: &mut Vec<Command>) {
        self.index.chunks = Some(backend.chunk_count());
        self.index.state = if backend.has_dense() { IndexState::Ready } else { IndexState::Bm25Only };
        self.index.dense_partial = backend.dense_partial().is_some();
        self.backend = Some(backend);
        if std::mem::take(&mut self.search_pending) {
            // "will run as soon as the BM25 index is ready" is no longer true: it runs now.
            self.message = None;
            for column in 0..self.columns.len() {
                self.search_column(column, commands);
            }
        }
    }

    pub(super) fn dense_ready(&mut self, backend: Arc<dyn Backend>, commands: &mut Vec<Command>) {
        let had_backend = self.backend.is_some();
        self.index.dense_error = None;
        self.bm25_ready(backend, commands);
        if had_backend {
            // BM25 results are still valid; only the column that waited needs its search.
            self.search_column(1, commands);
        }
        // After a re-index the dense index catches up in a moment: the note about the
        // re-index stays.
        let partial = self.backend.as_ref().and_then(|b| b.dense_partial());
        if partial.is_some() {
            // Query-first: the right column answers now; the status line counts the rest (one
            // count on screen, the embedding's own, so no two numbers disagree).
            self.info(
                "CoRet index partial: a search embeds the chunks it needs first, the rest in the background",
            );
        } else if !std::mem::replace(&mut self.dense_announced, true) {
            self.info("CoRet dense index ready");
        }
    }

    /// The working tree changed and the indexer re-indexed it: the new BM25 backend replaces
    /// the old one (whose chunk ids mean nothing now), the latest search runs again on it (each
    /// column selecting again the chunk it had selected), and the right column waits for the
    /// dense index that follows.
    pub(super) fn reindexed(&mut self, backend: Arc<dyn Backend>, note: String, commands: &mut Vec<Command>) {
        for (index, column) in self.columns.iter().enumerate() {
            let selected = column.selected_hit().and_then(|h| self.chunk(h.chunk)).map(|c| c.key());
            self.reselect[index] = selected.or(self.reselect[index].take());
        }
        let idle = if self.last_query.is_some() { ColumnStatus::WaitingForIndex } else { ColumnStatus::Idle };
        for column in &mut self.columns {
            column.reset(idle.clone());
        }
        self.nav.clear();
        (self.preview_for, self.neighbour_for) = (None, None);
        // The preview's files may be the edited ones: read them again.
        self.files = Default::default();
        self.index.progress = None;
        self.backend = None;
        self.bm25_ready(backend, commands);
        if self.last_query.is_some() {
            for column in 0..self.columns.len() {
                self.search_column(column, commands);
            }
        }
        self.index.info = Some(note.clone());
        self.info(note);
    }

    pub(super) fn index_failed(&mut self, message: String) {
        if self.backend.is_none() {
            self.index.state = IndexState::Failed(message.clone());
            for column in &mut self.columns {
                if column.status == ColumnStatus::WaitingForIndex {
                    column.reset(ColumnStatus::Failed(format!("indexing failed: {message}")));
                }
            }
            self.search_pending = false;
        } else {
            self.index.dense_error = Some(message.clone());
            if self.columns[1].status == ColumnStatus::WaitingForIndex {
                self.columns[1].reset(ColumnStatus::Failed(format!("dense index unavailable: {message}")));
            }
        }
        self.error(message);
    }

    pub(super) fn indexer_stopped(&mut self) {
        match self.index.state {
            IndexState::Indexing => {
                self.index_failed("the indexer stopped before the BM25 index was ready".into())
            }
            IndexState::Bm25Only if self.index.dense_error.is_none() => {
                self.index_failed("the indexer stopped before the dense index was ready".into())
            }
            _ => {}
        }
    }
}
