//! Fused, differentiable CPU kernels for the training graph ([`super::graph_bert`]).
//!
//! Profiled (`perf record` over one LoRA update of 16 instances), training spent more time in
//! candle's element-wise kernels, their allocations and page faults than in matrix products:
//! the composite softmax, layer norm and GELU each make several passes over fresh tensors,
//! forward and backward, and the attention scores [B, heads, L, L] are the largest tensors of
//! the step. Each op here is one pass forward and one backward over contiguous f32 on the CPU
//! (rows in parallel), the same function as the composite ops it replaces (tested against
//! them, values and gradients). Elsewhere (CUDA, half precision) `graph_bert` keeps the
//! composite ops.

use std::sync::Arc;

use candle_core::{CpuStorage, CustomOp1, CustomOp3, DType, Device, Layout, Shape, Storage, Tensor};
use rayon::prelude::*;

use crate::simd::dot;

use super::attention::softmax_row;
use super::cpu::contiguous_f32;
use super::cpu_bert::{erf, gelu_erf};

/// Whether `x` takes the fused kernels: f32 on the CPU.
pub fn fused(x: &Tensor) -> bool {
    x.device().is_cpu() && x.dtype() == DType::F32
}

/// Calls `f` with `t`'s values (made contiguous first if need be).
fn with_values<R>(op: &str, t: &Tensor, f: impl FnOnce(&[f32]) -> R) -> candle_core::Result<R> {
    let t = t.contiguous()?;
    let (storage, layout) = t.storage_and_layout();
    let Storage::Cpu(cpu) = &*storage else { candle_core::bail!("{op}: CPU tensors only") };
    Ok(f(contiguous_f32(op, cpu, layout)?))
}

fn tensor(values: Vec<f32>, shape: &Shape) -> candle_core::Result<Tensor> {
    Tensor::from_vec(values, shape, &Device::Cpu)
}

/// `softmax(scale · scores + bias)` over the last dimension of the attention scores
/// [B, heads, L, L], where `bias` [B × L] is each sequence's additive key mask
/// (`graph_bert::attention_bias`'s values).
pub struct AttentionSoftmax {
    pub scale: f32,
    pub bias: Arc<Vec<f32>>,
}

impl CustomOp1 for AttentionSoftmax {
    fn name(&self) -> &'static str {
        "coret-attention-softmax"
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        let scores = contiguous_f32(self.name(), storage, layout)?;
        let (b, heads, rows, len) = layout.shape().dims4()?;
        if self.bias.len() != b * len {
            candle_core::bail!("{}: bias of {} for {b} × {len} keys", self.name(), self.bias.len());
        }
        let per_seq = heads * rows;
        let mut out = vec![0f32; scores.len()];
        let span = len * ROWS;
        out.par_chunks_mut(span)
            .zip(scores.par_chunks(span))
            .enumerate()
            .for_each(|(t, (y, s))| softmax_rows(s, y, &self.bias, len, t * ROWS, per_seq, self.scale));
        Ok((CpuStorage::F32(out), layout.shape().clone()))
    }

    /// d scores = scale · y ⊙ (g − Σ g ⊙ y), row by row.
    fn bwd(&self, _arg: &Tensor, res: &Tensor, grad: &Tensor) -> candle_core::Result<Option<Tensor>> {
        let len = res.dim(candle_core::D::Minus1)?;
        let out = with_values(self.name(), res, |y| {
            with_values(self.name(), grad, |g| {
                let mut d = vec![0f32; y.len()];
                let span = len * ROWS;
                d.par_chunks_mut(span)
                    .zip(y.par_chunks(span).zip(g.par_chunks(span)))
                    .for_each(|(d, (y, g))| softmax_grad_rows(y, g, d, len, self.scale));
                d
            })
        })??;
        Ok(Some(tensor(out, res.shape())?))
    }
}

/// Rows of attention scores per parallel task.
const ROWS: usize = 64;

