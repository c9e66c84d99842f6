//! Call-graph neighbours of the current chunk: its callers, then its callees.

use super::{dim_line, kind_span, pad_line, pane_block, truncate_end, truncate_start, width};
use crate::tui::action::Pane;
use crate::tui::app::{list_rows, App, Direction, Neighbour};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

/// A displayed row: a section header, a neighbour (index into the neighbour list), or "none".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Row {
    Header(Direction, usize),
    Item(usize),
    Empty,
}

pub fn display_rows(neighbours: &[Neighbour]) -> Vec<Row> {
    let mut rows = Vec::new();
    for direction in [Direction::Caller, Direction::Callee] {
        let items: Vec<usize> =
            (0..neighbours.len()).filter(|i| neighbours[*i].direction == direction).collect();
        rows.push(Row::Header(direction, items.len()));
        if items.is_empty() {
            rows.push(Row::Empty);
        }
        rows.extend(items.into_iter().map(Row::Item));
    }
    rows
}

/// First displayed row that keeps the selected item visible in `height` rows.
pub fn scroll_top(rows: &[Row], selected: usize, height: usize) -> usize {
    let at = rows.iter().position(|r| *r == Row::Item(selected)).unwrap_or(0);
    (at + 1).saturating_sub(height.max(1))
}

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let focused = app.focus == Pane::Neighbours;
    let current = app.current_chunk().and_then(|id| app.chunk(id));
    let title = match current {
        Some(c) => {
            format!(" Call graph · {} ", truncate_end(&c.name, (area.width as usize).saturating_sub(18)))
        }
        None => " Call graph ".into(),
    };
    let mut block = pane_block(theme, title, focused);
    if !app.nav.is_empty() {
        block = block.title_bottom(
            Line::from(format!(" ⌫ back ({}) ", app.nav.len()))
                .right_aligned()
                .style(theme.style("text.dim")),
        );
    }
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if current.is_none() {
        let hint = dim_line(theme, "Callers and callees of the selected hit.");
        frame.render_widget(Paragraph::new(hint).wrap(Wrap { trim: true }), inner);
        return;
    }
    let neighbours = app.neighbours();
    let rows = display_rows(&neighbours);
    let height = list_rows(area);
    let top = scroll_top(&rows, app.neighbour_selected, height);
    let w = inner.width as usize;
    let lines: Vec<Line> = rows
        .iter()
        .skip(top)
        .take(height)
        .map(|row| match *row {
            Row::Header(direction, n) => {
                let label = match direction {
                    Direction::Caller => format!("callers ({n})"),
                    Direction::Callee => format!("callees ({n})"),
                };
                Line::styled(label, theme.style("neighbours.header"))
            }
            Row::Empty => dim_line(theme, "  none"),
            Row::Item(i) => {
                let selected = i == app.neighbour_selected;
                let line = item_line(app, neighbours[i].chunk, w, selected);
                if selected {
                    let style = theme.style_or("selection", focused);
                    pad_line(line, w, style).style(style)
                } else {
                    line
                }
            }
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

fn item_line(app: &App, id: u32, w: usize, selected: bool) -> Line<'static> {
    let theme = &app.theme;
    let Some(chunk) = app.chunk(id) else {
        return Line::raw(format!("  <chunk {id} missing>"));
    };
    let location = format!("{}:{}", chunk.path, chunk.start_line);
    let available = w.saturating_sub(5);
    let name = truncate_end(&chunk.name, available.min(width(&chunk.name)));
    let room = available.saturating_sub(width(&name));
    let location = if room >= 12 { truncate_start(&location, room) } else { String::new() };
    Line::from(vec![
        Span::styled(if selected { "› " } else { "  " }, theme.style("results.marker")),
        kind_span(theme, chunk.kind),
        Span::raw(" "),
        Span::styled(name, theme.style("results.name")),
        Span::raw(" "),
        Span::styled(location, theme.style("results.path")),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_have_headers_and_none_markers() {
        let n = [Neighbour { chunk: 7, direction: Direction::Callee }];
        let rows = display_rows(&n);
        assert_eq!(
            rows,
            [Row::Header(Direction::Caller, 0), Row::Empty, Row::Header(Direction::Callee, 1), Row::Item(0)]
        );
        assert_eq!(scroll_top(&rows, 0, 2), 2);
        assert_eq!(scroll_top(&rows, 0, 10), 0);
    }
}
