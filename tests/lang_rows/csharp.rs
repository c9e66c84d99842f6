//! C#'s row on its fixtures (`src/lang/fixtures/`).

use super::{calls, clean_fixture as fixture, expect};

#[test]
fn csharp_classes_constructors_properties_and_this_calls() {
    let file = fixture("Inventory.cs");
    expect(
        &file,
        &[
            ("<module>", "module", 1, 60, "using System;"),
            ("Inventory", "class", 6, 44, "/// <summary>Items on the shelves, by SKU.</summary>"),
            ("Inventory.Inventory", "method", 11, 14, "public class Inventory {"),
            ("Inventory.Total", "method", 18, 21, "public class Inventory {"),
            ("Inventory.Put", "method", 23, 27, "public class Inventory {"),
            ("Inventory.Add", "method", 29, 34, "public class Inventory {"),
            ("Inventory.Sum", "method", 36, 41, "public class Inventory {"),
            ("Inventory.Normalise", "method", 43, 43, "public class Inventory {"),
            ("Audit", "class", 46, 52, "public static class Audit"),
            ("Audit.Record", "method", 48, 51, "public static class Audit {"),
            ("IShelf", "class", 54, 57, "public interface IShelf"),
            ("Unit", "class", 59, 59, "public enum Unit { Piece, Box }"),
        ],
    );
    let class = &file.chunks[1].text;
    assert!(class.contains("Capacity = capacity;"), "the constructor stays whole: {class}");
    assert!(class.contains("public void Add(string sku, int n)\n        { ... }"), "bodies elided: {class}");
    assert!(!class.contains("Audit.Record(clean)"), "bodies elided: {class}");
    assert!(file.chunks[4].text.contains("[Obsolete(\"use Add\")]"), "attributes belong to their method");
    let files = [file];
    assert_eq!(calls(&files, "Inventory.Put").0, ["Inventory.Add"], "this.Add is the class's own");
    assert_eq!(
        calls(&files, "Inventory.Total").0,
        ["Inventory.Sum"],
        "a bare call inside a class: this implied"
    );
    let (callees, unresolved) = calls(&files, "Inventory.Add");
    assert_eq!(callees, ["Inventory.Normalise", "Audit.Record"]);
    assert!(unresolved.is_empty(), "library calls (counts.GetValueOrDefault) are no holes: {unresolved:?}");
}

/// Issue 70: a preprocessor line inside a class header (`#if NET5_0_OR_GREATER` before a
/// base list) never names the class; directives anywhere (`#region`, both branches of an
/// `#if`) leave the definitions around them whole.
#[test]
fn csharp_directives_in_a_class_header_do_not_rename_the_class() {
    let source = "using System;\n\nnamespace Dapper\n{\n    public static partial class SqlMapper\n    {\n        public partial class GridReader\n#if NET5_0_OR_GREATER\n            : IAsyncDisposable\n#endif\n        {\n            #region Reading\n            public T Read<T>() { return ReadImpl<T>(); }\n            #endregion\n\n#if DEBUG\n            private T ReadImpl<T>() { return default; }\n#else\n            private T ReadImpl<T>() { return default(T); }\n#endif\n        }\n    }\n}\n";
    let file = coret::chunk::chunk_file("Dapper/SqlMapper.GridReader.cs", source);
    let names: Vec<&str> = file.chunks.iter().map(|c| c.name.as_str()).collect();
    assert!(names.contains(&"SqlMapper.GridReader"), "{names:?}");
    assert!(names.contains(&"SqlMapper.GridReader.Read"), "{names:?}");
    assert!(!names.iter().any(|n| n.contains("NET5_0_OR_GREATER")), "{names:?}");
    let class = file.chunks.iter().find(|c| c.name == "SqlMapper.GridReader").unwrap();
    assert!(class.text.contains("#if NET5_0_OR_GREATER"), "texts come from the original: {}", class.text);
    assert_eq!((class.start_line, class.end_line), (7, 21));
}
