//! File evidence. A file whose several chunks rank high is more likely the answer than one lone
//! match: its best chunk is lifted by its other strong chunks ([`lift_best_of_file`]). And a
//! list whose first rows are one file's ten methods answers fewer questions than one that
//! shows the next file too: in the flat list each further chunk of a file decays
//! ([`decay_within_file`]).

use std::collections::HashMap;

use crate::engine::RepoIndex;
use crate::index::Hit;

/// How many of the best hits count as a file's evidence.
pub const EVIDENCE_TOP: usize = 30;

/// A file's further chunks among the first [`EVIDENCE_TOP`] hits add `weight` × their scores
/// to its best chunk, each further one half as much as the one before (a file's second strong
/// chunk says more than its tenth). Best first again.
pub fn lift_best_of_file(repo: &RepoIndex, mut hits: Vec<Hit>, weight: f32) -> Vec<Hit> {
    let mut seen: HashMap<&str, (usize, f32, f32)> = HashMap::new(); // path → (best's index, evidence, next share)
    for (i, h) in hits.iter().enumerate().take(EVIDENCE_TOP) {
        let Some(c) = repo.chunks.get(h.chunk as usize) else { continue };
        match seen.get_mut(c.path.as_str()) {
            None => {
                seen.insert(c.path.as_str(), (i, 0.0, 1.0));
            }
            Some((_, evidence, share)) => {
                *evidence += *share * h.score.max(0.0);
                *share *= 0.5;
            }
        }
    }
    let lifts: Vec<(usize, f32)> = seen.values().map(|&(best, evidence, _)| (best, evidence)).collect();
    for (best, evidence) in lifts {
        hits[best].score += weight * evidence;
    }
    super::sort_hits(&mut hits);
    hits
}

/// The n-th further chunk of a file (in list order) scores × `decay`ⁿ. Best first again.
pub fn decay_within_file(repo: &RepoIndex, mut hits: Vec<Hit>, decay: f32) -> Vec<Hit> {
    let mut count: HashMap<&str, i32> = HashMap::new();
    for h in hits.iter_mut() {
        let Some(c) = repo.chunks.get(h.chunk as usize) else { continue };
        let n = count.entry(c.path.as_str()).or_default();
        h.score *= decay.powi(*n);
        *n += 1;
    }
    super::sort_hits(&mut hits);
    hits
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rank::layer::tests::repo_of;

    fn fixture() -> RepoIndex {
        repo_of(&[
            ("src/a.py", "def a1():\n    pass\n\ndef a2():\n    pass\n\ndef a3():\n    pass\n"),
            ("src/b.py", "def b1():\n    pass\n"),
            ("src/c.py", "def c1():\n    pass\n"),
        ])
    }

    fn id(repo: &RepoIndex, name: &str) -> u32 {
        repo.chunks.iter().position(|c| c.name == name).unwrap() as u32
    }

    fn names(repo: &RepoIndex, hits: &[Hit]) -> Vec<String> {
        hits.iter().map(|h| repo.chunks[h.chunk as usize].name.clone()).collect()
    }

    #[test]
    fn a_file_with_several_strong_chunks_lifts_its_best_above_a_lone_match() {
        let repo = fixture();
        let h = |name: &str, score: f32| Hit { chunk: id(&repo, name), score };
        let hits = vec![h("b1", 5.0), h("a1", 4.5), h("a2", 4.0), h("a3", 3.5), h("c1", 1.0)];
        let lifted = lift_best_of_file(&repo, hits.clone(), 0.3);
        // a1: 4.5 + 0.3 × (4.0 + 0.5 × 3.5) = 6.225 > 5.
        assert_eq!(names(&repo, &lifted)[..2], ["a1", "b1"]);
        assert!((lifted[0].score - 6.225).abs() < 1e-4, "{lifted:?}");
        assert_eq!(names(&repo, &lift_best_of_file(&repo, hits, 0.0)), ["b1", "a1", "a2", "a3", "c1"]);
    }

    #[test]
    fn further_chunks_of_one_file_make_room_for_the_next_file() {
        let repo = fixture();
        let h = |name: &str, score: f32| Hit { chunk: id(&repo, name), score };
        let hits = vec![h("a1", 5.0), h("a2", 4.9), h("a3", 4.8), h("b1", 4.0), h("c1", 1.0)];
        let decayed = decay_within_file(&repo, hits.clone(), 0.7);
        // a2 × 0.7 = 3.43, a3 × 0.49 = 2.35: b1 comes second.
        assert_eq!(names(&repo, &decayed), ["a1", "b1", "a2", "a3", "c1"]);
        assert_eq!(decay_within_file(&repo, hits.clone(), 1.0), hits, "1 changes nothing");
    }
}
