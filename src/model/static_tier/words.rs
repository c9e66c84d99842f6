//! Word pieces for the static tier: the same ids the model's WordPiece tokenizer gives, as a
//! bag (order is irrelevant to a mean of rows), at several times its speed.
//!
//! BERT's pre-tokenisation is local: whitespace ends a word and every punctuation character is
//! a word of its own, so a text's ids are the concatenation of each word's ids. Code repeats
//! its words endlessly, so each distinct word is sent through the real tokenizer once and its
//! ids remembered; the answer is exact by construction (tested against the tokenizer).

use std::collections::HashMap;
use std::sync::RwLock;

use tokenizers::Tokenizer;

use crate::error::{Error, Result};

/// The most distinct words remembered: a 10 MB minified line of unique words must not grow
/// the memory without bound (beyond it, words are tokenised each time).
const MEMO_LIMIT: usize = 1 << 20;

/// The real tokenizer (padding, truncation and special tokens off) and what it said of
/// each word so far.
pub struct WordPieces {
    tokenizer: Tokenizer,
    memo: RwLock<HashMap<Box<str>, Box<[u32]>>>,
}

impl WordPieces {
    pub fn new(mut tokenizer: Tokenizer, origin: &str) -> Result<Self> {
        tokenizer.with_padding(None);
        tokenizer.with_truncation(None).map_err(|e| Error::context(origin.to_string(), e))?;
        Ok(WordPieces { tokenizer, memo: RwLock::new(HashMap::new()) })
    }

    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    /// Appends the ids of `text` (no special tokens) to `out`, at most `limit` of them.
    pub fn extend_ids(&self, text: &str, out: &mut Vec<u32>, limit: usize) -> Result<()> {
        for word in words(text) {
            if out.len() >= limit {
                break;
            }
            self.word_ids(word, out)?;
        }
        out.truncate(limit);
        Ok(())
    }

    /// The ids of `text`, no special tokens.
    pub fn ids(&self, text: &str) -> Result<Vec<u32>> {
        let mut out = Vec::new();
        self.extend_ids(text, &mut out, usize::MAX)?;
        Ok(out)
    }

    fn word_ids(&self, word: &str, out: &mut Vec<u32>) -> Result<()> {
        if let Some(ids) = self.memo.read().map_err(|_| poisoned())?.get(word) {
            out.extend_from_slice(ids);
            return Ok(());
        }
        let enc = self
            .tokenizer
            .encode(word, false)
            .map_err(|e| Error::context(format!("tokenising {:?}", short(word)), e))?;
        let ids: Box<[u32]> = enc.get_ids().into();
        out.extend_from_slice(&ids);
        let mut memo = self.memo.write().map_err(|_| poisoned())?;
        if memo.len() < MEMO_LIMIT {
            memo.insert(word.into(), ids);
        }
        Ok(())
    }
}

fn poisoned() -> Error {
    Error::invalid("the static tier's word memo was poisoned by a panic")
}

fn short(word: &str) -> String {
    word.chars().take(40).collect()
}

/// The words of `text` as BERT's pre-tokeniser cuts it, up to what only the tokenizer itself
/// decides: whitespace separates, an ASCII punctuation character stands alone, and a run of
/// anything else (letters, digits, non-ASCII, which the tokenizer cuts further itself) is one word.
pub fn words(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() {
            let b = bytes[i];
            if b.is_ascii_whitespace() || b == 0 {
                i += 1;
                continue;
            }
            if b.is_ascii_punctuation() {
                i += 1;
                return Some(&text[i - 1..i]);
            }
            let start = i;
            while i < bytes.len() {
                let b = bytes[i];
                if b < 0x80 {
                    if b.is_ascii_whitespace() || b.is_ascii_punctuation() || b == 0 {
                        break;
                    }
                    i += 1;
                } else {
                    // A non-ASCII character: whitespace of its own (U+00A0, U+3000…) ends the word.
                    let c = text[i..].chars().next().unwrap_or(' ');
                    if c.is_whitespace() {
                        break;
                    }
                    i += c.len_utf8();
                }
            }
            if i > start {
                return Some(&text[start..i]);
            }
            // A lone non-ASCII whitespace character.
            i += text[i..].chars().next().map_or(1, char::len_utf8);
        }
        None
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_on_whitespace_and_ascii_punctuation() {
        let w: Vec<&str> = words("def foo_bar(x):\n  return x.baz  # héllo\u{a0}wörld").collect();
        assert_eq!(
            w,
            ["def", "foo", "_", "bar", "(", "x", ")", ":", "return", "x", ".", "baz", "#", "héllo", "wörld"]
        );
        assert_eq!(words("").count(), 0);
        assert_eq!(words(" \t\n\u{3000} ").count(), 0);
    }
}
