//! The world state hash: a fixed, platform-independent digest of entities and component data.
//!
//! Owns: [`StateHasher`] (64-bit FNV-1a over little-endian bytes) and [`StateHash`], the trait a
//! component implements to feed its data in a fixed field order. Must never: read anything
//! timed, address-dependent or iteration-order-dependent (`HashMap` order, pointers), so that the
//! same world state gives the same hash on every machine, build and worker count.
//!
//! FNV-1a (Fowler, Noll, Vo) is chosen for being tiny, dependency-free and byte-order explicit;
//! the hash is a determinism check, not a security boundary. Floats hash by their bit pattern
//! (so `0.0` and `-0.0` differ), except that every NaN hashes as one canonical quiet NaN: IEEE
//! and Rust leave the payload of an arithmetic NaN unspecified among its inputs' (the compiler
//! may commute `a * b`), so two builds or kernel paths can produce NaNs that differ only in
//! payload, and a replay must not fail over that.

/// 64-bit FNV-1a offset basis.
const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
/// 64-bit FNV-1a prime.
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// A streaming FNV-1a 64-bit hasher over explicit little-endian bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateHasher(u64);

impl Default for StateHasher {
    /// A fresh hasher.
    fn default() -> Self {
        StateHasher(FNV_OFFSET)
    }
}

impl StateHasher {
    /// Feeds raw bytes.
    #[inline]
    pub(crate) fn write_bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(FNV_PRIME);
        }
    }

    /// Feeds a `u32` (little-endian).
    #[inline]
    pub(crate) fn write_u32(&mut self, v: u32) {
        self.write_bytes(&v.to_le_bytes());
    }

    /// Feeds a `u64` (little-endian).
    #[inline]
    pub(crate) fn write_u64(&mut self, v: u64) {
        self.write_bytes(&v.to_le_bytes());
    }

    /// Feeds a string: its length, then its bytes (so `"ab","c"` and `"a","bc"` differ).
    pub(crate) fn write_str(&mut self, s: &str) {
        self.write_u64(s.len() as u64);
        self.write_bytes(s.as_bytes());
    }

    /// The digest so far.
    pub fn finish(&self) -> u64 {
        self.0
    }
}

/// Data that can be fed to the state hash in a fixed order.
///
/// Implement it for a component by hashing every field that is simulation state, in declaration
/// order. Leave out caches and diagnostics: they are not state. `#[derive(StateHash)]` does
/// exactly that for structs and enums (an enum feeds its variant's index as a `u32`, then the
/// variant's fields); `#[state_hash(skip)]` leaves a field out:
///
/// ```
/// use lanegraph::world::{StateHash, StateHasher};
///
/// #[derive(StateHash)]
/// struct Health { hp: u32, #[state_hash(skip)] last_hit_frame: u64 }
///
/// let mut a = StateHasher::default();
/// Health { hp: 3, last_hit_frame: 10 }.hash_state(&mut a);
/// let mut b = StateHasher::default();
/// 3u32.hash_state(&mut b);
/// assert_eq!(a.finish(), b.finish());
/// ```
pub trait StateHash {
    /// Feeds `self` to `h`.
    fn hash_state(&self, h: &mut StateHasher);
}

macro_rules! int_state_hash {
    ($($t:ty),*) => {$(
        impl StateHash for $t {
            #[inline]
            fn hash_state(&self, h: &mut StateHasher) {
                h.write_bytes(&self.to_le_bytes());
            }
        }
    )*};
}
int_state_hash!(u8, u16, u32, u64, u128, i8, i16, i32, i64, i128);

impl<T: StateHash + ?Sized> StateHash for &T {
    fn hash_state(&self, h: &mut StateHasher) {
        (**self).hash_state(h)
    }
}

impl StateHash for usize {
    fn hash_state(&self, h: &mut StateHasher) {
        // Fixed width across platforms.
        h.write_u64(*self as u64);
    }
}

impl StateHash for isize {
    fn hash_state(&self, h: &mut StateHasher) {
        h.write_u64(*self as i64 as u64);
    }
}

impl StateHash for bool {
    fn hash_state(&self, h: &mut StateHasher) {
        h.write_bytes(&[u8::from(*self)]);
    }
}

impl StateHash for f32 {
    #[inline]
    fn hash_state(&self, h: &mut StateHasher) {
        let bits = if self.is_nan() {
            f32::NAN.to_bits()
        } else {
            self.to_bits()
        };
        h.write_u32(bits);
    }
}

