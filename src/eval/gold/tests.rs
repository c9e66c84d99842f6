use super::*;
use crate::eval::patch::parse_patch;

/// Lines of the base file; the chunks below are what a CoRet chunker makes of it.
const SOURCE: &str = "import os

X = 1


@decorator
def f(a):
    \"\"\"Doc.\"\"\"
    return a


class C:
    \"\"\"Class doc.\"\"\"

    def __init__(self):
        self.x = 1

    @property
    def m(self):
        return self.x


def g():
    return 2
";

const MODULE: usize = 0;
const F: usize = 1;
const CLASS: usize = 2;
const INIT: usize = 3;
const M: usize = 4;
const G: usize = 5;

fn chunk(kind: ChunkKind, name: &str, start_line: usize, end_line: usize) -> Chunk {
    Chunk {
        path: "pkg/mod.py".into(),
        kind,
        name: name.into(),
        start_byte: 0,
        end_byte: 0,
        start_line,
        end_line,
        text: String::new(),
        test: false,
        form: Default::default(),
    }
}

fn chunks() -> Vec<Chunk> {
    vec![
        chunk(ChunkKind::Module, "<module>", 1, 24),
        chunk(ChunkKind::Function, "f", 6, 9),
        chunk(ChunkKind::Class, "C", 12, 20),
        chunk(ChunkKind::Method, "C.__init__", 15, 16),
        chunk(ChunkKind::Method, "C.m", 18, 20),
        chunk(ChunkKind::Function, "g", 23, 24),
    ]
}

/// A one-file patch of `pkg/mod.py` with the given hunks.
fn patch(hunks: &str) -> PatchSet {
    let text = format!("diff --git a/pkg/mod.py b/pkg/mod.py\n--- a/pkg/mod.py\n+++ b/pkg/mod.py\n{hunks}");
    parse_patch(&text).unwrap()
}

fn gold_with(patch: &PatchSet, chunks: &[Chunk], source: &str) -> Gold {
    gold_chunks(patch, |path| (path == "pkg/mod.py").then_some(FileChunks { chunks, source }))
}

/// Gold chunk indices of `pkg/mod.py` for `hunks`, with the source known.
fn gold_of(hunks: &str) -> Vec<usize> {
    let g = gold_with(&patch(hunks), &chunks(), SOURCE);
    assert!(g.chunks.iter().all(|c| c.path == "pkg/mod.py"));
    g.chunks.iter().map(|c| c.index).collect()
}

#[test]
fn modified_line_belongs_to_innermost_definition() {
    assert_eq!(gold_of("@@ -9 +9 @@\n-    return a\n+    return a + 1\n"), [F]);
    assert_eq!(gold_of("@@ -16 +16 @@\n-        self.x = 1\n+        self.x = 2\n"), [INIT]);
    // Two methods and the function in one patch: each is gold once, the class is not.
    assert_eq!(
        gold_of("@@ -8,2 +8,2 @@\n-    \"\"\"Doc.\"\"\"\n-    return a\n+    \"\"\"D.\"\"\"\n+    return 0\n@@ -16 +16 @@\n-        self.x = 1\n+        self.x = 3\n@@ -20 +20 @@\n-        return self.x\n+        return 0\n"),
        [F, INIT, M]
    );
}

#[test]
fn decorator_and_docstring_edits_belong_to_their_definition() {
    assert_eq!(gold_of("@@ -6 +6 @@\n-@decorator\n+@other\n"), [F]);
    assert_eq!(gold_of("@@ -8 +8 @@\n-    \"\"\"Doc.\"\"\"\n+    \"\"\"Better doc.\"\"\"\n"), [F]);
    assert_eq!(gold_of("@@ -18 +18 @@\n-    @property\n+    @cached_property\n"), [M]);
    assert_eq!(gold_of("@@ -13 +13 @@\n-    \"\"\"Class doc.\"\"\"\n+    \"\"\"Doc.\"\"\"\n"), [CLASS]);
}

