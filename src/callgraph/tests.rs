//! One test per resolution rule, on small inline repositories.

use super::*;
use crate::chunk::chunk_file;

struct Repo {
    files: Vec<FileSyntax>,
    graph: CallGraph,
}

impl Repo {
    fn new(sources: &[(&str, &str)]) -> Self {
        let files: Vec<FileSyntax> = sources.iter().map(|(path, src)| chunk_file(path, src)).collect();
        let graph = CallGraph::build(&files);
        Repo { files, graph }
    }

    fn keys(&self) -> Vec<String> {
        self.files.iter().flat_map(|f| f.chunks.iter().map(|c| c.key())).collect()
    }

    fn id(&self, key: &str) -> usize {
        let keys = self.keys();
        keys.iter().position(|k| k == key).unwrap_or_else(|| panic!("no chunk {key} in {keys:?}"))
    }

    /// Callees of `key` as `path::name` keys, in graph order.
    fn callees(&self, key: &str) -> Vec<String> {
        let keys = self.keys();
        self.graph.callees[self.id(key)].iter().map(|&i| keys[i as usize].clone()).collect()
    }

    fn callers(&self, key: &str) -> Vec<String> {
        let keys = self.keys();
        self.graph.callers[self.id(key)].iter().map(|&i| keys[i as usize].clone()).collect()
    }
}

#[test]
fn same_file_definition_wins_over_other_files() {
    let repo = Repo::new(&[
        ("a.py", "def helper():\n    pass\n\ndef main():\n    helper()\n"),
        ("b.py", "def helper():\n    pass\n"),
    ]);
    assert_eq!(repo.callees("a.py::main"), ["a.py::helper"]);
}

#[test]
fn from_import_with_alias_resolves_to_the_module_definition() {
    let repo = Repo::new(&[
        ("pkg/__init__.py", ""),
        ("pkg/util.py", "def tool():\n    pass\n"),
        ("other.py", "def tool():\n    pass\n"),
        ("app.py", "from pkg.util import tool as t\n\ndef run():\n    t()\n"),
    ]);
    assert_eq!(repo.callees("app.py::run"), ["pkg/util.py::tool"]);
}

#[test]
fn relative_imports_resolve_against_the_package() {
    let repo = Repo::new(&[
        ("pkg/__init__.py", ""),
        ("pkg/core.py", "def thing():\n    pass\n"),
        ("pkg/sub/__init__.py", ""),
        ("pkg/sub/helpers.py", "def h():\n    pass\n"),
        (
            "pkg/sub/mod.py",
            "from . import helpers\nfrom ..core import thing\n\ndef f():\n    helpers.h()\n    thing()\n",
        ),
        ("dup.py", "def h():\n    pass\n\ndef thing():\n    pass\n"),
    ]);
    assert_eq!(repo.callees("pkg/sub/mod.py::f"), ["pkg/sub/helpers.py::h", "pkg/core.py::thing"]);
}

#[test]
fn imported_module_attributes_resolve_with_and_without_alias() {
    let repo = Repo::new(&[
        ("a/__init__.py", ""),
        ("a/b.py", "def foo():\n    pass\n\ndef bar():\n    pass\n"),
        ("dup.py", "def foo():\n    pass\n\ndef bar():\n    pass\n"),
        ("use.py", "import a.b as mod\nimport a.b\n\ndef f():\n    mod.foo()\n    a.b.bar()\n"),
    ]);
    assert_eq!(repo.callees("use.py::f"), ["a/b.py::foo", "a/b.py::bar"]);
}

#[test]
fn src_layout_packages_resolve_by_package_name() {
    let repo = Repo::new(&[
        ("src/pkg/__init__.py", ""),
        ("src/pkg/mod.py", "def go():\n    pass\n"),
        ("tests/dup.py", "def go():\n    pass\n"),
        ("tests/test_mod.py", "from pkg.mod import go\n\ndef test_go():\n    go()\n"),
    ]);
    assert_eq!(repo.callees("tests/test_mod.py::test_go"), ["src/pkg/mod.py::go"]);
}

