//! BERT's self-attention on the CPU, a block of query rows at a time.
//!
//! Written as three tensor operations (Q·Kᵀ, softmax, ·V), attention over a 512-token input
//! writes, copies and rereads 12 heads × 512² scores per layer (12.6 MB, far beyond the
//! caches): the memory traffic cost more than the arithmetic. Here each task takes
//! [`BLOCK`] query rows of one sequence and, head by head, computes their scores (a few
//! kilobytes, kept in cache), their softmax and their share of the context, straight from
//! the fused Q/K/V product's layout. Padding keys (a mask's trailing 0s) get no weight, as
//! in Hugging Face's BERT, so they are not computed at all.

use candle_core::{CpuStorage, CustomOp1, Layout, Shape, Tensor};
use rayon::prelude::*;

use super::cpu::contiguous_f32;
use crate::simd::fold;

/// Query rows per task.
const BLOCK: usize = 16;
/// Scores computed side by side: eight AVX-512 registers, enough independent sums to keep
/// both FMA units busy.
const STRIP: usize = 128;

/// Self-attention over the fused product `[B × L, 3 × hidden]` (Q pre-scaled by 1/√d, then K,
/// then V; head h at columns h × d.. of each): the context `[B × L, hidden]`.
pub struct Attention {
    /// Tokens (non-padding keys) per sequence.
    lens: Vec<usize>,
    heads: usize,
}

impl Attention {
    /// From a [B, L] mask of 1s (tokens) then 0s (padding), as `pad_batch` makes them; any
    /// other mask is an error.
    pub fn new(mask: &Tensor, heads: usize) -> candle_core::Result<Self> {
        let rows = mask.to_vec2::<u32>()?;
        let mut lens = Vec::with_capacity(rows.len());
        for row in rows {
            let n = row.iter().take_while(|&&m| m != 0).count();
            if row[n..].iter().any(|&m| m != 0) {
                candle_core::bail!("attention mask with a token after padding");
            }
            lens.push(n.max(1));
        }
        Ok(Attention { lens, heads })
    }

    /// The context for `qkv` (row-major `[B × L, 3 × hidden]`).
    pub fn context(&self, qkv: &[f32], len: usize) -> Vec<f32> {
        let (b, heads) = (self.lens.len(), self.heads);
        let hidden = qkv.len() / (b * len * 3);
        let head = hidden / heads;
        // Per sequence and head: K transposed [head, L] and V [L, head], contiguous, so the
        // inner loops read consecutive floats.
        let mut kt = vec![0f32; b * len * hidden];
        let mut vs = vec![0f32; b * len * hidden];
        kt.par_chunks_mut(head * len).zip(vs.par_chunks_mut(len * head)).enumerate().for_each(
            |(sh, (kt, vs))| {
                let (s, h) = (sh / heads, sh % heads);
                for i in 0..len {
                    let row = &qkv[(s * len + i) * 3 * hidden..(s * len + i + 1) * 3 * hidden];
                    let k = &row[hidden + h * head..hidden + (h + 1) * head];
                    for (d, &x) in k.iter().enumerate() {
                        kt[d * len + i] = x;
                    }
                    vs[i * head..(i + 1) * head].copy_from_slice(&row[2 * hidden + h * head..][..head]);
                }
            },
        );
        let mut out = vec![0f32; b * len * hidden];
        out.par_chunks_mut(len * hidden).enumerate().for_each(|(s, seq)| {
            let keys = self.lens[s];
            seq.par_chunks_mut(BLOCK * hidden).enumerate().for_each(|(blk, ctx)| {
                let mut scores = vec![0f32; BLOCK * keys];
                for h in 0..heads {
                    let at = (s * heads + h) * len * head;
                    let block = Block {
                        qkv,
                        first: s * len + blk * BLOCK,
                        rows: ctx.len() / hidden,
                        hidden,
                        head: h * head..(h + 1) * head,
                        kt: &kt[at..at + head * len],
                        v: &vs[at..at + len * head],
                        len,
                        keys,
                    };
                    attend(&block, &mut scores, ctx);
                }
            });
        });
        out
    }
}

