//! Byte/line arithmetic over a source file that never panics on odd offsets.

use tree_sitter::Node;

/// Byte offsets of line starts, for 1-based line numbers and line-start lookups.
pub(crate) struct Lines {
    starts: Vec<usize>,
    len: usize,
}

impl Lines {
    pub fn new(src: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(src.bytes().enumerate().filter(|(_, b)| *b == b'\n').map(|(i, _)| i + 1));
        Lines { starts, len: src.len() }
    }

    /// 1-based line holding `byte`.
    pub fn line_of(&self, byte: usize) -> usize {
        self.starts.partition_point(|&s| s <= byte).max(1)
    }

    /// Byte offset where the line holding `byte` starts.
    pub fn line_start(&self, byte: usize) -> usize {
        self.starts[self.line_of(byte) - 1]
    }

    /// Byte offset just past the end (newline included) of the line holding `byte`.
    pub fn line_end(&self, byte: usize) -> usize {
        self.starts.get(self.line_of(byte)).copied().unwrap_or(self.len)
    }

    /// 1-based line of the last byte of `start..end` (`start`'s line when empty).
    pub fn last_line(&self, start: usize, end: usize) -> usize {
        self.line_of(if end > start { end - 1 } else { start })
    }
}

/// A chunk of `path` over the byte `span`, its lines counted by `lines`; `text` is what the
/// retrievers see (it starts with the path: the callers put it there).
pub(crate) fn chunk_at(
    path: &str,
    kind: super::ChunkKind,
    name: String,
    span: (usize, usize),
    lines: &Lines,
    text: String,
) -> super::Chunk {
    super::Chunk {
        path: path.to_string(),
        kind,
        name,
        start_byte: span.0,
        end_byte: span.1,
        start_line: lines.line_of(span.0),
        end_line: lines.last_line(span.0, span.1),
        text,
        test: false,
        form: crate::lang::Form::Plain,
    }
}

/// `src[a..b]`, clamped to the text and to char boundaries.
pub(crate) fn slice(src: &str, a: usize, b: usize) -> &str {
    let floor = |mut i: usize| {
        i = i.min(src.len());
        while !src.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let (a, b) = (floor(a), floor(b));
    if a >= b {
        ""
    } else {
        &src[a..b]
    }
}

pub(crate) fn is_blank(s: &str) -> bool {
    s.bytes().all(|b| b == b' ' || b == b'\t' || b == b'\x0c')
}

/// Where text for a node starting at `start` should begin: its line start when only
/// indentation precedes it (keeps the original indentation), else `start` itself.
pub(crate) fn from_line_start(src: &str, lines: &Lines, start: usize) -> usize {
    let ls = lines.line_start(start);
    if is_blank(slice(src, ls, start)) {
        ls
    } else {
        start
    }
}

/// End of the last token of `node` that is not a comment: tree-sitter-python may fold
/// comments that follow a block into it, which would stretch a definition's span.
pub(crate) fn code_end(node: Node) -> usize {
    let mut node = node;
    let mut cursor = node.walk();
    loop {
        let last = node
            .children(&mut cursor)
            .filter(|c| c.kind() != "comment" && c.end_byte() > c.start_byte())
            .last();
        match last {
            Some(child) => node = child,
            None => return node.end_byte(),
        }
    }
}

/// The node's children, in order (cursor-based: `Node::child(i)` is not O(1)).
pub(crate) fn children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    node.children(&mut cursor).collect()
}

/// Named children except comments.
pub(crate) fn statements<'t>(node: Node<'t>) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).filter(|c| c.kind() != "comment").collect()
}

/// Source text of a node, clamped.
pub(crate) fn node_text<'s>(src: &'s str, node: Node) -> &'s str {
    slice(src, node.start_byte(), node.end_byte())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_numbers_are_one_based_and_newlines_belong_to_their_line() {
        let lines = Lines::new("ab\ncd\n\nef");
        assert_eq!(lines.line_of(0), 1);
        assert_eq!(lines.line_of(2), 1, "the newline is on line 1");
        assert_eq!(lines.line_of(3), 2);
        assert_eq!(lines.line_of(6), 3);
        assert_eq!(lines.line_of(9), 4);
        assert_eq!(lines.line_start(4), 3);
        assert_eq!(lines.line_end(4), 6);
        assert_eq!(lines.line_end(8), 9, "last line ends at the text's end");
        assert_eq!(lines.last_line(3, 6), 2, "a span ending with a newline ends on that line");
    }

    #[test]
    fn slice_never_panics() {
        let s = "héllo";
        assert_eq!(slice(s, 0, 2), "h", "cut inside 'é' floors to a boundary");
        assert_eq!(slice(s, 4, 100), "lo");
        assert_eq!(slice(s, 5, 2), "");
    }
}
