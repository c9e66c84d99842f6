//! The issue editor pane.

use super::{dim_line, pane_block};
use crate::tui::action::Pane;
use crate::tui::app::App;
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let focused = app.focus == Pane::Editor;
    let mut title = String::from(" Issue ");
    // Its lines up to the last that holds text: a pasted issue's trailing newline is no line.
    let lines = app.editor.lines().iter().rposition(|l| !l.trim().is_empty()).map_or(0, |i| i + 1);
    if lines > 1 {
        title.push_str(&format!("· {lines} lines "));
    }
    if let Some((i, n)) = app.history.position() {
        title.push_str(&format!("· history {i}/{n} "));
    }
    let hint =
        if focused { " Ctrl-S search · Esc results · F1 help " } else { " i edit · Ctrl-S search " };
    let block = pane_block(theme, title, focused)
        .title_top(Line::from(hint).right_aligned().style(theme.style("text.dim")));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if inner.width == 0 || inner.height == 0 {
        return;
    }
    let editor = &app.editor;
    if editor.is_blank() && editor.lines().len() == 1 {
        let text = "Paste or type an issue (bug report, feature request, stack trace), then press Ctrl-S";
        let placeholder =
            Paragraph::new(Line::styled(text, theme.style("editor.placeholder"))).wrap(Wrap { trim: true });
        frame.render_widget(placeholder, inner);
    } else {
        let (width, height) = (inner.width as usize, inner.height as usize);
        let rows = editor.visual_rows(width);
        let top = if focused { editor.scroll.min(rows.len().saturating_sub(1)) } else { 0 };
        let mut lines: Vec<Line> = rows
            .iter()
            .skip(top)
            .take(height)
            .map(|r| {
                let text: String =
                    editor.lines()[r.line].chars().skip(r.start).take(r.end - r.start).collect();
                Line::from(Span::styled(text, theme.style("text")))
            })
            .collect();
        // Unfocused, the pane may be one line tall: say how many more lines of the issue
        // there are (its lines, not the rows they wrap into; trailing blank lines not counted).
        let shown_lines = rows.get(top + height.saturating_sub(1)).map_or(0, |r| r.line + 1);
        let filled = editor.lines().iter().rposition(|l| !l.trim().is_empty()).map_or(0, |i| i + 1);
        let hidden = filled.saturating_sub(shown_lines);
        if rows.len() > top + height && hidden > 0 && !focused {
            let noun = if hidden == 1 { "line" } else { "lines" };
            let more = dim_line(theme, format!(" … +{hidden} more {noun}"));
            if let Some(last) = lines.last_mut() {
                let keep = width.saturating_sub(more.width());
                let text: String = last.to_string().chars().take(keep).collect();
                *last = Line::from(vec![Span::styled(text, theme.style("text"))]);
                last.spans.extend(more.spans);
            }
        }
        frame.render_widget(Paragraph::new(lines), inner);
    }
    if focused && app.help.is_none() {
        let (row, col) = editor.cursor_visual(inner.width as usize);
        let top = editor.scroll;
        if row >= top && row < top + inner.height as usize {
            frame.set_cursor_position(Position { x: inner.x + col as u16, y: inner.y + (row - top) as u16 });
        }
    }
}
