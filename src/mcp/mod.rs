//! An MCP (Model Context Protocol) server over a warm index: coding agents call `locate`,
//! `neighbours` and `read` on one repository (`coret-tui --mcp PATH`, stdio), or on several
//! ranked as one ([`Several`]).
//!
//! The repository is indexed once and kept in memory ([`Workspace`]); before each call the
//! index is re-opened through the cache, whose manifest check re-reads only edited files, so
//! an agent that edits a file and searches again sees its edit. BM25 answers from the start;
//! the dense index is built (and rebuilt after edits) on a background thread, and every
//! answer says whether it was ready. A `locate` waits for the dense side at most
//! [`LOCATE_WAIT`]. Ranking goes through the one [`crate::rank::searcher::Searcher`].

mod attach;
mod dense_worker;
pub mod owner;
pub mod sandbox;
mod server;
mod several;
mod state;
pub mod tools;
mod workspace;

pub use attach::{Attached, Backend, MakeWorkspace};
pub use dense_worker::{DenseSetup, TowerLoader};
pub use server::{serve_stdio, CoretServer};
pub use several::Several;
pub use workspace::{Workspace, WorkspaceOptions};

use std::time::Duration;

/// The longest a `locate` waits for the dense side in all (the model loading, the dense index
/// catching up with an edit, this chunks embedded first on a partial index); past it,
/// BM25 answers alone and the answer says why. Agents' clients time tool calls out, and on a
/// cold repository the ~500 chunks an issue asks for take longer than this on a CPU.
pub const LOCATE_WAIT: Duration = Duration::from_secs(5);

/// Where the dense index stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DenseStatus {
    /// Not asked for (the server runs BM25 only).
    Off,
    /// The model is loading.
    Loading,
    /// Chunks are being embedded for the current index. The counts are the build's progress
    /// (chunks to embed, not the index's size): they decide waiting, answers never quote them.
    Building {
        done: usize,
        total: usize,
    },
    Ready,
    /// The model could not be loaded or the index not built.
    Failed(String),
}

impl DenseStatus {
    pub fn is_ready(&self) -> bool {
        *self == DenseStatus::Ready
    }

    /// For answers: `ready`, `building (120 of 900 chunks embedded)`, ... The counts are
    /// `coverage`, the [`crate::rank::dense_retriever::DenseSearcher::coverage`] of the dense index the
    /// answer describes (None: there is none yet), so that every number in one answer comes
    /// from one index; the build's progress counters lag or lead it.
    pub fn describe(&self, coverage: Option<(usize, usize)>) -> String {
        match (self, coverage) {
            (DenseStatus::Off, _) => "off (the server runs with --retriever bm25)".into(),
            (DenseStatus::Failed(why), _) => format!("unavailable: {why}"),
            (DenseStatus::Loading, _) => "loading the model".into(),
            (_, Some((ranked, of))) if ranked < of => format!("building ({ranked} of {of} chunks embedded)"),
            (_, Some(_)) | (DenseStatus::Ready, None) => "ready".into(),
            (DenseStatus::Building { .. }, None) => "building (no dense index to rank with yet)".into(),
        }
    }
}
