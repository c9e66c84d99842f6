//! One process owns a checkout's index; the other MCP servers on it attach (issue 73).
//!
//! Coding agents run several servers on one checkout. Each used to re-read, re-parse and
//! re-embed every edit on its own: eight times the work on two cores. Now the first server of a
//! checkout (with the same settings and the same build) takes an advisory `flock` on
//! `CACHE_ENTRY/owners/KEY/owner.lock` and answers on a Unix socket beside it; a later server
//! finds the lock held and forwards its `locate` and `neighbours` calls there, as language
//! servers and watchman do. The kernel drops the lock however the owner ends, so when it is
//! killed the next forwarded call finds no one listening, one attached server takes the lock
//! (the others wait for its socket) and serves from the cache, which the owner kept warm.
//!
//! The protocol is one JSON line each way per connection: `{"tool": "locate", "args": {…}}`,
//! then `{"ok": ANSWER}` or `{"err": "MESSAGE"}`.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use super::tools::{self, ToolError};
use super::{Workspace, LOCATE_WAIT};

const LOCK_FILE: &str = "owner.lock";
const SOCKET_FILE: &str = "owner.sock";

/// Where the owner of one checkout with one set of settings lives: the settings (every flag,
/// and this build's identity) are hashed into the folder's name, so a server started with
/// other flags or by another build never attaches to an owner that would answer otherwise.
pub fn owner_dir(cache_entry: &Path, settings: &str) -> PathBuf {
    let build = std::env::current_exe()
        .and_then(|exe| std::fs::metadata(exe)?.modified())
        .map(|t| format!("{t:?}"))
        .unwrap_or_default();
    let key = blake3::hash(format!("{}\n{build}\n{settings}", env!("CARGO_PKG_VERSION")).as_bytes()).to_hex();
    cache_entry.join("owners").join(&key[..16])
}

/// The owner's lock, held for its whole life; the kernel releases it when the process ends.
#[derive(Debug)]
pub struct OwnerLock {
    _file: File,
}

/// Takes the checkout for this process, or `None` when another process owns it.
pub fn claim(dir: &Path) -> std::io::Result<Option<OwnerLock>> {
    std::fs::create_dir_all(dir)?;
    let file = OpenOptions::new().create(true).truncate(false).write(true).open(dir.join(LOCK_FILE))?;
    match file.try_lock() {
        Ok(()) => {
            // The id is for people and tests; the lock itself is the kernel's.
            file.set_len(0)?;
            write!(&file, "{}", std::process::id())?;
            Ok(Some(OwnerLock { _file: file }))
        }
        Err(TryLockError::WouldBlock) => Ok(None),
        Err(TryLockError::Error(e)) => Err(e),
    }
}

/// The owner's socket: beside its lock, or, where that path is longer than a Unix socket's name
/// may be (a deep cache directory), in the temporary directory under a name hashed from it.
fn socket_path(dir: &Path) -> PathBuf {
    const MAX_SOCKET_PATH: usize = 100;
    let beside = dir.join(SOCKET_FILE);
    if beside.as_os_str().len() <= MAX_SOCKET_PATH {
        return beside;
    }
    let key = blake3::hash(dir.as_os_str().as_encoded_bytes()).to_hex();
    std::env::temp_dir().join(format!("coret-owner-{}.sock", &key[..16]))
}

/// The process that owns the checkout, as its lock file names it.
pub fn owner_pid(dir: &Path) -> Option<u32> {
    std::fs::read_to_string(dir.join(LOCK_FILE)).ok()?.trim().parse().ok()
}

/// Answers attached servers' calls on `dir`'s socket from `workspace`, on a thread per
/// connection. Only the lock's holder calls this: a socket file left by a killed owner is
/// replaced.
pub fn serve(dir: &Path, _lock: &OwnerLock, workspace: Arc<Workspace>) -> std::io::Result<()> {
    let path = socket_path(dir);
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path)?;
    std::thread::Builder::new().name("coret-mcp-owner".into()).spawn(move || {
        for stream in listener.incoming().flatten() {
            let ws = workspace.clone();
            let _ = std::thread::Builder::new()
                .name("coret-mcp-attached".into())
                .spawn(move || answer(stream, &ws));
        }
    })?;
    Ok(())
}

/// One forwarded call. A client that went away mid-answer costs nothing: the write fails.
fn answer(stream: UnixStream, workspace: &Workspace) {
    let mut line = String::new();
    if BufReader::new(&stream).read_line(&mut line).is_err() {
        return;
    }
    let reply = match run(workspace, &line) {
        Ok(answer) => json!({ "ok": answer }),
        Err(message) => json!({ "err": message }),
    };
    // One write: formatting straight into the socket writes in pieces, and an owner that ends
    // between two of them leaves half an answer (the reader takes that for an ended owner).
    let _ = (&stream).write_all(format!("{reply}\n").as_bytes());
}

fn run(workspace: &Workspace, line: &str) -> Result<Value, String> {
    let call: Value =
        serde_json::from_str(line).map_err(|e| format!("a forwarded call that is not JSON: {e}"))?;
    let args = call.get("args").cloned().unwrap_or(Value::Null);
    let parse = |e: serde_json::Error| format!("a forwarded call's arguments: {e}");
    let answer = match call.get("tool").and_then(Value::as_str) {
        Some("locate") => {
            let req = serde_json::from_value(args).map_err(parse)?;
            serde_json::to_value(workspace.locate(&req, LOCATE_WAIT).map_err(|e| e.to_string())?)
        }
        Some("neighbours") => {
            let req = serde_json::from_value(args).map_err(parse)?;
            let repo = workspace.refresh().map_err(|e| ToolError::from(e).to_string())?.0.repo.clone();
            serde_json::to_value(tools::neighbours(&repo, &req).map_err(|e| e.to_string())?)
        }
        other => return Err(format!("no tool {other:?} to forward")),
    };
    answer.map_err(|e| e.to_string())
}

