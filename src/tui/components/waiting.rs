//! What the dense column says while a cold (query-first) search waits for the chunks it needs:
//! the count and the time left, never "0 hits" over an answer that has not come.

use crate::tui::app::FirstProgress;
use std::time::Duration;

/// `embedding the 180 chunks this issue needs: 40/180, ~6 s`; before the indexer has taken
/// the search's request, what it is about to do.
pub fn needs(first: Option<&FirstProgress>) -> String {
    match first {
        Some(f) if f.done < f.total => {
            let eta = f.eta().map(|d| format!(", ~{}", seconds(d))).unwrap_or_default();
            format!("embedding the {} chunks this issue needs: {}/{}{eta}", f.total, f.done, f.total)
        }
        Some(f) => format!("the {} chunks this issue needs are embedded; ranking", f.total),
        None => "embedding the chunks this issue needs…".to_string(),
    }
}

/// The column's header beside its title: the hits of the first answer, if any, then the wait;
/// shorter forms for narrow columns.
pub fn summaries(hits: usize, first: Option<&FirstProgress>) -> Vec<String> {
    let needs = needs(first);
    let mut out = Vec::new();
    if hits > 0 {
        out.push(format!(" {hits} hits so far · {needs} "));
    }
    out.push(format!(" {needs} "));
    if let Some(f) = first.filter(|f| f.done < f.total) {
        out.push(format!(" embedding {}/{} … ", f.done, f.total));
    }
    out.push(" embedding… ".to_string());
    out
}

/// The column's body while its first answer has no hits.
pub fn body(first: Option<&FirstProgress>) -> String {
    let needs = needs(first);
    let needs = needs.trim_end_matches('…');
    format!("{}{}. BM25's answer is on the left.", needs[..1].to_uppercase(), &needs[1..])
}

fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64().ceil() as u64;
    if s < 90 {
        format!("{s} s")
    } else {
        format!("{} min", s.div_ceil(60))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn the_wait_says_what_it_waits_for_and_how_long() {
        let t0 = Instant::now();
        let f = FirstProgress { done: 40, total: 180, started: t0, last: t0 + Duration::from_secs(2) };
        assert_eq!(needs(Some(&f)), "embedding the 180 chunks this issue needs: 40/180, ~7 s");
        assert_eq!(needs(None), "embedding the chunks this issue needs…");
        let s = summaries(0, Some(&f));
        assert!(!s.iter().any(|t| t.contains("0 hits")), "no answer is no `0 hits`: {s:?}");
        assert!(summaries(3, Some(&f))[0].starts_with(" 3 hits so far · embedding the 180"));
        assert_eq!(body(None), "Embedding the chunks this issue needs. BM25's answer is on the left.");
    }
}
