//! The MCP tools' arguments, answers and work over one [`Searcher`]: `locate`, `neighbours`,
//! `read`. Doc comments on the argument and answer types are the schemas' descriptions an
//! agent reads.

use super::sandbox::{resolve, SandboxError};
use super::{DenseStatus, LOCATE_WAIT};
use crate::chunk::Chunk;
use crate::engine::RepoIndex;
use crate::index::Retriever;
use crate::rank::dense_retriever::DenseSearcher;
use crate::rank::fusion::FusionParams;
use crate::rank::searcher::query_first_size;
use crate::rank::{Ask, QueryShape, Searcher};
use crate::repo::lines::{line_count, span_lines};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

pub const DEFAULT_TOP_K: usize = 10;
pub const MAX_TOP_K: usize = 200;
/// Lines of code `locate` shows per hit.
pub const CODE_LINES: usize = 40;
/// The most lines one `read` returns.
pub const MAX_READ_LINES: usize = 400;
/// Files larger than this are not read (the index skips them too, at 1 MiB by default).
const MAX_READ_BYTES: u64 = 32 << 20;

/// A tool call that cannot be answered; the message names the argument or path.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("{arg}: {message}")]
    Argument { arg: &'static str, message: String },
    #[error(transparent)]
    Path(#[from] SandboxError),
    #[error("{0}")]
    Engine(#[from] crate::Error),
    /// The error of a call this server forwarded to the checkout's owner (`mcp::owner`).
    #[error("{0}")]
    Forwarded(String),
}

fn bad(arg: &'static str, message: impl Into<String>) -> ToolError {
    ToolError::Argument { arg, message: message.into() }
}

// Undocumented variants keep the schema a plain string enum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RetrieverName {
    Bm25,
    Dense,
    Hybrid,
    History,
}

const RETRIEVER_NAMES: &str = "bm25, dense, hybrid or history";

/// By hand, so a wrong name gets a message that names the valid ones (serde's derive says
/// "unknown variant").
impl<'de> Deserialize<'de> for RetrieverName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        match name.trim().to_ascii_lowercase().as_str() {
            "bm25" => Ok(RetrieverName::Bm25),
            "dense" => Ok(RetrieverName::Dense),
            "hybrid" => Ok(RetrieverName::Hybrid),
            "history" => Ok(RetrieverName::History),
            _ => Err(serde::de::Error::custom(format!(
                "retriever: `{name}` is not a retriever; use {RETRIEVER_NAMES}"
            ))),
        }
    }
}

