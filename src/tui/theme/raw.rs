//! A theme file as written: top-level keys, palette and ui tables, and `inherits` merging.

use super::{builtin_raw, user_theme_path};
use anyhow::{anyhow, bail, Context, Result};
use std::collections::BTreeMap;

/// A theme file before palette references are resolved.
#[derive(Default)]
pub(super) struct RawTheme {
    pub(super) name: Option<String>,
    pub(super) syntax: Option<String>,
    pub(super) inherits: Option<String>,
    pub(super) palette: BTreeMap<String, toml::Value>,
    pub(super) ui: BTreeMap<String, toml::Value>,
}

impl RawTheme {
    pub(super) fn parse(text: &str, origin: &str) -> Result<RawTheme> {
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
    pub(super) fn with_parents(self, origin: &str, depth: usize) -> Result<RawTheme> {
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
