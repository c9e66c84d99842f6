use super::*;
use crate::engine::SyntaxCache;
use std::sync::Arc;
use std::time::{Duration, Instant};

const CART: &str = "from shop.pricing import apply_discount\n\n\nclass Cart:\n    def total(self, prices):\n        return apply_discount(sum(prices))\n";
const PRICING: &str =
    "def apply_discount(amount):\n    \"\"\"Loyalty discount.\"\"\"\n    return amount * 0.9\n";
const TEST: &str = "from shop.pricing import apply_discount\n\n\ndef test_apply_discount():\n    assert apply_discount(10) == 9\n";

/// The fixture on disk (for code and `read`) and indexed from the same texts.
fn fixture() -> (tempfile::TempDir, Searcher) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let files = [("shop/cart.py", CART), ("shop/pricing.py", PRICING), ("tests/test_pricing.py", TEST)];
    let mut texts = Vec::new();
    for (path, text) in files {
        std::fs::create_dir_all(root.join(path).parent().unwrap()).unwrap();
        std::fs::write(root.join(path), text).unwrap();
        texts.push((path.to_string(), text.to_string()));
    }
    let repo = RepoIndex::from_texts(root, &texts, &mut SyntaxCache::new()).unwrap();
    (dir, Searcher::bm25_only(Arc::new(repo)))
}

fn request(issue: &str) -> LocateRequest {
    LocateRequest { issue: issue.into(), top_k: None, retriever: None, include_tests: false }
}

/// A partial dense index of the fixture, as a query-first build serves one: `apply_discount`
/// embedded, the rest of the 4 chunks the complete index holds (tests left out) not yet.
fn partial_index(searcher: &Searcher, model: &Path) -> DenseSearcher {
    crate::testkit::write_tiny_bert(model, &["loyalty", "discount", "total", "cart", "return"]);
    let opts = crate::model::EncoderOptions { max_len: 64, ..Default::default() };
    let encoder = crate::model::Encoder::load(model, &candle_core::Device::Cpu, opts).unwrap();
    let towers = crate::model::Towers::tied(Arc::new(encoder));
    let pricing = searcher.repo.chunks.iter().position(|c| c.name == "apply_discount").unwrap() as u32;
    let scope = crate::rank::dense_retriever::Scope::First(std::slice::from_ref(&pricing));
    let mut store = crate::index::dense::VectorStore::in_memory(towers.chunk.dim());
    let (chunks, graph) = (&searcher.repo.chunks, &searcher.repo.graph);
    let opts = crate::rank::dense_retriever::DenseOptions::default();
    let progress = crate::progress::NoProgress;
    DenseSearcher::build_scoped(towers, chunks, graph, opts, &mut store, &progress, scope).unwrap()
}

/// The `N of M` counts a text quotes.
fn counts(text: &str) -> Vec<(usize, usize)> {
    let words: Vec<&str> =
        text.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()).collect();
    words
        .windows(3)
        .filter(|w| w[1] == "of")
        .filter_map(|w| Some((w[0].parse().ok()?, w[2].parse().ok()?)))
        .collect()
}

/// One source for the dense figures of an answer: every count its status and note quote is
/// its `dense_coverage`, a partial one is quoted by the status, and `dense_ready` agrees.
fn assert_counts_agree(answer: &LocateAnswer) {
    let coverage = answer.dense_coverage.map(|c| (c.ranked, c.of));
    for text in [Some(answer.dense_status.as_str()), answer.note.as_deref()].into_iter().flatten() {
        for quoted in counts(text) {
            assert_eq!(Some(quoted), coverage, "{text}");
        }
    }
    if let Some(partial) = coverage.filter(|(ranked, of)| ranked < of) {
        assert!(counts(&answer.dense_status).contains(&partial), "{}", answer.dense_status);
    }
    assert_eq!(answer.dense_ready, coverage.is_some_and(|(ranked, of)| ranked == of));
}

