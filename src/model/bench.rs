//! Embedding throughput, for a CLI flag and for comparison with sentence-transformers
//! (`scripts/bench/bench_sentence_transformers.py` reads the same JSONL of texts). `bench_stages`
//! times the tokenizer, the forward pass and the pipeline apart (issue 62).

use std::fmt;
use std::io::BufRead;
use std::path::Path;
use std::time::Instant;

use rayon::prelude::*;

use super::encoder::Encoder;
use super::pipeline::{self, StageTimes};
use super::tokenize::{EncoderInput, TokenizedInput};
use crate::error::{Error, Result};
use crate::progress::NoProgress;

#[derive(Clone, Debug, PartialEq)]
pub struct EmbedBenchReport {
    pub chunks: usize,
    /// Real (unpadded) tokens, special tokens included.
    pub tokens: usize,
    pub seconds: f64,
    pub chunks_per_s: f64,
    pub tokens_per_s: f64,
    /// The process's CPU time over the same span (0 where unknown): on a shared machine wall
    /// time says more about the neighbours than about the code.
    pub cpu_seconds: f64,
}

impl fmt::Display for EmbedBenchReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "embedded {} chunks ({} tokens) in {:.2} s: {:.1} chunks/s, {:.0} tokens/s",
            self.chunks, self.tokens, self.seconds, self.chunks_per_s, self.tokens_per_s
        )?;
        if self.cpu_seconds > 0.0 {
            write!(
                f,
                "; {:.2} CPU-s, {:.0} tokens/CPU-s",
                self.cpu_seconds,
                self.tokens as f64 / self.cpu_seconds
            )?;
        }
        Ok(())
    }
}

impl EmbedBenchReport {
    fn new(chunks: usize, tokens: usize, seconds: f64) -> Self {
        let per_s = |n: usize| if seconds > 0.0 { n as f64 / seconds } else { 0.0 };
        let (chunks_per_s, tokens_per_s) = (per_s(chunks), per_s(tokens));
        EmbedBenchReport { chunks, tokens, seconds, chunks_per_s, tokens_per_s, cpu_seconds: 0.0 }
    }

    fn with_cpu(mut self, cpu_seconds: f64) -> Self {
        self.cpu_seconds = cpu_seconds;
        self
    }
}

/// This process's CPU time in seconds, all threads (0 off Unix).
fn cpu_seconds() -> f64 {
    #[cfg(unix)]
    {
        let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `t` is a valid timespec for clock_gettime to fill.
        if unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) } == 0 {
            return t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9;
        }
    }
    0.0
}

/// Each stage of embedding timed alone and the pipeline as a whole, on the same inputs, so a
/// run shows which stage bounds it.
#[derive(Clone, Debug, PartialEq)]
pub struct StageBench {
    /// The tokenizer stage on every core (rayon's threads).
    pub tokenize: EmbedBenchReport,
    pub threads: usize,
    /// The tokenizer stage on one thread, over the first inputs (at most [`ONE_THREAD_SAMPLE`]).
    pub tokenize_one: EmbedBenchReport,
    /// The forward pass alone: pre-tokenised inputs, sorted by length, one batch after another
    /// (padding, copies and pooling included).
    pub forward: EmbedBenchReport,
    /// Positions the forward pass computed, padding included.
    pub padded: usize,
    /// Tokenising, then the forward pass, one after the other: the loop before the pipeline.
    pub sequential: EmbedBenchReport,
    /// The pipeline (what indexing runs) and where its time went.
    pub pipeline: EmbedBenchReport,
    pub stages: StageTimes,
    /// Largest difference between the pipeline's vectors and the plain loop's.
    pub max_diff: f32,
}

/// Inputs the one-thread tokenizer figure reads.
pub const ONE_THREAD_SAMPLE: usize = 2000;

impl fmt::Display for StageBench {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = &self.stages;
        let mtok = |r: &EmbedBenchReport| r.tokens_per_s / 1e6;
        writeln!(
            f,
            "tokenizer stage: {:.3} M tokens/s on {} threads ({} chunks in {:.3} s), {:.3} M tokens/s on one",
            mtok(&self.tokenize),
            self.threads,
            self.tokenize.chunks,
            self.tokenize.seconds,
            mtok(&self.tokenize_one)
        )?;
        let padding = 1.0 - self.forward.tokens as f64 / self.padded.max(1) as f64;
        writeln!(f, "forward pass alone: {} ({:.1}% of positions padding)", self.forward, 100.0 * padding)?;
        writeln!(f, "tokenise, then forward (the loop before the pipeline): {}", self.sequential)?;
        let padding = 1.0 - t.tokens as f64 / t.padded.max(1) as f64;
        writeln!(f, "pipeline: {} ({:.1}% of positions padding)", self.pipeline, 100.0 * padding)?;
        // The busier stage bounds a pipeline (the queue's waits say the same when it runs threaded).
        let bound =
            if t.tokenize_s + t.pad_s > t.forward_s { "the tokenizer stage" } else { "the forward pass" };
        write!(
            f,
            "pipeline stages: forward {:.2} s busy, {:.2} s waiting for batches; producer tokenised {:.2} s, \
             padded {:.2} s, {:.2} s blocked on a full queue; {} batches; bounded by {bound}; \
             vectors within {:.1e} of the plain loop's",
            t.forward_s, t.starved_s, t.tokenize_s, t.pad_s, t.blocked_s, t.batches, self.max_diff
        )
    }
}

