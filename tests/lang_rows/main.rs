//! Every language row on a small fixture: the chunks it must yield (names, kinds, line spans,
//! the first line of the rendered text after the path), and the call edges it must and must not
//! have, one file per language. A new row adds its fixture under `src/lang/fixtures/` and its
//! file here.

use coret::callgraph::CallGraph;
use coret::chunk::{chunk_file, FileSyntax};

mod bash;
mod c;
mod cpp;
mod csharp;
mod elixir;
mod every_row;
mod go;
mod haskell;
mod java;
mod javascript;
mod kotlin;
mod lua;
mod php;
mod ruby;
mod rust;
mod scala;
mod swift;
mod typescript;
mod zig;

/// The file at `path` (relative to the crate) chunked as the index would.
fn chunked(path: &str) -> FileSyntax {
    let text = std::fs::read_to_string(format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    chunk_file(path, &text)
}

/// A fixture of `tests/fixtures/lang/` (the first eight rows', which eval's gold tests share), chunked.
fn shared_fixture(name: &str) -> FileSyntax {
    chunked(&format!("tests/fixtures/lang/{name}"))
}

/// A fixture of `src/lang/fixtures/`, chunked; it must parse cleanly.
fn clean_fixture(name: &str) -> FileSyntax {
    let file = chunked(&format!("src/lang/fixtures/{name}"));
    assert!(!file.has_syntax_errors, "{} parses cleanly", file.path);
    file
}

/// `(name, kind, start line, end line, first line of code)` of each chunk, in order.
fn shape(file: &FileSyntax) -> Vec<(String, &'static str, usize, usize, String)> {
    file.chunks
        .iter()
        .map(|c| {
            let mut lines = c.text.lines();
            assert_eq!(lines.next(), Some(file.path.as_str()), "{}: the path comes first", c.name);
            let first = lines.next().unwrap_or("").trim().to_string();
            (c.name.clone(), c.kind.as_str(), c.start_line, c.end_line, first)
        })
        .collect()
}

fn expect(file: &FileSyntax, want: &[(&str, &str, usize, usize, &str)]) {
    let got = shape(file);
    let want: Vec<(String, &str, usize, usize, String)> =
        want.iter().map(|(n, k, a, b, t)| (n.to_string(), *k, *a, *b, t.to_string())).collect();
    assert_eq!(got, want, "{}", file.path);
}

/// The callees and unresolved calls of chunk `name` in a graph over `files`.
fn calls(files: &[FileSyntax], name: &str) -> (Vec<String>, Vec<String>) {
    let graph = CallGraph::build(files);
    let all: Vec<&str> = files.iter().flat_map(|f| f.chunks.iter().map(|c| c.name.as_str())).collect();
    let id = all.iter().position(|n| *n == name).unwrap_or_else(|| panic!("no chunk {name} in {all:?}"));
    let callees = graph.callees[id].iter().map(|&c| all[c as usize].to_string()).collect();
    (callees, graph.unresolved[id].clone())
}
