//! Smoke test of the real `coret-tui` binary in a pseudo-terminal: it starts on a fixture
//! repository, takes a bracketed paste, searches with Ctrl-S, shows the expected chunk,
//! quits on its key with exit status 0 and leaves the terminal as it found it.
//!
//! The screen is rebuilt from the output bytes by a terminal emulator (`vt100`) and polled
//! until what is expected shows up, so the test waits as long as it must and no longer.
#[path = "../src/testkit.rs"]
mod testkit;

mod common;

use portable_pty::{native_pty_system, Child, CommandBuilder, MasterPty, PtySize};
use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::path::Path;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

const ROWS: u16 = 40;
const COLS: u16 = 120;
/// Generous: a cold debug binary on a busy 2-core machine.
const TIMEOUT: Duration = Duration::from_secs(60);

/// The query: two lines, so the paste must keep its newline.
const ISSUE: &str = "Cart total price is wrong\nthe discount is applied after the VAT";

/// The TUI running in a pty, and the screen it has drawn so far.
/// The binary on `repo`, with nothing of the user's: no history, cache, config or model of
/// theirs is read or written.
fn command(repo: &Path, home: &Path, model: &Path) -> CommandBuilder {
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_coret-tui"));
    cmd.arg(repo);
    cmd.cwd(repo);
    cmd.env_clear();
    cmd.env("PATH", std::env::var_os("PATH").unwrap_or_default());
    cmd.env("TERM", "xterm-256color");
    cmd.env("LANG", "C.UTF-8");
    cmd.env("HOME", home);
    cmd.env("XDG_CACHE_HOME", home.join("xdg-cache"));
    cmd.env("XDG_CONFIG_HOME", home.join("xdg-config"));
    cmd.env("XDG_DATA_HOME", home.join("xdg-data"));
    cmd.env("CORET_CACHE_DIR", home.join("cache"));
    cmd.env("CORET_DATA_DIR", home.join("data"));
    cmd.env("CORET_MODEL", model);
    cmd.env("CORET_OFFLINE", "1");
    cmd.env("EDITOR", "true");
    // These tests are about the transformer's column; the static tier's has its own test.
    cmd.env("CORET_DENSE", "transformer");
    cmd
}

struct Tui {
    child: Box<dyn Child + Send + Sync>,
    writer: Box<dyn Write + Send>,
    output: Receiver<Vec<u8>>,
    parser: vt100::Parser,
    _master: Box<dyn MasterPty + Send>,
    /// Whether the pty has closed (the child and everything holding the slave are gone).
    closed: bool,
    /// Every byte the TUI wrote, for what the emulator does not keep (synchronized updates).
    raw: Vec<u8>,
}

impl Tui {
    /// Starts the binary on `repo` with its model, cache and data directories under `home`.
    fn spawn(repo: &Path, home: &Path, model: &Path) -> Tui {
        Tui::spawn_command(command(repo, home, model))
    }

