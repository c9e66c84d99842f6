//! The dense encoder: a BERT checkpoint, mean pooling over the attention mask, unit vectors.
//!
//! One encoder embeds both queries and chunks (tied weights). Inputs are tokenised in
//! parallel, sorted by token length and batched, so a batch pads to a length close to
//! all of its members; long sequences go in fewer rows (see `cpu`), and results come back
//! in input order. Candle's CPU kernels (matmuls, element-wise ops) use every core.

use std::ops::Range;
use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{self, BertModel};
use tokenizers::Tokenizer;

use super::config::{load_bert_config, TOKENIZER_FILE, WEIGHTS_FILE};
use super::cpu::{max_rows, plan_batches, tune_allocator, ATTENTION_BUDGET};
use super::cpu_bert::CpuBert;
use super::graph_bert::TrainBert;
use super::pool::{l2_normalize, mean_pool, HostBatch, PaddedBatch};
use super::precision::Precision;
use super::precision_choice;
use super::tokenize::{EncoderInput, InputTokenizer, TokenizedInput};
use super::weights::sha256_bytes;
use crate::error::{Error, Result};

/// Bytes a batch's attention scores may take on a GPU. The CPU's budget keeps them under
/// glibc's mmap threshold (8 rows of 256 tokens); on a GPU that splits long inputs into
/// hundreds of tiny batches, and 256 rows of 256 tokens take 805 MB in f32.
const GPU_ATTENTION_BUDGET: usize = 1 << 30;

/// One batch's vectors, each with its index into the embedded items.
pub type BatchRows = Vec<(usize, Vec<f32>)>;

#[derive(Clone, Debug, PartialEq)]
pub struct EncoderOptions {
    /// Tokens per sequence, special tokens included; clamped to the model's positions.
    pub max_len: usize,
    /// Most sequences per forward pass (long sequences get fewer, see `cpu::max_rows`).
    pub batch_size: usize,
    /// Weights and activations. F32 on CPU; F16/BF16 are for CUDA.
    pub dtype: DType,
    /// The CPU forward pass's linear layers: `Bf16` (the default) runs them with bf16 inputs
    /// where the CPU has AVX-512 BF16 and in f32 elsewhere (docs/RESULTS.md "Speed and memory").
    pub precision: Precision,
    /// Only the first this many transformer layers (issue 72's cheaper-model route, measured
    /// as a probe: docs/RESULTS.md "The static tier"); `None`: all of them. Part of the
    /// model's id, so vectors of a shorter stack never mix with the full one's.
    pub layers: Option<usize>,
}

impl Default for EncoderOptions {
    fn default() -> Self {
        EncoderOptions {
            max_len: 256,
            batch_size: 32,
            dtype: DType::F32,
            precision: Precision::Auto,
            layers: None,
        }
    }
}

/// A model directory's id: its name and the weights' sha256 prefix (vector caches key on it).
fn model_id(dir: &Path, weights_sha256: &str) -> String {
    let name = dir
        .canonicalize()
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "model".to_string());
    format!("{name}-{}", &weights_sha256[..12])
}

/// Whether a file trained on the model `trained_on` (a model id) fits the model `model_id`:
/// the same weights, by the sha256 prefix that ends both ids. The directory name is only a
/// label: a copy of the weights elsewhere (`--model /models/minilm`, a Hugging Face cache
/// snapshot) is the same model.
pub fn same_weights(trained_on: &str, model_id: &str) -> bool {
    let hash = |id: &str| id.rsplit_once('-').map(|(_, h)| h.to_string());
    trained_on == model_id || hash(trained_on).is_some_and(|h| Some(h) == hash(model_id))
}

/// The id [`Encoder::load`] gives the model in `dir`, without loading it (what a trained
/// tower file names as its base).
pub fn model_id_of(dir: &Path) -> Result<String> {
    let weights_path = dir.join(WEIGHTS_FILE);
    let bytes = std::fs::read(&weights_path).map_err(|e| Error::io(&weights_path, e))?;
    Ok(model_id(dir, &sha256_bytes(&bytes)))
}

