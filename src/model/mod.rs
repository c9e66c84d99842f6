//! The dense encoder: BERT-family checkpoints through candle, mean pooling, unit vectors.
//!
//! `config` reads and checks `config.json`; `tokenize` lays out `[CLS] chunk [DOWN] …`;
//! `encoder` batches and embeds; `device` picks CPU or CUDA; `cpu` tunes CPU inference and
//! `cpu_bert` runs BERT's forward pass there; `provision` finds or fetches
//! the default model; `bench` measures throughput.

pub mod attention;
pub mod bench;
pub mod bf16;
pub mod config;
pub mod cpu;
pub mod cpu_bert;
pub mod device;
pub mod encoder;
pub mod lora;
pub mod pool;
pub mod provision;
pub mod query_adapter;
pub mod query_layers;
pub mod query_tower;
#[doc(hidden)]
pub mod tokenize;
pub mod tower_file;
pub mod weights;

pub use bench::{bench_embed, EmbedBenchReport};
pub use bf16::Precision;
pub use device::{select_device, DeviceChoice};
pub use encoder::{model_id_of, Encoder, EncoderOptions};
pub use lora::{apply_weights, with_lora, LoraAdapter, WeightsChoice};
pub use provision::{default_model_dir, resolve_model_dir};
pub use query_adapter::QueryAdapter;
pub use query_layers::{LayerTensor, QueryLayers};
pub use query_tower::{with_tower_layers, QueryTower, QueryTowerChoice, TowerFile, TowerNames, Towers};
pub use tokenize::{EncoderInput, TokenizedInput, DOWN_TOKEN};
