//! Command-line arguments.

use clap::Parser;
use coret::index::Retriever;
use std::path::PathBuf;

#[derive(Parser, Debug, Clone)]
#[command(
    name = "coret-tui",
    version,
    about = about(),
    after_help = "Without --query or --mcp, opens the interactive TUI on PATH.",
    // `--top -1` is a bad value of --top (named in the error), not an unknown flag `-1`.
    allow_negative_numbers = true
)]
pub struct Args {
    /// Repository to index (a directory with sources in any supported language).
    #[arg(default_value = ".")]
    pub path: PathBuf,

    /// Several checkouts: `union` fuses their lists once, `each` merges each one's own hybrid (an experiment; docs/RESULTS.md "Several checkouts as one").
    #[arg(long, hide = true, value_name = "HOW", default_value = "union", value_parser = many_fusion)]
    pub many_fusion: coret::rank::many::ManyFusion,

    /// More checkouts, searched with PATH as one (`--query`). A PATH named NAME.workspace lists checkouts, one per line (`#` comments; relative to the file).
    #[arg(value_name = "MORE")]
    pub more: Vec<PathBuf>,

    /// Search headlessly for TEXT and print ranked chunks (`-` reads the query from stdin).
    #[arg(help_heading = "Query", long, value_name = "TEXT", conflicts_with_all = ["eval", "train", "bench"], value_parser = lossy_text())]
    pub query: Option<String>,

    /// Say more on stderr: which towers loaded and on what device (eval and training always say it).
    #[arg(short = 'v', long)]
    pub verbose: bool,

    /// Which ranking(s): bm25, dense, hybrid, history, all, or a comma list [query default: hybrid, or bm25 alone when no model loads; eval default: all].
    #[arg(help_heading = "Query", long, value_name = "NAME")]
    pub retriever: Option<RetrieverArg>,

    /// How many results per ranking.
    #[arg(help_heading = "Query", long, default_value_t = 20, value_parser = count::<1, 100_000>, value_name = "N")]
    pub top: usize,

    /// Print one JSON object on stdout instead of a readable list.
    #[arg(long, help_heading = "Query")]
    pub json: bool,

    /// With --json: add each hit's first N lines of code (`code`, and `code_lines`, the chunk's line count).
    #[arg(help_heading = "Query", long, default_value_t = 0, value_name = "N", requires = "json")]
    pub snippets: usize,

    /// How results are shown: flat (chunk by chunk), grouped (one row per file, its other chunks beneath) or auto (by the query's shape: issues flat, short questions and names grouped). The JSON answer holds both (`results`, `files`) and says which (`order`).
    #[arg(help_heading = "Query", long, default_value = "auto", value_name = "ORDER")]
    pub order: coret::rank::shape::OrderChoice,

    /// Serve PATH to coding agents over the Model Context Protocol on stdin/stdout (tools: locate, neighbours, read); --retriever bm25 leaves the model unloaded.
    #[arg(long, help_heading = "Query", conflicts_with_all = ["query", "eval", "train", "bench", "json"])]
    pub mcp: bool,

    /// Cache directory (default: the platform cache directory).
    #[arg(help_heading = "Index", long, env = "CORET_CACHE_DIR", value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,

    /// Index in memory only; neither read nor write the cache (wins over CORET_CACHE_DIR; with --cache-dir it is an error).
    #[arg(long, help_heading = "Index")]
    pub no_cache: bool,

    /// Worker threads for parsing, embedding and eval snapshots [default: every core].
    #[arg(help_heading = "Index", long, value_name = "N", value_parser = count::<1, 4096>)]
    pub threads: Option<usize>,

    /// Languages to index, a comma list of the table's ids [default: all of them].
    #[arg(help_heading = "Index", long = "lang", value_name = "LANGS", value_parser = parse_langs, help = lang_help())]
    pub langs: Option<coret::lang::LangSet>,

    /// Skip source files larger than this many bytes.
    #[arg(help_heading = "Index", long, default_value_t = coret::repo::source::DEFAULT_MAX_FILE_SIZE, value_name = "BYTES")]
    pub max_file_size: u64,

    /// Index vendored trees (vendor/, third_party/, node_modules/), minified files, committed build output (a source map beside it or a sourceMappingURL) and files marked generated (@generated, DO NOT EDIT); by default they are left out and counted in stats.skipped.
    #[arg(help_heading = "Index", long)]
    pub include_generated: bool,

    /// Model directory (config.json, tokenizer.json, model.safetensors) [default: all-MiniLM-L6-v2, provisioned on first use].
    #[arg(help_heading = "Model", long, env = "CORET_MODEL", value_name = "DIR")]
    pub model: Option<PathBuf>,

    /// Where the encoder runs: auto, cpu or cuda.
    #[arg(help_heading = "Model", long, default_value = "auto", value_name = "DEVICE")]
    pub device: String,

