//! Column digests, content versions and their cache: what the state hash and the SyncTest
//! probe hash per column, and what lets a capture or a restore skip an unchanged column.
//!
//! Owns: [`entities_digest`] and [`ContentCache`], the content version of each column and of
//! the entity set with its digest (a column's digest itself is defined beside the columns,
//! `column::digest_rows`). Must never: keep a version (or its digest) for a column whose
//! content may have changed (a version stands only while no epoch of the column's domains
//! moved: every write, insert, removal, despawn and restore moves one; a column of no domains
//! gets a new version at every look), hand out one version for two contents of a column, or
//! let the row order in storage (which insertion history and compaction change) enter a
//! digest.
//!

use super::entity::{Entity, EntityTable};
use super::epoch::{Domain, DomainSet, Epochs};
use super::hash::{StateHash, StateHasher};

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

/// One column's (or the entity set's) content version and the digest of that version.
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    /// The epochs when `version` was last confirmed; `None` before the first look.
    seen: Option<Epochs>,
    version: u64,
    digest: Option<u64>,
}

impl Slot {
    /// Brings the version up to the content now: the same while no epoch of `domains` has
    /// moved since the last look, a new one from `next` otherwise (always a new one for a set of no
    /// domains, whose writes move no epoch).
    fn version(&mut self, now: &Epochs, domains: DomainSet, next: &mut u64) {
        let moved = match self.seen {
            Some(then) => domains == DomainSet::EMPTY || then.changed_in(now, domains),
            None => true,
        };
        if moved {
            *next += 1;
            *self = Slot {
                seen: Some(*now),
                version: *next,
                digest: None,
            };
        }
    }
}

/// Content versions of the world's columns and entity set, and their digests.
///
/// A version names one content of one column of one world: it changes whenever the column may
/// have changed (an epoch of its domains moved), and a restore gives the column back the
/// version its snapshot recorded, since the content is then that content again. So a capture
/// or a restore skips a column whose version is the one on the other side, and a digest
/// taken of a version stays valid across restores.
#[derive(Debug, Default)]
pub(crate) struct ContentCache {
    /// The last version handed out (versions start at 1; 0 means unknown).
    next: u64,
    entities: Slot,
    /// By column index.
    columns: Vec<Slot>,
}

/// What a snapshot keeps of one column's (or the entity set's) cache entry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Known {
    /// 0: unknown (never equal to a live version).
    pub(crate) version: u64,
    pub(crate) digest: Option<u64>,
}

impl ContentCache {
    /// The slot of column `column` (`None`: the entity set, whose domain is
    /// [`Domain::STRUCTURE`]), as last looked at, and the version counter beside it.
    fn slot(&mut self, column: Option<usize>) -> (&mut Slot, &mut u64) {
        let slot = match column {
            None => &mut self.entities,
            Some(i) => {
                if self.columns.len() <= i {
                    self.columns.resize(i + 1, Slot::default());
                }
                &mut self.columns[i]
            }
        };
        (slot, &mut self.next)
    }

    /// The slot of column `column`, its version brought up to the content now.
    fn current(&mut self, column: Option<usize>, now: &Epochs, domains: DomainSet) -> &mut Slot {
        let (slot, next) = self.slot(column);
        slot.version(now, domains, next);
        slot
    }

    /// The current version and known digest of column `column` (`None`: the entity set).
    pub(crate) fn known(
        &mut self,
        column: Option<usize>,
        now: &Epochs,
        domains: DomainSet,
    ) -> Known {
        let slot = self.current(column, now, domains);
        Known {
            version: slot.version,
            digest: slot.digest,
        }
    }

    /// The digest of the current content, computed by `digest` unless this version has one.
    pub(crate) fn digest(
        &mut self,
        column: Option<usize>,
        now: &Epochs,
        domains: DomainSet,
        digest: impl FnOnce() -> u64,
    ) -> u64 {
        *self
            .current(column, now, domains)
            .digest
            .get_or_insert_with(digest)
    }

    /// Marks the content now (after a restore, at epochs `now`) as the version `known` names
    /// (a version of this world, from a snapshot of it); an unknown one gets a new version.
    pub(crate) fn adopt(&mut self, column: Option<usize>, now: &Epochs, known: Known) {
        let (slot, _) = self.slot(column);
        if known.version == 0 {
            *slot = Slot::default();
            return;
        }
        // The same version kept (the restore skipped it): a digest taken since still holds.
        let digest = match known.digest {
            None if slot.version == known.version => slot.digest,
            d => d,
        };
        *slot = Slot {
            seen: Some(*now),
            version: known.version,
            digest,
        };
    }
}

/// The domains that version the entity set.
pub(crate) const STRUCTURE: DomainSet = DomainSet::of(Domain::STRUCTURE);
