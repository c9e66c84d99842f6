//! One training run per output directory. Two runs writing one `--output` (a second
//! `--train`, or a `--resume` while the first still runs) would interleave checkpoints, step
//! files and the log, and a resume could then continue from the other run's state. The lock
//! is an advisory `flock` on `OUTPUT/.train.lock`: the kernel drops it when the process ends,
//! however it ends, so a killed run never leaves a stale lock behind.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write;
use std::path::Path;

use crate::error::{Error, Result};

/// The lock file's name inside the output directory. It holds the running process's id, for
/// the message a second run gets, and stays after a run: removing it could race with a run
/// that has just opened it.
pub const LOCK_FILE: &str = ".train.lock";

/// Held for a run's whole life; dropping it releases the directory.
#[derive(Debug)]
pub struct OutputLock {
    file: File,
}

impl Drop for OutputLock {
    /// Unlocks explicitly rather than by closing: a child forked by another thread (a `git`
    /// spawned elsewhere) shares the open file description until it execs, so closing our
    /// descriptor alone could leave the directory locked for a moment after the run ended.
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

/// Creates `dir` if needed and takes it for this run, or names the process that holds it.
pub fn lock_output(dir: &Path) -> Result<OutputLock> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let path = dir.join(LOCK_FILE);
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| Error::io(&path, e))?;
    match file.try_lock() {
        Ok(()) => {
            // The id only informs the message: the lock itself is the kernel's.
            file.set_len(0)
                .and_then(|()| write!(&file, "{}", std::process::id()))
                .map_err(|e| Error::io(&path, e))?;
            Ok(OutputLock { file })
        }
        Err(TryLockError::WouldBlock) => {
            let holder = std::fs::read_to_string(&path).unwrap_or_default();
            let holder = holder.trim();
            let who = if holder.is_empty() { String::new() } else { format!(", process {holder}") };
            Err(Error::invalid(format!(
                "{}: another training run is writing there ({LOCK_FILE}{who}); wait for it to end, or give another --output",
                dir.display()
            )))
        }
        Err(TryLockError::Error(e)) => Err(Error::io(&path, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_run_is_refused_while_the_first_holds_the_directory_and_admitted_after() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("out");
        let first = lock_output(&dir).unwrap();
        let err = lock_output(&dir).unwrap_err().to_string();
        assert!(err.contains(&dir.display().to_string()), "{err}");
        assert!(err.contains("another training run"), "{err}");
        assert!(err.contains(&format!("process {}", std::process::id())), "names the holder: {err}");
        drop(first);
        lock_output(&dir).expect("the directory is free once the first run ends");
    }
}
