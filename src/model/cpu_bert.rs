//! BERT inference on the CPU, for the encoder's forward pass.
//!
//! candle-transformers' BERT spends most of a long sequence's time outside the matrix
//! products (docs/RESULTS.md "Speed and memory"): GELU's exact `erf` goes through scalar `libm`, the
//! softmax is five passes over the attention scores, the scores are divided by √d in a pass
//! of their own, and Q, K and V are three products. Here the scale is folded into the query
//! weights, Q, K and V are one product, attention runs a block of query rows at a time
//! ([`Attention`]: no score tensor, padding keys skipped), and GELU is [`gelu_erf`],
//! vectorised. Same weights, same function: the vectors agree with candle-transformers' to
//! ~1e-6 (tested). With [`Precision::Bf16`] the linear layers take bf16 inputs
//! ([`PackedBf16`]), with [`Precision::Int8`] they run in int8 ([`PackedInt8`]). Used where the encoder was loaded from a checkpoint on the CPU in f32;
//! training and CUDA keep candle-transformers' model.

use std::collections::HashMap;

use candle_core::{CpuStorage, CustomOp1, DType, Layout, Shape, Tensor};
use candle_transformers::models::bert::{Config, HiddenAct, PositionEmbeddingType};
use rayon::prelude::*;

use super::attention::Attention;
use super::bf16::{self, PackedBf16};
use super::cpu::contiguous_f32;
use super::int8::{self, PackedInt8};
use super::precision::Precision;

struct Layer {
    /// hidden → 3 × hidden: Q (pre-scaled by 1/√head_dim), K, V side by side.
    qkv: Linear,
    out: Linear,
    attn_norm: (Tensor, Tensor),
    up: Linear,
    down: Linear,
    out_norm: (Tensor, Tensor),
}

/// `x ↦ x·W + b`, in f32 (candle's product), with bf16 inputs ([`PackedBf16`]) or in int8
/// ([`PackedInt8`]).
enum Linear {
    /// `w` [in, out], contiguous.
    F32 {
        w: Tensor,
        b: Tensor,
    },
    Bf16(PackedBf16),
    Int8(PackedInt8),
}

impl Linear {
    /// From `w` [in, out] and `b` [out], packed for bf16 or int8 if asked (`None` if that fails).
    /// `input_max`: each input channel's largest |x| on calibration texts, which int8 smooths by.
    fn new(w: Tensor, b: Tensor, precision: Precision, input_max: Option<&[f32]>) -> Option<Linear> {
        if matches!(precision, Precision::F32 | Precision::Auto) {
            return Some(Linear::F32 { w, b });
        }
        let (k, n) = w.dims2().ok()?;
        let w = w.flatten_all().ok()?.to_vec1::<f32>().ok()?;
        let b = b.to_vec1::<f32>().ok()?;
        match precision {
            Precision::Bf16 => PackedBf16::new(&w, &b, k, n).map(Linear::Bf16),
            _ => PackedInt8::new(&w, &b, k, n, input_max).map(Linear::Int8),
        }
    }

    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        match self {
            Linear::F32 { w, b } => x.matmul(w)?.broadcast_add(b),
            Linear::Bf16(p) => x.apply_op1_no_bwd(&Packed {
                name: "coret-bf16-linear",
                k: p.k(),
                n: p.n(),
                f: &|x| p.forward(x),
            }),
            Linear::Int8(p) => x.apply_op1_no_bwd(&Packed {
                name: "coret-int8-linear",
                k: p.k(),
                n: p.n(),
                f: &|x| p.forward(x),
            }),
        }
    }
}

/// A packed product as a candle op over [rows, k].
struct Packed<'a> {
    name: &'static str,
    k: usize,
    n: usize,
    f: &'a dyn Fn(&[f32]) -> Vec<f32>,
}

impl CustomOp1 for Packed<'_> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        let x = contiguous_f32(self.name, storage, layout)?;
        let (rows, k) = layout.shape().dims2()?;
        if k != self.k {
            candle_core::bail!("{}: input width {k}, weights {}", self.name, self.k);
        }
        Ok((CpuStorage::F32((self.f)(x)), Shape::from((rows, self.n))))
    }
}

/// The remembered calibration maxima's file format.
const MAXIMA_VERSION: u32 = 1;

/// One layer's linear inputs' largest |x| per channel, for int8's smoothing.
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct InputMaxima {
    qkv: Vec<f32>,
    out: Vec<f32>,
    up: Vec<f32>,
    down: Vec<f32>,
}