vectorised! {
    /// `y ← softmax(scale · s + bias)` row by row; `first` is the first row's index in the
    /// batch, `per_seq` the rows of one sequence (its bias row).
    fn softmax_rows(s: &[f32], y: &mut [f32], bias: &[f32], len: usize, first: usize, per_seq: usize, scale: f32) {
        for (r, (y, s)) in y.chunks_mut(len).zip(s.chunks(len)).enumerate() {
            let bias = &bias[((first + r) / per_seq) * len..][..len];
            for ((y, &s), &c) in y.iter_mut().zip(s).zip(bias) {
                *y = s.mul_add(scale, c);
            }
            softmax_row(y);
        }
    }
}

vectorised! {
    /// `d ← scale · y ⊙ (g − Σ g ⊙ y)` row by row.
    fn softmax_grad_rows(y: &[f32], g: &[f32], d: &mut [f32], len: usize, scale: f32) {
        for ((d, y), g) in d.chunks_mut(len).zip(y.chunks(len)).zip(g.chunks(len)) {
            let dot = dot(y, g);
            for ((d, &y), &g) in d.iter_mut().zip(y).zip(g) {
                *d = scale * y * (g - dot);
            }
        }
    }
}

/// GELU, exact (erf) form; the forward pass is the inference path's [`gelu_erf`].
pub struct Gelu;

/// Elements per parallel task of the element-wise kernels.
const SPAN: usize = 4096;

impl CustomOp1 for Gelu {
    fn name(&self) -> &'static str {
        "coret-train-gelu"
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        let mut out = contiguous_f32(self.name(), storage, layout)?.to_vec();
        out.par_chunks_mut(SPAN).for_each(gelu_erf);
        Ok((CpuStorage::F32(out), layout.shape().clone()))
    }

    /// d x = g · (Φ(x) + x · φ(x)).
    fn bwd(&self, arg: &Tensor, _res: &Tensor, grad: &Tensor) -> candle_core::Result<Option<Tensor>> {
        let out = with_values(self.name(), arg, |x| {
            with_values(self.name(), grad, |g| {
                let mut d = g.to_vec();
                d.par_chunks_mut(SPAN).zip(x.par_chunks(SPAN)).for_each(|(d, x)| gelu_erf_grad(x, d));
                d
            })
        })??;
        Ok(Some(tensor(out, arg.shape())?))
    }
}

vectorised! {
    /// `d ← d · gelu′(x)`; branch-free, so it vectorises.
    fn gelu_erf_grad(xs: &[f32], ds: &mut [f32]) {
        const INV_SQRT_2PI: f32 = 0.398_942_3;
        for (d, &x) in ds.iter_mut().zip(xs) {
            let cdf = 0.5 * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2));
            *d *= cdf + x * INV_SQRT_2PI * (-0.5 * x * x).exp();
        }
    }
}

/// Layer norm over the last dimension: (x − mean) / √(var + eps) · weight + bias, with the
/// gradients of x, the weight and the bias.
pub struct LayerNorm {
    pub eps: f32,
}

