//! The MCP tools' path sandbox: a path an agent sends is relative to the repository root and
//! must stay inside it, lexically (`..`) and on disk (symlinks).

use std::path::{Component, Path, PathBuf};

/// Why a path was refused; each names the path as the agent gave it.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SandboxError {
    #[error("path `{0}`: empty; give a path relative to the repository root")]
    Empty(String),
    #[error("path `{0}`: absolute paths are refused; give a path relative to the repository root")]
    Absolute(String),
    #[error("path `{0}`: leads outside the repository; refused")]
    Outside(String),
    #[error("path `{0}`: no such file in the repository")]
    NotFound(String),
    #[error("path `{0}`: {1}")]
    Unreadable(String, String),
}

/// A path inside the repository.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// Relative to the root, `/`-separated, without `.` or `..` (the index's form).
    pub relative: String,
    /// The canonical path on disk (symlinks followed), inside the root.
    pub absolute: PathBuf,
}

/// Resolves `given` against `root` (which must be canonical, as [`crate::engine::RepoIndex`]'s
/// root is). Refused: an empty or absolute path, one whose `..` climbs above the root, and one
/// that exists only through a symlink leading out of the root. A path that climbs out is
/// refused before the disk is asked, so the answer never says what exists outside.
pub fn resolve(root: &Path, given: &str) -> Result<Resolved, SandboxError> {
    if given.trim().is_empty() {
        return Err(SandboxError::Empty(given.to_string()));
    }
    let mut parts: Vec<&str> = Vec::new();
    for component in Path::new(given).components() {
        match component {
            Component::Prefix(_) | Component::RootDir => {
                return Err(SandboxError::Absolute(given.to_string()))
            }
            Component::CurDir => {}
            Component::ParentDir => {
                if parts.pop().is_none() {
                    return Err(SandboxError::Outside(given.to_string()));
                }
            }
            Component::Normal(part) => {
                let part = part.to_str().ok_or_else(|| {
                    SandboxError::Unreadable(given.to_string(), "not valid UTF-8".to_string())
                })?;
                parts.push(part);
            }
        }
    }
    let joined = parts.iter().fold(root.to_path_buf(), |p, part| p.join(part));
    let absolute = std::fs::canonicalize(&joined).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => SandboxError::NotFound(given.to_string()),
        _ => SandboxError::Unreadable(given.to_string(), e.to_string()),
    })?;
    if !absolute.starts_with(root) {
        return Err(SandboxError::Outside(given.to_string()));
    }
    Ok(Resolved { relative: parts.join("/"), absolute })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A canonical repository root with `pkg/mod.py`, beside an `outside.py` it must not reach.
    fn layout() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let root = base.join("repo");
        std::fs::create_dir_all(root.join("pkg")).unwrap();
        std::fs::write(root.join("pkg/mod.py"), "def f():\n    pass\n").unwrap();
        std::fs::write(base.join("outside.py"), "SECRET = 1\n").unwrap();
        (dir, root)
    }

    #[test]
    fn a_relative_path_resolves_to_its_index_form() {
        let (_dir, root) = layout();
        let r = resolve(&root, "pkg/mod.py").unwrap();
        assert_eq!(r.relative, "pkg/mod.py");
        assert_eq!(r.absolute, root.join("pkg/mod.py"));
        let r = resolve(&root, "./pkg/../pkg/./mod.py").unwrap();
        assert_eq!(r.relative, "pkg/mod.py", "`..` that stays inside is fine");
    }

    #[test]
    fn climbing_out_is_refused_even_where_the_file_exists() {
        let (_dir, root) = layout();
        assert_eq!(resolve(&root, "../outside.py"), Err(SandboxError::Outside("../outside.py".into())));
        assert_eq!(
            resolve(&root, "pkg/../../outside.py"),
            Err(SandboxError::Outside("pkg/../../outside.py".into()))
        );
        let missing = "../../nowhere/at/all.py";
        assert_eq!(resolve(&root, missing), Err(SandboxError::Outside(missing.into())), "refused unasked");
    }

    #[test]
    fn absolute_paths_are_refused_even_inside_the_root() {
        let (_dir, root) = layout();
        let inside = root.join("pkg/mod.py").display().to_string();
        assert_eq!(resolve(&root, &inside), Err(SandboxError::Absolute(inside.clone())));
        assert_eq!(resolve(&root, "/etc/passwd"), Err(SandboxError::Absolute("/etc/passwd".into())));
        let e = resolve(&root, "/etc/passwd").unwrap_err().to_string();
        assert!(e.contains("/etc/passwd"), "the error names the path: {e}");
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_leading_out_is_refused_and_one_staying_inside_is_not() {
        let (_dir, root) = layout();
        std::os::unix::fs::symlink(root.parent().unwrap().join("outside.py"), root.join("link.py")).unwrap();
        std::os::unix::fs::symlink(root.parent().unwrap(), root.join("up")).unwrap();
        std::os::unix::fs::symlink(root.join("pkg/mod.py"), root.join("alias.py")).unwrap();
        assert_eq!(resolve(&root, "link.py"), Err(SandboxError::Outside("link.py".into())));
        assert_eq!(resolve(&root, "up/outside.py"), Err(SandboxError::Outside("up/outside.py".into())));
        let alias = resolve(&root, "alias.py").unwrap();
        assert_eq!((alias.relative.as_str(), alias.absolute), ("alias.py", root.join("pkg/mod.py")));
    }

    #[test]
    fn empty_and_missing_paths_say_so() {
        let (_dir, root) = layout();
        assert_eq!(resolve(&root, " "), Err(SandboxError::Empty(" ".into())));
        assert_eq!(resolve(&root, "pkg/gone.py"), Err(SandboxError::NotFound("pkg/gone.py".into())));
        assert_eq!(resolve(&root, ".").map(|r| r.relative), Ok(String::new()), "the root itself");
    }
}
