//! One progress mechanism for every client: the engine reports (phase, done, total);
//! clients (progress bar, TUI gauge) compute rates and ETA themselves.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    Walk,
    Parse,
    CallGraph,
    Bm25,
    Embed,
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Phase::Walk => "walk",
            Phase::Parse => "parse",
            Phase::CallGraph => "call graph",
            Phase::Bm25 => "bm25",
            Phase::Embed => "embed",
        })
    }
}

/// Receives progress reports. Must be cheap: it is called from worker threads.
pub trait Progress: Send + Sync {
    fn report(&self, phase: Phase, done: usize, total: usize);
    /// Clients set this (e.g. on Ctrl-C) to ask long phases to stop early.
    fn cancelled(&self) -> bool {
        false
    }
}

/// A sink that ignores everything.
pub struct NoProgress;

impl Progress for NoProgress {
    fn report(&self, _: Phase, _: usize, _: usize) {}
}

/// Passes on cancellation but no reports: for inner phases of a run whose progress is
/// reported at a coarser level (the eval's instances).
pub struct CancelOnly<'a>(pub &'a dyn Progress);

impl Progress for CancelOnly<'_> {
    fn report(&self, _: Phase, _: usize, _: usize) {}
    fn cancelled(&self) -> bool {
        self.0.cancelled()
    }
}
