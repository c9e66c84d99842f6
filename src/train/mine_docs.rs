//! Natural-language pairs from the code itself (`--mine --mine-docs`, #60), as CoRNStack makes
//! them: a definition's doc comment — the first sentence of its first paragraph, with the
//! definition's own identifiers masked so that the query cannot be matched by name alone — as
//! the query, the definition as the positive, the other chunks of the snapshot as negatives.
//!
//! Each pair is an [`Instance`] like a mined fix's: the base commit is `HEAD`, and the patch
//! rewrites the definition's header line unchanged, so the eval's own gold rules
//! ([`gold_chunks`]) place the gold on exactly that chunk (a pair whose gold lands elsewhere is
//! skipped). Training's preparation then applies the consistency filter (a gold chunk in BM25's
//! top 100 of the snapshot), as for fixes. Pairs are taken in an order fixed by a hash of each
//! definition's key, so that any `--per-repo` prefix samples the whole repository.
//!
//! Skipped and counted per reason, never fatal: no doc comment, a sentence too short or too
//! long once masked, boilerplate (licences, lint markers, TODOs), a doc in another script, the
//! same sentence as a pair already kept, a file that cannot be decoded, a gold that is not the
//! definition.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use rayon::prelude::*;

use crate::chunk::{chunk_file, Chunk, ChunkKind};
use crate::error::{Error, Result};
use crate::eval::gold::{gold_chunks, FileChunks};
use crate::eval::instances::Instance;
use crate::eval::patch::parse_patch;
use crate::repo::git::{git_dir_of, read_snapshot, rev_parse};
use crate::repo::source::{decode_source, is_source_path, is_test_path, DEFAULT_MAX_FILE_SIZE};

/// What the doc miner keeps.
#[derive(Clone, Debug)]
pub struct DocOptions {
    /// Masked sentences shorter than this (characters) are skipped.
    pub min_chars: usize,
    /// … and longer than this.
    pub max_chars: usize,
    /// Words the masked sentence keeps besides the masks.
    pub min_words: usize,
    /// Most pairs of the repository (a hash-ordered sample when it has more).
    pub max_pairs: usize,
    pub max_file_size: u64,
}

impl Default for DocOptions {
    fn default() -> Self {
        DocOptions {
            min_chars: 24,
            max_chars: 300,
            min_words: 4,
            max_pairs: 2000,
            max_file_size: DEFAULT_MAX_FILE_SIZE,
        }
    }
}

/// Why a definition gave no pair (the summary's counts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DocSkip {
    NoDoc,
    Short,
    Long,
    Boilerplate,
    /// Mostly letters outside ASCII: another script than the code's.
    Script,
    SameDoc,
    Undecodable,
    NoGold,
    Capped,
}

impl DocSkip {
    pub fn name(self) -> &'static str {
        match self {
            DocSkip::NoDoc => "no doc comment",
            DocSkip::Short => "short",
            DocSkip::Long => "long",
            DocSkip::Boilerplate => "boilerplate",
            DocSkip::Script => "another script",
            DocSkip::SameDoc => "same doc",
            DocSkip::Undecodable => "undecodable file",
            DocSkip::NoGold => "no gold",
            DocSkip::Capped => "over --max-pairs",
        }
    }
}

/// What doc mining saw.
#[derive(Clone, Debug, Default)]
pub struct DocReport {
    pub commit: String,
    /// Definitions (function, method, class chunks) of non-test source files.
    pub seen: usize,
    pub kept: usize,
    pub skipped: BTreeMap<DocSkip, usize>,
    /// Pairs kept per language id.
    pub per_language: BTreeMap<String, usize>,
}

