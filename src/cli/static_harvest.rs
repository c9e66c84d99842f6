//! The static table's distillation targets at scale (issue 80): the chunk tower's vectors of
//! code and prose texts from repositories outside every excluded list, embedded once and kept,
//! so a table can be regressed towards them again and again (`--static-build … --static-regress
//! N --static-targets DIR`). Code: the function, class and method chunks of each repository's
//! `HEAD` (tests, vendored and generated files left out), rendered as the index renders them.
//! Prose: its commit messages, cleaned as the miner cleans them (what people write about code).
//! Each text's bag is weighed as the static tier weighs text at search time: the idf of its
//! repository's chunks × `1 + ln tf`.
//!
//!   coret-tui --static-harvest DIR --repos MIRRORS --train-repos a/b,c/d [--harvest-chunks N] [--harvest-messages M]
//!
//! Resumable: one file per repository (`DIR/<owner>+<name>.targets`), written atomically when the
//! repository is done; a repository with its file is skipped.

use super::args::Args;
use super::progress::BarProgress;
use super::Usage;
use coret::model::static_tier::fit::BagTarget;
use coret::model::static_tier::weigh::{token_weights, Idf};
use coret::model::TokenizedInput;
use coret::repo::{generated, git};
use std::path::Path;

pub fn run(args: &Args, out: &Path) -> anyhow::Result<()> {
    let repos_dir =
        args.repos.as_deref().ok_or_else(|| Usage("--static-harvest needs --repos DIR".into()))?;
    let list =
        args.train_repos.as_deref().ok_or_else(|| Usage("--static-harvest needs --train-repos".into()))?;
    std::fs::create_dir_all(out)?;
    let m = super::model::load(args)?;
    let encoder = &m.towers.chunk;
    let vocab = encoder.input_tokenizer().tokenizer().get_vocab_size(true);
    let (mut texts_done, mut repos_done) = (0usize, 0usize);
    for repo in list.split(',').map(str::trim).filter(|r| !r.is_empty()) {
        let file = out.join(format!("{}.targets", repo.replace('/', "+")));
        if file.exists() {
            repos_done += 1;
            continue;
        }
        let texts = match harvest(repos_dir, repo, args.harvest_chunks, args.harvest_messages) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{repo}: skipped: {e}");
                continue;
            }
        };
        let inputs: Vec<TokenizedInput> =
            texts.iter().map(|t| encoder.tokenize_query(&t.text)).collect::<coret::Result<_>>()?;
        // The idf of the repository's code, as the tier weighs a checkout's chunks.
        let code: Vec<&[u32]> =
            inputs.iter().zip(&texts).filter(|(_, t)| t.code).map(|(i, _)| content(&i.ids)).collect();
        let idf = Idf::from_bags(&code, vocab);
        let progress = BarProgress::new();
        let total = inputs.len();
        let vectors = encoder.embed_tokenized(&inputs, &mut |done, _| {
            coret::progress::Progress::report(&progress, coret::progress::Phase::Embed, done, total);
            Ok(())
        })?;
        progress.finish();
        let targets: Vec<BagTarget> = inputs
            .iter()
            .zip(vectors)
            .map(|(i, target)| BagTarget { ids: token_weights(content(&i.ids), Some(&idf)), target })
            .collect();
        let bytes = bincode::serde::encode_to_vec(&targets, bincode::config::standard())?;
        coret::cache::write_atomic(&file, &bytes)?;
        let prose = texts.iter().filter(|t| !t.code).count();
        eprintln!("{repo}: {} texts ({} code, {prose} prose)", texts.len(), texts.len() - prose);
        texts_done += texts.len();
        repos_done += 1;
    }
    println!("{}: {repos_done} repositories ({texts_done} texts embedded in this run)", out.display());
    Ok(())
}

/// The repositories' target files in `dir` (`<owner>+<name>.targets`), in name order.
pub(super) fn target_files(dir: &Path) -> anyhow::Result<Vec<std::path::PathBuf>> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "targets"))
        .collect();
    files.sort();
    Ok(files)
}

/// One repository's targets, in the order [`harvest`] gave its texts.
pub(super) fn read_targets(path: &Path) -> anyhow::Result<Vec<BagTarget>> {
    let bytes = std::fs::read(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let (targets, _): (Vec<BagTarget>, usize) =
        bincode::serde::decode_from_slice(&bytes, bincode::config::standard())
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    Ok(targets)
}

/// The ids between `[CLS]` and `[SEP]`: what the static tier's bag holds of a text.
pub(super) fn content(ids: &[u32]) -> &[u32] {
    match ids.len() {
        0..=2 => &[],
        n => &ids[1..n - 1],
    }
}

pub(super) struct Text {
    pub text: String,
    pub code: bool,
}

/// At most `chunks` code texts (an even spread of the repository's definitions, the same every
/// run) and `messages` commit messages of `repo` at `HEAD`.
pub(super) fn harvest(
    repos_dir: &Path,
    repo: &str,
    chunks: usize,
    messages: usize,
) -> anyhow::Result<Vec<Text>> {
    use coret::repo::source::{decode_source, is_source_path, is_test_path, DEFAULT_MAX_FILE_SIZE};
    let dir = git::find_repo(repos_dir, repo)?;
    let wanted = |p: &str| is_source_path(p) && !is_test_path(p) && generated::by_path(p).is_none();
    let snapshot = git::read_snapshot_with(&dir, "HEAD", wanted, &mut Default::default())?;
    let mut code = Vec::new();
    for (path, bytes) in snapshot.files {
        let (head, tail) = generated::head_and_tail(&bytes);
        if generated::by_content(head, tail).is_some() {
            continue;
        }
        let Ok(source) = decode_source(bytes, DEFAULT_MAX_FILE_SIZE) else { continue };
        let file = coret::chunk::chunk_file(&path, &source);
        let defs = file.chunks.into_iter().filter(|c| {
            !c.is_test() && !matches!(c.kind, coret::ChunkKind::Module | coret::ChunkKind::Window)
        });
        code.extend(defs.map(|c| Text { text: c.text, code: true }));
    }
    let step = (code.len() / chunks.max(1)).max(1);
    let mut texts: Vec<Text> = code.into_iter().step_by(step).take(chunks).collect();
    let n = messages.to_string();
    let log = git::log_history(&dir, &["HEAD", "--no-merges", "-n", &n])?;
    let mut seen = std::collections::HashSet::new();
    for commit in coret::history::log::parse_log(&log) {
        let message = coret::train::mine_message::clean_message(&commit.message);
        if message.len() >= 20 && seen.insert(message.clone()) {
            texts.push(Text { text: message, code: false });
        }
    }
    anyhow::ensure!(!texts.is_empty(), "no text at HEAD");
    Ok(texts)
}
