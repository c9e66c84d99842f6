//! Test fixtures (unit and CLI tests): a tiny random BERT and a small git repository with
//! instances whose patches come from real `git diff`s.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::eval::instances::Instance;
use crate::model::testutil::write_tiny_bert;

#[doc(hidden)]
pub struct Fixture {
    pub tmp: tempfile::TempDir,
    pub repos: PathBuf,
    pub model: PathBuf,
    pub instances: Vec<Instance>,
}

const WORDS: &[&str] = &["def", "return", "self", "class", "load", "save", "parse", "config", "value"];

/// Runs git in `dir` with a fixed identity and returns its stdout; panics on failure
/// (test fixtures only: unit tests, integration tests).
#[doc(hidden)]
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

const FILES: &[(&str, &str)] = &[
    (
        "pkg/config.py",
        "def load_config(path):\n    return parse_value(path)\n\n\ndef save_config(path, value):\n    \
         return value\n\n\ndef parse_value(text):\n    return text.strip()\n",
    ),
    (
        "pkg/model.py",
        "class Model:\n    def __init__(self):\n        self.value = 1\n\n    def load(self, path):\n        \
         return load_config(path)\n\n    def save(self):\n        return self.value\n",
    ),
    (
        "pkg/util.py",
        "def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n\n\ndef mean(xs):\n    return sum(xs) / \
         len(xs)\n\n\ndef total(xs):\n    return sum(xs)\n\n\ndef first(xs):\n    return xs[0]\n",
    ),
];

/// (file, old line, new line, issue text) of each instance's fix.
const FIXES: &[(&str, &str, &str, &str)] = &[
    ("pkg/config.py", "    return text.strip()", "    return text.strip().lower()", "parse value keeps case"),
    ("pkg/util.py", "    return max(lo, min(x, hi))", "    return min(hi, max(x, lo))", "clamp order wrong"),
    ("pkg/model.py", "        return self.value", "        return self.value + 0", "model save value"),
    ("pkg/util.py", "    return sum(xs) / len(xs)", "    return sum(xs) / max(1, len(xs))", "mean of empty"),
    ("pkg/util.py", "    return xs[0]", "    return xs[0] if xs else None", "first of empty list"),
    ("pkg/config.py", "    return value", "    return value or path", "save config returns"),
];

/// Writes the fixture; panics on failure (tests only).
#[doc(hidden)]
pub fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let model = tmp.path().join("model");
    write_tiny_bert(&model, WORDS);
    let repos = tmp.path().join("repos");
    let work = repos.join("acme+proj");
    std::fs::create_dir_all(work.join("pkg")).unwrap();
    git(&work, &["init", "-q"]);
    for (path, text) in FILES {
        std::fs::write(work.join(path), text).unwrap();
    }
    std::fs::write(work.join("README.md"), "# proj\n").unwrap();
    git(&work, &["add", "."]);
    git(&work, &["commit", "-q", "-m", "base"]);
    let base = git(&work, &["rev-parse", "HEAD"]).trim().to_string();
    let mut instances = Vec::new();
    let mut make = |id: String, repo: &str, file: &str, old: &str, new: &str, issue: &str| {
        let path = work.join(file);
        let before = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, before.replacen(old, new, 1)).unwrap();
        let patch = git(&work, &["diff"]);
        std::fs::write(&path, before).unwrap();
        instances.push(Instance {
            instance_id: id,
            repo: repo.to_string(),
            base_commit: base.clone(),
            problem_statement: issue.to_string(),
            patch,
            hints_text: None,
            created_at: None,
        });
    };
    for (i, (file, old, new, issue)) in FIXES.iter().enumerate() {
        make(format!("proj-{i}"), "acme/proj", file, old, new, issue);
    }
    make("proj-readme".into(), "acme/proj", "README.md", "# proj", "# proj!", "typo in readme");
    make("gone-1".into(), "acme/gone", "pkg/util.py", "return xs[0]", "return xs[1]", "x");
    Fixture { tmp, repos, model, instances }
}