/// Doc-comment pairs of `path`'s `HEAD` (a bare repository, a `.git` directory or a work tree)
/// for `repo` (`owner/name`).
pub fn mine_docs(path: &Path, repo: &str, opts: &DocOptions) -> Result<(Vec<Instance>, DocReport)> {
    let git_dir = git_dir_of(path).ok_or_else(|| Error::Root {
        path: path.to_path_buf(),
        source: std::io::Error::new(std::io::ErrorKind::NotFound, "not a git repository"),
    })?;
    let head =
        rev_parse(&git_dir, "HEAD").ok_or_else(|| Error::NoSourceHistory { git_dir: git_dir.clone() })?;
    let snapshot = read_snapshot(&git_dir, &head, |p| is_source_path(p) && !is_test_path(p))?;
    let mut report = DocReport { commit: head.clone(), ..Default::default() };
    let found: Vec<(usize, Vec<std::result::Result<Pair, DocSkip>>)> = snapshot
        .files
        .into_par_iter()
        .map(|(p, bytes)| match decode_source(bytes, opts.max_file_size) {
            Ok(text) => file_pairs(&p, &text, opts),
            Err(_) => (0, vec![Err(DocSkip::Undecodable)]),
        })
        .collect();
    let mut pairs = Vec::new();
    for (seen, results) in found {
        report.seen += seen;
        for r in results {
            match r {
                Ok(p) => pairs.push(p),
                Err(why) => *report.skipped.entry(why).or_default() += 1,
            }
        }
    }
    // A fixed pseudo-random order, then the first of each sentence (overloads, copies).
    pairs.sort_by_key(|p| *blake3::hash(p.key.as_bytes()).as_bytes());
    let mut sentences = HashSet::new();
    let (owner, name) = repo.split_once('/').unwrap_or(("", repo));
    let mut out = Vec::new();
    for p in pairs {
        let key: String =
            p.query.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect();
        if !sentences.insert(key) {
            *report.skipped.entry(DocSkip::SameDoc).or_default() += 1;
            continue;
        }
        if out.len() >= opts.max_pairs {
            *report.skipped.entry(DocSkip::Capped).or_default() += 1;
            continue;
        }
        let lang = crate::lang::lang_of_path(&p.path).map(|l| l.id().to_string());
        *report.per_language.entry(lang.clone().unwrap_or_default()).or_default() += 1;
        let hash = blake3::hash(p.key.as_bytes()).to_hex();
        out.push(Instance {
            instance_id: format!("{owner}__{name}-doc-{}", &hash[..12]),
            repo: repo.to_string(),
            base_commit: head.clone(),
            problem_statement: p.query,
            patch: p.patch,
            hints_text: None,
            created_at: None,
            language: lang,
        });
    }
    report.kept = out.len();
    Ok((out, report))
}

struct Pair {
    /// `path::name:line`.
    key: String,
    path: String,
    query: String,
    patch: String,
}

/// The definitions of one file (how many) and a pair or why not for each.
fn file_pairs(path: &str, text: &str, opts: &DocOptions) -> (usize, Vec<std::result::Result<Pair, DocSkip>>) {
    let chunks = chunk_file(path, text).chunks;
    let lines: Vec<&str> = text.lines().collect();
    let mut seen = 0;
    let mut out = Vec::new();
    for (index, chunk) in chunks.iter().enumerate() {
        if chunk.kind == ChunkKind::Module {
            continue;
        }
        seen += 1;
        out.push(pair(path, text, &lines, &chunks, index, opts));
    }
    (seen, out)
}

fn pair(
    path: &str,
    text: &str,
    lines: &[&str],
    chunks: &[Chunk],
    index: usize,
    opts: &DocOptions,
) -> std::result::Result<Pair, DocSkip> {
    let chunk = &chunks[index];
    let (first, last) = (chunk.start_line.saturating_sub(1), chunk.end_line.min(lines.len()));
    if first >= last {
        return Err(DocSkip::NoDoc);
    }
    let span = &lines[first..last];
    let docstrings = crate::lang::lang_of_path(path).is_some_and(|l| l.spec().docstrings);
    let (doc, header) = if docstrings { python_doc(span) } else { leading_doc(span) };
    let header = header.ok_or(DocSkip::NoDoc)?;
    let sentence = first_sentence(&doc.ok_or(DocSkip::NoDoc)?);
    if sentence.is_empty() {
        return Err(DocSkip::NoDoc);
    }
    if is_boilerplate(&sentence) {
        return Err(DocSkip::Boilerplate);
    }
    if other_script(&sentence) {
        return Err(DocSkip::Script);
    }
    let query = mask(&sentence, &chunk.name);
    let words = query.split_whitespace().filter(|w| *w != MASK && w.chars().any(char::is_alphabetic)).count();
    if words < opts.min_words || query.chars().count() < opts.min_chars {
        return Err(DocSkip::Short);
    }
    if query.chars().count() > opts.max_chars {
        return Err(DocSkip::Long);
    }
    // The header line, rewritten unchanged: the eval's gold rules must land on this chunk.
    let line_no = chunk.start_line + header;
    let line = lines.get(line_no - 1).ok_or(DocSkip::NoGold)?;
    let patch = format!("diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -{line_no},1 +{line_no},1 @@\n-{line}\n+{line}\n");
    let parsed = parse_patch(&patch).map_err(|_| DocSkip::NoGold)?;
    let gold = gold_chunks(&parsed, |p| (p == path).then_some(FileChunks { chunks, source: text }));
    match gold.chunks.as_slice() {
        [g] if g.index == index && g.path == path => {
            // The line too: one file can define a name twice (Rust `cfg` variants, overloads),
            // and each definition is its own pair with its own id.
            Ok(Pair {
                key: format!("{}:{}", chunk.key(), chunk.start_line),
                path: path.to_string(),
                query,
                patch,
            })
        }
        _ => Err(DocSkip::NoGold),
    }
}

