//! Ranking: from a query to the ranked chunks and files every client shows.
//! - [`answer`]: the front door, [`Searcher::answer`]: search → rerank → truncate, the same
//!   for the TUI, `--query`, MCP and eval; [`Answer::groups`] is the view by file.
//! - [`searcher`]: a repository's retrievers (BM25, dense, history) and the hybrid over them.
//! - [`fusion`]: the hybrid's parameters (`FusionParams`, measured defaults) and how two lists
//!   fuse; [`hybrid`]: the hybrid ranking's steps (fusion, mentions, module code, the graph).
//! - [`dense_retriever`]: the dense retriever (transformer or static tier) over
//!   [`crate::index::dense`]'s vectors; [`query_first`]: a cold query's own chunks first.
//! - [`group`]: the grouped view of a ranking, one row per file at its best chunk's rank.
//! - [`shape`]: what kind of query this is (an issue, a short question, a name) and which
//!   order, flat or grouped, it is shown in.
//! - [`layer`]: the ranking layer every hybrid passes after fusion (shape, definitions, path
//!   words, role priors, file evidence).
//! - [`many`]: several checkouts searched as one.
//! - [`names`], [`mentions`]: what a query names (definitions, files, symbols).

pub mod answer;
pub mod dense_retriever;
pub mod fusion;
pub mod group;
pub mod hybrid;
pub mod layer;
pub mod many;
pub mod mentions;
pub mod names;
pub mod query_first;
pub mod searcher;
pub mod shape;

pub use answer::{Answer, Ask};
pub use group::{group_hits, FileGroup};
pub use searcher::Searcher;
pub use shape::{QueryShape, ResultOrder};
