//! A ranked results column: `rank score↓ kind name  path:line  mark`. The header says what the
//! score is; `↓` marks a hit in a test file, ranked lower than its score (the legend under the
//! list says so); `•` marks a hybrid hit the issue names outright (its file or its own name,
//! which the hybrid lifts); the mark gives the chunk's rank in the other column (`D3`: third in the
//! dense column), on every row whose chunk the other column ranks.

use super::fit::{self, Row, Shortening};
use super::{dim_line, kind_span, pad_line, pane_block, waiting, width};
use crate::index::{Hit, Retriever};
use crate::progress::Phase;
use crate::rank::fusion::{FusionMethod, FusionParams};
use crate::rank::mentions::{NamedFiles, NamedSymbols};
use crate::tui::action::Pane;
use crate::tui::app::{
    list_rows, scroll_to_show, App, ColumnStatus, FirstProgress, IndexState, RerankStatus, ResultsColumn,
    RowInfo,
};
use crate::tui::theme::Theme;
use crate::{Chunk, ChunkKind};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

/// Narrower lists leave the score out of the rows (the selected hit's shows under the list):
/// at 100 columns the name and `path:line` need the cells.
const SCORE_MIN_WIDTH: usize = 56;
/// The mark of a demoted hit (in a test file), after its score.
const DEMOTED: &str = "↓";
/// The mark of a list the reranker re-ordered (and, while it works, of the wait for it).
const RERANKED: &str = "↻";
/// The mark of a hybrid hit the issue names (lifted by the path or symbol boost).
const NAMED: &str = "•";

pub fn title(retriever: Retriever) -> &'static str {
    match retriever {
        Retriever::Bm25 => "BM25",
        Retriever::Dense => "CoRet dense",
        Retriever::Hybrid => "Hybrid",
        Retriever::History => "History",
    }
}

/// What a column's scores are, for its header.
pub fn score_label(retriever: Retriever, fusion: &FusionParams) -> &'static str {
    match retriever {
        Retriever::Bm25 => "BM25 score",
        Retriever::Dense => "cosine",
        Retriever::Hybrid if fusion.method == FusionMethod::Rrf => "RRF of BM25+CoRet",
        Retriever::Hybrid => "BM25+CoRet fused, in σ",
        Retriever::History if fusion.history.sum => "summed commits' BM25",
        Retriever::History => "best commit's BM25",
    }
}

pub fn marker_letter(retriever: Retriever) -> char {
    match retriever {
        Retriever::Bm25 => 'B',
        Retriever::Dense => 'D',
        Retriever::Hybrid => 'H',
        Retriever::History => 'G',
    }
}

fn format_score(retriever: Retriever, score: f32) -> String {
    match retriever {
        Retriever::Bm25 => format!("{score:.2}"),
        Retriever::Dense => format!("{score:.3}"),
        // Rank fusion scores are small fractions (0.0164); score fusion's are standard
        // deviations (12.37).
        Retriever::Hybrid if score.abs() < 1.0 => format!("{score:.4}"),
        Retriever::Hybrid => format!("{score:.2}"),
        Retriever::History => format!("{score:.2}"),
    }
}

/// Whether `chunk` was ranked lower than its score: a test file's, under a test weight below 1.
pub fn demoted(fusion: &FusionParams, chunk: &Chunk) -> bool {
    fusion.test_weight < 1.0 && chunk.is_test()
}

/// How the test demotion reads in the legend: "at 10× its rank".
pub fn demotion_text(fusion: &FusionParams) -> String {
    if fusion.test_weight <= 0.0 {
        "test file, ranked after the rest".to_string()
    } else {
        format!("test file, ranked as if at {}× its rank", 1.0 / fusion.test_weight)
    }
}

