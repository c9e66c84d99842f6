//! Lua's row on `src/lang/fixtures/store.lua`.

use super::{calls, clean_fixture, expect};

#[test]
fn lua_module_tables_and_table_types_own_their_functions_and_self_calls_resolve() {
    let file = clean_fixture("store.lua");
    expect(
        &file,
        &[
            ("<module>", "module", 1, 49, "local json = require(\"json\")"),
            ("Store.new", "method", 7, 13, "--- Make an empty store."),
            ("Store.put", "method", 15, 18, "function Store:put(key, value)"),
            ("Store.evict", "method", 20, 26, "function Store:evict()"),
            ("expired", "function", 28, 30, "local function expired(item, ttl)"),
            ("Store.dump", "method", 32, 34, "Store.dump = function(self)"),
            ("save", "function", 36, 40, "function save(store, path)"),
            ("Cache", "class", 42, 47, "local Cache = Store:extend{"),
            ("Cache.get", "method", 44, 46, "local Cache = Store:extend {"),
        ],
    );
    assert!(file.chunks[0].text.contains("return Store"), "what no function holds is module code");
    assert!(file.chunks[7].text.contains("size = 100"), "a table's fields are its type's text");
    let files = [file];
    assert_eq!(calls(&files, "Store.put").0, ["Store.evict"], "self:evict() is the table's own");
    let (callees, unresolved) = calls(&files, "Store.evict");
    assert_eq!(callees, ["expired"]);
    assert!(unresolved.is_empty(), "pairs() is the standard library's: {unresolved:?}");
    let (callees, unresolved) = calls(&files, "save");
    assert!(callees.is_empty(), "store's table is not known: no edge");
    assert_eq!(unresolved, ["store.dump"], "but the call is listed, not lost");
}
