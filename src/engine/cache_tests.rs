//! The BM25 cache: a damaged index is rebuilt, never trusted, and an incremental update
//! ranks exactly as a clean build does.

use super::{CacheState, IndexOptions, RepoIndex};
use crate::index::Hit;
use crate::progress::NoProgress;
use std::path::Path;

const QUERIES: &[&str] = &[
    "parse the header value",
    "total price with discount",
    "render page template",
    "load config from path",
    "cart item",
];

fn write_repo(root: &Path, files: usize) {
    for i in 0..files {
        let text = format!(
            "def parse_header_{i}(value):\n    return value.split(':')[{i}]\n\n\n\
             def total_price_{i}(cart, discount):\n    return sum(cart) * (1 - discount) + {i}\n\n\n\
             class Page{i}:\n    def render(self, template):\n        return template.format(page={i})\n\n    \
             def load_config(self, path):\n        return open(path).read()\n"
        );
        std::fs::write(root.join(format!("mod_{i}.py")), text).unwrap();
    }
}

fn open(root: &Path, cache: &Path) -> RepoIndex {
    let opts = IndexOptions { cache_dir: Some(cache.to_path_buf()), ..IndexOptions::default() };
    RepoIndex::open(root, &opts, &NoProgress).unwrap()
}

/// Every query's top 50 as (path, ordinal within file, score): comparable across indexes.
fn rankings(idx: &RepoIndex) -> Vec<Vec<(String, u32, f32)>> {
    let named = |h: &Hit| {
        let c = &idx.chunks[h.chunk as usize];
        let f = idx.files.iter().find(|f| f.path == c.path).unwrap();
        (c.path.clone(), h.chunk - f.first, h.score)
    };
    QUERIES.iter().map(|q| idx.search_bm25(q, 50).unwrap().iter().map(named).collect()).collect()
}

fn largest_file(dir: &Path, suffix: &str) -> std::path::PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .max_by_key(|p| std::fs::metadata(p).unwrap().len())
        .unwrap_or_else(|| panic!("no {suffix} file in {}", dir.display()))
}

#[test]
fn damaged_segment_files_are_rebuilt_not_trusted() {
    let repo = tempfile::tempdir().unwrap();
    write_repo(repo.path(), 30);
    let cache = tempfile::tempdir().unwrap();
    let clean = rankings(&open(repo.path(), cache.path()));
    for suffix in [".fieldnorm", ".idx", ".term", ".store", "meta.json"] {
        let warm = open(repo.path(), cache.path());
        assert_eq!(warm.stats.cache, CacheState::Warm, "{suffix}");
        let bm25 = warm.cache_entry.clone().unwrap().join("bm25");
        drop(warm);
        let victim = largest_file(&bm25, suffix);
        let mut bytes = std::fs::read(&victim).unwrap();
        let (mid, len) = (bytes.len() / 2, bytes.len());
        for b in &mut bytes[mid..(mid + 8).min(len)] {
            *b ^= 0x5a;
        }
        std::fs::write(&victim, bytes).unwrap();
        let again = open(repo.path(), cache.path());
        assert_eq!(again.stats.cache, CacheState::Cold, "{suffix}: a damaged index is rebuilt");
        assert!(
            again.notes.iter().any(|n| n.contains("bm25") && n.contains("rebuilding")),
            "{:?}",
            again.notes
        );
        assert_eq!(rankings(&again), clean, "{suffix}: the rebuilt index ranks as the first build");
    }
    // A cache from before fingerprints existed is rebuilt once, without being called damaged.
    let entry = open(repo.path(), cache.path()).cache_entry.unwrap();
    std::fs::remove_file(entry.join("bm25.sums")).unwrap();
    let upgraded = open(repo.path(), cache.path());
    assert_eq!(upgraded.stats.cache, CacheState::Cold);
    assert!(upgraded.notes.iter().any(|n| n.contains("no fingerprints")), "{:?}", upgraded.notes);
    assert!(!upgraded.notes.iter().any(|n| n.contains("damaged")), "{:?}", upgraded.notes);
    assert_eq!(rankings(&upgraded), clean);
    let missing = open(repo.path(), cache.path()).cache_entry.unwrap().join("bm25");
    std::fs::remove_file(largest_file(&missing, ".idx")).unwrap();
    let again = open(repo.path(), cache.path());
    assert_eq!(again.stats.cache, CacheState::Cold, "a missing segment file means a rebuild");
    assert_eq!(rankings(&again), clean);
    assert_eq!(open(repo.path(), cache.path()).stats.cache, CacheState::Warm, "and the rebuild is kept");
}