pub struct Encoder {
    bert: BertModel,
    /// The same weights for the CPU's faster forward pass (f32 checkpoints on the CPU), built
    /// when first used: an encoder that adapters replace at once never packs (or, in int8,
    /// calibrates) its own.
    cpu_bert: std::sync::OnceLock<Option<CpuBert>>,
    /// The same weights in bf16 on CUDA (`Precision::Bf16`), through this crate's BERT:
    /// candle-transformers' turns every padded row into NaN in half precision (its mask is
    /// `(1 − mask) × f32::MIN`, which is −∞ there).
    half_bert: Option<TrainBert>,
    /// The weights by name, when loaded from a directory: LoRA adapters and tower layers are
    /// laid over them (the tensors share storage with `bert`, so keeping them costs nothing).
    weights: Option<std::collections::HashMap<String, Tensor>>,
    tokenizer: InputTokenizer,
    config: bert::Config,
    device: Device,
    opts: EncoderOptions,
    model_id: String,
}

fn tensor_err(e: candle_core::Error) -> Error {
    Error::context("encoder", e)
}

impl Encoder {
    /// Loads `dir/{config.json, tokenizer.json, model.safetensors}`.
    pub fn load(dir: &Path, device: &Device, opts: EncoderOptions) -> Result<Encoder> {
        let mut config = load_bert_config(dir)?;
        if let Some(n) = opts.layers {
            if n == 0 || n > config.num_hidden_layers {
                return Err(Error::invalid(format!(
                    "{}: {n} layers asked for, the model has 1 to {}",
                    dir.display(),
                    config.num_hidden_layers
                )));
            }
            config.num_hidden_layers = n;
        }
        if device.is_cpu() {
            tune_allocator();
        }
        let tokenizer_path = dir.join(TOKENIZER_FILE);
        let tokenizer = Tokenizer::from_file(&tokenizer_path)
            .map_err(|e| Error::context(tokenizer_path.display().to_string(), e))?;
        let weights_path = dir.join(WEIGHTS_FILE);
        let weights_err = |e: candle_core::Error| Error::context(weights_path.display().to_string(), e);
        let bytes = std::fs::read(&weights_path).map_err(|e| Error::io(&weights_path, e))?;
        let digest = sha256_bytes(&bytes);
        let tensors = candle_core::safetensors::load_buffer(&bytes, device).map_err(weights_err)?;
        drop(bytes);
        let vb = VarBuilder::from_tensors(tensors.clone(), opts.dtype, device);
        let bert = BertModel::load(vb, &config).map_err(weights_err)?;
        let model_id = match opts.layers {
            Some(n) => format!("{}-L{n}", model_id(dir, &digest)),
            None => model_id(dir, &digest),
        };
        let mut encoder = Self::from_parts(bert, tokenizer, config, device.clone(), opts, model_id)
            .map_err(|e| Error::context(dir.display().to_string(), e))?;
        encoder.half_bert = encoder.half_forward(&tensors).map_err(weights_err)?;
        // Kept only in f32: then they are the very tensors `bert` holds.
        encoder.weights = (encoder.opts.dtype == DType::F32).then_some(tensors);
        Ok(encoder)
    }

    /// This encoder with some weights replaced (merged LoRA adapters, retrained layers): same
    /// tokenizer and options, named `model_id`. Every overlaid tensor must exist in the base
    /// with the same shape.
    pub fn with_overlay(
        &self,
        overlay: std::collections::HashMap<String, Tensor>,
        model_id: String,
    ) -> Result<Encoder> {
        let base = self.weights.as_ref().ok_or_else(|| {
            Error::invalid(format!(
                "{}: its weights were not kept, so no layers can be laid over them",
                self.model_id
            ))
        })?;
        let mut tensors = base.clone();
        for (name, t) in overlay {
            // Checkpoints saved from `BertForX` heads prefix names with `bert.`.
            let key = [name.clone(), format!("bert.{name}")].into_iter().find(|k| tensors.contains_key(k));
            let Some(key) = key else {
                return Err(Error::invalid(format!("{}: no tensor {name} to replace", self.model_id)));
            };
            if tensors[&key].dims() != t.dims() {
                return Err(Error::invalid(format!(
                    "{}: tensor {name} is {:?} in the model, {:?} in the overlay",
                    self.model_id,
                    tensors[&key].dims(),
                    t.dims()
                )));
            }
            tensors.insert(key, t.to_device(&self.device).map_err(tensor_err)?);
        }
        let vb = VarBuilder::from_tensors(tensors.clone(), self.opts.dtype, &self.device);
        let bert = BertModel::load(vb, &self.config).map_err(tensor_err)?;
        let tokenizer = self.tokenizer.tokenizer().clone();
        let mut encoder = Self::from_parts(
            bert,
            tokenizer,
            self.config.clone(),
            self.device.clone(),
            self.opts.clone(),
            model_id,
        )?;
        encoder.half_bert = encoder.half_forward(&tensors).map_err(tensor_err)?;
        encoder.weights = Some(tensors);
        Ok(encoder)
    }

