//! Name resolution over the whole repository: what a call site refers to.

use std::collections::HashMap;

use super::modules::{resolve_relative, ModuleIndex};
use crate::chunk::{CallSite, ChunkKind, FileSyntax, Import, Imported, Receiver};
use crate::lang::python_builtins::{adds_no_methods, is_builtin_function, is_dunder};

/// How far re-exports (`from .core import X` in an `__init__.py`) are followed.
const MAX_DEPTH: u32 = 8;
/// How many classes a method lookup visits through base classes.
const MAX_MRO: usize = 64;
/// How deep `from m import *` chains are followed (each level may fan out).
const MAX_WILDCARD_DEPTH: u32 = 3;

/// What a name or dotted path denotes.
#[derive(Clone, Debug, PartialEq)]
enum Entity {
    /// A repository module or package, by dotted name.
    Module(String),
    /// A class chunk (global id).
    Class(u32),
    /// A function or method chunk (global id).
    Def(u32),
    /// Bound to something outside the repository: never guessed at.
    External,
    /// Not found; the repository-unique-name fallback may still apply.
    Unknown,
}

/// What a call site resolves to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// A chunk of the repository (global id).
    Chunk(u32),
    /// Not found, and it may well be in the repository: a receiver of unknown type
    /// (`ctx.lookup_default()`), an ambiguous name, a method missing from a class whose bases
    /// are all known. Clients list these as the graph's holes.
    Unknown,
    /// Known not to be another chunk: a builtin, a name bound to a library, a method of
    /// `object` or of a base class outside the repository, a function defined in the caller.
    Outside,
}

#[derive(Default)]
struct ClassData<'a> {
    methods: HashMap<&'a str, u32>,
    nested: HashMap<&'a str, u32>,
    bases: Vec<u32>,
    /// Some base class is outside the repository (or not understood): a method missing here
    /// may be inherited from it.
    open: bool,
    /// `self.attr = Class(…)` in the class's methods: the class of each attribute
    /// (`None`: assigned something else too, or classes that disagree).
    attributes: HashMap<&'a str, Option<u32>>,
}

/// Read-only repository index, shared by the threads that resolve calls.
pub(crate) struct Repo<'a> {
    files: &'a [FileSyntax],
    /// Global id of each file's first chunk.
    offsets: Vec<u32>,
    modules: ModuleIndex,
    /// Module-scope functions and classes of each file.
    defs: Vec<HashMap<&'a str, u32>>,
    /// File- and class-level imports of each file by bound name (last one wins).
    bindings: Vec<HashMap<&'a str, &'a Import>>,
    /// Function-level imports of each file, by owning chunk (file-local index).
    scoped: Vec<HashMap<u32, Vec<&'a Import>>>,
    wildcards: Vec<Vec<&'a Import>>,
    /// Class chunk id → its members and resolved in-repository bases.
    classes: HashMap<u32, ClassData<'a>>,
    /// Global chunk id → the class its `self`/`cls` is (a method's class, a class itself).
    class_of: Vec<Option<u32>>,
    /// Last name component → the only chunk with it (`None`: more than one).
    unique: HashMap<&'a str, Option<u32>>,
}

fn target(entity: Entity) -> Target {
    match entity {
        Entity::Def(id) | Entity::Class(id) => Target::Chunk(id),
        Entity::Unknown => Target::Unknown,
        Entity::Module(_) | Entity::External => Target::Outside,
    }
}

/// `self…` or a bare `cls`: a receiver typed by the calling method's class.
fn is_self_path(path: &[String]) -> bool {
    match path {
        [only] => only == "self" || only == "cls",
        [first, ..] => first == "self",
        [] => false,
    }
}

/// Whether Python's reader read this file (the others resolve in `callgraph::by_name`).
fn is_python(file: &FileSyntax) -> bool {
    crate::lang::lang_of_path(&file.path).is_some_and(|l| !l.reads_by_rules())
}

