use super::*;
use crate::engine::SyntaxCache;
use std::sync::Arc;

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

#[test]
fn locate_ranks_with_bm25_before_the_dense_index_is_ready_and_says_so() {
    let (_dir, searcher) = fixture();
    let building = DenseStatus::Building { done: 3, total: 9 };
    let answer = locate(&searcher, &building, None, &request("the loyalty discount is wrong")).unwrap();
    assert_eq!((answer.retriever.as_str(), answer.dense_ready), ("bm25", false));
    assert_eq!(answer.retrievers_used, ["bm25"]);
    assert_eq!(answer.note, None, "bm25 is the default before the dense index is ready");
    let top = &answer.hits[0];
    assert_eq!(
        (top.path.as_str(), top.name.as_str(), top.kind.as_str()),
        ("shop/pricing.py", "apply_discount", "function")
    );
    assert_eq!((top.start_line, top.end_line, top.rank), (1, 3, 1));
    assert_eq!(top.code, PRICING.trim_end());
    assert!(answer.hits.iter().all(|h| !h.path.starts_with("tests/")), "tests left out by default");

    let dense = LocateRequest { retriever: Some(RetrieverName::Dense), ..request("loyalty discount") };
    let answer = locate(&searcher, &building, None, &dense).unwrap();
    assert_eq!(answer.retriever, "bm25");
    let note = answer.note.unwrap();
    assert!(note.contains("dense asked for") && note.contains("building (3 of 9"), "{note}");
}

#[test]
fn locate_includes_tests_when_asked_and_checks_its_arguments() {
    let (_dir, searcher) = fixture();
    let with_tests = LocateRequest { include_tests: true, ..request("test apply discount") };
    let answer = locate(&searcher, &DenseStatus::Off, None, &with_tests).unwrap();
    assert!(answer.hits.iter().any(|h| h.path == "tests/test_pricing.py"));
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
    let hit = &answer.hits[0];
    assert_eq!(hit.code.lines().count(), CODE_LINES);
    assert_eq!(hit.code_note.as_deref(), Some("first 40 of 61 lines; lines 41-61 are left out (use `read`)"));
}

#[test]
fn neighbours_follow_the_call_graph_both_ways() {
    let (_dir, searcher) = fixture();
    let req = NeighboursRequest { path: "shop/pricing.py".into(), name: "apply_discount".into() };
    let answer = neighbours(&searcher.repo, &req).unwrap();
    let callers: Vec<&str> = answer.definitions[0].callers.iter().map(|n| n.location.as_str()).collect();
    assert!(callers.contains(&"shop/cart.py:5"), "{callers:?}");
    let req = NeighboursRequest { path: "./shop/cart.py".into(), name: "total".into() };
    let answer = neighbours(&searcher.repo, &req).unwrap();
    assert_eq!((answer.path.as_str(), answer.definitions[0].name.as_str()), ("shop/cart.py", "Cart.total"));
    assert_eq!(answer.definitions[0].callees[0].location, "shop/pricing.py:1");

    let missing = NeighboursRequest { path: "shop/cart.py".into(), name: "checkout".into() };
    let e = neighbours(&searcher.repo, &missing).unwrap_err().to_string();
    assert!(
        e.starts_with("name: `checkout` is not defined in `shop/cart.py`") && e.contains("Cart.total"),
        "{e}"
    );
    let outside = NeighboursRequest { path: "../cart.py".into(), name: "Cart".into() };
    assert!(matches!(neighbours(&searcher.repo, &outside), Err(ToolError::Path(SandboxError::Outside(_)))));
}

#[test]
fn read_returns_lines_and_refuses_what_it_cannot_serve_whole() {
    let (_dir, searcher) = fixture();
    let root = &searcher.repo.root;
    let read_lines = |path: &str, start, end| {
        read(root, &ReadRequest { path: path.into(), start_line: start, end_line: end })
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
/// and the note says over how many chunks dense ranked.
#[test]
fn locate_answers_from_a_partial_dense_index_and_says_how_partial() {
    let (dir, searcher) = fixture();
    let model = dir.path().join("model");
    crate::testkit::write_tiny_bert(&model, &["loyalty", "discount", "total", "cart", "return"]);
    let opts = crate::model::EncoderOptions { max_len: 64, ..Default::default() };
    let encoder = crate::model::Encoder::load(&model, &candle_core::Device::Cpu, opts).unwrap();
    let towers = crate::model::Towers::tied(Arc::new(encoder));
    let pricing = searcher.repo.chunks.iter().position(|c| c.name == "apply_discount").unwrap() as u32;
    let scope = crate::semantic::Scope::First(std::slice::from_ref(&pricing));
    let dense_opts = crate::semantic::DenseOptions::default();
    let partial =
        searcher.with_dense_scoped(towers, dense_opts, scope, &crate::progress::NoProgress).unwrap();
    let building = DenseStatus::Building { done: 1, total: 4 };
    let answer = locate(&partial, &building, None, &request("the loyalty discount is wrong")).unwrap();
    assert_eq!((answer.retriever.as_str(), answer.dense_ready), ("hybrid", false));
    let note = answer.note.expect("a partial answer says so");
    assert!(note.contains("dense ranked over 1 of 4 chunks"), "{note}");
    assert_eq!(answer.hits[0].name, "apply_discount");
}
