//! Themes: `themes/*.toml` files with a palette, scoped UI styles and the syntect theme used
//! for the preview (see `themes/coret-dark.toml` for the format).
//!
//! [`Theme::load`] looks in the user's config directory first
//! (`<config>/coret-tui/themes/NAME.toml`), then in the built-in themes; a path to a `.toml`
//! file also works. Every error names the file and the key that is wrong.

use anyhow::{anyhow, bail, Context, Result};
use ratatui::style::{Color, Modifier, Style};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// Built-in themes, embedded in the binary: (name, TOML text).
const BUILTIN: &[(&str, &str)] = &[
    ("coret-dark", include_str!("../../themes/coret-dark.toml")),
    ("coret-light", include_str!("../../themes/coret-light.toml")),
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

/// A theme file before palette references are resolved.
#[derive(Default)]
struct RawTheme {
    name: Option<String>,
    syntax: Option<String>,
    inherits: Option<String>,
    palette: BTreeMap<String, toml::Value>,
    ui: BTreeMap<String, toml::Value>,
}

impl RawTheme {
    fn parse(text: &str, origin: &str) -> Result<RawTheme> {
        let table: toml::Table = text.parse().map_err(|e| anyhow!("{origin}: invalid TOML: {e}"))?;
        let mut raw = RawTheme::default();
        for (key, value) in table {
            match key.as_str() {
                "name" | "syntax" | "inherits" => {
                    let s = value
                        .as_str()
                        .ok_or_else(|| anyhow!("{origin}: key `{key}`: expected a string"))?
                        .to_string();
                    match key.as_str() {
                        "name" => raw.name = Some(s),
                        "syntax" => raw.syntax = Some(s),
                        _ => raw.inherits = Some(s),
                    }
                }
                "palette" | "ui" => {
                    let toml::Value::Table(t) = value else {
                        bail!("{origin}: key `{key}`: expected a table");
                    };
                    let target = if key == "palette" { &mut raw.palette } else { &mut raw.ui };
                    target.extend(t);
                }
                other => bail!(
                    "{origin}: key `{other}`: unknown key (expected name, syntax, inherits, palette, ui)"
                ),
            }
        }
        Ok(raw)
    }

    /// Merges the `inherits` chain: the child's palette and ui entries override the parent's.
    fn with_parents(self, origin: &str, depth: usize) -> Result<RawTheme> {
        let Some(parent_name) = self.inherits.clone() else {
            return Ok(self);
        };
        if depth > 8 {
            bail!("{origin}: key `inherits`: inheritance chain too deep (a cycle?)");
        }
        let parent = match user_theme_path(&parent_name).filter(|p| p.is_file()) {
            Some(path) => {
                let text = std::fs::read_to_string(&path)
                    .with_context(|| format!("cannot read theme file {}", path.display()))?;
                RawTheme::parse(&text, &path.display().to_string())?
            }
            None => builtin_raw(&parent_name, &format!("{origin}: key `inherits`"))?,
        };
        let mut merged = parent.with_parents(origin, depth + 1)?;
        merged.palette.extend(self.palette);
        merged.ui.extend(self.ui);
        merged.name = self.name.or(merged.name);
        merged.syntax = self.syntax.or(merged.syntax);
        merged.inherits = None;
        Ok(merged)
    }
}

fn parse_style(value: &toml::Value, palette: &HashMap<String, Color>) -> Result<Style, String> {
    match value {
        toml::Value::String(_) | toml::Value::Integer(_) => {
            Ok(Style::default().fg(parse_colour(value, palette)?))
        }
        toml::Value::Table(table) => {
            let mut style = Style::default();
            for (key, v) in table {
                match key.as_str() {
                    "fg" => style = style.fg(parse_colour(v, palette).map_err(|e| format!("fg: {e}"))?),
                    "bg" => style = style.bg(parse_colour(v, palette).map_err(|e| format!("bg: {e}"))?),
                    "modifiers" => style = style.add_modifier(parse_modifiers(v)?),
                    other => return Err(format!("unknown field `{other}` (expected fg, bg, modifiers)")),
                }
            }
            Ok(style)
        }
        other => {
            Err(format!("expected a colour or a table {{ fg, bg, modifiers }}, found {}", other.type_str()))
        }
    }
}

fn parse_modifiers(value: &toml::Value) -> Result<Modifier, String> {
    let list = value.as_array().ok_or("modifiers: expected a list of strings")?;
    let mut modifiers = Modifier::empty();
    for item in list {
        let name = item.as_str().ok_or("modifiers: expected a list of strings")?;
        modifiers |= match name {
            "bold" => Modifier::BOLD,
            "dim" => Modifier::DIM,
            "italic" => Modifier::ITALIC,
            "underlined" => Modifier::UNDERLINED,
            "slow_blink" => Modifier::SLOW_BLINK,
            "rapid_blink" => Modifier::RAPID_BLINK,
            "reversed" => Modifier::REVERSED,
            "hidden" => Modifier::HIDDEN,
            "crossed_out" => Modifier::CROSSED_OUT,
            other => return Err(format!("modifiers: unknown modifier `{other}`")),
        };
    }
    Ok(modifiers)
}

/// A colour: a palette name, `#rrggbb`, an ANSI colour name, or an index 0–255.
fn parse_colour(value: &toml::Value, palette: &HashMap<String, Color>) -> Result<Color, String> {
    if let Some(index) = value.as_integer() {
        return u8::try_from(index)
            .map(Color::Indexed)
            .map_err(|_| format!("colour index {index} is not in 0..=255"));
    }
    let Some(s) = value.as_str() else {
        return Err(format!("expected a colour string, found {}", value.type_str()));
    };
    if let Some(colour) = palette.get(s) {
        return Ok(*colour);
    }
    if let Some(hex) = s.strip_prefix('#') {
        let valid = hex.len() == 6 && hex.chars().all(|c| c.is_ascii_hexdigit());
        let channel = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).unwrap_or(0);
        return if valid {
            Ok(Color::Rgb(channel(0), channel(2), channel(4)))
        } else {
            Err(format!("invalid hex colour `{s}` (expected #rrggbb)"))
        };
    }
    let named = match s.to_ascii_lowercase().replace('_', "-").as_str() {
        "reset" | "default" => Color::Reset,
        "black" => Color::Black,
        "red" => Color::Red,
        "green" => Color::Green,
        "yellow" => Color::Yellow,
        "blue" => Color::Blue,
        "magenta" => Color::Magenta,
        "cyan" => Color::Cyan,
        "gray" | "grey" => Color::Gray,
        "dark-gray" | "dark-grey" | "darkgray" => Color::DarkGray,
        "light-red" => Color::LightRed,
        "light-green" => Color::LightGreen,
        "light-yellow" => Color::LightYellow,
        "light-blue" => Color::LightBlue,
        "light-magenta" => Color::LightMagenta,
        "light-cyan" => Color::LightCyan,
        "white" => Color::White,
        _ => {
            return Err(format!(
                "unknown colour `{s}` (not in the palette, not #rrggbb, not an ANSI colour name)"
            ))
        }
    };
    Ok(named)
}

#[cfg(test)]
mod tests {
    use super::*;

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
