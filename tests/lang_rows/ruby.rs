//! Ruby's row on its fixtures (`src/lang/fixtures/`).

use super::{calls, clean_fixture as fixture, expect};

#[test]
fn ruby_modules_classes_singleton_methods_and_calls_without_parentheses() {
    let file = fixture("cart.rb");
    expect(
        &file,
        &[
            ("<module>", "module", 1, 45, "require \"json\""),
            // Its doc comment, the first thing in `module Shop`, belongs to it.
            ("Shop.Cart", "class", 4, 34, "# A customer's cart."),
            ("Shop.Cart.initialize", "method", 6, 9, "class Cart < Base"),
            ("Shop.Cart.add", "method", 11, 15, "class Cart < Base"),
            ("Shop.Cart.total", "method", 17, 19, "class Cart < Base"),
            ("Shop.Cart.empty", "method", 21, 23, "class Cart < Base"),
            ("Shop.Cart.validate", "method", 27, 29, "class Cart < Base"),
            ("Shop.Cart.touch", "method", 31, 33, "class Cart < Base"),
            ("Shop.Pricing", "class", 36, 40, "module Pricing"),
            ("Shop.Pricing.price_of", "method", 37, 39, "module Pricing"),
            ("checkout", "function", 43, 45, "def checkout(cart)"),
        ],
    );
    assert!(file.chunks[1].text.contains("@items = []"), "initialize stays whole in its class");
    assert!(file.chunks[0].text.contains("module Shop"), "a module around classes only is module code");
    let files = [file];
    assert_eq!(calls(&files, "Shop.Cart.add").0, ["Shop.Cart.validate", "Shop.Cart.touch"]);
    assert_eq!(
        calls(&files, "Shop.Cart.total").0,
        ["Shop.Pricing.price_of"],
        "Pricing.price_of by its module"
    );
    let (callees, unresolved) = calls(&files, "checkout");
    assert!(callees.is_empty(), "cart's class is not known: no edge");
    assert_eq!(unresolved, ["cart.total"], "but the call is listed, not lost");
    assert!(calls(&files, "Shop.Cart.touch").1.is_empty(), "Time.now is the library's");
}

/// Issue 70: `def ssl?` is `ssl?`, not `ssl` (which `empty?` and `empty` would share), and a
/// call of `ssl?` reaches it.
#[test]
fn ruby_method_names_keep_their_question_and_bang_marks() {
    let file = fixture("request.rb");
    let names: Vec<&str> = file.chunks.iter().map(|c| c.name.as_str()).collect();
    for name in [
        "Rack.Request.buffered_body!",
        "Rack.Request.Helpers.ssl?",
        "Rack.Request.Helpers.empty?",
        "Rack.Request.Helpers.empty",
    ] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    assert!(!names.contains(&"Rack.Request.Helpers.ssl"), "{names:?}");
    let files = [file];
    assert_eq!(calls(&files, "Rack.Request.Helpers.secure_cookies").0, ["Rack.Request.Helpers.ssl?"]);
}

/// Issue 70: in Ruby a bare name that is no local (`parse_cookies_from_header`) is a call on
/// `self`, and so is `get_header(HTTPS)`; a method a module mixes in (`include Env`) is found
/// by its name in the file; locals and parameters are no calls.
#[test]
fn ruby_calls_without_a_receiver_reach_the_class_and_its_mixins() {
    let files = [fixture("request.rb")];
    assert_eq!(
        calls(&files, "Rack.Request.initialize"),
        (vec!["Rack.Request.parse_cookies_from_header".into(), "Rack.Request.buffered_body!".into()], vec![]),
        "a bare name and a bang method, `self` implied"
    );
    assert_eq!(
        calls(&files, "Rack.Request.parse_cookies_from_header"),
        (vec!["Rack.Request.Env.get_header".into()], vec![]),
        "`header` is a local: no call; `get_header` is Env's, mixed in"
    );
    assert_eq!(
        calls(&files, "Rack.Request.Helpers.scheme").0,
        ["Rack.Request.Env.get_header", "Rack.Request.Helpers.forwarded_scheme"],
    );
    assert_eq!(calls(&files, "Rack.Request.Helpers.ssl?").0, ["Rack.Request.Helpers.scheme"]);
    assert_eq!(
        calls(&files, "Rack.Request.Helpers.forwarded_scheme"),
        (vec![], vec![]),
        "`scheme` is the parameter here, not the method"
    );
    assert_eq!(calls(&files, "Rack.Request.Helpers.empty?"), (vec![], vec![]), "no `content_length` here");
}