#[test]
fn module_level_edits_go_to_the_module_chunk() {
    assert_eq!(gold_of("@@ -3 +3 @@\n-X = 1\n+X = 2\n"), [MODULE]);
    assert_eq!(gold_of("@@ -1 +1,2 @@\n-import os\n+import os\n+import re\n"), [MODULE]);
    // Without a module chunk the change is reported as unplaced, not silently lost.
    let no_module: Vec<Chunk> = chunks().into_iter().skip(1).collect();
    let g = gold_with(&patch("@@ -3 +3 @@\n-X = 1\n+X = 2\n"), &no_module, SOURCE);
    assert!(g.chunks.is_empty());
    assert_eq!(g.unplaced, [("pkg/mod.py".to_string(), 3)]);
    assert_eq!(g.files, ["pkg/mod.py"], "the file is still edited");
}

#[test]
fn deletions_count_their_lines_but_not_blank_ones() {
    // Deleting __init__ and the blank line after it: the method only.
    assert_eq!(gold_of("@@ -14,4 +14 @@\n \n-    def __init__(self):\n-        self.x = 1\n-\n"), [INIT]);
    // Deleting the blank lines between two functions changes no code.
    assert_eq!(gold_of("@@ -9,3 +9,2 @@\n     return a\n-\n \n"), Vec::<usize>::new());
    // Deleting the whole file: every chunk (each code line goes to its innermost chunk).
    let all_removed: String = SOURCE.lines().map(|l| format!("-{l}\n")).collect();
    let text = format!(
        "diff --git a/pkg/mod.py b/pkg/mod.py\ndeleted file mode 100644\n--- a/pkg/mod.py\n+++ /dev/null\n@@ -1,24 +0,0 @@\n{all_removed}"
    );
    let g = gold_with(&parse_patch(&text).unwrap(), &chunks(), SOURCE);
    let got: Vec<usize> = g.chunks.iter().map(|c| c.index).collect();
    assert_eq!(got, [MODULE, F, CLASS, INIT, M, G]);
}

#[test]
fn insertion_inside_a_body_belongs_to_it() {
    // Between the docstring and return of f.
    assert_eq!(gold_of("@@ -8,0 +9 @@\n+    a = a or 0\n"), [F]);
    // Appended after the last statement of __init__, before a blank line still in class C.
    assert_eq!(gold_of("@@ -16,0 +17 @@\n+        self.y = 2\n"), [INIT]);
    // Appended at the very end of the file, inside g.
    assert_eq!(gold_of("@@ -24,0 +25 @@\n+    return 3\n"), [G]);
}

#[test]
fn new_method_belongs_to_its_class() {
    // Between two methods, inserted after the blank line.
    assert_eq!(gold_of("@@ -17,0 +18,3 @@\n+    def n(self):\n+        pass\n+\n"), [CLASS]);
    // Between two methods, inserted right after the last line of __init__.
    assert_eq!(gold_of("@@ -16,0 +17,3 @@\n+\n+    def n(self):\n+        pass\n"), [CLASS]);
    // At the end of the class, after the blank lines that follow it: still the class,
    // not its last method and not the module.
    assert_eq!(gold_of("@@ -21,0 +22,3 @@\n+    def n(self):\n+        pass\n+\n"), [CLASS]);
    assert_eq!(gold_of("@@ -20,0 +21,3 @@\n+\n+    def n(self):\n+        pass\n"), [CLASS]);
}

#[test]
fn new_top_level_function_belongs_to_the_module() {
    // At the end of the file and between f and class C.
    assert_eq!(gold_of("@@ -24,0 +25,4 @@\n+\n+\n+def h():\n+    pass\n"), [MODULE]);
    assert_eq!(gold_of("@@ -10,0 +11,4 @@\n+\n+def h():\n+    pass\n+\n"), [MODULE]);
    // A leading comment does not decide the indentation; the code line does.
    assert_eq!(gold_of("@@ -24,0 +25,3 @@\n+        # note\n+def h():\n+    pass\n"), [MODULE]);
}