pub struct CpuBert {
    word: Tensor,
    position: Tensor,
    token_type: Tensor,
    emb_norm: (Tensor, Tensor),
    layers: Vec<Layer>,
    heads: usize,
    eps: f32,
    /// Of every linear layer: one precision for the whole pass, which the fingerprint names.
    precision: Precision,
}

impl CpuBert {
    /// Builds the model from a checkpoint's tensors (names as in Hugging Face's `BertModel`,
    /// with or without a `bert.` prefix). `None` when the checkpoint is not a plain f32 BERT
    /// with exact GELU and absolute positions: the caller keeps candle-transformers' model.
    pub fn from_tensors(t: &HashMap<String, Tensor>, c: &Config, precision: Precision) -> Option<CpuBert> {
        Self::build(t, c, precision, None)
    }

    /// As [`CpuBert::from_tensors`] in int8, each linear layer smoothed by its inputs' largest
    /// values in the f32 pass over `probe()` (ids, type ids, mask: a calibration batch), see
    /// [`super::int8`]. f32 where the CPU has no int8 products. The maxima are read from
    /// `remembered` when it holds them for these shapes, else measured and written there: the
    /// f32 pass is most of what loading in int8 costs.
    pub fn calibrated_int8(
        t: &HashMap<String, Tensor>,
        c: &Config,
        probe: impl FnOnce() -> Option<(Tensor, Tensor, Tensor)>,
        remembered: Option<&std::path::Path>,
    ) -> Option<CpuBert> {
        if !int8::supported() {
            return Self::build(t, c, Precision::F32, None);
        }
        let fits = |m: &Vec<InputMaxima>| {
            m.len() == c.num_hidden_layers
                && m.iter().all(|l| l.qkv.len() == c.hidden_size && l.down.len() == c.intermediate_size)
        };
        let read =
            remembered.and_then(|f| crate::cache::read_framed::<Vec<InputMaxima>>(f, MAXIMA_VERSION).ok());
        let maxima = match read.filter(fits) {
            Some(m) => m,
            None => {
                let (ids, type_ids, mask) = probe()?;
                let m = Self::build(t, c, Precision::F32, None)?.input_maxima(&ids, &type_ids, &mask).ok()?;
                if let Some(f) = remembered {
                    // An unwritable cache costs the f32 pass on the next load, nothing more.
                    let _ = crate::cache::write_framed(f, MAXIMA_VERSION, &m);
                }
                m
            }
        };
        Self::build(t, c, Precision::Int8, Some(&maxima))
    }

    fn build(
        t: &HashMap<String, Tensor>,
        c: &Config,
        precision: Precision,
        maxima: Option<&[InputMaxima]>,
    ) -> Option<CpuBert> {
        if c.hidden_act != HiddenAct::Gelu
            || c.position_embedding_type != PositionEmbeddingType::Absolute
            || !c.hidden_size.is_multiple_of(c.num_attention_heads)
        {
            return None;
        }
        // All layers in one precision or in f32, so that one precision describes the vectors.
        let (h, i) = (c.hidden_size, c.intermediate_size);
        let shapes = [(h, 3 * h), (h, h), (h, i), (i, h)];
        let precision = match precision {
            Precision::Auto => super::precision_choice::cpu_choice().precision,
            p => p,
        };
        let precision = match precision {
            Precision::Bf16 if bf16::supported() && shapes.iter().all(|&(k, n)| bf16::fits(k, n)) => {
                Precision::Bf16
            }
            Precision::Int8 if int8::supported() && shapes.iter().all(|&(k, n)| int8::fits(k, n)) => {
                Precision::Int8
            }
            _ => Precision::F32,
        };
        let prefix = if t.contains_key("bert.embeddings.word_embeddings.weight") { "bert." } else { "" };
        let get = |name: &str| -> Option<Tensor> {
            let x = t.get(&format!("{prefix}{name}"))?;
            (x.dtype() == DType::F32 && x.device().is_cpu()).then(|| x.clone())
        };
        // Linear weights are [out, in]; products here take [in, out], contiguous.
        let weights = |name: &str| -> Option<(Tensor, Tensor)> {
            let w = get(&format!("{name}.weight"))?.t().ok()?.contiguous().ok()?;
            Some((w, get(&format!("{name}.bias"))?))
        };
        let linear = |name: &str, input_max: Option<&Vec<f32>>| -> Option<Linear> {
            let (w, b) = weights(name)?;
            Linear::new(w, b, precision, input_max.map(Vec::as_slice))
        };
        let norm = |name: &str| Some((get(&format!("{name}.weight"))?, get(&format!("{name}.bias"))?));
        let scale = 1.0 / ((c.hidden_size / c.num_attention_heads) as f64).sqrt();
        let mut layers = Vec::with_capacity(c.num_hidden_layers);
        for i in 0..c.num_hidden_layers {
            let l = format!("encoder.layer.{i}");
            let (qw, qb) = weights(&format!("{l}.attention.self.query"))?;
            let (kw, kb) = weights(&format!("{l}.attention.self.key"))?;
            let (vw, vb) = weights(&format!("{l}.attention.self.value"))?;
            let qkv_w = Tensor::cat(&[(qw * scale).ok()?, kw, vw], 1).ok()?;
            let qkv_b = Tensor::cat(&[(qb * scale).ok()?, kb, vb], 0).ok()?;
            let m = maxima.map(|m| &m[i]);
            layers.push(Layer {
                qkv: Linear::new(qkv_w, qkv_b, precision, m.map(|m| m.qkv.as_slice()))?,
                out: linear(&format!("{l}.attention.output.dense"), m.map(|m| &m.out))?,
                attn_norm: norm(&format!("{l}.attention.output.LayerNorm"))?,
                up: linear(&format!("{l}.intermediate.dense"), m.map(|m| &m.up))?,
                down: linear(&format!("{l}.output.dense"), m.map(|m| &m.down))?,
                out_norm: norm(&format!("{l}.output.LayerNorm"))?,
            });
        }
        Some(CpuBert {
            word: get("embeddings.word_embeddings.weight")?,
            position: get("embeddings.position_embeddings.weight")?,
            token_type: get("embeddings.token_type_embeddings.weight")?,
            emb_norm: norm("embeddings.LayerNorm")?,
            layers,
            heads: c.num_attention_heads,
            eps: c.layer_norm_eps as f32,
            precision,
        })
    }

