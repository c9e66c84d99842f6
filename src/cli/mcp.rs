//! `coret-tui --mcp [PATH]`: the Model Context Protocol server on stdin/stdout (`coret::mcp`).
//! The repository is indexed before the server starts (a bad PATH is a usage error, exit 2);
//! the model loads and the dense index builds on a background thread while BM25 answers.

use super::args::{Args, DenseTierArg};
use super::model::{check_model_flags, dense_options, fusion_params};
use super::Usage;
use anyhow::Context;
use coret::index::Retriever;
use coret::mcp::{Attached, Backend, DenseSetup, Workspace, WorkspaceOptions};
use std::sync::Arc;
use std::time::Duration;

pub fn run(args: &Args) -> anyhow::Result<()> {
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
    let opts = super::query::index_options(args);
    let ws_opts = WorkspaceOptions { index: opts.clone(), fusion: fusion_params(args), default_retriever };
    // Servers on one checkout with the same flags share one index: the first owns it, the
    // others attach (coret::mcp::owner). No cache, nothing shared: every server is its own.
    let owners = coret::engine::cache_entry_of(&args.path, &opts)?
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
                args.path.display()
            );
            let root = std::fs::canonicalize(&args.path)?;
            let (args, ws_opts) = (args.clone(), ws_opts.clone());
            let make: coret::mcp::MakeWorkspace = Box::new(move || {
                let index =
                    coret::engine::RepoIndex::open(&args.path, &ws_opts.index, &coret::progress::NoProgress)?;
                let dense = dense_setup(&args, default_retriever)
                    .map_err(|e| coret::Error::invalid(format!("{e:#}")))?;
                Workspace::new(index, ws_opts, dense)
            });
            (Backend::Attached(Arc::new(Attached::new(root, dir.clone(), make))), None)
        }
        (_, lock) => {
            let index = super::query::open_index(args, &opts)?;
            let s = &index.stats;
            eprintln!(
                "coret-tui: serving {} over MCP on stdio: {} files, {} chunks, {} call edges ({})",
                index.root.display(),
                s.files,
                s.chunks,
                s.edges,
                s.cache.describe()
            );
            let workspace = Arc::new(Workspace::new(index, ws_opts, dense_setup(args, default_retriever)?)?);
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
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the MCP server's async runtime")?;
    let served = runtime.block_on(coret::mcp::serve_stdio(backend));
    // A tool call still running on a blocking thread is not waited for.
    runtime.shutdown_timeout(Duration::from_secs(1));
    served.map_err(|e| anyhow::anyhow!("MCP server: {e}"))
}

/// The dense side's setup (`None`: BM25 only): the towers' loader and the static tier.
fn dense_setup(args: &Args, default_retriever: Option<Retriever>) -> anyhow::Result<Option<DenseSetup>> {
    if default_retriever == Some(Retriever::Bm25) {
        return Ok(None);
    }
    // Flags naming missing files are the user's mistake; a missing model only leaves BM25.
    check_model_flags(args, false)?;
    let model_args = args.clone();
    let load = Box::new(move || super::model::load_models(&model_args).map_err(|e| format!("{e:#}")));
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
