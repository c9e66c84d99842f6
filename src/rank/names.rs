//! Names as queries. A query that is one identifier (`Router`), a qualified name
//! (`Runtime::spawn`, `http.Client`, `Class#method`) or a short phrase naming one ("the Session
//! class") means the code that *defines* it: [`definition_strengths`] finds the type, trait,
//! class, function or method of that name (more when its file is named after it), not every
//! chunk that mentions it. A short prose question gets a weak match of its words against file
//! and directory names instead ([`path_word_strengths`]: `init` / `initializes`). The hybrid
//! adds both to its fusion, scaled by `FusionParams::name_boost` and `path_word_boost`.

use std::collections::HashMap;

use crate::chunk::{Chunk, ChunkKind};
use crate::index::code_tokens::tokens;
use crate::index::query_terms::query_terms;
use crate::index::Hit;

/// Words a phrase may wrap a name in: "the `Router` struct", "fn spawn", "where is Session
/// defined".
const FILLER: [&str; 30] = [
    "the",
    "a",
    "an",
    "struct",
    "class",
    "trait",
    "fn",
    "function",
    "func",
    "def",
    "method",
    "type",
    "interface",
    "enum",
    "macro",
    "impl",
    "module",
    "const",
    "constant",
    "where",
    "is",
    "defined",
    "definition",
    "of",
    "find",
    "show",
    "me",
    "declaration",
    "implementation",
    "object",
];

/// The most words a phrase naming one name has.
const PHRASE_WORDS: usize = 4;

/// The longest name taken as one (a pasted blob is not a name).
const MAX_NAME_CHARS: usize = 200;

/// A query that names one definition: its parts, the last the name itself (`["Runtime",
/// "spawn"]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameQuery {
    pub parts: Vec<String>,
}

impl NameQuery {
    /// The name `query` consists of, or `None` when it is prose, several names or empty.
    pub fn of(query: &str) -> Option<NameQuery> {
        let words: Vec<&str> = query.split_whitespace().collect();
        if words.is_empty() || words.len() > PHRASE_WORDS {
            return None;
        }
        let named: Vec<&str> = words
            .iter()
            .map(|w| w.trim_matches(|c: char| "`'\"?!,;:".contains(c)))
            .filter(|w| !w.is_empty() && !FILLER.contains(&w.to_ascii_lowercase().as_str()))
            .collect();
        let [name] = named[..] else { return None };
        if name.chars().count() > MAX_NAME_CHARS {
            return None;
        }
        // `spawn()`, `select!`, `Class#method`, `ptr->field`, `Mod.fun/2`, `M:m`.
        let name = name.trim_end_matches("()").trim_end_matches('!');
        let parts: Vec<String> = dotted(name).split('.').map(String::from).collect();
        let identifier = |p: &String| {
            p.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
                && p.chars().all(|c| c.is_alphanumeric() || c == '_')
        };
        // A phrase of several words names code only when its one name looks like code or is
        // qualified: "the scheduler" is prose.
        let code_like = parts.len() > 1 || looks_like_code(name);
        (parts.iter().all(identifier) && (words.len() == 1 || code_like)).then_some(NameQuery { parts })
    }

    /// The name itself (the last part).
    pub fn name(&self) -> &str {
        self.parts.last().map_or("", String::as_str)
    }
}

/// A name as its language writes it, dotted as chunks are named (issue 81): Rust's and Ruby's
/// `A::B`, Ruby's `A#m`, Lua's `M:m`, C's `p->f` joined by `.`; Elixir's arity (`Mod.fun/2`)
/// dropped. A dotted name comes back as it is.
pub fn dotted(written: &str) -> String {
    let name = match written.rsplit_once('/') {
        Some((head, arity)) if !arity.is_empty() && arity.bytes().all(|b| b.is_ascii_digit()) => head,
        _ => written,
    };
    name.replace("::", ".").replace("->", ".").replace(['#', ':'], ".")
}

/// `snake_case`, `CamelCase`, `Capitalised` or with a digit: not a lowercase English word.
fn looks_like_code(word: &str) -> bool {
    word.contains('_')
        || word.chars().next().is_some_and(char::is_uppercase)
        || word.chars().skip(1).any(char::is_uppercase)
        || word.chars().any(|c| c.is_ascii_digit())
}

/// A name compared across conventions: lowercase, without `_` or `-` (`spawn_blocking`,
/// `SpawnBlocking` and `spawn-blocking` are one).
fn fold(s: &str) -> String {
    s.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase).collect()
}

