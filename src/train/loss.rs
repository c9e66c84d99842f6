//! The CoRet loss of one instance (README "Training (hidden mode)", paper §3.1).
//!
//! `L_i = -1/|C*| Σ_{c*} log( exp(q·c*/τ) / (exp(q·c*/τ) + Σ_{c∈B} exp(q·c/τ)) )`: each gold
//! chunk competes only with the instance's negatives, not with the other gold chunks.
//! Embeddings are unit vectors, so `q·c` is the cosine similarity.

use candle_core::{Result, Tensor, D};

/// `query` [1, H] or [H], `positives` [P, H] (P ≥ 1), `negatives` [N, H] (N may be 0);
/// returns a scalar tensor, differentiable in all three.
pub fn coret_loss(query: &Tensor, positives: &Tensor, negatives: &Tensor, tau: f64) -> Result<Tensor> {
    let q = query.flatten_all()?.unsqueeze(1)?; // [H, 1]
    let pos = (positives.matmul(&q)? / tau)?; // [P, 1]
    let n_pos = pos.dim(0)?;
    let logits = if negatives.dim(0)? == 0 {
        pos.clone()
    } else {
        let neg = (negatives.matmul(&q)? / tau)?.t()?; // [1, N]
        let neg = neg.broadcast_as((n_pos, neg.dim(1)?))?;
        Tensor::cat(&[&pos, &neg], 1)? // [P, 1 + N]
    };
    let lse = log_sum_exp(&logits)?; // [P, 1]
    (lse - pos)?.mean_all()
}

/// Row-wise log Σ exp, stabilised by the (detached) row maximum.
fn log_sum_exp(x: &Tensor) -> Result<Tensor> {
    let max = x.max_keepdim(D::Minus1)?.detach();
    x.broadcast_sub(&max)?.exp()?.sum_keepdim(D::Minus1)?.log()?.add(&max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::{Device, Var};

    fn t(rows: &[&[f32]]) -> Tensor {
        let flat: Vec<f32> = rows.iter().flat_map(|r| r.iter().copied()).collect();
        Tensor::from_vec(flat, (rows.len(), rows[0].len()), &Device::Cpu).unwrap()
    }

    /// The formula, term by term, in f64.
    fn by_hand(q: &[f64], pos: &[&[f64]], neg: &[&[f64]], tau: f64) -> f64 {
        let dot = |a: &[f64]| a.iter().zip(q).map(|(x, y)| x * y).sum::<f64>() / tau;
        let negs: f64 = neg.iter().map(|n| dot(n).exp()).sum();
        let terms: f64 = pos.iter().map(|p| -(dot(p).exp() / (dot(p).exp() + negs)).ln()).sum();
        terms / pos.len() as f64
    }

    #[test]
    fn equals_the_hand_computed_value() {
        let s = 0.6f32;
        let c = 0.8f32;
        let q = [1.0f32, 0.0];
        let pos: [&[f32]; 2] = [&[c, s], &[0.0, 1.0]];
        let neg: [&[f32]; 3] = [&[-1.0, 0.0], &[s, -c], &[c, -s]];
        for tau in [0.05, 0.5, 1.0] {
            let got = coret_loss(&t(&[&q]), &t(&pos), &t(&neg), tau).unwrap().to_scalar::<f32>().unwrap();
            let f = |r: &[f32]| r.iter().map(|&x| x as f64).collect::<Vec<f64>>();
            let (p0, p1) = (f(pos[0]), f(pos[1]));
            let negs: Vec<Vec<f64>> = neg.iter().map(|r| f(r)).collect();
            let neg_refs: Vec<&[f64]> = negs.iter().map(|v| v.as_slice()).collect();
            let want = by_hand(&[1.0, 0.0], &[&p0, &p1], &neg_refs, tau);
            assert!((got as f64 - want).abs() < 1e-4 * want.max(1.0), "tau {tau}: {got} vs {want}");
        }
    }

    #[test]
    fn without_negatives_the_loss_is_zero_and_positives_do_not_compete() {
        let q = t(&[&[1.0, 0.0]]);
        let pos = t(&[&[1.0, 0.0], &[0.0, 1.0]]);
        let empty = Tensor::zeros((0, 2), candle_core::DType::F32, &Device::Cpu).unwrap();
        let got = coret_loss(&q, &pos, &empty, 0.05).unwrap().to_scalar::<f32>().unwrap();
        assert!(got.abs() < 1e-6, "{got}");
    }

    #[test]
    fn gradient_pulls_the_query_towards_the_positive() {
        let q = Var::from_tensor(&t(&[&[0.6, 0.8]])).unwrap();
        let pos = t(&[&[1.0, 0.0]]);
        let neg = t(&[&[0.0, 1.0]]);
        let loss = coret_loss(q.as_tensor(), &pos, &neg, 0.1).unwrap();
        let grads = loss.backward().unwrap();
        let g = grads.get(q.as_tensor()).unwrap().to_vec2::<f32>().unwrap();
        // Descending the gradient raises q·pos and lowers q·neg.
        assert!(g[0][0] < 0.0 && g[0][1] > 0.0, "{g:?}");
    }
}
