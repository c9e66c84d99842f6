//! CPU inference settings, and what the CPU forward pass's custom ops share.
//!
//! glibc serves allocations above its mmap threshold with fresh `mmap`s and returns freed
//! heap tops to the OS, so every forward pass page-faults its activation buffers in anew:
//! about 1 GB of faults per batch of 16 × 200 tokens, a quarter of the CPU time measured
//! on all-MiniLM. We keep freed memory in the heap instead (the cost is resident memory
//! up to one batch's peak) and size batches so their largest buffer, the attention
//! scores, stays under the mmap threshold.

use candle_core::{CpuStorage, Layout};

/// glibc's largest allowed mmap threshold on 64-bit targets.
pub const MMAP_THRESHOLD: usize = 32 << 20;

/// Bytes the attention scores of one batch may take: under [`MMAP_THRESHOLD`].
pub const ATTENTION_BUDGET: usize = 24 << 20;

/// Once per process; a no-op off glibc.
pub fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            // SAFETY: mallopt only changes allocator parameters; it is safe to call at
            // any time and these values are in glibc's accepted ranges.
            unsafe {
                libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD as libc::c_int);
                libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
            }
        });
    }
}

/// Rows of length `len` one batch may hold so that its attention scores
/// (rows × heads × len² values) fit `budget` bytes ([`ATTENTION_BUDGET`] on the CPU); at least 1.
pub fn max_rows(len: usize, heads: usize, bytes_per_value: usize, budget: usize) -> usize {
    let per_row = heads.max(1) * len * len * bytes_per_value;
    (budget / per_row.max(1)).max(1)
}

/// Splits lengths sorted ascending into consecutive batches of at most `batch_size`
/// rows, each within `rows_for(longest)`. Returns half-open index ranges.
pub fn plan_batches(
    sorted_lens: &[usize],
    batch_size: usize,
    rows_for: impl Fn(usize) -> usize,
) -> Vec<std::ops::Range<usize>> {
    let mut batches = Vec::new();
    let mut start = 0;
    while start < sorted_lens.len() {
        let mut end = start + 1;
        while end < sorted_lens.len() && end - start < batch_size && end - start < rows_for(sorted_lens[end])
        {
            end += 1;
        }
        batches.push(start..end);
        start = end;
    }
    batches
}

/// The f32 values a custom op of the CPU forward pass reads: only contiguous f32 tensors are accepted.
pub(super) fn contiguous_f32<'a>(
    op: &str,
    storage: &'a CpuStorage,
    layout: &Layout,
) -> candle_core::Result<&'a [f32]> {
    let CpuStorage::F32(data) = storage else {
        candle_core::bail!("{op}: f32 only");
    };
    let Some((start, end)) = layout.contiguous_offsets() else {
        candle_core::bail!("{op}: contiguous input only");
    };
    Ok(&data[start..end])
}

/// The instruction set candle's f32 products (the `gemm` crate) pick at run time on this CPU.
pub fn f32_isa() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512f") {
            return "avx512";
        }
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
            return "avx2";
        }
        "sse"
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        std::env::consts::ARCH
    }
}

/// The AMX tile units this CPU reports (`amx_tile`, `amx_int8`, `amx_bf16` in
/// `/proc/cpuinfo`'s flags, which the kernel lists only where it can switch them on), for
/// `--version`. The forward pass does not use them yet: no machine this project runs on has
/// shown them (a virtual machine may hide them), so a tile kernel could not be tested; where
/// they are present the VNNI and AVX-512 BF16 kernels run, as elsewhere.
pub fn amx_units() -> Vec<&'static str> {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    amx_units_in(&info)
}

fn amx_units_in(cpuinfo: &str) -> Vec<&'static str> {
    let flags: Vec<&str> = cpuinfo
        .lines()
        .find(|l| l.starts_with("flags"))
        .and_then(|l| l.split_once(':'))
        .map_or(Vec::new(), |(_, v)| v.split_whitespace().collect());
    ["amx_tile", "amx_int8", "amx_bf16"].into_iter().filter(|f| flags.contains(f)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amx_units_are_read_from_the_flags_line() {
        let info =
            "processor\t: 0\nflags\t\t: fpu avx512f amx_bf16 amx_tile amx_int8 avx512_vnni\nbugs\t: x\n";
        assert_eq!(amx_units_in(info), ["amx_tile", "amx_int8", "amx_bf16"]);
        assert!(amx_units_in("flags\t: fpu avx2 fma\n").is_empty());
        assert!(amx_units_in("").is_empty());
    }

    #[test]
    fn long_sequences_get_smaller_batches() {
        let rows = |len| max_rows(len, 12, 4, ATTENTION_BUDGET);
        assert!(rows(256) < rows(64));
        assert!(rows(256) * 12 * 256 * 256 * 4 <= ATTENTION_BUDGET);
        assert_eq!(rows(100_000), 1);
    }

    #[test]
    fn batches_cover_everything_in_order_within_limits() {
        let lens: Vec<usize> = (1..=100).map(|i| i * 3).collect();
        let rows_for = |len: usize| if len > 200 { 4 } else { 1000 };
        let batches = plan_batches(&lens, 16, rows_for);
        let covered: Vec<usize> = batches.iter().flat_map(|r| r.clone()).collect();
        assert_eq!(covered, (0..100).collect::<Vec<_>>());
        for b in &batches {
            let longest = lens[b.end - 1];
            assert!(b.len() <= 16 && b.len() <= rows_for(longest), "{b:?}");
        }
        assert!(plan_batches(&[], 8, rows_for).is_empty());
    }
}
