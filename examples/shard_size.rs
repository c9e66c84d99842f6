//! What a training shard weighs in each format: `cargo run --release --example shard_size -- SHARD…`.
//! Prints examples, distinct chunks against chunk references, and the bytes of format 2 (gzip,
//! chunks inline) and format 3 (zstd, each chunk once), written to a temporary folder.

use coret::train::shard::{chunk_counts, read_shard, write_shard, write_shard_v2};

fn main() -> anyhow::Result<()> {
    let tmp = tempfile::tempdir()?;
    let (mut v2_all, mut v3_all) = (0u64, 0u64);
    println!(
        "{:<40} {:>8} {:>8} {:>8} {:>10} {:>10} {:>6}",
        "shard", "examples", "chunks", "refs", "format 2", "format 3", "factor"
    );
    for path in std::env::args().skip(1) {
        let shard = read_shard(std::path::Path::new(&path))?;
        let (chunks, refs) = chunk_counts(&shard);
        let (p2, p3) = (tmp.path().join("2"), tmp.path().join("3"));
        write_shard_v2(&p2, &shard)?;
        write_shard(&p3, &shard)?;
        let (b2, b3) = (std::fs::metadata(&p2)?.len(), std::fs::metadata(&p3)?.len());
        v2_all += b2;
        v3_all += b3;
        let name = std::path::Path::new(&path)
            .file_name()
            .map_or(path.clone(), |n| n.to_string_lossy().into_owned());
        println!(
            "{name:<40} {:>8} {chunks:>8} {refs:>8} {b2:>10} {b3:>10} {:>6.2}",
            shard.examples.len(),
            b2 as f64 / b3 as f64
        );
    }
    println!(
        "{:<40} {:>8} {:>8} {:>8} {v2_all:>10} {v3_all:>10} {:>6.2}",
        "all",
        "",
        "",
        "",
        v2_all as f64 / v3_all.max(1) as f64
    );
    Ok(())
}
