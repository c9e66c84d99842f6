//! LoRA adapters of the tied encoder (DESIGN.md "Training on a CPU"): for each adapted linear
//! layer `L` of the encoder, `L.lora_a` [r, in] and `L.lora_b` [out, r] (f16 in the file), and
//! the layer computes `W·x + b + (α/r)·B·A·x`. Loading merges them into the weights
//! (`W + (α/r)·B·A`, see [`LoraAdapter::merged`]), so a trained encoder embeds exactly as fast as
//! the pretrained one. Both towers use the merged weights: the model gets its own id and with it
//! its own vector cache.
//!
//! The file is a tower file (`tower_file`): format `coret-lora-v1`, the base model's id, the rank
//! and α in its metadata, and a `FILE.sha256` beside it that loading checks.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use candle_core::{DType, Device, Tensor};

use super::tower_file::{self, META_BASE, META_FORMAT};
use super::{Encoder, LayerTensor};
use crate::error::{Error, Result};

pub const LORA_FORMAT: &str = "coret-lora-v1";
pub const META_RANK: &str = "coret.lora.rank";
pub const META_ALPHA: &str = "coret.lora.alpha";
/// Suffixes of an adapted linear layer's two factors (the layer's own weight is `L.weight`).
pub const A_SUFFIX: &str = ".lora_a";
pub const B_SUFFIX: &str = ".lora_b";

/// Trained adapters, values as stored (rounded to f16).
#[derive(Clone, Debug, PartialEq)]
pub struct LoraAdapter {
    tensors: Vec<LayerTensor>,
    rank: usize,
    alpha: f64,
    base: String,
    /// `lora-<sha256 prefix>`.
    name: String,
    metadata: HashMap<String, String>,
}

impl LoraAdapter {
    /// An adapter from trained factors (rounded to f16 here: what is used is what is saved).
    pub fn from_tensors(
        mut tensors: Vec<LayerTensor>,
        base: &str,
        rank: usize,
        alpha: f64,
        metadata: HashMap<String, String>,
    ) -> Result<Self> {
        tower_file::round_to_f16(&mut tensors);
        let mut l =
            LoraAdapter { tensors, rank, alpha, base: base.to_string(), name: String::new(), metadata };
        l.check("trained adapter")?;
        l.name = tower_file::short_name("lora", &l.to_bytes()?);
        Ok(l)
    }

    /// Reads a file, checking it against the `.sha256` beside it.
    pub fn load(path: &Path) -> Result<Self> {
        let (bytes, expected) = tower_file::read(path)?;
        Self::from_bytes(&bytes, expected.as_deref(), &path.display().to_string())
    }

    /// Parses an adapter file; `origin` names it in errors.
    pub fn from_bytes(bytes: &[u8], sha256: Option<&str>, origin: &str) -> Result<Self> {
        let fail = |m: String| Error::context(origin, m);
        let (metadata, base) = tower_file::open(bytes, sha256, origin, LORA_FORMAT, "LoRA adapter file")?;
        let number = |key: &str| -> Result<f64> {
            metadata
                .get(key)
                .and_then(|v| v.parse::<f64>().ok())
                .ok_or_else(|| fail(format!("no numeric {key} in metadata")))
        };
        let (rank, alpha) = (number(META_RANK)? as usize, number(META_ALPHA)?);
        let tensors = tower_file::read_f16(bytes, origin, "LoRA adapter")?;
        let name = tower_file::short_name("lora", bytes);
        let l = LoraAdapter { tensors, rank, alpha, base, name, metadata };
        l.check(origin)?;
        Ok(l)
    }

    /// Every layer has both factors, of rank `rank`, and there is at least one.
    fn check(&self, origin: &str) -> Result<()> {
        let fail = |m: String| Error::context(origin, m);
        if self.rank == 0 || self.tensors.is_empty() {
            return Err(fail("no adapters in the file".into()));
        }
        for (linear, a, b) in self.pairs().map_err(fail)? {
            let ok = a.shape.len() == 2
                && b.shape.len() == 2
                && a.shape[0] == self.rank
                && b.shape[1] == self.rank
                && a.values.len() == a.shape.iter().product::<usize>()
                && b.values.len() == b.shape.iter().product::<usize>();
            if !ok {
                return Err(fail(format!(
                    "{linear}: factors {:?} and {:?} do not have rank {}",
                    a.shape, b.shape, self.rank
                )));
            }
        }
        Ok(())
    }

