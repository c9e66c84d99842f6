//! Encoder input assembly: `[CLS] chunk [DOWN] n1 [DOWN] n2 … [SEP]` under a token budget.
//!
//! We build the sequence ourselves from raw WordPiece ids rather than through the
//! tokenizer's post-processor, so the chunk can take the budget first and each downstream
//! neighbour gets what is left, in order. The shipped `tokenizer.json`'s own padding and
//! truncation (all-MiniLM pads everything to 128) are switched off: batches are padded to
//! their longest member by the encoder.

use std::path::Path;

use tokenizers::Tokenizer;

use crate::error::{Error, Result};

/// The marker between a chunk and each downstream neighbour. A pretrained vocabulary
/// without it falls back to its separator token; fine-tuning adds it to the tokenizer.
pub const DOWN_TOKEN: &str = "[DOWN]";
pub const CLS_TOKEN: &str = "[CLS]";
pub const SEP_TOKEN: &str = "[SEP]";

/// What the encoder embeds for one chunk: its text and its callees' texts, nearest first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EncoderInput {
    pub chunk: String,
    pub neighbours: Vec<String>,
}

impl EncoderInput {
    pub fn new(chunk: impl Into<String>) -> Self {
        EncoderInput { chunk: chunk.into(), neighbours: Vec::new() }
    }
}

/// Token ids and segment ids of one sequence, special tokens included, unpadded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TokenizedInput {
    pub ids: Vec<u32>,
    pub type_ids: Vec<u32>,
}

