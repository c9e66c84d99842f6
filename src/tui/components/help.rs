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

fn lines(theme: &Theme) -> Vec<Line<'static>> {
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
            Span::raw(" module code"),
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

/// Lines in the overlay (for clamping its scroll): five legend lines, then per section a
/// blank line and a heading, and one line per binding.
pub fn line_count() -> usize {
    let sections = BINDINGS.windows(2).filter(|w| w[0].section != w[1].section).count() + 1;
    5 + 2 * sections + BINDINGS.len()
}

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let content = lines(theme);
    let box_area = centered(area, 96, content.len() as u16 + 2);
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
        assert_eq!(line_count(), lines(&Theme::default()).len());
    }
}
