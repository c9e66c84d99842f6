//! The embedding pipeline: tokenising, padding and the forward pass overlap.
//!
//! A producer thread tokenises a window of inputs on every core (rayon), sorts the window by
//! token length, cuts it into batches that pad little and pads them in host memory, then
//! sends them through a bounded channel; the calling thread copies each batch to the device,
//! runs the forward pass and hands the vectors over with their inputs' indices (the order is
//! restored by the caller). So the forward pass never waits for a tokenizer between batches
//! (a GPU's would, for every batch, in a tokenise-then-embed loop), and at most [`DEPTH`]
//! padded batches wait in memory. Windows start at two batches, so the first vectors come
//! quickly (query-first searches), and double up to a few thousand inputs, where sorting a
//! window saves nearly all the padding a global sort would.
//!
//! Every embedding goes through here: indexing (`rank::dense_retriever`), query-first candidates, queries,
//! the reranker, validation and `--bench embed`.

use std::collections::VecDeque;
use std::sync::mpsc::sync_channel;
use std::time::Instant;

use rayon::prelude::*;

use super::encoder::{BatchRows, Encoder};
use super::pool::HostBatch;
use super::tokenize::{EncoderInput, TokenizedInput};
use crate::error::{Error, Result};
use crate::progress::{Phase, Progress};

/// Padded batches queued for the forward pass.
pub const DEPTH: usize = 4;
/// The largest window, in batches (and at least [`MIN_WINDOW_CAP`] inputs).
const WINDOW_BATCHES: usize = 16;
const MIN_WINDOW_CAP: usize = 2048;

/// Tokenises input `i` of a run; an error should name the input (see `Encoder::embed_inputs`).
pub type Tokenize<'a> = dyn Fn(usize) -> Result<TokenizedInput> + Sync + 'a;

/// Where a run's time went. The producer's figures are summed over its windows; the forward
/// thread's `starved_s` is time spent waiting for a batch (the tokenizer bounds the run) and
/// the producer's `blocked_s` time spent waiting for room in the channel (the forward pass
/// bounds it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StageTimes {
    pub sequences: usize,
    /// Real tokens, special tokens included.
    pub tokens: usize,
    /// Positions the forward pass computed, padding included.
    pub padded: usize,
    pub batches: usize,
    pub tokenize_s: f64,
    /// Sorting, planning and padding on the host.
    pub pad_s: f64,
    pub blocked_s: f64,
    /// Host-to-device copy, forward pass, pooling and the copy back.
    pub forward_s: f64,
    pub starved_s: f64,
    pub wall_s: f64,
}

/// A padded batch and the indices of its rows' inputs.
struct Ready {
    index: Vec<usize>,
    host: HostBatch,
    tokens: usize,
}

/// Embeds inputs `0..n` (`tokenize(i)` makes input `i`) in batches of at most `max_batch`
/// sequences (and the encoder's own limits). `on_batch(rows, done, tokens)` gets each batch's
/// vectors as `(input index, vector)` with the sequences and tokens done so far, once before
/// the first batch with none; an error from it, from `tokenize` or from the forward pass stops
/// the run (the producer stops at its next batch; nothing hangs) and is returned, and what
/// `on_batch` was handed before stays with the caller.
pub fn run(
    encoder: &Encoder,
    n: usize,
    max_batch: usize,
    tokenize: &Tokenize,
    on_batch: &mut dyn FnMut(BatchRows, usize, usize) -> Result<()>,
) -> Result<StageTimes> {
    let start = Instant::now();
    let batch = encoder.batch_size().min(max_batch).max(1);
    let first = 2 * batch;
    let mut times = StageTimes::default();
    let result = if n <= first {
        // One window: nothing to overlap, so no thread (a query's latency).
        let mut queue = VecDeque::new();
        produce(encoder, n, batch, tokenize, &mut times, &mut |m| {
            queue.push_back(m);
            true
        });
        consume(encoder, &mut || queue.pop_front(), on_batch, &mut times)
    } else {
        std::thread::scope(|s| {
            let (tx, rx) = sync_channel(DEPTH);
            let producer = s.spawn(move || {
                let mut times = StageTimes::default();
                produce(encoder, n, batch, tokenize, &mut times, &mut |m| tx.send(m).is_ok());
                times
            });
            let result = consume(encoder, &mut || rx.recv().ok(), on_batch, &mut times);
            // A consumer that stopped early unblocks the producer's next send.
            drop(rx);
            let made = producer
                .join()
                .map_err(|_| Error::invalid("the embedding pipeline's tokenizer thread panicked"))?;
            (times.tokenize_s, times.pad_s, times.blocked_s) = (made.tokenize_s, made.pad_s, made.blocked_s);
            result
        })
    };
    times.wall_s = start.elapsed().as_secs_f64();
    result.map(|()| times)
}