    /// (linear layer name, A, B) for each adapted layer.
    fn pairs(&self) -> std::result::Result<Vec<(&str, &LayerTensor, &LayerTensor)>, String> {
        let by_name: HashMap<&str, &LayerTensor> =
            self.tensors.iter().map(|t| (t.name.as_str(), t)).collect();
        let mut out = Vec::new();
        for t in &self.tensors {
            if let Some(linear) = t.name.strip_suffix(A_SUFFIX) {
                let b = by_name
                    .get(format!("{linear}{B_SUFFIX}").as_str())
                    .ok_or_else(|| format!("{linear}: {A_SUFFIX} without {B_SUFFIX}"))?;
                out.push((linear, t, *b));
            } else if !t.name.ends_with(B_SUFFIX) {
                return Err(format!("tensor `{}` is not a LoRA factor", t.name));
            } else if !by_name
                .contains_key(format!("{}{A_SUFFIX}", &t.name[..t.name.len() - B_SUFFIX.len()]).as_str())
            {
                return Err(format!("{}: {B_SUFFIX} without {A_SUFFIX}", t.name));
            }
        }
        Ok(out)
    }

    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let mut meta: BTreeMap<String, String> =
            self.metadata.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        meta.insert(META_FORMAT.into(), LORA_FORMAT.into());
        meta.insert(META_BASE.into(), self.base.clone());
        meta.insert(META_RANK.into(), self.rank.to_string());
        meta.insert(META_ALPHA.into(), self.alpha.to_string());
        tower_file::to_bytes(tower_file::f16_raw(&self.tensors), &meta)
    }

    /// Writes the file and its `.sha256` beside it; returns the sha256.
    pub fn save(&self, path: &Path) -> Result<String> {
        tower_file::save(path, &self.to_bytes()?)
    }

    /// The adapted layers' weights with the adapters merged in, by weight name, from the base
    /// model's `weights` (names with or without a `bert.` prefix).
    pub fn merged(
        &self,
        weights: &HashMap<String, Tensor>,
        device: &Device,
    ) -> Result<HashMap<String, Tensor>> {
        let err = |e: candle_core::Error| Error::context(self.name.clone(), e);
        let scale = self.alpha / self.rank as f64;
        let mut out = HashMap::new();
        for (linear, a, b) in self.pairs().map_err(|m| Error::context(self.name.clone(), m))? {
            let name = format!("{linear}.weight");
            let w = weights
                .get(&name)
                .or_else(|| weights.get(&format!("bert.{name}")))
                .ok_or_else(|| Error::invalid(format!("{}: the model has no {name} to adapt", self.name)))?;
            let a = Tensor::from_slice(&a.values, a.shape.as_slice(), device).map_err(err)?;
            let b = Tensor::from_slice(&b.values, b.shape.as_slice(), device).map_err(err)?;
            out.insert(name, merge(w, &a, &b, scale).map_err(err)?);
        }
        Ok(out)
    }

    pub fn rank(&self) -> usize {
        self.rank
    }
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
    /// The model id of the encoder the adapters were trained on.
    pub fn base(&self) -> &str {
        &self.base
    }
    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn metadata(&self) -> &HashMap<String, String> {
        &self.metadata
    }
    pub fn tensors(&self) -> &[LayerTensor] {
        &self.tensors
    }
}

/// `W + scale·B·A` in f32 (W [out, in], A [r, in], B [out, r]).
pub fn merge(w: &Tensor, a: &Tensor, b: &Tensor, scale: f64) -> candle_core::Result<Tensor> {
    let w = w.to_dtype(DType::F32)?;
    let delta = (b.to_dtype(DType::F32)?.matmul(&a.to_dtype(DType::F32)?)? * scale)?;
    w + delta
}

