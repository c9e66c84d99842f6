//! The issue editor's buffer: lines of text, a cursor, and a scroll offset over soft-wrapped
//! visual rows. Pure data; the editor component renders it.

use crate::tui::action::EditOp;
use unicode_width::UnicodeWidthChar;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Editor {
    lines: Vec<String>,
    /// Cursor line.
    row: usize,
    /// Cursor position in the line, in chars.
    col: usize,
    /// First visible visual row.
    pub scroll: usize,
}

impl Default for Editor {
    fn default() -> Self {
        Editor { lines: vec![String::new()], row: 0, col: 0, scroll: 0 }
    }
}

/// One visual row: a slice of line `line`, chars `start..end`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VisualRow {
    pub line: usize,
    pub start: usize,
    pub end: usize,
}

impl Editor {
    pub fn text(&self) -> String {
        self.lines.join("\n")
    }

    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    pub fn is_blank(&self) -> bool {
        self.lines.iter().all(|l| l.trim().is_empty())
    }

    /// Replaces the text; the cursor goes to the end.
    pub fn set_text(&mut self, text: &str) {
        *self = Editor::default();
        self.insert_str(text);
    }

    pub fn clear(&mut self) {
        *self = Editor::default();
    }

    /// (line, char column) of the cursor.
    pub fn cursor(&self) -> (usize, usize) {
        (self.row, self.col)
    }

    pub fn insert_char(&mut self, c: char) {
        if c == '\n' {
            return self.apply(EditOp::Newline);
        }
        let at = self.byte_col();
        self.lines[self.row].insert(at, c);
        self.col += 1;
    }

    /// Inserts pasted text: line endings normalised, tabs expanded, control characters dropped.
    /// Linear in the size of the paste, however long its lines.
    pub fn insert_str(&mut self, text: &str) {
        let text = text.replace("\r\n", "\n").replace('\r', "\n").replace('\t', "    ");
        let clean: String = text.chars().filter(|c| *c == '\n' || !c.is_control()).collect();
        let mut parts = clean.split('\n');
        let first = parts.next().unwrap_or_default();
        let at = self.byte_col();
        let tail = self.lines[self.row].split_off(at);
        self.lines[self.row].push_str(first);
        self.col += first.chars().count();
        let rest: Vec<String> = parts.map(str::to_string).collect();
        if let Some(last) = rest.last() {
            self.col = last.chars().count();
            let count = rest.len();
            self.lines.splice(self.row + 1..self.row + 1, rest);
            self.row += count;
        }
        self.lines[self.row].push_str(&tail);
    }

    pub fn apply(&mut self, op: EditOp) {
        let len = |s: &Self| s.lines[s.row].chars().count();
        match op {
            EditOp::Newline => {
                let at = self.byte_col();
                let rest = self.lines[self.row].split_off(at);
                self.lines.insert(self.row + 1, rest);
                self.row += 1;
                self.col = 0;
            }
            EditOp::Backspace if self.col > 0 => {
                self.col -= 1;
                let at = self.byte_col();
                self.lines[self.row].remove(at);
            }
            EditOp::Backspace if self.row > 0 => {
                let line = self.lines.remove(self.row);
                self.row -= 1;
                self.col = len(self);
                self.lines[self.row].push_str(&line);
            }
            EditOp::Delete if self.col < len(self) => {
                let at = self.byte_col();
                self.lines[self.row].remove(at);
            }
            EditOp::Delete if self.row + 1 < self.lines.len() => {
                let next = self.lines.remove(self.row + 1);
                self.lines[self.row].push_str(&next);
            }
            EditOp::Left if self.col > 0 => self.col -= 1,
            EditOp::Left if self.row > 0 => {
                self.row -= 1;
                self.col = len(self);
            }
            EditOp::Right if self.col < len(self) => self.col += 1,
            EditOp::Right if self.row + 1 < self.lines.len() => {
                self.row += 1;
                self.col = 0;
            }
            EditOp::Up if self.row > 0 => {
                self.row -= 1;
                self.col = self.col.min(len(self));
            }
            EditOp::Up => self.col = 0,
            EditOp::Down if self.row + 1 < self.lines.len() => {
                self.row += 1;
                self.col = self.col.min(len(self));
            }
            EditOp::Down => self.col = len(self),
            EditOp::LineStart => self.col = 0,
            EditOp::LineEnd => self.col = len(self),
            EditOp::WordLeft => self.col = self.word_left(),
            EditOp::WordRight => self.col = self.word_right(),
            EditOp::DocStart => (self.row, self.col) = (0, 0),
            EditOp::DocEnd => {
                self.row = self.lines.len() - 1;
                self.col = len(self);
            }
            EditOp::KillToLineStart => {
                let at = self.byte_col();
                self.lines[self.row].drain(..at);
                self.col = 0;
            }
            EditOp::KillToLineEnd if self.col == len(self) => self.apply(EditOp::Delete),
            EditOp::KillToLineEnd => {
                let at = self.byte_col();
                self.lines[self.row].truncate(at);
            }
            EditOp::DeleteWordBack => {
                let target = self.word_left();
                if target == self.col {
                    return self.apply(EditOp::Backspace);
                }
                let (from, to) = (self.byte_at(target), self.byte_col());
                self.lines[self.row].drain(from..to);
                self.col = target;
            }
            EditOp::Backspace | EditOp::Delete | EditOp::Left | EditOp::Right => {}
        }
    }

