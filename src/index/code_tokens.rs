//! The code-aware tokenizer (README "Design"): split on non-alphanumerics, emit each
//! identifier whole plus its snake_case and camelCase pieces, all lowercase.
//!
//! `get_userName` → `get_username`, `get`, `user`, `name`. Emitting the whole identifier lets
//! an issue that names `parse_url` match exactly, while the pieces let "parse the url" match too.

use tantivy::tokenizer::{Token, TokenStream, Tokenizer};

/// Identifier pieces shorter than this carry little signal but cost postings.
const MIN_PIECE_LEN: usize = 2;
/// Longer "words" are base64, hashes or minified data, not identifiers.
const MAX_TOKEN_LEN: usize = 64;

/// Calls `emit(token, byte_start, byte_end)` for every token of `text`, in order.
pub fn for_each_token(text: &str, mut emit: impl FnMut(&str, usize, usize)) {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if !is_word_byte(c) {
            i += utf8_len(c);
            continue;
        }
        let start = i;
        while i < bytes.len() && is_word_byte(bytes[i]) {
            i += utf8_len(bytes[i]);
        }
        let word = &text[start..i.min(text.len())];
        emit_word(word, start, &mut emit);
    }
}

/// Tokens of `text` as owned lowercase strings (queries use this).
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_token(text, |t, _, _| out.push(t.to_string()));
    out
}

fn is_word_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80
}

fn utf8_len(first: u8) -> usize {
    match first {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    }
    .max(1)
}

fn emit_word(word: &str, offset: usize, emit: &mut impl FnMut(&str, usize, usize)) {
    let trimmed = word.trim_matches('_');
    if trimmed.is_empty() || trimmed.len() > MAX_TOKEN_LEN {
        return;
    }
    let lead = word.len() - word.trim_start_matches('_').len();
    let base = offset + lead;
    let whole = trimmed.to_lowercase();
    let pieces = split_pieces(trimmed);
    // A plain word (`session`) is its own only piece: emit it once.
    if !(pieces.len() == 1 && pieces[0].1 - pieces[0].0 == trimmed.len()) {
        emit(&whole, base, base + trimmed.len());
    }
    for (s, e) in pieces {
        if e - s >= MIN_PIECE_LEN || pieces_is_single(trimmed, s, e) {
            emit(&trimmed[s..e].to_lowercase(), base + s, base + e);
        }
    }
}

fn pieces_is_single(word: &str, s: usize, e: usize) -> bool {
    s == 0 && e == word.len()
}

/// Byte ranges of the snake_case and camelCase pieces of an identifier. Digits stay with the
/// letters before them (`utf8`, `base64`); an acronym run ends before a capitalised word
/// (`HTTPAdapter` → `HTTP`, `Adapter`).
fn split_pieces(word: &str) -> Vec<(usize, usize)> {
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    let mut pieces = Vec::new();
    let mut start: Option<usize> = None;
    for (k, &(pos, c)) in chars.iter().enumerate() {
        if c == '_' {
            if let Some(s) = start.take() {
                pieces.push((s, pos));
            }
            continue;
        }
        match start {
            None => start = Some(pos),
            Some(s) => {
                let prev = chars[k - 1].1;
                let next = chars.get(k + 1).map(|&(_, n)| n);
                let boundary = (c.is_uppercase() && prev.is_lowercase())
                    || (c.is_uppercase() && prev.is_uppercase() && next.is_some_and(|n| n.is_lowercase()))
                    || (c.is_alphabetic() && prev.is_ascii_digit() && c.is_uppercase());
                if boundary {
                    pieces.push((s, pos));
                    start = Some(pos);
                }
            }
        }
    }
    if let Some(s) = start {
        pieces.push((s, word.len()));
    }
    pieces
}

/// tantivy adapter for [`for_each_token`].
#[derive(Clone, Default)]
pub struct CodeTokenizer;

pub struct CodeTokenStream {
    tokens: Vec<Token>,
    index: usize,
}

impl Tokenizer for CodeTokenizer {
    type TokenStream<'a> = CodeTokenStream;
    fn token_stream<'a>(&'a mut self, text: &'a str) -> CodeTokenStream {
        let mut tokens = Vec::new();
        for_each_token(text, |t, from, to| {
            tokens.push(Token {
                offset_from: from,
                offset_to: to,
                position: tokens.len(),
                text: t.to_string(),
                position_length: 1,
            })
        });
        CodeTokenStream { tokens, index: 0 }
    }
}

impl TokenStream for CodeTokenStream {
    fn advance(&mut self) -> bool {
        self.index += 1;
        self.index <= self.tokens.len()
    }
    fn token(&self) -> &Token {
        &self.tokens[self.index - 1]
    }
    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.index - 1]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_snake_and_camel_and_keeps_whole() {
        assert_eq!(tokens("get_userName"), ["get_username", "get", "user", "name"]);
        assert_eq!(tokens("HTTPAdapter.send()"), ["httpadapter", "http", "adapter", "send"]);
        assert_eq!(tokens("__init__"), ["init"]);
        assert_eq!(tokens("utf8 base64Encode"), ["utf8", "base64encode", "base64", "encode"]);
    }

    #[test]
    fn lowercases_and_splits_on_punctuation() {
        assert_eq!(tokens("requests/sessions.py: Session"), ["requests", "sessions", "py", "session"]);
    }

    #[test]
    fn drops_one_letter_pieces_but_keeps_one_letter_words() {
        assert_eq!(tokens("x a_b"), ["x", "a_b"]);
    }

    #[test]
    fn survives_unicode() {
        assert_eq!(tokens("naïve façade 日本語"), ["naïve", "façade", "日本語"]);
    }

    #[test]
    fn tantivy_stream_yields_all_tokens() {
        let mut tok = CodeTokenizer;
        let mut stream = tok.token_stream("parseURL now");
        let mut seen = Vec::new();
        while stream.advance() {
            seen.push(stream.token().text.clone());
        }
        assert_eq!(seen, ["parseurl", "parse", "url", "now"]);
    }
}
