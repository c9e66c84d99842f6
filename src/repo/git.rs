//! Read a repository snapshot straight from git objects at a commit, without a checkout,
//! through the git CLI (`git --git-dir DIR ...`). Evaluation needs hundreds of snapshots of
//! the same few repositories; reading objects avoids touching any work tree.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;

use crate::error::{Error, Result};

/// The files of one commit, sorted by path.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    /// Full hash of the commit read.
    pub commit: String,
    /// `(repository-relative path with '/' separators, file bytes)`, sorted by path.
    pub files: Vec<(String, Vec<u8>)>,
    /// Files whose blob the clone lacks (a partial mirror leaves out some very large blobs):
    /// skipped and counted, never fatal.
    pub missing: Vec<String>,
}

impl Snapshot {
    /// The bytes of `path`, if the snapshot holds it.
    pub fn get(&self, path: &str) -> Option<&[u8]> {
        self.files.binary_search_by(|(p, _)| p.as_str().cmp(path)).ok().map(|i| self.files[i].1.as_slice())
    }
}

/// Locate the git directory of `repo` ("owner/name") under `repos_dir`. Tries, in order,
/// `DIR/owner+name/repo`, `DIR/owner+name` and `DIR/owner/name`; each may be a bare
/// repository or a work tree (then its `.git` is returned). The result is usable with
/// `git --git-dir`.
pub fn find_repo(repos_dir: &Path, repo: &str) -> Result<PathBuf> {
    let (owner, name) = repo
        .split_once('/')
        .filter(|(o, n)| !o.is_empty() && !n.is_empty() && !n.contains('/'))
        .ok_or_else(|| Error::invalid(format!("repository name {repo:?} is not owner/name")))?;
    let flat = repos_dir.join(format!("{owner}+{name}"));
    let candidates = [flat.join("repo"), flat, repos_dir.join(owner).join(name)];
    for dir in &candidates {
        if let Some(git_dir) = git_dir_of(dir) {
            return Ok(git_dir);
        }
    }
    let tried: Vec<String> = candidates.iter().map(|p| p.display().to_string()).collect();
    Err(Error::context(repo, format!("no git repository found (tried {})", tried.join(", "))))
}

/// `dir/.git` for a work tree, `dir` itself for a bare repository, else `None`.
pub fn git_dir_of(dir: &Path) -> Option<PathBuf> {
    let dot_git = dir.join(".git");
    if dot_git.exists() {
        // A directory, or a `gitdir:` file (worktrees); git follows both.
        return Some(dot_git);
    }
    if dir.join("HEAD").is_file() && dir.join("objects").is_dir() {
        return Some(dir.to_path_buf());
    }
    None
}

/// Blobs already read from one repository, by object id (`None`: the clone lacks it): the
/// snapshots of a repository at many commits share most of their files, and reading them all
/// again was a third of what a commit of a large repository cost to index.
#[derive(Default)]
pub struct BlobCache {
    blobs: HashMap<String, Option<Vec<u8>>>,
}

/// Read every file of `commit` whose path passes `filter`. Symlinks and submodules are
/// skipped, as are paths that are not UTF-8. One `git ls-tree` lists the tree and one
/// `git cat-file --batch` streams all selected blobs.
pub fn read_snapshot(git_dir: &Path, commit: &str, filter: impl Fn(&str) -> bool) -> Result<Snapshot> {
    read_snapshot_with(git_dir, commit, filter, &mut BlobCache::default())
}

