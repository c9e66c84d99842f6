//! coret-tui engine: repository → CoRet chunks → call graph → BM25 / dense indexes → rankings.
//!
//! This library knows nothing of the terminal. The TUI (`tui`), the headless query,
//! eval and training modes are clients of the same engine.

#[macro_use]
mod simd;

pub mod cache;
pub mod callgraph;
pub mod chunk;
pub mod engine;
pub mod error;
pub mod eval;
pub mod history;
pub mod index;
pub mod lang;
pub mod mcp;
pub mod model;
pub mod progress;
pub mod rank;
pub mod repo;
pub mod rerank;
pub mod train;
pub mod tui;

pub use chunk::{Chunk, ChunkKind};

// Lets the test fixtures (`testkit.rs`) name the library `coret::` both here and when
// integration tests include the same file.
extern crate self as coret;
#[cfg(test)]
mod testkit;
pub use error::{Error, Result};
