//! Chunking rules, pinned on small inline sources.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;

fn names(fs: &FileSyntax) -> Vec<(&str, ChunkKind)> {
    fs.chunks.iter().map(|c| (c.name.as_str(), c.kind)).collect()
}

fn chunk<'a>(fs: &'a FileSyntax, name: &str) -> &'a Chunk {
    fs.chunks.iter().find(|c| c.name == name).unwrap_or_else(|| panic!("no chunk {name}: {:?}", names(fs)))
}

fn call_names(fs: &FileSyntax, name: &str) -> Vec<String> {
    let i = fs.chunks.iter().position(|c| c.name == name).unwrap();
    fs.calls[i].iter().map(|c| c.name.clone()).collect()
}

const FUNCTIONS: &str = "import os


@decorator
@other(1)
def f(a, b=2):
    return g(a)


async def h():
    await f(1, 2)
";

#[test]
fn functions_start_at_their_first_decorator() {
    let fs = chunk_file("m.py", FUNCTIONS);
    assert_eq!(
        names(&fs),
        vec![("<module>", ChunkKind::Module), ("f", ChunkKind::Function), ("h", ChunkKind::Function)]
    );
    let f = chunk(&fs, "f");
    assert_eq!(f.text, "m.py\n@decorator\n@other(1)\ndef f(a, b=2):\n    return g(a)");
    assert_eq!((f.start_line, f.end_line), (4, 7));
    assert_eq!(f.start_byte, FUNCTIONS.find("@decorator").unwrap());
    assert_eq!(&FUNCTIONS[f.start_byte..f.end_byte], &f.text["m.py\n".len()..]);
    let h = chunk(&fs, "h");
    assert_eq!(h.text, "m.py\nasync def h():\n    await f(1, 2)");
    assert_eq!((h.start_line, h.end_line), (10, 11));
    assert_eq!(call_names(&fs, "f"), ["other", "g"], "decorator calls belong to the def");
    assert!(!fs.has_syntax_errors);
}

#[test]
fn module_chunk_spans_the_file_and_holds_only_non_definitions() {
    let fs = chunk_file("m.py", FUNCTIONS);
    let module = &fs.chunks[0];
    assert_eq!(module.text, "m.py\nimport os");
    assert_eq!((module.start_byte, module.end_byte), (0, FUNCTIONS.len()));
    assert_eq!((module.start_line, module.end_line), (1, 11));
    assert_eq!(module.location(), "m.py · module-level code", "not a hit on lines 1-11, the whole file");
    assert_eq!(
        chunk(&fs, "f").location(),
        format!("m.py:{}-{}", chunk(&fs, "f").start_line, chunk(&fs, "f").end_line)
    );
}

const CLASS: &str = r#"import attr


@dataclass
class Foo(Base, metaclass=Meta):
    '''Doc string.'''
    x = 1
    # a comment
    BIG = {
        1: 2,
        3: 4,
        5: 6,
        7: 8,
    }

    def __init__(self, a):
        # keep me
        self.a = a

    @property
    def value(self) -> int:
        return self.a

    async def run(self,
                  b):
        await go(b)

    class Inner:
        """Inner doc."""
        def m(self): return 1
"#;

#[test]
fn class_chunk_is_header_docstring_short_attributes_init_and_signatures() {
    let fs = chunk_file("pkg/foo.py", CLASS);
    let expected = "pkg/foo.py
@dataclass
class Foo(Base, metaclass=Meta):
    '''Doc string.'''
    x = 1
    def __init__(self, a):
        # keep me
        self.a = a
    @property
    def value(self) -> int:
        ...
    async def run(self,
                  b):
        ...
    class Inner:
        ...";
    assert_eq!(chunk(&fs, "Foo").text, expected);
    let foo = chunk(&fs, "Foo");
    assert_eq!((foo.start_line, foo.end_line), (4, 30));
}

#[test]
fn methods_and_nested_classes_are_qualified_and_in_source_order() {
    let fs = chunk_file("pkg/foo.py", CLASS);
    assert_eq!(
        names(&fs),
        vec![
            ("<module>", ChunkKind::Module),
            ("Foo", ChunkKind::Class),
            ("Foo.__init__", ChunkKind::Method),
            ("Foo.value", ChunkKind::Method),
            ("Foo.run", ChunkKind::Method),
            ("Foo.Inner", ChunkKind::Class),
            ("Foo.Inner.m", ChunkKind::Method),
        ]
    );
    assert_eq!(fs.classes.len(), 2);
    assert_eq!(fs.classes[0], ClassInfo { name: "Foo".into(), chunk: 1, bases: vec!["Base".into()] });
    assert_eq!(fs.classes[1].name, "Foo.Inner");
}

