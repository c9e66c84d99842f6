//! Java's row on its fixtures (`tests/fixtures/lang/`).

use super::{calls, expect, shared_fixture as fixture};

#[test]
fn java_classes_constructors_methods_and_nested_classes() {
    let file = fixture("Parser.java");
    expect(
        &file,
        &[
            ("<module>", "module", 1, 30, "package com.example.json;"),
            ("Parser", "class", 5, 30, "/**"),
            ("Parser.Parser", "method", 11, 13, "public class Parser extends Base {"),
            ("Parser.next", "method", 15, 17, "public class Parser extends Base {"),
            ("Parser.peek", "method", 19, 21, "public class Parser extends Base {"),
            ("Parser.Token", "class", 23, 29, "static class Token {"),
            ("Parser.Token.kind", "method", 26, 28, "static class Token {"),
        ],
    );
    let files = [file];
    assert_eq!(calls(&files, "Parser.next").0, ["Parser.peek"], "`this` is implied in Java");
}
