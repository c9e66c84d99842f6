//! The encoder's linear layers for training: either the layer itself learns, or it is frozen
//! and a LoRA adapter beside it learns (`W·x + b + (α/r)·B·A·x`, B starting at zero so step 0 is
//! the pretrained model; the file format and the merge are `model::lora`).
//!
//! On the CPU an adapted layer is one custom op, [`LoraLinear`]: one product with the merged
//! weight each way, and a backward pass that gives x's and the adapter's gradients only.
//! candle's matmul backward would also compute the frozen weight's gradient, as much work as
//! the forward product and thrown away, and the adapter's composite ops add element-wise
//! passes over every layer's output.

use std::sync::Mutex;

use candle_core::{CpuStorage, CustomOp3, DType, Device, Layout, Module, Shape, Tensor, Var};
use candle_nn::{Linear, VarBuilder, VarMap};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::cpu::contiguous_f32;
use super::lora::{merge, A_SUFFIX, B_SUFFIX};
use super::weights::blake3_u64;

/// A LoRA adapter's two factors, A [r, in] and B [out, r], and its scale α/r.
pub struct Adapter {
    a: Tensor,
    b: Tensor,
    scale: f64,
}

/// A linear layer of the encoder being trained.
pub struct Proj {
    linear: Linear,
    adapter: Option<Adapter>,
    merged: Mutex<Option<Merged>>,
}

/// `W + s·B·A` for the adapter's values `a` and `b` (row-major copies): valid while A and B
/// still hold them. The values, not a version count, decide, so an update made any way (the
/// optimiser, a resume, a test setting a variable) can never leave a stale weight in use.
struct Merged {
    a: Vec<f32>,
    b: Vec<f32>,
    weight: Tensor,
}

/// How adapters are added: rank, α, and the map their variables live in.
#[derive(Clone, Copy)]
pub struct LoraSpec<'a> {
    pub rank: usize,
    pub alpha: f64,
    pub vars: &'a VarMap,
}

impl Proj {
    /// The layer `prefix` of `vb` (`prefix.weight`, `prefix.bias`); with `lora`, frozen with an
    /// adapter `prefix.lora_a` / `prefix.lora_b` in `lora.vars`. Where the map lacks them, A is
    /// drawn uniformly in ±1/√in from a generator seeded by the layer's name (two runs start
    /// alike) and B is zero.
    pub fn load(
        input: usize,
        output: usize,
        vb: VarBuilder,
        lora: Option<LoraSpec>,
        prefix: &str,
    ) -> candle_core::Result<Self> {
        let device = vb.device().clone();
        let linear = candle_nn::linear(input, output, vb)?;
        let Some(spec) = lora else { return Ok(Proj { linear, adapter: None, merged: Mutex::new(None) }) };
        let a = var(spec.vars, &format!("{prefix}{A_SUFFIX}"), (spec.rank, input), || {
            let bound = 1.0 / (input as f64).sqrt();
            let mut rng = StdRng::seed_from_u64(blake3_u64(prefix));
            let v: Vec<f32> =
                (0..spec.rank * input).map(|_| rng.random_range(-bound..bound) as f32).collect();
            Tensor::from_vec(v, (spec.rank, input), &device)
        })?;
        let b = var(spec.vars, &format!("{prefix}{B_SUFFIX}"), (output, spec.rank), || {
            Tensor::zeros((output, spec.rank), DType::F32, &device)
        })?;
        let adapter = Some(Adapter { a, b, scale: spec.alpha / spec.rank as f64 });
        Ok(Proj { linear, adapter, merged: Mutex::new(None) })
    }

    /// `W + s·B·A` for the adapter's current values, merged again only when they changed.
    fn merged_weight(&self, ad: &Adapter) -> candle_core::Result<Tensor> {
        let (a, b) = (ad.a.flatten_all()?.to_vec1::<f32>()?, ad.b.flatten_all()?.to_vec1::<f32>()?);
        let mut cache = self.merged.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(m) = cache.as_ref().filter(|m| m.a == a && m.b == b) {
            return Ok(m.weight.clone());
        }
        let weight = merge(self.linear.weight(), &ad.a, &ad.b, ad.scale)?;
        *cache = Some(Merged { a, b, weight: weight.clone() });
        Ok(weight)
    }

