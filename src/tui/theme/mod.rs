//! Themes: `themes/*.toml` files with a palette, scoped UI styles and the syntect theme used
//! for the preview (see `themes/coret-dark.toml` for the format).
//!
//! [`Theme::load`] looks in the user's config directory first
//! (`<config>/coret-tui/themes/NAME.toml`), then in the built-in themes; a path to a `.toml`
//! file also works. Every error names the file and the key that is wrong.

pub mod contrast;
mod raw;
mod style;

use anyhow::{anyhow, bail, Context, Result};
use ratatui::style::Style;
use raw::RawTheme;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use style::{parse_colour, parse_style};

/// Built-in themes, embedded in the binary: (name, TOML text).
const BUILTIN: &[(&str, &str)] = &[
    ("coret-dark", include_str!("../../../themes/coret-dark.toml")),
    ("coret-light", include_str!("../../../themes/coret-light.toml")),
];

/// The theme used when none is asked for.
pub const DEFAULT_THEME: &str = "coret-dark";

/// Every UI key the renderer reads. Unknown keys in a theme file are an error (they are
/// almost always typos); a key left out falls back to its parent scope, then to no style.
pub const UI_KEYS: &[&str] = &[
    "background",
    "text",
    "text.dim",
    "border",
    "border.focus",
    "title",
    "title.focus",
    "selection",
    "selection.focus",
    "editor.placeholder",
    "results.rank",
    "results.score",
    "results.name",
    "results.path",
    "results.marker",
    "kind.function",
    "kind.class",
    "kind.method",
    "kind.module",
    "preview.linenr",
    "preview.linenr.span",
    "preview.span",
    "preview.match",
    "neighbours.header",
    "status",
    "status.label",
    "status.ok",
    "status.busy",
    "status.error",
    "gauge",
    "help.key",
    "help.section",
    "message.info",
    "message.error",
];

/// A resolved theme: every UI key mapped to a ratatui [`Style`].
#[derive(Clone, Debug)]
pub struct Theme {
    pub name: String,
    /// Name of the syntect theme for the preview (validated at load time).
    pub syntax: String,
    /// Where the theme came from: a file path or `built-in`.
    pub origin: String,
    styles: HashMap<String, Style>,
}

impl Default for Theme {
    fn default() -> Self {
        // The built-in themes are tested to parse; should that ever fail, fall back to an
        // unstyled theme rather than crash.
        Theme::builtin(DEFAULT_THEME).unwrap_or_else(|_| Theme {
            name: DEFAULT_THEME.into(),
            syntax: "base16-ocean.dark".into(),
            origin: "built-in".into(),
            styles: HashMap::new(),
        })
    }
}

impl Theme {
    /// Names of the themes embedded in the binary.
    pub fn builtin_names() -> Vec<&'static str> {
        BUILTIN.iter().map(|(name, _)| *name).collect()
    }

    /// Loads theme `name`: a `.toml` path, else `<config>/coret-tui/themes/NAME.toml`,
    /// else a built-in theme.
    pub fn load(name: &str) -> Result<Theme> {
        let as_path = Path::new(name);
        if name.ends_with(".toml") || as_path.components().count() > 1 {
            return Theme::from_file(as_path);
        }
        if let Some(path) = user_theme_path(name).filter(|p| p.is_file()) {
            return Theme::from_file(&path);
        }
        if BUILTIN.iter().any(|(n, _)| *n == name) {
            return Theme::builtin(name);
        }
        let mut known = Theme::builtin_names().join(", ");
        if let Some(dir) = user_theme_path(name).and_then(|p| p.parent().map(Path::to_path_buf)) {
            known.push_str(&format!("; user themes go in {}", dir.display()));
        }
        bail!("unknown theme `{name}` (built-in: {known})")
    }

    /// Parses a built-in theme.
    pub fn builtin(name: &str) -> Result<Theme> {
        let raw = builtin_raw(name, "built-in")?;
        Theme::resolve(raw, &format!("built-in theme {name}"))
    }

    /// Parses a theme file.
    pub fn from_file(path: &Path) -> Result<Theme> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read theme file {}", path.display()))?;
        Theme::from_toml(&text, &path.display().to_string())
    }

    /// Parses theme TOML; `origin` (a path) appears in every error.
    pub fn from_toml(text: &str, origin: &str) -> Result<Theme> {
        let raw = RawTheme::parse(text, origin)?;
        Theme::resolve(raw, origin)
    }

    /// The style for a scoped key: `a.b.c`, else `a.b`, else `a`, else no style.
    pub fn style(&self, key: &str) -> Style {
        let mut scope = key;
        loop {
            if let Some(style) = self.styles.get(scope) {
                return *style;
            }
            match scope.rfind('.') {
                Some(dot) => scope = &scope[..dot],
                None => return Style::default(),
            }
        }
    }

    /// `base` with `key` patched over it; handy for focus variants.
    pub fn style_or(&self, key: &str, focused: bool) -> Style {
        let base = self.style(key);
        if focused {
            base.patch(self.style(&format!("{key}.focus")))
        } else {
            base
        }
    }

    fn resolve(raw: RawTheme, origin: &str) -> Result<Theme> {
        let raw = raw.with_parents(origin, 0)?;
        let name = raw.name.clone().unwrap_or_else(|| "custom".into());
        let syntax = raw.syntax.clone().unwrap_or_else(|| "base16-ocean.dark".into());
        let available = crate::tui::highlight::syntax_theme_names();
        if !available.iter().any(|n| *n == syntax) {
            bail!(
                "{origin}: key `syntax`: unknown syntect theme `{syntax}` (available: {})",
                available.join(", ")
            );
        }
        let mut palette = HashMap::new();
        for (key, value) in &raw.palette {
            let colour = parse_colour(value, &HashMap::new())
                .map_err(|e| anyhow!("{origin}: key `palette.{key}`: {e}"))?;
            palette.insert(key.clone(), colour);
        }
        let mut styles = HashMap::new();
        for (key, value) in &raw.ui {
            let is_scope = UI_KEYS.iter().any(|k| {
                k.strip_prefix(key.as_str()).is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
            });
            if !is_scope {
                bail!("{origin}: key `ui.\"{key}\"`: unknown UI key (known keys: {})", UI_KEYS.join(", "));
            }
            let style =
                parse_style(value, &palette).map_err(|e| anyhow!("{origin}: key `ui.\"{key}\"`: {e}"))?;
            styles.insert(key.clone(), style);
        }
        Ok(Theme { name, syntax, origin: origin.to_string(), styles })
    }
}

