//! `--train INSTANCES|SHARD --output DIR`: the hidden training mode. Prepares examples with
//! the eval's code (or reads a shard), trains, validates, checkpoints; `--prepare-shard FILE`
//! only prepares.

use std::path::{Path, PathBuf};

use super::args::Args;
use super::progress::BarProgress;
use super::train_select::{choose, refuse_held_out};
use super::Usage;
use coret::eval::instances::{parse_id_list, read_instances, select, Instance};
use coret::model::tokenize::InputTokenizer;
use coret::model::tower_layers::{BOTH_TOWERS, META_TOWERS};
use coret::model::{
    model_id_of, resolve_model_dir, select_device, DeviceChoice, EncoderOptions, TowerLayers,
};
use coret::train::checkpoint;
use coret::train::shard::{check_compatible, is_shard, tokenizer_digest};
use coret::train::{
    prepare_examples, read_shard, train, write_shard, DenseMiner, Example, LogEvent, PrepareOptions, Resume,
    Shard, ShardHeader, TrainConfig, TrainModel, ValSet,
};
use rand::seq::SliceRandom;
use rand::SeedableRng;

/// Where tied training with `--train-layers` writes its layers (for `--tower-layers`).
const TOWER_LAYERS_FILE: &str = "tower-layers.safetensors";
/// Where LoRA training writes its adapters (for `--weights`).
pub const LORA_FILE: &str = "coret-lora.safetensors";

