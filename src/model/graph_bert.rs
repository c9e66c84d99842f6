//! A differentiable BERT forward over `VarMap` variables (training), or over any weights in
//! half precision (the encoder's bf16 pass on CUDA).
//!
//! candle-transformers' `BertModel` cannot be trained: its layer norms take candle-nn's
//! fused kernel, which records no backward op (`apply_op3_no_bwd`), so gradients stop at
//! every layer norm without an error (huggingface/candle#3011, #3752). This module is the
//! same architecture and the same tensor names (`embeddings.word_embeddings.weight`,
//! `encoder.layer.N.attention.self.query.weight`, …) built from differentiable ops only, so
//! its weights save into a checkpoint that [`crate::model::Encoder::load`] reads as usual.
//! Like candle's BERT it applies no dropout. Its attention mask stays finite in every dtype,
//! so the encoder also runs it in bf16 on CUDA, where candle-transformers' mask gives NaN.
//! On the CPU in f32 its softmax, layer norms and GELU are the fused kernels of `graph_ops`.

use candle_core::{DType, Module, Tensor, D};
use candle_nn::{embedding, Embedding, VarBuilder};
use candle_transformers::models::bert::{Config, HiddenAct};

use super::graph_lora::{LoraSpec, Proj};
use super::graph_ops::{fused, AttentionSoftmax, Gelu, LayerNorm};

/// Layer norm through differentiable ops (mean, variance, scale, shift).
struct Norm {
    weight: Tensor,
    bias: Tensor,
    eps: f32,
}

impl Norm {
    fn load(size: usize, eps: f64, vb: VarBuilder) -> candle_core::Result<Self> {
        let weight = vb.get_with_hints(size, "weight", candle_nn::Init::Const(1.0))?;
        let bias = vb.get_with_hints(size, "bias", candle_nn::Init::Const(0.0))?;
        Ok(Norm { weight, bias, eps: eps as f32 })
    }

    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        if fused(x) {
            return x.apply_op3(&self.weight, &self.bias, LayerNorm { eps: self.eps });
        }
        candle_nn::ops::layer_norm_slow(x, &self.weight, &self.bias, self.eps)
    }
}

/// Softmax over the last dimension; the row maximum only stabilises, so it is detached.
fn softmax_last(x: &Tensor) -> candle_core::Result<Tensor> {
    let max = x.max_keepdim(D::Minus1)?.detach();
    let num = x.broadcast_sub(&max)?.exp()?;
    let den = num.sum_keepdim(D::Minus1)?;
    num.broadcast_div(&den)
}

struct Layer {
    query: Proj,
    key: Proj,
    value: Proj,
    attn_out: Proj,
    attn_norm: Norm,
    intermediate: Proj,
    output: Proj,
    out_norm: Norm,
}

impl Layer {
    fn load(vb: VarBuilder, c: &Config, lora: Option<LoraSpec>) -> candle_core::Result<Self> {
        let (h, i) = (c.hidden_size, c.intermediate_size);
        let proj = |input: usize, output: usize, vb: VarBuilder| {
            let prefix = vb.prefix();
            Proj::load(input, output, vb, lora, &prefix)
        };
        let att = vb.pp("attention");
        Ok(Layer {
            query: proj(h, h, att.pp("self").pp("query"))?,
            key: proj(h, h, att.pp("self").pp("key"))?,
            value: proj(h, h, att.pp("self").pp("value"))?,
            attn_out: proj(h, h, att.pp("output").pp("dense"))?,
            attn_norm: Norm::load(h, c.layer_norm_eps, att.pp("output").pp("LayerNorm"))?,
            intermediate: proj(h, i, vb.pp("intermediate").pp("dense"))?,
            output: proj(i, h, vb.pp("output").pp("dense"))?,
            out_norm: Norm::load(h, c.layer_norm_eps, vb.pp("output").pp("LayerNorm"))?,
        })
    }
}

/// BERT's encoder stack (no pooler: the retriever mean-pools the last hidden states).
pub struct TrainBert {
    word: Embedding,
    position: Embedding,
    token_type: Embedding,
    emb_norm: Norm,
    layers: Vec<Layer>,
    heads: usize,
    act: HiddenAct,
}