#[test]
fn package_reexports_are_followed() {
    let repo = Repo::new(&[
        ("lib/__init__.py", "from .core import Symbol\n"),
        ("lib/core.py", "class Symbol:\n    pass\n"),
        ("dup.py", "class Symbol:\n    pass\n"),
        ("use.py", "from lib import Symbol\n\ndef f():\n    return Symbol()\n"),
    ]);
    assert_eq!(repo.callees("use.py::f"), ["lib/core.py::Symbol"]);
}

#[test]
fn self_and_cls_calls_resolve_to_methods_of_the_class_and_its_bases() {
    let repo = Repo::new(&[
        ("base.py", "class Base:\n    def shared(self):\n        pass\n    def make(cls):\n        pass\n"),
        (
            "child.py",
            "from base import Base\n\nclass Child(Base):\n    def own(self):\n        pass\n    def run(self):\n        self.own()\n        self.shared()\n        cls.make()\n",
        ),
        ("dup.py", "def own():\n    pass\n\ndef shared():\n    pass\n\ndef make():\n    pass\n"),
    ]);
    assert_eq!(
        repo.callees("child.py::Child.run"),
        ["child.py::Child.own", "base.py::Base.shared", "base.py::Base.make"]
    );
}

#[test]
fn cyclic_bases_terminate_and_missing_methods_give_no_edge() {
    let repo = Repo::new(&[
        ("c.py", "class X(Y):\n    def a(self):\n        self.missing()\n\nclass Y(X):\n    def b(self):\n        self.a()\n"),
    ]);
    assert!(repo.callees("c.py::X.a").is_empty());
    assert_eq!(repo.callees("c.py::Y.b"), ["c.py::X.a"]);
}

#[test]
fn class_instantiation_links_the_class_chunk() {
    let repo = Repo::new(&[
        (
            "m.py",
            "class Point:\n    def __init__(self):\n        pass\n\ndef origin():\n    return Point()\n",
        ),
        ("n.py", "class Point:\n    pass\n"),
    ]);
    assert_eq!(repo.callees("m.py::origin"), ["m.py::Point"]);
}

#[test]
fn super_calls_resolve_to_the_base_method() {
    let repo = Repo::new(&[(
        "s.py",
        "class A:\n    def save(self):\n        pass\n\nclass B(A):\n    def save(self):\n        super().save()\n",
    )]);
    assert_eq!(repo.callees("s.py::B.save"), ["s.py::A.save"]);
}

#[test]
fn class_attribute_access_resolves_methods() {
    let repo = Repo::new(&[
        ("k.py", "class Cfg:\n    def load(cls):\n        pass\n"),
        ("dup.py", "def load():\n    pass\n"),
        ("u.py", "from k import Cfg\n\ndef f():\n    Cfg.load()\n"),
    ]);
    assert_eq!(repo.callees("u.py::f"), ["k.py::Cfg.load"]);
}

#[test]
fn a_plain_call_falls_back_to_a_repository_unique_name() {
    let repo =
        Repo::new(&[("a.py", "def frobnicate():\n    pass\n"), ("b.py", "def drive():\n    frobnicate()\n")]);
    assert_eq!(repo.callees("b.py::drive"), ["a.py::frobnicate"]);
}

#[test]
fn calls_through_unknown_receivers_are_dropped_not_resolved_by_the_bare_name() {
    // flask's `Flask.run` gained `greenlets[0].run()` and a Celery task's `self.run()` as callers.
    let repo = Repo::new(&[
        ("app.py", "class Flask:\n    def run(self):\n        pass\n\n    def pop(self):\n        pass\n"),
        ("tasks.py", "from celery import Task\n\nclass ContextTask(Task):\n    def __call__(self):\n        return self.run()\n"),
        ("t.py", "def test(greenlets, x, xs):\n    greenlets[0].run()\n    x.run()\n    make().run()\n    xs.pop()\n"),
        ("u.py", "from app import Flask\n\ndef g(app):\n    Flask.run(app)\n"),
    ]);
    assert!(repo.callees("tasks.py::ContextTask.__call__").is_empty());
    assert!(repo.callees("t.py::test").is_empty());
    assert_eq!(repo.callees("u.py::g"), ["app.py::Flask.run"], "a resolved receiver still links");
}

