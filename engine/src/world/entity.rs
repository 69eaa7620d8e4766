//! Entity handles and the table that hands them out.
//!
//! Owns: allocating, validating and retiring [`Entity`] handles, and the dense list of live
//! entities. Must never: hand out a handle that aliases a live entity under an older generation,
//! or let a stale handle resolve to whatever now lives in its slot.
//!
//! # Protocol
//! 1. A slot index names a place in the table; its generation counts how many times it has been
//!    reused. A handle is `(index, generation)`; it is live exactly when the slot's current
//!    generation equals the handle's and the slot is occupied.
//! 2. Despawn bumps the slot's generation and puts the index on the free list, so every handle
//!    to the old occupant becomes stale at once.
//! 3. A slot whose generation would wrap past `u32::MAX` is retired (never reused), so a stale
//!    handle can never become live again by wrap-around.
//! 4. Live entities are also kept in one dense list (swap-remove on despawn) so iteration over
//!    every entity is a slice walk, whatever the spawn/despawn history.

use crate::world::error::WorldError;
use std::fmt;
use std::num::NonZeroU32;

/// A generational handle to an entity of one [`World`](super::World).
///
/// Invalidation: despawning the entity makes every copy of the handle stale; every world call
/// that takes a stale handle returns [`WorldError`] instead of touching another entity.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Entity {
    index: u32,
    generation: NonZeroU32,
}

impl Entity {
    /// The body of [`EntityHooks::index`](crate::hooks::EntityHooks::index), which documents it.
    #[inline]
    pub(crate) fn index(self) -> u32 {
        self.index
    }

    /// The handle as one `u64` (`generation << 32 | index`), e.g. for hashing or logs.
    #[inline]
    pub fn to_bits(self) -> u64 {
        (u64::from(self.generation.get()) << 32) | u64::from(self.index)
    }
}

/// As [`Entity::to_bits`]: a component or resource that references an entity saves it as that
/// `u64`, and a savegame, which keeps every entity's slot and generation, loads it back as the
/// same handle.
impl serde::Serialize for Entity {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.to_bits())
    }
}

/// The inverse of the `Serialize` impl. Bits with a zero generation (no handle has one) are a
/// typed error; a handle read back may be stale in the world it meets, like any other.
impl<'de> serde::Deserialize<'de> for Entity {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let bits = u64::deserialize(d)?;
        let generation = NonZeroU32::new((bits >> 32) as u32).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "{bits:#x} is no entity handle (its generation, the high 32 bits, is 0)"
            ))
        })?;
        Ok(Entity {
            index: bits as u32,
            generation,
        })
    }
}

impl fmt::Debug for Entity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}v{}", self.index, self.generation)
    }
}

impl fmt::Display for Entity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    /// Current generation of the slot (the generation a live handle must carry).
    generation: NonZeroU32,
    /// Position in `EntityTable::dense` while occupied; `VACANT` when free or retired.
    dense: u32,
}

const VACANT: u32 = u32::MAX;

/// The entity table: slots with generations, a free list and the dense list of live entities.
#[derive(Debug, Default)]
pub(crate) struct EntityTable {
    slots: Vec<Slot>,
    free: Vec<u32>,
    dense: Vec<Entity>,
}

impl EntityTable {
    /// Makes this table a copy of `src`, reusing its allocations (for snapshots).
    pub(crate) fn copy_from(&mut self, src: &EntityTable) {
        self.slots.clone_from(&src.slots);
        self.free.clone_from(&src.free);
        self.dense.clone_from(&src.dense);
    }