    fn spawn_command(cmd: CommandBuilder) -> Tui {
        let pty = native_pty_system()
            .openpty(PtySize { rows: ROWS, cols: COLS, pixel_width: 0, pixel_height: 0 })
            .unwrap();
        let child = pty.slave.spawn_command(cmd).unwrap();
        // Only the child may hold the slave side, or the reader never sees the end.
        drop(pty.slave);
        let mut reader = pty.master.try_clone_reader().unwrap();
        let writer = pty.master.take_writer().unwrap();
        let (tx, output) = mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            // Ends on EOF, or EIO once the child has gone.
            while let Ok(n @ 1..) = reader.read(&mut buf) {
                if tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        Tui {
            child,
            writer,
            output,
            parser: vt100::Parser::new(NonZeroU16::new(ROWS).unwrap(), NonZeroU16::new(COLS).unwrap(), 0),
            _master: pty.master,
            closed: false,
            raw: Vec::new(),
        }
    }

    fn send(&mut self, bytes: &str) {
        self.writer.write_all(bytes.as_bytes()).unwrap();
        self.writer.flush().unwrap();
    }

    /// Feeds what the TUI wrote within `wait` to the emulator.
    fn pump(&mut self, wait: Duration) {
        match self.output.recv_timeout(wait) {
            Ok(bytes) => self.process(&bytes),
            Err(RecvTimeoutError::Timeout) => return,
            Err(RecvTimeoutError::Disconnected) => {
                self.closed = true;
                return;
            }
        }
        while let Ok(bytes) = self.output.try_recv() {
            self.process(&bytes);
        }
    }

    /// Feeds the emulator and answers cursor-position queries as a terminal does (ratatui asks
    /// when it clears the screen, e.g. back from `$EDITOR`).
    fn process(&mut self, bytes: &[u8]) {
        self.raw.extend_from_slice(bytes);
        self.parser.process(bytes);
        if bytes.windows(4).any(|w| w == b"\x1b[6n") {
            let (row, col) = self.parser.screen().cursor_position();
            self.send(&format!("\x1b[{};{}R", row + 1, col + 1));
        }
    }

    fn screen_text(&self) -> String {
        self.parser.screen().contents()
    }

    /// Polls the screen until `ready` holds; panics with the screen after [`TIMEOUT`].
    fn wait_for(&mut self, what: &str, ready: impl Fn(&vt100::Screen) -> bool) {
        let deadline = Instant::now() + TIMEOUT;
        while !ready(self.parser.screen()) {
            if Instant::now() > deadline || self.closed {
                let status = self.child.try_wait().ok().flatten();
                panic!("timed out waiting for {what} (exited: {status:?}); screen:\n{}", self.screen_text());
            }
            self.pump(Duration::from_millis(50));
        }
    }

    /// Waits for the process to exit, reading its last output; the exit code.
    fn wait_exit(&mut self) -> u32 {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                while !self.closed && Instant::now() < deadline {
                    self.pump(Duration::from_millis(50));
                }
                return status.exit_code();
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("the TUI did not exit; screen:\n{}", self.screen_text());
            }
            self.pump(Duration::from_millis(50));
        }
    }
}

impl Drop for Tui {
    fn drop(&mut self) {
        // A failed assertion must not leave the binary running.
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
    }
}

/// The text of the results column whose title contains `title` (e.g. "1 BM25"), read between
/// its box's left edge and the next box's, from the title row down; `None` while no such column
/// is on screen. Polls must tolerate that: the emulator can hold half a frame (a redraw arrives
/// in several reads, e.g. right after `$EDITOR` returns), which CI caught once.
fn column(screen: &vt100::Screen, title: &str) -> Option<String> {
    let rows: Vec<String> = screen.rows(0, COLS).collect();
    let (top, line) = rows.iter().enumerate().find(|(_, r)| r.contains(title))?;
    // A focused box is drawn thick (┏), the others rounded (╭).
    let corners: Vec<usize> =
        line.chars().enumerate().filter(|(_, c)| matches!(c, '╭' | '┏')).map(|(i, _)| i).collect();
    let at = line[..line.find(title)?].chars().count();
    let left = *corners.iter().rev().find(|&&c| c <= at)?;
    let right = corners.iter().copied().find(|&c| c > at).unwrap_or(COLS as usize);
    let text = screen
        .rows(left as u16, (right - left) as u16)
        .skip(top)
        .take_while(|r| !r.starts_with('╰') && !r.starts_with('┗'))
        .collect::<Vec<_>>()
        .join("\n");
    Some(text)
}

/// [`column`] once a wait has seen it drawn: a missing column is then a failure.
fn shown_column(screen: &vt100::Screen, title: &str) -> String {
    column(screen, title)
        .unwrap_or_else(|| panic!("no column titled {title:?}; screen:\n{}", screen.contents()))
}

/// The first ranked row of the column titled `title`, if both are on screen.
fn first_hit_in(screen: &vt100::Screen, title: &str) -> Option<String> {
    column(screen, title).and_then(|c| first_hit(&c))
}

/// The first ranked row of a column (`›1 …` or ` 1 …` after the border).
fn first_hit(column: &str) -> Option<String> {
    column.lines().find_map(|l| {
        let body = l.trim_start_matches(['│', '┃']).trim_start_matches('›').trim_start();
        body.starts_with("1 ").then(|| body.to_string())
    })
}

fn paste(tui: &mut Tui, text: &str) {
    tui.send(&format!("\x1b[200~{text}\x1b[201~"));
}

