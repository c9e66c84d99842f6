//! BERT inference on the CPU, f32, for the encoder's forward pass.
//!
//! candle-transformers' BERT spends most of a long sequence's time outside the matrix
//! products (README "Speed and memory"): GELU's exact `erf` goes through scalar `libm`, the
//! softmax is five passes over the attention scores, the scores are divided by √d in a pass
//! of their own, and Q, K and V are three products. Here the scale is folded into the query
//! weights, Q, K and V are one product, padding and softmax are one vectorised pass per row
//! ([`MaskedSoftmax`]), and GELU is [`gelu_erf`], vectorised. Same weights, same function: the vectors agree with
//! candle-transformers' to ~1e-6 (tested). Used where the encoder was loaded from a
//! checkpoint on the CPU in f32; training and CUDA keep candle-transformers' model.

use std::collections::HashMap;

use candle_core::{CpuStorage, CustomOp1, DType, Layout, Shape, Tensor};
use candle_transformers::models::bert::{Config, HiddenAct, PositionEmbeddingType};
use rayon::prelude::*;

use crate::simd::fold;

struct Layer {
    /// [hidden, 3 × hidden]: Q (pre-scaled by 1/√head_dim), K, V side by side, transposed.
    qkv_w: Tensor,
    qkv_b: Tensor,
    out_w: Tensor,
    out_b: Tensor,
    attn_norm: (Tensor, Tensor),
    up_w: Tensor,
    up_b: Tensor,
    down_w: Tensor,
    down_b: Tensor,
    out_norm: (Tensor, Tensor),
}

pub struct CpuBert {
    word: Tensor,
    position: Tensor,
    token_type: Tensor,
    emb_norm: (Tensor, Tensor),
    layers: Vec<Layer>,
    heads: usize,
    eps: f32,
}

