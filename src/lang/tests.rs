use super::*;

#[test]
fn every_extension_has_one_language_and_headers_parse_as_cpp() {
    for (path, lang) in [
        ("a/b.py", Lang::Python),
        ("src/lib.rs", Lang::Rust),
        ("server.go", Lang::Go),
        ("lib/index.js", Lang::JavaScript),
        ("lib/index.MJS", Lang::JavaScript),
        ("app/view.tsx", Lang::TypeScript),
        ("src/main/java/A.java", Lang::Java),
        ("lib/zstd.c", Lang::C),
        ("include/fmt/format.h", Lang::Cpp),
        ("src/x.hpp", Lang::Cpp),
        ("src/Server/Program.cs", Lang::CSharp),
        ("lib/rails/app.rb", Lang::Ruby),
        ("Rakefile.rake", Lang::Ruby),
        ("src/Http/Kernel.php", Lang::Php),
        ("app/src/main/kotlin/Main.kt", Lang::Kotlin),
        ("Sources/App/View.swift", Lang::Swift),
        ("core/src/main/scala/Foo.scala", Lang::Scala),
    ] {
        assert_eq!(lang_of_path(path), Some(lang), "{path}");
    }
    for path in ["README.md", "Makefile", ".py", "a/b.lua", "x.pyc", "build.gradle.kts", "foo.gemspec"] {
        assert_eq!(lang_of_path(path), None, "{path}");
    }
}

#[test]
fn each_ecosystem_marks_its_own_test_files() {
    for path in [
        "tests/test_a.py",
        "pkg/tests/helpers.py",
        "test_x.py",
        "conftest.py",
        "tokio/tests/io_read.rs",
        "benches/b.rs",
        "clientconn_test.go",
        "internal/testdata/x.go",
        "src/plugin/utc.test.js",
        "src/__tests__/a.ts",
        "app/x.spec.tsx",
        "src/test/java/com/x/ParserTest.java",
        "src/main/java/com/x/ParserTests.java",
        "tests/fuzzer.c",
        "test/format-test.cc",
        "lib/codec_unittest.cc",
        "src/Build.UnitTests/ProjectTests.cs",
        "src/Akka.Cluster.Tests.MultiNode/Node.cs",
        "spec/models/cart_spec.rb",
        "test/test_cart.rb",
        "tests/Http/KernelTest.php",
        "formats/json/commonTest/src/Json.kt",
        "okhttp/src/jvmTest/kotlin/Call.kt",
        "Tests/NIOTests/ChannelTests.swift",
        "IntegrationTests/tests_01_http/Main.swift",
        "Fixtures/Miscellaneous/Foo/Sources/Foo.swift",
        "main/src/sbt-test/actions/compile/A.scala",
        "core/src/test/scala/LedgerSpec.scala",
    ] {
        assert!(is_test_path(path), "{path}");
    }
    for path in [
        "pkg/testing_utils.py",
        "src/contest.py",
        "pkg/test.py",
        "src/runtime/mod.rs",
        "server.go",
        "src/plugin/utc.js",
        "src/main/java/com/x/Testing.java",
        "lib/compress/zstd_compress.c",
        "include/fmt/format.h",
        "src/Build/Evaluation/Expander.cs",
        "lib/rubygems/installer.rb",
        "src/Command/TestCommand.php",
        "okhttp/src/jvmMain/kotlin/Call.kt",
        "Sources/NIOCore/Channel.swift",
        "src/library/scala/collection/Seq.scala",
    ] {
        assert!(!is_test_path(path), "{path}");
    }
}

#[test]
fn lang_lists_parse_with_aliases_and_name_the_unknown() {
    let set = LangSet::parse("rust, Go").unwrap();
    assert!(set.contains(Lang::Rust) && set.contains(Lang::Go) && !set.contains(Lang::Python));
    assert_eq!(set.names(), "Rust or Go");
    assert!(LangSet::parse("c++,ts").unwrap().contains(Lang::Cpp));
    assert!(LangSet::parse("all").unwrap().is_all());
    let err = LangSet::parse("rust,cobol").unwrap_err();
    assert_eq!(err.name, "cobol");
    assert!(err.to_string().contains("python, rust, go"), "{err}");
    assert!(LangSet::parse(" , ").is_err());
}

#[test]
fn c_keeps_the_headers_cpp_owns() {
    let c = LangSet::only(Lang::C);
    assert!(c.takes("lib/zstd.c") && c.takes("lib/zstd.h"));
    assert!(!c.takes("src/format.cc"));
    let rust = LangSet::only(Lang::Rust);
    assert!(rust.takes("src/lib.rs") && !rust.takes("a.py") && !rust.takes("a.h"));
}

#[test]
fn every_grammar_loads_with_the_tree_sitter_in_use() {
    for spec in LANGUAGES {
        for ext in spec.extensions {
            let mut parser = tree_sitter::Parser::new();
            parser
                .set_language(&spec.lang.grammar(ext))
                .unwrap_or_else(|e| panic!("{} .{ext}: {e}", spec.name));
            assert!(parser.parse("x", None).is_some(), "{} .{ext}", spec.name);
        }
    }
}
