//! Retrievers and rank fusion.

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
}

impl Retriever {
    pub const ALL: [Retriever; 3] = [Retriever::Bm25, Retriever::Dense, Retriever::Hybrid];

    pub fn as_str(self) -> &'static str {
        match self {
            Retriever::Bm25 => "bm25",
            Retriever::Dense => "dense",
            Retriever::Hybrid => "hybrid",
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
            other => Err(format!("unknown retriever `{other}` (expected bm25, dense or hybrid)")),
        }
    }
}

/// One ranked result: a global chunk id and its retriever's score (higher is better).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hit {
    pub chunk: u32,
    pub score: f32,
}