#[test]
fn method_chunk_is_class_line_plus_method_source() {
    let fs = chunk_file("pkg/foo.py", CLASS);
    let value = chunk(&fs, "Foo.value");
    assert_eq!(
        value.text,
        "pkg/foo.py\nclass Foo(Base, metaclass=Meta):\n    @property\n    def value(self) -> int:\n        return self.a"
    );
    assert_eq!((value.start_line, value.end_line), (20, 22));
    assert_eq!(
        chunk(&fs, "Foo.run").text,
        "pkg/foo.py\nclass Foo(Base, metaclass=Meta):\n    async def run(self,\n                  b):\n        await go(b)"
    );
    assert_eq!(
        chunk(&fs, "Foo.Inner.m").text,
        "pkg/foo.py\n    class Inner:\n        def m(self): return 1",
        "nested: the innermost class line, indentation kept"
    );
    assert_eq!(
        chunk(&fs, "Foo.Inner").text,
        "pkg/foo.py\n    class Inner:\n        \"\"\"Inner doc.\"\"\"\n        def m(self):\n            ...",
        "a one-line body is elided one level deeper than its def"
    );
}

#[test]
fn docstrings_of_every_quote_style_are_kept() {
    for doc in [r#"r"""Raw doc.""""#, "'single'", "\"double\"", "'''triple'''", "u'prefixed'"] {
        let src = format!("class A:\n    {doc}\n    def m(self):\n        pass\n");
        let fs = chunk_file("a.py", &src);
        assert_eq!(chunk(&fs, "A").text, format!("a.py\nclass A:\n    {doc}\n    def m(self):\n        ..."));
    }
}

#[test]
fn long_class_attributes_are_dropped_but_a_long_docstring_is_kept() {
    let src = "class A:\n    \"\"\"L1\n    L2\n    L3\n    L4\n    L5\n    L6\n    \"\"\"\n    T = [\n        1,\n        2,\n        3,\n        4,\n        5,\n    ]\n    s = 'short'\n";
    let fs = chunk_file("a.py", src);
    assert_eq!(
        chunk(&fs, "A").text,
        "a.py\nclass A:\n    \"\"\"L1\n    L2\n    L3\n    L4\n    L5\n    L6\n    \"\"\"\n    s = 'short'"
    );
}

#[test]
fn one_line_class_bodies_get_their_own_indented_line() {
    let fs = chunk_file("o.py", "class E(Exception): pass\n\nclass F: x = 1; y = 2\n");
    assert_eq!(chunk(&fs, "E").text, "o.py\nclass E(Exception):\n    pass");
    assert_eq!(chunk(&fs, "F").text, "o.py\nclass F:\n    x = 1\n    y = 2");
}

#[test]
fn tab_indented_methods_keep_their_tabs() {
    let fs = chunk_file("t.py", "class T:\n\tdef m(self):\n\t\treturn 1\n");
    assert_eq!(chunk(&fs, "T").text, "t.py\nclass T:\n\tdef m(self):\n\t\t...");
    assert_eq!(chunk(&fs, "T.m").text, "t.py\nclass T:\n\tdef m(self):\n\t\treturn 1");
}

#[test]
fn property_getter_and_setter_are_both_method_chunks() {
    let src = "class C:\n    @property\n    def x(self):\n        return self._x\n\n    @x.setter\n    def x(self, v):\n        self._x = v\n";
    let fs = chunk_file("c.py", src);
    let xs: Vec<&Chunk> = fs.chunks.iter().filter(|c| c.name == "C.x").collect();
    assert_eq!(xs.len(), 2);
    assert!(xs.iter().all(|c| c.kind == ChunkKind::Method));
    assert_eq!((xs[1].start_line, xs[1].end_line), (6, 8));
    assert!(xs[1].text.ends_with("    @x.setter\n    def x(self, v):\n        self._x = v"));
}

#[test]
fn nested_functions_and_local_classes_stay_in_their_function() {
    let src = "def outer():\n    def inner():\n        return leaf()\n    class Local:\n        def m(self): pass\n    return inner()\n";
    let fs = chunk_file("n.py", src);
    assert_eq!(names(&fs), vec![("outer", ChunkKind::Function)]);
    assert_eq!(call_names(&fs, "outer"), ["leaf", "inner"]);
    assert!(fs.classes.is_empty());
}