    pub fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        let Some(ad) = &self.adapter else { return self.linear.forward(x) };
        let dims = x.dims().to_vec();
        let input = *dims.last().unwrap_or(&0);
        let flat = x.reshape(((), input))?;
        let y = if flat.device().is_cpu() && flat.dtype() == DType::F32 {
            let op = LoraLinear {
                merged: self.merged_weight(ad)?,
                bias: self.linear.bias().cloned(),
                scale: ad.scale,
            };
            flat.contiguous()?.apply_op3(&ad.a, &ad.b, op)?
        } else {
            // Other devices: the composite ops (the frozen weight's gradient is computed and dropped).
            let delta = (flat.matmul(&ad.a.t()?)?.matmul(&ad.b.t()?)? * ad.scale)?;
            (self.linear.forward(&flat)? + delta)?
        };
        let mut out = dims;
        let last = out.len() - 1;
        out[last] = y.dim(1)?;
        y.reshape(out)
    }
}

/// The variable `name` of `vars` (which must have `shape`), created from `init` if missing.
fn var(
    vars: &VarMap,
    name: &str,
    shape: (usize, usize),
    init: impl FnOnce() -> candle_core::Result<Tensor>,
) -> candle_core::Result<Tensor> {
    let mut data = vars.data().lock().unwrap_or_else(|p| p.into_inner());
    if let Some(v) = data.get(name) {
        if v.dims() != [shape.0, shape.1] {
            return Err(candle_core::Error::Msg(format!("{name}: shape {:?}, expected {shape:?}", v.dims())));
        }
        return Ok(v.as_tensor().clone());
    }
    let v = Var::from_tensor(&init()?)?;
    let t = v.as_tensor().clone();
    data.insert(name.to_string(), v);
    Ok(t)
}

/// `x·(W + s·B·A)ᵀ + b` for a frozen W and b, over x [N, in] and the adapter's A and B: one
/// product with the merged weight each way, and no element-wise passes over [N, out] for the
/// adapter's share. The backward pass gives the gradients of x, A and B, never W's.
struct LoraLinear {
    /// `W + s·B·A` for the A and B the op is applied to.
    merged: Tensor,
    bias: Option<Tensor>,
    scale: f64,
}

/// A contiguous f32 CPU argument of a custom op as a tensor of its own (a copy).
fn cpu_tensor(storage: &CpuStorage, layout: &Layout) -> candle_core::Result<Tensor> {
    Tensor::from_slice(contiguous_f32("lora-linear", storage, layout)?, layout.shape(), &Device::Cpu)
}