impl StateHash for f64 {
    #[inline]
    fn hash_state(&self, h: &mut StateHasher) {
        let bits = if self.is_nan() {
            f64::NAN.to_bits()
        } else {
            self.to_bits()
        };
        h.write_u64(bits);
    }
}

impl StateHash for str {
    fn hash_state(&self, h: &mut StateHasher) {
        h.write_str(self);
    }
}

impl StateHash for String {
    fn hash_state(&self, h: &mut StateHasher) {
        h.write_str(self);
    }
}

impl<T: StateHash, const N: usize> StateHash for [T; N] {
    fn hash_state(&self, h: &mut StateHasher) {
        for v in self {
            v.hash_state(h);
        }
    }
}

/// A sequence of variable length: its length, then its items in order (so `[1], []` and
/// `[], [1]` differ). Vectors, slices, deques and ordered sets hash alike through it.
fn hash_sequence<'a, T: StateHash + 'a>(
    h: &mut StateHasher,
    len: usize,
    items: impl IntoIterator<Item = &'a T>,
) {
    h.write_u64(len as u64);
    for v in items {
        v.hash_state(h);
    }
}

impl<T: StateHash> StateHash for Vec<T> {
    fn hash_state(&self, h: &mut StateHasher) {
        hash_sequence(h, self.len(), self);
    }
}

impl<T: StateHash> StateHash for Option<T> {
    fn hash_state(&self, h: &mut StateHasher) {
        match self {
            None => h.write_bytes(&[0]),
            Some(v) => {
                h.write_bytes(&[1]);
                v.hash_state(h);
            }
        }
    }
}

impl<T: StateHash> StateHash for [T] {
    fn hash_state(&self, h: &mut StateHasher) {
        hash_sequence(h, self.len(), self);
    }
}

impl<T: StateHash + ?Sized> StateHash for Box<T> {
    fn hash_state(&self, h: &mut StateHasher) {
        (**self).hash_state(h)
    }
}

impl<T: StateHash> StateHash for std::collections::VecDeque<T> {
    fn hash_state(&self, h: &mut StateHasher) {
        hash_sequence(h, self.len(), self);
    }
}

/// In key order (a `BTreeMap`'s iteration order is its keys' order, the same on every machine;
/// a `HashMap`'s is not, so it has no impl: keep simulation maps in a `BTreeMap`).
impl<K: StateHash, V: StateHash> StateHash for std::collections::BTreeMap<K, V> {
    fn hash_state(&self, h: &mut StateHasher) {
        h.write_u64(self.len() as u64);
        for (k, v) in self {
            k.hash_state(h);
            v.hash_state(h);
        }
    }
}

/// In order, as for a `BTreeMap`'s keys.
impl<T: StateHash> StateHash for std::collections::BTreeSet<T> {
    fn hash_state(&self, h: &mut StateHasher) {
        hash_sequence(h, self.len(), self);
    }
}

impl StateHash for char {
    fn hash_state(&self, h: &mut StateHasher) {
        h.write_u32(u32::from(*self));
    }
}

impl StateHash for () {
    fn hash_state(&self, _: &mut StateHasher) {}
}

/// A reference to another entity (a target, a parent) is state: its slot and generation, as
/// [`Entity::to_bits`](super::Entity::to_bits). Two runs that spawn in the same order hand out
/// the same handles, so the hash stays the same across machines.
impl StateHash for super::Entity {
    fn hash_state(&self, h: &mut StateHasher) {
        h.write_u64(self.to_bits());
    }
}

macro_rules! tuple_state_hash {
    ($($n:tt $t:ident),*) => {
        impl<$($t: StateHash),*> StateHash for ($($t,)*) {
            fn hash_state(&self, h: &mut StateHasher) {
                $(self.$n.hash_state(h);)*
            }
        }
    };
}
tuple_state_hash!(0 A);
tuple_state_hash!(0 A, 1 B);
tuple_state_hash!(0 A, 1 B, 2 C);
tuple_state_hash!(0 A, 1 B, 2 C, 3 D);

