//! Retrieval indexes over chunks: BM25 (tantivy) and dense vectors.

pub mod bm25;
pub mod code_tokens;
pub mod dense;
mod hit;
pub mod query_terms;
pub mod shared;
mod shared_search;
pub mod shared_spool;
pub use hit::{Hit, Retriever};
