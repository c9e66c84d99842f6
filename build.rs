//! Build facts the engine's caches key on.
//!
//! `CORET_GRAPH_CODE`: a hash of the code that resolves calls (`src/callgraph`, `src/lang`). A
//! cached call graph is used only by a binary built from the same code, so a change to the
//! resolver can never serve an old graph (no version number to remember to bump).
//!
//! `parse_code.rs` in `OUT_DIR`: `PARSE_CODE`, a hash of the code that decides what a file's
//! chunks are (the chunker, the language rows and their grammar crates' versions, the source
//! decoding, the BM25 token counts the manifest keeps, the manifest's own layout). The parse
//! cache (manifest and eval's syntax stores) is framed with it, so a changed rule rebuilds every
//! cached parse (issue 73).

use std::hash::{Hash, Hasher};
use std::path::Path;

const GRAPH_CODE: [&str; 2] = ["src/callgraph", "src/lang"];
/// Written into `parse_code.rs` as `PARSE_CODE_PATHS` too: the engine's tests read this one list.
const PARSE_CODE: [&str; 8] = [
    "src/chunk",
    "src/lang",
    "src/repo/source.rs",
    "src/index/bm25.rs",
    "src/index/code_tokens.rs",
    "src/engine/manifest.rs",
    "src/engine/syntax_store.rs",
    "Cargo.lock",
];

fn main() {
    println!("cargo:rustc-env=CORET_GRAPH_CODE={:016x}", hash_of(&GRAPH_CODE));
    let parse = hash_of(&PARSE_CODE) as u32;
    let out = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("parse_code.rs");
    let text = format!(
        "/// build.rs's hash of the code that parses.\npub(crate) const PARSE_CODE: u32 = 0x{parse:08x};\n\
         /// What build.rs hashes into `PARSE_CODE`.\n#[allow(dead_code)]\npub(crate) const PARSE_CODE_PATHS: [&str; {}] = {PARSE_CODE:?};\n",
        PARSE_CODE.len()
    );
    std::fs::write(out, text).expect("OUT_DIR is writable");
}

/// SipHash with fixed keys over the paths and bytes of every file under `roots`: the same
/// bytes give the same value on every build.
fn hash_of(roots: &[&str]) -> u64 {
    let mut files = Vec::new();
    for root in roots {
        println!("cargo:rerun-if-changed={root}");
        let p = Path::new(root);
        if p.is_dir() {
            collect(p, &mut files);
        } else {
            files.push(p.to_path_buf());
        }
    }
    files.sort();
    let mut h = std::hash::DefaultHasher::new();
    for f in &files {
        f.hash(&mut h);
        let bytes = std::fs::read(f).unwrap_or_default();
        if f.ends_with("Cargo.lock") {
            grammar_packages(&String::from_utf8_lossy(&bytes)).hash(&mut h);
        } else {
            bytes.hash(&mut h);
        }
    }
    h.finish()
}

/// Cargo.lock's entries of the tree-sitter crates (the grammars and their runtime): what of
/// the lock decides a parse, so that adding an unrelated dependency keeps every cache.
fn grammar_packages(lock: &str) -> Vec<&str> {
    lock.split("[[package]]").filter(|p| p.contains("name = \"tree-sitter")).collect()
}

fn collect(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else {
            out.push(p);
        }
    }
}
