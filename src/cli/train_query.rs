//! `--train INSTANCES --tower query --output DIR`: trains the query adapter against the frozen
//! chunk tower (README "Towers"). Prepares (or reads) the query set, trains, writes
//! `DIR/query-tower.safetensors` (+ `.sha256`) and `DIR/train-log.jsonl`.

use std::io::Write;
use std::path::Path;

use super::args::Args;
use super::progress::BarProgress;
use super::train_select::{choose, refuse_held_out};
use super::Usage;
use coret::eval::instances::read_instances;
use coret::model::Towers;
use coret::progress::Progress;
use coret::train::query_fit::{fit_adapter, EpochLog, QueryFitConfig};
use coret::train::query_layers_fit::fit_layers;
use coret::train::query_set::{prepare_query_set, QuerySet, QuerySetOptions};
use coret::Error;

pub fn run(args: &Args) -> anyhow::Result<()> {
    let path = args.train.as_deref().ok_or_else(|| Usage("--train needs a file".into()))?;
    let output = args.output.clone().ok_or_else(|| Usage("--train needs --output DIR".into()))?;
    std::fs::create_dir_all(&output).map_err(|e| Error::io(&output, e))?;
    if args.query_layers > 0 && args.tower_layers.is_some() {
        // The layers are retrained from the model directory's weights, which lack the overlay.
        return Err(Usage("--query-layers trains over --model itself; drop --tower-layers".into()).into());
    }
    let model = super::model::load_chunk_tower(args)?;
    let towers = Towers::tied(model.encoder.clone());
    let progress = BarProgress::new();
    let mut train = load_set(args, path, &towers, &output.join("query-set.bin"), false, &progress)?;
    for extra in &args.add_set {
        let more = QuerySet::load(extra)?;
        eprintln!("{}: {} more examples", extra.display(), more.examples.len());
        train.merge(more).map_err(|e| Error::context(extra.display().to_string(), e))?;
    }
    // Prepared sets keep every message; --min-query-chars applies to them too.
    let before = train.examples.len();
    train.examples.retain(|e| e.text.is_empty() || e.text.chars().count() >= args.min_query_chars);
    if train.examples.len() < before {
        eprintln!(
            "{} of {before} examples have at least {} characters",
            train.examples.len(),
            args.min_query_chars
        );
    }
    let (train, val) = match &args.val {
        Some(p) => (train, Some(load_set(args, p, &towers, &output.join("val-set.bin"), true, &progress)?)),
        // Without a validation file, a share of the training instances chooses the epoch
        // (ranked within their mined pools); with none, the last epoch is kept.
        None => split_off_validation(train, args.val_fraction, args.seed),
    };
    if let Some(out) = &args.prepare_shard {
        train.save(out)?;
        eprintln!("wrote {} examples to {}", train.examples.len(), out.display());
        return Ok(());
    }
    if args.sample_temp.iter().any(|t| !(t.is_finite() && *t > 0.0)) || args.sample_temp.is_empty() {
        anyhow::bail!(Usage("--sample-temp needs positive temperatures, e.g. 1,0.05".into()));
    }
    let cfg = QueryFitConfig {
        epochs: args.epochs.max(1),
        batch: args.batch.max(1),
        negatives: args.negatives.max(1),
        lr: args.lr,
        weight_decay: args.weight_decay,
        tau: args.temperature,
        rank: args.adapter_rank,
        layers: args.query_layers,
        query_max_len: args.query_max_len,
        sample_temp_start: args.sample_temp.first().copied().unwrap_or(1.0),
        sample_temp_end: args.sample_temp.last().copied().unwrap_or(0.05),
        seed: args.seed,
    };
    let log_path = output.join("train-log.jsonl");
    let mut log = std::fs::File::create(&log_path).map_err(|e| Error::io(&log_path, e))?;
    writeln!(
        log,
        "{}",
        serde_json::json!({"config": cfg, "train": train.examples.len(),
        "train_dropped": train.dropped, "val": val.as_ref().map(|v| v.examples.len()),
        "vectors": train.rows(), "chunk_tower": train.chunk_tower})
    )?;
    eprintln!(
        "training the query {}: {} examples ({} vectors), {} epochs",
        if cfg.layers > 0 { format!("tower's top {} layers", cfg.layers) } else { "adapter".into() },
        train.examples.len(),
        train.rows(),
        cfg.epochs
    );
    let mut on_epoch = |e: &EpochLog| {
        let val = e.val.as_ref().map_or(String::new(), |m| {
            format!(
                " val n={} PR@5 {:.3} PR@20 {:.3} MRR {:.3}",
                m.n, m.perfect_recall_5, m.perfect_recall_20, m.mrr
            )
        });
        progress.println(&format!(
            "epoch {}: loss {:.4} temp {:.3}{val} ({:.0}s)",
            e.epoch, e.loss, e.sample_temp, e.seconds
        ));
        let _ = writeln!(log, "{}", serde_json::to_string(e).unwrap_or_default());
    };
    let base = model.encoder.model_id();
    let cancelled = || progress.cancelled();
    let metadata: std::collections::HashMap<String, String> = [
        ("coret.trained_on".to_string(), path.display().to_string()),
        ("coret.examples".to_string(), train.examples.len().to_string()),
        ("coret.config".to_string(), serde_json::to_string(&cfg)?),
    ]
    .into();
    let file = output.join("query-tower.safetensors");
    let digest = if cfg.layers > 0 {
        let (layers, _) =
            fit_layers(&train, val.as_ref(), &model.dir, &model.encoder, &cfg, &cancelled, &mut on_epoch)?;
        let layers = coret::model::QueryLayers::from_tensors(layers.tensors().to_vec(), &base, metadata)?;
        layers.save(&file)?
    } else {
        let (adapter, _) = fit_adapter(&train, val.as_ref(), &base, &cfg, &cancelled, &mut on_epoch)?;
        let (w, b) = adapter.weights();
        coret::model::QueryAdapter::from_parts(w.to_vec(), b.to_vec(), &base, metadata)?.save(&file)?
    };
    eprintln!("wrote {} (sha256 {digest}); log in {}", file.display(), log_path.display());
    Ok(())
}