#[test]
fn module_chunk_lists_top_level_statements_and_hoists_guarded_defs() {
    let src = r#""""Module doc."""
import os
from . import sibling

X = compute()

try:
    import fast
except ImportError:
    def fast_path(x):
        return x

def main():
    helper()

if __name__ == "__main__":
    main()
"#;
    let fs = chunk_file("m.py", src);
    assert_eq!(
        names(&fs),
        vec![
            ("<module>", ChunkKind::Module),
            ("fast_path", ChunkKind::Function),
            ("main", ChunkKind::Function)
        ]
    );
    assert_eq!(
        fs.chunks[0].text,
        "m.py\n\"\"\"Module doc.\"\"\"\nimport os\nfrom . import sibling\nX = compute()\ntry:\n    import fast\nexcept ImportError:\nif __name__ == \"__main__\":\n    main()"
    );
    assert_eq!(chunk(&fs, "fast_path").text, "m.py\n    def fast_path(x):\n        return x");
    assert_eq!((chunk(&fs, "fast_path").start_line, chunk(&fs, "fast_path").end_line), (10, 11));
    assert_eq!(call_names(&fs, "<module>"), ["compute", "main"]);
    assert_eq!(call_names(&fs, "main"), ["helper"]);
}

#[test]
fn no_module_chunk_when_the_file_is_only_definitions() {
    let fs = chunk_file("d.py", "# just a comment\ndef a():\n    pass\n");
    assert_eq!(names(&fs), vec![("a", ChunkKind::Function)]);
    assert_eq!(fs.calls.len(), 1);
}

#[test]
fn spans_end_on_the_last_code_line_not_on_following_comments() {
    let src = "def a():\n    return 1\n# about b\n\ndef b():\n    pass\n";
    let fs = chunk_file("s.py", src);
    let a = chunk(&fs, "a");
    assert_eq!((a.start_line, a.end_line), (1, 2));
    assert_eq!(&src[a.start_byte..a.end_byte], "def a():\n    return 1");
    let b = chunk(&fs, "b");
    assert_eq!((b.start_line, b.end_line), (5, 6));
}

#[test]
fn class_methods_inside_if_blocks_are_methods_and_elided_in_the_class() {
    let src = "class A:\n    if PY3:\n        def m(self):\n            return 1\n    else:\n        def m(self):\n            return 2\n";
    let fs = chunk_file("a.py", src);
    assert_eq!(
        names(&fs),
        vec![("A", ChunkKind::Class), ("A.m", ChunkKind::Method), ("A.m", ChunkKind::Method)]
    );
    assert_eq!(
        chunk(&fs, "A").text,
        "a.py\nclass A:\n    if PY3:\n        def m(self):\n            ...\n    else:\n        def m(self):\n            ..."
    );
}

#[test]
fn call_sites_record_their_receiver() {
    let src = "def f():\n    foo()\n    a.b.c()\n    self.m()\n    super().n()\n    super(C, self).o()\n    g().h()\n    x[0]()\n";
    let fs = chunk_file("r.py", src);
    let sites: Vec<(&str, &Receiver, u32)> =
        fs.calls[0].iter().map(|c| (c.name.as_str(), &c.receiver, c.line)).collect();
    let path = |p: &[&str]| Receiver::Path(p.iter().map(|s| s.to_string()).collect());
    assert_eq!(
        sites,
        vec![
            ("foo", &Receiver::None, 2),
            ("c", &path(&["a", "b"]), 3),
            ("m", &path(&["self"]), 4),
            ("n", &Receiver::Super, 5),
            ("o", &Receiver::Super, 6),
            ("g", &Receiver::None, 7),
            ("h", &Receiver::Other, 7),
        ]
    );
}

#[test]
fn imports_record_level_module_name_alias_and_scope() {
    let src = "import a.b\nimport a.b as ab, c\nfrom . import x\nfrom ..pkg.mod import y as z\nfrom m import *\ndef f():\n    from q import r\n";
    let fs = chunk_file("p/i.py", src);
    let imp = |level, module: &str, what, alias: Option<&str>, scope| Import {
        level,
        module: module.into(),
        what,
        alias: alias.map(String::from),
        scope,
    };
    assert_eq!(
        fs.imports,
        vec![
            imp(0, "a.b", Imported::Module, None, None),
            imp(0, "a.b", Imported::Module, Some("ab"), None),
            imp(0, "c", Imported::Module, None, None),
            imp(1, "", Imported::Name("x".into()), None, None),
            imp(2, "pkg.mod", Imported::Name("y".into()), Some("z"), None),
            imp(0, "m", Imported::All, None, None),
            imp(0, "q", Imported::Name("r".into()), None, Some(1)),
        ]
    );
}

