//! The app's state and its single mutation point, [`App::update`] (The Elm Architecture).
//!
//! `update` takes an [`Action`] and returns the [`Command`]s (searches, file loads, editor,
//! clipboard) the runtime must carry out; it never blocks and never does I/O itself.

mod editor;
mod files;
mod history;
mod index;
mod navigate;
#[cfg(test)]
mod refine_tests;
#[cfg(test)]
mod rerank_tests;
mod results;
mod search;
#[cfg(test)]
pub(crate) mod tests;

pub use editor::{Editor, VisualRow};
pub use files::{Cached, FileCache};
pub use history::History;
pub use index::{FirstProgress, IndexState, IndexStatus, PhaseProgress};
pub use results::{scroll_to_show, ColumnStatus, RerankStatus, ResultsColumn, RowInfo};

use crate::index::Retriever;
use crate::tui::action::{Action, Command, Pane};
use crate::tui::backend::{Backend, Session};
use crate::tui::layout::Areas;
use crate::tui::theme::Theme;
use crate::Chunk;
use ratatui::layout::Rect;
use std::sync::Arc;

/// How many hits each column asks for.
pub const RESULTS_K: usize = 50;
/// Lines shown above a chunk when the preview jumps to it.
pub const PREVIEW_CONTEXT: usize = 2;

/// A status-bar message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub text: String,
    pub error: bool,
}

/// One step of call-graph navigation: the chunk jumped to, and the neighbour selection to
/// restore when coming back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NavEntry {
    pub chunk: u32,
    pub came_from_selection: usize,
}

/// Whether a neighbour calls the current chunk or is called by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Caller,
    Callee,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Neighbour {
    pub chunk: u32,
    pub direction: Direction,
}

/// How far the preview scrolls sideways (lines longer than this are rare and generated).
const MAX_HSCROLL: usize = 400;

pub struct App {
    pub session: Session,
    pub theme: Theme,
    /// Terminal size; the layout (and so mouse hit-testing and scrolling) derives from it.
    pub size: (u16, u16),
    pub focus: Pane,
    pub editor: Editor,
    pub history: History,
    pub backend: Option<Arc<dyn Backend>>,
    pub index: IndexStatus,
    /// Left: BM25. Right: CoRet dense, or hybrid.
    pub columns: [ResultsColumn; 2],
    /// The column whose selection the preview shows.
    pub active_column: usize,
    /// Call-graph jumps from the selected result; the preview shows the last one.
    pub nav: Vec<NavEntry>,
    pub neighbour_selected: usize,
    neighbour_for: Option<u32>,
    pub preview_scroll: usize,
    /// Columns of code scrolled off to the left (long lines in a narrow preview).
    pub preview_hscroll: usize,
    preview_for: Option<u32>,
    pub files: FileCache,
    /// Scroll of the help overlay, when it is open.
    pub help: Option<usize>,
    pub message: Option<Message>,
    /// The query of the latest search (re-run on the dense column when its index is ready).
    pub last_query: Option<String>,
    /// The latest search's query terms (BM25's tokens): the preview marks them.
    pub query_terms: std::collections::HashSet<String>,
    /// Hits in test files are left out of the lists (`T`).
    pub hide_tests: bool,
    /// The order the user chose with `f`, over the session's (by the query's shape).
    pub order_override: Option<crate::rank::ResultOrder>,
    /// A search was asked for before the BM25 index was ready.
    search_pending: bool,
    /// Per column, the chunk (`Chunk::key`) that was selected when the index changed under
    /// the results: the re-run search selects it again.
    reselect: [Option<String>; 2],
    /// "CoRet dense index ready" was said (a re-index's dense index comes without a word).
    dense_announced: bool,
    next_generation: u64,
    pub should_quit: bool,
}

impl App {
    pub fn new(session: Session, theme: Theme, size: (u16, u16), history: History) -> Self {
        let mut app = App {
            theme,
            size,
            focus: Pane::Editor,
            editor: Editor::default(),
            history,
            backend: None,
            index: IndexStatus::default(),
            columns: [ResultsColumn::new(Retriever::Bm25), ResultsColumn::new(Retriever::Dense)],
            active_column: 0,
            nav: Vec::new(),
            neighbour_selected: 0,
            neighbour_for: None,
            preview_scroll: 0,
            preview_hscroll: 0,
            preview_for: None,
            files: FileCache::default(),
            help: None,
            message: None,
            last_query: None,
            hide_tests: false,
            order_override: None,
            query_terms: Default::default(),
            search_pending: false,
            reselect: [None, None],
            dense_announced: false,
            next_generation: 0,
            should_quit: false,
            session,
        };
        if let Some(query) = app.session.initial_query.clone().filter(|q| !q.trim().is_empty()) {
            app.editor.set_text(&query);
            app.update(Action::RunSearch);
        }
        app
    }

