//! Highlighted files for the preview, cached so a file is highlighted once, not every frame.

use crate::tui::highlight::HighlightedFile;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

const CAPACITY: usize = 64;

#[derive(Clone, Debug, Default)]
pub struct FileCache {
    /// `None`: the backend could not provide the file.
    files: HashMap<String, Option<Arc<HighlightedFile>>>,
    order: VecDeque<String>,
    loading: HashSet<String>,
}

/// What the cache knows about a file.
pub enum Cached<'a> {
    Loaded(&'a HighlightedFile),
    Unavailable,
    Loading,
    Unknown,
}

impl FileCache {
    pub fn get(&self, path: &str) -> Cached<'_> {
        match self.files.get(path) {
            Some(Some(file)) => Cached::Loaded(file),
            Some(None) => Cached::Unavailable,
            None if self.loading.contains(path) => Cached::Loading,
            None => Cached::Unknown,
        }
    }

    /// Marks `path` as requested; returns false if it is cached or already requested.
    pub fn request(&mut self, path: &str) -> bool {
        !self.files.contains_key(path) && self.loading.insert(path.to_string())
    }

    pub fn insert(&mut self, path: String, file: Option<Arc<HighlightedFile>>) {
        self.loading.remove(&path);
        if self.files.insert(path.clone(), file).is_none() {
            self.order.push_back(path);
        }
        while self.order.len() > CAPACITY {
            if let Some(old) = self.order.pop_front() {
                self.files.remove(&old);
            }
        }
    }

    /// The request was dropped by the worker; it may be asked again.
    pub fn forget_request(&mut self, path: &str) {
        self.loading.remove(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_once_until_skipped_and_evicts_oldest() {
        let mut cache = FileCache::default();
        assert!(cache.request("a.py"));
        assert!(!cache.request("a.py"), "already loading");
        cache.forget_request("a.py");
        assert!(cache.request("a.py"), "asked again after a skip");
        cache.insert("a.py".into(), None);
        assert!(matches!(cache.get("a.py"), Cached::Unavailable));
        for i in 0..CAPACITY {
            cache.insert(format!("{i}.py"), Some(Arc::default()));
        }
        assert!(matches!(cache.get("a.py"), Cached::Unknown), "evicted");
        assert!(matches!(cache.get("5.py"), Cached::Loaded(_)));
    }
}
