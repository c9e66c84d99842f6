//! Call resolution for every language the generic reader reads (`lang::Reader::Rules`), at the level each allows without types:
//!
//! - `self.m()` / `this.m()` / `Self::m()` (and a Go receiver's own name) to method `m` of the
//!   caller's type, wherever it is defined (Rust `impl` blocks and Go methods spread over files);
//! - in Java and C++, a bare `m()` inside a class to that class's method first (`this` implied);
//! - a bare `f()` to a function of the same file, then of the same directory (Go package, C/C++
//!   translation unit beside its headers, JS module folder), then of the whole repository;
//!   `Foo()` / `new Foo()` to the type `Foo`;
//! - `Type::f()`, `Type.f()` to a method of a type of that name; `pkg.F()`, `module::f()` to a
//!   function in a file or directory of that name.
//!
//! Each step resolves only to a single definition: a name several definitions share is left
//! unresolved and listed (never guessed), and so is a call through a receiver whose type is
//! unknown when the repository defines a method of that name. A name the repository never
//! defines is a library's or the language's: no edge, not listed.

use std::collections::{HashMap, HashSet};

use super::python::Target;
use crate::chunk::{named_arity, own_name, CallSite, ChunkKind, FileSyntax, Receiver};
use crate::lang::{lang_of_path, Family, Lang};