    fn byte_at(&self, col: usize) -> usize {
        let line = &self.lines[self.row];
        line.char_indices().nth(col).map_or(line.len(), |(i, _)| i)
    }

    fn byte_col(&self) -> usize {
        self.byte_at(self.col)
    }

    fn word_left(&self) -> usize {
        let chars: Vec<char> = self.lines[self.row].chars().collect();
        let mut i = self.col;
        while i > 0 && !chars[i - 1].is_alphanumeric() {
            i -= 1;
        }
        while i > 0 && chars[i - 1].is_alphanumeric() {
            i -= 1;
        }
        i
    }

    fn word_right(&self) -> usize {
        let chars: Vec<char> = self.lines[self.row].chars().collect();
        let mut i = self.col;
        while i < chars.len() && !chars[i].is_alphanumeric() {
            i += 1;
        }
        while i < chars.len() && chars[i].is_alphanumeric() {
            i += 1;
        }
        i
    }

    /// Soft-wraps every line at `width` display cells: after the last space that fits, so no
    /// word is cut (`exi│st`), or by character where a word is wider than the row (nothing is
    /// hidden). A row's trailing space stays on it.
    pub fn visual_rows(&self, width: usize) -> Vec<VisualRow> {
        let width = width.max(1);
        let cells = |c: &char| c.width().unwrap_or(0);
        let mut rows = Vec::new();
        for (line, text) in self.lines.iter().enumerate() {
            let chars: Vec<char> = text.chars().collect();
            // `after_space`: where the row may end, just after its last space.
            let (mut start, mut used, mut after_space) = (0, 0, None);
            for (i, c) in chars.iter().enumerate() {
                let w = cells(c);
                if used + w > width && i > start {
                    let end = after_space.filter(|&b| b > start).unwrap_or(i);
                    rows.push(VisualRow { line, start, end });
                    start = end;
                    used = chars[start..i].iter().map(cells).sum();
                    after_space = None;
                }
                used += w;
                if c.is_whitespace() {
                    after_space = Some(i + 1);
                }
            }
            rows.push(VisualRow { line, start, end: chars.len() });
        }
        rows
    }

    /// The cursor's (visual row, display column) at `width`.
    pub fn cursor_visual(&self, width: usize) -> (usize, usize) {
        let rows = self.visual_rows(width);
        let line = &self.lines[self.row];
        for (i, r) in rows.iter().enumerate() {
            let last_of_line = rows.get(i + 1).is_none_or(|next| next.line != r.line);
            if r.line == self.row && self.col >= r.start && (self.col < r.end || last_of_line) {
                let x: usize =
                    line.chars().skip(r.start).take(self.col - r.start).filter_map(|c| c.width()).sum();
                // A cursor after a full-width last segment sits at the start of the next row.
                return if x >= width.max(1) { (i + 1, 0) } else { (i, x) };
            }
        }
        (rows.len().saturating_sub(1), 0)
    }

    /// Adjusts `scroll` so the cursor is visible in a `width` × `height` viewport.
    /// [`Editor::ensure_visible`] after a resize: also scrolls back up as far as the text
    /// fills the new height.
    pub fn fit(&mut self, width: usize, height: usize) {
        let rows = self.visual_rows(width).len();
        self.scroll = self.scroll.min(rows.saturating_sub(height.max(1)));
        self.ensure_visible(width, height);
    }

