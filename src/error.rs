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
    /// The directory to index is missing, unreadable or not a directory.
    #[error("{path}: {source}")]
    Root {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The directory holds no source file of the languages asked for (or none readable).
    /// `langs` names the languages looked for: `Python, Rust, …, C or C++`.
    #[error("{root}: no {}{langs} files to index", if *.unreadable { "readable " } else { "" })]
    NoSourceFiles { root: PathBuf, unreadable: bool, langs: String },
    /// A git history (the commits asked for) in which no commit changes a source file.
    #[error("{git_dir}: no commit of its history changes a source file of a supported language")]
    NoSourceHistory { git_dir: PathBuf },
    /// Training was asked to resume, but `dir` holds no checkpoint.
    #[error("no checkpoint to resume in {dir}")]
    NoCheckpoint { dir: PathBuf },
    /// Training was asked to resume with settings other than the checkpoint's.
    #[error("cannot resume with different settings ({0})")]
    ResumeMismatch(String),
    /// Every training instance was skipped.
    #[error("no training examples (every instance was skipped)")]
    NoExamples,
    /// A prepared training shard that does not fit this model or these settings.
    #[error("{path}: {reason}")]
    IncompatibleShard { path: PathBuf, reason: String },
    /// A long phase stopped because the client asked it to (`Progress::cancelled`).
    #[error("interrupted")]
    Cancelled,
    /// A failure in a library the engine uses (candle, tantivy, serde, ...), with what the
    /// engine was doing.
    #[error("{context}: {source}")]
    Context {
        context: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl Error {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }
    pub fn invalid(msg: impl Into<String>) -> Self {
        Error::Invalid(msg.into())
    }
    /// `source` is the library's error (kept for `Error::source`) or, where there is none, a
    /// message.
    pub fn context(
        context: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        Error::Context { context: context.into(), source: source.into() }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
