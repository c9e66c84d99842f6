//! Syntax highlighting with syntect. A file is highlighted once (off the UI thread, by the
//! highlight worker) and the styled lines are cached by the app, so frames never re-highlight.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use std::sync::OnceLock;
use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, ThemeSet};
use syntect::parsing::SyntaxSet;
use syntect::util::LinesWithEndings;

/// Beyond these sizes a file is shown unhighlighted: syntect's cost grows with them and a
/// preview must stay instant.
const MAX_HIGHLIGHT_LINES: usize = 30_000;
const MAX_HIGHLIGHT_LINE_LEN: usize = 2_000;
const TAB: &str = "    ";

/// A file's lines, styled and ready to render.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HighlightedFile {
    pub lines: Vec<Line<'static>>,
}

impl HighlightedFile {
    /// The file without styles (used for huge files, and when highlighting fails).
    pub fn plain(source: &str) -> Self {
        HighlightedFile { lines: source.lines().map(|l| Line::raw(l.replace('\t', TAB))).collect() }
    }

    pub fn len(&self) -> usize {
        self.lines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }
}

fn syntax_set() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(SyntaxSet::load_defaults_newlines)
}

fn theme_set() -> &'static ThemeSet {
    static SET: OnceLock<ThemeSet> = OnceLock::new();
    SET.get_or_init(ThemeSet::load_defaults)
}

/// The syntect themes a theme file may name in `syntax`.
pub fn syntax_theme_names() -> Vec<&'static str> {
    theme_set().themes.keys().map(String::as_str).collect()
}

/// Highlights `source` (the file at `path`) with the syntect theme `theme_name`.
pub fn highlight(path: &str, source: &str, theme_name: &str) -> HighlightedFile {
    let source = source.replace('\t', TAB);
    let too_big = source.lines().count() > MAX_HIGHLIGHT_LINES
        || source.lines().any(|l| l.len() > MAX_HIGHLIGHT_LINE_LEN);
    let Some(theme) = theme_set().themes.get(theme_name) else {
        return HighlightedFile::plain(&source);
    };
    if too_big {
        return HighlightedFile::plain(&source);
    }
    let syntaxes = syntax_set();
    // The language table names the syntax (TypeScript is coloured as JavaScript).
    let extension = crate::lang::lang_of_path(path)
        .map(|l| l.spec().highlight_as.to_string())
        .unwrap_or_else(|| crate::lang::extension(path));
    let extension = extension.as_str();
    let syntax = syntaxes
        .find_syntax_by_extension(extension)
        .or_else(|| syntaxes.find_syntax_by_first_line(source.lines().next().unwrap_or("")))
        .unwrap_or_else(|| syntaxes.find_syntax_plain_text());
    let mut highlighter = HighlightLines::new(syntax, theme);
    let mut lines = Vec::new();
    for line in LinesWithEndings::from(&source) {
        let Ok(ranges) = highlighter.highlight_line(line, syntaxes) else {
            return HighlightedFile::plain(&source);
        };
        let spans: Vec<Span<'static>> = ranges
            .into_iter()
            .map(|(style, text)| {
                Span::styled(text.trim_end_matches(['\n', '\r']).to_string(), convert(style))
            })
            .filter(|span| !span.content.is_empty())
            .collect();
        lines.push(Line::from(spans));
    }
    HighlightedFile { lines }
}

/// Only the foreground and font style: the TUI theme owns the background, so the preview
/// matches the rest of the screen and the chunk-span tint stays visible.
fn convert(style: syntect::highlighting::Style) -> Style {
    let fg = style.foreground;
    let mut out = Style::default().fg(Color::Rgb(fg.r, fg.g, fg.b));
    if style.font_style.contains(FontStyle::BOLD) {
        out = out.add_modifier(Modifier::BOLD);
    }
    if style.font_style.contains(FontStyle::ITALIC) {
        out = out.add_modifier(Modifier::ITALIC);
    }
    if style.font_style.contains(FontStyle::UNDERLINE) {
        out = out.add_modifier(Modifier::UNDERLINED);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "def add(a, b):\n\treturn a + b  # sum\n\nclass K:\n    pass\n";

    #[test]
    fn python_is_highlighted_line_by_line_with_text_intact() {
        let file = highlight("pkg/m.py", SRC, "base16-ocean.dark");
        assert_eq!(file.len(), 5);
        let text: Vec<String> = file.lines.iter().map(|l| l.to_string()).collect();
        assert_eq!(text[0], "def add(a, b):");
        assert_eq!(text[1], "    return a + b  # sum", "tabs become spaces");
        let colours: std::collections::HashSet<_> = file.lines[0].spans.iter().map(|s| s.style.fg).collect();
        assert!(colours.len() > 1, "keyword and name get different colours");
    }

    #[test]
    fn unknown_theme_or_huge_line_falls_back_to_plain() {
        assert_eq!(highlight("m.py", SRC, "no-such-theme"), HighlightedFile::plain(SRC));
        let long = format!("x = '{}'\n", "a".repeat(MAX_HIGHLIGHT_LINE_LEN));
        assert_eq!(highlight("m.py", &long, "base16-ocean.dark"), HighlightedFile::plain(&long));
    }

    #[test]
    fn bundled_themes_include_a_dark_and_a_light_one() {
        let names = syntax_theme_names();
        assert!(names.contains(&"base16-ocean.dark") && names.contains(&"InspiredGitHub"));
    }
}
