//! One process-wide memo for values that are pure functions of small keys (a kernel's
//! analysis, the tile count of a geometry, the 32-bit proof of a call). A proc-macro
//! asks for the same kernels many times in one crate and the launcher asks on every
//! launch, so each is computed once.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, RwLock};

/// A memo of at most `cap` entries (it starts over when full, so keys built from
/// run-time shapes cannot grow it without bound). A poisoned lock only costs the
/// memo: the value is computed again.
pub(crate) struct Memo<K, V> {
    map: RwLock<Option<HashMap<K, Arc<V>>>>,
    cap: usize,
}

impl<K: Eq + Hash + Clone, V> Memo<K, V> {
    /// An empty memo holding up to `cap` entries.
    pub(crate) const fn new(cap: usize) -> Self {
        Memo {
            map: RwLock::new(None),
            cap,
        }
    }

    /// The value for `key`, computed by `make` the first time it is asked for.
    pub(crate) fn get_or_insert_with(&self, key: &K, make: impl FnOnce() -> V) -> Arc<V> {
        let known = self
            .map
            .read()
            .ok()
            .and_then(|m| m.as_ref().and_then(|m| m.get(key).cloned()));
        if let Some(v) = known {
            return v;
        }
        let v = Arc::new(make());
        if let Ok(mut m) = self.map.write() {
            let m = m.get_or_insert_with(HashMap::new);
            if m.len() >= self.cap {
                m.clear();
            }
            m.insert(key.clone(), v.clone());
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn computes_once_and_starts_over_when_full() {
        static SQUARES: Memo<u32, u64> = Memo::new(2);
        assert_eq!(*SQUARES.get_or_insert_with(&12, || 144), 144);
        assert_eq!(*SQUARES.get_or_insert_with(&12, || 0), 144);
        SQUARES.get_or_insert_with(&2, || 4);
        // Full: the third key clears the memo, so 12 is computed again.
        SQUARES.get_or_insert_with(&3, || 9);
        assert_eq!(*SQUARES.get_or_insert_with(&12, || 145), 145);
    }
}
