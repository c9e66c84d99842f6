//! `--precision auto` (the default) on the CPU: bf16 products only where they measured faster
//! than f32 on this CPU.
//!
//! Why measure: AVX-512 BF16 is not a speed-up everywhere. `vdpbf16ps` does twice an FMA's
//! multiply-adds per instruction, but where a core has two FMA ports and fewer for it, f32
//! keeps up, and a virtual machine may hide the AMX tiles that make bf16 pay on such a CPU.
//! Measured with `--bench embed` (docs/RESULTS.md, History): bf16 was 1.4× faster than f32 on one
//! machine of this project and 0.6–0.7× as fast on another, both listing `avx512_bf16`. No
//! flag tells them apart; a 0.2 s measurement does.
//!
//! Why remember: the precision is part of every cached vector's key, so a machine must make
//! the same choice every time. The first run on a CPU measures and writes
//! `<cache root>/cpu-precision.tsv` (one line per CPU: its identity, the choice, both
//! timings); later runs read it. A tie goes to f32, the reference.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;

use candle_core::{Device, Tensor};

use super::bf16::{self, PackedBf16, Precision};

/// The file that remembers each CPU's choice, in the cache root.
pub const CHOICE_FILE: &str = "cpu-precision.tsv";

/// bf16 is chosen only when it is at least this much faster (measurement noise goes to f32).
const MARGIN: f64 = 1.10;

/// What `auto` runs on this CPU, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct CpuChoice {
    /// F32 or Bf16, never Auto.
    pub precision: Precision,
    /// Milliseconds of the calibration product in each precision; `None` where the CPU has
    /// no bf16 products (nothing to measure).
    pub timings: Option<(f64, f64)>,
}

impl CpuChoice {
    /// One line for `--version` and logs, e.g. `f32 (bf16 products measured 0.74× as fast)`.
    pub fn describe(&self) -> String {
        match self.timings {
            None => format!("{} (no AVX-512 BF16 on this CPU)", self.precision),
            Some((f32_ms, bf16_ms)) => {
                format!(
                    "{} (bf16 products measured {:.2}× the speed of f32 here)",
                    self.precision,
                    f32_ms / bf16_ms
                )
            }
        }
    }
}

/// This process's choice: read from the cache root, or measured once and written there.
pub fn cpu_choice() -> &'static CpuChoice {
    static CHOICE: OnceLock<CpuChoice> = OnceLock::new();
    CHOICE.get_or_init(|| {
        if !bf16::supported() {
            return CpuChoice { precision: Precision::F32, timings: None };
        }
        // An unoptimised build (tests) times its own slow kernels: measure, never remember.
        let file = crate::cache::cache_root(None)
            .ok()
            .filter(|_| !cfg!(debug_assertions))
            .map(|root| root.join(CHOICE_FILE));
        let key = cpu_identity();
        if let Some(choice) = file.as_deref().and_then(|f| remembered(f, &key)) {
            return choice;
        }
        let choice = decide(measure());
        if let Some(f) = &file {
            // Unwritable caches only cost a measurement per run.
            let _ = remember(f, &key, &choice);
        }
        choice
    })
}

/// The choice for `(f32 ms, bf16 ms)`.
pub fn decide((f32_ms, bf16_ms): (f64, f64)) -> CpuChoice {
    let precision = if bf16_ms * MARGIN < f32_ms { Precision::Bf16 } else { Precision::F32 };
    CpuChoice { precision, timings: Some((f32_ms, bf16_ms)) }
}

/// Model name, family, model and stepping: a CPU's identity for the remembered choice.
fn cpu_identity() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| {
        info.lines()
            .find(|l| l.split(':').next().map(str::trim) == Some(name))
            .and_then(|l| l.split_once(':'))
            .map_or(String::new(), |(_, v)| v.trim().to_string())
    };
    let id = [field("model name"), field("cpu family"), field("model"), field("stepping")].join(" / ");
    id.replace('\t', " ")
}

fn remembered(file: &Path, key: &str) -> Option<CpuChoice> {
    let text = std::fs::read_to_string(file).ok()?;
    text.lines().find_map(|line| {
        let mut f = line.split('\t');
        if f.next()? != key {
            return None;
        }
        let precision: Precision = f.next()?.parse().ok()?;
        let f32_ms: f64 = f.next()?.parse().ok()?;
        let bf16_ms: f64 = f.next()?.parse().ok()?;
        (precision != Precision::Auto).then_some(CpuChoice { precision, timings: Some((f32_ms, bf16_ms)) })
    })
}