/// [`read_snapshot`], reading only the blobs `cache` lacks (and keeping them there).
pub fn read_snapshot_with(
    git_dir: &Path,
    commit: &str,
    filter: impl Fn(&str) -> bool,
    cache: &mut BlobCache,
) -> Result<Snapshot> {
    let sha = resolve_commit(git_dir, commit)?;
    let listing = run_git(git_dir, &["ls-tree", "-r", "-z", "--long", "--full-tree", &sha])?;
    let entries: Vec<TreeEntry> = parse_ls_tree(&listing)
        .map_err(|e| Error::context(git_dir.display().to_string(), e))?
        .into_iter()
        .filter(|e| e.is_regular_blob() && filter(&e.path))
        .collect();
    let mut new: Vec<&str> =
        entries.iter().map(|e| e.object.as_str()).filter(|o| !cache.blobs.contains_key(*o)).collect();
    new.sort_unstable();
    new.dedup();
    let blobs = cat_blobs(git_dir, new.iter().copied())?;
    cache.blobs.extend(new.into_iter().map(str::to_string).zip(blobs));
    let mut files = Vec::with_capacity(entries.len());
    let mut missing = Vec::new();
    for entry in entries {
        match cache.blobs.get(&entry.object) {
            Some(Some(bytes)) => files.push((entry.path, bytes.clone())),
            _ => missing.push(entry.path),
        }
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(Snapshot { commit: sha, files, missing })
}

/// The bytes of one file at `commit`; `Ok(None)` when the commit has no regular file there.
pub fn read_file_at(git_dir: &Path, commit: &str, path: &str) -> Result<Option<Vec<u8>>> {
    let sha = resolve_commit(git_dir, commit)?;
    let listing = run_git(git_dir, &["ls-tree", "-z", "--full-tree", &sha, "--", path])?;
    let entries = parse_ls_tree(&listing).map_err(|e| Error::context(path, e))?;
    let Some(entry) = entries.into_iter().find(|e| e.path == path && e.is_regular_blob()) else {
        return Ok(None);
    };
    let mut blobs = cat_blobs(git_dir, std::iter::once(entry.object.as_str()))?;
    Ok(blobs.pop().flatten())
}

/// The raw `git log` of `revs` (e.g. `["--all"]`, `["HEAD", "^OLD"]`) for the history
/// retriever, in one process: per commit `\x1e` hash `\x1f` parents `\x1f` message `\x1f`
/// then the paths it changed, one per line (see `history::log`).
pub fn log_history(git_dir: &Path, revs: &[&str]) -> Result<Vec<u8>> {
    let mut args = vec![
        "-c",
        "core.quotepath=off",
        "log",
        "--no-renames",
        "--name-only",
        "--format=%x1e%H%x1f%P%x1f%B%x1f",
    ];
    args.extend_from_slice(revs);
    args.push("--");
    run_git(git_dir, &args)
}

/// The full hash of `rev` (e.g. `HEAD`), or `None` when it names no commit (an empty
/// repository).
pub fn rev_parse(git_dir: &Path, rev: &str) -> Option<String> {
    resolve_commit(git_dir, rev).ok()
}

/// What makes two checkouts one repository's: the root commits of `HEAD`'s history, sorted and
/// joined (a worktree, a second clone and a renamed folder share them). `None` outside git or
/// in an empty repository.
pub fn identity(git_dir: &Path) -> Option<String> {
    let out = run_git(git_dir, &["rev-list", "--max-parents=0", "HEAD"]).ok()?;
    let mut roots: Vec<&str> = std::str::from_utf8(&out).ok()?.split_whitespace().collect();
    roots.sort_unstable();
    (!roots.is_empty()).then(|| roots.join(","))
}

/// Whether `commit` names a commit object in the repository.
pub fn has_commit(git_dir: &Path, commit: &str) -> bool {
    resolve_commit(git_dir, commit).is_ok()
}

/// The full hash of `commit`, or an error naming the commit and the repository.
fn resolve_commit(git_dir: &Path, commit: &str) -> Result<String> {
    if commit.is_empty() || commit.starts_with('-') || commit.contains(char::is_whitespace) {
        return Err(Error::invalid(format!("{commit:?} is not a commit name")));
    }
    let spec = format!("{commit}^{{commit}}");
    let output = git(git_dir)
        .args(["rev-parse", "--verify", "--quiet", "--end-of-options", &spec])
        .output()
        .map_err(|e| spawn_error(git_dir, e))?;
    if !output.status.success() {
        return Err(Error::context(
            git_dir.display().to_string(),
            format!("commit {commit} not found (is the repository's history complete?)"),
        ));
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

struct TreeEntry {
    mode: String,
    kind: String,
    object: String,
    path: String,
}

impl TreeEntry {
    /// Blobs that are files: not symlinks (120000); submodules have kind "commit".
    fn is_regular_blob(&self) -> bool {
        self.kind == "blob" && self.mode != "120000"
    }
}

/// Parse `git ls-tree -z [--long]` output: `MODE TYPE OBJECT [SIZE]\tPATH\0` records.
/// Records whose path is not UTF-8 are dropped.
fn parse_ls_tree(out: &[u8]) -> std::result::Result<Vec<TreeEntry>, String> {
    let mut entries = Vec::new();
    for record in out.split(|&b| b == 0).filter(|r| !r.is_empty()) {
        let tab = record
            .iter()
            .position(|&b| b == b'\t')
            .ok_or_else(|| format!("unexpected ls-tree record {:?}", String::from_utf8_lossy(record)))?;
        let Ok(path) = std::str::from_utf8(&record[tab + 1..]) else {
            continue;
        };
        let meta = String::from_utf8_lossy(&record[..tab]);
        let mut fields = meta.split_whitespace();
        let (Some(mode), Some(kind), Some(object)) = (fields.next(), fields.next(), fields.next()) else {
            return Err(format!("unexpected ls-tree record {meta:?}"));
        };
        entries.push(TreeEntry {
            mode: mode.to_string(),
            kind: kind.to_string(),
            object: object.to_string(),
            path: path.to_string(),
        });
    }
    Ok(entries)
}

/// Stream blobs through one `git cat-file --batch`, in the order given. A writer thread
/// feeds object names while this thread reads, so neither pipe can fill up and stall.
/// A blob the repository lacks comes back as `None`.
fn cat_blobs<'a>(git_dir: &Path, objects: impl Iterator<Item = &'a str>) -> Result<Vec<Option<Vec<u8>>>> {
    let names: Vec<String> = objects.map(str::to_string).collect();
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let mut child = git(git_dir)
        .args(["cat-file", "--batch", "--buffer"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| spawn_error(git_dir, e))?;
    let (Some(mut stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(Error::context(git_dir.display().to_string(), "git cat-file: no pipes"));
    };
    let count = names.len();
    let writer = thread::spawn(move || -> std::io::Result<()> {
        let mut input = std::io::BufWriter::new(&mut stdin);
        for name in &names {
            writeln!(input, "{name}")?;
        }
        input.flush()
        // stdin drops here: git sees EOF, flushes its buffer and exits.
    });
    let stderr_reader = thread::spawn(move || {
        let mut text = String::new();
        let _ = BufReader::new(stderr).read_to_string(&mut text);
        text
    });
    let result = read_batch(BufReader::with_capacity(1 << 16, stdout), count);
    let write_result = writer.join();
    let status = child_wait(&mut child, git_dir)?;
    let stderr_text = stderr_reader.join().unwrap_or_default();
    let context = || git_dir.display().to_string();
    let blobs = result.map_err(|e| Error::context(context(), format!("git cat-file: {e} {stderr_text}")))?;
    if !matches!(write_result, Ok(Ok(()))) || !status {
        return Err(Error::context(context(), format!("git cat-file failed: {}", stderr_text.trim())));
    }
    Ok(blobs)
}

fn child_wait(child: &mut Child, git_dir: &Path) -> Result<bool> {
    child
        .wait()
        .map(|s| s.success())
        .map_err(|e| Error::context(git_dir.display().to_string(), format!("git cat-file: {e}")))
}

/// Read `count` `--batch` responses: `OBJECT TYPE SIZE\n<SIZE bytes>\n`, or `OBJECT missing\n`.
fn read_batch(mut out: impl BufRead, count: usize) -> std::result::Result<Vec<Option<Vec<u8>>>, String> {
    let mut blobs = Vec::with_capacity(count);
    let mut header = String::new();
    for _ in 0..count {
        header.clear();
        out.read_line(&mut header).map_err(|e| e.to_string())?;
        let fields: Vec<&str> = header.split_whitespace().collect();
        let size: usize = match fields.as_slice() {
            [_, _, size] => size.parse().map_err(|_| format!("bad header {header:?}"))?,
            [_, "missing"] => {
                blobs.push(None);
                continue;
            }
            _ => return Err(format!("unexpected output {header:?}")),
        };
        let mut data = vec![0; size + 1];
        out.read_exact(&mut data).map_err(|e| e.to_string())?;
        data.pop(); // the newline after each object
        blobs.push(Some(data));
    }
    Ok(blobs)
}

fn git(git_dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("--git-dir").arg(git_dir);
    cmd
}

/// Run a git command to completion; its stdout, or an error with its stderr.
pub(crate) fn run_git(git_dir: &Path, args: &[&str]) -> Result<Vec<u8>> {
    let output = git(git_dir).args(args).output().map_err(|e| spawn_error(git_dir, e))?;
    if !output.status.success() {
        return Err(Error::context(
            git_dir.display().to_string(),
            format!(
                "git {} failed: {}",
                args.first().unwrap_or(&""),
                String::from_utf8_lossy(&output.stderr).trim()
            ),
        ));
    }
    Ok(output.stdout)
}

fn spawn_error(git_dir: &Path, e: std::io::Error) -> Error {
    Error::context(git_dir.display().to_string(), format!("cannot run git: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// Git with a fixed identity, output trimmed (the shared test fixture).
    fn sh(dir: &Path, args: &[&str]) -> String {
        crate::testkit::git(dir, args).trim().to_string()
    }

    /// A work tree with two commits; returns (dir, first commit, second commit).
    fn fixture() -> (tempfile::TempDir, String, String) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("work");
        fs::create_dir_all(dir.join("pkg")).unwrap();
        sh(&dir, &["init", "-q"]);
        fs::write(dir.join("pkg/a.py"), "def a():\n    return 1\n").unwrap();
        fs::write(dir.join("README.md"), "# readme\n").unwrap();
        sh(&dir, &["add", "."]);
        sh(&dir, &["commit", "-q", "-m", "one"]);
        let first = sh(&dir, &["rev-parse", "HEAD"]);
        fs::write(dir.join("pkg/a.py"), "def a():\n    return 2\n").unwrap();
        fs::write(dir.join("pkg/b.py"), b"x = '\xc3\xa9'\n\x00binary tail").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink("a.py", dir.join("pkg/link.py")).unwrap();
        sh(&dir, &["add", "."]);
        sh(&dir, &["commit", "-q", "-m", "two"]);
        let second = sh(&dir, &["rev-parse", "HEAD"]);
        // Leave the work tree different from both commits: reading must not look at it.
        fs::write(dir.join("pkg/a.py"), "dirty\n").unwrap();
        (tmp, first, second)
    }

    fn py(path: &str) -> bool {
        path.ends_with(".py")
    }

    #[test]
    fn reads_snapshots_at_two_commits_from_objects() {
        let (tmp, first, second) = fixture();
        let git_dir = tmp.path().join("work/.git");

        let old = read_snapshot(&git_dir, &first, py).unwrap();
        assert_eq!(old.commit, first);
        let paths: Vec<&str> = old.files.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["pkg/a.py"]);
        assert_eq!(old.get("pkg/a.py").unwrap(), b"def a():\n    return 1\n");

        let new = read_snapshot(&git_dir, &second[..10], py).unwrap();
        assert_eq!(new.commit, second, "short hashes resolve to the full hash");
        let paths: Vec<&str> = new.files.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["pkg/a.py", "pkg/b.py"], "symlinks are skipped");
        assert_eq!(new.get("pkg/a.py").unwrap(), b"def a():\n    return 2\n");
        assert_eq!(new.get("pkg/b.py").unwrap(), b"x = '\xc3\xa9'\n\x00binary tail");

        let all = read_snapshot(&git_dir, &second, |_| true).unwrap();
        assert!(all.get("README.md").is_some());
    }

    /// A kept cache serves what it holds and reads the rest: the same files as a fresh read,
    /// whichever commit comes first.
    #[test]
    fn a_blob_cache_reads_each_blob_once_and_serves_the_same_files() {
        let (tmp, first, second) = fixture();
        let git_dir = tmp.path().join("work/.git");
        let mut cache = BlobCache::default();
        for commit in [&second, &first, &second] {
            let kept = read_snapshot_with(&git_dir, commit, py, &mut cache).unwrap();
            let fresh = read_snapshot(&git_dir, commit, py).unwrap();
            assert_eq!((kept.commit, kept.files), (fresh.commit, fresh.files));
        }
        assert_eq!(cache.blobs.len(), 3, "a.py twice and b.py, each read once");
    }

    #[test]
    fn missing_commit_is_a_clear_error() {
        let (tmp, _, _) = fixture();
        let git_dir = tmp.path().join("work/.git");
        let missing = "0123456789abcdef0123456789abcdef01234567";
        let err = read_snapshot(&git_dir, missing, py).unwrap_err().to_string();
        assert!(err.contains(missing), "{err}");
        assert!(err.contains("work/.git"), "{err}");
        assert!(!has_commit(&git_dir, missing));
        assert!(read_snapshot(&git_dir, "--output=x", py).is_err());
    }

    #[test]
    fn reads_single_files() {
        let (tmp, first, second) = fixture();
        let git_dir = tmp.path().join("work/.git");
        assert_eq!(read_file_at(&git_dir, &first, "pkg/b.py").unwrap(), None);
        assert_eq!(
            read_file_at(&git_dir, &second, "pkg/b.py").unwrap().as_deref(),
            Some(&b"x = '\xc3\xa9'\n\x00binary tail"[..])
        );
        assert_eq!(read_file_at(&git_dir, &second, "pkg").unwrap(), None, "a directory");
        assert_eq!(read_file_at(&git_dir, &second, "pkg/link.py").unwrap(), None);
    }

    #[test]
    fn works_on_bare_clones() {
        let (tmp, _, second) = fixture();
        let bare = tmp.path().join("bare.git");
        sh(tmp.path(), &["clone", "-q", "--bare", "work", bare.to_str().unwrap()]);
        let snap = read_snapshot(&bare, &second, py).unwrap();
        assert_eq!(snap.files.len(), 2);
    }

    #[test]
    fn finds_repositories_in_three_layouts() {
        let (tmp, _, _) = fixture();
        let root = tmp.path().join("repos");
        let work = tmp.path().join("work");
        let src = work.to_str().unwrap();
        fs::create_dir_all(root.join("a+one")).unwrap();
        sh(&root, &["clone", "-q", "--bare", src, "a+one/repo"]);
        sh(&root, &["clone", "-q", "--bare", src, "b+two"]);
        fs::create_dir_all(root.join("c")).unwrap();
        sh(&root, &["clone", "-q", src, "c/three"]);

        assert_eq!(find_repo(&root, "a/one").unwrap(), root.join("a+one/repo"));
        assert_eq!(find_repo(&root, "b/two").unwrap(), root.join("b+two"));
        assert_eq!(find_repo(&root, "c/three").unwrap(), root.join("c/three/.git"));
        for repo in ["a/one", "b/two", "c/three"] {
            let git_dir = find_repo(&root, repo).unwrap();
            assert!(has_commit(&git_dir, "HEAD"), "{repo}");
        }
        let err = find_repo(&root, "d/four").unwrap_err().to_string();
        assert!(err.contains("d/four") && err.contains("d+four"), "{err}");
        assert!(find_repo(&root, "nonsense").is_err());
    }
}
