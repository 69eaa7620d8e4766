//! Finding a component's column: a dense id per component type, resolved once per process, and
//! the world's table from those ids (and, for types without one, from `TypeId`) to columns.
//!
//! Owns: [`DenseKey`] (the once-assigned id a derived component carries in a `static`) and
//! [`ColumnIds`] (id -> column index, `TypeId` -> column index). Must never: hand two types
//! one id, or one type two ids (the first assignment wins a race; the loser's number is simply
//! never used), or be used for a generic type (a `static` in a generic impl is shared by every
//! instantiation, so the derive gives generic types no key and they are found by `TypeId`).
//!
//! Import cycle with `component`, kept on purpose: the `Component` trait names the key a derive
//! stores (`DenseKey`, here), and the table here maps `Component` types to columns. The key and
//! the trait are one contract; the key lives here beside the loom-checked cell that assigns it.
//!
//! Why: every `insert`, `remove`, `get` and query looks its column up by type. With the key
//! that lookup is a relaxed load of the id and an indexed load from a `Vec` (no hashing, no
//! 128-bit key compare): a column is found by a dense id resolved once, not by a hash lookup
//! per insert.

use std::any::TypeId;

use super::component::Component;
use super::type_map::TypeMap;

use std::sync::atomic::{AtomicU32, Ordering};

/// "No id yet".
const UNSET: u32 = u32::MAX;

/// The next id to hand out (process-wide; ids are never reused).
static NEXT: AtomicU32 = AtomicU32::new(0);

/// A component type's dense id, assigned on first use: the `Component` derive keeps one in a
/// `static` per (non-generic) component type. Not for games to name: the derive does.
#[doc(hidden)]
#[derive(Debug)]
pub struct DenseKey(AtomicU32);

impl DenseKey {
    /// A key with no id yet.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        DenseKey(AtomicU32::new(UNSET))
    }

    /// The id, assigned on first use.
    #[inline]
    pub fn id(&self) -> u32 {
        id_from(&self.0, &NEXT)
    }
}

/// The atomic operations the once-assignment needs: std's `AtomicU32` in the runtime, loom's
/// in the model (loom atomics cannot live in the `static` a derived component keeps).
trait IdCell {
    fn load_relaxed(&self) -> u32;
    fn take_next(&self) -> u32;
    fn set_if_unset(&self, id: u32) -> Result<u32, u32>;
}

macro_rules! id_cell {
    ($t:ty) => {
        impl IdCell for $t {
            #[inline]
            fn load_relaxed(&self) -> u32 {
                self.load(Ordering::Relaxed)
            }
            fn take_next(&self) -> u32 {
                self.fetch_add(1, Ordering::Relaxed)
            }
            fn set_if_unset(&self, id: u32) -> Result<u32, u32> {
                self.compare_exchange(UNSET, id, Ordering::Relaxed, Ordering::Relaxed)
            }
        }
    };
}

id_cell!(AtomicU32);

/// The id in `slot`, assigned from `next` on first use.
#[inline]
fn id_from<A: IdCell>(slot: &A, next: &A) -> u32 {
    // Relaxed is enough: the id is the only data, and every thread that reads it reads a value
    // some thread stored by the compare-exchange below (one modification order per atomic).
    let id = slot.load_relaxed();
    if id != UNSET {
        return id;
    }
    assign(slot, next)
}

#[cold]
fn assign<A: IdCell>(slot: &A, next: &A) -> u32 {
    let fresh = next.take_next();
    assert!(
        fresh != UNSET,
        "more than 4 billion component types (broken invariant)"
    );
    match slot.set_if_unset(fresh) {
        Ok(_) => fresh,
        // Another thread assigned first: its id is the type's; `fresh` goes unused.
        Err(theirs) => theirs,
    }
}

/// The world's table from a component type to its column.
#[derive(Debug, Default)]
pub(crate) struct ColumnIds {
    /// Every column's type (also the types that have a dense id: `Filter` and the pair
    /// queries name columns by `TypeId`).
    by_type: TypeMap<usize>,
    /// Dense id -> column index + 1 (0: none).
    dense: Vec<u32>,
}

impl ColumnIds {
    /// `T`'s column, if it has one.
    #[inline]
    pub(crate) fn get<T: Component>(&self) -> Option<usize> {
        match T::dense_key() {
            Some(key) => match self.dense.get(key.id() as usize) {
                Some(&c) if c != 0 => Some(c as usize - 1),
                _ => None,
            },
            None => self.by_type.get(&TypeId::of::<T>()).copied(),
        }
    }

    /// Records that `T`'s column is column `i`.
    pub(crate) fn insert<T: Component>(&mut self, i: usize) {
        self.by_type.insert(TypeId::of::<T>(), i);
        if let Some(key) = T::dense_key() {
            let id = key.id() as usize;
            if id >= self.dense.len() {
                self.dense.resize(id + 1, 0);
            }
            self.dense[id] = u32::try_from(i + 1).expect("fewer than 4 billion columns");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_keeps_its_first_id_and_two_keys_differ() {
        let (a, b) = (DenseKey::new(), DenseKey::new());
        let ia = a.id();
        assert_eq!(a.id(), ia);
        assert_ne!(b.id(), ia);
    }
}

/// Loom model of the once-assignment: two threads asking one key for its id at once get the
/// same id, and it differs from another key's. `scripts/test` runs it with the telemetry
/// models (`RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p lanegraph
/// --no-default-features --profile loom --lib -- world::component_ids::loom_models`). A plain
/// store in place of the compare-exchange fails it (checked 2026-12-04).
#[cfg(all(test, loom))]
mod loom_models {
    use super::*;
    use loom::sync::atomic::AtomicU32 as LoomU32;
    use loom::sync::Arc;

    id_cell!(LoomU32);

    #[test]
    fn racing_first_uses_agree_on_one_id() {
        loom::model(|| {
            let next = Arc::new(LoomU32::new(0));
            let key = Arc::new(LoomU32::new(UNSET));
            let other = LoomU32::new(UNSET);
            let t = {
                let (next, key) = (next.clone(), key.clone());
                loom::thread::spawn(move || id_from(&*key, &*next))
            };
            let mine = id_from(&*key, &*next);
            let theirs = t.join().unwrap();
            assert_eq!(mine, theirs, "one type, one id");
            assert_eq!(id_from(&*key, &*next), mine, "the id never changes");
            assert_ne!(id_from(&other, &*next), mine, "two types, two ids");
        });
    }
}
