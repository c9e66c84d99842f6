//! Engine errors: each names the file, line or instance that failed.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Invalid(String),
    /// The user asked for something impossible (missing path, no Python files, ...): exit 2.
    #[error("{0}")]
    Usage(String),
    /// A long phase stopped because the client asked it to (`Progress::cancelled`).
    #[error("interrupted")]
    Cancelled,
    #[error("{context}: {message}")]
    Context { context: String, message: String },
}

impl Error {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }
    pub fn invalid(msg: impl Into<String>) -> Self {
        Error::Invalid(msg.into())
    }
    pub fn context(context: impl Into<String>, message: impl std::fmt::Display) -> Self {
        Error::Context { context: context.into(), message: message.to_string() }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