    /// Hidden states [B, L, hidden] for `ids`, `type_ids` and `mask` (u32, [B, L]; each mask
    /// row 1s for the tokens, then 0s for the padding, as `pad_batch` lays them out; any other
    /// mask is an error).
    pub fn forward(&self, ids: &Tensor, type_ids: &Tensor, mask: &Tensor) -> candle_core::Result<Tensor> {
        self.forward_upto(ids, type_ids, mask, self.layers.len())
    }

    /// As [`CpuBert::forward`], through the first `upto` encoder layers only (training runs
    /// the frozen lower layers here and the learning top ones differentiably).
    pub fn forward_upto(
        &self,
        ids: &Tensor,
        type_ids: &Tensor,
        mask: &Tensor,
        upto: usize,
    ) -> candle_core::Result<Tensor> {
        let (b, len) = ids.dims2()?;
        let hidden = self.word.dim(1)?;
        let mut x = self.embed(ids, type_ids)?;
        let attention = Attention::new(mask, self.heads)?;
        for layer in &self.layers[..upto.min(self.layers.len())] {
            x = self.layer(layer, &x, &attention, None)?;
        }
        x.reshape((b, len, hidden))
    }

    /// The embeddings' layer-normed sum, [B × L, hidden].
    fn embed(&self, ids: &Tensor, type_ids: &Tensor) -> candle_core::Result<Tensor> {
        let (b, len) = ids.dims2()?;
        let words = self.word.index_select(&ids.flatten_all()?, 0)?;
        let types = self.token_type.index_select(&type_ids.flatten_all()?, 0)?;
        let positions = self.position.narrow(0, 0, len)?.repeat((b, 1))?;
        let x = ((words + types)? + positions)?;
        candle_nn::ops::layer_norm(&x, &self.emb_norm.0, &self.emb_norm.1, self.eps)
    }

