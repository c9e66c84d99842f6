//! AdamW (decoupled weight decay, bias-corrected moments: the same update as candle-nn's
//! `AdamW`) with state that can be saved and restored, gradient-norm clipping, and a
//! linear warm-up + cosine-decay learning-rate schedule. The paper used RAdam; AdamW with
//! warm-up is the usual substitute and what this build does.

use std::collections::HashMap;

use candle_core::{Result, Tensor, Var};

#[derive(Clone, Debug, PartialEq)]
pub struct AdamWParams {
    pub beta1: f64,
    pub beta2: f64,
    pub eps: f64,
    pub weight_decay: f64,
}

impl Default for AdamWParams {
    fn default() -> Self {
        AdamWParams { beta1: 0.9, beta2: 0.999, eps: 1e-8, weight_decay: 0.01 }
    }
}

/// One named parameter and its moments.
struct Slot {
    name: String,
    var: Var,
    m: Tensor,
    v: Tensor,
}

pub struct AdamW {
    slots: Vec<Slot>,
    params: AdamWParams,
    /// Updates applied so far (bias correction uses it).
    pub t: usize,
}

impl AdamW {
    /// `vars` by name; they are kept in name order so saved state lines up on reload.
    pub fn new(vars: HashMap<String, Var>, params: AdamWParams) -> Result<Self> {
        let mut named: Vec<(String, Var)> = vars.into_iter().collect();
        named.sort_by(|a, b| a.0.cmp(&b.0));
        let slots = named
            .into_iter()
            .map(|(name, var)| {
                let m = var.as_tensor().zeros_like()?;
                let v = var.as_tensor().zeros_like()?;
                Ok(Slot { name, var, m, v })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(AdamW { slots, params, t: 0 })
    }

    pub fn vars(&self) -> impl Iterator<Item = (&str, &Var)> {
        self.slots.iter().map(|s| (s.name.as_str(), &s.var))
    }

    /// One update with learning rate `lr`; `grads[name]` may be missing (no update then,
    /// as in candle). Returns nothing; the variables change in place.
    pub fn step(&mut self, grads: &HashMap<String, Tensor>, lr: f64) -> Result<()> {
        self.t += 1;
        let p = &self.params;
        let scale_m = 1.0 / (1.0 - p.beta1.powi(self.t as i32));
        let scale_v = 1.0 / (1.0 - p.beta2.powi(self.t as i32));
        for slot in &mut self.slots {
            let Some(g) = grads.get(&slot.name) else { continue };
            slot.m = ((&slot.m * p.beta1)? + (g * (1.0 - p.beta1))?)?;
            slot.v = ((&slot.v * p.beta2)? + (g.sqr()? * (1.0 - p.beta2))?)?;
            let update = ((&slot.m * scale_m)? / ((&slot.v * scale_v)?.sqrt()? + p.eps)?)?;
            let decayed = (slot.var.as_tensor() * (1.0 - lr * p.weight_decay))?;
            slot.var.set(&(decayed - (update * lr)?)?)?;
        }
        Ok(())
    }

    /// The moments as tensors named `m.<param>` and `v.<param>`.
    pub fn state(&self) -> HashMap<String, Tensor> {
        let mut out = HashMap::new();
        for s in &self.slots {
            out.insert(format!("m.{}", s.name), s.m.clone());
            out.insert(format!("v.{}", s.name), s.v.clone());
        }
        out
    }

    /// Restores moments saved by [`AdamW::state`] and the update count `t`.
    pub fn load_state(&mut self, state: &HashMap<String, Tensor>, t: usize) -> Result<()> {
        for s in &mut self.slots {
            let get = |k: String| {
                state
                    .get(&k)
                    .cloned()
                    .ok_or_else(|| candle_core::Error::Msg(format!("optimizer state lacks {k}")))
            };
            let (m, v) = (get(format!("m.{}", s.name))?, get(format!("v.{}", s.name))?);
            if m.shape() != s.var.shape() || v.shape() != s.var.shape() {
                candle_core::bail!("optimizer state for {} has the wrong shape", s.name);
            }
            s.m = m.to_device(s.var.device())?;
            s.v = v.to_device(s.var.device())?;
        }
        self.t = t;
        Ok(())
    }
}

/// Scales `grads` so their global L2 norm is at most `max_norm`; returns the norm before.
pub fn clip_grad_norm(grads: &mut HashMap<String, Tensor>, max_norm: f64) -> Result<f64> {
    let mut total = 0.0f64;
    for g in grads.values() {
        total += g.sqr()?.sum_all()?.to_scalar::<f32>()? as f64;
    }
    let norm = total.sqrt();
    if max_norm > 0.0 && norm > max_norm {
        let scale = max_norm / (norm + 1e-6);
        for g in grads.values_mut() {
            *g = (&*g * scale)?;
        }
    }
    Ok(norm)
}

/// Linear warm-up to `peak` over `warmup` steps, then cosine decay to 0 at `total`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Schedule {
    pub peak: f64,
    pub warmup: usize,
    pub total: usize,
}

impl Schedule {
    /// The learning rate of update `step` (0-based).
    pub fn lr(&self, step: usize) -> f64 {
        if step < self.warmup {
            return self.peak * (step + 1) as f64 / self.warmup as f64;
        }
        let span = self.total.saturating_sub(self.warmup).max(1) as f64;
        let progress = ((step - self.warmup) as f64 / span).min(1.0);
        self.peak * 0.5 * (1.0 + (std::f64::consts::PI * progress).cos())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Device;

    #[test]
    fn schedule_warms_up_then_decays_to_zero() {
        let s = Schedule { peak: 1e-3, warmup: 4, total: 20 };
        assert!((s.lr(0) - 2.5e-4).abs() < 1e-12);
        assert!((s.lr(3) - 1e-3).abs() < 1e-12);
        assert!((s.lr(4) - 1e-3).abs() < 1e-12, "decay starts at the peak");
        assert!((s.lr(12) - 5e-4).abs() < 1e-12, "halfway down the cosine");
        assert!(s.lr(19) < 1e-4 && s.lr(19) > 0.0);
        assert!((0..19).skip(4).all(|i| s.lr(i + 1) <= s.lr(i)));
    }

    #[test]
    fn matches_candles_adamw_and_restores_its_state() {
        use candle_nn::Optimizer;
        let dev = Device::Cpu;
        let init = Tensor::new(&[[0.5f32, -1.0], [2.0, 0.25]], &dev).unwrap();
        let grads = |x: &Tensor| x.sqr().unwrap().sum_all().unwrap();
        let params = AdamWParams::default();
        let ours = Var::from_tensor(&init).unwrap();
        let theirs = Var::from_tensor(&init).unwrap();
        let mut opt = AdamW::new(HashMap::from([("w".to_string(), ours.clone())]), params.clone()).unwrap();
        let cp = candle_nn::ParamsAdamW { lr: 0.1, weight_decay: params.weight_decay, ..Default::default() };
        let mut reference = candle_nn::AdamW::new(vec![theirs.clone()], cp).unwrap();
        for _ in 0..3 {
            let g = grads(ours.as_tensor()).backward().unwrap();
            let map = HashMap::from([("w".to_string(), g.get(ours.as_tensor()).unwrap().clone())]);
            opt.step(&map, 0.1).unwrap();
            reference.backward_step(&grads(theirs.as_tensor())).unwrap();
        }
        let a = ours.as_tensor().flatten_all().unwrap().to_vec1::<f32>().unwrap();
        let b = theirs.as_tensor().flatten_all().unwrap().to_vec1::<f32>().unwrap();
        assert!(a.iter().zip(&b).all(|(x, y)| (x - y).abs() < 1e-6), "{a:?} vs {b:?}");

        let copy = Var::from_tensor(ours.as_tensor()).unwrap();
        let mut restored = AdamW::new(HashMap::from([("w".to_string(), copy.clone())]), params).unwrap();
        restored.load_state(&opt.state(), opt.t).unwrap();
        let g = grads(ours.as_tensor()).backward().unwrap();
        let map = HashMap::from([("w".to_string(), g.get(ours.as_tensor()).unwrap().clone())]);
        opt.step(&map, 0.1).unwrap();
        restored.step(&map, 0.1).unwrap();
        let diff = (ours.as_tensor() - copy.as_tensor()).unwrap().abs().unwrap().sum_all().unwrap();
        assert_eq!(diff.to_scalar::<f32>().unwrap(), 0.0);
    }

    #[test]
    fn clipping_bounds_the_global_norm() {
        let dev = Device::Cpu;
        let mut grads = HashMap::from([
            ("a".to_string(), Tensor::new(&[3.0f32], &dev).unwrap()),
            ("b".to_string(), Tensor::new(&[4.0f32], &dev).unwrap()),
        ]);
        let norm = clip_grad_norm(&mut grads, 1.0).unwrap();
        assert!((norm - 5.0).abs() < 1e-6);
        let a = grads["a"].to_vec1::<f32>().unwrap()[0];
        assert!((a - 0.6).abs() < 1e-4, "{a}");
    }
}