impl CustomOp3 for LayerNorm {
    fn name(&self) -> &'static str {
        "coret-train-layer-norm"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
        s3: &CpuStorage,
        l3: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let x = contiguous_f32(self.name(), s1, l1)?;
        let (w, b) = (contiguous_f32(self.name(), s2, l2)?, contiguous_f32(self.name(), s3, l3)?);
        let h = w.len();
        if b.len() != h || h == 0 || x.len() % h != 0 {
            candle_core::bail!(
                "{}: rows of {} against weight {h} and bias {}",
                self.name(),
                x.len(),
                b.len()
            );
        }
        let mut out = vec![0f32; x.len()];
        out.par_chunks_mut(h).zip(x.par_chunks(h)).for_each(|(y, x)| {
            let (mean, inv) = moments(x, self.eps);
            for (((y, &x), &w), &b) in y.iter_mut().zip(x).zip(w).zip(b) {
                *y = (x - mean) * inv * w + b;
            }
        });
        Ok((CpuStorage::F32(out), l1.shape().clone()))
    }

    /// Per row, with x̂ the normalised input and ĝ = g ⊙ weight:
    /// d x = (ĝ − mean(ĝ) − x̂ · mean(ĝ ⊙ x̂)) / σ; d weight = Σ g ⊙ x̂; d bias = Σ g.
    fn bwd(
        &self,
        arg: &Tensor,
        weight: &Tensor,
        _bias: &Tensor,
        _res: &Tensor,
        grad: &Tensor,
    ) -> candle_core::Result<(Option<Tensor>, Option<Tensor>, Option<Tensor>)> {
        let h = weight.elem_count();
        let w = weight.flatten_all()?.to_vec1::<f32>()?;
        let (dx, dw, db) = with_values(self.name(), arg, |x| {
            with_values(self.name(), grad, |g| {
                let mut dx = vec![0f32; x.len()];
                // Rows in blocks, each block summing its own share of d weight and d bias.
                let rows_per_task = (SPAN / h).max(1);
                let partial: Vec<(Vec<f32>, Vec<f32>)> = dx
                    .par_chunks_mut(h * rows_per_task)
                    .zip(x.par_chunks(h * rows_per_task).zip(g.par_chunks(h * rows_per_task)))
                    .map(|(dx, (x, g))| {
                        let (mut dw, mut db) = (vec![0f32; h], vec![0f32; h]);
                        let mut xhat = vec![0f32; h];
                        for (dx, (x, g)) in dx.chunks_mut(h).zip(x.chunks(h).zip(g.chunks(h))) {
                            let (mean, inv) = moments(x, self.eps);
                            let (mut mean_g, mut mean_gx) = (0f32, 0f32);
                            for k in 0..h {
                                xhat[k] = (x[k] - mean) * inv;
                                let gw = g[k] * w[k];
                                mean_g += gw;
                                mean_gx += gw * xhat[k];
                                dw[k] += g[k] * xhat[k];
                                db[k] += g[k];
                            }
                            let (mean_g, mean_gx) = (mean_g / h as f32, mean_gx / h as f32);
                            for k in 0..h {
                                dx[k] = (g[k] * w[k] - mean_g - xhat[k] * mean_gx) * inv;
                            }
                        }
                        (dw, db)
                    })
                    .collect();
                let (mut dw, mut db) = (vec![0f32; h], vec![0f32; h]);
                for (pw, pb) in partial {
                    dw.iter_mut().zip(pw).for_each(|(a, b)| *a += b);
                    db.iter_mut().zip(pb).for_each(|(a, b)| *a += b);
                }
                (dx, dw, db)
            })
        })??;
        let (dw, db) = (tensor(dw, weight.shape())?, tensor(db, weight.shape())?);
        Ok((Some(tensor(dx, arg.shape())?), Some(dw), Some(db)))
    }
}

