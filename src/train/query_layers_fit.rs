//! Training the query tower's top encoder layers (README "Towers") with the CoRet loss against
//! the frozen chunk vectors: the chunk tower's lower layers are run once per query and kept
//! (they never change), so each step runs and differentiates only the top `layers` over the
//! batch's queries. Negatives are sampled as for the adapter (`query_fit`): a softmax over the
//! current query vectors' similarities at the annealed temperature.

use std::collections::HashMap;
use std::path::Path;

use candle_core::{Device, Tensor, Var};
use candle_nn::optim::{AdamW, Optimizer, ParamsAdamW};
use rand::rngs::StdRng;

use super::query_fit::{
    batch_tensors, coret_loss, pool_metrics, run_epochs, EpochLog, PoolMetrics, QueryFitConfig, Trainee,
};
use super::query_set::{QueryExample, QuerySet};
use super::weights::TrainModel;
use crate::error::{Error, Result};
use crate::model::pool::{l2_normalize, mean_pool};
use crate::model::{Encoder, LayerTensor, QueryLayers};

/// Examples' queries run through the frozen lower layers, one [len, H] tensor each.
struct Lowered {
    hidden: Vec<Tensor>,
}

/// The trainable top of the query encoder.
struct Top {
    model: TrainModel,
    first: usize,
    vars: Vec<(String, Var)>,
}

fn err(e: candle_core::Error) -> Error {
    Error::context("query tower layers", e)
}

impl Top {
    fn new(model_dir: &Path, layers: usize) -> Result<Self> {
        let model = TrainModel::load(model_dir, &Device::Cpu)?;
        let n = model.bert.num_layers();
        if layers == 0 || layers > n {
            return Err(Error::invalid(format!("--query-layers {layers}: the model has {n} layers")));
        }
        let first = n - layers;
        let prefixes: Vec<String> = (first..n).map(|i| format!("encoder.layer.{i}.")).collect();
        let mut vars: Vec<(String, Var)> = {
            let data = model.varmap.data().lock().unwrap_or_else(|p| p.into_inner());
            data.iter()
                .filter(|(k, _)| prefixes.iter().any(|p| k.starts_with(p)))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        };
        vars.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(Top { model, first, vars })
    }

    /// Runs every example's query through the frozen layers below `first`.
    fn lower(&self, examples: &[&QueryExample], chunk: &Encoder, max_len: usize) -> Result<Lowered> {
        let tokens = examples
            .iter()
            .map(|e| chunk.input_tokenizer().query(&e.text, max_len))
            .collect::<Result<Vec<_>>>()?;
        let mut order: Vec<usize> = (0..tokens.len()).collect();
        order.sort_by_key(|&i| tokens[i].len());
        let mut hidden = vec![None; tokens.len()];
        for group in order.chunks(8) {
            let refs: Vec<_> = group.iter().map(|&i| &tokens[i]).collect();
            let pad = crate::model::pool::pad_batch(&refs, chunk.input_tokenizer().pad_id(), &Device::Cpu)
                .map_err(err)?;
            let bert = &self.model.bert;
            let x = bert
                .embed(&pad.ids, &pad.type_ids)
                .and_then(|x| bert.forward_layers(&x, &pad.mask, 0..self.first))
                .map_err(err)?
                .detach();
            for (row, &i) in group.iter().enumerate() {
                hidden[i] = Some(x.get(row).and_then(|h| h.narrow(0, 0, tokens[i].len())).map_err(err)?);
            }
        }
        Ok(Lowered { hidden: hidden.into_iter().map(|h| h.expect("every example lowered")).collect() })
    }

    /// Unit query vectors [B, H] of the lowered `rows`, through the trainable top.
    fn queries(&self, lowered: &Lowered, rows: &[usize]) -> candle_core::Result<Tensor> {
        let width =
            rows.iter().map(|&i| lowered.hidden[i].dim(0)).collect::<candle_core::Result<Vec<_>>>()?;
        let longest = width.iter().copied().max().unwrap_or(1);
        let mut padded = Vec::with_capacity(rows.len());
        let mut mask = Vec::with_capacity(rows.len() * longest);
        for (&i, &len) in rows.iter().zip(&width) {
            let h = &lowered.hidden[i];
            padded.push(if len < longest { h.pad_with_zeros(0, 0, longest - len)? } else { h.clone() });
            mask.extend((0..longest).map(|j| u32::from(j < len)));
        }
        let x = Tensor::stack(&padded, 0)?;
        let mask = Tensor::from_vec(mask, (rows.len(), longest), &Device::Cpu)?;
        let n = self.model.bert.num_layers();
        let h = self.model.bert.forward_layers(&x, &mask, self.first..n)?;
        l2_normalize(&mean_pool(&h, &mask)?)
    }