#[test]
fn ambiguous_and_unknown_names_give_no_edge() {
    let repo = Repo::new(&[
        ("a.py", "def run():\n    pass\n"),
        ("b.py", "def run():\n    pass\n"),
        ("c.py", "def go(x):\n    x.run()\n    len(x)\n    print(x)\n"),
    ]);
    assert!(repo.callees("c.py::go").is_empty());
    assert_eq!(repo.graph.edge_count(), 0);
}

#[test]
fn a_builtin_name_is_the_builtin_unless_the_file_defines_or_imports_it() {
    let repo = Repo::new(&[
        ("a.py", "def len(x):\n    pass\n"),
        ("b.py", "def f(x):\n    return len(x)\n"),
        ("c.py", "from a import len\n\ndef g(x):\n    return len(x)\n"),
        ("d.py", "def len(x):\n    pass\n\ndef h(x):\n    return len(x)\n"),
    ]);
    assert!(repo.callees("b.py::f").is_empty(), "Python's len, whatever a.py defines");
    assert_eq!(repo.callees("c.py::g"), ["a.py::len"], "imported");
    assert_eq!(repo.callees("d.py::h"), ["d.py::len"], "defined in the file");
}

#[test]
fn names_imported_from_outside_the_repository_are_never_guessed() {
    let repo = Repo::new(&[
        ("a.py", "def join(*parts):\n    pass\n"),
        ("b.py", "import os\nfrom os.path import join\n\ndef f():\n    join('a')\n    os.path.join('b')\n"),
    ]);
    assert!(repo.callees("b.py::f").is_empty());
}

#[test]
fn function_level_imports_shadow_module_definitions() {
    let repo = Repo::new(&[
        ("lib.py", "def parse():\n    pass\n"),
        ("m.py", "def parse():\n    pass\n\ndef f():\n    from lib import parse\n    parse()\n\ndef g():\n    parse()\n"),
    ]);
    assert_eq!(repo.callees("m.py::f"), ["lib.py::parse"]);
    assert_eq!(repo.callees("m.py::g"), ["m.py::parse"]);
}

#[test]
fn wildcard_imports_bring_in_repository_definitions() {
    let repo = Repo::new(&[
        ("shapes.py", "def area():\n    pass\n"),
        ("dup.py", "def area():\n    pass\n"),
        ("u.py", "from shapes import *\n\ndef f():\n    area()\n"),
    ]);
    assert_eq!(repo.callees("u.py::f"), ["shapes.py::area"]);
}

#[test]
fn edges_are_deduplicated_ordered_by_first_call_and_never_self() {
    let repo = Repo::new(&[(
        "o.py",
        "def a():\n    pass\n\ndef b():\n    pass\n\ndef rec(n):\n    b()\n    a()\n    b()\n    rec(n - 1)\n",
    )]);
    assert_eq!(repo.callees("o.py::rec"), ["o.py::b", "o.py::a"]);
    assert_eq!(repo.graph.edge_count(), 2);
}

#[test]
fn callers_are_the_reverse_of_callees() {
    let repo = Repo::new(&[(
        "r.py",
        "def leaf():\n    pass\n\ndef x():\n    leaf()\n\ndef y():\n    leaf()\n    x()\n",
    )]);
    assert_eq!(repo.callers("r.py::leaf"), ["r.py::x", "r.py::y"]);
    assert_eq!(repo.callers("r.py::x"), ["r.py::y"]);
    assert!(repo.callers("r.py::y").is_empty());
    let forward: usize = repo.graph.callees.iter().map(Vec::len).sum();
    let backward: usize = repo.graph.callers.iter().map(Vec::len).sum();
    assert_eq!(forward, backward);
}

