//! Elixir's row on `src/lang/fixtures/ledger.ex`.

use super::{calls, clean_fixture, expect};

#[test]
fn elixir_modules_functions_clauses_protocols_and_implementations() {
    let file = clean_fixture("ledger.ex");
    expect(
        &file,
        &[
            ("Bank.Ledger", "class", 1, 44, "defmodule Bank.Ledger do"),
            ("Bank.Ledger.open/3", "method", 11, 15, "defmodule Bank.Ledger"),
            ("Bank.Ledger.transfer/4", "method", 17, 23, "defmodule Bank.Ledger"),
            ("Bank.Ledger.deposit/3", "method", 25, 25, "defmodule Bank.Ledger"),
            ("Bank.Ledger.withdraw/3", "method", 27, 29, "defmodule Bank.Ledger"),
            ("Bank.Ledger.update/3", "method", 31, 33, "defmodule Bank.Ledger"),
            ("Bank.Ledger.check_balance/2", "method", 35, 37, "defmodule Bank.Ledger"),
            ("Bank.Ledger.put/2", "method", 39, 39, "defmodule Bank.Ledger"),
            ("Bank.Ledger.audit/1", "method", 41, 43, "defmodule Bank.Ledger"),
            ("Bank.Account", "class", 46, 61, "defmodule Bank.Account do"),
            ("Bank.Account.empty?/1", "method", 49, 49, "defmodule Bank.Account"),
            ("Bank.Account.describe/1", "method", 51, 53, "defmodule Bank.Account"),
            ("Bank.Account.summary/1", "method", 55, 55, "defmodule Bank.Account"),
            ("Bank.Account.label/1", "method", 57, 57, "defmodule Bank.Account"),
            ("Bank.Account.label/2", "method", 58, 58, "defmodule Bank.Account"),
            ("Bank.Account.tagged/2", "method", 60, 60, "defmodule Bank.Account"),
            ("Bank.Printable", "class", 63, 65, "defprotocol Bank.Printable do"),
            ("Bank.Printable.print/1", "method", 64, 64, "defprotocol Bank.Printable"),
            ("Bank.Printable.Bank.Account", "class", 67, 69, "defimpl Bank.Printable, for: Bank.Account do"),
            (
                "Bank.Printable.Bank.Account.print/1",
                "method",
                68,
                68,
                "defimpl Bank.Printable, for: Bank.Account",
            ),
        ],
    );
    assert!(file.chunks[1].text.contains("@doc \"Open an account"), "@doc belongs to its function");
    let describe = &file.chunks[11].text;
    assert!(describe.contains("empty\"") && describe.contains("account.balance"), "both clauses, one chunk");
    assert!(
        !file.chunks[13].text.contains("prefix}"),
        "each arity its own definition: label/1 holds not label/2"
    );
    let files = [file];
    assert_eq!(
        calls(&files, "Bank.Ledger.open/3").0,
        ["Bank.Ledger.put/2"],
        "the def's head is no call of itself"
    );
    let (callees, unresolved) = calls(&files, "Bank.Ledger.transfer/4");
    assert_eq!(
        callees,
        ["Bank.Ledger.withdraw/3", "Bank.Ledger.deposit/3"],
        "bare and by the module's full name"
    );
    assert!(unresolved.is_empty(), "with and Logger.info are not holes: {unresolved:?}");
    assert_eq!(
        calls(&files, "Bank.Ledger.withdraw/3").0,
        ["Bank.Ledger.update/3", "Bank.Ledger.check_balance/2"],
        "pipes"
    );
    assert_eq!(
        calls(&files, "Bank.Account.summary/1").0,
        ["Bank.Account.describe/1"],
        "one definition of many clauses"
    );
    assert_eq!(
        calls(&files, "Bank.Account.label/1").0,
        ["Bank.Account.label/2"],
        "a call reaches its own arity"
    );
    assert_eq!(calls(&files, "Bank.Account.tagged/2").0, ["Bank.Account.label/2"], "a pipe passes one more");
}

/// Issue 81: shown as Elixir knows them: `defmodule`, `defprotocol` and `defimpl` define
/// modules, `def` and `defp` functions (no methods), `defmacro` a macro; names keep their arity.
#[test]
fn elixir_definitions_are_shown_as_modules_functions_and_macros() {
    let file = clean_fixture("ledger.ex");
    let shown = |name: &str| {
        let c = file.chunks.iter().find(|c| c.name == name).unwrap_or_else(|| panic!("{name}"));
        (c.written_name().into_owned(), c.shown_kind().as_str())
    };
    assert_eq!(shown("Bank.Ledger"), ("Bank.Ledger".into(), "module"));
    assert_eq!(shown("Bank.Printable"), ("Bank.Printable".into(), "module"));
    assert_eq!(shown("Bank.Ledger.open/3"), ("Bank.Ledger.open/3".into(), "function"), "def");
    assert_eq!(shown("Bank.Ledger.withdraw/3"), ("Bank.Ledger.withdraw/3".into(), "function"), "defp");
    assert_eq!(shown("Bank.Ledger.audit/1"), ("Bank.Ledger.audit/1".into(), "macro"), "defmacro");
    let audit = file.chunks.iter().find(|c| c.name == "Bank.Ledger.audit/1").unwrap();
    assert_eq!(audit.kind.as_str(), "method", "the engine's kind: the call graph reaches it by its module");
}
