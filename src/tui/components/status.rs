//! The status bar (repository, chunks, device, model, index state, messages) and the
//! indexing gauge (phase, counts, rate, ETA).

use super::{truncate_end, width};
use crate::progress::Phase;
use crate::tui::app::{App, IndexState, PhaseProgress};
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Gauge, Paragraph};
use ratatui::Frame;
use std::time::Duration;

/// The status bar: `coret`, then what a user needs to know, in words: the repository, its
/// chunks, the device, the model (`CoRet (trained)`) and the index state (`embedding 1,200 of
/// 5,000`, `ready`); on the right, the answer to the last key, else an indexing note, else the
/// help key. The state always shows; an answer may push the details out (device first, then
/// the model, the repository, the chunks); a note or the help key only takes the room left.
pub fn render_status(app: &App, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let bar = theme.style("status");
    let label = theme.style("status.label");
    let sep = Span::styled(" │ ", label);
    let (state, state_style) = state_label(app);
    let details = details(app);
    let (right, right_style, pushes) = match (&app.message, &app.index.info) {
        (Some(m), _) => {
            (m.text.clone(), theme.style(if m.error { "message.error" } else { "message.info" }), true)
        }
        (None, Some(info)) => (info.clone(), label, false),
        (None, None) => (HELP_KEY.into(), label, false),
    };
    let total = area.width as usize;
    let spans_for = |keep: &[bool]| {
        let mut spans = vec![Span::styled(" coret ", theme.style("status.ok"))];
        for (text, _) in details.iter().zip(keep).filter(|(_, k)| **k).map(|(d, _)| d) {
            spans.push(Span::styled(text.clone(), bar));
            spans.push(sep.clone());
        }
        spans.push(Span::styled(state.clone(), state_style));
        spans
    };
    let left_width = |spans: &[Span]| spans.iter().map(|s| width(&s.content)).sum::<usize>();
    let mut keep = vec![true; details.len()];
    let mut left = spans_for(&keep);
    let wanted = if pushes { width(&right) } else { 0 };
    for drop in DROP_ORDER {
        if left_width(&left) + wanted + 2 <= total {
            break;
        }
        if let Some(i) = details.iter().position(|(_, d)| *d == drop) {
            keep[i] = false;
            left = spans_for(&keep);
        }
    }
    let left_w = left_width(&left);
    let room = total.saturating_sub(left_w + 2);
    // An answer to a key is cut to the room; a note shows whole or not at all (a cut one,
    // standing through the whole indexing, says nothing): then the help key, if it fits.
    let right = if pushes {
        truncate_end(&right, room)
    } else if width(&right) <= room {
        right
    } else if width(HELP_KEY) <= room {
        HELP_KEY.to_string()
    } else {
        String::new()
    };
    let gap = total.saturating_sub(left_w + width(&right) + 1);
    let mut spans = left;
    spans.push(Span::styled(" ".repeat(gap), bar));
    spans.push(Span::styled(right, right_style));
    spans.push(Span::styled(" ", bar));
    frame.render_widget(Paragraph::new(Line::from(spans)).style(bar), area);
}

/// What the bar's right end shows when it has nothing to say.
const HELP_KEY: &str = "F1 help";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Detail {
    Repo,
    Chunks,
    Device,
    Model,
}

/// Which detail goes first when the bar is too narrow: the least a user needs at a glance. The
/// repository's name never goes for a message (issue 81: a long message hid which checkout
/// this is); the message is cut instead, and the name goes only where nothing else fits.
const DROP_ORDER: [Detail; 3] = [Detail::Device, Detail::Model, Detail::Chunks];

/// The session's details, in the order they show, each with what it is.
fn details(app: &App) -> Vec<(String, Detail)> {
    let session = &app.session;
    let repo = session.label.clone().unwrap_or_else(|| {
        session
            .repo
            .file_name()
            .map_or_else(|| session.repo.display().to_string(), |n| n.to_string_lossy().into())
    });
    let chunks = match app.backend.as_ref().map(|b| b.chunk_count()).or(app.index.chunks) {
        Some(n) => format!("{} chunks", thousands(n)),
        None => "… chunks".into(),
    };
    let all = [
        (repo, Detail::Repo),
        (chunks, Detail::Chunks),
        (session.device.clone(), Detail::Device),
        (model_label(&session.model), Detail::Model),
    ];
    all.into_iter().filter(|(d, _)| !d.is_empty()).collect()
}

