//! What a client that ranks in the team's store needs of it (`--store-search`): which of its
//! inputs the store holds, and the tower's HNSW index ([`search_index_sql`]), built by the
//! first client whose role may.

use super::dense::VectorKey;
use super::shared::{search_index_sql, HnswParams, SharedVectors, FETCH_KEYS};
use std::collections::HashSet;

impl SharedVectors {
    /// Which of `keys` the store holds for `tower` (no vector is read); `None` when it does not
    /// answer.
    pub fn held(&self, tower: &str, keys: &[VectorKey]) -> Option<HashSet<VectorKey>> {
        let mut out = HashSet::new();
        for part in keys.chunks(FETCH_KEYS) {
            let wanted: Vec<&[u8]> = part.iter().map(|k| k.as_slice()).collect();
            let rows = self.with_client(|c| {
                c.query(
                    "SELECT key FROM coret_vectors WHERE tower = $1 AND key = ANY($2)",
                    &[&tower, &wanted],
                )
            })?;
            out.extend(rows.iter().filter_map(|r| <[u8; 16]>::try_from(r.get::<_, &[u8]>(0)).ok()));
        }
        Some(out)
    }

    /// Builds `tower`'s HNSW index unless it exists (minutes for a million vectors; writes to
    /// the table wait meanwhile). `Some(false)`: this role may not (the read-only one), and
    /// searches scan the tower exactly instead; `None`: the store does not answer.
    pub fn ensure_search_index(&self, tower: &str, dim: usize) -> Option<bool> {
        let (name, sql) = search_index_sql(tower, dim, HnswParams::default());
        let exists = "SELECT to_regclass($1) IS NOT NULL";
        self.with_client(|c| match c.query_one(exists, &[&name])?.get::<_, bool>(0) {
            true => Ok(true),
            false => match c.batch_execute(&sql) {
                Ok(()) => Ok(true),
                Err(e) if e.code() == Some(&postgres::error::SqlState::INSUFFICIENT_PRIVILEGE) => Ok(false),
                Err(e) => Err(e),
            },
        })
    }
}