pub fn run(args: &Args) -> anyhow::Result<()> {
    let path = args.train.as_deref().ok_or_else(|| Usage("--train needs a file".into()))?;
    // Taken before anything is read, and held until the run ends.
    let _lock = match (&args.output, &args.prepare_shard) {
        (Some(dir), None) => Some(coret::train::lock_output(dir)?),
        _ => None,
    };
    let choice: DeviceChoice = args.device.parse().map_err(|e| Usage(format!("--device: {e}")))?;
    let (device, device_name) = select_device(choice)?;
    if device.is_cuda() {
        // TF32 products (10-bit mantissas, f32 sums): the GPU's fast path for f32 training.
        candle_core::cuda::set_gemm_reduced_precision_f32(true);
    }
    let init = resolve_model_dir(args.init.as_deref().or(args.model.as_deref()), &super::model::log_line)?;
    let (mut model, resume) = if args.resume {
        let output = args.output.as_deref().ok_or_else(|| Usage("--resume needs --output DIR".into()))?;
        let ck = checkpoint::load(output, &device)?;
        eprintln!("resuming from {} at update {}", ck.dir.display(), ck.state.step);
        (ck.model, Some(Resume { state: ck.state, optimizer: ck.optimizer }))
    } else {
        eprintln!("initial model {}", init.display());
        (TrainModel::load(&init, &device)?, None)
    };
    model.train_top_layers(args.train_layers)?;
    if args.lora_rank > 0 && model.lora_rank() == 0 {
        model.use_lora(args.lora_rank, args.lora_alpha.unwrap_or(2.0 * args.lora_rank as f64))?;
    } else if args.lora_rank != model.lora_rank() {
        anyhow::bail!(Usage(format!(
            "--lora-rank {}: the checkpoint has rank {}",
            args.lora_rank,
            model.lora_rank()
        )));
    }
    if let Some(file) = &args.lora_init {
        let adapter = coret::model::lora::LoraAdapter::load(file)?;
        model.start_lora_from(&adapter, &model_id_of(&init)?, &file.display().to_string())?;
        eprintln!("LoRA adapters start from {}", file.display());
    }
    let progress = BarProgress::new();
    let (examples, header) = load_examples(args, path, &model, args.negatives, &progress)?;
    if let Some(out) = &args.prepare_shard {
        let n = examples.len();
        write_shard(out, &Shard { header, examples })?;
        eprintln!("wrote {n} examples to {}", out.display());
        return Ok(());
    }
    if args.train_reranker {
        let base_id = model_id_of(&init)?;
        if !args.resume && args.lora_init.is_none() {
            // The reranker starts from what already knows code and issues: the shipped adapters.
            if let Some(adapter) = coret::model::lora::builtin().transpose()? {
                if adapter.rank() == model.lora_rank() && coret::model::same_weights(adapter.base(), &base_id)
                {
                    model.start_lora_from(&adapter, &base_id, "the shipped adapters")?;
                    eprintln!("LoRA adapters start from the shipped ones");
                }
            }
        }
        return super::train_rerank::run(args, &model, &examples, resume, &base_id, &progress, &print_event);
    }
    let output = args.output.clone().ok_or_else(|| Usage("--train needs --output DIR".into()))?;
    let val = match &args.val {
        None => None,
        Some(p) => Some(load_val(args, p, &model, &progress)?),
    };
    let cfg = TrainConfig {
        output: output.clone(),
        epochs: args.epochs.max(1),
        max_steps: args.max_steps,
        negatives: args.negatives,
        lr: args.lr,
        warmup: args.warmup,
        weight_decay: args.weight_decay,
        clip_norm: args.clip_norm,
        batch: args.batch.max(1),
        shared_pool: !args.own_negatives,
        accum: args.accum.max(1),
        temperature: args.temperature,
        grad_slice: args.grad_slice.max(1),
        seed: args.seed,
        val_every: args.val_every,
        ks: args.k.clone(),
        encoder: EncoderOptions {
            max_len: header.max_len,
            batch_size: args.batch_size.max(1),
            ..Default::default()
        },
    };
    eprintln!("training {} examples on {device_name}; log in {}", examples.len(), output.display());
    let base_id = model_id_of(&init)?;
    // Each checkpoint of a LoRA run also leaves its adapters (under a MB) for a learning curve.
    let mut on_event = |e: &LogEvent| {
        print_event(&progress, e);
        if let (LogEvent::Checkpoint { step, .. }, true) = (e, model.lora_rank() > 0) {
            let file = output.join(format!("coret-lora-step{step}.safetensors"));
            let meta = [("coret.updates".to_string(), step.to_string())].into();
            if let Err(err) = model.lora_adapter(&base_id, meta).and_then(|a| a.save(&file)) {
                progress.println(&format!("could not write {}: {err}", file.display()));
            }
        }
    };
    let summary = train(&model, &examples, val.as_ref(), &cfg, resume, &progress, &mut on_event);
    let trained_on = std::iter::once(path)
        .chain(args.more_shards.iter().map(PathBuf::as_path))
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(",");
    progress.finish();
    let summary = summary?;
    if model.trained_top_layers() > 0 {
        let file = output.join(TOWER_LAYERS_FILE);
        let metadata = [
            (META_TOWERS.to_string(), BOTH_TOWERS.to_string()),
            ("coret.trained_on".to_string(), trained_on.clone()),
            ("coret.examples".to_string(), examples.len().to_string()),
            ("coret.config".to_string(), format!("{cfg:?}")),
        ]
        .into();
        let layers = TowerLayers::from_tensors(model.top_layer_tensors()?, &model_id_of(&init)?, metadata)?;
        let digest = layers.save(&file)?;
        eprintln!("tower layers (both towers, --tower-layers): {} sha256 {digest}", file.display());
    }
    if model.lora_rank() > 0 {
        let file = output.join(LORA_FILE);
        let command: Vec<String> = std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect();
        let repos: std::collections::BTreeSet<&str> = examples.iter().map(|e| e.repo.as_str()).collect();
        let metadata = [
            ("coret.command".to_string(), command.join(" ")),
            ("coret.trained_on".to_string(), trained_on),
            ("coret.examples".to_string(), examples.len().to_string()),
            ("coret.repos".to_string(), repos.into_iter().collect::<Vec<_>>().join(",")),
            ("coret.updates".to_string(), summary.steps.to_string()),
        ]
        .into();
        let adapter = model.lora_adapter(&base_id, metadata)?;
        let digest = adapter.save(&file)?;
        eprintln!("LoRA adapters (both towers, --weights FILE): {} sha256 {digest}", file.display());
    }
    let first = summary.losses.first().copied().unwrap_or(f64::NAN);
    let last = summary.losses.last().copied().unwrap_or(f64::NAN);
    eprintln!(
        "done: {} updates, loss {first:.4} -> {last:.4}, {:.0}s; model in {}",
        summary.steps,
        summary.seconds,
        output.display()
    );
    Ok(())
}