#[test]
fn an_incremental_update_ranks_exactly_as_a_clean_build() {
    let repo = tempfile::tempdir().unwrap();
    write_repo(repo.path(), 40);
    let cache = tempfile::tempdir().unwrap();
    open(repo.path(), cache.path());
    // Two lines added to one function, one file deleted, one added.
    let edited = repo.path().join("mod_3.py");
    let text = std::fs::read_to_string(&edited).unwrap();
    let text = text.replacen(
        "    return value.split(':')[3]\n",
        "    value = value.strip()\n    header = value\n    return header.split(':')[3]\n",
        1,
    );
    std::fs::write(&edited, text).unwrap();
    std::fs::remove_file(repo.path().join("mod_7.py")).unwrap();
    std::fs::write(repo.path().join("extra.py"), "def discount_cart(cart):\n    return cart\n").unwrap();
    let updated = open(repo.path(), cache.path());
    assert_eq!(updated.stats.cache, CacheState::Updated);
    let fresh = tempfile::tempdir().unwrap();
    let clean = open(repo.path(), fresh.path());
    assert_eq!(clean.stats.cache, CacheState::Cold);
    assert_eq!(rankings(&updated), rankings(&clean));
    // And the warm run after the update still agrees.
    assert_eq!(rankings(&open(repo.path(), cache.path())), rankings(&clean));
}

/// Files whose chunks are long and of many lengths: their one-byte field norms are lossy, which is
/// what made tantivy's merged statistics drift from a clean build's.
fn write_long_repo(root: &Path, files: usize) {
    for i in 0..files {
        let body: String = (0..(5 + 7 * i))
            .map(|k| format!("    total_{k} = cart.price_{k} * discount + header_value_{}\n", (k * i) % 13))
            .collect();
        let text = format!(
            "def parse_header_{i}(value, cart, discount):\n{body}    return value\n\n\n\
             class Page{i}:\n    def render(self, template):\n{body}        return template\n"
        );
        std::fs::write(root.join(format!("mod_{i}.py")), text).unwrap();
    }
}

fn assert_same_rankings(a: &RepoIndex, b: &RepoIndex, what: &str) {
    for (q, (x, y)) in QUERIES.iter().zip(rankings(a).iter().zip(&rankings(b))) {
        let names = |r: &[(String, u32, f32)]| r.iter().map(|(p, o, _)| (p.clone(), *o)).collect::<Vec<_>>();
        assert_eq!(names(x), names(y), "{what}: `{q}` ranks other chunks");
        for ((_, _, s), (_, _, t)) in x.iter().zip(y) {
            assert!((s - t).abs() < 1e-3, "{what}: `{q}` scores {s} vs {t}");
        }
    }
}