impl CustomOp1 for Attention {
    fn name(&self) -> &'static str {
        "coret-attention"
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        let qkv = contiguous_f32(self.name(), storage, layout)?;
        let (rows, width) = layout.shape().dims2()?;
        let b = self.lens.len();
        if b == 0 || rows == 0 || !rows.is_multiple_of(b) || !width.is_multiple_of(3 * self.heads) {
            candle_core::bail!(
                "{}: input {rows} × {width} for {b} sequences of {} heads",
                self.name(),
                self.heads
            );
        }
        let out = self.context(qkv, rows / b);
        Ok((CpuStorage::F32(out), Shape::from((rows, width / 3))))
    }
}

/// One head's work for a block of query rows.
struct Block<'a> {
    qkv: &'a [f32],
    /// The block's first row in `qkv`.
    first: usize,
    rows: usize,
    hidden: usize,
    /// The head's columns within Q (and within the context).
    head: std::ops::Range<usize>,
    /// K transposed, [head, len].
    kt: &'a [f32],
    /// V, [len, head].
    v: &'a [f32],
    len: usize,
    /// Keys that are tokens, not padding.
    keys: usize,
}

vectorised! {
    /// For each row of the block: scores against the first `keys` keys, softmax, and the
    /// weighted sum of their values into the row's head columns of `ctx`. Common head sizes
    /// get loops of fixed length, whose sums the compiler keeps in registers.
    fn attend(b: &Block, scores: &mut [f32], ctx: &mut [f32]) {
        match b.head.len() {
            32 => rows::<32>(b, scores, ctx),
            64 => rows::<64>(b, scores, ctx),
            _ => rows_any(b, scores, ctx),
        }
    }
}

/// Rows four at a time: each key and value read serves four rows, which halves the traffic
/// from the caches that bounds this loop; the rows left over go one at a time.
#[inline(always)]
fn rows<const D: usize>(b: &Block, scores: &mut [f32], ctx: &mut [f32]) {
    let mut r = 0;
    while r + 4 <= b.rows {
        four_rows::<D>(b, r, scores, ctx);
        r += 4;
    }
    while r < b.rows {
        one_row::<D>(b, r, scores, ctx);
        r += 1;
    }
}

/// Keys per strip when four rows share it: 4 × 4 AVX-512 registers of sums.
const STRIP4: usize = 64;

/// Rows `r..r + 4`.
#[inline(always)]
fn four_rows<const D: usize>(b: &Block, r: usize, scores: &mut [f32], ctx: &mut [f32]) {
    let q = |u: usize| -> &[f32; D] {
        b.qkv[(b.first + r + u) * 3 * b.hidden..][b.head.clone()].try_into().unwrap()
    };
    let (q0, q1, q2, q3) = (q(0), q(1), q(2), q(3));
    let mut rows = scores[r * b.keys..(r + 4) * b.keys].chunks_exact_mut(b.keys);
    let mut next = || rows.next().unwrap();
    let (w0, w1, w2, w3) = (next(), next(), next(), next());
    let full = b.keys - b.keys % STRIP4;
    for j in (0..full).step_by(STRIP4) {
        let (mut s0, mut s1, mut s2, mut s3) =
            ([0f32; STRIP4], [0f32; STRIP4], [0f32; STRIP4], [0f32; STRIP4]);
        for t in 0..D {
            let k: &[f32; STRIP4] = b.kt[t * b.len + j..][..STRIP4].try_into().unwrap();
            let (x0, x1, x2, x3) = (q0[t], q1[t], q2[t], q3[t]);
            for i in 0..STRIP4 {
                s0[i] = x0.mul_add(k[i], s0[i]);
                s1[i] = x1.mul_add(k[i], s1[i]);
                s2[i] = x2.mul_add(k[i], s2[i]);
                s3[i] = x3.mul_add(k[i], s3[i]);
            }
        }
        w0[j..j + STRIP4].copy_from_slice(&s0);
        w1[j..j + STRIP4].copy_from_slice(&s1);
        w2[j..j + STRIP4].copy_from_slice(&s2);
        w3[j..j + STRIP4].copy_from_slice(&s3);
    }
    for (q, w) in [(q0, &mut *w0), (q1, &mut *w1), (q2, &mut *w2), (q3, &mut *w3)] {
        scores_tail(b, q, full, w);
        softmax_row(w);
    }
    let (mut a0, mut a1, mut a2, mut a3) = ([0f32; D], [0f32; D], [0f32; D], [0f32; D]);
    for j in 0..b.keys {
        let v: &[f32; D] = b.v[j * D..(j + 1) * D].try_into().unwrap();
        let (p0, p1, p2, p3) = (w0[j], w1[j], w2[j], w3[j]);
        for i in 0..D {
            a0[i] = p0.mul_add(v[i], a0[i]);
            a1[i] = p1.mul_add(v[i], a1[i]);
            a2[i] = p2.mul_add(v[i], a2[i]);
            a3[i] = p3.mul_add(v[i], a3[i]);
        }
    }
    for (u, a) in [a0, a1, a2, a3].iter().enumerate() {
        ctx[(r + u) * b.hidden..][b.head.clone()].copy_from_slice(a);
    }
}

