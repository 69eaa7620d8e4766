//! The World's maps from a Rust type to its column or resource index.
//!
//! Owns: [`TypeMap`], a `HashMap` keyed by `TypeId` with a hasher that takes the id's own hash
//! bits instead of running SipHash over them. Must never: be keyed by anything but `TypeId`
//! (the hasher relies on the key already being a uniformly distributed hash).
//!
//! Why: every `insert`, `get` and query looks its column up by type. A `TypeId` is itself a
//! 128-bit hash of the type, so hashing it again with SipHash (the std default, built to resist
//! adversarial keys, which type ids are not) was 22 % of a 10,000-entity, 4-component insert in
//! `perf`; the ids' bits need only be folded into the table's hash.

use std::any::TypeId;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Folds what `TypeId`'s `Hash` writes (its hash bits) into one `u64`.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct TypeIdHasher(u64);

impl Hasher for TypeIdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Whatever form the standard library writes the id in, its bits are folded in.
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    fn write_u64(&mut self, n: u64) {
        // One multiply-rotate round (FxHash's): cheap, and the id's bits are already random.
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_u128(&mut self, n: u128) {
        self.write_u64(n as u64);
        self.write_u64((n >> 64) as u64);
    }
}

/// A map from a type to `V`, hashed by [`TypeIdHasher`].
pub(crate) type TypeMap<V> = HashMap<TypeId, V, BuildHasherDefault<TypeIdHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_types_land_on_distinct_keys() {
        let mut m: TypeMap<usize> = TypeMap::default();
        m.insert(TypeId::of::<u8>(), 1);
        m.insert(TypeId::of::<u16>(), 2);
        m.insert(TypeId::of::<String>(), 3);
        m.insert(TypeId::of::<(u8, u8)>(), 4);
        assert_eq!(m.len(), 4);
        assert_eq!(m[&TypeId::of::<u16>()], 2);
        assert_eq!(m.get(&TypeId::of::<u32>()), None);
    }
}
