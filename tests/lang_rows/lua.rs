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

#[test]
fn a_function_in_a_call_s_option_table_is_anonymous_and_draws_no_callers() {
    // nvim-cmp's async.lua (issue 81): the autocmd's `callback = function() … end` is no
    // definition; the loop variable and parameter named `callback` call nothing of the file.
    let text = "local M = {}\n\nM.wait = function(callback)\n  vim.api.nvim_create_autocmd('User', {\n    \
                pattern = 'x',\n    callback = function()\n      M.done = true\n    end,\n  })\n  \
                callback()\nend\n\nM.each = function(list)\n  for _, callback in ipairs(list) do\n    \
                callback()\n  end\nend\n\nreturn M\n";
    let file = coret::chunk::chunk_file("lua/cmp/utils/async.lua", text);
    let names: Vec<&str> = file.chunks.iter().map(|c| c.name.as_str()).collect();
    assert!(!names.contains(&"callback"), "{names:?}");
    assert!(names.contains(&"M.wait") && names.contains(&"M.each"), "{names:?}");
    let files = [file];
    assert!(calls(&files, "M.each").0.is_empty(), "no false edge");
    // A module's returned table keeps its functions.
    let module = coret::chunk::chunk_file(
        "lua/m.lua",
        "return {\n  setup = function(opts)\n    return opts\n  end,\n}\n",
    );
    assert!(
        module.chunks.iter().any(|c| c.name == "setup"),
        "{:?}",
        module.chunks.iter().map(|c| &c.name).collect::<Vec<_>>()
    );
}

#[test]
fn the_standard_librarys_module_functions_are_not_holes() {
    let text = "local M = {}\n\nfunction M.add(list, x)\n  table.insert(list, x)\n  return string.format('%d', #list)\nend\n\nreturn M\n";
    let files = [coret::chunk::chunk_file("lua/list.lua", text)];
    let (_, unresolved) = calls(&files, "M.add");
    assert!(unresolved.is_empty(), "table.insert and string.format are Lua's own: {unresolved:?}");
}

/// Issue 81: a method defined with `:` is shown `Store:put`, as Lua writes and calls it; a
/// table's function defined with `.` stays `Store.new`.
#[test]
fn lua_methods_defined_with_a_colon_are_written_with_one() {
    let file = clean_fixture("store.lua");
    let written: Vec<String> = file.chunks.iter().map(|c| c.written_name().into_owned()).collect();
    for name in ["Store.new", "Store:put", "Store:evict", "Store.dump", "expired", "Cache.get"] {
        assert!(written.contains(&name.to_string()), "{name} in {written:?}");
    }
    assert!(file.chunks.iter().any(|c| c.name == "Store.put"), "dotted for the engine");
}