#[test]
fn class_bases_keep_dotted_names_and_drop_keywords() {
    let fs = chunk_file("b.py", "class A(b.Base, Generic[T], metaclass=M, *mixins):\n    pass\n");
    assert_eq!(fs.classes[0].bases, ["b.Base", "Generic"]);
}

#[test]
fn syntax_errors_still_yield_the_recoverable_chunks() {
    let src = "def good():\n    return 1\n\ndef broken(:\n    pass\n\nclass K:\n    def m(self):\n        return 2\n";
    let fs = chunk_file("e.py", src);
    assert!(fs.has_syntax_errors);
    let found: Vec<&str> = fs.chunks.iter().map(|c| c.name.as_str()).collect();
    for name in ["good", "K", "K.m"] {
        assert!(found.contains(&name), "{name} missing from {found:?}");
    }
}

/// Structural promises every output keeps, whatever the input.
fn check_invariants(path: &str, src: &str, fs: &FileSyntax) {
    assert_eq!(fs.calls.len(), fs.chunks.len());
    for c in &fs.chunks {
        assert!(c.start_byte <= c.end_byte && c.end_byte <= src.len(), "{c:?}");
        assert!(1 <= c.start_line && c.start_line <= c.end_line, "{c:?}");
        assert!(c.text.starts_with(&format!("{path}\n")));
    }
    for imp in &fs.imports {
        assert!(imp.scope.is_none_or(|s| (s as usize) < fs.chunks.len()));
    }
}

#[test]
fn never_panics_on_truncated_or_random_sources() {
    let sample = format!("{FUNCTIONS}\n{CLASS}\n# ünïcode ✓\nclass Z(A.B):\n    x = '''é\n");
    for end in (0..=sample.len()).filter(|&i| sample.is_char_boundary(i)) {
        let src = &sample[..end];
        check_invariants("t.py", src, &chunk_file("t.py", src));
    }
    let alphabet: Vec<char> = "def class async @ ( ) : , . = \n    \t'\"#[]{}xyzé\\_0".chars().collect();
    let mut rng = StdRng::seed_from_u64(7);
    for _ in 0..300 {
        let len = rng.random_range(0..400);
        let src: String = (0..len).map(|_| alphabet[rng.random_range(0..alphabet.len())]).collect();
        check_invariants("r.py", &src, &chunk_file("r.py", &src));
    }
}

#[test]
fn empty_file_has_no_chunks() {
    let fs = chunk_file("e.py", "");
    assert!(fs.chunks.is_empty() && !fs.has_syntax_errors);
}

const OVERLOADS: &str = "from typing import overload
import typing


class Session:
    @overload
    def get(self, key: str) -> str: ...
    @typing.overload
    def get(self, key: int) -> int: ...
    def get(self, key):
        return self.data[key]


@overload
def parse(x: str) -> str: ...
def parse(x):
    return x
";

/// `@overload` stubs are signatures of the implementation below them: one hit, whose text
/// lists the signatures before the code (reported: lines 136, 138 and 141 as three hits).
#[test]
fn overload_stubs_fold_into_their_implementation() {
    let fs = chunk_file("m.py", OVERLOADS);
    assert_eq!(
        names(&fs),
        vec![
            ("<module>", ChunkKind::Module),
            ("Session", ChunkKind::Class),
            ("Session.get", ChunkKind::Method),
            ("parse", ChunkKind::Function)
        ]
    );
    let get = chunk(&fs, "Session.get");
    assert_eq!((get.start_line, get.end_line), (10, 11), "the span is the implementation's");
    assert!(get.text.contains("def get(self, key: str) -> str: ...") && get.text.contains("key: int"));
    assert!(get.text.ends_with("def get(self, key):\n        return self.data[key]"), "{}", get.text);
    let parse = chunk(&fs, "parse");
    assert_eq!(parse.text, "m.py\n@overload\ndef parse(x: str) -> str: ...\ndef parse(x):\n    return x");
}

