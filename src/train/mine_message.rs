//! A commit message as a query: what the miner keeps of it, and the marks of reverts,
//! cherry-picks and backports that make a commit a copy of another.
//!
//! What is removed (the text around it is kept):
//! - trailers: a last paragraph of `Token: value` lines (Signed-off-by, Change-Id, …), and the
//!   well-known trailer lines wherever they stand (a squash's body repeats its commits' ones);
//! - issue and pull-request references: `#123`, `GH-123`, `org/repo#7`, `PR#12`, links to
//!   issues, pull requests and bug trackers, with the words that announce them (`Fixes`,
//!   `closes`, `see`, `issue`, …) and the `and`s and commas between them;
//! - template boilerplate: HTML comments, checklists (`- [ ]`, `- [x]`), a pull-request
//!   template's headings (`## Description`, `**Checklist**`) and prompts (`Please describe …`),
//!   `[skip ci]`, rules (`---`);
//! - the noise of a squash: its commits' one- or two-word subjects (`* wip`, `* review`) and
//!   `Merge branch …` / `Apply suggestions from code review` lines.

/// Trailer keys removed wherever their line stands (lower case, without the colon).
const TRAILERS: &[&str] = &[
    "signed-off-by",
    "co-authored-by",
    "reviewed-by",
    "acked-by",
    "tested-by",
    "reported-by",
    "suggested-by",
    "helped-by",
    "requested-by",
    "approved-by",
    "original-author",
    "change-id",
    "reviewed-on",
    "pr-url",
    "pr-close",
    "differential revision",
    "git-svn-id",
    "cc",
    "bug",
    "fixes",
    "closes",
    "resolves",
    "refs",
    "ref",
    "see-also",
];

/// Words that announce a reference, removed with it (lower case, punctuation stripped).
const REF_WORDS: &[&str] = &[
    "close",
    "closes",
    "closed",
    "fix",
    "fixes",
    "fixed",
    "resolve",
    "resolves",
    "resolved",
    "ref",
    "refs",
    "references",
    "see",
    "related",
    "relates",
    "to",
    "part",
    "of",
    "in",
    "via",
    "cf",
    "issue",
    "issues",
    "pr",
    "prs",
    "pull",
    "request",
    "requests",
    "backport",
    "addresses",
    "address",
    "follow-up",
    "followup",
];

/// Pull-request template headings (lower case, without `#`, `*`, `:` or `?`).
const TEMPLATE_HEADINGS: &[&str] = &[
    "description",
    "summary",
    "checklist",
    "pr checklist",
    "pull request checklist",
    "motivation",
    "motivation and context",
    "context",
    "types of changes",
    "type of change",
    "how has this been tested",
    "testing",
    "related issue",
    "related issues",
    "issue",
    "issues",
    "references",
    "screenshots",
    "changes",
    "changes proposed in this pull request",
    "what does this pr do",
    "what does this implement/fix",
    "what kind of change does this pr introduce",
    "does this introduce a breaking change",
    "other information",
    "additional context",
    "notes for reviewers",
    "reviewer checklist",
];

/// Lines that start with these (lower case) are a template's prompts or a merge's noise.
const BOILERPLATE_STARTS: &[&str] = &[
    "please describe",
    "please provide",
    "please explain",
    "please include",
    "please fill",
    "please delete",
    "please remove",
    "please make sure",
    "please check",
    "please ensure",
    "please add",
    "please link",
    "please list",
    "please read",
    "please review",
    "thank you for contributing",
    "thanks for contributing",
    "merge branch ",
    "merge remote-tracking branch",
    "merge pull request",
    "apply suggestions from code review",
    "apply suggestion from",
    "[pre-commit.ci]",
    "pre-commit autoupdate",
    "(cherry picked from commit",
];

