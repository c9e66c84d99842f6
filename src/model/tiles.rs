//! How the packed products (`bf16`, `int8`) share out their output among threads: tiles of
//! a block of rows by one panel of [`PANEL`] columns, a few panels per task, so that short
//! inputs still make enough tasks and long ones enough work per task.

use rayon::prelude::*;

/// Columns per panel: two AVX-512 registers of sums.
pub const PANEL: usize = 32;
/// Panels per parallel task.
const PANELS_PER_TASK: usize = 4;

/// A `rows` × `n` output (n a multiple of [`PANEL`]), every tile filled by
/// `tile(r0, h, p, c)`: rows `r0..r0 + h` (h ≤ `block_rows`) of panel `p`, written through
/// `c`, the tile's first value, row stride `n`.
///
/// `tile` must write only the `h` × [`PANEL`] values of its tile: the tiles are disjoint, and
/// that is all that keeps the threads from each other.
pub fn fill(
    rows: usize,
    n: usize,
    block_rows: usize,
    tile: impl Fn(usize, usize, usize, *mut f32) + Sync,
) -> Vec<f32> {
    debug_assert!(n.is_multiple_of(PANEL) && block_rows > 0);
    let mut out = vec![0f32; rows * n];
    let per_block = (n / PANEL).div_ceil(PANELS_PER_TASK);
    let tasks = rows.div_ceil(block_rows) * per_block;
    let shared = SharedOut(out.as_mut_ptr());
    (0..tasks).into_par_iter().for_each(|task| {
        let (block, first) = (task / per_block, task % per_block);
        let r0 = block * block_rows;
        let h = block_rows.min(rows - r0);
        for p in first * PANELS_PER_TASK..((first + 1) * PANELS_PER_TASK).min(n / PANEL) {
            // SAFETY: row r0 and column p·PANEL lie within the rows × n buffer.
            tile(r0, h, p, unsafe { shared.at(r0 * n + p * PANEL) });
        }
    });
    out
}

/// The output buffer, written by disjoint tiles from several threads.
#[derive(Clone, Copy)]
struct SharedOut(*mut f32);
// SAFETY: each task writes its own tiles (see `fill`).
unsafe impl Send for SharedOut {}
unsafe impl Sync for SharedOut {}
impl SharedOut {
    /// # Safety
    /// `offset` is within the buffer.
    unsafe fn at(self, offset: usize) -> *mut f32 {
        self.0.add(offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_is_in_exactly_one_tile() {
        for (rows, n, block) in [(1, 32, 12), (13, 64, 12), (29, 288, 6), (6, 160, 6)] {
            let out = fill(rows, n, block, |r0, h, p, c| {
                assert!(h <= block && r0 + h <= rows);
                for r in 0..h {
                    for j in 0..PANEL {
                        // SAFETY: within the tile `fill` handed out.
                        unsafe { *c.add(r * n + j) += (1 + (r0 + r) * n + p * PANEL + j) as f32 };
                    }
                }
            });
            let want: Vec<f32> = (0..rows * n).map(|i| (1 + i) as f32).collect();
            assert_eq!(out, want, "rows {rows} n {n} block {block}");
        }
    }
}