    /// Token budget of a chunk and its neighbours.
    #[arg(help_heading = "Model", long, default_value_t = coret::model::EncoderOptions::default().max_len, value_parser = count::<2, 100_000>, value_name = "N")]
    pub max_len: usize,

    /// The team's vector store, postgres://USER:PASSWORD@HOST:PORT/DB (PostgreSQL with pgvector; scripts/store/pg.sh starts one): vectors are read from it before anything is embedded and written to it after.
    #[arg(help_heading = "Model", long, env = "CORET_STORE", value_name = "URL")]
    pub store: Option<String>,

    /// With --store: rank the transformer's dense side in the store (its HNSW index, candidates rescored exactly), keeping no vector here that a teammate or CI embedded.
    #[arg(help_heading = "Model", long)]
    pub store_search: bool,

    /// Only the encoder's first N layers (a probe of issue 72's smaller-transformer route).
    #[arg(long, hide = true, value_parser = count::<1, 64>, value_name = "N")]
    pub encoder_layers: Option<usize>,

    /// Encoder weights: trained (the project's CoRet adapters over the default model, where built in), pretrained, or an adapter file written by training.
    #[arg(help_heading = "Model", long, default_value = "trained", value_name = "WEIGHTS")]
    pub weights: coret::model::WeightsChoice,

    /// Retrained top layers laid over --model for both towers (a file the hidden tied training writes); the chunk vectors change with them.
    #[arg(help_heading = "Model", long, hide = true, value_name = "FILE")]
    pub tower_layers: Option<std::path::PathBuf>,

    /// Token budget of a query.
    #[arg(help_heading = "Model", long, default_value_t = coret::rank::dense_retriever::DenseOptions::default().query_max_len, value_parser = count::<2, 100_000>, value_name = "N")]
    pub query_max_len: usize,

    /// Precision of the encoder's linear layers: auto (bf16 on a GPU; on the CPU whichever of f32, bf16 and int8 measured fastest there, once per CPU), bf16 (bf16 inputs, f32 sums; where the CPU has AVX-512 BF16, else f32), int8 (int8 inputs and weights, i32 sums, calibrated the first time a model loads; where the CPU has AVX-512 VNNI, else f32) or f32.
    #[arg(help_heading = "Model", long, default_value_t = coret::model::EncoderOptions::default().precision, value_name = "P")]
    pub precision: coret::model::Precision,

    /// Sequences per encoder forward pass.
    #[arg(help_heading = "Model", long, default_value_t = coret::model::EncoderOptions::default().batch_size, value_parser = count::<1, 4096>, value_name = "N")]
    pub batch_size: usize,

    /// Embed each chunk with its call-graph callees (the paper's input; off by default: the pretrained chunk tower ranks better without them).
    #[arg(long, help_heading = "Model")]
    pub callgraph: bool,

    /// The default (callees off); kept so older command lines still run.
    #[arg(help_heading = "Model", long, hide = true, conflicts_with = "callgraph")]
    pub no_callgraph: bool,

    /// Embed test files too (by default the dense index leaves them to BM25).
    #[arg(long, help_heading = "Model")]
    pub dense_tests: bool,

    /// Query: embed every chunk the cache lacks before answering (by default a query embeds
    /// only the chunks it needs first, and dense ranks over those and what is cached).
    #[arg(long, help_heading = "Query")]
    pub wait_index: bool,

    /// Query-first: how many of BM25's best a query embeds first, with the chunks of the files
    /// and symbols it names and the call-graph neighbours of BM25's top 10 [query default: a tenth
    /// of the repository's chunks, 100 to 500].
    /// Eval: rank dense over exactly those, as a never-indexed repository's first answer does.
    #[arg(long, value_name = "N", value_parser = count::<1, 1_000_000>, conflicts_with = "wait_index")]
    pub query_first: Option<usize>,

    /// Ablation: embed chunks without their file-path line.
    #[arg(long, hide = true, help_heading = "Model")]
    pub no_path: bool,

    /// At most this many downstream neighbours per chunk.
    #[arg(help_heading = "Model", long, default_value_t = coret::rank::dense_retriever::DenseOptions::default().max_neighbours, value_parser = count::<0, 1000>, value_name = "N")]
    pub neighbours: usize,

    /// Evaluate retrieval on SWE-bench-style instances (.jsonl or .jsonl.gz).
    #[arg(help_heading = "Eval", long, value_name = "INSTANCES", requires = "repos")]
    pub eval: Option<PathBuf>,

    /// Directory of git repositories for --eval: DIR/<owner>+<name>/repo, DIR/<owner>+<name> or DIR/<owner>/<name>.
    #[arg(help_heading = "Eval", long, value_name = "DIR")]
    pub repos: Option<PathBuf>,

