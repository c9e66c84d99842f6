//! `coret-tui [PATH]`: the interactive TUI over the engine. Indexing runs on the TUI's
//! background thread: BM25 first, then the dense index.

use super::args::Args;
use super::model::dense_options;
use super::Usage;
use coret::engine::{IndexOptions, RepoIndex};
use coret::model::{resolve_model_dir, select_device, DeviceChoice, Towers, WeightsChoice};
use coret::searcher::Searcher;
use coret::tui::{backend::IndexReporter, Session, Theme};
use std::sync::Arc;

pub fn run(args: &Args) -> anyhow::Result<()> {
    let theme = Theme::load(&args.theme).map_err(|e| Usage(format!("--theme: {e:#}")))?;
    let repo =
        std::fs::canonicalize(&args.path).map_err(|e| Usage(format!("{}: {e}", args.path.display())))?;
    if !repo.is_dir() {
        anyhow::bail!(Usage(format!("{}: not a directory", repo.display())));
    }
    let choice: DeviceChoice = args.device.parse().map_err(|e| Usage(format!("--device: {e}")))?;
    let (device, device_name) =
        select_device(choice).map_err(|e| Usage(format!("--device {}: {e}", args.device)))?;
    super::model::check_model_flags(args, false)?;
    // Provisioning (first run only) prints to stderr, so it happens before the screen is taken.
    let model_dir = resolve_model_dir(args.model.as_deref(), &super::model::log_line);
    let mut model_label = match &model_dir {
        Ok(dir) => {
            dir.file_name().map_or_else(|| dir.display().to_string(), |n| n.to_string_lossy().into_owned())
        }
        Err(_) => "unavailable".to_string(),
    };
    let tower_layers = args.tower_layers.clone();
    let weights = args.weights.clone();
    // The status line names the model once: its directory and what was laid over it.
    if let Some(path) = &tower_layers {
        model_label = format!("{model_label} + {}", path.display());
    } else {
        match &weights {
            WeightsChoice::Trained if coret::model::lora::builtin().is_some() => {
                model_label.push_str(" + CoRet")
            }
            WeightsChoice::Trained | WeightsChoice::Pretrained => {}
            WeightsChoice::File(p) => {
                let name =
                    p.file_name().map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into());
                model_label = format!("{model_label} + {name}");
            }
        }
    }
    let session =
        Session { repo: repo.clone(), model: model_label, device: device_name, initial_query: None };
    let opts = IndexOptions {
        max_file_size: args.max_file_size,
        cache_dir: args.cache_dir.clone(),
        no_cache: args.no_cache,
    };
    let enc_opts = super::model::encoder_options(args);
    let dense_opts = dense_options(args);
    let fusion = super::model::fusion_params(args);
    let indexer = Box::new(move |reporter: IndexReporter| {
        let index = match RepoIndex::open(&repo, &opts, &reporter) {
            Ok(i) => i,
            Err(e) => return reporter.failed(e.to_string()),
        };
        let s = &index.stats;
        reporter.info(format!(
            "indexed {} files, {} chunks, {} call edges, {} skipped ({})",
            s.files,
            s.chunks,
            s.edges,
            s.skipped.total(),
            s.cache.describe()
        ));
        let bm25 = Searcher { fusion, ..Searcher::bm25_only(Arc::new(index)) };
        reporter.bm25_ready(Arc::new(Searcher { fusion, ..Searcher::bm25_only(bm25.repo.clone()) }));
        // The history column is served with the dense index (the right column waits for it).
        let (history, notes) =
            coret::history::checkout_history(&bm25.repo.root, bm25.repo.cache_entry.as_deref());
        notes.into_iter().for_each(|n| reporter.info(n));
        let bm25 = Searcher { history, ..bm25 };
        let dir = match model_dir {
            Ok(d) => d,
            Err(e) => return reporter.failed(format!("dense index: {e}")),
        };
        let towers =
            match super::model::load_encoder(&dir, &device, enc_opts, tower_layers.as_deref(), &weights) {
                Ok(e) => {
                    let t = Towers::tied(Arc::new(e));
                    reporter.info(format!("query tower {}", t.names().query));
                    t
                }
                Err(e) => return reporter.failed(format!("dense index: {e}")),
            };
        match bm25.with_dense(towers, dense_opts, &reporter) {
            Ok(full) => reporter.dense_ready(Arc::new(full)),
            Err(e) => reporter.failed(format!("dense index: {e}")),
        }
    });
    coret::tui::run(session, theme, indexer)
}