#[test]
fn locate_ranks_with_bm25_before_the_dense_index_is_ready_and_says_so() {
    let (_dir, searcher) = fixture();
    // The build has started but published no index yet; its progress counters are not quoted.
    let building = DenseStatus::Building { done: 3, total: 9 };
    let answer = locate(&searcher, &building, None, &request("the loyalty discount is wrong")).unwrap();
    assert_eq!((answer.retriever.as_str(), answer.dense_ready), ("bm25", false));
    assert_eq!(answer.retrievers_used, ["bm25"]);
    assert_eq!(answer.dense_status, "building (no dense index to rank with yet)");
    assert_eq!(answer.dense_coverage, None);
    let note = answer.note.as_deref().expect("bm25 answering the default says so");
    assert!(note.starts_with("answered by bm25 alone: the dense index is building"), "{note}");
    assert_counts_agree(&answer);
    let top = &answer.hits()[0];
    assert_eq!(
        (top.path.as_str(), top.name.as_str(), top.kind.as_str()),
        ("shop/pricing.py", "apply_discount", "function")
    );
    assert_eq!((top.start_line, top.end_line, top.rank), (1, 3, 1));
    assert_eq!(top.code, PRICING.trim_end());
    assert!(answer.hits().into_iter().all(|h| !h.path.starts_with("tests/")), "tests left out by default");

    let dense = LocateRequest { retriever: Some(RetrieverName::Dense), ..request("loyalty discount") };
    let answer = locate(&searcher, &building, None, &dense).unwrap();
    assert_eq!(answer.retriever, "bm25");
    let note = answer.note.unwrap();
    assert!(note.starts_with("dense asked for, but answered by bm25: the dense index is building"), "{note}");
    assert!(counts(&note).is_empty(), "no progress counter quoted: {note}");
}

#[test]
fn locate_includes_tests_when_asked_and_checks_its_arguments() {
    let (_dir, searcher) = fixture();
    let with_tests = LocateRequest { include_tests: true, ..request("test apply discount") };
    let answer = locate(&searcher, &DenseStatus::Off, None, &with_tests).unwrap();
    assert!(answer.hits().into_iter().any(|h| h.path == "tests/test_pricing.py"));
    let e = locate(&searcher, &DenseStatus::Off, None, &request("  ")).unwrap_err().to_string();
    assert!(e.starts_with("issue:"), "{e}");
    let too_many = LocateRequest { top_k: Some(201), ..request("discount") };
    let e = locate(&searcher, &DenseStatus::Off, None, &too_many).unwrap_err().to_string();
    assert_eq!(e, "top_k: 201 is out of range 1..=200");
}

#[test]
fn long_chunks_show_their_first_lines_and_say_what_is_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let body: String = (0..60).map(|i| format!("    x{i} = {i}\n")).collect();
    let text = format!("def long_function():\n{body}");
    std::fs::write(root.join("long.py"), &text).unwrap();
    let repo = RepoIndex::from_texts(root, &[("long.py".into(), text)], &mut SyntaxCache::new()).unwrap();
    let searcher = Searcher::bm25_only(Arc::new(repo));
    let answer = locate(&searcher, &DenseStatus::Off, None, &request("long function")).unwrap();
    let hit = &answer.hits()[0];
    assert_eq!(hit.code.lines().count(), CODE_LINES);
    assert_eq!(hit.code_note.as_deref(), Some("first 40 of 61 lines; lines 41-61 are left out (use `read`)"));
}