    /// Query vectors of all `lowered` examples, no gradients kept.
    fn all_queries(&self, lowered: &Lowered) -> Result<Vec<Vec<f32>>> {
        let mut out = Vec::with_capacity(lowered.hidden.len());
        let idx: Vec<usize> = (0..lowered.hidden.len()).collect();
        for group in idx.chunks(16) {
            let q = self.queries(lowered, group).map_err(err)?.detach();
            out.extend(q.to_vec2::<f32>().map_err(err)?);
        }
        Ok(out)
    }

    fn snapshot(&self) -> Result<Vec<LayerTensor>> {
        self.vars
            .iter()
            .map(|(name, v)| {
                let t = v.as_tensor();
                Ok(LayerTensor {
                    name: name.clone(),
                    shape: t.dims().to_vec(),
                    values: t.flatten_all().and_then(|f| f.to_vec1::<f32>()).map_err(err)?,
                })
            })
            .collect()
    }
}

/// Retrains the top `cfg.layers` layers of the chunk tower's encoder (`model_dir`, the model
/// `chunk` was loaded from) as the query tower; keeps the epoch with the best validation MRR
/// (the last without validation). `on_epoch` sees each epoch's log (epoch 0: before training).
pub fn fit_layers(
    train: &QuerySet,
    val: Option<&QuerySet>,
    model_dir: &Path,
    chunk: &Encoder,
    cfg: &QueryFitConfig,
    cancelled: &dyn Fn() -> bool,
    on_epoch: &mut dyn FnMut(&EpochLog),
) -> Result<(QueryLayers, Vec<EpochLog>)> {
    if train.examples.is_empty() {
        return Err(Error::invalid("no training examples"));
    }
    if let Some(e) = train.examples.iter().find(|e| e.text.is_empty()) {
        return Err(Error::invalid(format!("{}: no query text in the prepared set", e.instance_id)));
    }
    let started = std::time::Instant::now();
    let top = Top::new(model_dir, cfg.layers)?;
    let all: Vec<&QueryExample> = train.examples.iter().collect();
    let lowered = top.lower(&all, chunk, cfg.query_max_len)?;
    let val_lowered = match val {
        Some(v) => Some(top.lower(&v.examples.iter().collect::<Vec<_>>(), chunk, cfg.query_max_len)?),
        None => None,
    };
    let params = ParamsAdamW { lr: cfg.lr, weight_decay: cfg.weight_decay, ..Default::default() };
    let opt = AdamW::new(top.vars.iter().map(|(_, v)| v.clone()).collect(), params).map_err(err)?;
    let mut trainee = LayersTrainee { train, val: val.zip(val_lowered), cfg, top, lowered, opt };
    let (best, logs) = run_epochs(&mut trainee, train.examples.len(), cfg, started, cancelled, on_epoch)?;
    let layers = QueryLayers::from_tensors(best, &chunk.model_id(), HashMap::new())?;
    Ok((layers, logs))
}

/// The top layers under training, with the lowered queries they read.
struct LayersTrainee<'a> {
    train: &'a QuerySet,
    val: Option<(&'a QuerySet, Lowered)>,
    cfg: &'a QueryFitConfig,
    top: Top,
    lowered: Lowered,
    opt: AdamW,
}