/// A bare name several types define, none the caller's own, is listed, never guessed; a
/// repository-unique one is an edge; a local of that name is no call at all.
#[test]
fn ruby_bare_calls_several_types_define_are_listed_not_guessed() {
    let chunk = coret::chunk::chunk_file;
    let files = [
        chunk(
            "lib/app.rb",
            "class App
  def run
    flush
    render
  end

  def quiet
    flush = 0
    flush
  end
end
",
        ),
        chunk(
            "lib/a.rb",
            "module A
  def flush
  end

  def render
  end
end
",
        ),
        chunk(
            "lib/b.rb",
            "module B
  def flush
  end
end
",
        ),
    ];
    assert_eq!(calls(&files, "App.run"), (vec!["A.render".into()], vec!["flush".into()]));
    assert_eq!(calls(&files, "App.quiet"), (vec![], vec![]), "`flush = 0` makes `flush` a local");
}

/// Issue 70: `module Rack` around a whole file defines no method of its own: a namespace
/// that qualifies its classes' names, not one class chunk spanning them all.
#[test]
fn a_ruby_module_that_only_wraps_definitions_is_no_class_chunk() {
    let file = fixture("request.rb");
    let kind = |name: &str| file.chunks.iter().find(|c| c.name == name).map(|c| c.kind.as_str());
    assert_eq!(kind("Rack"), None, "no chunk spans the file as a class");
    assert_eq!(kind("Rack.Request"), Some("class"));
    assert_eq!(kind("Rack.Request.Helpers"), Some("class"), "a mixin with methods stays a type");
    let module = &file.chunks[0];
    assert_eq!(module.kind.as_str(), "module");
    assert!(
        module.text.contains("module Rack"),
        "the wrapper's lines are module-level code: {}",
        module.text
    );
    let method = file.chunks.iter().find(|c| c.name == "Rack.Request.Helpers.ssl?").unwrap();
    assert!(
        method.text.contains("module Helpers\n"),
        "a method shows its own type's header: {}",
        method.text
    );
}

/// tree-sitter-ruby 0.23.1 aborts the process on a heredoc identifier of 256 bytes or more
/// (tree-sitter-ruby#269): the row blanks such an opener, so the file is indexed, not fatal.
#[test]
fn ruby_long_heredoc_openers_neither_abort_nor_hide_the_definitions_after_them() {
    let word = "W".repeat(300);
    let source = format!(
        "def before\n  x = <<~{word}\n    text\n  {word}\nend\n\ndef unclosed\n  @items <<' [item]\nend\n\ndef after(a)\n  a << 'ok'\nend\n"
    );
    let file = coret::chunk::chunk_file("lib/odd.rb", &source);
    let names: Vec<&str> = file.chunks.iter().map(|c| c.name.as_str()).collect();
    assert!(names.contains(&"before"), "{names:?}");
    assert!(file.chunks.iter().all(|c| source.get(c.start_byte..c.end_byte).is_some()));
    let after = file.chunks.iter().find(|c| c.name == "after");
    assert!(after.is_none_or(|c| c.text.contains("a << 'ok'")), "spans come from the original text");
}

