//! The dense CoRet retriever over a repository: builds encoder inputs from chunks and their
//! downstream call-graph neighbours, embeds what the vector store lacks, and searches.

use crate::callgraph::CallGraph;
use crate::chunk::Chunk;
use crate::error::Result;
use crate::index::dense::{vector_key, DenseIndex, VectorKey, VectorStore};
use crate::model::{Encoder, EncoderInput};
use crate::progress::{Phase, Progress};
use crate::search::Hit;
use std::collections::HashSet;
use std::sync::Arc;

/// Choices that change what the encoder sees (and so the cache keys).
#[derive(Clone, Debug, PartialEq)]
pub struct DenseOptions {
    /// Give each chunk its downstream neighbours (`--no-callgraph` turns this off).
    pub use_callgraph: bool,
    /// At most this many callees, in first-call order.
    pub max_neighbours: usize,
    /// Keep the file-path line at the top of each chunk (`--no-path` drops it).
    pub use_path: bool,
    /// Token budget of a query (issues are long; the default model has 512 positions).
    pub query_max_len: usize,
}

impl Default for DenseOptions {
    fn default() -> Self {
        DenseOptions { use_callgraph: true, max_neighbours: 8, use_path: true, query_max_len: 512 }
    }
}

impl DenseOptions {
    /// A tag for cache keys: everything here that changes an embedding.
    pub fn tag(&self) -> String {
        format!("cg{}n{}p{}", u8::from(self.use_callgraph), self.max_neighbours, u8::from(self.use_path))
    }
}

/// Drops the first line (the file path) of a chunk text.
pub fn without_path(text: &str) -> &str {
    text.split_once('\n').map_or("", |(_, rest)| rest)
}

/// The encoder input of every chunk, in chunk order.
pub fn encoder_inputs(chunks: &[Chunk], graph: &CallGraph, opts: &DenseOptions) -> Vec<EncoderInput> {
    (0..chunks.len()).map(|i| encoder_input(chunks, graph, opts, i)).collect()
}

/// The encoder input of chunk `i`: its text and its first downstream neighbours' texts.
pub fn encoder_input(chunks: &[Chunk], graph: &CallGraph, opts: &DenseOptions, i: usize) -> EncoderInput {
    let text = |c: &Chunk| if opts.use_path { c.text.clone() } else { without_path(&c.text).to_string() };
    let neighbours = if opts.use_callgraph {
        graph.callees[i].iter().take(opts.max_neighbours).map(|&n| text(&chunks[n as usize])).collect()
    } else {
        Vec::new()
    };
    EncoderInput { chunk: text(&chunks[i]), neighbours }
}

/// How many inputs are embedded between two appends to the vector log: the work an
/// interruption can lose.
const SLICE: usize = 512;

/// A dense index over one repository, with the encoder that made it.
pub struct DenseSearcher {
    encoder: Arc<Encoder>,
    index: DenseIndex,
    opts: DenseOptions,
}

impl DenseSearcher {
    /// Embeds the chunks missing from `store` (appending them as it goes, so an interrupted
    /// run resumes) and builds the index.
    pub fn build(
        encoder: Arc<Encoder>,
        chunks: &[Chunk],
        graph: &CallGraph,
        opts: DenseOptions,
        store: &mut VectorStore,
        progress: &dyn Progress,
    ) -> Result<Self> {
        let inputs = encoder_inputs(chunks, graph, &opts);
        let tag = format!("{}|{}", encoder.fingerprint(), opts.tag());
        let keys: Vec<VectorKey> = inputs.iter().map(|i| vector_key(&tag, &i.chunk, &i.neighbours)).collect();
        let mut seen = HashSet::new();
        let missing: Vec<usize> =
            (0..inputs.len()).filter(|&i| !store.contains(&keys[i]) && seen.insert(keys[i])).collect();
        let total = missing.len();
        progress.report(Phase::Embed, 0, total);
        for (s, slice) in missing.chunks(SLICE).enumerate() {
            let batch: Vec<EncoderInput> = slice.iter().map(|&i| inputs[i].clone()).collect();
            let offset = OffsetProgress { inner: progress, offset: s * SLICE, total };
            let vectors = encoder.embed_inputs(&batch, &offset)?;
            let batch_keys: Vec<VectorKey> = slice.iter().map(|&i| keys[i]).collect();
            store.add_batch(&batch_keys, &vectors)?;
        }
        progress.report(Phase::Embed, total, total);
        let index = DenseIndex::from_store(store, &keys)?;
        Ok(DenseSearcher { encoder, index, opts })
    }

    pub fn encoder(&self) -> &Encoder {
        &self.encoder
    }

    /// Embeds `query` (up to `query_max_len` tokens) and returns the `k` nearest chunks.
    pub fn search(&self, query: &str, k: usize) -> Result<Vec<Hit>> {
        let v = self.embed_query(query)?;
        Ok(self.index.search(&v, k))
    }

    pub fn embed_query(&self, query: &str) -> Result<Vec<f32>> {
        let tokenized = self.encoder.input_tokenizer().query(query, self.opts.query_max_len)?;
        let mut rows = self.encoder.embed_tokenized(&[tokenized], &mut |_| Ok(()))?;
        Ok(rows.pop().unwrap_or_default())
    }
}

/// Reports a slice's progress as progress through the whole run.
struct OffsetProgress<'a> {
    inner: &'a dyn Progress,
    offset: usize,
    total: usize,
}

impl Progress for OffsetProgress<'_> {
    fn report(&self, phase: Phase, done: usize, _total: usize) {
        self.inner.report(phase, self.offset + done, self.total);
    }
    fn cancelled(&self) -> bool {
        self.inner.cancelled()
    }
}
