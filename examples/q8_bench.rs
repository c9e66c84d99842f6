//! The encoder's matrix products in f32 (candle's CPU matmul, gemm) and in int8 (`Q8_0`
//! weights through candle's `QMatMul`, activations quantised on the fly): the measurement
//! behind keeping the CPU encoder in f32 (docs/RESULTS.md "Speed and memory"). Run:
//! `cargo run --release --example q8_bench`.
use candle_core::quantized::{GgmlDType, QMatMul, QTensor};
use candle_core::{Device, Module, Tensor};
use std::time::Instant;

fn main() -> candle_core::Result<()> {
    let dev = Device::Cpu;
    // all-MiniLM-L6-v2 per layer, 32 sequences of 128 tokens: QKV and output (384 -> 384),
    // FFN up (384 -> 1536) and down (1536 -> 384).
    // (m, k, n, products of this shape per layer)
    let shapes = [(4096usize, 384usize, 384usize, 4.0), (4096, 384, 1536, 1.0), (4096, 1536, 384, 1.0)];
    let (mut f32_total, mut q8_total) = (0.0, 0.0);
    for &(m, k, n, per_layer) in &shapes {
        let x = Tensor::randn(0f32, 1.0, (m, k), &dev)?;
        let w = (Tensor::randn(0f32, 1.0, (n, k), &dev)? * 0.05)?;
        let q = QMatMul::from_qtensor(QTensor::quantize(&w, GgmlDType::Q8_0)?)?;
        let wt = w.t()?;
        let reference = x.matmul(&wt)?;
        let quantised = q.forward(&x)?;
        let err = ((&reference - &quantised)?.sqr()?.sum_all()?.to_scalar::<f32>()?
            / reference.sqr()?.sum_all()?.to_scalar::<f32>()?)
        .sqrt();
        let time = |f: &dyn Fn() -> candle_core::Result<Tensor>| -> candle_core::Result<f64> {
            f()?; // warm-up (the int8 path packs its weights on first use)
            let reps = 10;
            let t = Instant::now();
            for _ in 0..reps {
                f()?;
            }
            Ok(t.elapsed().as_secs_f64() / reps as f64)
        };
        let f = time(&|| x.matmul(&wt))?;
        let i8 = time(&|| q.forward(&x))?;
        f32_total += f * per_layer;
        q8_total += i8 * per_layer;
        println!(
            "{m}x{k}x{n}: f32 {:.1} ms ({:.0} GFLOP/s), q8_0 {:.1} ms ({:.2}x f32's time), relative error {err:.4}",
            f * 1e3,
            2.0 * (m * k * n) as f64 / f / 1e9,
            i8 * 1e3,
            i8 / f
        );
    }
    println!("one layer's products: f32 {:.1} ms, q8_0 {:.1} ms", f32_total * 1e3, q8_total * 1e3);
    Ok(())
}