/// Row `r` alone (the block's last rows short of four).
#[inline(always)]
fn one_row<const D: usize>(b: &Block, r: usize, scores: &mut [f32], ctx: &mut [f32]) {
    let q: &[f32; D] = b.qkv[(b.first + r) * 3 * b.hidden..][b.head.clone()].try_into().unwrap();
    let row = &mut scores[r * b.keys..(r + 1) * b.keys];
    // Full strips: [`STRIP`] sums in registers across the head's D products.
    let full = b.keys - b.keys % STRIP;
    for j in (0..full).step_by(STRIP) {
        let mut acc = [0f32; STRIP];
        for (t, &qt) in q.iter().enumerate() {
            let k: &[f32; STRIP] = b.kt[t * b.len + j..][..STRIP].try_into().unwrap();
            for i in 0..STRIP {
                acc[i] = qt.mul_add(k[i], acc[i]);
            }
        }
        row[j..j + STRIP].copy_from_slice(&acc);
    }
    scores_tail(b, q, full, row);
    softmax_row(row);
    // One running sum over the keys in order, as `four_rows` keeps for each of its rows: a
    // row's context must not depend on whether its block left it over (issue 73: a chunk
    // alone and the same chunk padded in a batch then got other bits). Four interleaved sums
    // were faster here, for at most three rows a block.
    let mut a = [0f32; D];
    for (j, &p) in row.iter().enumerate() {
        let v: &[f32; D] = b.v[j * D..(j + 1) * D].try_into().unwrap();
        for i in 0..D {
            a[i] = p.mul_add(v[i], a[i]);
        }
    }
    ctx[r * b.hidden..][b.head.clone()].copy_from_slice(&a);
}

/// Scores of keys `from..` (the part of a row short of a full strip).
#[inline(always)]
fn scores_tail(b: &Block, q: &[f32], from: usize, row: &mut [f32]) {
    let tail = &mut row[from..];
    tail.fill(0.0);
    for (t, &qt) in q.iter().enumerate() {
        let k = &b.kt[t * b.len + from..t * b.len + b.keys];
        for (a, &kv) in tail.iter_mut().zip(k) {
            *a = qt.mul_add(kv, *a);
        }
    }
}

/// [`rows`] for any head size.
#[inline(always)]
fn rows_any(b: &Block, scores: &mut [f32], ctx: &mut [f32]) {
    let d = b.head.len();
    for r in 0..b.rows {
        let q = &b.qkv[(b.first + r) * 3 * b.hidden..][b.head.clone()];
        let row = &mut scores[r * b.keys..(r + 1) * b.keys];
        scores_tail(b, q, 0, row);
        softmax_row(row);
        let out = &mut ctx[r * b.hidden..][b.head.clone()];
        out.fill(0.0);
        for (p, v) in row.iter().zip(b.v.chunks_exact(d)) {
            for (o, &x) in out.iter_mut().zip(v) {
                *o = p.mul_add(x, *o);
            }
        }
    }
}

/// `row ← softmax(row)` in place (reductions by lanes, so they vectorise). Training's fused
/// softmax (`graph_ops`) uses it too.
#[inline(always)]
pub(super) fn softmax_row(row: &mut [f32]) {
    let max = fold(row, f32::NEG_INFINITY, f32::max);
    row.iter_mut().for_each(|x| *x = exp(*x - max));
    let inv = 1.0 / fold(row, 0.0, |a, b| a + b);
    row.iter_mut().for_each(|x| *x *= inv);
}

