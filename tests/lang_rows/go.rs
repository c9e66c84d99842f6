//! Go's row on its fixtures (`tests/fixtures/lang/`).

use super::{calls, expect, shared_fixture as fixture};

#[test]
fn go_functions_types_and_receiver_methods() {
    let file = fixture("server.go");
    expect(
        &file,
        &[
            ("<module>", "module", 1, 34, "package server"),
            ("Server", "class", 6, 10, "// Server holds the listener state."),
            ("Handler", "class", 12, 15, "// Handler handles one request."),
            ("NewServer", "function", 17, 20, "// NewServer makes a server."),
            ("defaultPort", "function", 22, 24, "func defaultPort() int {"),
            ("Server.Serve", "method", 26, 30, "// Serve starts serving."),
            ("Server.log", "method", 32, 34, "func (s *Server) log(msg string) {"),
        ],
    );
    let files = [file];
    assert_eq!(calls(&files, "NewServer").0, ["defaultPort"]);
    let (callees, unresolved) = calls(&files, "Server.Serve");
    assert_eq!(callees, ["Server.log"], "`s.log()` through the receiver's own name");
    assert!(unresolved.is_empty(), "fmt.Errorf is a library's: {unresolved:?}");
}

#[test]
fn go_unresolved_calls_keep_the_receiver_name_as_written() {
    let files = [fixture("terminal.go")];
    let (callees, unresolved) = calls(&files, "Terminal.resize");
    assert_eq!(callees, ["Terminal.margin"], "`t.margin()` resolves through the receiver");
    assert_eq!(unresolved, ["t.pwindow.Height"], "as the code says it, not `self.pwindow.Height`");
}
