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

// Opted in from the workspace's `unsafe_code = "deny"` for `RawTicks::stamp`, which writes
// through the raw parts a typed query resolved once (see `query::data`'s module docs); its
// unsafe block states why the pointers are valid and unaliased.
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicU64, Ordering};

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

/// Rows per change chunk: a chunk's tick is at least every tick of its rows, so a `Changed`
/// query skips a chunk whose tick is not newer than what it saw. 64 rows keep the chunk ticks
/// at 1/64 of the row ticks and skip whole cache lines of values.
pub(crate) const CHUNK_ROWS: usize = 64;

/// One column's change tick per row, once a `Changed<T>` query asked for them, and per chunk of
/// [`CHUNK_ROWS`] rows an upper bound of its rows' ticks.
#[derive(Debug, Default)]
pub(crate) struct RowTicks {
    /// Row -> the tick it was last written at; empty while untracked.
    ticks: Vec<u64>,
    /// Chunk -> at least the newest tick of its rows (`ticks.len().div_ceil(CHUNK_ROWS)`
    /// entries while tracked). Atomic because the chunks of a parallel query's jobs may share
    /// one at their edge; every access is `Relaxed` (a hint within one query, whose rows the
    /// query's borrow and its join already order).
    chunks: Vec<AtomicU64>,
    /// Chunk -> at most the oldest tick of its rows (as many entries as `chunks`): a chunk
    /// whose bound is newer than what a reader saw changed whole. Stamps only raise ticks, so
    /// a bound stays true until a row moves in (`swap_remove` lowers it); a query that stamped
    /// every row raises it (`RawTicks::all_stamped`).
    mins: Vec<AtomicU64>,
    /// Whether `ticks` is kept (one per row).
    tracked: bool,
    /// The world's change tick, as last told (what new writes are stamped with). Never below
    /// a row's tick: stamps use it, and a restore rewinds both together.
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
        let n = rows.div_ceil(CHUNK_ROWS);
        self.chunks.clear();
        self.chunks.extend((0..n).map(|_| AtomicU64::new(now)));
        self.mins.clear();
        self.mins.extend((0..n).map(|_| AtomicU64::new(now)));
        true
    }

    /// Tells the column the world's tick moved.
    #[inline]
    pub(crate) fn set_now(&mut self, now: u64) {
        self.now = now;
    }

    /// Raises chunk `chunk`'s tick to at least `tick`.
    #[inline]
    fn raise(&mut self, chunk: usize, tick: u64) {
        let c = self.chunks[chunk].get_mut();
        *c = (*c).max(tick);
    }

    /// A row was added at the end.
    #[inline]
    pub(crate) fn push(&mut self) {
        if self.tracked {
            self.ticks.push(self.now);
            let chunk = (self.ticks.len() - 1) / CHUNK_ROWS;
            if chunk == self.chunks.len() {
                self.chunks.push(AtomicU64::new(self.now));
                self.mins.push(AtomicU64::new(self.now));
            } else {
                self.raise(chunk, self.now);
            }
        }
    }

    /// Room for `additional` more rows.
    pub(crate) fn reserve(&mut self, additional: usize) {
        if self.tracked {
            self.ticks.reserve(additional);
            self.chunks.reserve(additional.div_ceil(CHUNK_ROWS) + 1);
            self.mins.reserve(additional.div_ceil(CHUNK_ROWS) + 1);
        }
    }

    /// Row `row` was handed out mutably.
    #[inline]
    pub(crate) fn stamp(&mut self, row: usize) {
        if self.tracked {
            self.ticks[row] = self.now;
            self.raise(row / CHUNK_ROWS, self.now);
        }
    }

    /// Every row was handed out mutably.
    pub(crate) fn stamp_all(&mut self) {
        if self.tracked {
            let now = self.now;
            self.ticks.iter_mut().for_each(|t| *t = now);
            self.chunks.iter_mut().for_each(|c| *c.get_mut() = now);
            self.mins.iter_mut().for_each(|c| *c.get_mut() = now);
        }
    }

    /// Row `row` was swap-removed (the last row moved into its place).
    #[inline]
    pub(crate) fn swap_remove(&mut self, row: usize) {
        if self.tracked {
            self.ticks.swap_remove(row);
            if let Some(&moved) = self.ticks.get(row) {
                self.raise(row / CHUNK_ROWS, moved);
                let m = self.mins[row / CHUNK_ROWS].get_mut();
                *m = (*m).min(moved);
            }
            // The last chunk went empty: drop it.
            self.chunks.truncate(self.ticks.len().div_ceil(CHUNK_ROWS));
            self.mins.truncate(self.chunks.len());
        }
    }

    /// Every row was dropped, and tracking stops (a column emptied by a restore is as it was
    /// before its first `Changed` query).
    pub(crate) fn clear(&mut self) {
        self.ticks.clear();
        self.chunks.clear();
        self.mins.clear();
        self.tracked = false;
    }

    /// The rows were permuted: new row `i` is old row `order[i]`.
    pub(crate) fn permute(&mut self, order: &[usize]) {
        if self.tracked {
            let old = std::mem::take(&mut self.ticks);
            self.ticks.extend(order.iter().map(|&r| old[r]));
            self.chunks.clear();
            self.mins.clear();
            for c in self.ticks.chunks(CHUNK_ROWS) {
                let (lo, hi) = c
                    .iter()
                    .fold((u64::MAX, 0), |(l, h), &t| (l.min(t), h.max(t)));
                self.chunks.push(AtomicU64::new(hi));
                self.mins.push(AtomicU64::new(lo));
            }
        }
    }

    /// Makes these ticks a copy of `src`, reusing the allocation (for snapshots).
    pub(crate) fn copy_from(&mut self, src: &RowTicks) {
        self.ticks.clone_from(&src.ticks);
        let copy = |c: &AtomicU64| AtomicU64::new(c.load(Ordering::Relaxed));
        self.chunks.clear();
        self.chunks.extend(src.chunks.iter().map(copy));
        self.mins.clear();
        self.mins.extend(src.mins.iter().map(copy));
        self.tracked = src.tracked;
        self.now = src.now;
    }

    /// Whether row `row` was written after `seen` (every row, while untracked).
    #[cfg(test)]
    fn changed_since(&self, row: usize, seen: u64) -> bool {
        !self.tracked || self.ticks[row] > seen
    }

    /// The ticks' first row, the chunks' first, and the stamp, for a typed query's `&mut T`
    /// (null: untracked).
    pub(crate) fn raw_mut(&mut self) -> (RawTicks, u64) {
        let raw = if self.tracked {
            RawTicks {
                rows: self.ticks.as_mut_ptr(),
                chunks: self.chunks.as_ptr(),
                mins: self.mins.as_ptr(),
            }
        } else {
            RawTicks::NONE
        };
        (raw, self.now)
    }

    /// The ticks' first row and first chunk, for a `Changed<T>` filter (null: untracked).
    pub(crate) fn raw(&mut self) -> RawTicks {
        self.raw_mut().0
    }
}

