//! Which languages an index takes (`--lang rust,go`); all of them by default.

use super::{extension, lang_of_path, Lang, LANGUAGES};

/// A set of languages; the default holds every supported one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LangSet {
    bits: u32,
}

/// A `--lang` value that names no supported language: one it does not know (`name`), or none
/// at all (`name` empty: `--lang ''`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownLanguage {
    pub name: String,
    pub supported: String,
}

impl std::fmt::Display for UnknownLanguage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let supported = &self.supported;
        match self.name.as_str() {
            // Issue 70: an empty list read "(supported: at least one language)".
            "" => write!(
                f,
                "no language named: give one or more of {supported} (commas between; aliases such as \
                 py, rs or ts work too), or all"
            ),
            name => match closest(name, supported) {
                Some(near) => {
                    write!(f, "unknown language '{name}': did you mean {near}? (supported: {supported})")
                }
                None => write!(f, "unknown language '{name}' (supported: {supported})"),
            },
        }
    }
}

impl std::error::Error for UnknownLanguage {}

/// The supported name nearest `name` (`elxir` → `elixir`), when it is a slip of a letter or two.
fn closest<'a>(name: &str, supported: &'a str) -> Option<&'a str> {
    let name = name.to_ascii_lowercase();
    supported
        .split([',', ' '])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| (edit_distance(&name, s), s))
        .filter(|&(d, s)| d <= 2 && d < s.len())
        .min_by_key(|&(d, _)| d)
        .map(|(_, s)| s)
}

/// Levenshtein distance over chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let up = row[j + 1];
            row[j + 1] = (diag + usize::from(ca != cb)).min(row[j] + 1).min(up + 1);
            diag = up;
        }
    }
    row[b.len()]
}

impl Default for LangSet {
    fn default() -> Self {
        LangSet::all()
    }
}

impl LangSet {
    pub fn all() -> Self {
        LANGUAGES.iter().fold(LangSet { bits: 0 }, |set, s| set.with(s.lang))
    }

    /// No language: the start of a set built with [`LangSet::with`].
    pub fn none() -> Self {
        LangSet { bits: 0 }
    }

    pub fn only(lang: Lang) -> Self {
        LangSet { bits: 0 }.with(lang)
    }

    pub fn with(self, lang: Lang) -> Self {
        LangSet { bits: self.bits | (1 << lang as u32) }
    }

    pub fn contains(self, lang: Lang) -> bool {
        self.bits & (1 << lang as u32) != 0
    }

    pub fn is_all(self) -> bool {
        self == LangSet::all()
    }

    /// The languages in table order.
    pub fn langs(self) -> impl Iterator<Item = Lang> {
        LANGUAGES.iter().map(|s| s.lang).filter(move |&l| self.contains(l))
    }

    /// `rust,go` (ids or aliases, any case, commas or spaces); `all` is every language.
    pub fn parse(text: &str) -> Result<LangSet, UnknownLanguage> {
        let mut set = LangSet { bits: 0 };
        for name in text.split([',', ' ']).map(str::trim).filter(|n| !n.is_empty()) {
            if name.eq_ignore_ascii_case("all") {
                return Ok(LangSet::all());
            }
            let lang = Lang::from_id(name)
                .ok_or_else(|| UnknownLanguage { name: name.to_string(), supported: super::ids() })?;
            set = set.with(lang);
        }
        if set.bits == 0 {
            return Err(UnknownLanguage { name: String::new(), supported: super::ids() });
        }
        Ok(set)
    }

    /// Whether a file belongs in an index of these languages: its own language is in the set,
    /// or a language in the set shares its extension (C and `.h`).
    pub fn takes(self, path: &str) -> bool {
        let Some(lang) = lang_of_path(path) else {
            return false;
        };
        if self.contains(lang) {
            return true;
        }
        let ext = extension(path);
        self.langs().any(|l| l.spec().shares.contains(&ext.as_str()))
    }

    /// `Python, Rust or Go` for messages.
    pub fn names(self) -> String {
        let names: Vec<&str> = self.langs().map(Lang::name).collect();
        match names.split_last() {
            Some((last, [])) => last.to_string(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        }
    }
}