/// Definitions of the files the generic reader read, by family (languages that call one another).
pub(crate) struct ByName<'a> {
    offsets: Vec<u32>,
    files: &'a [FileSyntax],
    /// (family, name) → functions (not methods) with that last name component.
    functions: HashMap<(Family, &'a str), Vec<u32>>,
    /// (family, type, method) → methods.
    methods: HashMap<(Family, &'a str, &'a str), Vec<u32>>,
    /// (family, method name) → the methods of that name, of every type.
    method_names: HashMap<(Family, &'a str), Vec<u32>>,
    /// (family, type name) → type chunks.
    types: HashMap<(Family, &'a str), Vec<u32>>,
    /// (family, type name) of every type with methods (a Rust type made by a macro has
    /// `impl` blocks but no chunk of its own).
    method_types: HashSet<(Family, &'a str)>,
    /// Global chunk id → (file index, the type whose `self` it sees).
    owner_type: Vec<Option<&'a str>>,
    file_of: Vec<u32>,
}

fn last(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

/// Of several definitions of a name, those of the call's arity where the language names
/// functions by it (Elixir's `f/1` and `f/2`); all of them where none has it.
fn of_arity(list: &[u32], arity: Option<u8>, name_of: impl Fn(u32) -> Option<u8>) -> Vec<u32> {
    let matching: Vec<u32> = match arity {
        Some(a) if list.len() > 1 => list.iter().copied().filter(|&c| name_of(c) == Some(a)).collect(),
        _ => Vec::new(),
    };
    if matching.is_empty() {
        list.to_vec()
    } else {
        matching
    }
}

/// The type a method belongs to (`Outer.Inner.m` → `Inner`), or a type chunk's own name.
fn type_of(kind: ChunkKind, name: &str) -> Option<&str> {
    match kind {
        ChunkKind::Method => name.rsplit_once('.').map(|(t, _)| last(t)),
        ChunkKind::Class => Some(last(name)),
        _ => None,
    }
}

fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

fn stem_of(path: &str) -> &str {
    let file = path.rsplit('/').next().unwrap_or(path);
    file.split('.').next().unwrap_or(file)
}

impl<'a> ByName<'a> {
    pub fn new(files: &'a [FileSyntax], offsets: &[u32]) -> Self {
        let total =
            offsets.last().copied().unwrap_or(0) as usize + files.last().map_or(0, |f| f.chunks.len());
        let mut other = ByName {
            offsets: offsets.to_vec(),
            files,
            functions: HashMap::new(),
            methods: HashMap::new(),
            method_names: HashMap::new(),
            types: HashMap::new(),
            method_types: HashSet::new(),
            owner_type: vec![None; total],
            file_of: vec![0; total],
        };
        for (f, file) in files.iter().enumerate() {
            let Some(lang) = lang_of_path(&file.path).filter(|l| l.reads_by_rules()) else {
                continue;
            };
            let family = lang.spec().family;
            for (i, chunk) in file.chunks.iter().enumerate() {
                let id = offsets[f] + i as u32;
                other.file_of[id as usize] = f as u32;
                other.owner_type[id as usize] = type_of(chunk.kind, &chunk.name);
                let name = own_name(&chunk.name);
                match chunk.kind {
                    ChunkKind::Function | ChunkKind::Macro => {
                        other.functions.entry((family, name)).or_default().push(id)
                    }
                    ChunkKind::Class => other.types.entry((family, name)).or_default().push(id),
                    ChunkKind::Method => {
                        if let Some(ty) = type_of(chunk.kind, &chunk.name) {
                            other.methods.entry((family, ty, name)).or_default().push(id);
                            other.method_types.insert((family, ty));
                            other.method_names.entry((family, name)).or_default().push(id);
                        }
                    }
                    ChunkKind::Module | ChunkKind::Window => {}
                }
            }
        }
        other
    }

    /// What a call in chunk `local` of file `f` (of language `lang`) refers to.
    pub fn resolve_call(&self, f: usize, local: u32, lang: Lang, site: &CallSite) -> Target {
        let spec = lang.spec();
        let family = spec.family;
        let id = self.offsets[f] + local;
        let own_type = self.owner_type.get(id as usize).copied().flatten();
        let name = site.name.as_str();
        let arity = site.arity;
        let method =
            |ty: &str| self.pick(self.methods.get(&(family, ty, name)).map_or(&[][..], Vec::as_slice), arity);
        let defined_as_method = self.method_names.contains_key(&(family, name));
        match &site.receiver {
            Receiver::None => {
                if let Some(ty) = own_type.filter(|_| spec.implicit_self) {
                    match method(ty) {
                        Target::Outside => {}
                        found => return found,
                    }
                }
                match self.free_function(f, family, name, arity) {
                    Target::Outside if spec.mixins => self.mixed_in(f, family, name, arity),
                    found => found,
                }
            }
            Receiver::Path(path) if path.len() == 1 && path[0] == "self" => match own_type.map(method) {
                Some(Target::Chunk(c)) => Target::Chunk(c),
                Some(Target::Outside) | None if spec.mixins => match self.mixed_in(f, family, name, arity) {
                    Target::Outside => Target::Unknown,
                    found => found,
                },
                _ => Target::Unknown,
            },
            Receiver::Path(path) => {
                let Some(qualifier) = path.last().map(String::as_str) else {
                    return Target::Unknown;
                };
                if path.first().is_some_and(|p| p == "self") {
                    // `self.field.m()`: the field's type is not known.
                    return if defined_as_method { Target::Unknown } else { Target::Outside };
                }
                let key = (family, qualifier);
                if self.types.contains_key(&key) || self.method_types.contains(&key) {
                    return match method(qualifier) {
                        Target::Outside if !defined_as_method => Target::Outside,
                        Target::Outside => Target::Unknown,
                        found => found,
                    };
                }
                // `pkg.Func()`, `module::f()`, `utils.f()`: a function in a file or folder so named.
                let candidates = self.functions.get(&(family, name)).map(Vec::as_slice).unwrap_or(&[]);
                let in_module: Vec<u32> = candidates
                    .iter()
                    .copied()
                    .filter(|&c| {
                        let path = &self.files[self.file_of[c as usize] as usize].path;
                        stem_of(path) == qualifier || dir_of(path).rsplit('/').next() == Some(qualifier)
                    })
                    .collect();
                match of_arity(&in_module, arity, |c| self.arity_of(c)).as_slice() {
                    [one] => Target::Chunk(*one),
                    [] if candidates.is_empty() && !defined_as_method => Target::Outside,
                    _ => Target::Unknown,
                }
            }
            Receiver::Local => Target::Outside,
            Receiver::Super | Receiver::Other => {
                if defined_as_method {
                    Target::Unknown
                } else {
                    Target::Outside
                }
            }
        }
    }

    /// The only definition of `list` of the call's arity (see [`of_arity`]), as [`one_of`].
    fn pick(&self, list: &[u32], arity: Option<u8>) -> Target {
        one_of(&of_arity(list, arity, |c| self.arity_of(c)))
    }

    /// The arity chunk `id` is named with (`f/2`).
    fn arity_of(&self, id: u32) -> Option<u8> {
        let f = self.file_of[id as usize] as usize;
        let chunk = self.files[f].chunks.get((id - self.offsets[f]) as usize)?;
        named_arity(&chunk.name)
    }

    /// A method `name` of some type a mixin may have brought to the caller (Ruby's `include
    /// Helpers`): the same file's only one, else the repository's only one; listed when
    /// several fit, nothing when no type defines it.
    fn mixed_in(&self, f: usize, family: Family, name: &str, arity: Option<u8>) -> Target {
        let candidates = self.method_names.get(&(family, name)).map(Vec::as_slice).unwrap_or(&[]);
        let here: Vec<u32> =
            candidates.iter().copied().filter(|&c| self.file_of[c as usize] as usize == f).collect();
        if !here.is_empty() {
            return self.pick(&here, arity);
        }
        self.pick(candidates, arity)
    }

    /// `f()`: the same file's, the same directory's, the repository's only `f`, or a type `f`.
    fn free_function(&self, f: usize, family: Family, name: &str, arity: Option<u8>) -> Target {
        let candidates = self.functions.get(&(family, name)).map(Vec::as_slice).unwrap_or(&[]);
        let path = &self.files[f].path;
        let here: Vec<u32> =
            candidates.iter().copied().filter(|&c| self.file_of[c as usize] as usize == f).collect();
        if !here.is_empty() {
            return self.pick(&here, arity);
        }
        let dir = dir_of(path);
        let beside: Vec<u32> = candidates
            .iter()
            .copied()
            .filter(|&c| dir_of(&self.files[self.file_of[c as usize] as usize].path) == dir)
            .collect();
        if !beside.is_empty() {
            return self.pick(&beside, arity);
        }
        if !candidates.is_empty() {
            return self.pick(candidates, arity);
        }
        match self.types.get(&(family, name)).map(Vec::as_slice) {
            Some([one]) => Target::Chunk(*one),
            Some(_) => Target::Unknown,
            None => Target::Outside,
        }
    }
}

/// The only chunk of a list: an edge; several: listed, not guessed; none: not in the repository.
fn one_of(list: &[u32]) -> Target {
    match list {
        [one] => Target::Chunk(*one),
        [] => Target::Outside,
        _ => Target::Unknown,
    }
}
