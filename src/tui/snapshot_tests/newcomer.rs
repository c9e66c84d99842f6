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
                if let Some((class, _)) = chunk.name.rsplit_once('.') {
                    let shape = [format!("{class}."), format!("{}….", &class[..1]), " ….".to_string()];
                    assert!(shape.iter().any(|s| row.contains(s.as_str())), "{size:?} class lost: {row}");
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
