//! `--distill-student OUT` (hidden): a smaller student distilled from the chunk tower (issue 82,
//! `coret::train::distill`) towards the harvest's vectors (`--static-harvest`). The harvest
//! keeps each text's bag, not its words, so the texts are read again from the same mirrors by
//! the same deterministic harvest, and a repository whose count differs from its file is
//! left out, said.
//!
//!   coret-tui --distill-student OUT --static-targets HARVEST --repos MIRRORS
//!     [--student-layers 0,4,5] --max-steps N [--batch 32] [--lr X] [--static-relational W] [--resume]
//!     [--distill-queries INSTANCES]   # issues too: their problem statements, the tower's query vectors
//!     [--init DIR]                    # start from another model (a student: --student-layers 0,1,2)
//!
//! Writes `OUT/checkpoint` every `--val-every` updates (with the held-out cosine),
//! `OUT/distill-log.jsonl`, and `OUT/student` (a model directory for `--model`) at the end.

use super::args::Args;
use super::static_harvest::{content, harvest, read_targets, target_files};
use super::Usage;
use coret::model::{resolve_model_dir, select_device, DeviceChoice};
use coret::train::checkpoint;
use coret::train::distill::{distill, DistillConfig, DistillEvent, Pair};
use coret::train::TrainModel;
use std::path::Path;

/// Every this many pairs, one is held out for the validation cosine (at most `VAL_MAX`).
const VAL_EVERY: usize = 200;
const VAL_MAX: usize = 256;

pub fn run(args: &Args, out: &Path) -> anyhow::Result<()> {
    let targets_dir = args.static_targets.as_deref().filter(|p| p.is_dir()).ok_or_else(|| {
        Usage("--distill-student needs --static-targets DIR (a --static-harvest directory)".into())
    })?;
    let repos_dir = args
        .repos
        .as_deref()
        .ok_or_else(|| Usage("--distill-student needs --repos DIR (the mirrors)".into()))?;
    let steps = args.max_steps.ok_or_else(|| Usage("--distill-student needs --max-steps N".into()))?;
    std::fs::create_dir_all(out)?;
    let _lock = coret::train::lock_output(out)?;
    let choice: DeviceChoice = args.device.parse().map_err(|e| Usage(format!("--device: {e}")))?;
    let (device, _) = select_device(choice)?;
    let (model, resume) = if args.resume {
        let ck = checkpoint::load(out, &device)?;
        eprintln!("resuming from {} at update {}", ck.dir.display(), ck.state.step);
        (ck.model, Some((ck.state, ck.optimizer)))
    } else {
        let mut model = tower(args, &device)?;
        model.keep_layers(&args.student_layers)?;
        (model, None)
    };
    let (mut pairs, val, mut digest) = read_pairs(args, &model, targets_dir, repos_dir)?;
    if let Some(file) = &args.distill_queries {
        let issues = issue_pairs(args, &model, file, out)?;
        // Issues are few beside the harvest: each is repeated (a whole number of times) so that
        // they come near a fifth of what the run sees, never past it.
        let repeat = (pairs.len() / (4 * issues.len().max(1))).max(1);
        eprintln!("{} issues from {}, each {repeat} times", issues.len(), file.display());
        digest = format!("{digest}+{}x{repeat}", issues.len());
        for _ in 0..repeat {
            pairs.extend(issues.iter().cloned());
        }
    }
    eprintln!("{} texts to learn from, {} held out", pairs.len(), val.len());
    let cfg = DistillConfig {
        output: out.to_path_buf(),
        batch: args.batch.max(2),
        steps,
        warmup: args.warmup.unwrap_or(steps / 20),
        lr: args.lr,
        relational: args.static_relational as f64,
        tau: args.temperature,
        clip: args.clip_norm,
        seed: args.seed,
        every: args.val_every.unwrap_or(500),
        digest,
    };
    let mut print = |e: &DistillEvent| match e {
        DistillEvent::Step { step, loss, cosine, seconds, .. } if step % 20 == 0 => {
            eprintln!("update {step}/{steps}: loss {loss:.4}, cosine {cosine:.4}, {seconds:.2} s")
        }
        DistillEvent::Val { step, cosine, lowest } => {
            eprintln!("update {step}: held-out cosine {cosine:.4} (lowest {lowest:.4})")
        }
        _ => {}
    };
    distill(&model, &pairs, &val, &cfg, resume, &mut print)?;
    println!("{}", out.join("student").display());
    Ok(())
}

