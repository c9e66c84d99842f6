//! The terminal UI: paste an issue, compare BM25 and CoRet rankings side by side, read the
//! highlighted preview, follow callers and callees, open hits in `$EDITOR`.
//!
//! Architecture (The Elm Architecture): terminal events and background reports become
//! [`action::Action`]s; [`app::App::update`] is the only place state changes and returns
//! [`action::Command`]s (searches, file loads, editor, clipboard) that the runtime hands to
//! background workers; `ui::render(&App, &mut Frame)` draws the state and nothing else.
//! Searches are tagged with a generation number, so the latest search always wins.
//!
//! The engine is reached only through the [`Backend`] trait; see [`backend`] for the
//! contract and [`run`] for the entry point. Keys are documented in `src/tui/KEYS.md`.

pub mod action;
pub mod app;
pub mod backend;
mod clipboard;
mod components;
#[cfg(test)]
pub(crate) mod demo;
mod engine_backend;
pub mod engine_indexer;
pub mod highlight;
pub mod keymap;
pub mod layout;
mod many_backend;
pub mod many_indexer;
mod runtime;
mod terminal;
pub mod theme;
pub mod ui;
mod workers;

#[cfg(test)]
pub(crate) mod snapshot_tests;

pub use backend::{Backend, CancelHandle, CheckHandle, IndexEvent, IndexReporter, Session};
pub use engine_indexer::{EngineIndexer, TowerLoader};
pub use many_indexer::{shared_loader, ManyIndexer, NamedIndexer};
pub use runtime::{run, Indexer};
pub use theme::Theme;