/// The message cleaned for a query (see the module comment); blank lines collapsed, trimmed.
pub fn clean_message(raw: &str) -> String {
    let text = strip_html_comments(&raw.replace("\r\n", "\n"));
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    drop_trailer_paragraphs(&mut lines);
    let mut kept: Vec<String> = Vec::new();
    for line in lines {
        if is_dropped_line(&line) {
            continue;
        }
        let line = remove_tags(&remove_references(&line));
        let had_text = !line.trim().is_empty();
        if had_text && !line.chars().any(char::is_alphanumeric) {
            continue; // only punctuation left once the references went
        }
        kept.push(line.trim_end().to_string());
    }
    let mut out = String::new();
    let mut blank = false;
    for line in kept {
        if line.trim().is_empty() {
            blank = !out.is_empty();
            continue;
        }
        if blank {
            out.push_str("\n\n");
        } else if !out.is_empty() {
            out.push('\n');
        }
        blank = false;
        out.push_str(&line);
    }
    out
}

/// A revert: `Revert "…"`, a conventional `revert:`, or git's `This reverts commit …`.
pub fn is_revert(raw: &str) -> bool {
    let head = raw.trim_start().to_lowercase();
    head.starts_with("revert \"")
        || head.starts_with("revert '")
        || head.starts_with("revert `")
        || head.starts_with("revert:")
        || head.starts_with("revert(")
        || head.contains("this reverts commit")
}

/// A cherry-pick made with `-x`.
pub fn is_cherry_pick(raw: &str) -> bool {
    raw.to_lowercase().contains("(cherry picked from commit")
}

/// The message without a backport's prefix (`[Backport 2.x] `, `[3.1] `, `Backport PR #12: `,
/// `backport: `), and whether it had one.
pub fn strip_backport(message: &str) -> (&str, bool) {
    let mut rest = message.trim_start();
    let mut found = false;
    loop {
        let lower = rest.to_lowercase();
        if rest.starts_with('[') {
            let Some(end) = rest.find(']') else { break };
            let inner = lower[1..end].trim();
            let versionish = !inner.is_empty()
                && inner.chars().all(|c| c.is_ascii_digit() || matches!(c, '.' | 'x' | 'v' | '-'))
                && inner.chars().any(|c| c.is_ascii_digit());
            if inner.starts_with("backport") || versionish {
                rest = rest[end + 1..].trim_start();
                found = true;
                continue;
            }
            break;
        }
        if lower.starts_with("backport") {
            // `Backport PR #12: Title`, `Backport of #12 to 2.x: Title`, `backport: Title`.
            let cut = match rest.find(':') {
                Some(colon) if colon < 60 && !rest[..colon].contains('\n') => colon + 1,
                _ => "backport".len(),
            };
            rest = rest[cut..].trim_start();
            found = true;
            continue;
        }
        break;
    }
    (rest, found)
}

/// The key near-identical messages share: letters and digits in lower case, one space between
/// runs of them.
pub fn message_key(message: &str) -> String {
    let mut key = String::with_capacity(message.len());
    for word in message.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        if !key.is_empty() {
            key.push(' ');
        }
        key.extend(word.chars().flat_map(char::to_lowercase));
    }
    key
}

fn strip_html_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("<!--") {
        out.push_str(&rest[..start]);
        match rest[start + 4..].find("-->") {
            Some(end) => rest = &rest[start + 4 + end + 3..],
            None => return out,
        }
    }
    out.push_str(rest);
    out
}

/// The key (lower case) and value of a `Token: value` trailer line, if the line is one.
fn trailer(line: &str) -> Option<(String, &str)> {
    let (key, value) = line.trim().split_once(':')?;
    let (key, value) = (key.trim(), value.trim());
    let simple = !key.is_empty()
        && key.len() <= 40
        && key.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == ' ')
        && key.split(' ').count() <= 2;
    (simple && !value.is_empty()).then(|| (key.to_ascii_lowercase(), value))
}

/// A trailer git or a forge wrote: a hyphenated key (`Signed-off-by`, `Change-Id`), or a known
/// one whose value is one token or an address (`Bug: 1234`, `Cc: A <a@b>`); not a sentence
/// such as `Fixes: the crash when …`.
fn is_machine_trailer(line: &str) -> bool {
    trailer(line).is_some_and(|(key, value)| {
        key.contains('-')
            || (TRAILERS.contains(&key.as_str())
                && (value.split_whitespace().count() == 1 || value.contains('@')))
    })
}