/// Why a forwarded call got no answer.
#[derive(Debug)]
pub enum Forward {
    /// No owner listens (none yet, or it ended): the caller may take the checkout over.
    NoOwner(std::io::Error),
    /// The owner answered with the tool's error.
    Tool(String),
}

/// Forwards one call to the owner of `dir` and returns its answer. A call waits as long as the
/// owner takes: the owner bounds its own waits ([`LOCATE_WAIT`]).
pub fn forward(dir: &Path, tool: &str, args: Value) -> Result<Value, Forward> {
    let stream = UnixStream::connect(socket_path(dir)).map_err(Forward::NoOwner)?;
    // An owner that is alive but stuck past any wait of its own is as good as gone.
    let _ = stream.set_read_timeout(Some(LOCATE_WAIT * 12));
    let call = format!("{}\n", json!({ "tool": tool, "args": args }));
    (&stream).write_all(call.as_bytes()).map_err(Forward::NoOwner)?;
    let mut line = String::new();
    let ended =
        |why: &str| Forward::NoOwner(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, why.to_string()));
    match BufReader::new(&stream).read_line(&mut line) {
        Ok(0) => Err(ended("the owner closed the connection")),
        // Every answer ends its line: one cut short is an owner that ended mid-answer (its
        // client finished), not the tool's error. The call is read-only, so the caller asks
        // again, of the next owner.
        Ok(_) if !line.ends_with('\n') => Err(ended("the owner ended mid-answer")),
        Ok(_) => {
            let reply: Value =
                serde_json::from_str(&line).map_err(|e| Forward::Tool(format!("the owner's answer: {e}")))?;
            match (reply.get("ok"), reply.get("err")) {
                (Some(ok), _) => Ok(ok.clone()),
                (_, Some(err)) => Err(Forward::Tool(err.as_str().unwrap_or("the owner failed").to_string())),
                _ => Err(Forward::Tool("the owner's answer holds neither ok nor err".into())),
            }
        }
        Err(e) => Err(Forward::NoOwner(e)),
    }
}

/// How long an attached server waits for a new owner's socket after the old one ended: the
/// new owner opens the index from the cache its predecessor kept warm.
pub const TAKEOVER_WAIT: Duration = Duration::from_secs(60);

#[cfg(test)]
mod tests {
    use super::*;

    /// One owner at a time: a second claim finds the lock held, and the lock is free again
    /// once the owner's is dropped (as when its process ends).
    #[test]
    fn one_process_owns_a_checkout_until_its_lock_goes() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = owner_dir(tmp.path(), "--mcp .");
        let first = claim(&dir).unwrap().expect("the first claim owns it");
        assert_eq!(owner_pid(&dir), Some(std::process::id()));
        assert!(claim(&dir).unwrap().is_none(), "the second attaches");
        assert_ne!(owner_dir(tmp.path(), "--mcp . --lang rust"), dir, "other flags, another owner");
        drop(first);
        assert!(claim(&dir).unwrap().is_some(), "free once the owner is gone");
    }

    /// Issue 81: an owner whose client finished ended while answering another server's call;
    /// the half answer reached that server's client as an error. Half an answer (no end of
    /// line) is an ended owner, which the caller takes over from; a whole one is the answer.
    #[test]
    fn a_torn_answer_means_the_owner_ended() {
        for (sent, torn) in
            [("{\"ok\": {\"files\": [", true), ("{\"ok\": 1}", true), ("{\"ok\": 1}\n", false)]
        {
            let tmp = tempfile::tempdir().unwrap();
            let dir = owner_dir(tmp.path(), "--mcp .");
            std::fs::create_dir_all(&dir).unwrap();
            let listener = UnixListener::bind(socket_path(&dir)).unwrap();
            let owner = std::thread::spawn(move || {
                let (stream, _) = listener.accept().unwrap();
                let mut call = String::new();
                BufReader::new(&stream).read_line(&mut call).unwrap();
                (&stream).write_all(sent.as_bytes()).unwrap();
            });
            let got = forward(&dir, "locate", json!({}));
            owner.join().unwrap();
            match (torn, got) {
                (true, Err(Forward::NoOwner(_))) => {}
                (false, Ok(v)) => assert_eq!(v, json!(1)),
                (_, other) => panic!("{sent:?}: {other:?}"),
            }
        }
    }

    /// A cache deep enough that `owner.sock` beside the lock would be too long a socket name
    /// still gets a socket that binds.
    #[test]
    fn a_deep_cache_directory_still_gets_a_socket() {
        let tmp = tempfile::tempdir().unwrap();
        let deep = tmp.path().join("a-rather-long-folder-name".repeat(6));
        let path = socket_path(&deep);
        assert!(path.as_os_str().len() <= 100, "{}", path.display());
        assert_eq!(path, socket_path(&deep), "owner and attached servers agree");
        let _ = std::fs::remove_file(&path);
        UnixListener::bind(&path).expect("it binds");
        let _ = std::fs::remove_file(&path);
    }
}
