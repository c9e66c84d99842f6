//! What answers an MCP server's index calls: its own [`Workspace`], or the owner of the
//! checkout it attached to ([`super::owner`]), taking the checkout over when that owner ends.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::owner::{self, Forward, OwnerLock};
use super::tools::ToolError;
use super::Workspace;

/// Builds this server's own workspace when it takes a checkout over (the index opened through
/// the cache, the dense thread started).
pub type MakeWorkspace = Box<dyn FnOnce() -> crate::Result<Workspace> + Send>;

/// Where a server's `locate` and `neighbours` calls are answered.
pub enum Backend {
    /// By its own workspace (it owns the checkout, or no cache is shared).
    Own(Arc<Workspace>),
    /// By the checkout's owner, over its socket.
    Attached(Arc<Attached>),
    /// By this server's own workspaces over several checkouts, ranked as one.
    Several(Arc<super::Several>),
}

/// A server attached to another process's index.
pub struct Attached {
    root: PathBuf,
    dir: PathBuf,
    make: Mutex<Option<MakeWorkspace>>,
    /// Set once this server has taken the checkout over: its lock and its workspace.
    own: Mutex<Option<(OwnerLock, Arc<Workspace>)>>,
}

impl Attached {
    pub fn new(root: PathBuf, dir: PathBuf, make: MakeWorkspace) -> Attached {
        Attached { root, dir, make: Mutex::new(Some(make)), own: Mutex::new(None) }
    }

    /// The checkout's root.
    pub fn root(&self) -> &std::path::Path {
        &self.root
    }

    fn own(&self) -> Option<Arc<Workspace>> {
        self.own.lock().unwrap_or_else(|p| p.into_inner()).as_ref().map(|(_, ws)| ws.clone())
    }

    /// `tool` with `args` at the owner, or `local` on this server's own workspace once it owns
    /// the checkout. With no owner listening, this server tries to take the checkout over; when
    /// another attached server took it first, the call waits for that one's socket.
    pub fn call<A: Serialize, T: DeserializeOwned>(
        &self,
        tool: &str,
        args: &A,
        local: impl Fn(&Workspace) -> Result<T, ToolError>,
    ) -> Result<T, ToolError> {
        let args = serde_json::to_value(args).map_err(|e| ToolError::Forwarded(e.to_string()))?;
        let deadline = Instant::now() + owner::TAKEOVER_WAIT;
        loop {
            if let Some(ws) = self.own() {
                return local(&ws);
            }
            match owner::forward(&self.dir, tool, args.clone()) {
                Ok(answer) => {
                    return serde_json::from_value(answer)
                        .map_err(|e| ToolError::Forwarded(format!("the owner's {tool} answer: {e}")))
                }
                Err(Forward::Tool(message)) => return Err(ToolError::Forwarded(message)),
                Err(Forward::NoOwner(why)) => {
                    if let Some(ws) = self.take_over()? {
                        return local(&ws);
                    }
                    if Instant::now() > deadline {
                        let who =
                            owner::owner_pid(&self.dir).map_or(String::new(), |p| format!(" (process {p})"));
                        return Err(ToolError::Forwarded(format!(
                            "the server that owns this checkout{who} has not answered for {} s: it may still be \
                             indexing it; ask again shortly ({why})",
                            owner::TAKEOVER_WAIT.as_secs()
                        )));
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
        }
    }

    /// Takes the checkout when no one holds it: builds this server's workspace and answers
    /// attached servers from now on. `None`: another process holds it.
    fn take_over(&self) -> Result<Option<Arc<Workspace>>, ToolError> {
        let mut own = self.own.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, ws)) = own.as_ref() {
            return Ok(Some(ws.clone()));
        }
        let io = |e: std::io::Error| ToolError::Engine(crate::Error::io(&self.dir, e));
        let Some(lock) = owner::claim(&self.dir).map_err(io)? else {
            return Ok(None);
        };
        let make = self.make.lock().unwrap_or_else(|p| p.into_inner()).take();
        let make =
            make.ok_or_else(|| ToolError::Forwarded("taking the checkout over failed before".into()))?;
        let ws = Arc::new(make()?);
        owner::serve(&self.dir, &lock, ws.clone()).map_err(io)?;
        eprintln!("coret-tui: the checkout's owner ended; this server owns it now");
        *own = Some((lock, ws.clone()));
        Ok(Some(ws))
    }
}
