//! Loading the encoder the flags ask for, with its dense options.

use super::args::Args;
use super::Usage;
use candle_core::Device;
use coret::index::shared::{SharedHandle, SharedVectors};
use coret::model::static_tier::StaticTable;
use coret::model::{
    apply_weights, resolve_model_dir, select_device, with_tower_layers, DeviceChoice, Encoder,
    EncoderOptions, TowerLayers, Towers, WeightsChoice,
};
use coret::rank::dense_retriever::DenseOptions;
use coret::rank::searcher::SearchModels;
use coret::rerank::{RerankSpec, Reranker};
use std::path::Path;
use std::sync::Arc;

pub struct LoadedModel {
    pub towers: Towers,
    pub device: String,
}

/// The towers (`--model`, default all-MiniLM-L6-v2, with the `--weights` asked for) on the
/// `--device` asked for.
pub fn load(args: &Args) -> anyhow::Result<LoadedModel> {
    check_model_flags(args, true)?;
    let choice: DeviceChoice = args.device.parse().map_err(|e| Usage(format!("--device: {e}")))?;
    let (device, name) =
        select_device(choice).map_err(|e| Usage(format!("--device {}: {e}", args.device)))?;
    let dir = resolve_model_dir(args.model.as_deref(), &log_line)?;
    let max_pos = coret::model::config::load_bert_config(&dir)?.max_position_embeddings;
    // A budget the user asked for that the model cannot read is an error; the defaults adapt.
    let defaults = [EncoderOptions::default().max_len, DenseOptions::default().query_max_len];
    let asked = [("--max-len", args.max_len), ("--query-max-len", args.query_max_len)];
    for ((flag, n), default) in asked.into_iter().zip(defaults) {
        if n > max_pos && n != default {
            anyhow::bail!(Usage(format!("{flag} {n}: the model reads at most {max_pos} tokens")));
        }
    }
    let encoder =
        load_encoder(&dir, &device, encoder_options(args), args.tower_layers.as_deref(), &args.weights)?;
    // The device with what its products run as (`cpu (f32 avx512)`): --precision auto decides
    // per CPU, so a figure is only comparable with the kernels named.
    let name = format!("{name} ({})", encoder.kernels());
    let towers = Towers::tied(Arc::new(encoder));
    let names = towers.names();
    // A headless answer is read for its rows; the towers are said where asked, and in the
    // logs of runs that measure them.
    if args.verbose || args.eval.is_some() || args.train.is_some() {
        eprintln!("chunk tower {}, query tower {} on {name}", names.chunk, names.query);
    }
    Ok(LoadedModel { towers, device: name })
}

/// Files the model flags name must exist: a usage error naming the flag, before any loading.
/// `with_model`: `--model` too (the TUI instead runs BM25 alone and says why).
pub fn check_model_flags(args: &Args, with_model: bool) -> anyhow::Result<()> {
    let mut files: Vec<(&str, &Path)> = Vec::new();
    if let Some(m) = args.model.as_ref().filter(|_| with_model) {
        files.push(("--model", m));
    }
    if let Some(t) = &args.tower_layers {
        files.push(("--tower-layers", t));
    }
    if let WeightsChoice::File(f) = &args.weights {
        files.push(("--weights", f));
    }
    for (flag, path) in files {
        if !path.exists() {
            anyhow::bail!(Usage(format!("{flag} {}: no such file or directory", path.display())));
        }
    }
    if let Some(dir) = &args.rerank {
        // The spec first: a directory that is not a reranker is named before any loading.
        RerankSpec::read(dir).map_err(|e| Usage(format!("--rerank {}: {e}", dir.display())))?;
    }
    if args.tower_layers.is_some() && args.weights != WeightsChoice::Trained {
        anyhow::bail!(Usage(
            "--tower-layers and --weights both replace the encoder's weights: give one".into()
        ));
    }
    Ok(())
}

