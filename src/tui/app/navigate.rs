//! Focus, selection, scrolling, call-graph jumps and the mouse.

use super::{inner_size, list_rows, App, Cached, NavEntry};
use crate::tui::action::{MouseInput, Pane};
use crate::tui::components::{help, neighbours};

impl App {
    pub(super) fn focus(&mut self, pane: Pane) {
        if let Some(column) = pane.column() {
            // Back on a result list, its highlighted row is what the preview shows and what
            // open and copy act on: the call-graph trail ends here.
            self.active_column = column;
            self.nav.clear();
        }
        self.focus = pane;
        if pane == Pane::Editor {
            self.keep_editor_cursor_visible();
        }
    }

    /// Tab and Shift-Tab: the next or previous result pane. From the editor either one goes
    /// to the results, as Esc does; no cycle ends in the editor.
    pub(super) fn cycle_focus(&mut self, step: isize) {
        let cycle = Pane::TAB_CYCLE;
        let next = match cycle.iter().position(|p| *p == self.focus) {
            Some(at) => cycle[(at as isize + step).rem_euclid(cycle.len() as isize) as usize],
            None => self.results_pane(),
        };
        self.focus(next);
    }

    /// The result list the preview follows.
    pub(super) fn results_pane(&self) -> Pane {
        [Pane::Left, Pane::Right][self.active_column]
    }

    /// Moves the focused list's selection (or scrolls the focused preview / the help).
    pub(super) fn move_by(&mut self, delta: isize) {
        if let Some(scroll) = self.help {
            let max = help::line_count(self.size.0).saturating_sub(1);
            self.help = Some(scroll.saturating_add_signed(delta).min(max));
            return;
        }
        let areas = self.areas();
        match self.focus {
            Pane::Left | Pane::Right => {
                let index = self.active_column;
                if self.columns[index].move_by(delta, list_rows(areas.columns[index])) {
                    self.nav.clear();
                }
            }
            Pane::Preview => self.scroll_preview(delta),
            Pane::Neighbours => {
                let count = self.neighbours().len();
                self.neighbour_selected =
                    self.neighbour_selected.saturating_add_signed(delta).min(count.saturating_sub(1));
            }
            Pane::Editor => {}
        }
    }

    pub(super) fn page(&mut self, pages: isize) {
        let rows = match self.help {
            Some(_) => 10,
            None => list_rows(self.areas().pane(self.focus)),
        };
        self.move_by(pages * rows.saturating_sub(1).max(1) as isize);
    }

    pub(super) fn preview_rows(&self) -> usize {
        list_rows(self.areas().preview)
    }

    /// Scrolls the preview, keeping at least one line of the file on screen.
    pub(super) fn scroll_preview(&mut self, delta: isize) {
        let lines = self.preview_line_count();
        let max = lines.saturating_sub(self.preview_rows().min(lines).max(1));
        self.preview_scroll = self.preview_scroll.saturating_add_signed(delta).min(max);
    }

    fn preview_line_count(&self) -> usize {
        let Some(chunk) = self.current_chunk().and_then(|id| self.chunk(id)) else {
            return 0;
        };
        match self.files.get(&chunk.path) {
            Cached::Loaded(file) => file.len(),
            _ => chunk.text.lines().count(),
        }
    }

    /// Jumps to the selected neighbour; the preview follows.
    pub(super) fn jump(&mut self) {
        match self.neighbours().get(self.neighbour_selected) {
            Some(target) => {
                let entry = NavEntry { chunk: target.chunk, came_from_selection: self.neighbour_selected };
                self.nav.push(entry);
            }
            None => self.info("no call-graph neighbour selected"),
        }
    }

    /// Undoes the last jump, restoring the neighbour selection it came from.
    pub(super) fn back(&mut self) {
        match self.nav.pop() {
            Some(entry) => {
                self.neighbour_for = self.current_chunk();
                self.neighbour_selected = entry.came_from_selection;
            }
            None => self.info("nothing to go back to"),
        }
    }

    pub(super) fn mouse(&mut self, input: MouseInput) {
        let (x, y, delta) = match input {
            MouseInput::Click { x, y } => (x, y, 0),
            MouseInput::ScrollUp { x, y } => (x, y, -1),
            MouseInput::ScrollDown { x, y } => (x, y, 1),
        };
        if self.help.is_some() {
            return match delta {
                0 => self.help = None,
                d => self.move_by(d * 3),
            };
        }
        let areas = self.areas();
        let Some(pane) = areas.pane_at(x, y) else {
            return;
        };
        let area = areas.pane(pane);
        let row = y.saturating_sub(area.y + 1) as usize;
        match (pane, delta) {
            (Pane::Preview, 0) => self.focus(pane),
            (Pane::Preview, d) => self.scroll_preview(d * 3),
            (Pane::Editor, 0) => self.focus(pane),
            (Pane::Editor, d) => {
                let (w, h) = inner_size(area);
                let last = self.editor.visual_rows(w).len().saturating_sub(h);
                self.editor.scroll = self.editor.scroll.saturating_add_signed(d).min(last);
            }
            (Pane::Left | Pane::Right, 0) => {
                self.focus(pane);
                let column = self.active_column;
                let index = self.columns[column].offset + row;
                if index < self.columns[column].hits.len()
                    && self.columns[column].select(index, list_rows(area))
                {
                    self.nav.clear();
                }
            }
            (Pane::Left | Pane::Right, d) => {
                self.focus(pane);
                self.move_by(d);
            }
            (Pane::Neighbours, 0) => {
                self.focus(pane);
                let rows = neighbours::display_rows(&self.neighbours());
                let top = neighbours::scroll_top(&rows, self.neighbour_selected, list_rows(area));
                if let Some(neighbours::Row::Item(i)) = rows.get(top + row) {
                    if *i == self.neighbour_selected {
                        self.jump();
                    } else {
                        self.neighbour_selected = *i;
                    }
                }
            }
            (Pane::Neighbours, d) => {
                self.focus(pane);
                self.move_by(d);
            }
        }
    }
}
