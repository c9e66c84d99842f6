//! `--precision auto` (the default) on the CPU: the fastest of f32, bf16 and int8 products on
//! this CPU, a faster one only where it measured clearly faster than f32.
//!
//! Why measure: AVX-512 BF16 is not a speed-up everywhere. `vdpbf16ps` does twice an FMA's
//! multiply-adds per instruction, but where a core has two FMA ports and fewer for it, f32
//! keeps up, and a virtual machine may hide the AMX tiles that make bf16 pay on such a CPU.
//! Measured with `--bench embed` (docs/RESULTS.md, History): bf16 was 1.4× faster than f32 on one
//! machine of this project and 0.6–0.7× as fast on another, both listing `avx512_bf16`. No
//! flag tells them apart; a 0.2 s measurement does. int8 (`vpdpbusd`, AVX-512 VNNI) is timed
//! beside them on the same product.
//!
//! Why remember: the precision is part of every cached vector's key, so a machine must make
//! the same choice every time. The first run on a CPU measures and writes
//! `<cache root>/cpu-precision.tsv` (one line per CPU: its identity, the choice, the timings
//! of f32, bf16 and int8, `-` for one it does not run); later runs read it. A tie goes to f32,
//! the reference.
//!
//! Why int8 may be chosen: its vectors keep cosine ≥ 0.995 to f32 and the dense MRR within
//! 0.005 (docs/RESULTS.md "int8 products"), and since its calibration is remembered per model
//! (`cpu_bert::CpuBert::calibrated_int8`) it loads as fast as bf16; before, a one-shot
//! `--query` paid 0.3–0.7 s of calibration on every load, which kept it out of `auto`.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;

use candle_core::{Device, Tensor};

use super::bf16::{self, PackedBf16};
use super::int8::{self, PackedInt8};
use super::precision::Precision;

/// The file that remembers each CPU's choice, in the cache root.
pub const CHOICE_FILE: &str = "cpu-precision.tsv";

/// A faster precision is chosen only when it is at least this much faster than f32
/// (measurement noise goes to f32).
const MARGIN: f64 = 1.10;

/// What `auto` runs on this CPU, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct CpuChoice {
    /// The fastest on this CPU (another than f32 only by [`MARGIN`]); never Auto.
    pub precision: Precision,
    /// Milliseconds of the calibration product per precision this CPU runs, f32 first; empty
    /// where it runs f32 only (nothing to measure).
    pub timings: Vec<(Precision, f64)>,
}

impl CpuChoice {
    /// One line for `--version` and logs, e.g. `bf16 (measured here: bf16 2.08×, int8 3.44× the speed of f32)`.
    pub fn describe(&self) -> String {
        let Some(&(_, f32_ms)) = self.timings.first() else {
            return format!("{} (no AVX-512 BF16 or VNNI on this CPU)", self.precision);
        };
        let speeds: Vec<String> =
            self.timings[1..].iter().map(|(p, ms)| format!("{p} {:.2}×", f32_ms / ms)).collect();
        format!("{} (measured here: {} the speed of f32)", self.precision, speeds.join(", "))
    }
}

/// The precisions besides f32 this CPU runs.
fn candidates() -> Vec<Precision> {
    [(Precision::Bf16, bf16::supported()), (Precision::Int8, int8::supported())]
        .into_iter()
        .filter_map(|(p, ok)| ok.then_some(p))
        .collect()
}

/// This process's choice: read from the cache root, or measured once and written there.
pub fn cpu_choice() -> &'static CpuChoice {
    static CHOICE: OnceLock<CpuChoice> = OnceLock::new();
    CHOICE.get_or_init(|| {
        let candidates = candidates();
        if candidates.is_empty() {
            return CpuChoice { precision: Precision::F32, timings: Vec::new() };
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
        let choice = decide(measure(&candidates));
        if let Some(f) = &file {
            // Unwritable caches only cost a measurement per run.
            let _ = remember(f, &key, &choice);
        }
        choice
    })
}