impl CpuBert {
    /// Builds the model from a checkpoint's tensors (names as in Hugging Face's `BertModel`,
    /// with or without a `bert.` prefix). `None` when the checkpoint is not a plain f32 BERT
    /// with exact GELU and absolute positions: the caller keeps candle-transformers' model.
    pub fn from_tensors(t: &HashMap<String, Tensor>, c: &Config) -> Option<CpuBert> {
        if c.hidden_act != HiddenAct::Gelu
            || c.position_embedding_type != PositionEmbeddingType::Absolute
            || !c.hidden_size.is_multiple_of(c.num_attention_heads)
        {
            return None;
        }
        let prefix = if t.contains_key("bert.embeddings.word_embeddings.weight") { "bert." } else { "" };
        let get = |name: &str| -> Option<Tensor> {
            let x = t.get(&format!("{prefix}{name}"))?;
            (x.dtype() == DType::F32 && x.device().is_cpu()).then(|| x.clone())
        };
        // Linear weights are [out, in]; products here take [in, out], contiguous.
        let linear = |name: &str| -> Option<(Tensor, Tensor)> {
            let w = get(&format!("{name}.weight"))?.t().ok()?.contiguous().ok()?;
            Some((w, get(&format!("{name}.bias"))?))
        };
        let norm = |name: &str| Some((get(&format!("{name}.weight"))?, get(&format!("{name}.bias"))?));
        let scale = 1.0 / ((c.hidden_size / c.num_attention_heads) as f64).sqrt();
        let mut layers = Vec::with_capacity(c.num_hidden_layers);
        for i in 0..c.num_hidden_layers {
            let l = format!("encoder.layer.{i}");
            let (qw, qb) = linear(&format!("{l}.attention.self.query"))?;
            let (kw, kb) = linear(&format!("{l}.attention.self.key"))?;
            let (vw, vb) = linear(&format!("{l}.attention.self.value"))?;
            let qkv_w = Tensor::cat(&[(qw * scale).ok()?, kw, vw], 1).ok()?;
            let qkv_b = Tensor::cat(&[(qb * scale).ok()?, kb, vb], 0).ok()?;
            let (out_w, out_b) = linear(&format!("{l}.attention.output.dense"))?;
            let (up_w, up_b) = linear(&format!("{l}.intermediate.dense"))?;
            let (down_w, down_b) = linear(&format!("{l}.output.dense"))?;
            layers.push(Layer {
                qkv_w,
                qkv_b,
                out_w,
                out_b,
                attn_norm: norm(&format!("{l}.attention.output.LayerNorm"))?,
                up_w,
                up_b,
                down_w,
                down_b,
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
        })
    }

    /// Hidden states [B, L, hidden] for `ids`, `type_ids` and `mask` (u32, [B, L]; each mask
    /// row 1s for the tokens, then 0s for the padding, as `pad_batch` lays them out; any other
    /// mask is an error).
    pub fn forward(&self, ids: &Tensor, type_ids: &Tensor, mask: &Tensor) -> candle_core::Result<Tensor> {
        let (b, len) = ids.dims2()?;
        let hidden = self.word.dim(1)?;
        let words = self.word.index_select(&ids.flatten_all()?, 0)?;
        let types = self.token_type.index_select(&type_ids.flatten_all()?, 0)?;
        let positions = self.position.narrow(0, 0, len)?.repeat((b, 1))?;
        let x = ((words + types)? + positions)?;
        let mut x = candle_nn::ops::layer_norm(&x, &self.emb_norm.0, &self.emb_norm.1, self.eps)?;
        let softmax = MaskedSoftmax::new(mask)?;
        for layer in &self.layers {
            x = self.layer(layer, &x, &softmax, b, len)?;
        }
        x.reshape((b, len, hidden))
    }

    /// One encoder layer over `x` [B × L, hidden].
    fn layer(
        &self,
        l: &Layer,
        x: &Tensor,
        softmax: &MaskedSoftmax,
        b: usize,
        len: usize,
    ) -> candle_core::Result<Tensor> {
        let hidden = x.dim(1)?;
        let head = hidden / self.heads;
        let qkv = x.matmul(&l.qkv_w)?.broadcast_add(&l.qkv_b)?;
        // [B, L, 3, heads, head] → [3, B, heads, L, head]: one copy for all three.
        let qkv = qkv.reshape((b, len, 3, self.heads, head))?.permute((2, 0, 3, 1, 4))?.contiguous()?;
        let (q, k, v) = (qkv.get(0)?, qkv.get(1)?, qkv.get(2)?);
        let probs = q.matmul(&k.t()?)?.apply_op1_no_bwd(softmax)?;
        let context = probs.matmul(&v)?.transpose(1, 2)?.contiguous()?.reshape((b * len, hidden))?;
        let attn = (context.matmul(&l.out_w)?.broadcast_add(&l.out_b)? + x)?;
        let attn = candle_nn::ops::layer_norm(&attn, &l.attn_norm.0, &l.attn_norm.1, self.eps)?;
        let up = attn.matmul(&l.up_w)?.broadcast_add(&l.up_b)?.apply_op1_no_bwd(&GeluErf)?;
        let out = (up.matmul(&l.down_w)?.broadcast_add(&l.down_b)? + attn)?;
        candle_nn::ops::layer_norm(&out, &l.out_norm.0, &l.out_norm.1, self.eps)
    }
}

/// Softmax over the last dimension of attention scores [B, heads, L, L], where row b's keys
/// from `lens[b]` on are padding (weight 0, as Hugging Face's BERT gives them after adding the
/// lowest f32). One pass per row instead of a mask addition and five softmax passes.
struct MaskedSoftmax {
    lens: Vec<usize>,
}

impl MaskedSoftmax {
    /// From a [B, L] mask of 1s (tokens) then 0s (padding), as `pad_batch` makes them.
    fn new(mask: &Tensor) -> candle_core::Result<Self> {
        let rows = mask.to_vec2::<u32>()?;
        let mut lens = Vec::with_capacity(rows.len());
        for row in rows {
            let n = row.iter().take_while(|&&m| m != 0).count();
            if row[n..].iter().any(|&m| m != 0) {
                candle_core::bail!("attention mask with a token after padding");
            }
            lens.push(n.max(1));
        }
        Ok(MaskedSoftmax { lens })
    }
}

impl CustomOp1 for MaskedSoftmax {
    fn name(&self) -> &'static str {
        "coret-masked-softmax"
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        let data = contiguous_f32(self.name(), storage, layout)?;
        let (b, _heads, _rows, len) = layout.shape().dims4()?;
        if b != self.lens.len() {
            candle_core::bail!("{}: {b} sequences, {} masks", self.name(), self.lens.len());
        }
        let per_sequence = data.len() / b;
        let mut out = data.to_vec();
        out.par_chunks_mut(len).enumerate().for_each(|(i, row)| {
            let keep = self.lens[i * len / per_sequence];
            softmax_row(&mut row[..keep]);
            row[keep..].fill(0.0);
        });
        Ok((CpuStorage::F32(out), layout.shape().clone()))
    }
}