/// The towers' encoder: the model in `dir` with the `--weights` asked for, or with
/// `--tower-layers` laid over it.
pub fn load_encoder(
    dir: &Path,
    device: &Device,
    opts: EncoderOptions,
    tower_layers: Option<&Path>,
    weights: &WeightsChoice,
) -> coret::Result<Encoder> {
    let encoder = Encoder::load(dir, device, opts)?;
    match tower_layers {
        Some(path) => with_tower_layers(&encoder, &TowerLayers::load(path)?, &path.display().to_string()),
        None => {
            let (encoder, note) = apply_weights(encoder, weights)?;
            if let Some(note) = note {
                log_line(&note);
            }
            Ok(encoder)
        }
    }
}

/// `--rerank DIR`: the reranker over the pretrained model its adapters were trained on, on
/// the dense side's `device` (`None`: no model loaded, which `--rerank` needs). Prints nothing
/// (the TUI may own the screen; the model is provisioned by then): [`describe_reranker`] says
/// what was loaded.
pub fn load_reranker(args: &Args, device: Option<&Device>) -> anyhow::Result<Option<Arc<Reranker>>> {
    let Some(dir) = &args.rerank else { return Ok(None) };
    let device = device.ok_or_else(|| {
        Usage("--rerank re-orders the hybrid ranking: it needs the model and --retriever hybrid".into())
    })?;
    let spec = RerankSpec::read(dir)?;
    let model_dir = resolve_model_dir(args.model.as_deref(), &|_| {})?;
    let opts = EncoderOptions { max_len: spec.max_len, ..encoder_options(args) };
    let base = Encoder::load(&model_dir, device, opts)?;
    let mut reranker = Reranker::load(dir, &base)?;
    if let Some(depth) = args.rerank_depth {
        reranker.spec.depth = depth;
    }
    Ok(Some(Arc::new(reranker)))
}

/// The line that says a reranker is in use.
pub fn describe_reranker(args: &Args, reranker: &Reranker) -> String {
    let dir = args.rerank.as_deref().unwrap_or(Path::new("?"));
    format!("reranker {}: the hybrid's top {} re-ordered", dir.display(), reranker.spec.depth)
}

/// [`load`] and, with `--rerank`, the reranker on the same device (for the servers' dense
/// threads, which load both once).
pub fn load_models(args: &Args) -> anyhow::Result<SearchModels> {
    let m = load(args)?;
    let reranker = load_reranker(args, Some(m.towers.chunk.device()))?;
    if let Some(r) = &reranker {
        eprintln!("{}", describe_reranker(args, r));
    }
    Ok(SearchModels { towers: m.towers, reranker })
}

/// The encoder's options from the flags.
pub fn encoder_options(args: &Args) -> EncoderOptions {
    EncoderOptions {
        max_len: args.max_len,
        batch_size: args.batch_size.max(1),
        precision: store_precision(args),
        layers: args.encoder_layers,
        ..EncoderOptions::default()
    }
}

/// `--precision`, except that `auto` over a store (`--store`) is f32 on every machine: the
/// precision is part of the tower a vector is stored under, and `auto` decides by a timing
/// (bf16 where it measured faster on this CPU, and on a GPU), so two identical laptops could
/// split into two towers and share nothing. f32 is what every CPU and GPU computes alike.
pub fn store_precision(args: &Args) -> coret::model::Precision {
    match (args.precision, &args.store) {
        (coret::model::Precision::Auto, Some(_)) => coret::model::Precision::F32,
        (p, _) => p,
    }
}

pub fn dense_options(args: &Args) -> DenseOptions {
    DenseOptions {
        use_callgraph: args.callgraph,
        max_neighbours: args.neighbours,
        use_path: !args.no_path,
        query_max_len: args.query_max_len,
        skip_tests: !args.dense_tests,
        static_idf: !args.static_no_idf,
        // Connected (or refused, exit 2) by `dispatch` before anything else runs.
        shared: shared_store(args).ok().flatten(),
        rank_in_store: args.store_search,
    }
}