    /// The table as a savegame writes it: each slot's generation, the live slots in dense
    /// order, and the free list in pop order's reverse (as stored).
    #[cfg(feature = "savegame")]
    pub(crate) fn saved_parts(&self) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
        (
            self.slots.iter().map(|s| s.generation.get()).collect(),
            self.dense.iter().map(|e| e.index).collect(),
            self.free.clone(),
        )
    }

    /// Rebuilds a table from [`saved_parts`](Self::saved_parts), checking every invariant a
    /// damaged file could break (a zero generation, an index out of range, a slot both live and
    /// free or listed twice); the error says which.
    #[cfg(feature = "savegame")]
    pub(crate) fn from_saved_parts(
        generations: &[u32],
        live: &[u32],
        free: &[u32],
    ) -> Result<EntityTable, &'static str> {
        if generations.len() >= VACANT as usize {
            return Err("more entity slots than a world can hold");
        }
        let mut slots = Vec::with_capacity(generations.len());
        for &g in generations {
            let generation = NonZeroU32::new(g).ok_or("an entity slot with generation 0")?;
            slots.push(Slot {
                generation,
                dense: VACANT,
            });
        }
        let mut dense = Vec::with_capacity(live.len());
        for (d, &index) in live.iter().enumerate() {
            let slot = slots
                .get_mut(index as usize)
                .ok_or("a live entity outside the slot table")?;
            if slot.dense != VACANT {
                return Err("an entity listed live twice");
            }
            slot.dense = d as u32;
            dense.push(Entity {
                index,
                generation: slot.generation,
            });
        }
        let mut seen_free = vec![false; slots.len()];
        for &index in free {
            let i = index as usize;
            match slots.get(i) {
                None => return Err("a free slot outside the slot table"),
                Some(s) if s.dense != VACANT => return Err("a slot both live and free"),
                Some(_) if seen_free[i] => return Err("a slot listed free twice"),
                Some(_) => seen_free[i] = true,
            }
        }
        Ok(EntityTable {
            slots,
            free: free.to_vec(),
            dense,
        })
    }

    /// Room for `additional` more live entities; returns the slot count they may reach.
    pub(crate) fn reserve(&mut self, additional: usize) -> usize {
        self.dense.reserve(additional);
        let fresh = additional.saturating_sub(self.free.len());
        self.slots.reserve(fresh);
        self.slots.len() + fresh
    }

    /// Allocates a fresh handle, reusing a free slot when there is one.
    pub(crate) fn spawn(&mut self) -> Entity {
        let dense = self.dense.len() as u32;
        let entity = if let Some(index) = self.free.pop() {
            let slot = &mut self.slots[index as usize];
            slot.dense = dense;
            Entity {
                index,
                generation: slot.generation,
            }
        } else {
            let index = u32::try_from(self.slots.len())
                .ok()
                .filter(|&i| i != VACANT)
                .expect("EntityTable: more than u32::MAX - 1 entity slots (broken invariant)");
            let generation = NonZeroU32::MIN;
            self.slots.push(Slot { generation, dense });
            Entity { index, generation }
        };
        self.dense.push(entity);
        entity
    }

    /// Whether `entity` is live.
    #[inline]
    pub(crate) fn is_alive(&self, entity: Entity) -> bool {
        self.slots
            .get(entity.index as usize)
            .is_some_and(|s| s.generation == entity.generation && s.dense != VACANT)
    }

    /// `Ok(())` when live, else the typed error.
    #[inline]
    pub(crate) fn check(&self, entity: Entity) -> Result<(), WorldError> {
        if self.is_alive(entity) {
            Ok(())
        } else {
            Err(WorldError::StaleEntity {
                entity,
                current: self
                    .slots
                    .get(entity.index as usize)
                    .map_or(0, |s| s.generation.get()),
            })
        }
    }

    /// Despawns `entity`: bumps its slot's generation, frees (or retires) the slot and
    /// swap-removes it from the dense list.
    pub(crate) fn despawn(&mut self, entity: Entity) -> Result<(), WorldError> {
        self.check(entity)?;
        let slot = &mut self.slots[entity.index as usize];
        let pos = slot.dense as usize;
        slot.dense = VACANT;
        // At the last generation the slot is retired: it cannot advance, so it is never reused.
        if let Some(next) = slot.generation.checked_add(1) {
            slot.generation = next;
            self.free.push(entity.index);
        }
        self.dense.swap_remove(pos);
        if let Some(moved) = self.dense.get(pos) {
            self.slots[moved.index as usize].dense = pos as u32;
        }
        Ok(())
    }

    /// Live entities, densely (order: spawn order perturbed by swap-removes).
    #[inline]
    pub(crate) fn live(&self) -> &[Entity] {
        &self.dense
    }

    /// Number of slots ever allocated (live, free or retired).
    #[inline]
    pub(crate) fn slot_count(&self) -> usize {
        self.slots.len()
    }

    /// The live handle in slot `index`, if the slot is occupied.
    #[inline]
    pub(crate) fn live_at(&self, index: u32) -> Option<Entity> {
        self.slots.get(index as usize).and_then(|s| {
            (s.dense != VACANT).then_some(Entity {
                index,
                generation: s.generation,
            })
        })
    }

    /// Makes the dense list follow slot order (canonical order after compaction).
    pub(crate) fn sort_dense(&mut self) {
        self.dense.sort_unstable_by_key(|e| e.index);
        for (pos, e) in self.dense.iter().enumerate() {
            self.slots[e.index as usize].dense = pos as u32;
        }
    }

    /// Sets a slot's generation to the maximum so its next despawn retires it (tests only).
    #[cfg(test)]
    pub(crate) fn force_generation(&mut self, entity: Entity, generation: NonZeroU32) -> Entity {
        let slot = &mut self.slots[entity.index as usize];
        slot.generation = generation;
        let pos = slot.dense as usize;
        let e = Entity {
            index: entity.index,
            generation,
        };
        self.dense[pos] = e;
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn despawn_makes_every_copy_stale_and_reuse_gets_a_new_generation() {
        let mut t = EntityTable::default();
        let a = t.spawn();
        let b = t.spawn();
        t.despawn(a).unwrap();
        assert!(!t.is_alive(a));
        let err = t.check(a).unwrap_err();
        assert!(
            matches!(err, WorldError::StaleEntity { current: 2, .. }),
            "{err:?}"
        );
        let c = t.spawn();
        assert_eq!(c.index(), a.index());
        assert_eq!(c.generation.get(), 2);
        assert!(t.is_alive(c) && t.is_alive(b) && !t.is_alive(a));
        assert_eq!(
            t.despawn(a),
            Err(WorldError::StaleEntity {
                entity: a,
                current: 2
            })
        );
    }

    #[test]
    fn dense_list_stays_dense_under_swap_remove() {
        let mut t = EntityTable::default();
        let es: Vec<_> = (0..10).map(|_| t.spawn()).collect();
        for e in es.iter().step_by(3) {
            t.despawn(*e).unwrap();
        }
        assert_eq!(t.live().len(), 6);
        for e in t.live() {
            assert!(t.is_alive(*e));
        }
    }

    #[test]
    fn a_slot_at_the_last_generation_is_retired_not_wrapped() {
        let mut t = EntityTable::default();
        let a = t.spawn();
        let a = t.force_generation(a, NonZeroU32::MAX);
        t.despawn(a).unwrap();
        let b = t.spawn();
        assert_ne!(b.index(), a.index(), "retired slot was reused");
        assert!(!t.is_alive(a));
    }
}
