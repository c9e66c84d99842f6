//! Haskell: top-level functions and bindings (a function's equations one chunk, its type
//! signature and Haddock above it), data types, newtypes, synonyms, type classes (their default
//! methods theirs) and instances (their methods the instance type's); calls by application,
//! qualified (`Map.lookup`) or in backticks.
//! Grammar: `tree-sitter-haskell`, tree-sitter's own.

use tree_sitter::Node;

use super::super::rules::{function, named, type_name, CallForm, Member, Role, Rules, Syntax, Wrapper};
use super::super::spec::{Family, Lang, LangSpec, Reader};
use super::super::written::Written;
use super::{file_name, has_dir, no_exceptions, no_mask, no_test_attribute};

pub(in crate::lang) const ROW: LangSpec = LangSpec {
    lang: Lang::Haskell,
    name: "Haskell",
    ids: &["haskell", "hs"],
    extensions: &["hs"],
    shares: &[],
    highlight_as: "hs",
    grammar: |_| tree_sitter_haskell::LANGUAGE.into(),
    reader: Reader::Rules,
    syntax: Syntax {
        role,
        calls: &[
            // `f x y` is `(f x) y`: the innermost application names the function.
            CallForm::Callee { kind: "apply", fields: &["function"] },
            CallForm::Callee { kind: "infix", fields: &["operator"] },
        ],
        members: &[Member { kind: "qualified", object: &["module"], name: "id" }],
        wrappers: &[Wrapper { kind: "infix_id", field: "" }],
        names: &["variable", "module"],
        selves: &[],
        self_words: &[],
        supers: &[],
        path_roots: &[],
        comments: &["comment", "haddock"],
        leading: &["comment", "haddock", "signature", "pragma"],
        attributes: &[],
        constructors: &[],
        constructor_is_type_name: false,
        not_a_call: no_exceptions,
        clauses: true,
        test_definition: super::no_test_definitions,
    },
    is_test: haskell_test,
    test_attribute: no_test_attribute,
    is_builtin: prelude,
    implicit_self: false,
    mixins: false,
    family: Family::Haskell,
    module_anchors: &[],
    docstrings: false,
    mask: no_mask,
    barrels: &[],
    stubs: &[],
    library_roots: &[],
    written: Written::DOTTED,
};

/// Hspec's `spec/` and `*Spec.hs`, and `*Test.hs` / `*Tests.hs`, beside the shared `test/`.
fn haskell_test(path: &str) -> bool {
    let file = file_name(path);
    has_dir(path, &["spec"]) || ["Spec.hs", "Test.hs", "Tests.hs"].iter().any(|end| file.ends_with(end))
}

/// The Prelude's and base's everyday functions: never the repository's, never a hole.
fn prelude(name: &str, with_receiver: bool) -> bool {
    const PRELUDE: &[&str] = &[
        "concat",
        "concatMap",
        "const",
        "curry",
        "div",
        "either",
        "elem",
        "error",
        "filter",
        "flip",
        "fmap",
        "foldl",
        "foldr",
        "forM",
        "forM_",
        "fromIntegral",
        "fromMaybe",
        "fst",
        "head",
        "id",
        "length",
        "lines",
        "lookup",
        "map",
        "mapM",
        "mapM_",
        "max",
        "maybe",
        "min",
        "mod",
        "not",
        "notElem",
        "null",
        "otherwise",
        "pure",
        "print",
        "putStr",
        "putStrLn",
        "read",
        "realToFrac",
        "replicate",
        "return",
        "reverse",
        "show",
        "snd",
        "sum",
        "tail",
        "take",
        "throwIO",
        "traverse",
        "uncurry",
        "undefined",
        "unless",
        "unlines",
        "unwords",
        "void",
        "when",
        "words",
        "zip",
        "zipWith",
    ];
    !with_receiver && PRELUDE.contains(&name)
}

fn role<'t>(_: &Rules, node: Node<'t>, src: &str) -> Role<'t> {
    match node.kind() {
        "function" | "bind" => named(node, src, |name| function(name, node, node)),
        "data_type" | "newtype" | "type_synonym" | "type_family" | "data_family" => {
            named(node, src, |name| Role::Type { name, outer: node, body: None })
        }
        "class" => named(node, src, |name| Role::Type {
            name,
            outer: node,
            body: node.child_by_field_name("declarations"),
        }),
        // `instance Show Item where …`: its methods are `Item`'s.
        "instance" => {
            let ty = node
                .child_by_field_name("patterns")
                .and_then(|p| p.named_child(0))
                .and_then(|t| type_name(t, src));
            match (ty, node.child_by_field_name("declarations")) {
                (Some(type_name), Some(body)) => Role::Impl { type_name, outer: node, body },
                _ => Role::Other,
            }
        }
        _ => Role::Other,
    }
}