/// Checks, after exit, that the TUI gave the terminal back as it found it.
fn assert_terminal_restored(tui: &Tui) {
    let screen = tui.parser.screen();
    assert!(!screen.alternate_screen(), "still on the alternate screen");
    assert!(!screen.bracketed_paste(), "bracketed paste left on");
    assert_eq!(screen.mouse_protocol_mode(), vt100::MouseProtocolMode::None, "mouse capture left on");
    assert!(!screen.hide_cursor(), "cursor left hidden");
}

/// Checks that every frame went out as one synchronized update (mode 2026), so a terminal that
/// knows it never shows half a frame: as many begins as ends, and at least one frame.
fn assert_frames_synchronized(tui: &Tui) {
    let count = |seq: &[u8]| tui.raw.windows(seq.len()).filter(|w| *w == seq).count();
    let (begins, ends) = (count(b"\x1b[?2026h"), count(b"\x1b[?2026l"));
    assert!(begins > 0, "no frame drawn as a synchronized update");
    assert_eq!(begins, ends, "a synchronized update left open");
}

/// Whether every line of the pasted [`ISSUE`] is on a row of its own.
fn pasted_issue_shown(screen: &vt100::Screen) -> bool {
    let text = screen.contents();
    ISSUE.lines().all(|line| text.lines().any(|l| l.contains(line)))
}

#[test]
fn bm25_search_works_without_a_model_and_quitting_restores_the_terminal() {
    let repo = common::fixture_repo();
    let home = tempfile::tempdir().unwrap();
    let mut tui = Tui::spawn(repo.path(), home.path(), &home.path().join("no-such-model"));

    // Without a model the dense column says why; BM25 is ready by then.
    tui.wait_for("the dense column to report the missing model", |s| {
        s.contents().contains("Dense index unavailable") && s.contents().contains("no-such-model")
    });
    paste(&mut tui, ISSUE);
    tui.wait_for("the pasted issue, each line on its own row", pasted_issue_shown);
    tui.send("\x13"); // Ctrl-S
    tui.wait_for("BM25 hits", |s| first_hit_in(s, "1 BM25").is_some() && column(s, "2 CoRet").is_some());
    let bm25 = shown_column(tui.parser.screen(), "1 BM25");
    let top = first_hit(&bm25).unwrap();
    assert!(top.contains("total_price"), "expected Cart.total_price first, got {top:?}:\n{bm25}");
    let dense = shown_column(tui.parser.screen(), "2 CoRet");
    assert!(first_hit(&dense).is_none(), "dense hits without a model:\n{dense}");
    // The selected hit's source is previewed, and its callees come from the call graph.
    tui.wait_for("the preview of the top hit", |s| {
        s.contents().contains("shop/cart.py:16-18") && s.contents().contains("def total_price(self):")
    });
    tui.wait_for("the call graph of the top hit", |s| {
        s.contents().contains("Call graph · Cart.total_price") && s.contents().contains("apply_discount")
    });
    // Ctrl-S handed the keys to the results: `j` selects the second hit, the issue is untouched.
    tui.send("j");
    tui.wait_for("the second hit selected", |s| {
        column(s, "1 BM25")
            .is_some_and(|c| c.lines().any(|l| l.trim_start_matches(['│', '┃']).starts_with("›2 ")))
    });
    assert!(!tui.screen_text().contains("VATj"), "j went into the issue:\n{}", tui.screen_text());

    tui.send("\x11"); // Ctrl-Q
    assert_eq!(tui.wait_exit(), 0, "exit status; screen:\n{}", tui.screen_text());
    assert_terminal_restored(&tui);
    assert_frames_synchronized(&tui);
    // One history per repository, under the data directory.
    let dir = home.path().join("data/history/repos");
    let files: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let name = repo.path().file_name().unwrap().to_string_lossy().to_string();
    assert!(files[0].file_name().unwrap().to_string_lossy().starts_with(&name), "{files:?}");
    let history = std::fs::read_to_string(&files[0]).unwrap();
    assert!(history.contains("Cart total price is wrong"), "query not in the history: {history}");
}

