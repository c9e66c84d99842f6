//! The event loop: terminal events and background reports become actions, `App::update`
//! turns them into state and commands, commands go to workers (or the editor, or the
//! clipboard), and the screen is redrawn. Nothing here blocks for long, except `$EDITOR`.

use crate::tui::action::{Action, Command};
use crate::tui::app::{App, History};
use crate::tui::backend::{CheckHandle, IndexEvent, IndexReporter, Session};
use crate::tui::terminal::{self, TerminalGuard};
use crate::tui::theme::Theme;
use crate::tui::workers::{FileRequest, Workers};
use crate::tui::{clipboard, keymap, ui};
use anyhow::{Context, Result};
use ratatui::crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
use ratatui::crossterm::{event, execute, queue};
use ratatui::prelude::CrosstermBackend;
use ratatui::Terminal;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::thread;
use std::time::{Duration, Instant};

/// The indexing job: runs on its own thread and reports through the [`IndexReporter`].
pub type Indexer = Box<dyn FnOnce(IndexReporter) + Send>;

/// How long to wait for a terminal event before looking at the background channels.
const TICK: Duration = Duration::from_millis(40);
/// Most background reports handled between two looks at the keyboard.
const MAX_BACKGROUND_BATCH: usize = 4096;

/// Runs the TUI until the user quits. `indexer` runs on a background thread meanwhile; when
/// the user quits before it is done, its reporter's `cancelled()` turns true and the thread
/// is left to finish on its own. The terminal is restored on every way out.
pub fn run(session: Session, theme: Theme, indexer: Indexer) -> Result<()> {
    let history_path = history_path(&session.repo);
    let history = history_path.as_deref().map(History::load).unwrap_or_default();
    // The guard comes first: its panic hook must be in place before any thread starts.
    let mut guard = TerminalGuard::enter().context("cannot set up the terminal")?;
    let (reporter, index_rx) = IndexReporter::channel();
    let cancel = reporter.cancel_handle();
    let checks = reporter.check_handle();
    thread::Builder::new()
        .name("coret-tui-indexer".into())
        .spawn(move || {
            let last_word = reporter.clone();
            if let Err(panic) = terminal::catch(move || indexer(reporter)) {
                last_word.failed(format!("the indexer panicked: {panic}"));
            }
        })
        .context("cannot start the indexing thread")?;
    let (action_tx, action_rx) = mpsc::channel();
    let workers =
        Workers::spawn(action_tx, theme.syntax.clone()).context("cannot start the worker threads")?;

    let result = (|| {
        let mut terminal = Terminal::new(CrosstermBackend::new(io::stdout()))?;
        let size = terminal.size()?;
        let mut app = App::new(session, theme, (size.width, size.height), history);
        let mut event_loop = EventLoop {
            terminal: &mut terminal,
            guard: &mut guard,
            workers: &workers,
            checks: &checks,
            indexer_done: false,
        };
        let outcome = event_loop.run(&mut app, &index_rx, &action_rx);
        Ok::<_, anyhow::Error>((outcome, app.history.clone()))
    })();
    cancel.cancel();
    drop(guard);
    for panic in TerminalGuard::background_panics() {
        eprintln!("coret-tui: a background thread panicked: {panic}");
    }
    let (outcome, history) = result?;
    if let Some(path) = history_path {
        if let Err(e) = history.save(&path) {
            eprintln!("coret-tui: cannot save the query history to {}: {e}", path.display());
        }
    }
    outcome
}

/// One per repository (a flask query has no business in requests' history), beside the
/// model: `CORET_DATA_DIR`, else the platform data directory.
fn history_path(repo: &std::path::Path) -> Option<PathBuf> {
    let data = crate::model::provision::data_dir().ok()?;
    let repo = std::fs::canonicalize(repo).unwrap_or_else(|_| repo.to_path_buf());
    let entry = crate::cache::repo_entry(&data.join("history"), &repo);
    Some(PathBuf::from(format!("{}.jsonl", entry.display())))
}

struct EventLoop<'a> {
    terminal: &'a mut Terminal<CrosstermBackend<io::Stdout>>,
    guard: &'a mut TerminalGuard,
    workers: &'a Workers,
    checks: &'a CheckHandle,
    indexer_done: bool,
}

