//! Loss and gradients of a micro-batch of instances.
//!
//! All sequences of the micro-batch (each instance's query, gold chunks and negatives) are
//! embedded in length-sorted slices of at most `slice` sequences. When everything fits in
//! one slice the loss backpropagates directly. Otherwise memory would hold every slice's
//! activations at once, so the gradient is computed in two passes (the "gradient cache"
//! trick): embed all slices without keeping their graphs, take the loss's gradient with
//! respect to the embeddings, then re-embed each slice with its graph and backpropagate
//! `Σ embedding · its gradient`. Both ways give the same gradient; the second costs one
//! extra forward pass and keeps only one slice's activations.

use std::collections::HashMap;

use candle_core::{Tensor, Var};

use super::loss::coret_loss;
use super::weights::TrainModel;
use crate::error::{Error, Result};
use crate::model::TokenizedInput;

/// One instance's sequences for this step.
pub struct Item {
    pub query: TokenizedInput,
    pub positives: Vec<TokenizedInput>,
    pub negatives: Vec<TokenizedInput>,
}

impl Item {
    fn len(&self) -> usize {
        1 + self.positives.len() + self.negatives.len()
    }
}

fn terr(e: candle_core::Error) -> Error {
    Error::context("training step", e)
}

/// Adds `weight ×` the gradient of `Σ_i loss_i` over `items` into `grads` (by parameter
/// name) and returns each instance's loss.
pub fn accumulate_grads(
    model: &TrainModel,
    items: &[Item],
    tau: f64,
    weight: f64,
    slice: usize,
    grads: &mut HashMap<String, Tensor>,
) -> Result<Vec<f32>> {
    let seqs: Vec<&TokenizedInput> = items
        .iter()
        .flat_map(|it| std::iter::once(&it.query).chain(&it.positives).chain(&it.negatives))
        .collect();
    if seqs.len() <= slice.max(1) {
        // One graph, but padded in groups of similar length: a 512-token query must not pad
        // its chunks to 512 (4× the tokens, 16× the attention memory).
        let buckets = length_buckets(&seqs);
        let emb = place_rows(&buckets, seqs.len(), |k| {
            model.embed(&buckets[k].iter().map(|&r| seqs[r]).collect::<Vec<_>>())
        })?;
        let (total, losses) = batch_loss(&emb, items, tau, weight)?;
        add_grads(model, &total.backward().map_err(terr)?, grads)?;
        return Ok(losses);
    }
    let slices = length_sorted_slices(&seqs, slice.max(1));
    // Both passes below start from the frozen layers' output, so it is computed once.
    let lowered = slices
        .iter()
        .map(|rows| model.lower(&rows.iter().map(|&r| seqs[r]).collect::<Vec<_>>()))
        .collect::<Result<Vec<_>>>()?;
    let embed_slice = |k: usize| match &lowered[k] {
        Some(l) => model.embed_lowered(l),
        None => model.embed(&slices[k].iter().map(|&r| seqs[r]).collect::<Vec<_>>()),
    };
    let emb = Var::from_tensor(&place_rows(&slices, seqs.len(), |k| Ok(embed_slice(k)?.detach()))?)
        .map_err(terr)?;
    let (total, losses) = batch_loss(emb.as_tensor(), items, tau, weight)?;
    let emb_grad =
        total.backward().map_err(terr)?.remove(emb.as_tensor()).ok_or_else(|| terr(no_grad("embeddings")))?;
    for (k, rows) in slices.iter().enumerate() {
        let part = embed_slice(k)?;
        let idx = Tensor::new(rows.iter().map(|&r| r as u32).collect::<Vec<_>>(), emb_grad.device())
            .map_err(terr)?;
        let g = emb_grad.index_select(&idx, 0).map_err(terr)?;
        let surrogate = (part * g).and_then(|t| t.sum_all()).map_err(terr)?;
        add_grads(model, &surrogate.backward().map_err(terr)?, grads)?;
    }
    Ok(losses)
}

fn no_grad(what: &str) -> candle_core::Error {
    candle_core::Error::Msg(format!("no gradient for the {what}"))
}

/// Row indices of `seqs` in slices of at most `slice`, shortest first, so each slice pads
/// to a length close to all its members.
fn length_sorted_slices(seqs: &[&TokenizedInput], slice: usize) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..seqs.len()).collect();
    order.sort_by_key(|&i| (seqs[i].len(), i));
    order.chunks(slice).map(<[usize]>::to_vec).collect()
}

/// Row indices of `seqs`, shortest first, in groups whose longest member is at most twice
/// their shortest (or 64 tokens), so padding at most doubles a group's work.
pub(super) fn length_buckets(seqs: &[&TokenizedInput]) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..seqs.len()).collect();
    order.sort_by_key(|&i| (seqs[i].len(), i));
    let mut buckets: Vec<Vec<usize>> = Vec::new();
    for i in order {
        match buckets.last_mut() {
            Some(b) if seqs[i].len() <= (2 * seqs[b[0]].len()).max(64) => b.push(i),
            _ => buckets.push(vec![i]),
        }
    }
    buckets
}

/// Embeddings [S, H] of `n` sequences in their order, from `embed(k)`, the embeddings of the
/// rows `slices[k]`.
fn place_rows(slices: &[Vec<usize>], n: usize, embed: impl Fn(usize) -> Result<Tensor>) -> Result<Tensor> {
    let mut parts = Vec::with_capacity(slices.len());
    let mut placed = vec![0u32; n];
    let mut at = 0u32;
    for (k, rows) in slices.iter().enumerate() {
        parts.push(embed(k)?);
        for &r in rows {
            placed[r] = at;
            at += 1;
        }
    }
    let all = Tensor::cat(&parts, 0).map_err(terr)?;
    let idx = Tensor::new(placed, all.device()).map_err(terr)?;
    all.index_select(&idx, 0).map_err(terr)
}

/// `weight × Σ` of the instances' losses, and each loss, from embeddings laid out as
/// `accumulate_grads` flattens the items.
fn batch_loss(emb: &Tensor, items: &[Item], tau: f64, weight: f64) -> Result<(Tensor, Vec<f32>)> {
    let mut at = 0;
    let mut losses = Vec::with_capacity(items.len());
    let mut terms = Vec::with_capacity(items.len());
    for it in items {
        let q = emb.narrow(0, at, 1).map_err(terr)?;
        let p = emb.narrow(0, at + 1, it.positives.len()).map_err(terr)?;
        let n = emb.narrow(0, at + 1 + it.positives.len(), it.negatives.len()).map_err(terr)?;
        let loss = coret_loss(&q, &p, &n, tau).map_err(terr)?;
        losses.push(loss.to_scalar::<f32>().map_err(terr)?);
        terms.push(loss);
        at += it.len();
    }
    let total = Tensor::stack(&terms, 0).and_then(|t| t.sum_all()).and_then(|t| t * weight).map_err(terr)?;
    Ok((total, losses))
}

fn add_grads(
    model: &TrainModel,
    store: &candle_core::backprop::GradStore,
    grads: &mut HashMap<String, Tensor>,
) -> Result<()> {
    let data = model.varmap.data().lock().unwrap_or_else(|p| p.into_inner());
    for (name, var) in data.iter() {
        let Some(g) = store.get(var.as_tensor()) else { continue };
        let sum = match grads.remove(name) {
            Some(acc) => (acc + g).map_err(terr)?,
            None => g.clone(),
        };
        grads.insert(name.clone(), sum);
    }
    Ok(())
}