/// The chunk tower as a training model: `--init`/`--model` (default all-MiniLM-L6-v2) with the
/// shipped adapters merged in, which is what the harvest embedded with.
fn tower(args: &Args, device: &candle_core::Device) -> anyhow::Result<TrainModel> {
    let dir = resolve_model_dir(args.init.as_deref().or(args.model.as_deref()), &super::model::log_line)?;
    let mut model = TrainModel::load(&dir, device)?;
    let base_id = coret::model::model_id_of(&dir)?;
    if let Some(adapter) = coret::model::lora::builtin().transpose()? {
        if coret::model::same_weights(adapter.base(), &base_id) {
            model.use_lora(adapter.rank(), adapter.alpha())?;
            model.start_lora_from(&adapter, &base_id, "the shipped adapters")?;
            eprintln!("the tower: {} with the shipped adapters", dir.display());
        }
    }
    Ok(model)
}

/// The most issues `--distill-queries` takes (an even spread of those of 200 characters or more).
const MAX_ISSUES: usize = 8000;

/// Issue-shaped texts (instances' problem statements, e.g. the training set's) with the tower's
/// vectors of them as queries, embedded once into `out/issues-<hash of the texts>.targets` and
/// read from there after (another file's issues get a file of their own).
fn issue_pairs(args: &Args, model: &TrainModel, file: &Path, out: &Path) -> anyhow::Result<Vec<Pair>> {
    let (instances, bad) = coret::eval::instances::read_instances(file)?;
    if !bad.is_empty() {
        eprintln!("{}: {} lines could not be read and are left out", file.display(), bad.len());
    }
    let texts: Vec<&str> =
        instances.iter().map(|i| i.problem_statement.as_str()).filter(|t| t.len() >= 200).collect();
    let step = texts.len().div_ceil(MAX_ISSUES).max(1);
    let texts: Vec<&str> = texts.into_iter().step_by(step).collect();
    let mut key = blake3::Hasher::new();
    for t in &texts {
        key.update(t.as_bytes()).update(&[0]);
    }
    let cache = out.join(format!("issues-{}.targets", &key.finalize().to_hex()[..16]));
    let targets: Vec<Vec<f32>> = match std::fs::read(&cache) {
        Ok(bytes) => {
            bincode::serde::decode_from_slice(&bytes, bincode::config::standard())
                .map_err(|e| anyhow::anyhow!("{}: {e}", cache.display()))?
                .0
        }
        Err(_) => {
            let tower = super::model::load(args)?;
            let encoder = &tower.towers.chunk; // tied: the query tower is the same
            let inputs: Vec<_> =
                texts.iter().map(|t| encoder.tokenize_query(t)).collect::<coret::Result<_>>()?;
            eprintln!("embedding {} issues with the tower", inputs.len());
            let vectors = encoder.embed_tokenized(&inputs, &mut |_, _| Ok(()))?;
            coret::cache::write_atomic(
                &cache,
                &bincode::serde::encode_to_vec(&vectors, bincode::config::standard())?,
            )?;
            vectors
        }
    };
    anyhow::ensure!(
        targets.len() == texts.len(),
        "{}: {} vectors for {} issues",
        cache.display(),
        targets.len(),
        texts.len()
    );
    texts
        .iter()
        .zip(targets)
        .map(|(t, target)| Ok(Pair { input: model.tokenizer.query(t, args.max_len)?, target }))
        .collect()
}