    pub fn ensure_visible(&mut self, width: usize, height: usize) {
        let (row, _) = self.cursor_visual(width);
        let height = height.max(1);
        if row < self.scroll {
            self.scroll = row;
        } else if row >= self.scroll + height {
            self.scroll = row + 1 - height;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(text: &str) -> Editor {
        let mut e = Editor::default();
        text.chars().for_each(|c| e.insert_char(c));
        e
    }

    #[test]
    fn typing_newlines_and_backspace_join_lines() {
        let mut e = typed("ab\ncd");
        assert_eq!(e.lines(), ["ab", "cd"]);
        e.apply(EditOp::LineStart);
        e.apply(EditOp::Backspace);
        assert_eq!(e.text(), "abcd");
        assert_eq!(e.cursor(), (0, 2));
    }

    #[test]
    fn paste_normalises_line_endings_tabs_and_control_chars() {
        let mut e = Editor::default();
        e.insert_str("```py\r\n\tx = 1\u{7}\r\n```");
        assert_eq!(e.lines(), ["```py", "    x = 1", "```"]);
        assert_eq!(e.cursor(), (2, 3));
    }

    #[test]
    fn paste_in_the_middle_of_a_line_keeps_its_tail() {
        let mut e = typed("ab\nxy");
        e.apply(EditOp::Up);
        e.apply(EditOp::Left);
        e.insert_str("1\n2\n3");
        assert_eq!(e.lines(), ["a1", "2", "3b", "xy"]);
        assert_eq!(e.cursor(), (2, 1));
        e.insert_str("é");
        assert_eq!(e.lines()[2], "3éb");
    }

    #[test]
    fn multibyte_text_edits_by_character() {
        let mut e = typed("héllo wörld");
        e.apply(EditOp::DeleteWordBack);
        assert_eq!(e.text(), "héllo ");
        e.apply(EditOp::WordLeft);
        e.apply(EditOp::Delete);
        assert_eq!(e.text(), "éllo ");
    }

    #[test]
    fn kill_to_line_end_joins_at_line_end() {
        let mut e = typed("ab\ncd");
        e.apply(EditOp::Up);
        e.apply(EditOp::LineStart);
        e.apply(EditOp::Right);
        e.apply(EditOp::KillToLineEnd);
        assert_eq!(e.text(), "a\ncd");
        e.apply(EditOp::KillToLineEnd);
        assert_eq!(e.text(), "acd");
    }

    #[test]
    fn up_down_keep_the_column_within_the_line() {
        let mut e = typed("long line\nab");
        e.apply(EditOp::Up);
        assert_eq!(e.cursor(), (0, 2));
        e.apply(EditOp::LineEnd);
        e.apply(EditOp::Down);
        assert_eq!(e.cursor(), (1, 2));
    }

    #[test]
    fn wrapping_and_cursor_rows() {
        let e = typed("abcdefgh\nxy");
        let rows = e.visual_rows(3);
        assert_eq!(rows.len(), 4, "abc def gh xy");
        assert_eq!(rows[2], VisualRow { line: 0, start: 6, end: 8 });
        assert_eq!(e.cursor_visual(3), (3, 2));
        let full = typed("abc");
        assert_eq!(full.cursor_visual(3), (1, 0), "after a full row the cursor wraps");
    }

    #[test]
    fn rows_wrap_between_words_and_cut_only_a_word_wider_than_a_row() {
        let e = typed("make it exist now");
        let rows: Vec<String> = e
            .visual_rows(10)
            .iter()
            .map(|r| e.lines()[r.line].chars().skip(r.start).take(r.end - r.start).collect())
            .collect();
        assert_eq!(rows, ["make it ", "exist now"], "no `exi│st`");
        assert_eq!(e.visual_rows(3).len(), 6, "mak e· it· exi st· now: a word wider than a row is cut");
        let mut end = typed("make it exist");
        end.apply(EditOp::LineEnd);
        assert_eq!(end.cursor_visual(10), (1, 5), "the cursor follows its word");
    }

    #[test]
    fn scroll_follows_the_cursor() {
        let mut e = typed("1\n2\n3\n4\n5");
        e.ensure_visible(10, 2);
        assert_eq!(e.scroll, 3);
        e.apply(EditOp::DocStart);
        e.ensure_visible(10, 2);
        assert_eq!(e.scroll, 0);
    }
}