/// Times tokenisation plus embedding of `inputs` through the pipeline, as indexing does it.
pub fn bench_embed(encoder: &Encoder, inputs: &[EncoderInput]) -> Result<EmbedBenchReport> {
    warm_up(encoder, inputs)?;
    let (start, cpu) = (Instant::now(), cpu_seconds());
    let vectors = encoder.embed_inputs(inputs, &NoProgress)?;
    let (seconds, cpu) = (start.elapsed().as_secs_f64(), cpu_seconds() - cpu);
    // Counting tokens again outside the timed region keeps the timing honest.
    let mut tokens = 0;
    for input in inputs {
        tokens += encoder.tokenize_input(input)?.len();
    }
    Ok(EmbedBenchReport::new(vectors.len(), tokens, seconds).with_cpu(cpu))
}

/// One untimed batch first, as the sentence-transformers script does: a GPU's first
/// forward pass loads kernels (and the driver may compile them), which is not throughput.
fn warm_up(encoder: &Encoder, inputs: &[EncoderInput]) -> Result<()> {
    let warm = inputs.len().min(encoder.batch_size());
    encoder.embed_inputs(&inputs[..warm], &NoProgress).map(|_| ())
}

/// Every stage of embedding `inputs`, alone and together (see [`StageBench`]).
pub fn bench_stages(encoder: &Encoder, inputs: &[EncoderInput]) -> Result<StageBench> {
    warm_up(encoder, inputs)?;
    let (start, cpu) = (Instant::now(), cpu_seconds());
    let tokenized: Vec<TokenizedInput> =
        inputs.par_iter().map(|i| encoder.tokenize_input(i)).collect::<Result<_>>()?;
    let tokens: usize = tokenized.iter().map(TokenizedInput::len).sum();
    let tokenize = EmbedBenchReport::new(inputs.len(), tokens, start.elapsed().as_secs_f64())
        .with_cpu(cpu_seconds() - cpu);

    let sample = &inputs[..inputs.len().min(ONE_THREAD_SAMPLE)];
    let start = Instant::now();
    let mut sample_tokens = 0;
    for input in sample {
        sample_tokens += encoder.tokenize_input(input)?.len();
    }
    let tokenize_one = EmbedBenchReport::new(sample.len(), sample_tokens, start.elapsed().as_secs_f64());

    let (start, cpu) = (Instant::now(), cpu_seconds());
    let plain = encoder.embed_tokenized_plain(&tokenized)?;
    let forward = EmbedBenchReport::new(inputs.len(), tokens, start.elapsed().as_secs_f64())
        .with_cpu(cpu_seconds() - cpu);
    let padded = padded_positions(encoder, &tokenized);
    let sequential = EmbedBenchReport::new(inputs.len(), tokens, tokenize.seconds + forward.seconds)
        .with_cpu(tokenize.cpu_seconds + forward.cpu_seconds);

    let cpu = cpu_seconds();

    let mut piped = vec![Vec::new(); inputs.len()];
    let stages = pipeline::run(
        encoder,
        inputs.len(),
        usize::MAX,
        &|i| encoder.tokenize_input(&inputs[i]),
        &mut |rows, _, _| {
            for (i, v) in rows {
                piped[i] = v;
            }
            Ok(())
        },
    )?;
    let pipeline =
        EmbedBenchReport::new(inputs.len(), stages.tokens, stages.wall_s).with_cpu(cpu_seconds() - cpu);
    let max_diff = plain
        .iter()
        .zip(&piped)
        .flat_map(|(a, b)| a.iter().zip(b).map(|(x, y)| (x - y).abs()))
        .fold(0.0, f32::max);
    Ok(StageBench {
        tokenize,
        threads: rayon::current_num_threads(),
        tokenize_one,
        forward,
        padded,
        sequential,
        pipeline,
        stages,
        max_diff,
    })
}

/// Positions the plain loop's batches compute (each batch padded to its longest).
fn padded_positions(encoder: &Encoder, tokenized: &[TokenizedInput]) -> usize {
    let mut lens: Vec<usize> = tokenized.iter().map(TokenizedInput::len).collect();
    lens.sort_unstable();
    encoder.batch_plan(&lens, usize::MAX).into_iter().map(|r| r.len() * lens[r.end - 1]).sum()
}

/// Reads `{"text": ...}` lines (the Python benchmark's input) as neighbour-less inputs.
pub fn read_bench_texts(path: &Path) -> Result<Vec<EncoderInput>> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut inputs = Vec::new();
    for (n, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| Error::io(path, e))?;
        if line.trim().is_empty() {
            continue;
        }
        let at = || format!("{}:{}", path.display(), n + 1);
        let value: serde_json::Value = serde_json::from_str(&line).map_err(|e| Error::context(at(), e))?;
        let text = value
            .get("text")
            .and_then(|t| t.as_str())
            .ok_or_else(|| Error::context(at(), "no \"text\" string"))?;
        inputs.push(EncoderInput::new(text));
    }
    Ok(inputs)
}

/// Writes inputs' chunk texts as `{"text": ...}` lines for the Python benchmark.
pub fn write_bench_texts(path: &Path, inputs: &[EncoderInput]) -> Result<()> {
    let mut out = String::new();
    for input in inputs {
        out.push_str(&serde_json::json!({ "text": input.chunk }).to_string());
        out.push('\n');
    }
    std::fs::write(path, out).map_err(|e| Error::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_texts_round_trip_and_bad_lines_are_located() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("texts.jsonl");
        let inputs = vec![EncoderInput::new("def f():\n  \"q\""), EncoderInput::new("")];
        write_bench_texts(&path, &inputs).unwrap();
        assert_eq!(read_bench_texts(&path).unwrap(), inputs);
        std::fs::write(&path, "{\"text\": \"a\"}\n{\"txt\": 1}\n").unwrap();
        let err = read_bench_texts(&path).unwrap_err().to_string();
        assert!(err.contains("texts.jsonl:2"), "{err}");
    }
}
