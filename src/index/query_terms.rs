//! What a query gives BM25: its code tokens with how often each occurs, English function
//! words dropped.
//!
//! Issues are prose around identifiers. In a code index, words like "the" or "should" are
//! rare (docstrings and comments only), so BM25 gives them a high idf and they pull towards
//! chunks with long docstrings; dropping them lifted dev PR@5 from 0.255 to 0.311 (docs/RESULTS.md
//! "Retrieval on the dev set: this version's defaults"). Counting repeats is Okapi's
//! query-term frequency: the identifier an issue keeps naming matters more than one it
//! mentions in passing. A line repeated word for word (a pasted backtrace or log that loops)
//! counts once: its repeats are the paste's size, not the emphasis.

use super::code_tokens::tokens;

/// Function words of English prose, space-separated; none is an identifier on its own.
const STOP_WORDS: &str = "\
    a an the is are was were be been being to of and or in on at by for with this that these \
    those it its as from but if when then than so i we you he she they me my our your their \
    there here which what who whom how why where would could should can will shall may might \
    must do does did have has had not no also just only very some any all into about because \
    while after before such other same more most up out over under again further once both each \
    few own too s t don now using seems thanks hi hello please however though even still \
    something";

/// Distinct tokens of `query` in first-seen order, each with its number of occurrences;
/// stop words left out, and the repeats of a line (leading and trailing blanks aside) too.
pub fn query_terms(query: &str) -> Vec<(String, usize)> {
    let mut terms: Vec<(String, usize)> = Vec::new();
    let mut at: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut lines_seen = std::collections::HashSet::new();
    // A line break separates tokens, so reading line by line yields the same tokens.
    let lines = query.lines().filter(|line| lines_seen.insert(line.trim()));
    for token in lines.flat_map(tokens) {
        if STOP_WORDS.split_whitespace().any(|w| w == token) {
            continue;
        }
        match at.get(&token) {
            Some(&i) => terms[i].1 += 1,
            None => {
                at.insert(token.clone(), terms.len());
                terms.push((token, 1));
            }
        }
    }
    terms
}

/// Why `query` has nothing to search for, when it has not ([`query_terms`] is empty): one
/// rule and one message for every client (`--query`, MCP `locate`, the TUI), naming what was
/// left of the query. `None` when it has a term.
pub fn nothing_to_search(query: &str) -> Option<String> {
    if !query_terms(query).is_empty() {
        return None;
    }
    let shown: String = query.split_whitespace().collect::<Vec<_>>().join(" ");
    let shown = match shown.chars().count() > 40 {
        true => format!("{}…", shown.chars().take(40).collect::<String>()),
        false => shown,
    };
    Some(if shown.is_empty() {
        "the query is empty".to_string()
    } else if !shown.chars().any(char::is_alphanumeric) {
        format!("`{shown}` has no letter or digit to match")
    } else {
        format!("`{shown}` holds only common English words, which match everywhere; name what you look for")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_without_terms_says_what_was_left_of_it() {
        assert_eq!(nothing_to_search("   ").as_deref(), Some("the query is empty"));
        assert_eq!(nothing_to_search("").as_deref(), Some("the query is empty"));
        assert!(nothing_to_search("?!#$%").unwrap().contains("no letter or digit"));
        assert!(nothing_to_search("()").unwrap().contains("no letter or digit"));
        assert!(nothing_to_search("the").unwrap().contains("only common English words"));
        assert_eq!(nothing_to_search("the router"), None);
    }

    #[test]
    fn repeated_tokens_count_and_function_words_drop() {
        let terms =
            query_terms("The session should merge the proxies; Session.merge_environment ignores proxies");
        let count = |t: &str| terms.iter().find(|(x, _)| x == t).map(|&(_, n)| n);
        assert_eq!(count("session"), Some(2));
        assert_eq!(count("proxies"), Some(2));
        assert_eq!(count("merge"), Some(2), "`merge` and the piece of `merge_environment`");
        assert_eq!(count("merge_environment"), Some(1));
        assert_eq!(count("the"), None);
        assert_eq!(count("should"), None);
        assert_eq!(terms[0].0, "session", "first-seen order");
    }

    #[test]
    fn a_line_repeated_word_for_word_counts_once() {
        let line = "    from lib/rack/request.rb:42:in `parse_cookies_from_header'\n";
        let query = format!("Cookies break in rack\n{}then test.rb\n{line}", line.repeat(2000));
        let terms = query_terms(&query);
        let count = |t: &str| terms.iter().find(|(x, _)| x == t).map(|&(_, n)| n);
        assert_eq!(count("parse_cookies_from_header"), Some(1), "2001 copies of one line: once");
        assert_eq!(count("rack"), Some(2), "the prose's `rack` and the line's, once");
        assert_eq!(count("rb"), Some(2), "`request.rb` once, `test.rb` on its own line");
        let same_line_twice = query_terms("merge merge\nmerge");
        assert_eq!(same_line_twice, [("merge".to_string(), 3)], "repeats within distinct lines count");
    }

    #[test]
    fn identifiers_made_of_function_words_survive_whole() {
        let terms = query_terms("is_valid and not_found");
        let names: Vec<&str> = terms.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(names, ["is_valid", "valid", "not_found", "found"]);
    }
}
