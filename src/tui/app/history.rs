//! Previous queries, recalled with Ctrl-P / Ctrl-N like a shell's history. Persisted as JSON
//! lines (one query per line, newlines escaped) by the runtime.

use std::path::Path;

const MAX_ENTRIES: usize = 200;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct History {
    entries: Vec<String>,
    /// Index of the entry being shown; `None` when editing a fresh draft.
    cursor: Option<usize>,
    /// The draft that was in the editor when browsing started.
    draft: Option<String>,
}

impl History {
    pub fn new(entries: Vec<String>) -> Self {
        let mut h = History::default();
        entries.into_iter().for_each(|e| h.push(&e));
        h
    }

    pub fn entries(&self) -> &[String] {
        &self.entries
    }

    /// Records a query (moving a repeated query to the end) and stops browsing.
    pub fn push(&mut self, query: &str) {
        let query = query.trim_end();
        if query.trim().is_empty() {
            return;
        }
        self.entries.retain(|e| e != query);
        self.entries.push(query.to_string());
        if self.entries.len() > MAX_ENTRIES {
            self.entries.remove(0);
        }
        self.cursor = None;
        self.draft = None;
    }

    /// The previous (older) query; `current` is the editor's text, kept as the draft. The
    /// first step skips an entry equal to `current` (the query just searched).
    pub fn older(&mut self, current: &str) -> Option<&str> {
        let index = match self.cursor {
            None => {
                let newest = self.entries.iter().rposition(|e| e.trim_end() != current.trim_end())?;
                self.draft = Some(current.to_string());
                newest
            }
            Some(i) => i.saturating_sub(1),
        };
        self.cursor = Some(index);
        Some(&self.entries[index])
    }

    /// The next (newer) query, or the draft after the newest.
    pub fn newer(&mut self) -> Option<String> {
        let index = self.cursor?;
        if index + 1 < self.entries.len() {
            self.cursor = Some(index + 1);
            Some(self.entries[index + 1].clone())
        } else {
            self.cursor = None;
            Some(self.draft.take().unwrap_or_default())
        }
    }

    /// Position while browsing, as (1-based index, count).
    pub fn position(&self) -> Option<(usize, usize)> {
        self.cursor.map(|i| (i + 1, self.entries.len()))
    }

    pub fn load(path: &Path) -> Self {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        History::new(text.lines().filter_map(|l| serde_json::from_str::<String>(l).ok()).collect())
    }

    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let lines: Vec<String> = self.entries.iter().filter_map(|e| serde_json::to_string(e).ok()).collect();
        std::fs::write(path, lines.join("\n") + "\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn browsing_back_and_forth_restores_the_draft() {
        let mut h = History::new(vec!["one".into(), "two".into()]);
        assert_eq!(h.older("draft"), Some("two"));
        assert_eq!(h.older("ignored"), Some("one"));
        assert_eq!(h.older("ignored"), Some("one"), "stays at the oldest");
        assert_eq!(h.newer().as_deref(), Some("two"));
        assert_eq!(h.newer().as_deref(), Some("draft"));
        assert_eq!(h.newer(), None);
    }

    /// Right after a search the editor holds the newest entry: the first Ctrl-P goes past it.
    #[test]
    fn the_first_step_back_skips_the_query_on_screen() {
        let mut h = History::new(vec!["one".into(), "two".into()]);
        assert_eq!(h.older("two"), Some("one"));
        assert_eq!(History::new(vec!["only".into()]).older("only"), None, "nothing older to show");
    }

    #[test]
    fn repeated_queries_move_to_the_end_and_blank_ones_are_ignored() {
        let mut h = History::new(vec!["a".into(), "b".into()]);
        h.push("a");
        h.push("   ");
        assert_eq!(h.entries(), ["b", "a"]);
    }

    #[test]
    fn multi_line_queries_survive_a_save_and_load() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/history.jsonl");
        let h = History::new(vec!["line 1\n```py\nx = 1\n```".into(), "second".into()]);
        h.save(&path).unwrap();
        assert_eq!(History::load(&path).entries(), h.entries());
    }
}
