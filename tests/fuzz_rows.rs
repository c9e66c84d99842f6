//! Every row's chunker and call resolver on mutated fixtures (`tests/support/fuzz.rs`; the
//! scaled run is `scripts/test/fuzz-rows.sh`).

// The example uses the rest (traced runs, the kept-input limit).
#[allow(dead_code)]
#[path = "support/fuzz.rs"]
mod fuzz;

/// A hundred mutated fixtures per row (the scaled run is `scripts/test/fuzz-rows.sh`): no panic,
/// no chunk or call outside its file.
#[test]
fn every_row_survives_mutated_fixtures() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for (lang, seeds) in fuzz::fixture_seeds(root) {
        assert!(!seeds.is_empty(), "{lang:?} has a fixture");
        let texts: Vec<String> = seeds.iter().map(|(_, t)| t.clone()).collect();
        let report = fuzz::run(&seeds[0].0, &texts, 100, 7);
        assert_eq!(report.inputs, 100);
        assert_eq!(report.failures, 0, "{lang:?}: {:?}", report.kept.first());
    }
}
