//! One input of the cross-encoder: `[CLS] issue [SEP] chunk [SEP]`, segment 0 for the issue
//! with its separators' first, 1 for the chunk and the closing `[SEP]` (BERT's pair layout).
//! Training (from a shard's ids) and search (from texts) both build it here, so the model
//! always reads what it was trained on.

use crate::model::TokenizedInput;

/// Joins an issue's ids (`[CLS] … [SEP]`, as `InputTokenizer::query` lays them out) and a
/// chunk's (`[CLS] … [SEP]`, as `InputTokenizer::input`): the issue keeps at most `query_len`
/// positions (its `[SEP]` kept), the chunk gets the rest of `max_len` (its own `[CLS]` dropped,
/// its `[SEP]` kept). A short issue leaves its unused positions to the chunk.
pub fn join(query: &[u32], chunk: &[u32], max_len: usize, query_len: usize) -> TokenizedInput {
    let query_len = query_len.clamp(2, max_len.saturating_sub(2).max(2));
    let mut ids: Vec<u32> = if query.len() > query_len {
        query[..query_len - 1].iter().chain(query.last()).copied().collect()
    } else {
        query.to_vec()
    };
    let issue = ids.len();
    let body = chunk.get(1..chunk.len().saturating_sub(1)).unwrap_or(&[]);
    let room = max_len.saturating_sub(issue + 1);
    ids.extend(body.iter().take(room));
    if let Some(&sep) = chunk.last().filter(|_| chunk.len() >= 2) {
        ids.push(sep);
    }
    let mut type_ids = vec![0; ids.len()];
    type_ids[issue..].fill(1);
    TokenizedInput { ids, type_ids }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLS: u32 = 101;
    const SEP: u32 = 102;

    fn seq(body: std::ops::Range<u32>) -> Vec<u32> {
        std::iter::once(CLS).chain(body).chain([SEP]).collect()
    }

    #[test]
    fn issue_then_chunk_with_segments_and_one_cls() {
        let p = join(&seq(1..4), &seq(10..13), 64, 32);
        assert_eq!(p.ids, vec![CLS, 1, 2, 3, SEP, 10, 11, 12, SEP]);
        assert_eq!(p.type_ids, vec![0, 0, 0, 0, 0, 1, 1, 1, 1]);
    }

    #[test]
    fn a_long_issue_is_cut_to_its_share_and_the_chunk_fills_the_rest() {
        let p = join(&seq(1..100), &seq(1000..1100), 32, 10);
        assert_eq!(p.len(), 32);
        assert_eq!(&p.ids[..10], &[CLS, 1, 2, 3, 4, 5, 6, 7, 8, SEP], "issue keeps its [SEP]");
        assert_eq!(p.ids[10], 1000, "the chunk's body follows without its [CLS]");
        assert_eq!(*p.ids.last().unwrap(), SEP);
        assert_eq!(p.type_ids.iter().filter(|&&t| t == 0).count(), 10);
    }

    #[test]
    fn a_short_issue_leaves_its_room_to_the_chunk() {
        let p = join(&seq(1..3), &seq(1000..1100), 32, 16);
        assert_eq!(p.len(), 32);
        assert_eq!(p.type_ids.iter().filter(|&&t| t == 1).count(), 28);
    }
}
