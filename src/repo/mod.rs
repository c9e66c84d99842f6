//! Reading repositories: the working tree (walk), for eval git snapshots, and the lines of a
//! span that answers quote (`lines`).

pub mod generated;
pub mod git;
pub mod lines;
pub mod source;
pub mod walk;
