//! Loss and gradients of a micro-batch of instances.
//!
//! A micro-batch is a [`PoolBatch`]: the instances' queries and one pool of chunk sequences;
//! each query scores its own gold rows of the pool against its negative rows. Built
//! [`PoolBatch::shared`] from instances of one repository, every query meets every other
//! instance's chunks as negatives (DESIGN.md "Training on a CPU"), at the cost of encoding each
//! once; built [`PoolBatch::per_instance`], each query meets only its own negatives.
//!
//! All sequences of the micro-batch (the queries and the pool) are embedded in length-sorted slices of at most `slice` sequences. When everything fits in
//! one slice the loss backpropagates directly. Otherwise memory would hold every slice's
//! activations at once, so the gradient is computed in two passes (the "gradient cache"
//! trick): embed all slices without keeping their graphs, take the loss's gradient with
//! respect to the embeddings, then re-embed each slice with its graph and backpropagate
//! `Σ embedding · its gradient`. Both ways give the same gradient; the second costs one
//! extra forward pass and keeps only one slice's activations.

use std::collections::{HashMap, HashSet};

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
    /// Each positive's identity (`path::qualified name`; empty: unknown). In a shared pool, a
    /// chunk with a gold's identity (another commit's version of the same function, an
    /// `@overload` stub, a redefinition) is a likely false negative for that query.
    pub positive_keys: Vec<String>,
    /// Each negative's identity, as `positive_keys`.
    pub negative_keys: Vec<String>,
}

/// Queries, one pool of chunk sequences, and for each query the pool rows that are its gold
/// chunks and those that are its negatives.
#[derive(Debug)]
pub struct PoolBatch {
    pub queries: Vec<TokenizedInput>,
    pub pool: Vec<TokenizedInput>,
    pub golds: Vec<Vec<usize>>,
    pub negatives: Vec<Vec<usize>>,
}

impl PoolBatch {
    /// Each instance with its own chunks only: the per-instance CoRet loss.
    pub fn per_instance(items: &[Item]) -> PoolBatch {
        let mut b =
            PoolBatch { queries: Vec::new(), pool: Vec::new(), golds: Vec::new(), negatives: Vec::new() };
        for it in items {
            b.queries.push(it.query.clone());
            let at = b.pool.len();
            b.pool.extend(it.positives.iter().chain(&it.negatives).cloned());
            b.golds.push((at..at + it.positives.len()).collect());
            b.negatives.push((at + it.positives.len()..b.pool.len()).collect());
        }
        b
    }

    /// One pool of every item's chunks (identical inputs once) that serves every query: a
    /// query's negatives are all pool rows but its golds, inputs identical to a gold, and chunks
    /// sharing a gold's identity. With one item and no such duplicates it is `per_instance`.
    pub fn shared(items: &[Item]) -> PoolBatch {
        let mut pool = Interned::default();
        let golds: Vec<Vec<usize>> = items
            .iter()
            .map(|it| {
                let mut g: Vec<usize> = it
                    .positives
                    .iter()
                    .enumerate()
                    .map(|(k, s)| pool.row(s, it.positive_keys.get(k)))
                    .collect();
                g.sort_unstable();
                g.dedup();
                g
            })
            .collect();
        for it in items {
            for (k, s) in it.negatives.iter().enumerate() {
                pool.row(s, it.negative_keys.get(k));
            }
        }
        let negatives = items
            .iter()
            .zip(&golds)
            .map(|(it, g)| {
                let gold_keys: HashSet<&str> =
                    it.positive_keys.iter().filter(|k| !k.is_empty()).map(String::as_str).collect();
                (0..pool.seqs.len())
                    .filter(|r| {
                        g.binary_search(r).is_err() && !pool.keys[*r].iter().any(|k| gold_keys.contains(k))
                    })
                    .collect()
            })
            .collect();
        PoolBatch {
            queries: items.iter().map(|it| it.query.clone()).collect(),
            pool: pool.seqs.into_iter().cloned().collect(),
            golds,
            negatives,
        }
    }