    /// The only place state changes.
    pub fn update(&mut self, action: Action) -> Vec<Command> {
        let mut commands = Vec::new();
        // A message answers the previous key; the next one clears it. Lasting conditions
        // (failed indexes) also show in the status state and in the columns.
        if is_user_input(&action) {
            self.message = None;
        }
        match action {
            Action::Insert(c) => self.edit(|e| e.insert_char(c)),
            Action::Paste(text) => self.paste(&text),
            Action::Sequence(actions) => actions.into_iter().for_each(|a| commands.extend(self.update(a))),
            Action::Edit(op) => self.edit(|e| e.apply(op)),
            Action::ClearQuery => self.edit(Editor::clear),
            Action::HistoryPrev => self.recall(true),
            Action::HistoryNext => self.recall(false),
            Action::RunSearch => self.run_search(&mut commands),
            Action::ToggleHybrid => self.toggle_hybrid(&mut commands),
            Action::ToggleTests => self.toggle_tests(),
            Action::ToggleExpand => self.toggle_expand(),
            Action::ToggleOrder => self.toggle_order(),
            Action::Focus(pane) => self.focus(pane),
            Action::FocusNext => self.cycle_focus(1),
            Action::FocusPrev => self.cycle_focus(-1),
            Action::Move(delta) => self.move_by(delta),
            Action::ScrollSideways(delta) => {
                self.preview_hscroll = self.preview_hscroll.saturating_add_signed(delta).min(MAX_HSCROLL)
            }
            Action::Page(pages) => self.page(pages),
            Action::Top => self.move_by(isize::MIN / 2),
            Action::Bottom => self.move_by(isize::MAX / 2),
            Action::PreviewHalfPage(n) => self.scroll_preview(n * (self.preview_rows() / 2).max(1) as isize),
            Action::Jump => self.jump(),
            Action::Back => self.back(),
            Action::OpenInEditor => self.open_in_editor(&mut commands),
            Action::CopyLocation => self.copy_location(&mut commands),
            Action::ToggleHelp => self.help = if self.help.is_some() { None } else { Some(0) },
            Action::Quit => self.should_quit = true,
            Action::Resize(w, h) => self.resize(w, h),
            Action::Mouse(input) => self.mouse(input),
            Action::IndexProgress { phase, done, total, at } => self.index.record(phase, done, total, at),
            Action::EmbedWork { work, at } => self.index.record_embed_work(work, at),
            Action::FirstEmbed { done, total, at } => self.index.record_first(done, total, at),
            Action::Bm25Ready(backend) => self.bm25_ready(backend, &mut commands),
            Action::DenseReady(backend) => self.dense_ready(backend, &mut commands),
            Action::Reindexed { backend, note } => self.reindexed(backend, note, &mut commands),
            Action::IndexFailed(message) => self.index_failed(message),
            Action::IndexInfo(text) => self.index.info = Some(text),
            Action::IndexerStopped => self.indexer_stopped(),
            Action::SearchDone(outcome) => self.search_done(outcome),
            Action::FileLoaded { path, file } => self.files.insert(path, file),
            Action::FileSkipped { path } => self.files.forget_request(&path),
            // Back from `$EDITOR`, the file may have changed: the index catches up at once.
            Action::EditorClosed(result) => {
                commands.push(Command::CheckIndex);
                if let Err(e) = result {
                    self.error(e);
                }
            }
        }
        self.follow_current_chunk(&mut commands);
        commands
    }

    /// The layout of the current terminal size (shared with rendering).
    pub fn areas(&self) -> Areas {
        Areas::compute(Rect::new(0, 0, self.size.0, self.size.1), self)
    }

    /// The chunk the preview and the neighbours show: the last jump, else the selected hit
    /// of the active column.
    pub fn current_chunk(&self) -> Option<u32> {
        self.nav
            .last()
            .map(|e| e.chunk)
            .or_else(|| self.columns[self.active_column].selected_hit().map(|h| h.chunk))
    }

    pub fn chunk(&self, id: u32) -> Option<&Chunk> {
        self.backend.as_deref()?.chunk(id)
    }

    /// Callers, then callees, of the current chunk.
    pub fn neighbours(&self) -> Vec<Neighbour> {
        let (Some(backend), Some(id)) = (self.backend.as_deref(), self.current_chunk()) else {
            return Vec::new();
        };
        let with =
            |ids: Vec<u32>, direction| ids.into_iter().map(move |chunk| Neighbour { chunk, direction });
        with(backend.callers(id), Direction::Caller)
            .chain(with(backend.callees(id), Direction::Callee))
            .collect()
    }

    fn info(&mut self, text: impl Into<String>) {
        self.message = Some(Message { text: text.into(), error: false });
    }

    fn error(&mut self, text: impl Into<String>) {
        self.message = Some(Message { text: text.into(), error: true });
    }

    fn edit(&mut self, f: impl FnOnce(&mut Editor)) {
        self.focus = Pane::Editor;
        f(&mut self.editor);
        self.keep_editor_cursor_visible();
    }

    /// A paste always lands in the editor: it is almost certainly an issue. Pasted while the
    /// editor has the focus it goes in at the cursor; elsewhere it is a new issue and replaces
    /// the old one, which stays in the history (Ctrl-P) so nothing is lost.
    fn paste(&mut self, text: &str) {
        if self.focus == Pane::Editor || self.editor.text().trim().is_empty() {
            return self.edit(|e| e.insert_str(text));
        }
        self.history.push(&self.editor.text());
        self.edit(|e| {
            e.clear();
            e.insert_str(text);
        });
        self.info("pasted as a new issue; Ctrl-P brings back the previous one");
    }