/// A tracked column's row and chunk ticks as raw parts, for typed queries (null: untracked).
#[derive(Clone, Copy, Debug)]
#[doc(hidden)]
pub struct RawTicks {
    pub(crate) rows: *mut u64,
    pub(crate) chunks: *const AtomicU64,
    pub(crate) mins: *const AtomicU64,
}

impl RawTicks {
    /// An untracked column's.
    pub(crate) const NONE: RawTicks = RawTicks {
        rows: std::ptr::null_mut(),
        chunks: std::ptr::null(),
        mins: std::ptr::null(),
    };

    /// Whether the column keeps ticks.
    #[inline(always)]
    pub(crate) fn is_none(&self) -> bool {
        self.rows.is_null()
    }

    /// Stamps row `row` with `now`, and its chunk.
    ///
    /// # Safety
    /// The column keeps ticks, `row` is below its length, and no other thread writes this row
    /// now (its chunk's tick may be shared: it is atomic).
    #[inline(always)]
    pub(crate) unsafe fn stamp(self, row: usize, now: u64) {
        // SAFETY: the caller's contract; a tracked column has `len.div_ceil(CHUNK_ROWS)` chunks.
        unsafe {
            *self.rows.add(row) = now;
            (*self.chunks.add(row / CHUNK_ROWS)).store(now, Ordering::Relaxed);
        }
    }

    /// Every one of the column's `rows` rows was stamped with `now` by one query: every chunk
    /// changed whole at `now`.
    ///
    /// # Safety
    /// The column keeps ticks, has `rows` rows, and the query that stamped them has ended
    /// (its jobs joined).
    pub(crate) unsafe fn all_stamped(self, rows: usize, now: u64) {
        for c in 0..rows.div_ceil(CHUNK_ROWS) {
            // SAFETY: the caller's contract: the column has this many chunks.
            unsafe { (*self.mins.add(c)).store(now, Ordering::Relaxed) };
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