fn user_theme_path(name: &str) -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "coret-tui")
        .map(|dirs| dirs.config_dir().join("themes").join(format!("{name}.toml")))
}

fn builtin_raw(name: &str, origin: &str) -> Result<RawTheme> {
    let (_, text) = BUILTIN.iter().find(|(n, _)| *n == name).ok_or_else(|| {
        anyhow!("{origin}: unknown theme `{name}` (built-in: {})", Theme::builtin_names().join(", "))
    })?;
    RawTheme::parse(text, &format!("built-in theme {name}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::{Color, Modifier};

    #[test]
    fn builtin_themes_parse_and_define_every_key() {
        for name in Theme::builtin_names() {
            let theme = Theme::builtin(name).unwrap();
            assert_eq!(theme.name, name);
            for key in UI_KEYS {
                assert!(theme.styles.contains_key(*key), "{name} lacks ui key {key}");
            }
        }
    }

    #[test]
    fn dark_and_light_themes_have_contrasting_backgrounds() {
        let luminance = |t: &Theme| match t.style("background").bg {
            Some(Color::Rgb(r, g, b)) => u32::from(r) + u32::from(g) + u32::from(b),
            other => panic!("background is not rgb: {other:?}"),
        };
        assert!(luminance(&Theme::builtin("coret-dark").unwrap()) < 200);
        assert!(luminance(&Theme::builtin("coret-light").unwrap()) > 600);
    }

    #[test]
    fn scoped_keys_fall_back_to_parent_scope() {
        let theme = Theme::from_toml("[ui]\nkind = \"red\"\n\"kind.class\" = \"blue\"\n", "t.toml").unwrap();
        assert_eq!(theme.style("kind.class").fg, Some(Color::Blue));
        assert_eq!(theme.style("kind.function").fg, Some(Color::Red));
        assert_eq!(theme.style("border.focus"), Style::default());
    }

    #[test]
    fn palette_hex_and_modifiers_resolve() {
        let text = "[palette]\naccent = \"#ff8000\"\n[ui]\ntitle = { fg = \"accent\", bg = 236, modifiers = [\"bold\"] }\n";
        let style = Theme::from_toml(text, "t.toml").unwrap().style("title");
        assert_eq!(style.fg, Some(Color::Rgb(255, 128, 0)));
        assert_eq!(style.bg, Some(Color::Indexed(236)));
        assert!(style.add_modifier.contains(Modifier::BOLD));
    }

    #[test]
    fn errors_name_the_file_and_the_key() {
        let err = Theme::from_toml("[ui]\n\"border.focus\" = { fg = \"blu\" }\n", "/x/mine.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("/x/mine.toml") && err.contains("border.focus") && err.contains("blu"), "{err}");

        let err = Theme::from_toml("[ui]\nbordr = \"red\"\n", "/x/mine.toml").unwrap_err().to_string();
        assert!(err.contains("bordr") && err.contains("unknown UI key"), "{err}");

        let err = Theme::from_toml("syntax = \"nope\"\n", "/x/mine.toml").unwrap_err().to_string();
        assert!(err.contains("syntax") && err.contains("nope") && err.contains("InspiredGitHub"), "{err}");

        let err = Theme::from_toml("[ui\n", "/x/mine.toml").unwrap_err().to_string();
        assert!(err.contains("/x/mine.toml") && err.contains("TOML"), "{err}");
    }

    #[test]
    fn inherits_overrides_the_parent() {
        let text = "inherits = \"coret-dark\"\nname = \"mine\"\n[ui]\n\"results.path\" = \"magenta\"\n";
        let theme = Theme::from_toml(text, "mine.toml").unwrap();
        assert_eq!(theme.name, "mine");
        assert_eq!(theme.syntax, "base16-ocean.dark");
        assert_eq!(theme.style("results.path").fg, Some(Color::Magenta));
        assert_eq!(theme.style("kind.class"), Theme::builtin("coret-dark").unwrap().style("kind.class"));
    }

    #[test]
    fn load_reads_a_path_and_rejects_unknown_names() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.toml");
        std::fs::write(&path, "name = \"t\"\nsyntax = \"InspiredGitHub\"\n").unwrap();
        assert_eq!(Theme::load(path.to_str().unwrap()).unwrap().syntax, "InspiredGitHub");
        let err = Theme::load("no-such-theme-xyz").unwrap_err().to_string();
        assert!(err.contains("no-such-theme-xyz") && err.contains("coret-light"), "{err}");
        assert_eq!(Theme::load("coret-light").unwrap().name, "coret-light");
    }
}
