//! `coret-tui --mcp [PATH]`: the Model Context Protocol server on stdin/stdout (`coret::mcp`).
//! The repository is indexed before the server starts (a bad PATH is a usage error, exit 2);
//! the model loads and the dense index builds on a background thread while BM25 answers.

use super::args::{Args, DenseTierArg};
use super::model::{check_model_flags, dense_options, fusion_params};
use super::Usage;
use anyhow::Context;
use coret::index::Retriever;
use coret::mcp::{Attached, Backend, DenseSetup, Several, Workspace, WorkspaceOptions};
use coret::rank::searcher::SearchModels;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub fn run(args: &Args, path: &Path) -> anyhow::Result<()> {
    let (default_retriever, ws_opts) = options(args)?;
    let opts = ws_opts.index.clone();
    // Servers on one checkout with the same flags share one index: the first owns it, the
    // others attach (coret::mcp::owner). No cache, nothing shared: every server is its own.
    let owners = coret::engine::cache_entry_of(path, &opts)?
        .map(|entry| coret::mcp::owner::owner_dir(&entry, &format!("{args:?}")));
    let claimed = match &owners {
        Some(dir) => Some(coret::mcp::owner::claim(dir).with_context(|| format!("{}", dir.display()))?),
        None => None,
    };
    // The owner's lock is held as long as the server runs; the kernel drops it when it ends.
    let (backend, _owner_lock) = match (&owners, claimed) {
        (Some(dir), Some(None)) => {
            let pid = coret::mcp::owner::owner_pid(dir).map_or(String::new(), |p| format!(" (process {p})"));
            eprintln!(
                "coret-tui: serving {} over MCP on stdio, attached to the server that owns it{pid}",
                path.display()
            );
            let root = std::fs::canonicalize(path)?;
            let (args, ws_opts, path) = (args.clone(), ws_opts.clone(), path.to_path_buf());
            let make: coret::mcp::MakeWorkspace = Box::new(move || {
                let index =
                    coret::engine::RepoIndex::open(&path, &ws_opts.index, &coret::progress::NoProgress)?;
                let dense = dense_setup(&args, default_retriever, LoadOnce::default())
                    .map_err(|e| coret::Error::invalid(format!("{e:#}")))?;
                Workspace::new(index, ws_opts, dense)
            });
            (Backend::Attached(Arc::new(Attached::new(root, dir.clone(), make))), None)
        }
        (_, lock) => {
            let index = super::query::open_index_at(path, &opts)?;
            eprintln!("coret-tui: serving {}", serving(&index));
            let workspace = Arc::new(Workspace::new(
                index,
                ws_opts,
                dense_setup(args, default_retriever, LoadOnce::default())?,
            )?);
            let held = match (&owners, lock) {
                (Some(dir), Some(Some(lock))) => {
                    match coret::mcp::owner::serve(dir, &lock, workspace.clone()) {
                        Ok(()) => Some(lock),
                        // Dropping the lock lets the next server own the checkout instead.
                        Err(e) => {
                            eprintln!(
                            "note: other servers on this checkout cannot attach to this one ({}: {e}); each keeps its own index",
                            dir.display()
                        );
                            None
                        }
                    }
                }
                _ => None,
            };
            (Backend::Own(workspace), held)
        }
    };
    serve(backend)
}

/// `--mcp DIR1 DIR2 …` (or a workspace file): one workspace per checkout in this process, no
/// owner shared with other servers (an owner serves one checkout's calls); the towers loaded
/// once for all.
pub fn run_several(args: &Args, paths: &[PathBuf]) -> anyhow::Result<()> {
    let (default_retriever, ws_opts) = options(args)?;
    let names = super::checkouts::names(paths);
    let load = LoadOnce::default();
    let mut checkouts = Vec::new();
    for (name, path) in names.into_iter().zip(paths) {
        let index = super::query::open_index_at(path, &ws_opts.index)?;
        eprintln!("coret-tui: serving {name}: {}", serving(&index));
        let dense = dense_setup(args, default_retriever, load.clone())?;
        checkouts.push((name, Arc::new(Workspace::new(index, ws_opts.clone(), dense)?)));
    }
    serve(Backend::Several(Arc::new(Several { checkouts })))
}

/// `ROOT over MCP on stdio: N files, …` for the line a server prints as it starts.
fn serving(index: &coret::engine::RepoIndex) -> String {
    let s = &index.stats;
    format!(
        "{} over MCP on stdio: {} files, {} chunks, {} call edges ({})",
        index.root.display(),
        s.files,
        s.chunks,
        s.edges,
        s.cache.describe()
    )
}

/// The server's default retriever and its workspaces' options, from the flags.
fn options(args: &Args) -> anyhow::Result<(Option<Retriever>, WorkspaceOptions)> {
    let default_retriever = match args.retrievers_or(&[]).as_slice() {
        [] => None,
        [Retriever::History] => {
            anyhow::bail!(Usage(
                "--retriever history: the MCP server ranks with bm25, dense or hybrid".into()
            ))
        }
        [r] => Some(*r),
        _ => anyhow::bail!(Usage(
            "--retriever with --mcp: name one of bm25, dense or hybrid (what a call naming none gets)".into()
        )),
    };
    let index = super::query::index_options(args);
    Ok((default_retriever, WorkspaceOptions { index, fusion: fusion_params(args), default_retriever }))
}

/// Runs the server on stdio until the client closes it.
fn serve(backend: Backend) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the MCP server's async runtime")?;
    let served = runtime.block_on(coret::mcp::serve_stdio(backend));
    // A tool call still running on a blocking thread is not waited for.
    runtime.shutdown_timeout(Duration::from_secs(1));
    served.map_err(|e| anyhow::anyhow!("MCP server: {e}"))
}

/// The models, loaded by the first dense thread that asks and shared with the others (a
/// server over several checkouts runs one dense thread per checkout).
type LoadOnce = Arc<Mutex<Option<Result<SearchModels, String>>>>;

/// The dense side's setup (`None`: BM25 only): the towers' loader and the static tier.
fn dense_setup(
    args: &Args,
    default_retriever: Option<Retriever>,
    once: LoadOnce,
) -> anyhow::Result<Option<DenseSetup>> {
    if default_retriever == Some(Retriever::Bm25) {
        return Ok(None);
    }
    // Flags naming missing files are the user's mistake; a missing model only leaves BM25.
    check_model_flags(args, false)?;
    let model_args = args.clone();
    let load = Box::new(move || {
        let mut models = once.lock().unwrap_or_else(|p| p.into_inner());
        models
            .get_or_insert_with(|| super::model::load_models(&model_args).map_err(|e| format!("{e:#}")))
            .clone()
    });
    let static_table = match args.dense {
        DenseTierArg::Transformer => None,
        _ => match super::model::load_static(args) {
            Ok(t) => Some(t),
            Err(e) if args.dense == DenseTierArg::Auto => {
                eprintln!("note: {e:#}; the transformer serves alone");
                None
            }
            Err(e) => return Err(e),
        },
    };
    let static_only = args.dense == DenseTierArg::Static;
    let load = Box::new(move || match static_only {
        true => Err("--dense static: the static tier serves alone".to_string()),
        false => load(),
    });
    Ok(Some(DenseSetup { load, opts: dense_options(args), static_table }))
}
