//! The model being trained: pretrained weights in a `VarMap`, a tokenizer that has `[DOWN]`,
//! and saving back to a model directory that `--model` and [`Encoder::load`] read.
//!
//! Loading a checkpoint without `[DOWN]` adds it to the tokenizer as a special token and
//! grows the word-embedding matrix by one row, initialised from `[SEP]`'s (the separator
//! the pretrained model used in its place), so training starts from the pretrained model's
//! exact behaviour.

use std::collections::HashMap;
use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_nn::{VarBuilder, VarMap};
use candle_transformers::models::bert::{self, BertModel};
use serde_json::Value;
use tokenizers::{AddedToken, Tokenizer};

use crate::cache::write_atomic;
use crate::error::{Error, Result};
use crate::model::config::{parse_bert_config, CONFIG_FILE, TOKENIZER_FILE, WEIGHTS_FILE};
use crate::model::cpu_bert::CpuBert;
use crate::model::graph_bert::TrainBert;
use crate::model::graph_lora::LoraSpec;
use crate::model::lora::{merge, LoraAdapter, A_SUFFIX, B_SUFFIX};
use crate::model::pool::{l2_normalize, mean_pool, pad_batch};
use crate::model::tokenize::{InputTokenizer, SEP_TOKEN};
use crate::model::{Encoder, EncoderOptions, LayerTensor, Precision, TokenizedInput, DOWN_TOKEN};

pub const WORD_EMBEDDINGS: &str = "embeddings.word_embeddings.weight";

/// A padded batch's hidden states after the frozen layers, with its attention mask.
pub struct Lowered {
    hidden: Tensor,
    mask: Tensor,
}

/// Trainable weights with the tokenizer and config they go with.
pub struct TrainModel {
    pub varmap: VarMap,
    pub bert: TrainBert,
    pub config: bert::Config,
    /// `config.json` as read, with `vocab_size` updated; saved as is otherwise.
    config_json: Value,
    pub tokenizer: InputTokenizer,
    /// The tokenizer as saved (with its original padding and truncation settings).
    tokenizer_json: String,
    pub device: Device,
    /// The first encoder layer that learns: the embeddings and the layers below it are frozen
    /// (their output is detached, so backward stops there). 0: every weight learns.
    frozen_below: usize,
    /// The frozen embeddings and lower layers as the CPU's inference pass (no graph, fused
    /// ops: several times cheaper than the differentiable layers); `None` on other devices.
    lower: Option<CpuBert>,
    /// With LoRA adapters: the frozen weights (then `varmap` holds only the adapters).
    lora: Option<LoraState>,
}

struct LoraState {
    rank: usize,
    alpha: f64,
    base: HashMap<String, Tensor>,
}

/// Beside a LoRA model's weights in a saved directory: the adapters (f32) and their rank and α.
const LORA_WEIGHTS_FILE: &str = "lora.safetensors";
const LORA_SPEC_FILE: &str = "lora.json";

fn tensor_err(context: &str) -> impl Fn(candle_core::Error) -> Error + '_ {
    move |e| Error::context(context.to_string(), e)
}

