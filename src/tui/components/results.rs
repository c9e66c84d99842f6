//! A ranked results column: `rank score kind name  path:line  marker`, where the marker gives
//! the chunk's rank in the other column (`D3`: third in the dense column).

use super::{dim_line, kind_span, pad_line, pane_block, truncate_start, width};
use crate::progress::Phase;
use crate::repo::source::is_test_path;
use crate::search::{Hit, Retriever};
use crate::tui::action::Pane;
use crate::tui::app::{list_rows, scroll_to_show, App, ColumnStatus, IndexState, ResultsColumn};
use crate::tui::theme::Theme;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

const MARKER_WIDTH: usize = 4;

pub fn title(retriever: Retriever) -> &'static str {
    match retriever {
        Retriever::Bm25 => "BM25",
        Retriever::Dense => "CoRet dense",
        Retriever::Hybrid => "Hybrid (BM25+CoRet)",
        Retriever::History => "History (past commits)",
    }
}

fn marker_letter(retriever: Retriever) -> char {
    match retriever {
        Retriever::Bm25 => 'B',
        Retriever::Dense => 'D',
        Retriever::Hybrid => 'H',
        Retriever::History => 'G',
    }
}

fn format_score(retriever: Retriever, score: f32) -> String {
    match retriever {
        Retriever::Bm25 => format!("{score:.2}"),
        Retriever::Dense => format!("{score:.3}"),
        // Rank fusion scores are small fractions (0.0164); score fusion's are standard
        // deviations (12.37).
        Retriever::Hybrid if score.abs() < 1.0 => format!("{score:.4}"),
        Retriever::Hybrid => format!("{score:.2}"),
        Retriever::History => format!("{score:.2}"),
    }
}

