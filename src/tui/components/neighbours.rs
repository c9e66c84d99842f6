//! Call-graph neighbours of the current chunk: its callers, then its callees, then (dim, not
//! selectable) the calls the graph left unresolved, so that its holes are visible.

use super::{dim_line, fit, kind_span, pad_line, pane_block, truncate_end, truncate_start, width};
use crate::chunk::told_apart;
use crate::tui::action::Pane;
use crate::tui::app::{list_rows, App, Direction, Neighbour};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

/// A displayed row: a section header, a neighbour (index into the neighbour list), or "none".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Row {
    Header(Direction, usize),
    Item(usize),
    Empty,
}

pub fn display_rows(neighbours: &[Neighbour]) -> Vec<Row> {
    let mut rows = Vec::new();
    for direction in [Direction::Caller, Direction::Callee] {
        let items: Vec<usize> =
            (0..neighbours.len()).filter(|i| neighbours[*i].direction == direction).collect();
        rows.push(Row::Header(direction, items.len()));
        if items.is_empty() {
            rows.push(Row::Empty);
        }
        rows.extend(items.into_iter().map(Row::Item));
    }
    rows
}

/// First displayed row that keeps the selected item visible in `height` rows.
pub fn scroll_top(rows: &[Row], selected: usize, height: usize) -> usize {
    let at = rows.iter().position(|r| *r == Row::Item(selected)).unwrap_or(0);
    (at + 1).saturating_sub(height.max(1))
}

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let focused = app.focus == Pane::Neighbours;
    let current = app.current_chunk().and_then(|id| app.chunk(id));
    let title = match current {
        Some(c) => {
            format!(
                " Call graph · {} ",
                truncate_end(&c.written_name(), (area.width as usize).saturating_sub(18))
            )
        }
        None => " Call graph ".into(),
    };
    let mut block = pane_block(theme, title, focused);
    if !app.nav.is_empty() {
        block = block.title_bottom(
            Line::from(format!(" ⌫ back ({}) ", app.nav.len()))
                .right_aligned()
                .style(theme.style("text.dim")),
        );
    }
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if current.is_none() {
        let hint = dim_line(theme, "Callers and callees of the selected hit.");
        frame.render_widget(Paragraph::new(hint).wrap(Wrap { trim: true }), inner);
        return;
    }
    let neighbours = app.neighbours();
    let names = names(app, &neighbours);
    let step = fitting(app, &neighbours, &names, (inner.width as usize).saturating_sub(5));
    let rows = display_rows(&neighbours);
    let height = list_rows(area);
    let top = scroll_top(&rows, app.neighbour_selected, height);
    let w = inner.width as usize;
    let (unresolved, called_by) = match (app.backend.as_deref(), app.current_chunk()) {
        (Some(backend), Some(id)) => {
            (backend.unresolved(id), call_sites(app, &backend.unresolved_callers(id)))
        }
        _ => (Vec::new(), Vec::new()),
    };
    // The unresolved calls follow the rows (under the callees), so the rows' positions, which
    // mouse clicks map back through `display_rows`, stay the same.
    let below = unresolved_lines(CALLEES_LABEL, &unresolved, w)
        .into_iter()
        .chain(unresolved_lines(CALLERS_LABEL, &called_by, w))
        .map(|text| dim_line(theme, text));
    let lines: Vec<Line> = rows
        .iter()
        .enumerate()
        .map(|(at, row)| match *row {
            Row::Header(direction, n) => {
                let label = match direction {
                    // Unresolved calls name it: not dead code, callers the graph cannot confirm.
                    Direction::Caller if !called_by.is_empty() => {
                        format!("callers ({n} resolved, {} by name)", called_by.len())
                    }
                    Direction::Caller => format!("callers ({n})"),
                    Direction::Callee => format!("callees ({n})"),
                };
                Line::styled(label, theme.style("neighbours.header"))
            }
            // The first section's "none": no resolved caller, but calls that name it.
            Row::Empty if at == 1 && !called_by.is_empty() => {
                dim_line(theme, "  none resolved; call sites below")
            }
            Row::Empty => dim_line(theme, "  none"),
            Row::Item(i) => {
                let selected = i == app.neighbour_selected;
                let line = item_line(app, neighbours[i].chunk, &names[i], (w, step), selected);
                if selected {
                    let style = theme.style_or("selection", focused);
                    pad_line(line, w, style).style(style)
                } else {
                    line
                }
            }
        })
        .chain(below)
        .skip(top)
        .take(height)
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

