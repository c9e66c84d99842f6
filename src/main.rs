//! `coret-tui`: a thin shell over the `coret` engine. Argument parsing and output live in
//! `cli/`; everything that knows about code lives in the library.

mod cli;

fn main() {
    std::process::exit(cli::run());
}
