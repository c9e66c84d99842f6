//! How much of a repository's code the chunks cover, per language: the share of code lines
//! (not blank, not only comment) that fall in a function, type, method, macro or window chunk,
//! or in the module chunk of a file whose leftover code is short enough to be embedded whole
//! (at most 40 lines: no windows needed); and the share in definitions alone (function, type,
//! method, macro). Test files are left out. Reads each repository's HEAD from its git mirror.
//!
//! `cargo run --example coverage -- [--mirrors DIR] [--worst N] [owner/name ...]`
//! (no names: the dev repositories listed below). `--worst N` prints the N files with the most
//! uncovered lines and the first of those lines, to see what the chunker misses; with `--defs`,
//! the lines outside every definition instead.

use std::collections::BTreeMap;
use std::path::PathBuf;

use coret::chunk::{chunk_file, ChunkKind, FileSyntax};
use coret::lang::{extension, is_test_path, lang_of_path, Lang};
use coret::repo::git::{find_repo, read_snapshot};

const REPOS: &[&str] = &[
    "tokio-rs/tokio",
    "sharkdp/bat",
    "clap-rs/clap",
    "serde-rs/serde",
    "rayon-rs/rayon",
    "grpc/grpc-go",
    "iamkun/dayjs",
    "expressjs/express",
    "darkreader/darkreader",
    "FasterXML/jackson-core",
    "apache/dubbo",
    "facebook/zstd",
    "fmtlib/fmt",
    "catchorg/Catch2",
    "yhirose/cpp-httplib",
    "psf/requests",
    "pallets/flask",
];

/// A module chunk with at most this many lines of leftover code is embedded whole.
const SHORT_MODULE: usize = 40;
const MAX_FILE: usize = 1024 * 1024;

#[derive(Default)]
struct Tally {
    files: usize,
    code: usize,
    covered: usize,
    in_defs: usize,
}

fn main() -> anyhow::Result<()> {
    let mut mirrors = PathBuf::from("/work/.mirror");
    let mut worst = 0usize;
    let mut by_defs = false;
    let mut repos: Vec<String> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--mirrors" => mirrors = args.next().map(PathBuf::from).unwrap_or(mirrors),
            "--worst" => worst = args.next().and_then(|n| n.parse().ok()).unwrap_or(10),
            "--defs" => by_defs = true,
            _ => repos.push(arg),
        }
    }
    if repos.is_empty() {
        repos = REPOS.iter().map(|r| r.to_string()).collect();
    }
    let mut by_lang: BTreeMap<Lang, Tally> = BTreeMap::new();
    let mut misses: Vec<(usize, String, Vec<String>)> = Vec::new();
    for repo in &repos {
        let git_dir = find_repo(&mirrors, repo)?;
        let snap = read_snapshot(&git_dir, "HEAD", |p| lang_of_path(p).is_some() && !is_test_path(p))?;
        let mut own: BTreeMap<Lang, Tally> = BTreeMap::new();
        for (path, bytes) in &snap.files {
            let (Some(lang), Ok(src)) = (lang_of_path(path), std::str::from_utf8(bytes)) else { continue };
            if bytes.len() > MAX_FILE || bytes.contains(&0) {
                continue;
            }
            let code = code_lines(lang, path, src);
            let fs = chunk_file(path, src);
            let covered = covered_lines(&fs, code.len(), false);
            let in_defs = covered_lines(&fs, code.len(), true);
            let t = own.entry(lang).or_default();
            t.files += 1;
            let mut missed = Vec::new();
            for (i, is_code) in code.iter().enumerate() {
                if *is_code {
                    t.code += 1;
                    t.in_defs += usize::from(in_defs[i]);
                    t.covered += usize::from(covered[i]);
                    if !(if by_defs { in_defs[i] } else { covered[i] }) {
                        missed.push(format!("{:>6}: {}", i + 1, src.lines().nth(i).unwrap_or("").trim_end()));
                    }
                }
            }
            if worst > 0 && !missed.is_empty() {
                misses.push((missed.len(), format!("{repo}/{path}"), missed));
            }
        }
        for (lang, t) in own {
            println!("{repo:<24} {:<10} {}", lang.name(), line(&t));
            let all = by_lang.entry(lang).or_default();
            all.files += t.files;
            all.code += t.code;
            all.covered += t.covered;
            all.in_defs += t.in_defs;
        }
    }
    println!(
        "\n| language | files | code lines | covered | in definitions |\n| --- | ---: | ---: | ---: | ---: |"
    );
    for (lang, t) in &by_lang {
        let defs = 100.0 * t.in_defs as f64 / t.code.max(1) as f64;
        println!("| {} | {} | {} | {:.1} % | {defs:.1} % |", lang.name(), t.files, t.code, pct(t));
    }
    misses.sort_by_key(|m| std::cmp::Reverse(m.0));
    for (n, path, lines) in misses.iter().take(worst) {
        println!("\n== {path}: {n} {}", if by_defs { "outside definitions" } else { "uncovered" });
        for l in lines.iter().take(12) {
            println!("{l}");
        }
    }
    Ok(())
}

fn pct(t: &Tally) -> f64 {
    100.0 * t.covered as f64 / t.code.max(1) as f64
}

fn line(t: &Tally) -> String {
    format!("{:>5} files {:>8} code lines {:>6.1} % covered", t.files, t.code, pct(t))
}

/// Per line (0-based): whether it holds a byte of code outside every comment.
fn code_lines(lang: Lang, path: &str, src: &str) -> Vec<bool> {
    let n = src.lines().count().max(1);
    let mut comment = vec![false; src.len()];
    let mut parser = tree_sitter::Parser::new();
    if parser.set_language(&lang.grammar(&extension(path))).is_ok() {
        if let Some(tree) = parser.parse(src, None) {
            let mut cursor = tree.walk();
            let mut stack = vec![tree.root_node()];
            while let Some(node) = stack.pop() {
                if node.kind().contains("comment") {
                    comment[node.start_byte()..node.end_byte().min(src.len())].fill(true);
                    continue;
                }
                stack.extend(node.children(&mut cursor));
            }
        }
    }
    let mut code = vec![false; n];
    let mut line = 0;
    for (i, b) in src.bytes().enumerate() {
        if b == b'\n' {
            line += 1;
        } else if !b.is_ascii_whitespace() && !comment[i] && line < n {
            code[line] = true;
        }
    }
    code
}

/// Per line (0-based): whether some chunk other than a long module chunk spans it (`defs_only`:
/// a function, type, method or macro chunk).
fn covered_lines(fs: &FileSyntax, n: usize, defs_only: bool) -> Vec<bool> {
    let mut covered = vec![false; n];
    let windows = fs.chunks.iter().any(|c| c.kind.as_str() == "window");
    for c in &fs.chunks {
        let short_module =
            c.kind == ChunkKind::Module && !windows && c.text.lines().count() <= SHORT_MODULE + 1;
        let counts = match defs_only {
            true => c.kind != ChunkKind::Module && c.kind.as_str() != "window",
            false => c.kind != ChunkKind::Module || short_module,
        };
        if counts {
            let end = c.end_line.min(n);
            for slot in covered.iter_mut().take(end).skip(c.start_line.saturating_sub(1)) {
                *slot = true;
            }
        }
    }
    covered
}
