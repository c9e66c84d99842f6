//! Indexing a repository's snapshots one after another, rebuilt each time against kept:
//! `cargo run --release --example snapshot_index -- INSTANCES.jsonl[.gz] MIRRORS [N]`.
//! For the first N instances (in file order, one repository), each base commit is read and
//! indexed twice: every blob from git and `RepoIndex::from_texts_with` (a fresh BM25 index, the
//! parses shared), then kept: `read_snapshot_with` (the new blobs only) and
//! `SnapshotIndexer::index` (one BM25 index, the changed files replaced). Prints the mean
//! seconds of each after the first commit (which reads and parses everything for both), and
//! checks that both rank the same top 20 for each instance's issue.

use std::time::Instant;

use coret::engine::{RepoIndex, SnapshotIndexer, SyntaxCache};
use coret::eval::instances::read_instances;
use coret::repo::git::{find_repo, read_snapshot, read_snapshot_with, BlobCache, Snapshot};
use coret::repo::source::{decode_source, is_source_path, DEFAULT_MAX_FILE_SIZE};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [file, mirrors, rest @ ..] = args.as_slice() else {
        anyhow::bail!("usage: snapshot_index INSTANCES.jsonl MIRRORS [N]");
    };
    let n: usize = rest.first().map_or(Ok(40), |s| s.parse())?;
    let (instances, _) = read_instances(std::path::Path::new(file))?;
    let instances = &instances[..n.min(instances.len())];
    let git = find_repo(std::path::Path::new(mirrors), &instances[0].repo).map_err(anyhow::Error::msg)?;
    let (mut syntax, mut kept, mut blobs) =
        (SyntaxCache::new(), SnapshotIndexer::new(), BlobCache::default());
    let mut secs = [0.0f64; 4]; // git fresh, index fresh, git kept, index kept
    let mut differ = 0;
    let texts = |snap: Snapshot| -> Vec<(String, String)> {
        let files = snap.files.into_iter();
        files.filter_map(|(p, b)| decode_source(b, DEFAULT_MAX_FILE_SIZE).ok().map(|t| (p, t))).collect()
    };
    for (i, inst) in instances.iter().enumerate() {
        let t0 = Instant::now();
        let fresh_texts = texts(read_snapshot(&git, &inst.base_commit, is_source_path)?);
        let t1 = Instant::now();
        let fresh = RepoIndex::from_texts_with("fresh".into(), &fresh_texts, &mut syntax, true)?;
        let t2 = Instant::now();
        let kept_texts = texts(read_snapshot_with(&git, &inst.base_commit, is_source_path, &mut blobs)?);
        let t3 = Instant::now();
        let index = kept.index("kept".into(), &kept_texts, true)?;
        let t4 = Instant::now();
        if i > 0 {
            for (s, (a, b)) in secs.iter_mut().zip([(t0, t1), (t1, t2), (t2, t3), (t3, t4)]) {
                *s += (b - a).as_secs_f64();
            }
        }
        let top = |x: &RepoIndex| -> anyhow::Result<Vec<u32>> {
            Ok(x.search_bm25(&inst.problem_statement, 20)?.iter().map(|h| h.chunk).collect())
        };
        differ += usize::from(top(&fresh)? != top(&index)?);
    }
    let m = (instances.len().max(2) - 1) as f64;
    let [gf, xf, gk, xk] = secs.map(|s| s / m);
    println!(
        "{}: {} snapshots; seconds per snapshot after the first: fresh {:.3} (git {gf:.3}, index {xf:.3}), \
         kept {:.3} (git {gk:.3}, index {xk:.3}); top 20 differs for {differ}",
        instances[0].repo,
        instances.len(),
        gf + xf,
        gk + xk
    );
    Ok(())
}
