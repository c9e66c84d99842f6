//! SWE-bench-style instances from `.jsonl` or gzip-compressed `.jsonl.gz` files.
//! A malformed line is reported and skipped, so one bad record does not stop an evaluation.

use std::collections::HashMap;
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// One task: an issue against a repository snapshot and the patch that resolved it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Instance {
    pub instance_id: String,
    /// `owner/name`.
    pub repo: String,
    pub base_commit: String,
    pub problem_statement: String,
    /// Unified diff (git format) of the gold patch.
    pub patch: String,
    /// Discussion before the fix; `null` and absent both read as `None`.
    #[serde(default)]
    pub hints_text: Option<String>,
    /// When the change was made (training sets order and select by it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// The repository's language, as the multi-language dev set names it (`rust`, `js`, `c++`):
    /// eval reports each language apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
}

impl Instance {
    /// The issue's title: the first non-blank line of the problem statement (where SWE-bench and
    /// Multi-SWE-bench put it), trimmed; the whole statement when it has no other line.
    pub fn title(&self) -> &str {
        self.problem_statement.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("")
    }

    /// The instance as a person would type it: its title alone as the problem statement, and
    /// no hints (`--eval --title-only`).
    pub fn title_only(mut self) -> Instance {
        self.problem_statement = self.title().to_string();
        self.hints_text = None;
        self
    }
}

/// A line that could not be read as an instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineError {
    pub path: PathBuf,
    /// 1-based.
    pub line: usize,
    pub message: String,
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.path.display(), self.line, self.message)
    }
}

/// Read all instances of a `.jsonl` file, gzip-compressed or not (detected from the
/// content, not the name). Blank lines are ignored; malformed lines, lines missing a
/// required field and repeated instance ids are returned as errors and skipped.
/// Only a file that cannot be opened or read at all is an `Err`.
pub fn read_instances(path: &Path) -> Result<(Vec<Instance>, Vec<LineError>)> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut reader = BufReader::new(file);
    let is_gzip = reader.fill_buf().map_err(|e| Error::io(path, e))?.starts_with(&[0x1f, 0x8b]);
    if is_gzip {
        let decoder = flate2::read::MultiGzDecoder::new(reader);
        parse_instances(BufReader::new(decoder), path)
    } else {
        parse_instances(reader, path)
    }
}

/// Parse JSON lines from `reader`; `path` only names the source in errors.
pub fn parse_instances(mut reader: impl BufRead, path: &Path) -> Result<(Vec<Instance>, Vec<LineError>)> {
    let mut instances = Vec::new();
    let mut errors = Vec::new();
    let mut first_line_of: HashMap<String, usize> = HashMap::new();
    let mut buf = Vec::new();
    let mut line_no = 0;
    loop {
        buf.clear();
        let read = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| Error::context(format!("{}:{}", path.display(), line_no + 1), e))?;
        if read == 0 {
            break;
        }
        line_no += 1;
        let error = |message: String| LineError { path: path.to_path_buf(), line: line_no, message };
        let Ok(text) = std::str::from_utf8(&buf) else {
            errors.push(error("not valid UTF-8".into()));
            continue;
        };
        if text.trim().is_empty() {
            continue;
        }
        match parse_line(text) {
            Err(message) => errors.push(error(message)),
            Ok(instance) => match first_line_of.get(&instance.instance_id) {
                Some(first) => errors.push(error(format!(
                    "duplicate instance_id {} (first on line {first}); skipped",
                    instance.instance_id
                ))),
                None => {
                    first_line_of.insert(instance.instance_id.clone(), line_no);
                    instances.push(instance);
                }
            },
        }
    }
    Ok((instances, errors))
}

fn parse_line(text: &str) -> std::result::Result<Instance, String> {
    let instance: Instance = serde_json::from_str(text).map_err(|e| e.to_string())?;
    if instance.instance_id.trim().is_empty() {
        return Err("empty instance_id".into());
    }
    if !matches!(instance.repo.split_once('/'), Some((o, n)) if !o.is_empty() && !n.is_empty()) {
        return Err(format!("{}: repo {:?} is not owner/name", instance.instance_id, instance.repo));
    }
    if instance.base_commit.trim().is_empty() {
        return Err(format!("{}: empty base_commit", instance.instance_id));
    }
    Ok(instance)
}

/// Writes `instances` as JSON lines to `path`, gzip-compressed when its name ends in `.gz`,
/// through a temporary file and a rename (a reader never sees half a file).
pub fn write_instances(path: &Path, instances: &[Instance]) -> Result<()> {
    let mut text = Vec::new();
    for inst in instances {
        serde_json::to_writer(&mut text, inst).map_err(|e| Error::context(path.display().to_string(), e))?;
        text.push(b'\n');
    }
    let bytes = if path.extension().is_some_and(|e| e == "gz") {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&text).and_then(|()| gz.finish()).map_err(|e| Error::io(path, e))?
    } else {
        text
    };
    crate::cache::write_atomic(path, &bytes)
}

/// Split a `--instances a,b , c` argument into ids, dropping empty pieces.
pub fn parse_id_list(arg: &str) -> Vec<String> {
    arg.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect()
}

/// The outcome of [`select`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    /// Chosen instances, in file order.
    pub instances: Vec<Instance>,
    /// Requested ids that no instance has; callers decide whether that is fatal.
    pub unknown_ids: Vec<String>,
}

