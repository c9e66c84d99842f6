//! The code-aware tokenizer (docs/ARCHITECTURE.md): split on non-alphanumerics, emit each
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
    let mut scratch = Scratch::default();
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
        emit_word(word, start, &mut scratch, &mut emit);
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

/// Buffers reused from word to word: indexing a snapshot tokenises millions of words, and
/// allocating per word cost more than the splitting.
#[derive(Default)]
struct Scratch {
    lower: String,
    pieces: Vec<(usize, usize)>,
}

fn emit_word(word: &str, offset: usize, scratch: &mut Scratch, emit: &mut impl FnMut(&str, usize, usize)) {
    let trimmed = word.trim_matches('_');
    if trimmed.is_empty() || trimmed.len() > MAX_TOKEN_LEN {
        return;
    }
    let lead = word.len() - word.trim_start_matches('_').len();
    let base = offset + lead;
    let ascii = trimmed.is_ascii();
    if ascii {
        scratch.lower.clear();
        scratch.lower.extend(trimmed.bytes().map(|b| char::from(b.to_ascii_lowercase())));
    } else {
        scratch.lower = trimmed.to_lowercase();
    }
    split_pieces(trimmed, &mut scratch.pieces);
    let pieces = &scratch.pieces;
    // A plain word (`session`) is its own only piece: emit it once.
    if !(pieces.len() == 1 && pieces[0].1 - pieces[0].0 == trimmed.len()) {
        emit(&scratch.lower, base, base + trimmed.len());
    }
    for &(s, e) in pieces {
        if e - s >= MIN_PIECE_LEN || pieces_is_single(trimmed, s, e) {
            // ASCII lowercasing keeps byte offsets, so a piece is a slice of the whole.
            if ascii {
                emit(&scratch.lower[s..e], base + s, base + e);
            } else {
                emit(&trimmed[s..e].to_lowercase(), base + s, base + e);
            }
        }
    }
}

fn pieces_is_single(word: &str, s: usize, e: usize) -> bool {
    s == 0 && e == word.len()
}

/// Byte ranges of the snake_case and camelCase pieces of an identifier, into `out`. Digits
/// stay with the letters before them (`utf8`, `base64`); an acronym run ends before a
/// capitalised word (`HTTPAdapter` → `HTTP`, `Adapter`).
fn split_pieces(word: &str, out: &mut Vec<(usize, usize)>) {
    out.clear();
    let chars: Vec<(usize, char)>;
    // For ASCII, bytes are chars and the `char` predicates are the ASCII ones.
    let at: &dyn Fn(usize) -> (usize, char) = if word.is_ascii() {
        &|k| (k, char::from(word.as_bytes()[k]))
    } else {
        chars = word.char_indices().collect();
        &|k| chars[k]
    };
    let len = if word.is_ascii() { word.len() } else { word.chars().count() };
    let mut start: Option<usize> = None;
    for k in 0..len {
        let (pos, c) = at(k);
        if c == '_' {
            if let Some(s) = start.take() {
                out.push((s, pos));
            }
            continue;
        }
        match start {
            None => start = Some(pos),
            Some(s) => {
                let prev = at(k - 1).1;
                let next = (k + 1 < len).then(|| at(k + 1).1);
                let boundary = (c.is_uppercase() && prev.is_lowercase())
                    || (c.is_uppercase() && prev.is_uppercase() && next.is_some_and(|n| n.is_lowercase()))
                    || (c.is_alphabetic() && prev.is_ascii_digit() && c.is_uppercase());
                if boundary {
                    out.push((s, pos));
                    start = Some(pos);
                }
            }
        }
    }
    if let Some(s) = start {
        out.push((s, word.len()));
    }
}

/// tantivy adapter for [`for_each_token`]: the tokens of a text in one buffer, handed out
/// through one reused [`Token`] (no allocation per token).
#[derive(Clone, Default)]
pub struct CodeTokenizer;

pub struct CodeTokenStream {
    text: String,
    /// Per token: its range in `text`, then its byte range in the source.
    spans: Vec<(usize, usize, usize, usize)>,
    next: usize,
    token: Token,
}

impl Tokenizer for CodeTokenizer {
    type TokenStream<'a> = CodeTokenStream;
    fn token_stream<'a>(&'a mut self, text: &'a str) -> CodeTokenStream {
        let mut buf = String::with_capacity(text.len() + text.len() / 2);
        let mut spans = Vec::new();
        for_each_token(text, |t, from, to| {
            let start = buf.len();
            buf.push_str(t);
            spans.push((start, buf.len(), from, to));
        });
        CodeTokenStream { text: buf, spans, next: 0, token: Token::default() }
    }
}

impl TokenStream for CodeTokenStream {
    fn advance(&mut self) -> bool {
        let Some(&(start, end, from, to)) = self.spans.get(self.next) else {
            return false;
        };
        self.token.text.clear();
        self.token.text.push_str(&self.text[start..end]);
        self.token.offset_from = from;
        self.token.offset_to = to;
        self.token.position = self.next;
        self.token.position_length = 1;
        self.next += 1;
        true
    }
    fn token(&self) -> &Token {
        &self.token
    }
    fn token_mut(&mut self) -> &mut Token {
        &mut self.token
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

    /// The buffers reused between words never leak one word into the next, on ASCII and
    /// non-ASCII words alike (the two take different paths).
    #[test]
    fn reused_buffers_keep_words_apart() {
        assert_eq!(
            tokens("parseURL Straße_HTTPServer x_y getÉtat a"),
            [
                "parseurl",
                "parse",
                "url",
                "straße_httpserver",
                "straße",
                "http",
                "server",
                "x_y",
                "getétat",
                "get",
                "état",
                "a"
            ]
        );
        let mut tok = CodeTokenizer;
        let mut stream = tok.token_stream("  fooBar baz");
        let mut seen = Vec::new();
        while stream.advance() {
            let t = stream.token();
            seen.push((t.text.clone(), t.offset_from, t.offset_to, t.position));
        }
        assert_eq!(
            seen,
            [
                ("foobar".into(), 2, 8, 0),
                ("foo".into(), 2, 5, 1),
                ("bar".into(), 5, 8, 2),
                ("baz".into(), 9, 12, 3)
            ]
        );
    }
}
