//! Linear layers with int8 products and i32 sums, for CPUs with AVX-512 VNNI.
//!
//! `vpdpbusd` multiplies four unsigned bytes by four signed bytes and adds the four products
//! to an i32 lane: four times an f32 FMA's multiply-adds per instruction, a quarter of the
//! weights' bytes to read. The encoder's linear layers are most of its time, so
//! `--precision int8` runs them here; softmax, layer norm, GELU and pooling stay f32.
//!
//! Quantisation: the weights per output column once at load (symmetric, scale = max |w| / 127);
//! the inputs at run time per row and per [`GROUP`] consecutive values of it (symmetric, scale
//! = max |x| / 127 over the group), so that one large channel coarsens its group only; and,
//! where the layer's inputs were measured on calibration texts, each input channel c is first
//! divided by `s_c = max|x_c|^α / max|w_c|^(1-α)` and the weights' row c multiplied by it
//! (SmoothQuant, α = [`SMOOTHING`]): the product is the same, the inputs' outlier channels
//! are tamed and the weights take some of their range. Measured on all-MiniLM-L6-v2 (issue
//! 82, docs/RESULTS.md): one scale per row gave cosine 0.986 to f32 on the reference texts,
//! groups of 128 0.992, both 0.997. A row's result depends on that row alone, so a vector does
//! not depend on its batch. `vpdpbusd` wants unsigned inputs: a row's values go in as
//! `q + 128`, and the extra `128 · Σ w` of each column and group is taken off by starting the
//! group's sums at `-128 · Σ_group wq[k][j]`. Sums are exact in i32, so the result is the same
//! on every CPU that runs it.
//!
//! Layout: the weight matrix `W` [k, n] is packed once into panels of [`PANEL`] columns; within
//! a panel each quad of rows (4i … 4i + 3) is stored column by column as `W[4i..4i+4][j]`, the
//! operand `vpdpbusd` wants against a broadcast quad of the input row's bytes. A kernel keeps
//! [`ROWS`] × [`PANEL`] i32 sums over one group of k and as many f32 sums in registers (24 of
//! the 32), and adds the first, scaled by the rows' group scales, to the second after each
//! group.

use rayon::prelude::*;

/// What int8 vectors depend on besides the weights (the rules below and the calibration
/// texts): part of the encoder's fingerprint, so that a change re-embeds.
pub const FORMAT: &str = "int8g128s4";

/// Texts each linear layer's inputs are measured on when a model loads in int8 (for the
/// smoothing above): code and prose, short and long, as chunks and questions look. Changing them
/// changes int8 vectors: bump [`FORMAT`].
pub const CALIBRATION_TEXTS: &[&str] = &[
    "Fix crash when the JSON config file is empty",
    "where are retries with exponential backoff configured for outgoing HTTP requests",
    "def merge_settings(request_setting, session_setting, dict_class=OrderedDict):\n    \"\"\"Determines appropriate setting for a given request.\"\"\"\n    if session_setting is None:\n        return request_setting\n    merged = dict_class(to_key_val_list(session_setting))\n    merged.update(to_key_val_list(request_setting))\n    return merged",
    "src/cache/lru.rs\npub fn get(&mut self, key: &K) -> Option<&V> {\n    let node = self.map.get(key)?;\n    self.list.move_to_front(*node);\n    Some(&self.list[*node].value)\n}",
    "impl Display for ParseError { fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result { write!(f, \"line {}: {}\", self.line, self.msg) } }",
    "class UserSerializer(serializers.ModelSerializer):\n    class Meta:\n        model = User\n        fields = ['id', 'username', 'email', 'is_staff']",
    "func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }",
    "TypeError: unsupported operand type(s) for +: 'NoneType' and 'int' in sympy.simplify",
];

pub use super::tiles::PANEL;
/// Input rows per kernel call.
const ROWS: usize = 6;
/// Input values per activation scale (a multiple of 4).
pub const GROUP: usize = 128;
/// SmoothQuant's α: how much of an input channel's range moves into the weights (0.3–0.5
/// measured alike; 0.7 worse).
const SMOOTHING: f32 = 0.4;

