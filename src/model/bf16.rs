//! Linear layers with bf16 inputs and f32 sums, for CPUs with AVX-512 BF16.
//!
//! `vdpbf16ps` multiplies pairs of bf16 values and adds both products to an f32 lane: twice
//! the multiply-adds of an f32 FMA per instruction, and half the bytes of weights to read.
//! The encoder's matrix products are most of its time (docs/RESULTS.md "Speed and memory"), so
//! where the CPU has the instruction, `--precision bf16` runs them here. Inputs lose their
//! mantissa below 8 bits; sums stay f32 (the vectors' cosine to f32 ones is tested).
//!
//! Layout: the weight matrix `W` [k, n] is packed once into panels of [`PANEL`] columns;
//! within a panel, each pair of rows (2i, 2i + 1) is stored column by column as
//! `W[2i][j], W[2i+1][j]`, which is the operand `vdpbf16ps` wants against a broadcast pair of
//! the input row's values `x[2i], x[2i+1]`. A kernel keeps [`ROWS`] × [`PANEL`] sums in
//! registers (24 of the 32) and walks k once.

use rayon::prelude::*;

pub use super::tiles::PANEL;
/// Input rows per kernel call.
const ROWS: usize = 12;

/// Whether this CPU runs [`PackedBf16`] products.
pub fn supported() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512bf16")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether a [k, n] weight matrix fits the panels: even k, n a multiple of [`PANEL`].
pub fn fits(k: usize, n: usize) -> bool {
    k.is_multiple_of(2) && n.is_multiple_of(PANEL)
}

/// `x ↦ x·W + b` with `W` packed as described in the module's comment.
pub struct PackedBf16 {
    k: usize,
    n: usize,
    panels: Vec<u16>,
    bias: Vec<f32>,
}

impl PackedBf16 {
    /// Packs `w` ([k, n], row-major) and `bias` ([n]). `None` where the CPU lacks the
    /// instruction or the shape does not fit the panels (odd k, n not a multiple of
    /// [`PANEL`]): the caller keeps its f32 product.
    pub fn new(w: &[f32], bias: &[f32], k: usize, n: usize) -> Option<PackedBf16> {
        if !supported() || !fits(k, n) || w.len() != k * n || bias.len() != n {
            return None;
        }
        let mut panels = Vec::with_capacity(k * n);
        for p in 0..n / PANEL {
            for pair in 0..k / 2 {
                for j in p * PANEL..(p + 1) * PANEL {
                    panels.push(to_bf16(w[2 * pair * n + j]));
                    panels.push(to_bf16(w[(2 * pair + 1) * n + j]));
                }
            }
        }
        Some(PackedBf16 { k, n, panels, bias: bias.to_vec() })
    }

    /// Input width.
    pub fn k(&self) -> usize {
        self.k
    }

    /// Output width.
    pub fn n(&self) -> usize {
        self.n
    }

    /// `x·W + b` for `x` of `rows` × k (row-major); rows × n out.
    pub fn forward(&self, x: &[f32]) -> Vec<f32> {
        assert_eq!(x.len() % self.k, 0, "input width is not {}", self.k);
        let rows = x.len() / self.k;
        let mut xb = vec![0u16; x.len()];
        xb.par_chunks_mut(self.k * ROWS).zip(x.par_chunks(self.k * ROWS)).for_each(|(dst, src)| {
            // SAFETY: `new` only succeeds where the CPU has AVX-512F and AVX-512 BF16.
            unsafe { round_to_bf16(src, dst) }
        });
        super::tiles::fill(rows, self.n, ROWS, |r0, h, p, c| {
            let b = &self.panels[p * self.k * PANEL..(p + 1) * self.k * PANEL];
            let a = &xb[r0 * self.k..(r0 + h) * self.k];
            let bias = &self.bias[p * PANEL..(p + 1) * PANEL];
            // SAFETY: the CPU has the instructions (see `new`); `c` is the tile of rows
            // r0..r0 + h and panel p's columns; `a`, `b` and `bias` hold what the kernel reads.
            unsafe { kernel(h, a, self.k, b, bias, c, self.n) };
        })
    }
}

/// f32 → bf16, rounded to nearest even (as `vcvtne2ps2bf16` does).
fn to_bf16(x: f32) -> u16 {
    let bits = x.to_bits();
    (bits.wrapping_add(0x7fff + ((bits >> 16) & 1)) >> 16) as u16
}

