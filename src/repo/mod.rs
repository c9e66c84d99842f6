//! Reading repositories: the working tree (walk) and, for eval, git snapshots.

pub mod git;
pub mod source;
pub mod walk;