    /// Cut-offs for the eval metrics.
    #[arg(
        help_heading = "Eval",
        long,
        default_value = "1,5,10,20",
        value_name = "K,K",
        value_delimiter = ',',
        conflicts_with = "query"
    )]
    pub k: Vec<usize>,

    /// Evaluate only the first N instances.
    #[arg(help_heading = "Eval", long, value_name = "N")]
    pub limit: Option<usize>,

    /// Evaluate only these instance ids.
    #[arg(help_heading = "Eval", long, value_name = "ID,ID")]
    pub instances: Option<String>,

    /// Write summary.json and instances.jsonl here.
    #[arg(help_heading = "Eval", long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Eval: keep each ranking's top N hits (path, name, score, gold) in instances.jsonl.
    #[arg(help_heading = "Eval", long, default_value_t = 0, value_name = "N")]
    pub keep_lists: usize,

    /// Eval: append the instance's hints_text to the query.
    #[arg(long, help_heading = "Eval", conflicts_with = "title_only")]
    pub use_hints: bool,

    /// Eval: query with each issue's title alone (the problem statement's first line), as a person types into the TUI.
    #[arg(long, help_heading = "Eval")]
    pub title_only: bool,

    /// Hybrid: a boost for chunks of files the query names: standard deviations (score fusion) or first-place votes (rrf); 0 turns it off.
    #[arg(help_heading = "Fusion", long, default_value_t = coret::rank::fusion::FusionParams::default().path_boost, value_parser = weight, value_name = "B")]
    pub path_boost: f32,

    /// Hybrid: a boost for chunks the query names (`Class.method`, a unique `function_name`), scaled by how uniquely it names them; 0 turns it off.
    #[arg(help_heading = "Fusion", long, default_value_t = coret::rank::fusion::FusionParams::default().symbol_boost, value_parser = weight, value_name = "B")]
    pub symbol_boost: f32,

    /// Hybrid: for a query that is a name (`Router`, `Runtime::spawn`), a boost for the chunks that define it (more where the file is named after it); 0 turns it off.
    #[arg(help_heading = "Fusion", long, default_value_t = coret::rank::fusion::FusionParams::default().name_boost, value_parser = weight, value_name = "B")]
    pub name_boost: f32,

    /// Hybrid: for a short question, a weak boost per word its files' or directories' names match (prefixes of 3+ letters); 0 turns it off.
    #[arg(help_heading = "Fusion", long, default_value_t = coret::rank::fusion::FusionParams::default().path_word_boost, value_parser = weight, value_name = "B")]
    pub path_word_boost: f32,

    /// Ranking layer: the dense side's fusion weight for a short question, times the tier's own (1: as for an issue).
    #[arg(help_heading = "Ranking layer", long, default_value_t = coret::rank::layer::SignalWeights::default().question_dense, value_parser = weight, value_name = "X")]
    pub question_dense: f32,

    /// Ranking layer: the dense side's fusion weight for a name query, times the tier's own.
    #[arg(help_heading = "Ranking layer", long, default_value_t = coret::rank::layer::SignalWeights::default().name_dense, value_parser = weight, value_name = "X")]
    pub name_dense: f32,

    /// Ranking layer: a code name inside a question lifts its definitions by --name-boost times this; 0 turns it off.
    #[arg(help_heading = "Ranking layer", long, default_value_t = coret::rank::layer::SignalWeights::default().inline_name, value_parser = weight, value_name = "X")]
    pub inline_name: f32,

    /// Ranking layer: a file's further strong chunks lift its best chunk by this share of their scores; 0 turns it off.
    #[arg(help_heading = "Ranking layer", long, default_value_t = coret::rank::layer::SignalWeights::default().file_evidence, value_parser = weight, value_name = "X")]
    pub file_evidence: f32,

    /// Ranking layer: in the flat list the n-th further chunk of one file scores times this to the n; 1 turns it off.
    #[arg(help_heading = "Ranking layer", long, default_value_t = coret::rank::layer::SignalWeights::default().file_decay, value_parser = weight, value_name = "X")]
    pub file_decay: f32,

    /// Ranking layer: chunks of examples, docs, benchmarks, fixtures, compat shims, type stubs and re-export barrels score times this; 1 turns it off.
    #[arg(help_heading = "Ranking layer", long, default_value_t = coret::rank::layer::SignalWeights::default().role_prior, value_parser = weight, value_name = "X")]
    pub role_prior: f32,

    /// Ranking layer: apply evidence, decay and role priors to issues too (always: questions and names).
    #[arg(help_heading = "Ranking layer", long, default_value_t = coret::rank::layer::SignalWeights::default().on_issues, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub signals_on_issues: bool,

    /// Ranking layer: every signal of the layer off (the ablation's baseline; --name-boost and --path-word-boost too).
    #[arg(help_heading = "Ranking layer", long)]
    pub no_ranking_layer: bool,

    /// Eval: treat module-level chunks as absent (out of rankings and gold), as in the paper.
    #[arg(long, help_heading = "Eval")]
    pub no_module_chunks: bool,

    /// Eval: leave test files out of the index.
    #[arg(long, help_heading = "Eval")]
    pub exclude_tests: bool,

    /// Hybrid: how rankings combine: score (standardised scores, weighted) or rrf (reciprocal rank fusion).
    #[arg(help_heading = "Fusion", long, default_value_t = coret::rank::fusion::FusionParams::default().method, value_name = "METHOD")]
    pub fusion: coret::rank::fusion::FusionMethod,

    /// Hybrid: reciprocal-rank-fusion constant.
    #[arg(help_heading = "Fusion", long, default_value_t = coret::rank::fusion::FusionParams::default().rrf_k, value_parser = positive, value_name = "K")]
    pub rrf_k: f32,

    /// BM25 and dense rankings (and so the hybrid): a test-file chunk at rank r ranks as if at r / W (1 keeps tests in place, 0 puts them last).
    #[arg(help_heading = "Fusion", long, default_value_t = coret::rank::fusion::FusionParams::default().test_weight, value_parser = unit, value_name = "W")]
    pub test_weight: f32,

    /// Hybrid: weight of the history ranking (past commits' files) against BM25's 1.0 (0: not fused).
    #[arg(help_heading = "Fusion", long, default_value_t = coret::rank::fusion::FusionParams::default().history_weight, value_parser = weight, value_name = "W")]
    pub history_weight: f32,

    /// Hybrid: share of a top chunk's score passed to its callers and callees (0: no call-graph propagation).
    #[arg(help_heading = "Fusion", long, default_value_t = coret::rank::fusion::FusionParams::default().graph_weight, value_parser = weight, value_name = "W")]
    pub graph_weight: f32,

    /// Hybrid: a file's module chunk (imports, constants) scores at least this share of its file's best top hit (0: off).
    #[arg(help_heading = "Fusion", long, default_value_t = coret::rank::fusion::FusionParams::default().module_weight, value_parser = unit, value_name = "W")]
    pub module_weight: f32,

    /// History: how many of the best-matching commits count.
    #[arg(long, hide = true, default_value_t = coret::history::HistoryParams::default().top_commits, value_name = "N")]
    pub history_commits: usize,

    /// History: commits that changed more files than this are skipped.
    #[arg(long, hide = true, default_value_t = coret::history::HistoryParams::default().max_files, value_name = "N")]
    pub history_max_files: usize,

    /// History: a file scores the sum of its commits' scores, not its best commit's.
    #[arg(long, hide = true)]
    pub history_sum: bool,

    /// Hybrid: weight of the dense ranking against BM25's 1.0.
    #[arg(help_heading = "Fusion", long, default_value_t = coret::rank::fusion::FusionParams::default().dense_weight, value_parser = weight, value_name = "W")]
    pub dense_weight: f32,

    /// Weight of the dense ranking in the hybrid when the static tier made it.
    #[arg(help_heading = "Fusion", long, default_value_t = coret::rank::fusion::FusionParams::default().static_weight, value_parser = weight, value_name = "W")]
    pub static_weight: f32,

    /// Weight of the static tier as the hybrid's third list beside the transformer's ranking (the mixed tier; 0: off).
    #[arg(help_heading = "Fusion", long, default_value_t = coret::rank::fusion::FusionParams::default().mixed_static_weight, value_parser = weight, value_name = "W")]
    pub mixed_static_weight: f32,

    /// Colour theme: a built-in name (coret-dark, coret-light), a name under the config directory's themes/, or a .toml path.
    #[arg(help_heading = "TUI", long, default_value = "coret-dark", value_name = "NAME")]
    pub theme: String,

    /// Benchmarks: how many chunks `--bench embed` embeds.
    #[arg(long, hide = true, default_value_t = 512, value_name = "N")]
    pub bench_chunks: usize,

    /// Benchmarks: `--bench store-scale` sizes, a comma list (default 10000,100000,1000000 up to --top).
    #[arg(long, hide = true, value_name = "N,N", value_delimiter = ',')]
    pub bench_sizes: Vec<usize>,

    /// Benchmarks: `--bench store-scale`'s HNSW graph, `m=16,ef_construction=64`.
    #[arg(long, hide = true, value_name = "PARAMS", default_value = "m=16,ef_construction=64")]
    pub bench_hnsw: coret::index::shared::HnswParams,

    /// Benchmarks: `--bench store-scale` queries, the issue texts (`problem_statement`) of a .jsonl.
    #[arg(long, hide = true, value_name = "FILE")]
    pub bench_queries: Option<PathBuf>,

    /// Benchmarks: a Python with sentence-transformers, to time it on the same texts.
    #[arg(long, hide = true, value_name = "PYTHON")]
    pub st_python: Option<PathBuf>,

    /// Provision the default model (if missing) and exit: fetch it once, sha256-checked.
    #[arg(long, help_heading = "Model")]
    pub fetch_model: bool,

    /// Mine: training instances from the commit history of GIT_DIR (a bare repository or a checkout) into --mine-out.
    #[arg(long, hide = true, value_name = "GIT_DIR", conflicts_with_all = ["query", "eval", "train", "bench", "mcp"])]
    pub mine: Option<PathBuf>,

    /// Mine: the repository's owner/name (the instances' `repo`; `--repos DIR` finds it by this name at training).
    #[arg(long, hide = true, value_name = "OWNER/NAME", requires = "mine")]
    pub repo_name: Option<String>,

    /// Mine: where the instances go (.jsonl, or .jsonl.gz compressed).
    #[arg(long, hide = true, value_name = "FILE", requires = "mine")]
    pub mine_out: Option<PathBuf>,

    /// Mine: skip commits whose cleaned message is shorter than N characters.
    #[arg(long, hide = true, default_value_t = coret::train::mine::MineOptions::default().min_message, value_name = "N")]
    pub min_message: usize,

    /// Mine: read only the newest N commits.
    #[arg(long, hide = true, value_name = "N", requires = "mine")]
    pub max_commits: Option<usize>,

    /// Mine: doc-comment pairs of HEAD instead of fixes (a definition's first doc sentence, its names masked, as the query; the definition as gold).
    #[arg(long, hide = true, requires = "mine")]
    pub mine_docs: bool,

    /// Mine (--mine-docs): most pairs of the repository, a hash-ordered sample of them.
    #[arg(long, hide = true, default_value_t = coret::train::mine_docs::DocOptions::default().max_pairs, value_name = "N")]
    pub max_pairs: usize,

    /// Mine: only commits after REF (REF..HEAD).
    #[arg(long, hide = true, value_name = "REF", requires = "mine")]
    pub since: Option<String>,

    /// Train: fine-tune the encoder with the CoRet loss on instances (.jsonl[.gz]) or a prepared shard.
    #[arg(long, hide = true, value_name = "INSTANCES")]
    pub train: Option<PathBuf>,

    /// Train: more prepared shards whose examples join --train's (same tokenizer and lengths).
    #[arg(long, hide = true, value_delimiter = ',', value_name = "SHARD,SHARD")]
    pub more_shards: Vec<PathBuf>,

    /// Train: where the fine-tuned model, checkpoint/ and train-log.jsonl go.
    #[arg(long, hide = true, value_name = "DIR")]
    pub output: Option<PathBuf>,

    /// Train: validation instances (.jsonl[.gz]) or a shard prepared from them.
    #[arg(long, hide = true, value_name = "FILE")]
    pub val: Option<PathBuf>,

    /// Train: model to start from [default: --model, else all-MiniLM-L6-v2].
    #[arg(long, hide = true, value_name = "DIR")]
    pub init: Option<PathBuf>,

    /// Train: write the prepared examples to FILE (a shard) and exit.
    #[arg(long, hide = true, value_name = "FILE")]
    pub prepare_shard: Option<PathBuf>,

    /// Train: only instances of these repositories (owner/name, comma list).
    #[arg(long, hide = true, value_name = "REPO,REPO")]
    pub train_repos: Option<String>,

    /// Train: passes over the training examples.
    #[arg(long, hide = true, default_value_t = 1, value_name = "N")]
    pub epochs: usize,

    /// Train: stop after N updates (the learning-rate schedule spans them).
    #[arg(long, hide = true, value_name = "N")]
    pub max_steps: Option<usize>,

    /// Train: random negatives per instance, from the same snapshot.
    #[arg(long, hide = true, default_value_t = 1024, value_name = "N")]
    pub negatives: usize,

    /// Train: peak learning rate (AdamW, linear warm-up, cosine decay).
    #[arg(long, hide = true, default_value_t = 2e-5, value_name = "X")]
    pub lr: f64,

    /// Train: warm-up updates [default: a tenth of the run].
    #[arg(long, hide = true, value_name = "N")]
    pub warmup: Option<usize>,

    /// Train: AdamW weight decay.
    #[arg(long, hide = true, default_value_t = 0.01, value_name = "X")]
    pub weight_decay: f64,

    /// Train: clip the global gradient norm to X (0: off).
    #[arg(long, hide = true, default_value_t = 1.0, value_name = "X")]
    pub clip_norm: f64,

    /// Train: instances per micro-batch.
    #[arg(long, hide = true, default_value_t = 8, value_name = "N")]
    pub batch: usize,

    /// Train: micro-batches per update (effective batch = batch x accum).
    #[arg(long, hide = true, default_value_t = 1, value_name = "N")]
    pub accum: usize,

    /// Train: softmax temperature of the CoRet loss.
    #[arg(long, hide = true, default_value_t = 0.05, value_name = "T")]
    pub temperature: f64,

    /// Train: most sequences per differentiable forward pass; more are embedded in slices.
    #[arg(long, hide = true, default_value_t = 8, value_name = "N")]
    pub grad_slice: usize,

    /// Train: seed of data order and negative sampling.
    #[arg(long, hide = true, default_value_t = 0, value_name = "N")]
    pub seed: u64,

    /// Train: validate (and checkpoint) every K updates [default: each epoch].
    #[arg(long, hide = true, value_name = "K")]
    pub val_every: Option<usize>,

    /// Train: validation proxy, gold ranked among N random chunks of its snapshot; 0 ranks whole snapshots (slow on CPU).
    #[arg(long, hide = true, default_value_t = 200, value_name = "N")]
    pub val_candidates: usize,

    /// Train: the newest N instances of each repository.
    #[arg(long, hide = true, value_name = "N")]
    pub per_repo: Option<usize>,

    /// Train: skip each repository's newest N instances first (the next slice of data for a continued run).
    #[arg(long, hide = true, default_value_t = 0, value_name = "N")]
    pub skip_newest: usize,

    /// Train: keep an instance only if BM25 puts a gold chunk within the top N (0: keep all).
    #[arg(long, hide = true, default_value_t = 100, value_name = "N")]
    pub consistency_top: usize,

    /// Train: only instances whose query has at least N characters (issues are long, merge messages short).
    #[arg(long, hide = true, default_value_t = 0, value_name = "N")]
    pub min_query_chars: usize,

    /// Train (tied): how many of each instance's negatives are BM25's best-ranked non-gold chunks (hard); the rest are random.
    #[arg(long, hide = true, default_value_t = 0, value_name = "N")]
    pub bm25_negatives: usize,

    /// Train (tied): how many more are the dense retriever's best-ranked non-gold chunks among BM25's top 100 and their neighbours, mined with --weights (the shipped adapters by default); their vectors are kept with eval's.
    #[arg(long, hide = true, default_value_t = 0, value_name = "N")]
    pub dense_negatives: usize,

    /// Train (tied): only the encoder's top N layers learn (0: every weight); both towers share them.
    #[arg(long, hide = true, default_value_t = 0, value_name = "N")]
    pub train_layers: usize,

    /// Train (tied): drop instances with more than N gold chunks (0: no limit).
    #[arg(long, hide = true, default_value_t = 8, value_name = "N")]
    pub max_gold: usize,

    /// Train (tied): LoRA adapters of rank R on every linear layer of every encoder layer, the weights frozen (0: the weights themselves learn); written as OUTPUT/lora.safetensors for --weights.
    #[arg(long, hide = true, default_value_t = 0, value_name = "R")]
    pub lora_rank: usize,

    /// Train (tied): start the LoRA adapters from this file (e.g. a previous run's) instead of B = 0.
    #[arg(long, hide = true, value_name = "FILE", conflicts_with = "resume")]
    pub lora_init: Option<PathBuf>,

    /// Train (tied): LoRA scale numerator α (the adapter adds α/R·B·A) [default: 2R].
    #[arg(long, hide = true, value_name = "X")]
    pub lora_alpha: Option<f64>,

    /// Train (tied): each instance meets only its own negatives, not a pool shared by the micro-batch's instances of one repository.
    #[arg(long, hide = true)]
    pub own_negatives: bool,

    /// Train: continue from OUTPUT/checkpoint.
    #[arg(long, hide = true)]
    pub resume: bool,

    /// Train the cross-encoder reranker (LoRA, from the shipped adapters) on --train's shards instead of the encoder; OUTPUT becomes a --rerank directory.
    #[arg(long, hide = true, requires = "train")]
    pub train_reranker: bool,

    /// Train the reranker: pairs per group (the golds, then the shard's hardest negatives).
    #[arg(long, hide = true, default_value_t = 8, value_parser = count::<2, 4096>, value_name = "N")]
    pub rerank_group: usize,

    /// Re-order the hybrid's head with a cross-encoder reranker (a directory the hidden training mode wrote); eval adds it as the ranking `rerank`.
    #[arg(help_heading = "Model", long, value_name = "DIR")]
    pub rerank: Option<PathBuf>,

    /// How many of the hybrid's top hits the reranker re-scores [default: the reranker's own].
    #[arg(help_heading = "Model", long, value_parser = count::<1, 1000>, value_name = "N")]
    pub rerank_depth: Option<usize>,

    /// Reranker pairs: positions in all (training; search reads the reranker's own).
    #[arg(long, hide = true, default_value_t = coret::rerank::RerankSpec::default().max_len, value_parser = count::<8, 512>, value_name = "N")]
    pub rerank_max_len: usize,

    /// Reranker pairs: positions the issue may take (training; search reads the reranker's own).
    #[arg(long, hide = true, default_value_t = coret::rerank::RerankSpec::default().query_len, value_parser = count::<4, 512>, value_name = "N")]
    pub rerank_query_len: usize,

    /// Which dense tier answers. `auto`: a question or a name is answered at once by the static tier unless the transformer has already embedded its candidates (then by the transformer); an issue waits for the transformer's candidates (--wait-index: for every chunk); the static tier wherever no model loads. `static`; `transformer`. Eval: `auto` is the transformer.
    #[arg(help_heading = "Model", long, env = "CORET_DENSE", default_value = "auto", value_name = "TIER")]
    pub dense: DenseTierArg,

    /// Ablation: the static tier without the repository's idf.
    #[arg(long, hide = true, help_heading = "Model")]
    pub static_no_idf: bool,

    /// A static table file instead of the shipped one (`scripts/static/build.sh` writes them).
    #[arg(help_heading = "Model", long, value_name = "FILE")]
    pub static_table: Option<PathBuf>,

    /// Build a static table (hidden): distil the chunk tower (or start from --static-from), weigh by the --static-corpus, fit on --static-fit shards, write FILE.
    #[arg(long, hide = true, value_name = "FILE", conflicts_with_all = ["query", "eval", "train", "bench", "mcp"])]
    pub static_build: Option<PathBuf>,

    /// Static build: instance files (.jsonl[.gz]) whose issues and patches give token frequencies.
    #[arg(long, hide = true, value_delimiter = ',', value_name = "FILE,FILE")]
    pub static_corpus: Vec<PathBuf>,

    /// Static build: start from this table's rows instead of distilling.
    #[arg(long, hide = true, value_name = "FILE")]
    pub static_from: Option<PathBuf>,

    /// Static build: training shards to fit the table on with the CoRet loss.
    #[arg(long, hide = true, value_delimiter = ',', value_name = "SHARD,SHARD")]
    pub static_fit: Vec<PathBuf>,

    /// Static build: a validation shard, reported after every pass.
    #[arg(long, hide = true, value_name = "SHARD")]
    pub static_val: Option<PathBuf>,

    /// Static build: passes regressing the rows towards the chunk tower's vectors of the fit shards' chunks and queries, before the CoRet loss (0: none).
    #[arg(long, hide = true, default_value_t = 0, value_name = "N")]
    pub static_regress: usize,

    /// Harvest the static table's distillation targets (hidden): the chunk tower's vectors of --train-repos' code and commit messages at HEAD, one file per repository in DIR (resumable).
    #[arg(long, hide = true, value_name = "DIR")]
    pub static_harvest: Option<PathBuf>,

    /// Static harvest: at most this many code texts (definitions) per repository.
    #[arg(long, hide = true, default_value_t = 4000, value_name = "N")]
    pub harvest_chunks: usize,

    /// Static harvest: at most this many commit messages per repository.
    #[arg(long, hide = true, default_value_t = 1000, value_name = "N")]
    pub harvest_messages: usize,

    /// Static build: where the tower's vectors for --static-regress are kept (computed once, read again; a directory of --static-harvest's files).
    #[arg(long, hide = true, value_name = "FILE")]
    pub static_targets: Option<PathBuf>,

    /// Static build: at most this many texts embedded by the tower for --static-regress.
    #[arg(long, hide = true, default_value_t = 40_000, value_name = "N")]
    pub static_target_max: usize,

    /// Static build: SIF weight constant a.
    #[arg(long, hide = true, default_value_t = coret::model::static_tier::build::BuildOptions::default().sif, value_name = "A")]
    pub static_sif: f64,

    /// Static build: keep the rows' common direction.
    #[arg(long, hide = true)]
    pub static_keep_mean: bool,

    /// Static fit: passes, learning rate, pull towards the distilled rows.
    #[arg(long, hide = true, default_value_t = coret::model::static_tier::fit::FitOptions::default().epochs, value_name = "N")]
    pub static_epochs: usize,
    #[arg(long, hide = true, default_value_t = coret::model::static_tier::fit::FitOptions::default().lr, value_name = "X")]
    pub static_lr: f32,
    #[arg(long, hide = true, default_value_t = coret::model::static_tier::fit::FitOptions::default().anchor, value_name = "X")]
    pub static_anchor: f32,

    /// Static regress: the weight of the in-batch relational KL term beside the cosine (0: cosine alone).
    #[arg(long, hide = true, default_value_t = 0.0, value_name = "X")]
    pub static_relational: f32,

    /// Distil a smaller student from the chunk tower towards --static-targets' vectors (hidden; issue 82): checkpoints, log and the student (a --model directory) in DIR.
    #[arg(long, hide = true, value_name = "DIR")]
    pub distill_student: Option<PathBuf>,

    /// Distil: instances (.jsonl[.gz]) whose problem statements join the texts, with the tower's query vectors as targets.
    #[arg(long, hide = true, value_name = "FILE")]
    pub distill_queries: Option<PathBuf>,

    /// Distil: the tower's layers the student starts from, in order.
    #[arg(long, hide = true, value_delimiter = ',', default_value = "0,4,5", value_name = "N,N")]
    pub student_layers: Vec<usize>,

    /// Run a benchmark and print figures: `index` (walk, chunk, call graph, BM25; cold and warm), `embed`, `query`, `history` (git history index; cold and warm), `rerank` (the --rerank reranker at K = 20, 30, 50).
    #[arg(long, hide = true, value_name = "WHAT")]
    pub bench: Option<String>,
}