/// Whether this CPU runs [`PackedInt8`] products.
pub fn supported() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512vnni")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether a [k, n] weight matrix fits the panels: k a multiple of 4, n of [`PANEL`].
pub fn fits(k: usize, n: usize) -> bool {
    k.is_multiple_of(4) && n.is_multiple_of(PANEL)
}

/// `x ↦ x·W + b` with `W` quantised and packed as described in the module's comment.
pub struct PackedInt8 {
    k: usize,
    n: usize,
    panels: Vec<i8>,
    /// Per column: max |w'| / 127 (w' the smoothed weights).
    scales: Vec<f32>,
    /// Per group of k, then column: −128 · Σ_group wq[k][j], where the group's sums start.
    offsets: Vec<i32>,
    bias: Vec<f32>,
    /// Per input channel: 1 / s_c, what the inputs are multiplied by before rounding; empty
    /// without calibration.
    smooth: Vec<f32>,
}

impl PackedInt8 {
    /// Quantises and packs `w` ([k, n], row-major) and `bias` ([n]), smoothed by
    /// `input_max` (each input channel's largest |x| on calibration texts) where given. `None`
    /// where the CPU lacks the instructions or the shape does not fit the panels: the caller
    /// keeps its f32 product.
    pub fn new(w: &[f32], bias: &[f32], k: usize, n: usize, input_max: Option<&[f32]>) -> Option<PackedInt8> {
        if !supported() || !fits(k, n) || w.len() != k * n || bias.len() != n {
            return None;
        }
        if input_max.is_some_and(|m| m.len() != k) {
            return None;
        }
        let smooth_by: Vec<f32> = match input_max {
            None => vec![1.0; k],
            Some(x_max) => (0..k)
                .map(|c| {
                    let w_max = w[c * n..(c + 1) * n].iter().fold(0f32, |m, v| m.max(v.abs()));
                    (x_max[c].max(1e-5).powf(SMOOTHING) / w_max.max(1e-5).powf(1.0 - SMOOTHING)).max(1e-5)
                })
                .collect(),
        };
        // Row by row (the matrix is row-major): a model's 24 matrices pack in a few tens of
        // milliseconds, which a query's start waits for.
        let mut w: Vec<f32> = w.to_vec();
        w.par_chunks_mut(n).zip(&smooth_by).for_each(|(row, s)| row.iter_mut().for_each(|v| *v *= s));
        let mut col_max = vec![0f32; n];
        for row in w.chunks(n) {
            for (m, v) in col_max.iter_mut().zip(row) {
                *m = m.max(v.abs());
            }
        }
        let scales: Vec<f32> = col_max.iter().map(|&m| if m > 0.0 { m / 127.0 } else { 1.0 }).collect();
        let mut q = vec![0i8; k * n];
        q.par_chunks_mut(n).zip(w.par_chunks(n)).for_each(|(q, w)| {
            for ((q, &v), &s) in q.iter_mut().zip(w).zip(&scales) {
                *q = quantise(v, s);
            }
        });
        let mut offsets = vec![0i32; k.div_ceil(GROUP) * n];
        for (i, row) in q.chunks(n).enumerate() {
            let sums = &mut offsets[(i / GROUP) * n..(i / GROUP + 1) * n];
            for (o, &v) in sums.iter_mut().zip(row) {
                *o -= 128 * v as i32;
            }
        }
        let mut panels = vec![0i8; k * n];
        panels.par_chunks_mut(k * PANEL).enumerate().for_each(|(p, panel)| {
            for (quad, out) in panel.chunks_mut(4 * PANEL).enumerate() {
                for (c, out) in out.chunks_mut(4).enumerate() {
                    for (t, o) in out.iter_mut().enumerate() {
                        *o = q[(4 * quad + t) * n + p * PANEL + c];
                    }
                }
            }
        });
        let smooth = match input_max {
            Some(_) => smooth_by.iter().map(|s| 1.0 / s).collect(),
            None => Vec::new(),
        };
        Some(PackedInt8 { k, n, panels, scales, offsets, bias: bias.to_vec(), smooth })
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
        let groups = self.k.div_ceil(GROUP);
        let mut xq = vec![0u8; x.len()];
        let mut row_scales = vec![0f32; rows * groups];
        xq.par_chunks_mut(self.k)
            .zip(x.par_chunks(self.k))
            .zip(row_scales.par_chunks_mut(groups))
            .for_each(|((dst, src), scales)| quantise_row(src, &self.smooth, dst, scales));
        super::tiles::fill(rows, self.n, ROWS, |r0, h, p, c| {
            let cols = p * PANEL..(p + 1) * PANEL;
            let tile = Tile {
                a: &xq[r0 * self.k..(r0 + h) * self.k],
                row_scales: &row_scales[r0 * groups..(r0 + h) * groups],
                k: self.k,
                n: self.n,
                b: &self.panels[p * self.k * PANEL..(p + 1) * self.k * PANEL],
                scales: &self.scales[cols.clone()],
                offsets: &self.offsets[p * PANEL..],
                bias: &self.bias[cols],
            };
            // SAFETY: `new` only succeeds where the CPU has AVX-512F/BW and VNNI; `c` is the
            // tile of rows r0..r0 + h and panel p's columns.
            unsafe { kernel(h, &tile, c, self.n) };
        })
    }
}

