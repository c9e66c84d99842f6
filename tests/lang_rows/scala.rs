//! Scala's row on its fixtures (`src/lang/fixtures/`).

use super::{calls, clean_fixture as fixture, expect};

#[test]
fn scala_classes_companion_objects_traits_and_this_calls() {
    let file = fixture("Ledger.scala");
    expect(
        &file,
        &[
            ("<module>", "module", 1, 35, "package shop.ledger"),
            ("Ledger", "class", 5, 21, "/** Entries of one account. */"),
            ("Ledger.this", "method", 9, 9, "class Ledger(owner: String) {"),
            ("Ledger.post", "method", 11, 16, "class Ledger(owner: String) {"),
            ("Ledger.audit", "method", 18, 18, "class Ledger(owner: String) {"),
            ("Ledger.balance", "method", 20, 20, "class Ledger(owner: String) {"),
            ("Ledger", "class", 23, 26, "object Ledger {"),
            ("Ledger.check", "method", 24, 24, "object Ledger {"),
            ("Ledger.open", "method", 25, 25, "object Ledger {"),
            ("Entry", "class", 28, 28, "case class Entry(amount: BigDecimal)"),
            ("Account", "class", 30, 33, "trait Account {"),
            ("Account.describe", "method", 32, 32, "trait Account {"),
            ("summary", "function", 35, 35, "def summary(l: Ledger): String = l.balance.toString"),
        ],
    );
    let files = [file];
    let (callees, unresolved) = calls(&files, "Ledger.post");
    assert_eq!(callees, ["Entry", "Ledger.audit", "Ledger.check"], "Entry(…), this.audit, Ledger.check");
    assert!(unresolved.is_empty(), "{unresolved:?}");
    assert_eq!(
        calls(&files, "Ledger.open").1,
        ["Ledger"],
        "class and object share the name: listed, not guessed"
    );
}
