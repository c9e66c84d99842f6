//! Python module names of repository files, for resolving `import a.b` and
//! `from ..pkg import x` to files.

use std::collections::{HashMap, HashSet};

/// Dotted module name of a repository-relative path: `a/b.py` → `a.b`,
/// `a/b/__init__.py` → `a.b`, `__init__.py` → `""`.
pub fn module_name_of(path: &str) -> String {
    let path = path.trim_start_matches("./");
    let stem = path.strip_suffix(".py").or_else(|| path.strip_suffix(".pyi")).unwrap_or(path);
    let stem = match stem.strip_suffix("__init__") {
        Some(pkg) => pkg.trim_end_matches('/'),
        None => stem,
    };
    stem.replace('/', ".")
}

fn is_init(path: &str) -> bool {
    path == "__init__.py" || path.ends_with("/__init__.py")
}

/// Absolute dotted module of a relative import made in `path`: `level` leading dots,
/// then `module` (may be empty). `None` when the dots climb above the repository.
pub fn resolve_relative(path: &str, level: u32, module: &str) -> Option<String> {
    let own = module_name_of(path);
    let mut package: Vec<&str> = own.split('.').filter(|s| !s.is_empty()).collect();
    if !is_init(path) {
        package.pop()?;
    }
    for _ in 1..level {
        package.pop()?;
    }
    package.extend(module.split('.').filter(|s| !s.is_empty()));
    (!package.is_empty()).then(|| package.join("."))
}

#[derive(Clone, Copy)]
enum Slot {
    One(usize),
    Many,
}

/// Module name → file index. Every file is known by its full dotted path
/// (`src/pkg/mod.py` → `src.pkg.mod`) and, for `src/`-style layouts, by the name below
/// any directory that is not a package (`pkg.mod`, when `src/` has no `__init__.py`).
pub(crate) struct ModuleIndex {
    full: HashMap<String, usize>,
    rooted: HashMap<String, Slot>,
    /// Dotted prefixes of every known name: packages, namespace packages included.
    prefixes: HashSet<String>,
}

impl ModuleIndex {
    pub fn new<'a>(paths: impl IntoIterator<Item = &'a str>) -> Self {
        let paths: Vec<&str> = paths.into_iter().collect();
        let package_dirs: HashSet<&str> = paths
            .iter()
            .filter(|p| is_init(p))
            .map(|p| p.rsplit_once('/').map_or("", |(dir, _)| dir))
            .collect();
        let mut index =
            ModuleIndex { full: HashMap::new(), rooted: HashMap::new(), prefixes: HashSet::new() };
        for (file, path) in paths.iter().enumerate() {
            let name = module_name_of(path);
            if name.is_empty() {
                continue;
            }
            let parts: Vec<&str> = name.split('.').collect();
            index.add_prefixes(&parts);
            // Later duplicates (`a.py` beside `a/__init__.py`) lose: the first one wins.
            index.full.entry(name.clone()).or_insert(file);
            for k in 1..parts.len() {
                if package_dirs.contains(parts[..k].join("/").as_str()) {
                    continue;
                }
                index.add_prefixes(&parts[k..]);
                let slot = index.rooted.entry(parts[k..].join(".")).or_insert(Slot::One(file));
                if !matches!(slot, Slot::One(f) if *f == file) {
                    *slot = Slot::Many;
                }
            }
        }
        index
    }

    fn add_prefixes(&mut self, parts: &[&str]) {
        for k in 1..parts.len() {
            self.prefixes.insert(parts[..k].join("."));
        }
    }

    /// The file of a module, if exactly one repository file is that module.
    pub fn lookup(&self, name: &str) -> Option<usize> {
        if let Some(&file) = self.full.get(name) {
            return Some(file);
        }
        match self.rooted.get(name) {
            Some(Slot::One(file)) => Some(*file),
            _ => None,
        }
    }

    /// Whether `name` is a repository module or package (a directory prefix counts).
    pub fn is_known(&self, name: &str) -> bool {
        self.full.contains_key(name) || self.rooted.contains_key(name) || self.prefixes.contains(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_names_drop_py_and_init() {
        assert_eq!(module_name_of("a/b.py"), "a.b");
        assert_eq!(module_name_of("a/b/__init__.py"), "a.b");
        assert_eq!(module_name_of("setup.py"), "setup");
        assert_eq!(module_name_of("__init__.py"), "");
    }

    #[test]
    fn relative_imports_climb_from_the_package() {
        assert_eq!(resolve_relative("pkg/sub/mod.py", 1, "x").as_deref(), Some("pkg.sub.x"));
        assert_eq!(resolve_relative("pkg/sub/mod.py", 1, "").as_deref(), Some("pkg.sub"));
        assert_eq!(resolve_relative("pkg/sub/mod.py", 2, "other.y").as_deref(), Some("pkg.other.y"));
        assert_eq!(resolve_relative("pkg/sub/__init__.py", 1, "x").as_deref(), Some("pkg.sub.x"));
        assert_eq!(resolve_relative("pkg/mod.py", 3, "x"), None, "climbs above the repository");
    }

    #[test]
    fn src_layout_files_are_found_by_package_name() {
        let index = ModuleIndex::new(["src/pkg/__init__.py", "src/pkg/mod.py", "tools/run.py"]);
        assert_eq!(index.lookup("pkg.mod"), Some(1));
        assert_eq!(index.lookup("src.pkg.mod"), Some(1));
        assert_eq!(index.lookup("pkg"), Some(0));
        assert_eq!(index.lookup("mod"), None, "pkg/ is a package, so mod is not top-level");
        assert!(index.is_known("pkg") && index.is_known("src"));
        assert!(!index.is_known("os"));
    }

    #[test]
    fn ambiguous_rooted_names_resolve_to_nothing() {
        let index = ModuleIndex::new(["a/utils.py", "b/utils.py", "utils2.py"]);
        assert_eq!(index.lookup("utils"), None);
        assert_eq!(index.lookup("a.utils"), Some(0));
        assert_eq!(index.lookup("utils2"), Some(2));
    }
}
