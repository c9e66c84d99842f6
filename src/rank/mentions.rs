//! What an issue names outright: files (paths in any supported language, also inside
//! tracebacks and stack traces; dotted modules and classes `pkg.mod.Class`; `::` paths
//! `crate::module::Type`) and code symbols (`Class.method`, `Type::method`, `Class#method`,
//! `ptr->field`, `some_function(`, `` `Name` ``). The hybrid lifts chunks so named; the rules of
//! what counts as a mention live here alone.

use std::collections::{HashMap, HashSet};

use crate::lang;

/// Files a query names: paths with a supported extension, `pkg/mod.py`, `src/index.ts`
/// (also inside tracebacks and stack traces, with `:LINE` / `:LINE:COL` suffixes or `#L12`
/// anchors), or module names: dotted `pkg.mod` / `com.pkg.Class` and `::` paths `tokio::sync`
/// (any supported extension completes the last part), Rust's `crate::module::Type` (`.rs`
/// below the crate's root). Mentions are matched against repository paths by trailing path
/// components: a match covers all of the shorter path, or at least a directory and the file name.
#[derive(Debug, Default)]
pub struct NamedFiles {
    mentions: Vec<FileMention>,
}

/// One file mention: its path components, the last a file name (`format.h`) or, for a module
/// name, a file stem (`JsonParser`) that any supported extension completes.
#[derive(Debug)]
struct FileMention {
    comps: Vec<String>,
    stem: bool,
}

/// The extension a `::` path anchored at `word` names (`crate::a::B` → `a.rs`), from the row
/// whose [`lang::LangSpec::module_anchors`] hold it: the path starts at the package's root or
/// at the module of the code that says it, so the anchor names no directory.
fn anchored_extension(word: &str) -> Option<&'static str> {
    lang::LANGUAGES.iter().find(|s| s.module_anchors.contains(&word)).map(|s| s.extensions[0])
}

impl NamedFiles {
    pub fn of(query: &str) -> Self {
        let mut mentions = Vec::new();
        for word in query.split(|c: char| c.is_whitespace() || "'\"`()[]{}<>,;".contains(c)) {
            // A link's `#L12` anchor or a `Class#member` reference: the file is what precedes.
            let word = word.split_once('#').map_or(word, |(before, _)| before);
            let word = word.trim_end_matches(|c: char| c.is_ascii_digit() || c == ':' || c == '.');
            if lang::is_source_path(word) {
                let comps = word
                    .replace('\\', "/")
                    .split('/')
                    .filter(|p| !p.is_empty() && *p != ".")
                    .map(str::to_string)
                    .collect();
                mentions.push(FileMention { comps, stem: false });
            } else if let Some((parts, anchors, ext)) = module_path(word) {
                // `a.b.c.D` may name module `a/b/c.*` or `a/b/c/D.*`: try every prefix of 2+ parts.
                // `crate::a::B` names `a.rs` or `a/B.rs` (`crate::a` alone names `a.rs`).
                for n in 2..=parts.len() {
                    let mut comps: Vec<String> =
                        parts[anchors.min(n)..n].iter().copied().map(str::to_string).collect();
                    let Some(last) = comps.last_mut() else { continue };
                    if let Some(ext) = ext {
                        last.push('.');
                        last.push_str(ext);
                    }
                    mentions.push(FileMention { comps, stem: ext.is_none() });
                }
            }
        }
        NamedFiles { mentions }
    }

    /// Whether the query names the repository file `path`.
    pub fn names(&self, path: &str) -> bool {
        let comps: Vec<&str> = path.split('/').collect();
        let Some((&file, dirs)) = comps.split_last() else { return false };
        let stem = file.rsplit_once('.').map_or("", |(stem, _)| stem);
        self.mentions.iter().any(|m| {
            let Some((last, m_dirs)) = m.comps.split_last() else { return false };
            let file_named = if m.stem {
                stem == last.as_str() && lang::is_source_path(file)
            } else {
                file == last.as_str()
            };
            if !file_named {
                return false;
            }
            let common =
                1 + dirs.iter().rev().zip(m_dirs.iter().rev()).take_while(|(a, b)| **a == b.as_str()).count();
            common == comps.len().min(m.comps.len()) || common >= 2
        })
    }
}