/// What stands for a masked identifier in a query.
pub const MASK: &str = "_";

/// A generic definition's doc: the comment lines its chunk starts with (`///`, `//`, `/** */`),
/// attributes and annotations between them and the header passed over; and the header's
/// offset in the chunk's lines.
fn leading_doc(span: &[&str]) -> (Option<String>, Option<usize>) {
    let mut doc = Vec::new();
    let mut in_block = false;
    for (i, raw) in span.iter().enumerate() {
        let t = raw.trim();
        if in_block {
            let end = t.contains("*/");
            doc.push(strip_block(t));
            in_block = !end;
            continue;
        }
        if let Some(opened) = t.strip_prefix("/*") {
            in_block = !opened.contains("*/");
            doc.push(strip_block(t));
        } else if let Some(rest) = t.strip_prefix("//") {
            doc.push(rest.trim_start_matches(['/', '!']).trim().to_string());
        } else if t.starts_with("#[") || t.starts_with("#!") || t.starts_with('@') || t.is_empty() {
            continue; // attributes, annotations (decorators), blank lines inside the leading block
        } else {
            let doc = doc.join("\n");
            return ((!doc.trim().is_empty()).then_some(doc), Some(i));
        }
    }
    (None, None)
}

fn strip_block(line: &str) -> String {
    let t = line.trim();
    let t =
        t.strip_prefix("/**").or_else(|| t.strip_prefix("/*!")).or_else(|| t.strip_prefix("/*")).unwrap_or(t);
    let t = t.split("*/").next().unwrap_or("");
    t.trim().trim_start_matches('*').trim().to_string()
}

/// A Python definition's docstring (the first statement after its header) and the header's
/// offset (the `def` or `class` line, after decorators).
fn python_doc(span: &[&str]) -> (Option<String>, Option<usize>) {
    let Some(header) = span.iter().position(|l| {
        let t = l.trim_start();
        t.starts_with("def ") || t.starts_with("async def ") || t.starts_with("class ")
    }) else {
        return (None, None);
    };
    // The header may run over several lines: the body starts after the line ending in `:`.
    let body = span[header..].iter().position(|l| l.trim_end().ends_with(':')).map(|i| header + i + 1);
    let Some(first) =
        body.and_then(|b| span.iter().skip(b).position(|l| !l.trim().is_empty()).map(|i| b + i))
    else {
        return (None, Some(header));
    };
    let t = span[first].trim_start().trim_start_matches(['r', 'R', 'u', 'U', 'b', 'B']);
    let Some(quote) = ["\"\"\"", "'''", "\"", "'"].into_iter().find(|q| t.starts_with(q)) else {
        return (None, Some(header));
    };
    let mut text = String::new();
    let mut rest = &t[quote.len()..];
    let mut i = first;
    loop {
        if let Some(end) = rest.find(quote) {
            text.push_str(&rest[..end]);
            break;
        }
        text.push_str(rest);
        text.push('\n');
        i += 1;
        match span.get(i) {
            Some(l) if quote.len() == 3 => rest = l.trim(),
            _ => break,
        }
    }
    (Some(text), Some(header))
}