/// The label of the calls the chunk makes that the graph left unresolved.
const CALLEES_LABEL: &str = "not resolved: ";
/// The label of the unresolved calls elsewhere that name the chunk.
const CALLERS_LABEL: &str = "called, not resolved: ";

/// Unresolved calls of the chunk, `(caller, line)`, as call sites: `core.go:502`.
fn call_sites(app: &App, sites: &[(u32, u32)]) -> Vec<String> {
    let file = |id: u32| app.chunk(id).map(|c| c.path.rsplit('/').next().unwrap_or(&c.path).to_string());
    sites.iter().filter_map(|&(caller, line)| Some(format!("{}:{line}", file(caller)?))).collect()
}

/// `LABEL a, b, c` wrapped to `w` cells, continuation lines indented; a name wider than a
/// line is cut.
pub fn unresolved_lines(label: &str, names: &[String], w: usize) -> Vec<String> {
    const INDENT: &str = "  ";
    if names.is_empty() {
        return Vec::new();
    }
    let mut lines = Vec::new();
    let mut line = label.to_string();
    for (i, name) in names.iter().enumerate() {
        let item = if i + 1 < names.len() { format!("{name},") } else { name.clone() };
        if i > 0 {
            if width(&line) + 1 + width(&item) <= w {
                line.push(' ');
            } else {
                lines.push(std::mem::replace(&mut line, INDENT.to_string()));
            }
        }
        let room = w.saturating_sub(width(&line)).max(1);
        line.push_str(&truncate_end(&item, room));
    }
    lines.push(line);
    lines
}

/// Each neighbour's name as its row shows it: an overload's with its line, within its section
/// (`told_apart`: two `SqlMapper.Execute` callers read `SqlMapper.Execute:40` and `:52`, also
/// where the row has no room for its location).
fn names(app: &App, neighbours: &[Neighbour]) -> Vec<String> {
    let mut names = vec![String::new(); neighbours.len()];
    for direction in [Direction::Caller, Direction::Callee] {
        let at: Vec<usize> =
            (0..neighbours.len()).filter(|&i| neighbours[i].direction == direction).collect();
        let named = |i: usize| app.chunk(neighbours[i].chunk).map(|c| (c.name.clone(), c.start_line));
        let labels: Vec<(String, usize)> = at.iter().map(|&i| named(i).unwrap_or_default()).collect();
        for (i, name) in at.into_iter().zip(told_apart(&labels)) {
            names[i] = name;
        }
    }
    names
}

/// The pane's one shortening for all its rows, as the result lists choose theirs
/// ([`fit::choose`]): the module prefix every neighbour shares goes first
/// (`Phoenix.LiveView.Channel.`), then directories and classes, so the part that differs — the
/// function's own name — stays (issue 81).
fn fitting(app: &App, neighbours: &[Neighbour], names: &[String], available: usize) -> fit::Shortening {
    let chunks: Vec<_> = neighbours.iter().map(|n| app.chunk(n.chunk)).collect();
    let rows: Vec<fit::Row> = chunks
        .iter()
        .zip(names)
        .filter_map(|(c, name)| {
            c.map(|c| fit::Row { name, path: &c.path, line: c.start_line, spelling: c.spelling() })
        })
        .collect();
    let methods = chunks
        .iter()
        .zip(names)
        .filter_map(|(c, name)| c.map(|c| (name.as_str(), c.kind == crate::ChunkKind::Method)));
    fit::choose(&rows, fit::shared_root(methods), available)
}

