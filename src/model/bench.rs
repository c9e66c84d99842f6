//! Embedding throughput, for a CLI flag and for comparison with sentence-transformers
//! (`scripts/bench_sentence_transformers.py` reads the same JSONL of texts).

use std::fmt;
use std::io::BufRead;
use std::path::Path;
use std::time::Instant;

use super::encoder::Encoder;
use super::tokenize::EncoderInput;
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
}

impl fmt::Display for EmbedBenchReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "embedded {} chunks ({} tokens) in {:.2} s: {:.1} chunks/s, {:.0} tokens/s",
            self.chunks, self.tokens, self.seconds, self.chunks_per_s, self.tokens_per_s
        )
    }
}

/// Times tokenisation plus embedding of `inputs`, as indexing does it.
pub fn bench_embed(encoder: &Encoder, inputs: &[EncoderInput]) -> Result<EmbedBenchReport> {
    // One untimed batch first, as the sentence-transformers script does: a GPU's first
    // forward pass loads kernels (and the driver may compile them), which is not throughput.
    let warm = inputs.len().min(encoder.batch_size());
    encoder.embed_inputs(&inputs[..warm], &NoProgress)?;
    let start = Instant::now();
    let vectors = encoder.embed_inputs(inputs, &NoProgress)?;
    let seconds = start.elapsed().as_secs_f64();
    // Counting tokens again outside the timed region keeps the timing honest.
    let mut tokens = 0;
    for input in inputs {
        tokens += encoder.tokenize_input(input)?.len();
    }
    let per_s = |n: usize| {
        if seconds > 0.0 {
            n as f64 / seconds
        } else {
            0.0
        }
    };
    Ok(EmbedBenchReport {
        chunks: vectors.len(),
        tokens,
        seconds,
        chunks_per_s: per_s(vectors.len()),
        tokens_per_s: per_s(tokens),
    })
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
