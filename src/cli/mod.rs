//! Command-line front end: parses arguments and dispatches to a client of the engine.

mod args;
mod bench;
mod bench_dense;

mod eval;
mod model;
mod progress;
mod query;
mod train;
mod train_query;
mod tui;

use args::Args;
use clap::Parser;
use coret::Error;

/// Runs the program; returns the process exit code (0 ok, 1 failure, 2 usage, 130 interrupted).
pub fn run() -> i32 {
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    match dispatch(args) {
        Ok(()) => 0,
        Err(e) => {
            let code = exit_code(&e);
            eprintln!("coret-tui: {}", one_line(&e));
            code
        }
    }
}

fn dispatch(args: Args) -> anyhow::Result<()> {
    if let Some(what) = args.bench.clone() {
        return bench::run(&args, &what);
    }
    if args.fetch_model {
        let dir = coret::model::resolve_model_dir(args.model.as_deref(), &model::log_line)?;
        println!("{}", dir.display());
        return Ok(());
    }
    if args.train.is_some() {
        return match args.tower.as_str() {
            "query" => train_query::run(&args),
            "tied" => train::run(&args),
            other => Err(Error::Usage(format!("--tower {other}: expected tied or query")).into()),
        };
    }
    if args.eval.is_some() {
        return eval::run(&args);
    }
    if args.query.is_some() {
        return query::run(&args);
    }
    tui::run(&args)
}

fn exit_code(e: &anyhow::Error) -> i32 {
    match e.downcast_ref::<Error>() {
        Some(Error::Usage(_)) => 2,
        Some(Error::Cancelled) => 130,
        _ => 1,
    }
}

/// The error and its causes on one line.
fn one_line(e: &anyhow::Error) -> String {
    e.chain().map(|c| c.to_string()).collect::<Vec<_>>().join(": ")
}
