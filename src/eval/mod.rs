//! Headless evaluation (docs/GUIDE.md "Evaluation"): SWE-bench-style instances, their patches,
//! the gold chunks a patch touches, and retrieval metrics over rankings.

pub mod gold;
pub mod instances;
pub mod metrics;
pub mod patch;
pub mod run;
pub mod snapshot;

#[cfg(test)]
mod lang_gold_tests;
