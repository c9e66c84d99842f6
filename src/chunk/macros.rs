//! Code the grammar cannot see through macros:
//!
//! - The insides of an item macro (`cfg_rt! { pub fn spawn… }`) parsed again as items of the
//!   file's language: tree-sitter reads only the bytes between the token tree's delimiters, so
//!   the new tree's nodes carry the original file's byte and line positions and the chunker
//!   walks them as it walks the file. Whatever does not parse as items is left to the module
//!   chunk (tree-sitter recovers what it can; nothing panics).
//! - C and C++ definitions after a bare macro line (`FMT_BEGIN_NAMESPACE`, `__BEGIN_DECLS`):
//!   the parser reads the file without those lines, again in the file's own positions.

use std::cell::RefCell;

use tree_sitter::{Node, Parser, Range, Tree};

use crate::lang::{extension, Lang};

/// Item macros inside item macros are parsed this deep, no deeper.
pub(crate) const MAX_MACRO_DEPTH: usize = 4;

thread_local! {
    // Apart from the file's parser: its included ranges change with every macro.
    static PARSER: RefCell<Parser> = RefCell::new(Parser::new());
}

/// The items between the delimiters of `tokens` (a token tree), as a tree over the whole file;
/// `None` when there is nothing between them or the parser gives up.
pub(crate) fn parse_items(lang: Lang, path: &str, src: &str, tokens: Node) -> Option<Tree> {
    let count = tokens.child_count();
    let (open, close) = (tokens.child(0)?, tokens.child(count.checked_sub(1)?)?);
    if count < 3 || open.end_byte() >= close.start_byte() {
        return None;
    }
    let range = Range {
        start_byte: open.end_byte(),
        end_byte: close.start_byte(),
        start_point: open.end_position(),
        end_point: close.start_position(),
    };
    PARSER.with(|cell| {
        let mut parser = cell.borrow_mut();
        parser.set_language(&lang.grammar(&extension(path))).ok()?;
        parser.set_included_ranges(&[range]).ok()?;
        let tree = parser.parse(src, None);
        if tree.is_none() {
            parser.reset();
        }
        tree
    })
}

/// The byte ranges of `src` to parse when bare macro lines are skipped: everything but the
/// lines holding one upper-case identifier of four or more characters alone, after a line
/// that ends a statement, a block or a directive (so an enumerator or an operand on a line of
/// its own stays). `None` when there is no such line (parse the whole file).
pub(crate) fn without_bare_macros(src: &str) -> Option<Vec<Range>> {
    let mut ranges = Vec::new();
    let (mut from_byte, mut from_point) = (0, tree_sitter::Point::new(0, 0));
    let mut after_boundary = true;
    let mut offset = 0;
    for (row, line) in src.split_inclusive('\n').enumerate() {
        let code = line.trim();
        if after_boundary && is_bare_macro(code) {
            if offset > from_byte {
                let end_point = tree_sitter::Point::new(row, 0);
                ranges.push(Range {
                    start_byte: from_byte,
                    end_byte: offset,
                    start_point: from_point,
                    end_point,
                });
            }
            from_byte = offset + line.len();
            from_point = tree_sitter::Point::new(row + 1, 0);
        } else if !code.is_empty() {
            after_boundary = code.starts_with('#')
                || code.starts_with("//")
                || [";", "{", "}", "*/"].iter().any(|end| code.ends_with(end));
        }
        offset += line.len();
    }
    if ranges.is_empty() && from_byte == 0 {
        return None;
    }
    if offset > from_byte {
        let rows = src.bytes().filter(|&b| b == b'\n').count();
        let last = src.rsplit('\n').next().map_or(0, str::len);
        let end_point = tree_sitter::Point::new(rows, last);
        ranges.push(Range { start_byte: from_byte, end_byte: offset, start_point: from_point, end_point });
    }
    Some(ranges)
}

/// `FMT_BEGIN_NAMESPACE`: an upper-case identifier, four characters or more, alone.
fn is_bare_macro(code: &str) -> bool {
    code.len() >= 4
        && code.starts_with(|c: char| c.is_ascii_uppercase() || c == '_')
        && code.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        && code.bytes().any(|b| b.is_ascii_uppercase())
}