pub fn render(app: &App, frame: &mut Frame, area: Rect, index: usize) {
    let theme = &app.theme;
    let column = &app.columns[index];
    let other = &app.columns[1 - index];
    let focused = app.focus == [Pane::Left, Pane::Right][index];
    let mut block = pane_block(theme, format!(" {} {} ", index + 1, title(column.retriever)), focused);
    if let Some(summary) = summary(column, app.results_stale()) {
        block = block.title_top(Line::from(summary).right_aligned().style(theme.style("text.dim")));
    }
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if column.hits.is_empty() {
        let (text, error) = empty_text(app, index);
        let line =
            if error { Line::styled(text, theme.style("message.error")) } else { dim_line(theme, text) };
        frame.render_widget(Paragraph::new(line).wrap(Wrap { trim: true }), inner);
        return;
    }
    let rows = list_rows(area);
    let offset = scroll_to_show(column.offset, column.selected, rows);
    let rank_w = column.hits.len().to_string().len();
    let score_w =
        column.hits.iter().map(|h| format_score(column.retriever, h.score).len()).max().unwrap_or(0);
    let lines: Vec<Line> = column
        .hits
        .iter()
        .enumerate()
        .skip(offset)
        .take(rows)
        .map(|(i, hit)| {
            let marker = other.rank_of(hit.chunk).map(|r| format!("{}{r}", marker_letter(other.retriever)));
            // The cursor shows in both columns; the bar only in the one the preview follows.
            let selected = i == column.selected;
            let row = Row { rank: i + 1, rank_w, score_w, hit: *hit, marker, selected };
            let line = row.line(app, column.retriever, inner.width as usize);
            if selected && app.active_column == index {
                let style = theme.style_or("selection", focused);
                pad_line(line, inner.width as usize, style).style(style)
            } else {
                line
            }
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

/// "50 hits · 3 ms", or what the column is doing; hits for an issue the editor no longer
/// holds say so.
fn summary(column: &ResultsColumn, stale: bool) -> Option<String> {
    match &column.status {
        ColumnStatus::Searching => Some(" searching… ".into()),
        ColumnStatus::Ready if stale => Some(format!(" {} hits · earlier issue, Ctrl-S ", column.hits.len())),
        ColumnStatus::Ready => {
            let ms = column.elapsed.map(|d| format!(" · {} ms", d.as_millis())).unwrap_or_default();
            Some(format!(" {} hits{ms} ", column.hits.len()))
        }
        _ => None,
    }
}

/// The text of a column without hits, and whether it is an error.
fn empty_text(app: &App, index: usize) -> (String, bool) {
    let column = &app.columns[index];
    let waiting_dense =
        || match app.index.progress.as_ref().filter(|_| app.index.state == IndexState::Bm25Only) {
            // Before its first report the gauge still holds the previous phase (e.g. the
            // call graph at 100%), which says nothing about the dense index.
            Some(p) if p.phase == Phase::Embed => {
                format!(
                    "Waiting for the dense index (embedding {:.0}%). BM25 works already.",
                    p.ratio() * 100.0
                )
            }
            Some(_) => "Waiting for the dense index (starting). BM25 works already.".to_string(),
            None => "Waiting for the dense index…".to_string(),
        };
    let dense_missing =
        column.retriever != Retriever::Bm25 && !app.backend.as_ref().is_some_and(|b| b.has_dense());
    if let IndexState::Failed(e) = &app.index.state {
        // Nothing will ever be searchable: say why in every column, not only in the status bar.
        return (format!("Indexing failed: {e}. Nothing can be searched; see the README's setup."), true);
    }
    let text = match &column.status {
        ColumnStatus::Failed(e) => return (e.clone(), true),
        ColumnStatus::Searching => "Searching…".to_string(),
        ColumnStatus::Ready => "No matches.".to_string(),
        ColumnStatus::WaitingForIndex if app.backend.is_none() => "Waiting for the BM25 index…".to_string(),
        ColumnStatus::WaitingForIndex => waiting_dense(),
        ColumnStatus::Idle if app.backend.is_none() => {
            "Indexing… you can type the issue meanwhile.".to_string()
        }
        ColumnStatus::Idle if dense_missing => match &app.index.dense_error {
            Some(e) => return (format!("Dense index unavailable: {e}"), true),
            None => waiting_dense(),
        },
        ColumnStatus::Idle => "Press Ctrl-S to search.".to_string(),
    };
    (text, false)
}

struct Row {
    rank: usize,
    rank_w: usize,
    score_w: usize,
    hit: Hit,
    marker: Option<String>,
    selected: bool,
}

/// Before the name of a hit in a test file.
const TEST_TAG: &str = "test ";

impl Row {
    fn line(&self, app: &App, retriever: Retriever, cells: usize) -> Line<'static> {
        let theme: &Theme = &app.theme;
        let Some(chunk) = app.chunk(self.hit.chunk) else {
            return Line::raw(format!(
                "{:>w$} <chunk {} missing>",
                self.rank,
                self.hit.chunk,
                w = self.rank_w
            ));
        };
        let prefix = 1 + self.rank_w + 1 + self.score_w + 1 + 2;
        // Test files rank lower (demoted): a tag says why such a hit sits where it does.
        let tag = if is_test_path(&chunk.path) { TEST_TAG } else { "" };
        let available = cells.saturating_sub(prefix + 1 + MARKER_WIDTH + tag.len());
        let location = format!("{}:{}", chunk.path, chunk.start_line);
        let (name, location) = fit(&chunk.name, &location, available);
        let gap = available.saturating_sub(width(&name) + width(&location));
        let marker = self.marker.clone().unwrap_or_default();
        Line::from(vec![
            Span::styled(if self.selected { "›" } else { " " }, theme.style("results.marker")),
            Span::styled(format!("{:>w$} ", self.rank, w = self.rank_w), theme.style("results.rank")),
            Span::styled(
                format!("{:>w$} ", format_score(retriever, self.hit.score), w = self.score_w),
                theme.style("results.score"),
            ),
            kind_span(theme, chunk.kind),
            Span::raw(" "),
            Span::styled(tag, theme.style("text.dim")),
            Span::styled(name, theme.style("results.name")),
            Span::raw(" ".repeat(gap)),
            Span::styled(location, theme.style("results.path")),
            Span::raw(" "),
            Span::styled(format!("{marker:>MARKER_WIDTH$}"), theme.style("results.marker")),
        ])
    }
}

/// Shares `available` cells between the name and the location. A whole name comes first,
/// with the location cut from the left down to its file name and line; when the name must give
/// way too, its last part (the method: what tells two rows of one class apart) stays whole
/// after `…`, and the location keeps at least its line (`…y:186`). A column too narrow for
/// both shows the name alone: a hit is found by its name, its path is in the preview's title.
fn fit(name: &str, location: &str, available: usize) -> (String, String) {
    const MIN_LOCATION: usize = 10;
    const MIN_CUT_LOCATION: usize = 6;
    let (nw, lw) = (width(name), width(location));
    let file_line_text = location.rsplit('/').next().unwrap_or(location);
    let file_line = width(file_line_text);
    if nw + 1 + lw <= available {
        return (name.to_string(), location.to_string());
    }
    if available >= nw + 1 + file_line.min(MIN_LOCATION) {
        return (name.to_string(), truncate_start(location, available - nw - 1));
    }
    let tail = (width(name.rsplit('.').next().unwrap_or(name)) + 1).min(nw);
    if available < tail + 1 + MIN_CUT_LOCATION {
        return (truncate_start(name, available), String::new());
    }
    let location_w = file_line.min(available - tail - 1);
    let location = if location_w == file_line {
        file_line_text.to_string()
    } else {
        truncate_start(location, location_w)
    };
    (truncate_start(name, available - location_w - 1), location)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_keeps_file_and_line_and_cuts_from_the_left() {
        let (n, l) = fit("Cart.subtotal", "shop/cart.py:23", 40);
        assert_eq!((n.as_str(), l.as_str()), ("Cart.subtotal", "shop/cart.py:23"));
        let (n, l) = fit("VeryLongClassName.method_name", "pkg/sub/module/file.py:123", 40);
        assert!(width(&n) + 1 + width(&l) <= 40, "{n} {l}");
        assert_eq!((n.as_str(), l.as_str()), ("VeryLongClassName.method_name", "…le.py:123"));
        let (n, l) = fit("Cart.total", "pkg/sub/module/cart.py:25", 24);
        assert_eq!((n.as_str(), l.as_str()), ("Cart.total", "…e/cart.py:25"), "the name stays whole");
        let (n, l) = fit("apply_discount", "shop/pricing.py:6", 21);
        assert_eq!((n.as_str(), l.as_str()), ("apply_discount", "….py:6"), "the line stays");
        let (n, l) = fit("apply_discount", "shop/pricing.py:6", 20);
        assert_eq!((n.as_str(), l.as_str()), ("apply_discount", ""), "too narrow: the location goes");
        // Reported at 140 columns: the class gives way, the method and the line stay.
        let (n, l) = fit("SessionRedirectMixin.resolve_redirects", "src/requests/sessions.py:186", 25);
        assert_eq!((n.as_str(), l.as_str()), ("…resolve_redirects", "…y:186"));
        // Reported at 160 columns: a long name used to push the path out.
        let (n, l) = fit("Session.merge_environment_settings", "requests/sessions.py:752", 36);
        assert_eq!((n.as_str(), l.as_str()), ("…merge_environment_settings", "….py:752"));
        // Reported at 80x24: two methods of one class read the same when cut from the right.
        let a = fit("HTTPDigestAuth.__init__", "requests/auth.py:107", 25);
        let b = fit("HTTPDigestAuth.init_per_thread_state", "requests/auth.py:113", 29);
        assert_ne!(a.0, b.0);
        assert_eq!((a.0.as_str(), a.1.as_str()), ("…uth.__init__", "auth.py:107"));
        assert_eq!((b.0.as_str(), b.1.as_str()), ("…init_per_thread_state", "…y:113"));
    }
}