    /// The linear layers' precision: bf16 or int8 where asked for and the CPU and shapes allow it.
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// One encoder layer over `x` [B × L, hidden]; each linear layer's input maxima into
    /// `record` where given.
    fn layer(
        &self,
        l: &Layer,
        x: &Tensor,
        attention: &Attention,
        mut record: Option<&mut InputMaxima>,
    ) -> candle_core::Result<Tensor> {
        let mut seen =
            |x: &Tensor, field: fn(&mut InputMaxima) -> &mut Vec<f32>| -> candle_core::Result<()> {
                if let Some(r) = record.as_deref_mut() {
                    *field(r) = x.abs()?.max(0)?.to_vec1::<f32>()?;
                }
                Ok(())
            };
        seen(x, |r| &mut r.qkv)?;
        let context = l.qkv.forward(x)?.apply_op1_no_bwd(attention)?;
        seen(&context, |r| &mut r.out)?;
        let attn = (l.out.forward(&context)? + x)?;
        let attn = candle_nn::ops::layer_norm(&attn, &l.attn_norm.0, &l.attn_norm.1, self.eps)?;
        seen(&attn, |r| &mut r.up)?;
        let up = l.up.forward(&attn)?.apply_op1_no_bwd(&GeluErf)?;
        seen(&up, |r| &mut r.down)?;
        let out = (l.down.forward(&up)? + attn)?;
        candle_nn::ops::layer_norm(&out, &l.out_norm.0, &l.out_norm.1, self.eps)
    }

    /// Each layer's linear inputs' largest |x| per channel over a batch.
    fn input_maxima(
        &self,
        ids: &Tensor,
        type_ids: &Tensor,
        mask: &Tensor,
    ) -> candle_core::Result<Vec<InputMaxima>> {
        let mut x = self.embed(ids, type_ids)?;
        let attention = Attention::new(mask, self.heads)?;
        let mut maxima = Vec::with_capacity(self.layers.len());
        for layer in &self.layers {
            let mut m = InputMaxima::default();
            x = self.layer(layer, &x, &attention, Some(&mut m))?;
            maxima.push(m);
        }
        Ok(maxima)
    }
}

/// GELU with the exact (erf) form, over f32 on the CPU.
struct GeluErf;

impl CustomOp1 for GeluErf {
    fn name(&self) -> &'static str {
        "coret-gelu-erf"
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        let mut out = contiguous_f32(self.name(), storage, layout)?.to_vec();
        out.par_chunks_mut(4096).for_each(gelu_erf);
        Ok((CpuStorage::F32(out), layout.shape().clone()))
    }
}

vectorised! {
    /// `x ← x/2 · (1 + erf(x/√2))` in place; branch-free, so it vectorises.
    pub fn gelu_erf(xs: &mut [f32]) {
        for x in xs.iter_mut() {
            *x = 0.5 * *x * (1.0 + erf(*x * std::f32::consts::FRAC_1_SQRT_2));
        }
    }
}