#[test]
fn without_a_model_the_static_tier_fills_the_dense_column_and_says_so() {
    let repo = common::fixture_repo();
    let home = tempfile::tempdir().unwrap();
    let mut cmd = command(repo.path(), home.path(), &home.path().join("no-such-model"));
    cmd.env("CORET_DENSE", "auto");
    let mut tui = Tui::spawn_command(cmd);
    tui.wait_for("the issue editor", |s| s.contents().contains("Paste or type an issue"));
    paste(&mut tui, ISSUE);
    tui.wait_for("the pasted issue, each line on its own row", pasted_issue_shown);
    tui.send("\x13"); // Ctrl-S
    tui.wait_for("hits in both columns, the right one from the static tier", |s| {
        first_hit_in(s, "1 BM25").is_some()
            && first_hit_in(s, "2 CoRet").is_some()
            && s.contents().contains("static tier")
    });
    assert!(!tui.screen_text().contains("Dense index unavailable"), "{}", tui.screen_text());
    tui.send("\x11"); // Ctrl-Q
    assert_eq!(tui.wait_exit(), 0, "exit status; screen:\n{}", tui.screen_text());
    assert_terminal_restored(&tui);
}

#[test]
fn both_columns_rank_with_a_tiny_model_and_ctrl_c_quits() {
    let repo = common::fixture_repo();
    let home = tempfile::tempdir().unwrap();
    let model = home.path().join("tiny-model");
    testkit::write_tiny_bert(&model, &["cart", "total", "price", "discount"]);
    let mut tui = Tui::spawn(repo.path(), home.path(), &model);

    tui.wait_for("the issue editor", |s| s.contents().contains("Paste or type an issue"));
    paste(&mut tui, ISSUE);
    tui.wait_for("the pasted issue, each line on its own row", pasted_issue_shown);
    // Searching before the dense index is ready is allowed; the dense column fills in later.
    tui.send("\x13"); // Ctrl-S
    tui.wait_for("hits in both columns", |s| {
        first_hit_in(s, "1 BM25").is_some() && first_hit_in(s, "2 CoRet").is_some()
    });
    let bm25 = shown_column(tui.parser.screen(), "1 BM25");
    let top = first_hit(&bm25).unwrap();
    assert!(top.contains("total_price"), "expected Cart.total_price first, got {top:?}:\n{bm25}");
    // A random tiny model ranks arbitrarily; what matters is that the column works.
    let dense = shown_column(tui.parser.screen(), "2 CoRet");
    assert!(!dense.contains("unavailable"), "dense failed with the tiny model:\n{dense}");

    tui.send("\x03"); // Ctrl-C: a key in raw mode, not a signal
    assert_eq!(tui.wait_exit(), 0, "exit status; screen:\n{}", tui.screen_text());
    assert_terminal_restored(&tui);
}

/// The chunk count on the status line (`… │ 12 chunks │ …`).
fn status_chunks(screen: &vt100::Screen) -> Option<usize> {
    let status = screen.rows(0, COLS).last()?;
    let before = &status[..status.find(" chunks")?];
    before.rsplit(' ').next()?.replace(',', "").parse().ok()
}

