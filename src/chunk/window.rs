//! Window chunks: a file's leftover code (what no definition holds: the module chunk's text)
//! cut into windows of about [`WINDOW_LINES`] lines when there is more of it than one window,
//! so that every line of code is embedded somewhere; the module chunk stays as it is.
//! A window is named after the module chunk and its lines (`<module>:120-160`); its span runs
//! from its first leftover line to its last, its text is the path and those lines.

use super::text::{chunk_at, slice, Lines};
use super::{Chunk, ChunkKind, MODULE_CHUNK_NAME};

/// About how many leftover lines a window holds; a file with no more than this has none.
pub const WINDOW_LINES: usize = 40;

/// The non-blank lines of `src` outside every cut, as byte ranges (`a..b`, end trimmed), in
/// file order. A cut that ends or starts inside a line splits it: each side is a line of its own.
pub(crate) fn leftover_lines(src: &str, cuts: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let mut cuts = cuts.to_vec();
    cuts.sort_unstable();
    let mut segments = Vec::new();
    let mut pos = 0;
    for (a, b) in cuts {
        if a > pos {
            segments.push((pos, a));
        }
        pos = pos.max(b);
    }
    segments.push((pos, src.len()));
    let mut out = Vec::new();
    for (a, b) in segments {
        let mut start = a;
        let seg = slice(src, a, b);
        for piece in seg.split('\n') {
            let trimmed = piece.trim_end();
            if !trimmed.is_empty() {
                out.push((start, start + trimmed.len()));
            }
            start += piece.len() + 1;
        }
    }
    out
}

/// The leftover lines' text, one line each (the module chunk's text without its path).
pub(crate) fn joined(src: &str, pieces: &[(usize, usize)]) -> String {
    pieces.iter().map(|&(a, b)| slice(src, a, b)).collect::<Vec<_>>().join("\n")
}

/// The window chunks of `path` over its leftover lines: none when they fit in one window,
/// else windows of near-equal size.
pub(crate) fn windows(path: &str, src: &str, lines: &Lines, pieces: &[(usize, usize)]) -> Vec<Chunk> {
    if pieces.len() <= WINDOW_LINES {
        return Vec::new();
    }
    let count = pieces.len().div_ceil(WINDOW_LINES);
    let size = pieces.len().div_ceil(count);
    pieces
        .chunks(size)
        .map(|group| {
            let span = (group[0].0, group[group.len() - 1].1);
            let first = lines.line_of(span.0);
            let last = lines.last_line(span.0, span.1);
            let name = format!("{MODULE_CHUNK_NAME}:{first}-{last}");
            let text = format!("{path}\n{}", joined(src, group));
            chunk_at(path, ChunkKind::Window, name, span, lines, text)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leftover_lines_skip_cuts_and_blank_lines() {
        let src = "use a;\n\nfn f() {}\nconst X: u8 = 1; fn g() {}\n";
        let f = src.find("fn f").unwrap();
        let g = src.find("fn g").unwrap();
        let cuts = [(f, f + "fn f() {}".len()), (g, g + "fn g() {}".len())];
        let texts: Vec<&str> = leftover_lines(src, &cuts).iter().map(|&(a, b)| &src[a..b]).collect();
        assert_eq!(texts, ["use a;", "const X: u8 = 1;"]);
    }

    #[test]
    fn long_leftovers_become_windows_covering_every_line() {
        let src: String = (1..=100).map(|i| format!("const C{i}: u32 = {i};\n")).collect();
        let lines = Lines::new(&src);
        let pieces = leftover_lines(&src, &[]);
        let ws = windows("a.rs", &src, &lines, &pieces);
        assert_eq!(ws.len(), 3);
        let spans: Vec<(usize, usize)> = ws.iter().map(|w| (w.start_line, w.end_line)).collect();
        assert_eq!(spans, [(1, 34), (35, 68), (69, 100)]);
        assert_eq!(ws[1].name, "<module>:35-68");
        assert_eq!(ws[1].kind, ChunkKind::Window);
        assert!(ws[1].text.starts_with("a.rs\nconst C35: u32 = 35;\n"));
        assert!(
            windows("a.rs", &src, &lines, &pieces[..WINDOW_LINES]).is_empty(),
            "one window's worth: none"
        );
    }
}
