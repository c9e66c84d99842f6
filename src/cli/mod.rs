//! Command-line front end: parses arguments and dispatches to a client of the engine.

mod args;
mod bench;
mod bench_dense;
mod bench_rerank;
mod bench_static;
mod bench_store;
mod checkouts;
mod peak_rss;

mod distill;
mod eval;
mod mcp;
mod mine;
mod model;
mod progress;
mod query;
mod query_many;
mod static_build;
mod static_harvest;
mod train;
mod train_rerank;
mod train_select;
mod tui;

use args::Args;
use coret::Error;

/// Runs the program; returns the process exit code (0 ok, 1 failure, 2 usage, 130 interrupted).
pub fn run() -> i32 {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    match check_flags(&args).and_then(|()| set_threads(args.0.threads)).and_then(|()| dispatch(args)) {
        Ok(()) => 0,
        Err(e) => {
            let code = exit_code(&e);
            eprintln!("coret-tui: {}", one_line(&e));
            code
        }
    }
}

/// The arguments, and whether `--cache-dir` was given on the command line (not by
/// `CORET_CACHE_DIR`, which a user sets once for every run).
fn parse() -> Result<(Args, bool), clap::Error> {
    use clap::{CommandFactory, FromArgMatches};
    let mut command = Args::command();
    // Only `--version` pays for the CPU's precision choice (read back, or measured once).
    // `args_os`: `args()` panics on an argument that is not UTF-8 (a Latin-1 path or query).
    if std::env::args_os().any(|a| a == "--version") {
        // Leaked once: clap keeps `&'static str`s, and the process ends right after printing.
        command = command.long_version(&*version_text().leak());
    }
    if let Some(e) = single_dash_long(&command) {
        return Err(e);
    }
    let matches = command.try_get_matches()?;
    let cache_dir_flag = matches.value_source("cache_dir") == Some(clap::parser::ValueSource::CommandLine);
    Ok((Args::from_arg_matches(&matches)?, cache_dir_flag))
}

/// `-query x` is read as `-q -u -e …` by any parser of short flags, and the error then names
/// `-q`. A single-dash word that is one of our long flags gets the error it deserves.
fn single_dash_long(command: &clap::Command) -> Option<clap::Error> {
    let longs: Vec<&str> = command.get_arguments().filter_map(|a| a.get_long()).collect();
    for arg in std::env::args_os().skip(1) {
        let Some(arg) = arg.to_str() else { continue };
        if arg == "--" {
            break;
        }
        let word =
            arg.strip_prefix('-').filter(|w| !w.starts_with('-')).map(|w| w.split('=').next().unwrap_or(w));
        if let Some(word) = word.filter(|w| w.len() > 1 && longs.contains(w)) {
            let message =
                format!("`{arg}` is not an option: did you mean `--{word}`? (long options take two dashes)");
            return Some(command.clone().error(clap::error::ErrorKind::UnknownArgument, message));
        }
    }
    None
}

/// `--version`: the version, then what the encoder's products run as on this machine.
fn version_text() -> String {
    let cpu = coret::model::precision_choice::cpu_choice();
    let cuda = if cfg!(feature = "cuda") { "built with CUDA (bf16 on a GPU)" } else { "built without CUDA" };
    let amx = match coret::model::cpu::amx_units() {
        units if units.is_empty() => String::new(),
        units => format!(
            "\namx tiles reported ({}): not used (untested here), the kernels above run",
            units.join(", ")
        ),
    };
    format!(
        "{}\ncpu products: {}, f32 on {}{amx}\n{cuda}",
        env!("CARGO_PKG_VERSION"),
        cpu.describe(),
        coret::model::cpu::f32_isa()
    )
}

/// Flags that contradict each other: a usage error naming both, before any work.
fn check_flags((args, cache_dir_flag): &(Args, bool)) -> anyhow::Result<()> {
    if args.no_cache && *cache_dir_flag {
        anyhow::bail!(Usage(
            "--no-cache and --cache-dir contradict each other (no cache, or this cache): give one".into()
        ));
    }
    if args.store_search {
        let why = if args.store.is_none() {
            Some("needs --store URL (or CORET_STORE)")
        } else if args.dense == args::DenseTierArg::Static {
            Some("ranks the transformer's vectors; --dense static ranks here at once")
        } else {
            None
        };
        if let Some(why) = why {
            anyhow::bail!(Usage(format!("--store-search {why}")));
        }
    }
    Ok(())
}

