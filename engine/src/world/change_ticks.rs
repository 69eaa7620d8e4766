//! Per-row change ticks: which rows of a column were written since a reader last looked, for
//! the [`Changed`](super::Changed) query filter.
//!
//! Owns: [`RowTicks`] (one `u64` per row of one column, kept in step with the column's rows)
//! and [`ChangeClock`] (the world's change tick and what each reader saw last). Must never: let
//! a tracked column's tick list differ in length from its rows, or stamp a tick that goes
//! backwards within one timeline.
//!
//! Pay for what you use: a column keeps no ticks until the first `Changed<T>` query over it
//! asks for them (then every row counts as changed once, the way a new row does). From then
//! on every write path stamps the rows it hands out mutably: a typed query's `&mut T` stamps
//! each row it visits, `insert` and `get_mut` stamp one row, a new row is stamped when added,
//! and the whole-column accessors (`lend_soa`, `par_soa_chunks2`) stamp every row, since the caller may write any of them. "Changed" therefore means "handed
//! out mutably", as in bevy: a write of the same value counts.
//!
//! Ticks are simulation state for determinism (a `Changed<T>` query's rows steer a system), so
//! a snapshot saves them with the column and the clock with the world; they are not in the
//! state hash (what systems make of them is).

/// The world's change tick and the tick each reader saw last.
#[derive(Debug, Clone, Default)]
pub(crate) struct ChangeClock {
    /// The tick writes are stamped with now. Moves after every system run and at each step's
    /// start and end, never backwards (but for a snapshot restore, which rewinds the timeline).
    pub(crate) now: u64,
    /// What a `Changed<T>` query made now compares against: rows stamped after it count. In a
    /// system: the tick at the end of that system's previous run (0 before its first); outside
    /// systems: the tick just before the latest step began.
    pub(crate) last_seen: u64,
    /// `last_seen` for queries made outside systems.
    pub(crate) outside_seen: u64,
    /// Per system (registration index): `now` at the end of its latest run.
    pub(crate) system_seen: Vec<u64>,
    /// Whether any column keeps ticks (moving the clock then tells those columns).
    pub(crate) any_tracked: bool,
}

impl ChangeClock {
    /// A clock whose first tick is 1, so that 0 means "before anything".
    pub(crate) fn new() -> Self {
        ChangeClock {
            now: 1,
            ..ChangeClock::default()
        }
    }

    /// Makes this clock a copy of `src`, reusing the allocation (for snapshots).
    pub(crate) fn copy_from(&mut self, src: &ChangeClock) {
        self.now = src.now;
        self.last_seen = src.last_seen;
        self.outside_seen = src.outside_seen;
        self.system_seen.clone_from(&src.system_seen);
        self.any_tracked = src.any_tracked;
    }
}

/// One column's change tick per row, once a `Changed<T>` query asked for them.
#[derive(Debug, Default)]
pub(crate) struct RowTicks {
    /// Row -> the tick it was last written at; empty while untracked.
    ticks: Vec<u64>,
    /// Whether `ticks` is kept (one per row).
    tracked: bool,
    /// The world's change tick, as last told (what new writes are stamped with).
    now: u64,
}

impl RowTicks {
    /// Starts keeping ticks for a column of `rows` rows, all stamped `now` (a row never seen
    /// by a reader counts as changed). True when tracking was off before.
    pub(crate) fn track(&mut self, rows: usize, now: u64) -> bool {
        self.now = now;
        if self.tracked {
            return false;
        }
        self.tracked = true;
        self.ticks.clear();
        self.ticks.resize(rows, now);
        true
    }

    /// Tells the column the world's tick moved.
    #[inline]
    pub(crate) fn set_now(&mut self, now: u64) {
        self.now = now;
    }

    /// A row was added at the end.
    #[inline]
    pub(crate) fn push(&mut self) {
        if self.tracked {
            self.ticks.push(self.now);
        }
    }

    /// Room for `additional` more rows.
    pub(crate) fn reserve(&mut self, additional: usize) {
        if self.tracked {
            self.ticks.reserve(additional);
        }
    }

    /// Row `row` was handed out mutably.
    #[inline]
    pub(crate) fn stamp(&mut self, row: usize) {
        if self.tracked {
            self.ticks[row] = self.now;
        }
    }

    /// Every row was handed out mutably.
    pub(crate) fn stamp_all(&mut self) {
        if self.tracked {
            let now = self.now;
            self.ticks.iter_mut().for_each(|t| *t = now);
        }
    }

    /// Row `row` was swap-removed (the last row moved into its place).
    #[inline]
    pub(crate) fn swap_remove(&mut self, row: usize) {
        if self.tracked {
            self.ticks.swap_remove(row);
        }
    }

    /// Every row was dropped, and tracking stops (a column emptied by a restore is as it was
    /// before its first `Changed` query).
    pub(crate) fn clear(&mut self) {
        self.ticks.clear();
        self.tracked = false;
    }

    /// The rows were permuted: new row `i` is old row `order[i]`.
    pub(crate) fn permute(&mut self, order: &[usize]) {
        if self.tracked {
            let old = std::mem::take(&mut self.ticks);
            self.ticks.extend(order.iter().map(|&r| old[r]));
        }
    }

    /// Makes these ticks a copy of `src`, reusing the allocation (for snapshots).
    pub(crate) fn copy_from(&mut self, src: &RowTicks) {
        self.ticks.clone_from(&src.ticks);
        self.tracked = src.tracked;
        self.now = src.now;
    }

    /// Whether row `row` was written after `seen` (every row, while untracked).
    #[cfg(test)]
    fn changed_since(&self, row: usize, seen: u64) -> bool {
        !self.tracked || self.ticks[row] > seen
    }

    /// The ticks' first row and the stamp, for a typed query's `&mut T` (null: untracked).
    pub(crate) fn raw_mut(&mut self) -> (*mut u64, u64) {
        if self.tracked {
            (self.ticks.as_mut_ptr(), self.now)
        } else {
            (std::ptr::null_mut(), self.now)
        }
    }

    /// The ticks' first row, for a `Changed<T>` filter (null: untracked).
    pub(crate) fn raw(&self) -> *const u64 {
        if self.tracked {
            self.ticks.as_ptr()
        } else {
            std::ptr::null()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untracked_ticks_keep_nothing_and_report_every_row() {
        let mut t = RowTicks::default();
        t.push();
        t.stamp_all();
        assert!(t.ticks.is_empty());
        assert!(t.changed_since(7, u64::MAX - 1));
    }

    #[test]
    fn tracked_ticks_follow_row_moves() {
        let mut t = RowTicks::default();
        assert!(t.track(3, 5));
        assert!(!t.track(3, 5));
        t.set_now(9);
        t.stamp(2);
        t.swap_remove(0);
        // Old row 2 (stamped 9) is row 0 now; old row 1 (5) stays row 1.
        assert!(t.changed_since(0, 5));
        assert!(!t.changed_since(1, 5));
        t.permute(&[1, 0]);
        assert!(!t.changed_since(0, 5));
        assert!(t.changed_since(1, 5));
        t.push();
        assert!(t.changed_since(2, 8));
    }
}