/// Drops last paragraphs made only of trailers (git's trailer block) when one of them is a
/// machine's (so a closing `Note: …` sentence stays).
fn drop_trailer_paragraphs(lines: &mut Vec<String>) {
    loop {
        while lines.last().is_some_and(|l| l.trim().is_empty()) {
            lines.pop();
        }
        let start = lines.iter().rposition(|l| l.trim().is_empty()).map_or(0, |i| i + 1);
        if start == 0 {
            return; // the subject line is never a trailer block
        }
        let para = &lines[start..];
        if !(para.iter().all(|l| trailer(l).is_some()) && para.iter().any(|l| is_machine_trailer(l))) {
            return;
        }
        lines.truncate(start);
    }
}

fn is_dropped_line(line: &str) -> bool {
    let t = line.trim();
    let lower = t.to_lowercase();
    if trailer(t).is_some_and(|(key, _)| TRAILERS.contains(&key.as_str())) && is_machine_trailer(t) {
        return true;
    }
    let unbulleted = lower.trim_start_matches(['-', '*', '+', ' ']);
    if ["[ ]", "[x]"].iter().any(|b| unbulleted.starts_with(b)) {
        return true; // a checklist item
    }
    if BOILERPLATE_STARTS.iter().any(|s| unbulleted.starts_with(s)) {
        return true;
    }
    if !t.is_empty() && t.chars().all(|c| matches!(c, '-' | '=' | '*' | '_' | ' ')) && t.len() >= 3 {
        return true; // a rule
    }
    let heading = lower.trim_matches(|c: char| matches!(c, '#' | '*' | '_' | ':' | '?' | ' '));
    let looks_like_heading = t.starts_with('#') || t.starts_with("**") || t.ends_with(':');
    if looks_like_heading && TEMPLATE_HEADINGS.contains(&heading) {
        return true;
    }
    // A squash lists its commits as `* subject`: one or two words say nothing ("* wip").
    if let Some(item) = t.strip_prefix("* ") {
        if item.split_whitespace().count() <= 2 {
            return true;
        }
    }
    false
}

/// `[skip ci]`-style tags.
fn remove_tags(line: &str) -> String {
    let mut out = line.to_string();
    for tag in ["[skip ci]", "[ci skip]", "[skip actions]", "[no ci]", "[skip-ci]"] {
        // ASCII lower case keeps byte offsets.
        while let Some(i) = out.to_ascii_lowercase().find(tag) {
            out.replace_range(i..i + tag.len(), "");
        }
    }
    if out.len() != line.len() {
        out = out.split_whitespace().collect::<Vec<_>>().join(" ");
    }
    out
}

/// Is this token (punctuation around it stripped) a reference to an issue or pull request?
fn is_reference(core: &str) -> bool {
    let lower = core.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        return [
            "/issues/",
            "/issue/",
            "/pull/",
            "/pulls/",
            "/merge_requests/",
            "/-/issues",
            "/bugs/",
            "show_bug.cgi",
            "/ticket/",
            "/tickets/",
            "bugs.python.org/issue",
            "/browse/",
        ]
        .iter()
        .any(|p| lower.contains(p));
    }
    if let Some(num) = lower.strip_prefix("gh-") {
        return !num.is_empty() && num.chars().all(|c| c.is_ascii_digit());
    }
    let Some((before, num)) = lower.rsplit_once('#') else { return false };
    !num.is_empty()
        && num.chars().all(|c| c.is_ascii_digit())
        && before.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '/'))
}

/// The token split as (leading brackets and quotes, core, trailing punctuation).
fn split_token(token: &str) -> (&str, &str, &str) {
    let core_start = token.find(|c: char| !matches!(c, '(' | '[' | '{' | '"' | '\'')).unwrap_or(token.len());
    let (lead, rest) = token.split_at(core_start);
    let core_end = rest
        .rfind(|c: char| !matches!(c, ')' | ']' | '}' | '.' | ',' | ';' | ':' | '!' | '?' | '"' | '\''))
        .map_or(0, |i| i + rest[i..].chars().next().map_or(1, char::len_utf8));
    let (core, trail) = rest.split_at(core_end);
    (lead, core, trail)
}

