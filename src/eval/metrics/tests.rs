use super::*;

const PATHS: [&str; 10] = ["a.py", "a.py", "b.py", "b.py", "c.py", "c.py", "d.py", "d.py", "e.py", "e.py"];
const RANKING: [ChunkId; 7] = [5, 0, 7, 2, 9, 3, 1];
const KS: [usize; 4] = [10, 1, 5, 5];

fn path_of(id: ChunkId) -> &'static str {
    PATHS[id]
}

fn eval(ranking: &[ChunkId], gold: &[ChunkId], files: &[&str]) -> Option<InstanceMetrics> {
    let files: Vec<String> = files.iter().map(|f| f.to_string()).collect();
    evaluate(ranking, gold, &files, path_of, &KS)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn all_gold_found_late() {
    let m = eval(&RANKING, &[2, 3], &["b.py"]).unwrap();
    assert_eq!(m.gold_ranks, [Some(4), Some(6)]);
    // Files by first appearance: c, a, d, b, e.
    assert_eq!(m.gold_file_ranks, [Some(4)]);
    let names: Vec<&str> = m.metrics.0.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "perfect_recall@1",
            "perfect_recall@5",
            "perfect_recall@10",
            "recall@1",
            "recall@5",
            "recall@10",
            "file_acc@1",
            "file_acc@5",
            "file_acc@10",
            "mrr",
        ]
    );
    let v = |n| m.metrics.get(n).unwrap();
    assert_eq!((v("perfect_recall@1"), v("perfect_recall@5"), v("perfect_recall@10")), (0.0, 0.0, 1.0));
    assert_eq!((v("recall@1"), v("recall@5"), v("recall@10")), (0.0, 0.5, 1.0));
    assert_eq!((v("file_acc@1"), v("file_acc@5"), v("file_acc@10")), (0.0, 1.0, 1.0));
    assert!(close(v("mrr"), 0.25));
}

#[test]
fn gold_beyond_a_truncated_ranking_is_not_found() {
    // Chunk 8 is not in the top-7 ranking; its file e.py joins the gold files.
    let m = eval(&RANKING, &[1, 8], &["a.py"]).unwrap();
    assert_eq!(m.gold_ranks, [Some(7), None]);
    assert_eq!(m.gold_files, ["a.py", "e.py"]);
    assert_eq!(m.gold_file_ranks, [Some(2), Some(5)]);
    let v = |n| m.metrics.get(n).unwrap();
    assert_eq!(v("perfect_recall@10"), 0.0);
    assert_eq!((v("recall@5"), v("recall@10")), (0.0, 0.5));
    assert_eq!((v("file_acc@1"), v("file_acc@5")), (0.0, 1.0));
    assert!(close(v("mrr"), 1.0 / 7.0));

    let miss = eval(&RANKING, &[4, 8], &[]).unwrap();
    assert_eq!(miss.metrics.get("mrr"), Some(0.0));
    // Neither gold chunk is ranked, but both files are: c.py first, e.py fifth.
    assert_eq!(miss.gold_file_ranks, [Some(1), Some(5)]);
    assert_eq!(miss.metrics.get("file_acc@1"), Some(0.0));
    assert_eq!(miss.metrics.get("file_acc@5"), Some(1.0));
}

#[test]
fn repeated_ids_do_not_take_ranks_and_gold_is_deduplicated() {
    let m = eval(&[0, 0, 1, 2], &[2, 2], &[]).unwrap();
    assert_eq!(m.gold_ranks, [Some(3)]);
    assert_eq!(m.gold_file_ranks, [Some(2)]);
    assert!(close(m.metrics.get("mrr").unwrap(), 1.0 / 3.0));
}

#[test]
fn no_gold_means_no_metrics() {
    assert!(eval(&RANKING, &[], &["a.py"]).is_none());
}

#[test]
fn aggregate_averages_instances_with_gold() {
    let mut agg = Aggregate::default();
    agg.add(&eval(&RANKING, &[2, 3], &["b.py"]).unwrap());
    agg.add(&eval(&RANKING, &[1, 8], &["a.py"]).unwrap());
    agg.add_without_gold("x__y-1");
    let s = agg.summary();
    assert_eq!((s.n, s.without_gold), (2, 1));
    assert_eq!(agg.without_gold(), ["x__y-1"]);
    let v = |n| s.metrics.get(n).unwrap();
    assert_eq!(v("perfect_recall@10"), 0.5);
    assert_eq!((v("recall@5"), v("recall@10")), (0.25, 0.75));
    assert_eq!(v("file_acc@5"), 1.0);
    assert!(close(v("mrr"), (0.25 + 1.0 / 7.0) / 2.0));

    let json = serde_json::to_string(&s).unwrap();
    assert!(json.starts_with(r#"{"n":2,"without_gold":1,"perfect_recall@1":0.0,"#), "{json}");
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["recall@10"], 0.75);
}

#[test]
fn empty_aggregate_reports_zero_instances() {
    let s = Aggregate::default().summary();
    assert_eq!(s.n, 0);
    assert!(s.metrics.0.is_empty());
}

#[test]
fn grouped_metrics_read_one_row_per_file_and_nest_the_module_chunk() {
    // a.py: 0, 1; b.py: 2 (its module chunk), 3. The flat list puts b.py's gold chunk 3 fourth.
    let files = vec!["b.py".to_string()];
    let m = grouped(&[0, 1, 2, 3], &[3], &files, path_of, |id| id == 2, &[1, 5]);
    let names: Vec<&str> = m.0.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "grouped_perfect_recall@1",
            "grouped_perfect_recall@5",
            "grouped_mrr",
            "chunk_ndcg@10",
            "file_ndcg@10",
            "file_recall@10",
            "file_mrr"
        ]
    );
    let v = |n| m.get(n).unwrap();
    // Rows: a.py (0), b.py (3, not its module chunk 2); then the nested 1 and 2.
    assert_eq!((v("grouped_perfect_recall@1"), v("grouped_perfect_recall@5")), (0.0, 1.0));
    assert!(close(v("grouped_mrr"), 0.5));
    assert!(close(v("chunk_ndcg@10"), 1.0 / 4f64.log2()), "b.py's first chunk is fourth");
    assert!(close(v("file_ndcg@10"), 1.0 / 3f64.log2()), "b.py's row is second");
    assert!(close(v("file_recall@10"), 1.0) && close(v("file_mrr"), 0.5));
    // Nothing found: zeros, no panic.
    let none = grouped(&[0, 1], &[9], &["e.py".to_string()], path_of, |_| false, &[5]);
    assert!(none.0.iter().all(|(_, v)| *v == 0.0), "{none:?}");
    assert_eq!(ndcg(&[Some(1), Some(2)], 10), 1.0);
}