impl TrainModel {
    /// Loads a model directory for training, adding `[DOWN]` when the vocabulary lacks it.
    pub fn load(dir: &Path, device: &Device) -> Result<Self> {
        if device.is_cpu() {
            // Keep large activation buffers in the heap between passes (see `model::cpu`).
            crate::model::cpu::tune_allocator();
        }
        let config_path = dir.join(CONFIG_FILE);
        let text = std::fs::read_to_string(&config_path).map_err(|e| Error::io(&config_path, e))?;
        let mut config = parse_bert_config(&text, &config_path)?;
        let mut config_json: Value =
            serde_json::from_str(&text).map_err(|e| Error::context(config_path.display().to_string(), e))?;
        let tok_path = dir.join(TOKENIZER_FILE);
        let mut tokenizer =
            Tokenizer::from_file(&tok_path).map_err(|e| Error::context(tok_path.display().to_string(), e))?;
        if tokenizer.token_to_id(DOWN_TOKEN).is_none() {
            tokenizer
                .add_special_tokens([AddedToken::from(DOWN_TOKEN, true)])
                .map_err(|e| Error::context(tok_path.display().to_string(), e))?;
        }
        let old_vocab = config.vocab_size;
        config.vocab_size = old_vocab.max(tokenizer.get_vocab_size(true));
        config_json["vocab_size"] = Value::from(config.vocab_size);
        let tokenizer_json =
            tokenizer.to_string(false).map_err(|e| Error::context(tok_path.display().to_string(), e))?;
        let input_tokenizer =
            InputTokenizer::new(tokenizer, config.pad_token_id as u32, "training tokenizer")?;

        let weights_path = dir.join(WEIGHTS_FILE);
        let wctx = weights_path.display().to_string();
        let mut tensors = candle_core::safetensors::load(&weights_path, device).map_err(tensor_err(&wctx))?;
        grow_word_embeddings(&mut tensors, old_vocab, config.vocab_size, &input_tokenizer, &wctx)?;
        let varmap = VarMap::new();
        let vb = VarBuilder::from_varmap(&varmap, DType::F32, device);
        let bert = TrainBert::load(vb, &config, None).map_err(tensor_err(&wctx))?;
        fill_from(&varmap, &tensors, &wctx)?;
        let mut model = TrainModel {
            varmap,
            bert,
            config,
            config_json,
            tokenizer: input_tokenizer,
            tokenizer_json,
            device: device.clone(),
            frozen_below: 0,
            lower: None,
            lora: None,
        };
        let spec_path = dir.join(LORA_SPEC_FILE);
        if spec_path.is_file() {
            // A LoRA model saved by `save`: its adapters go back on.
            let text = std::fs::read_to_string(&spec_path).map_err(|e| Error::io(&spec_path, e))?;
            let spec: Value = serde_json::from_str(&text)
                .map_err(|e| Error::context(spec_path.display().to_string(), e))?;
            let rank = spec["rank"].as_u64().unwrap_or(0) as usize;
            let alpha = spec["alpha"].as_f64().unwrap_or(0.0);
            model.use_lora(rank, alpha)?;
            let path = dir.join(LORA_WEIGHTS_FILE);
            let ctx = path.display().to_string();
            let adapters = candle_core::safetensors::load(&path, device).map_err(tensor_err(&ctx))?;
            fill_from(&model.varmap, &adapters, &ctx)?;
        }
        Ok(model)
    }

    /// Freezes every weight and puts LoRA adapters of rank `rank` (scale `alpha / rank`) beside
    /// each linear layer of each encoder layer: from here on only the adapters learn, and the
    /// model embeds exactly as before until they do (B starts at zero).
    pub fn use_lora(&mut self, rank: usize, alpha: f64) -> Result<()> {
        if rank == 0 {
            return Err(Error::invalid("--lora-rank must be at least 1"));
        }
        if self.frozen_below > 0 {
            return Err(Error::invalid("LoRA adapts every layer: it does not combine with --train-layers"));
        }
        let base = self.model_tensors()?;
        let adapters = VarMap::new();
        let vb = VarBuilder::from_tensors(base.clone(), DType::F32, &self.device);
        let spec = LoraSpec { rank, alpha, vars: &adapters };
        self.bert = TrainBert::load(vb, &self.config, Some(spec)).map_err(tensor_err("LoRA adapters"))?;
        self.varmap = adapters;
        self.lora = Some(LoraState { rank, alpha, base });
        Ok(())
    }

    /// Sets the adapters to a saved file's (e.g. the shipped model's), so a run continues it on
    /// new data; rank, α and base model must be this model's.
    pub fn start_lora_from(&self, adapter: &LoraAdapter, base_id: &str, origin: &str) -> Result<()> {
        let lora = self.lora.as_ref().ok_or_else(|| Error::invalid("--lora-init needs --lora-rank"))?;
        if adapter.rank() != lora.rank || (adapter.alpha() - lora.alpha).abs() > 1e-9 {
            return Err(Error::context(
                origin,
                format!(
                    "rank {} and α {} differ from this run's {} and {}",
                    adapter.rank(),
                    adapter.alpha(),
                    lora.rank,
                    lora.alpha
                ),
            ));
        }
        if !crate::model::same_weights(adapter.base(), base_id) {
            return Err(Error::context(origin, format!("trained from {}, not {base_id}", adapter.base())));
        }
        let mut tensors = HashMap::new();
        for t in adapter.tensors() {
            let value = Tensor::from_vec(t.values.clone(), t.shape.as_slice(), &self.device)
                .map_err(tensor_err(origin))?;
            tensors.insert(t.name.clone(), value);
        }
        fill_from(&self.varmap, &tensors, origin)
    }

