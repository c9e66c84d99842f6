//! Haskell's row on `src/lang/fixtures/Inventory.hs`.

use super::{calls, clean_fixture, expect};

#[test]
fn haskell_equations_are_one_function_with_their_signature_and_instances_own_their_methods() {
    let file = clean_fixture("Inventory.hs");
    expect(
        &file,
        &[
            ("<module>", "module", 1, 45, "{-# LANGUAGE OverloadedStrings #-}"),
            ("Item", "class", 14, 17, "data Item = Item"),
            ("Stock", "class", 19, 19, "newtype Stock = Stock (Map.Map String Item)"),
            ("Priced", "class", 21, 24, "class Priced a where"),
            ("Priced.discounted", "method", 22, 24, "class Priced a where"),
            ("Item.price", "method", 27, 27, "instance Priced Item where"),
            ("restock", "function", 29, 33, "-- | Add units of an item."),
            ("reserve", "function", 35, 39, "reserve :: String -> Int -> Stock -> Either String Stock"),
            ("available", "function", 41, 42, "available :: String -> Stock -> Int"),
            ("take'", "function", 44, 45, "take' :: Int -> Item -> Item"),
        ],
    );
    assert!(file.chunks[0].text.contains("module Shop.Inventory"), "the header is module code");
    let files = [file];
    let (callees, unresolved) = calls(&files, "reserve");
    assert_eq!(callees, ["available", "take'"], "both equations' calls, applied or passed partially applied");
    assert!(unresolved.is_empty(), "Map.adjust and otherwise are no holes: {unresolved:?}");
    let (callees, unresolved) = calls(&files, "restock");
    assert!(callees.is_empty(), "merge is bound in its where clause: {callees:?}");
    assert!(unresolved.is_empty(), "{unresolved:?}");
}

/// Issue 70's bad input: layout errors (a `where` indented against its function, a dangling
/// `do`) parse with errors, and what parsed is still chunked; nothing panics.
#[test]
fn layout_errors_are_chunked_not_fatal() {
    let source = "module M where\n\nf x = y\nwhere y = x\n\ng = do\n\nh :: Int\nh = 1\n";
    let file = coret::chunk::chunk_file("src/M.hs", source);
    assert!(file.has_syntax_errors);
    assert!(!file.chunks.is_empty(), "its code is still searchable");
    assert!(file.chunks.iter().all(|c| c.start_line >= 1 && c.end_line <= source.lines().count()));
}