/// `first` and `more` as one shard: the headers must agree (the ids were made alike), and an
/// instance in two shards is kept once.
fn read_shards(
    first: &Path,
    more: &[PathBuf],
    tok: &InputTokenizer,
    max_len: usize,
) -> anyhow::Result<Shard> {
    let mut shard = read_shard(first)?;
    check_compatible(&shard.header, tok, max_len, first)?;
    let mut seen: std::collections::HashSet<String> =
        shard.examples.iter().map(|e| e.instance_id.clone()).collect();
    for path in more {
        let next = read_shard(path)?;
        check_compatible(&next.header, tok, max_len, path)?;
        let h = &shard.header;
        if (&next.header.inputs, next.header.query_max_len) != (&h.inputs, h.query_max_len) {
            anyhow::bail!(Usage(format!(
                "{}: prepared with other inputs or query length than {}; prepare both alike",
                path.display(),
                first.display()
            )));
        }
        let before = shard.examples.len();
        let total = next.examples.len();
        shard.examples.extend(next.examples.into_iter().filter(|e| seen.insert(e.instance_id.clone())));
        let added = shard.examples.len() - before;
        if added < total {
            eprintln!("{}: {} examples already in an earlier shard, skipped", path.display(), total - added);
        }
        shard.header.source = format!("{} + {}", shard.header.source, next.header.source);
    }
    Ok(shard)
}

/// `--dense-negatives`: the towers `--weights` names (the shipped adapters by default), their
/// vectors kept with eval's.
fn dense_miner(args: &Args) -> anyhow::Result<Option<DenseMiner>> {
    if args.dense_negatives == 0 {
        return Ok(None);
    }
    if args.dense_negatives + args.bm25_negatives > args.negatives {
        anyhow::bail!(Usage(format!(
            "--bm25-negatives {} + --dense-negatives {} is more than --negatives {}",
            args.bm25_negatives, args.dense_negatives, args.negatives
        )));
    }
    let towers = super::model::load(args)?.towers;
    let root = coret::cache::cache_root(args.cache_dir.as_deref())?;
    Ok(Some(DenseMiner { towers, store_dir: coret::eval::run::default_store_dir(&root) }))
}

/// Training or validation examples from a shard or, through the eval's code, from instances.
fn load_examples(
    args: &Args,
    path: &Path,
    model: &TrainModel,
    negatives: usize,
    progress: &BarProgress,
) -> anyhow::Result<(Vec<Example>, ShardHeader)> {
    let keep_repo =
        |repo: &str| args.train_repos.as_deref().is_none_or(|r| parse_id_list(r).iter().any(|x| x == repo));
    if is_shard(path)? {
        if args.dense_negatives > 0 {
            anyhow::bail!(Usage(format!(
                "--dense-negatives mines while a shard is prepared: {} is one already",
                path.display()
            )));
        }
        let shard = read_shards(path, &args.more_shards, &model.tokenizer, args.max_len)?;
        let ids = args.instances.as_deref().map(parse_id_list);
        let mut examples: Vec<Example> = shard
            .examples
            .into_iter()
            .filter(|e| keep_repo(&e.repo) && ids.as_ref().is_none_or(|ids| ids.contains(&e.instance_id)))
            .collect();
        examples.truncate(args.limit.unwrap_or(usize::MAX));
        let more = match args.more_shards.len() {
            0 => String::new(),
            1 => " + 1 more shard".to_string(),
            n => format!(" + {n} more shards"),
        };
        eprintln!("{}{more}: {} examples", path.display(), examples.len());
        return Ok((examples, shard.header));
    }
    if let Some(more) = args.more_shards.first() {
        anyhow::bail!(Usage(format!(
            "--more-shards {}: --train {} is not a shard",
            more.display(),
            path.display()
        )));
    }
    let repos_dir =
        args.repos.clone().ok_or_else(|| Usage("instances need --repos DIR (or pass a shard)".into()))?;
    let (all, bad) = read_instances(path).map_err(|e| Usage(e.to_string()))?;
    for e in bad.iter().take(5) {
        eprintln!("skipped {e}");
    }
    if bad.len() > 5 {
        eprintln!("skipped {} more bad or duplicate lines", bad.len() - 5);
    }
    refuse_held_out(path, &all)?;
    let all: Vec<Instance> = choose(args, all);
    let ids = args.instances.as_deref().map(parse_id_list);
    let mut chosen = select(all, ids.as_deref(), None).instances;
    if let Some(n) = args.limit {
        // The files are grouped by repository: sample rather than take the first N.
        chosen.shuffle(&mut rand::rngs::StdRng::seed_from_u64(args.seed));
        chosen.truncate(n);
    }
    let dense = super::model::dense_options(args);
    let opts = PrepareOptions {
        repos_dir,
        max_file_size: args.max_file_size,
        dense: dense.clone(),
        negatives,
        bm25_negatives: args.bm25_negatives,
        dense_negatives: args.dense_negatives,
        max_len: args.max_len,
        query_max_len: args.query_max_len,
        seed: args.seed,
        use_hints: args.use_hints,
        consistency_top: args.consistency_top,
        max_gold: args.max_gold,
    };
    let started = std::time::Instant::now();
    let miner = dense_miner(args)?;
    let (examples, report) = prepare_examples(&chosen, &model.tokenizer, &opts, miner.as_ref(), progress)?;
    progress.finish();
    eprintln!(
        "{}: {} instances -> {} examples in {:.0}s; skipped {} without gold, {} with more than {} gold \
         chunks, {} inconsistent (no gold in BM25's top {}), {} failed",
        path.display(),
        chosen.len(),
        examples.len(),
        started.elapsed().as_secs_f64(),
        report.no_gold.len(),
        report.too_many_gold.len(),
        opts.max_gold,
        report.inconsistent.len(),
        opts.consistency_top,
        report.failed.len(),
    );
    for (repo, n) in &report.missing_repos {
        eprintln!("  skipped {n} instances of {repo}: repository not under {}", opts.repos_dir.display());
    }
    for (id, why) in report.failed.iter().take(10) {
        eprintln!("  failed {id}: {why}");
    }
    for note in &report.notes {
        eprintln!("  {note}");
    }
    let header = ShardHeader {
        tokenizer: tokenizer_digest(&model.tokenizer),
        max_len: args.max_len,
        query_max_len: args.query_max_len,
        inputs: dense.tag(),
        negatives,
        seed: args.seed,
        source: path.display().to_string(),
    };
    Ok((examples, header))
}