/// Reported: a running TUI never saw an edit (BM25 said "No matches" for a function added in
/// `$EDITOR` until a restart). Each search re-checks the tree: a function appended to a file
/// is found without a restart, the chunk count follows, and a note says what changed; and so
/// is one added in `$EDITOR` after Enter on a hit.
#[test]
fn an_edit_is_found_without_a_restart() {
    let repo = common::fixture_repo();
    let home = tempfile::tempdir().unwrap();
    // The "editor" appends a second function to the file it is given (its last argument).
    let editor = home.path().join("append-function.sh");
    let script = concat!(
        "#!/bin/sh\nfor f; do :; done\n",
        "printf '\\n\\ndef tint_widget_border(colour):\\n    return colour\\n' >> \"$f\"\n",
    );
    std::fs::write(&editor, script).unwrap();
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut cmd = command(repo.path(), home.path(), &home.path().join("no-such-model"));
    cmd.env("EDITOR", &editor);
    let mut tui = Tui::spawn_command(cmd);

    // BM25 alone: no model, so the dense column says why once BM25 is ready.
    tui.wait_for("the BM25 index", |s| s.contents().contains("Dense index unavailable"));
    // The paste clears the long message that left no room for the chunk count.
    paste(&mut tui, "frobnicate the widget colours");
    tui.wait_for("the pasted issue and the chunk count", |s| {
        s.contents().contains("frobnicate the widget colours") && status_chunks(s).is_some()
    });
    let chunks = status_chunks(tui.parser.screen()).unwrap();
    let pricing = repo.path().join("shop/pricing.py");
    let mut text = std::fs::read_to_string(&pricing).unwrap();
    text.push_str("\n\ndef frobnicate_widget_colours(palette):\n");
    text.push_str("    \"\"\"Blend the palette.\"\"\"\n    return palette\n");
    std::fs::write(&pricing, text).unwrap();
    tui.send("\x13"); // Ctrl-S
    tui.wait_for("the new function ranked first by BM25", |s| {
        first_hit_in(s, "1 BM25").is_some_and(|h| h.contains("frobnicate"))
    });
    tui.wait_for("the note and the new chunk count", |s| {
        s.contents().contains("re-indexed: 1 file changed, +1 chunk") && status_chunks(s) == Some(chunks + 1)
    });
    // The preview reads the edited file, not a copy from before the edit.
    tui.wait_for("the new function in the preview", |s| {
        s.contents().contains("def frobnicate_widget_colours(palette):")
    });

    // Enter opens the hit in $EDITOR, which adds a function; back in the TUI the index catches up.
    tui.send("\r");
    tui.wait_for("the index after the editor's edit", |s| status_chunks(s) == Some(chunks + 2));
    paste(&mut tui, "tint the widget border");
    tui.wait_for("the second issue", |s| s.contents().contains("tint the widget border"));
    tui.send("\x13"); // Ctrl-S
    tui.wait_for("the function added in $EDITOR ranked first", |s| {
        first_hit_in(s, "1 BM25").is_some_and(|h| h.contains("tint_widget"))
    });

    tui.send("\x11"); // Ctrl-Q
    assert_eq!(tui.wait_exit(), 0, "exit status; screen:\n{}", tui.screen_text());
    assert_terminal_restored(&tui);
}

/// `coret-tui SHOP BILLING`: one ranking over both checkouts, every row under its checkout's
/// name, the status bar naming both, `$EDITOR` opening the file in the right checkout, and an
/// edit there re-indexed with the checkout named.
#[test]
fn several_checkouts_are_searched_as_one_and_the_editor_opens_the_right_one() {
    let shop = common::fixture_repo();
    let billing = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(billing.path().join("billing")).unwrap();
    let invoice = billing.path().join("billing/invoice.py");
    std::fs::write(
        &invoice,
        "def render_invoice_pdf(order):\n    \"\"\"Render an order's invoice as a PDF document.\"\"\"\n    return pdf_document(order.lines)\n\n\ndef pdf_document(lines):\n    return b\"%PDF\" + b\"\".join(lines)\n",
    )
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let editor = home.path().join("append-function.sh");
    let script = concat!(
        "#!/bin/sh\nfor f; do :; done\n",
        "printf '\\n\\ndef stamp_invoice_watermark(pdf):\\n    return pdf\\n' >> \"$f\"\n",
    );
    std::fs::write(&editor, script).unwrap();
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut cmd = command(shop.path(), home.path(), &home.path().join("no-such-model"));
    cmd.arg(billing.path());
    cmd.env("CORET_DENSE", "auto");
    cmd.env("EDITOR", &editor);
    let mut tui = Tui::spawn_command(cmd);
    let name = |d: &tempfile::TempDir| d.path().file_name().unwrap().to_string_lossy().to_string();
    let (shop_name, billing_name) = (name(&shop), name(&billing));

    tui.wait_for("the issue editor", |s| s.contents().contains("Paste or type an issue"));
    paste(&mut tui, "the invoice PDF is rendered without its lines");
    tui.send("\x13"); // Ctrl-S
    tui.wait_for("the billing code first in both columns", |s| {
        first_hit_in(s, "1 BM25").is_some_and(|h| h.contains("render_invoice_pdf"))
            && first_hit_in(s, "2 CoRet").is_some()
            && s.contents().contains("static tier")
    });
    tui.wait_for("the preview under the checkout's name", |s| {
        s.contents().contains(&format!("{billing_name}/billing/invoice.py"))
            && s.contents().contains("def render_invoice_pdf")
    });
    assert!(tui.screen_text().contains(&format!("{shop_name} + {billing_name}")), "{}", tui.screen_text());

    // Enter opens the hit in $EDITOR: the file in the billing checkout, which gains a function.
    tui.send("\r");
    tui.wait_for("the edit re-indexed, naming its checkout", |s| {
        s.contents().contains(&format!("{billing_name}: re-indexed: 1 file changed, +1 chunk"))
    });
    assert!(std::fs::read_to_string(&invoice).unwrap().contains("stamp_invoice_watermark"));
    paste(&mut tui, "stamp a watermark on the invoice");
    tui.wait_for("the second issue", |s| s.contents().contains("stamp a watermark on the invoice"));
    tui.send("\x13"); // Ctrl-S
    tui.wait_for("the function added in $EDITOR ranked first", |s| {
        first_hit_in(s, "1 BM25").is_some_and(|h| h.contains("stamp_invoice"))
    });
    paste(&mut tui, "Cart total price is wrong");
    tui.send("\x13"); // Ctrl-S
    tui.wait_for("the shop's code for a shop issue", |s| {
        first_hit_in(s, "1 BM25").is_some_and(|h| h.contains("total_price"))
    });

    tui.send("\x11"); // Ctrl-Q
    assert_eq!(tui.wait_exit(), 0, "exit status; screen:\n{}", tui.screen_text());
    assert_terminal_restored(&tui);
}

