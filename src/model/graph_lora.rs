//! The encoder's linear layers for training: either the layer itself learns, or it is frozen
//! and a LoRA adapter beside it learns (`W·x + b + (α/r)·B·A·x`, B starting at zero so step 0 is
//! the pretrained model; the file format and the merge are `model::lora`).
//!
//! A frozen layer's product goes through [`FrozenLinear`], a custom op whose backward returns
//! only the input's gradient: candle's matmul backward also computes the weight's gradient,
//! which for a frozen matrix is as much work as the forward product and thrown away.

use candle_core::{CpuStorage, CustomOp1, DType, Device, Layout, Module, Shape, Tensor, Var};
use candle_nn::{Linear, VarBuilder, VarMap};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::lora::{A_SUFFIX, B_SUFFIX};
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
        let Some(spec) = lora else { return Ok(Proj { linear, adapter: None }) };
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
        Ok(Proj { linear, adapter: Some(Adapter { a, b, scale: spec.alpha / spec.rank as f64 }) })
    }

    pub fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        let Some(ad) = &self.adapter else { return self.linear.forward(x) };
        let dims = x.dims().to_vec();
        let input = *dims.last().unwrap_or(&0);
        let flat = x.reshape(((), input))?;
        let frozen = if flat.device().is_cpu() {
            let op = FrozenLinear { weight: self.linear.weight().clone(), bias: self.linear.bias().cloned() };
            flat.contiguous()?.apply_op1(op)?
        } else {
            // Other devices: the plain product (its weight gradient is computed and dropped).
            self.linear.forward(&flat)?
        };
        let delta = (flat.matmul(&ad.a.t()?)?.matmul(&ad.b.t()?)? * ad.scale)?;
        let mut out = dims;
        let last = out.len() - 1;
        out[last] = frozen.dim(1)?;
        (frozen + delta)?.reshape(out)
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

/// `x·Wᵀ + b` for a frozen W and b: the backward pass gives x's gradient only.
struct FrozenLinear {
    weight: Tensor,
    bias: Option<Tensor>,
}

impl CustomOp1 for FrozenLinear {
    fn name(&self) -> &'static str {
        "frozen-linear"
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        let (start, end) = layout
            .contiguous_offsets()
            .ok_or_else(|| candle_core::Error::Msg("frozen-linear: input not contiguous".into()))?;
        let x = Tensor::from_slice(&storage.as_slice::<f32>()?[start..end], layout.shape(), &Device::Cpu)?;
        let mut y = x.matmul(&self.weight.t()?)?;
        if let Some(b) = &self.bias {
            y = y.broadcast_add(b)?;
        }
        let shape = y.shape().clone();
        let (st, l) = y.storage_and_layout();
        match (&*st, l.contiguous_offsets()) {
            (candle_core::Storage::Cpu(cpu), Some((0, n))) if n == shape.elem_count() => {
                Ok((cpu.clone(), shape))
            }
            _ => Err(candle_core::Error::Msg("frozen-linear: unexpected output layout".into())),
        }
    }

    fn bwd(&self, _arg: &Tensor, _res: &Tensor, grad: &Tensor) -> candle_core::Result<Option<Tensor>> {
        Ok(Some(grad.matmul(&self.weight)?))
    }
}
