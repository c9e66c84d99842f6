//! Code the grammar cannot see through macros:
//!
//! - The insides of an item macro (`cfg_rt! { pub fn spawn… }`) parsed again as items of the
//!   file's language: tree-sitter reads only the bytes between the token tree's delimiters, so
//!   the new tree's nodes carry the original file's byte and line positions and the chunker
//!   walks them as it walks the file. Whatever does not parse as items is left to the module
//!   chunk (tree-sitter recovers what it can; nothing panics).
//!
//! (C and C++ bare macro lines, `FMT_BEGIN_NAMESPACE`, are blanked by their rows' `mask`.)

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