    /// Sequences in embedding order: the queries, then the pool.
    fn sequences(&self) -> Vec<&TokenizedInput> {
        self.queries.iter().chain(&self.pool).collect()
    }
}

/// Pool rows by input: identical token ids are one row, carrying every identity seen for it.
#[derive(Default)]
struct Interned<'a> {
    rows: HashMap<&'a [u32], usize>,
    seqs: Vec<&'a TokenizedInput>,
    keys: Vec<Vec<&'a str>>,
}

impl<'a> Interned<'a> {
    fn row(&mut self, seq: &'a TokenizedInput, key: Option<&'a String>) -> usize {
        let next = self.seqs.len();
        let row = *self.rows.entry(seq.ids.as_slice()).or_insert(next);
        if row == next {
            self.seqs.push(seq);
            self.keys.push(Vec::new());
        }
        if let Some(k) = key.filter(|k| !k.is_empty()) {
            self.keys[row].push(k.as_str());
        }
        row
    }
}

fn terr(e: candle_core::Error) -> Error {
    Error::context("training step", e)
}

/// Adds `weight ×` the gradient of `Σ_i loss_i` over the queries of `batch` into `grads` (by
/// parameter name) and returns each query's loss.
pub fn accumulate_grads(
    model: &TrainModel,
    batch: &PoolBatch,
    tau: f64,
    weight: f64,
    slice: usize,
    grads: &mut HashMap<String, Tensor>,
) -> Result<Vec<f32>> {
    let seqs = batch.sequences();
    if seqs.len() <= slice.max(1) {
        // One graph, but padded in groups of similar length: a 512-token query must not pad
        // its chunks to 512 (4× the tokens, 16× the attention memory).
        let emb = embed_bucketed(model, &seqs)?;
        let (total, losses) = batch_loss(&emb, batch, tau, weight)?;
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
    let (total, losses) = batch_loss(emb.as_tensor(), batch, tau, weight)?;
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

/// Embeddings [S, H] of `seqs` in their order, in one graph but padded in groups of similar
/// length (see [`length_buckets`]).
pub(super) fn embed_bucketed(model: &TrainModel, seqs: &[&TokenizedInput]) -> Result<Tensor> {
    let buckets = length_buckets(seqs);
    place_rows(&buckets, seqs.len(), |k| {
        model.embed(&buckets[k].iter().map(|&r| seqs[r]).collect::<Vec<_>>())
    })
}

/// The gradients of `store` by parameter name.
pub(super) fn grads_by_name(
    model: &TrainModel,
    store: &candle_core::backprop::GradStore,
) -> Result<HashMap<String, Tensor>> {
    let mut grads = HashMap::new();
    add_grads(model, store, &mut grads)?;
    Ok(grads)
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

/// `weight × Σ` of the queries' losses, and each loss, from embeddings laid out as
/// [`PoolBatch::sequences`].
fn batch_loss(emb: &Tensor, batch: &PoolBatch, tau: f64, weight: f64) -> Result<(Tensor, Vec<f32>)> {
    let n_queries = batch.queries.len();
    let rows = |list: &[usize]| -> Result<Tensor> {
        let idx: Vec<u32> = list.iter().map(|&r| (n_queries + r) as u32).collect();
        let idx = Tensor::new(idx, emb.device()).map_err(terr)?;
        emb.index_select(&idx, 0).map_err(terr)
    };
    let mut losses = Vec::with_capacity(n_queries);
    let mut terms = Vec::with_capacity(n_queries);
    for (i, (golds, negatives)) in batch.golds.iter().zip(&batch.negatives).enumerate() {
        let q = emb.narrow(0, i, 1).map_err(terr)?;
        let n = if negatives.is_empty() {
            Tensor::zeros((0, emb.dim(1).map_err(terr)?), emb.dtype(), emb.device()).map_err(terr)?
        } else {
            rows(negatives)?
        };
        let loss = coret_loss(&q, &rows(golds)?, &n, tau).map_err(terr)?;
        losses.push(loss.to_scalar::<f32>().map_err(terr)?);
        terms.push(loss);
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
