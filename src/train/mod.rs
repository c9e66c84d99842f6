//! The hidden training mode (README "Training (hidden mode)"): fine-tunes the dense encoder with the
//! CoRet loss on instances prepared by the eval's own code (snapshots, chunks, call-graph
//! neighbours, gold chunks), validating with the eval's metrics.
//!
//! `prepare` turns instances into tokenised [`shard::Example`]s (storable as a shard);
//! `weights` holds the trainable model (`[DOWN]` added) and saves it as a model directory;
//! `bert` is the differentiable forward; `loss`, `step` and `optim` compute updates;
//! `trainer` runs the loop with `validate` and `checkpoint` (`rerank` the reranker's; `distill` a smaller
//! student's, towards the tower's vectors); `output_lock` keeps one run per
//! output directory; `mine` turns a repository's commit history into instances, `mine_docs` its doc comments.

pub mod checkpoint;
pub mod distill;
pub mod loss;
pub mod mine;
pub mod mine_docs;
pub mod mine_message;
pub mod optim;
pub mod output_lock;
pub mod prepare;
pub mod rerank;
pub mod shard;
pub mod step;
pub mod trainer;
pub mod validate;
pub mod weights;

pub use output_lock::{lock_output, OutputLock};
pub use prepare::{prepare_examples, DenseMiner, PrepareOptions, PrepareReport};
pub use shard::{read_shard, write_shard, Example, Shard, ShardHeader};
pub use trainer::{train, LogEvent, Resume, TrainConfig, TrainSummary};
pub use validate::{ValResult, ValSet};
pub use weights::TrainModel;

#[cfg(test)]
mod lora_tests;
#[cfg(test)]
mod tests;
