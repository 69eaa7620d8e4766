//! Change epochs per semantic domain, and the world's identity.
//!
//! Owns: [`Domain`], [`DomainSet`], [`Epochs`] and [`WorldId`]. Must never: let an epoch go
//! backwards or skip a bump for a mutation that can affect its domain (a cached view would then
//! show stale data).
//!
//! A view derived from world data (a render view, a physics broadphase) is valid for as long as
//! `(world id, epoch of every domain it read)` is unchanged. Every mutation that can affect a
//! domain bumps that domain's epoch by one: spawn and despawn ([`Domain::STRUCTURE`] plus the
//! domains of the components involved), insert, remove, mutable access (bumped when the access
//! is handed out: it may write), lending SoA columns, compaction and bulk loads.

use std::sync::atomic::{AtomicU64, Ordering};

/// How many domains a world tracks (built-in plus game-defined). Sixteen fit one `u16` mask.
pub const MAX_DOMAINS: usize = 16;

/// A semantic domain of world data: what a cached view depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Domain(u8);

impl Domain {
    /// The set of live entities (spawn, despawn, compaction).
    pub const STRUCTURE: Domain = Domain(0);
    /// Positions, rotations, hierarchies.
    pub const TRANSFORM: Domain = Domain(1);
    /// Velocities, bodies, colliders: what the physics lane reads and writes.
    pub const PHYSICS: Domain = Domain(2);
    /// Meshes, materials, visibility: what the render view is derived from.
    pub const RENDER: Domain = Domain(3);
    /// Game logic state (AI, inventories, scores).
    pub const GAMEPLAY: Domain = Domain(4);
    /// First index free for game-defined domains.
    pub(crate) const FIRST_CUSTOM: u8 = 5;

    /// A game-defined domain; `None` when `index` is not in `FIRST_CUSTOM..MAX_DOMAINS`.
    pub const fn custom(index: u8) -> Option<Domain> {
        if index >= Self::FIRST_CUSTOM && (index as usize) < MAX_DOMAINS {
            Some(Domain(index))
        } else {
            None
        }
    }

    /// The domain's index (`0..MAX_DOMAINS`).
    pub(crate) const fn index(self) -> usize {
        self.0 as usize
    }
}

/// A short name for logs: `structure`, `transform`, `physics`, `render`, `gameplay`, or
/// `custom N` for a game-defined domain.
impl std::fmt::Display for Domain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            0 => f.write_str("structure"),
            1 => f.write_str("transform"),
            2 => f.write_str("physics"),
            3 => f.write_str("render"),
            4 => f.write_str("gameplay"),
            n => write!(f, "custom {n}"),
        }
    }
}

/// A set of domains, as a bit mask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct DomainSet(u16);

impl DomainSet {
    /// No domain (also `DomainSet::default()`).
    pub const EMPTY: DomainSet = DomainSet(0);
    /// Every domain.
    pub const ALL: DomainSet = DomainSet(u16::MAX);

    /// The set holding only `d`.
    pub const fn of(d: Domain) -> DomainSet {
        DomainSet(1 << d.0)
    }

    /// This set plus `d` (const-friendly builder).
    pub const fn with(self, d: Domain) -> DomainSet {
        DomainSet(self.0 | (1 << d.0))
    }

    /// The union of two sets (`a | b` outside the crate).
    pub(crate) const fn union(self, other: DomainSet) -> DomainSet {
        DomainSet(self.0 | other.0)
    }

    /// The raw mask (bit `i` = domain `i`).
    pub(crate) const fn bits(self) -> u16 {
        self.0
    }
}

/// `a | b`: the union of two sets.
impl std::ops::BitOr for DomainSet {
    type Output = DomainSet;
    fn bitor(self, other: DomainSet) -> DomainSet {
        self.union(other)
    }
}

/// The change epoch of every domain: a snapshot comparable with `==` to validate a cached view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Epochs([u64; MAX_DOMAINS]);

impl Epochs {
    /// The epoch of one domain (starts at 0, only ever grows).
    #[inline]
    pub fn get(&self, d: Domain) -> u64 {
        self.0[d.index()]
    }

    /// Whether any domain in `set` moved between `self` (older) and `newer`.
    pub fn changed_in(&self, newer: &Epochs, set: DomainSet) -> bool {
        (0..MAX_DOMAINS)
            .filter(|&i| set.bits() & (1 << i) != 0)
            .any(|i| self.0[i] != newer.0[i])
    }

    /// Bumps every domain in `set` by one.
    #[inline]
    pub(crate) fn bump(&mut self, set: DomainSet) {
        let mut bits = set.bits();
        while bits != 0 {
            let i = bits.trailing_zeros() as usize;
            self.0[i] += 1;
            bits &= bits - 1;
        }
    }
}

/// A process-unique world identity (never reused within the process), so a cache keyed on
/// `(WorldId, Epochs)` cannot confuse two worlds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WorldId(u64);

impl WorldId {
    /// A fresh id. Relaxed is enough: uniqueness needs only the atomicity of the increment.
    pub(crate) fn fresh() -> WorldId {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        WorldId(NEXT.fetch_add(1, Ordering::Relaxed))
    }

    /// The raw value.
    pub(crate) fn get(self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bump_touches_only_the_set() {
        let mut e = Epochs::default();
        let before = e;
        e.bump(DomainSet::of(Domain::PHYSICS).with(Domain::RENDER));
        assert_eq!(e.get(Domain::PHYSICS), 1);
        assert_eq!(e.get(Domain::RENDER), 1);
        assert_eq!(e.get(Domain::TRANSFORM), 0);
        assert!(before.changed_in(&e, DomainSet::of(Domain::RENDER)));
        assert!(!before.changed_in(&e, DomainSet::of(Domain::TRANSFORM)));
    }

    #[test]
    fn custom_domains_are_range_checked() {
        assert!(Domain::custom(4).is_none());
        assert_eq!(Domain::custom(5).map(Domain::index), Some(5));
        assert!(Domain::custom(16).is_none());
        // Logs and reports name domains by their Display.
        assert_eq!(Domain::PHYSICS.to_string(), "physics");
        assert_eq!(Domain::custom(7).unwrap().to_string(), "custom 7");
    }
}