/// The parts of a module name, dotted `a.b.C` or joined by `::` (`a::b::C`, a leading `::`
/// dropped), when every part is an identifier; with how many leading parts of a `::` path are
/// anchors ([`anchored_extension`]) and the extension they mean.
fn module_path(word: &str) -> Option<(Vec<&str>, usize, Option<&'static str>)> {
    let (parts, anchors): (Vec<&str>, usize) = if word.contains("::") {
        let parts: Vec<&str> = word.strip_prefix("::").unwrap_or(word).split("::").collect();
        let anchors = parts.iter().take_while(|&&p| anchored_extension(p).is_some()).count();
        (parts, anchors)
    } else if word.contains('.') {
        (word.split('.').collect(), 0)
    } else {
        return None;
    };
    let identifiers =
        parts.iter().all(|p| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '_'));
    let ext = parts.first().filter(|_| anchors > 0).and_then(|p| anchored_extension(p));
    identifiers.then_some((parts, anchors, ext))
}

/// The code identifiers a query names. An identifier counts when it looks like code
/// (`snake_case`, `CamelCase`, a digit) or stands where code stands: in backticks or a fenced
/// block, called (`name(`), or joined to another name as every language joins them (`obj.name`,
/// `Type::name`, `Class#name`, `ptr->name`). Plain prose words ("sign", "run") do not count,
/// though they may name functions too; nor do `#123` or `a -> b`.
#[derive(Debug, Default)]
pub struct NamedSymbols {
    names: HashSet<String>,
}

impl NamedSymbols {
    pub fn of(query: &str) -> Self {
        let mut names = HashSet::new();
        let mut fenced = false;
        for line in query.lines() {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                continue;
            }
            let chars: Vec<char> = line.chars().collect();
            let mut ticks = 0;
            let mut i = 0;
            while i < chars.len() {
                let c = chars[i];
                if c == '`' {
                    ticks += 1;
                }
                if !(c.is_alphabetic() || c == '_') {
                    i += 1;
                    continue;
                }
                let start = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                let called = chars.get(i) == Some(&'(');
                if fenced || ticks % 2 == 1 || joined(&chars, start, i) || called || looks_like_code(&word) {
                    names.insert(word);
                }
            }
        }
        NamedSymbols { names }
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The names, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(String::as_str)
    }

    /// Whether the query names the chunk called `name` (qualified) by its own last part, as
    /// [`NamedSymbols::strengths`] counts it, however many chunks share it.
    pub fn names(&self, name: &str) -> bool {
        self.names.contains(last_part(name))
    }

    /// How strongly the query names each of `chunks` (ids and qualified names, `Class.method`
    /// in every language): 1 when every part of the qualified name is named (`Class` and
    /// `method`, however the query joins them: `Class.method`, `Class::method`, `Class#method`),
    /// else 1 / n when only its last part is, shared by n of the chunks (a unique name is as
    /// good as a qualified one; `__init__` is nearly nothing). A class's methods are not named
    /// by the class alone: on the tuning instances that made no difference, and the simpler rule
    /// stays. Chunks named not at all are left out.
    pub fn strengths<'a>(&self, chunks: impl IntoIterator<Item = (u32, &'a str)>) -> HashMap<u32, f32> {
        let mut by_last: HashMap<&str, Vec<(u32, bool)>> = HashMap::new();
        for (id, name) in chunks {
            let last = last_part(name);
            if !self.names.contains(last) {
                continue;
            }
            let name = crate::chunk::without_arity(name);
            let qualified = name.contains('.') && name.split('.').all(|p| self.names.contains(p));
            by_last.entry(last).or_default().push((id, qualified));
        }
        let mut out = HashMap::new();
        for group in by_last.values() {
            let share = 1.0 / group.len() as f32;
            for &(id, qualified) in group {
                out.insert(id, if qualified { 1.0 } else { share });
            }
        }
        out
    }
}

/// What joins code names (`obj.attr`, `Type::method`, `Class#method`, `ptr->field`), and whether
/// the join needs a name on its left as well as on its right: `#123`, `## Heading` and
/// `a -> b` are prose, `.attr` and `::new` are code.
const JOINS: [(&str, bool); 4] = [(".", false), ("::", false), ("#", true), ("->", true)];

/// Whether the word `chars[start..end]` is joined to another name: right after a join (itself
/// after a name, or a call's or index's closing bracket, where the join needs one), or right
/// before a join and a name.
fn joined(chars: &[char], start: usize, end: usize) -> bool {
    let name_end = |c: char| c.is_alphanumeric() || c == '_' || c == ')' || c == ']';
    JOINS.iter().any(|&(join, left)| {
        // Joins are ASCII: their length in bytes is their length in chars.
        let before = start.checked_sub(join.len()).is_some_and(|at| {
            starts_at(chars, at, join) && (!left || at.checked_sub(1).is_some_and(|p| name_end(chars[p])))
        });
        let after = starts_at(chars, end, join)
            && chars.get(end + join.len()).is_some_and(|&c| c.is_alphabetic() || c == '_');
        before || after
    })
}