    /// The adapters' rank (0: no adapters, the weights themselves learn).
    pub fn lora_rank(&self) -> usize {
        self.lora.as_ref().map_or(0, |l| l.rank)
    }

    /// The adapters as a shippable file's contents, trained from the model `base_id`.
    pub fn lora_adapter(&self, base_id: &str, metadata: HashMap<String, String>) -> Result<LoraAdapter> {
        let lora = self.lora.as_ref().ok_or_else(|| Error::invalid("the model has no LoRA adapters"))?;
        let mut out = Vec::new();
        for (name, t) in self.tensors() {
            let values = t.flatten_all().and_then(|f| f.to_vec1::<f32>()).map_err(tensor_err(&name))?;
            out.push(LayerTensor { name, shape: t.dims().to_vec(), values });
        }
        LoraAdapter::from_tensors(out, base_id, lora.rank, lora.alpha, metadata)
    }

    /// Every weight of the model as it now embeds (LoRA adapters merged in), by name.
    pub fn model_tensors(&self) -> Result<HashMap<String, Tensor>> {
        let Some(lora) = &self.lora else { return Ok(self.tensors()) };
        let adapters = self.tensors();
        let mut all = lora.base.clone();
        for (name, a) in &adapters {
            let Some(linear) = name.strip_suffix(A_SUFFIX) else { continue };
            let weight = format!("{linear}.weight");
            let (Some(w), Some(b)) = (lora.base.get(&weight), adapters.get(&format!("{linear}{B_SUFFIX}")))
            else {
                return Err(Error::invalid(format!("LoRA adapter {linear}: missing weight or B")));
            };
            let merged = merge(w, a, b, lora.alpha / lora.rank as f64).map_err(tensor_err(&weight))?;
            all.insert(weight, merged);
        }
        Ok(all)
    }

    /// Lets only the top `top` encoder layers learn (0: every weight), so a trained tower is
    /// those layers alone (small enough to ship) and backward runs through them only.
    pub fn train_top_layers(&mut self, top: usize) -> Result<()> {
        let n = self.bert.num_layers();
        if top > n {
            return Err(Error::invalid(format!("--train-layers {top}: the model has {n} layers")));
        }
        self.frozen_below = if top == 0 { 0 } else { n - top };
        self.build_lower();
        Ok(())
    }

    fn build_lower(&mut self) {
        self.lower = (self.frozen_below > 0 && self.device.is_cpu())
            .then(|| self.model_tensors().ok())
            .flatten()
            .and_then(|t| CpuBert::from_tensors(&t, &self.config, Precision::F32));
    }

    /// Keeps only the encoder layers `layers`, in that order and numbered again from 0, with
    /// every weight learning: a smaller student that starts from this model's own layers (LoRA
    /// adapters merged in first), as the 3-layer student of issue 82 starts from 0, 4 and 5.
    pub fn keep_layers(&mut self, layers: &[usize]) -> Result<()> {
        let n = self.bert.num_layers();
        if layers.is_empty() || layers.iter().any(|&l| l >= n) {
            return Err(Error::invalid(format!("student layers {layers:?}: the model has layers 0..{n}")));
        }
        let mut kept = HashMap::new();
        for (name, t) in self.model_tensors()? {
            let Some(rest) = name.strip_prefix("encoder.layer.") else {
                kept.insert(name, t);
                continue;
            };
            let (i, tail) = rest.split_once('.').unwrap_or((rest, ""));
            let at = i.parse::<usize>().ok().and_then(|i| layers.iter().position(|&l| l == i));
            if let Some(at) = at {
                kept.insert(format!("encoder.layer.{at}.{tail}"), t);
            }
        }
        self.config.num_hidden_layers = layers.len();
        self.config_json["num_hidden_layers"] = Value::from(layers.len());
        let varmap = VarMap::new();
        let vb = VarBuilder::from_varmap(&varmap, DType::F32, &self.device);
        self.bert = TrainBert::load(vb, &self.config, None).map_err(tensor_err("the student's layers"))?;
        fill_from(&varmap, &kept, "the student's layers")?;
        self.varmap = varmap;
        self.lora = None;
        self.frozen_below = 0;
        self.lower = None;
        Ok(())
    }

    /// Whether the frozen lower layers run through the CPU's inference pass.
    pub fn frozen_on_cpu_pass(&self) -> bool {
        self.lower.is_some()
    }