vectorised! {
    /// `row ← softmax(row)` in place (reductions by lanes, so they vectorise).
    fn softmax_row(row: &mut [f32]) {
        let max = fold(row, f32::NEG_INFINITY, f32::max);
        row.iter_mut().for_each(|x| *x = exp(*x - max));
        let inv = 1.0 / fold(row, 0.0, |a, b| a + b);
        row.iter_mut().for_each(|x| *x *= inv);
    }
}

/// e^x for x ≤ 0 (softmax's range), branch-free: x = n·ln2 + r with |r| ≤ ln2/2, e^r by a
/// degree-6 polynomial (Cephes' `expf`), 2^n put straight into the exponent bits. Within
/// 2 ulp of `libm`'s (tested); 0 below the smallest normal f32.
#[inline(always)]
#[allow(clippy::excessive_precision)]
pub fn exp(x: f32) -> f32 {
    let tiny = x < -87.0;
    let x = x.max(-87.0);
    let n = (x * std::f32::consts::LOG2_E).round();
    let r = n.mul_add(-0.693_359_375, x);
    let r = n.mul_add(2.121_944_4e-4, r);
    let mut p = r.mul_add(1.987_569_1e-4, 1.398_199_9e-3);
    p = r.mul_add(p, 8.333_452e-3);
    p = r.mul_add(p, 4.166_579_6e-2);
    p = r.mul_add(p, 1.666_666_5e-1);
    p = r.mul_add(p, 5.000_000_1e-1);
    let e = (r * r).mul_add(p, r + 1.0);
    let scale = f32::from_bits(((n as i32 + 127) << 23) as u32);
    if tiny {
        0.0
    } else {
        e * scale
    }
}

/// The f32 values a custom op reads: only contiguous f32 tensors are accepted.
fn contiguous_f32<'a>(op: &str, storage: &'a CpuStorage, layout: &Layout) -> candle_core::Result<&'a [f32]> {
    let CpuStorage::F32(data) = storage else {
        candle_core::bail!("{op}: f32 only");
    };
    let Some((start, end)) = layout.contiguous_offsets() else {
        candle_core::bail!("{op}: contiguous input only");
    };
    Ok(&data[start..end])
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

    #[test]
    fn the_cpu_forward_pass_equals_candle_transformers_bert() {
        let dir = tempfile::tempdir().unwrap();
        crate::testkit::write_seeded_bert(dir.path(), &["alpha", "beta"], 7);
        let config = load_bert_config(dir.path()).unwrap();
        let tensors =
            candle_core::safetensors::load(dir.path().join("model.safetensors"), &Device::Cpu).unwrap();
        let reference =
            BertModel::load(VarBuilder::from_tensors(tensors.clone(), DType::F32, &Device::Cpu), &config)
                .unwrap();
        let fast = CpuBert::from_tensors(&tensors, &config).expect("a plain f32 BERT");
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
    fn exp_is_within_two_ulps_of_libm_over_softmax_range() {
        for i in 0..=870_000 {
            let x = -(i as f32) * 1e-4;
            let (got, want) = (exp(x), libm::expf(x));
            let ulp = (want.to_bits() as i64 - got.to_bits() as i64).abs();
            assert!(ulp <= 2, "exp({x}) = {got}, libm {want}");
        }
        assert_eq!(exp(-100.0), 0.0);
        assert_eq!(exp(f32::MIN), 0.0);
    }

    #[test]
    fn masked_softmax_gives_padding_no_weight_and_rows_sum_to_one() {
        let dev = Device::Cpu;
        let mask = Tensor::new(&[[1u32, 1, 1], [1, 1, 0]], &dev).unwrap();
        let scores = Tensor::new(&[1f32, 2., 3., 0.5, -1., 9., 2., 2., 2., 0., 0., 50.], &dev)
            .unwrap()
            .reshape((2, 1, 2, 3))
            .unwrap();
        let op = MaskedSoftmax::new(&mask).unwrap();
        let p = scores.apply_op1_no_bwd(&op).unwrap().flatten_all().unwrap().to_vec1::<f32>().unwrap();
        let want = candle_nn::ops::softmax_last_dim(&scores.narrow(0, 0, 1).unwrap())
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1::<f32>()
            .unwrap();
        for (a, b) in p[..6].iter().zip(&want) {
            assert!((a - b).abs() < 1e-6);
        }
        assert_eq!(&p[6..], &[0.5, 0.5, 0.0, 0.5, 0.5, 0.0]);
        let gap = Tensor::new(&[[1u32, 0, 1]], &dev).unwrap();
        assert!(MaskedSoftmax::new(&gap).is_err(), "a token after padding is refused");
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
