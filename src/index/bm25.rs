//! BM25 over chunks with tantivy and the code-aware tokenizer; path, name and text fields.
//!
//! Documents are keyed by (path, ordinal within the file), not by global chunk id, so that an
//! on-disk index survives edits elsewhere in the repository: updating a file deletes its
//! documents by path and adds the new ones.

use super::code_tokens::CodeTokenizer;
use super::query_terms::query_terms;
use crate::chunk::Chunk;
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::path::Path;
use tantivy::collector::TopDocs;
use tantivy::indexer::NoMergePolicy;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, Value, FAST, INDEXED, STORED, STRING,
};
use tantivy::{doc, Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

const TOKENIZER: &str = "code";

const WRITER_MEMORY: usize = 128 * 1024 * 1024;
/// Extra hits fetched beyond `k` so that ties at the cut are broken by path, not by segment.
const TIE_SLACK: usize = 32;

/// Per-field weights of a query term. The chunk text already holds the path and the name;
/// the extra fields let a term that names the file or the symbol count more.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FieldBoosts {
    pub text: f32,
    pub name: f32,
    pub path: f32,
}

impl Default for FieldBoosts {
    fn default() -> Self {
        FieldBoosts { text: 1.0, name: 0.5, path: 0.5 }
    }
}

#[derive(Clone, Copy)]
struct Fields {
    path_key: Field,
    ord: Field,
    path: Field,
    name: Field,
    text: Field,
}

pub struct Bm25Index {
    index: Index,
    reader: IndexReader,
    fields: Fields,
    /// Exact token totals of the text, name and path fields, where the caller keeps them.
    totals: Option<[u64; 3]>,
    /// Count the document count and document frequencies over the alive documents only: a
    /// [`Bm25Snapshots`] view, whose deleted documents still sit in their segments (tantivy
    /// counts them in every statistic until a merge drops them).
    alive_only: bool,
}

/// BM25's statistics from the searcher, but the fields' token totals exact. tantivy estimates a
/// merged segment's totals from the lossy one-byte field norms when the merge drops deleted
/// documents, so after an edit the average lengths (and every score) drifted from a clean
/// build's by up to ~2%; with the totals counted by us the two score alike. With `alive_only`,
/// the document count and document frequencies leave out the deleted documents too.
struct ExactTotals<'a> {
    searcher: &'a tantivy::Searcher,
    fields: Fields,
    totals: [u64; 3],
    alive_only: bool,
}

impl tantivy::query::Bm25StatisticsProvider for ExactTotals<'_> {
    fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
        let f = self.fields;
        match [f.text, f.name, f.path].iter().position(|&x| x == field) {
            Some(i) => Ok(self.totals[i]),
            None => self.searcher.total_num_tokens(field),
        }
    }
    fn total_num_docs(&self) -> tantivy::Result<u64> {
        if self.alive_only {
            Ok(self.searcher.num_docs())
        } else {
            self.searcher.total_num_docs()
        }
    }
    /// With `alive_only`, the term's alive documents counted through its postings: no more work
    /// than the search itself does, and right whatever the segments went through (tantivy
    /// drops a segment whose documents are all deleted, and merges).
    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        if !self.alive_only {
            return self.searcher.doc_freq(term);
        }
        let mut n = 0u64;
        for segment in self.searcher.segment_readers() {
            let inverted = segment.inverted_index(term.field())?;
            n += match segment.alive_bitset() {
                None => u64::from(inverted.doc_freq(term)?),
                Some(alive) => inverted
                    .read_postings(term, IndexRecordOption::Basic)?
                    .map_or(0, |mut p| u64::from(tantivy::DocSet::count(&mut p, alive))),
            };
        }
        Ok(n)
    }
}

/// The tokens `chunks` put into the text, name and path fields (as the index counts them).
pub fn token_counts<'a>(chunks: impl IntoIterator<Item = &'a Chunk>) -> [u64; 3] {
    use tantivy::tokenizer::{TokenStream, Tokenizer};
    let count = |text: &str| {
        let mut tokenizer = CodeTokenizer;
        let mut stream = tokenizer.token_stream(text);
        let mut n = 0u64;
        while stream.advance() {
            n += 1;
        }
        n
    };
    let mut totals = [0u64; 3];
    for c in chunks {
        totals[0] += count(&c.text);
        totals[1] += count(&c.name);
        totals[2] += count(&c.path);
    }
    totals
}