impl TokenizedInput {
    pub fn len(&self) -> usize {
        self.ids.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

/// A tokenizer with padding and truncation off, plus the special ids the layout needs.
pub struct InputTokenizer {
    tokenizer: Tokenizer,
    cls: u32,
    sep: u32,
    down: u32,
    pad: u32,
}

/// Bytes of text per token we expect at most when tokenising only a prefix of a long text.
const PREFIX_BYTES_PER_TOKEN: usize = 12;

impl InputTokenizer {
    /// Loads `tokenizer.json`; errors name the file.
    pub fn load(path: &Path, pad_id: u32) -> Result<Self> {
        let tokenizer =
            Tokenizer::from_file(path).map_err(|e| Error::context(path.display().to_string(), e))?;
        Self::new(tokenizer, pad_id, &path.display().to_string())
    }

    /// `source` names the tokenizer in errors (a path, or "training tokenizer").
    pub fn new(mut tokenizer: Tokenizer, pad_id: u32, source: &str) -> Result<Self> {
        tokenizer.with_padding(None);
        tokenizer.with_truncation(None).map_err(|e| Error::context(source.to_string(), e))?;
        let id = |token: &str| {
            tokenizer.token_to_id(token).ok_or_else(|| {
                Error::context(
                    source.to_string(),
                    format!("the vocabulary has no {token} token (not a BERT tokenizer?)"),
                )
            })
        };
        let cls = id(CLS_TOKEN)?;
        let sep = id(SEP_TOKEN)?;
        let down = tokenizer.token_to_id(DOWN_TOKEN).unwrap_or(sep);
        Ok(InputTokenizer { tokenizer, cls, sep, down, pad: pad_id })
    }

    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }
    pub fn pad_id(&self) -> u32 {
        self.pad
    }
    /// The id placed before each neighbour: `[DOWN]` if the vocabulary has it, else `[SEP]`.
    pub fn down_id(&self) -> u32 {
        self.down
    }
    pub fn has_down_token(&self) -> bool {
        self.down != self.sep
    }
    /// Vocabulary size including added tokens.
    pub fn vocab_size(&self) -> usize {
        self.tokenizer.get_vocab_size(true)
    }

    /// A single sequence: `[CLS] text [SEP]`, at most `max_len` tokens, segment 0.
    pub fn query(&self, text: &str, max_len: usize) -> Result<TokenizedInput> {
        self.assemble(text, &[], max_len)
    }

    /// The chunk takes up to `max_len - 2` tokens first; the neighbours share the rest.
    pub fn input(&self, input: &EncoderInput, max_len: usize) -> Result<TokenizedInput> {
        self.assemble(&input.chunk, &input.neighbours, max_len)
    }

    /// Segment ids follow BERT's pair convention: `[CLS]`, the chunk and the first separator
    /// are 0; the neighbours, later separators and the final `[SEP]` are 1. With `[SEP]` as
    /// the separator and one neighbour this is exactly BERT's `[CLS] A [SEP] B [SEP]`;
    /// with none it is the plain single-sequence encoding.
    fn assemble(&self, chunk: &str, neighbours: &[String], max_len: usize) -> Result<TokenizedInput> {
        let max_len = max_len.max(2);
        let mut ids = Vec::with_capacity(max_len.min(512));
        ids.push(self.cls);
        ids.extend(self.content_ids(chunk, max_len - 2)?);
        let mut type_ids = vec![0; ids.len()];
        let mut segment = 0;
        // One slot stays reserved for the final [SEP].
        let mut room = max_len - ids.len() - 1;
        for neighbour in neighbours {
            // A separator with no room for any of the neighbour's text would be noise.
            if room < 2 {
                break;
            }
            ids.push(self.down);
            type_ids.push(segment);
            segment = 1;
            room -= 1;
            let part = self.content_ids(neighbour, room)?;
            room -= part.len();
            type_ids.extend(std::iter::repeat_n(1, part.len()));
            ids.extend(part);
        }
        ids.push(self.sep);
        type_ids.push(segment);
        Ok(TokenizedInput { ids, type_ids })
    }

    /// The first `budget` ids of `text`, without special tokens.
    fn content_ids(&self, text: &str, budget: usize) -> Result<Vec<u32>> {
        if budget == 0 {
            return Ok(Vec::new());
        }
        // For long texts tokenise a prefix that ends at whitespace first: BERT's
        // normaliser is per character and its pre-tokeniser never joins across whitespace,
        // so the prefix's ids are the first ids of the whole text.
        let guess = budget.saturating_mul(PREFIX_BYTES_PER_TOKEN);
        if text.len() > guess.saturating_mul(2) {
            if let Some(prefix) = whitespace_prefix(text, guess) {
                let mut ids = self.encode(prefix)?;
                if ids.len() >= budget {
                    ids.truncate(budget);
                    return Ok(ids);
                }
            }
        }
        let mut ids = self.encode(text)?;
        ids.truncate(budget);
        Ok(ids)
    }

    fn encode(&self, text: &str) -> Result<Vec<u32>> {
        let encoding = self.tokenizer.encode_fast(text, false).map_err(|e| Error::context("tokenizer", e))?;
        Ok(encoding.get_ids().to_vec())
    }
}

/// `text` up to the last whitespace at or before byte `at`, if any.
fn whitespace_prefix(text: &str, at: usize) -> Option<&str> {
    let mut end = at.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let cut = text[..end].rfind(char::is_whitespace)?;
    Some(&text[..cut])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::write_tiny_bert;

    fn tiny(vocab: &[&str]) -> (tempfile::TempDir, InputTokenizer) {
        let dir = tempfile::tempdir().unwrap();
        write_tiny_bert(dir.path(), vocab);
        let tok = InputTokenizer::load(&dir.path().join("tokenizer.json"), 0).unwrap();
        (dir, tok)
    }

    fn input(chunk: &str, neighbours: &[&str]) -> EncoderInput {
        EncoderInput {
            chunk: chunk.to_string(),
            neighbours: neighbours.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn no_neighbours_equals_the_tokenizers_single_sequence_encoding() {
        let (dir, tok) = tiny(&["def", "load", "config"]);
        let mut reference = Tokenizer::from_file(dir.path().join("tokenizer.json")).unwrap();
        reference.with_padding(None);
        reference.with_truncation(None).unwrap();
        let text = "def load_config(path): return 1";
        let want = reference.encode(text, true).unwrap();
        let got = tok.input(&input(text, &[]), 64).unwrap();
        assert_eq!(got.ids, want.get_ids());
        assert_eq!(got.type_ids, want.get_type_ids());
        assert_eq!(tok.query(text, 64).unwrap(), got);
    }

    #[test]
    fn one_neighbour_with_sep_fallback_equals_bert_pair_encoding() {
        let (dir, tok) = tiny(&["def", "load", "read"]);
        assert!(!tok.has_down_token());
        let mut reference = Tokenizer::from_file(dir.path().join("tokenizer.json")).unwrap();
        reference.with_padding(None);
        reference.with_truncation(None).unwrap();
        let want = reference.encode(("def load(p)", "def read(f)"), true).unwrap();
        let got = tok.input(&input("def load(p)", &["def read(f)"]), 64).unwrap();
        assert_eq!(got.ids, want.get_ids());
        assert_eq!(got.type_ids, want.get_type_ids());
    }

    #[test]
    fn chunk_takes_the_budget_first() {
        let (_dir, tok) = tiny(&[]);
        let chunk = "a ".repeat(50);
        let got = tok.input(&input(&chunk, &["b c d"]), 20).unwrap();
        assert_eq!(got.len(), 20);
        // [CLS] + 18 chunk tokens + [SEP]: no room left for a neighbour.
        assert!(got.type_ids.iter().all(|&t| t == 0));
        let a = tok.tokenizer().token_to_id("a").unwrap();
        assert!(got.ids[1..19].iter().all(|&id| id == a));
    }

    #[test]
    fn neighbours_fill_the_rest_in_order_with_segment_one() {
        let (_dir, tok) = tiny(&["[DOWN]"]);
        assert!(tok.has_down_token());
        let got = tok.input(&input("a a", &["b b b", "c c c c c c"]), 12).unwrap();
        let t = |s: &str| tok.tokenizer().token_to_id(s).unwrap();
        let (cls, sep, down) = (t("[CLS]"), t("[SEP]"), t("[DOWN]"));
        let (a, b, c) = (t("a"), t("b"), t("c"));
        // 12 = [CLS] a a [DOWN] b b b [DOWN] c c c [SEP]: the second neighbour is cut.
        assert_eq!(got.ids, vec![cls, a, a, down, b, b, b, down, c, c, c, sep]);
        assert_eq!(got.type_ids, vec![0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1]);
        let swapped = tok.input(&input("a a", &["c c c c c c", "b b b"]), 12).unwrap();
        assert_eq!(swapped.ids[4..7], [c, c, c]);
    }

    #[test]
    fn long_inputs_are_truncated_to_max_len() {
        let (_dir, tok) = tiny(&[]);
        let long = "word ".repeat(5000);
        for max_len in [2, 3, 17, 200] {
            let got = tok.input(&input(&long, &[&long, &long]), max_len).unwrap();
            assert_eq!(got.len(), max_len);
            assert_eq!(got.type_ids.len(), max_len);
        }
    }

    #[test]
    fn prefix_tokenisation_matches_full_tokenisation() {
        let (_dir, tok) = tiny(&["self", "return"]);
        let text = "def f(self):\n    return self.x + 1  # ünïcode\t\n".repeat(200);
        let full = tok.encode(&text).unwrap();
        for budget in [1, 5, 30, 254] {
            assert_eq!(tok.content_ids(&text, budget).unwrap(), full[..budget]);
        }
    }

    #[test]
    fn empty_text_is_cls_sep() {
        let (_dir, tok) = tiny(&[]);
        let got = tok.query("", 16).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got.type_ids, vec![0, 0]);
    }

    #[test]
    fn whitespace_prefix_respects_char_boundaries() {
        assert_eq!(whitespace_prefix("ab cd ef", 6), Some("ab cd"));
        assert_eq!(whitespace_prefix("ééé ééé", 5), None);
        assert_eq!(whitespace_prefix("é é é", 4), Some("é"));
    }
}