/// Issue 70: a root `test.rb` that defines a test case is test code (demoted, hidden by `T`,
/// left to BM25), though its path names no test directory; a class of the same file deriving
/// from anything else is not.
#[test]
fn ruby_classes_deriving_from_a_test_case_are_test_code_wherever_they_are() {
    let source = "class TestControllerTest < ActionDispatch::IntegrationTest\n  def test_index\n    get \"/\"\n  end\nend\n\nclass Widget < ApplicationRecord\n  def size\n    1\n  end\nend\n\nclass CartTest < Minitest::Test\nend\n";
    let file = coret::chunk::chunk_file("test.rb", source);
    let test: Vec<(&str, bool)> = file.chunks.iter().map(|c| (c.name.as_str(), c.is_test())).collect();
    assert_eq!(
        test,
        [
            ("TestControllerTest", true),
            ("TestControllerTest.test_index", true),
            ("Widget", false),
            ("Widget.size", false),
            ("CartTest", true),
        ]
    );
}

/// Issue 81: `module ActiveRecord::Associations::Builder` named its classes `Builder.HasOne`,
/// while the same namespace written as nested modules reads `ActiveRecord.Associations.Builder`;
/// one namespace is spelled one way, and so is `class Admin::User`.
#[test]
fn ruby_namespaces_written_with_colons_read_as_their_nesting() {
    let compact = "module ActiveRecord::Associations::Builder\n  class HasOne < SingularAssociation\n    def self.valid_options(options)\n      super\n    end\n  end\nend\n\nclass ::Admin::User < Base\n  def admin?\n    true\n  end\nend\n";
    let nested = "module ActiveRecord\n  module Associations\n    module Builder\n      class HasOne < SingularAssociation\n        def self.valid_options(options)\n          super\n        end\n      end\n    end\n  end\nend\n";
    let names = |src: &str| -> Vec<String> {
        coret::chunk::chunk_file("lib/has_one.rb", src).chunks.iter().map(|c| c.name.clone()).collect()
    };
    let (compact, nested) = (names(compact), names(nested));
    for name in
        ["ActiveRecord.Associations.Builder.HasOne", "ActiveRecord.Associations.Builder.HasOne.valid_options"]
    {
        assert!(compact.contains(&name.to_string()), "{name} in {compact:?}");
        assert!(nested.contains(&name.to_string()), "{name} in {nested:?}");
    }
    assert!(compact.contains(&"Admin.User.admin?".to_string()), "{compact:?}");
}

/// Issue 81: shown as Ruby writes them: `A::B::C#m` for an instance method, `A::B.m` for a
/// singleton one (`def self.m`, or inside `class << self`), `::` between namespaces; a module
/// with methods of its own is a module, not a class. The dotted names stay the engine's.
#[test]
fn ruby_names_are_written_with_colons_hashes_and_dots_as_ruby_writes_them() {
    let src = "module ActiveRecord::Associations::Builder\n  class HasOne < SingularAssociation\n    def self.valid_options(options)\n      super\n    end\n\n    def build(model)\n      model\n    end\n\n    class << self\n      def define_callbacks(model)\n        model\n      end\n    end\n  end\nend\n\nmodule Helpers\n  def ssl?\n    true\n  end\nend\n";
    let file = coret::chunk::chunk_file("lib/has_one.rb", src);
    let shown: Vec<(String, &str, &str)> = file
        .chunks
        .iter()
        .map(|c| (c.written_name().into_owned(), c.shown_kind().as_str(), c.kind.as_str()))
        .collect();
    let has_one = "ActiveRecord::Associations::Builder::HasOne";
    for expected in [
        (has_one.to_string(), "class", "class"),
        (format!("{has_one}.valid_options"), "method", "method"),
        (format!("{has_one}#build"), "method", "method"),
        (format!("{has_one}.define_callbacks"), "method", "method"),
        ("Helpers".to_string(), "module", "class"),
        ("Helpers#ssl?".to_string(), "method", "method"),
    ] {
        assert!(
            shown.iter().any(|s| (s.0.as_str(), s.1, s.2) == (expected.0.as_str(), expected.1, expected.2)),
            "{expected:?} in {shown:?}"
        );
    }
    assert!(
        file.chunks.iter().any(|c| c.name == "ActiveRecord.Associations.Builder.HasOne.build"),
        "dotted for the engine"
    );
}