/// `--store` (`CORET_STORE`): the team's vector store, connected once per process. A server
/// that is down is no error (the local cache answers and `stats.store` says why); a URL, login,
/// host or server that cannot work is the user's to fix: exit 2.
pub fn shared_store(args: &Args) -> anyhow::Result<Option<SharedHandle>> {
    static STORE: std::sync::OnceLock<Option<SharedHandle>> = std::sync::OnceLock::new();
    if let Some(store) = STORE.get() {
        return Ok(store.clone());
    }
    let Some(url) = args.store.as_deref().map(str::trim).filter(|u| !u.is_empty()) else {
        return Ok(None);
    };
    // What the store cannot take now waits in the cache root for a later process.
    let spool_root = match args.no_cache {
        true => None,
        false => coret::cache::cache_root(args.cache_dir.as_deref()).ok(),
    };
    let store = SharedVectors::connect(url, spool_root.as_deref()).map_err(|e| Usage(e.to_string()))?;
    Ok(STORE.get_or_init(|| Some(SharedHandle(store))).clone())
}

pub fn fusion_params(args: &Args) -> coret::rank::fusion::FusionParams {
    let params = coret::rank::fusion::FusionParams {
        method: args.fusion,
        rrf_k: args.rrf_k,
        dense_weight: args.dense_weight,
        static_weight: args.static_weight,
        mixed_static_weight: args.mixed_static_weight,
        path_boost: args.path_boost,
        symbol_boost: args.symbol_boost,
        name_boost: args.name_boost,
        path_word_boost: args.path_word_boost,
        test_weight: args.test_weight,
        history_weight: args.history_weight,
        graph_weight: args.graph_weight,
        module_weight: args.module_weight,
        history: coret::history::HistoryParams {
            top_commits: args.history_commits.max(1),
            max_files: args.history_max_files.max(1),
            sum: args.history_sum,
        },
        signals: coret::rank::layer::SignalWeights {
            question_dense: args.question_dense,
            name_dense: args.name_dense,
            inline_name: args.inline_name,
            file_evidence: args.file_evidence,
            file_decay: args.file_decay,
            role_prior: args.role_prior,
            on_issues: args.signals_on_issues,
        },
        ..Default::default()
    };
    match args.no_ranking_layer {
        true => params.without_ranking_layer(),
        false => params,
    }
}

/// The static tier's table: `--static-table FILE`, else the one built in. A missing, truncated
/// or foreign file is an error naming it and the command that rebuilds it.
pub fn load_static(args: &Args) -> anyhow::Result<Arc<StaticTable>> {
    let table = match &args.static_table {
        // The user's file: a bad one is their input (exit 2), named with the command that rebuilds it.
        Some(path) => StaticTable::load(path).map_err(|e| Usage(format!("--static-table: {e}")))?,
        None => StaticTable::builtin()?,
    };
    Ok(Arc::new(table))
}

/// Where the engine's progress lines (model provisioning) go: stderr.
pub fn log_line(line: &str) {
    eprintln!("coret: {line}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use coret::model::Precision;

    #[test]
    fn auto_over_a_store_is_f32_on_every_machine_and_a_named_precision_stands() {
        let parse =
            |a: &[&str]| Args::try_parse_from(std::iter::once("coret-tui").chain(a.iter().copied())).unwrap();
        let store = "--store=postgres://u@h/db";
        assert_eq!(store_precision(&parse(&[".", store])), Precision::F32);
        assert_eq!(store_precision(&parse(&[".", store, "--precision", "bf16"])), Precision::Bf16);
        let alone = parse(&["."]);
        if alone.store.is_none() {
            // Without a store (CORET_STORE unset), auto stays the machine's own choice.
            assert_eq!(store_precision(&alone), Precision::Auto);
        }
    }
}
