//! Column digests and their cache: what the state hash and the SyncTest probe hash per column.
//!
//! Owns: [`digest_rows`] (the one definition of a column's digest, whatever its layout),
//! [`entities_digest`] and [`DigestCache`], the digests of the world's columns and entity set
//! as of the change epochs they were taken at. Must never: return a cached digest after a
//! change to the column (a column's digest is reused only while no epoch of its domains moved:
//! every write, insert, removal, despawn and restore moves them), or let the row order in
//! storage (which insertion history and compaction change) enter a digest.
//!
//! A column's digest is XXH3-64 of every row's entity handle ([`Entity::to_bits`]), then every
//! row's value ([`StateHash`]), both in entity-slot order. When the dense rows are already in
//! slot order (a world spawned in order, or compacted) the two passes are bulk slice hashes,
//! at memory speed for plain-number components; otherwise the slot order is found once and
//! both passes follow it.

use super::entity::{Entity, EntityTable};
use super::epoch::{Domain, DomainSet, Epochs};
use super::hash::{StateHash, StateHasher};

/// The permutation that puts `entities` (a column's dense rows) in slot order, or `None` when
/// they already are.
fn slot_order(entities: &[Entity]) -> Option<Vec<u32>> {
    if entities.windows(2).all(|w| w[0].index() < w[1].index()) {
        return None;
    }
    let mut order: Vec<u32> = (0..entities.len() as u32).collect();
    order.sort_unstable_by_key(|&r| entities[r as usize].index());
    Some(order)
}

/// A column's digest: its rows' handles, then `values` feeding its rows' values, both in slot
/// order. `values` gets the slot-order permutation of the dense rows (`None`: the dense order
/// is the slot order).
pub(crate) fn digest_rows(
    entities: &[Entity],
    values: impl FnOnce(Option<&[u32]>, &mut StateHasher),
) -> u64 {
    let mut h = StateHasher::default();
    let order = slot_order(entities);
    match &order {
        None => Entity::hash_slice(entities, &mut h),
        Some(order) => {
            for &r in order {
                entities[r as usize].hash_state(&mut h);
            }
        }
    }
    values(order.as_deref(), &mut h);
    h.finish()
}

/// `digest_rows` of a column whose values are a dense slice in step with `entities`.
pub(crate) fn digest_dense<T: StateHash>(entities: &[Entity], values: &[T]) -> u64 {
    digest_rows(entities, |order, h| match order {
        None => T::hash_slice(values, h),
        Some(order) => {
            for &r in order {
                values[r as usize].hash_state(h);
            }
        }
    })
}

/// The live entity set's digest: every live handle in slot order.
pub(crate) fn entities_digest(table: &EntityTable) -> u64 {
    let live = table.live();
    let mut h = StateHasher::default();
    if live.windows(2).all(|w| w[0].index() < w[1].index()) {
        Entity::hash_slice(live, &mut h);
    } else {
        for slot in 0..table.slot_count() as u32 {
            if let Some(e) = table.live_at(slot) {
                e.hash_state(&mut h);
            }
        }
    }
    h.finish()
}

/// Digests as of the epochs they were taken at.
#[derive(Debug, Default)]
pub(crate) struct DigestCache {
    entities: Option<(Epochs, u64)>,
    /// By column index.
    columns: Vec<Option<(Epochs, u64)>>,
}

impl DigestCache {
    /// The entity set's digest, reused while the structure epoch has not moved.
    pub(crate) fn entities(&mut self, now: &Epochs, table: &EntityTable) -> u64 {
        let structure = DomainSet::of(Domain::STRUCTURE);
        fresh_or(&mut self.entities, now, structure, || {
            entities_digest(table)
        })
    }

    /// Column `i`'s digest, reused while no epoch of `domains` has moved.
    pub(crate) fn column(
        &mut self,
        i: usize,
        now: &Epochs,
        domains: DomainSet,
        digest: impl FnOnce() -> u64,
    ) -> u64 {
        if self.columns.len() <= i {
            self.columns.resize(i + 1, None);
        }
        fresh_or(&mut self.columns[i], now, domains, digest)
    }
}

/// The digest in `slot` if no epoch of `domains` moved since it was taken, else a new one.
fn fresh_or(
    slot: &mut Option<(Epochs, u64)>,
    now: &Epochs,
    domains: DomainSet,
    digest: impl FnOnce() -> u64,
) -> u64 {
    if domains == DomainSet::EMPTY {
        // No epoch moves for such a column's writes: nothing would tell a stale digest.
        return digest();
    }
    match *slot {
        Some((then, d)) if !then.changed_in(now, domains) => d,
        _ => {
            let d = digest();
            *slot = Some((*now, d));
            d
        }
    }
}
