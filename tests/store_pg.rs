//! The team's vector store (issue 71) against a real PostgreSQL with pgvector, started by
//! `scripts/store/pg.sh` as a team would (`.ci/run` installs it): two machines over one store
//! embed a chunk once, the read-only role reads and never writes, and every way a store can be
//! wrong is one line, never a wrong ranking.
#[path = "../src/testkit.rs"]
mod testkit;

mod common;

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A server of our own in a temporary directory, stopped when dropped.
struct Server {
    dir: tempfile::TempDir,
    writer: String,
    reader: String,
}

fn pg(args: &[&str]) -> std::process::Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/store/pg.sh");
    std::process::Command::new("bash").arg(script).args(args).output().expect("bash runs")
}

impl Server {
    fn start() -> Server {
        let ok = |out: std::process::Output, what: &str| {
            assert!(out.status.success(), "pg.sh {what}: {}", String::from_utf8_lossy(&out.stderr));
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        ok(pg(&["install"]), "install (.ci/run runs it first)");
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_str().unwrap().to_string();
        // A port of our own: bound then released, so parallel tests do not meet.
        let port =
            std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port().to_string();
        ok(pg(&["init", &d]), "init");
        ok(pg(&["start", &d, &port]), "start");
        ok(pg(&["setup", &d]), "setup");
        let urls = ok(pg(&["url", &d]), "url");
        let url = |name: &str| {
            urls.lines()
                .find_map(|l| l.strip_prefix(&format!("{name}=")))
                .expect("pg.sh url names it")
                .to_string()
        };
        Server { writer: url("CORET_PG_WRITER_URL"), reader: url("CORET_PG_READER_URL"), dir }
    }

    fn admin(&self, sql: &str) {
        self.psql("admin", sql)
    }

    fn psql(&self, role: &str, sql: &str) {
        let d = self.dir.path().to_str().unwrap();
        let out = pg(&["psql", d, role, "-q", "-d", "coret", "-c", sql]);
        assert!(out.status.success(), "{sql}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = pg(&["stop", self.dir.path().to_str().unwrap()]);
    }
}

fn tiny_model(dir: &Path) {
    testkit::write_tiny_bert(dir, &["cart", "total", "price", "discount", "tax", "def", "return"]);
}

/// One machine: its own cache directory, the shared model, the transformer tier. The
/// precision is left to choose: over a store `auto` is f32 everywhere, so cache directories
/// that would time f32 against bf16 apart on a busy machine still share one tower.
fn machine(cache: &Path, model: &Path, store: &str) -> Command {
    let mut cmd = Command::cargo_bin("coret-tui").unwrap();
    cmd.env("CORET_CACHE_DIR", cache).env("CORET_MODEL", model).env("CORET_OFFLINE", "1");
    cmd.env("CORET_DENSE", "transformer").env("CORET_STORE", store);
    cmd
}

fn query(cmd: &mut Command, repo: &Path) -> Value {
    let out = cmd.arg(repo).args(["--query", "total price", "--json", "--wait-index"]).output().unwrap();
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

fn names(v: &Value, retriever: &str) -> Vec<String> {
    v["results"][retriever]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["name"].as_str().unwrap().to_string())
        .collect()
}

struct Setup {
    _tmp: tempfile::TempDir,
    model: PathBuf,
    caches: PathBuf,
}

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let model = tmp.path().join("model");
    tiny_model(&model);
    Setup { model, caches: tmp.path().to_path_buf(), _tmp: tmp }
}

#[test]
fn a_second_machine_over_the_store_embeds_nothing_the_first_embedded() {
    let server = Server::start();
    let repo = common::fixture_repo();
    let s = setup();
    let first = query(&mut machine(&s.caches.join("a"), &s.model, &server.writer), repo.path());
    let embedded = first["stats"]["embedded"].as_u64().unwrap();
    assert!(embedded > 0, "{}", first["stats"]);
    assert_eq!(first["stats"]["store"]["pushed"].as_u64(), Some(embedded), "{}", first["stats"]);
    let second = query(&mut machine(&s.caches.join("b"), &s.model, &server.writer), repo.path());
    assert_eq!(second["stats"]["embedded"].as_u64(), Some(0), "{}", second["stats"]);
    assert_eq!(second["stats"]["store"]["pulled"].as_u64(), Some(embedded));
    assert_eq!(names(&second, "hybrid"), names(&first, "hybrid"), "the same vectors, the same ranking");

    // The searchers' role reads what the team embedded and cannot write.
    let reader = query(&mut machine(&s.caches.join("c"), &s.model, &server.reader), repo.path());
    assert_eq!(reader["stats"]["embedded"].as_u64(), Some(0));
    assert_eq!(names(&reader, "hybrid"), names(&first, "hybrid"));
    let other = common::fixture_repo();
    common::write(other.path(), "shop/extra.py", "def tax_total(cart):\n    return sum(cart) * 1.2\n");
    let wrote = query(&mut machine(&s.caches.join("c"), &s.model, &server.reader), other.path());
    assert!(wrote["stats"]["embedded"].as_u64().unwrap() > 0);
    assert_eq!(wrote["stats"]["store"]["pushed"].as_u64(), Some(0), "{}", wrote["stats"]);
    assert!(wrote["stats"]["store"]["trouble"].as_str().unwrap().contains("not write"), "{}", wrote["stats"]);
}

/// `--store-search`: a client ranks the dense side in the server and holds no vector that
/// the team embedded; what the store lacks (an edit, and a role that cannot give it) is
/// embedded and ranked here.
#[test]
fn a_client_that_ranks_in_the_store_holds_no_vector_and_ranks_alike() {
    let server = Server::start();
    let repo = common::fixture_repo();
    let s = setup();
    let first = query(&mut machine(&s.caches.join("a"), &s.model, &server.writer), repo.path());
    assert!(first["stats"]["store"]["pushed"].as_u64().unwrap() > 0, "{}", first["stats"]);
    let thin = |cache: &str, url: &str, repo: &Path| {
        let mut cmd = machine(&s.caches.join(cache), &s.model, url);
        cmd.arg("--store-search");
        query(&mut cmd, repo)
    };
    // The searchers' role: no HNSW index of its own making, the server scans the tower exactly.
    let reader = thin("b", &server.reader, repo.path());
    let search = &reader["stats"]["store"]["search"];
    assert_eq!(reader["stats"]["embedded"].as_u64(), Some(0), "{}", reader["stats"]);
    assert_eq!(
        reader["stats"]["store"]["pulled"].as_u64(),
        Some(0),
        "no vector comes here: {}",
        reader["stats"]
    );
    assert_eq!(
        (search["chunks_ranked_here"].as_u64(), search["hnsw_index"].as_bool()),
        (Some(0), Some(false))
    );
    assert_eq!(names(&reader, "hybrid"), names(&first, "hybrid"), "the same vectors, the same ranking");
    // The writers' role builds the tower's HNSW index, and the ranking stands.
    let writer = thin("c", &server.writer, repo.path());
    assert_eq!(writer["stats"]["store"]["search"]["hnsw_index"].as_bool(), Some(true), "{}", writer["stats"]);
    assert_eq!(names(&writer, "hybrid"), names(&first, "hybrid"));
    // An edit the store has never seen, by a role that cannot give it: embedded and ranked here.
    let edited = common::fixture_repo();
    common::write(edited.path(), "shop/extra.py", "def tax_total(cart):\n    return sum(cart) * 1.2\n");
    let mut cmd = machine(&s.caches.join("b"), &s.model, &server.reader);
    let out = cmd.arg(edited.path()).args([
        "--store-search",
        "--query",
        "tax total",
        "--json",
        "--retriever",
        "dense",
    ]);
    let out = out.output().unwrap();
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["stats"]["store"]["search"]["chunks_ranked_here"].as_u64(), Some(1), "{}", v["stats"]);
    assert_eq!(v["stats"]["embedded"].as_u64(), Some(1), "{}", v["stats"]);
    // The tiny model's weights are random: the edit is ranked (its cosine computed here), not first.
    assert!(
        names(&v, "dense").contains(&"tax_total".to_string()),
        "the edit ranks: {:?}",
        names(&v, "dense")
    );

