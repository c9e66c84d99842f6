//! `--train SHARD --train-reranker --output DIR`: the cross-encoder reranker
//! (`coret::train::rerank`) trained on prepared shards; DIR then serves `--rerank DIR`.

use candle_core::{DType, Var};

use super::args::Args;
use super::progress::BarProgress;
use coret::rerank::RerankSpec;
use coret::train::rerank::{save_reranker, train_reranker, RerankTrainConfig};
use coret::train::{Example, LogEvent, Resume, TrainModel};

pub fn run(
    args: &Args,
    model: &TrainModel,
    examples: &[Example],
    resume: Option<Resume>,
    base_id: &str,
    progress: &BarProgress,
    print: &dyn Fn(&BarProgress, &LogEvent),
) -> anyhow::Result<()> {
    let output =
        args.output.clone().ok_or_else(|| super::Usage("--train-reranker needs --output DIR".into()))?;
    if model.lora_rank() == 0 {
        anyhow::bail!(super::Usage(
            "--train-reranker trains LoRA adapters: give --lora-rank (32 starts from the shipped ones)"
                .into()
        ));
    }
    let spec = RerankSpec {
        max_len: args.rerank_max_len,
        query_len: args.rerank_query_len.min(args.rerank_max_len - 2),
        depth: args.rerank_depth.unwrap_or(RerankSpec::default().depth),
    };
    let cfg = RerankTrainConfig {
        output: output.clone(),
        epochs: args.epochs.max(1),
        max_steps: args.max_steps,
        batch: args.batch.max(1),
        group: args.rerank_group,
        lr: args.lr,
        warmup: args.warmup,
        weight_decay: args.weight_decay,
        clip_norm: args.clip_norm,
        seed: args.seed,
        checkpoint_every: args.val_every.unwrap_or(20),
        spec: spec.clone(),
    };
    let hidden = model.config.hidden_size;
    let head = Var::zeros(hidden, DType::F32, &model.device)?;
    eprintln!(
        "training a reranker on {} examples: groups of {}, pairs of {} positions (issue ≤ {}); log in {}",
        examples.len(),
        cfg.group,
        spec.max_len,
        spec.query_len,
        output.display()
    );
    let summary = train_reranker(model, &head, examples, &cfg, resume, progress, &mut |e| print(progress, e));
    progress.finish();
    let summary = summary?;
    let command: Vec<String> = std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect();
    let metadata = [
        ("coret.command".to_string(), command.join(" ")),
        ("coret.role".to_string(), "reranker".to_string()),
        ("coret.examples".to_string(), examples.len().to_string()),
        ("coret.updates".to_string(), summary.steps.to_string()),
    ]
    .into();
    let digest = save_reranker(&output, model, &head, &spec, base_id, metadata)?;
    eprintln!("reranker adapters {} sha256 {digest}", output.join(coret::rerank::ADAPTER_FILE).display());
    let first = summary.losses.first().copied().unwrap_or(f64::NAN);
    let last = summary.losses.last().copied().unwrap_or(f64::NAN);
    let how = if summary.cancelled { "interrupted (--resume continues)" } else { "done" };
    eprintln!(
        "{how}: {} updates, loss {first:.4} -> {last:.4}, {:.0}s; reranker in {} (--rerank {})",
        summary.steps,
        summary.seconds,
        output.display(),
        output.display()
    );
    if summary.cancelled {
        return Err(coret::Error::Cancelled.into());
    }
    Ok(())
}
