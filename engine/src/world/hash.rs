//! The world state hash: a fixed, platform-independent digest of entities and component data.
//!
//! Owns: [`StateHasher`] (XXH3-64, seed 0, over little-endian bytes, buffered) and
//! [`StateHash`], the trait a component implements to feed its data in a fixed field order,
//! with bulk paths for slices of plain numbers. Must never: read anything timed,
//! address-dependent or iteration-order-dependent (`HashMap` order, pointers), so that the same
//! world state gives the same hash on every machine, build and worker count; or let a bulk path
//! feed other bytes than the item-by-item path (tests pin both to golden vectors).
//!
//! XXH3 (Collet, the `xxhash` reference) is specified byte for byte, seedless here and endian
//! explicit, and runs at memory speed on bulk input; the `xxhash-rust` crate implements it and
//! the tests pin the reference's own vectors. The hash is a determinism check, not a security
//! boundary. Floats hash by their bit pattern (so `0.0` and `-0.0` differ), except that every
//! NaN hashes as one canonical quiet NaN: IEEE and Rust leave the payload of an arithmetic NaN
//! unspecified among its inputs' (the compiler may commute `a * b`), so two builds or kernel
//! paths can produce NaNs that differ only in payload, and a replay must not fail over that.
//!
//! The format is versioned ([`STATE_HASH_FORMAT`]): a recorded hash (a run summary, a save) says
//! which format made it, and one of another format is never compared as if it were equal or
//! different. Format 1 was FNV-1a 64 over the same fields row by row; format 2 is this one, with
//! each column digested apart (entity handles, then values, both in slot order).

use xxhash_rust::xxh3::Xxh3Default;

/// The state hash's format: bumped whenever the same world would hash to another value.
pub(crate) const STATE_HASH_FORMAT: u32 = 2;

/// The state-hash format of a recorded hash that does not say (a save or a run summary made
/// before the format was recorded): format 1. A serde `default`.
pub(crate) fn format_one() -> u32 {
    1
}

/// Bytes gathered before they go to the XXH3 stream: small writes (one `f32`, one handle) cost
/// a copy, not a call into the stream.
const BUFFER: usize = 512;

/// A streaming XXH3-64 hasher (seed 0) over explicit little-endian bytes.
#[derive(Clone)]
pub struct StateHasher {
    stream: Xxh3Default,
    /// Whether anything went to `stream` yet (if not, `finish` hashes `buf` in one shot).
    streamed: bool,
    buf: [u8; BUFFER],
    len: usize,
}

impl Default for StateHasher {
    /// A fresh hasher.
    fn default() -> Self {
        StateHasher {
            stream: Xxh3Default::new(),
            streamed: false,
            buf: [0; BUFFER],
            len: 0,
        }
    }
}

impl std::fmt::Debug for StateHasher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StateHasher")
            .field("digest", &format_args!("{:#018x}", self.finish()))
            .finish()
    }
}

impl StateHasher {
    /// Feeds raw bytes.
    #[inline]
    pub(crate) fn write_bytes(&mut self, bytes: &[u8]) {
        if let Some(room) = self.buf.get_mut(self.len..self.len + bytes.len()) {
            room.copy_from_slice(bytes);
            self.len += bytes.len();
        } else {
            self.write_spilled(bytes);
        }
    }

    /// `write_bytes` when `bytes` does not fit what is left of the buffer.
    #[inline(never)]
    fn write_spilled(&mut self, bytes: &[u8]) {
        self.flush();
        if bytes.len() >= BUFFER {
            self.stream.update(bytes);
            self.streamed = true;
        } else {
            self.buf[..bytes.len()].copy_from_slice(bytes);
            self.len = bytes.len();
        }
    }

    /// Sends the buffered bytes to the stream.
    fn flush(&mut self) {
        if self.len > 0 {
            self.stream.update(&self.buf[..self.len]);
            self.streamed = true;
            self.len = 0;
        }
    }

