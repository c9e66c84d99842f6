//! The results pane at 80, 120, 160, 200 and 250 columns over long qualified names and deep
//! paths: one truncation rule per column (`components::fit`), and the lists' width before the
//! preview's (`layout`).

use super::{draw, rows, settle, type_text};
use crate::index::Retriever;
use crate::tui::action::Action;
use crate::tui::app::App;
use crate::tui::demo::DemoBackend;
use crate::tui::layout::{PREVIEW_MIN, WIDE};
use crate::{Chunk, ChunkKind};
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use std::collections::BTreeMap;
use std::sync::Arc;

const SIZES: [(u16, u16); 5] = [(80, 24), (120, 36), (160, 45), (200, 50), (250, 60)];

/// Click-like names and paths: two long classes sharing method names, a deep path, lines in
/// the hundreds, module functions and a test.
fn progress_app(size: (u16, u16)) -> App {
    let pad = "\n".repeat(700);
    let termui_impl = format!(
        "{pad}class ProgressBar:\n    def format_progress_line(self):\n        \"\"\"Format the progress line of the progress bar.\"\"\"\n        return self.render_progress()\n\n    def render_progress(self):\n        \"\"\"Render the progress bar line.\"\"\"\n        return self.format_eta()\n\n    def time_per_iteration(self):\n        \"\"\"Time per iteration of the progress bar.\"\"\"\n        return 0.0\n\n    def format_eta(self):\n        \"\"\"Format the eta of the progress bar line.\"\"\"\n        return ''\n"
    );
    let deeper = format!(
        "{pad}class VeryLongClassNameForTesting:\n    def render_progress(self):\n        \"\"\"Render the progress line for testing.\"\"\"\n        return None\n\n    def format_progress_line(self):\n        \"\"\"Format a progress line of a bar for testing.\"\"\"\n        return None\n"
    );
    let core = format!(
        "{pad}class Context:\n    def show_progress(self):\n        \"\"\"Show the progress of the command line.\"\"\"\n        return progressbar(self)\n\n\ndef invoke_progress(ctx):\n    \"\"\"Invoke with a progress bar line.\"\"\"\n    return ctx\n"
    );
    let files = [
        ("src/click/_termui_impl.py", termui_impl),
        ("src/package/sub/deeper/module_name.py", deeper),
        ("src/click/core.py", core),
        (
            "src/click/termui.py",
            "def progressbar(iterable):\n    \"\"\"Show a progress bar line.\"\"\"\n    return iterable\n"
                .into(),
        ),
        (
            "tests/test_termui.py",
            "def test_progress_line(runner):\n    \"\"\"The progress bar line.\"\"\"\n    return runner\n"
                .into(),
        ),
    ];
    let files: Vec<(&str, &str)> = files.iter().map(|(p, s)| (*p, s.as_str())).collect();
    let mut app = crate::tui::app::tests::new_app(size);
    let commands = app.update(Action::DenseReady(Arc::new(DemoBackend::new(&files))));
    settle(&mut app, commands);
    type_text(&mut app, "format the progress line of the progress bar when it renders progress");
    let commands = app.update(Action::RunSearch);
    settle(&mut app, commands);
    app
}

/// How a row shows its hit's class (`Progress…`; empty for none), or `None` where it cut the
/// method's (or function's) name.
fn shown_class(row: &str, chunk: &Chunk) -> Option<String> {
    let (qualifier, method) = chunk.name.rsplit_once('.').unwrap_or(("", &chunk.name));
    let end = if qualifier.is_empty() {
        row.find(&format!(" {method} "))? + 1
    } else {
        row.find(&format!(".{method} "))?
    };
    Some(row[..end].rsplit(' ').next().unwrap_or_default().to_string())
}

/// How a row shows its hit's directories (`s/c/`; empty for none), or `None` where it cut the
/// file name or the line.
fn shown_dirs(row: &str, chunk: &Chunk) -> Option<String> {
    let file = chunk.path.rsplit('/').next().unwrap_or(&chunk.path);
    let file_line = format!("{file}:{}", chunk.start_line);
    let at = row
        .find(&format!("{file_line} "))
        .or_else(|| row.ends_with(&file_line).then(|| row.len() - file_line.len()))?;
    Some(row[..at].rsplit(' ').next().unwrap_or_default().to_string())
}