/// `--retriever` value: one retriever, a list, or all of them (`all`: history too, where the
/// repository has one; see [`Args::asked_all`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetrieverArg(pub Vec<Retriever>);

impl std::str::FromStr for RetrieverArg {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.trim().eq_ignore_ascii_case("all") {
            return Ok(RetrieverArg(Retriever::ALL.iter().copied().chain([Retriever::History]).collect()));
        }
        let mut list = Vec::new();
        if s.trim().is_empty() {
            return Err("no retriever named".into());
        }
        for part in s.split(',') {
            let r: Retriever =
                part.parse().map_err(|e| format!("{e}; or `all`, or a list such as bm25,dense"))?;
            if !list.contains(&r) {
                list.push(r);
            }
        }
        Ok(RetrieverArg(list))
    }
}

impl Args {
    /// The retrievers asked for, or `default` when none was.
    pub fn retrievers_or(&self, default: &[Retriever]) -> Vec<Retriever> {
        self.retriever.as_ref().map_or_else(|| default.to_vec(), |r| r.0.clone())
    }

    /// Whether `--retriever all` was given: history is then left out, with a note, where the
    /// repository has none (naming `history` alone is an error there).
    pub fn asked_all(&self) -> bool {
        self.retriever.as_ref().is_some_and(|r| r.0.len() == Retriever::ALL.len() + 1)
    }
}

