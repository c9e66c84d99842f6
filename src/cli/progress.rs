//! Progress on stderr: a bar with rate and ETA on a terminal, nothing on a pipe. Ctrl-C asks
//! the engine to stop; it then returns `Error::Cancelled` without touching the cache.

use coret::progress::{Phase, Progress};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// The process's Ctrl-C flag. The handler is installed once: a second `set_handler` fails,
/// and a bar made after the first used to miss every Ctrl-C.
fn cancel_flag() -> Arc<AtomicBool> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    FLAG.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let seen = flag.clone();
        // A second Ctrl-C while stopping exits at once. The first says what happens next:
        // a training update in hand can take minutes on a CPU, and a user who sees nothing
        // presses again and loses it.
        let _ = ctrlc::set_handler(move || {
            if seen.swap(true, Ordering::SeqCst) {
                std::process::exit(130);
            }
            eprintln!("\ncoret-tui: stopping after the work in hand, keeping what is done (Ctrl-C again quits at once)");
        });
        flag
    })
    .clone()
}

pub struct BarProgress {
    bar: Option<ProgressBar>,
    phase: Mutex<Option<Phase>>,
    cancel: Arc<AtomicBool>,
}

impl BarProgress {
    /// A bar when stderr is a terminal; every bar shares the process's one Ctrl-C flag.
    pub fn new() -> Self {
        Self::noting("")
    }

    /// A bar whose counts say what they count (`embed 0/513 this query's chunks, of 19,974`:
    /// issue 81, a query-first embedding is not the repository's).
    pub fn noting(note: &str) -> Self {
        let cancel = cancel_flag();
        let note = note.replace('{', "{{").replace('}', "}}");
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template(&format!(
                    "{{msg:>10}} [{{bar:30}}] {{pos}}/{{len}}{note}{{rate}}"
                ))
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .with_key("rate", rate_and_eta)
                .progress_chars("=> "),
            );
            bar
        });
        BarProgress { bar, phase: Mutex::new(None), cancel }
    }

    /// Prints a line above the bar (or to stderr without one).
    pub fn println(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.println(line),
            None => eprintln!("{line}"),
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// ` · 12/s · ETA 1:05`, once there is a rate to speak of (nothing at `0/47`, whole numbers).
fn rate_and_eta(state: &ProgressState, w: &mut dyn std::fmt::Write) {
    if state.pos() == 0 || state.elapsed().as_secs_f64() < 0.5 {
        return;
    }
    let _ = write!(w, " · {:.0}/s", state.per_sec());
    if state.len().is_some_and(|len| state.pos() < len) {
        let s = state.eta().as_secs();
        let _ = write!(w, " · ETA {}:{:02}", s / 60, s % 60);
    }
}

impl Progress for BarProgress {
    fn report(&self, phase: Phase, done: usize, total: usize) {
        let Some(bar) = &self.bar else { return };
        let mut current = self.phase.lock().unwrap_or_else(|p| p.into_inner());
        if *current != Some(phase) {
            *current = Some(phase);
            bar.reset();
            bar.set_message(phase.to_string());
        }
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    }

    fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }
}