/// Draws list `index` into `columns[index]` (the other list's area shapes its rows too).
pub fn render(app: &App, frame: &mut Frame, columns: [Rect; 2], index: usize) {
    let theme = &app.theme;
    let area = columns[index];
    let column = &app.columns[index];
    let focused = app.focus == [Pane::Left, Pane::Right][index];
    let fusion = app.backend.as_ref().map(|b| b.fusion()).unwrap_or_default();
    // A dense ranking over a partial index (query-first) says so: more comes with a later search.
    let dense_column = matches!(column.retriever, Retriever::Dense | Retriever::Hybrid);
    let partial = dense_column && app.backend.as_ref().is_some_and(|b| b.dense_partial().is_some());
    // Which tier answered: the static tier where no transformer loads, and the first answer
    // of a cold search while the transformer refines it ("static · refining").
    let refining = column.status == ColumnStatus::Refining;
    let tier = match app.backend.as_ref() {
        Some(b) if refining => b.first_answer_tier().filter(|t| dense_column && *t == "static"),
        Some(b) => b.dense_tier().filter(|t| dense_column && *t == "static"),
        None => None,
    };
    let label = match column.rerank {
        RerankStatus::Done { depth, .. } => format!("{RERANKED} reranked, top {depth}"),
        _ => score_label(column.retriever, &fusion).to_string(),
    };
    let title = format!(
        " {} {} · {label}{}{} ",
        index + 1,
        title(column.retriever),
        if partial && tier.is_none() { " · partial" } else { "" },
        match (tier, refining) {
            (Some(t), true) => format!(" · {t} · refining"),
            (Some(t), false) => format!(" · {t} tier"),
            (None, _) => String::new(),
        }
    );
    let room = (area.width as usize).saturating_sub(width(&title) + 4);
    let mut block = pane_block(theme, title, focused);
    if let Some(summary) = summary(column, app.results_stale(), room, app.index.first.as_ref()) {
        block = block.title_top(Line::from(summary).right_aligned().style(theme.style("text.dim")));
    }
    let inner = block.inner(area);
    if column.hits.is_empty() {
        frame.render_widget(block, area);
        let (text, error) = empty_text(app, index);
        let line =
            if error { Line::styled(text, theme.style("message.error")) } else { dim_line(theme, text) };
        frame.render_widget(Paragraph::new(line).wrap(Wrap { trim: true }), inner);
        return;
    }
    let layout = RowLayout::new(app, index, &fusion, columns.map(|c| c.width.saturating_sub(2) as usize));
    for (text, right) in legend(column, &layout, &fusion, area.width as usize) {
        let line = Line::styled(text, theme.style("text.dim"));
        block = block.title_bottom(if right { line.right_aligned() } else { line });
    }
    frame.render_widget(block, area);
    let rows = list_rows(area);
    let offset = scroll_to_show(column.offset, column.selected, rows);
    let lines: Vec<Line> = column
        .hits
        .iter()
        .enumerate()
        .skip(offset)
        .take(rows)
        .map(|(i, hit)| {
            // The cursor shows in both columns; the bar only in the one the preview follows.
            let selected = i == column.selected;
            let line = layout.line(app, i, *hit, selected);
            if selected && app.active_column == index {
                let style = theme.style_or("selection", focused);
                pad_line(line, inner.width as usize, style).style(style)
            } else {
                line
            }
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

/// What the bottom border explains, where it has room: the demotion mark when a row carries
/// it (left), and the selected hit's score when the rows leave scores out (right).
fn legend(
    column: &ResultsColumn,
    layout: &RowLayout,
    fusion: &FusionParams,
    width_cells: usize,
) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut room = width_cells.saturating_sub(4);
    if !layout.score {
        if let Some(hit) = column.selected_hit() {
            // A reranked head's scores are the reranker's; below it they stay the hybrid's.
            let label = match column.rerank {
                RerankStatus::Done { depth, .. }
                    if column
                        .all_hits
                        .iter()
                        .position(|h| h.chunk == hit.chunk)
                        .is_some_and(|i| i < depth) =>
                {
                    "reranker score"
                }
                _ => score_label(column.retriever, fusion),
            };
            let text = format!(" {label} {} ", format_score(column.retriever, hit.score));
            room = room.saturating_sub(width(&text) + 1);
            out.push((text, true));
        }
    }
    if layout.named.contains(&true) {
        let text = format!(" {NAMED} named in the issue ");
        if width(&text) <= room {
            room -= width(&text) + 1;
            out.push((text, false));
        }
    }
    if layout.flag {
        let text = format!(" {DEMOTED} {} ", demotion_text(fusion));
        let short = format!(" {DEMOTED} test file, ranked lower ");
        if let Some(text) = [text, short].into_iter().find(|t| width(t) <= room) {
            out.push((text, false));
        }
    }
    out
}

/// A duration as a person reads it: `3 ms` under a second, `44.7 s` above (issue 81: `44660 ms`).
fn took(d: std::time::Duration) -> String {
    match d.as_millis() {
        ms @ 0..1000 => format!("{ms} ms"),
        _ => format!("{:.1} s", d.as_secs_f64()),
    }
}

/// "50 hits · 3 ms", or what the column is doing; hits for an issue the editor no longer
/// holds say so. The longest that fits in `room` cells beside the header.
fn summary(
    column: &ResultsColumn,
    stale: bool,
    room: usize,
    first: Option<&FirstProgress>,
) -> Option<String> {
    let n = column.ranked.len().max(column.hits.len());
    // Grouped by file: how many files the hits fall in (the rows' order is the files').
    let files = match column.order {
        crate::rank::ResultOrder::Grouped => {
            format!(" in {} files", column.rows.iter().filter(|r| !r.nested).count())
        }
        crate::rank::ResultOrder::Flat => String::new(),
    };
    let candidates = match &column.status {
        ColumnStatus::Searching => vec![" searching… ".to_string()],
        ColumnStatus::Refining => waiting::summaries(n, first),
        ColumnStatus::Ready if stale => {
            vec![format!(" {n} hits · earlier issue, Ctrl-S "), " earlier issue, Ctrl-S ".to_string()]
        }
        ColumnStatus::Ready => {
            let ms = column.elapsed.map(|d| format!(" · {}", took(d))).unwrap_or_default();
            let rerank = match column.rerank {
                RerankStatus::Off => String::new(),
                RerankStatus::Pending => " · reranking…".to_string(),
                RerankStatus::Done { took: t, .. } => format!(" · {RERANKED} {}", took(t)),
            };
            vec![
                format!(" {n} hits{files}{ms}{rerank} "),
                format!(" {n} hits{files}{rerank} "),
                format!(" {n} hits{files} "),
                format!(" {n} hits "),
            ]
        }
        _ => Vec::new(),
    };
    candidates.into_iter().find(|c| width(c) <= room)
}

/// The text of a column without hits, and whether it is an error.
fn empty_text(app: &App, index: usize) -> (String, bool) {
    let column = &app.columns[index];
    let waiting_dense =
        || match app.index.progress.as_ref().filter(|_| app.index.state == IndexState::Bm25Only) {
            // Before its first report the gauge still holds the previous phase (e.g. the
            // call graph at 100%), which says nothing about the dense index.
            Some(p) if p.phase == Phase::Embed => {
                format!(
                    "Waiting for the dense index (embedding {:.0}%). BM25 works already.",
                    p.ratio() * 100.0
                )
            }
            Some(_) => "Waiting for the dense index (starting). BM25 works already.".to_string(),
            None => "Waiting for the dense index…".to_string(),
        };
    let dense_missing =
        column.retriever != Retriever::Bm25 && !app.backend.as_ref().is_some_and(|b| b.has_dense());
    if let IndexState::Failed(e) = &app.index.state {
        // Nothing will ever be searchable: say why in every column, not only in the status bar.
        return (format!("Indexing failed: {e}. Nothing can be searched; see the README's setup."), true);
    }
    let text = match &column.status {
        ColumnStatus::Failed(e) => return (e.clone(), true),
        ColumnStatus::Refining => waiting::body(app.index.first.as_ref()),
        ColumnStatus::Searching => "Searching…".to_string(),
        ColumnStatus::Ready => "No matches.".to_string(),
        ColumnStatus::WaitingForIndex if app.backend.is_none() => "Waiting for the BM25 index…".to_string(),
        ColumnStatus::WaitingForIndex => waiting_dense(),
        ColumnStatus::Idle if app.backend.is_none() => {
            "Indexing… you can type the issue meanwhile.".to_string()
        }
        ColumnStatus::Idle if dense_missing => match &app.index.dense_error {
            Some(e) => return (format!("Dense index unavailable: {e}"), true),
            None => waiting_dense(),
        },
        ColumnStatus::Idle => "Press Ctrl-S to search.".to_string(),
    };
    (text, false)
}

/// Per hit of a hybrid column, whether the issue it was searched for names it by file or own
/// name, where the fusion boosts such hits (the rule is the engine's: `crate::rank::mentions`).
fn named_hits(app: &App, column: &ResultsColumn, fusion: &FusionParams) -> Vec<bool> {
    let query = app.last_query.as_deref().unwrap_or_default();
    let boosts = (fusion.path_boost > 0.0, fusion.symbol_boost > 0.0);
    if column.retriever != Retriever::Hybrid || boosts == (false, false) || query.is_empty() {
        return vec![false; column.hits.len()];
    }
    let (files, symbols) = (NamedFiles::of(query), NamedSymbols::of(query));
    let named = |c: &Chunk| (boosts.0 && files.names(&c.path)) || (boosts.1 && symbols.names(&c.name));
    column.hits.iter().map(|h| app.chunk(h.chunk).is_some_and(named)).collect()
}

/// The cells every row of a column shares, so ranks, scores and locations line up.
struct RowLayout {
    retriever: Retriever,
    other: Retriever,
    fusion: FusionParams,
    cells: usize,
    rank_w: usize,
    /// Whether rows show scores, and their width.
    score: bool,
    score_w: usize,
    /// Whether some hit is demoted (a cell for `↓`).
    flag: bool,
    /// Per hit, whether the issue names it (`•` before its kind).
    named: Vec<bool>,
    marker_w: usize,
    marks: Vec<Option<usize>>,
    /// Per row: the rank it shows and whether it is a file's row with hits nested beneath.
    rows: Vec<RowInfo>,
    /// Per row, the name it shows (`+N` after a file's row, `· ` before a nested hit).
    names: Vec<String>,
    /// How every row's name and location are shortened (`fit`'s rule: one step for both lists).
    step: Shortening,
    /// Per row of the other list: its chunk and the cells its name and location have there,
    /// less what its row adds to the name (`· `, ` +3`): a hit in both lists is shortened to
    /// the narrower of the two, so that it reads alike side by side.
    twins: Vec<(u32, usize)>,
}

impl RowLayout {
    /// The layout of column `index`'s rows; `cells` holds both lists' inner widths, since the
    /// two read alike: each part of the rule goes as far as the list that needs it most.
    fn new(app: &App, index: usize, fusion: &FusionParams, cells: [usize; 2]) -> Self {
        let mine = RowLayout::unshortened(app, index, fusion, cells[index]);
        let theirs = RowLayout::unshortened(app, 1 - index, fusion, cells[1 - index]);
        let root = shared_root(app);
        let step = mine.own_step(app, index, root).deepest(theirs.own_step(app, 1 - index, root));
        let twins = app.columns[1 - index]
            .hits
            .iter()
            .zip(&theirs.names)
            .map(|(h, name)| (h.chunk, theirs.with_mark().saturating_sub(decoration(app, h.chunk, name))))
            .collect();
        RowLayout { step, twins, ..mine }
    }

    fn unshortened(app: &App, index: usize, fusion: &FusionParams, cells: usize) -> Self {
        let (column, other) = (&app.columns[index], &app.columns[1 - index]);
        let marks: Vec<Option<usize>> = column.hits.iter().map(|h| other.rank_of(h.chunk)).collect();
        let marker_w = marks.iter().flatten().map(|r| 1 + r.to_string().len()).max().unwrap_or(0);
        RowLayout {
            retriever: column.retriever,
            other: other.retriever,
            fusion: *fusion,
            cells,
            rank_w: row_infos(column).iter().map(|r| r.rank).max().unwrap_or(0).to_string().len(),
            score: cells >= SCORE_MIN_WIDTH,
            score_w: column
                .hits
                .iter()
                .map(|h| format_score(column.retriever, h.score).len())
                .max()
                .unwrap_or(0),
            flag: column.hits.iter().any(|h| app.chunk(h.chunk).is_some_and(|c| demoted(fusion, c))),
            named: named_hits(app, column, fusion),
            marker_w,
            marks,
            rows: row_infos(column),
            names: row_names(app, column),
            step: Shortening::NONE,
            twins: Vec::new(),
        }
    }

    /// The step this list's rows need by themselves, beside the other column's ranks (`D3`),
    /// which every row that has one keeps.
    fn own_step(&self, app: &App, index: usize, root: usize) -> Shortening {
        let names = row_names(app, &app.columns[index]);
        fit::choose(&rows(app, &app.columns[index], &names), root, self.with_mark())
    }

    /// The cells before a row's name: cursor, rank, score, demotion flag, named mark, kind.
    fn prefix(&self) -> usize {
        let score = if self.score { 1 + self.score_w } else { 0 };
        1 + self.rank_w + score + usize::from(self.flag) + 3
    }

    /// The cells for a row's name and location.
    fn available(&self) -> usize {
        self.cells.saturating_sub(self.prefix())
    }

    /// The cells for a row's name and location, less the marks' (`D3`) column when some row has one.
    fn with_mark(&self) -> usize {
        let marks = if self.marker_w > 0 { self.marker_w + 1 } else { 0 };
        self.available().saturating_sub(marks)
    }

    /// Row `row` of the list (its index in the column's rows).
    fn line(&self, app: &App, row: usize, hit: Hit, selected: bool) -> Line<'static> {
        let theme: &Theme = &app.theme;
        let info = self.rows.get(row).copied();
        let rank = info.map_or(row + 1, |r| r.rank);
        let Some(chunk) = app.chunk(hit.chunk) else {
            return Line::raw(format!("{rank:>w$} <chunk {} missing>", hit.chunk, w = self.rank_w));
        };
        // A hit nested beneath its file's row shows no rank of its own (it has its file's).
        let shown = if info.is_some_and(|r| r.nested) { String::new() } else { rank.to_string() };
        let mut spans = vec![
            Span::styled(if selected { "›" } else { " " }, theme.style("results.marker")),
            Span::styled(format!("{shown:>w$}", w = self.rank_w), theme.style("results.rank")),
        ];
        if self.score {
            let score = format!(" {:>w$}", format_score(self.retriever, hit.score), w = self.score_w);
            spans.push(Span::styled(score, theme.style("results.score")));
        }
        if self.flag {
            let flag = if demoted(&self.fusion, chunk) { DEMOTED } else { " " };
            spans.push(Span::styled(flag, theme.style("results.marker")));
        }
        // A named hit's mark takes the gap before its kind, so no row loses a cell to it.
        let gap = if self.named.get(row).copied().unwrap_or(false) { NAMED } else { " " };
        spans.extend([
            Span::styled(gap, theme.style("results.marker")),
            kind_span(theme, chunk.shown_kind()),
            Span::raw(" "),
        ]);
        debug_assert_eq!(spans.iter().map(|s| width(&s.content)).sum::<usize>(), self.prefix());
        // Locations line up before the marks. A row with a mark always shows it (its name and
        // file give way instead); one without takes the marks' cells when it shows more there.
        let name = self.names.get(row).map_or(chunk.name.as_str(), String::as_str);
        let fit_row = Row { name, path: &chunk.path, line: chunk.start_line, spelling: chunk.spelling() };
        let mark =
            self.marks.get(row).copied().flatten().map(|r| format!("{}{r}", marker_letter(self.other)));
        // A hit the other list shows too (it has a mark) gets no more cells than it has there.
        let twin = self.twins.iter().find(|t| t.0 == hit.chunk && mark.is_some());
        let budget =
            twin.map_or(self.with_mark(), |t| (t.1 + decoration(app, hit.chunk, name)).min(self.with_mark()));
        let (mut available, mut shown) = (self.with_mark(), fit::fit(&fit_row, self.step, budget));
        if mark.is_none() {
            let wider = fit::fit(&fit_row, self.step, self.available());
            if width(&wider.0) + width(&wider.1) > width(&shown.0) + width(&shown.1) {
                (available, shown) = (self.available(), wider);
            }
        }
        let (name, location) = shown;
        let gap = available.saturating_sub(width(&name) + width(&location));
        spans.extend([
            Span::styled(name, theme.style("results.name")),
            Span::raw(" ".repeat(gap)),
            Span::styled(location, theme.style("results.path")),
        ]);
        if let Some(mark) = mark {
            spans
                .push(Span::styled(format!(" {mark:>w$}", w = self.marker_w), theme.style("results.marker")));
        }
        Line::from(spans)
    }
}

/// The cells a row adds to its chunk's name (`· ` before a nested hit, ` +3` after a file's row).
fn decoration(app: &App, chunk: u32, row_name: &str) -> usize {
    width(row_name).saturating_sub(app.chunk(chunk).map_or(0, |c| width(&c.name)))
}

/// How many leading parts every hit's name in both lists shares (`Rack.`), which the rule
/// drops first (`fit::shared_root`: a method keeps its class).
fn shared_root(app: &App) -> usize {
    let hits = app.columns.iter().flat_map(|c| &c.hits);
    let chunks = hits.filter_map(|h| app.chunk(h.chunk));
    fit::shared_root(chunks.map(|c| (c.name.as_str(), c.kind == ChunkKind::Method)))
}

/// Each hit of `column` as its row shows it, with the names of [`row_names`].
fn rows<'a>(app: &'a App, column: &ResultsColumn, names: &'a [String]) -> Vec<Row<'a>> {
    let chunks = column.hits.iter().zip(names).filter_map(|(h, n)| app.chunk(h.chunk).map(|c| (c, n)));
    chunks.map(|(c, name)| Row { name, path: &c.path, line: c.start_line, spelling: c.spelling() }).collect()
}

/// How each row of `column` shows: its [`RowInfo`], or the flat rank where the column has
/// none (a list set by hand).
fn row_infos(column: &ResultsColumn) -> Vec<RowInfo> {
    (0..column.hits.len())
        .map(|i| {
            column.rows.get(i).copied().unwrap_or(RowInfo {
                rank: i + 1,
                nested: false,
                more: 0,
                expanded: false,
            })
        })
        .collect()
}

/// The name each row shows: a file's row with hits beneath says how many (`+2`, or `−2` while
/// they show), a nested hit starts with `· `.
fn row_names(app: &App, column: &ResultsColumn) -> Vec<String> {
    column
        .hits
        .iter()
        .zip(row_infos(column))
        .map(|(h, info)| {
            let name = app.chunk(h.chunk).map_or("", |c| c.name.as_str());
            match info {
                RowInfo { nested: true, .. } => format!("· {name}"),
                RowInfo { more: 0, .. } => name.to_string(),
                RowInfo { more, expanded: true, .. } => format!("{name} −{more}"),
                RowInfo { more, .. } => format!("{name} +{more}"),
            }
        })
        .collect()
}

/// The width (borders included) at which the list in column `index` shows every row whole,
/// scores and marks too; `None` while it has no hits. The wide layout gives the lists this
/// before it gives the preview the rest.
pub fn needed_width(app: &App, index: usize) -> Option<u16> {
    let column = &app.columns[index];
    if column.hits.is_empty() {
        return None;
    }
    let fusion = app.backend.as_ref().map(|b| b.fusion()).unwrap_or_default();
    let layout = RowLayout::unshortened(app, index, &fusion, usize::from(u16::MAX));
    let marks = if layout.marker_w > 0 { layout.marker_w + 1 } else { 0 };
    let names = row_names(app, column);
    let cells = layout.prefix() + fit::widest(&rows(app, column, &names)) + marks + 2;
    Some(u16::try_from(cells).unwrap_or(u16::MAX))
}
