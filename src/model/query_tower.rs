//! The query tower (README "Towers"): what turns an issue into a vector, apart from the chunk
//! tower that embeds (and caches) every chunk. Chunk vectors never depend on it: a new query
//! tower re-embeds nothing.
//!
//! A trained query tower is one file of one of two kinds (`coret.format` in its metadata):
//! an **adapter** on the pooled query vector (`query_adapter`) or **retrained top layers** of the
//! chunk tower's encoder (`query_layers`). The project ships its own
//! (`models/query-tower.safetensors`, compiled into the binary and sha256-checked against
//! `models/query-tower.sha256`); `--query-model` chooses.

use std::path::PathBuf;
use std::sync::Arc;

use super::encoder::Encoder;
use super::query_adapter::{QueryAdapter, ADAPTER_FORMAT};
use super::query_layers::{QueryLayers, LAYERS_FORMAT};
use super::tower_file::{self, META_FORMAT};
use crate::error::{Error, Result};

/// The query tower shipped with the project, trained by its own `--train --tower query` from
/// `train-prs` (see `models/README.md`).
const BUILTIN: &[u8] = include_bytes!("../../models/query-tower.safetensors");
const BUILTIN_SHA256: &str = include_str!("../../models/query-tower.sha256");
const BUILTIN_NAME: &str = "models/query-tower.safetensors (built in)";

/// Which query tower a run uses (`--query-model`).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum QueryTowerChoice {
    /// The project's trained query tower, when it was trained for the chunk tower in use.
    Trained,
    /// The chunk tower itself (tied, as the paper).
    #[default]
    Pretrained,
    /// A query-tower file (adapter or layers).
    File(PathBuf),
}

impl std::str::FromStr for QueryTowerChoice {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.trim() {
            "" => {
                Err("empty query model (expected default, trained, pretrained or a query-tower file)".into())
            }
            "trained" | "adapter" => Ok(QueryTowerChoice::Trained),
            "pretrained" | "tied" | "none" => Ok(QueryTowerChoice::Pretrained),
            "default" => Ok(QueryTowerChoice::default()),
            path => Ok(QueryTowerChoice::File(PathBuf::from(path))),
        }
    }
}

/// A trained query tower as read from its file.
#[derive(Clone, Debug)]
pub enum TowerFile {
    Adapter(QueryAdapter),
    Layers(QueryLayers),
}

impl TowerFile {
    /// Parses either kind, by its `coret.format`; `origin` names the file in errors.
    pub fn from_bytes(bytes: &[u8], sha256: Option<&str>, origin: &str) -> Result<Self> {
        tower_file::verify(bytes, sha256, origin)?;
        let meta = tower_file::metadata(bytes, origin)?;
        match meta.get(META_FORMAT).map(String::as_str) {
            Some(ADAPTER_FORMAT) => QueryAdapter::from_bytes(bytes, None, origin).map(TowerFile::Adapter),
            Some(LAYERS_FORMAT) => QueryLayers::from_bytes(bytes, None, origin).map(TowerFile::Layers),
            other => Err(Error::context(
                origin,
                format!(
                    "not a query tower (metadata {META_FORMAT} is {other:?}, expected {ADAPTER_FORMAT} or {LAYERS_FORMAT})"
                ),
            )),
        }
    }

    /// The built-in query tower, checked against its recorded sha256.
    pub fn builtin() -> Result<Self> {
        Self::from_bytes(BUILTIN, Some(BUILTIN_SHA256.trim()), BUILTIN_NAME)
    }

    /// A file; when `FILE.sha256` exists beside it, the content must match it.
    pub fn load(path: &std::path::Path) -> Result<Self> {
        let (bytes, expected) = tower_file::read(path)?;
        Self::from_bytes(&bytes, expected.as_deref(), &path.display().to_string())
    }

    /// The chunk tower's model id it was trained for.
    pub fn base(&self) -> &str {
        match self {
            TowerFile::Adapter(a) => a.base(),
            TowerFile::Layers(l) => l.base(),
        }
    }

    pub fn name(&self) -> &str {
        match self {
            TowerFile::Adapter(a) => a.name(),
            TowerFile::Layers(l) => l.name(),
        }
    }
}

