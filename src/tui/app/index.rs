//! What the app knows about indexing: state, the current phase's progress, rate and ETA.

use crate::progress::{EmbedWork, Phase};
use std::time::{Duration, Instant};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IndexState {
    /// Nothing searchable yet.
    Indexing,
    /// BM25 is searchable; the dense index is building (or failed: see `dense_error`).
    Bm25Only,
    /// Both retrievers are ready.
    Ready,
    /// Nothing is searchable.
    Failed(String),
}

/// Progress of the current phase. Times come with the actions, so this stays deterministic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhaseProgress {
    pub phase: Phase,
    pub done: usize,
    pub total: usize,
    pub started: Instant,
    pub last: Instant,
    /// Embedding only: its tokens, which time follows (chunks differ tenfold in length).
    pub work: Option<EmbedWork>,
}

impl PhaseProgress {
    pub fn ratio(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            (self.done as f64 / self.total as f64).clamp(0.0, 1.0)
        }
    }

    /// Items per second since the phase started.
    pub fn rate(&self) -> Option<f64> {
        let secs = self.last.duration_since(self.started).as_secs_f64();
        (secs > 0.2 && self.done > 0).then(|| self.done as f64 / secs)
    }

    /// Time left at the rate so far: in tokens when the phase reports them, else in items.
    pub fn eta(&self) -> Option<Duration> {
        if let Some(w) = self.work.filter(|w| w.tokens_total > 0) {
            let secs = self.last.duration_since(self.started).as_secs_f64();
            if secs <= 0.2 || w.tokens_done == 0 {
                return None;
            }
            let left = w.tokens_total.saturating_sub(w.tokens_done) as f64;
            return Some(Duration::from_secs_f64(left * secs / w.tokens_done as f64));
        }
        let rate = self.rate()?;
        Some(Duration::from_secs_f64(self.total.saturating_sub(self.done) as f64 / rate))
    }
}

#[derive(Clone, Debug)]
pub struct IndexStatus {
    pub state: IndexState,
    pub progress: Option<PhaseProgress>,
    /// Set when the dense side failed after BM25 was ready.
    pub dense_error: Option<String>,
    /// Files seen by the walk / parse phases.
    pub files: Option<usize>,
    /// Chunks seen by the later phases (and the backend's count once ready).
    pub chunks: Option<usize>,
    pub info: Option<String>,
    /// The dense index answers but is partial: the rest is still embedding in the background
    /// (query-first), so the gauge stays and the state says how far it is.
    pub dense_partial: bool,
    /// Query-first: how far the chunks the latest search needs are embedded (what the dense
    /// column waits for); `None` until the builder takes the search's request.
    pub first: Option<FirstProgress>,
}

/// The chunks one search needs, embedded ahead of the rest: `done` of `total`, and when.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FirstProgress {
    pub done: usize,
    pub total: usize,
    pub started: Instant,
    pub last: Instant,
}

impl FirstProgress {
    /// Time left at the rate so far (`None` before the first chunks are done).
    pub fn eta(&self) -> Option<Duration> {
        let secs = self.last.duration_since(self.started).as_secs_f64();
        (secs > 0.2 && self.done > 0).then(|| {
            Duration::from_secs_f64(self.total.saturating_sub(self.done) as f64 * secs / self.done as f64)
        })
    }
}

impl Default for IndexStatus {
    fn default() -> Self {
        IndexStatus {
            state: IndexState::Indexing,
            progress: None,
            dense_error: None,
            files: None,
            chunks: None,
            info: None,
            dense_partial: false,
            first: None,
        }
    }
}

impl IndexStatus {
    pub fn record(&mut self, phase: Phase, done: usize, total: usize, at: Instant) {
        match phase {
            Phase::Walk | Phase::Parse => self.files = Some(total),
            Phase::CallGraph | Phase::Bm25 | Phase::Embed => self.chunks = Some(total),
            Phase::Instances => {}
        }
        match &mut self.progress {
            Some(p) if p.phase == phase => {
                p.done = done;
                p.total = total;
                p.last = at;
            }
            _ => {
                self.progress = Some(PhaseProgress { phase, done, total, started: at, last: at, work: None })
            }
        }
    }

    /// Embedding work arrives beside the `Phase::Embed` reports; kept with them.
    pub fn record_embed_work(&mut self, work: EmbedWork, at: Instant) {
        if let Some(p) = self.progress.as_mut().filter(|p| p.phase == Phase::Embed) {
            p.work = Some(work);
            p.last = at;
        }
    }

    /// A search's own chunks: a report that starts over (`done` 0, or another total) starts
    /// the clock.
    pub fn record_first(&mut self, done: usize, total: usize, at: Instant) {
        match &mut self.first {
            Some(f) if f.total == total && done >= f.done && done > 0 => (f.done, f.last) = (done, at),
            _ => self.first = Some(FirstProgress { done, total, started: at, last: at }),
        }
    }

    /// Whether the progress gauge should be on screen.
    pub fn busy(&self) -> bool {
        match self.state {
            IndexState::Indexing => true,
            IndexState::Bm25Only => self.dense_error.is_none(),
            IndexState::Ready => self.dense_partial,
            IndexState::Failed(_) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_and_eta_follow_the_phase_clock() {
        let t0 = Instant::now();
        let mut s = IndexStatus::default();
        s.record(Phase::Embed, 0, 1000, t0);
        assert_eq!(s.progress.as_ref().unwrap().rate(), None, "no rate before any time passed");
        s.record(Phase::Embed, 200, 1000, t0 + Duration::from_secs(2));
        let p = s.progress.as_ref().unwrap();
        assert_eq!(p.rate(), Some(100.0));
        assert_eq!(p.eta(), Some(Duration::from_secs(8)));
        assert_eq!(s.chunks, Some(1000));
    }

    /// Short chunks first made the chunk rate promise 0:19 on a run that took 139 s: the ETA
    /// follows tokens, and cached vectors are neither work left nor speed.
    #[test]
    fn the_embedding_eta_follows_tokens_not_chunks() {
        let t0 = Instant::now();
        let mut s = IndexStatus::default();
        s.record(Phase::Embed, 0, 1000, t0);
        let work = EmbedWork { cached: 5120, tokens_done: 0, tokens_total: 100_000 };
        s.record_embed_work(work, t0);
        // Half the chunks in 10 s, but the short half: a tenth of the tokens.
        s.record(Phase::Embed, 500, 1000, t0 + Duration::from_secs(10));
        s.record_embed_work(EmbedWork { tokens_done: 10_000, ..work }, t0 + Duration::from_secs(10));
        let p = s.progress.as_ref().unwrap();
        assert_eq!(p.eta(), Some(Duration::from_secs(90)), "by chunks it would say 10 s");
        assert_eq!(p.work.unwrap().cached, 5120);
    }

    #[test]
    fn a_new_phase_restarts_the_clock() {
        let t0 = Instant::now();
        let mut s = IndexStatus::default();
        s.record(Phase::Parse, 5, 10, t0);
        s.record(Phase::Bm25, 1, 50, t0 + Duration::from_secs(3));
        let p = s.progress.as_ref().unwrap();
        assert_eq!((p.phase, p.started), (Phase::Bm25, t0 + Duration::from_secs(3)));
        assert_eq!(s.files, Some(10));
    }
}