fn last_component(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

impl<'a> Repo<'a> {
    pub fn new(files: &'a [FileSyntax]) -> Self {
        let mut offsets = Vec::with_capacity(files.len());
        let mut next = 0u32;
        for file in files {
            offsets.push(next);
            next += file.chunks.len() as u32;
        }
        let mut repo = Repo {
            files,
            offsets,
            // Only Python files are Python modules; the others keep their place (file index).
            modules: ModuleIndex::new(files.iter().map(|f| if is_python(f) { f.path.as_str() } else { "" })),
            defs: Vec::with_capacity(files.len()),
            bindings: Vec::with_capacity(files.len()),
            scoped: Vec::with_capacity(files.len()),
            wildcards: Vec::with_capacity(files.len()),
            classes: HashMap::new(),
            class_of: vec![None; next as usize],
            unique: HashMap::new(),
        };
        for (f, file) in files.iter().enumerate() {
            repo.index_file(f, file);
        }
        repo.resolve_bases();
        repo.type_attributes();
        repo
    }

    fn index_file(&mut self, f: usize, file: &'a FileSyntax) {
        if !is_python(file) {
            // Other languages resolve in `callgraph::by_name`; their names must not shadow these.
            self.defs.push(HashMap::new());
            self.bindings.push(HashMap::new());
            self.scoped.push(HashMap::new());
            self.wildcards.push(Vec::new());
            return;
        }
        let offset = self.offsets[f];
        let mut defs = HashMap::new();
        let mut class_ids: HashMap<&str, u32> = HashMap::new();
        for (i, chunk) in file.chunks.iter().enumerate() {
            let id = offset + i as u32;
            if chunk.kind == ChunkKind::Module {
                continue;
            }
            let top_level = !chunk.name.contains('.');
            if top_level && matches!(chunk.kind, ChunkKind::Function | ChunkKind::Class) {
                defs.insert(chunk.name.as_str(), id);
            }
            if chunk.kind == ChunkKind::Class {
                class_ids.insert(chunk.name.as_str(), id);
                self.class_of[id as usize] = Some(id);
                self.classes.entry(id).or_default();
            }
            // A bare call `f()` never reaches a method: only functions and classes may answer it.
            if chunk.kind != ChunkKind::Method {
                self.unique
                    .entry(last_component(&chunk.name))
                    .and_modify(|slot| *slot = None)
                    .or_insert(Some(id));
            }
        }
        // Members: chunks come in source order, so a class precedes its members.
        for (i, chunk) in file.chunks.iter().enumerate() {
            let Some((owner, member)) = chunk.name.rsplit_once('.') else {
                continue;
            };
            let Some(&class_id) = class_ids.get(owner) else {
                continue;
            };
            let Some(class) = self.classes.get_mut(&class_id) else {
                continue;
            };
            let id = offset + i as u32;
            if chunk.kind == ChunkKind::Method {
                self.class_of[id as usize] = Some(class_id);
            }
            match chunk.kind {
                ChunkKind::Method => class.methods.insert(member, id),
                ChunkKind::Class => class.nested.insert(member, id),
                _ => None,
            };
        }
        let mut bindings = HashMap::new();
        let mut wildcards = Vec::new();
        let mut scoped: HashMap<u32, Vec<&Import>> = HashMap::new();
        for import in &file.imports {
            if let Some(owner) = import.scope {
                scoped.entry(owner).or_default().push(import);
                continue;
            }
            match (&import.what, import.bound_name()) {
                (Imported::All, _) => wildcards.push(import),
                (_, Some(name)) => {
                    bindings.insert(name, import);
                }
                _ => {}
            }
        }
        self.defs.push(defs);
        self.bindings.push(bindings);
        self.scoped.push(scoped);
        self.wildcards.push(wildcards);
    }

    /// Resolves every class's base expressions to in-repository classes, once.
    fn resolve_bases(&mut self) {
        let mut resolved = Vec::new();
        for (f, file) in self.files.iter().enumerate() {
            for class in &file.classes {
                let id = self.offsets[f] + class.chunk;
                let mut open = false;
                let mut bases = Vec::new();
                for base in &class.bases {
                    let parts: Vec<&str> = base.split('.').collect();
                    match self.resolve_path(f, None, &parts) {
                        Entity::Class(c) if c != id => bases.push(c),
                        _ => open |= !adds_no_methods(base),
                    }
                }
                resolved.push((id, bases, open));
            }
        }
        for (id, bases, open) in resolved {
            if let Some(class) = self.classes.get_mut(&id) {
                class.bases = bases;
                class.open = open;
            }
        }
    }

    /// Types `self.attr` per class from its methods' `self.attr = Class(…)`, once. The class
    /// expression resolves like a call in the assigning method (its own imports included).
    fn type_attributes(&mut self) {
        let mut typed = Vec::new();
        for (f, file) in self.files.iter().enumerate() {
            for assign in &file.attributes {
                let Some(owner) = self.class_of(f, assign.chunk) else {
                    continue;
                };
                let class = assign.class.as_ref().and_then(|path| {
                    let parts: Vec<&str> = path.iter().map(String::as_str).collect();
                    match self.resolve_path(f, Some(assign.chunk), &parts) {
                        Entity::Class(c) => Some(c),
                        _ => None,
                    }
                });
                typed.push((owner, assign.attr.as_str(), class));
            }
        }
        for (owner, attr, class) in typed {
            if let Some(data) = self.classes.get_mut(&owner) {
                data.attributes
                    .entry(attr)
                    .and_modify(|known| {
                        if *known != class {
                            *known = None;
                        }
                    })
                    .or_insert(class);
            }
        }
    }

    /// Global id of chunk `local` of file `f`.
    pub fn global_id(&self, f: usize, local: u32) -> u32 {
        self.offsets[f] + local
    }

    /// What a call site refers to.
    pub fn resolve_call(&self, f: usize, owner: u32, site: &CallSite) -> Target {
        let name = site.name.as_str();
        match &site.receiver {
            Receiver::None => match self.resolve_name(f, Some(owner), name, 0) {
                // Only a plain call `f()` falls back to a repository-unique name. A call through
                // a receiver whose type is unknown (`x.run()`, `items[0].run()`, `self.run()`
                // on an external base class) is not resolved by its bare method name: that
                // would invent an edge.
                // A name neither defined nor imported in the file that is a builtin is the
                // builtin (`next(it)`, `max(xs)`), whatever the repository defines elsewhere.
                Entity::Unknown if is_builtin_function(name) => Target::Outside,
                Entity::Unknown => match self.unique.get(name).copied().flatten() {
                    Some(id) => Target::Chunk(id),
                    None => Target::Unknown,
                },
                entity => target(entity),
            },
            Receiver::Local => Target::Outside,
            // `self.m()`, `cls.m()`, and `self.attr.m()` through attributes typed in the class.
            Receiver::Path(path) if is_self_path(path) => {
                let mut class = self.class_of(f, owner);
                for attr in path.iter().skip(1) {
                    class = class.and_then(|c| self.attribute_class(c, attr));
                }
                match class {
                    Some(class) => {
                        self.method(class, name).map_or_else(|| self.missing(class, name), Target::Chunk)
                    }
                    None => Target::Unknown,
                }
            }
            Receiver::Path(path) => {
                let parts: Vec<&str> = path.iter().map(String::as_str).collect();
                match self.resolve_path(f, Some(owner), &parts) {
                    Entity::Class(class) => match self.member(Entity::Class(class), name, 0) {
                        Entity::Unknown => self.missing(class, name),
                        entity => target(entity),
                    },
                    base => target(self.member(base, name, 0)),
                }
            }
            // What `super()` does not find in the repository's bases is `object`'s or a
            // library base's.
            Receiver::Super => self
                .class_of(f, owner)
                .and_then(|class| self.classes.get(&class))
                .and_then(|data| data.bases.iter().find_map(|&base| self.method(base, name)))
                .map_or(Target::Outside, Target::Chunk),
            Receiver::Other => Target::Unknown,
        }
    }

    /// Method `name` not found in `class` or its bases: `object`'s or an outside base's, or a
    /// hole when every base is in the repository.
    fn missing(&self, class: u32, name: &str) -> Target {
        let open = self.mro(class).iter().any(|c| self.classes.get(c).is_some_and(|d| d.open));
        if open || is_dunder(name) {
            Target::Outside
        } else {
            Target::Unknown
        }
    }

    /// The class of `self.attr` in `class` (assigned in it or, first found, in a base).
    fn attribute_class(&self, class: u32, attr: &str) -> Option<u32> {
        self.mro(class)
            .iter()
            .find_map(|c| self.classes.get(c).and_then(|d| d.attributes.get(attr)))
            .copied()
            .flatten()
    }

    /// The class whose `self`/`cls` a chunk sees: a method's class, or a class itself.
    fn class_of(&self, f: usize, local: u32) -> Option<u32> {
        self.class_of.get((self.offsets[f] + local) as usize).copied().flatten()
    }

    /// Method `name` of a class or, depth-first left to right, of its bases.
    fn method(&self, class: u32, name: &str) -> Option<u32> {
        self.mro(class).iter().find_map(|c| self.classes.get(c)?.methods.get(name).copied())
    }

    /// A class and its in-repository bases, depth-first left to right, each once.
    fn mro(&self, class: u32) -> Vec<u32> {
        let mut seen = Vec::new();
        let mut stack = vec![class];
        while let Some(c) = stack.pop() {
            if seen.contains(&c) || seen.len() >= MAX_MRO {
                continue;
            }
            let Some(data) = self.classes.get(&c) else {
                continue;
            };
            seen.push(c);
            stack.extend(data.bases.iter().rev());
        }
        seen
    }

    fn entity_of(&self, id: u32) -> Entity {
        if self.classes.contains_key(&id) {
            Entity::Class(id)
        } else {
            Entity::Def(id)
        }
    }

    /// A plain name as seen from chunk `owner` of file `f` (`None`: file level).
    fn resolve_name(&self, f: usize, owner: Option<u32>, name: &str, depth: u32) -> Entity {
        if let Some(owner) = owner {
            let local = self.scoped[f]
                .get(&owner)
                .and_then(|imports| imports.iter().rev().find(|imp| imp.bound_name() == Some(name)));
            if let Some(import) = local {
                return self.resolve_import(f, import, depth);
            }
        }
        if let Some(&id) = self.defs[f].get(name) {
            return self.entity_of(id);
        }
        if let Some(import) = self.bindings[f].get(name) {
            return self.resolve_import(f, import, depth);
        }
        self.via_wildcards(f, name, depth)
    }

    /// `from m import *` in file `f` that brings in a repository definition `name`.
    fn via_wildcards(&self, f: usize, name: &str, depth: u32) -> Entity {
        if depth > MAX_WILDCARD_DEPTH {
            return Entity::Unknown;
        }
        for import in &self.wildcards[f] {
            if let Some(module) = self.import_module(f, import) {
                let found = self.member(self.module_entity(&module), name, depth + 1);
                if matches!(found, Entity::Def(_) | Entity::Class(_)) {
                    return found;
                }
            }
        }
        Entity::Unknown
    }

    fn import_module(&self, f: usize, import: &Import) -> Option<String> {
        if import.level == 0 {
            Some(import.module.clone())
        } else {
            resolve_relative(&self.files[f].path, import.level, &import.module)
        }
    }

    fn module_entity(&self, module: &str) -> Entity {
        if self.modules.is_known(module) {
            Entity::Module(module.to_string())
        } else {
            Entity::External
        }
    }

    fn resolve_import(&self, f: usize, import: &Import, depth: u32) -> Entity {
        let Some(module) = self.import_module(f, import) else {
            return Entity::Unknown;
        };
        match &import.what {
            Imported::Module if import.alias.is_some() => self.module_entity(&module),
            Imported::Module => self.module_entity(module.split('.').next().unwrap_or(&module)),
            Imported::Name(name) => self.member(self.module_entity(&module), name, depth + 1),
            Imported::All => Entity::Unknown,
        }
    }

    /// `a.b.c` from file `f`: the first name in scope, then attributes.
    fn resolve_path(&self, f: usize, owner: Option<u32>, parts: &[&str]) -> Entity {
        let Some((first, rest)) = parts.split_first() else {
            return Entity::Unknown;
        };
        let mut entity = self.resolve_name(f, owner, first, 0);
        for part in rest {
            entity = self.member(entity, part, 0);
        }
        entity
    }

    /// Attribute `name` of an entity.
    fn member(&self, entity: Entity, name: &str, depth: u32) -> Entity {
        if depth > MAX_DEPTH {
            return Entity::Unknown;
        }
        match entity {
            Entity::Module(module) => self.module_member(&module, name, depth),
            Entity::Class(class) => {
                if let Some(m) = self.method(class, name) {
                    Entity::Def(m)
                } else if let Some(&nested) = self.classes.get(&class).and_then(|c| c.nested.get(name)) {
                    Entity::Class(nested)
                } else {
                    Entity::Unknown
                }
            }
            Entity::External => Entity::External,
            Entity::Def(_) | Entity::Unknown => Entity::Unknown,
        }
    }

    fn module_member(&self, module: &str, name: &str, depth: u32) -> Entity {
        let file = self.modules.lookup(module);
        if let Some(f) = file {
            if let Some(&id) = self.defs[f].get(name) {
                return self.entity_of(id);
            }
            // Re-exported: `from .core import Symbol` in a package `__init__.py`.
            if let Some(import) = self.bindings[f].get(name) {
                let found = self.resolve_import(f, import, depth + 1);
                if found != Entity::Unknown {
                    return found;
                }
            }
        }
        let submodule = format!("{module}.{name}");
        if self.modules.is_known(&submodule) {
            return Entity::Module(submodule);
        }
        match file {
            Some(f) => self.via_wildcards(f, name, depth),
            None => Entity::Unknown,
        }
    }
}
