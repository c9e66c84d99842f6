//! C#: methods, constructors, properties with accessors, classes, structs, interfaces,
//! records and enums inside (file-scoped) namespaces; `this` implied in calls.
//! Grammar: `tree-sitter-c-sharp`, the tree-sitter organisation's own.

use tree_sitter::Node;

use super::super::rules::{function, named, CallForm, Member, Role, Rules, Syntax, Wrapper};
use super::super::spec::{Family, Lang, LangSpec, Reader};
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
    },
    is_test: csharp_test,
    test_attribute: no_test_attribute,
    is_builtin: no_builtins,
    implicit_self: true,
    family: Family::Dotnet,
    // Off: the module lift lowered hybrid MRR on the new rows' dev files (docs/RESULTS.md, session 33).
    lifts_module: false,
    mask: super::no_mask,
};

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