/// `round(v / scale)` clamped to ±127 (ties to even, as the inputs round). Rounded by adding and
/// taking away 1.5 × 2²³, exact for |x| ≤ 127 in the default rounding mode: `round_ties_even`
/// is a libm call per weight without SSE4.1, most of a model's packing time.
fn quantise(v: f32, scale: f32) -> i8 {
    const SHIFT: f32 = 12_582_912.0;
    (((v / scale).clamp(-127.0, 127.0) + SHIFT) - SHIFT) as i8
}

/// One row's bytes (`q + 128`, q rounded to nearest even) into `dst`, after multiplying by
/// `smooth` where it is not empty; each group's scale into `scales`.
fn quantise_row(src: &[f32], smooth: &[f32], dst: &mut [u8], scales: &mut [f32]) {
    let mut buf = [0f32; GROUP];
    for (g, scale) in scales.iter_mut().enumerate() {
        let range = g * GROUP..((g + 1) * GROUP).min(src.len());
        let x = match smooth.is_empty() {
            true => &src[range.clone()],
            false => {
                let b = &mut buf[..range.len()];
                for ((b, x), s) in b.iter_mut().zip(&src[range.clone()]).zip(&smooth[range.clone()]) {
                    *b = x * s;
                }
                &*b
            }
        };
        let dst = &mut dst[range];
        let max = crate::simd::fold(x, 0f32, |m, v| m.max(v.abs()));
        if max == 0.0 {
            dst.fill(128);
            *scale = 1.0;
            continue;
        }
        let inv = 127.0 / max;
        let mut done = 0;
        #[cfg(target_arch = "x86_64")]
        if supported() {
            // SAFETY: the CPU has AVX-512F/BW, checked just above.
            done = unsafe { quantise_avx512(x, dst, inv) };
        }
        for (d, &v) in dst[done..].iter_mut().zip(&x[done..]) {
            *d = ((v * inv).round_ties_even().clamp(-127.0, 127.0) as i32 + 128) as u8;
        }
        *scale = max / 127.0;
    }
}

/// [`quantise_row`]'s loop, 16 values at a time; returns how many it did.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn quantise_avx512(src: &[f32], dst: &mut [u8], inv: f32) -> usize {
    use std::arch::x86_64::*;
    let (scale, lo, hi, bias) =
        (_mm512_set1_ps(inv), _mm512_set1_epi32(-127), _mm512_set1_epi32(127), _mm512_set1_epi32(128));
    let mut i = 0;
    while i + 16 <= src.len().min(dst.len()) {
        // The default rounding mode: to nearest, ties to even.
        let q = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(src.as_ptr().add(i)), scale));
        let q = _mm512_add_epi32(_mm512_min_epi32(_mm512_max_epi32(q, lo), hi), bias);
        _mm_storeu_si128(dst.as_mut_ptr().add(i).cast(), _mm512_cvtepi32_epi8(q));
        i += 16;
    }
    i
}

/// What one kernel call reads: `h` rows of quantised input against one panel.
struct Tile<'a> {
    /// The rows' bytes, row stride `k`.
    a: &'a [u8],
    /// Per row, per group of k.
    row_scales: &'a [f32],
    k: usize,
    /// The offsets' row stride (the matrix's width).
    n: usize,
    /// The panel, packed.
    b: &'a [i8],
    scales: &'a [f32],
    /// From the panel's first column, per group a row of stride `n`.
    offsets: &'a [i32],
    bias: &'a [f32],
}

