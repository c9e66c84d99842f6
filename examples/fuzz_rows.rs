//! Fuzzes every language row's chunker and call resolver at scale (issue 63): N mutated
//! fixtures per row (default 1,000,000), split over every core; prints inputs, failures and
//! time per row, writes failing inputs under target/fuzz/, exits 1 if any.
//!
//!   cargo run --release --example fuzz_rows -- [INPUTS_PER_ROW] [LANG,...]

use std::path::Path;
use std::time::Instant;

#[path = "../tests/support/fuzz.rs"]
mod fuzz;

use fuzz::{fixture_seeds, run, run_traced, Report};
use rayon::prelude::*;

/// Inputs per rayon task: big enough that seeding is noise, small enough to spread over cores.
const BLOCK: u64 = 5_000;

/// Two runs' counts together, the first failures kept.
fn merge(mut a: Report, b: Report) -> Report {
    a.inputs += b.inputs;
    a.failures += b.failures;
    let room = fuzz::MAX_KEPT.saturating_sub(a.kept.len());
    a.kept.extend(b.kept.into_iter().take(room));
    a
}

fn main() {
    let mut args = std::env::args().skip(1);
    let inputs: u64 =
        args.next().map_or(1_000_000, |a| a.replace('_', "").parse().expect("INPUTS_PER_ROW is a number"));
    let only: Option<Vec<String>> = args.next().map(|l| l.split(',').map(str::to_string).collect());
    // A panic is caught and counted per input; its default message would flood the terminal.
    std::panic::set_hook(Box::new(|_| {}));
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut failed = false;
    println!("| row | seeds | inputs | failures | seconds |\n| --- | --- | --- | --- | --- |");
    for (lang, seeds) in fixture_seeds(root) {
        if only.as_ref().is_some_and(|o| !o.iter().any(|id| id == lang.id())) {
            continue;
        }
        let path = &seeds[0].0;
        let texts: Vec<String> = seeds.iter().map(|(_, t)| t.clone()).collect();
        let started = Instant::now();
        let blocks = inputs.div_ceil(BLOCK);
        // FUZZ_TRACE=FILE: one thread, each input written to FILE before it is checked, so that
        // an abort inside a grammar's C code (which no unwinding catches) leaves its input there.
        let trace = std::env::var_os("FUZZ_TRACE");
        let block = |b: u64| {
            let n = BLOCK.min(inputs - b * BLOCK);
            match &trace {
                Some(file) => run_traced(path, &texts, n, b, Path::new(file)),
                None => run(path, &texts, n, b),
            }
        };
        let total = if trace.is_some() {
            (0..blocks).map(block).fold(Report::default(), merge)
        } else {
            (0..blocks).into_par_iter().map(block).reduce(Report::default, merge)
        };
        let secs = started.elapsed().as_secs_f64();
        println!("| {} | {} | {} | {} | {secs:.0} |", lang.name(), seeds.len(), total.inputs, total.failures);
        if total.failures > 0 {
            failed = true;
            let dir = root.join("target/fuzz");
            std::fs::create_dir_all(&dir).expect("target/fuzz");
            for (i, (problem, text)) in total.kept.iter().enumerate() {
                let file = dir.join(format!("{}-{i}.txt", lang.id()));
                std::fs::write(&file, text).expect("write a failing input");
                eprintln!("{}: {problem} (input: {})", lang.name(), file.display());
            }
        }
    }
    std::process::exit(i32::from(failed));
}