/// Whether `chars` holds `s` from index `at` on.
fn starts_at(chars: &[char], at: usize, s: &str) -> bool {
    s.chars().enumerate().all(|(k, c)| chars.get(at + k) == Some(&c))
}

fn last_part(name: &str) -> &str {
    crate::chunk::own_name(name)
}

/// `snake_case`, `CamelCase`, `__dunder__` or with a digit: not an English word.
fn looks_like_code(word: &str) -> bool {
    let inner_upper = word.chars().skip(1).any(char::is_uppercase) && word.chars().any(char::is_lowercase);
    word.contains('_') || inner_upper || word.chars().any(|c| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named_files<'a, const N: usize>(query: &str, paths: [&'a str; N]) -> HashSet<&'a str> {
        let named = NamedFiles::of(query);
        paths.into_iter().filter(|p| named.names(p)).collect()
    }

    #[test]
    fn finds_files_named_by_path_traceback_or_module() {
        let paths = ["src/requests/sessions.py", "src/requests/utils.py", "sympy/core/numbers.py", "a/b.py"];
        let q = "File \"/usr/lib/python3/site-packages/requests/sessions.py\", line 12, in send";
        assert_eq!(named_files(q, paths), ["src/requests/sessions.py"].into_iter().collect());
        assert_eq!(
            named_files("see sympy.core.numbers.Rational", paths),
            ["sympy/core/numbers.py"].into_iter().collect()
        );
        assert_eq!(
            named_files("in sympy.core.numbers there is", paths),
            ["sympy/core/numbers.py"].into_iter().collect()
        );
        assert_eq!(
            named_files("utils.py:120: crash", paths),
            ["src/requests/utils.py"].into_iter().collect()
        );
        assert!(named_files("nothing here. really", paths).is_empty());
        // `b.py` must not match `ab.py`-like suffixes.
        assert!(named_files("xb.py", paths).is_empty());
    }

    #[test]
    fn finds_files_named_by_path_in_every_language() {
        let paths = [
            "include/fmt/format.h",
            "src/format.cc",
            "lib/response.js",
            "src/index.ts",
            "src/index.js",
            "tokio/src/runtime/mod.rs",
            "clientconn.go",
            "server.go",
            "src/main/java/com/fasterxml/jackson/core/JsonParser.java",
            "src/main/java/com/fasterxml/jackson/core/JsonGenerator.java",
        ];
        let only = |path: &'static str| [path].into_iter().collect::<HashSet<_>>();
        assert_eq!(named_files("the overflow in src/fmt/format.h:1203", paths), only("include/fmt/format.h"));
        let stack = "TypeError: x is undefined\n    at send (/app/node_modules/express/lib/response.js:42:7)";
        assert_eq!(named_files(stack, paths), only("lib/response.js"));
        assert_eq!(named_files("error TS2322 at src/index.ts:42", paths), only("src/index.ts"));
        assert_eq!(named_files("src/index.ts:42:7 - error", paths), only("src/index.ts"));
        let link = "see https://github.com/o/r/blob/main/src/index.ts#L40-L42";
        assert_eq!(named_files(link, paths), only("src/index.ts"));
        assert_eq!(
            named_files("panic at tokio/src/runtime/mod.rs:120:5", paths),
            only("tokio/src/runtime/mod.rs")
        );
        assert_eq!(named_files("in grpc-go/clientconn.go, Dial", paths), only("clientconn.go"));
        assert_eq!(
            named_files("com/fasterxml/jackson/core/JsonParser.java", paths),
            only("src/main/java/com/fasterxml/jackson/core/JsonParser.java")
        );
    }

    #[test]
    fn finds_files_named_by_module_class_or_rust_path() {
        let paths = [
            "src/main/java/com/fasterxml/jackson/core/JsonParser.java",
            "src/main/java/com/fasterxml/jackson/core/JsonGenerator.java",
            "src/runtime/task.rs",
            "src/runtime/mod.rs",
            "src/format.rs",
            "include/fmt/format.h",
            "tokio/src/sync/mpsc.rs",
            "src/sync/oneshot.rs",
            "src/session.py",
        ];
        let only = |path: &'static str| [path].into_iter().collect::<HashSet<_>>();
        let jackson = "src/main/java/com/fasterxml/jackson/core/JsonParser.java";
        assert_eq!(named_files("com.fasterxml.jackson.core.JsonParser fails", paths), only(jackson));
        assert_eq!(named_files("see com.fasterxml.jackson.core.JsonParser#nextToken", paths), only(jackson));
        assert_eq!(
            named_files("`crate::runtime::task::Harness::poll` panics", paths),
            only("src/runtime/task.rs")
        );
        // `crate::` paths name Rust files only, not `format.h`.
        assert_eq!(named_files("crate::format::Formatter::new()", paths), only("src/format.rs"));
        assert_eq!(named_files("tokio::sync::mpsc::channel", paths), only("tokio/src/sync/mpsc.rs"));
        // A method call on `self` or a variable names no module.
        assert!(named_files("self.session and format.width", paths).is_empty());
        assert!(named_files("Runtime::new and String::from", paths).is_empty());
    }

    fn named(query: &str) -> Vec<String> {
        let mut v: Vec<String> = NamedSymbols::of(query).names.into_iter().collect();
        v.sort();
        v
    }

    #[test]
    fn code_shaped_or_code_placed_words_are_named_and_prose_is_not() {
        assert_eq!(named("the sign of a run is odd"), Vec::<String>::new());
        assert_eq!(named("calling sign(x) fails"), ["sign"]);
        assert_eq!(named("HueMapping breaks in _lookup_single"), ["HueMapping", "_lookup_single"]);
        assert_eq!(named("B.blocks is wrong. The end."), ["B", "blocks"]);
        assert_eq!(named("use `atoms` here, not atoms"), ["atoms"]);
        assert_eq!(named("```\nx = evaluate\n```\nthen evaluate again"), ["evaluate", "x"]);
        assert_eq!(named("log10 and __eq__"), ["__eq__", "log10"]);
    }

    #[test]
    fn names_joined_by_colons_hash_or_arrow_are_code_and_prose_marks_are_not() {
        assert_eq!(named("the Builder::build of a run"), ["Builder", "build"]);
        assert_eq!(named("see ::new there"), ["new"]);
        assert_eq!(named("see Parser#parse here"), ["Parser", "parse"]);
        assert_eq!(named("when ptr->next is null"), ["next", "ptr"]);
        assert_eq!(named("when node(x)->next is null"), ["next", "node"]);
        assert_eq!(named("issue #123, see #readme: a -> b in C# code"), Vec::<String>::new());
        assert_eq!(named("## Steps\nrun it"), Vec::<String>::new());
    }

    #[test]
    fn a_name_joined_any_way_names_its_qualified_chunk_fully() {
        let q = NamedSymbols::of("`Builder::build` fails, as does Parser#parse, and fmt.Sprintf panics");
        let chunks = [
            (0, "Builder.build"),
            (1, "Config.build"),
            (2, "Parser.parse"),
            (3, "Lexer.parse"),
            (4, "Sprintf"),
            (5, "Sprint"),
            (6, "Config"),
        ];
        let s = q.strengths(chunks);
        assert_eq!(s[&0], 1.0, "`Builder::build` names `Builder.build`");
        assert_eq!(s[&1], 0.5, "`build` alone is shared");
        assert_eq!(s[&2], 1.0, "`Parser#parse` names `Parser.parse`");
        assert_eq!(s[&3], 0.5);
        assert_eq!(s[&4], 1.0, "`fmt.Sprintf` names the unique `Sprintf`");
        assert!(!s.contains_key(&5) && !s.contains_key(&6));
        assert!(q.names("Builder.build") && !q.names("Sprint"));
    }

    #[test]
    fn a_qualified_or_unique_name_is_named_fully_and_a_shared_one_by_its_share() {
        let q = NamedSymbols::of("`Expr.__eq__` and `PolyFit` break, and so does `_setup`");
        let chunks = [
            (0, "Expr.__eq__"),
            (1, "Basic.__eq__"),
            (2, "Float.__eq__"),
            (3, "PolyFit"),
            (4, "PolyFit.__call__"),
            (5, "ContinuousBase._setup"),
            (6, "Nominal._setup"),
            (7, "<module>"),
        ];
        let s = q.strengths(chunks);
        assert_eq!(s[&0], 1.0, "both parts named");
        assert!((s[&1] - 1.0 / 3.0).abs() < 1e-6, "three chunks share `__eq__`");
        assert_eq!(s[&3], 1.0, "a unique name");
        assert!(!s.contains_key(&4), "`__call__` is not named");
        assert_eq!((s[&5], s[&6]), (0.5, 0.5));
        assert!(!s.contains_key(&7));
    }
}