/// bf16 → f32 (exact).
#[cfg(test)]
fn from_bf16(x: u16) -> f32 {
    f32::from_bits((x as u32) << 16)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bf16")]
unsafe fn round_to_bf16(src: &[f32], dst: &mut [u16]) {
    use std::arch::x86_64::*;
    let mut i = 0;
    while i + 32 <= src.len() {
        let lo = _mm512_loadu_ps(src.as_ptr().add(i));
        let hi = _mm512_loadu_ps(src.as_ptr().add(i + 16));
        let packed: __m512i = std::mem::transmute(_mm512_cvtne2ps_pbh(hi, lo));
        _mm512_storeu_si512(dst.as_mut_ptr().add(i).cast(), packed);
        i += 32;
    }
    for (d, &s) in dst[i..].iter_mut().zip(&src[i..]) {
        *d = to_bf16(s);
    }
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn round_to_bf16(_: &[f32], _: &mut [u16]) {
    unreachable!("bf16 products need x86-64")
}

/// `h` (≤ [`ROWS`]) rows of `a` (bf16, row stride `k`) times one packed panel `b`, plus
/// `bias`, into `c` (row stride `ldc`).
///
/// # Safety
/// AVX-512F and AVX-512 BF16; `c` valid for `h` rows of [`PANEL`] values.
unsafe fn kernel(h: usize, a: &[u16], k: usize, b: &[u16], bias: &[f32], c: *mut f32, ldc: usize) {
    macro_rules! rows {
        ($($r:literal)*) => {
            match h {
                $($r => kernel_rows::<$r>(a, k, b, bias, c, ldc),)*
                _ => unreachable!("{h} rows"),
            }
        };
    }
    rows!(1 2 3 4 5 6 7 8 9 10 11 12)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bf16")]
unsafe fn kernel_rows<const R: usize>(a: &[u16], k: usize, b: &[u16], bias: &[f32], c: *mut f32, ldc: usize) {
    use std::arch::x86_64::*;
    debug_assert!(a.len() >= R * k && b.len() >= k * PANEL && bias.len() >= PANEL);
    let bias0 = _mm512_loadu_ps(bias.as_ptr());
    let bias1 = _mm512_loadu_ps(bias.as_ptr().add(16));
    let mut acc = [[bias0, bias1]; R];
    let (a, mut bp) = (a.as_ptr(), b.as_ptr());
    for pair in 0..k / 2 {
        let b0: __m512bh = std::mem::transmute(_mm512_loadu_si512(bp.cast()));
        let b1: __m512bh = std::mem::transmute(_mm512_loadu_si512(bp.add(32).cast()));
        for (r, acc) in acc.iter_mut().enumerate() {
            let x = a.add(r * k + 2 * pair).cast::<i32>().read_unaligned();
            let x: __m512bh = std::mem::transmute(_mm512_set1_epi32(x));
            acc[0] = _mm512_dpbf16_ps(acc[0], x, b0);
            acc[1] = _mm512_dpbf16_ps(acc[1], x, b1);
        }
        bp = bp.add(2 * PANEL);
    }
    for (r, acc) in acc.iter().enumerate() {
        _mm512_storeu_ps(c.add(r * ldc), acc[0]);
        _mm512_storeu_ps(c.add(r * ldc + 16), acc[1]);
    }
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn kernel_rows<const R: usize>(_: &[u16], _: usize, _: &[u16], _: &[f32], _: *mut f32, _: usize) {
    unreachable!("bf16 products need x86-64")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::noise;

    #[test]
    fn rounding_to_bf16_is_to_nearest_even() {
        assert_eq!(from_bf16(to_bf16(1.0)), 1.0);
        assert_eq!(from_bf16(to_bf16(-2.5)), -2.5);
        // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: the even neighbour (1) wins.
        assert_eq!(from_bf16(to_bf16(1.0 + 1.0 / 256.0)), 1.0);
        assert_eq!(from_bf16(to_bf16(1.0 + 3.0 / 512.0)), 1.0 + 1.0 / 128.0);
        let x = 0.123_456_78_f32;
        assert!((from_bf16(to_bf16(x)) - x).abs() <= x * 2f32.powi(-8));
    }

    #[test]
    fn packed_product_equals_the_product_of_rounded_inputs() {
        if !supported() {
            eprintln!("skipped: this CPU has no AVX-512 BF16");
            return;
        }
        // Every tail of rows (1..=12 in the last block) and several panels per task.
        for (rows, k, n) in [(1, 2, 32), (13, 6, 64), (29, 384, 160), (12, 40, 288)] {
            let (x, w, bias) = (noise(rows * k, 1), noise(k * n, 2), noise(n, 3));
            let out = PackedBf16::new(&w, &bias, k, n).unwrap().forward(&x);
            assert_eq!(out.len(), rows * n);
            let r = |v: f32| from_bf16(to_bf16(v)) as f64;
            for i in 0..rows {
                for j in 0..n {
                    let want: f64 =
                        bias[j] as f64 + (0..k).map(|t| r(x[i * k + t]) * r(w[t * n + j])).sum::<f64>();
                    let got = out[i * n + j] as f64;
                    assert!(
                        (got - want).abs() < 1e-4,
                        "rows {rows} k {k} n {n} at ({i}, {j}): {got} vs {want}"
                    );
                }
            }
        }
    }

    #[test]
    fn shapes_the_panels_cannot_hold_are_refused() {
        let w = noise(3 * 32, 4);
        assert!(PackedBf16::new(&w, &[0.0; 32], 3, 32).is_none(), "odd k");
        let w = noise(2 * 48, 4);
        assert!(PackedBf16::new(&w, &[0.0; 48], 2, 48).is_none(), "n not a multiple of 32");
    }
}
