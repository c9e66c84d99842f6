//! What a checkout holds that is not its own source (issue 81): vendored trees, minified
//! bundles, build output with a source map, and files that say they are generated. Their
//! chunks are copies of code found elsewhere or code nobody edits by hand; indexed, they fill
//! the lists with duplicates (four builds of one bundle) and cost most of the embedding. They
//! are left out and counted by cause (`stats.skipped`); `--include-generated` takes them in.
//! One rule for a checkout's walk and an eval snapshot alike.

use super::source::SkipReason;

/// Directories of other projects' code, committed or installed.
const VENDOR_DIRS: [&str; 6] =
    ["vendor", "vendored", "third_party", "third-party", "node_modules", "bower_components"];

/// How much of a file's start is read for its markers (and its first lines' length).
pub const HEAD_BYTES: usize = 4096;
/// How much of a file's end is read for a `sourceMappingURL` comment.
pub const TAIL_BYTES: usize = 512;

/// A line this long is no line a person wrote: a minified bundle or a data blob.
const MINIFIED_LINE: usize = 1000;

/// How many first lines may say a file is generated.
const MARKER_LINES: usize = 5;

/// Why `path` is left out by its name alone: a vendored tree, a `.min.` file.
pub fn by_path(path: &str) -> Option<SkipReason> {
    let mut parts = path.split('/');
    let file = parts.next_back().unwrap_or_default();
    if parts.any(|dir| VENDOR_DIRS.contains(&dir)) {
        return Some(SkipReason::Vendored);
    }
    file.contains(".min.").then_some(SkipReason::Minified)
}

/// Why a file is left out by what it holds: `head` is its first [`HEAD_BYTES`] (or all of it),
/// `tail` its last [`TAIL_BYTES`].
pub fn by_content(head: &[u8], tail: &[u8]) -> Option<SkipReason> {
    let head = String::from_utf8_lossy(head);
    let marked = head.lines().take(MARKER_LINES).any(|l| {
        l.contains("@generated")
            || l.contains("DO NOT EDIT")
            || (l.contains("Code generated") && l.contains("DO NOT EDIT"))
    });
    if marked {
        return Some(SkipReason::Generated);
    }
    // A line past the limit, whole or running on past the head.
    if head.split('\n').any(|line| line.chars().count() >= MINIFIED_LINE) {
        return Some(SkipReason::Minified);
    }
    let tail = String::from_utf8_lossy(tail);
    (tail.contains("sourceMappingURL=") && !tail.contains("sourceMappingURL=data:,"))
        .then_some(SkipReason::BuildOutput)
}

/// A file's directory and its name up to the first dot: `priv/static/` and `phoenix_live_view`
/// for `priv/static/phoenix_live_view.min.js` and for `…/phoenix_live_view.js` beside it.
pub fn sibling_key(path: &str) -> (&str, &str) {
    let cut = path.rfind('/').map_or(0, |i| i + 1);
    let (dir, file) = path.split_at(cut);
    (dir, file.split('.').next().unwrap_or(file))
}

/// The files of `paths` that are builds of the same bundle as a file left out as minified or
/// build output (`x.js` beside `x.min.js` or `x.cjs.js` + its map): one bundle committed in
/// several builds is build output in all of them (issue 81: phoenix_live_view's four).
pub fn built_siblings<'a>(
    paths: impl IntoIterator<Item = &'a str>,
    left_out: &[(&str, SkipReason)],
) -> std::collections::HashSet<&'a str> {
    let built: std::collections::HashSet<(&str, &str)> = left_out
        .iter()
        .filter(|(_, r)| matches!(r, SkipReason::Minified | SkipReason::BuildOutput))
        .map(|(p, _)| sibling_key(p))
        .collect();
    paths.into_iter().filter(|p| built.contains(&sibling_key(p))).collect()
}

/// The first and last bytes [`by_content`] reads, from a file's whole content.
pub fn head_and_tail(bytes: &[u8]) -> (&[u8], &[u8]) {
    (&bytes[..bytes.len().min(HEAD_BYTES)], &bytes[bytes.len().saturating_sub(TAIL_BYTES)..])
}

