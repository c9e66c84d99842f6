use super::*;

fn parse(text: &str) -> PatchSet {
    parse_patch(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn set(items: &[usize]) -> BTreeSet<usize> {
    items.iter().copied().collect()
}

#[test]
fn modification_and_insertion_in_multiple_hunks() {
    let p = parse(
        "diff --git a/pkg/m.py b/pkg/m.py
index 1111111..2222222 100644
--- a/pkg/m.py
+++ b/pkg/m.py
@@ -3,4 +3,4 @@ def f():
     a = 1
-    b = 2
+    b = 3
     c = 4
     d = 5
@@ -20,2 +20,4 @@ class C:
     x = 1
+    y = 2
+    z = 3
     w = 4
",
    );
    assert_eq!(p.files.len(), 1);
    let f = &p.files[0];
    assert_eq!(f.old_path.as_deref(), Some("pkg/m.py"));
    assert_eq!(f.new_path.as_deref(), Some("pkg/m.py"));
    assert!(!f.is_new_file && !f.is_deleted && !f.is_rename());
    assert_eq!(f.removed_lines(), set(&[4]));
    assert_eq!(f.insertion_points(), set(&[20]), "inserted between old lines 20 and 21");
    assert_eq!(f.hunks[0].blocks[0].removed, [(4, "    b = 2".to_string())]);
    assert_eq!(f.hunks[0].blocks[0].added, ["    b = 3"]);
    assert_eq!(f.hunks[1].blocks[0].added, ["    y = 2", "    z = 3"]);
}

#[test]
fn omitted_counts_and_zero_length_ranges() {
    let p = parse(
        "--- a/x.py
+++ b/x.py
@@ -5 +5 @@
-old
+new
@@ -9,0 +10,2 @@
+one
+two
@@ -12,2 +13,0 @@
-gone1
-gone2
",
    );
    let f = &p.files[0];
    assert_eq!(f.removed_lines(), set(&[5, 12, 13]));
    assert_eq!(f.insertion_points(), set(&[9]), "`-9,0` inserts after line 9");
}

#[test]
fn new_deleted_and_renamed_files() {
    let p = parse(
        "diff --git a/new.py b/new.py
new file mode 100644
index 0000000..1111111
--- /dev/null
+++ b/new.py
@@ -0,0 +1,2 @@
+def f():
+    pass
diff --git a/old.py b/old.py
deleted file mode 100644
index 1111111..0000000
--- a/old.py
+++ /dev/null
@@ -1,2 +0,0 @@
-x = 1
-y = 2
diff --git a/src/a b.py b/src/c.py
similarity index 90%
rename from src/a b.py
rename to src/c.py
index 1111111..2222222 100644
--- a/src/a b.py
+++ b/src/c.py
@@ -1,2 +1,2 @@
-x = 1
+x = 2
 y = 2
diff --git a/moved.py b/there/moved.py
similarity index 100%
rename from moved.py
rename to there/moved.py
",
    );
    let [new, deleted, renamed, pure_rename] = &p.files[..] else {
        panic!("expected 4 files, got {:?}", p.files);
    };
    assert!(new.is_new_file && new.old_path.is_none());
    assert_eq!(new.path(), "new.py");
    assert_eq!(new.insertion_points(), set(&[0]));
    assert!(new.removed_lines().is_empty());

    assert!(deleted.is_deleted && deleted.new_path.is_none());
    assert_eq!(deleted.path(), "old.py");
    assert_eq!(deleted.removed_lines(), set(&[1, 2]));

    assert!(renamed.is_rename());
    assert_eq!(renamed.old_path.as_deref(), Some("src/a b.py"));
    assert_eq!(renamed.new_path.as_deref(), Some("src/c.py"));
    assert_eq!(renamed.removed_lines(), set(&[1]));

    assert!(pure_rename.is_rename() && pure_rename.hunks.is_empty());
    assert_eq!(pure_rename.old_path.as_deref(), Some("moved.py"));
    assert_eq!(pure_rename.new_path.as_deref(), Some("there/moved.py"));
}

#[test]
fn no_newline_markers_and_dash_lines_inside_hunks() {
    // The removed line "-- x" reads "--- x" in the patch; the counts say it is a body line.
    let p = parse(
        "diff --git a/a.py b/a.py
--- a/a.py
+++ b/a.py
@@ -1,3 +1,2 @@
 a
--- x
-+++ y
+b
\\ No newline at end of file
diff --git a/b.py b/b.py
--- a/b.py
+++ b/b.py
@@ -7 +7,2 @@
-last
\\ No newline at end of file
+last
+more
\\ No newline at end of file
",
    );
    assert_eq!(p.files.len(), 2);
    assert_eq!(p.files[0].removed_lines(), set(&[2, 3]));
    assert_eq!(p.files[0].hunks[0].blocks[0].removed[0].1, "-- x");
    assert_eq!(p.files[1].removed_lines(), set(&[7]));
    assert_eq!(p.files[1].hunks[0].blocks[0].added, ["last", "more"]);
}

#[test]
fn quoted_paths_binary_files_and_commit_message_noise() {
    let p = parse(
        "From 123 Mon Sep 17 00:00:00 2001
Subject: [PATCH] fix

--- some text in the message
diff --git \"a/caf\\303\\251.py\" \"b/caf\\303\\251.py\"
--- \"a/caf\\303\\251.py\"
+++ \"b/caf\\303\\251.py\"
@@ -1 +1 @@
-a
+b
diff --git a/logo.png b/logo.png
index 1111111..2222222 100644
Binary files a/logo.png and b/logo.png differ
-- 
2.40.0
",
    );
    assert_eq!(p.files.len(), 2);
    assert_eq!(p.files[0].path(), "café.py");
    assert_eq!(p.files[0].removed_lines(), set(&[1]));
    assert!(p.files[1].is_binary && p.files[1].hunks.is_empty());
    assert_eq!(p.files[1].path(), "logo.png");
}

#[test]
fn stripped_blank_context_lines_count_as_context() {
    let p = parse("--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n a\n\n-c\n+d\n");
    assert_eq!(p.files[0].removed_lines(), set(&[3]));
}

#[test]
fn malformed_hunks_are_errors_with_line_numbers() {
    let short = parse_patch("--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n a\n-b\n+c\n").unwrap_err();
    assert_eq!(short.line, 3);
    assert!(short.message.contains("ends early"), "{short}");

    let bad = parse_patch("--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n a\n?b\n").unwrap_err();
    assert_eq!(bad.line, 5);

    let orphan = parse_patch("@@ -1 +1 @@\n-a\n+b\n").unwrap_err();
    assert!(orphan.message.contains("before any file"), "{orphan}");

    let header = parse_patch("--- a/x.py\n+++ b/x.py\n@@ -x +1 @@\n").unwrap_err();
    assert!(header.to_string().starts_with("patch line 3: bad hunk header"));
}

/// Every patch of the data sets parses, and every hunk lands somewhere.
#[test]
fn parses_all_patches_of_the_data_sets_when_present() {
    use crate::eval::instances::read_instances;
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/data");
    let mut checked = 0;
    for name in ["swebench-lite-dev.jsonl", "swebench-lite-devsplit.jsonl", "train-prs.jsonl.gz"] {
        let path = std::path::Path::new(dir).join(name);
        if !path.exists() {
            eprintln!("skipped: {} absent", path.display());
            continue;
        }
        let (instances, _) = read_instances(&path).unwrap();
        let mut failures = Vec::new();
        for inst in &instances {
            match parse_patch(&inst.patch) {
                Err(e) => failures.push(format!("{}: {e}", inst.instance_id)),
                Ok(p) if p.files.is_empty() => failures.push(format!("{}: no files", inst.instance_id)),
                Ok(p) => {
                    let headers = inst.patch.lines().filter(|l| l.starts_with("diff --git ")).count();
                    if headers != p.files.len() {
                        failures.push(format!(
                            "{}: {headers} headers, {} files",
                            inst.instance_id,
                            p.files.len()
                        ));
                    }
                    let hunks = inst.patch.lines().filter(|l| l.starts_with("@@ -")).count();
                    if hunks > 0 && p.files.iter().all(|f| f.blocks().next().is_none()) {
                        failures.push(format!("{}: hunks but no changes", inst.instance_id));
                    }
                }
            }
            checked += 1;
        }
        assert!(
            failures.is_empty(),
            "{name}: {} failures, first: {:?}",
            failures.len(),
            &failures[..failures.len().min(5)]
        );
    }
    eprintln!("parsed {checked} patches");
}

/// Every hunk of the dev patches applies to its file at `base_commit` once relocated, and the
/// lines it then removes are the lines of the base file. Runs on the mirrors that are present.
#[test]
fn dev_patches_relocate_onto_base_snapshots_when_mirrors_present() {
    use crate::eval::instances::read_instances;
    use crate::repo::git::{find_repo, read_file_at};
    let root = env!("CARGO_MANIFEST_DIR");
    let data = std::path::Path::new(root).join("../shared/data/swebench-lite-dev.jsonl");
    let repos = std::env::var("CORET_TEST_REPOS").unwrap_or_else(|_| format!("{root}/../.mirror"));
    let Ok((instances, _)) = read_instances(&data) else {
        eprintln!("skipped: {} absent", data.display());
        return;
    };
    let (mut hunks, mut moved, mut lines_checked, mut max_shift) = (0, 0, 0, 0);
    let mut moved_instances = std::collections::BTreeSet::new();
    for inst in &instances {
        let Ok(git_dir) = find_repo(std::path::Path::new(&repos), &inst.repo) else {
            continue;
        };
        let patch = parse_patch(&inst.patch).unwrap();
        for file in patch.files.iter().filter(|f| !f.is_new_file) {
            let id = &inst.instance_id;
            let bytes = read_file_at(&git_dir, &inst.base_commit, file.path()).unwrap();
            let text =
                String::from_utf8(bytes.unwrap_or_else(|| panic!("{id}: no {}", file.path()))).unwrap();
            let relocated = file.relocate(&text).unwrap_or_else(|e| panic!("{id}: {e}"));
            let lines: Vec<&str> = text.lines().collect();
            for (before, after) in file.hunks.iter().zip(&relocated.hunks) {
                hunks += 1;
                if before.old_start != after.old_start {
                    moved += 1;
                    moved_instances.insert(id.clone());
                    max_shift = max_shift.max(before.old_start.abs_diff(after.old_start));
                }
            }
            for block in relocated.blocks() {
                for (n, removed) in &block.removed {
                    assert_eq!(lines.get(n - 1), Some(&removed.as_str()), "{id} line {n}");
                    lines_checked += 1;
                }
                assert!(block.after_old_line <= lines.len(), "{id}");
            }
        }
    }
    eprintln!(
        "{hunks} hunks relocated ({moved} moved, by up to {max_shift} lines, in {} instances), \
         {lines_checked} removed lines checked",
        moved_instances.len()
    );
}

#[test]
fn relocation_follows_the_context_like_git_apply() {
    let old: String = (1..=30).map(|n| format!("line {n}\n")).collect();
    let old = old.replace("line 20\n", "line 20  \n");
    let p = parse(
        "--- a/x\n+++ b/x
@@ -2,3 +2,3 @@\n line 5\n-line 6\n+six\n line 7
@@ -10,0 +11 @@\n+new
@@ -12,2 +13,2 @@\n-line 20\n+twenty\n line 21
",
    );
    let moved = p.files[0].relocate(&old).unwrap();
    assert_eq!(moved.removed_lines(), set(&[6, 20]), "trailing whitespace still matches");
    // The context-free insertion follows the previous hunk's offset (+3).
    assert_eq!(moved.insertion_points(), set(&[13]));
    assert_eq!(moved.hunks[0].old_start, 5);

    let missing = parse("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-line 99\n+x\n");
    let err = missing.files[0].relocate(&old).unwrap_err();
    assert!(err.contains("@@ -1,1"), "{err}");

    // Hunks keep their order: the second cannot match before the first.
    let twice = parse("--- a/x\n+++ b/x\n@@ -9 +9 @@\n-line 9\n+a\n@@ -2 +2 @@\n-line 2\n+b\n");
    assert!(twice.files[0].relocate(&old).is_err());
}

#[test]
fn relocation_prefers_the_nearest_match() {
    let old = "x\ny\nx\ny\nx\ny\n";
    let p = parse("--- a/f\n+++ b/f\n@@ -4,2 +4,1 @@\n x\n-y\n");
    // Matches at lines 1, 3 and 5; the header says 4. Lines 3 and 5 are equally near:
    // like `git apply`, the later one is tried first.
    assert_eq!(p.files[0].relocate(old).unwrap().hunks[0].old_start, 5);
    let exact = parse("--- a/f\n+++ b/f\n@@ -5,2 +5,1 @@\n x\n-y\n");
    assert_eq!(exact.files[0].relocate(old).unwrap().removed_lines(), set(&[6]));
}
