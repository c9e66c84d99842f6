//! Rendering of each pane: pure functions of `&App` that draw into a frame.

pub mod editor;
pub mod fit;
pub mod help;
pub mod neighbours;
pub mod preview;
pub mod results;
pub mod status;
pub mod waiting;

use crate::tui::theme::Theme;
use crate::ChunkKind;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// A pane's frame: a thick, coloured border and a bright title when focused, so the focus
/// is obvious even without colours.
pub fn pane_block<'a>(theme: &Theme, title: impl Into<Line<'a>>, focused: bool) -> Block<'a> {
    Block::bordered()
        .border_type(if focused { BorderType::Thick } else { BorderType::Rounded })
        .border_style(theme.style_or("border", focused))
        .title(title.into().style(theme.style_or("title", focused)))
}

/// A one-character tag for a chunk kind (the help explains them).
pub fn kind_tag(kind: ChunkKind) -> &'static str {
    match kind {
        ChunkKind::Function => "f",
        ChunkKind::Class => "C",
        ChunkKind::Method => "m",
        ChunkKind::Module => "≡",
        ChunkKind::Macro => "!",
        ChunkKind::Window => "≣",
    }
}

pub fn kind_span(theme: &Theme, kind: ChunkKind) -> Span<'static> {
    Span::styled(kind_tag(kind), theme.style(&format!("kind.{}", kind.as_str())))
}

pub fn width(s: &str) -> usize {
    s.width()
}

/// `s` cut to `max` display cells, ending with `…` when cut.
pub fn truncate_end(s: &str, max: usize) -> String {
    if s.width() <= max {
        return s.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > max {
            break;
        }
        used += w;
        out.push(c);
    }
    if max > 0 {
        out.push('…');
    }
    out
}

/// `s` cut to `max` display cells from the left, starting with `…` when cut (keeps the
/// file name of a long path).
pub fn truncate_start(s: &str, max: usize) -> String {
    if s.width() <= max {
        return s.to_string();
    }
    let mut tail: Vec<char> = Vec::new();
    let mut used = 0;
    for c in s.chars().rev() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > max {
            break;
        }
        used += w;
        tail.push(c);
    }
    let mut out = String::from(if max > 0 { "…" } else { "" });
    out.extend(tail.into_iter().rev());
    out
}

/// `s` cut to `max` display cells in its middle, `…` where it was cut (the tail, one cell
/// longer, keeps a file's extension and line).
pub fn truncate_middle(s: &str, max: usize) -> String {
    if s.width() <= max {
        return s.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let head = truncate_end(s, (max - 1) / 2 + 1);
    let head = head.trim_end_matches('…');
    let tail = truncate_start(s, max - width(head));
    format!("{head}{tail}")
}

/// A line of dim text (placeholders and hints).
pub fn dim_line(theme: &Theme, text: impl Into<String>) -> Line<'static> {
    Line::styled(text.into(), theme.style("text.dim"))
}

/// Pads `line` with spaces to `width` cells, so a background reaches the pane's edge.
pub fn pad_line(mut line: Line<'static>, width: usize, style: Style) -> Line<'static> {
    let used = line.width();
    if used < width {
        line.spans.push(Span::styled(" ".repeat(width - used), style));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_keeps_width_and_marks_the_cut() {
        assert_eq!(truncate_end("Cart.subtotal", 8), "Cart.su…");
        assert_eq!(truncate_start("shop/very/long/cart.py:12", 12), "…/cart.py:12");
        assert_eq!(truncate_end("short", 8), "short");
        assert_eq!(truncate_middle("sessions.py:322", 10), "sess…y:322");
        assert_eq!(truncate_middle("sessions.py:322", 15), "sessions.py:322");
        let wide = truncate_start("日本語のパス.py", 7);
        assert!(width(&wide) <= 7 && wide.ends_with("ス.py"), "{wide}");
    }
}
