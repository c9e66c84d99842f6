//! The number format of the encoder's linear layers on the CPU.

/// The matrix products' number format on the CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    /// f32 throughout (the reference).
    F32,
    /// bf16 inputs to the linear layers' products, f32 sums and everything else f32; falls
    /// back to f32 where the CPU lacks AVX-512 BF16 (`super::bf16`).
    Bf16,
    /// int8 inputs and weights (scaled per row and per column), i32 sums, everything else
    /// f32; falls back to f32 where the CPU lacks AVX-512 VNNI (`super::int8`).
    Int8,
    /// The default: bf16 on a GPU; on the CPU the fastest of f32, bf16 and int8 as measured
    /// there ([`super::precision_choice`]), f32 on a tie.
    Auto,
}

impl std::fmt::Display for Precision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Precision::F32 => "f32",
            Precision::Bf16 => "bf16",
            Precision::Int8 => "int8",
            Precision::Auto => "auto",
        })
    }
}

impl std::str::FromStr for Precision {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "f32" => Ok(Precision::F32),
            "bf16" => Ok(Precision::Bf16),
            "int8" => Ok(Precision::Int8),
            "auto" => Ok(Precision::Auto),
            other => Err(format!("unknown precision {other:?} (auto, f32, bf16 or int8)")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precision_parses_and_prints() {
        for p in [Precision::F32, Precision::Bf16, Precision::Int8, Precision::Auto] {
            assert_eq!(p.to_string().parse::<Precision>().unwrap(), p);
        }
        assert!("f16".parse::<Precision>().unwrap_err().contains("auto, f32, bf16 or int8"));
    }
}
