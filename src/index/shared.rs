//! The team's vector store (issue 71): vectors embedded once for everyone, in PostgreSQL with
//! pgvector. A dense build asks it for the vectors its local store lacks before embedding
//! anything, and gives it what it embedded; the local store stays the cache and the offline
//! fallback, so a server that is down costs time, never an answer.
//!
//! Rows are keyed by the chunk tower's fingerprint and the token key of the encoder input (the
//! local store's own key, `dense::token_key`), so another tower's or tier's vectors are never
//! read, and two machines writing the same chunk leave one row (`ON CONFLICT DO NOTHING`).
//! Every vector read is checked (its width, no NaN) before it reaches an index.

use crate::error::{Error, Result};
use crate::index::dense::VectorKey;
use crate::index::shared_spool::Spool;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What `coret_meta` says for a store this build reads and writes.
pub const SCHEMA: &str = "coret-vectors/1";

/// How long a connection attempt waits: a store that does not answer must not hold a search.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// Rows per INSERT (4 parameters each, far under the protocol's 65,535).
const INSERT_ROWS: usize = 500;

/// Keys per SELECT.
pub(super) const FETCH_KEYS: usize = 5_000;

const CREATE: &str = "
CREATE TABLE IF NOT EXISTS coret_meta (key text PRIMARY KEY, value text NOT NULL);
INSERT INTO coret_meta VALUES ('schema', 'coret-vectors/1') ON CONFLICT (key) DO NOTHING;
CREATE TABLE IF NOT EXISTS coret_vectors (
    tower text NOT NULL,
    key bytea NOT NULL CHECK (length(key) = 16),
    dim int NOT NULL,
    v vector NOT NULL CHECK (vector_dims(v) = dim),
    PRIMARY KEY (tower, key)
);";

/// A connection to the team's store, shared by every dense build of this process.
pub struct SharedVectors {
    config: postgres::Config,
    /// The URL without its password, for messages.
    shown: String,
    client: Mutex<Option<postgres::Client>>,
    /// Vectors this process embedded that the server did not take yet (it was down) and no
    /// spool holds: sent with the next write.
    pending: Mutex<Vec<(String, VectorKey, Vec<f32>)>>,
    /// The last failure, for the status line; cleared by a success.
    trouble: Mutex<Option<String>>,
    pulled: AtomicUsize,
    pushed: AtomicUsize,
    /// The role may read, not write (the searchers' role): nothing is sent again.
    read_only: AtomicBool,
    /// Where what the store could not take waits for a later process (under the cache root).
    spool: Option<Spool>,
    /// Rows this process spooled that it has not seen sent.
    spooled: AtomicUsize,
}

/// What a client shows of the store: how many vectors came from it and went to it.
#[derive(
    Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct SharedStats {
    pub store: String,
    pub pulled: usize,
    pub pushed: usize,
    pub pending: usize,
    /// Why the store is not answering now, if it is not.
    pub trouble: Option<String>,
}

impl SharedVectors {
    /// Connects to `url` (`postgres://user:password@host:port/db`) and checks the server has
    /// pgvector and this build's tables (creating them where the role may). A malformed URL, a
    /// refused login, an unknown host, a server without pgvector or tables of another version
    /// are errors (one line naming what); a server that is down is not: the store starts
    /// disconnected and every build works from the local cache until it answers.
    ///
    /// With `spool_root`, what this process embedded while the store was down is kept there
    /// and sent by the first process that finds the store answering ([`Spool`]).
    pub fn connect(url: &str, spool_root: Option<&std::path::Path>) -> Result<Arc<SharedVectors>> {
        let config: postgres::Config = url
            .parse()
            .map_err(|e| Error::invalid(format!("--store: malformed URL `{}`: {e}", redact(url))))?;
        let mut config = config;
        config.connect_timeout(CONNECT_TIMEOUT);
        let shown = redact(url);
        let store = Arc::new(SharedVectors {
            config,
            spool: spool_root.map(|root| Spool::at(root, &shown)),
            spooled: AtomicUsize::new(0),
            shown,
            client: Mutex::new(None),
            pending: Mutex::new(Vec::new()),
            trouble: Mutex::new(None),
            pulled: AtomicUsize::new(0),
            pushed: AtomicUsize::new(0),
            read_only: AtomicBool::new(false),
        });
        match store.connected() {
            Ok(()) => {
                store.send_spooled();
                Ok(store)
            }
            Err(Failure::Down(why)) => {
                store.note(format!("not answering ({why}); the local cache answers"));
                Ok(store)
            }
            Err(Failure::Refused(why)) => Err(Error::invalid(format!("--store {}: {why}", store.shown))),
        }
    }