impl CustomOp3 for LoraLinear {
    fn name(&self) -> &'static str {
        "coret-lora-linear"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        // A and B enter through `merged`; they are arguments so that the backward pass gives theirs.
        _a: &CpuStorage,
        _la: &Layout,
        _b: &CpuStorage,
        _lb: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let x = cpu_tensor(s1, l1)?;
        let mut y = x.matmul(&self.merged.t()?)?;
        if let Some(bias) = &self.bias {
            y = y.broadcast_add(bias)?;
        }
        let shape = y.shape().clone();
        let (st, l) = y.storage_and_layout();
        match (&*st, l.contiguous_offsets()) {
            (candle_core::Storage::Cpu(cpu), Some((0, n))) if n == shape.elem_count() => {
                Ok((cpu.clone(), shape))
            }
            _ => Err(candle_core::Error::Msg("lora-linear: unexpected output layout".into())),
        }
    }

    /// d x = g·(W + s·B·A); d A = s·(g·B)ᵀ·x; d B = s·gᵀ·(x·Aᵀ).
    fn bwd(
        &self,
        x: &Tensor,
        a: &Tensor,
        b: &Tensor,
        _res: &Tensor,
        g: &Tensor,
    ) -> candle_core::Result<(Option<Tensor>, Option<Tensor>, Option<Tensor>)> {
        let (x, a, b, g) = (x.detach(), a.detach(), b.detach(), g.detach());
        let dx = g.matmul(&self.merged)?;
        let da = (g.matmul(&b)?.t()?.matmul(&x)? * self.scale)?;
        let db = (g.t()?.matmul(&x.matmul(&a.t()?)?)? * self.scale)?;
        Ok((Some(dx), Some(da), Some(db)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tensors of the given shapes, uniform in ±1, from a generator seeded with `seed`.
    fn uniform(seed: u64) -> impl FnMut((usize, usize)) -> Tensor {
        let mut rng = StdRng::seed_from_u64(seed);
        move |shape| {
            let v: Vec<f32> = (0..shape.0 * shape.1).map(|_| rng.random_range(-1.0f32..1.0)).collect();
            Tensor::from_vec(v, shape, &Device::Cpu).unwrap()
        }
    }

    /// The fused layer against the composite ops it replaces: `x·Wᵀ + b + s·(x·Aᵀ)·Bᵀ`, values
    /// and the gradients of x, A and B.
    #[test]
    fn the_fused_lora_layer_equals_the_composite_one_gradients_included() {
        let mut t = uniform(11);
        let (n, input, output, rank) = (13, 24, 40, 4);
        let (w, bias, probe) = (t((output, input)), t((1, output)).flatten_all().unwrap(), t((n, output)));
        let (x, a, b) = (Var::from_tensor(&t((n, input))).unwrap(), t((rank, input)), t((output, rank)));
        let (a, b) = (Var::from_tensor(&a).unwrap(), Var::from_tensor(&b).unwrap());
        let scale = 2.5;
        let grads_of = |y: &Tensor| {
            let g = (y * &probe).unwrap().sum_all().unwrap().backward().unwrap();
            [&x, &a, &b]
                .map(|v| g.get(v.as_tensor()).unwrap().flatten_all().unwrap().to_vec1::<f32>().unwrap())
        };
        let composite = {
            let frozen = x.as_tensor().matmul(&w.t().unwrap()).unwrap().broadcast_add(&bias).unwrap();
            let delta = x.as_tensor().matmul(&a.as_tensor().t().unwrap()).unwrap();
            let delta = (delta.matmul(&b.as_tensor().t().unwrap()).unwrap() * scale).unwrap();
            (frozen + delta).unwrap()
        };
        let merged = merge(&w, a.as_tensor(), b.as_tensor(), scale).unwrap();
        let op = LoraLinear { merged, bias: Some(bias.clone()), scale };
        let fused = x.as_tensor().apply_op3(a.as_tensor(), b.as_tensor(), op).unwrap();
        let flat = |y: &Tensor| y.flatten_all().unwrap().to_vec1::<f32>().unwrap();
        let worst = |p: &[f32], q: &[f32]| p.iter().zip(q).map(|(u, v)| (u - v).abs()).fold(0f32, f32::max);
        assert!(worst(&flat(&fused), &flat(&composite)) < 1e-4, "values differ");
        for (name, (f, c)) in ["x", "A", "B"].iter().zip(grads_of(&fused).iter().zip(&grads_of(&composite))) {
            assert_eq!(f.len(), c.len());
            assert!(worst(f, c) < 1e-3, "gradient of {name} differs by {}", worst(f, c));
        }
    }

    /// An adapted layer follows its adapter's values: after B changes (as an update changes it),
    /// the next forward pass uses the new merged weight, never the one kept from before.
    #[test]
    fn an_adapted_layer_merges_again_when_its_adapter_changes() {
        let dev = Device::Cpu;
        let mut t = uniform(5);
        let (n, input, output, rank) = (6, 16, 12, 4);
        let (w, bias, x, new_b) =
            (t((output, input)), t((1, output)).flatten_all().unwrap(), t((n, input)), t((output, rank)));
        let base = std::collections::HashMap::from([
            ("weight".to_string(), w.clone()),
            ("bias".to_string(), bias.clone()),
        ]);
        let vb = VarBuilder::from_tensors(base, DType::F32, &dev);
        let vars = VarMap::new();
        let spec = LoraSpec { rank, alpha: 8.0, vars: &vars };
        let proj = Proj::load(input, output, vb, Some(spec), "layer").unwrap();
        let frozen = x.matmul(&w.t().unwrap()).unwrap().broadcast_add(&bias).unwrap();
        let worst = |p: &Tensor, q: &Tensor| {
            (p - q).unwrap().abs().unwrap().flatten_all().unwrap().max(0).unwrap().to_scalar::<f32>().unwrap()
        };
        assert!(worst(&proj.forward(&x).unwrap(), &frozen) < 1e-5, "B starts at zero: the frozen layer");
        let a = {
            let data = vars.data().lock().unwrap();
            data[&format!("layer{B_SUFFIX}")].set(&new_b).unwrap();
            data[&format!("layer{A_SUFFIX}")].as_tensor().clone()
        };
        let delta = (x.matmul(&a.t().unwrap()).unwrap().matmul(&new_b.t().unwrap()).unwrap() * 2.0).unwrap();
        let adapted = (&frozen + delta).unwrap();
        assert!(worst(&adapted, &frozen) > 1e-2, "the new B moves the output");
        assert!(worst(&proj.forward(&x).unwrap(), &adapted) < 1e-4, "the layer uses the new B");
    }
}