/// A BM25 hit before it is mapped to a global chunk id.
#[derive(Clone, Debug, PartialEq)]
pub struct Bm25Hit {
    pub path: String,
    pub ord: usize,
    pub score: f32,
}

fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let text_opts = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default().set_tokenizer(TOKENIZER).set_index_option(IndexRecordOption::WithFreqs),
    );
    let fields = Fields {
        path_key: b.add_text_field("path_key", STRING | STORED),
        ord: b.add_u64_field("ord", INDEXED | STORED | FAST),
        path: b.add_text_field("path", text_opts.clone()),
        name: b.add_text_field("name", text_opts.clone()),
        text: b.add_text_field("text", text_opts),
    };
    (b.build(), fields)
}

fn tantivy_err(context: &str, e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Error {
    Error::context(format!("bm25 index: {context}"), e)
}

impl Bm25Index {
    /// An index held in memory (eval snapshots, tests).
    pub fn in_memory() -> Result<Self> {
        let (schema, fields) = schema();
        Self::wrap(Index::create_in_ram(schema), fields)
    }

    /// Opens the index in `dir`, or creates an empty one. Fails on a corrupt or foreign index;
    /// the caller then deletes the directory and rebuilds.
    pub fn open_or_create(dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let (schema, fields) = schema();
        let mmap = tantivy::directory::MmapDirectory::open(dir).map_err(|e| tantivy_err("open", e))?;
        let index = Index::open_or_create(mmap, schema).map_err(|e| tantivy_err("open", e))?;
        Self::wrap(index, fields)
    }

    fn wrap(index: Index, fields: Fields) -> Result<Self> {
        index.tokenizers().register(TOKENIZER, CodeTokenizer);
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(|e| tantivy_err("reader", e))?;
        Ok(Bm25Index { index, reader, fields, totals: None, alive_only: false })
    }

    /// Scores with these token totals of the text, name and path fields (see [`token_counts`])
    /// instead of tantivy's, which are estimates after deletions.
    pub fn set_token_totals(&mut self, totals: [u64; 3]) {
        self.totals = Some(totals);
    }

    /// The opaque tag stored with the last commit (the cache stores the manifest id here, to
    /// detect an index that does not belong to the manifest beside it).
    pub fn commit_tag(&self) -> Option<String> {
        self.index.load_metas().ok().and_then(|m| m.payload)
    }

    pub fn num_docs(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    /// The index's writer. The directory's lock file is released when the previous writer is
    /// dropped, but a child process forked at that moment (git, from another thread) holds
    /// the lock's open file until it execs: a busy lock is retried for up to two seconds.
    fn writer(&self, threads: usize) -> Result<IndexWriter> {
        let mut tries = 0;
        loop {
            match self.index.writer_with_num_threads(threads, WRITER_MEMORY) {
                Ok(writer) => return Ok(writer),
                Err(tantivy::TantivyError::LockFailure(
                    tantivy::directory::error::LockError::LockBusy,
                    _,
                )) if tries < 200 => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                Err(e) => return Err(tantivy_err("writer", e)),
            }
        }
    }

    /// Replaces the documents of `remove_paths` and adds `add` (chunks with their ordinal
    /// within their file), then commits with `tag`. One commit, so a crash leaves either the
    /// old or the new index, never a mix.
    pub fn update<'a>(
        &mut self,
        remove_paths: impl IntoIterator<Item = &'a str>,
        add: impl IntoIterator<Item = (usize, &'a Chunk)>,
        tag: &str,
    ) -> Result<()> {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(4);
        let mut writer: IndexWriter = self.writer(threads)?;
        let mut deleted = false;
        for path in remove_paths {
            writer.delete_term(Term::from_field_text(self.fields.path_key, path));
            deleted = true;
        }
        for (ord, chunk) in add {
            Self::add_chunk(&writer, self.fields, ord, chunk)?;
        }
        let mut prepared = writer.prepare_commit().map_err(|e| tantivy_err("commit", e))?;
        prepared.set_payload(tag);
        prepared.commit().map_err(|e| tantivy_err("commit", e))?;
        if deleted {
            // A deleted document still counts in BM25's statistics (document count, average
            // length, document frequencies) until its segment is merged: merge everything, so
            // an incrementally updated index scores exactly as a clean build does.
            let segments = self.index.searchable_segment_ids().map_err(|e| tantivy_err("merge", e))?;
            if !segments.is_empty() {
                writer.merge(&segments).wait().map_err(|e| tantivy_err("merge", e))?;
            }
        }
        writer.wait_merging_threads().map_err(|e| tantivy_err("merge", e))?;
        self.reader.reload().map_err(|e| tantivy_err("reload", e))?;
        Ok(())
    }

    /// Top `k` chunks for a free-text query (an issue, a symbol, a sentence).
    pub fn search(&self, query: &str, k: usize, boosts: FieldBoosts) -> Result<Vec<Bm25Hit>> {
        let Some(q) = self.build_query(query, boosts) else {
            return Ok(Vec::new());
        };
        let searcher = self.reader.searcher();
        // Equal scores would otherwise come in document order, which depends on segment
        // layout (writer threads, merges): rank a little deeper and break ties by path and ordinal.
        let limit = k.max(1) + TIE_SLACK;
        let collector = TopDocs::with_limit(limit);
        let top = match self.totals {
            Some(totals) => {
                let stats = ExactTotals {
                    searcher: &searcher,
                    fields: self.fields,
                    totals,
                    alive_only: self.alive_only,
                };
                searcher.search_with_statistics_provider(&q, &collector, &stats)
            }
            None => searcher.search(&q, &collector),
        }
        .map_err(|e| tantivy_err("search", e))?;
        let mut hits = Vec::with_capacity(top.len());
        for (score, addr) in top {
            let doc: TantivyDocument = searcher.doc(addr).map_err(|e| tantivy_err("read", e))?;
            let path = doc.get_first(self.fields.path_key).and_then(|v| v.as_str().map(str::to_string));
            let ord = doc.get_first(self.fields.ord).and_then(|v| v.as_u64());
            let (Some(path), Some(ord)) = (path, ord) else { continue };
            let ord = ord as usize;
            hits.push(Bm25Hit { path, ord, score });
        }
        settle_ties(&mut hits);
        hits.truncate(k.max(1));
        Ok(hits)
    }

    fn add_chunk(writer: &IndexWriter, f: Fields, ord: usize, chunk: &Chunk) -> Result<()> {
        writer
            .add_document(doc!(
                f.path_key => chunk.path.as_str(),
                f.ord => ord as u64,
                f.path => chunk.path.as_str(),
                f.name => chunk.name.as_str(),
                f.text => chunk.text.as_str(),
            ))
            .map_err(|e| tantivy_err("add", e))?;
        Ok(())
    }

    fn build_query(&self, query: &str, boosts: FieldBoosts) -> Option<BooleanQuery> {
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        let fields = [
            (self.fields.text, boosts.text),
            (self.fields.name, boosts.name),
            (self.fields.path, boosts.path),
        ];
        for (token, count) in query_terms(query) {
            for (field, boost) in fields {
                // Okapi's query-term frequency: a token the issue repeats counts each time.
                let boost = boost * count as f32;
                if boost <= 0.0 {
                    continue;
                }
                let tq = TermQuery::new(Term::from_field_text(field, &token), IndexRecordOption::WithFreqs);
                clauses.push((Occur::Should, Box::new(BoostQuery::new(Box::new(tq), boost))));
            }
        }
        (!clauses.is_empty()).then(|| BooleanQuery::new(clauses))
    }
}

/// One in-memory index kept in step with a sequence of snapshots of a repository (eval's and
/// training's base commits): each snapshot replaces the files that changed since the last one
/// instead of indexing every chunk again, which was most of a commit's cost on a large
/// repository (0.7 s of 1.2 s per sqlalchemy commit). Deleted documents stay in their segments
/// until segments pile up and are merged; until then a view scores with the alive documents'
/// exact statistics, so it scores as a clean build of the same chunks does (to the order in
/// which a document's term scores add up: a float's last bit).
pub struct Bm25Snapshots {
    index: Index,
    fields: Fields,
    writer: IndexWriter,
    /// The alive documents' tokens in the text, name and path fields.
    totals: [u64; 3],
}

/// One writer thread: the lanes that prepare training data run a process per core.
const SNAPSHOT_WRITER_MEMORY: usize = 64 * 1024 * 1024;
/// Segments (one per snapshot with a change) beyond which they are merged into one.
const SNAPSHOT_MAX_SEGMENTS: usize = 8;

impl Bm25Snapshots {
    pub fn new() -> Result<Self> {
        let (schema, fields) = schema();
        let index = Index::create_in_ram(schema);
        index.tokenizers().register(TOKENIZER, CodeTokenizer);
        let writer: IndexWriter =
            index.writer_with_num_threads(1, SNAPSHOT_WRITER_MEMORY).map_err(|e| tantivy_err("writer", e))?;
        // Merges only when asked: a merge drops deleted documents, which the statistics track.
        writer.set_merge_policy(Box::new(NoMergePolicy));
        Ok(Bm25Snapshots { index, fields, writer, totals: [0; 3] })
    }

    /// Removes the files `removed` (each given by its chunks as they were added) and adds the
    /// files `added` (each by its chunks; a chunk's ordinal is its place in the slice).
    pub fn replace<'a>(
        &mut self,
        removed: impl IntoIterator<Item = &'a [Chunk]>,
        added: impl IntoIterator<Item = &'a [Chunk]>,
    ) -> Result<()> {
        let f = self.fields;
        for chunks in removed {
            let Some(first) = chunks.first() else { continue };
            self.writer.delete_term(Term::from_field_text(f.path_key, &first.path));
            for (total, n) in self.totals.iter_mut().zip(token_counts(chunks)) {
                *total -= n;
            }
        }
        for chunks in added {
            for (ord, c) in chunks.iter().enumerate() {
                Bm25Index::add_chunk(&self.writer, f, ord, c)?;
            }
            for (total, n) in self.totals.iter_mut().zip(token_counts(chunks)) {
                *total += n;
            }
        }
        self.writer.commit().map_err(|e| tantivy_err("commit", e))?;
        let segments = self.index.searchable_segment_ids().map_err(|e| tantivy_err("merge", e))?;
        if segments.len() > SNAPSHOT_MAX_SEGMENTS {
            self.writer.merge(&segments).wait().map_err(|e| tantivy_err("merge", e))?;
        }
        Ok(())
    }

    /// The index as it stands, for searching: it keeps this state while later snapshots
    /// replace files.
    pub fn view(&self) -> Result<Bm25Index> {
        let reader = self
            .index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(|e| tantivy_err("reader", e))?;
        Ok(Bm25Index {
            index: self.index.clone(),
            reader,
            fields: self.fields,
            totals: Some(self.totals),
            alive_only: true,
        })
    }
}

/// Scores this close, relative to the higher, are one tie. tantivy adds a document's term
/// scores up in an order that depends on the segment layout (writer threads, commits, merges),
/// so one document can score a float's last bit apart in another build of the same chunks: on
/// a machine with more cores, two tied methods ranked the other way round.
const TIE_TOLERANCE: f32 = 1e-5;

/// Orders `hits` best first. A run of scores, each within [`TIE_TOLERANCE`] of the one before,
/// is one tie: ordered by path and ordinal and given the run's first score, rounded to 16
/// significant bits (the score fusion reads the scores too), so every layout ranks alike.
fn settle_ties(hits: &mut [Bm25Hit]) {
    hits.sort_by(|a, b| b.score.total_cmp(&a.score));
    let mut start = 0;
    for end in 1..=hits.len() {
        let tied = end < hits.len()
            && hits[end - 1].score - hits[end].score <= TIE_TOLERANCE * hits[end - 1].score.abs();
        if tied {
            continue;
        }
        let run = &mut hits[start..end];
        // Round to nearest, dropping the 7 lowest of the mantissa's 23 bits (BM25 scores are ≥ 0).
        let score = f32::from_bits((run[0].score.to_bits() + 0x40) & !0x7F);
        run.sort_by(|a, b| (&a.path, a.ord).cmp(&(&b.path, b.ord)));
        run.iter_mut().for_each(|h| h.score = score);
        start = end;
    }
}

/// Maps BM25 hits to global chunk ids through `(path, ord) → id`; hits for documents the map
/// does not know (a stale index) are dropped.
pub fn to_global(hits: Vec<Bm25Hit>, ids: &HashMap<(String, usize), u32>) -> Vec<crate::index::Hit> {
    hits.into_iter()
        .filter_map(|h| ids.get(&(h.path, h.ord)).map(|&chunk| crate::index::Hit { chunk, score: h.score }))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::ChunkKind;

    fn chunk(path: &str, name: &str, text: &str) -> Chunk {
        Chunk {
            path: path.into(),
            kind: ChunkKind::Function,
            name: name.into(),
            start_byte: 0,
            end_byte: text.len(),
            start_line: 1,
            end_line: 1,
            text: format!("{path}\n{text}"),
            test: false,
            form: Default::default(),
        }
    }

    #[test]
    fn prefers_the_chunk_whose_identifiers_the_query_names() {
        let chunks = [
            chunk("pkg/net.py", "send_request", "def send_request(url):\n    return fetch(url)"),
            chunk("pkg/net.py", "parse_headers", "def parse_headers(raw):\n    return dict(raw)"),
            chunk("pkg/util.py", "merge_settings", "def merge_settings(a, b):\n    return a | b"),
        ];
        let mut idx = Bm25Index::in_memory().unwrap();
        idx.update([], chunks.iter().enumerate(), "t").unwrap();
        let hits = idx.search("parseHeaders crashes on empty input", 3, FieldBoosts::default()).unwrap();
        assert_eq!(hits[0].path, "pkg/net.py");
        assert_eq!(hits[0].ord, 1);
        let hits = idx.search("merge settings", 3, FieldBoosts::default()).unwrap();
        assert_eq!((hits[0].path.as_str(), hits[0].ord), ("pkg/util.py", 2));
    }

    #[test]
    fn update_replaces_a_files_documents_and_keeps_the_tag() {
        let dir = tempfile::tempdir().unwrap();
        let a = chunk("a.py", "alpha", "def alpha(): pass");
        let b = chunk("b.py", "beta", "def beta(): pass");
        {
            let mut idx = Bm25Index::open_or_create(dir.path()).unwrap();
            idx.update([], [(0, &a), (0, &b)], "gen1").unwrap();
            assert_eq!(idx.num_docs(), 2);
        }
        let mut idx = Bm25Index::open_or_create(dir.path()).unwrap();
        assert_eq!(idx.commit_tag().as_deref(), Some("gen1"));
        let b2 = chunk("b.py", "gamma", "def gamma(): pass");
        idx.update(["b.py"], [(0, &b2)], "gen2").unwrap();
        assert_eq!(idx.num_docs(), 2);
        assert!(idx.search("beta", 5, FieldBoosts::default()).unwrap().is_empty());
        assert_eq!(idx.search("gamma", 5, FieldBoosts::default()).unwrap()[0].path, "b.py");
        assert_eq!(idx.commit_tag().as_deref(), Some("gen2"));
    }

    /// A snapshot sequence with edits, deletions and new files, through merges: after every
    /// snapshot the kept index ranks and scores as a clean build of the same chunks.
    #[test]
    fn snapshots_rank_and_score_as_a_clean_build() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let words = ["parse", "header", "request", "cache", "path", "save", "load", "token", "merge", "url"];
        let file = |rng: &mut rand::rngs::StdRng, path: &str| -> Vec<Chunk> {
            (0..rng.random_range(1..4))
                .map(|i| {
                    let body: Vec<&str> = (0..rng.random_range(2..12))
                        .map(|_| words[rng.random_range(0..words.len())])
                        .collect();
                    chunk(path, &format!("{}_{i}", words[rng.random_range(0..words.len())]), &body.join(" "))
                })
                .collect()
        };
        let mut files: std::collections::BTreeMap<String, Vec<Chunk>> =
            (0..10).map(|i| format!("m{i}.py")).map(|p| (p.clone(), file(&mut rng, &p))).collect();
        let mut kept = Bm25Snapshots::new().unwrap();
        kept.replace([], files.values().map(Vec::as_slice)).unwrap();
        let (mut saw_deleted, mut saw_merge, mut segments) = (false, false, 1);
        for step in 0..40 {
            let path = format!("m{}.py", rng.random_range(0..14));
            let old = files.remove(&path);
            let new = (step % 5 != 4).then(|| file(&mut rng, &path));
            kept.replace(old.as_deref(), new.as_deref()).unwrap();
            files.extend(new.map(|n| (path, n)));
            let now = kept.index.searchable_segment_ids().unwrap().len();
            assert!(now <= SNAPSHOT_MAX_SEGMENTS);
            saw_merge |= now < segments && now == 1;
            segments = now;

            let view = kept.view().unwrap();
            let searcher = view.reader.searcher();
            saw_deleted |= searcher.num_docs()
                < tantivy::query::Bm25StatisticsProvider::total_num_docs(&searcher).unwrap();
            let mut clean = Bm25Index::in_memory().unwrap();
            clean.update([], files.values().flat_map(|c| c.iter().enumerate()), "clean").unwrap();
            // Scores agree to float summation order (segments hold different term sets, so a
            // document's term scores may add up in another order): compare them rounded.
            let ranked = |idx: &Bm25Index, q: &str| {
                let mut hits: Vec<(i64, String, usize)> = idx
                    .search(q, 100, FieldBoosts::default())
                    .unwrap()
                    .into_iter()
                    .map(|h| (-(h.score * 1e4).round() as i64, h.path, h.ord))
                    .collect();
                hits.sort();
                hits
            };
            for q in ["parse the header", "save cache path path", "url token merge load", "m3 request"] {
                assert_eq!(ranked(&view, q), ranked(&clean, q), "step {step}: {q}");
            }
        }
        assert!(saw_deleted && saw_merge, "deleted documents scored around, then merged away");
    }

    /// The same chunks written in one segment or in one per chunk (as more writer threads, or
    /// a later commit, lay them out) rank and score alike: a tie in one layout is a tie in the
    /// other, broken by path and ordinal, although tantivy adds a document's term scores up in
    /// a layout's own order (the TUI's snapshots ranked two tied methods the other way round on
    /// a machine with more cores).
    #[test]
    fn the_segment_layout_changes_no_score_and_no_order() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        let words = ["cart", "total", "coupon", "price", "tax", "order", "sku", "stock", "self", "amount"];
        let files: Vec<Vec<Chunk>> = (0..12)
            .map(|f| {
                // Words in the path, the name and the text: a document's score adds up a term
                // in each field, and three or more floats add up differently in another order.
                let path = format!("shop/{}{f}.py", words[f % words.len()]);
                (0..rng.random_range(2..6))
                    .map(|i| {
                        let len = rng.random_range(3..20);
                        let mut pick = || words[rng.random_range(0..words.len())];
                        let name = format!("{}.{}_{i}", pick(), pick());
                        let body: Vec<&str> = (0..len).map(|_| pick()).collect();
                        chunk(&path, &name, &body.join(" "))
                    })
                    .collect()
            })
            .collect();
        let chunks: Vec<(usize, &Chunk)> = files.iter().flat_map(|f| f.iter().enumerate()).collect();
        // One writer thread, no merges: the layout is the test's. `per_commit` chunks a segment.
        let built = |chunks: &[(usize, &Chunk)], per_commit: usize| {
            let idx = Bm25Index::in_memory().unwrap();
            let mut writer = idx.writer(1).unwrap();
            writer.set_merge_policy(Box::new(NoMergePolicy));
            for part in chunks.chunks(per_commit) {
                for &(ord, c) in part {
                    Bm25Index::add_chunk(&writer, idx.fields, ord, c).unwrap();
                }
                writer.commit().unwrap();
            }
            idx.reader.reload().unwrap();
            idx
        };
        let one = built(&chunks, chunks.len());
        // Each chunk in a segment of its own, the last first.
        let reversed: Vec<_> = chunks.iter().rev().copied().collect();
        let per_chunk = built(&reversed, 1);
        let hits = |idx: &Bm25Index, q: &str| -> Vec<(u32, String, usize)> {
            let hits = idx.search(q, 100, FieldBoosts::default()).unwrap();
            hits.into_iter().map(|h| (h.score.to_bits(), h.path, h.ord)).collect()
        };
        for q in ["coupon makes the cart total negative", "tax on the order amount", "sku stock price self"] {
            assert_eq!(hits(&one, q), hits(&per_chunk, q), "{q}");
        }
    }

    #[test]
    fn empty_or_symbol_only_query_gives_no_hits() {
        let mut idx = Bm25Index::in_memory().unwrap();
        idx.update([], [(0, &chunk("a.py", "f", "def f(): pass"))], "t").unwrap();
        assert!(idx.search("", 5, FieldBoosts::default()).unwrap().is_empty());
        assert!(idx.search("!!! ???", 5, FieldBoosts::default()).unwrap().is_empty());
    }
}