#[test]
fn neighbours_follow_the_call_graph_both_ways() {
    let (_dir, searcher) = fixture();
    let req = NeighboursRequest { repo: None, path: "shop/pricing.py".into(), name: "apply_discount".into() };
    let answer = neighbours(&searcher.repo, &req).unwrap();
    let callers: Vec<&str> = answer.definitions[0].callers.iter().map(|n| n.location.as_str()).collect();
    assert!(callers.contains(&"shop/cart.py:5"), "{callers:?}");
    let req = NeighboursRequest { repo: None, path: "./shop/cart.py".into(), name: "total".into() };
    let answer = neighbours(&searcher.repo, &req).unwrap();
    assert_eq!((answer.path.as_str(), answer.definitions[0].name.as_str()), ("shop/cart.py", "Cart.total"));
    assert_eq!(answer.definitions[0].callees[0].location, "shop/pricing.py:1");

    let missing = NeighboursRequest { repo: None, path: "shop/cart.py".into(), name: "checkout".into() };
    let e = neighbours(&searcher.repo, &missing).unwrap_err().to_string();
    assert!(
        e.starts_with("name: `checkout` is not defined in `shop/cart.py`") && e.contains("Cart.total"),
        "{e}"
    );
    let outside = NeighboursRequest { repo: None, path: "../cart.py".into(), name: "Cart".into() };
    assert!(matches!(neighbours(&searcher.repo, &outside), Err(ToolError::Path(SandboxError::Outside(_)))));
}

#[test]
fn read_returns_lines_and_refuses_what_it_cannot_serve_whole() {
    let (_dir, searcher) = fixture();
    let root = &searcher.repo.root;
    let read_lines = |path: &str, start, end| {
        read(root, &ReadRequest { repo: None, path: path.into(), start_line: start, end_line: end })
    };
    let a = read_lines("shop/cart.py", 4, 5).unwrap();
    assert_eq!(
        (a.text.as_str(), a.end_line, a.total_lines),
        ("class Cart:\n    def total(self, prices):", 5, 6)
    );
    let a = read_lines("shop/pricing.py", 2, 400).unwrap();
    assert_eq!((a.start_line, a.end_line), (2, 3), "a range past the end stops at the last line");
    let e = read_lines("shop/cart.py", 1, 401).unwrap_err().to_string();
    assert!(e.starts_with("end_line: lines 1-401 are 401 lines; read at most 400"), "{e}");
    assert!(read_lines("shop/cart.py", 0, 3).unwrap_err().to_string().starts_with("start_line:"));
    assert!(read_lines("shop/cart.py", 5, 3).unwrap_err().to_string().starts_with("end_line:"));
    let e = read_lines("shop/cart.py", 90, 91).unwrap_err().to_string();
    assert!(e.contains("past the end of `shop/cart.py` (6 lines)"), "{e}");
    let e = read_lines("../secret.py", 1, 2).unwrap_err().to_string();
    assert!(e.contains("`../secret.py`") && e.contains("outside the repository"), "{e}");
    let e = read_lines("shop", 1, 2).unwrap_err().to_string();
    assert!(e.contains("`shop`") && e.contains("directory"), "{e}");
}

/// While the dense index is still embedding, a partial one (query-first) answers the hybrid,
/// and the status, the note and `dense_coverage` all say over how many chunks dense ranked.
#[test]
fn locate_answers_from_a_partial_dense_index_and_says_how_partial() {
    let (dir, searcher) = fixture();
    let partial = partial_index(&searcher, &dir.path().join("model"));
    let searcher = Searcher { dense: Some(Arc::new(partial)), ..searcher.clone_sides() };
    // The build's progress (chunks left to embed, as issue #53 saw: "0 of 915") is not the
    // index's size: the answer quotes the index it ranked with.
    let building = DenseStatus::Building { done: 0, total: 915 };
    let answer = locate(&searcher, &building, None, &request("the loyalty discount is wrong")).unwrap();
    assert_eq!((answer.retriever.as_str(), answer.dense_ready), ("hybrid", false));
    assert_eq!(answer.dense_coverage, Some(DenseCoverage { ranked: 1, of: 4 }));
    assert_eq!(answer.dense_status, "building (1 of 4 chunks embedded)");
    let note = answer.note.as_deref().expect("a partial answer says so");
    assert!(note.contains("dense ranked over 1 of 4 chunks"), "{note}");
    assert_counts_agree(&answer);
    assert_eq!(answer.hits()[0].name, "apply_discount");

    let bm25 = LocateRequest { retriever: Some(RetrieverName::Bm25), ..request("loyalty discount") };
    let answer = locate(&searcher, &building, None, &bm25).unwrap();
    assert_eq!((answer.retriever.as_str(), answer.note.as_deref()), ("bm25", None));
    assert_eq!(answer.dense_coverage, Some(DenseCoverage { ranked: 1, of: 4 }), "the index as it stands");
    assert_counts_agree(&answer);
}