/// A file's stem (`router` of `src/router.rs`) and its directories.
fn path_parts(path: &str) -> (Option<&str>, Vec<&str>) {
    let mut comps: Vec<&str> = path.split('/').collect();
    let file = comps.pop();
    (file.map(|f| f.rsplit_once('.').map_or(f, |(stem, _)| stem)), comps)
}

/// Strength of a definition of exactly the name (letter case included).
const EXACT: f32 = 1.0;
/// ... of the name in another case or convention (`router` for `Router`).
const FOLDED: f32 = 0.5;
/// Added when the defining file is named after the name (`Router` in `router.rs`).
const FILE_NAMED: f32 = 0.5;
/// Times this when the query qualifies the name (`http.Client`) but neither the chunk's
/// qualified name nor its path holds the qualifier.
const UNQUALIFIED: f32 = 0.3;

/// How strongly `query` names each chunk as its definition: [`EXACT`] or [`FOLDED`] for a
/// function, class (type, trait, interface) or method whose own name is the query's name,
/// plus [`FILE_NAMED`] when its file is named after it; times [`UNQUALIFIED`] when the
/// query's qualifier (`Runtime` of `Runtime::spawn`, `http` of `http.Client`) is neither part
/// of the chunk's qualified name nor of its path. Module chunks define nothing. Empty unless
/// the query is a name ([`NameQuery::of`]).
pub fn definition_strengths<'a>(
    query: &str,
    chunks: impl IntoIterator<Item = (u32, &'a Chunk)>,
) -> HashMap<u32, f32> {
    let mut out = HashMap::new();
    let Some(q) = NameQuery::of(query) else { return out };
    let name = q.name();
    let folded = fold(name);
    let qualifiers: Vec<String> = q.parts[..q.parts.len() - 1].iter().map(|p| fold(p)).collect();
    for (id, c) in chunks {
        if c.kind == ChunkKind::Module {
            continue;
        }
        let own = crate::chunk::own_name(&c.name);
        let mut strength = if own == name {
            EXACT
        } else if fold(own) == folded {
            FOLDED
        } else {
            continue;
        };
        let (stem, dirs) = path_parts(&c.path);
        if stem.is_some_and(|s| fold(s) == folded) {
            strength += FILE_NAMED;
        }
        if !qualifiers.is_empty() {
            let held: Vec<String> = c
                .name
                .split('.')
                .map(fold)
                .chain(stem.map(fold))
                .chain(dirs.iter().map(|d| fold(d)))
                .collect();
            if !qualifiers.iter().all(|q| held.contains(q)) {
                strength *= UNQUALIFIED;
            }
        }
        out.insert(id, strength);
    }
    out
}

/// For a query that is a name, each type defining it ([`definition_strengths`]: `LocalSet`)
/// ranks above its own members (`LocalSet.default`, `LocalSet.new`), its score lifted just
/// past the best of theirs. A method that says its type's name three times in three lines
/// outscores, in BM25, a type under a 200-line doc comment (tokio's `LocalSet`, issue 70),
/// but the query asks for the type. Best first, ties by chunk id; `hits` unchanged for prose.
pub fn types_lead_members<'a>(
    query: &str,
    mut hits: Vec<Hit>,
    chunk: impl Fn(u32) -> Option<&'a Chunk>,
) -> Vec<Hit> {
    let defined =
        definition_strengths(query, hits.iter().filter_map(|h| chunk(h.chunk).map(|c| (h.chunk, c))));
    let types: Vec<(u32, String)> = defined
        .keys()
        .filter_map(|&id| {
            chunk(id).filter(|c| c.kind == ChunkKind::Class).map(|c| (id, format!("{}.", c.name)))
        })
        .collect();
    for (id, members) in types {
        let of_members = |h: &Hit| chunk(h.chunk).is_some_and(|c| c.name.starts_with(&members));
        let best = hits.iter().filter(|h| of_members(h)).map(|h| h.score).fold(f32::MIN, f32::max);
        if let Some(own) = hits.iter_mut().find(|h| h.chunk == id).filter(|h| h.score <= best) {
            own.score = best.next_up();
        }
    }
    hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.chunk.cmp(&b.chunk)));
    hits
}

/// The shortest word or path piece matched as a prefix.
const MIN_PREFIX: usize = 3;

