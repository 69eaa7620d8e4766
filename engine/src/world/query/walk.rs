//! The row loops a query runs: aligned rows from the parts' bases, rows found by slot, and,
//! under a filter that answers for a chunk at once (`Changed`), chunk by chunk.
//!
//! Owns: `run_rows` and the loops it picks. Must never: hand out a row twice in one run, hand
//! out a row the filter rejects, or skip a row the filter would keep.

// Opted in from the workspace's `unsafe_code = "deny"`: see `query::data`'s module docs (raw
// parts resolved once per query; each unsafe block states why its pointer is valid and
// unaliased).
#![allow(unsafe_code)]

use std::ops::Range;

use super::data::{Driver, DriverRow, QueryData, QueryFilter};
use super::filter::Window;
use crate::world::change_ticks::CHUNK_ROWS;
use crate::world::entity::Entity;

/// Visits `range` of the driving column's rows: the first `aligned` rows of every part are at
/// the driving row's index (no lookup), the rest are found by slot.
///
/// # Safety
/// The fetches were resolved from columns still borrowed and unchanged; `range` is within the
/// driving column, `aligned` is what `QueryData::aligned` said, and no other live run visits
/// any of these rows.
#[inline]
pub(super) unsafe fn run_rows<Q: QueryData, F: QueryFilter>(
    q: &mut Q::Fetch,
    flt: &F::Fetch,
    d: Driver,
    aligned: usize,
    range: Range<usize>,
    f: &mut impl for<'a> FnMut(Q::Item<'a>),
) -> usize {
    let mut visited = 0;
    let split = aligned.clamp(range.start, range.end);
    if let Some(base) = Q::base(q) {
        // Every part is AoS: the bases are copies in registers, nothing is written back. A
        // loop that stamps change ticks is a second copy, so the common one (no column keeps
        // ticks) holds no store that may alias the values.
        // SAFETY: forwarded contract; `start..split` are aligned rows for every part.
        visited += unsafe {
            if Q::stamps(&base) {
                run_based::<Q, F, true>(base, flt, d, range.start..split, f)
            } else {
                run_based::<Q, F, false>(base, flt, d, range.start..split, f)
            }
        };
        // SAFETY: forwarded contract.
        return visited + unsafe { run_located::<Q, F>(q, flt, d, split..range.end, f) };
    }
    // SAFETY: forwarded contract.
    for row in unsafe { Visit::<F>::new(flt, &d, range.start..split) } {
        // SAFETY: `row` is below the driving column's length (the contract).
        let e = unsafe { *d.entities.add(row) };
        // SAFETY: forwarded contract; `row` is aligned for every part.
        unsafe {
            if !F::matches_row(flt, e, &d, row) {
                continue;
            }
            f(Q::get_aligned(q, e, row));
            Q::commit(q);
        }
        visited += 1;
    }
    // SAFETY: forwarded contract.
    visited + unsafe { run_located::<Q, F>(q, flt, d, split..range.end, f) }
}

/// The rows of `range` a filtered loop visits, in order: each row, except that at a chunk's
/// first row the filter may skip the chunks it rules out (`QueryFilter::skip_to`).
struct Visit<'f, F: QueryFilter> {
    flt: &'f F::Fetch,
    d: &'f Driver,
    next: usize,
    range: Range<usize>,
}

impl<'f, F: QueryFilter> Visit<'f, F> {
    /// # Safety
    /// As for `run_rows`: the filter's parts are valid, `d` is the query's driver and `range`
    /// lies within its rows.
    unsafe fn new(flt: &'f F::Fetch, d: &'f Driver, range: Range<usize>) -> Self {
        Visit {
            flt,
            d,
            next: range.start,
            range,
        }
    }
}

impl<F: QueryFilter> Iterator for Visit<'_, F> {
    type Item = usize;

    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        let mut row = self.next;
        if F::SKIPS && row < self.range.end && (row == self.range.start || row % CHUNK_ROWS == 0) {
            // SAFETY: `new`'s contract; `row < range.end <= d.rows`.
            row = unsafe { F::skip_to(self.flt, self.d, row, self.range.end) };
        }
        if row >= self.range.end {
            return None;
        }
        self.next = row + 1;
        Some(row)
    }
}