/// `--threads N`: the one pool every parallel step runs on (rayon's), and candle's own count,
/// set before any thread starts. Without it both use every core.
fn set_threads(threads: Option<usize>) -> anyhow::Result<()> {
    let Some(n) = threads else { return Ok(()) };
    // candle reads it for its CPU kernels; nothing else runs yet, so setting it is sound.
    std::env::set_var("RAYON_NUM_THREADS", n.to_string());
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build_global()
        .map_err(|e| anyhow::anyhow!("--threads {n}: {e}"))
}

fn dispatch((args, _): (Args, bool)) -> anyhow::Result<()> {
    // A store that cannot be used as given (URL, login, host, pgvector) fails before any work.
    model::shared_store(&args)?;
    if let Some(what) = args.bench.clone() {
        return bench::run(&args, &what);
    }
    if args.fetch_model {
        let dir = coret::model::resolve_model_dir(args.model.as_deref(), &model::log_line)?;
        println!("{}", dir.display());
        return Ok(());
    }
    if let Some(out) = args.static_harvest.clone() {
        return static_harvest::run(&args, &out);
    }
    if let Some(out) = args.distill_student.clone() {
        return distill::run(&args, &out);
    }
    if let Some(out) = args.static_build.clone() {
        return static_build::run(&args, &out);
    }
    if args.mine.is_some() {
        return mine::run(&args);
    }
    if args.train.is_some() {
        return train::run(&args);
    }
    if args.eval.is_some() {
        return eval::run(&args);
    }
    if args.query.is_some() {
        return match checkouts::of(&args)?.as_slice() {
            [one] => query::run(&args, one),
            many => query_many::run(&args, many),
        };
    }
    if args.mcp {
        return match checkouts::of(&args)?.as_slice() {
            [one] => mcp::run(&args, one),
            many => mcp::run_several(&args, many),
        };
    }
    if args.json {
        return Err(Usage("--json prints a headless query's results: add --query TEXT".into()).into());
    }
    tui::run(&args, &checkouts::of(&args)?)
}

/// A command line that asks for something impossible or contradictory: exit 2. Usage is the
/// CLI's business; the engine reports what went wrong and [`exit_code`] decides.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Usage(pub String);

/// 2 for the user's input (flags, a path with no source file of a supported language, training that cannot
/// resume), 130 for an interrupt, 1 for everything else.
fn exit_code(e: &anyhow::Error) -> i32 {
    if e.downcast_ref::<Usage>().is_some() {
        return 2;
    }
    match e.downcast_ref::<Error>() {
        Some(
            Error::Root { .. }
            | Error::NoSourceFiles { .. }
            | Error::NoSourceHistory { .. }
            | Error::NoCheckpoint { .. }
            | Error::ResumeMismatch(_)
            | Error::NoExamples
            | Error::IncompatibleShard { .. },
        ) => 2,
        Some(Error::Cancelled) => 130,
        _ => 1,
    }
}

/// The error and its causes on one line; a cause its parent's message already ends with (an
/// I/O error after its path) is not repeated.
fn one_line(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if line.ends_with(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Error as IoError, ErrorKind};

    #[test]
    fn an_io_error_is_printed_once_after_its_path() {
        let e =
            anyhow::Error::new(Error::io("/data/model", IoError::new(ErrorKind::PermissionDenied, "denied")));
        assert_eq!(one_line(&e), "/data/model: denied");
        let wrapped = e.context("loading the model");
        assert_eq!(one_line(&wrapped), "loading the model: /data/model: denied");
    }

    #[test]
    fn the_cli_decides_which_engine_errors_are_usage() {
        let code = |e: Error| exit_code(&anyhow::Error::new(e));
        assert_eq!(
            code(Error::NoSourceFiles { root: "/tmp/x".into(), unreadable: false, langs: "Python".into() }),
            2
        );
        let missing = IoError::new(ErrorKind::NotFound, "missing");
        assert_eq!(code(Error::Root { path: "/nope".into(), source: missing }), 2);
        assert_eq!(code(Error::Cancelled), 130);
        assert_eq!(code(Error::context("bm25 index", "corrupt")), 1);
        assert_eq!(exit_code(&anyhow::Error::new(Usage("--top 0".into()))), 2);
        let source = Error::context("model.safetensors", IoError::other("short read"));
        assert!(std::error::Error::source(&source).is_some(), "the library's error is kept as the source");
    }
}
