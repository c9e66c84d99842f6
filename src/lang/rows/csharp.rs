//! C#: methods, constructors, properties with accessors, classes, structs, interfaces,
//! records and enums inside (file-scoped) namespaces; `this` implied in calls.
//! Grammar: `tree-sitter-c-sharp`, the tree-sitter organisation's own.

use tree_sitter::Node;

use super::super::rules::{function, named, CallForm, Member, Role, Rules, Syntax, Wrapper};
use super::super::spec::{Family, Lang, LangSpec, Reader};
use super::super::written::Written;
use super::{file_name, no_builtins, no_test_attribute};

pub(in crate::lang) const ROW: LangSpec = LangSpec {
    lang: Lang::CSharp,
    name: "C#",
    ids: &["csharp", "cs", "c#"],
    extensions: &["cs"],
    shares: &[],
    highlight_as: "cs",
    grammar: |_| tree_sitter_c_sharp::LANGUAGE.into(),
    reader: Reader::Rules,
    syntax: Syntax {
        role,
        calls: &[
            CallForm::Callee { kind: "invocation_expression", fields: &["function"] },
            CallForm::Callee { kind: "object_creation_expression", fields: &["type"] },
        ],
        members: &[
            Member { kind: "member_access_expression", object: &["expression"], name: "name" },
            Member { kind: "qualified_name", object: &["qualifier"], name: "name" },
        ],
        wrappers: &[Wrapper { kind: "generic_name", field: "" }],
        names: &["identifier"],
        selves: &["this"],
        self_words: &[],
        supers: &["base"],
        path_roots: &[],
        comments: &["comment"],
        leading: &["comment", "attribute_list"],
        attributes: &[],
        constructors: &[],
        constructor_is_type_name: true,
        not_a_call: super::no_exceptions,
        clauses: false,
        test_definition: super::no_test_definitions,
    },
    is_test: csharp_test,
    test_attribute: no_test_attribute,
    is_builtin: no_builtins,
    implicit_self: true,
    mixins: false,
    family: Family::Dotnet,
    module_anchors: &[],
    docstrings: false,
    mask: blank_directives,
    barrels: &[],
    stubs: &[],
    library_roots: &[],
    written: Written::DOTTED,
};

/// The source with its preprocessor directive lines (`#if NET5_0_OR_GREATER`, `#endif`,
/// `#region`, `#pragma warning disable …`) blanked byte for byte, so that none reaches the
/// grammar as code: tree-sitter-c-sharp reads a directive inside a class header
/// (`partial class GridReader` / `#if NET5_0_OR_GREATER` / `: IAsyncDisposable` / `#endif`)
/// as the class's name. Both branches of an `#if` stay, as the C rows keep them. `None`
/// when there is none.
fn blank_directives(src: &str) -> Option<String> {
    let mut masked: Option<Vec<u8>> = None;
    let mut offset = 0;
    for line in src.split_inclusive('\n') {
        let code = line.trim_start();
        if is_directive(code) {
            let start = offset + (line.len() - code.len());
            let end = offset + line.trim_end_matches(['\n', '\r']).len();
            masked.get_or_insert_with(|| src.as_bytes().to_vec())[start..end].fill(b' ');
        }
        offset += line.len();
    }
    // A directive line is blanked whole, multi-byte characters included: ASCII spaces.
    masked.map(|m| String::from_utf8(m).expect("whole lines blanked keep UTF-8"))
}

/// `#if X`, `# endif`, `#region Foo`: a line C# reads as a preprocessor directive.
fn is_directive(code: &str) -> bool {
    const DIRECTIVES: &[&str] = &[
        "if",
        "elif",
        "else",
        "endif",
        "define",
        "undef",
        "region",
        "endregion",
        "pragma",
        "nullable",
        "warning",
        "error",
        "line",
    ];
    let Some(rest) = code.strip_prefix('#') else { return false };
    let word: String =
        rest.trim_start_matches([' ', '\t']).chars().take_while(char::is_ascii_alphabetic).collect();
    DIRECTIVES.contains(&word.as_str())
}

