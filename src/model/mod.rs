//! The dense encoder: BERT-family checkpoints through candle, mean pooling, unit vectors.
//!
//! `config` reads and checks `config.json`; `tokenize` lays out `[CLS] chunk [DOWN] …`;
//! `encoder` batches and embeds, through `pipeline` (tokenising, padding and the forward
//! pass overlapping); `device` picks CPU or CUDA; `cpu` tunes CPU inference and
//! `cpu_bert` runs BERT's forward pass there; `provision` finds or fetches
//! the default model; `bench` measures throughput. `towers` is what the dense retriever embeds
//! with; `lora` (the shipped adapters) and `tower_layers` change its weights, both stored as
//! `tower_file`s.

pub mod attention;
pub mod bench;
pub mod bf16;
pub mod config;
pub mod cpu;
pub mod cpu_bert;
pub mod device;
pub mod encoder;
pub mod graph_bert;
pub mod graph_lora;
pub mod graph_ops;
pub mod int8;
pub mod lora;
pub mod pipeline;
pub mod pool;
pub mod precision;
pub mod precision_choice;
pub mod provision;
pub mod static_tier;
pub mod tiles;
#[doc(hidden)]
pub mod tokenize;
pub mod tower_file;
pub mod tower_layers;
pub mod towers;
pub mod weights;

pub use bench::{bench_embed, bench_stages, EmbedBenchReport, StageBench};
pub use device::{select_device, DeviceChoice};
pub use encoder::{model_id_of, same_weights, Encoder, EncoderOptions};
pub use lora::{apply_weights, with_lora, LoraAdapter, WeightsChoice};
pub use precision::Precision;
pub use provision::{default_model_dir, resolve_model_dir};
pub use tokenize::{EncoderInput, TokenizedInput, DOWN_TOKEN};
pub use tower_layers::{with_tower_layers, LayerTensor, TowerLayers};
pub use towers::{TowerNames, Towers};
