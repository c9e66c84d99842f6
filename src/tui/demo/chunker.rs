//! A deliberately naive Python chunker and call resolver for the demo backend: top-level
//! `def`/`class` blocks and the `def`s directly inside classes. The real engine uses
//! tree-sitter; this only has to produce plausible, deterministic data.

use crate::{Chunk, ChunkKind};

/// Chunks of one file, in source order.
pub fn chunk_file(path: &str, source: &str) -> Vec<Chunk> {
    let lines: Vec<&str> = source.lines().collect();
    let offsets = line_offsets(source);
    let make = |kind, name: String, start: usize, end: usize, header: Option<usize>| {
        let mut text = format!("{path}\n");
        if let Some(h) = header {
            text.push_str(lines[h]);
            text.push('\n');
        }
        text.push_str(&lines[start..=end].join("\n"));
        Chunk {
            path: path.to_string(),
            kind,
            name,
            start_byte: offsets[start],
            end_byte: offsets[end] + lines[end].len(),
            start_line: start + 1,
            end_line: end + 1,
            text,
        }
    };
    let mut chunks = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some((kind, name)) = definition(lines[i], 0) else {
            i += 1;
            continue;
        };
        let end = block_end(&lines, i, 0);
        if kind == "class" {
            let mut class = make(ChunkKind::Class, name.clone(), i, end, None);
            class.text = class_text(path, &lines[i..=end]);
            chunks.push(class);
            for j in i + 1..=end {
                if let Some(("def", method)) = definition(lines[j], 4) {
                    let m_end = block_end(&lines, j, 4);
                    chunks.push(make(ChunkKind::Method, format!("{name}.{method}"), j, m_end, Some(i)));
                }
            }
        } else {
            chunks.push(make(ChunkKind::Function, name, i, end, None));
        }
        i = end + 1;
    }
    chunks
}

/// A class chunk as CoRet builds it: header, docstring and `__init__` in full, the other
/// methods as signatures with `...` bodies.
fn class_text(path: &str, lines: &[&str]) -> String {
    let mut out = vec![path.to_string()];
    let mut i = 0;
    while i < lines.len() {
        match definition(lines[i], 4) {
            Some(("def", method)) if method != "__init__" => {
                out.push(lines[i].to_string());
                out.push("        ...".into());
                i = block_end(lines, i, 4) + 1;
            }
            _ => {
                out.push(lines[i].to_string());
                i += 1;
            }
        }
    }
    out.join("\n")
}

/// `("def" | "class", name)` when `line` starts a definition at exactly `indent` spaces.
fn definition(line: &str, indent: usize) -> Option<(&'static str, String)> {
    let rest = line.strip_prefix(&" ".repeat(indent))?;
    let rest = rest.strip_prefix("async ").unwrap_or(rest);
    let (kind, rest) = if let Some(r) = rest.strip_prefix("def ") {
        ("def", r)
    } else {
        ("class", rest.strip_prefix("class ")?)
    };
    let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
    (!name.is_empty()).then_some((kind, name))
}

/// Last line of the block opened at `start`: before the next non-blank line indented at most
/// `indent`, with trailing blank lines dropped.
fn block_end(lines: &[&str], start: usize, indent: usize) -> usize {
    let mut end = start;
    for (j, line) in lines.iter().enumerate().skip(start + 1) {
        if line.trim().is_empty() {
            continue;
        }
        if line.len() - line.trim_start().len() <= indent {
            break;
        }
        end = j;
    }
    end
}

fn line_offsets(source: &str) -> Vec<usize> {
    let mut offsets = vec![0];
    offsets.extend(source.match_indices('\n').map(|(i, _)| i + 1));
    offsets
}

/// For each chunk, the ids of the chunks it calls: `name(` or `.name(` in its body, resolved
/// to chunks whose last name segment is `name` (same class first for `self.name(`).
pub fn callees(chunks: &[Chunk]) -> Vec<Vec<u32>> {
    chunks
        .iter()
        .enumerate()
        .map(|(id, chunk)| {
            let body = chunk.text.lines().skip(1).collect::<Vec<_>>().join("\n");
            let class = chunk.name.split('.').next().unwrap_or("");
            let mut out: Vec<u32> = Vec::new();
            for (called, via_self) in calls(&body) {
                let targets = chunks.iter().enumerate().filter(|(other, c)| {
                    *other != id
                        && c.name.rsplit('.').next() == Some(called.as_str())
                        && (!via_self || c.name.starts_with(&format!("{class}.")))
                });
                for (other, _) in targets {
                    let other = other as u32;
                    if !out.contains(&other) {
                        out.push(other);
                    }
                }
            }
            out
        })
        .collect()
}

/// Called names in source order: (name, called as `self.name(`).
fn calls(body: &str) -> Vec<(String, bool)> {
    let chars: Vec<char> = body.chars().collect();
    let mut out = Vec::new();
    for (i, c) in chars.iter().enumerate() {
        if *c != '(' {
            continue;
        }
        let start = (0..i).rev().take_while(|&j| chars[j].is_alphanumeric() || chars[j] == '_').last();
        if let Some(start) = start {
            let before: String = chars[start.saturating_sub(6)..start].iter().collect();
            if before.ends_with("def ") || before.ends_with("class ") {
                continue;
            }
            let name: String = chars[start..i].iter().collect();
            out.push((name, before.ends_with("self.")));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_methods_and_functions_with_spans() {
        let src = "import x\n\nclass A:\n    def f(self):\n        return g()\n\n\ndef g():\n    pass\n";
        let chunks = chunk_file("m.py", src);
        let names: Vec<_> = chunks.iter().map(|c| (c.name.as_str(), c.start_line, c.end_line)).collect();
        assert_eq!(names, [("A", 3, 5), ("A.f", 4, 5), ("g", 8, 9)]);
        assert_eq!(chunks[1].text, "m.py\nclass A:\n    def f(self):\n        return g()");
        assert_eq!(&src[chunks[2].start_byte..chunks[2].end_byte], "def g():\n    pass");
        assert_eq!(callees(&chunks)[1], vec![2], "A.f calls g");
        assert_eq!(
            chunks[0].text, "m.py\nclass A:\n    def f(self):\n        ...",
            "class bodies are elided"
        );
        assert!(callees(&chunks)[0].is_empty(), "a class does not call what its methods call");
    }
}