    /// The CPU forward pass, built on first use from the kept weights (see `cpu_bert`).
    fn cpu_pass(&self) -> Option<&CpuBert> {
        self.cpu_bert.get_or_init(|| self.weights.as_ref().and_then(|t| self.cpu_forward(t))).as_ref()
    }

    /// The CPU forward pass over `tensors`, where it applies: CPU, f32, a plain BERT, and not
    /// turned off with `CORET_BERT=candle` (which keeps candle-transformers' model, e.g. to
    /// compare speed).
    fn cpu_forward(&self, tensors: &std::collections::HashMap<String, Tensor>) -> Option<CpuBert> {
        let wanted = std::env::var("CORET_BERT").map_or(true, |v| v != "candle");
        if !wanted || !self.device.is_cpu() || self.opts.dtype != DType::F32 {
            return None;
        }
        let precision = match self.opts.precision {
            Precision::Auto => precision_choice::cpu_choice().precision,
            p => p,
        };
        if precision != Precision::Int8 {
            return CpuBert::from_tensors(tensors, &self.config, precision);
        }
        let probe = || {
            let b = self.probe_batch(super::int8::CALIBRATION_TEXTS)?;
            Some((b.ids, b.type_ids, b.mask))
        };
        CpuBert::calibrated_int8(tensors, &self.config, probe, self.calibration_file().as_deref())
    }

    /// Where this model's int8 calibration is remembered: the cache root, keyed by what the
    /// maxima depend on (the weights, by `model_id`; the layers; the texts and their length).
    /// None in unoptimised builds (tests), which must not leave files in a user's cache.
    fn calibration_file(&self) -> Option<std::path::PathBuf> {
        if cfg!(debug_assertions) {
            return None;
        }
        let mut key = blake3::Hasher::new();
        for part in
            [&self.model_id, &self.config.num_hidden_layers.to_string(), &self.opts.max_len.to_string()]
        {
            key.update(part.as_bytes()).update(&[0]);
        }
        for text in super::int8::CALIBRATION_TEXTS {
            key.update(text.as_bytes()).update(&[0]);
        }
        let name = format!("{}.maxima", &key.finalize().to_hex()[..24]);
        crate::cache::cache_root(None).ok().map(|root| root.join("int8").join(name))
    }

    /// `texts` as queries in one padded batch, on the CPU.
    fn probe_batch(&self, texts: &[&str]) -> Option<PaddedBatch> {
        let items: Vec<TokenizedInput> =
            texts.iter().map(|t| self.tokenizer.query(t, self.opts.max_len)).collect::<Result<_>>().ok()?;
        let refs: Vec<&TokenizedInput> = items.iter().collect();
        HostBatch::pad(&refs, self.tokenizer.pad_id()).upload(&Device::Cpu).ok()
    }

    /// The bf16 forward pass over `tensors`, where it applies: a GPU, f32 weights loaded and
    /// bf16 asked for (or `auto`, the default: on a GPU bf16 measured faster at the same vectors).
    fn half_forward(
        &self,
        tensors: &std::collections::HashMap<String, Tensor>,
    ) -> candle_core::Result<Option<TrainBert>> {
        let bf16 = matches!(self.opts.precision, Precision::Bf16 | Precision::Auto);
        if self.device.is_cpu() || self.opts.dtype != DType::F32 || !bf16 {
            return Ok(None);
        }
        let vb = VarBuilder::from_tensors(tensors.clone(), DType::BF16, &self.device);
        TrainBert::load(vb, &self.config, None).map(Some)
    }