/// `--dense`: which tier answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DenseTierArg {
    Auto,
    Static,
    Transformer,
}

impl std::str::FromStr for DenseTierArg {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "auto" => Ok(DenseTierArg::Auto),
            "static" => Ok(DenseTierArg::Static),
            "transformer" => Ok(DenseTierArg::Transformer),
            other => Err(format!("`{other}`: expected auto, static or transformer")),
        }
    }
}

/// A whole number in `LO..=HI`, with a message naming the range.
fn count<const LO: usize, const HI: usize>(s: &str) -> Result<usize, String> {
    let n: usize = s.trim().parse().map_err(|_| format!("`{s}` is not a whole number"))?;
    if (LO..=HI).contains(&n) {
        Ok(n)
    } else {
        Err(format!("{n} is out of range {LO}..={HI}"))
    }
}

fn float(s: &str) -> Result<f32, String> {
    let x: f32 = s.trim().parse().map_err(|_| format!("`{s}` is not a number"))?;
    if x.is_finite() {
        Ok(x)
    } else {
        Err(format!("{s} is not a finite number"))
    }
}

/// A weight: finite and not negative (a negative weight would invert a ranking).
fn weight(s: &str) -> Result<f32, String> {
    float(s).and_then(|x| if x >= 0.0 { Ok(x) } else { Err(format!("{x} is negative")) })
}

