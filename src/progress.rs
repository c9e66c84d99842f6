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
    /// Eval: instances scored.
    Instances,
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Phase::Walk => "walk",
            Phase::Parse => "parse",
            Phase::CallGraph => "call graph",
            Phase::Bm25 => "bm25",
            Phase::Embed => "embed",
            Phase::Instances => "instances",
        })
    }
}

/// What the embedding phase has to do beyond its chunk count: inputs differ tenfold in length,
/// so time follows tokens, not chunks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EmbedWork {
    /// Inputs whose vectors were already in the store (an interrupted run resumes here).
    pub cached: usize,
    /// Tokens of the inputs to embed, and of those embedded so far.
    pub tokens_done: usize,
    pub tokens_total: usize,
}

/// Receives progress reports. Must be cheap: it is called from worker threads.
pub trait Progress: Send + Sync {
    fn report(&self, phase: Phase, done: usize, total: usize);
    /// Sent beside `Phase::Embed` reports; clients that show no ETA ignore it.
    fn report_embed_work(&self, _work: EmbedWork) {}
    /// Query-first (`crate::rank::query_first`): the chunks one search needs, embedded ahead of the
    /// rest: `done` of `total` (the `Phase::Embed` reports go on counting the whole build).
    fn report_first(&self, _done: usize, _total: usize) {}
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

/// Passes on cancellation, and embedding progress only when there is embedding to do: inside
/// an eval, a cold snapshot shows its embedding (minutes on a CPU) and warm ones stay quiet.
pub struct EmbedOnly<'a>(pub &'a dyn Progress);

impl Progress for EmbedOnly<'_> {
    fn report(&self, phase: Phase, done: usize, total: usize) {
        if phase == Phase::Embed && total > 0 {
            self.0.report(phase, done, total);
        }
    }
    fn report_embed_work(&self, work: EmbedWork) {
        if work.tokens_total > 0 {
            self.0.report_embed_work(work);
        }
    }
    fn cancelled(&self) -> bool {
        self.0.cancelled()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Mutex;

    #[derive(Default)]
    struct Record(Mutex<Vec<(Phase, usize, usize)>>, AtomicBool);
    impl Progress for Record {
        fn report(&self, phase: Phase, done: usize, total: usize) {
            self.0.lock().unwrap().push((phase, done, total));
        }
        fn cancelled(&self) -> bool {
            self.1.load(Ordering::SeqCst)
        }
    }

    #[test]
    fn embed_only_passes_real_embedding_work_and_cancellation() {
        let outer = Record::default();
        let inner = EmbedOnly(&outer);
        inner.report(Phase::Parse, 3, 10);
        inner.report(Phase::Embed, 0, 0);
        inner.report(Phase::Embed, 5, 40);
        assert_eq!(*outer.0.lock().unwrap(), [(Phase::Embed, 5, 40)]);
        assert!(!inner.cancelled());
        outer.1.store(true, Ordering::SeqCst);
        assert!(inner.cancelled());
    }
}