#[test]
fn module_and_class_chunks_own_their_body_calls() {
    let repo = Repo::new(&[(
        "m.py",
        "def setup():\n    pass\n\ndef default():\n    pass\n\nclass C:\n    x = default()\n    def __init__(self):\n        setup()\n\nsetup()\n",
    )]);
    assert_eq!(repo.callees("m.py::<module>"), ["m.py::setup"]);
    assert_eq!(repo.callees("m.py::C"), ["m.py::default"]);
    assert_eq!(repo.callees("m.py::C.__init__"), ["m.py::setup"]);
}

#[test]
fn empty_input_builds_an_empty_graph() {
    let graph = CallGraph::build(&[]);
    assert_eq!(graph.edge_count(), 0);
    assert!(graph.callees.is_empty() && graph.callers.is_empty());
}

impl Repo {
    /// Unresolved calls of `key`, as the graph keeps them.
    fn unresolved(&self, key: &str) -> Vec<String> {
        self.graph.unresolved[self.id(key)].clone()
    }
}

#[test]
fn self_attribute_assigned_a_class_in_init_resolves_its_methods() {
    let repo = Repo::new(&[
        ("helper.py", "class Helper:\n    def run(self):\n        pass\n"),
        ("other.py", "class Other:\n    def run(self):\n        pass\n"),
        (
            "app.py",
            "from helper import Helper\n\nclass App:\n    def __init__(self):\n        self.helper = Helper()\n\n    def go(self):\n        self.helper.run()\n",
        ),
    ]);
    assert_eq!(repo.callees("app.py::App.go"), ["helper.py::Helper.run"]);
    assert!(repo.unresolved("app.py::App.go").is_empty());
    assert_eq!(repo.callers("helper.py::Helper.run"), ["app.py::App.go"]);
}

#[test]
fn self_attributes_resolve_through_bases_annotations_and_the_attribute_class_bases() {
    let repo = Repo::new(&[(
        "m.py",
        concat!(
            "class Base:\n    def run(self):\n        pass\n\n",
            "class Helper(Base):\n    pass\n\n",
            "class Owner:\n    def __init__(self, h):\n        self.helper = Helper()\n        self.typed: Helper = h\n        self.later = None\n\n",
            "    def setup(self):\n        self.later = Helper()\n\n",
            "class Child(Owner):\n    def go(self):\n        self.helper.run()\n        self.typed.run()\n        self.later.run()\n",
        ),
    )]);
    assert_eq!(repo.callees("m.py::Child.go"), ["m.py::Base.run"]);
    assert!(repo.unresolved("m.py::Child.go").is_empty());
}

#[test]
fn self_attributes_of_unknown_or_disagreeing_types_stay_unresolved() {
    let repo = Repo::new(&[(
        "m.py",
        concat!(
            "class A:\n    def run(self):\n        pass\n\n",
            "class B:\n    def run(self):\n        pass\n\n",
            "def make():\n    return A()\n\n",
            "class Owner:\n    def __init__(self, console):\n        self.console = console\n        self.made = make()\n        self.either = A()\n\n",
            "    def reset(self):\n        self.either = B()\n\n",
            "    def go(self):\n        self.console.print('x')\n        self.made.run()\n        self.either.run()\n",
        ),
    )]);
    assert!(repo.callees("m.py::Owner.go").is_empty(), "no edge is invented");
    assert_eq!(repo.unresolved("m.py::Owner.go"), ["self.console.print", "self.made.run", "self.either.run"]);
}

#[test]
fn unknown_receivers_are_listed_as_written_deduplicated_in_source_order() {
    let repo = Repo::new(&[
        ("a.py", "class Runner:\n    def run(self):\n        pass\n"),
        (
            "b.py",
            "def go(x, ctx, items):\n    x.run()\n    ctx.lookup_default('n')\n    x.run()\n    items[0].start()\n    callback()\n",
        ),
    ]);
    assert!(repo.callees("b.py::go").is_empty());
    assert_eq!(repo.unresolved("b.py::go"), ["x.run", "ctx.lookup_default", "….start", "callback"]);
}