/// erf for f32: the rational approximation XLA and Eigen use (odd numerator of degree 13 over
/// an even denominator of degree 8 on [-4, 4], where erf reaches ±1 in f32); within a few
/// 1e-7 of the exact value (tested against `libm`).
#[inline(always)]
#[allow(clippy::excessive_precision)]
pub fn erf(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let mut p = x2.mul_add(-2.72614225801306e-10, 2.77068142495902e-08);
    p = x2.mul_add(p, -2.10102402082508e-06);
    p = x2.mul_add(p, -5.69250639462346e-05);
    p = x2.mul_add(p, -7.34990630326855e-04);
    p = x2.mul_add(p, -2.95459980854025e-03);
    p = x2.mul_add(p, -1.60960333262415e-02);
    let mut q = x2.mul_add(-1.45660718464996e-05, -2.13374055278905e-04);
    q = x2.mul_add(q, -1.68282697438203e-03);
    q = x2.mul_add(q, -7.37332916720468e-03);
    q = x2.mul_add(q, -1.42647390514189e-02);
    x * p / q
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::config::load_bert_config;
    use candle_core::Device;
    use candle_nn::VarBuilder;
    use candle_transformers::models::bert::BertModel;

    /// The seeded tiny BERT's configuration and tensors (hidden 32, intermediate 64).
    fn seeded_bert() -> (Config, HashMap<String, Tensor>) {
        let dir = tempfile::tempdir().unwrap();
        crate::testkit::write_seeded_bert(dir.path(), &["alpha", "beta"], 7);
        let config = load_bert_config(dir.path()).unwrap();
        let tensors =
            candle_core::safetensors::load(dir.path().join("model.safetensors"), &Device::Cpu).unwrap();
        (config, tensors)
    }

    #[test]
    fn the_cpu_forward_pass_equals_candle_transformers_bert() {
        let (config, tensors) = seeded_bert();
        let reference =
            BertModel::load(VarBuilder::from_tensors(tensors.clone(), DType::F32, &Device::Cpu), &config)
                .unwrap();
        let fast = CpuBert::from_tensors(&tensors, &config, Precision::F32).expect("a plain f32 BERT");
        // Two rows, the second padded: padding must not change what the tokens attend to.
        let dev = Device::Cpu;
        let ids = Tensor::new(&[[2u32, 40, 41, 42, 7, 3], [2, 43, 44, 3, 0, 0]], &dev).unwrap();
        let types = Tensor::new(&[[0u32, 0, 0, 1, 1, 1], [0, 0, 0, 0, 0, 0]], &dev).unwrap();
        let mask = Tensor::new(&[[1u32, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0]], &dev).unwrap();
        let want = reference.forward(&ids, &types, Some(&mask)).unwrap().to_vec3::<f32>().unwrap();
        let got = fast.forward(&ids, &types, &mask).unwrap().to_vec3::<f32>().unwrap();
        let mut worst = 0f32;
        for (row, m) in [6, 4].into_iter().enumerate() {
            for t in 0..m {
                for (a, b) in want[row][t].iter().zip(&got[row][t]) {
                    worst = worst.max((a - b).abs());
                }
            }
        }
        assert!(worst < 1e-5, "max abs diff {worst:e}");
    }

    #[test]
    fn bf16_and_int8_run_every_layer_or_none_and_stay_close_to_f32() {
        let (config, tensors) = seeded_bert();
        let f32_pass = CpuBert::from_tensors(&tensors, &config, Precision::F32).unwrap();
        assert_eq!(f32_pass.precision(), Precision::F32);
        let dev = Device::Cpu;
        let ids = Tensor::new(&[[2u32, 40, 41, 42, 7, 3]], &dev).unwrap();
        let types = Tensor::zeros((1, 6), DType::U32, &dev).unwrap();
        let mask = Tensor::ones((1, 6), DType::U32, &dev).unwrap();
        let a = f32_pass.forward(&ids, &types, &mask).unwrap().to_vec3::<f32>().unwrap();
        for (precision, supported, min_cos) in
            [(Precision::Bf16, bf16::supported(), 0.999), (Precision::Int8, int8::supported(), 0.995)]
        {
            let pass = CpuBert::from_tensors(&tensors, &config, precision).unwrap();
            if !supported {
                assert_eq!(pass.precision(), Precision::F32, "{precision} unsupported here: f32");
                continue;
            }
            assert_eq!(pass.precision(), precision, "hidden 32 and intermediate 64 fit the panels");
            let b = pass.forward(&ids, &types, &mask).unwrap().to_vec3::<f32>().unwrap();
            for (x, y) in a[0].iter().zip(&b[0]) {
                let dot: f32 = x.iter().zip(y).map(|(p, q)| p * q).sum();
                let norm = |v: &[f32]| v.iter().map(|p| p * p).sum::<f32>().sqrt();
                let cos = dot / (norm(x) * norm(y));
                assert!(cos > min_cos, "{precision}: token cosine {cos}");
                assert_ne!(x, y, "{precision} products round their inputs");
            }
            // A configuration with a shape the panels cannot hold (intermediate 48) keeps
            // every layer in f32, not just that one.
            let mut odd = config.clone();
            odd.intermediate_size = 48;
            let odd_pass = CpuBert::from_tensors(&tensors, &odd, precision).unwrap();
            assert_eq!(odd_pass.precision(), Precision::F32);
            let c = odd_pass.forward(&ids, &types, &mask).unwrap().to_vec3::<f32>().unwrap();
            assert_eq!(c, a, "every layer in f32");
        }
    }

    #[test]
    fn erf_is_within_a_few_ulps_of_libm() {
        let mut worst = 0f64;
        for i in -60_000..=60_000 {
            let x = i as f32 * 1e-4;
            let exact = libm::erf(x as f64);
            worst = worst.max((erf(x) as f64 - exact).abs());
        }
        assert!(worst < 1e-6, "max abs error {worst:e}");
        assert_eq!(erf(9.0), erf(4.0));
        assert!((erf(4.0) - 1.0).abs() < 1e-6 && (erf(-4.0) + 1.0).abs() < 1e-6);
    }

    #[test]
    fn gelu_matches_its_definition() {
        let xs: Vec<f32> = (-1000..1000).map(|i| i as f32 * 0.01).collect();
        let mut fast = xs.clone();
        gelu_erf(&mut fast);
        for (x, f) in xs.iter().zip(&fast) {
            let exact = 0.5 * *x as f64 * (1.0 + libm::erf(*x as f64 / std::f64::consts::SQRT_2));
            assert!((*f as f64 - exact).abs() < 2e-6 * (1.0 + exact.abs()), "gelu({x}) = {f}, want {exact}");
        }
    }
}
