//! A newcomer's 80×24 (issue #61) over fzf-like Go names: every row keeps its mark, its
//! method's shape and its file.

use super::{draw, rows, settle, type_text};
use crate::tui::action::Action;
use crate::tui::app::App;
use crate::tui::demo::DemoBackend;
use std::sync::Arc;

/// Terminal methods with long names in a long file, as in fzf's `src/terminal.go`.
fn fzf_app(size: (u16, u16)) -> App {
    let pad = "\n".repeat(1200);
    let terminal = format!(
        "package fzf\n\ntype Terminal struct{{ pwindow *Window }}\n{pad}\
         // minPreviewSize is the smallest preview window size.\n\
         func (t *Terminal) minPreviewSize(opts *previewOpts) (int, int) {{\n\treturn t.previewScrollbarSize(opts), 1\n}}\n\n\
         // renderPreviewScrollbar draws the preview window's scrollbar.\n\
         func (t *Terminal) renderPreviewScrollbar(offset int, height int) {{\n\tt.pwindow.Move(offset, height)\n}}\n\n\
         // previewScrollbarSize is the scrollbar size of the preview window.\n\
         func (t *Terminal) previewScrollbarSize(opts *previewOpts) int {{\n\treturn 1\n}}\n\n\
         // printPreviewDelayed prints the preview window after a delay.\n\
         func (t *Terminal) printPreviewDelayed() {{\n\tt.renderPreviewScrollbar(0, 1)\n}}\n"
    );
    let window = format!(
        "package fzf\n{pad}// Window is a preview window with a scrollbar.\ntype Window struct{{ height int }}\n\n\
         // Move moves the preview window's scrollbar.\nfunc (w *Window) Move(offset int, height int) {{\n\tw.height = height\n}}\n"
    );
    let files = [("src/terminal.go", terminal), ("src/tui/window.go", window)];
    let files: Vec<(&str, &str)> = files.iter().map(|(p, s)| (*p, s.as_str())).collect();
    let mut app = crate::tui::app::tests::new_app(size);
    let commands = app.update(Action::DenseReady(Arc::new(DemoBackend::new(&files))));
    settle(&mut app, commands);
    type_text(&mut app, "the preview window scrollbar size is wrong when the preview window is small");
    let commands = app.update(Action::RunSearch);
    settle(&mut app, commands);
    app
}

/// Reported: at 80×24 the cross-column marks (`D3`) showed on some rows only, and rows cut
/// names unevenly (`T….minPreviewSize` beside `renderPre…Scrollbar`): every row the other
/// column ranks shows its mark, and a method row never loses its class unmarked.
#[test]
fn at_80x24_every_row_keeps_its_mark_its_class_mark_and_its_file() {
    for size in [(80, 24), (100, 30)] {
        let app = fzf_app(size);
        let screen = draw(&app);
        for index in 0..2 {
            let other = &app.columns[1 - index];
            let letter = crate::tui::components::results::marker_letter(other.retriever);
            let rows = rows(&app, &screen, index);
            assert!(rows.len() >= 4, "{size:?}: {screen:?}");
            for (row, chunk) in rows {
                let id =
                    app.columns[index].all_hits.iter().find(|h| app.chunk(h.chunk) == Some(&chunk)).unwrap();
                if let Some(rank) = other.rank_of(id.chunk) {
                    let mark = format!("{letter}{rank}");
                    assert!(row.trim_end().ends_with(&mark), "{size:?} no {mark}: {row}");
                }
                if let Some((class, method)) = chunk.name.rsplit_once('.') {
                    // The class whole, its start and `…`, or `…` alone where the row gave it up.
                    let shown = row.split(&format!(".{method}")).next().unwrap().rsplit(' ').next().unwrap();
                    let start = shown.strip_suffix('…').unwrap_or(class);
                    let kept = shown == class || (class.starts_with(start) && shown.ends_with('…'));
                    let kept = kept || row.contains(" ….");
                    assert!(kept, "{size:?} class lost: {row}");
                }
                assert!(row.contains(&format!(":{}", chunk.start_line)), "{size:?} line lost: {row}");
                let file = chunk.path.rsplit('/').next().unwrap();
                assert!(row.contains(&file[..3]), "{size:?} file lost: {row}");
            }
        }
    }
}