/// A partial index whose builder does not embed this issue's chunks in time (here: never
/// serves the request, as a cold repository's ~500 candidates on a CPU): `locate` answers with
/// BM25 by its deadline instead of blocking on the builder, and says why.
#[test]
fn locate_answers_with_bm25_by_its_deadline_when_the_issues_chunks_are_not_embedded_in_time() {
    let (dir, searcher) = fixture();
    let partial = partial_index(&searcher, &dir.path().join("model"));
    // Kept open and never read: the builder is busy.
    let (handle, _queue) = crate::rank::query_first::QueryFirst::channel();
    let dense = Arc::new(partial.with_query_first(handle));
    let searcher = Searcher { dense: Some(dense), ..searcher.clone_sides() };
    let building = DenseStatus::Building { done: 0, total: 915 };
    let issue = request("the loyalty discount is wrong");
    let start = Instant::now();
    let deadline = start + Duration::from_millis(300);
    let answer = locate_within(&searcher, &building, None, &issue, deadline).unwrap();
    let took = start.elapsed();
    assert!(took < Duration::from_secs(3), "answered by the deadline, not after the builder: {took:?}");
    assert_eq!((answer.retriever.as_str(), answer.dense_ready), ("bm25", false));
    assert_eq!(answer.retrievers_used, ["bm25"]);
    assert_eq!(answer.dense_coverage, Some(DenseCoverage { ranked: 1, of: 4 }));
    assert_eq!(answer.dense_status, "building (1 of 4 chunks embedded)");
    let note = answer.note.as_deref().expect("says why bm25 answered");
    let why = "answered by bm25 alone: this issue's chunks were not embedded within the wait";
    assert!(note.starts_with(why), "{note}");
    assert_counts_agree(&answer);
    assert_eq!(answer.hits()[0].name, "apply_discount");

    let dense = LocateRequest { retriever: Some(RetrieverName::Dense), ..request("loyalty discount") };
    let answer = locate_within(&searcher, &building, None, &dense, Instant::now()).unwrap();
    assert_eq!(answer.retriever, "bm25");
    let note = answer.note.as_deref().unwrap_or_default();
    assert!(note.starts_with("dense asked for, but answered by bm25: this issue's chunks"), "{note}");
    assert_counts_agree(&answer);
}

/// Issue 80: with the static tier beside a partial index that has not embedded a question's
/// candidates, `locate` answers the question from the static tier at once (and queues its
/// candidates); an issue still waits for the transformer, then falls back to BM25.
#[test]
fn a_question_the_transformer_has_not_covered_is_answered_by_the_static_tier_at_once() {
    let (dir, searcher) = fixture();
    let partial = partial_index(&searcher, &dir.path().join("model"));
    let (handle, _queue) = crate::rank::query_first::QueryFirst::channel();
    let dense = Arc::new(partial.with_query_first(handle));
    let table = Arc::new(crate::model::static_tier::StaticTable::builtin().unwrap());
    let with_dense = Searcher { dense: Some(dense), ..searcher.clone_sides() };
    let searcher = with_dense.with_static_side(table, Default::default()).unwrap();
    let building = DenseStatus::Building { done: 0, total: 915 };
    let start = Instant::now();
    let deadline = start + Duration::from_secs(30);
    let answer =
        locate_within(&searcher, &building, None, &request("where is the cart total computed"), deadline)
            .unwrap();
    assert!(start.elapsed() < Duration::from_secs(10), "at once, not at the deadline");
    assert_eq!((answer.retriever.as_str(), answer.dense_tier.as_deref()), ("hybrid", Some("static")));
    assert_eq!(answer.query_shape, "question");
    let note = answer.note.as_deref().unwrap_or_default();
    assert!(note.starts_with("the static tier answered at once (a question)"), "{note}");
    assert_eq!(
        answer.dense_coverage,
        Some(DenseCoverage { ranked: 1, of: 4 }),
        "the transformer's, as it stands"
    );
    assert!(answer.hits().iter().any(|h| h.name == "Cart.total"), "{:?}", answer.hits());

    let issue = "The loyalty discount is taken off twice\n\nWhen a cart has a loyalty discount the total \
                 shows the discount applied two times, and the receipt lists it twice as well.";
    let answer = locate_within(&searcher, &building, None, &request(issue), Instant::now()).unwrap();
    assert_eq!(answer.query_shape, "issue");
    assert_eq!(answer.retriever, "bm25", "an issue waits for the transformer, here past its deadline");
}