/// Whether a query word and a piece of a path name one thing: one is a prefix of the other,
/// the shorter at least [`MIN_PREFIX`] letters (`init` / `initializes`, `task` / `tasks`), or
/// they differ only in their last two letters past five shared (`scheduled` / `scheduler`).
fn word_matches(word: &str, piece: &str) -> bool {
    let (short, long) = if word.len() <= piece.len() { (word, piece) } else { (piece, word) };
    if short.len() < MIN_PREFIX {
        return false;
    }
    if long.starts_with(short) {
        return true;
    }
    let shared = short.bytes().zip(long.bytes()).take_while(|(a, b)| a == b).count();
    shared >= 5 && short.len() - shared <= 2 && long.len() - shared <= 2
}

/// How many of `query`'s words (stop words left out, at least [`MIN_PREFIX`] letters, letters
/// only) each file's name or directories match ([`word_matches`] against the pieces of each
/// path component, `spawn_blocking.rs` giving `spawn` and `blocking`), for the files of `paths`
/// that match any. A weak signal for prose: a question about "initializing the runtime" is
/// likely about `runtime/init.rs`.
pub fn path_word_strengths<'a>(
    query: &str,
    paths: impl IntoIterator<Item = &'a str>,
) -> HashMap<&'a str, f32> {
    let words: Vec<String> = query_terms(query)
        .into_iter()
        .map(|(w, _)| w)
        .filter(|w| w.len() >= MIN_PREFIX && w.chars().all(|c| c.is_ascii_alphabetic()))
        // A query of 1,000 identifiers is not a question: its first words are enough.
        .take(64)
        .collect();
    let mut out = HashMap::new();
    if words.is_empty() {
        return out;
    }
    for path in paths {
        let (stem, dirs) = path_parts(path);
        let pieces: Vec<String> = dirs.into_iter().chain(stem).flat_map(tokens).collect();
        let matched = words.iter().filter(|w| pieces.iter().any(|p| word_matches(w, p))).count();
        if matched > 0 {
            out.insert(path, matched as f32);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_qualified_names_and_phrases_naming_one_are_names() {
        let parts = |q: &str| NameQuery::of(q).map(|n| n.parts);
        assert_eq!(parts("Router"), Some(vec!["Router".to_string()]));
        assert_eq!(parts("Runtime::spawn"), Some(vec!["Runtime".to_string(), "spawn".to_string()]));
        assert_eq!(parts("http.Client"), Some(vec!["http".to_string(), "Client".to_string()]));
        assert_eq!(parts("the `Session` class"), Some(vec!["Session".to_string()]));
        assert_eq!(parts("fn spawn_blocking"), Some(vec!["spawn_blocking".to_string()]));
        assert_eq!(parts("select!"), Some(vec!["select".to_string()]));
        assert_eq!(parts("spawn"), Some(vec!["spawn".to_string()]));
        // As each language writes them (issue 81).
        let two = |a: &str, b: &str| Some(vec![a.to_string(), b.to_string()]);
        assert_eq!(
            parts("Phoenix.LiveViewTest.render_click/2"),
            Some(vec!["Phoenix".into(), "LiveViewTest".into(), "render_click".into()])
        );
        assert_eq!(parts("M:setup"), two("M", "setup"));
        assert_eq!(
            parts("Builder::HasOne#valid_options"),
            Some(vec!["Builder".into(), "HasOne".into(), "valid_options".into()])
        );
        assert_eq!(parts("a/b"), None, "a path is not a name");
        // Prose, several names, or too long.
        assert_eq!(parts("WebSocket client"), None);
        assert_eq!(parts("how are spawned tasks scheduled"), None);
        assert_eq!(parts("the scheduler"), None);
        assert_eq!(parts(""), None);
        assert_eq!(parts("a+b"), None);
    }

    fn chunk(path: &str, kind: ChunkKind, name: &str) -> Chunk {
        Chunk {
            path: path.into(),
            kind,
            name: name.into(),
            start_byte: 0,
            end_byte: 0,
            start_line: 1,
            end_line: 1,
            text: String::new(),
            test: false,
            form: Default::default(),
        }
    }

    fn fixture() -> Vec<Chunk> {
        vec![
            chunk("src/router.rs", ChunkKind::Class, "Router"),
            chunk("src/app.rs", ChunkKind::Function, "make_router"),
            chunk("src/app.rs", ChunkKind::Method, "App.router"),
            chunk("src/router.rs", ChunkKind::Module, "<module>"),
            chunk("src/legacy.rs", ChunkKind::Class, "Router"),
            chunk("src/runtime/mod.rs", ChunkKind::Method, "Runtime.spawn"),
            chunk("src/task/spawn.rs", ChunkKind::Function, "spawn"),
            chunk("net/http/client.go", ChunkKind::Class, "Client"),
            chunk("net/rpc/client.go", ChunkKind::Class, "Client"),
        ]
    }

    fn strengths(query: &str) -> Vec<(u32, f32)> {
        let chunks = fixture();
        let mut s: Vec<(u32, f32)> =
            definition_strengths(query, chunks.iter().zip(0u32..).map(|(c, i)| (i, c))).into_iter().collect();
        s.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        s
    }

    #[test]
    fn a_name_lifts_its_definitions_most_where_the_file_is_named_after_it() {
        // router.rs's Router first, legacy.rs's next, the method `router` weakly; never the
        // module chunk or `make_router`, which only mention it.
        assert_eq!(strengths("Router"), [(0, EXACT + FILE_NAMED), (4, EXACT), (2, FOLDED)]);
    }

    #[test]
    fn a_qualified_name_prefers_the_definition_its_qualifier_holds() {
        let s = strengths("Runtime::spawn");
        assert_eq!(s[0].0, 5, "{s:?}");
        assert!(s.iter().any(|&(id, v)| id == 6 && v < s[0].1), "{s:?}");
        let s = strengths("http.Client");
        assert_eq!(s[0].0, 7, "{s:?}");
        assert!(s[1].0 == 8 && s[1].1 < s[0].1, "{s:?}");
        assert!(strengths("how does the router work").is_empty());
    }

    #[test]
    fn a_type_named_by_the_query_leads_its_own_members_only() {
        let chunks = [
            chunk("src/task/local.rs", ChunkKind::Class, "LocalSet"),
            chunk("src/task/local.rs", ChunkKind::Method, "LocalSet.default"),
            chunk("src/task/local.rs", ChunkKind::Method, "LocalSet.new"),
            chunk("src/runtime.rs", ChunkKind::Function, "spawn_local"),
            chunk("src/task/local.rs", ChunkKind::Method, "LocalSetExt.run"),
        ];
        let hit = |chunk: u32, score: f32| Hit { chunk, score };
        let hits = vec![hit(1, 9.0), hit(3, 8.0), hit(2, 7.5), hit(0, 7.0), hit(4, 6.0)];
        let order = |query: &str| {
            let ranked = types_lead_members(query, hits.clone(), |id| chunks.get(id as usize));
            ranked.iter().map(|h| h.chunk).collect::<Vec<_>>()
        };
        // Above its best member; another's function and another type's member keep their places.
        assert_eq!(order("LocalSet"), [0, 1, 3, 2, 4]);
        assert_eq!(order("the LocalSet struct"), [0, 1, 3, 2, 4]);
        assert_eq!(order("how do local sets run tasks"), [1, 3, 2, 0, 4], "prose: unchanged");
        assert_eq!(order("spawn_local"), [1, 3, 2, 0, 4], "a function has no members");
    }

    #[test]
    fn prose_words_weakly_match_file_and_directory_names_by_prefix() {
        let paths =
            ["src/runtime/init.rs", "src/task/spawn_blocking.rs", "src/io/read.rs", "src/scheduler.rs"];
        let s = path_word_strengths("where is the runtime initialized", paths);
        assert_eq!(s.get("src/runtime/init.rs"), Some(&2.0), "{s:?}");
        assert!(!s.contains_key("src/io/read.rs"));
        let s = path_word_strengths("how are blocking tasks scheduled", paths);
        assert_eq!(s.get("src/task/spawn_blocking.rs"), Some(&2.0), "{s:?}");
        assert_eq!(s.get("src/scheduler.rs"), Some(&1.0), "{s:?}");
        // Two-letter pieces and words match nothing.
        assert!(path_word_strengths("io", paths).is_empty());
    }

    #[test]
    fn odd_queries_answer_without_panic() {
        let chunks = fixture();
        let all = || chunks.iter().zip(0u32..).map(|(c, i)| (i, c));
        assert!(definition_strengths("x", all()).is_empty());
        let many: String = (0..1000).map(|i| format!("ident_{i} ")).collect();
        assert!(definition_strengths(&many, all()).is_empty());
        let _ = path_word_strengths(&many, chunks.iter().map(|c| c.path.as_str()));
        assert!(NameQuery::of(&"a".repeat(1000)).is_none());
        assert!(definition_strengths("::", all()).is_empty());
        assert!(definition_strengths("漢字", all()).is_empty());
    }
}
