//! C's row on its fixtures (`tests/fixtures/lang/`).

use super::{calls, expect, shared_fixture as fixture};

#[test]
fn c_functions_macros_and_typedef_structs() {
    let file = fixture("zbuf.c");
    expect(
        &file,
        &[
            ("<module>", "module", 1, 20, "#include <stdlib.h>"),
            ("ZBUF_MIN", "macro", 4, 4, "#define ZBUF_MIN(a, b) ((a) < (b) ? (a) : (b))"),
            ("zbuf_t", "class", 6, 9, "typedef struct {"),
            ("zbuf_cap", "function", 11, 13, "static size_t zbuf_cap(size_t n) {"),
            ("zbuf_new", "function", 15, 20, "/* Makes a buffer. */"),
        ],
    );
    let files = [file];
    assert_eq!(calls(&files, "zbuf_cap").0, ["ZBUF_MIN"]);
    assert_eq!(calls(&files, "zbuf_new").0, ["zbuf_cap"], "malloc is the C library's");
}
