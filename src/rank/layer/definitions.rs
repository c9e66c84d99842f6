//! Definitions and path words: what the query names, as a bonus on the fused score. A name
//! query (`Router`, `Runtime::spawn`) lifts the chunks that define it by `name_boost`; a code
//! name inside a question ("why does `spawn_blocking` block", `Mod.fun`, `snake_case`) lifts its
//! definitions by `name_boost` × [`super::SignalWeights::inline_name`]; a question's words lift
//! the ranked chunks of files whose name or directories match them (`path_word_boost`). An issue
//! gets none of these (its mentions are [`crate::rank::mentions`]'s). The rules of what defines
//! a name and what a path word is live in [`crate::rank::names`].

use std::collections::HashMap;

use crate::engine::RepoIndex;
use crate::index::Hit;
use crate::rank::fusion::FusionParams;
use crate::rank::mentions::NamedSymbols;
use crate::rank::{names, QueryShape};

/// Adds each chunk's bonus for `query` of `shape` to `bonus`; path words lift only chunks of
/// `lists` (never one no retriever ranked).
pub fn add_bonus(
    repo: &RepoIndex,
    query: &str,
    shape: QueryShape,
    params: &FusionParams,
    lists: [&[Hit]; 2],
    bonus: &mut HashMap<u32, f32>,
) {
    let chunks = || repo.chunks.iter().zip(0u32..).map(|(c, id)| (id, c));
    match shape {
        QueryShape::Name if params.name_boost > 0.0 => {
            for (id, strength) in names::definition_strengths(query, chunks()) {
                *bonus.entry(id).or_default() += params.name_boost * strength;
            }
        }
        QueryShape::Question => {
            let inline = params.name_boost * params.signals.inline_name;
            if inline > 0.0 {
                for name in NamedSymbols::of(query).iter() {
                    for (id, strength) in names::definition_strengths(name, chunks()) {
                        *bonus.entry(id).or_default() += inline * strength;
                    }
                }
            }
            if params.path_word_boost > 0.0 {
                add_path_words(repo, query, params.path_word_boost, lists, bonus);
            }
        }
        _ => {}
    }
}

fn add_path_words(
    repo: &RepoIndex,
    query: &str,
    boost: f32,
    lists: [&[Hit]; 2],
    bonus: &mut HashMap<u32, f32>,
) {
    let files = names::path_word_strengths(query, repo.files.iter().map(|f| f.path.as_str()));
    if files.is_empty() {
        return;
    }
    let mut lifted = std::collections::HashSet::new();
    for h in lists.into_iter().flatten() {
        let Some(c) = repo.chunks.get(h.chunk as usize) else { continue };
        // Once per chunk, however many lists hold it.
        if let Some(words) = files.get(c.path.as_str()).filter(|_| lifted.insert(h.chunk)) {
            *bonus.entry(h.chunk).or_default() += boost * words;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rank::layer::tests::repo_of;

    #[test]
    fn a_name_inside_a_question_lifts_its_definition_at_its_share() {
        let repo = repo_of(&[
            ("src/blocking.rs", "pub fn spawn_blocking() {\n}\n"),
            ("src/runtime.rs", "fn run() {\n    spawn_blocking();\n}\n"),
        ]);
        let def = repo.chunks.iter().position(|c| c.name == "spawn_blocking").unwrap() as u32;
        let bonus_of = |inline: f32, query: &str| {
            let mut p = FusionParams { path_word_boost: 0.0, ..FusionParams::default() };
            p.signals.inline_name = inline;
            let mut b = HashMap::new();
            add_bonus(&repo, query, QueryShape::of(query), &p, [&[], &[]], &mut b);
            b
        };
        let question = "why does spawn_blocking block the runtime";
        assert_eq!(QueryShape::of(question), QueryShape::Question);
        let half = bonus_of(0.5, question);
        let whole = bonus_of(1.0, "spawn_blocking");
        assert!(half[&def] > 0.0 && (2.0 * half[&def] - whole[&def]).abs() < 1e-5, "{half:?} {whole:?}");
        assert_eq!(half.len(), 1, "only the definition, not its caller: {half:?}");
        assert!(bonus_of(0.0, question).is_empty(), "off");
        assert!(bonus_of(0.5, "how does the runtime block").is_empty(), "prose names nothing");
    }
}