/// Reported: the issue box wrapped mid-word after a search (`exi│st`) and counted a pasted
/// issue's trailing newline as a line ("4 lines" for three).
#[test]
fn the_issue_box_wraps_between_words_and_counts_only_lines_with_text() {
    let mut app = crate::tui::app::tests::new_app((80, 24));
    type_text(
        &mut app,
        "first line\nsecond line\nthird line that is long enough to wrap somewhere in the box exist\n",
    );
    let screen = draw(&app);
    let top: String = (0..80).map(|x| screen.buffer()[(x, 0)].symbol()).collect();
    assert!(top.contains("3 lines") && !top.contains("4 lines"), "{top}");
    let mut app = crate::tui::app::tests::new_app((40, 24));
    type_text(&mut app, "the total can exist below zero after a coupon");
    app.update(Action::Focus(crate::tui::action::Pane::Left));
    let screen = draw(&app);
    let text: Vec<String> =
        (1..2).map(|y| (1..39).map(|x| screen.buffer()[(x, y)].symbol()).collect::<String>()).collect();
    for line in &text {
        let words: Vec<&str> = line.split('…').next().unwrap_or("").split_whitespace().collect();
        for w in words {
            assert!(
                "the total can exist below zero after a coupon".split(' ').any(|x| x == w),
                "cut word {w:?}: {text:?}"
            );
        }
    }
}

/// Rack-like Ruby: every name under `Rack.`, `MockResponse.body` beside `Response.body` and a
/// long-named lint method, in files under `lib/rack/`.
fn rack_app(size: (u16, u16)) -> App {
    let pad = "\n".repeat(40);
    let module = |body: &str| format!("module Rack\n{pad}{body}end\n");
    let files = [
        (
            "lib/rack/mock_response.rb",
            module(
                "  # A response of the mock request, its body read whole.\n  class MockResponse\n    # The body of the mock response, joined.\n    def body\n      @body\n    end\n\n    # The response's cookies.\n    def cookies\n      @cookies\n    end\n  end\n",
            ),
        ),
        (
            "lib/rack/response.rb",
            module(
                "  # A response: status, headers and body.\n  class Response\n    # The body of the response.\n    def body\n      @body\n    end\n\n    # Writes the body of the response.\n    def write(chunk)\n      @body << chunk\n    end\n  end\n",
            ),
        ),
        (
            "lib/rack/lint.rb",
            module(
                "  class Lint\n    # Checks the body of the response of a mock request.\n    def check_body_of_the_response(body)\n      body\n    end\n  end\n",
            ),
        ),
    ];
    searched(size, &files, "the body of the mock response is empty when the response body is written")
}

/// Dapper-like C#: three classes' `AddParameter` and three overloads of a nested class's
/// constructor, each in a file named after its class.
fn dapper_app(size: (u16, u16)) -> App {
    let pad = "\n".repeat(40);
    let class = |name: &str, body: &str| {
        format!("namespace Dapper\n{{\n{pad}    internal sealed class {name}\n    {{\n{body}    }}\n}}\n")
    };
    let add = "        /// Adds the parameter to the command.\n        public void AddParameter(IDbCommand command, string name)\n        {\n            command.Parameters.Add(name);\n        }\n";
    let meta = "        /// Binds the parameter of a dynamic row.\n        public DapperRowMetaObject(Expression expression)\n        {\n        }\n\n        /// Binds the parameter of a dynamic row with restrictions.\n        public DapperRowMetaObject(Expression expression, BindingRestrictions restrictions)\n        {\n        }\n\n        /// Binds the parameter of a dynamic row with restrictions and a value.\n        public DapperRowMetaObject(Expression expression, BindingRestrictions restrictions, object value)\n        {\n        }\n";
    let files = [
        ("Dapper/TableValuedParameter.cs", class("TableValuedParameter", add)),
        ("Dapper/SqlDataRecordListTVPParameter.cs", class("SqlDataRecordListTVPParameter", add)),
        ("Dapper/DynamicParameters.cs", class("DynamicParameters", add)),
        (
            "Dapper/SqlMapper.DapperRowMetaObject.cs",
            format!(
                "namespace Dapper\n{{\n    public static partial class SqlMapper\n    {{\n{}    }}\n}}\n",
                class("DapperRowMetaObject", meta)
                    .replace("namespace Dapper\n{\n", "")
                    .trim_end_matches("}\n")
            ),
        ),
    ];
    searched(
        size,
        &files,
        "AddParameter adds the parameter to the command; binding a dynamic row's parameter",
    )
}

/// An app over `files` that searched for `issue`.
fn searched(size: (u16, u16), files: &[(&str, String)], issue: &str) -> App {
    let files: Vec<(&str, &str)> = files.iter().map(|(p, s)| (*p, s.as_str())).collect();
    let mut app = crate::tui::app::tests::new_app(size);
    let commands = app.update(Action::DenseReady(Arc::new(DemoBackend::new(&files))));
    settle(&mut app, commands);
    type_text(&mut app, issue);
    let commands = app.update(Action::RunSearch);
    settle(&mut app, commands);
    app
}

