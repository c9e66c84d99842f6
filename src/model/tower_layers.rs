//! Retrained top encoder layers for both towers (`--tower-layers`, written by tied training with
//! `--train-layers N`): the file holds only those layers (BERT tensor names, `encoder.layer.N.…`,
//! in f16 to stay small), laid over the model's weights (see `Encoder::with_overlay`). The
//! chunk vectors change with them, so the result has its own model id and vector cache.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use candle_core::{DType, Device, Tensor};

use super::encoder::Encoder;
use super::tower_file::{self, META_BASE, META_FORMAT};
use crate::error::{Error, Result};

/// The format's name predates the removal of query-only layers; files keep it.
pub const LAYERS_FORMAT: &str = "coret-query-layers-v1";
/// Metadata naming which towers the layers replace: `both` (tied training). Files without it
/// (or with `query`) retrained the query tower alone, a removed experiment, and are refused.
pub const META_TOWERS: &str = "coret.towers";
pub const BOTH_TOWERS: &str = "both";
const LAYER_PREFIX: &str = "encoder.layer.";

/// One tensor of a retrained layer, values as stored (rounded to f16).
#[derive(Clone, Debug, PartialEq)]
pub struct LayerTensor {
    pub name: String,
    pub shape: Vec<usize>,
    pub values: Vec<f32>,
}

/// Retrained top layers of the encoder.
#[derive(Clone, Debug, PartialEq)]
pub struct TowerLayers {
    tensors: Vec<LayerTensor>,
    /// The chunk tower's model id the layers were trained from and against.
    base: String,
    /// `layers-<sha256 prefix>`.
    name: String,
    metadata: HashMap<String, String>,
}

impl TowerLayers {
    /// Layers from trained values (rounded to f16 here, so what is used is what is saved).
    pub fn from_tensors(
        mut tensors: Vec<LayerTensor>,
        base: &str,
        metadata: HashMap<String, String>,
    ) -> Result<Self> {
        for t in &tensors {
            check_tensor(t).map_err(Error::invalid)?;
        }
        tower_file::round_to_f16(&mut tensors);
        let mut l = TowerLayers { tensors, base: base.to_string(), name: String::new(), metadata };
        l.name = tower_file::short_name("layers", &l.to_bytes()?);
        Ok(l)
    }

    pub fn load(path: &Path) -> Result<Self> {
        let (bytes, expected) = tower_file::read(path)?;
        Self::from_bytes(&bytes, expected.as_deref(), &path.display().to_string())
    }

    /// Parses a layers file; `origin` names it in errors.
    pub fn from_bytes(bytes: &[u8], sha256: Option<&str>, origin: &str) -> Result<Self> {
        let fail = |m: String| Error::context(origin, m);
        let (metadata, base) = tower_file::open(bytes, sha256, origin, LAYERS_FORMAT, "tower layers file")?;
        let tensors = tower_file::read_f16(bytes, origin, "tower layers file")?;
        for t in &tensors {
            check_tensor(t).map_err(fail)?;
        }
        if tensors.is_empty() {
            return Err(fail("no layers in the file".into()));
        }
        let name = tower_file::short_name("layers", bytes);
        Ok(TowerLayers { tensors, base, name, metadata })
    }

    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let mut meta: BTreeMap<String, String> =
            self.metadata.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        meta.insert(META_FORMAT.into(), LAYERS_FORMAT.into());
        meta.insert(META_BASE.into(), self.base.clone());
        tower_file::to_bytes(tower_file::f16_raw(&self.tensors), &meta)
    }

    /// Writes the file and its `.sha256` beside it.
    pub fn save(&self, path: &Path) -> Result<String> {
        tower_file::save(path, &self.to_bytes()?)
    }

    /// The tensors as f32 on `device`, by name, to lay over the model's weights.
    pub fn overlay(&self, device: &Device) -> candle_core::Result<HashMap<String, Tensor>> {
        self.tensors
            .iter()
            .map(|t| {
                let tensor =
                    Tensor::from_slice(&t.values, t.shape.as_slice(), device)?.to_dtype(DType::F32)?;
                Ok((t.name.clone(), tensor))
            })
            .collect()
    }

    /// The encoder layers this file replaces.
    pub fn layers(&self) -> BTreeSet<usize> {
        self.tensors.iter().filter_map(|t| layer_index(&t.name)).collect()
    }
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
    /// Whether the layers were trained tied, for both towers.
    pub fn for_both_towers(&self) -> bool {
        self.metadata.get(META_TOWERS).map(String::as_str) == Some(BOTH_TOWERS)
    }
}

