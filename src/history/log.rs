//! Parsing `git log` output (`repo::git::log_history`) into commits.

/// One commit: its hash, parents, message and the paths it changed (none for merges).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommitRecord {
    pub id: String,
    pub parents: Vec<String>,
    pub message: String,
    pub files: Vec<String>,
}

/// Commits in the order `git log` printed them (newest first). A record that does not parse
/// (no hash) is skipped: git wrote it, so only a truncated stream produces one.
pub fn parse_log(raw: &[u8]) -> Vec<CommitRecord> {
    let text = String::from_utf8_lossy(raw);
    text.split('\u{1e}')
        .filter_map(|record| {
            let mut fields = record.splitn(4, '\u{1f}');
            let id = fields.next()?.trim();
            if id.len() < 7 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            let parents = fields.next().unwrap_or("").split_whitespace().map(str::to_string).collect();
            let message = fields.next().unwrap_or("").trim().to_string();
            let files = fields
                .next()
                .unwrap_or("")
                .lines()
                .map(str::trim_end)
                .filter(|l| !l.is_empty())
                .map(str::to_string)
                .collect();
            Some(CommitRecord { id: id.to_string(), parents, message, files })
        })
        .collect()
}