/// `*Tests.cs`, `*Test.cs`, and test projects (`Foo.Tests/`, `Akka.Cluster.Tests.MultiNode/`,
/// `UnitTests.Shared/`).
fn csharp_test(path: &str) -> bool {
    let file = file_name(path);
    file.ends_with("Tests.cs")
        || file.ends_with("Test.cs")
        || path
            .split('/')
            .rev()
            .skip(1)
            .any(|d| d.split('.').any(|part| matches!(part, "Tests" | "Test" | "UnitTests")))
}

fn role<'t>(_: &Rules, node: Node<'t>, src: &str) -> Role<'t> {
    match node.kind() {
        "method_declaration"
        | "constructor_declaration"
        | "destructor_declaration"
        | "operator_declaration" => match node.child_by_field_name("body") {
            Some(_) => named(node, src, |name| function(name, node, node)),
            None => Role::Other,
        },
        // `public int Count { get { … } set { … } }`: its accessors are code an issue may be about.
        "property_declaration" => match node.child_by_field_name("accessors") {
            Some(accessors) if has_bodies(accessors) => named(node, src, |name| Role::Function {
                name,
                outer: node,
                body: Some(accessors),
                owner: None,
                self_name: None,
            }),
            _ => Role::Other,
        },
        "class_declaration"
        | "struct_declaration"
        | "interface_declaration"
        | "record_declaration"
        | "enum_declaration" => {
            named(node, src, |name| Role::Type { name, outer: node, body: node.child_by_field_name("body") })
        }
        _ => Role::Other,
    }
}

/// Whether an accessor list holds code (`get { … }`, `set => …`), not only `{ get; set; }`.
fn has_bodies(accessors: Node) -> bool {
    (0..accessors.named_child_count())
        .filter_map(|i| accessors.named_child(i))
        .any(|a| a.child_by_field_name("body").is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directive_lines_are_blanked_in_place_and_code_is_not() {
        let src = "class A\n#if NET5_0_OR_GREATER\r\n  : B\n  #  endif // done\n{ int x = a #b; }\n#regionÉtat\n#pragma warning disable CS1591";
        let masked = blank_directives(src).expect("directives to blank");
        assert_eq!(masked.len(), src.len(), "byte offsets kept");
        let lines: Vec<&str> = masked.split('\n').collect();
        assert_eq!(lines.len(), src.split('\n').count(), "lines kept");
        assert_eq!(lines[0], "class A");
        assert_eq!(lines[1].trim(), "", "`#if` blanked, its `\\r` kept");
        assert!(lines[1].ends_with('\r'));
        assert_eq!(lines[2], "  : B");
        assert_eq!(lines[3].trim(), "", "`#  endif` with a comment");
        assert_eq!(lines[4], "{ int x = a #b; }", "a `#` inside code is no directive");
        assert_eq!(lines[5].trim(), "", "a region named in non-ASCII");
        assert_eq!(lines[6].trim(), "", "the last line, no newline");
        assert_eq!(blank_directives("class A { string s = \"#if\"; }\n#hashtag\n"), None);
    }

    /// Nested `#if`s, unbalanced ones and directives in odd places (inside an argument list,
    /// a string, at the end of the file) are blanked line by line: never a panic or a hang.
    #[test]
    fn nested_and_unbalanced_directives_anywhere_stay_safe() {
        let src = "class C {\n  void M(int a,\n#if A\n#if B\n    int b,\n#elif C\n#else\n#endif\n    int c) { var s = @\"\n#endregion\n\"; }\n#endif\n#endif\n}\n#if";
        let masked = blank_directives(src).unwrap();
        assert_eq!(masked.len(), src.len());
        assert!(!masked.contains('#'), "{masked}");
        let file = crate::chunk::chunk_file("C.cs", src);
        assert!(file.chunks.iter().all(|c| src.get(c.start_byte..c.end_byte).is_some()));
        assert!(file.chunks.iter().any(|c| c.name == "C.M"), "{:?}", file.chunks);
    }
}