/// The producer: windows tokenised in parallel, sorted, batched, padded and sent in order.
/// Stops after sending an error or when `send` says the consumer is gone.
fn produce(
    encoder: &Encoder,
    n: usize,
    batch: usize,
    tokenize: &Tokenize,
    times: &mut StageTimes,
    send: &mut dyn FnMut(Result<Ready>) -> bool,
) {
    let cap = (WINDOW_BATCHES * batch).max(MIN_WINDOW_CAP);
    let (mut from, mut window) = (0, 2 * batch);
    while from < n {
        let to = (from + window).min(n);
        let t = Instant::now();
        let tokenized: Result<Vec<TokenizedInput>> = (from..to).into_par_iter().map(tokenize).collect();
        times.tokenize_s += t.elapsed().as_secs_f64();
        let tokenized = match tokenized {
            Ok(t) => t,
            Err(e) => {
                send(Err(e));
                return;
            }
        };
        let mut t = Instant::now();
        let mut order: Vec<usize> = (0..tokenized.len()).collect();
        order.sort_by_key(|&i| (tokenized[i].len(), i));
        let lens: Vec<usize> = order.iter().map(|&i| tokenized[i].len()).collect();
        for range in encoder.batch_plan(&lens, batch) {
            let rows = &order[range.clone()];
            let refs: Vec<&TokenizedInput> = rows.iter().map(|&i| &tokenized[i]).collect();
            let ready = Ready {
                index: rows.iter().map(|&i| from + i).collect(),
                host: HostBatch::pad(&refs, encoder.input_tokenizer().pad_id()),
                tokens: lens[range].iter().sum(),
            };
            times.pad_s += t.elapsed().as_secs_f64();
            t = Instant::now();
            if !send(Ok(ready)) {
                return;
            }
            times.blocked_s += t.elapsed().as_secs_f64();
            t = Instant::now();
        }
        from = to;
        window = (window * 2).min(cap);
    }
}

/// The forward thread: each batch as it comes, until the producer is done.
fn consume(
    encoder: &Encoder,
    next: &mut dyn FnMut() -> Option<Result<Ready>>,
    on_batch: &mut dyn FnMut(BatchRows, usize, usize) -> Result<()>,
    times: &mut StageTimes,
) -> Result<()> {
    on_batch(Vec::new(), 0, 0)?;
    loop {
        let t = Instant::now();
        let Some(ready) = next() else { return Ok(()) };
        times.starved_s += t.elapsed().as_secs_f64();
        let ready = ready?;
        let t = Instant::now();
        times.padded += ready.host.rows * ready.host.width;
        let rows = encoder.forward_host(ready.host)?;
        times.forward_s += t.elapsed().as_secs_f64();
        times.sequences += rows.len();
        times.tokens += ready.tokens;
        times.batches += 1;
        on_batch(ready.index.into_iter().zip(rows).collect(), times.sequences, times.tokens)?;
    }
}

#[cfg(test)]
#[path = "pipeline_tests.rs"]
mod tests;