    fn recall(&mut self, older: bool) {
        let text = if older {
            self.history.older(&self.editor.text()).map(str::to_string)
        } else {
            self.history.newer()
        };
        match text {
            Some(text) => {
                self.edit(|e| e.set_text(&text));
                if let Some((i, n)) = self.history.position() {
                    self.info(format!("history {i}/{n}"));
                }
            }
            None if older => self.info("no earlier queries"),
            None => {}
        }
    }

    /// Whether the results answer an issue other than the editor's (after Ctrl-L, Ctrl-P or
    /// an edit, until the next search).
    pub fn results_stale(&self) -> bool {
        self.last_query.as_deref().is_some_and(|q| q.trim_end() != self.editor.text().trim_end())
    }

    fn keep_editor_cursor_visible(&mut self) {
        let inner = inner_size(self.areas().editor);
        self.editor.ensure_visible(inner.0, inner.1);
    }

    fn open_in_editor(&mut self, commands: &mut Vec<Command>) {
        match self.target_chunk() {
            Some(chunk) => {
                let on_disk = self.backend.as_deref().and_then(|b| b.file_on_disk(&chunk.path));
                let file = on_disk.unwrap_or_else(|| self.session.repo.join(&chunk.path));
                let line = chunk.start_line;
                commands.push(Command::OpenEditor { file, line });
            }
            None => self.info("nothing selected"),
        }
    }

    fn copy_location(&mut self, commands: &mut Vec<Command>) {
        match self.target_chunk().map(|c| format!("{}:{}", c.path, c.start_line)) {
            Some(location) => {
                // OSC 52 gets no answer: whether it reached a clipboard is the terminal's
                // (and tmux's `set-clipboard`) business, so do not claim it did.
                self.info(format!("{location} sent to the clipboard (OSC 52; in tmux: set-clipboard on)"));
                commands.push(Command::Copy(location));
            }
            None => self.info("nothing selected"),
        }
    }

    /// What "open" and "copy" act on: the selected neighbour in the call-graph pane, else
    /// the current chunk.
    fn target_chunk(&self) -> Option<&Chunk> {
        let id = match self.focus {
            Pane::Neighbours => self.neighbours().get(self.neighbour_selected).map(|n| n.chunk),
            _ => self.current_chunk(),
        };
        self.chunk(id?)
    }

    /// After a resize no pane keeps lines hidden above while it has room below.
    fn resize(&mut self, w: u16, h: u16) {
        self.size = (w, h);
        let inner = inner_size(self.areas().editor);
        self.editor.fit(inner.0, inner.1);
        let areas = self.areas();
        for (column, area) in self.columns.iter_mut().zip(areas.columns) {
            let rows = list_rows(area);
            column.offset = scroll_to_show(column.offset, column.selected, rows)
                .min(column.hits.len().saturating_sub(rows));
        }
    }

    /// Keeps the preview and the neighbour list in step with the current chunk, and asks for
    /// its file when it is not cached.
    fn follow_current_chunk(&mut self, commands: &mut Vec<Command>) {
        let current = self.current_chunk();
        if current != self.neighbour_for {
            self.neighbour_for = current;
            self.neighbour_selected = 0;
        }
        self.neighbour_selected = self.neighbour_selected.min(self.neighbours().len().saturating_sub(1));
        let Some((id, backend)) = current.zip(self.backend.clone()) else {
            return;
        };
        let Some(chunk) = backend.chunk(id) else {
            return;
        };
        if self.preview_for != Some(id) {
            self.preview_for = Some(id);
            self.preview_scroll = chunk.start_line.saturating_sub(1 + PREVIEW_CONTEXT);
            self.preview_hscroll = 0;
        }
        if self.files.request(&chunk.path) {
            commands.push(Command::LoadFile { path: chunk.path.clone(), backend: backend.clone() });
        }
    }
}

/// Actions typed or clicked by the user (they clear the status-bar message).
fn is_user_input(action: &Action) -> bool {
    !matches!(
        action,
        Action::IndexProgress { .. }
            | Action::EmbedWork { .. }
            | Action::FirstEmbed { .. }
            | Action::Bm25Ready(_)
            | Action::DenseReady(_)
            | Action::Reindexed { .. }
            | Action::IndexFailed(_)
            | Action::IndexInfo(_)
            | Action::IndexerStopped
            | Action::SearchDone(_)
            | Action::FileLoaded { .. }
            | Action::FileSkipped { .. }
            | Action::EditorClosed(_)
            | Action::Resize(..)
    )
}

/// Inside size (width, height) of a bordered pane.
pub fn inner_size(area: Rect) -> (usize, usize) {
    (area.width.saturating_sub(2) as usize, area.height.saturating_sub(2) as usize)
}

/// Visible list rows of a bordered pane.
pub fn list_rows(area: Rect) -> usize {
    inner_size(area).1.max(1)
}