impl From<RetrieverName> for Retriever {
    fn from(r: RetrieverName) -> Self {
        match r {
            RetrieverName::Bm25 => Retriever::Bm25,
            RetrieverName::Dense => Retriever::Dense,
            RetrieverName::Hybrid => Retriever::Hybrid,
            RetrieverName::History => Retriever::History,
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct LocateRequest {
    /// The issue, bug report or feature request in full (any length; more text ranks better).
    pub issue: String,
    /// How many hits to return, best first: 1 to 200, default 10.
    #[serde(default)]
    #[schemars(range(min = 1, max = 200))]
    pub top_k: Option<usize>,
    /// Which ranking: bm25 (lexical, always ready), dense (the CoRet neural retriever), hybrid
    /// (both fused, usually best) or history (files whose past commits' messages match the
    /// issue; needs a git checkout). Default: hybrid whenever a dense index exists, a partial one
    /// included while the rest is embedded (`dense_coverage` says over how many chunks), else
    /// bm25. A call waits at most 5 s for the dense side: a dense or hybrid request it cannot
    /// answer by then (the model loading, this issue's chunks not embedded yet) is answered by
    /// bm25, and the answer's `note` says so.
    #[serde(default)]
    pub retriever: Option<RetrieverName>,
    /// Rank test files (tests/, test_*.py, *_test.py, conftest.py) like other code. Default
    /// false: they are left out.
    #[serde(default)]
    pub include_tests: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct LocateAnswer {
    /// The ranking the hits come from: bm25, dense, hybrid or history.
    pub retriever: String,
    /// The retrievers behind that ranking (a hybrid fuses bm25 and dense, and history where
    /// it weighs; `rerank` when a reranker re-ordered its head: the server ran with --rerank).
    pub retrievers_used: Vec<String>,
    /// Whether the dense index was complete for this answer.
    pub dense_ready: bool,
    /// The dense index: ready, building (with its coverage), loading the model, off, or
    /// unavailable with the reason.
    pub dense_status: String,
    /// The dense index this answer describes (the one it ranked with, else the one standing):
    /// over how many chunks it ranks, of how many the complete index holds. The same numbers as
    /// dense_status and note; absent while there is no dense index.
    pub dense_coverage: Option<DenseCoverage>,
    /// Which dense tier ranked: `static` (at once, every chunk) or `transformer`; absent
    /// when no dense ranking took part.
    pub dense_tier: Option<String>,
    /// Anything the caller should know about this answer (e.g. a dense request answered by
    /// bm25, or a hybrid over a partial dense index).
    pub note: Option<String>,
    /// The index behind the answer; it is re-read before every call, so edits show at once.
    pub index: IndexSummary,
    /// The team's vector store, when the server runs with --store: how many vectors this server
    /// took from it (pulled) and gave it (pushed), how many wait to be sent (pending), and why
    /// it is not answering, if it is not (trouble). Absent without a store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store: Option<crate::index::shared::SharedStats>,
    /// With several checkouts (the server was started on several, or on a workspace file):
    /// each one's name (what `repo` says on files and chunks, and what `neighbours` and `read`
    /// take), root, index and dense status. `index` then sums them. Absent with one checkout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repos: Option<Vec<CheckoutSummary>>,
    /// How the issue text read: issue, question, or name (one identifier such as `Router` or
    /// `Runtime::spawn`, whose definitions a hybrid ranking lifts).
    pub query_shape: String,
    /// The top_k ranked chunks grouped by file: files in the order of their best chunk, each
    /// file's chunks nested, best first.
    pub files: Vec<LocatedFile>,
}

impl LocateAnswer {
    /// Every chunk of the answer in rank order (the flat ranking).
    pub fn hits(&self) -> Vec<&LocatedChunk> {
        let mut hits: Vec<&LocatedChunk> = self.files.iter().flat_map(|f| &f.chunks).collect();
        hits.sort_by_key(|h| h.rank);
        hits
    }
}

/// One checkout of a server over several.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct CheckoutSummary {
    /// The name its rows carry as `repo`.
    pub name: String,
    /// Its root on the server's machine.
    pub root: String,
    pub index: IndexSummary,
    pub dense_status: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct LocatedFile {
    /// The file's place among the answer's files, 1-based.
    pub rank: usize,
    /// The checkout the file is in, when the server serves several (see `repos`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// Relative to the repository root.
    pub path: String,
    /// Its ranked chunks: the one that stands for the file first (its best chunk that is not
    /// module-level code), then the rest by rank.
    pub chunks: Vec<LocatedChunk>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DenseCoverage {
    /// Chunks the dense index ranks over (embedded so far).
    pub ranked: usize,
    /// Chunks the complete dense index holds.
    pub of: usize,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct IndexSummary {
    pub files: usize,
    pub chunks: usize,
    pub call_edges: usize,
    /// How the on-disk cache served the last re-read: warm (nothing changed), updated (edited
    /// files re-indexed), cold (built) or off.
    pub cache: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct LocatedChunk {
    pub rank: usize,
    pub score: f32,
    /// The checkout the chunk is in, when the server serves several: pass it to `neighbours`
    /// and `read`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// Relative to the repository root.
    pub path: String,
    /// First line of the chunk, 1-based.
    pub start_line: usize,
    /// Last line of the chunk, inclusive.
    pub end_line: usize,
    /// function, class, method or module (a file's code outside any definition).
    pub kind: String,
    /// Qualified name (`Class.method`, `function`, `Class`; `<module>` for module-level code):
    /// pass it with `path` to `neighbours`.
    pub name: String,
    /// The chunk's source lines from start_line, at most the first 40.
    pub code: String,
    /// Set when `code` was cut: which lines are left out, to fetch with `read`.
    pub code_note: Option<String>,
}

/// Ranks the chunks of `searcher`'s repository for the issue, waiting for the dense side at
/// most [`LOCATE_WAIT`].
pub fn locate(
    searcher: &Searcher,
    dense: &DenseStatus,
    default: Option<Retriever>,
    req: &LocateRequest,
) -> Result<LocateAnswer, ToolError> {
    locate_within(searcher, dense, default, req, Instant::now() + LOCATE_WAIT)
}

/// [`locate`], waiting for the dense side until `deadline`. A partial dense index is asked to
/// embed this issue's chunks first (query-first) in the time left; when they do not come in
/// time, BM25 answers alone. Every dense figure of the answer (status, coverage, note) is the
/// [`DenseSearcher::coverage`] of one index: the one ranked with, else the one standing.
pub fn locate_within(
    searcher: &Searcher,
    dense: &DenseStatus,
    default: Option<Retriever>,
    req: &LocateRequest,
    deadline: Instant,
) -> Result<LocateAnswer, ToolError> {
    let top_k = checked_top_k(req)?;
    let asked = req.retriever.map(Retriever::from).or(default);
    let side = match asked {
        None | Some(Retriever::Dense | Retriever::Hybrid) => {
            DenseSide::within(searcher, &req.issue, deadline)?
        }
        Some(_) => DenseSide::Standing(searcher.dense.clone()),
    };
    let coverage = side.index().map(|d| d.coverage());
    let store = side.index().or(searcher.dense.as_ref()).and_then(|d| d.store_stats());
    let status = dense.describe(coverage);
    let (retriever, note, ranked_with) = match side {
        DenseSide::Ranks(index) => {
            let note = coverage.filter(|(ranked, of)| ranked < of).map(|(ranked, of)| {
                format!(
                    "dense ranked over {ranked} of {of} chunks: this issue's candidates first, the rest \
                     are still being embedded (dense_status)"
                )
            });
            (asked.unwrap_or(Retriever::Hybrid), note, Some(index))
        }
        DenseSide::Standing(_) => (asked.unwrap_or(Retriever::Bm25), None, None),
        DenseSide::Static { side, .. } => {
            let note = format!(
                "the static tier answered at once (a {}): the transformer has not embedded this \
                 query's candidates yet; they are embedded next, so a later call gets its ranking",
                QueryShape::of(&req.issue)
            );
            (asked.unwrap_or(Retriever::Hybrid), Some(note), Some(side))
        }
        DenseSide::Missing => (Retriever::Bm25, bm25_note(asked, dense, &status, false), None),
        DenseSide::Late(_) => (Retriever::Bm25, bm25_note(asked, dense, &status, true), None),
    };
    // Left out: tests rank last (weight 0) and are dropped; included: ranked like other code.
    let mut fusion = searcher.fusion;
    fusion.test_weight = if req.include_tests { 1.0 } else { 0.0 };
    // The dense index here is complete or already holds this issue's chunks (or is None), so
    // ranking never waits on query-first again.
    let view = Searcher { dense: ranked_with, fusion, ..searcher.clone_sides() };
    let repo = &searcher.repo;
    let mut sources = HashMap::new();
    let ask = Ask { query: &req.issue, retrievers: &[retriever], top: top_k, rerank: true };
    let answer = view.answer(&ask)?;
    let reranked = answer.reranked.is_some();
    let mut hits = answer.final_hits(retriever).to_vec();
    hits.retain(|h| repo.chunks.get(h.chunk as usize).is_some_and(|c| req.include_tests || !c.is_test()));
    let files = crate::rank::group::group_in(repo, &hits)
        .into_iter()
        .enumerate()
        .map(|(i, g)| LocatedFile {
            rank: i + 1,
            repo: None,
            path: g.path.clone(),
            chunks: g
                .hits
                .iter()
                .map(|h| located(repo, &mut sources, h.rank, h.hit.score, &repo.chunks[h.hit.chunk as usize]))
                .collect(),
        })
        .collect();
    Ok(LocateAnswer {
        retriever: retriever.as_str().into(),
        retrievers_used: retrievers_used(retriever, &fusion, searcher.history.is_some(), reranked),
        dense_ready: coverage.is_some_and(|(ranked, of)| ranked == of),
        dense_status: status,
        dense_coverage: coverage.map(|(ranked, of)| DenseCoverage { ranked, of }),
        dense_tier: view
            .dense_tier()
            .filter(|_| matches!(retriever, Retriever::Dense | Retriever::Hybrid))
            .map(str::to_string),
        note,
        index: summary(repo),
        store,
        repos: None,
        query_shape: crate::rank::QueryShape::of(&req.issue).as_str().into(),
        files,
    })
}

/// The request's top_k, checked, after the issue text is.
pub(super) fn checked_top_k(req: &LocateRequest) -> Result<usize, ToolError> {
    if let Some(why) = crate::index::query_terms::nothing_to_search(&req.issue) {
        return Err(bad(
            "issue",
            format!("nothing to search for: {why}; give the text of the issue to locate"),
        ));
    }
    let top_k = req.top_k.unwrap_or(DEFAULT_TOP_K);
    if !(1..=MAX_TOP_K).contains(&top_k) {
        return Err(bad("top_k", format!("{top_k} is out of range 1..={MAX_TOP_K}")));
    }
    Ok(top_k)
}

/// The retrievers behind `retriever`'s ranking, for `retrievers_used`.
pub(super) fn retrievers_used(
    retriever: Retriever,
    fusion: &FusionParams,
    has_history: bool,
    reranked: bool,
) -> Vec<String> {
    let mut used: Vec<String> = match retriever {
        Retriever::Hybrid => vec!["bm25".into(), "dense".into()],
        r => vec![r.as_str().into()],
    };
    if retriever == Retriever::Hybrid && fusion.history_weight > 0.0 && has_history {
        used.push("history".into());
    }
    if reranked {
        used.push("rerank".into());
    }
    used
}

/// Why BM25 answered a call that wanted the dense side (`late`: a partial index did not embed
/// the issue's chunks in time); None for a server that runs BM25 only.
pub(super) fn bm25_note(
    asked: Option<Retriever>,
    dense: &DenseStatus,
    status: &str,
    late: bool,
) -> Option<String> {
    // A failed build is gone: its chunks are not "embedded next".
    let why = if late && !matches!(dense, DenseStatus::Failed(_)) {
        format!(
            "this issue's chunks were not embedded within the wait (at most {} s a call; the dense \
             index is {status}). They are embedded next, ahead of the rest, so a later call gets the \
             dense ranking",
            LOCATE_WAIT.as_secs()
        )
    } else {
        format!("the dense index is {status}")
    };
    match asked {
        None if *dense == DenseStatus::Off => None,
        None => Some(format!("answered by bm25 alone: {why}")),
        Some(r) => Some(format!("{r} asked for, but answered by bm25: {why}")),
    }
}

/// The dense index behind one `locate` answer.
pub(super) enum DenseSide {
    /// None to rank with: the model loading or failed, the server BM25 only, or an edited
    /// index's first partial not published yet.
    Missing,
    /// Ranks at once: complete, or partial with this issue's chunks embedded.
    Ranks(Arc<DenseSearcher>),
    /// Partial, and this issue's chunks were not embedded by the deadline: BM25 answers. Its
    /// chunks as they stand are mostly the first files in path order, not this issue's, and a
    /// dense list over those, standardised, would weigh in the hybrid like a real one.
    Late(Arc<DenseSearcher>),
    /// Not needed (bm25 or history asked for): the index as it stands, for the status.
    Standing(Option<Arc<DenseSearcher>>),
    /// A question or a name the transformer has not covered: the static tier answers at once
    /// (the transformer's index as it stands, for the status; the candidates are queued).
    Static { side: Arc<DenseSearcher>, standing: Option<Arc<DenseSearcher>> },
}

impl DenseSide {
    /// `searcher`'s dense index for `issue`; a partial one still being built is asked for the
    /// issue's chunks first and waited for until `deadline` (not [`Searcher::dense_for`], whose
    /// wait suits a terminal, not an agent's tool call).
    pub(super) fn within(
        searcher: &Searcher,
        issue: &str,
        deadline: Instant,
    ) -> Result<DenseSide, ToolError> {
        let at_once = searcher.static_side.clone().filter(|_| QueryShape::of(issue).static_answers_at_once());
        let Some(dense) = searcher.dense.clone() else {
            return Ok(match at_once {
                Some(side) => DenseSide::Static { side, standing: None },
                None => DenseSide::Missing,
            });
        };
        let Some(first) = dense.query_first().cloned() else { return Ok(DenseSide::Ranks(dense)) };
        let top = query_first_size(searcher.repo.chunks.len());
        let candidates = searcher.query_candidates(issue, top, dense.skips_tests())?;
        if let Some(side) = at_once.filter(|_| !dense.holds_all(&candidates)) {
            // Queued, not waited for: the transformer embeds them next, for a later call.
            let _ = first.first(candidates, std::time::Duration::ZERO);
            return Ok(DenseSide::Static { side, standing: Some(dense) });
        }
        // Past the deadline the request stays queued: the builder embeds these chunks next, for
        // a later call.
        let wait = deadline.saturating_duration_since(Instant::now());
        Ok(match first.first(candidates, wait) {
            Some(answered) => DenseSide::Ranks(answered),
            None => DenseSide::Late(dense),
        })
    }

    pub(super) fn index(&self) -> Option<&Arc<DenseSearcher>> {
        match self {
            DenseSide::Ranks(d) | DenseSide::Late(d) | DenseSide::Standing(Some(d)) => Some(d),
            DenseSide::Static { standing, .. } => standing.as_ref(),
            DenseSide::Missing | DenseSide::Standing(None) => None,
        }
    }
}

pub fn summary(repo: &RepoIndex) -> IndexSummary {
    let s = &repo.stats;
    let cache = serde_json::to_value(s.cache).ok().and_then(|v| v.as_str().map(String::from));
    IndexSummary { files: s.files, chunks: s.chunks, call_edges: s.edges, cache: cache.unwrap_or_default() }
}

pub(super) fn located(
    repo: &RepoIndex,
    sources: &mut HashMap<String, Option<String>>,
    rank: usize,
    score: f32,
    c: &Chunk,
) -> LocatedChunk {
    let source = sources.entry(c.path.clone()).or_insert_with(|| repo.file_source(&c.path));
    let code = match source {
        Some(text) => span_lines(text, c.start_line, c.end_line, CODE_LINES),
        // The file went away since it was indexed: the retriever's view of the chunk.
        None => span_lines(crate::rank::dense_retriever::without_path(&c.text), 1, usize::MAX, CODE_LINES),
    };
    let code_note = code.is_cut().then(|| {
        let (from, to) = (c.start_line + code.shown, c.start_line + code.total - 1);
        format!("first {} of {} lines; lines {from}-{to} are left out (use `read`)", code.shown, code.total)
    });
    LocatedChunk {
        rank,
        score,
        repo: None,
        path: c.path.clone(),
        start_line: c.start_line,
        end_line: c.end_line,
        kind: c.shown_kind().as_str().into(),
        name: c.written_name().into_owned(),
        code: code.text,
        code_note,
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct NeighboursRequest {
    /// The checkout, by the name `locate` gives it (`repo`), when the server serves several;
    /// ignored when it serves one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// The symbol's file, relative to the repository root (as `locate` returns it).
    pub path: String,
    /// The symbol's qualified name as `locate` returns it (`Class.method`, `function`,
    /// `Class`); a bare method name works too and matches it in every class of the file.
    pub name: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct NeighboursAnswer {
    /// The checkout, when the server serves several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    pub path: String,
    pub name: String,
    /// Each definition of the name in the file (usually one) with its call-graph neighbours.
    pub definitions: Vec<Definition>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Definition {
    pub name: String,
    pub kind: String,
    pub start_line: usize,
    pub end_line: usize,
    /// Chunks that call this one.
    pub callers: Vec<Neighbour>,
    /// Chunks this one calls (resolved inside the repository; calls through a receiver of
    /// unknown type are not followed).
    pub callees: Vec<Neighbour>,
    /// Calls this one makes that could not be resolved (a receiver of unknown type, a name
    /// defined in several places), as written: `ctx.lookup_default`. Builtins and library
    /// calls are left out. Search for them with `locate` or `read` the code.
    pub unresolved: Vec<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Neighbour {
    /// `path:line` of the neighbour's first line.
    pub location: String,
    pub path: String,
    pub name: String,
    pub kind: String,
    pub start_line: usize,
    pub end_line: usize,
}

/// The callers and callees of `req.name` in `req.path`, from the index's call graph.
pub fn neighbours(repo: &RepoIndex, req: &NeighboursRequest) -> Result<NeighboursAnswer, ToolError> {
    let file = resolve(&repo.root, &req.path)?;
    let span = repo
        .file_span(&file.relative)
        .ok_or_else(|| bad("path", format!("`{}` is not an indexed source file", req.path)))?;
    // The name as the language writes it (`Mod.fun/2`, `M:m`, `A::B#m`) or dotted, as chunks
    // are named; Elixir's are named with their arity (`Mod.fun/2`), and without it name every arity.
    let written = req.name.trim();
    let dotted = crate::rank::names::dotted(written);
    let name = dotted.as_str();
    let ids = span.first as usize..(span.first + span.count) as usize;
    let plain = |i: usize| crate::chunk::without_arity(&repo.chunks[i].name);
    let (suffix, written_suffix) = (format!(".{name}"), format!(".{written}"));
    let found = [
        ids.clone().filter(|&i| repo.chunks[i].name == written).collect::<Vec<usize>>(),
        ids.clone().filter(|&i| repo.chunks[i].name.ends_with(&written_suffix)).collect(),
        ids.clone().filter(|&i| plain(i) == name).collect(),
        ids.clone().filter(|&i| plain(i).ends_with(&suffix)).collect(),
    ]
    .into_iter()
    .find(|f| !f.is_empty())
    .unwrap_or_default();
    if found.is_empty() {
        let names: Vec<String> = ids.map(|i| repo.chunks[i].written_name().into_owned()).take(50).collect();
        return Err(bad(
            "name",
            format!("`{name}` is not defined in `{}`; its names: {}", req.path, names.join(", ")),
        ));
    }
    let refs = |list: Option<&Vec<u32>>| -> Vec<Neighbour> {
        list.into_iter().flatten().filter_map(|&n| repo.chunks.get(n as usize)).map(neighbour).collect()
    };
    let definitions = found
        .into_iter()
        .map(|i| {
            let c = &repo.chunks[i];
            Definition {
                name: c.written_name().into_owned(),
                kind: c.shown_kind().as_str().into(),
                start_line: c.start_line,
                end_line: c.end_line,
                callers: refs(repo.graph.callers.get(i)),
                callees: refs(repo.graph.callees.get(i)),
                unresolved: repo.graph.unresolved.get(i).cloned().unwrap_or_default(),
            }
        })
        .collect();
    Ok(NeighboursAnswer { repo: None, path: file.relative, name: name.to_string(), definitions })
}

fn neighbour(c: &Chunk) -> Neighbour {
    Neighbour {
        location: format!("{}:{}", c.path, c.start_line),
        path: c.path.clone(),
        name: c.written_name().into_owned(),
        kind: c.shown_kind().as_str().into(),
        start_line: c.start_line,
        end_line: c.end_line,
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ReadRequest {
    /// The checkout, by the name `locate` gives it (`repo`), when the server serves several;
    /// ignored when it serves one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// The file, relative to the repository root (any text file inside it).
    pub path: String,
    /// First line to return, 1-based.
    #[schemars(range(min = 1))]
    pub start_line: usize,
    /// Last line to return, inclusive; at most 400 lines per call (larger ranges are refused).
    /// A line past the end of the file stops at its last line.
    #[schemars(range(min = 1))]
    pub end_line: usize,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ReadAnswer {
    /// The checkout, when the server serves several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    pub path: String,
    pub start_line: usize,
    /// The last line returned (the file's last line where end_line was past it).
    pub end_line: usize,
    /// How many lines the file has.
    pub total_lines: usize,
    /// The lines, joined by newlines.
    pub text: String,
}

/// Lines of a file inside `root` (canonical).
pub fn read(root: &Path, req: &ReadRequest) -> Result<ReadAnswer, ToolError> {
    let (start, end) = (req.start_line, req.end_line);
    if start == 0 {
        return Err(bad("start_line", "0: lines count from 1"));
    }
    if end < start {
        return Err(bad("end_line", format!("{end} is before start_line {start}")));
    }
    let asked = end - start + 1;
    if asked > MAX_READ_LINES {
        let last = start + MAX_READ_LINES - 1;
        return Err(bad(
            "end_line",
            format!("lines {start}-{end} are {asked} lines; read at most {MAX_READ_LINES} a call (e.g. {start}-{last})"),
        ));
    }
    let file = resolve(root, &req.path)?;
    let unreadable = |why: String| bad("path", format!("`{}`: {why}", req.path));
    let meta = std::fs::metadata(&file.absolute).map_err(|e| unreadable(e.to_string()))?;
    if meta.is_dir() {
        return Err(unreadable("a directory, not a file".into()));
    }
    if meta.len() > MAX_READ_BYTES {
        return Err(unreadable(format!(
            "{} bytes; files over {MAX_READ_BYTES} bytes are not read",
            meta.len()
        )));
    }
    let bytes = std::fs::read(&file.absolute).map_err(|e| unreadable(e.to_string()))?;
    let text = String::from_utf8(bytes).map_err(|_| unreadable("not UTF-8 text".into()))?;
    let total = line_count(&text);
    if start > total {
        return Err(bad("start_line", format!("{start} is past the end of `{}` ({total} lines)", req.path)));
    }
    let lines = span_lines(&text, start, end, MAX_READ_LINES);
    Ok(ReadAnswer {
        repo: None,
        path: file.relative,
        start_line: start,
        end_line: start + lines.shown - 1,
        total_lines: total,
        text: lines.text,
    })
}

#[cfg(test)]
#[path = "tools_tests.rs"]
mod tests;