    /// The vectors of `keys` the store holds for `tower`, each checked to be `dim` wide and
    /// finite. A store that does not answer gives none (and says so in [`SharedVectors::stats`]);
    /// a vector that fails the check is an error naming it, never a ranking.
    pub fn fetch(&self, tower: &str, dim: usize, keys: &[VectorKey]) -> Result<Vec<(VectorKey, Vec<f32>)>> {
        let mut out = Vec::new();
        for part in keys.chunks(FETCH_KEYS) {
            let wanted: Vec<&[u8]> = part.iter().map(|k| k.as_slice()).collect();
            let rows = match self.with_client(|c| {
                c.query(
                    "SELECT key, v FROM coret_vectors WHERE tower = $1 AND key = ANY($2)",
                    &[&tower, &wanted],
                )
            }) {
                Some(rows) => rows,
                None => return Ok(out),
            };
            for row in rows {
                let key: &[u8] = row.get(0);
                let v: pgvector::Vector = row.get(1);
                let v = v.to_vec();
                let key: VectorKey =
                    key.try_into().map_err(|_| self.bad(tower, key, "a key that is not 16 bytes"))?;
                if v.len() != dim {
                    return Err(self.bad(
                        tower,
                        &key,
                        &format!("a vector of width {} (the tower's is {dim})", v.len()),
                    ));
                }
                if v.iter().any(|x| !x.is_finite()) {
                    return Err(self.bad(tower, &key, "a vector that is not finite (NaN or infinity)"));
                }
                out.push((key, v));
            }
        }
        self.pulled.fetch_add(out.len(), Ordering::Relaxed);
        Ok(out)
    }

    /// Gives the store `vectors` of `tower`, with whatever an earlier write could not send. A
    /// store that does not answer keeps them for the next write; a role that may not write
    /// (the read-only one) drops them with a note: they are in the local cache either way.
    pub fn put(&self, tower: &str, vectors: &[(VectorKey, Vec<f32>)]) {
        if self.read_only.load(Ordering::Relaxed) {
            return;
        }
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        pending.extend(vectors.iter().map(|(k, v)| (tower.to_string(), *k, v.clone())));
        match self.send(&pending) {
            Sent::All => pending.clear(),
            Sent::NotAllowed => pending.clear(),
            Sent::Down(sent) => {
                pending.drain(..sent);
                // Kept on disk for a later process where there is a spool; else for this
                // process's next write.
                if let Some(spool) = &self.spool {
                    match spool.append(&pending) {
                        Ok(()) => {
                            self.spooled.fetch_add(pending.len(), Ordering::Relaxed);
                            pending.clear();
                        }
                        Err(e) => self.note(format!("not answering, and {e}")),
                    }
                }
                return;
            }
        }
        drop(pending);
        self.send_spooled();
    }

    /// Sends what earlier processes (or this one) spooled, now that the store answers.
    fn send_spooled(&self) {
        let Some(spool) = &self.spool else { return };
        if self.read_only.load(Ordering::Relaxed) {
            return;
        }
        match spool.drain(|rows| matches!(self.send(rows), Sent::All)) {
            Ok(0) => {}
            Ok(_) => self.spooled.store(0, Ordering::Relaxed),
            Err(e) => self.note(format!("{e}")),
        }
    }

    /// Sends `rows` in INSERTs of [`INSERT_ROWS`]; stops at the first that fails.
    fn send(&self, rows: &[(String, VectorKey, Vec<f32>)]) -> Sent {
        let mut done = 0;
        while done < rows.len() {
            let n = (rows.len() - done).min(INSERT_ROWS);
            let sent = self.with_client(|c| match insert(c, &rows[done..done + n]) {
                Err(e) if e.code() == Some(&postgres::error::SqlState::INSUFFICIENT_PRIVILEGE) => Ok(false),
                other => other.map(|()| true),
            });
            match sent {
                Some(true) => {
                    self.pushed.fetch_add(n, Ordering::Relaxed);
                    done += n;
                }
                Some(false) => {
                    self.read_only.store(true, Ordering::Relaxed);
                    self.note("this role may read the store, not write it: what this process embedded stays in its local cache".into());
                    return Sent::NotAllowed;
                }
                None => return Sent::Down(done),
            }
        }
        Sent::All
    }

