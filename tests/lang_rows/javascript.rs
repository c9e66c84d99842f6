//! JavaScript's row on its fixtures (`tests/fixtures/lang/`).

use super::{calls, expect, shared_fixture as fixture};

#[test]
fn javascript_classes_functions_arrows_and_assigned_functions() {
    let file = fixture("cart.js");
    expect(
        &file,
        &[
            ("<module>", "module", 1, 31, "'use strict';"),
            ("Cart", "class", 4, 19, "/**"),
            ("Cart.constructor", "method", 8, 10, "class Cart {"),
            ("Cart.total", "method", 12, 14, "class Cart {"),
            ("Cart.subtotal", "method", 16, 18, "class Cart {"),
            ("sum", "function", 21, 23, "function sum(xs) {"),
            ("emptyCart", "function", 25, 25, "const emptyCart = () => new Cart([]);"),
            ("exports.send", "function", 27, 29, "exports.send = function send(body) {"),
        ],
    );
    let class_text = &file.chunks[1].text;
    assert!(class_text.contains("this.items = items || [];"), "the constructor stays whole: {class_text}");
    assert!(class_text.contains("total() { ... }"), "{class_text}");
    let files = [file];
    assert_eq!(calls(&files, "Cart.total").0, ["Cart.subtotal"]);
    assert_eq!(calls(&files, "emptyCart").0, ["Cart"], "`new Cart` is the class");
    let (callees, unresolved) = calls(&files, "exports.send");
    assert_eq!(callees, ["emptyCart"]);
    assert_eq!(unresolved, ["….total"], "a method on an unknown receiver is listed, not guessed");
}
