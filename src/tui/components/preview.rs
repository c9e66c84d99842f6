//! The preview: the current chunk inside its file, syntax-highlighted (from the cache), with
//! line numbers and the chunk's span marked.

use super::{dim_line, pad_line, pane_block, truncate_start};
use crate::tui::action::Pane;
use crate::tui::app::{App, Cached};
use crate::Chunk;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

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
        Cached::Loading | Cached::Unknown => {
            vec![dim_line(theme, format!("loading {}…", chunk.path))]
        }
    };
    frame.render_widget(Paragraph::new(lines), inner);
}

/// The visible window of the file with a line-number gutter; lines of the chunk get a
/// tinted background and a bright line number.
fn numbered(app: &App, chunk: &Chunk, file: &[Line<'static>], top: usize, inner: Rect) -> Vec<Line<'static>> {
    let theme = &app.theme;
    let digits = file.len().max(1).to_string().len();
    let span_style = theme.style("preview.span");
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
            spans.extend(
                line.spans.iter().map(|s| Span::styled(s.content.clone(), s.style.patch(body_style))),
            );
            let line = Line::from(spans);
            if in_chunk {
                pad_line(line, inner.width as usize, span_style)
            } else {
                line
            }
        })
        .collect()
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
