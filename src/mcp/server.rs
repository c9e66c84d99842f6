//! The MCP protocol side (rmcp): tool routing, schemas, and the stdio transport. Each call
//! runs on a blocking thread: re-reading the index and ranking are CPU work.

use super::attach::Backend;
use super::tools::{
    self, LocateAnswer, LocateRequest, NeighboursAnswer, NeighboursRequest, ReadAnswer, ReadRequest,
    ToolError,
};
use super::LOCATE_WAIT;
use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::{tool, tool_handler, tool_router, Json, ServerHandler, ServiceExt};
use std::sync::Arc;

/// What the server tells an agent first; its languages are read from the table.
fn instructions(backend: &Backend) -> String {
    let langs = crate::lang::names();
    match backend {
        Backend::Several(s) => format!(
            "Code localisation over several repositories as one (coret-tui: {langs}): {}. {INSTRUCTIONS} \
             Every file and chunk `locate` returns names its repository (`repo`): pass it to `neighbours` and `read`.",
            s.names().join(", ")
        ),
        _ => format!("Code localisation over one repository (coret-tui: {langs}). {INSTRUCTIONS}"),
    }
}

const INSTRUCTIONS: &str = "\
Call `locate` with the full text of an issue to get the functions, classes and methods to edit, \
ranked, with their code; `neighbours` with a hit's path and name for its callers and callees; \
`read` for more lines of a file (at most 400 a call). Paths are relative to the repository \
root; the index is re-read before every call, so your edits show up in the next answer.";

const LOCATE: &str = "Rank the repository's functions, classes and methods by how likely an issue \
(bug report, feature request, error message, short question or a bare name such as `Router`) needs \
them edited or answers it. Returns up to top_k ranked chunks grouped by file: `files` in the order of \
each file's best chunk, each with its chunks nested (best first; a file's module-level code belongs to \
its file), every chunk with its overall rank, path, start_line/end_line (1-based, inclusive), kind, \
qualified name, score and the first 40 lines of code; `query_shape` says whether the text read as an \
issue, a question or a name. Says which retrievers answered and over how many chunks the dense index \
ranked. Waits at most 5 s for the dense index (BM25 answers alone after that, and the note says so). \
Test files are left out unless include_tests is true.";

const NEIGHBOURS: &str = "Callers and callees of one function, class or method (path + qualified \
name, as `locate` returns them), each with path:line, from the repository's call graph.";

const READ: &str = "Read lines start_line..end_line (1-based, inclusive, at most 400) of a file \
in the repository. Paths are relative to the repository root; paths leading outside it are refused.";

/// The server: its tools over one warm workspace, its own or the checkout owner's.
#[derive(Clone)]
pub struct CoretServer {
    backend: Arc<Backend>,
    tool_router: ToolRouter<Self>,
}

impl CoretServer {
    pub fn new(backend: Backend) -> Self {
        CoretServer { backend: Arc::new(backend), tool_router: Self::tool_router() }
    }
}

/// Runs `work` on a blocking thread; errors become the tool's error text.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<Json<T>, String> {
    match tokio::task::spawn_blocking(work).await {
        Ok(Ok(answer)) => Ok(Json(answer)),
        Ok(Err(e)) => Err(e.to_string()),
        Err(e) => Err(format!("the tool failed: {e}")),
    }
}

#[tool_router]
impl CoretServer {
    #[tool(description = LOCATE, annotations(title = "Locate code for an issue", read_only_hint = true, open_world_hint = false))]
    async fn locate(&self, Parameters(req): Parameters<LocateRequest>) -> Result<Json<LocateAnswer>, String> {
        let backend = self.backend.clone();
        blocking(move || match &*backend {
            Backend::Own(ws) => ws.locate(&req, LOCATE_WAIT),
            Backend::Attached(at) => at.call("locate", &req, |ws| ws.locate(&req, LOCATE_WAIT)),
            Backend::Several(s) => s.locate(&req, LOCATE_WAIT),
        })
        .await
    }

    #[tool(description = NEIGHBOURS, annotations(title = "Callers and callees", read_only_hint = true, open_world_hint = false))]
    async fn neighbours(
        &self,
        Parameters(req): Parameters<NeighboursRequest>,
    ) -> Result<Json<NeighboursAnswer>, String> {
        let backend = self.backend.clone();
        let local = move |ws: &super::Workspace, req: &NeighboursRequest| {
            tools::neighbours(&ws.refresh()?.0.repo, req)
        };
        blocking(move || match &*backend {
            Backend::Own(ws) => local(ws, &req),
            Backend::Attached(at) => at.call("neighbours", &req, |ws| local(ws, &req)),
            Backend::Several(s) => {
                let (name, ws) = s.pick(req.repo.as_deref())?;
                Ok(tools::NeighboursAnswer { repo: Some(name.to_string()), ..local(ws, &req)? })
            }
        })
        .await
    }

    #[tool(description = READ, annotations(title = "Read lines of a file", read_only_hint = true, open_world_hint = false))]
    async fn read(&self, Parameters(req): Parameters<ReadRequest>) -> Result<Json<ReadAnswer>, String> {
        let backend = self.backend.clone();
        blocking(move || match &*backend {
            Backend::Own(ws) => tools::read(ws.root(), &req),
            Backend::Attached(at) => tools::read(at.root(), &req),
            Backend::Several(s) => {
                let (name, ws) = s.pick(req.repo.as_deref())?;
                Ok(tools::ReadAnswer { repo: Some(name.to_string()), ..tools::read(ws.root(), &req)? })
            }
        })
        .await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for CoretServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("coret-tui", env!("CARGO_PKG_VERSION")))
            .with_instructions(instructions(&self.backend))
    }
}

/// Serves `backend` over stdin/stdout until the client closes the connection.
pub async fn serve_stdio(backend: Backend) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let service = CoretServer::new(backend).serve(rmcp::transport::stdio()).await?;
    service.waiting().await?;
    Ok(())
}
