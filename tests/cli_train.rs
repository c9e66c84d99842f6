//! The hidden training mode end to end on a tiny random model and a fixture git repository:
//! prepare a shard, train from it with validation, resume, and search with the result.
#[path = "../src/testkit.rs"]
mod testkit;

use assert_cmd::Command;
use std::path::Path;
use testkit::fixture;

fn coret(cache: &Path) -> Command {
    let mut cmd = Command::cargo_bin("coret-tui").unwrap();
    cmd.env("CORET_CACHE_DIR", cache).env_remove("CORET_MODEL");
    cmd
}

fn run_ok(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "stderr: {stderr}");
    stderr
}

/// The fixture's instances as a .jsonl file in its directory.
fn write_instances(fx: &testkit::Fixture) -> std::path::PathBuf {
    let path = fx.tmp.path().join("instances.jsonl");
    let lines: Vec<String> = fx.instances.iter().map(|i| serde_json::to_string(i).unwrap()).collect();
    std::fs::write(&path, lines.join("\n")).unwrap();
    path
}

#[test]
fn training_flags_are_hidden_from_help() {
    let out = Command::cargo_bin("coret-tui").unwrap().arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("--eval"));
    for flag in ["--train", "--negatives", "--prepare-shard", "--resume", "--tower-layers"] {
        assert!(!help.contains(flag), "{flag} shows in --help");
    }
}

#[test]
fn a_run_into_an_output_another_run_holds_is_refused_naming_it() {
    let fx = fixture();
    let tmp = fx.tmp.path();
    let (out, cache, shard) = (tmp.join("run"), tmp.join("cache"), tmp.join("missing.shard"));
    std::fs::create_dir_all(&out).unwrap();
    // What a running `--train --output run` holds for its whole life.
    let held = std::fs::File::create(out.join(".train.lock")).unwrap();
    held.try_lock().unwrap();
    let train = |cache: &Path| {
        let mut cmd = coret(cache);
        let o = cmd
            .arg("--train")
            .arg(&shard)
            .arg("--init")
            .arg(&fx.model)
            .arg("--output")
            .arg(&out)
            .output()
            .unwrap();
        (o.status.success(), String::from_utf8_lossy(&o.stderr).into_owned())
    };
    let (ok, stderr) = train(&cache);
    assert!(
        !ok && stderr.contains(&out.display().to_string()) && stderr.contains("another training run"),
        "{stderr}"
    );
    assert!(!stderr.contains("missing.shard"), "refused before reading anything: {stderr}");
    drop(held);
    let (ok, stderr) = train(&cache);
    assert!(!ok && !stderr.contains("another training run") && stderr.contains("missing.shard"), "{stderr}");
}

#[test]
fn prepare_train_resume_and_search_with_the_trained_model() {
    let fx = fixture();
    let root = fx.tmp.path();
    let cache = root.join("cache");
    let instances = write_instances(&fx);
    let shard = root.join("train.shard");
    let common = ["--max-len", "64", "--query-max-len", "32", "--device", "cpu"];

    let stderr = run_ok(
        coret(&cache)
            .arg("--train")
            .arg(&instances)
            .arg("--repos")
            .arg(&fx.repos)
            .arg("--init")
            .arg(&fx.model)
            .arg("--prepare-shard")
            .arg(&shard)
            .args(["--negatives", "4"])
            .args(common),
    );
    assert!(stderr.contains("-> 6 examples") && stderr.contains("1 without gold"), "{stderr}");
    assert!(stderr.contains("skipped 1 instances of acme/gone"), "{stderr}");

    let out = root.join("trained");
    let train = |extra: &[&str]| {
        let mut cmd = coret(&cache);
        cmd.arg("--train").arg(&shard).arg("--init").arg(&fx.model).arg("--output").arg(&out);
        cmd.arg("--val").arg(&instances).arg("--repos").arg(&fx.repos);
        cmd.args(["--val-candidates", "3", "--negatives", "4", "--batch", "2", "--lr", "1e-3"]);
        cmd.args(common).args(extra);
        run_ok(&mut cmd)
    };
    let stderr = train(&[]);
    assert!(stderr.contains("step 3 epoch 0") && stderr.contains("val @3 [candidates-3; n=6]"), "{stderr}");
    for file in ["config.json", "tokenizer.json", "model.safetensors", "checkpoint/state.json"] {
        assert!(out.join(file).is_file(), "{file} missing");
    }
    let log = std::fs::read_to_string(out.join("train-log.jsonl")).unwrap();
    assert_eq!(log.lines().filter(|l| l.contains(r#""event":"val""#)).count(), 2, "{log}");

    let stderr = train(&["--resume"]);
    assert!(stderr.contains("resuming from") && !stderr.contains("step 1 "), "{stderr}");

    let repo = fx.repos.join("acme+proj");
    let found = coret(&cache)
        .arg(&repo)
        .args(["--query", "clamp order wrong", "--retriever", "dense", "--json", "--device", "cpu"])
        .arg("--model")
        .arg(&out)
        .output()
        .unwrap();
    assert!(found.status.success(), "{}", String::from_utf8_lossy(&found.stderr));
    let v: serde_json::Value = serde_json::from_slice(&found.stdout).unwrap();
    assert!(v["results"]["dense"].as_array().is_some_and(|r| !r.is_empty()), "{v}");
}

#[test]
fn more_shards_join_the_first_once_each_and_must_match_it() {
    let fx = fixture();
    let root = fx.tmp.path();
    let cache = root.join("cache");
    let instances = write_instances(&fx);
    let prepare = |shard: &Path, extra: &[&str]| {
        let mut cmd = coret(&cache);
        cmd.arg("--train").arg(&instances).arg("--repos").arg(&fx.repos).arg("--init").arg(&fx.model);
        cmd.arg("--prepare-shard").arg(shard).args(["--negatives", "4", "--query-max-len", "32"]);
        cmd.args(["--device", "cpu"]).args(extra);
        run_ok(&mut cmd)
    };
    let (some, all, longer) = (root.join("some.shard"), root.join("all.shard"), root.join("longer.shard"));
    prepare(&some, &["--max-len", "64", "--limit", "3"]);
    prepare(&all, &["--max-len", "64"]);
    prepare(&longer, &["--max-len", "48"]);

    let joined = root.join("joined.shard");
    let join = |first: &Path, more: &Path| {
        let mut cmd = coret(&cache);
        cmd.arg("--train").arg(first).arg("--more-shards").arg(more).arg("--init").arg(&fx.model);
        cmd.arg("--prepare-shard").arg(&joined).args(["--max-len", "64", "--device", "cpu"]);
        cmd
    };
    let stderr = run_ok(&mut join(&some, &all));
    // `some` holds a few of the six; `all` adds the rest and nothing twice.
    assert!(stderr.contains("examples already in an earlier shard, skipped"), "{stderr}");
    assert!(stderr.contains("+ 1 more shard: 6 examples") && stderr.contains("wrote 6 examples"), "{stderr}");

    let out = join(&all, &longer).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("longer.shard"), "{stderr}");
}