fn positive(s: &str) -> Result<f32, String> {
    float(s).and_then(|x| if x > 0.0 { Ok(x) } else { Err(format!("{x} is not positive")) })
}

/// Between 0 and 1.
fn unit(s: &str) -> Result<f32, String> {
    float(s).and_then(|x| if (0.0..=1.0).contains(&x) { Ok(x) } else { Err(format!("{x} is not in 0..=1")) })
}

/// The one-line description, its languages read from the table.
fn about() -> String {
    format!(
        "Find the functions, classes and methods an issue is about ({}): CoRet dense retrieval and BM25, side by side.",
        coret::lang::names()
    )
}

fn lang_help() -> String {
    format!("Languages to index, a comma list ({}) [default: all of them]", coret::lang::ids())
}

/// `--lang rust,go`: the languages named, or a clear error listing the supported ones.
fn parse_langs(text: &str) -> Result<coret::lang::LangSet, String> {
    coret::lang::LangSet::parse(text).map_err(|e| e.to_string())
}

/// Text that may not be UTF-8 (a query with a Latin-1 byte): the bytes that are not become
/// U+FFFD instead of rejecting the whole argument.
fn lossy_text() -> impl clap::builder::TypedValueParser<Value = String> {
    use clap::builder::TypedValueParser;
    clap::builder::OsStringValueParser::new().map(|s| s.to_string_lossy().into_owned())
}

fn many_fusion(s: &str) -> Result<coret::rank::many::ManyFusion, String> {
    match s {
        "union" => Ok(coret::rank::many::ManyFusion::Union),
        "each" => Ok(coret::rank::many::ManyFusion::Each),
        other => Err(format!("`{other}`: expected union or each")),
    }
}
