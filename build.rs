//! Build facts the engine's caches key on.
//!
//! `CORET_GRAPH_CODE`: a hash of the code that resolves calls (`src/callgraph`, `src/lang`). A
//! cached call graph is used only by a binary built from the same code, so a change to the
//! resolver can never serve an old graph (no version number to remember to bump).

use std::hash::{Hash, Hasher};
use std::path::Path;

const GRAPH_CODE: [&str; 2] = ["src/callgraph", "src/lang"];

fn main() {
    let mut files = Vec::new();
    for dir in GRAPH_CODE {
        println!("cargo:rerun-if-changed={dir}");
        collect(Path::new(dir), &mut files);
    }
    files.sort();
    // SipHash with fixed keys: the same bytes give the same value on every build.
    let mut h = std::hash::DefaultHasher::new();
    for f in &files {
        f.hash(&mut h);
        std::fs::read(f).unwrap_or_default().hash(&mut h);
    }
    println!("cargo:rustc-env=CORET_GRAPH_CODE={:016x}", h.finish());
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
