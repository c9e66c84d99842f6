//! What an issue names outright: files (paths, traceback frames, dotted modules) and code
//! symbols (`Class.method`, `some_function(`, `` `Name` ``). The hybrid lifts chunks so named;
//! the rules of what counts as a mention live here alone.

use std::collections::{HashMap, HashSet};

/// Files a query names: `pkg/mod.py` (also inside tracebacks, with `:LINE` suffixes) or dotted
/// names `pkg.mod` / `pkg.mod.Class`, matched against repository paths by trailing path
/// components: a match covers all of the shorter path, or at least a directory and the file name.
#[derive(Debug, Default)]
pub struct NamedFiles {
    /// Path components of each mention, `.py` on the last.
    mentions: Vec<Vec<String>>,
}

impl NamedFiles {
    pub fn of(query: &str) -> Self {
        let mut mentions: Vec<Vec<String>> = Vec::new();
        for word in query.split(|c: char| c.is_whitespace() || "'\"`()[]{}<>,;".contains(c)) {
            let word = word.trim_end_matches(|c: char| c.is_ascii_digit() || c == ':' || c == '.');
            if word.ends_with(".py") && word.len() > 3 {
                mentions.push(
                    word.replace('\\', "/")
                        .split('/')
                        .filter(|p| !p.is_empty() && *p != ".")
                        .map(str::to_string)
                        .collect(),
                );
            } else if word.contains('.')
                && word
                    .split('.')
                    .all(|p| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '_'))
            {
                // `a.b.c.D` may name module `a/b/c.py` or `a/b/c/D.py`: try every prefix of 2+ parts.
                let parts: Vec<&str> = word.split('.').collect();
                for n in 2..=parts.len() {
                    let mut m: Vec<String> = parts[..n].iter().map(|p| p.to_string()).collect();
                    if let Some(last) = m.last_mut() {
                        last.push_str(".py");
                    }
                    mentions.push(m);
                }
            }
        }
        NamedFiles { mentions }
    }

    /// Whether the query names the repository file `path`.
    pub fn names(&self, path: &str) -> bool {
        let comps: Vec<&str> = path.split('/').collect();
        self.mentions.iter().any(|m| {
            let common =
                comps.iter().rev().zip(m.iter().rev()).take_while(|(a, b)| **a == b.as_str()).count();
            common > 0 && (common == comps.len().min(m.len()) || common >= 2)
        })
    }
}

/// The code identifiers a query names. An identifier counts when it looks like code
/// (`snake_case`, `CamelCase`, a digit) or stands where code stands: in backticks or a fenced
/// block, called (`name(`), or as part of a dotted name (`obj.name`). Plain prose words
/// ("sign", "run") do not count, though they may name functions too.
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
                let dotted = (start > 0 && chars[start - 1] == '.')
                    || chars.get(i).is_some_and(|&n| {
                        n == '.' && chars.get(i + 1).is_some_and(|c| c.is_alphabetic() || *c == '_')
                    });
                let called = chars.get(i) == Some(&'(');
                if fenced || ticks % 2 == 1 || dotted || called || looks_like_code(&word) {
                    names.insert(word);
                }
            }
        }
        NamedSymbols { names }
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Whether the query names the chunk called `name` (qualified) by its own last part, as
    /// [`NamedSymbols::strengths`] counts it, however many chunks share it.
    pub fn names(&self, name: &str) -> bool {
        self.names.contains(last_part(name))
    }

    /// How strongly the query names each of `chunks` (ids and qualified names, `Class.method`):
    /// 1 when every part of the qualified name is named (`Class` and `method`), else 1 / n when
    /// only its last part is, shared by n of the chunks (a unique name is as good as a qualified
    /// one; `__init__` is nearly nothing). A class's methods are not named by the class alone:
    /// on the tuning instances that made no difference, and the simpler rule stays. Chunks
    /// named not at all are left out.
    pub fn strengths<'a>(&self, chunks: impl IntoIterator<Item = (u32, &'a str)>) -> HashMap<u32, f32> {
        let mut by_last: HashMap<&str, Vec<(u32, bool)>> = HashMap::new();
        for (id, name) in chunks {
            let last = last_part(name);
            if !self.names.contains(last) {
                continue;
            }
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

fn last_part(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

/// `snake_case`, `CamelCase`, `__dunder__` or with a digit: not an English word.
fn looks_like_code(word: &str) -> bool {
    let inner_upper = word.chars().skip(1).any(char::is_uppercase) && word.chars().any(char::is_lowercase);
    word.contains('_') || inner_upper || word.chars().any(|c| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named_files<'a>(query: &str, paths: [&'a str; 4]) -> HashSet<&'a str> {
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