    /// How many top layers learn (0: every weight).
    pub fn trained_top_layers(&self) -> usize {
        if self.frozen_below == 0 {
            0
        } else {
            self.bert.num_layers() - self.frozen_below
        }
    }

    /// Pooled, unit-length embeddings [B, H] of one padded batch, differentiable.
    pub fn embed(&self, batch: &[&TokenizedInput]) -> Result<Tensor> {
        match self.lower(batch)? {
            Some(lowered) => self.embed_lowered(&lowered),
            None => {
                let err = tensor_err("training forward");
                let padded = pad_batch(batch, self.tokenizer.pad_id(), &self.device).map_err(&err)?;
                let hidden = self.bert.forward(&padded.ids, &padded.type_ids, &padded.mask).map_err(&err)?;
                l2_normalize(&mean_pool(&hidden, &padded.mask).map_err(&err)?).map_err(&err)
            }
        }
    }

    /// A batch through the frozen embeddings and lower layers, which no gradient reaches, so a
    /// step can run them once and the learning layers more than once (gradient caching).
    /// `None` when every weight learns.
    pub fn lower(&self, batch: &[&TokenizedInput]) -> Result<Option<Lowered>> {
        if self.frozen_below == 0 {
            return Ok(None);
        }
        let err = tensor_err("training forward (frozen layers)");
        let padded = pad_batch(batch, self.tokenizer.pad_id(), &self.device).map_err(&err)?;
        let hidden = match &self.lower {
            Some(cpu) => cpu.forward_upto(&padded.ids, &padded.type_ids, &padded.mask, self.frozen_below),
            None => self
                .bert
                .embed(&padded.ids, &padded.type_ids)
                .and_then(|x| self.bert.forward_layers(&x, &padded.mask, 0..self.frozen_below)),
        }
        .map_err(&err)?
        .detach();
        Ok(Some(Lowered { hidden, mask: padded.mask }))
    }

    /// Pooled, unit-length embeddings [B, H] of a lowered batch through the learning layers.
    pub fn embed_lowered(&self, lowered: &Lowered) -> Result<Tensor> {
        let err = tensor_err("training forward");
        let n = self.bert.num_layers();
        let hidden =
            self.bert.forward_layers(&lowered.hidden, &lowered.mask, self.frozen_below..n).map_err(&err)?;
        l2_normalize(&mean_pool(&hidden, &lowered.mask).map_err(&err)?).map_err(&err)
    }

    /// The weights of the layers that learn (`train_top_layers`), as f32 values by name.
    pub fn top_layer_tensors(&self) -> Result<Vec<LayerTensor>> {
        let prefixes: Vec<String> =
            (self.frozen_below..self.bert.num_layers()).map(|i| format!("encoder.layer.{i}.")).collect();
        let mut out = Vec::new();
        for (name, t) in self.tensors() {
            if prefixes.iter().any(|p| name.starts_with(p)) {
                let values = t.flatten_all().and_then(|f| f.to_vec1::<f32>()).map_err(tensor_err(&name))?;
                out.push(LayerTensor { name, shape: t.dims().to_vec(), values });
            }
        }
        Ok(out)
    }

    /// The weights that learn (with LoRA: the adapters), detached, by tensor name.
    pub fn tensors(&self) -> HashMap<String, Tensor> {
        let data = self.varmap.data().lock().unwrap_or_else(|p| p.into_inner());
        data.iter().map(|(k, v)| (k.clone(), v.as_tensor().detach())).collect()
    }

    /// Overwrites the weights that learn from `tensors` (e.g. a checkpoint); every one must be there.
    pub fn set_tensors(&mut self, tensors: &HashMap<String, Tensor>, source: &str) -> Result<()> {
        fill_from(&self.varmap, tensors, source)?;
        self.build_lower();
        Ok(())
    }

    /// An inference encoder over a copy of the current weights (for validation).
    pub fn to_encoder(&self, opts: EncoderOptions, model_id: String) -> Result<Encoder> {
        let vb = VarBuilder::from_tensors(self.model_tensors()?, DType::F32, &self.device);
        let bert = BertModel::load(vb, &self.config).map_err(tensor_err("validation encoder"))?;
        let tokenizer = Tokenizer::from_bytes(self.tokenizer_json.as_bytes())
            .map_err(|e| Error::context("training tokenizer", e))?;
        Encoder::from_parts(bert, tokenizer, self.config.clone(), self.device.clone(), opts, model_id)
    }