/// The harvest's texts beside their vectors, every `VAL_EVERY`-th held out; with a digest of
/// which repositories and how many texts each, for a resumed run to check.
/// Whether `ids` (a text as the student reads it, `[CLS]` … `[SEP]`) is the text the harvest
/// embedded, whose tokens are `bag`'s: every token of the shorter one is in the other (the two
/// may cut a long text at different lengths).
fn harvested_from(ids: &[u32], bag: &[(u32, f32)]) -> bool {
    let bag: std::collections::HashSet<u32> = bag.iter().map(|&(id, _)| id).collect();
    let own: std::collections::HashSet<u32> = content(ids).iter().copied().collect();
    own.is_subset(&bag) || bag.is_subset(&own)
}

fn read_pairs(
    args: &Args,
    model: &TrainModel,
    targets_dir: &Path,
    repos_dir: &Path,
) -> anyhow::Result<(Vec<Pair>, Vec<Pair>, String)> {
    let only: Option<Vec<String>> =
        args.train_repos.as_deref().map(|l| l.split(',').map(|r| r.trim().replace('/', "+")).collect());
    let (mut pairs, mut val) = (Vec::new(), Vec::new());
    let mut digest = blake3::Hasher::new();
    for path in target_files(targets_dir)? {
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        if only.as_ref().is_some_and(|o| !o.contains(&stem)) {
            continue;
        }
        let repo = stem.replacen('+', "/", 1);
        let targets = read_targets(&path)?;
        let texts = match harvest(repos_dir, &repo, args.harvest_chunks, args.harvest_messages) {
            Ok(t) if t.len() == targets.len() => t,
            Ok(t) => {
                eprintln!(
                    "{repo}: left out: {} texts at HEAD, {} in {}",
                    t.len(),
                    targets.len(),
                    path.display()
                );
                continue;
            }
            Err(e) => {
                eprintln!("{repo}: left out: {e}");
                continue;
            }
        };
        let inputs: Vec<_> =
            texts.iter().map(|t| model.tokenizer.query(&t.text, args.max_len)).collect::<Result<_, _>>()?;
        let changed = inputs.iter().zip(&targets).filter(|(i, t)| !harvested_from(&i.ids, &t.ids)).count();
        if changed > 0 {
            // Same count, other texts (a chunker that now reads the repository differently): the
            // targets would be other texts' vectors.
            eprintln!(
                "{repo}: left out: {changed} of {} texts differ from the harvest's; harvest it again \
                 (`--static-harvest`) to use it",
                texts.len()
            );
            continue;
        }
        digest.update(format!("{repo} {}\n", texts.len()).as_bytes());
        for (input, target) in inputs.into_iter().zip(targets) {
            let pair = Pair { input, target: target.target };
            if (pairs.len() + val.len()) % VAL_EVERY == VAL_EVERY - 1 && val.len() < VAL_MAX {
                val.push(pair);
            } else {
                pairs.push(pair);
            }
        }
        eprintln!("{repo}: read ({} texts so far)", pairs.len() + val.len());
    }
    if pairs.len() > args.static_target_max {
        // An even spread over every repository, the same every run.
        let step = pairs.len().div_ceil(args.static_target_max);
        pairs = pairs.into_iter().step_by(step).collect();
    }
    digest.update(format!("{} pairs", pairs.len()).as_bytes());
    Ok((pairs, val, digest.finalize().to_hex()[..16].to_string()))
}

#[cfg(test)]
mod tests {
    use super::harvested_from;

    /// A repository whose texts changed since its harvest (the same count, as after the chunker
    /// split a language's functions by arity) must not pair its texts with other texts' vectors.
    #[test]
    fn a_text_is_paired_only_with_the_harvest_of_the_same_text() {
        let bag = |ids: &[u32]| ids.iter().map(|&id| (id, 1.0)).collect::<Vec<_>>();
        let (cls, sep) = (101, 102);
        assert!(harvested_from(&[cls, 7, 8, 9, sep], &bag(&[7, 8, 9])), "the same text");
        assert!(harvested_from(&[cls, 7, 8, sep], &bag(&[7, 8, 9])), "cut shorter than the harvest's");
        assert!(harvested_from(&[cls, 7, 8, 9, 10, sep], &bag(&[7, 8, 9])), "the harvest's cut shorter");
        assert!(!harvested_from(&[cls, 7, 11, 9, sep], &bag(&[7, 8, 9])), "another text");
    }
}