/// The rows of both lists on `app`'s screen, each with its hit's name.
fn all_rows(app: &App) -> Vec<(String, String)> {
    let screen = draw(app);
    (0..2).flat_map(|i| rows(app, &screen, i)).map(|(row, chunk)| (row, chunk.name)).collect()
}

/// Reported (issue 70): with the marks (`D1`, `B9`) shown, `Rack.MockResponse.body` read
/// `Rack.MockRes….body` beside blank cells. The root every row shares goes first, and a row
/// with room keeps its class whole.
#[test]
fn ruby_names_drop_their_shared_root_and_keep_their_class_where_there_is_room() {
    for size in [(100, 30), (120, 36)] {
        let rows = all_rows(&rack_app(size));
        assert!(rows.len() >= 12, "{size:?}: {rows:?}");
        for (row, name) in &rows {
            assert!(!row.contains("Rack::"), "{size:?} the shared root stays: {row}");
            if name == "Rack.MockResponse.body" || name == "Rack.Response.body" {
                // Written as the language writes an instance method (issue 81).
                let shown = name.strip_prefix("Rack.").unwrap().replace('.', "#");
                assert!(row.contains(&format!(" {shown} ")), "{size:?} `{name}` cut: {row}");
            }
        }
    }
    // At 80 columns too a row with room keeps its class whole.
    let rows = all_rows(&rack_app((80, 24)));
    let body = rows.iter().find(|(_, name)| name == "Rack.Response.body").expect("Response.body listed");
    assert!(body.0.contains(" Response#body "), "{}", body.0);
}

/// Reported (issue 70): Dapper's `T….AddParameter`, `S….AddParameter` and `D….AddParameter`
/// shared a column, cut where they differ. From 100 columns each keeps a readable start of
/// its class; at 80 its first letter and its file's first five tell them apart.
#[test]
fn csharp_methods_of_one_name_keep_the_classes_that_tell_them_apart() {
    let classes = ["TableValuedParameter", "SqlDataRecordListTVPParameter", "DynamicParameters"];
    for size in [(80, 24), (100, 30), (120, 36)] {
        let rows = all_rows(&dapper_app(size));
        for class in classes {
            let name = format!("{class}.AddParameter");
            let (row, _) = rows.iter().find(|(_, n)| *n == name).unwrap_or_else(|| panic!("{size:?} {name}"));
            let kept = if size.0 >= 100 { 8 } else { 1 };
            assert!(row.contains(&format!(" {}", &class[..kept])), "{size:?} `{name}` lost its class: {row}");
            assert!(row.contains(&format!(" {}", &class[..5])), "{size:?} `{name}` lost its file: {row}");
            assert!(row.contains(".AddParameter "), "{size:?} `{name}` cut its method: {row}");
        }
    }
}

/// What a row shows of its hit: its name and location, without the rank, score, kind and the
/// other list's mark (`D3`).
fn shown_hit(row: &str) -> String {
    let words: Vec<&str> = row.split_whitespace().collect();
    let is_mark = |w: &str| {
        w.len() > 1
            && w[..1].chars().all(|c| c.is_ascii_uppercase())
            && w[1..].chars().all(|c| c.is_ascii_digit())
    };
    let end = if words.last().is_some_and(|w| is_mark(w)) { words.len() - 1 } else { words.len() };
    // The cursor, rank, score and demotion flag, then the kind (`•` before it on a named hit).
    let lead =
        words.iter().take_while(|w| w.chars().all(|c| c.is_ascii_digit() || ".-›↓".contains(c))).count();
    let kind = (lead + 1).min(end);
    words[kind..end].join(" ")
}

/// Reported (issue 81): at 80 columns the two lists shortened one name two ways (one list's
/// row had a cell more and took back part of its class). A hit both lists show reads alike in
/// both.
#[test]
fn a_hit_in_both_lists_reads_alike_in_both() {
    for size in [(80, 24), (90, 30), (100, 30)] {
        let long = super::long_names_app(size);
        let mut hybrid = super::long_names_app(size);
        let commands = hybrid.update(Action::ToggleHybrid);
        settle(&mut hybrid, commands);
        for app in [rack_app(size), dapper_app(size), long, hybrid] {
            let screen = draw(&app);
            let (left, right) = (rows(&app, &screen, 0), rows(&app, &screen, 1));
            let mut both = 0;
            for (l, chunk) in &left {
                let twin = right.iter().find(|(_, c)| {
                    c.path == chunk.path && c.start_line == chunk.start_line && c.name == chunk.name
                });
                if let Some((r, _)) = twin {
                    both += 1;
                    assert_eq!(shown_hit(l), shown_hit(r), "{size:?} `{}`:\n{l}\n{r}", chunk.name);
                }
            }
            assert!(both >= 3, "{size:?}: {both} hits in both lists");
        }
    }
}