fn item_line(
    app: &App,
    id: u32,
    name: &str,
    (w, step): (usize, fit::Shortening),
    selected: bool,
) -> Line<'static> {
    let theme = &app.theme;
    let Some(chunk) = app.chunk(id) else {
        return Line::raw(format!("  <chunk {id} missing>"));
    };
    let available = w.saturating_sub(5);
    // The shared root goes first; a name still too long keeps its own last part whole and
    // gives up its class instead (the results' rule), never the other way round.
    let row = fit::Row { name, path: &chunk.path, line: chunk.start_line, spelling: chunk.spelling() };
    let rooted = fit::Shortening { root: step.root, ..fit::Shortening::NONE }.shown(&row);
    let name = match width(&rooted) <= available {
        true => rooted,
        false => fit::fit(&row, step, available).0,
    };
    let location = format!("{}:{}", chunk.path, chunk.start_line);
    let name = truncate_end(&name, available.min(width(&name)));
    let room = available.saturating_sub(width(&name));
    let location = if room >= 12 { truncate_start(&location, room) } else { String::new() };
    Line::from(vec![
        Span::styled(if selected { "› " } else { "  " }, theme.style("results.marker")),
        kind_span(theme, chunk.shown_kind()),
        Span::raw(" "),
        Span::styled(name, theme.style("results.name")),
        Span::raw(" "),
        Span::styled(location, theme.style("results.path")),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::app::tests::new_app;
    use crate::tui::app::NavEntry;
    use crate::tui::demo::DemoBackend;
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;
    use std::sync::Arc;

    /// click's and rich's holes (issue #47): a parameter read through `ctx`, a console kept in
    /// `self.console` from an argument.
    const CORE: &str = "\
class Parameter:
    def consume_value(self, ctx):
        value = ctx.lookup_default(self.name)
        source = ctx.get_parameter_source(self.name)
        if value is None:
            value = self.get_default(ctx)
        return value, source

    def get_default(self, ctx):
        return len(self.name)


class PromptBase:
    def __init__(self, console=None):
        self.console = console

    def on_validate_error(self, value, error):
        self.console.print(error)
";

    /// The pane alone, on a `size` screen, showing the chunk `name` of [`CORE`].
    fn pane(name: &str, size: (u16, u16)) -> (App, TestBackend) {
        pane_of(&[("click/core.py", CORE)], name, size)
    }

    fn pane_of(files: &[(&str, &str)], name: &str, size: (u16, u16)) -> (App, TestBackend) {
        let backend = DemoBackend::new(files);
        let id = backend.id_of(name).unwrap();
        let mut app = new_app(size);
        app.backend = Some(Arc::new(backend));
        app.nav.push(NavEntry { chunk: id, came_from_selection: 0 });
        let mut terminal = Terminal::new(TestBackend::new(size.0, size.1)).unwrap();
        terminal.draw(|frame| render(&app, frame, frame.area())).unwrap();
        let screen = terminal.backend().clone();
        (app, screen)
    }

    /// Where `text` starts on the screen, and the style of its first cell.
    fn find(screen: &TestBackend, text: &str) -> Option<(u16, u16, ratatui::style::Style)> {
        let buffer = screen.buffer();
        (0..buffer.area.height).find_map(|y| {
            let row: String = (0..buffer.area.width).map(|x| buffer[(x, y)].symbol()).collect();
            let x = row.find(text)?;
            let x = row[..x].chars().count() as u16;
            Some((x, y, buffer[(x, y)].style()))
        })
    }

    #[test]
    fn a_narrow_pane_drops_the_callers_shared_prefix_before_their_own_names() {
        // Issue 81: `Phoenix.LiveView.Channel.decode_…` kept the shared module and cut the name.
        let code = "\
class PhoenixLiveViewChannelServer:
    class ChannelStateMachine:
        def decode_join_payload(self):
            return finish()

        def decode_leave_payload(self):
            return finish()


def finish():
    return 1
";
        let (_, screen) = pane_of(&[("lib/channel.py", code)], "finish", (44, 10));
        for name in ["decode_join_payload", "decode_leave_payload"] {
            assert!(find(&screen, name).is_some(), "{name} whole:\n{:?}", screen.buffer());
        }
    }

    #[test]
    fn unresolved_calls_show_dim_under_the_callees_and_are_not_selectable() {
        let (app, screen) = pane("Parameter.consume_value", (48, 10));
        insta::assert_snapshot!(screen);
        let dim = app.theme.style("text.dim");
        let (_, label_row, style) =
            find(&screen, "not resolved: ctx.lookup_default,").expect("the grey line");
        assert_eq!(style.fg, dim.fg, "drawn in the theme's dim style");
        let (_, callee_row, _) = find(&screen, "Parameter.get_default").expect("the resolved callee");
        assert!(label_row > callee_row, "under the callees");
        assert!(find(&screen, "  ctx.get_parameter_source").is_some(), "wrapped, indented");
        assert_eq!(app.neighbours().len(), 1, "only the resolved callee is a jump target");
    }

    #[test]
    fn a_method_calling_only_through_an_untyped_attribute_says_so() {
        let (_, screen) = pane("PromptBase.on_validate_error", (48, 8));
        assert!(find(&screen, "callees (0)").is_some());
        assert!(find(&screen, "not resolved: self.console.print").is_some());
    }

    #[test]
    fn callers_the_graph_could_not_confirm_are_listed_as_call_sites_not_none() {
        // fzf's `Item.acceptNth`, called as `item.acceptNth(…)` (issue #61).
        let go = "package fzf\n\ntype Item struct{}\n\nfunc (it *Item) acceptNth() int {\n\treturn 1\n}\n\n\
                  func (t *Terminal) render(item *Item) int {\n\treturn item.acceptNth()\n}\n";
        let (_, screen) = pane_of(&[("src/item.go", go)], "Item.acceptNth", (60, 10));
        assert!(find(&screen, "callers (0 resolved, 1 by name)").is_some(), "{screen:?}");
        assert!(find(&screen, "none resolved").is_some(), "{screen:?}");
        assert!(find(&screen, "called, not resolved: item.go:10").is_some(), "{screen:?}");
    }

    /// Issue 70: Dapper's two `SqlMapper.Execute` overloads read alike among the callers; each
    /// carries its line, also where the pane has no room for locations.
    #[test]
    fn overloads_among_the_neighbours_carry_their_lines() {
        let cs = "namespace Dapper\n{\n    public static partial class SqlMapper\n    {\n\
                  public static int Execute(string sql)\n        {\n            return ExecuteImpl(sql, null);\n        }\n\n\
                  public static int Execute(string sql, object param)\n        {\n            return ExecuteImpl(sql, param);\n        }\n\n\
                  private static int ExecuteImpl(string sql, object param)\n        {\n            return 0;\n        }\n    }\n}\n";
        for width in [30, 80] {
            let (_, screen) = pane_of(&[("Dapper/SqlMapper.cs", cs)], "SqlMapper.ExecuteImpl", (width, 10));
            assert!(find(&screen, "callers (2)").is_some(), "{screen:?}");
            for line in [5, 10] {
                assert!(find(&screen, &format!("SqlMapper.Execute:{line}")).is_some(), "{width}: {screen:?}");
            }
        }
        let labels = [("A.f".to_string(), 3), ("A.f".to_string(), 9), ("A.g".to_string(), 12)];
        assert_eq!(told_apart(&labels), ["A.f:3", "A.f:9", "A.g"]);
    }

    #[test]
    fn rows_have_headers_and_none_markers() {
        let n = [Neighbour { chunk: 7, direction: Direction::Callee }];
        let rows = display_rows(&n);
        assert_eq!(
            rows,
            [Row::Header(Direction::Caller, 0), Row::Empty, Row::Header(Direction::Callee, 1), Row::Item(0)]
        );
        assert_eq!(scroll_top(&rows, 0, 2), 2);
        assert_eq!(scroll_top(&rows, 0, 10), 0);
    }

    #[test]
    fn unresolved_calls_wrap_under_one_label() {
        let names: Vec<String> =
            ["ctx.lookup_default", "self.console.print", "x.run"].iter().map(|s| s.to_string()).collect();
        assert_eq!(
            unresolved_lines(CALLEES_LABEL, &names, 60),
            ["not resolved: ctx.lookup_default, self.console.print, x.run"]
        );
        assert_eq!(
            unresolved_lines(CALLEES_LABEL, &names, 36),
            ["not resolved: ctx.lookup_default,", "  self.console.print, x.run"]
        );
        assert_eq!(unresolved_lines(CALLEES_LABEL, &names[..1], 20), ["not resolved: ctx.l…"]);
        assert!(unresolved_lines(CALLEES_LABEL, &[], 40).is_empty());
    }
}
