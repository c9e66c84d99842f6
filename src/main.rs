//! `coret-tui`: a thin shell over the `coret` engine. Argument parsing and output live in
//! `cli/`; everything that knows about code lives in the library.

mod cli;

fn main() {
    // A reader that closes the pipe (`coret-tui … | head`) ends the program as it ends `cat`:
    // quietly, by SIGPIPE (exit 141), not with a "failed printing to stdout" panic.
    #[cfg(unix)]
    // SAFETY: restoring a signal's default disposition before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    std::process::exit(cli::run());
}
