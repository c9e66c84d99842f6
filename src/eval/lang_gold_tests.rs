//! Eval's gold in every language: a repository of the language fixtures
//! (`tests/fixtures/lang/`), two fixes per language as real git patches, each mapped to the
//! chunks a developer edited.

use super::instances::Instance;
use super::snapshot::{index_instance, RepoSnapshots, SnapshotOptions};
use crate::repo::source::DEFAULT_MAX_FILE_SIZE;
use crate::testkit::git;

/// (fixture file, old text, new text, the gold chunks' names).
const FIXES: &[(&str, &str, &str, &[&str])] = &[
    ("shapes.rs", "    x.max(0.0)\n", "    x.max(0.0).min(1e9)\n", &["clamp"]),
    ("shapes.rs", "use std::fmt;\n", "use std::fmt;\nuse std::cmp;\n", &["<module>"]),
    ("server.go", "\treturn 8080\n", "\treturn 9090\n", &["defaultPort"]),
    ("server.go", "\ts.log(\"serving\")\n", "\ts.log(\"serving \" + s.name)\n", &["Server.Serve"]),
    ("cart.js", "    return sum(this.items);\n", "    return sum(this.items || []);\n", &["Cart.subtotal"]),
    (
        "cart.js",
        "  return emptyCart().total() + body.length;\n",
        "  return emptyCart().total();\n",
        &["exports.send"],
    ),
    ("store.ts", "  return id.trim().toLowerCase();\n", "  return id.trim();\n", &["normalize"]),
    (
        "store.ts",
        "    this.items.set(normalize(item.id), item);\n",
        "    this.items.set(item.id, item);\n",
        &["MemoryStore.put"],
    ),
    (
        "Parser.java",
        "        return tokens.get(i);\n",
        "        return i < tokens.size() ? tokens.get(i) : null;\n",
        &["Parser.peek"],
    ),
    ("Parser.java", "        int kind;\n", "        int kind = 0;\n", &["Parser.Token"]),
    ("zbuf.c", "    return ZBUF_MIN(n, 4096);\n", "    return ZBUF_MIN(n, 8192);\n", &["zbuf_cap"]),
    (
        "zbuf.c",
        "    b->size = zbuf_cap(n);\n",
        "    b->size = zbuf_cap(n);\n    b->data = NULL;\n",
        &["zbuf_new"],
    ),
    ("format.h", "  reserve(n);\n", "  reserve(n * 2);\n", &["buffer.grow"]),
    ("format.h", "  size_t size_;\n", "  size_t size_ = 0;\n", &["buffer"]),
];

#[test]
fn each_languages_fixes_map_to_the_chunks_they_edit() {
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("acme+langs");
    std::fs::create_dir_all(work.join("src")).unwrap();
    git(&work, &["init", "-q"]);
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lang");
    for (file, ..) in FIXES {
        std::fs::copy(fixtures.join(file), work.join("src").join(file)).unwrap();
    }
    git(&work, &["add", "."]);
    git(&work, &["commit", "-q", "-m", "base"]);
    let base = git(&work, &["rev-parse", "HEAD"]).trim().to_string();
    let opts = SnapshotOptions {
        max_file_size: DEFAULT_MAX_FILE_SIZE,
        exclude_tests: false,
        link_calls: false,
        keep_generated: false,
    };
    let mut snapshots = RepoSnapshots::default();
    for (i, (file, old, new, want)) in FIXES.iter().enumerate() {
        let path = work.join("src").join(file);
        let before = std::fs::read_to_string(&path).unwrap();
        assert!(before.contains(old), "{file}: {old:?}");
        std::fs::write(&path, before.replacen(old, new, 1)).unwrap();
        let patch = git(&work, &["diff"]);
        std::fs::write(&path, &before).unwrap();
        let inst = Instance {
            instance_id: format!("langs-{i}"),
            repo: "acme/langs".into(),
            base_commit: base.clone(),
            problem_statement: "fix".into(),
            patch,
            hints_text: None,
            created_at: None,
            language: None,
        };
        let snap = index_instance(&inst, &work.join(".git"), opts, &mut snapshots).unwrap();
        let names: Vec<&str> = snap
            .gold
            .chunks
            .iter()
            .map(|g| snap.index.file_chunks(&g.path).unwrap()[g.index].name.as_str())
            .collect();
        assert_eq!(names, *want, "{file}: {old:?} → {new:?}");
        assert_eq!(snap.gold.files, [format!("src/{file}")]);
    }
}