/// The first sentence of the doc's first paragraph, markup off: javadoc tags and HTML, inline
/// code's backticks, `{@link X}` as `X`.
fn first_sentence(doc: &str) -> String {
    let mut words = Vec::new();
    for line in doc.lines().map(str::trim) {
        if line.is_empty() {
            if words.is_empty() {
                continue;
            }
            break;
        }
        if line.starts_with('@')
            || line.starts_with(":param")
            || line.starts_with("Args:")
            || line.starts_with("# ")
        {
            break;
        }
        words.extend(line.split_whitespace().map(str::to_string));
    }
    let text = words.join(" ");
    let text = strip_markup(&text);
    // Up to the first full stop that ends a sentence (not `e.g.`, `i.e.`, a version, a path).
    let mut end = text.len();
    let bytes = text.as_bytes();
    for (i, c) in text.char_indices() {
        if matches!(c, '.' | '?' | '!') && (i + 1 == text.len() || bytes[i + 1] == b' ') {
            let before = &text[..i];
            let last = before.rsplit(' ').next().unwrap_or("");
            if matches!(last.to_ascii_lowercase().as_str(), "e.g" | "i.e" | "etc" | "vs" | "approx") {
                continue;
            }
            end = i + 1;
            break;
        }
    }
    text[..end].trim().to_string()
}

fn strip_markup(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(['<', '{']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if let Some(link) = tail.strip_prefix("{@") {
            // `{@link Foo#bar label}`: its target.
            let close = link.find('}').unwrap_or(link.len());
            let inner = &link[..close];
            out.push_str(inner.split_once(' ').map_or("", |(_, target)| target.trim()));
            rest = link.get(close + 1..).unwrap_or("");
        } else if tail.starts_with('<')
            && tail[1..].starts_with(|c: char| c.is_ascii_alphabetic() || c == '/')
        {
            let close = tail.find('>').unwrap_or(tail.len() - 1);
            rest = &tail[close + 1..];
        } else {
            out.push_str(&tail[..1]);
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    out.replace('`', "")
}

fn is_boilerplate(sentence: &str) -> bool {
    let lower = sentence.to_ascii_lowercase();
    const STARTS: [&str; 14] = [
        "todo",
        "fixme",
        "xxx",
        "hack",
        "safety",
        "deprecated",
        "copyright",
        "spdx",
        "nolint",
        "eslint",
        "generated",
        "prettier-ignore",
        "noinspection",
        "see ",
    ];
    STARTS.iter().any(|s| lower.starts_with(s))
        || lower.contains("licensed under")
        || lower.contains("auto-generated")
        || lower.contains("do not edit")
}

/// Whether most of the sentence's letters lie outside ASCII (a doc in another script).
fn other_script(sentence: &str) -> bool {
    let letters = sentence.chars().filter(|c| c.is_alphabetic()).count();
    let foreign = sentence.chars().filter(|c| c.is_alphabetic() && !c.is_ascii()).count();
    foreign * 5 > letters
}

/// `sentence` with the definition's identifiers (each part of its qualified name, of three or
/// more characters, whole words in any case, also inside `a.b`, `a::b` and calls) as [`MASK`].
pub fn mask(sentence: &str, qualified: &str) -> String {
    let parts: Vec<String> = qualified
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .filter(|p| p.chars().count() >= 3)
        .map(str::to_lowercase)
        .collect();
    let is_name = |w: &str| {
        let w = w.to_lowercase();
        parts.contains(&w)
    };
    let mut out = Vec::new();
    for word in sentence.split_whitespace() {
        // `Foo.bar()`, `self::bar`, `bar's`: masked when any identifier in it is the name's.
        let idents: Vec<&str> = word
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
            .filter(|s| !s.is_empty())
            .collect();
        let code_like = idents.len() > 1 && (word.contains('.') || word.contains("::") || word.contains('('));
        let hit = idents.iter().any(|i| is_name(i));
        if hit && (idents.len() == 1 || code_like || word.contains('\'')) {
            let trail: String =
                word.chars().rev().take_while(|c| matches!(c, ',' | '.' | ';' | ':' | '?' | '!')).collect();
            if out.last() != Some(&MASK.to_string()) || !trail.is_empty() {
                out.push(format!("{MASK}{}", trail.chars().rev().collect::<String>()));
            }
        } else {
            out.push(word.to_string());
        }
    }
    out.join(" ")
}

#[cfg(test)]
#[path = "mine_docs_tests.rs"]
mod tests;
