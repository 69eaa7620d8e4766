//! Per-component access telemetry, the input of the layout advisor.
//!
//! Owns: counting queries and rows scanned per component column, and the [`ColumnAccess`]
//! snapshot. Must never: cost anything per row (counts are added once per query, from the
//! column length) or influence world state (telemetry is diagnostics, not simulation).
//!
//! Counters are relaxed atomics: they are written through shared borrows (queries take
//! `&World`) and read by whoever snapshots them; no other memory is published through them, so
//! no ordering is needed. Atomics (rather than `Cell`) keep every column `Sync`, so a column can
//! be shared read-only with a lane; the cost is one relaxed add per query, never per row.

use std::sync::atomic::{AtomicU64, Ordering};

use lanegraph_simd::advisor::{self, LayoutAdvice};

/// How a component column is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ColumnLayout {
    /// A dense typed column of whole values (array-of-structs).
    Aos,
    /// One aligned `f32` column per field (`lanegraph-simd`), resident across frames.
    FieldSoa,
}

impl ColumnLayout {
    /// `"AoS"` or `"field-SoA"`.
    pub const fn name(self) -> &'static str {
        match self {
            ColumnLayout::Aos => "AoS",
            ColumnLayout::FieldSoa => "field-SoA",
        }
    }
}

/// Query and scan counts of one column since the world was made.
#[derive(Debug, Default)]
pub(crate) struct AccessCounters {
    queries: AtomicU64,
    rows_scanned: AtomicU64,
}

impl AccessCounters {
    /// Records one query that scans `rows` rows.
    #[inline]
    pub(crate) fn record(&self, rows: usize) {
        self.queries.fetch_add(1, Ordering::Relaxed);
        self.rows_scanned.fetch_add(rows as u64, Ordering::Relaxed);
    }

    /// [`record`](Self::record) through an exclusive borrow: plain adds, no atomic
    /// read-modify-write (a typed query holds its columns exclusively; two locked adds were a
    /// sixth of a 520-row query).
    #[inline]
    pub(crate) fn record_mut(&mut self, rows: usize) {
        *self.queries.get_mut() += 1;
        *self.rows_scanned.get_mut() += rows as u64;
    }

    pub(crate) fn queries(&self) -> u64 {
        self.queries.load(Ordering::Relaxed)
    }

    pub(crate) fn rows_scanned(&self) -> u64 {
        self.rows_scanned.load(Ordering::Relaxed)
    }
}

/// One component column's access telemetry, as the World counts it (`World::component_access`);
/// [`ColumnAccess::advice`] turns it into the layout advisor's input
/// (`lanegraph_simd::ComponentAccess`, which a caller with per-field counts builds itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnAccess {
    /// The component's `NAME`.
    pub name: &'static str,
    /// Its current layout.
    pub layout: ColumnLayout,
    /// Size of one value in bytes (`size_of::<T>()`).
    pub size_bytes: usize,
    /// Rows stored now.
    pub rows: usize,
    /// Queries (iterations and column borrows) since the world was made.
    pub query_count: u64,
    /// Rows those queries scanned (a pair query counts its probes of the second column too).
    pub rows_scanned: u64,
    /// `rows_scanned * size_bytes`: the bytes those scans touched.
    pub bytes_scanned: u64,
    /// Whether every field is an `f32` ([`ComponentMeta::ALL_F32`], or stored field-SoA).
    ///
    /// [`ComponentMeta::ALL_F32`]: super::component::ComponentMeta::ALL_F32
    pub all_f32: bool,
}

impl ColumnAccess {
    /// The counts accrued since `earlier` (an older snapshot of the same component): a telemetry
    /// window for the advisor. Layout, size, rows and `all_f32` are this snapshot's. A snapshot
    /// of another component, or a newer one, gives zero counts rather than wrapping.
    pub fn since(&self, earlier: &ColumnAccess) -> ColumnAccess {
        let same = earlier.name == self.name;
        let delta = |now: u64, then: u64| if same { now.saturating_sub(then) } else { 0 };
        ColumnAccess {
            query_count: delta(self.query_count, earlier.query_count),
            rows_scanned: delta(self.rows_scanned, earlier.rows_scanned),
            bytes_scanned: delta(self.bytes_scanned, earlier.bytes_scanned),
            ..*self
        }
    }

    /// The layout advisor's recommendation for this component (keep its column, field-SoA +
    /// SIMD, or a hot/cold split), with the reason in figures; see `lanegraph_simd::advisor` for
    /// the rule. Advice only: nothing is repacked. The World does not track which fields a query
    /// reads, so the advisor is told queries touch the whole row; a hot/cold split is therefore
    /// never advised from World figures alone (it needs per-field counts the caller can add by
    /// building [`lanegraph_simd::advisor::ComponentAccess`] itself).
    pub fn advice(&self) -> LayoutAdvice {
        let row_bytes = u32::try_from(self.size_bytes).unwrap_or(u32::MAX);
        advisor::advise(&advisor::ComponentAccess {
            name: self.name.to_string(),
            query_count: self.query_count,
            rows_scanned: self.rows_scanned,
            row_bytes,
            bytes_touched: row_bytes,
            all_f32: self.all_f32,
        })
    }
}
