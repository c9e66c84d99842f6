//! The coret-tui interface over a sample repository indexed in memory by the real engine, with
//! a tiny stand-in model instead of the real one (no download, no index on disk):
//! `cargo run --example tui_demo [THEME]`. The indexing progress is replayed slowly so the
//! gauge, the BM25-first behaviour and the dense column filling in can all be seen.

#[path = "../src/tui/demo/mod.rs"]
mod demo;
#[path = "../src/testkit.rs"]
mod testkit;

use coret::tui::{Session, Theme};
use demo::{simulate_indexing, DemoBackend};
use std::time::Duration;

fn main() -> anyhow::Result<()> {
    let theme = Theme::load(&std::env::args().nth(1).unwrap_or_else(|| "coret-dark".into()))?;
    let backend = DemoBackend::sample();
    // Real files, so that `o` ($EDITOR) has something to open.
    let repo = std::env::temp_dir().join("coret-tui-demo");
    backend.write_files(&repo)?;
    let session = Session {
        repo,
        label: None,
        model: "tiny stand-in BERT (seeded random weights)".into(),
        device: "cpu".into(),
        initial_query: None,
        order: Default::default(),
    };
    coret::tui::run(
        session,
        theme,
        Box::new(move |reporter| simulate_indexing(reporter, backend, Duration::from_millis(150))),
    )
}