/// Reported: after `tmux kill-server` the TUI spun at 100% CPU for good, deaf to SIGTERM
/// (crossterm's poll never returns on a hung-up terminal). Closing its terminal while it
/// idles ends it now.
#[test]
fn a_closed_terminal_ends_the_tui() {
    use std::os::fd::RawFd;
    let repo = common::fixture_repo();
    let home = tempfile::tempdir().unwrap();
    let pty = native_pty_system()
        .openpty(PtySize { rows: ROWS, cols: COLS, pixel_width: 0, pixel_height: 0 })
        .unwrap();
    let mut child =
        pty.slave.spawn_command(command(repo.path(), home.path(), &home.path().join("none"))).unwrap();
    drop(pty.slave);
    // Read through the master's own descriptor (a cloned reader would keep the terminal open)
    // until the TUI has drawn and gone idle: then it waits in its event loop, as under tmux.
    let fd: RawFd = pty.master.as_raw_fd().expect("a unix pty");
    let (started, mut last, mut total) = (Instant::now(), Instant::now(), 0usize);
    while total < 2000 || last.elapsed() < Duration::from_millis(1500) {
        assert!(started.elapsed() < TIMEOUT, "the TUI never went idle");
        let mut poll = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd; `buf` outlives the read and bounds its length.
        if unsafe { libc::poll(&mut poll, 1, 200) } > 0 {
            let mut buf = [0u8; 8192];
            let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
            if n > 0 {
                total += n as usize;
                last = Instant::now();
            }
        }
    }
    drop(pty.master); // the last handle on the terminal: it hangs up
    let closed = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if closed.elapsed() > Duration::from_secs(15) {
            let _ = child.kill();
            panic!("still running 15 s after its terminal closed");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A wrapper must be able to tell that a signal ended the TUI: status 130, not 0, and the
/// terminal restored all the same.
#[test]
fn a_signal_ends_the_tui_with_status_130_and_restores_the_terminal() {
    let repo = common::fixture_repo();
    let home = tempfile::tempdir().unwrap();
    let mut tui = Tui::spawn(repo.path(), home.path(), &home.path().join("no-such-model"));
    tui.wait_for("the TUI to draw", |s| s.contents().contains("Dense index unavailable"));
    let pid = tui.child.process_id().expect("a pid") as libc::pid_t;
    // SAFETY: signalling our own child.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    assert_eq!(tui.wait_exit(), 130, "exit status; screen:\n{}", tui.screen_text());
    assert_terminal_restored(&tui);
}