/// `chunk` with the adapters merged into its weights, for both towers. `origin` names the
/// adapter in errors.
pub fn with_lora(chunk: &Encoder, lora: &LoraAdapter, origin: &str) -> Result<Encoder> {
    if !super::same_weights(lora.base(), &chunk.model_id()) {
        return Err(Error::context(
            origin,
            format!("adapters trained on {}, the model is {}", lora.base(), chunk.model_id()),
        ));
    }
    let weights = chunk.weights().ok_or_else(|| {
        Error::context(
            origin,
            format!("{}: its weights were not kept, so no adapters can be merged", chunk.model_id()),
        )
    })?;
    let overlay = lora.merged(weights, chunk.device()).map_err(|e| Error::context(origin, e))?;
    chunk
        .with_overlay(overlay, format!("{} + {}", chunk.model_id(), lora.name()))
        .map_err(|e| Error::context(origin, e))
}

/// The project's own trained adapters, compiled in (`models/coret-lora.safetensors`, made by
/// `--train` from `train-prs`; `models/README.md` says how and what they scored), with their
/// sha256.
const BUILTIN: Option<(&[u8], &str)> = Some((
    include_bytes!("../../models/coret-lora.safetensors"),
    include_str!("../../models/coret-lora.sha256"),
));

/// Which weights the encoder embeds with (`--weights`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WeightsChoice {
    /// The shipped adapters over the default model (the pretrained model where none ship, or
    /// where `--model` names another model).
    Trained,
    /// The model's own weights.
    Pretrained,
    /// Adapters from a file that `--train --lora-rank R` wrote.
    File(std::path::PathBuf),
}

impl std::str::FromStr for WeightsChoice {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "trained" => Ok(WeightsChoice::Trained),
            "pretrained" => Ok(WeightsChoice::Pretrained),
            "" => Err("expected trained, pretrained or an adapter file".into()),
            path => Ok(WeightsChoice::File(path.into())),
        }
    }
}

/// The shipped adapters, if any are built in.
pub fn builtin() -> Option<Result<LoraAdapter>> {
    BUILTIN.map(|(bytes, sha)| LoraAdapter::from_bytes(bytes, Some(sha), "built-in adapters"))
}

/// `encoder` with the weights `choice` asks for, and a note for the user when `Trained` falls
/// back to the pretrained weights (none built in, or trained on another model).
pub fn apply_weights(encoder: Encoder, choice: &WeightsChoice) -> Result<(Encoder, Option<String>)> {
    match choice {
        WeightsChoice::Pretrained => Ok((encoder, None)),
        WeightsChoice::File(path) => {
            let lora = LoraAdapter::load(path)?;
            Ok((with_lora(&encoder, &lora, &path.display().to_string())?, None))
        }
        WeightsChoice::Trained => match builtin() {
            None => Ok((encoder, None)),
            Some(lora) => {
                let lora = lora?;
                if !super::same_weights(lora.base(), &encoder.model_id()) {
                    let note = format!(
                        "the shipped adapters were trained on {}; {} runs with its own weights",
                        lora.base(),
                        encoder.model_id()
                    );
                    return Ok((encoder, Some(note)));
                }
                Ok((with_lora(&encoder, &lora, "built-in adapters")?, None))
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_adapters_are_intact_and_belong_to_the_default_model() {
        let lora = builtin().expect("adapters are built in").expect("their sha256 matches");
        assert_eq!(lora.base(), "all-MiniLM-L6-v2-53aa51172d14", "trained on the default model");
        assert_eq!((lora.rank(), lora.alpha()), (32, 64.0));
        assert_eq!(
            lora.tensors().len(),
            2 * 6 * 6,
            "both factors of six linear layers in six encoder layers"
        );
        let (bytes, sha) = BUILTIN.unwrap();
        let cut =
            LoraAdapter::from_bytes(&bytes[..bytes.len() - 100], Some(sha), "cut").unwrap_err().to_string();
        assert!(cut.contains("cut") && cut.contains("sha256"), "{cut}");
    }

    #[test]
    fn weights_parse_from_the_flag() {
        assert_eq!("trained".parse::<WeightsChoice>(), Ok(WeightsChoice::Trained));
        assert_eq!("pretrained".parse::<WeightsChoice>(), Ok(WeightsChoice::Pretrained));
        assert_eq!("a.safetensors".parse::<WeightsChoice>(), Ok(WeightsChoice::File("a.safetensors".into())));
        assert!("".parse::<WeightsChoice>().is_err());
    }
}