    /// Writes `config.json`, `tokenizer.json` and `model.safetensors` into `dir`, each
    /// atomically (weights last, so a directory with new weights has their config). A LoRA
    /// model writes its frozen weights there and its adapters beside them (`lora.json`,
    /// `lora.safetensors`), so `load` resumes it as it was.
    pub fn save(&self, dir: &Path) -> Result<()> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let config = serde_json::to_string_pretty(&self.config_json)
            .map_err(|e| Error::context(dir.display().to_string(), e))?;
        write_atomic(&dir.join(CONFIG_FILE), config.as_bytes())?;
        write_atomic(&dir.join(TOKENIZER_FILE), self.tokenizer_json.as_bytes())?;
        let Some(lora) = &self.lora else { return save_tensors(&self.tensors(), &dir.join(WEIGHTS_FILE)) };
        save_tensors(&lora.base, &dir.join(WEIGHTS_FILE))?;
        save_tensors(&self.tensors(), &dir.join(LORA_WEIGHTS_FILE))?;
        let spec = serde_json::json!({"rank": lora.rank, "alpha": lora.alpha}).to_string();
        write_atomic(&dir.join(LORA_SPEC_FILE), spec.as_bytes())
    }
}

/// Saves tensors as safetensors through a temporary file and a rename.
pub fn save_tensors(tensors: &HashMap<String, Tensor>, path: &Path) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    candle_core::safetensors::save(tensors, &tmp).map_err(tensor_err(&path.display().to_string()))?;
    #[cfg(unix)]
    {
        // The safetensors writer creates a private file; a model is meant to be shared.
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o644));
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io(path, e)
    })
}

/// Adds rows `old..new` to the word embeddings, each a copy of `[SEP]`'s row.
fn grow_word_embeddings(
    tensors: &mut HashMap<String, Tensor>,
    old: usize,
    new: usize,
    tokenizer: &InputTokenizer,
    source: &str,
) -> Result<()> {
    strip_prefix(tensors);
    if new <= old {
        return Ok(());
    }
    let err = tensor_err(source);
    let words = tensors
        .get(WORD_EMBEDDINGS)
        .ok_or_else(|| Error::context(source.to_string(), format!("no {WORD_EMBEDDINGS}")))?;
    let sep = tokenizer.tokenizer().token_to_id(SEP_TOKEN).unwrap_or(0) as usize;
    let row = words.get(sep).map_err(&err)?.unsqueeze(0).map_err(&err)?;
    let extra = row.repeat((new - old, 1)).map_err(&err)?;
    let grown = Tensor::cat(&[words, &extra], 0).map_err(&err)?;
    tensors.insert(WORD_EMBEDDINGS.to_string(), grown);
    Ok(())
}

/// Checkpoints saved from `BertForX` heads prefix names with `bert.`.
fn strip_prefix(tensors: &mut HashMap<String, Tensor>) {
    if tensors.contains_key(WORD_EMBEDDINGS) {
        return;
    }
    let renamed: Vec<(String, Tensor)> = tensors
        .iter()
        .filter_map(|(k, v)| k.strip_prefix("bert.").map(|s| (s.to_string(), v.clone())))
        .collect();
    tensors.extend(renamed);
}

/// Sets every variable of `varmap` from `tensors` (older checkpoints name layer-norm
/// parameters `gamma`/`beta`); a missing or misshapen tensor is an error naming it.
fn fill_from(varmap: &VarMap, tensors: &HashMap<String, Tensor>, source: &str) -> Result<()> {
    let data = varmap.data().lock().unwrap_or_else(|p| p.into_inner());
    for (name, var) in data.iter() {
        let alias = name.strip_suffix(".weight").map(|s| format!("{s}.gamma"));
        let alias_b = name.strip_suffix(".bias").map(|s| format!("{s}.beta"));
        let found = tensors
            .get(name)
            .or_else(|| alias.and_then(|a| tensors.get(&a)))
            .or_else(|| alias_b.and_then(|a| tensors.get(&a)))
            .ok_or_else(|| Error::context(source.to_string(), format!("no tensor {name}")))?;
        let value = found.to_dtype(DType::F32).and_then(|t| t.to_device(var.device()));
        value
            .and_then(|t| var.set(&t))
            .map_err(|e| Error::context(source.to_string(), format!("{name}: {e}")))?;
    }
    Ok(())
}
