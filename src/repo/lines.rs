//! Lines of source for answers: a hit's code (headless `--snippets`, MCP `locate`) and a
//! requested range (MCP `read`).

/// Some lines of a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snippet {
    /// The lines, joined by `\n` (no trailing newline).
    pub text: String,
    /// How many lines `text` holds.
    pub shown: usize,
    /// How many lines the span asked for had (more than `shown` when cut).
    pub total: usize,
}

impl Snippet {
    pub fn is_cut(&self) -> bool {
        self.shown < self.total
    }
}

/// Lines `start..=end` (1-based) of `source`, at most the first `max` of them. A span past the
/// end of the file stops at its last line.
pub fn span_lines(source: &str, start: usize, end: usize, max: usize) -> Snippet {
    let start = start.max(1);
    let end = end.min(line_count(source));
    let total = (end + 1).saturating_sub(start);
    let lines: Vec<&str> = source.lines().skip(start - 1).take(total.min(max)).collect();
    Snippet { text: lines.join("\n"), shown: lines.len(), total }
}

/// How many lines `source` has (a last line without a newline counts).
pub fn line_count(source: &str) -> usize {
    source.lines().count()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = "a\nb\nc\nd\ne\n";

    #[test]
    fn a_span_is_cut_at_max_lines_and_says_so() {
        let s = span_lines(SOURCE, 2, 4, 10);
        assert_eq!((s.text.as_str(), s.shown, s.total, s.is_cut()), ("b\nc\nd", 3, 3, false));
        let s = span_lines(SOURCE, 1, 5, 2);
        assert_eq!((s.text.as_str(), s.shown, s.total, s.is_cut()), ("a\nb", 2, 5, true));
    }

    #[test]
    fn a_span_past_the_end_stops_at_the_last_line() {
        assert_eq!(line_count(SOURCE), 5);
        assert_eq!(line_count("x\r\ny"), 2);
        let s = span_lines(SOURCE, 4, 90, 40);
        assert_eq!((s.text.as_str(), s.total), ("d\ne", 2));
        assert_eq!(span_lines(SOURCE, 9, 12, 40).total, 0);
        assert_eq!(span_lines("x\r\ny\r\n", 1, 2, 40).text, "x\ny", "CRLF lines lose their \\r");
    }
}
