//! Where each pane goes, as a pure function of the terminal size and the app state. Both
//! rendering and `App::update` (mouse hit-testing, scrolling) use it, so they always agree.
//!
//! Wide terminals (≥ 220 columns): the issue on top; the results on the left, the preview
//! over the call graph on the right. Narrower ones stack: issue, results, then preview beside
//! the call graph (below it under 70 columns, where the two result columns also stack).
//!
//! The lists get the width they need before the preview does: stacked, each gets half the
//! terminal (80 cells and more from 160 columns); side by side, they get what their widest rows
//! need whole, up to all but the preview's minimum, and the preview takes the rest. Side by
//! side starts where the lists can have 80 cells each beside that minimum, so widening the
//! terminal past the switch never narrows a list (at 200 columns side by side they had 58).

use crate::tui::action::Pane;
use crate::tui::app::App;
use crate::tui::components::results;
use ratatui::layout::{Constraint, Layout, Position, Rect};

/// The fewest columns the preview gets beside the lists.
pub const PREVIEW_MIN: u16 = 60;
/// A list's width when the lists stack at 160 columns, which side by side keeps at least.
const LIST_AT_160: u16 = 80;
pub const WIDE: u16 = 2 * LIST_AT_160 + PREVIEW_MIN;
pub const NARROW: u16 = 70;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Areas {
    pub editor: Rect,
    pub columns: [Rect; 2],
    pub preview: Rect,
    pub neighbours: Rect,
    pub gauge: Option<Rect>,
    pub status: Rect,
}

impl Areas {
    pub fn compute(area: Rect, app: &App) -> Areas {
        let gauge_height = u16::from(app.index.busy() && app.index.progress.is_some());
        let text_rows = app.editor.visual_rows(area.width.saturating_sub(2) as usize).len();
        let editor_height = editor_height(area.height, app.focus == Pane::Editor, text_rows);
        let [editor, body, gauge, status] = Layout::vertical([
            Constraint::Length(editor_height),
            Constraint::Min(0),
            Constraint::Length(gauge_height),
            Constraint::Length(1),
        ])
        .areas(area);
        let gauge = (gauge_height > 0).then_some(gauge);
        let (results, preview, neighbours) = if area.width >= WIDE {
            // The lists take the full height; the call graph (a few rows, usually) sits under
            // the preview, whose lines it would otherwise leave too narrow beside a wide,
            // mostly empty graph pane.
            let [results, right] =
                Layout::horizontal([Constraint::Length(lists_width(app, body.width)), Constraint::Min(0)])
                    .areas(body);
            let graph = (right.height * 35 / 100).clamp(6, 14).min(right.height / 2);
            let [preview, neighbours] =
                Layout::vertical([Constraint::Min(0), Constraint::Length(graph)]).areas(right);
            (results, preview, neighbours)
        } else {
            let [results, bottom] =
                Layout::vertical([Constraint::Percentage(45), Constraint::Percentage(55)]).areas(body);
            let [preview, neighbours] = if area.width >= NARROW {
                let graph = (area.width * 35 / 100).clamp(24, 40);
                Layout::horizontal([Constraint::Min(0), Constraint::Length(graph)]).areas(bottom)
            } else {
                Layout::vertical([Constraint::Percentage(60), Constraint::Percentage(40)]).areas(bottom)
            };
            (results, preview, neighbours)
        };
        let columns = if area.width >= NARROW {
            Layout::horizontal([Constraint::Ratio(1, 2), Constraint::Ratio(1, 2)]).areas(results)
        } else {
            Layout::vertical([Constraint::Ratio(1, 2), Constraint::Ratio(1, 2)]).areas(results)
        };
        Areas { editor, columns, preview, neighbours, gauge, status }
    }

    pub fn pane(&self, pane: Pane) -> Rect {
        match pane {
            Pane::Editor => self.editor,
            Pane::Left => self.columns[0],
            Pane::Right => self.columns[1],
            Pane::Preview => self.preview,
            Pane::Neighbours => self.neighbours,
        }
    }

    pub fn pane_at(&self, x: u16, y: u16) -> Option<Pane> {
        Pane::ORDER.into_iter().find(|p| self.pane(*p).contains(Position { x, y }))
    }
}

/// Side by side, both lists' width: twice what the wider of them needs (each gets half), at
/// least 80 cells each and at most all but the preview's minimum; before the first hits, the most.
fn lists_width(app: &App, width: u16) -> u16 {
    let most = width.saturating_sub(PREVIEW_MIN);
    let needed = (0..2).filter_map(|i| results::needed_width(app, i)).max();
    needed.map_or(most, |n| n.saturating_mul(2).clamp(2 * LIST_AT_160, most))
}

/// Focused, the issue editor takes a quarter of the height; unfocused, it shrinks to its text
/// (to one line on a short terminal) so the results and preview get the room.
fn editor_height(height: u16, focused: bool, text_rows: usize) -> u16 {
    let full = (height / 4).clamp(5, 12);
    match (focused, height < 36) {
        (true, _) => full,
        (false, true) => 3,
        (false, false) => (text_rows.min(full as usize) as u16 + 2).clamp(3, full),
    }
}

/// A centred box of at most `width` × `height` inside `area`.
pub fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width);
    let h = height.min(area.height);
    Rect::new(area.x + (area.width - w) / 2, area.y + (area.height - h) / 2, w, h)
}