fn load_val(args: &Args, path: &Path, model: &TrainModel, progress: &BarProgress) -> anyhow::Result<ValSet> {
    if args.val_candidates == 0 && !is_shard(path)? {
        let repos_dir =
            args.repos.clone().ok_or_else(|| Usage("full validation needs --repos DIR".into()))?;
        let (instances, _) = read_instances(path).map_err(|e| Usage(e.to_string()))?;
        return Ok(ValSet::Full {
            instances,
            repos_dir,
            dense: super::model::dense_options(args),
            max_file_size: args.max_file_size,
        });
    }
    // Validation uses every instance of the file, whatever filters the training set had.
    let mut val_args = args.clone();
    val_args.train_repos = None;
    val_args.instances = None;
    val_args.limit = None;
    val_args.per_repo = None;
    val_args.min_query_chars = 0;
    val_args.consistency_top = 0;
    val_args.max_gold = 0;
    let (examples, _) = load_examples(&val_args, path, model, args.val_candidates, progress)?;
    Ok(ValSet::Candidates(examples))
}

fn print_event(progress: &BarProgress, e: &LogEvent) {
    let line = match e {
        LogEvent::Start { examples, steps_per_epoch, total_steps, warmup, resumed_at } => format!(
            "{examples} examples, {steps_per_epoch} updates per epoch, {total_steps} updates \
             ({warmup} warm-up), starting at {resumed_at}"
        ),
        LogEvent::Step { step, epoch, loss, lr, grad_norm, instances, seconds } => format!(
            "step {step} epoch {epoch}: loss {loss:.4} lr {lr:.2e} |g| {grad_norm:.3} ({instances} inst, {seconds:.1}s)"
        ),
        LogEvent::Val { step, result, .. } => {
            let m = &result.summary.metrics;
            let get = |k: &str| m.get(k).map_or("-".to_string(), |v| format!("{v:.3}"));
            format!(
                "val @{step} [{}; n={}]: perfect_recall@5 {} recall@5 {} recall@20 {} mrr {} ({:.0}s)",
                result.kind,
                result.summary.n,
                get("perfect_recall@5"),
                get("recall@5"),
                get("recall@20"),
                get("mrr"),
                result.seconds
            )
        }
        LogEvent::Checkpoint { step, path } => format!("checkpoint @{step}: {}", path.display()),
    };
    progress.println(&line);
}