/// Hashes one component column: its name, its row count, then every live entity that has the
/// component, in entity-slot order, as `(entity bits, value)`. The one definition both column
/// layouts use, so the world hash never depends on the layout (AoS or field-SoA) of a column.
pub(crate) fn hash_column<V: StateHash>(
    h: &mut StateHasher,
    name: &str,
    rows: usize,
    entities: &super::entity::EntityTable,
    get: impl Fn(super::Entity) -> Option<V>,
) {
    h.write_str(name);
    h.write_u64(rows as u64);
    for slot in 0..entities.slot_count() as u32 {
        let Some(e) = entities.live_at(slot) else {
            continue;
        };
        if let Some(v) = get(e) {
            h.write_u64(e.to_bits());
            v.hash_state(h);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nans_hash_alike_whatever_their_payload_and_signed_zeros_do_not() {
        let hash = |v: f32| {
            let mut h = StateHasher::default();
            v.hash_state(&mut h);
            h.finish()
        };
        let odd = f32::from_bits(0x7fc0_1234);
        let negative = f32::from_bits(0xffc0_0001);
        assert_eq!(hash(odd), hash(f32::NAN));
        assert_eq!(hash(negative), hash(f32::NAN));
        assert_ne!(hash(0.0), hash(-0.0));
        let hash64 = |v: f64| {
            let mut h = StateHasher::default();
            v.hash_state(&mut h);
            h.finish()
        };
        assert_eq!(
            hash64(f64::from_bits(0x7ff8_0000_0000_0042)),
            hash64(f64::NAN)
        );
    }

    #[test]
    fn fnv1a_matches_the_reference_vectors() {
        // Reference values from the FNV specification's test suite.
        let mut h = StateHasher::default();
        assert_eq!(h.finish(), 0xcbf2_9ce4_8422_2325);
        h.write_bytes(b"a");
        assert_eq!(h.finish(), 0xaf63_dc4c_8601_ec8c);
        let mut h = StateHasher::default();
        h.write_bytes(b"foobar");
        assert_eq!(h.finish(), 0x8594_4171_f739_67e8);
    }

    fn hash_of(v: &(impl StateHash + ?Sized)) -> u64 {
        let mut h = StateHasher::default();
        v.hash_state(&mut h);
        h.finish()
    }

    #[test]
    fn containers_hash_their_length_then_their_items_in_order() {
        use std::collections::{BTreeMap, BTreeSet, VecDeque};
        let v = vec![1u32, 2, 3];
        // A slice, a deque and a vector of the same items hash alike: length, then items.
        assert_eq!(hash_of(&v[..]), hash_of(&v));
        assert_eq!(hash_of(&VecDeque::from(v.clone())), hash_of(&v));
        assert_eq!(hash_of(&Box::new(7u8)), hash_of(&7u8));
        // Maps and sets hash in key order whatever the insertion order.
        let a: BTreeMap<u32, bool> = [(2, true), (1, false)].into_iter().collect();
        let b: BTreeMap<u32, bool> = [(1, false), (2, true)].into_iter().collect();
        assert_eq!(hash_of(&a), hash_of(&b));
        assert_ne!(
            hash_of(&a),
            hash_of(&BTreeMap::from([(1u32, true), (2u32, true)]))
        );
        assert_eq!(
            hash_of(&BTreeSet::from([3u8, 1])),
            hash_of(&BTreeSet::from([1u8, 3]))
        );
        // Lengths are fed: [1], [] differs from [], [1].
        assert_ne!(
            hash_of(&(vec![1u8], Vec::<u8>::new())),
            hash_of(&(Vec::<u8>::new(), vec![1u8]))
        );
        assert_ne!(hash_of(&'a'), hash_of(&'b'));
        assert_eq!(hash_of(&()), StateHasher::default().finish());
    }

    #[test]
    fn an_entity_reference_hashes_as_its_handle() {
        let mut w = crate::world::World::new();
        let (a, b) = (w.spawn(), w.spawn());
        assert_eq!(hash_of(&a), hash_of(&a.to_bits()));
        assert_ne!(hash_of(&a), hash_of(&b));
        // The same slot reused is another handle: its generation differs.
        w.despawn(a).unwrap();
        let again = w.spawn();
        assert_ne!(hash_of(&again), hash_of(&a));
    }

    #[test]
    fn floats_hash_by_bits() {
        let mut a = StateHasher::default();
        0.0f32.hash_state(&mut a);
        let mut b = StateHasher::default();
        (-0.0f32).hash_state(&mut b);
        assert_ne!(a.finish(), b.finish());
    }
}