/// Removes the references of one line, with their announcing words and connectors; a line
/// without references comes back unchanged (indentation included).
fn remove_references(line: &str) -> String {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    let refs: Vec<bool> = tokens.iter().map(|t| is_reference(split_token(t).1)).collect();
    if !refs.contains(&true) {
        return line.to_string();
    }
    let mut gone = refs.clone();
    let n = tokens.len();
    let core_lower = |i: usize| split_token(tokens[i]).1.to_lowercase();
    for i in 0..n {
        if !refs[i] {
            continue;
        }
        // Connectors between two references: `#1 and #2`, `#1, #2`.
        if i + 2 < n && refs[i + 2] && matches!(core_lower(i + 1).as_str(), "and" | "or" | "&" | "") {
            gone[i + 1] = true;
        }
        // Words announcing the first reference of a run (`Fixes`, `closes issue`, `see also`).
        let mut j = i;
        while j > 0 && i - j < 4 {
            let w = core_lower(j - 1);
            if refs[j - 1] || gone[j - 1] || !(REF_WORDS.contains(&w.as_str()) || w == "also") {
                break;
            }
            // A word that ends a clause (`foo.`) belongs to the clause before.
            if split_token(tokens[j - 1]).2.contains(['.', ';', '!', '?']) {
                break;
            }
            gone[j - 1] = true;
            j -= 1;
        }
    }
    // Real words, and between them what the removed tokens leave: their punctuation.
    let mut words: Vec<String> = Vec::new();
    let mut pending = String::new(); // punctuation left since the last real word
    let mut openers = String::new(); // unmatched openers that go to the next real word
    for (t, &g) in tokens.iter().zip(&gone) {
        if g {
            let (lead, _, trail) = split_token(t);
            pending.push_str(lead);
            pending.push_str(trail);
            continue;
        }
        let (closers, punct, opens) = settle(&pending);
        pending.clear();
        if let Some(prev) = words.last_mut() {
            prev.push_str(&closers);
            if !punct.is_empty() && !prev.ends_with(|c: char| ",.;:!?".contains(c)) {
                prev.push_str(&punct);
            }
        }
        openers.push_str(&opens);
        words.push(format!("{openers}{t}"));
        openers.clear();
    }
    let (closers, punct, _) = settle(&pending);
    if let Some(prev) = words.last_mut() {
        prev.push_str(&closers);
        if matches!(punct.as_str(), "." | "!" | "?") && !prev.ends_with(|c: char| ".!?".contains(c)) {
            prev.push_str(&punct);
        }
        // A clause the references ended (`…, see #12`) does not end in a comma.
        while prev.ends_with([',', ';', ':']) {
            prev.pop();
        }
    }
    if words.is_empty() {
        return String::new();
    }
    let indent: String = line.chars().take_while(|c| c.is_whitespace()).collect();
    format!("{indent}{}", words.join(" "))
}

/// What removed tokens leave between two real words, as (closers of brackets opened before,
/// one punctuation mark, openers of brackets closed after): pairs opened and closed within it
/// cancel, quotes go, and of several marks the strongest stays (`.` over `;` over `,`).
fn settle(remnant: &str) -> (String, String, String) {
    let mut closers = String::new();
    let mut stack: Vec<char> = Vec::new();
    let mut punct: Option<char> = None;
    for c in remnant.chars() {
        match c {
            '(' | '[' | '{' => stack.push(c),
            ')' | ']' | '}' => {
                let open = match c {
                    ')' => '(',
                    ']' => '[',
                    _ => '{',
                };
                if stack.last() == Some(&open) {
                    stack.pop();
                } else if stack.is_empty() {
                    closers.push(c);
                }
            }
            '.' | '!' | '?' | ';' | ',' | ':' if stack.is_empty() => {
                let rank = |p: char| match p {
                    '.' | '!' | '?' => 3,
                    ';' => 2,
                    ',' => 1,
                    _ => 0,
                };
                if punct.is_none_or(|p| rank(c) > rank(p)) {
                    punct = Some(c);
                }
            }
            _ => {}
        }
    }
    let punct = punct.filter(|&p| p != ':').map(String::from).unwrap_or_default();
    (closers, punct, stack.into_iter().collect())
}