    /// The `k` vectors of `tower` nearest `query` by cosine, best first, as (key, cosine): the
    /// HNSW index's `candidates` nearest in half precision (`hnsw.ef_search` = `candidates`),
    /// rescored exactly on the stored f32 vectors. `None` when the store does not answer.
    pub fn nearest(
        &self,
        tower: &str,
        query: &[f32],
        k: usize,
        candidates: usize,
        quant: Quant,
    ) -> Option<Vec<(VectorKey, f32)>> {
        let dim = query.len();
        let candidates = candidates.max(k);
        // The tower and width are literals, not parameters, so the planner matches the
        // partial index's predicate.
        let sql = format!(
            "SELECT key, 1 - (v <=> $1::vector) FROM (SELECT key, v FROM coret_vectors \
             WHERE tower = {} AND dim = {dim} ORDER BY {} LIMIT {candidates}) c ORDER BY v <=> $1::vector LIMIT {k}",
            literal(tower),
            quant.order_by(dim)
        );
        let q = pgvector::Vector::from(query.to_vec());
        let rows = self.with_client(|c| {
            let mut tx = c.transaction()?;
            // The index, never a scan of the tower: a planner whose statistics lag a bulk load
            // chose a scan of 100,000 rows for some queries (docs/RESULTS.md "The store at scale").
            tx.batch_execute(&format!(
                "SET LOCAL hnsw.ef_search = {}; SET LOCAL enable_seqscan = off",
                candidates.min(1000)
            ))?;
            let rows = tx.query(sql.as_str(), &[&q])?;
            tx.commit()?;
            Ok(rows)
        })?;
        Some(
            rows.iter()
                .filter_map(|r| {
                    let key: &[u8] = r.get(0);
                    let sim: f64 = r.get(1);
                    Some((key.try_into().ok()?, sim as f32))
                })
                .collect(),
        )
    }

    pub fn stats(&self) -> SharedStats {
        SharedStats {
            store: self.shown.clone(),
            pulled: self.pulled.load(Ordering::Relaxed),
            pushed: self.pushed.load(Ordering::Relaxed),
            pending: self.pending.lock().map(|p| p.len()).unwrap_or(0) + self.spooled.load(Ordering::Relaxed),
            trouble: self.trouble.lock().ok().and_then(|t| t.clone()),
        }
    }

    /// The store as a person reads it in a message: its URL without the password.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// Runs `f` on a live connection, connecting first if need be; `None` when the store does
    /// not answer or refuses (the reason goes to the status line and the connection is dropped
    /// so that the next call tries afresh).
    pub(super) fn with_client<T>(
        &self,
        f: impl FnOnce(&mut postgres::Client) -> std::result::Result<T, postgres::Error>,
    ) -> Option<T> {
        if let Err(Failure::Down(why) | Failure::Refused(why)) = self.connected() {
            self.note(format!("not answering ({why}); the local cache answers"));
            return None;
        }
        let mut guard = self.client.lock().unwrap_or_else(|p| p.into_inner());
        let client = guard.as_mut()?;
        match f(client) {
            Ok(v) => {
                if !self.read_only.load(Ordering::Relaxed) {
                    *self.trouble.lock().unwrap_or_else(|p| p.into_inner()) = None;
                }
                Some(v)
            }
            Err(e) => {
                *guard = None;
                drop(guard);
                self.note(format!("failed ({}); the local cache answers", describe(&e)));
                None
            }
        }
    }

    /// Connects if not connected, checking the server and the schema once per connection.
    fn connected(&self) -> std::result::Result<(), Failure> {
        let mut guard = self.client.lock().unwrap_or_else(|p| p.into_inner());
        if guard.as_ref().is_some_and(|c| !c.is_closed()) {
            return Ok(());
        }
        let mut client = self.config.connect(postgres::NoTls).map_err(|e| classify(&e))?;
        check_schema(&mut client)?;
        *guard = Some(client);
        Ok(())
    }

    fn note(&self, why: String) {
        *self.trouble.lock().unwrap_or_else(|p| p.into_inner()) = Some(why);
    }

    fn bad(&self, tower: &str, key: &[u8], what: &str) -> Error {
        let hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
        Error::invalid(format!(
            "--store {}: coret_vectors holds {what} for tower {tower}, key {hex}; refusing to rank with it",
            self.shown
        ))
    }
}

/// How far a write got.
enum Sent {
    All,
    /// The role may not write.
    NotAllowed,
    /// The store stopped answering after this many rows.
    Down(usize),
}

/// Why the store cannot be used: `Down` passes (the local cache answers), `Refused` is the
/// user's to fix (password, host, pgvector, another version's tables).
enum Failure {
    Down(String),
    Refused(String),
}

