//! Ranking's own room: what a ranked chunk list becomes before a person (or an agent) reads it.
//! - [`group`]: the grouped view of a ranking, one row per file at its best chunk's rank.
//! - [`shape`]: what kind of query this is (an issue, a short question, a name) and which
//!   order, flat or grouped, it is shown in.
//! - [`names`]: a query that names a definition (`Router`, `Runtime::spawn`) finds where it is
//!   defined; a short question's words weakly match file and directory names.
//!
//! Fusion itself lives in [`crate::rank::fusion`] and the searcher in [`crate::rank::searcher`]; both
//! call down into this module, never the other way.

pub mod fusion;
pub mod group;
pub mod mentions;
pub mod names;
pub mod query_first;
pub mod searcher;
pub mod semantic;
pub mod shape;

pub use group::{group_hits, FileGroup};
pub use shape::{QueryShape, ResultOrder};