impl TrainBert {
    /// Builds the model from `vb`; with a `VarMap`-backed builder, missing variables are
    /// created (randomly initialised) and existing ones are used as they are. With `lora`, every
    /// encoder layer's linear layers are frozen with LoRA adapters beside them.
    pub fn load(vb: VarBuilder, c: &Config, lora: Option<LoraSpec>) -> candle_core::Result<Self> {
        let emb = vb.pp("embeddings");
        let layers = (0..c.num_hidden_layers)
            .map(|i| Layer::load(vb.pp("encoder").pp(format!("layer.{i}")), c, lora))
            .collect::<candle_core::Result<Vec<_>>>()?;
        Ok(TrainBert {
            word: embedding(c.vocab_size, c.hidden_size, emb.pp("word_embeddings"))?,
            position: embedding(c.max_position_embeddings, c.hidden_size, emb.pp("position_embeddings"))?,
            token_type: embedding(c.type_vocab_size, c.hidden_size, emb.pp("token_type_embeddings"))?,
            emb_norm: Norm::load(c.hidden_size, c.layer_norm_eps, emb.pp("LayerNorm"))?,
            layers,
            heads: c.num_attention_heads,
            act: c.hidden_act,
        })
    }

    /// Last hidden states [B, L, H] for `ids`, `type_ids` and `mask` (1 = token), each [B, L].
    pub fn forward(&self, ids: &Tensor, type_ids: &Tensor, mask: &Tensor) -> candle_core::Result<Tensor> {
        let x = self.embed(ids, type_ids)?;
        self.forward_layers(&x, mask, 0..self.layers.len())
    }

    /// The embedding layer's output [B, L, H].
    pub fn embed(&self, ids: &Tensor, type_ids: &Tensor) -> candle_core::Result<Tensor> {
        let (_, len) = ids.dims2()?;
        let positions = Tensor::arange(0u32, len as u32, ids.device())?;
        let x = self
            .word
            .forward(ids)?
            .add(&self.token_type.forward(type_ids)?)?
            .broadcast_add(&self.position.forward(&positions)?)?;
        self.emb_norm.forward(&x)
    }

    /// Runs the encoder layers `range` over hidden states `x` [B, L, H]: training the top
    /// layers alone (`--train-layers`) computes the frozen lower layers once per update.
    pub fn forward_layers(
        &self,
        x: &Tensor,
        mask: &Tensor,
        range: std::ops::Range<usize>,
    ) -> candle_core::Result<Tensor> {
        let bias = attention_bias(mask, x.dtype())?;
        let bias = if fused(x) {
            KeyBias::Fused(std::sync::Arc::new(bias.flatten_all()?.to_vec1::<f32>()?))
        } else {
            KeyBias::Tensor(bias)
        };
        let mut x = x.clone();
        for layer in &self.layers[range] {
            x = self.layer_forward(layer, &x, &bias)?;
        }
        Ok(x)
    }

    pub fn num_layers(&self) -> usize {
        self.layers.len()
    }

    fn layer_forward(&self, l: &Layer, x: &Tensor, bias: &KeyBias) -> candle_core::Result<Tensor> {
        let (b, len, hidden) = x.dims3()?;
        let head = hidden / self.heads;
        let split = |t: Tensor| t.reshape((b, len, self.heads, head))?.transpose(1, 2)?.contiguous();
        let q = split(l.query.forward(x)?)?;
        let k = split(l.key.forward(x)?)?;
        let v = split(l.value.forward(x)?)?;
        let scores = q.matmul(&k.t()?)?;
        let probs = match bias {
            KeyBias::Fused(bias) => {
                let scale = 1.0 / (head as f32).sqrt();
                scores.apply_op1(AttentionSoftmax { scale, bias: bias.clone() })?
            }
            KeyBias::Tensor(bias) => softmax_last(&(scores / (head as f64).sqrt())?.broadcast_add(bias)?)?,
        };
        let context = probs.matmul(&v)?.transpose(1, 2)?.contiguous()?.flatten_from(2)?;
        let attended = l.attn_norm.forward(&l.attn_out.forward(&context)?.add(x)?)?;
        let inner = l.intermediate.forward(&attended)?;
        let inner = match self.act {
            HiddenAct::Gelu if fused(&inner) => inner.apply_op1(Gelu)?,
            HiddenAct::Gelu => inner.gelu_erf()?,
            HiddenAct::GeluApproximate => inner.gelu()?,
            HiddenAct::Relu => inner.relu()?,
        };
        l.out_norm.forward(&l.output.forward(&inner)?.add(&attended)?)
    }
}

