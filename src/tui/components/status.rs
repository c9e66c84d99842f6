//! The status bar (repository, chunks, model, device, index state, messages) and the
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

pub fn render_status(app: &App, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let bar = theme.style("status");
    let label = theme.style("status.label");
    let sep = Span::styled(" │ ", label);
    let repo = app
        .session
        .repo
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| app.session.repo.display().to_string());
    let model = app.session.model.rsplit('/').next().unwrap_or_default().to_string();
    let chunk_count = app.backend.as_ref().map(|b| b.chunk_count()).or(app.index.chunks);
    let chunks = match chunk_count {
        Some(n) => format!("{} chunks", thousands(n)),
        None => "… chunks".into(),
    };
    let (state, state_style) = state_label(app);
    // Session details, dropped from the end (model first) when the bar is too narrow.
    let details: Vec<String> =
        [repo, chunks, app.session.device.clone(), model].into_iter().filter(|d| !d.is_empty()).collect();
    let (right, right_style) = match (&app.message, &app.index.info) {
        (Some(m), _) => (m.text.clone(), theme.style(if m.error { "message.error" } else { "message.info" })),
        (None, Some(info)) => (info.clone(), label),
        (None, None) => ("F1 help".into(), label),
    };
    let right_w = width(&right);
    let total = area.width as usize;
    let mut keep = details.len();
    let spans_for = |keep: usize| {
        let mut spans = vec![Span::styled(" coret ", theme.style("status.ok"))];
        for text in &details[..keep] {
            spans.push(Span::styled(text.clone(), bar));
            spans.push(sep.clone());
        }
        spans.push(Span::styled(state.clone(), state_style));
        spans
    };
    let left_width = |spans: &[Span]| spans.iter().map(|s| width(&s.content)).sum::<usize>();
    let mut left = spans_for(keep);
    while keep > 0 && left_width(&left) + right_w + 2 > total {
        keep -= 1;
        left = spans_for(keep);
    }
    let left_w = left_width(&left);
    let right = truncate_end(&right, total.saturating_sub(left_w + 2));
    let gap = total.saturating_sub(left_w + width(&right) + 1);
    let mut spans = left;
    spans.push(Span::styled(" ".repeat(gap), bar));
    spans.push(Span::styled(right, right_style));
    spans.push(Span::styled(" ", bar));
    frame.render_widget(Paragraph::new(Line::from(spans)).style(bar), area);
}

fn state_label(app: &App) -> (String, Style) {
    let theme = &app.theme;
    let phase = app.index.progress.as_ref().map(|p| p.phase.to_string()).unwrap_or_else(|| "starting".into());
    match &app.index.state {
        IndexState::Indexing => (format!("indexing: {phase}"), theme.style("status.busy")),
        IndexState::Bm25Only if app.index.dense_error.is_some() => {
            ("BM25 only (dense failed)".into(), theme.style("status.error"))
        }
        IndexState::Bm25Only => ("BM25 ready · dense building".into(), theme.style("status.busy")),
        IndexState::Ready => ("ready".into(), theme.style("status.ok")),
        IndexState::Failed(_) => ("index failed".into(), theme.style("status.error")),
    }
}

/// The indexing gauge: `embedding chunks 1,234/5,000 · 85 chunks/s · ETA 0:44 · 42 files`.
pub fn render_gauge(app: &App, frame: &mut Frame, area: Rect) {
    let Some(progress) = &app.index.progress else {
        return;
    };
    let gauge = Gauge::default()
        .ratio(progress.ratio())
        .label(gauge_label(progress, app.index.files))
        .gauge_style(app.theme.style("gauge"))
        .use_unicode(true);
    frame.render_widget(gauge, area);
}

pub fn gauge_label(p: &PhaseProgress, files: Option<usize>) -> String {
    let (what, unit) = match p.phase {
        Phase::Walk => ("scanning files", "files"),
        Phase::Parse => ("parsing files", "files"),
        Phase::CallGraph => ("linking calls", "chunks"),
        Phase::Bm25 => ("BM25 index", "chunks"),
        Phase::Embed => ("embedding chunks", "chunks"),
        Phase::Instances => ("evaluating", "instances"),
    };
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

    #[test]
    fn thousands_and_clock() {
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(thousands(999), "999");
        assert_eq!(clock(Duration::from_secs(3725)), "1:02:05");
    }
}