/// `h` (≤ [`ROWS`]) rows of the tile into `c` (row stride `ldc`).
///
/// # Safety
/// AVX-512F/BW and VNNI; `c` valid for `h` rows of [`PANEL`] values.
unsafe fn kernel(h: usize, t: &Tile, c: *mut f32, ldc: usize) {
    macro_rules! rows {
        ($($r:literal)*) => {
            match h {
                $($r => kernel_rows::<$r>(t, c, ldc),)*
                _ => unreachable!("{h} rows"),
            }
        };
    }
    rows!(1 2 3 4 5 6)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
unsafe fn kernel_rows<const R: usize>(t: &Tile, c: *mut f32, ldc: usize) {
    use std::arch::x86_64::*;
    let k = t.k;
    let groups = k.div_ceil(GROUP);
    debug_assert!(t.a.len() >= R * k && t.b.len() >= k * PANEL && t.row_scales.len() >= R * groups);
    let mut sums = [[_mm512_setzero_ps(); 2]; R];
    let (a, mut bp) = (t.a.as_ptr(), t.b.as_ptr());
    for g in 0..groups {
        let off = t.offsets.as_ptr().add(g * t.n);
        let (off0, off1) = (_mm512_loadu_si512(off.cast()), _mm512_loadu_si512(off.add(16).cast()));
        let mut acc = [[off0, off1]; R];
        for quad in g * GROUP / 4..((g + 1) * GROUP).min(k) / 4 {
            let b0 = _mm512_loadu_si512(bp.cast());
            let b1 = _mm512_loadu_si512(bp.add(64).cast());
            for (r, acc) in acc.iter_mut().enumerate() {
                let x = _mm512_set1_epi32(a.add(r * k + 4 * quad).cast::<i32>().read_unaligned());
                acc[0] = _mm512_dpbusd_epi32(acc[0], x, b0);
                acc[1] = _mm512_dpbusd_epi32(acc[1], x, b1);
            }
            bp = bp.add(4 * PANEL);
        }
        for ((r, acc), sum) in acc.iter().enumerate().zip(sums.iter_mut()) {
            let rs = _mm512_set1_ps(t.row_scales[r * groups + g]);
            sum[0] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc[0]), rs, sum[0]);
            sum[1] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc[1]), rs, sum[1]);
        }
    }
    let s0 = _mm512_loadu_ps(t.scales.as_ptr());
    let s1 = _mm512_loadu_ps(t.scales.as_ptr().add(16));
    let bias0 = _mm512_loadu_ps(t.bias.as_ptr());
    let bias1 = _mm512_loadu_ps(t.bias.as_ptr().add(16));
    for (r, sum) in sums.iter().enumerate() {
        _mm512_storeu_ps(c.add(r * ldc), _mm512_fmadd_ps(sum[0], s0, bias0));
        _mm512_storeu_ps(c.add(r * ldc + 16), _mm512_fmadd_ps(sum[1], s1, bias1));
    }
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn kernel_rows<const R: usize>(_: &Tile, _: *mut f32, _: usize) {
    unreachable!("int8 products need x86-64")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::noise;

    #[test]
    fn weights_round_to_nearest_even_and_clamp_as_the_inputs_do() {
        for i in -140_000..=140_000 {
            let v = i as f32 / 1000.0;
            let slow = v.round_ties_even().clamp(-127.0, 127.0) as i8;
            assert_eq!(quantise(v, 1.0), slow, "{v}");
        }
        assert_eq!((quantise(2.5, 1.0), quantise(-3.5, 1.0), quantise(1e9, 1.0)), (2, -4, 127));
    }

    /// The product of the quantised values, computed the slow way.
    fn reference(p: &PackedInt8, x: &[f32], w: &[f32], bias: &[f32], rows: usize) -> Vec<f64> {
        let (k, n) = (p.k, p.n);
        let smooth_by: Vec<f32> = match p.smooth.is_empty() {
            true => vec![1.0; k],
            false => p.smooth.iter().map(|s| 1.0 / s).collect(),
        };
        let w: Vec<f32> = (0..k * n).map(|i| w[i] * smooth_by[i / n]).collect();
        let groups = k.div_ceil(GROUP);
        let mut out = vec![0f64; rows * n];
        for r in 0..rows {
            let (mut bytes, mut rs) = (vec![0u8; k], vec![0f32; groups]);
            quantise_row(&x[r * k..(r + 1) * k], &p.smooth, &mut bytes, &mut rs);
            for j in 0..n {
                let sum: f64 = (0..k)
                    .map(|i| {
                        let q = (bytes[i] as i64 - 128) * quantise(w[i * n + j], p.scales[j]) as i64;
                        q as f64 * rs[i / GROUP] as f64
                    })
                    .sum();
                out[r * n + j] = sum * p.scales[j] as f64 + bias[j] as f64;
            }
        }
        out
    }

    #[test]
    fn packed_product_equals_the_product_of_quantised_values() {
        if !supported() {
            eprintln!("skipped: this CPU has no AVX-512 VNNI");
            return;
        }
        // Every tail of rows (1..=12 in the last block), several panels per task, and k long
        // enough that the `+ 128` offset would show if it were not taken off.
        // k of one group, of a group and a part (200), of several; smoothed or not.
        for (rows, k, n) in [(1, 4, 32), (13, 8, 64), (29, 384, 160), (5, 200, 32), (12, 1536, 288)] {
            let (x, w, bias) = (noise(rows * k, 1), noise(k * n, 2), noise(n, 3));
            let input_max: Vec<f32> = (0..k).map(|c| 0.1 + (c % 7) as f32).collect();
            for smooth in [None, Some(input_max.as_slice())] {
                let p = PackedInt8::new(&w, &bias, k, n, smooth).unwrap();
                let out = p.forward(&x);
                let want = reference(&p, &x, &w, &bias, rows);
                for (i, (got, want)) in out.iter().zip(&want).enumerate() {
                    let close = (*got as f64 - want).abs() < 1e-4 * (1.0 + want.abs());
                    assert!(close, "rows {rows} k {k} n {n} smoothed {} at {i}", smooth.is_some());
                }
            }
        }
    }

    #[test]
    fn a_row_does_not_depend_on_its_batch() {
        if !supported() {
            return;
        }
        let (k, n) = (64, 96);
        let (w, bias) = (noise(k * n, 5), noise(n, 6));
        let p = PackedInt8::new(&w, &bias, k, n, None).unwrap();
        let batch = noise(17 * k, 7);
        let all = p.forward(&batch);
        for r in [0, 11, 12, 16] {
            assert_eq!(p.forward(&batch[r * k..(r + 1) * k]), all[r * n..(r + 1) * n], "row {r}");
        }
        // A zero row (padding) quantises to zero and gives the bias.
        assert_eq!(p.forward(&vec![0.0; k]), bias);
    }

    #[test]
    fn the_product_stays_close_to_f32() {
        if !supported() {
            return;
        }
        let (rows, k, n) = (8, 384, 64);
        let (x, w, bias) = (noise(rows * k, 8), noise(k * n, 9), vec![0f32; n]);
        let out = PackedInt8::new(&w, &bias, k, n, None).unwrap().forward(&x);
        for r in 0..rows {
            let exact: Vec<f32> = (0..n).map(|j| (0..k).map(|i| x[r * k + i] * w[i * n + j]).sum()).collect();
            let got = &out[r * n..(r + 1) * n];
            let dot: f32 = exact.iter().zip(got).map(|(a, b)| a * b).sum();
            let norm = |v: &[f32]| v.iter().map(|a| a * a).sum::<f32>().sqrt();
            assert!(dot / (norm(&exact) * norm(got)) > 0.999, "row {r}");
        }
    }

    #[test]
    fn shapes_the_panels_cannot_hold_are_refused() {
        let w = noise(6 * 32, 4);
        assert!(PackedInt8::new(&w, &[0.0; 32], 6, 32, None).is_none(), "k not a multiple of 4");
        let w = noise(4 * 48, 4);
        assert!(PackedInt8::new(&w, &[0.0; 48], 4, 48, None).is_none(), "n not a multiple of 32");
    }
}