    /// Assembles an encoder from a model built elsewhere, e.g. by training from a
    /// `VarMap`-backed `VarBuilder` with a tokenizer that has gained `[DOWN]`.
    pub fn from_parts(
        bert: BertModel,
        tokenizer: Tokenizer,
        config: bert::Config,
        device: Device,
        opts: EncoderOptions,
        model_id: String,
    ) -> Result<Encoder> {
        let tokenizer = InputTokenizer::new(tokenizer, config.pad_token_id as u32, TOKENIZER_FILE)?;
        if tokenizer.vocab_size() > config.vocab_size {
            return Err(Error::invalid(format!(
                "{TOKENIZER_FILE} has {} tokens but config.json's vocab_size is {}",
                tokenizer.vocab_size(),
                config.vocab_size
            )));
        }
        if opts.max_len < 2 {
            return Err(Error::invalid(format!(
                "max length {} leaves no room for [CLS] and [SEP]",
                opts.max_len
            )));
        }
        let opts = EncoderOptions {
            max_len: opts.max_len.min(config.max_position_embeddings),
            batch_size: opts.batch_size.max(1),
            dtype: opts.dtype,
            precision: opts.precision,
            layers: opts.layers,
        };
        Ok(Encoder {
            bert,
            cpu_bert: std::sync::OnceLock::new(),
            half_bert: None,
            weights: None,
            tokenizer,
            config,
            device,
            opts,
            model_id,
        })
    }

    /// Names the weights: directory name and a short sha256 of `model.safetensors`.
    /// The f32 weights by name, where kept (adapters and layers are laid over them).
    pub fn weights(&self) -> Option<&std::collections::HashMap<String, Tensor>> {
        self.weights.as_ref()
    }

    pub fn model_id(&self) -> String {
        self.model_id.clone()
    }

    /// What an embedding depends on besides its text: for cache keys.
    pub fn fingerprint(&self) -> String {
        let vocab = self.tokenizer.vocab_size();
        let down = if self.tokenizer.has_down_token() { "down" } else { "sep" };
        format!("{}-len{}-v{vocab}-{down}{}", self.model_id, self.opts.max_len, self.precision_suffix())
    }

    /// The precision the matrix products actually run in: bf16 or int8 only where asked for
    /// and the CPU forward pass (or, for bf16, the GPU's bf16 model) runs it.
    pub fn precision(&self) -> Precision {
        match (self.cpu_pass(), &self.half_bert) {
            (Some(cpu), _) => cpu.precision(),
            (None, Some(_)) => Precision::Bf16,
            (None, None) => Precision::F32,
        }
    }

    /// f32 vectors keep the fingerprints (and caches) they always had.
    fn precision_suffix(&self) -> String {
        match self.precision() {
            Precision::F32 | Precision::Auto => String::new(),
            Precision::Bf16 => "-bf16".into(),
            Precision::Int8 => format!("-{}", super::int8::FORMAT),
        }
    }

    pub fn dim(&self) -> usize {
        self.config.hidden_size
    }
    /// Sequences per forward pass.
    pub fn batch_size(&self) -> usize {
        self.opts.batch_size
    }

    pub fn max_len(&self) -> usize {
        self.opts.max_len
    }
    pub fn options(&self) -> &EncoderOptions {
        &self.opts
    }
    pub fn config(&self) -> &bert::Config {
        &self.config
    }