#[test]
fn self_attribute_assignments_are_recorded_with_their_class_expression() {
    let src = concat!(
        "class C:\n    def __init__(self, c):\n        self.a = pkg.Helper(1)\n        self.b: Typed = c\n",
        "        self.n = None\n        self.u = c\n        self.x = self.y = Made()\n        other.z = Z()\n",
        "        def inner():\n            self.i = I()\n",
        "\ndef f(self):\n    self.f = F()\n",
    );
    let fs = chunk_file("a.py", src);
    let init = fs.chunks.iter().position(|c| c.name == "C.__init__").unwrap() as u32;
    let got: Vec<(u32, &str, Option<String>)> = fs
        .attributes
        .iter()
        .map(|a| (a.chunk, a.attr.as_str(), a.class.as_ref().map(|p| p.join("."))))
        .collect();
    let some = |s: &str| Some(s.to_string());
    assert_eq!(
        got,
        vec![
            (init, "a", some("pkg.Helper")),
            (init, "b", some("Typed")),
            (init, "u", None),
            (init, "x", some("Made")),
            (init, "y", some("Made")),
            (init, "i", some("I")),
        ]
    );
}

#[test]
fn calls_to_definitions_inside_a_chunk_are_local() {
    let src = "def outer():\n    helper()\n    def helper():\n        pass\n    class K:\n        pass\n    K()\n    other()\n";
    let fs = chunk_file("a.py", src);
    let sites: Vec<(&str, &Receiver)> = fs.calls[0].iter().map(|c| (c.name.as_str(), &c.receiver)).collect();
    assert_eq!(
        sites,
        vec![("helper", &Receiver::Local), ("K", &Receiver::Local), ("other", &Receiver::None)]
    );
}

#[test]
fn long_module_code_is_cut_into_windows_in_every_language() {
    for (path, line) in
        [("m.py", "X{i} = {i}\n"), ("m.rs", "const X{i}: u32 = {i};\n"), ("m.go", "var x{i} = {i}\n")]
    {
        let mut src = String::new();
        if path.ends_with(".go") {
            src.push_str("package m\n");
        }
        for i in 0..90 {
            src.push_str(&line.replace("{i}", &i.to_string()));
        }
        let fs = chunk_file(path, &src);
        let windows: Vec<&Chunk> = fs.chunks.iter().filter(|c| c.kind == ChunkKind::Window).collect();
        assert_eq!(windows.len(), 3, "{path}: {:?}", names(&fs));
        assert_eq!(fs.calls.len(), fs.chunks.len());
        let total = src.lines().count();
        assert_eq!((windows[0].start_line, windows[2].end_line), (1, total), "{path}");
        assert!(windows.windows(2).all(|w| w[0].end_line + 1 == w[1].start_line), "{path}: windows tile");
        assert_eq!(windows[1].name, format!("<module>:{}-{}", windows[1].start_line, windows[1].end_line));
        assert!(windows[1].text.starts_with(&format!("{path}\n")), "{path}");
        assert_eq!(fs.chunks[0].kind, ChunkKind::Module, "{path}: the module chunk stays");
    }
    let short = chunk_file("s.rs", "use a;\nconst X: u8 = 1;\nfn f() {}\n");
    assert!(short.chunks.iter().all(|c| c.kind != ChunkKind::Window), "{:?}", names(&short));
}

#[test]
fn a_ten_thousand_line_function_is_one_chunk() {
    for (path, head, line, tail) in [
        ("big.py", "def big():\n", "    x = x + 1\n", ""),
        ("big.rs", "fn big() {\n", "    x += 1;\n", "}\n"),
        ("big.c", "void big(void) {\n", "    x += 1;\n", "}\n"),
    ] {
        let src = format!("{head}{}{tail}", line.repeat(10_000));
        let fs = chunk_file(path, &src);
        assert_eq!(names(&fs), [("big", ChunkKind::Function)], "{path}: no windows inside functions");
        assert_eq!(fs.chunks[0].end_line, src.lines().count(), "{path}");
    }
}

#[test]
fn a_name_is_called_by_its_own_part_without_elixirs_arity() {
    use crate::chunk::{named_arity, own_name, without_arity};
    assert_eq!(own_name("Bank.Ledger.open/3"), "open");
    assert_eq!(own_name("Outer.Inner.m"), "m");
    assert_eq!(without_arity("Bank.Ledger.open/3"), "Bank.Ledger.open");
    assert_eq!(without_arity("<module>:1-40"), "<module>:1-40");
    assert_eq!((named_arity("Bank.Ledger.open/3"), named_arity("Cart.total")), (Some(3), None));
}
