//! Values of a theme file: colours (palette names, `#rrggbb`, ANSI names, 0–255) and styles.

use ratatui::style::{Color, Modifier, Style};
use std::collections::HashMap;

pub(super) fn parse_style(value: &toml::Value, palette: &HashMap<String, Color>) -> Result<Style, String> {
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
pub(super) fn parse_colour(value: &toml::Value, palette: &HashMap<String, Color>) -> Result<Color, String> {
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

    fn colour(s: &str) -> Result<Color, String> {
        parse_colour(&toml::Value::String(s.into()), &HashMap::new())
    }

    #[test]
    fn colours_in_every_notation() {
        assert_eq!(colour("#0a0B0c"), Ok(Color::Rgb(10, 11, 12)));
        assert_eq!(colour("light_blue"), Ok(Color::LightBlue));
        assert_eq!(colour("Dark-Gray"), Ok(Color::DarkGray));
        assert!(colour("#12345").unwrap_err().contains("#rrggbb"));
        assert!(parse_colour(&toml::Value::Integer(300), &HashMap::new()).is_err());
    }

    #[test]
    fn style_tables_reject_unknown_fields_and_modifiers() {
        let table: toml::Value = toml::from_str("fg = \"red\"\nweight = 3").unwrap();
        assert!(parse_style(&table, &HashMap::new()).unwrap_err().contains("weight"));
        let table: toml::Value = toml::from_str("modifiers = [\"blinky\"]").unwrap();
        assert!(parse_style(&table, &HashMap::new()).unwrap_err().contains("blinky"));
    }
}
