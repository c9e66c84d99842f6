//! `--static-build FILE` (hidden): the static tier's table, by one command
//! (`scripts/static/build.sh` runs it with the shipped recipe). Distils the chunk tower (the
//! shipped adapters merged) or starts from `--static-from`, weighs tokens by the
//! `--static-corpus`, fits the rows with the CoRet loss on `--static-fit` shards, and writes the
//! table with its `.sha256`.

use super::args::Args;
use super::progress::BarProgress;
use coret::model::static_tier::build::{
    corpus_texts, token_counts, token_vectors, tokenizer_json, weighted_rows, BuildOptions,
};
use coret::model::static_tier::fit::{evaluate, fit, regress, BagExample, BagTarget, FitOptions};
use coret::model::static_tier::weigh::{token_weights, Idf};
use coret::model::static_tier::words::WordPieces;
use coret::model::static_tier::{self, StaticTable};
use coret::train::shard::read_shard;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub fn run(args: &Args, out: &Path) -> anyhow::Result<()> {
    let model_dir = coret::model::resolve_model_dir(args.model.as_deref(), &super::model::log_line)?;
    let tokenizer = tokenizer_json(&model_dir)?;
    let mut recipe = Vec::new();
    let (mut rows, dim, base) = match &args.static_from {
        Some(path) => {
            let table = StaticTable::load(path)?;
            recipe.push(format!("from {} ({})", table.name(), table.recipe()));
            (table.rows().to_vec(), table.dim(), table.base().to_string())
        }
        None => distil(args, &tokenizer, &mut recipe)?,
    };
    let words = WordPieces::new(
        tokenizers::Tokenizer::from_bytes(tokenizer.as_bytes()).map_err(anyhow::Error::msg)?,
        "tokenizer",
    )?;
    let specials = special_ids(&words);
    let (vocab, idf) = (rows.len() / dim, !args.static_no_idf);
    let val =
        args.static_val.as_ref().map(|v| bags(std::slice::from_ref(v), &specials, vocab, idf)).transpose()?;
    let opts = FitOptions {
        epochs: args.static_epochs,
        lr: args.static_lr,
        anchor: args.static_anchor,
        ..FitOptions::default()
    };
    // Towards the tower's vectors (a harvest's, or the shards' texts), before any fit.
    if args.static_regress > 0 {
        let targets = regression_targets(args, &specials)?;
        let ropts =
            FitOptions { epochs: args.static_regress, relational: args.static_relational, ..opts.clone() };
        eprintln!("regressing towards the tower on {} texts", targets.len());
        regress(&mut rows, dim, &targets, &ropts, &mut |epoch, loss, now| {
            let v = val.as_ref().map_or(String::new(), |v| {
                let e = evaluate(now, dim, v, opts.temperature);
                format!("; val loss {:.4} top1 {:.3}", e.loss, e.top1)
            });
            eprintln!("regress {epoch}: loss {loss:.4} (1 - cos, + relational KL × {}){v}", ropts.relational);
        })?;
        recipe.push(format!(
            "regressed {} passes towards the tower on {} texts, lr {}, anchor {}, relational KL {}",
            ropts.epochs,
            targets.len(),
            ropts.lr,
            ropts.anchor,
            ropts.relational
        ));
    }
    if !args.static_fit.is_empty() {
        let train = bags(&args.static_fit, &specials, vocab, idf)?;
        eprintln!("fitting on {} examples ({} shards)", train.len(), args.static_fit.len());
        if let Some(v) = &val {
            let r = evaluate(&rows, dim, v, opts.temperature);
            eprintln!("epoch 0: val loss {:.4} top1 {:.3}", r.loss, r.top1);
        }
        let mut fitted = rows.clone();
        fit(&mut fitted, dim, &train, &opts, &mut |epoch, r, now| {
            let v = val.as_ref().map_or(String::new(), |v| {
                let e = evaluate(now, dim, v, opts.temperature);
                format!("; val loss {:.4} top1 {:.3}", e.loss, e.top1)
            });
            eprintln!("epoch {epoch}: train loss {:.4} top1 {:.3}{v}", r.loss, r.top1);
        })?;
        rows = fitted;
        let names: Vec<String> = args.static_fit.iter().map(|p| file_name(p)).collect();
        recipe.push(format!(
            "fit {} examples ({}) epochs {} lr {} anchor {} tau {}",
            train.len(),
            names.join(","),
            opts.epochs,
            opts.lr,
            opts.anchor,
            opts.temperature
        ));
    }
    let (table, bytes) = StaticTable::from_rows(&rows, dim, &tokenizer, &base, &recipe.join("; "))?;
    let sha = static_tier::write(out, &bytes)?;
    println!(
        "{} {} ({} tokens x {}, {:.1} MB) sha256 {sha}",
        out.display(),
        table.name(),
        table.vocab_size(),
        dim,
        bytes.len() as f64 / 1e6
    );
    println!("recipe: {}", table.recipe());
    Ok(())
}

/// Every vocabulary token through the chunk tower, weighted by the corpus' frequencies.
fn distil(
    args: &Args,
    tokenizer: &str,
    recipe: &mut Vec<String>,
) -> anyhow::Result<(Vec<f32>, usize, String)> {
    let m = super::model::load(args)?;
    let encoder = &m.towers.chunk;
    let progress = BarProgress::new();
    let vectors = token_vectors(encoder, &progress)?;
    progress.finish();
    let dim = encoder.dim();
    let words = WordPieces::new(
        tokenizers::Tokenizer::from_bytes(tokenizer.as_bytes()).map_err(anyhow::Error::msg)?,
        "tokenizer",
    )?;
    let texts = corpus_texts(&args.static_corpus)?;
    let vocab = vectors.len() / dim;
    let counts = token_counts(&words, vocab, &texts)?;
    let opts = BuildOptions { sif: args.static_sif, remove_mean: !args.static_keep_mean };
    eprintln!("{} corpus texts, {} tokens counted", texts.len(), counts.iter().sum::<u64>());
    let names: Vec<String> = args.static_corpus.iter().map(|p| file_name(p)).collect();
    recipe.push(format!(
        "distilled from {} over {} tokens; sif {} on {} ({} texts); mean {}",
        encoder.model_id(),
        vocab,
        opts.sif,
        names.join(","),
        texts.len(),
        if opts.remove_mean { "removed" } else { "kept" }
    ));
    Ok((weighted_rows(&vectors, dim, &counts, &opts), dim, encoder.model_id()))
}

