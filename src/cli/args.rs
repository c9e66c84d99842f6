//! Command-line arguments.

use clap::Parser;
use coret::search::Retriever;
use std::path::PathBuf;

#[derive(Parser, Debug, Clone)]
#[command(
    name = "coret-tui",
    version,
    about = "Find the Python functions, classes and methods an issue is about: CoRet dense retrieval and BM25, side by side.",
    after_help = "Without --query, opens the interactive TUI on PATH."
)]
pub struct Args {
    /// Repository to index (a directory with Python sources).
    #[arg(default_value = ".")]
    pub path: PathBuf,

    /// Search headlessly for TEXT and print ranked chunks (`-` reads the query from stdin).
    #[arg(long, value_name = "TEXT")]
    pub query: Option<String>,

    /// Which ranking(s) to print: bm25, dense, hybrid, or all.
    #[arg(long, default_value = "bm25", value_name = "NAME")]
    pub retriever: RetrieverArg,

    /// How many results per ranking.
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub top: usize,

    /// Print one JSON object on stdout instead of a readable list.
    #[arg(long)]
    pub json: bool,

    /// Cache directory (default: the platform cache directory).
    #[arg(long, env = "CORET_CACHE_DIR", value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,

    /// Index in memory only; neither read nor write the cache.
    #[arg(long)]
    pub no_cache: bool,

    /// Skip source files larger than this many bytes.
    #[arg(long, default_value_t = coret::repo::source::DEFAULT_MAX_FILE_SIZE, value_name = "BYTES")]
    pub max_file_size: u64,

    /// Run a benchmark and print figures: `index` (walk, chunk, call graph, BM25; cold and warm).
    #[arg(long, hide = true, value_name = "WHAT")]
    pub bench: Option<String>,
}

/// `--retriever` value: one retriever or all of them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetrieverArg(pub Vec<Retriever>);

impl std::str::FromStr for RetrieverArg {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.trim().eq_ignore_ascii_case("all") {
            return Ok(RetrieverArg(Retriever::ALL.to_vec()));
        }
        let mut list = Vec::new();
        for part in s.split(',') {
            let r: Retriever = part.parse()?;
            if !list.contains(&r) {
                list.push(r);
            }
        }
        Ok(RetrieverArg(list))
    }
}