fn classify(e: &postgres::Error) -> Failure {
    let text = describe(e);
    if e.as_db_error().is_some() {
        return Failure::Refused(text);
    }
    // The server's address resolves but nothing answers there (yet): down, not wrong.
    let io = std::error::Error::source(e).and_then(|s| s.downcast_ref::<std::io::Error>());
    match io.map(std::io::Error::kind) {
        Some(std::io::ErrorKind::ConnectionRefused | std::io::ErrorKind::TimedOut) => Failure::Down(text),
        _ if text.contains("timed out") => Failure::Down(text),
        _ => Failure::Refused(text),
    }
}

/// The server's message where it sent one, else the client's.
fn describe(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => db.message().to_string(),
        None => match std::error::Error::source(e) {
            Some(s) => format!("{e}: {s}"),
            None => e.to_string(),
        },
    }
}

fn check_schema(client: &mut postgres::Client) -> std::result::Result<(), Failure> {
    let refused = |e: postgres::Error| Failure::Refused(describe(&e));
    let has_vector = client
        .query_opt("SELECT extversion FROM pg_extension WHERE extname = 'vector'", &[])
        .map_err(refused)?
        .is_some();
    if !has_vector {
        return Err(Failure::Refused(
            "the server has no pgvector (CREATE EXTENSION vector, as its owner)".into(),
        ));
    }
    let schema = |client: &mut postgres::Client| -> std::result::Result<Option<String>, Failure> {
        let exists: bool =
            client.query_one("SELECT to_regclass('coret_meta') IS NOT NULL", &[]).map_err(refused)?.get(0);
        if !exists {
            return Ok(None);
        }
        let row =
            client.query_opt("SELECT value FROM coret_meta WHERE key = 'schema'", &[]).map_err(refused)?;
        Ok(Some(row.map_or_else(|| "missing".to_string(), |r| r.get(0))))
    };
    let another = |found: &str| {
        Failure::Refused(format!(
            "its tables were made by another version (coret_meta schema {found}, this build reads {SCHEMA})"
        ))
    };
    // Another version's tables are refused before anything is created beside them.
    if let Some(found) = schema(client)?.filter(|v| v != SCHEMA) {
        return Err(another(&found));
    }
    let vectors: bool =
        client.query_one("SELECT to_regclass('coret_vectors') IS NOT NULL", &[]).map_err(refused)?.get(0);
    if !vectors || schema(client)?.is_none() {
        client.batch_execute(CREATE).map_err(|e| {
            Failure::Refused(format!("no coret tables, and this role cannot create them ({})", describe(&e)))
        })?;
    }
    match schema(client)? {
        Some(v) if v == SCHEMA => Ok(()),
        other => Err(another(other.as_deref().unwrap_or("missing"))),
    }
}

fn insert(
    client: &mut postgres::Client,
    rows: &[(String, VectorKey, Vec<f32>)],
) -> std::result::Result<(), postgres::Error> {
    use postgres::types::ToSql;
    let mut sql = String::from("INSERT INTO coret_vectors (tower, key, dim, v) VALUES ");
    let keys: Vec<&[u8]> = rows.iter().map(|(_, k, _)| k.as_slice()).collect();
    let dims: Vec<i32> = rows.iter().map(|(_, _, v)| v.len() as i32).collect();
    let vectors: Vec<pgvector::Vector> =
        rows.iter().map(|(_, _, v)| pgvector::Vector::from(v.clone())).collect();
    let mut params: Vec<&(dyn ToSql + Sync)> = Vec::with_capacity(rows.len() * 4);
    for (i, (tower, _, _)) in rows.iter().enumerate() {
        if i > 0 {
            sql.push(',');
        }
        let b = i * 4;
        sql.push_str(&format!("(${}, ${}, ${}, ${})", b + 1, b + 2, b + 3, b + 4));
        params.extend([tower as &(dyn ToSql + Sync), &keys[i], &dims[i], &vectors[i]]);
    }
    sql.push_str(" ON CONFLICT (tower, key) DO NOTHING");
    let mut tx = client.transaction()?;
    tx.execute(sql.as_str(), &params)?;
    tx.commit()
}

/// The HNSW index of one tower and width: its name is a hash of both (a tower's name may hold
/// any character).
/// The server's HNSW index over `tower`'s vectors that [`SharedVectors::nearest`] searches: a
/// partial index per tower on the vectors cast to half precision (half the memory of f32; the
/// exact f32 vectors rescore its candidates). Returns the index's name and the statement that
/// creates it if missing (the table's owner runs it; `--bench store-scale` does).
pub fn search_index_sql(tower: &str, dim: usize, p: HnswParams) -> (String, String) {
    let h = blake3::hash(format!("{tower}\0{dim}").as_bytes());
    let name = format!("coret_hnsw_{}", &h.to_hex()[..16]);
    let sql = format!(
        "CREATE INDEX IF NOT EXISTS {name} ON coret_vectors USING hnsw ({}) \
         WITH (m = {}, ef_construction = {}) WHERE tower = {} AND dim = {dim}",
        p.quant.indexed(dim),
        p.m,
        p.ef_construction,
        literal(tower)
    );
    (name, sql)
}