fn file_name(p: &Path) -> String {
    p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// Ids no text of the tier carries: the special tokens a shard's sequences are framed with.
fn special_ids(words: &WordPieces) -> Vec<u32> {
    ["[CLS]", "[SEP]", "[PAD]", "[DOWN]", "[MASK]"]
        .iter()
        .filter_map(|t| words.tokenizer().token_to_id(t))
        .collect()
}

/// The chunk tower's vectors of the fit shards' distinct chunks and queries (a sample of at
/// most `--static-target-max`), read from `--static-targets` when it holds them, else embedded
/// (minutes) and written there.
fn regression_targets(args: &Args, specials: &[u32]) -> anyhow::Result<Vec<BagTarget>> {
    // `--static-harvest`'s directory: every repository's targets (at most `--static-target-max`).
    if let Some(dir) = args.static_targets.as_ref().filter(|p| p.is_dir()) {
        let mut targets = Vec::new();
        for path in super::static_harvest::target_files(dir)? {
            targets.extend(super::static_harvest::read_targets(&path)?);
        }
        let step = (targets.len() / args.static_target_max.max(1)).max(1);
        return Ok(targets.into_iter().step_by(step).take(args.static_target_max).collect());
    }
    if let Some(path) = args.static_targets.as_ref().filter(|p| p.exists()) {
        return super::static_harvest::read_targets(path);
    }
    let mut seen = std::collections::HashSet::new();
    let mut seqs: Vec<coret::train::shard::Seq> = Vec::new();
    for path in &args.static_fit {
        for ex in read_shard(path)?.examples {
            let all =
                std::iter::once(ex.query).chain(ex.positives.into_iter().chain(ex.negatives).map(|c| c.seq));
            for seq in all {
                if seen.insert(blake3::hash(&bytemuck_ids(&seq.ids)).as_bytes().to_owned()) {
                    seqs.push(seq);
                }
            }
        }
    }
    // A spread sample, the same every run.
    let step = (seqs.len() / args.static_target_max.max(1)).max(1);
    let seqs: Vec<_> = seqs.into_iter().step_by(step).take(args.static_target_max).collect();
    let m = super::model::load(args)?;
    let items: Vec<coret::model::TokenizedInput> = seqs.iter().map(|s| s.to_tokenized()).collect();
    let progress = BarProgress::new();
    let total = items.len();
    let vectors = m.towers.chunk.embed_tokenized(&items, &mut |done, _| {
        coret::progress::Progress::report(&progress, coret::progress::Phase::Embed, done, total);
        Ok(())
    })?;
    progress.finish();
    let strip = |ids: &[u32]| ids.iter().copied().filter(|i| !specials.contains(i)).collect::<Vec<u32>>();
    let targets: Vec<BagTarget> = seqs
        .iter()
        .zip(vectors)
        .map(|(s, target)| BagTarget { ids: token_weights(&strip(&s.ids), None), target })
        .collect();
    if let Some(path) = &args.static_targets {
        let bytes = bincode::serde::encode_to_vec(&targets, bincode::config::standard())?;
        coret::cache::write_atomic(path, &bytes)?;
    }
    Ok(targets)
}

fn bytemuck_ids(ids: &[u32]) -> Vec<u8> {
    ids.iter().flat_map(|i| i.to_le_bytes()).collect()
}

/// Shards' examples as bags, special tokens dropped, each weighed as the tier weighs text:
/// by its repository's idf (taken over the distinct chunks the shards hold of it, a sample of
/// the repository) and a saturating count.
fn bags(paths: &[PathBuf], specials: &[u32], vocab: usize, idf: bool) -> anyhow::Result<Vec<BagExample>> {
    let strip = |ids: &[u32]| ids.iter().copied().filter(|i| !specials.contains(i)).collect::<Vec<u32>>();
    let mut examples = Vec::new();
    for path in paths {
        examples.extend(read_shard(path)?.examples);
    }
    let mut by_repo: HashMap<&str, HashMap<String, Vec<u32>>> = HashMap::new();
    for ex in &examples {
        let docs = by_repo.entry(ex.repo.as_str()).or_default();
        for c in ex.positives.iter().chain(&ex.negatives) {
            docs.entry(c.key()).or_insert_with(|| strip(&c.seq.ids));
        }
    }
    let idfs: HashMap<&str, Idf> = by_repo
        .iter()
        .map(|(repo, docs)| (*repo, Idf::from_bags(&docs.values().collect::<Vec<_>>(), vocab)))
        .collect();
    Ok(examples
        .iter()
        .map(|ex| {
            let w = idf.then(|| &idfs[ex.repo.as_str()]);
            let bag = |c: &coret::train::shard::Candidate| (c.key(), token_weights(&strip(&c.seq.ids), w));
            BagExample {
                repo: ex.repo.clone(),
                query: token_weights(&strip(&ex.query.ids), w),
                positives: ex.positives.iter().map(bag).collect(),
                negatives: ex.negatives.iter().map(bag).collect(),
            }
        })
        .collect())
}
