use super::*;
use crate::eval::snapshot::{index_instance, RepoSnapshots, SnapshotOptions};
use std::fs;
use std::process::Command;

/// A work tree whose commits get increasing dates (so history order is certain).
struct Repo {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    clock: std::cell::Cell<u32>,
}

impl Repo {
    fn new() -> Repo {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("widgets");
        fs::create_dir_all(&dir).unwrap();
        let repo = Repo { _tmp: tmp, dir, clock: 0.into() };
        repo.git(&["init", "-q", "-b", "main"]);
        repo
    }

    fn git(&self, args: &[&str]) -> String {
        let t = self.clock.get() + 1;
        self.clock.set(t);
        let date = format!("2024-01-01T00:{:02}:{:02}+0000", t / 60, t % 60);
        let out = Command::new("git")
            .current_dir(&self.dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"])
            .args(args)
            .env("GIT_AUTHOR_DATE", &date)
            .env("GIT_COMMITTER_DATE", &date)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    fn write(&self, path: &str, text: &str) {
        let p = self.dir.join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }

    fn edit(&self, path: &str, from: &str, to: &str) {
        let p = self.dir.join(path);
        let text = fs::read_to_string(&p).unwrap();
        assert!(text.contains(from), "{path} lacks {from:?}");
        fs::write(p, text.replacen(from, to, 1)).unwrap();
    }

    /// Commits everything with `message`; the new commit's hash.
    fn commit(&self, message: &str) -> String {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", message]);
        self.git(&["rev-parse", "HEAD"])
    }
}

const CORE: &str = "def add(a, b):\n    return a + b\n\n\ndef scale(x, k):\n    return x * int(k)\n\n\n\
class Store:\n    def get(self, key):\n        return self.data[key]\n\n    def put(self, key, value):\n        \
self.data[key] = value\n";

const FIX_ADD: &str = "Fix add() dropping the carry when both numbers are negative (#12)

add() returned the wrong sign when both arguments were negative, so
totals computed by Store went wrong. Fixes #11, closes acme/widgets#7.
See https://github.com/acme/widgets/issues/11.

<!-- Thanks for the PR! Describe the change below. -->
## Checklist
- [x] tests added
- [ ] docs updated

Signed-off-by: A Dev <a@dev.org>
Co-authored-by: B Dev <b@dev.org>";

const FIX_ADD_CLEAN: &str = "Fix add() dropping the carry when both numbers are negative

add() returned the wrong sign when both arguments were negative, so
totals computed by Store went wrong.";

const SCALE: &str = "Make scale() accept a float factor

scale() truncated the factor to an int before multiplying, which made
fractional scaling silently return zero for factors below one.";

const PUT: &str = "Store.put keeps the previous value for history lookups

put() overwrote the stored value without remembering the old one; a new
previous() method returns it.";

/// A history with one commit of each kind the miner keeps or skips; the three it keeps.
fn history(repo: &Repo) -> [String; 3] {
    let many: String = (0..10).map(|i| format!("def f{i}(x):\n    return x + {i}\n\n\n")).collect();
    repo.write("pkg/core.py", CORE);
    repo.write("pkg/many.py", &many);
    repo.write("tests/test_core.py", "def test_add():\n    assert add(1, 2) == 3\n");
    repo.write("README.md", "# widgets\n");
    repo.commit("Initial import of the widgets package with its core helpers and a first test");

    repo.edit("pkg/core.py", "return a + b", "return int(a) + int(b)");
    let fix_add = repo.commit(FIX_ADD);

    repo.edit("tests/test_core.py", "== 3", "== 3\n    assert add(-1, -2) == -3");
    repo.commit(
        "Test add() with two negative numbers, the case the previous fix was about, so it stays fixed",
    );

    repo.git(&["revert", "--no-edit", &fix_add]);

    repo.git(&["checkout", "-q", "-b", "side"]);
    repo.edit("pkg/core.py", "x * int(k)", "x * float(k)");
    let scale = repo.commit(SCALE);
    repo.git(&["checkout", "-q", "main"]);
    repo.git(&["cherry-pick", "-x", &scale]);
    repo.git(&["merge", "-q", "--no-ff", "side", "-m", "Merge branch 'side' into main"]);

    repo.edit("pkg/core.py", "return self.data[key]", "return self.data.get(key)");
    repo.commit("tweak get");

    repo.edit("pkg/core.py", "self.data[key] = value", "self.data[key] = value  # plain");
    repo.commit(
        "FIX add()   dropping the carry when both numbers are NEGATIVE\n\nadd() returned the wrong sign when both \
         arguments were negative, so totals computed by Store went wrong.",
    );

    for i in 0..10 {
        repo.edit("pkg/many.py", &format!("return x + {i}\n"), &format!("return x - {i}\n"));
    }
    repo.commit("Subtract instead of adding in every helper of many.py, as the numbering scheme of the upstream project changed");

    repo.write("README.md", "# widgets\n\nSmall helpers.\n");
    repo.commit("Describe the package in the README so that new users know what the helpers are for and why");

    repo.edit("pkg/core.py", "return self.data.get(key)", "return self.data.get(key, None)");
    repo.commit(&format!("[Backport 1.x] {SCALE}"));

    repo.edit(
        "pkg/core.py",
        "self.data[key] = value  # plain",
        "self.old = self.data.get(key)\n        self.data[key] = value",
    );
    repo.write(
        "pkg/core.py",
        &(fs::read_to_string(repo.dir.join("pkg/core.py")).unwrap()
            + "\n    def previous(self):\n        return self.old\n"),
    );
    repo.edit("tests/test_core.py", "def test_add", "def test_put():\n    pass\n\n\ndef test_add");
    let put = repo.commit(PUT);
    [fix_add, scale, put]
}

#[test]
fn mines_a_history_keeping_issue_like_commits_and_their_eval_gold() {
    let repo = Repo::new();
    let [fix_add, scale, put] = history(&repo);
    let (mined, report) = mine(&repo.dir, "acme/widgets", &MineOptions::default()).unwrap();

    let ids: Vec<&str> = mined.iter().map(|m| m.instance.base_commit.as_str()).collect();
    let parent = |c: &str| repo.git(&["rev-parse", &format!("{c}^")]);
    assert_eq!(ids, [parent(&fix_add), parent(&scale), parent(&put)], "oldest first");
    let first = &mined[0].instance;
    assert_eq!(first.problem_statement, FIX_ADD_CLEAN, "trailers, references and the template go");
    assert_eq!(first.instance_id, format!("acme__widgets-{}", &fix_add[..12]));
    assert_eq!(first.repo, "acme/widgets");
    assert_eq!(first.created_at.as_deref(), Some("2024-01-01"));
    assert!(first.patch.starts_with("diff --git a/pkg/core.py b/pkg/core.py\n"), "{}", first.patch);
    assert_eq!(mined[1].instance.problem_statement, SCALE);
    assert!(!mined[2].instance.patch.contains("tests/"), "tests are not part of the patch");

    let names: Vec<Vec<&str>> =
        mined.iter().map(|m| m.gold_names.iter().map(String::as_str).collect()).collect();
    assert_eq!(names[0], ["pkg/core.py::add"]);
    assert_eq!(names[1], ["pkg/core.py::scale"]);
    assert!(names[2].contains(&"pkg/core.py::Store.put"), "{names:?}");
    // The gold is the eval's, at the base commit, for each instance.
    let git_dir = repo.dir.join(".git");
    let opts = SnapshotOptions {
        max_file_size: DEFAULT_MAX_FILE_SIZE,
        exclude_tests: false,
        link_calls: false,
        keep_generated: false,
    };
    for m in &mined {
        let snap = index_instance(&m.instance, &git_dir, opts, &mut RepoSnapshots::default()).unwrap();
        assert_eq!(snap.gold, m.gold, "{}", m.instance.instance_id);
    }

    let count = |s: Skip| report.skipped.get(&s).copied().unwrap_or(0);
    for s in [
        Skip::Root,
        Skip::TestsOnly,
        Skip::Revert,
        Skip::CherryPick,
        Skip::Merge,
        Skip::ShortMessage,
        Skip::SameMessage,
        Skip::TooManyGold,
        Skip::NoSource,
        Skip::Backport,
    ] {
        assert_eq!(count(s), 1, "{} in {:?}", s.name(), report.skipped);
    }
    assert_eq!(report.seen, 13);
    assert_eq!(report.kept, 3);
    assert_eq!(report.seen, report.kept + report.skipped.values().sum::<usize>());
    assert_eq!(report.message_chars.len(), 3);
    assert!(report.message_quantile(0.5).unwrap() >= 100);

    let newest = MineOptions { max_commits: Some(2), ..MineOptions::default() };
    let (mined, report) = mine(&repo.dir, "acme/widgets", &newest).unwrap();
    // Without the original in sight, the backport is the only copy: kept.
    assert_eq!((report.seen, mined.len()), (2, 2));
    let since = MineOptions { since: Some(scale.clone()), ..MineOptions::default() };
    let (mined, report) = mine(&repo.dir, "acme/widgets", &since).unwrap();
    assert_eq!(report.seen, 8, "only the commits after --since");
    assert!(mined
        .iter()
        .all(|m| m.instance.base_commit != parent(&fix_add) && m.instance.base_commit != parent(&scale)));
    let bare = repo._tmp.path().join("bare.git");
    repo.git(&["clone", "-q", "--bare", ".", bare.to_str().unwrap()]);
    assert_eq!(mine(&bare, "acme/widgets", &MineOptions::default()).unwrap().0.len(), 3, "a bare clone");
}

#[test]
fn a_bad_path_and_a_history_without_python_are_one_line_errors_naming_them() {
    let repo = Repo::new();
    let missing = repo.dir.join("nope");
    let err = mine(&missing, "acme/widgets", &MineOptions::default()).unwrap_err();
    assert!(matches!(err, Error::Root { .. }));
    let text = err.to_string();
    assert!(text.contains(&missing.display().to_string()) && !text.contains('\n'), "{text}");

    let err = mine(&repo.dir, "acme/widgets", &MineOptions::default()).unwrap_err();
    assert!(matches!(err, Error::NoSourceHistory { .. }), "an empty repository: {err}");
    repo.write("README.md", "# docs only\n");
    repo.commit("Docs only");
    repo.write("docs/index.rst", "Docs\n");
    repo.commit("More docs");
    let err = mine(&repo.dir, "acme/widgets", &MineOptions::default()).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::NoSourceHistory { .. }), "{text}");
    assert!(
        text.contains("widgets/.git") && text.contains("supported language") && !text.contains('\n'),
        "{text}"
    );
}