impl Trainee for LayersTrainee<'_> {
    type Weights = Vec<LayerTensor>;

    fn step(&mut self, batch: &[usize], temp: f32, rng: &mut StdRng) -> Result<f64> {
        let q = self.top.queries(&self.lowered, batch).map_err(err)?;
        // Negatives are sampled by the query vectors of this very forward pass.
        let now = q.detach().to_vec2::<f32>().map_err(err)?;
        let examples: Vec<&QueryExample> = batch.iter().map(|&i| &self.train.examples[i]).collect();
        let t = batch_tensors(self.train, &examples, &now, self.cfg.negatives, temp, rng, &Device::Cpu)
            .map_err(err)?;
        let loss = q.index_select(&t.example_of_row, 0).and_then(|rows| coret_loss(&rows, &t, self.cfg.tau));
        let loss = loss.map_err(err)?;
        let value = loss.to_scalar::<f32>().map_err(err)? as f64;
        self.opt.backward_step(&loss).map_err(err)?;
        Ok(value)
    }

    fn weights(&self) -> Result<Vec<LayerTensor>> {
        self.top.snapshot()
    }

    fn validate(&self) -> Result<Option<PoolMetrics>> {
        let Some((v, lowered)) = &self.val else { return Ok(None) };
        Ok(Some(pool_metrics(v, &self.top.all_queries(lowered)?)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{EncoderOptions, QueryTowerChoice, Towers};
    use crate::testkit::write_tiny_bert;
    use std::sync::Arc;

    /// Chunk vectors from the tiny model itself; each query's gold is a chunk the pretrained
    /// query vector does not rank first.
    const CHUNKS: [&str; 6] =
        ["alpha beta", "gamma delta", "epsilon", "zeta eta theta", "iota kappa", "lambda mu"];

    fn chunk_vectors(enc: &Encoder) -> Vec<f32> {
        enc.embed_queries(&CHUNKS.map(String::from)).unwrap().concat()
    }

    fn set(enc: &Encoder) -> QuerySet {
        let vectors = chunk_vectors(enc);
        let queries = ["fix alpha", "delta is wrong", "theta and eta", "kappa crashes"];
        let examples = queries
            .iter()
            .enumerate()
            .map(|(i, q)| QueryExample {
                instance_id: format!("toy-{i}"),
                text: q.to_string(),
                query: enc.embed_queries(&[q.to_string()]).unwrap().remove(0),
                gold: vec![((i + 3) % 6) as u32],
                pool: (0..6u32).filter(|&r| r != ((i + 3) % 6) as u32).collect(),
            })
            .collect();
        QuerySet {
            dim: enc.dim(),
            chunk_tower: enc.fingerprint(),
            vectors,
            examples,
            dropped: Default::default(),
        }
    }

    #[test]
    fn top_layer_steps_lower_the_loss_leave_the_chunk_tower_alone_and_load_as_a_query_tower() {
        let dir = tempfile::tempdir().unwrap();
        let model = dir.path().join("m");
        write_tiny_bert(&model, &["alpha", "beta", "gamma", "delta", "theta", "kappa"]);
        let weights_before = std::fs::read(model.join("model.safetensors")).unwrap();
        let opts = EncoderOptions { max_len: 32, ..EncoderOptions::default() };
        let enc = Arc::new(Encoder::load(&model, &Device::Cpu, opts).unwrap());
        let train = set(&enc);
        let chunk_vectors = train.vectors.clone();
        assert_eq!(chunk_vectors, super::tests::chunk_vectors(&enc), "embedding is deterministic");
        let cfg = QueryFitConfig {
            epochs: 12,
            batch: 4,
            negatives: 5,
            lr: 0.01,
            layers: 1,
            query_max_len: 32,
            ..QueryFitConfig::default()
        };
        let mut losses = Vec::new();
        let (layers, logs) =
            fit_layers(&train, Some(&train), &model, &enc, &cfg, &|| false, &mut |e| losses.push(e.loss))
                .unwrap();
        assert!(losses[1] > losses[losses.len() - 1], "the loss fell: {losses:?}");
        let (first, last) =
            (logs[0].val.clone().unwrap(), logs.iter().rev().find_map(|l| l.val.clone()).unwrap());
        assert!(last.mrr >= first.mrr, "{first:?} -> {last:?}");
        assert_eq!(layers.layers(), std::collections::BTreeSet::from([1]), "only the top layer is retrained");
        assert_eq!(
            std::fs::read(model.join("model.safetensors")).unwrap(),
            weights_before,
            "chunk tower untouched"
        );
        assert_eq!(super::tests::chunk_vectors(&enc), chunk_vectors, "chunk vectors unchanged");

        let file = dir.path().join("q.safetensors");
        layers.save(&file).unwrap();
        let (towers, _) = Towers::with_choice(enc.clone(), &QueryTowerChoice::File(file)).unwrap();
        assert!(towers.names().query.contains(layers.name()), "{:?}", towers.names());
        let trained = towers.embed_query("fix alpha", 32).unwrap();
        let pretrained = towers.embed_query_pretrained("fix alpha", 32).unwrap();
        assert_ne!(trained, pretrained, "the query tower differs from the chunk tower");
        assert!((trained.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-4);
    }
}