/// The choice for the timings (f32 first): the fastest, where it is clearly faster than f32.
pub fn decide(timings: Vec<(Precision, f64)>) -> CpuChoice {
    let f32_ms = timings.first().map_or(f64::INFINITY, |t| t.1);
    let precision = timings
        .iter()
        .filter(|(p, ms)| *p != Precision::F32 && ms * MARGIN < f32_ms)
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map_or(Precision::F32, |t| t.0);
    CpuChoice { precision, timings }
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

/// The remembered line's columns after the CPU's identity: the choice, then f32, bf16 and
/// int8 milliseconds (`-` where not run). A line of an older layout is measured again.
const TIMED: [Precision; 3] = [Precision::F32, Precision::Bf16, Precision::Int8];

fn remembered(file: &Path, key: &str) -> Option<CpuChoice> {
    let text = std::fs::read_to_string(file).ok()?;
    text.lines().find_map(|line| {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() != 2 + TIMED.len() || f[0] != key {
            return None;
        }
        let precision: Precision = f[1].parse().ok()?;
        let mut timings = Vec::new();
        for (p, ms) in TIMED.iter().zip(&f[2..]) {
            if *ms != "-" {
                timings.push((*p, ms.parse().ok()?));
            }
        }
        let choice = decide(timings);
        (choice.precision == precision).then_some(choice)
    })
}

/// Adds or replaces this CPU's line, atomically (a temporary file renamed over the old one).
fn remember(file: &Path, key: &str, choice: &CpuChoice) -> std::io::Result<()> {
    let old = std::fs::read_to_string(file).unwrap_or_default();
    let mut lines: Vec<String> =
        old.lines().filter(|l| l.split('\t').next() != Some(key)).map(str::to_string).collect();
    let ms = TIMED
        .map(|p| choice.timings.iter().find(|t| t.0 == p).map_or("-".to_string(), |t| format!("{:.3}", t.1)));
    lines.push(format!("{key}\t{}\t{}", choice.precision, ms.join("\t")));
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = PathBuf::from(format!("{}.{}.tmp", file.display(), std::process::id()));
    std::fs::write(&tmp, lines.join("\n") + "\n")?;
    std::fs::rename(&tmp, file)
}

/// Best of five of the encoder's widest product ([512, 384] × [384, 1536], the feed-forward
/// layer of a 384-wide BERT) in f32 (candle's product, as `cpu_bert` runs it) and in each of
/// `candidates`; f32 first.
fn measure(candidates: &[Precision]) -> Vec<(Precision, f64)> {
    let (rows, k, n) = (512, 384, 1536);
    // A cheap deterministic fill: the timing does not depend on the values.
    let fill = |len: usize, seed: u32| -> Vec<f32> {
        (0..len as u32).map(|i| ((i.wrapping_mul(2654435761) ^ seed) % 1000) as f32 / 1000.0 - 0.5).collect()
    };
    let (x, w, b) = (fill(rows * k, 1), fill(k * n, 2), fill(n, 3));
    let (Ok(xt), Ok(wt), Ok(bt)) = (
        Tensor::from_vec(x.clone(), (rows, k), &Device::Cpu),
        Tensor::from_vec(w.clone(), (k, n), &Device::Cpu),
        Tensor::from_vec(b.clone(), n, &Device::Cpu),
    ) else {
        return vec![(Precision::F32, 0.0)];
    };
    let mut products: Vec<(Precision, Box<dyn Fn()>)> = vec![(
        Precision::F32,
        Box::new(move || {
            let _ = xt.matmul(&wt).and_then(|y| y.broadcast_add(&bt));
        }),
    )];
    for &p in candidates {
        let x = x.clone();
        match p {
            Precision::Bf16 => {
                if let Some(packed) = PackedBf16::new(&w, &b, k, n) {
                    products.push((p, Box::new(move || drop(packed.forward(&x)))));
                }
            }
            Precision::Int8 => {
                if let Some(packed) = PackedInt8::new(&w, &b, k, n, None) {
                    products.push((p, Box::new(move || drop(packed.forward(&x)))));
                }
            }
            Precision::F32 | Precision::Auto => {}
        }
    }
    let time = |f: &dyn Fn()| {
        let t = Instant::now();
        f();
        t.elapsed().as_secs_f64() * 1e3
    };
    let mut best = vec![f64::INFINITY; products.len()];
    // The first round warms caches and thread pools; taking turns keeps a busy moment from
    // landing on one side only.
    for round in 0..6 {
        for (best, (_, f)) in best.iter_mut().zip(&products) {
            let ms = time(f.as_ref());
            if round > 0 {
                *best = best.min(ms);
            }
        }
    }
    products.iter().zip(best).map(|((p, _), ms)| (*p, ms)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timed(f32_ms: f64, bf16_ms: f64, int8_ms: Option<f64>) -> Vec<(Precision, f64)> {
        let mut t = vec![(Precision::F32, f32_ms), (Precision::Bf16, bf16_ms)];
        t.extend(int8_ms.map(|ms| (Precision::Int8, ms)));
        t
    }

    #[test]
    fn the_fastest_is_chosen_only_when_clearly_faster_than_f32() {
        assert_eq!(decide(timed(10.0, 5.0, None)).precision, Precision::Bf16);
        let close = decide(timed(10.0, 9.5, None)).precision;
        assert_eq!(close, Precision::F32, "within the margin: the reference");
        assert_eq!(decide(timed(10.0, 14.0, None)).precision, Precision::F32);
        assert_eq!(decide(timed(10.0, 5.0, Some(3.0))).precision, Precision::Int8);
        assert_eq!(decide(timed(10.0, 3.0, Some(5.0))).precision, Precision::Bf16);
        assert_eq!(decide(timed(10.0, 9.8, Some(9.5))).precision, Precision::F32);
        let int8_only = decide(timed(10.0, 12.0, Some(4.0)));
        assert_eq!(int8_only.precision, Precision::Int8);
        let said = int8_only.describe();
        assert!(said.starts_with("int8 (measured here: bf16 0.83×, int8 2.50×"), "{said}");
    }

    #[test]
    fn a_remembered_choice_is_read_back_for_its_cpu_only() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("sub").join(CHOICE_FILE);
        let slow = decide(timed(10.0, 14.0, None));
        remember(&file, "cpu A", &slow).unwrap();
        remember(&file, "cpu B", &decide(timed(10.0, 4.0, Some(2.0)))).unwrap();
        assert_eq!(remembered(&file, "cpu A"), Some(slow));
        assert_eq!(remembered(&file, "cpu B").unwrap().timings[2], (Precision::Int8, 2.0));
        assert_eq!(remembered(&file, "cpu C"), None);
        // A new measurement replaces the CPU's line rather than adding one.
        remember(&file, "cpu A", &decide(timed(10.0, 3.0, None))).unwrap();
        assert_eq!(remembered(&file, "cpu A").unwrap().precision, Precision::Bf16);
        assert_eq!(std::fs::read_to_string(&file).unwrap().lines().count(), 2);
        // A line from before int8 was timed is measured again, not read as "no int8".
        std::fs::write(&file, "cpu D\tbf16\t9.098\t2.845\n").unwrap();
        assert_eq!(remembered(&file, "cpu D"), None);
    }

    #[test]
    fn the_choice_is_made_once_and_is_never_auto() {
        let choice = cpu_choice();
        assert_ne!(choice.precision, Precision::Auto);
        assert!(std::ptr::eq(choice, cpu_choice()));
        if candidates().is_empty() {
            assert_eq!(choice.precision, Precision::F32);
            assert!(choice.timings.is_empty());
        } else {
            assert_eq!(choice.timings.len(), 1 + candidates().len(), "{choice:?}");
            assert!(choice.timings.iter().all(|t| t.1 > 0.0), "{choice:?}");
        }
    }
}