#[test]
fn builtins_libraries_and_builtin_type_methods_are_not_listed() {
    let repo = Repo::new(&[
        ("a.py", "def helper():\n    pass\n"),
        (
            "b.py",
            concat!(
                "import os\nfrom click import echo\n\n",
                "def go(x, parts):\n    print(len(x))\n    isinstance(x, str)\n    raise ValueError(str(x))\n",
                "    os.path.join('a')\n    echo(x)\n    parts.append(x)\n    ', '.join(parts)\n    x.__enter__()\n",
                "    helper()\n    x.frob()\n",
            ),
        ),
    ]);
    assert_eq!(repo.callees("b.py::go"), ["a.py::helper"]);
    assert_eq!(repo.unresolved("b.py::go"), ["x.frob"]);
}

#[test]
fn methods_missing_from_a_class_are_listed_only_when_every_base_is_known() {
    let repo = Repo::new(&[(
        "m.py",
        concat!(
            "from unittest import TestCase\n\n",
            "class Closed(object):\n    def go(self):\n        self.missing()\n        super().__init__()\n        self.__class__()\n\n",
            "class Open(TestCase):\n    def go(self):\n        self.assertEqual(1, 1)\n        super().setUp()\n",
        ),
    )]);
    assert_eq!(repo.unresolved("m.py::Closed.go"), ["self.missing"]);
    assert!(repo.unresolved("m.py::Open.go").is_empty(), "inherited from outside the repository");
}

#[test]
fn functions_defined_inside_the_caller_are_its_own_not_a_unique_name_elsewhere() {
    let repo = Repo::new(&[
        ("a.py", "def inner():\n    pass\n"),
        ("b.py", "def outer():\n    def inner():\n        pass\n    inner()\n"),
    ]);
    assert!(repo.callees("b.py::outer").is_empty());
    assert!(repo.unresolved("b.py::outer").is_empty());
}

#[test]
fn unresolved_calls_are_capped_per_chunk() {
    let body: String = (0..MAX_UNRESOLVED + 5).map(|i| format!("    x.m{i}()\n")).collect();
    let repo = Repo::new(&[("a.py", &format!("def f(x):\n{body}"))]);
    let listed = repo.unresolved("a.py::f");
    assert_eq!(listed.len(), MAX_UNRESOLVED);
    assert_eq!(listed[0], "x.m0");
}

#[test]
fn unlinked_graphs_have_no_unresolved_calls() {
    let graph = CallGraph::unlinked(3);
    assert_eq!(graph.unresolved, vec![Vec::<String>::new(); 3]);
}

#[test]
fn a_bare_builtin_is_the_builtin_never_a_method_of_the_same_name() {
    let repo = Repo::new(&[
        ("it.py", "class Cycler:\n    def next(self):\n        pass\n\nclass Stats:\n    def max(self):\n        pass\n    def sum(self):\n        pass\n"),
        ("use.py", "def consume(it, xs):\n    next(it)\n    max(xs)\n    sum(xs)\n    helper()\n"),
        ("lib.py", "def helper():\n    pass\n"),
    ]);
    assert_eq!(repo.callees("use.py::consume"), ["lib.py::helper"], "a unique function still resolves");
    assert!(repo.callers("it.py::Cycler.next").is_empty());
    assert!(repo.callers("it.py::Stats.max").is_empty() && repo.callers("it.py::Stats.sum").is_empty());
    assert!(repo.graph.unresolved[repo.id("use.py::consume")].is_empty(), "builtins are no holes");
}

#[test]
fn a_bare_call_never_resolves_to_a_method_by_its_name() {
    let repo = Repo::new(&[
        ("a.py", "class Job:\n    def run_all(self):\n        pass\n"),
        ("b.py", "def go():\n    run_all()\n"),
    ]);
    assert!(repo.callees("b.py::go").is_empty(), "{:?}", repo.callees("b.py::go"));
}