/// The encoder's ways to embed, each through [`run`]: here, beside the pipeline they drive, so
/// that the encoder itself knows nothing of it.
impl Encoder {
    /// Unit vectors for queries, in order, at the encoder's max length.
    pub fn embed_queries(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        self.embed_queries_with_len(texts, self.max_len())
    }

    /// Like [`Encoder::embed_queries`] with its own max length (issues often run past
    /// the chunks' 256 tokens); clamped to the model's positions.
    pub fn embed_queries_with_len(&self, texts: &[String], max_len: usize) -> Result<Vec<Vec<f32>>> {
        let max_len = max_len.clamp(2, self.config().max_position_embeddings);
        let tokenize = |i: usize| {
            self.input_tokenizer().query(&texts[i], max_len).map_err(|e| name_input("query", i, &texts[i], e))
        };
        self.embed_with(texts.len(), &tokenize, &mut |_, _| Ok(()))
    }

    /// Unit vectors for chunk inputs, in order. Reports `Phase::Embed` as batches finish
    /// and stops with [`Error::Cancelled`] once `progress.cancelled()`. An empty text embeds
    /// as `[CLS] [SEP]`; a text past the max length is truncated (`tokenize`); a text the
    /// tokenizer rejects stops the run with an error naming the input.
    pub fn embed_inputs(&self, inputs: &[EncoderInput], progress: &dyn Progress) -> Result<Vec<Vec<f32>>> {
        let total = inputs.len();
        progress.report(Phase::Embed, 0, total);
        let tokenize = |i: usize| {
            self.tokenize_input(&inputs[i]).map_err(|e| name_input("input", i, &inputs[i].chunk, e))
        };
        self.embed_with(total, &tokenize, &mut |done, _| {
            if progress.cancelled() {
                return Err(Error::Cancelled);
            }
            progress.report(Phase::Embed, done, total);
            Ok(())
        })
    }

    /// Embeds already tokenised sequences, in order. `after_batch(items, tokens)` runs after
    /// each batch with the sequences and tokens done so far (and once before the first, with
    /// zeros) and may stop the run with an error.
    pub fn embed_tokenized(
        &self,
        items: &[TokenizedInput],
        after_batch: &mut dyn FnMut(usize, usize) -> Result<()>,
    ) -> Result<Vec<Vec<f32>>> {
        self.embed_with(items.len(), &|i| Ok(items[i].clone()), after_batch)
    }

    /// `n` inputs through the pipeline, vectors back in input order.
    fn embed_with(
        &self,
        n: usize,
        tokenize: &Tokenize,
        after_batch: &mut dyn FnMut(usize, usize) -> Result<()>,
    ) -> Result<Vec<Vec<f32>>> {
        let mut out = vec![Vec::new(); n];
        run(self, n, usize::MAX, tokenize, &mut |rows, done, tokens| {
            for (i, row) in rows {
                out[i] = row;
            }
            after_batch(done, tokens)
        })?;
        Ok(out)
    }

    /// Embeds sequences batch by batch (through the pipeline, grouped by length), handing
    /// each batch's vectors to `on_batch(rows, items, tokens)` as `(index into items, vector)`
    /// with the sequences and tokens done so far (called once before the first batch with
    /// none). An error from it stops the run; what it was handed before stays with the caller
    /// (an interrupted embedding keeps its finished batches).
    pub fn embed_tokenized_each(
        &self,
        items: &[TokenizedInput],
        on_batch: &mut dyn FnMut(BatchRows, usize, usize) -> Result<()>,
    ) -> Result<()> {
        run(self, items.len(), usize::MAX, &|i| Ok(items[i].clone()), on_batch).map(|_| ())
    }
}

/// A tokenizer's error with the input it failed on: its index and its first line, shortened.
fn name_input(what: &str, i: usize, text: &str, e: Error) -> Error {
    let first: String = text.lines().next().unwrap_or("").chars().take(60).collect();
    Error::context(format!("tokenising {what} {i} ({first:?})"), e)
}
