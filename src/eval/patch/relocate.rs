//! Hunk headers of real patches can be stale: `git apply` finds each hunk by its context
//! and applies it "with offset" (in the SWE-bench Lite dev set, 6 of the 60 requests and
//! sympy instances have hunks off by up to 41 lines). Gold lines must come from where the
//! hunk really applies, not from its header.

use super::{FilePatch, Hunk};

impl FilePatch {
    /// This patch with every hunk moved to where its pre-image (context and removed lines)
    /// is in `old_text`, searching outward from the line its header names, as `git apply`
    /// does. Hunks keep their order and do not overlap; a line that differs only in
    /// trailing whitespace still matches when nothing matches exactly. The error names the
    /// first hunk that fits nowhere.
    pub fn relocate(&self, old_text: &str) -> Result<FilePatch, String> {
        let lines: Vec<&str> = old_text.lines().collect();
        let mut out = self.clone();
        let mut offset = 0isize;
        let mut earliest = 0;
        for hunk in &mut out.hunks {
            let hinted = first_old_index(hunk);
            let hint = hinted.saturating_add_signed(offset).min(lines.len());
            if hunk.pre_image.is_empty() {
                // Nothing to match (a pure insertion without context): follow the previous hunk.
                shift(hunk, hint as isize - hinted as isize);
                continue;
            }
            let pre_image = std::mem::take(&mut hunk.pre_image);
            let pre: Vec<&str> = pre_image.iter().map(String::as_str).collect();
            let pos = find(&lines, &pre, hint, earliest, |a, b| a == b)
                .or_else(|| find(&lines, &pre, hint, earliest, |a, b| a.trim_end() == b.trim_end()))
                .ok_or_else(|| {
                    format!("hunk @@ -{},{} @@ does not match the file", hunk.old_start, hunk.old_count)
                })?;
            offset = pos as isize - hinted as isize;
            shift(hunk, offset);
            earliest = pos + pre.len();
            hunk.pre_image = pre_image;
        }
        Ok(out)
    }
}

/// 0-based index of the first old line the hunk covers (`-a,0` covers none: after line a).
fn first_old_index(hunk: &Hunk) -> usize {
    if hunk.old_count == 0 {
        hunk.old_start
    } else {
        hunk.old_start.saturating_sub(1)
    }
}

/// The start in `lines[earliest..]` nearest to `hint` where `pre` matches line by line.
fn find(
    lines: &[&str],
    pre: &[&str],
    hint: usize,
    earliest: usize,
    same: impl Fn(&str, &str) -> bool,
) -> Option<usize> {
    let last = lines.len().checked_sub(pre.len())?;
    if earliest > last {
        return None;
    }
    let hint = hint.clamp(earliest, last);
    let matches = |p: usize| pre.iter().zip(&lines[p..]).all(|(a, b)| same(a, b));
    (0..=last - earliest).find_map(|d| {
        let after = (hint + d <= last && matches(hint + d)).then_some(hint + d);
        let before = hint.checked_sub(d).filter(|&p| d > 0 && p >= earliest && matches(p));
        after.or(before)
    })
}

fn shift(hunk: &mut Hunk, delta: isize) {
    hunk.old_start = hunk.old_start.saturating_add_signed(delta);
    hunk.new_start = hunk.new_start.saturating_add_signed(delta);
    for block in &mut hunk.blocks {
        block.after_old_line = block.after_old_line.saturating_add_signed(delta);
        for (line, _) in &mut block.removed {
            *line = line.saturating_add_signed(delta);
        }
    }
}
