//! The coret-tui interface over an in-memory demo repository (no model, no index on disk):
//! `cargo run --example tui_demo [THEME]`. Indexing is simulated so the progress gauge, the
//! BM25-first behaviour and the dense column filling in can all be seen.

use coret::tui::demo::{simulate_indexing, DemoBackend};
use coret::tui::{Session, Theme};
use std::time::Duration;

fn main() -> anyhow::Result<()> {
    let theme = Theme::load(&std::env::args().nth(1).unwrap_or_else(|| "coret-dark".into()))?;
    let backend = DemoBackend::sample();
    // Real files, so that `o` ($EDITOR) has something to open.
    let repo = std::env::temp_dir().join("coret-tui-demo");
    backend.write_files(&repo)?;
    let session = Session {
        repo,
        model: "sentence-transformers/all-MiniLM-L6-v2 (simulated)".into(),
        device: "cpu".into(),
        initial_query: None,
    };
    coret::tui::run(
        session,
        theme,
        Box::new(move |reporter| simulate_indexing(reporter, backend, Duration::from_millis(150))),
    )
}