/// An index of one file, `path` holding `text`, written to a directory kept as long as the
/// returned guard.
fn one_file(path: &str, text: &str) -> (tempfile::TempDir, RepoIndex) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(path), text).unwrap();
    let texts = [(path.to_string(), text.to_string())];
    let repo = RepoIndex::from_texts(dir.path().to_path_buf(), &texts, &mut SyntaxCache::new()).unwrap();
    (dir, repo)
}

#[test]
fn neighbours_take_an_elixir_function_with_or_without_its_arity() {
    let text = "defmodule Shop.Cart do\n  def total(cart), do: total(cart, 0)\n  def total(cart, tax), do: cart + tax\nend\n";
    let (_dir, repo) = one_file("cart.ex", text);
    let ask = |name: &str| {
        let req = NeighboursRequest { repo: None, path: "cart.ex".into(), name: name.into() };
        let answer = neighbours(&repo, &req).unwrap();
        answer.definitions.iter().map(|d| d.name.clone()).collect::<Vec<_>>()
    };
    assert_eq!(ask("Shop.Cart.total/2"), ["Shop.Cart.total/2"], "with its arity: that arity alone");
    assert_eq!(ask("total/1"), ["Shop.Cart.total/1"]);
    assert_eq!(ask("total"), ["Shop.Cart.total/1", "Shop.Cart.total/2"], "without it: every arity");
    assert_eq!(ask("Shop.Cart.total"), ["Shop.Cart.total/1", "Shop.Cart.total/2"]);
    let req = NeighboursRequest { repo: None, path: "cart.ex".into(), name: "total/1".into() };
    let callees = &neighbours(&repo, &req).unwrap().definitions[0].callees;
    assert_eq!(callees.iter().map(|n| n.name.as_str()).collect::<Vec<_>>(), ["Shop.Cart.total/2"]);
}

/// Issue 81: `neighbours` takes a Ruby method as Ruby writes it or dotted, and answers with
/// names as Ruby writes them: `Shop::Cart#add` calls `Shop::Cart.empty` (a `def self.`).
#[test]
fn neighbours_take_and_answer_ruby_names_as_ruby_writes_them() {
    let text = "module Shop\n  class Cart\n    def self.empty\n      new\n    end\n\n    def add(item)\n      Cart.empty\n    end\n  end\nend\n";
    let (_dir, repo) = one_file("cart.rb", text);
    let ask = |name: &str| {
        let req = NeighboursRequest { repo: None, path: "cart.rb".into(), name: name.into() };
        neighbours(&repo, &req).unwrap().definitions
    };
    for name in ["Shop::Cart#add", "Shop.Cart.add", "Cart#add", "add"] {
        let found = ask(name);
        assert_eq!(found.iter().map(|d| d.name.as_str()).collect::<Vec<_>>(), ["Shop::Cart#add"], "{name}");
        assert_eq!(found[0].kind, "method");
        let callees: Vec<&str> = found[0].callees.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(callees, ["Shop::Cart.empty"], "{name}");
    }
    let req = NeighboursRequest { repo: None, path: "cart.rb".into(), name: "remove".into() };
    let err = neighbours(&repo, &req).unwrap_err().to_string();
    assert!(
        err.contains("Shop::Cart#add") && err.contains("Shop::Cart.empty"),
        "its names as written: {err}"
    );
}
