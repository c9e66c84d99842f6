//! Distilling a static table from the chunk tower: every vocabulary token through the tower
//! alone (`[CLS] token [SEP]`, mean-pooled as any input), the common direction removed, and
//! each row scaled by its token's weight from how often code and issues use it (SIF: `a /
//! (a + p)`, so that `self`, `(` and `the` count little and rare identifiers much).

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use rayon::prelude::*;

use super::words::WordPieces;
use crate::error::{Error, Result};
use crate::model::{Encoder, TokenizedInput};
use crate::progress::{Phase, Progress};

/// How a table is distilled.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// SIF's `a`: smaller weighs frequent tokens down harder.
    pub sif: f64,
    /// Subtract the frequency-weighted mean of the rows before weighting (the direction every
    /// token shares says nothing about any one text).
    pub remove_mean: bool,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions { sif: 1e-3, remove_mean: true }
    }
}

/// Every vocabulary token's vector through `encoder` (unit, vocabulary × dim, row-major).
pub fn token_vectors(encoder: &Encoder, progress: &dyn Progress) -> Result<Vec<f32>> {
    let tok = encoder.input_tokenizer();
    let vocab = tok.vocab_size();
    let (cls, sep) = (special(tok.tokenizer(), "[CLS]")?, special(tok.tokenizer(), "[SEP]")?);
    let items: Vec<TokenizedInput> = (0..vocab as u32)
        .map(|id| TokenizedInput { ids: vec![cls, id, sep], type_ids: vec![0; 3] })
        .collect();
    progress.report(Phase::Embed, 0, vocab);
    let vectors = encoder.embed_tokenized(&items, &mut |done, _| {
        progress.report(Phase::Embed, done, vocab);
        if progress.cancelled() {
            return Err(Error::Cancelled);
        }
        Ok(())
    })?;
    Ok(vectors.concat())
}

fn special(tokenizer: &tokenizers::Tokenizer, token: &str) -> Result<u32> {
    tokenizer.token_to_id(token).ok_or_else(|| Error::invalid(format!("the vocabulary has no {token}")))
}

/// How often each token occurs in `texts` (tokenised as the tier reads text).
pub fn token_counts(words: &WordPieces, vocab: usize, texts: &[String]) -> Result<Vec<u64>> {
    texts
        .par_chunks(256)
        .map(|part| {
            let mut counts = vec![0u64; vocab];
            for t in part {
                for id in words.ids(t)? {
                    if let Some(c) = counts.get_mut(id as usize) {
                        *c += 1;
                    }
                }
            }
            Ok(counts)
        })
        .try_reduce(
            || vec![0u64; vocab],
            |mut a, b| {
                a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                Ok(a)
            },
        )
}

/// The texts of instance files (`.jsonl`, `.jsonl.gz`): each instance's problem statement and
/// its patch, the code and the issues a table's weights should reflect. A line that is not
/// JSON is an error naming the file and line.
pub fn corpus_texts(paths: &[std::path::PathBuf]) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for path in paths {
        let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        let reader: Box<dyn Read> = if path.extension().is_some_and(|e| e == "gz") {
            Box::new(flate2::read::GzDecoder::new(file))
        } else {
            Box::new(file)
        };
        for (n, line) in BufReader::new(reader).lines().enumerate() {
            let line = line.map_err(|e| Error::io(path, e))?;
            if line.trim().is_empty() {
                continue;
            }
            let v: serde_json::Value = serde_json::from_str(&line)
                .map_err(|e| Error::context(format!("{}:{}", path.display(), n + 1), e))?;
            for field in ["problem_statement", "patch", "query", "text"] {
                if let Some(s) = v.get(field).and_then(|s| s.as_str()) {
                    out.push(s.to_string());
                }
            }
        }
    }
    Ok(out)
}

/// The table's rows: `vectors` (unit, per token) centred on their frequency-weighted mean when
/// asked, each scaled by its SIF weight. Tokens never seen count as rare.
pub fn weighted_rows(vectors: &[f32], dim: usize, counts: &[u64], opts: &BuildOptions) -> Vec<f32> {
    let total = counts.iter().sum::<u64>().max(1) as f64;
    let weight = |c: u64| (opts.sif / (opts.sif + c as f64 / total)) as f32;
    let mut mean = vec![0f32; dim];
    if opts.remove_mean {
        let mass: f64 = counts.iter().map(|&c| c as f64).sum::<f64>().max(1.0);
        for (row, &c) in vectors.chunks_exact(dim).zip(counts) {
            let p = (c as f64 / mass) as f32;
            mean.iter_mut().zip(row).for_each(|(m, x)| *m += p * x);
        }
    }
    vectors
        .par_chunks_exact(dim)
        .zip(counts.par_iter())
        .flat_map_iter(|(row, &c)| {
            let w = weight(c);
            row.iter().zip(mean.clone()).map(move |(x, m)| (x - m) * w).collect::<Vec<_>>()
        })
        .collect()
}

/// The tokenizer JSON a table carries: the encoder's own file, padding and truncation off.
pub fn tokenizer_json(model_dir: &Path) -> Result<String> {
    let path = model_dir.join("tokenizer.json");
    let mut t =
        tokenizers::Tokenizer::from_file(&path).map_err(|e| Error::context(path.display().to_string(), e))?;
    t.with_padding(None);
    t.with_truncation(None).map_err(|e| Error::context(path.display().to_string(), e))?;
    t.to_string(false).map_err(|e| Error::context(path.display().to_string(), e))
}