/// What the HNSW graph holds of each vector: half precision (cosine), or one bit a dimension
/// (`binary_quantize`, Hamming distance; 1/16 of the memory, a coarser first pass that the
/// exact rescoring then orders).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Quant {
    #[default]
    Half,
    Bit,
}

impl Quant {
    /// The indexed expression and its operator class.
    fn indexed(self, dim: usize) -> String {
        match self {
            Quant::Half => format!("(v::halfvec({dim})) halfvec_cosine_ops"),
            Quant::Bit => format!("(binary_quantize(v)::bit({dim})) bit_hamming_ops"),
        }
    }

    /// The candidates' order, which the index serves (`$1` is the query).
    fn order_by(self, dim: usize) -> String {
        match self {
            Quant::Half => format!("v::halfvec({dim}) <=> ($1::vector)::halfvec({dim})"),
            Quant::Bit => format!("binary_quantize(v)::bit({dim}) <~> binary_quantize($1::vector)"),
        }
    }
}

/// The HNSW graph's shape: `m` links a node, `ef_construction` candidates while building.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HnswParams {
    pub m: u32,
    pub ef_construction: u32,
    pub quant: Quant,
}

impl Default for HnswParams {
    /// pgvector's defaults.
    fn default() -> Self {
        HnswParams { m: 16, ef_construction: 64, quant: Quant::Half }
    }
}

impl std::str::FromStr for HnswParams {
    type Err = String;

    /// `m=16,ef_construction=64,quant=half` (any may be left out; `quant=bit` for one bit a
    /// dimension).
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let mut p = HnswParams::default();
        for part in s.split(',').map(str::trim).filter(|x| !x.is_empty()) {
            let (k, v) = part.split_once('=').ok_or_else(|| format!("`{part}`: expected NAME=VALUE"))?;
            let number = || v.trim().parse::<u32>().map_err(|_| format!("`{part}`: not a number"));
            match k.trim() {
                "m" => p.m = number()?,
                "ef_construction" => p.ef_construction = number()?,
                "quant" => {
                    p.quant = match v.trim() {
                        "half" => Quant::Half,
                        "bit" => Quant::Bit,
                        other => return Err(format!("`{other}`: quant is half or bit")),
                    }
                }
                other => return Err(format!("`{other}`: expected m, ef_construction or quant")),
            }
        }
        Ok(p)
    }
}

/// `s` as an SQL string literal.
fn literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// `url` without its password.
fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_string() };
    match rest.split_once('@') {
        Some((user, host)) => match user.split_once(':') {
            Some((name, _)) => format!("{scheme}://{name}:***@{host}"),
            None => url.to_string(),
        },
        None => url.to_string(),
    }
}

/// A store as part of [`crate::rank::dense_retriever::DenseOptions`]: the same store is the same
/// option (pointer equality), shown by its URL.
#[derive(Clone)]
pub struct SharedHandle(pub Arc<SharedVectors>);

impl PartialEq for SharedHandle {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl std::fmt::Debug for SharedHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SharedHandle({})", self.0.shown)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_never_show_the_password() {
        assert_eq!(
            redact("postgres://w:secret@127.0.0.1:5432/coret"),
            "postgres://w:***@127.0.0.1:5432/coret"
        );
        assert_eq!(redact("postgres://127.0.0.1/coret"), "postgres://127.0.0.1/coret");
        let err = SharedVectors::connect("postgres://w:secret@127.0.0.1:notaport/coret", None).err().unwrap();
        let text = err.to_string();
        assert!(text.contains("malformed URL") && !text.contains("secret"), "{text}");
    }

    #[test]
    fn a_server_that_is_down_is_no_error_and_the_status_says_why() {
        // A port nothing listens on (bound, then closed): connection refused at once.
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let store = SharedVectors::connect(&format!("postgres://w:pw@127.0.0.1:{port}/coret"), None).unwrap();
        assert!(store.fetch("t", 4, &[[0u8; 16]]).unwrap().is_empty());
        store.put("t", &[([1u8; 16], vec![0.5; 4])]);
        let stats = store.stats();
        assert_eq!((stats.pulled, stats.pushed, stats.pending), (0, 0, 1), "kept for the next write");
        assert!(stats.trouble.is_some_and(|t| !t.is_empty()));
    }
}