/// A row's mean and 1 / √(variance + eps).
fn moments(x: &[f32], eps: f32) -> (f32, f32) {
    let n = x.len() as f32;
    let mean = x.iter().sum::<f32>() / n;
    let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n;
    (mean, 1.0 / (var + eps).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::{Var, D};

    /// Values from a fixed generator, spread over ±`spread`.
    fn values(n: usize, seed: u64, spread: f32) -> Vec<f32> {
        let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (0..n)
            .map(|_| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((s >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * spread
            })
            .collect()
    }

    fn close(a: &Tensor, b: &Tensor, tol: f32, what: &str) {
        let (a, b) = (
            a.flatten_all().unwrap().to_vec1::<f32>().unwrap(),
            b.flatten_all().unwrap().to_vec1::<f32>().unwrap(),
        );
        assert_eq!(a.len(), b.len(), "{what}: lengths");
        let worst = a.iter().zip(&b).map(|(x, y)| (x - y).abs() / (1.0 + y.abs())).fold(0f32, f32::max);
        assert!(worst < tol, "{what}: worst relative difference {worst:e}");
    }

    /// `f`'s value and its input's gradient under the loss Σ out ⊙ probe, for a variable x.
    fn value_and_grad(x: &Tensor, probe: &Tensor, f: impl Fn(&Tensor) -> Tensor) -> (Tensor, Tensor) {
        let var = Var::from_tensor(x).unwrap();
        let out = f(var.as_tensor());
        let grads = (&out * probe).unwrap().sum_all().unwrap().backward().unwrap();
        (out, grads.get(var.as_tensor()).unwrap().clone())
    }

    #[test]
    fn the_fused_attention_softmax_equals_the_composite_one_padding_included() {
        let dev = Device::Cpu;
        let (b, heads, len) = (2, 3, 5);
        let scores =
            Tensor::from_vec(values(b * heads * len * len, 1, 4.0), (b, heads, len, len), &dev).unwrap();
        let probe = Tensor::from_vec(values(b * heads * len * len, 2, 1.0), scores.shape(), &dev).unwrap();
        // The second sequence has two padding keys.
        let mask = Tensor::new(&[[1u32, 1, 1, 1, 1], [1, 1, 1, 0, 0]], &dev).unwrap();
        let scale = 0.37f32;
        let bias4 = crate::model::graph_bert::attention_bias(&mask, DType::F32).unwrap();
        let composite = |s: &Tensor| {
            let s = (s * scale as f64).unwrap().broadcast_add(&bias4).unwrap();
            candle_nn::ops::softmax(&s, D::Minus1).unwrap()
        };
        let key_bias = Arc::new(bias4.flatten_all().unwrap().to_vec1::<f32>().unwrap());
        let op = || AttentionSoftmax { scale, bias: key_bias.clone() };
        let (want, want_grad) = value_and_grad(&scores, &probe, composite);
        let (got, got_grad) = value_and_grad(&scores, &probe, |s| s.apply_op1(op()).unwrap());
        close(&got, &want, 1e-6, "probabilities");
        close(&got_grad, &want_grad, 1e-5, "gradient");
        let padded = got.get(1).unwrap().flatten_all().unwrap().to_vec1::<f32>().unwrap();
        assert!(padded.chunks(len).all(|row| row[3] == 0.0 && row[4] == 0.0), "padding keys get weight");
    }

    #[test]
    fn the_fused_gelu_equals_candles_exact_gelu() {
        let dev = Device::Cpu;
        let x = Tensor::from_vec(values(5000, 3, 6.0), (50, 100), &dev).unwrap();
        let probe = Tensor::from_vec(values(5000, 4, 1.0), (50, 100), &dev).unwrap();
        let (want, want_grad) = value_and_grad(&x, &probe, |x| x.gelu_erf().unwrap());
        let (got, got_grad) = value_and_grad(&x, &probe, |x| x.apply_op1(Gelu).unwrap());
        close(&got, &want, 1e-6, "values");
        close(&got_grad, &want_grad, 1e-5, "gradient");
    }

    #[test]
    fn the_fused_layer_norm_equals_candles_slow_one_gradients_of_weight_and_bias_included() {
        let dev = Device::Cpu;
        let (rows, h) = (37, 24);
        let x = Tensor::from_vec(values(rows * h, 5, 3.0), (rows, h), &dev).unwrap();
        let probe = Tensor::from_vec(values(rows * h, 6, 1.0), (rows, h), &dev).unwrap();
        let w = Var::from_tensor(&Tensor::from_vec(values(h, 7, 2.0), h, &dev).unwrap()).unwrap();
        let b = Var::from_tensor(&Tensor::from_vec(values(h, 8, 1.0), h, &dev).unwrap()).unwrap();
        let run = |fused: bool| {
            let xv = Var::from_tensor(&x).unwrap();
            let out = if fused {
                xv.as_tensor().apply_op3(w.as_tensor(), b.as_tensor(), LayerNorm { eps: 1e-12 }).unwrap()
            } else {
                candle_nn::ops::layer_norm_slow(xv.as_tensor(), w.as_tensor(), b.as_tensor(), 1e-12).unwrap()
            };
            let grads = (&out * &probe).unwrap().sum_all().unwrap().backward().unwrap();
            let g = |t: &Tensor| grads.get(t).unwrap().clone();
            (out.clone(), g(xv.as_tensor()), g(w.as_tensor()), g(b.as_tensor()))
        };
        let (want, fused) = (run(false), run(true));
        close(&fused.0, &want.0, 1e-5, "values");
        close(&fused.1, &want.1, 1e-4, "d x");
        close(&fused.2, &want.2, 1e-4, "d weight");
        close(&fused.3, &want.3, 1e-4, "d bias");
    }
}