/// The model in a user's words. The CLI names it `<base directory>`, `<base> + CoRet` (the
/// shipped adapters) or `<base> + <adapter or tower-layers path>`; the bar says
/// `pretrained`, `CoRet (trained)` or the adapter's file name. Towers, hashes and precision
/// are for the JSON `stats` and the eval summary, not for the bar.
pub fn model_label(model: &str) -> String {
    match model.rsplit_once(" + ") {
        Some((_, "CoRet")) => "CoRet (trained)".into(),
        Some((_, layers)) => layers.rsplit(['/', '\\']).next().unwrap_or(layers).to_string(),
        None if model.is_empty() => String::new(),
        None if model == "unavailable" => "no model".into(),
        None => "pretrained".into(),
    }
}

/// The index state in a user's words: `indexing: parsing files`, `embedding 1,200 of 5,000`,
/// `ready`.
fn state_label(app: &App) -> (String, Style) {
    let theme = &app.theme;
    let progress = app.index.progress.as_ref();
    match &app.index.state {
        IndexState::Indexing => {
            let phase = progress.map_or("starting", |p| phase_words(p.phase).0);
            (format!("indexing: {phase}"), theme.style("status.busy"))
        }
        IndexState::Bm25Only if app.index.dense_error.is_some() => {
            ("BM25 only (dense failed)".into(), theme.style("status.error"))
        }
        IndexState::Bm25Only => match progress.filter(|p| p.phase == Phase::Embed && p.total > 0) {
            Some(p) => (
                format!("embedding {} of {}", thousands(p.done), thousands(p.total)),
                theme.style("status.busy"),
            ),
            None => ("BM25 ready · dense starting".into(), theme.style("status.busy")),
        },
        // Query-first: CoRet answers over what is embedded while the rest goes on.
        IndexState::Ready if app.index.dense_partial => match progress.filter(|p| p.phase == Phase::Embed) {
            Some(p) if p.total > 0 => (
                format!("CoRet partial · embedding {} of {}", thousands(p.done), thousands(p.total)),
                theme.style("status.busy"),
            ),
            _ => ("CoRet partial · embedding".into(), theme.style("status.busy")),
        },
        IndexState::Ready => ("ready".into(), theme.style("status.ok")),
        IndexState::Failed(_) => ("index failed".into(), theme.style("status.error")),
    }
}

/// What a phase is doing, and what it counts.
fn phase_words(phase: Phase) -> (&'static str, &'static str) {
    match phase {
        Phase::Walk => ("scanning files", "files"),
        Phase::Parse => ("parsing files", "files"),
        Phase::CallGraph => ("linking calls", "chunks"),
        Phase::Bm25 => ("BM25 index", "chunks"),
        Phase::Embed => ("embedding chunks", "chunks"),
        Phase::Instances => ("evaluating", "instances"),
    }
}

/// The indexing gauge: `embedding chunks 1,234/5,000 · 85 chunks/s · ETA 0:44 · 42 files`.
pub fn render_gauge(app: &App, frame: &mut Frame, area: Rect) {
    let Some(progress) = &app.index.progress else {
        return;
    };
    // A space each side: where the bar reaches the centred label, it never touches its text.
    let gauge = Gauge::default()
        .ratio(progress.ratio())
        .label(format!(" {} ", gauge_label(progress, app.index.files)))
        .gauge_style(app.theme.style("gauge"))
        .use_unicode(true);
    frame.render_widget(gauge, area);
}

pub fn gauge_label(p: &PhaseProgress, files: Option<usize>) -> String {
    let (what, unit) = phase_words(p.phase);
    // A phase that cannot count ahead (the walk) reports no total.
    if p.total == 0 {
        return format!("{what}…");
    }
    let mut label = format!("{what} {}/{} {unit}", thousands(p.done), thousands(p.total));
    if let Some(cached) = p.work.map(|w| w.cached).filter(|&n| n > 0) {
        label.push_str(&format!(" · {} cached", thousands(cached)));
    }
    if let Some(rate) = p.rate() {
        let per = if p.phase == Phase::Embed { "embeddings" } else { unit };
        label.push_str(&format!(" · {rate:.0} {per}/s"));
    }
    if let Some(eta) = p.eta() {
        label.push_str(&format!(" · ETA {}", clock(eta)));
    }
    if let (Some(n), Phase::CallGraph | Phase::Bm25 | Phase::Embed) = (files, p.phase) {
        label.push_str(&format!(" · {} files", thousands(n)));
    }
    label
}

fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::EmbedWork;
    use crate::tui::action::Action;
    use crate::tui::app::History;
    use crate::tui::demo::DemoBackend;
    use crate::tui::{Session, Theme};
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;
    use std::sync::Arc;
    use std::time::Instant;

    #[test]
    fn gauge_label_has_counts_rate_and_eta() {
        let t0 = Instant::now();
        let p = PhaseProgress {
            phase: Phase::Embed,
            done: 1200,
            total: 5000,
            started: t0,
            last: t0 + Duration::from_secs(10),
            work: None,
        };
        assert_eq!(
            gauge_label(&p, Some(42)),
            "embedding chunks 1,200/5,000 chunks · 120 embeddings/s · ETA 0:31 · 42 files"
        );
        let resumed = PhaseProgress {
            work: Some(EmbedWork { cached: 5120, tokens_done: 30_000, tokens_total: 60_000 }),
            ..p
        };
        assert_eq!(
            gauge_label(&resumed, None),
            "embedding chunks 1,200/5,000 chunks · 5,120 cached · 120 embeddings/s · ETA 0:10"
        );
    }

    #[test]
    fn a_phase_without_a_total_shows_no_counts() {
        let t0 = Instant::now();
        let walk = PhaseProgress { phase: Phase::Walk, done: 0, total: 0, started: t0, last: t0, work: None };
        assert_eq!(gauge_label(&walk, None), "scanning files…");
        let graph = PhaseProgress { phase: Phase::CallGraph, total: 750, ..walk };
        assert_eq!(gauge_label(&graph, Some(9)), "linking calls 0/750 chunks · 9 files");
    }

    /// The status bar's text for `app` at `cols` columns.
    fn status_text(app: &App, cols: u16) -> String {
        let mut terminal = Terminal::new(TestBackend::new(cols, 1)).unwrap();
        terminal.draw(|frame| render_status(app, frame, frame.area())).unwrap();
        let buffer = terminal.backend().buffer().clone();
        (0..cols).map(|x| buffer[(x, 0)].symbol().to_string()).collect::<String>().trim_end().to_string()
    }

    fn embedding_app() -> App {
        let session = Session {
            repo: "/home/me/src/click".into(),
            model: "all-MiniLM-L6-v2 + CoRet".into(),
            device: "cuda:0".into(),
            label: None,
            initial_query: None,
            order: Default::default(),
        };
        let mut app = App::new(session, Theme::default(), (80, 24), History::default());
        let t0 = Instant::now();
        app.update(Action::IndexProgress { phase: Phase::Parse, done: 4, total: 4, at: t0 });
        app.update(Action::Bm25Ready(Arc::new(DemoBackend::sample().with_dense(false))));
        app.update(Action::IndexProgress { phase: Phase::Embed, done: 1200, total: 5000, at: t0 });
        app
    }

    #[test]
    fn the_model_reads_in_a_users_words() {
        assert_eq!(model_label("all-MiniLM-L6-v2 + CoRet"), "CoRet (trained)");
        assert_eq!(model_label("all-MiniLM-L6-v2"), "pretrained");
        assert_eq!(model_label("minilm + /tmp/run/adapters-r8.safetensors"), "adapters-r8.safetensors");
        assert_eq!(model_label("unavailable"), "no model");
    }

    /// At 80 columns the bar says what a user needs, in words, and a long indexing note (the
    /// towers' internals, say) takes only the room left instead of pushing it out.
    #[test]
    fn at_80_columns_the_bar_keeps_the_repository_chunks_device_model_and_state() {
        let mut app = embedding_app();
        let bar = status_text(&app, 80);
        assert_eq!(bar, " coret click │ 22 chunks │ cuda:0 │ CoRet (trained) │ embedding 1,200 of 5,000");
        let note = "query tower all-MiniLM-L6-v2-53aa51172d14 + lora-dfd6b3a40d66 bf16 (tied)";
        app.update(Action::IndexInfo(note.into()));
        assert_eq!(status_text(&app, 80), bar, "no room for the note: left out");
        let cut = status_text(&app, 120);
        assert!(cut.ends_with("F1 help") && !cut.contains('…'), "a note shows whole or not at all: {cut}");
        let wide = status_text(&app, 160);
        assert!(wide.starts_with(&bar) && wide.ends_with("(tied)"), "{wide}");
        app.update(Action::DenseReady(Arc::new(DemoBackend::sample())));
        let ready = status_text(&app, 80);
        assert!(ready.contains("22 chunks │ CoRet (trained) │ ready"), "{ready}");
    }

    /// The demo backend, its dense index said to be partial (query-first, still embedding).
    struct Partial(DemoBackend);

    impl crate::tui::Backend for Partial {
        crate::tui::demo::forward_to_demo!();
        fn has_dense(&self) -> bool {
            true
        }
        fn dense_partial(&self) -> Option<(usize, usize)> {
            Some((1200, 5000))
        }
    }

    /// Reported: `ready` for the 20 minutes a big repository took to embed. While CoRet answers
    /// over a partial index the state says so with the count, and the gauge stays.
    #[test]
    fn a_partial_dense_index_is_not_ready_and_keeps_the_gauge() {
        let mut app = embedding_app();
        app.update(Action::DenseReady(Arc::new(Partial(DemoBackend::sample()))));
        let bar = status_text(&app, 100);
        assert!(bar.contains("CoRet partial · embedding 1,200 of 5,000"), "{bar}");
        assert!(app.index.busy(), "the gauge stays while the rest embeds");
        app.update(Action::DenseReady(Arc::new(DemoBackend::sample())));
        assert!(status_text(&app, 100).contains("│ ready"));
        assert!(!app.index.busy());
    }

    /// The answer to a key may push details out, the device first; the state stays.
    #[test]
    fn a_message_pushes_out_the_device_first_and_never_the_state() {
        let mut app = embedding_app();
        app.update(Action::CopyLocation);
        let bar = status_text(&app, 90);
        assert!(bar.ends_with("nothing selected"), "{bar}");
        assert!(bar.contains("click │ 22 chunks │ CoRet (trained) │ embedding 1,200 of 5,000"), "{bar}");
        assert!(!bar.contains("cuda"), "{bar}");
        let narrow = status_text(&app, 80);
        assert_eq!(narrow, " coret click │ 22 chunks │ embedding 1,200 of 5,000            nothing selected");
    }

    /// Issue 81: a long message kept pushing until the repository's name went; the name stays
    /// and the message is cut.
    #[test]
    fn a_long_message_is_cut_before_the_repository_name_goes() {
        let mut app = embedding_app();
        let long = "re-indexed 3 files: src/a.py, src/b.py and src/very/long/path/to/a/module.py";
        app.update(Action::Reindexed { backend: Arc::new(DemoBackend::sample()), note: long.into() });
        let bar = status_text(&app, 80);
        assert!(bar.starts_with(" coret click │"), "{bar}");
        assert!(bar.contains("re-indexed 3 files") && bar.ends_with('…'), "the message is cut: {bar}");
    }

    /// Reported: the centred label ran into the bar (`██▌embedding…`). At every fill, a blank
    /// cell stands between the label's text and the bar's blocks.
    #[test]
    fn the_gauge_label_never_touches_its_bar() {
        let mut app = embedding_app();
        let t0 = Instant::now();
        for done in 0..=100 {
            app.update(Action::IndexProgress { phase: Phase::Embed, done, total: 100, at: t0 });
            let mut terminal = Terminal::new(TestBackend::new(60, 1)).unwrap();
            terminal.draw(|frame| render_gauge(&app, frame, frame.area())).unwrap();
            let buffer = terminal.backend().buffer().clone();
            let cells: Vec<String> = (0..60).map(|x| buffer[(x, 0)].symbol().to_string()).collect();
            let is_text = |c: &String| c.chars().any(|ch| ch.is_alphanumeric());
            let first = cells.iter().position(is_text).unwrap();
            let last = cells.iter().rposition(is_text).unwrap();
            let block =
                |i: usize| cells.get(i).is_some_and(|c| c.chars().any(|ch| ('█'..='▏').contains(&ch)));
            assert!(!block(first - 1) && !block(last + 1), "{done}%: {}", cells.concat());
        }
    }

    #[test]
    fn thousands_and_clock() {
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(thousands(999), "999");
        assert_eq!(clock(Duration::from_secs(3725)), "1:02:05");
    }
}