/// `chunk` with tied, retrained top layers laid over it (`--tower-layers`): both towers use
/// them, so the result has its own model id and with it its own vector cache. `origin` names
/// the file in errors.
pub fn with_tower_layers(chunk: &Encoder, layers: &QueryLayers, origin: &str) -> Result<Encoder> {
    if !layers.for_both_towers() {
        return Err(Error::context(
            origin,
            "these layers retrain the query tower only: pass the file as --query-model",
        ));
    }
    if layers.base() != chunk.model_id() {
        return Err(Error::context(
            origin,
            format!("layers trained from {}, the model is {}", layers.base(), chunk.model_id()),
        ));
    }
    let overlay = layers.overlay(chunk.device()).map_err(|e| Error::context(origin, e))?;
    chunk
        .with_overlay(overlay, format!("{} + {}", chunk.model_id(), layers.name()))
        .map_err(|e| Error::context(origin, e))
}

/// What embeds queries.
#[derive(Clone)]
pub enum QueryTower {
    /// The chunk tower itself.
    Tied,
    /// The chunk tower, then an adapter on the pooled vector.
    Adapter(Arc<QueryAdapter>),
    /// The chunk tower's encoder with retrained top layers; the name is the file's.
    Layers { encoder: Arc<Encoder>, name: String },
}

/// The two towers of the dense retriever: the chunk tower (an encoder whose vectors are cached,
/// keyed by it alone) and the query tower.
#[derive(Clone)]
pub struct Towers {
    pub chunk: Arc<Encoder>,
    pub query: QueryTower,
    /// Weight of the query tower's vector against the pretrained one's (1: the query tower's
    /// alone). A blend keeps what training taught while staying near the vectors the chunk
    /// tower was made for.
    pub mix: f32,
}

impl Towers {
    /// Tied towers: the chunk tower embeds queries too.
    pub fn tied(chunk: Arc<Encoder>) -> Self {
        Towers { chunk, query: QueryTower::Tied, mix: 1.0 }
    }

    /// The towers `choice` asks for on top of `chunk`. The built-in query tower applies only to
    /// the chunk tower it was trained for; otherwise the query tower is the pretrained one and
    /// the returned note says why. A file for another chunk tower is an error.
    pub fn with_choice(chunk: Arc<Encoder>, choice: &QueryTowerChoice) -> Result<(Self, Option<String>)> {
        let (file, origin) = match choice {
            QueryTowerChoice::Pretrained => return Ok((Self::tied(chunk), None)),
            QueryTowerChoice::Trained => {
                let f = TowerFile::builtin()?;
                if f.base() != chunk.model_id() {
                    let note = format!(
                        "the built-in query tower was trained for {}, not {}: queries use the chunk tower",
                        f.base(),
                        chunk.model_id()
                    );
                    return Ok((Self::tied(chunk), Some(note)));
                }
                (f, BUILTIN_NAME.to_string())
            }
            QueryTowerChoice::File(path) => {
                let f = TowerFile::load(path)?;
                if f.base() != chunk.model_id() {
                    return Err(Error::context(
                        path.display().to_string(),
                        format!(
                            "query tower trained for {}, the chunk tower is {}",
                            f.base(),
                            chunk.model_id()
                        ),
                    ));
                }
                (f, path.display().to_string())
            }
        };
        let query = Self::build(&chunk, file).map_err(|e| Error::context(origin, e))?;
        Ok((Towers { chunk, query, mix: 1.0 }, None))
    }

    fn build(chunk: &Arc<Encoder>, file: TowerFile) -> Result<QueryTower> {
        Ok(match file {
            TowerFile::Adapter(a) => {
                if a.dim() != chunk.dim() {
                    return Err(Error::invalid(format!(
                        "query adapter of dim {}, the chunk tower's is {}",
                        a.dim(),
                        chunk.dim()
                    )));
                }
                QueryTower::Adapter(Arc::new(a))
            }
            TowerFile::Layers(l) if l.for_both_towers() => {
                return Err(Error::invalid(
                    "these layers retrain both towers (tied): pass the file as --tower-layers",
                ))
            }
            TowerFile::Layers(l) => {
                let overlay = l.overlay(chunk.device()).map_err(|e| Error::context("query tower", e))?;
                let id = format!("{} + {}", chunk.model_id(), l.name());
                let encoder = chunk.with_overlay(overlay, id)?;
                QueryTower::Layers { encoder: Arc::new(encoder), name: l.name().to_string() }
            }
        })
    }

