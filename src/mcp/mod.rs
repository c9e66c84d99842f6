//! An MCP (Model Context Protocol) server over a warm index: coding agents call `locate`,
//! `neighbours` and `read` on one repository (`coret-tui --mcp PATH`, stdio).
//!
//! The repository is indexed once and kept in memory ([`Workspace`]); before each call the
//! index is re-opened through the cache, whose manifest check re-reads only edited files, so
//! an agent that edits a file and searches again sees its edit. BM25 answers from the start;
//! the dense index is built (and rebuilt after edits) on a background thread, and every
//! answer says whether it was ready. Ranking goes through the one [`crate::searcher::Searcher`].

pub mod code;
mod dense_worker;
pub mod sandbox;
mod server;
pub mod tools;
mod workspace;

pub use server::{serve_stdio, CoretServer};
pub use workspace::{DenseSetup, TowerLoader, Workspace, WorkspaceOptions};

/// Where the dense index stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DenseStatus {
    /// Not asked for (the server runs BM25 only).
    Off,
    /// The model is loading.
    Loading,
    /// Chunks are being embedded for the current index.
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

    /// For answers: `ready`, `building (120 of 900 chunks embedded)`, ...
    pub fn describe(&self) -> String {
        match self {
            DenseStatus::Off => "off (the server runs with --retriever bm25)".into(),
            DenseStatus::Loading => "loading the model".into(),
            DenseStatus::Building { total: 0, .. } => "building".into(),
            DenseStatus::Building { done, total } => format!("building ({done} of {total} chunks embedded)"),
            DenseStatus::Ready => "ready".into(),
            DenseStatus::Failed(why) => format!("unavailable: {why}"),
        }
    }
}
