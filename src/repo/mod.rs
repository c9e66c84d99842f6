//! Repository access: reading snapshots of a repository.

pub mod git;