/// Checks one screen: at 120 columns and more every row keeps its method (or function) name,
/// and from 160 its file name whole (a class's own row may cut its name: it is the class); at every
/// width the rows of both lists that keep both (a narrow row gives way by itself) show a
/// directory the same way, and no row cuts its class beside blank cells.
fn check_rows(app: &App, screen: &TestBackend, size: (u16, u16)) {
    // Both lists: one rule for the two, so a directory reads the same side by side.
    let mut dirs = BTreeMap::new();
    for index in 0..2 {
        let rows = rows(app, screen, index);
        assert!(rows.len() >= 6, "{size:?}: {screen:?}");
        for (row, chunk) in &rows {
            let class = shown_class(row, chunk);
            let method_kept = class.is_some() || chunk.kind == ChunkKind::Class;
            assert!(size.0 < 120 || method_kept, "{size:?} `{}` lost its name: {row}", chunk.name);
            let dir = shown_dirs(row, chunk);
            // The other list's rank (`D3`) stays on every row that has one (issue 61), so at
            // 120 a long method's row may cut its file's stem; from 160 none does.
            assert!(size.0 < 160 || dir.is_some(), "{size:?} `{}` lost its file name: {row}", chunk.path);
            let (Some(class), Some(dir)) = (class, dir) else { continue };
            // Issue 70: a class is cut only where the row has no cell for more of it (`P…` and
            // `ProgressBar` may share a list); `…` alone is a row that gave its class up.
            // Issue 81: a hit both lists show (it has the other's rank) reads alike in both, as
            // the narrower list shows it, so the wider list's row may have cells to spare.
            let in_both = row.split_whitespace().last().is_some_and(|w| {
                w.len() > 1
                    && w.starts_with(|c: char| c.is_ascii_uppercase())
                    && w[1..].chars().all(|c| c.is_ascii_digit())
            });
            let cut_alone = chunk.name.rsplit_once('.').filter(|_| class.len() > "…".len() && !in_both);
            if let Some((_, method)) = cut_alone {
                let after = row.split_once(&format!("{class}.{method} ")).map(|(_, rest)| rest);
                let blank = after.is_some_and(|rest| rest.starts_with(' '));
                assert!(!class.ends_with('…') || !blank, "{size:?} a class cut beside blanks: {row}");
            }
            let (path_dirs, _) = chunk.path.rsplit_once('/').unwrap_or(("", ""));
            let first = dirs.entry(path_dirs.to_string()).or_insert_with(|| dir.clone());
            assert_eq!(*first, dir, "{size:?} `{path_dirs}` cut two ways (list {index}): {row}");
        }
    }
}

#[test]
fn every_row_keeps_its_method_and_file_name_and_is_cut_like_its_neighbours() {
    for size in SIZES {
        for retriever in [Retriever::Dense, Retriever::Hybrid] {
            let mut app = progress_app(size);
            if retriever == Retriever::Hybrid {
                let commands = app.update(Action::ToggleHybrid);
                settle(&mut app, commands);
            }
            check_rows(&app, &draw(&app), size);
        }
    }
}

#[test]
fn from_160_columns_the_lists_get_their_width_before_the_preview() {
    for size in SIZES.into_iter().filter(|s| s.0 >= 160) {
        let app = progress_app(size);
        let areas = app.areas();
        for column in areas.columns {
            assert!(column.width >= 80, "{size:?}: a list of {} cells", column.width);
        }
        if size.0 >= WIDE {
            assert_eq!(areas.preview.y, areas.columns[0].y, "{size:?}: the preview beside the lists");
            assert!(areas.preview.width >= PREVIEW_MIN, "{size:?}: {areas:?}");
        } else {
            assert!(areas.preview.y > areas.columns[0].y, "{size:?}: the lists take the full width");
        }
    }
}

/// The results pane (both lists) as text.
fn results_pane(app: &App) -> String {
    let screen = draw(app);
    let [left, right] = app.areas().columns;
    let area: Rect = left.union(right);
    let buffer = screen.buffer();
    (area.y..area.bottom())
        .map(|y| (area.x..area.right()).map(|x| buffer[(x, y)].symbol()).collect::<String>() + "\n")
        .collect()
}

#[test]
fn results_pane_at_80x24() {
    insta::assert_snapshot!(results_pane(&progress_app(SIZES[0])));
}

#[test]
fn results_pane_at_120x36() {
    insta::assert_snapshot!(results_pane(&progress_app(SIZES[1])));
}

#[test]
fn results_pane_at_160x45() {
    insta::assert_snapshot!(results_pane(&progress_app(SIZES[2])));
}

#[test]
fn results_pane_at_200x50() {
    insta::assert_snapshot!(results_pane(&progress_app(SIZES[3])));
}

#[test]
fn results_pane_at_250x60() {
    insta::assert_snapshot!(results_pane(&progress_app(SIZES[4])));
}