/// e^x for x ≤ 0 (softmax's range), branch-free: x = n·ln2 + r with |r| ≤ ln2/2, e^r by a
/// degree-6 polynomial (Cephes' `expf`), 2^n put straight into the exponent bits. Within
/// 2 ulp of `libm`'s (tested); 0 below the smallest normal f32.
#[inline(always)]
#[allow(clippy::excessive_precision)]
pub fn exp(x: f32) -> f32 {
    let tiny = x < -87.0;
    let x = x.max(-87.0);
    let n = (x * std::f32::consts::LOG2_E).round();
    let r = n.mul_add(-0.693_359_375, x);
    let r = n.mul_add(2.121_944_4e-4, r);
    let mut p = r.mul_add(1.987_569_1e-4, 1.398_199_9e-3);
    p = r.mul_add(p, 8.333_452e-3);
    p = r.mul_add(p, 4.166_579_6e-2);
    p = r.mul_add(p, 1.666_666_5e-1);
    p = r.mul_add(p, 5.000_000_1e-1);
    let e = (r * r).mul_add(p, r + 1.0);
    let scale = f32::from_bits(((n as i32 + 127) << 23) as u32);
    if tiny {
        0.0
    } else {
        e * scale
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::noise;
    use candle_core::Device;

    /// Attention as written in the paper, in f64, over the first `keys` keys.
    fn naive(qkv: &[f32], s: usize, len: usize, keys: usize, hidden: usize, heads: usize) -> Vec<f64> {
        let d = hidden / heads;
        let at = |i: usize, col: usize| qkv[(s * len + i) * 3 * hidden + col] as f64;
        let mut out = vec![0f64; len * hidden];
        for h in 0..heads {
            for i in 0..len {
                let scores: Vec<f64> = (0..keys)
                    .map(|j| (0..d).map(|t| at(i, h * d + t) * at(j, hidden + h * d + t)).sum())
                    .collect();
                let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let e: Vec<f64> = scores.iter().map(|x| (x - max).exp()).collect();
                let z: f64 = e.iter().sum();
                for t in 0..d {
                    out[i * hidden + h * d + t] =
                        (0..keys).map(|j| e[j] / z * at(j, 2 * hidden + h * d + t)).sum::<f64>();
                }
            }
        }
        out
    }

    #[test]
    fn blocks_of_rows_equal_attention_as_written_and_padding_gets_no_weight() {
        // Lengths across the block (16) and strip (128) boundaries, head sizes with fixed loops
        // (32, 64) and without; the second sequence padded.
        for (len, pad, heads, hidden) in
            [(5, 2, 2, 8), (70, 3, 3, 12), (33, 20, 1, 4), (150, 7, 2, 64), (131, 0, 1, 64)]
        {
            let qkv: Vec<f32> = noise(2 * len * 3 * hidden, len as u64).iter().map(|x| 4.0 * x).collect();
            let mask: Vec<u32> = (0..2 * len).map(|i| u32::from(i < len || i - len < len - pad)).collect();
            let mask = Tensor::from_vec(mask, (2, len), &Device::Cpu).unwrap();
            let op = Attention::new(&mask, heads).unwrap();
            let got = op.context(&qkv, len);
            for (s, keys) in [(0, len), (1, len - pad)] {
                let want = naive(&qkv, s, len, keys, hidden, heads);
                for (i, w) in want.iter().enumerate() {
                    let g = got[s * len * hidden + i] as f64;
                    assert!((g - w).abs() < 1e-5, "len {len} sequence {s} value {i}: {g} vs {w}");
                }
            }
        }
    }

    #[test]
    fn a_token_after_padding_is_refused() {
        let gap = Tensor::new(&[[1u32, 0, 1]], &Device::Cpu).unwrap();
        assert!(Attention::new(&gap, 1).is_err());
    }

    #[test]
    fn exp_is_within_two_ulps_of_libm_over_softmax_range() {
        for i in 0..=870_000 {
            let x = -(i as f32) * 1e-4;
            let (got, want) = (exp(x), libm::expf(x));
            let ulp = (want.to_bits() as i64 - got.to_bits() as i64).abs();
            assert!(ulp <= 2, "exp({x}) = {got}, libm {want}");
        }
        assert_eq!(exp(-100.0), 0.0);
        assert_eq!(exp(f32::MIN), 0.0);
    }
}