#[test]
fn edits_deletes_and_renames_of_long_chunks_score_exactly_as_a_clean_build() {
    let repo = tempfile::tempdir().unwrap();
    write_long_repo(repo.path(), 24);
    let cache = tempfile::tempdir().unwrap();
    open(repo.path(), cache.path());
    let edited = repo.path().join("mod_5.py");
    let text =
        std::fs::read_to_string(&edited).unwrap().replace("return template", "return template.strip()");
    std::fs::write(&edited, &text).unwrap();
    assert!(std::fs::read_to_string(&edited).unwrap().contains("template.strip()"), "edit on disk");
    std::fs::remove_file(repo.path().join("mod_9.py")).unwrap();
    assert!(!repo.path().join("mod_9.py").exists());
    std::fs::rename(repo.path().join("mod_11.py"), repo.path().join("renamed.py")).unwrap();
    assert!(repo.path().join("renamed.py").exists());
    for round in 0..3 {
        // Successive edits must not accumulate an error either.
        let text = std::fs::read_to_string(&edited).unwrap()
            + &format!("\n\ndef extra_{round}(cart):\n    return cart\n");
        std::fs::write(&edited, text).unwrap();
        let updated = open(repo.path(), cache.path());
        assert_eq!(updated.stats.cache, CacheState::Updated);
        let fresh = tempfile::tempdir().unwrap();
        let clean = open(repo.path(), fresh.path());
        assert_same_rankings(&updated, &clean, &format!("round {round}"));
        assert_same_rankings(&open(repo.path(), cache.path()), &clean, &format!("warm, round {round}"));
    }
}

#[test]
fn an_edit_that_keeps_size_and_mtime_is_still_seen() {
    let repo = tempfile::tempdir().unwrap();
    let file = repo.path().join("files.py");
    std::fs::write(&file, "def send_file(path):\n    return path\n").unwrap();
    let cache = tempfile::tempdir().unwrap();
    let first = open(repo.path(), cache.path());
    assert_eq!(first.chunks[0].name, "send_file");
    let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
    // Same size, same mtime (as `touch -r`, `cp -p` or `rsync -t` leave it).
    std::fs::write(&file, "def zend_fyle(path):\n    return path\n").unwrap();
    std::fs::File::options().write(true).open(&file).unwrap().set_modified(mtime).unwrap();
    assert_eq!(std::fs::metadata(&file).unwrap().modified().unwrap(), mtime);
    let again = open(repo.path(), cache.path());
    assert_eq!(again.chunks[0].name, "zend_fyle", "the cache did not notice the edit");
    let hits = again.search_bm25("zend_fyle", 5).unwrap();
    assert_eq!(hits.first().map(|h| h.chunk), Some(0));
}

/// A parse cache written by a build with other parsing code (another chunker, row or grammar:
/// build.rs's `PARSE_CODE`) is re-parsed with one note, never served (issue 73).
#[test]
fn a_parse_cache_from_other_parsing_code_is_rebuilt() {
    let repo = tempfile::tempdir().unwrap();
    write_repo(repo.path(), 3);
    let cache = tempfile::tempdir().unwrap();
    let cold = open(repo.path(), cache.path());
    assert_eq!(cold.stats.parsed, 3);
    assert_eq!(open(repo.path(), cache.path()).stats.parsed, 0, "warm: nothing parsed again");
    let manifest = largest_file(cold.cache_entry.as_ref().unwrap(), super::MANIFEST_FILE);
    let mut bytes = std::fs::read(&manifest).unwrap();
    // The framing's version is the build's parse code: another build wrote this one.
    let other = super::MANIFEST_VERSION.wrapping_add(1).to_le_bytes();
    bytes[8..12].copy_from_slice(&other);
    std::fs::write(&manifest, bytes).unwrap();
    let reopened = open(repo.path(), cache.path());
    assert_eq!(reopened.stats.parsed, 3, "every file parsed again");
    let notes: Vec<&String> = reopened.notes.iter().filter(|n| n.contains("another build")).collect();
    assert_eq!(notes.len(), 1, "one line says why: {:?}", reopened.notes);
    assert_eq!(rankings(&reopened), rankings(&cold));
}

/// What build.rs hashes (`PARSE_CODE_PATHS`, written by it) exists and covers the chunker, the
/// rows and the grammars: a moved chunker cannot silently leave the hash.
#[test]
fn the_parse_code_hash_covers_the_chunker_and_the_rows() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for path in super::manifest::PARSE_CODE_PATHS {
        assert!(root.join(path).exists(), "{path} does not exist");
    }
    for needed in ["src/chunk", "src/lang", "Cargo.lock"] {
        assert!(super::manifest::PARSE_CODE_PATHS.contains(&needed), "{needed} decides chunks");
    }
}
