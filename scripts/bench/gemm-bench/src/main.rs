//! The encoder's matrix shapes through gemm 0.19, with (`--features v4`) and without its AVX-512
//! kernels: the A/B behind keeping `x86-v4` (docs/RESULTS.md "Speed and memory"). Run:
//! `cargo run --release --manifest-path scripts/bench/gemm-bench/Cargo.toml [--features v4]`.
use std::time::Instant;
fn main() {
    // BERT-MiniLM shapes: tokens x 384 times 384 x 1536 (FFN up), 1536 x 384 (down), 384x384 (QKV)
    let shapes = [(4096usize, 384usize, 1536usize), (4096, 1536, 384), (4096, 384, 384)];
    let mut total = 0.0;
    let mut checksum = 0f64;
    for &(m, k, n) in &shapes {
        let a: Vec<f32> = (0..m * k).map(|i| ((i * 7 % 13) as f32 - 6.0) / 13.0).collect();
        let b: Vec<f32> = (0..k * n).map(|i| ((i * 5 % 11) as f32 - 5.0) / 11.0).collect();
        let mut c = vec![0f32; m * n];
        let reps = 10;
        let t = Instant::now();
        for _ in 0..reps {
            unsafe {
                gemm::gemm(
                    m,
                    n,
                    k,
                    c.as_mut_ptr(),
                    1,
                    n as isize,
                    false,
                    a.as_ptr(),
                    1,
                    k as isize,
                    b.as_ptr(),
                    1,
                    n as isize,
                    0.0f32,
                    1.0f32,
                    false,
                    false,
                    false,
                    gemm::Parallelism::Rayon(2),
                );
            }
        }
        let s = t.elapsed().as_secs_f64() / reps as f64;
        total += s;
        checksum += c.iter().map(|&x| x as f64).sum::<f64>();
        println!("{m}x{k}x{n}: {:.2} ms, {:.1} GFLOP/s", s * 1e3, 2.0 * (m * k * n) as f64 / s / 1e9);
    }
    println!("total {:.2} ms checksum {checksum:.6}", total * 1e3);
}
