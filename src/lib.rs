//! coret-tui engine: repository → CoRet chunks → call graph → BM25 / dense indexes → rankings.
//!
//! This library knows nothing of the terminal. The TUI (`tui`), the headless query,
//! eval and training modes are clients of the same engine.

pub mod callgraph;
pub mod chunk;
pub mod error;
pub mod model;
pub mod progress;

pub use chunk::{Chunk, ChunkKind};
pub use error::{Error, Result};