/// Visits aligned rows `range` from the parts' bases (every part AoS), stamping change ticks
/// when `STAMP`.
///
/// # Safety
/// As for `run_rows`; every row of `range` is aligned for every part; `STAMP` is
/// `Q::stamps(&base)`.
#[inline(always)]
unsafe fn run_based<Q: QueryData, F: QueryFilter, const STAMP: bool>(
    base: Q::Base,
    flt: &F::Fetch,
    d: Driver,
    range: Range<usize>,
    f: &mut impl for<'a> FnMut(Q::Item<'a>),
) -> usize {
    if F::SKIPS {
        // SAFETY: forwarded contract.
        return unsafe { run_windows::<Q, F, STAMP>(base, flt, d, range, f) };
    }
    let mut visited = 0;
    for row in range {
        // SAFETY: `row` is below the driving column's length (the contract).
        let e = unsafe { *d.entities.add(row) };
        // SAFETY: forwarded contract.
        if unsafe { F::matches_row(flt, e, &d, row) } {
            // SAFETY: forwarded contract.
            unsafe { hand_out::<Q, STAMP>(base, e, row, f) };
            visited += 1;
        }
    }
    visited
}

/// Hands the closure the item at aligned row `row` (entity `e`), stamping when `STAMP`.
///
/// # Safety
/// As for `run_based`, for one row of its range.
#[inline(always)]
unsafe fn hand_out<Q: QueryData, const STAMP: bool>(
    base: Q::Base,
    e: Entity,
    row: usize,
    f: &mut impl for<'a> FnMut(Q::Item<'a>),
) {
    // SAFETY: the caller's contract.
    unsafe {
        if STAMP {
            f(Q::at(base, e, row));
        } else {
            f(Q::at_unstamped(base, e, row));
        }
    }
}

/// `run_based` for a filter that can answer for a chunk of rows at once (`Changed`): each
/// chunk is skipped, visited whole without a per-row test, visited by its mask, or tested row
/// by row, as the filter's `window` says.
///
/// # Safety
/// As for `run_based`.
#[inline(always)]
unsafe fn run_windows<Q: QueryData, F: QueryFilter, const STAMP: bool>(
    base: Q::Base,
    flt: &F::Fetch,
    d: Driver,
    range: Range<usize>,
    f: &mut impl for<'a> FnMut(Q::Item<'a>),
) -> usize {
    let mut visited = 0;
    let mut visit = |row: usize| {
        // SAFETY: forwarded contract: `row` is in `range`, below the driving column's length.
        unsafe { hand_out::<Q, STAMP>(base, *d.entities.add(row), row, f) };
        visited += 1;
    };
    let mut start = range.start;
    while start < range.end {
        let end = ((start / CHUNK_ROWS + 1) * CHUNK_ROWS).min(range.end);
        // SAFETY: forwarded contract; `start..end` lies within one chunk.
        match unsafe { F::window(flt, &d, start, end) } {
            Window::None => {}
            Window::All => (start..end).for_each(&mut visit),
            Window::Mask(mut m) => {
                while m != 0 {
                    visit(start + m.trailing_zeros() as usize);
                    m &= m - 1;
                }
            }
            Window::Rows => {
                for row in start..end {
                    // SAFETY: forwarded contract.
                    let e = unsafe { *d.entities.add(row) };
                    // SAFETY: forwarded contract.
                    if unsafe { F::matches_row(flt, e, &d, row) } {
                        visit(row);
                    }
                }
            }
        }
        start = end;
    }
    visited
}

/// Visits `range` of the driving column's rows, finding each part's row by slot.
///
/// # Safety
/// As for `run_rows`.
#[inline]
unsafe fn run_located<Q: QueryData, F: QueryFilter>(
    q: &mut Q::Fetch,
    flt: &F::Fetch,
    d: Driver,
    range: Range<usize>,
    f: &mut impl for<'a> FnMut(Q::Item<'a>),
) -> usize {
    let mut visited = 0;
    // SAFETY: forwarded contract.
    for row in unsafe { Visit::<F>::new(flt, &d, range) } {
        // SAFETY: `row` is below the driving column's length (the contract).
        let e = unsafe { *d.entities.add(row) };
        let at = DriverRow { col: d.col, row };
        // SAFETY: forwarded contract; `e` is live (it has a row in a column, or is in the
        // entity list).
        unsafe {
            if !F::matches_row(flt, e, &d, row) || !Q::locate(q, e, at) {
                continue;
            }
            f(Q::get(q, e));
            Q::commit(q);
        }
        visited += 1;
    }
    visited
}
