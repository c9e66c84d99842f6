//! `scripts/gpu/plan.sh --rehearse` (#54): the GPU plan, from preparing its inputs to the files
//! a lease sends back, run on this CPU with the tiny model, so that it cannot rot between the
//! rare sessions that get a GPU.
#[path = "../src/testkit.rs"]
mod testkit;

use std::process::Command;

#[test]
fn the_gpu_plan_rehearses_end_to_end_on_the_cpu() {
    let tmp = tempfile::tempdir().unwrap();
    let model = tmp.path().join("model");
    testkit::write_tiny_bert(
        &model,
        &[
            "cart", "price", "stock", "total", "name", "store", "add", "remove", "items", "def", "return",
            "[DOWN]",
        ],
    );
    let run = Command::new("bash")
        .arg("scripts/gpu/plan.sh")
        .arg("--rehearse")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("CORET_TUI", env!("CARGO_BIN_EXE_coret-tui"))
        .env("CORET_MODEL", &model)
        .env("CORET_CACHE_DIR", tmp.path().join("cache"))
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    let passed =
        stderr.lines().find(|l| l.starts_with("rehearse: passed")).unwrap_or_else(|| panic!("{stderr}"));
    // Several uploads, the encoder trained and evaluated, each stage's files back.
    assert!(!passed.contains("passed: 1 uploads"), "{passed}");
    assert!(passed.contains("stages done: enc"), "{passed}");
    for file in ["enc.tar.gz", "eval-enc.tar.gz", "plan.log"] {
        assert!(passed.contains(file), "{passed}");
    }
    // The multi plan (#60): a cold run and a warm one from the first's adapters.
    assert!(passed.contains("multi: ") && passed.ends_with("stages done: enc encw"), "{passed}");
    // The status told the 5k plan apart from what the rehearsal prepared.
    assert!(stderr.contains("5k: not ready (mined examples 8 of 5000)"), "{stderr}");
}