/// Keep only the instances named in `ids` (all when `None`), then the first `limit`.
pub fn select(instances: Vec<Instance>, ids: Option<&[String]>, limit: Option<usize>) -> Selection {
    let mut chosen: Vec<Instance> = match ids {
        None => instances,
        Some(ids) => instances.into_iter().filter(|i| ids.contains(&i.instance_id)).collect(),
    };
    let unknown_ids = ids
        .unwrap_or_default()
        .iter()
        .filter(|id| !chosen.iter().any(|i| &i.instance_id == *id))
        .cloned()
        .collect();
    if let Some(limit) = limit {
        chosen.truncate(limit);
    }
    Selection { instances: chosen, unknown_ids }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn line(id: &str) -> String {
        serde_json::json!({
            "instance_id": id,
            "repo": "psf/requests",
            "base_commit": "abc123",
            "problem_statement": format!("issue {id}"),
            "hints_text": null,
            "patch": "diff --git a/x.py b/x.py\n",
            "created_at": "2020-01-01",
            "version": "2.0",
        })
        .to_string()
    }

    #[test]
    fn reads_plain_jsonl_and_reports_bad_lines() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("x.jsonl");
        let with_hints = line("c").replace("\"hints_text\":null", "\"hints_text\":\"try this\"");
        let content = [
            line("a"),
            String::new(),
            "{not json".into(),
            r#"{"instance_id": "b", "repo": "psf/requests"}"#.into(),
            with_hints,
            line("a"),
            line("d").replace("psf/requests", "requests"),
        ]
        .join("\n");
        fs_write(&path, content.as_bytes());

        let (instances, errors) = read_instances(&path).unwrap();
        let ids: Vec<&str> = instances.iter().map(|i| i.instance_id.as_str()).collect();
        assert_eq!(ids, ["a", "c"]);
        assert_eq!(instances[0].hints_text, None);
        assert_eq!(instances[1].hints_text.as_deref(), Some("try this"));
        assert_eq!(instances[0].problem_statement, "issue a");

        let lines: Vec<usize> = errors.iter().map(|e| e.line).collect();
        assert_eq!(lines, [3, 4, 6, 7]);
        let shown = errors[1].to_string();
        assert!(shown.starts_with(&format!("{}:4: ", path.display())), "{shown}");
        assert!(shown.contains("base_commit"), "names the missing field: {shown}");
        assert!(errors[2].message.contains("duplicate instance_id a (first on line 1)"));
        assert!(errors[3].message.contains("not owner/name"));
    }

    #[test]
    fn reads_gzipped_jsonl() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("x.jsonl.gz");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        writeln!(gz, "{}\n{}", line("one"), line("two")).unwrap();
        fs_write(&path, &gz.finish().unwrap());
        let (instances, errors) = read_instances(&path).unwrap();
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(instances.len(), 2);
        assert_eq!(instances[1].instance_id, "two");
    }

    #[test]
    fn title_only_keeps_the_first_non_blank_line_and_drops_the_hints() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("x.jsonl");
        let long = line("t")
            .replace(
                "issue t",
                "\\n  zstd keeps the file unless `--rm` is last \\r\\n\\n**Describe the bug**\\r\\nIt stays.",
            )
            .replace("\"hints_text\":null", "\"hints_text\":\"try this\"");
        fs_write(&path, format!("{long}\n{}\n", line("one")).as_bytes());
        let (instances, _) = read_instances(&path).unwrap();
        assert_eq!(instances[0].title(), "zstd keeps the file unless `--rm` is last");
        let short = instances[0].clone().title_only();
        assert_eq!(short.problem_statement, "zstd keeps the file unless `--rm` is last");
        assert_eq!(short.hints_text, None);
        assert_eq!(short.instance_id, "t");
        // A one-line statement is its own title.
        assert_eq!(instances[1].clone().title_only().problem_statement, "issue one");
    }

    #[test]
    fn missing_file_is_an_error_naming_it() {
        let err = read_instances(Path::new("/nonexistent/i.jsonl")).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/i.jsonl"));
    }

    #[test]
    fn selects_by_id_and_limit() {
        let all: Vec<Instance> =
            ["a", "b", "c", "d"].iter().map(|id| serde_json::from_str(&line(id)).unwrap()).collect();
        let ids = parse_id_list(" d, b,,zz ");
        assert_eq!(ids, ["d", "b", "zz"]);

        let sel = select(all.clone(), Some(&ids), None);
        let got: Vec<&str> = sel.instances.iter().map(|i| i.instance_id.as_str()).collect();
        assert_eq!(got, ["b", "d"], "file order is kept");
        assert_eq!(sel.unknown_ids, ["zz"]);

        let sel = select(all.clone(), None, Some(3));
        assert_eq!(sel.instances.len(), 3);
        assert!(sel.unknown_ids.is_empty());

        let sel = select(all, Some(&ids), Some(1));
        assert_eq!(sel.instances[0].instance_id, "b");
        assert!(sel.unknown_ids == ["zz"], "limit does not make known ids unknown");
    }

    #[test]
    fn reads_the_dev_set_when_present() {
        let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/data/swebench-lite-dev.jsonl"));
        if !path.exists() {
            eprintln!("skipped: {} absent", path.display());
            return;
        }
        let (instances, errors) = read_instances(path).unwrap();
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(instances.len(), 106);
        assert!(instances.iter().all(|i| i.base_commit.len() == 40));
    }

    fn fs_write(path: &Path, bytes: &[u8]) {
        std::fs::File::create(path).unwrap().write_all(bytes).unwrap();
    }
}