/// A prepared query set from `path`, or prepared from instances and saved to `cache`.
fn load_set(
    args: &Args,
    path: &Path,
    towers: &Towers,
    cache: &Path,
    validation: bool,
    progress: &BarProgress,
) -> anyhow::Result<QuerySet> {
    if let Ok(set) = QuerySet::load(path) {
        return Ok(set);
    }
    let (all, bad) = read_instances(path).map_err(|e| Usage(e.to_string()))?;
    for e in bad.iter().take(5) {
        eprintln!("skipped {e}");
    }
    refuse_held_out(path, &all)?;
    let chosen = if validation { all } else { choose(args, all) };
    let repos_dir = args.repos.clone().ok_or_else(|| Usage("instances need --repos DIR".into()))?;
    let root = coret::cache::cache_root(args.cache_dir.as_deref())?;
    let opts = QuerySetOptions {
        repos_dir,
        store_dir: coret::eval::run::default_store_dir(&root),
        max_file_size: args.max_file_size,
        dense: super::model::dense_options(args),
        dense_top: 400,
        bm25_top: 200,
        random: 400,
        consistency_top: if validation { 0 } else { args.consistency_top },
        max_gold: 8,
        module_chunks: args.train_module_chunks,
        seed: args.seed,
    };
    let (set, report) = prepare_query_set(&chosen, towers, &opts, progress, &mut |n| progress.println(n))?;
    progress.finish();
    eprintln!(
        "{}: {} instances -> {} examples, {} chunk inputs embedded, {:.0}s; dropped {:?}",
        path.display(),
        report.instances,
        report.kept,
        report.embedded,
        report.seconds,
        set.dropped
    );
    set.save(cache)?;
    eprintln!("prepared set saved to {} (pass it to --train/--val to reuse)", cache.display());
    Ok(set)
}

/// Moves a `fraction` of the examples (in a seeded shuffle) into a validation set.
fn split_off_validation(mut set: QuerySet, fraction: f32, seed: u64) -> (QuerySet, Option<QuerySet>) {
    use rand::seq::SliceRandom;
    use rand::SeedableRng;
    let mut examples = std::mem::take(&mut set.examples);
    examples.shuffle(&mut rand::rngs::StdRng::seed_from_u64(seed ^ 0x5eed));
    let n_val = (examples.len() as f32 * fraction.clamp(0.0, 0.5)) as usize;
    if n_val == 0 {
        set.examples = examples;
        return (set, None);
    }
    let train_part = examples.split_off(n_val);
    let val = QuerySet { examples, ..set.clone() };
    set.examples = train_part;
    (set, Some(val))
}