impl EventLoop<'_> {
    fn run(
        &mut self,
        app: &mut App,
        index_rx: &Receiver<IndexEvent>,
        action_rx: &Receiver<Action>,
    ) -> Result<()> {
        let mut dirty = true;
        while !app.should_quit {
            if terminal::INTERRUPTED.swap(false, Ordering::SeqCst) {
                // A signal (SIGINT, SIGTERM, SIGHUP) ended the session: exit 130, not 0, so a
                // wrapper can tell. The query history is still saved.
                return Err(crate::Error::Cancelled.into());
            }
            if dirty {
                draw(self.terminal, app)?;
                dirty = false;
            }
            if event::poll(TICK)? {
                // Drain everything pending (a fast typist, a paste without bracketed paste).
                loop {
                    if let Some(action) = keymap::map_event(app, event::read()?) {
                        self.dispatch(app, action)?;
                        dirty = true;
                    }
                    if app.should_quit || !event::poll(Duration::ZERO)? {
                        break;
                    }
                }
            }
            for action in self.background_actions(index_rx, action_rx) {
                self.dispatch(app, action)?;
                dirty = true;
            }
        }
        Ok(())
    }

    fn background_actions(
        &mut self,
        index_rx: &Receiver<IndexEvent>,
        action_rx: &Receiver<Action>,
    ) -> Vec<Action> {
        let mut actions = Vec::new();
        // Bounded, so a flood of progress reports cannot starve the keyboard.
        while !self.indexer_done && actions.len() < MAX_BACKGROUND_BATCH {
            match index_rx.try_recv() {
                Ok(event) => actions.push(index_action(event, Instant::now())),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    self.indexer_done = true;
                    actions.push(Action::IndexerStopped);
                }
            }
        }
        actions.extend(action_rx.try_iter().take(MAX_BACKGROUND_BATCH));
        actions
    }

    fn dispatch(&mut self, app: &mut App, action: Action) -> Result<()> {
        let mut queue = vec![action];
        while let Some(action) = queue.pop() {
            for command in app.update(action) {
                if let Some(follow_up) = self.execute(command)? {
                    queue.push(follow_up);
                }
            }
        }
        Ok(())
    }

    fn execute(&mut self, command: Command) -> Result<Option<Action>> {
        match command {
            Command::Search(request) => self.workers.search(request),
            Command::LoadFile { path, backend } => self.workers.load_file(FileRequest { path, backend }),
            Command::CheckIndex => self.checks.request(),
            Command::Copy(text) => {
                let mut out = io::stdout();
                out.write_all(clipboard::osc52(&text).as_bytes())?;
                out.flush()?;
            }
            Command::OpenEditor { file, line } => {
                self.guard.suspend()?;
                let result = run_editor(&file, line);
                self.guard.resume()?;
                self.terminal.clear()?;
                return Ok(Some(Action::EditorClosed(result)));
            }
        }
        Ok(None)
    }
}

/// One frame, bracketed as a synchronized update: a frame leaves in several writes, and a
/// terminal that knows mode 2026 (kitty, WezTerm, foot, iTerm2, tmux ≥ 3.4) shows it whole
/// instead of half old, half new; the others ignore the brackets.
fn draw(terminal: &mut Terminal<CrosstermBackend<io::Stdout>>, app: &App) -> io::Result<()> {
    queue!(terminal.backend_mut(), BeginSynchronizedUpdate)?;
    terminal.draw(|frame| ui::render(app, frame))?;
    execute!(terminal.backend_mut(), EndSynchronizedUpdate)
}

fn index_action(event: IndexEvent, at: Instant) -> Action {
    match event {
        IndexEvent::Progress { phase, done, total } => Action::IndexProgress { phase, done, total, at },
        IndexEvent::EmbedWork(work) => Action::EmbedWork { work, at },
        IndexEvent::FirstEmbed { done, total } => Action::FirstEmbed { done, total, at },
        IndexEvent::Bm25Ready(backend) => Action::Bm25Ready(backend),
        IndexEvent::DenseReady(backend) => Action::DenseReady(backend),
        IndexEvent::Reindexed { backend, note } => Action::Reindexed { backend, note },
        IndexEvent::Failed(message) => Action::IndexFailed(message),
        IndexEvent::Info(text) => Action::IndexInfo(text),
    }
}

/// Runs `$VISUAL` / `$EDITOR` (default `vi`) on `file` at `line`, waiting for it to exit.
fn run_editor(file: &Path, line: usize) -> Result<(), String> {
    let editor = std::env::var("VISUAL")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .or_else(|| std::env::var("EDITOR").ok().filter(|v| !v.trim().is_empty()))
        .unwrap_or_else(|| "vi".into());
    let mut words = editor.split_whitespace();
    let program = words.next().unwrap_or("vi").to_string();
    let mut command = std::process::Command::new(&program);
    command.args(words).args(editor_args(&program, file, line));
    match command.status() {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(format!("{editor} exited with {status}")),
        Err(e) => Err(format!("cannot run {editor}: {e} (set $EDITOR)")),
    }
}

/// How editors take a line: `+LINE file` for most, `file:LINE` for some, `-g file:LINE` for VS Code.
pub fn editor_args(program: &str, file: &Path, line: usize) -> Vec<String> {
    let name = Path::new(program).file_name().and_then(|n| n.to_str()).unwrap_or(program);
    let at = format!("{}:{line}", file.display());
    match name {
        "code" | "code-insiders" | "codium" | "cursor" => vec!["-g".into(), at],
        "subl" | "zed" | "hx" | "helix" => vec![at],
        _ => vec![format!("+{line}"), file.display().to_string()],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn editor_arguments_follow_each_editors_convention() {
        let f = Path::new("/r/a.py");
        assert_eq!(editor_args("vim", f, 12), ["+12", "/r/a.py"]);
        assert_eq!(editor_args("/usr/bin/nano", f, 3), ["+3", "/r/a.py"]);
        assert_eq!(editor_args("code", f, 12), ["-g", "/r/a.py:12"]);
        assert_eq!(editor_args("hx", f, 12), ["/r/a.py:12"]);
    }

    #[test]
    fn each_repository_has_its_own_query_history() {
        let (flask, requests) =
            (history_path(Path::new("/src/flask")), history_path(Path::new("/src/requests")));
        assert!(flask.is_some() && requests.is_some());
        assert_ne!(flask, requests);
        assert_eq!(
            flask,
            history_path(Path::new("/src/flask")),
            "the same repository finds its history again"
        );
    }
}