/// Adds or replaces this CPU's line, atomically (a temporary file renamed over the old one).
fn remember(file: &Path, key: &str, choice: &CpuChoice) -> std::io::Result<()> {
    let (f32_ms, bf16_ms) = choice.timings.unwrap_or_default();
    let old = std::fs::read_to_string(file).unwrap_or_default();
    let mut lines: Vec<String> =
        old.lines().filter(|l| l.split('\t').next() != Some(key)).map(str::to_string).collect();
    lines.push(format!("{key}\t{}\t{f32_ms:.3}\t{bf16_ms:.3}", choice.precision));
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = PathBuf::from(format!("{}.{}.tmp", file.display(), std::process::id()));
    std::fs::write(&tmp, lines.join("\n") + "\n")?;
    std::fs::rename(&tmp, file)
}

/// Best of five of the encoder's widest product ([512, 384] × [384, 1536], the feed-forward
/// layer of a 384-wide BERT) in f32 (candle's product, as `cpu_bert` runs it) and in bf16.
fn measure() -> (f64, f64) {
    let (rows, k, n) = (512, 384, 1536);
    // A cheap deterministic fill: the timing does not depend on the values.
    let fill = |len: usize, seed: u32| -> Vec<f32> {
        (0..len as u32).map(|i| ((i.wrapping_mul(2654435761) ^ seed) % 1000) as f32 / 1000.0 - 0.5).collect()
    };
    let (x, w, b) = (fill(rows * k, 1), fill(k * n, 2), fill(n, 3));
    let packed = PackedBf16::new(&w, &b, k, n).expect("the CPU has bf16 products and the shape fits");
    let (Ok(xt), Ok(wt), Ok(bt)) = (
        Tensor::from_vec(x.clone(), (rows, k), &Device::Cpu),
        Tensor::from_vec(w, (k, n), &Device::Cpu),
        Tensor::from_vec(b, n, &Device::Cpu),
    ) else {
        return (0.0, f64::INFINITY);
    };
    let time = |f: &dyn Fn()| {
        let t = Instant::now();
        f();
        t.elapsed().as_secs_f64() * 1e3
    };
    let f32_product = || {
        let _ = xt.matmul(&wt).and_then(|y| y.broadcast_add(&bt));
    };
    let bf16_product = || {
        let _ = packed.forward(&x);
    };
    let (mut best_f32, mut best_bf16) = (f64::INFINITY, f64::INFINITY);
    // The first round warms caches and thread pools; alternating keeps a busy moment from
    // landing on one side only.
    for round in 0..6 {
        let (a, b) = (time(&f32_product), time(&bf16_product));
        if round > 0 {
            best_f32 = best_f32.min(a);
            best_bf16 = best_bf16.min(b);
        }
    }
    (best_f32, best_bf16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bf16_is_chosen_only_when_clearly_faster() {
        assert_eq!(decide((10.0, 5.0)).precision, Precision::Bf16);
        assert_eq!(decide((10.0, 9.5)).precision, Precision::F32, "within the margin: the reference");
        assert_eq!(decide((10.0, 14.0)).precision, Precision::F32);
    }

    #[test]
    fn a_remembered_choice_is_read_back_for_its_cpu_only() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("sub").join(CHOICE_FILE);
        let slow_bf16 = decide((10.0, 14.0));
        remember(&file, "cpu A", &slow_bf16).unwrap();
        remember(&file, "cpu B", &decide((10.0, 4.0))).unwrap();
        assert_eq!(remembered(&file, "cpu A"), Some(slow_bf16));
        assert_eq!(remembered(&file, "cpu B").unwrap().precision, Precision::Bf16);
        assert_eq!(remembered(&file, "cpu C"), None);
        // A new measurement replaces the CPU's line rather than adding one.
        remember(&file, "cpu A", &decide((10.0, 3.0))).unwrap();
        assert_eq!(remembered(&file, "cpu A").unwrap().precision, Precision::Bf16);
        assert_eq!(std::fs::read_to_string(&file).unwrap().lines().count(), 2);
    }

    #[test]
    fn the_choice_is_made_once_and_is_never_auto() {
        let choice = cpu_choice();
        assert_ne!(choice.precision, Precision::Auto);
        assert!(std::ptr::eq(choice, cpu_choice()));
        if bf16::supported() {
            let (f32_ms, bf16_ms) = choice.timings.expect("measured or remembered");
            assert!(f32_ms > 0.0 && bf16_ms > 0.0, "{choice:?}");
        } else {
            assert_eq!(choice.precision, Precision::F32);
        }
    }
}
