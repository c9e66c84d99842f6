//! Elixir's row on `src/lang/fixtures/ledger.ex`.

use super::{calls, clean_fixture, expect};

#[test]
fn elixir_modules_functions_clauses_protocols_and_implementations() {
    let file = clean_fixture("ledger.ex");
    expect(
        &file,
        &[
            ("Bank.Ledger", "class", 1, 44, "defmodule Bank.Ledger do"),
            ("Bank.Ledger.open", "method", 11, 15, "defmodule Bank.Ledger"),
            ("Bank.Ledger.transfer", "method", 17, 23, "defmodule Bank.Ledger"),
            ("Bank.Ledger.deposit", "method", 25, 25, "defmodule Bank.Ledger"),
            ("Bank.Ledger.withdraw", "method", 27, 29, "defmodule Bank.Ledger"),
            ("Bank.Ledger.update", "method", 31, 33, "defmodule Bank.Ledger"),
            ("Bank.Ledger.check_balance", "method", 35, 37, "defmodule Bank.Ledger"),
            ("Bank.Ledger.put", "method", 39, 39, "defmodule Bank.Ledger"),
            ("Bank.Ledger.audit", "method", 41, 43, "defmodule Bank.Ledger"),
            ("Bank.Account", "class", 46, 56, "defmodule Bank.Account do"),
            ("Bank.Account.empty?", "method", 49, 49, "defmodule Bank.Account"),
            ("Bank.Account.describe", "method", 51, 53, "defmodule Bank.Account"),
            ("Bank.Account.summary", "method", 55, 55, "defmodule Bank.Account"),
            ("Bank.Printable", "class", 58, 60, "defprotocol Bank.Printable do"),
            ("Bank.Printable.print", "method", 59, 59, "defprotocol Bank.Printable"),
            ("Bank.Printable.Bank.Account", "class", 62, 64, "defimpl Bank.Printable, for: Bank.Account do"),
            (
                "Bank.Printable.Bank.Account.print",
                "method",
                63,
                63,
                "defimpl Bank.Printable, for: Bank.Account",
            ),
        ],
    );
    assert!(file.chunks[1].text.contains("@doc \"Open an account"), "@doc belongs to its function");
    let describe = &file.chunks[11].text;
    assert!(describe.contains("empty\"") && describe.contains("account.balance"), "both clauses, one chunk");
    let files = [file];
    assert_eq!(
        calls(&files, "Bank.Ledger.open").0,
        ["Bank.Ledger.put"],
        "the def's head is no call of itself"
    );
    let (callees, unresolved) = calls(&files, "Bank.Ledger.transfer");
    assert_eq!(
        callees,
        ["Bank.Ledger.withdraw", "Bank.Ledger.deposit"],
        "bare and by the module's full name"
    );
    assert!(unresolved.is_empty(), "with and Logger.info are not holes: {unresolved:?}");
    assert_eq!(
        calls(&files, "Bank.Ledger.withdraw").0,
        ["Bank.Ledger.update", "Bank.Ledger.check_balance"],
        "pipes"
    );
    assert_eq!(
        calls(&files, "Bank.Account.summary").0,
        ["Bank.Account.describe"],
        "one definition of many clauses"
    );
}
