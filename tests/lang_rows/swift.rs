//! Swift's row on its fixtures (`src/lang/fixtures/`).

use super::{calls, clean_fixture as fixture, expect};

#[test]
fn swift_classes_extensions_protocols_and_self_calls() {
    let file = fixture("Session.swift");
    expect(
        &file,
        &[
            ("<module>", "module", 1, 47, "import Foundation"),
            ("Session", "class", 3, 26, "/// A signed-in user's session."),
            ("Session.init", "method", 8, 11, "final class Session {"),
            ("Session.refresh", "method", 13, 17, "final class Session {"),
            ("Session.notify", "method", 19, 21, "final class Session {"),
            ("Session.defaultExpiry", "method", 23, 25, "final class Session {"),
            ("Session.invalidate", "method", 31, 34, "extension Session {"),
            ("Store", "class", 37, 39, "protocol Store {"),
            ("Token", "class", 41, 43, "struct Token {"),
            ("log", "function", 45, 47, "func log(_ message: String) {"),
        ],
    );
    assert!(file.chunks[0].text.contains("var isExpired"), "an extension's properties stay in module code");
    let files = [file];
    assert_eq!(calls(&files, "Session.refresh").0, ["Session.defaultExpiry", "log", "Session.notify"]);
    assert_eq!(calls(&files, "Session.invalidate").0, ["Session.refresh"], "self implied in an extension");
    let (callees, unresolved) = calls(&files, "Session.notify");
    assert!(callees.is_empty() && unresolved.is_empty(), "NotificationCenter is Foundation's");
}
