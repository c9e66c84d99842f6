//! `coret-tui [PATH]`: the interactive TUI over the engine. Indexing runs on the TUI's
//! background threads (`tui::engine_indexer`): BM25 first, then the dense index, then the
//! working tree is re-checked before each search.

use super::args::{Args, DenseTierArg};
use super::model::dense_options;
use super::Usage;
use coret::model::{resolve_model_dir, select_device, DeviceChoice, Towers, WeightsChoice};
use coret::rank::searcher::SearchModels;
use coret::tui::{
    backend::IndexReporter, shared_loader, EngineIndexer, ManyIndexer, NamedIndexer, Session, Theme,
    TowerLoader,
};
use std::path::PathBuf;
use std::sync::Arc;

pub fn run(args: &Args, paths: &[PathBuf]) -> anyhow::Result<()> {
    let theme = Theme::load(&args.theme).map_err(|e| Usage(format!("--theme: {e:#}")))?;
    // Not a directory, or no source file of a supported language in it: one line and exit 2 before the screen is taken.
    let roots = paths
        .iter()
        .map(|p| coret::engine::check_checkout(p, args.langs.unwrap_or_default()))
        .collect::<Result<Vec<_>, _>>()?;
    let repo = roots[0].clone();
    // Then the terminal: a missing path is named as such, with or without one.
    if !std::io::IsTerminal::is_terminal(&std::io::stdout())
        || !std::io::IsTerminal::is_terminal(&std::io::stdin())
    {
        return Err(Usage(
            "the TUI needs a terminal on stdin and stdout; for scripts use --query TEXT [--json]".into(),
        )
        .into());
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
    let session = Session {
        repo: repo.clone(),
        label: (roots.len() > 1).then(|| super::checkouts::names(paths).join(" + ")),
        model: model_label,
        device: device_name,
        initial_query: None,
        order: args.order,
    };
    let opts = super::query::index_options(args);
    let enc_opts = super::model::encoder_options(args);
    let dense_opts = dense_options(args);
    let fusion = super::model::fusion_params(args);
    // Loaded on the indexer's dense thread, after BM25 is ready.
    // The status line names the model (`model_label`); the towers' ids are for the cache.
    let rerank_args = args.clone();
    let towers: TowerLoader = Box::new(move |reporter: &IndexReporter| {
        let dir = model_dir.map_err(|e| format!("dense index: {e}"))?;
        let encoder = super::model::load_encoder(&dir, &device, enc_opts, tower_layers.as_deref(), &weights)
            .map_err(|e| format!("dense index: {e}"))?;
        let reranker = super::model::load_reranker(&rerank_args, Some(&device))
            .map_err(|e| format!("--rerank: {e:#}"))?;
        if let Some(r) = &reranker {
            reporter.info(super::model::describe_reranker(&rerank_args, r));
        }
        Ok(SearchModels { towers: Towers::tied(Arc::new(encoder)), reranker })
    });
    // BM25 first, then the dense index; then it re-checks the tree before each search.
    // The static tier answers first unless the transformer alone was asked for; a table that
    // does not load is said once and the transformer serves alone (`--dense static`: an error).
    let static_table = match args.dense {
        DenseTierArg::Transformer => None,
        DenseTierArg::Static => Some(super::model::load_static(args)?),
        DenseTierArg::Auto => match super::model::load_static(args) {
            Ok(t) => Some(t),
            Err(e) => {
                eprintln!("note: {e:#}; the transformer serves alone");
                None
            }
        },
    };
    let static_only = args.dense == DenseTierArg::Static;
    if roots.len() == 1 {
        let engine =
            EngineIndexer { repo, index: opts, fusion, dense: dense_opts, towers, static_table, static_only };
        let indexer = Box::new(move |reporter: IndexReporter| engine.run(reporter));
        return coret::tui::run(session, theme, indexer);
    }
    // Several checkouts: one indexer each, the models loaded once for all (tui::many_indexer).
    let names = super::checkouts::names(paths);
    let checkouts = names
        .into_iter()
        .zip(roots)
        .zip(shared_loader(towers, paths.len()))
        .map(|((name, repo), towers)| NamedIndexer {
            name,
            indexer: EngineIndexer {
                repo,
                index: opts.clone(),
                fusion,
                dense: dense_opts.clone(),
                towers,
                static_table: static_table.clone(),
                static_only,
            },
        })
        .collect();
    let engine = ManyIndexer { checkouts };
    coret::tui::run(session, theme, Box::new(move |reporter: IndexReporter| engine.run(reporter)))
}