/// The keys' additive mask, as the attention's softmax takes it: the fused CPU kernel's values
/// [B × L], or a tensor [B, 1, 1, L] for the composite ops.
enum KeyBias {
    Fused(std::sync::Arc<Vec<f32>>),
    Tensor(Tensor),
}

/// Additive attention bias [B, 1, 1, L]: 0 for tokens, −10,000 for padding. A large finite
/// value, not the dtype's minimum as candle's and Hugging Face's BERT use: `f32::MIN` rounds to
/// −∞ in f16 and bf16, and `(1 − mask) × −∞` is NaN for every token (the NaN vectors of the H100
/// session). `exp(−10,000)` is 0 in every dtype, so f32 results are unchanged.
pub(super) fn attention_bias(mask: &Tensor, dtype: DType) -> candle_core::Result<Tensor> {
    let mask = mask.unsqueeze(1)?.unsqueeze(1)?.to_dtype(DType::F32)?;
    ((mask - 1.0)? * 10_000.0)?.to_dtype(dtype)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Half precision (the GPU's bf16 forward pass) must give the f32 vectors, padding included:
    /// with the dtype's minimum as the mask value, bf16 rounds it to −∞ and every row is NaN.
    #[test]
    fn the_bf16_forward_pass_gives_the_f32_vectors_with_padding() {
        use crate::model::pool::{l2_normalize, mean_pool, pad_batch};
        use crate::model::{Encoder, EncoderInput, EncoderOptions, Precision, TokenizedInput};
        use candle_core::Device;
        let fx = crate::testkit::fixture();
        let opts = EncoderOptions { max_len: 64, precision: Precision::F32, ..EncoderOptions::default() };
        let input = |chunk: &str, n: &[&str]| EncoderInput {
            chunk: chunk.into(),
            neighbours: n.iter().map(|s| s.to_string()).collect(),
        };
        let encoder = Encoder::load(&fx.model, &Device::Cpu, opts).unwrap();
        let config = crate::model::config::load_bert_config(&fx.model).unwrap();
        let tensors =
            candle_core::safetensors::load(fx.model.join("model.safetensors"), &Device::Cpu).unwrap();
        let inputs = [input("def load(p): return p", &["def parse(t)", "x = 1"]), input("class c", &[])];
        let tokenized: Vec<TokenizedInput> =
            inputs.iter().map(|i| encoder.tokenize_input(i).unwrap()).collect();
        let refs: Vec<&TokenizedInput> = tokenized.iter().collect();
        assert_ne!(refs[0].len(), refs[1].len(), "the shorter input is padded");
        let padded = pad_batch(&refs, 0, &Device::Cpu).unwrap();
        let embed = |dtype| {
            let vb = candle_nn::VarBuilder::from_tensors(tensors.clone(), dtype, &Device::Cpu);
            let bert = TrainBert::load(vb, &config, None).unwrap();
            let hidden = bert.forward(&padded.ids, &padded.type_ids, &padded.mask).unwrap();
            l2_normalize(&mean_pool(&hidden, &padded.mask).unwrap()).unwrap().to_vec2::<f32>().unwrap()
        };
        let (full, half) = (embed(candle_core::DType::F32), embed(candle_core::DType::BF16));
        for (f, h) in full.iter().zip(&half) {
            assert!(h.iter().all(|x| x.is_finite()), "bf16 vector has NaN or ∞: {h:?}");
            let cosine: f32 = f.iter().zip(h).map(|(a, b)| a * b).sum();
            assert!(cosine > 0.99, "bf16 vector's cosine to f32 is {cosine}");
        }
    }
}