    /// These towers with the query tower's vector weighted `mix` against the pretrained one's.
    pub fn with_mix(self, mix: f32) -> Self {
        Towers { mix: mix.clamp(0.0, 1.0), ..self }
    }

    /// One query's unit vector, at most `max_len` tokens.
    pub fn embed_query(&self, text: &str, max_len: usize) -> Result<Vec<f32>> {
        let trained = self.embed_query_trained(text, max_len)?;
        if self.is_tied() || self.mix >= 1.0 {
            return Ok(trained);
        }
        let pretrained = self.embed_query_pretrained(text, max_len)?;
        let blend: Vec<f32> =
            trained.iter().zip(&pretrained).map(|(t, p)| self.mix * t + (1.0 - self.mix) * p).collect();
        let norm = blend.iter().map(|x| x * x).sum::<f32>().sqrt().max(f32::MIN_POSITIVE);
        Ok(blend.into_iter().map(|x| x / norm).collect())
    }

    fn embed_query_trained(&self, text: &str, max_len: usize) -> Result<Vec<f32>> {
        match &self.query {
            QueryTower::Tied => self.embed_query_pretrained(text, max_len),
            QueryTower::Adapter(a) => Ok(a.apply(&self.embed_query_pretrained(text, max_len)?)),
            QueryTower::Layers { encoder, .. } => {
                first(encoder.embed_queries_with_len(&[text.to_string()], max_len)?)
            }
        }
    }

    /// The chunk tower's own vector for a query (what adapters are trained on).
    pub fn embed_query_pretrained(&self, text: &str, max_len: usize) -> Result<Vec<f32>> {
        first(self.chunk.embed_queries_with_len(&[text.to_string()], max_len)?)
    }

    /// Names both towers for stats and status lines (with `bf16` where the products run so).
    pub fn names(&self) -> TowerNames {
        let chunk = match self.chunk.precision() {
            crate::model::Precision::F32 => self.chunk.model_id(),
            p => format!("{} {p}", self.chunk.model_id()),
        };
        let query = match &self.query {
            QueryTower::Tied => format!("{chunk} (tied)"),
            QueryTower::Adapter(a) => format!("{chunk} + {}", a.name()),
            QueryTower::Layers { name, .. } => format!("{chunk} + {name}"),
        };
        let query =
            if self.is_tied() || self.mix >= 1.0 { query } else { format!("{query} (mix {})", self.mix) };
        TowerNames { chunk, query }
    }

    /// Whether queries go through the chunk tower unchanged.
    pub fn is_tied(&self) -> bool {
        matches!(self.query, QueryTower::Tied)
    }
}

fn first(mut rows: Vec<Vec<f32>>) -> Result<Vec<f32>> {
    rows.pop().ok_or_else(|| Error::invalid("the encoder returned no query vector"))
}

/// What the JSON stats, the eval summary and the TUI call the towers.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct TowerNames {
    pub chunk: String,
    pub query: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_query_tower_loads_its_checksum_holds_and_it_fits_the_default_chunk_tower() {
        let f = TowerFile::builtin().unwrap();
        assert!(
            f.base().starts_with("all-MiniLM-L6-v2-53aa51172d14"),
            "trained for the default model: {}",
            f.base()
        );
        assert_eq!(tower_file::digest(BUILTIN), BUILTIN_SHA256.trim());
        assert!(BUILTIN.len() <= 8 << 20, "the artifact stays under 8 MB");
        let cut = TowerFile::from_bytes(&BUILTIN[..BUILTIN.len() / 2], Some(BUILTIN_SHA256.trim()), "cut")
            .unwrap_err()
            .to_string();
        assert!(cut.contains("cut") && cut.contains("truncated or corrupt"), "{cut}");
    }

    #[test]
    fn query_model_names_parse() {
        assert_eq!("trained".parse::<QueryTowerChoice>().unwrap(), QueryTowerChoice::Trained);
        assert_eq!("default".parse::<QueryTowerChoice>().unwrap(), QueryTowerChoice::default());
        assert_eq!("pretrained".parse::<QueryTowerChoice>().unwrap(), QueryTowerChoice::Pretrained);
        assert_eq!(
            "x.safetensors".parse::<QueryTowerChoice>().unwrap(),
            QueryTowerChoice::File("x.safetensors".into())
        );
        assert!("".parse::<QueryTowerChoice>().is_err());
    }
}