/// Why the file at `abs` (repository path `path`) is left out, reading only its head and tail
/// and whether a source map (`x.js.map`) lies beside it. `None`: it is the checkout's own.
pub fn of_file(path: &str, abs: &std::path::Path, size: u64) -> Option<SkipReason> {
    use std::io::{Read, Seek, SeekFrom};
    if let Some(r) = by_path(path) {
        return Some(r);
    }
    let mut map = abs.as_os_str().to_owned();
    map.push(".map");
    if std::path::Path::new(&map).is_file() {
        return Some(SkipReason::BuildOutput);
    }
    let mut file = std::fs::File::open(abs).ok()?;
    let mut head = vec![0; HEAD_BYTES.min(size as usize)];
    file.read_exact(&mut head).ok()?;
    let mut tail = vec![0; TAIL_BYTES.min(size as usize)];
    if size as usize > HEAD_BYTES {
        file.seek(SeekFrom::End(-(tail.len() as i64))).ok()?;
        file.read_exact(&mut tail).ok()?;
    } else {
        tail = head[head.len() - tail.len()..].to_vec();
    }
    by_content(&head, &tail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vendored_trees_and_min_names_are_told_by_their_paths() {
        assert_eq!(by_path("vendor/github.com/x/y.go"), Some(SkipReason::Vendored));
        assert_eq!(by_path("deps/third_party/zlib/inflate.c"), Some(SkipReason::Vendored));
        assert_eq!(by_path("web/node_modules/lodash/index.js"), Some(SkipReason::Vendored));
        assert_eq!(by_path("priv/static/phoenix_live_view.min.js"), Some(SkipReason::Minified));
        assert_eq!(by_path("src/vendor.rs"), None, "a file named vendor is the project's own");
        assert_eq!(by_path("lib/vendoring/util.rb"), None);
    }

    #[test]
    fn generated_markers_long_lines_and_source_maps_are_told_by_content() {
        let gen = b"// Code generated by protoc-gen-go. DO NOT EDIT.\npackage pb\n";
        assert_eq!(by_content(gen, gen), Some(SkipReason::Generated));
        let gen = b"# @generated by a tool\nx = 1\n";
        assert_eq!(by_content(gen, gen), Some(SkipReason::Generated));
        let later = format!("{}// @generated\n", "x = 1\n".repeat(10));
        assert_eq!(by_content(later.as_bytes(), b""), None, "a marker past the first lines is prose");
        let bundle = format!("/*! license */\n{}", "var a=1;".repeat(300));
        assert_eq!(by_content(bundle.as_bytes(), b""), Some(SkipReason::Minified));
        let built = b"function f() {\n  return 1;\n}\n//# sourceMappingURL=app.js.map\n";
        assert_eq!(by_content(built, built), Some(SkipReason::BuildOutput));
        let own = b"fn main() {\n    println!(\"hi\");\n}\n";
        assert_eq!(by_content(own, own), None);
    }

    #[test]
    fn the_other_builds_of_a_left_out_bundle_go_with_it() {
        let left_out = [
            ("priv/static/phoenix_live_view.min.js", SkipReason::Minified),
            ("lib/gen.go", SkipReason::Generated),
        ];
        let paths = [
            "priv/static/phoenix_live_view.js",
            "priv/static/other.js",
            "assets/js/phoenix_live_view.js",
            "lib/gen_test.go",
        ];
        let siblings = built_siblings(paths, &left_out);
        assert_eq!(siblings, ["priv/static/phoenix_live_view.js"].into_iter().collect());
    }

    #[test]
    fn a_file_with_a_map_beside_it_is_build_output() {
        let dir = tempfile::tempdir().unwrap();
        let js = dir.path().join("app.js");
        std::fs::write(&js, "function f() {}\n").unwrap();
        assert_eq!(of_file("app.js", &js, 16), None);
        std::fs::write(dir.path().join("app.js.map"), "{}").unwrap();
        assert_eq!(of_file("app.js", &js, 16), Some(SkipReason::BuildOutput));
    }
}