#[test]
fn cleaning_keeps_the_text_and_drops_references_trailers_and_templates() {
    assert_eq!(clean_message("Fix a() for b (#12)"), "Fix a() for b");
    assert_eq!(clean_message("Fix a() for b (fixes #12)."), "Fix a() for b.");
    assert_eq!(clean_message("Parse dates (see #1 and #2 for details)"), "Parse dates (for details)");
    assert_eq!(clean_message("Crash on load, see GH-44"), "Crash on load");
    assert_eq!(clean_message("Closes: #5\nResolves org/repo#6, PR#7"), "");
    assert_eq!(
        clean_message("Title\n\nBody text.\n\nFixes: the crash when the file is empty"),
        "Title\n\nBody text.\n\nFixes: the crash when the file is empty",
        "a sentence after `Fixes:` is not a trailer"
    );
    assert_eq!(
        clean_message("Squashed title (#40)\n\n* wip\n\n* review\n\n* Handle the empty file case in load()\n\nCo-authored-by: X <x@y>"),
        "Squashed title\n\n* Handle the empty file case in load()"
    );
    assert_eq!(
        clean_message(
            "Title\n\n### Description\nPlease describe your change.\nThe real text.\n---\nChange-Id: I1234"
        ),
        "Title\n\nThe real text."
    );
    assert_eq!(clean_message("Bump [skip ci] parser"), "Bump parser");
    assert_eq!(clean_message("Use .py files only (#3)"), "Use .py files only");

    assert!(is_revert("Revert \"Fix a\"\n\nThis reverts commit abc."));
    assert!(is_revert("Undo it\n\nThis reverts commit 0123abc."));
    assert!(!is_revert("Reverted sort order is now stable"));
    assert!(is_cherry_pick("Fix\n\n(cherry picked from commit 0123abc)"));
    assert_eq!(strip_backport("[Backport 2.x] Fix a"), ("Fix a", true));
    assert_eq!(strip_backport("[3.1] Fix a"), ("Fix a", true));
    assert_eq!(strip_backport("Backport PR #12: Fix a"), ("Fix a", true));
    assert_eq!(strip_backport("[doc] Fix a"), ("[doc] Fix a", false));
    assert_eq!(message_key("Fix  A()\n\nfor B."), message_key("fix a() for b"));
}

#[test]
fn the_same_change_has_the_same_patch_key_whatever_its_line_numbers() {
    let a = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n ctx\n-old\n+new\n";
    let b = "diff --git a/x.py b/x.py\nindex 1..2\n--- a/x.py\n+++ b/x.py\n@@ -40,2 +40,2 @@\n other\n-old\n+new \n";
    assert_eq!(patch_key(a), patch_key(b));
    assert_ne!(patch_key(a), patch_key(&a.replace("+new", "+newer")));
}