    /// Which forward pass runs: `cpu` (this crate's, see `cpu_bert`; `cpu bf16` with bf16
    /// products), `bf16` (this crate's differentiable BERT in bf16, on a GPU) or `candle`
    /// (candle-transformers' BERT).
    pub fn forward_name(&self) -> &'static str {
        match (self.cpu_pass(), self.precision()) {
            (None, Precision::Bf16) => "bf16",
            // `precision()` is what runs, never `Auto`; int8 runs only in `cpu_bert`.
            (None, Precision::F32 | Precision::Auto | Precision::Int8) => "candle",
            (Some(_), Precision::F32 | Precision::Auto) => "cpu",
            (Some(_), Precision::Bf16) => "cpu bf16",
            (Some(_), Precision::Int8) => "cpu int8",
        }
    }

    /// What the matrix products run as, for `stats.device` and `--version`: the precision and,
    /// on the CPU, the instruction set (`f32 avx512`, `bf16 avx512-bf16`, `f32 avx2`).
    pub fn kernels(&self) -> String {
        let precision = self.precision();
        if !self.device.is_cpu() {
            return precision.to_string();
        }
        match precision {
            Precision::Bf16 => "bf16 avx512-bf16".into(),
            Precision::Int8 => "int8 avx512-vnni".into(),
            _ => format!("f32 {}", super::cpu::f32_isa()),
        }
    }

    pub fn device(&self) -> &Device {
        &self.device
    }
    pub fn input_tokenizer(&self) -> &InputTokenizer {
        &self.tokenizer
    }

    /// A query as a single sequence (segment 0).
    pub fn tokenize_query(&self, text: &str) -> Result<TokenizedInput> {
        self.tokenizer.query(text, self.opts.max_len)
    }

    /// A chunk with its downstream neighbours; see [`InputTokenizer::input`].
    pub fn tokenize_input(&self, input: &EncoderInput) -> Result<TokenizedInput> {
        self.tokenizer.input(input, self.opts.max_len)
    }

    /// The plain loop the pipeline replaced: every sequence sorted by length at once, then
    /// one batch after another on this thread. The reference the pipeline is tested and
    /// benchmarked against.
    pub fn embed_tokenized_plain(&self, items: &[TokenizedInput]) -> Result<Vec<Vec<f32>>> {
        let mut order: Vec<usize> = (0..items.len()).collect();
        order.sort_by_key(|&i| (items[i].len(), i));
        let lens: Vec<usize> = order.iter().map(|&i| items[i].len()).collect();
        let mut out = vec![Vec::new(); items.len()];
        for range in self.batch_plan(&lens, usize::MAX) {
            let refs: Vec<&TokenizedInput> = order[range.clone()].iter().map(|&i| &items[i]).collect();
            let rows = self.forward_host(HostBatch::pad(&refs, self.tokenizer.pad_id()))?;
            for (&i, row) in order[range].iter().zip(rows) {
                out[i] = row;
            }
        }
        Ok(out)
    }

    /// Batches over lengths sorted ascending: at most `max_batch` (and the configured batch
    /// size) sequences each, fewer for long ones so the attention scores fit the device's budget.
    pub(super) fn batch_plan(&self, sorted_lens: &[usize], max_batch: usize) -> Vec<Range<usize>> {
        let bytes = self.opts.dtype.size_in_bytes();
        let heads = self.config.num_attention_heads;
        let budget = if self.device.is_cpu() { ATTENTION_BUDGET } else { GPU_ATTENTION_BUDGET };
        let size = self.opts.batch_size.min(max_batch).max(1);
        plan_batches(sorted_lens, size, |len| max_rows(len, heads, bytes, budget))
    }

    /// One host batch copied to the device and embedded: its rows' unit vectors.
    pub(super) fn forward_host(&self, batch: HostBatch) -> Result<Vec<Vec<f32>>> {
        let padded = batch.upload(&self.device).map_err(tensor_err)?;
        self.forward_padded(&padded)?.to_vec2::<f32>().map_err(tensor_err)
    }

    /// Forward over one padded batch: pooled, normalised [B, hidden] in f32. Differentiable
    /// when the model was built from trainable variables (`from_parts`).
    pub fn forward_pooled(&self, batch: &[TokenizedInput]) -> Result<Tensor> {
        let refs: Vec<&TokenizedInput> = batch.iter().collect();
        let padded =
            HostBatch::pad(&refs, self.tokenizer.pad_id()).upload(&self.device).map_err(tensor_err)?;
        self.forward_padded(&padded)
    }

    fn forward_padded(&self, padded: &PaddedBatch) -> Result<Tensor> {
        let hidden = match (self.cpu_pass(), &self.half_bert) {
            (Some(cpu), _) => cpu.forward(&padded.ids, &padded.type_ids, &padded.mask),
            (None, Some(half)) => {
                half.forward(&padded.ids, &padded.type_ids, &padded.mask).and_then(|h| h.to_dtype(DType::F32))
            }
            (None, None) => self.bert.forward(&padded.ids, &padded.type_ids, Some(&padded.mask)),
        }
        .map_err(tensor_err)?;
        // On the CPU, a vector independent of its batch's padding; a GPU keeps the tensor sum.
        let pooled = match self.device.is_cpu() {
            true => super::pool::mean_pool_exact(&hidden, &padded.mask),
            false => mean_pool(&hidden, &padded.mask),
        }
        .map_err(tensor_err)?;
        l2_normalize(&pooled).map_err(tensor_err)
    }
}

#[cfg(test)]
#[path = "encoder_tests.rs"]
mod tests;