    /// Room for `n` more bytes in the buffer (`n <= BUFFER`), flushing first if needed.
    #[inline]
    fn room(&mut self, n: usize) -> &mut [u8] {
        if BUFFER - self.len < n {
            self.flush();
        }
        let at = self.len;
        self.len += n;
        &mut self.buf[at..at + n]
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

    /// Feeds `n` words of `W` bytes, the `i`th given by `word(i)` as little-endian bytes: the
    /// bulk path's one loop, in buffer-sized steps the compiler can vectorise.
    #[inline]
    fn write_words<const W: usize>(&mut self, n: usize, word: impl Fn(usize) -> [u8; W]) {
        let step = BUFFER / 2 / W;
        let mut i = 0;
        while i < n {
            let k = step.min(n - i);
            let room = self.room(k * W);
            for (j, out) in room.chunks_exact_mut(W).enumerate() {
                out.copy_from_slice(&word(i + j));
            }
            i += k;
        }
    }

    /// The digest so far.
    pub fn finish(&self) -> u64 {
        if !self.streamed {
            return xxhash_rust::xxh3::xxh3_64(&self.buf[..self.len]);
        }
        let mut stream = self.stream.clone();
        stream.update(&self.buf[..self.len]);
        stream.digest()
    }
}

/// An `f32`'s bits, every NaN as the canonical quiet NaN's.
#[inline]
fn canonical_f32(v: f32) -> u32 {
    if v.is_nan() {
        f32::NAN.to_bits()
    } else {
        v.to_bits()
    }
}

/// An `f64`'s bits, every NaN as the canonical quiet NaN's.
#[inline]
fn canonical_f64(v: f64) -> u64 {
    if v.is_nan() {
        f64::NAN.to_bits()
    } else {
        v.to_bits()
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

    /// Feeds every item of `items` in order, exactly as `hash_state` on each would: the bulk
    /// path plain numbers (and arrays of them) override. Not for games to call or override.
    #[doc(hidden)]
    #[inline]
    fn hash_slice(items: &[Self], h: &mut StateHasher)
    where
        Self: Sized,
    {
        for v in items {
            v.hash_state(h);
        }
    }
}

macro_rules! int_state_hash {
    ($($t:ty),*) => {$(
        impl StateHash for $t {
            #[inline]
            fn hash_state(&self, h: &mut StateHasher) {
                h.write_bytes(&self.to_le_bytes());
            }
            #[inline]
            fn hash_slice(items: &[Self], h: &mut StateHasher) {
                const W: usize = std::mem::size_of::<$t>();
                h.write_words::<W>(items.len(), |i| items[i].to_le_bytes());
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
        h.write_u32(canonical_f32(*self));
    }
    #[inline]
    fn hash_slice(items: &[Self], h: &mut StateHasher) {
        h.write_words(items.len(), |i| canonical_f32(items[i]).to_le_bytes());
    }
}

impl StateHash for f64 {
    #[inline]
    fn hash_state(&self, h: &mut StateHasher) {
        h.write_u64(canonical_f64(*self));
    }
    #[inline]
    fn hash_slice(items: &[Self], h: &mut StateHasher) {
        h.write_words(items.len(), |i| canonical_f64(items[i]).to_le_bytes());
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
    #[inline]
    fn hash_state(&self, h: &mut StateHasher) {
        T::hash_slice(self, h);
    }
    #[inline]
    fn hash_slice(items: &[Self], h: &mut StateHasher) {
        T::hash_slice(items.as_flattened(), h);
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
        self.as_slice().hash_state(h);
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
        h.write_u64(self.len() as u64);
        T::hash_slice(self, h);
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
    #[inline]
    fn hash_state(&self, h: &mut StateHasher) {
        h.write_u64(self.to_bits());
    }
    #[inline]
    fn hash_slice(items: &[Self], h: &mut StateHasher) {
        h.write_words(items.len(), |i| items[i].to_bits().to_le_bytes());
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
    fn the_hasher_is_xxh3_64_and_matches_the_reference_vectors() {
        // XXH3_64bits(input, seed 0), from the reference C implementation (`xxhsum -H3`, or
        // Python's `xxhash.xxh3_64_intdigest`): the empty input, 1 and 3 bytes (the short
        // paths), and 1 KiB (the stripe loop).
        let digest = |bytes: &[u8]| {
            let mut h = StateHasher::default();
            h.write_bytes(bytes);
            h.finish()
        };
        let kib: Vec<u8> = (0..1024).map(|i| i as u8).collect();
        assert_eq!(digest(b""), 0x2d06_8005_38d3_94c2);
        assert_eq!(digest(b"a"), 0xe6c6_32b6_1e96_4e1f);
        assert_eq!(digest(b"abc"), 0x78af_5f94_892f_3950);
        assert_eq!(digest(&kib), 0xa870_f929_8439_8d22);
        // Fed in pieces of every size across the buffer's edge, the digest is the same.
        for piece in [1, 3, 8, 100, 511, 512, 513] {
            let mut h = StateHasher::default();
            for chunk in kib.chunks(piece) {
                h.write_bytes(chunk);
            }
            assert_eq!(h.finish(), 0xa870_f929_8439_8d22, "pieces of {piece}");
        }
    }

    #[test]
    fn bulk_slices_feed_the_bytes_item_by_item_feeding_does() {
        fn both<T: StateHash>(items: &[T]) -> (u64, u64) {
            let mut bulk = StateHasher::default();
            T::hash_slice(items, &mut bulk);
            let mut each = StateHasher::default();
            for v in items {
                v.hash_state(&mut each);
            }
            (bulk.finish(), each.finish())
        }
        let floats: Vec<f32> = (0..1000)
            .map(|i| match i % 97 {
                0 => f32::from_bits(0x7fc0_0000 | i),
                1 => -0.0,
                _ => i as f32 * 0.37,
            })
            .collect();
        let (a, b) = both(&floats);
        assert_eq!(a, b);
        let doubles: Vec<f64> = floats.iter().map(|&f| f64::from(f)).collect();
        let (a, b) = both(&doubles);
        assert_eq!(a, b);
        let ints: Vec<u16> = (0..777).collect();
        let (a, b) = both(&ints);
        assert_eq!(a, b);
        let arrays: Vec<[f32; 3]> = floats.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect();
        let (a, b) = both(&arrays);
        assert_eq!(a, b);
        let mut w = crate::world::World::new();
        let handles: Vec<_> = (0..300).map(|_| w.spawn()).collect();
        let (a, b) = both(&handles);
        assert_eq!(a, b);
        // And the bytes are the little-endian ones: three f32s are their 12 bytes.
        let mut h = StateHasher::default();
        [1.0f32, -2.5, 3.25].hash_state(&mut h);
        let bytes: Vec<u8> = [1.0f32, -2.5, 3.25]
            .iter()
            .flat_map(|f| f.to_le_bytes())
            .collect();
        assert_eq!(h.finish(), xxhash_rust::xxh3::xxh3_64(&bytes));
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
