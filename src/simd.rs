//! Run-time choice of the CPU's widest vector unit for plain Rust loops, and reductions
//! written so that the compiler vectorises them.

/// `vectorised! { fn name(args) -> R { body } }` defines `name`, which runs `body` compiled
/// for AVX-512, else for AVX2 with FMA, else for the baseline, chosen at run time. One binary
/// serves every x86-64 CPU, and the body stays ordinary Rust: write loops the compiler can
/// vectorise (no single running float sum: see [`fold`] and [`dot`]). Closures in the
/// body inherit the chosen target features.
macro_rules! vectorised {
    ($(#[$meta:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? $body:block) => {
        $(#[$meta])*
        $vis fn $name($($arg: $ty),*) $(-> $ret)? {
            #[inline(always)]
            fn plain($($arg: $ty),*) $(-> $ret)? $body
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f")]
                unsafe fn avx512($($arg: $ty),*) $(-> $ret)? {
                    plain($($arg),*)
                }
                #[target_feature(enable = "avx2,fma")]
                unsafe fn avx2($($arg: $ty),*) $(-> $ret)? {
                    plain($($arg),*)
                }
                if std::is_x86_feature_detected!("avx512f") {
                    // SAFETY: the CPU has AVX-512F, checked just above.
                    return unsafe { avx512($($arg),*) };
                }
                if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
                    // SAFETY: the CPU has AVX2 and FMA, checked just above.
                    return unsafe { avx2($($arg),*) };
                }
            }
            plain($($arg),*)
        }
    };
}

/// Running results kept side by side in a reduction: one running float is a dependency chain
/// the compiler may not reorder (float addition is not associative), [`LANES`] of them fill
/// an AVX-512 register.
pub(crate) const LANES: usize = 16;

/// `f` folded over `xs` from `init`, in [`LANES`] interleaved running results combined at the
/// end; for `max` and `+` the same value as a left fold up to rounding.
#[inline(always)]
pub(crate) fn fold(xs: &[f32], init: f32, f: impl Fn(f32, f32) -> f32) -> f32 {
    let mut acc = [init; LANES];
    let chunks = xs.chunks_exact(LANES);
    let rest = chunks.remainder();
    for c in chunks {
        for (a, &x) in acc.iter_mut().zip(c) {
            *a = f(*a, x);
        }
    }
    rest.iter().fold(acc.into_iter().fold(init, &f), |a, &x| f(a, x))
}

/// `a · b` over [`LANES`] running sums.
#[inline(always)]
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; LANES];
    let (ca, cb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let rest: f32 = ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in ca.zip(cb) {
        for i in 0..LANES {
            acc[i] += x[i] * y[i];
        }
    }
    acc.iter().sum::<f32>() + rest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lane_reductions_equal_plain_ones() {
        let xs: Vec<f32> = (0..37).map(|i| ((i * 7919) % 101) as f32 * 0.25 - 9.0).collect();
        let ys: Vec<f32> = (0..37).map(|i| ((i * 104_729) % 53) as f32 * 0.5 - 11.0).collect();
        assert_eq!(
            fold(&xs, f32::NEG_INFINITY, f32::max),
            xs.iter().copied().fold(f32::NEG_INFINITY, f32::max)
        );
        let sum: f32 = xs.iter().sum();
        assert!((fold(&xs, 0.0, |a, b| a + b) - sum).abs() < 1e-3);
        let plain: f32 = xs.iter().zip(&ys).map(|(x, y)| x * y).sum();
        assert!((dot(&xs, &ys) - plain).abs() < 1e-2, "{} vs {plain}", dot(&xs, &ys));
        assert_eq!(dot(&[], &[]), 0.0);
    }
}
