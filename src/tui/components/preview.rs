//! The preview: the current chunk inside its file, syntax-highlighted (from the cache), with
//! line numbers and the chunk's span marked.

use super::{dim_line, pad_line, pane_block, truncate_start};
use crate::index::code_tokens::for_each_token;
use crate::semantic::without_path;
use crate::tui::action::Pane;
use crate::tui::app::{App, Cached};
use crate::Chunk;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;
use std::collections::HashSet;

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let focused = app.focus == Pane::Preview;
    let chunk = app.current_chunk().and_then(|id| app.chunk(id));
    let title = match chunk {
        Some(c) => {
            let location = format!("{}:{}-{}", c.path, c.start_line, c.end_line);
            format!(" {} ", truncate_start(&location, (area.width as usize).saturating_sub(6)))
        }
        None => " Preview ".into(),
    };
    let mut block = pane_block(theme, title, focused);
    let loaded = chunk.and_then(|c| match app.files.get(&c.path) {
        Cached::Loaded(file) => Some(file),
        _ => None,
    });
    // A chunk near the end of its file still gets a full pane.
    let rows = area.height.saturating_sub(2) as usize;
    let top = loaded.map_or(0, |f| app.preview_scroll.min(f.len().saturating_sub(rows)));
    if let Some(file) = loaded {
        let position = format!(" {}-{}/{} ", top + 1, (top + rows).min(file.len()), file.len());
        block = block.title_bottom(Line::from(position).style(theme.style("text.dim")));
    }
    if !app.nav.is_empty() {
        let back = format!(" jumped {}× · Backspace back ", app.nav.len());
        block = block.title_bottom(Line::from(back).right_aligned().style(theme.style("text.dim")));
    }
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let Some(chunk) = chunk else {
        frame.render_widget(Paragraph::new(welcome(app)), inner);
        return;
    };
    let lines = match app.files.get(&chunk.path) {
        Cached::Loaded(file) => numbered(app, chunk, &file.lines, top, inner),
        Cached::Unavailable => {
            let mut lines =
                vec![dim_line(theme, format!("({} is not readable; showing the indexed text)", chunk.path))];
            lines.extend(chunk.text.lines().map(|l| Line::raw(l.to_string())));
            lines
        }
        // The indexed text until the highlighted file arrives: no flash of "loading".
        Cached::Loading | Cached::Unknown => without_path(&chunk.text)
            .lines()
            .take(inner.height as usize)
            .map(|l| dim_line(theme, l))
            .collect(),
    };
    frame.render_widget(Paragraph::new(lines), inner);
}

/// The visible window of the file with a line-number gutter; lines of the chunk get a
/// tinted background and a bright line number.
fn numbered(app: &App, chunk: &Chunk, file: &[Line<'static>], top: usize, inner: Rect) -> Vec<Line<'static>> {
    let theme = &app.theme;
    let digits = file.len().max(1).to_string().len();
    let span_style = theme.style("preview.span");
    let match_style = theme.style("preview.match");
    file.iter()
        .enumerate()
        .skip(top)
        .take(inner.height as usize)
        .map(|(i, line)| {
            let number = i + 1;
            let in_chunk = (chunk.start_line..=chunk.end_line).contains(&number);
            let (gutter_style, bar) = if in_chunk {
                (theme.style("preview.linenr.span"), "▎")
            } else {
                (theme.style("preview.linenr"), " ")
            };
            let mut spans = vec![
                Span::styled(format!("{number:>digits$}"), gutter_style),
                Span::styled(bar, gutter_style),
            ];
            let body_style = if in_chunk { span_style } else { Style::default() };
            for s in &line.spans {
                spans.extend(mark_terms(
                    &s.content,
                    s.style.patch(body_style),
                    &app.query_terms,
                    match_style,
                ));
            }
            let line = Line::from(spans);
            if in_chunk {
                pad_line(line, inner.width as usize, span_style)
            } else {
                line
            }
        })
        .collect()
}

/// `text` in `style`, with the words that share a token with the query (`terms`, as BM25
/// tokenises them) in `mark` as well: why this chunk ranked.
fn mark_terms(text: &str, style: Style, terms: &HashSet<String>, mark: Style) -> Vec<Span<'static>> {
    if terms.is_empty() {
        return vec![Span::styled(text.to_string(), style)];
    }
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = Vec::new();
    let mut plain = String::new();
    let mut rest = text;
    while let Some(start) = rest.find(is_word) {
        let end = rest[start..].find(|c: char| !is_word(c)).map_or(rest.len(), |e| start + e);
        let word = &rest[start..end];
        let mut hit = false;
        for_each_token(word, |t, _, _| hit |= terms.contains(t));
        if hit {
            plain.push_str(&rest[..start]);
            if !plain.is_empty() {
                out.push(Span::styled(std::mem::take(&mut plain), style));
            }
            out.push(Span::styled(word.to_string(), style.patch(mark)));
        } else {
            plain.push_str(&rest[..end]);
        }
        rest = &rest[end..];
    }
    plain.push_str(rest);
    if !plain.is_empty() || out.is_empty() {
        out.push(Span::styled(plain, style));
    }
    out
}

/// Shown before anything is selected: what to do next.
fn welcome(app: &App) -> Vec<Line<'static>> {
    let theme = &app.theme;
    let key = theme.style("help.key");
    let tip = |k: &str, text: &str| {
        Line::from(vec![
            Span::styled(format!("  {k:<10}"), key),
            Span::styled(text.to_string(), theme.style("text")),
        ])
    };
    vec![
        Line::styled("Find the code an issue is about.", theme.style("help.section")),
        Line::raw(""),
        tip("paste", "an issue into the editor above"),
        tip("Ctrl-S", "rank code: BM25 | CoRet side by side"),
        tip("Tab", "next pane; j/k to pick a hit"),
        tip("n", "call graph: Enter jumps, ⌫ returns"),
        tip("o  y", "open in $EDITOR / copy path:line"),
        tip("F1", "all keys"),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::Modifier;

    #[test]
    fn words_sharing_a_token_with_the_query_are_marked() {
        let terms: HashSet<String> = ["discount", "coupon"].iter().map(|s| s.to_string()).collect();
        let mark = Style::default().add_modifier(Modifier::BOLD);
        let spans = mark_terms("    return apply_discount(amount, coupon)", Style::default(), &terms, mark);
        let marked: Vec<&str> =
            spans.iter().filter(|s| s.style == mark).map(|s| s.content.as_ref()).collect();
        assert_eq!(marked, ["apply_discount", "coupon"], "whole identifiers, by their pieces too");
        let text: String = spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(text, "    return apply_discount(amount, coupon)", "nothing lost or moved");
        let none = mark_terms("no match here", Style::default(), &terms, mark);
        assert_eq!(none.len(), 1);
    }
}
