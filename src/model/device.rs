//! `--device auto|cpu|cuda`: CPU always works; CUDA only in builds with the `cuda` feature.

use std::str::FromStr;

use candle_core::Device;

use crate::error::{Error, Result};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DeviceChoice {
    /// CUDA when this build has it and a GPU answers, else CPU.
    #[default]
    Auto,
    Cpu,
    Cuda,
}

impl FromStr for DeviceChoice {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(DeviceChoice::Auto),
            "cpu" => Ok(DeviceChoice::Cpu),
            "cuda" | "gpu" => Ok(DeviceChoice::Cuda),
            other => Err(Error::invalid(format!("unknown device `{other}`: expected auto, cpu or cuda"))),
        }
    }
}

/// The device and its display name (`cpu`, `cuda:0`).
pub fn select_device(choice: DeviceChoice) -> Result<(Device, String)> {
    match choice {
        DeviceChoice::Cpu => Ok(cpu()),
        DeviceChoice::Cuda => cuda(),
        DeviceChoice::Auto => {
            if cfg!(feature = "cuda") && candle_core::utils::cuda_is_available() {
                // A driver problem on a CUDA build still leaves the CPU usable.
                cuda().or_else(|_| Ok(cpu()))
            } else {
                Ok(cpu())
            }
        }
    }
}

fn cpu() -> (Device, String) {
    (Device::Cpu, "cpu".to_string())
}

#[cfg(feature = "cuda")]
fn cuda() -> Result<(Device, String)> {
    match Device::new_cuda(0) {
        Ok(device) => Ok((device, "cuda:0".to_string())),
        Err(e) => Err(Error::invalid(format!(
            "no CUDA device: {}",
            e.to_string().lines().next().unwrap_or("unknown error")
        ))),
    }
}

#[cfg(not(feature = "cuda"))]
fn cuda() -> Result<(Device, String)> {
    Err(Error::invalid(
        "this build has no CUDA support: rebuild with `cargo build --release --features cuda`",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_cli_values() {
        assert_eq!("auto".parse::<DeviceChoice>().unwrap(), DeviceChoice::Auto);
        assert_eq!("CPU".parse::<DeviceChoice>().unwrap(), DeviceChoice::Cpu);
        assert_eq!("cuda".parse::<DeviceChoice>().unwrap(), DeviceChoice::Cuda);
        let err = "tpu".parse::<DeviceChoice>().unwrap_err().to_string();
        assert!(err.contains("tpu") && err.contains("auto, cpu or cuda"), "{err}");
    }

    #[test]
    fn cpu_is_always_available() {
        let (device, name) = select_device(DeviceChoice::Cpu).unwrap();
        assert!(device.is_cpu());
        assert_eq!(name, "cpu");
    }

    #[cfg(not(feature = "cuda"))]
    #[test]
    fn cuda_in_a_cpu_build_says_how_to_rebuild() {
        let err = select_device(DeviceChoice::Cuda).unwrap_err().to_string();
        assert!(err.contains("--features cuda"), "{err}");
        assert_eq!(err.lines().count(), 1);
        let (device, name) = select_device(DeviceChoice::Auto).unwrap();
        assert!(device.is_cpu() && name == "cpu");
    }
}
