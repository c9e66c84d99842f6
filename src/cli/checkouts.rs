//! Which checkouts a command searches: `coret-tui DIR1 DIR2 …`, and a workspace file
//! (`NAME.workspace`) in place of a directory: one checkout per line, `#` starts a comment, a
//! relative path is relative to the file. The same checkout named twice is searched once.

use super::args::Args;
use super::Usage;
use std::path::{Path, PathBuf};

pub fn of(args: &Args) -> anyhow::Result<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for p in std::iter::once(&args.path).chain(&args.more) {
        let listed = match is_workspace(p) {
            true => read_workspace(p)?,
            false => vec![p.clone()],
        };
        for dir in listed {
            if seen.insert(std::fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone())) {
                out.push(dir);
            }
        }
    }
    Ok(out)
}

/// A file named `*.workspace`: any other file is a path that is not a checkout, said so by the
/// index ("not a directory").
pub fn is_workspace(p: &Path) -> bool {
    p.is_file() && p.extension().is_some_and(|e| e == "workspace")
}

fn read_workspace(file: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let text = std::fs::read_to_string(file).map_err(|e| {
        Usage(format!("{}: not a checkout, and not readable as a workspace file ({e})", file.display()))
    })?;
    let base = file.parent().unwrap_or(Path::new("."));
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let entry = line.split('#').next().unwrap_or_default().trim();
        if entry.is_empty() {
            continue;
        }
        let dir = base.join(entry);
        if !dir.is_dir() {
            anyhow::bail!(Usage(format!("{}:{}: `{entry}` is not a directory", file.display(), i + 1)));
        }
        out.push(dir);
    }
    if out.is_empty() {
        anyhow::bail!(Usage(format!("{}: a workspace file that lists no checkout", file.display())));
    }
    Ok(out)
}

/// The names rows show: each checkout's directory name, or as much of its path as tells two
/// of the same name apart.
pub fn names(paths: &[PathBuf]) -> Vec<String> {
    let full: Vec<PathBuf> =
        paths.iter().map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone())).collect();
    let tail = |p: &Path, n: usize| -> String {
        let parts: Vec<String> =
            p.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        parts[parts.len().saturating_sub(n)..].join("/").trim_start_matches('/').to_string()
    };
    let mut n = 1;
    loop {
        let names: Vec<String> = full.iter().map(|p| tail(p, n)).collect();
        let distinct: std::collections::HashSet<&String> = names.iter().collect();
        if distinct.len() == names.len() || n > 64 {
            return names;
        }
        n += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_checkouts_of_one_name_are_told_apart_by_their_parents() {
        let a = PathBuf::from("/work/team/api");
        let b = PathBuf::from("/work/mine/api");
        let c = PathBuf::from("/work/team/web");
        assert_eq!(names(&[a, b, c]), ["team/api", "mine/api", "team/web"]);
    }
}
