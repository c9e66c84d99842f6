//! Everything that can change the app's state is an [`Action`]; everything the app asks the
//! outside world to do is a [`Command`] (returned by `App::update`, run by the runtime).

use crate::index::{Hit, Retriever};
use crate::progress::{EmbedWork, Phase};
use crate::tui::backend::Backend;
use crate::tui::highlight::HighlightedFile;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The panes that can hold the focus.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pane {
    Editor,
    /// The left results column (BM25).
    Left,
    /// The right results column (CoRet dense, or hybrid).
    Right,
    Preview,
    Neighbours,
}

impl Pane {
    /// Every pane, the editor first.
    pub const ORDER: [Pane; 5] = [Pane::Editor, Pane::Left, Pane::Right, Pane::Preview, Pane::Neighbours];
    /// What Tab and Shift-Tab cycle through: the result panes, never the issue editor (the
    /// keys there are commands; in the editor they would type into the issue). The editor is
    /// entered on purpose, with `i`, `/` or a click.
    pub const TAB_CYCLE: [Pane; 4] = [Pane::Left, Pane::Right, Pane::Preview, Pane::Neighbours];

    /// The results column index of a results pane.
    pub fn column(self) -> Option<usize> {
        match self {
            Pane::Left => Some(0),
            Pane::Right => Some(1),
            _ => None,
        }
    }
}

/// Editing operations of the issue editor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EditOp {
    Newline,
    Backspace,
    Delete,
    Left,
    Right,
    Up,
    Down,
    LineStart,
    LineEnd,
    WordLeft,
    WordRight,
    DocStart,
    DocEnd,
    KillToLineStart,
    KillToLineEnd,
    DeleteWordBack,
}

/// A mouse event, in terminal cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MouseInput {
    Click { x: u16, y: u16 },
    ScrollUp { x: u16, y: u16 },
    ScrollDown { x: u16, y: u16 },
}

/// A finished search of one results column.
#[derive(Clone, Debug)]
pub struct SearchOutcome {
    pub column: usize,
    pub generation: u64,
    pub hits: Result<Vec<Hit>, String>,
    pub elapsed: Duration,
    pub stage: SearchStage,
}

/// Which answer of a search an outcome is: a hybrid search with a reranker answers twice, the
/// hybrid's order at once and the reranked one when it is ready.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SearchStage {
    /// The only answer.
    Final,
    /// A first answer over the part of the dense index embedded so far; the query-first one
    /// (its own chunks embedded) follows.
    RefineFollows,
    /// The hybrid's order; the reranked one follows.
    RerankFollows,
    /// The reranked order, replacing the hybrid's.
    Reranked,
}

pub enum Action {
    // Issue editor.
    Insert(char),
    Paste(String),
    Edit(EditOp),
    ClearQuery,
    HistoryPrev,
    HistoryNext,
    RunSearch,
    // Focus and movement.
    Focus(Pane),
    FocusNext,
    FocusPrev,
    /// Move the selection of the focused list (or scroll the focused preview) by rows.
    Move(isize),
    /// Move by pages (sign gives the direction).
    Page(isize),
    Top,
    Bottom,
    /// Scroll the preview by half pages, whatever has the focus.
    PreviewHalfPage(isize),
    ToggleHybrid,
    /// Scroll the preview's code sideways by this many columns.
    ScrollSideways(isize),
    /// Hide or show hits in test files.
    ToggleTests,
    /// Grouped order: show or hide the chunks nested beneath the selected file's row.
    ToggleExpand,
    /// Both columns: one row per file, or chunk by chunk.
    ToggleOrder,
    /// Jump to the selected call-graph neighbour.
    Jump,
    /// Go back to where the last jump came from.
    Back,
    OpenInEditor,
    CopyLocation,
    ToggleHelp,
    Quit,
    Resize(u16, u16),
    Mouse(MouseInput),
    /// Several actions in order (Esc and a key that arrived as one Alt-key).
    Sequence(Vec<Action>),
    // Reports from background work.
    IndexProgress {
        phase: Phase,
        done: usize,
        total: usize,
        at: Instant,
    },
    /// Tokens to embed and embedded, and vectors found cached (beside `Phase::Embed`).
    EmbedWork {
        work: EmbedWork,
        at: Instant,
    },
    /// Query-first: `done` of the `total` chunks the latest search needs are embedded.
    FirstEmbed {
        done: usize,
        total: usize,
        at: Instant,
    },
    Bm25Ready(Arc<dyn Backend>),
    DenseReady(Arc<dyn Backend>),
    /// The working tree changed: this BM25 backend (new chunk ids) replaces the current one.
    Reindexed {
        backend: Arc<dyn Backend>,
        note: String,
    },
    IndexFailed(String),
    IndexInfo(String),
    /// The indexer finished or died without a final word.
    IndexerStopped,
    SearchDone(SearchOutcome),
    /// A file for the preview; `None` when the backend could not provide it.
    FileLoaded {
        path: String,
        file: Option<Arc<HighlightedFile>>,
    },
    /// The highlight worker dropped this request in favour of a newer one.
    FileSkipped {
        path: String,
    },
    EditorClosed(Result<(), String>),
}

/// One search of one column, for a search worker.
pub struct SearchRequest {
    pub column: usize,
    pub generation: u64,
    pub query: String,
    pub retriever: Retriever,
    pub k: usize,
    pub backend: Arc<dyn Backend>,
}

/// Side effects asked for by `App::update`.
pub enum Command {
    Search(SearchRequest),
    /// Read and highlight a file for the preview.
    LoadFile {
        path: String,
        backend: Arc<dyn Backend>,
    },
    /// Suspend the TUI and run `$EDITOR +line file`.
    OpenEditor {
        file: PathBuf,
        line: usize,
    },
    /// Put text on the clipboard (OSC 52).
    Copy(String),
    /// Ask the indexer whether the working tree changed (it answers with `Reindexed` if so).
    CheckIndex,
}

impl std::fmt::Debug for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Command::Search(r) => {
                write!(f, "Search(column {}, gen {}, {}, {:?})", r.column, r.generation, r.retriever, r.query)
            }
            Command::LoadFile { path, .. } => write!(f, "LoadFile({path})"),
            Command::OpenEditor { file, line } => {
                write!(f, "OpenEditor({}:{line})", file.display())
            }
            Command::Copy(text) => write!(f, "Copy({text})"),
            Command::CheckIndex => write!(f, "CheckIndex"),
        }
    }
}