#[test]
fn inserted_decorator_belongs_to_the_definition_below() {
    assert_eq!(gold_of("@@ -22,0 +23 @@\n+@cache\n"), [G]);
    assert_eq!(gold_of("@@ -17,0 +18 @@\n+    @staticmethod\n"), [M]);
}

#[test]
fn replacing_blank_lines_with_code_is_an_insertion() {
    assert_eq!(gold_of("@@ -21 +21,2 @@\n-\n+    def n(self):\n+        pass\n"), [CLASS]);
    // Whitespace-only blocks change nothing.
    assert_eq!(gold_of("@@ -10,0 +11 @@\n+\n"), Vec::<usize>::new());
}

#[test]
fn stale_hunk_headers_are_relocated_by_their_context() {
    // The header says line 3, but `return a` (with its context) is at line 9.
    assert_eq!(gold_of("@@ -2,2 +2,2 @@\n     \"\"\"Doc.\"\"\"\n-    return a\n+    return 0\n"), [F]);
    // A hunk whose context is nowhere in the file: the file is skipped and says why.
    let g = gold_with(&patch("@@ -9 +9 @@\n-    return b\n+    return 0\n"), &chunks(), SOURCE);
    assert!(g.chunks.is_empty() && g.files.is_empty());
    assert_eq!(g.skipped[0].reason, SkipReason::PatchMismatch);
    assert!(g.skipped[0].detail.as_deref().unwrap_or_default().contains("@@ -9,1"));
}

#[test]
fn new_renamed_and_unindexed_files() {
    let text = "diff --git a/pkg/new.py b/pkg/new.py
new file mode 100644
--- /dev/null
+++ b/pkg/new.py
@@ -0,0 +1 @@
+x = 1
diff --git a/docs/index.rst b/docs/index.rst
--- a/docs/index.rst
+++ b/docs/index.rst
@@ -1 +1 @@
-old
+new
diff --git a/pkg/mod.py b/pkg/renamed.py
similarity index 90%
rename from pkg/mod.py
rename to pkg/renamed.py
--- a/pkg/mod.py
+++ b/pkg/renamed.py
@@ -24 +24 @@
-    return 2
+    return 3
diff --git a/pkg/empty.py b/pkg/empty2.py
similarity index 100%
rename from pkg/empty.py
rename to pkg/empty2.py
";
    let g = gold_with(&parse_patch(text).unwrap(), &chunks(), SOURCE);
    assert_eq!(g.chunks, [GoldChunk { path: "pkg/mod.py".into(), index: G }]);
    assert_eq!(g.files, ["pkg/mod.py"], "gold files are pre-image paths of indexed files");
    let skipped: Vec<(&str, SkipReason)> = g.skipped.iter().map(|s| (s.path.as_str(), s.reason)).collect();
    assert_eq!(
        skipped,
        [
            ("pkg/new.py", SkipReason::NewFile),
            ("docs/index.rst", SkipReason::NotIndexed),
            ("pkg/empty.py", SkipReason::NoLineChanges),
        ]
    );
}

#[test]
fn indexed_file_without_chunks_is_skipped() {
    let p = patch("@@ -1 +1 @@\n-a\n+b\n");
    let g = gold_with(&p, &[], "a\n");
    assert!(g.chunks.is_empty() && g.files.is_empty());
    assert_eq!(g.skipped[0].reason, SkipReason::NoChunks);
}

#[test]
fn tabs_indent_to_multiples_of_eight() {
    assert_eq!(indentation("\tx"), 8);
    assert_eq!(indentation("  \tx"), 8);
    assert_eq!(indentation("    x"), 4);
    assert_eq!(indentation("x"), 0);
}
