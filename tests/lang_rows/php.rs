//! PHP's row on its fixtures (`src/lang/fixtures/`).

use super::{calls, clean_fixture as fixture, expect};

#[test]
fn php_classes_this_self_and_functions_in_a_namespace() {
    let file = fixture("Kernel.php");
    expect(
        &file,
        &[
            ("<module>", "module", 1, 46, "<?php"),
            ("Kernel", "class", 7, 36, "/**"),
            ("Kernel.__construct", "method", 14, 17, "class Kernel extends BaseKernel {"),
            ("Kernel.handle", "method", 19, 25, "class Kernel extends BaseKernel {"),
            ("Kernel.prepare", "method", 27, 30, "class Kernel extends BaseKernel {"),
            ("Kernel.dispatch", "method", 32, 35, "class Kernel extends BaseKernel {"),
            ("Terminable", "class", 38, 41, "interface Terminable"),
            ("format_response", "function", 43, 46, "function format_response($response)"),
        ],
    );
    assert!(file.chunks[6].text.contains("public function terminate($request, $response);"));
    let files = [file];
    let (callees, unresolved) = calls(&files, "Kernel.handle");
    assert_eq!(
        callees,
        ["Kernel.prepare", "Kernel.dispatch", "format_response"],
        "$this->, self:: and a function"
    );
    assert!(unresolved.is_empty(), "Logger::info is outside the repository: {unresolved:?}");
    assert!(calls(&files, "Kernel.prepare").0.is_empty(), "$request->withHeader is no edge");
}
