//! What every ranking returns: its hits (a chunk and a score), and which retriever ranked them.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Which ranking a caller asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Retriever {
    Bm25,
    Dense,
    Hybrid,
    /// Files changed by past commits whose messages match the query (`history`).
    History,
}

impl Retriever {
    /// What eval runs by default. The history retriever is asked for by name: it reads the
    /// repository's git log.
    pub const ALL: [Retriever; 3] = [Retriever::Bm25, Retriever::Dense, Retriever::Hybrid];

    pub fn as_str(self) -> &'static str {
        match self {
            Retriever::Bm25 => "bm25",
            Retriever::Dense => "dense",
            Retriever::Hybrid => "hybrid",
            Retriever::History => "history",
        }
    }
}

impl fmt::Display for Retriever {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Retriever {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "bm25" => Ok(Retriever::Bm25),
            "dense" | "coret" => Ok(Retriever::Dense),
            "hybrid" => Ok(Retriever::Hybrid),
            "history" => Ok(Retriever::History),
            other => Err(format!("unknown retriever `{other}` (expected bm25, dense, hybrid or history)")),
        }
    }
}

/// One ranked result: a global chunk id and its retriever's score (higher is better).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hit {
    pub chunk: u32,
    pub score: f32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_retriever_names() {
        assert_eq!("BM25".parse::<Retriever>(), Ok(Retriever::Bm25));
        assert_eq!("coret".parse::<Retriever>(), Ok(Retriever::Dense));
        assert!("x".parse::<Retriever>().is_err());
    }
}
