//! The TUI's first answers on a never-indexed repository, timed from launch as a newcomer sees
//! them: the binary in a pseudo-terminal (fresh cache), the issue pasted at once and Ctrl-S,
//! the right column switched to the hybrid (F6), and the screen polled for
//!   - `bm25`: the BM25 column's first hits;
//!   - `first`: the hybrid's first answer (`N hits so far · embedding the K chunks this issue
//!     needs…`, over what is embedded);
//!   - `final`: the hybrid's answer over the issue's own chunks (`N hits · M ms`).
//!
//! `cargo run --release --example tui_cold -- BINARY REPO ISSUE_FILE` prints one JSON line.
//! The model is the default one (CORET_MODEL to choose another).

use portable_pty::{native_pty_system, CommandBuilder, PtySize};
use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::time::{Duration, Instant};

const ROWS: u16 = 40;
const COLS: u16 = 160;
const TIMEOUT: Duration = Duration::from_secs(600);

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [binary, repo, issue] = &args[..] else {
        anyhow::bail!("usage: tui_cold BINARY REPO ISSUE_FILE");
    };
    let issue = std::fs::read_to_string(issue)?;
    let home = tempfile::tempdir()?;
    let model = std::env::var_os("CORET_MODEL").map(std::path::PathBuf::from).unwrap_or_else(|| {
        directories::ProjectDirs::from("", "", "coret-tui")
            .map(|p| p.data_dir().join("models/all-MiniLM-L6-v2"))
            .unwrap_or_default()
    });
    let mut cmd = CommandBuilder::new(binary);
    cmd.arg(repo);
    cmd.cwd(repo);
    cmd.env("TERM", "xterm-256color");
    cmd.env("LANG", "C.UTF-8");
    cmd.env("CORET_CACHE_DIR", home.path().join("cache"));
    cmd.env("XDG_CONFIG_HOME", home.path().join("config"));
    cmd.env("CORET_MODEL", &model);
    let pty =
        native_pty_system().openpty(PtySize { rows: ROWS, cols: COLS, pixel_width: 0, pixel_height: 0 })?;
    let launched = Instant::now();
    let mut child = pty.slave.spawn_command(cmd)?;
    drop(pty.slave);
    let mut reader = pty.master.try_clone_reader()?;
    let mut writer = pty.master.take_writer()?;
    let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n @ 1..) = reader.read(&mut buf) {
            if tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut parser = vt100::Parser::new(NonZeroU16::new(ROWS).unwrap(), NonZeroU16::new(COLS).unwrap(), 0);
    let mut send = |bytes: &str| -> std::io::Result<()> {
        writer.write_all(bytes.as_bytes())?;
        writer.flush()
    };
    let (mut sent, mut bm25, mut first, mut last) = (false, None, None, None);
    let mut status_at_first = String::new();
    while last.is_none() {
        anyhow::ensure!(
            launched.elapsed() < TIMEOUT,
            "no final answer in {TIMEOUT:?}:\n{}",
            parser.screen().contents()
        );
        if let Ok(bytes) = rx.recv_timeout(Duration::from_millis(20)) {
            parser.process(&bytes);
            if bytes.windows(4).any(|w| w == b"\x1b[6n") {
                let (row, col) = parser.screen().cursor_position();
                send(&format!("\x1b[{};{}R", row + 1, col + 1))?;
            }
        }
        let text = parser.screen().contents();
        let t = launched.elapsed().as_secs_f64();
        if !sent && text.contains("BM25") {
            // The first frame is up: paste, search, hybrid on the right.
            send(&format!("\x1b[200~{issue}\x1b[201~"))?;
            send("\x13")?;
            send("\x1b[17~")?; // F6
            sent = true;
        }
        let rows: Vec<String> = parser.screen().rows(0, COLS).collect();
        let hybrid_title = rows.iter().find(|r| r.contains("Hybrid"));
        if bm25.is_none() && rows.iter().any(|r| r.contains("BM25") && r.contains(" hits")) {
            bm25 = Some(t);
        }
        if let Some(title) = hybrid_title {
            // The refining column's header counts what it waits for (`embedding …`).
            if first.is_none() && title.contains("embedding") {
                first = Some(t);
                status_at_first = rows.last().cloned().unwrap_or_default().trim().to_string();
            }
            // Both headers say `N hits · M ms` once the hybrid's answer is final.
            if !title.contains("embedding") && title.matches(" ms").count() >= 2 {
                last = Some(t);
            }
        }
    }
    let final_header = parser.screen().rows(0, COLS).find(|r| r.contains("Hybrid")).unwrap_or_default();
    send("\x11")?; // Ctrl-Q
    let _ = child.wait();
    println!(
        "{}",
        serde_json::json!({
            "bm25_s": bm25,
            "first_answer_s": first,
            "final_answer_s": last,
            "status_at_first_answer": status_at_first,
            "header": final_header.trim(),
        })
    );
    Ok(())
}
