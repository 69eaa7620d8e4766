//! The row loops a query runs: aligned rows from the parts' bases, aligned rows through the
//! fetches, and rows found by slot, all over the rows the filter keeps (`each_kept`, chunk by
//! chunk under a filter that answers for a chunk at once, `Changed`).
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
    // SAFETY: forwarded contract; `start..split` are aligned rows for every part.
    unsafe {
        each_kept::<F>(flt, &d, range.start..split, |row, e| {
            f(Q::get_aligned(q, e, row));
            Q::commit(q);
            visited += 1;
        });
    }
    // SAFETY: forwarded contract.
    visited + unsafe { run_located::<Q, F>(q, flt, d, split..range.end, f) }
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
    let mut visited = 0;
    // SAFETY: forwarded contract.
    unsafe {
        each_kept::<F>(flt, &d, range, |row, e| {
            if STAMP {
                f(Q::at(base, e, row));
            } else {
                f(Q::at_unstamped(base, e, row));
            }
            visited += 1;
        });
    }
    visited
}

/// Calls `keep(row, entity)` for every row of `range` the filter keeps, in order. A filter
/// that can answer for a chunk of rows at once (`Changed`) is asked per chunk: a chunk is
/// skipped, kept whole without a per-row test, kept by its mask, or tested row by row, as its
/// `window` says; any other filter is asked per row.
///
/// # Safety
/// As for `run_rows`: the filter's parts are valid, `d` is the query's driver and `range` lies
/// within its rows.
#[inline(always)]
unsafe fn each_kept<F: QueryFilter>(
    flt: &F::Fetch,
    d: &Driver,
    range: Range<usize>,
    mut keep: impl FnMut(usize, Entity),
) {
    // SAFETY: the contract: every `row` asked for is in `range`, below the driving column's
    // length.
    let entity = |row: usize| unsafe { *d.entities.add(row) };
    let kept = |row: usize| {
        let e = entity(row);
        // SAFETY: the contract; `e` is `row`'s entity.
        unsafe { F::matches_row(flt, e, d, row) }.then_some(e)
    };
    if !F::SKIPS {
        for row in range {
            if let Some(e) = kept(row) {
                keep(row, e);
            }
        }
        return;
    }
    let mut start = range.start;
    while start < range.end {
        let end = ((start / CHUNK_ROWS + 1) * CHUNK_ROWS).min(range.end);
        // SAFETY: the contract; `start..end` lies within `range` and within one chunk.
        match unsafe { F::window(flt, d, start, end) } {
            Window::None => {}
            Window::Rows => {
                for row in start..end {
                    if let Some(e) = kept(row) {
                        keep(row, e);
                    }
                }
            }
            Window::All => (start..end).for_each(|row| keep(row, entity(row))),
            Window::Mask(mut m) => {
                while m != 0 {
                    let row = start + m.trailing_zeros() as usize;
                    keep(row, entity(row));
                    m &= m - 1;
                }
            }
        }
        start = end;
    }
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
    // SAFETY: forwarded contract; `e` is live (it has a row in a column, or is in the entity
    // list).
    unsafe {
        each_kept::<F>(flt, &d, range, |row, e| {
            if Q::locate(q, e, DriverRow { col: d.col, row }) {
                f(Q::get(q, e));
                Q::commit(q);
                visited += 1;
            }
        });
    }
    visited
}
