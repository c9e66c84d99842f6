//! Terminal setup and, above all, restoration: raw mode off, alternate screen left, mouse and
//! bracketed paste disabled, on every way out (normal exit, error, panic, Ctrl-C, SIGINT, SIGTERM, SIGHUP).

use ratatui::crossterm::cursor::Show;
use ratatui::crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use std::io;
use std::panic::{self, PanicHookInfo};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Once, OnceLock};
use std::thread::{self, ThreadId};

type Hook = Box<dyn Fn(&PanicHookInfo<'_>) + Sync + Send + 'static>;

/// Set while the TUI owns the terminal (read by the SIGINT handler).
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// How long a signal waits for the event loop to quit before the process exits on its own.
const STUCK_GRACE: std::time::Duration = std::time::Duration::from_secs(2);
/// Set by SIGINT while the TUI is active; the event loop then quits cleanly.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// The thread that draws; only its panics tear the screen down.
static UI_THREAD: OnceLock<Mutex<Option<ThreadId>>> = OnceLock::new();
/// Panics of background threads, reported once the terminal is restored.
static BACKGROUND_PANICS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Owns the terminal modes; dropping it restores the terminal and the previous panic hook.
pub struct TerminalGuard {
    previous_hook: Arc<Hook>,
}

impl TerminalGuard {
    pub fn enter() -> io::Result<TerminalGuard> {
        *ui_thread().lock().unwrap_or_else(|e| e.into_inner()) = Some(thread::current().id());
        let previous_hook: Arc<Hook> = Arc::new(panic::take_hook());
        let previous = previous_hook.clone();
        panic::set_hook(Box::new(move |info| {
            if is_ui_thread() {
                restore();
                previous(info);
            } else {
                // Drawing over the TUI would garble it; the thread's owner reports the panic.
                let location = info.location().map(|l| format!(" at {l}")).unwrap_or_default();
                let text = format!("{}{location}", panic_message(info.payload()));
                BACKGROUND_PANICS.lock().unwrap_or_else(|e| e.into_inner()).push(text);
            }
        }));
        install_sigint_handler();
        let guard = TerminalGuard { previous_hook };
        setup()?;
        ACTIVE.store(true, Ordering::SeqCst);
        Ok(guard)
    }

    /// Gives the terminal back (to run `$EDITOR`).
    pub fn suspend(&mut self) -> io::Result<()> {
        ACTIVE.store(false, Ordering::SeqCst);
        restore();
        Ok(())
    }

    pub fn resume(&mut self) -> io::Result<()> {
        setup()?;
        ACTIVE.store(true, Ordering::SeqCst);
        Ok(())
    }

    /// Panic messages from background threads since the TUI started.
    pub fn background_panics() -> Vec<String> {
        std::mem::take(&mut *BACKGROUND_PANICS.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        ACTIVE.store(false, Ordering::SeqCst);
        restore();
        // The hook cannot be swapped while unwinding (std panics, which would abort); ours
        // stays then, and the process is on its way out anyway.
        if !thread::panicking() {
            let previous = self.previous_hook.clone();
            let _ours = panic::take_hook();
            panic::set_hook(Box::new(move |info| previous(info)));
            *ui_thread().lock().unwrap_or_else(|e| e.into_inner()) = None;
        }
    }
}

fn ui_thread() -> &'static Mutex<Option<ThreadId>> {
    UI_THREAD.get_or_init(|| Mutex::new(None))
}

fn is_ui_thread() -> bool {
    *ui_thread().lock().unwrap_or_else(|e| e.into_inner()) == Some(thread::current().id())
}

/// Whether the terminal is in TUI mode. Restoring twice would be harmful: leaving the
/// alternate screen again moves the cursor back over what was printed since (a panic message).
static SET_UP: AtomicBool = AtomicBool::new(false);

fn setup() -> io::Result<()> {
    SET_UP.store(true, Ordering::SeqCst);
    enable_raw_mode()?;
    execute!(io::stdout(), EnterAlternateScreen, EnableMouseCapture, EnableBracketedPaste)
}

/// Best effort: every step runs even if an earlier one fails; does nothing if already done.
pub fn restore() {
    if !SET_UP.swap(false, Ordering::SeqCst) {
        return;
    }
    let _ = disable_raw_mode();
    let mut out = io::stdout();
    let _ = execute!(out, DisableBracketedPaste);
    let _ = execute!(out, DisableMouseCapture);
    let _ = execute!(out, LeaveAlternateScreen);
    let _ = execute!(out, Show);
}

/// In raw mode Ctrl-C arrives as a key; a SIGINT from elsewhere (`kill -INT`) asks the event
/// loop to quit while the TUI runs, and exits as usual otherwise. If the binary has already
/// installed a handler, that one stays.
fn install_sigint_handler() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = ctrlc::set_handler(|| {
            if !ACTIVE.load(Ordering::SeqCst) {
                std::process::exit(130);
            }
            INTERRUPTED.store(true, Ordering::SeqCst);
            // The event loop takes the flag within a tick. If it has not after a grace period,
            // it is stuck: on a hung-up terminal (SIGHUP, a closed tmux) crossterm's poll spins
            // without returning. Restore what can be restored and leave.
            thread::sleep(STUCK_GRACE);
            if ACTIVE.load(Ordering::SeqCst) && INTERRUPTED.load(Ordering::SeqCst) {
                restore();
                std::process::exit(130);
            }
        });
    });
}

/// The text of a panic payload.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic".to_string()
    }
}

/// Runs `f`, turning a panic into an error message (with the location, when the hook saw it).
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    panic::catch_unwind(panic::AssertUnwindSafe(f)).map_err(|payload| {
        let recorded = BACKGROUND_PANICS.lock().unwrap_or_else(|e| e.into_inner()).pop();
        recorded.unwrap_or_else(|| panic_message(payload.as_ref()))
    })
}
