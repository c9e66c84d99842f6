//! `OUTPUT/checkpoint/`: a model directory (config.json, tokenizer.json,
//! model.safetensors) plus the optimizer's moments (`optimizer.safetensors`) and where
//! training stands (`state.json`). Written into a temporary directory and swapped in by
//! renames, so an interruption leaves the previous checkpoint (or `checkpoint.old`) intact.
//! Data order and negative samples are functions of (seed, epoch, instance), so the step
//! count is all the position a resumed run needs.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use candle_core::{Device, Tensor};
use serde::{Deserialize, Serialize};

use super::weights::{save_tensors, TrainModel};
use crate::cache::write_atomic;
use crate::error::{Error, Result};

pub const CHECKPOINT_DIR: &str = "checkpoint";
const OLD_DIR: &str = "checkpoint.old";
const OPTIMIZER_FILE: &str = "optimizer.safetensors";
const STATE_FILE: &str = "state.json";

/// The choices that fix the data order and the schedule; a resumed run must repeat them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub examples: usize,
    /// blake3 of the examples' instance ids, in order.
    pub examples_digest: String,
    pub batch: usize,
    pub accum: usize,
    pub epochs: usize,
    pub total_steps: usize,
    pub warmup: usize,
    pub seed: u64,
    pub negatives: usize,
    pub lr: f64,
    pub temperature: f64,
    /// Top encoder layers that learn (0: every weight); absent in older checkpoints.
    #[serde(default)]
    pub train_layers: usize,
    /// Micro-batches of one repository sharing one pool of negatives.
    #[serde(default)]
    pub shared_pool: bool,
    /// LoRA adapters' rank (0: no adapters, the weights themselves learn).
    #[serde(default)]
    pub lora_rank: usize,
    /// A reranker's pair layout (max length, issue length); `None` for the encoder.
    #[serde(default)]
    pub rerank_pairs: Option<(usize, usize)>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckpointState {
    /// Optimizer updates done.
    pub step: usize,
    /// AdamW's update count (equals `step`, kept separately for clarity on load).
    pub adam_t: usize,
    pub plan: Plan,
}

/// A checkpoint read back: the model, the optimizer moments and the state.
pub struct Checkpoint {
    pub model: TrainModel,
    pub optimizer: HashMap<String, Tensor>,
    pub state: CheckpointState,
    pub dir: PathBuf,
}

/// Saves model, optimizer moments and state under `output/checkpoint`.
pub fn save(
    output: &Path,
    model: &TrainModel,
    optimizer: &HashMap<String, Tensor>,
    state: &CheckpointState,
) -> Result<PathBuf> {
    let tmp = output.join(format!(".checkpoint.tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    model.save(&tmp)?;
    save_tensors(optimizer, &tmp.join(OPTIMIZER_FILE))?;
    let json = serde_json::to_string_pretty(state).map_err(|e| Error::context(STATE_FILE, e))?;
    write_atomic(&tmp.join(STATE_FILE), json.as_bytes())?;
    let dir = output.join(CHECKPOINT_DIR);
    let old = output.join(OLD_DIR);
    let _ = std::fs::remove_dir_all(&old);
    if dir.exists() {
        std::fs::rename(&dir, &old).map_err(|e| Error::io(&dir, e))?;
    }
    std::fs::rename(&tmp, &dir).map_err(|e| Error::io(&dir, e))?;
    let _ = std::fs::remove_dir_all(&old);
    Ok(dir)
}

/// Loads `output/checkpoint` (or, after an interrupted swap, `checkpoint.old`).
pub fn load(output: &Path, device: &Device) -> Result<Checkpoint> {
    let dir = [CHECKPOINT_DIR, OLD_DIR]
        .iter()
        .map(|d| output.join(d))
        .find(|d| d.join(STATE_FILE).is_file())
        .ok_or_else(|| Error::NoCheckpoint { dir: output.join(CHECKPOINT_DIR) })?;
    let state_path = dir.join(STATE_FILE);
    let text = std::fs::read_to_string(&state_path).map_err(|e| Error::io(&state_path, e))?;
    let state: CheckpointState =
        serde_json::from_str(&text).map_err(|e| Error::context(state_path.display().to_string(), e))?;
    let model = TrainModel::load(&dir, device)?;
    let opt_path = dir.join(OPTIMIZER_FILE);
    let optimizer = candle_core::safetensors::load(&opt_path, device)
        .map_err(|e| Error::context(opt_path.display().to_string(), e))?;
    Ok(Checkpoint { model, optimizer, state, dir })
}

/// Names the first field where `saved` and `now` differ, for a resume refusal.
pub fn plan_mismatch(saved: &Plan, now: &Plan) -> Option<String> {
    let a = serde_json::to_value(saved).ok()?;
    let b = serde_json::to_value(now).ok()?;
    let (a, b) = (a.as_object()?, b.as_object()?);
    a.iter().find(|(k, v)| b.get(*k) != Some(v)).map(|(k, v)| format!("{k}: checkpoint {v}, now {}", b[k]))
}