    // Both checkouts as one, each ranked in the store.
    let mut cmd = machine(&s.caches.join("c"), &s.model, &server.writer);
    let out =
        cmd.arg(repo.path()).arg(edited.path()).args(["--store-search", "--query", "tax total", "--json"]);
    let out = out.output().unwrap();
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let repos = v["repos"].as_array().unwrap();
    assert_eq!(repos.len(), 2);
    for r in repos {
        assert_eq!(r["store_search"]["hnsw_index"].as_bool(), Some(true), "{r}");
    }
    assert_eq!(v["stats"]["store"]["pulled"].as_u64(), Some(0), "{}", v["stats"]);
}

/// The agent server ranks in the store too (`--mcp REPO --store-search`), through the official
/// Python MCP SDK (tests/mcp_store.py; `.ci/run` installs it).
#[test]
fn an_mcp_server_ranks_in_the_store_and_pulls_nothing() {
    let server = Server::start();
    let repo = common::fixture_repo();
    let s = setup();
    query(&mut machine(&s.caches.join("a"), &s.model, &server.writer), repo.path());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_store.py");
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let out = std::process::Command::new(python)
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_coret-tui"))
        .arg(repo.path())
        .arg(&s.model)
        .arg(s.caches.join("mcp"))
        .arg(&server.writer)
        .output()
        .expect("python3 runs (with the mcp package: pip install 'mcp>=1.9,<2')");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(
        out.status.success() && stdout.contains("all checks passed"),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
}

/// Ranking in the store, while an edit it lacks is embedded: what it holds serves at once (a
/// partial index, what the TUI's and the MCP server's dense threads install), then the whole.
#[test]
fn ranking_in_the_store_serves_what_it_holds_while_the_rest_is_embedded() {
    use coret::index::dense::VectorStore;
    use coret::index::shared::{SharedHandle, SharedVectors};
    use coret::rank::dense_retriever::DenseOptions;
    use coret::rank::Searcher;
    use std::sync::{Arc, Mutex};
    let server = Server::start();
    let repo = common::fixture_repo();
    let s = setup();
    let options =
        coret::model::EncoderOptions { precision: coret::model::Precision::F32, ..Default::default() };
    let encoder = coret::model::Encoder::load(&s.model, &candle_core::Device::Cpu, options).unwrap();
    let towers = coret::model::Towers::tied(Arc::new(encoder));
    let shared = SharedVectors::connect(&server.writer, None).unwrap();
    let opts =
        DenseOptions { shared: Some(SharedHandle(shared)), rank_in_store: true, ..DenseOptions::default() };
    let index_options = coret::engine::IndexOptions { cache_dir: None, ..Default::default() };
    // Each build: the coverage of every partial index served, and of the whole.
    let build = || {
        let index = coret::engine::RepoIndex::open(repo.path(), &index_options, &coret::progress::NoProgress);
        let searcher = Searcher::bm25_only(Arc::new(index.unwrap()));
        let served = Mutex::new(Vec::new());
        let publish = |p: Searcher| served.lock().unwrap().push(p.dense.unwrap().coverage());
        let mut local = VectorStore::in_memory(towers.chunk.dim());
        let progress = &coret::progress::NoProgress;
        let full = searcher.with_dense_in_store_at(
            towers.clone(),
            opts.clone(),
            &mut local,
            (progress, Some(&publish)),
        );
        (served.into_inner().unwrap(), full.unwrap().dense.unwrap().coverage())
    };
    let (served, (ranked, of)) = build();
    assert_eq!((served, ranked), (vec![], of), "an empty store: nothing to serve first, then every chunk");
    common::write(repo.path(), "shop/extra.py", "def tax_total(cart):\n    return sum(cart) * 1.2\n");
    let (served, (ranked, of)) = build();
    assert_eq!(ranked, of);
    assert_eq!(served, vec![(of - 1, of)], "what the store held served first: all but the edit");
    let (served, _) = build();
    assert!(served.is_empty(), "the store holds everything now: no partial index");
}

#[test]
fn a_store_that_is_wrong_is_one_line_and_a_store_that_is_down_costs_no_answer() {
    let server = Server::start();
    let repo = common::fixture_repo();
    let s = setup();
    let refused = |url: &str, says: &str| {
        let out = machine(&s.caches.join("x"), &s.model, url)
            .arg(repo.path())
            .args(["--query", "total price", "--json"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{url}: {stderr}");
        assert!(stderr.contains(says), "{url}: expected `{says}` in: {stderr}");
        assert!(!stderr.contains("coret-writer-local"), "no password in messages: {stderr}");
        assert!(out.stdout.is_empty());
    };
    refused(&server.writer.replace("coret-writer-local", "wrong"), "password authentication failed");
    refused("postgres://coret_writer:pw@127.0.0.1:notaport/coret", "malformed URL");
    refused("postgres://coret_writer:pw@no-such-host.invalid:5432/coret", "no-such-host.invalid");
    server.admin("CREATE DATABASE plain OWNER coret_writer");
    let plain = format!("{}/plain", server.writer.rsplit_once('/').unwrap().0);
    refused(&plain, "no pgvector");
    // Tables an older coret made, as the team's writer.
    server.psql("writer", "CREATE TABLE IF NOT EXISTS coret_meta (key text PRIMARY KEY, value text NOT NULL); \
                  INSERT INTO coret_meta VALUES ('schema', 'coret-vectors/0') ON CONFLICT (key) DO UPDATE SET value = 'coret-vectors/0'");
    refused(&server.writer, "another version");

    // Down: a port nothing listens on. The answer comes from the local cache, the status says why.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let down = format!("postgres://coret_writer:pw@127.0.0.1:{port}/coret");
    let answer = query(&mut machine(&s.caches.join("d"), &s.model, &down), repo.path());
    assert!(!names(&answer, "hybrid").is_empty());
    assert!(
        answer["stats"]["store"]["trouble"].as_str().unwrap().contains("not answering"),
        "{}",
        answer["stats"]
    );
    assert!(answer["stats"]["store"]["pending"].as_u64().unwrap() > 0, "kept to send when it answers");
}

#[test]
fn a_vector_of_the_wrong_width_in_the_store_is_refused_by_name() {
    let server = Server::start();
    let repo = common::fixture_repo();
    let s = setup();
    query(&mut machine(&s.caches.join("a"), &s.model, &server.writer), repo.path());
    server.admin("UPDATE coret_vectors SET dim = 3, v = '[1,2,3]' WHERE ctid = (SELECT ctid FROM coret_vectors LIMIT 1)");
    let out = machine(&s.caches.join("b"), &s.model, &server.writer)
        .arg(repo.path())
        .args(["--query", "total price", "--json", "--wait-index"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "never a ranking from it");
    assert!(stderr.contains("width 3") && stderr.contains("refusing to rank"), "{stderr}");
}

#[test]
fn what_a_machine_embedded_while_the_store_was_down_is_sent_by_its_next_run() {
    let server = Server::start();
    let repo = common::fixture_repo();
    let s = setup();
    let d = server.dir.path().to_str().unwrap().to_string();
    assert!(pg(&["stop", &d]).status.success());
    let offline = query(&mut machine(&s.caches.join("a"), &s.model, &server.writer), repo.path());
    let embedded = offline["stats"]["embedded"].as_u64().unwrap();
    assert!(embedded > 0);
    assert_eq!(offline["stats"]["store"]["pushed"].as_u64(), Some(0), "{}", offline["stats"]);
    assert_eq!(offline["stats"]["store"]["pending"].as_u64(), Some(embedded), "{}", offline["stats"]);
    // The server is back; the same machine's next run (a warm cache: it embeds nothing) sends them.
    let out = pg(&["start", &d]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let next = query(&mut machine(&s.caches.join("a"), &s.model, &server.writer), repo.path());
    assert_eq!(next["stats"]["embedded"].as_u64(), Some(0));
    assert_eq!(next["stats"]["store"]["pushed"].as_u64(), Some(embedded), "{}", next["stats"]);
    assert_eq!(next["stats"]["store"]["pending"].as_u64(), Some(0));
    // Sent once: a third run sends nothing, and another machine embeds nothing.
    let third = query(&mut machine(&s.caches.join("a"), &s.model, &server.writer), repo.path());
    assert_eq!(third["stats"]["store"]["pushed"].as_u64(), Some(0), "{}", third["stats"]);
    let other = query(&mut machine(&s.caches.join("b"), &s.model, &server.writer), repo.path());
    assert_eq!(other["stats"]["embedded"].as_u64(), Some(0), "{}", other["stats"]);
    assert_eq!(other["stats"]["store"]["pulled"].as_u64(), Some(embedded));
}

/// The server stopped between two writes of one index build (its connections cut) and started
/// again: every vector reaches it once, the second write through the spool of the machine's
/// cache root, sent by the machine's next connection.
#[test]
fn a_server_stopped_mid_index_loses_nothing_and_duplicates_nothing() {
    use coret::index::shared::SharedVectors;
    let server = Server::start();
    let d = server.dir.path().to_str().unwrap().to_string();
    let root = tempfile::tempdir().unwrap();
    let rows = |from: u8, n: u8| -> Vec<([u8; 16], Vec<f32>)> {
        (from..from + n).map(|i| ([i; 16], vec![f32::from(i) / 10.0, 1.0, -0.5])).collect()
    };
    let store = SharedVectors::connect(&server.writer, Some(root.path())).unwrap();
    store.put("t", &rows(1, 5));
    assert_eq!(store.stats().pushed, 5);
    assert!(pg(&["stop", &d]).status.success());
    store.put("t", &rows(6, 5));
    let stats = store.stats();
    assert_eq!((stats.pushed, stats.pending), (5, 5), "{stats:?}");
    assert!(stats.trouble.is_some());
    drop(store);
    assert!(pg(&["start", &d]).status.success());
    // The machine's next process: its first connection sends what waited.
    let next = SharedVectors::connect(&server.writer, Some(root.path())).unwrap();
    assert_eq!(next.stats().pushed, 5, "{:?}", next.stats());
    let keys: Vec<[u8; 16]> = (1..=10).map(|i| [i; 16]).collect();
    let back = next.fetch("t", 3, &keys).unwrap();
    assert_eq!(back.len(), 10, "every vector, once");
    for (key, v) in back {
        assert_eq!(v, vec![f32::from(key[0]) / 10.0, 1.0, -0.5]);
    }
    // Sent once: another connection finds nothing waiting.
    let again = SharedVectors::connect(&server.writer, Some(root.path())).unwrap();
    assert_eq!(again.stats().pushed, 0);
}
