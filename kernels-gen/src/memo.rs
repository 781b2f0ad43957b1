//! One process-wide memo for values that are pure functions of small keys (a kernel's
//! analysis, the tile count of a geometry, the 32-bit proof of a call). A proc-macro
//! asks for the same kernels many times in one crate and the launcher asks on every
//! launch, so each is computed once. [`FxMap`] is the hash map they use, for the
//! runtime's per-call lookups too.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::{Arc, RwLock};

/// A multiply-rotate hash of the key's words (rustc's FxHash). The launcher hashes
/// a call's whole shape on every launch, where SipHash took most of the lookup;
/// keys are the program's own kernels and shapes, and a full memo starts over, so
/// no input can make it grow or slow down for long.
#[derive(Default)]
pub struct Fx(u64);

impl Fx {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for Fx {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        for &b in chunks.remainder() {
            self.add(u64::from(b));
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A `HashMap` with [`Fx`] hashing.
pub type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<Fx>>;

/// A memo of at most `cap` entries (it starts over when full, so keys built from
/// run-time shapes cannot grow it without bound). A poisoned lock only costs the
/// memo: the value is computed again.
pub(crate) struct Memo<K, V> {
    map: RwLock<Option<FxMap<K, Arc<V>>>>,
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
            let m = m.get_or_insert_with(FxMap::default);
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
