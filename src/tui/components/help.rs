//! The help overlay, generated from the key bindings table.

use crate::tui::app::App;
use crate::tui::keymap::BINDINGS;
use crate::tui::layout::centered;
use crate::tui::theme::Theme;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Paragraph};
use ratatui::Frame;

const KEYS_WIDTH: usize = 30;
/// The overlay's widest box (borders included); a narrower screen gets its whole width.
const BOX_WIDTH: u16 = 96;
/// Where a legend line's text starts, after its label (`Marks  `).
const LEGEND_INDENT: usize = 7;

/// The overlay's lines wrapped to `width` cells: a legend line's continuation under its text,
/// a binding's under its action, so nothing is cut at the right edge (80 columns).
fn lines(theme: &Theme, width: usize) -> Vec<Line<'static>> {
    let legend = LEGEND_LINES;
    unwrapped(theme)
        .into_iter()
        .enumerate()
        .flat_map(|(i, line)| wrap(line, width, if i < legend { LEGEND_INDENT } else { KEYS_WIDTH + 2 }))
        .collect()
}

/// The legend lines above the bindings.
const LEGEND_LINES: usize = 5;

/// `line` wrapped between words to `width` cells, its continuation lines indented by `indent`.
fn wrap(line: Line<'static>, width: usize, indent: usize) -> Vec<Line<'static>> {
    if line.width() <= width || width <= indent {
        return vec![line];
    }
    let mut out = Vec::new();
    let (mut current, mut used, mut start): (Vec<Span<'static>>, usize, usize) = (Vec::new(), 0, 0);
    for span in line.spans {
        for piece in span.content.split_inclusive(' ') {
            let w = super::width(piece.trim_end());
            if used + w > width && used > start {
                if let Some(last) = current.last_mut() {
                    last.content = last.content.trim_end().to_string().into();
                }
                out.push(Line::from(std::mem::take(&mut current)));
                current.push(Span::raw(" ".repeat(indent)));
                (used, start) = (indent, indent);
            }
            current.push(Span::styled(piece.to_string(), span.style));
            used += super::width(piece);
        }
    }
    out.push(Line::from(current));
    out
}

fn unwrapped(theme: &Theme) -> Vec<Line<'static>> {
    let mut out = vec![
        Line::from(vec![
            Span::styled("Kinds  ", theme.style("help.section")),
            Span::styled("f", theme.style("kind.function")),
            Span::raw(" function  "),
            Span::styled("C", theme.style("kind.class")),
            Span::raw(" class  "),
            Span::styled("m", theme.style("kind.method")),
            Span::raw(" method  "),
            Span::styled("≡", theme.style("kind.module")),
            Span::raw(" module  "),
            Span::styled("!", theme.style("kind.macro")),
            Span::raw(" macro"),
        ]),
        Line::from(vec![
            Span::styled("Marks  ", theme.style("help.section")),
            Span::styled("D3", theme.style("results.marker")),
            Span::raw(" = also ranked 3rd by the other column (B BM25, D dense, H hybrid, G history)"),
        ]),
        Line::from(vec![
            Span::styled("Tests  ", theme.style("help.section")),
            Span::styled("↓", theme.style("results.marker")),
            Span::raw(" = in a test file: ranked as if at 10× its rank (--test-weight), T hides"),
        ]),
        Line::from(vec![
            Span::styled("Named  ", theme.style("help.section")),
            Span::styled("•", theme.style("results.marker")),
            Span::raw(" = hybrid: the issue names its file or its own name, and the hybrid lifts it"),
        ]),
        Line::from(vec![
            Span::styled("Scores ", theme.style("help.section")),
            Span::raw("BM25; cosine (dense); BM25+CoRet fused, in σ (hybrid); history: best commit's BM25"),
        ]),
    ];
    let mut section = "";
    for binding in BINDINGS {
        if binding.section != section {
            section = binding.section;
            out.push(Line::raw(""));
            out.push(Line::styled(section.to_string(), theme.style("help.section")));
        }
        out.push(Line::from(vec![
            Span::styled(format!("  {:<KEYS_WIDTH$}", binding.keys), theme.style("help.key")),
            Span::styled(binding.action.to_string(), theme.style("text")),
        ]));
    }
    out
}

/// Lines in the overlay on a screen `screen_width` cells wide (for clamping its scroll).
pub fn line_count(screen_width: u16) -> usize {
    lines(&Theme::default(), inner_width(screen_width)).len()
}

fn inner_width(screen_width: u16) -> usize {
    usize::from(BOX_WIDTH.min(screen_width).saturating_sub(2))
}

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let content = lines(theme, inner_width(area.width));
    let box_area = centered(area, BOX_WIDTH, content.len() as u16 + 2);
    let block = Block::bordered()
        .border_type(BorderType::Thick)
        .border_style(theme.style_or("border", true))
        .title(Line::styled(" Keys ", theme.style_or("title", true)))
        .title_bottom(Line::styled(" j/k scroll · Esc close ", theme.style("text.dim")).right_aligned())
        .style(theme.style("background"));
    let inner = block.inner(box_area);
    let max_scroll = content.len().saturating_sub(inner.height as usize);
    let scroll = app.help.unwrap_or(0).min(max_scroll) as u16;
    frame.render_widget(Clear, box_area);
    frame.render_widget(Paragraph::new(content).block(block).scroll((scroll, 0)), box_area);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_count_matches_the_rendered_lines() {
        assert_eq!(line_count(200), unwrapped(&Theme::default()).len(), "wide: nothing wraps");
        assert!(line_count(80) > line_count(200));
    }

    /// Reported (issue #61): at 80 columns the help was cut at the right edge. Every line fits
    /// and every word of the legend and the bindings is still there.
    #[test]
    fn at_80_columns_the_help_wraps_instead_of_being_cut() {
        let theme = Theme::default();
        let width = inner_width(80);
        let wrapped = lines(&theme, width);
        assert!(wrapped.iter().all(|l| l.width() <= width), "a line wider than {width}");
        let words = |ls: &[Line]| -> Vec<String> {
            ls.iter()
                .flat_map(|l| l.to_string().split_whitespace().map(String::from).collect::<Vec<_>>())
                .collect()
        };
        assert_eq!(words(&wrapped), words(&unwrapped(&theme)));
        let marks = wrapped.iter().position(|l| l.to_string().starts_with("Marks")).unwrap();
        assert!(wrapped[marks + 1].to_string().starts_with("       "), "continued under its text");
    }
}