/// `model` with tied, retrained top layers laid over it (`--tower-layers`): both towers use
/// them, so the result has its own model id and with it its own vector cache. `origin` names
/// the file in errors.
pub fn with_tower_layers(model: &Encoder, layers: &TowerLayers, origin: &str) -> Result<Encoder> {
    if !layers.for_both_towers() {
        return Err(Error::context(
            origin,
            "these layers retrain the query tower only (a removed experiment), not both towers",
        ));
    }
    if !super::same_weights(layers.base(), &model.model_id()) {
        return Err(Error::context(
            origin,
            format!("layers trained from {}, the model is {}", layers.base(), model.model_id()),
        ));
    }
    let overlay = layers.overlay(model.device()).map_err(|e| Error::context(origin, e))?;
    model
        .with_overlay(overlay, format!("{} + {}", model.model_id(), layers.name()))
        .map_err(|e| Error::context(origin, e))
}

fn layer_index(name: &str) -> Option<usize> {
    name.strip_prefix(LAYER_PREFIX)?.split('.').next()?.parse().ok()
}

fn check_tensor(t: &LayerTensor) -> std::result::Result<(), String> {
    if layer_index(&t.name).is_none() {
        return Err(format!("tensor `{}` is not an encoder layer's ({LAYER_PREFIX}N.…)", t.name));
    }
    if t.shape.iter().product::<usize>() != t.values.len() {
        return Err(format!("tensor `{}`: {} values for shape {:?}", t.name, t.values.len(), t.shape));
    }
    if t.values.iter().any(|x| !x.is_finite() || x.abs() > 65_504.0) {
        return Err(format!("tensor `{}` has values that f16 cannot hold", t.name));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layers() -> TowerLayers {
        let t = |name: &str, shape: Vec<usize>| {
            let n = shape.iter().product::<usize>();
            LayerTensor { name: name.into(), shape, values: (0..n).map(|i| i as f32 * 0.1 - 0.3).collect() }
        };
        TowerLayers::from_tensors(
            vec![
                t("encoder.layer.5.output.dense.weight", vec![2, 3]),
                t("encoder.layer.5.output.dense.bias", vec![2]),
            ],
            "base-1",
            [("coret.note".to_string(), "x".to_string())].into(),
        )
        .unwrap()
    }

    #[test]
    fn layers_round_trip_through_their_file_and_a_truncated_copy_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.safetensors");
        let l = layers();
        let sum = l.save(&path).unwrap();
        assert_eq!(std::fs::read_to_string(dir.path().join("q.safetensors.sha256")).unwrap().trim(), sum);
        let back = TowerLayers::load(&path).unwrap();
        assert_eq!(
            back.tensors(),
            l.tensors(),
            "f16 values are rounded before saving, so the file gives them back"
        );
        assert_eq!(back.name(), l.name());
        assert_eq!(back.metadata().get("coret.note").map(String::as_str), Some("x"));
        assert_eq!(back.layers(), BTreeSet::from([5]));
        assert_eq!(back.base(), "base-1");

        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 4]).unwrap();
        let err = TowerLayers::load(&path).unwrap_err().to_string();
        assert!(err.contains("q.safetensors") && err.contains("truncated or corrupt"), "{err}");
        std::fs::remove_file(dir.path().join("q.safetensors.sha256")).unwrap();
        let err = TowerLayers::load(&path).unwrap_err().to_string();
        assert!(err.contains("q.safetensors") && err.contains("truncated or corrupt"), "{err}");
    }

    #[test]
    fn only_encoder_layers_and_f16_ranges_are_accepted() {
        let bad = LayerTensor {
            name: "embeddings.word_embeddings.weight".into(),
            shape: vec![1],
            values: vec![0.0],
        };
        assert!(TowerLayers::from_tensors(vec![bad], "b", HashMap::new()).is_err());
        let huge = LayerTensor { name: "encoder.layer.0.x".into(), shape: vec![1], values: vec![1e6] };
        assert!(TowerLayers::from_tensors(vec![huge], "b", HashMap::new()).is_err());
    }
}
