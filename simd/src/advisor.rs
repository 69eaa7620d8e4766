//! The layout advisor: from a component's access telemetry, a recommendation (keep the column as
//! it is, go field-SoA + SIMD, or split hot fields from cold) with its reason in figures.
//!
//! Owns: the decision rule and its thresholds. Must never: repack anything (advice only: the
//! World owns its layout), or read the World: the caller hands in plain figures, so this crate
//! stays a leaf.
//!
//! # Rule (checked in this order)
//! 1. Fewer than [`MIN_QUERIES`] queries in the window: `KeepAos` (not enough evidence).
//! 2. Rows are wider than [`FAT_ROW_BYTES`] and queries touch at most [`HOT_FRACTION_MAX`] of
//!    the row's bytes: `HotColdSplit` (each sweep drags cold bytes through the cache).
//! 3. Every field is `f32`, rows are at most [`FAT_ROW_BYTES`], and the average query sweeps at
//!    least [`SIMD_MIN_ROWS_PER_QUERY`] rows: `SimdFieldSoa`.
//! 4. Otherwise `KeepAos`.

use std::fmt;

/// Queries a window needs before the advisor says anything but `KeepAos` (a few seconds of
/// frames at 60 Hz: one-off queries from tools should not move the advice).
pub const MIN_QUERIES: u64 = 120;

/// Average rows per query from which field-SoA + `f32x8` pays: 256 rows = 32 vectors, where
/// per-query setup (borrowing columns, the padded tail) is under a few percent of the sweep,
/// and the working set of a 24-byte component (6 KiB) sits in L1, where the kernels measured
/// their largest gain over scalar AoS (docs/bench-notes/simd.md).
pub const SIMD_MIN_ROWS_PER_QUERY: u64 = 256;

/// A row wider than one 64-byte cache line is "fat".
pub const FAT_ROW_BYTES: u32 = 64;

/// A fat row whose queries touch at most half its bytes should split hot from cold.
pub const HOT_FRACTION_MAX: f64 = 0.5;

/// One component's access figures over a telemetry window (the World's per-component counters).
#[derive(Debug, Clone, PartialEq)]
pub struct ComponentAccess {
    /// Component name, for the reason text.
    pub name: String,
    /// Queries that touched the component in the window.
    pub query_count: u64,
    /// Rows those queries scanned, summed.
    pub rows_scanned: u64,
    /// Bytes of one row (the component's size).
    pub row_bytes: u32,
    /// Bytes of the row the queries actually read or write (equal to `row_bytes` when unknown).
    pub bytes_touched: u32,
    /// Whether every field is an `f32` (a field-SoA candidate).
    pub all_f32: bool,
}

/// What to do with a component's layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayoutRecommendation {
    /// Keep the component in its default array-of-structs column.
    KeepAos,
    /// A lean, all-`f32` component swept in large batches: store it field-SoA, use the kernels.
    SimdFieldSoa,
    /// A fat component whose queries read a small part: split hot fields from cold.
    HotColdSplit,
}

/// A recommendation and the figures behind it.
#[derive(Debug, Clone, PartialEq)]
pub struct LayoutAdvice {
    /// The component.
    pub name: String,
    /// What to do.
    pub recommendation: LayoutRecommendation,
    /// Why, in figures.
    pub reason: String,
}

impl fmt::Display for LayoutAdvice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {:?}: {}",
            self.name, self.recommendation, self.reason
        )
    }
}

/// The advice for one component (see the module docs for the rule).
pub fn advise(a: &ComponentAccess) -> LayoutAdvice {
    let rows_per_query = a.rows_scanned.checked_div(a.query_count).unwrap_or(0);
    let touched = a.bytes_touched.min(a.row_bytes);
    let hot_fraction = if a.row_bytes == 0 {
        1.0
    } else {
        touched as f64 / a.row_bytes as f64
    };
    let (recommendation, reason) = if a.query_count < MIN_QUERIES {
        (
            LayoutRecommendation::KeepAos,
            format!(
                "{} queries in the window, fewer than the {MIN_QUERIES} needed to advise",
                a.query_count
            ),
        )
    } else if a.row_bytes > FAT_ROW_BYTES && hot_fraction <= HOT_FRACTION_MAX {
        (
            LayoutRecommendation::HotColdSplit,
            format!(
                "rows are {} B (> {FAT_ROW_BYTES} B, one cache line) but queries touch {} B ({:.0}%): \
                 every sweep of {rows_per_query} rows/query moves {} B of cold data per row",
                a.row_bytes,
                touched,
                hot_fraction * 100.0,
                a.row_bytes - touched
            ),
        )
    } else if a.all_f32 && a.row_bytes <= FAT_ROW_BYTES && rows_per_query >= SIMD_MIN_ROWS_PER_QUERY
    {
        (
            LayoutRecommendation::SimdFieldSoa,
            format!(
                "all-f32 rows of {} B swept {rows_per_query} rows/query over {} queries \
                 (>= {SIMD_MIN_ROWS_PER_QUERY}): field-SoA + f32x8 kernels apply; keep it resident, never transpose per frame",
                a.row_bytes, a.query_count
            ),
        )
    } else {
        (
            LayoutRecommendation::KeepAos,
            format!(
                "{rows_per_query} rows/query, {} B rows, all-f32 {}: no layout change pays",
                a.row_bytes, a.all_f32
            ),
        )
    };
    LayoutAdvice {
        name: a.name.clone(),
        recommendation,
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(queries: u64, rows: u64, bytes: u32, touched: u32, all_f32: bool) -> ComponentAccess {
        ComponentAccess {
            name: "C".into(),
            query_count: queries,
            rows_scanned: rows,
            row_bytes: bytes,
            bytes_touched: touched,
            all_f32,
        }
    }

    #[test]
    fn lean_f32_swept_in_batches_goes_simd() {
        let a = advise(&access(600, 600 * 10_000, 24, 24, true));
        assert_eq!(a.recommendation, LayoutRecommendation::SimdFieldSoa);
        assert!(a.reason.contains("10000 rows/query"), "{a}");
    }

    #[test]
    fn thresholds_are_exact() {
        let at = advise(&access(MIN_QUERIES, MIN_QUERIES * 256, 24, 24, true));
        assert_eq!(at.recommendation, LayoutRecommendation::SimdFieldSoa);
        let below = advise(&access(MIN_QUERIES, MIN_QUERIES * 255, 24, 24, true));
        assert_eq!(below.recommendation, LayoutRecommendation::KeepAos);
        let few = advise(&access(MIN_QUERIES - 1, 1 << 30, 24, 24, true));
        assert_eq!(few.recommendation, LayoutRecommendation::KeepAos);
    }

    #[test]
    fn fat_rows_read_in_part_split_hot_from_cold() {
        let a = advise(&access(300, 300 * 5000, 256, 32, false));
        assert_eq!(a.recommendation, LayoutRecommendation::HotColdSplit);
        assert!(a.reason.contains("224 B of cold data"), "{a}");
        // Fat but read whole: nothing to split.
        let whole = advise(&access(300, 300 * 5000, 256, 256, true));
        assert_eq!(whole.recommendation, LayoutRecommendation::KeepAos);
    }

    #[test]
    fn non_f32_or_small_batches_keep_the_column() {
        assert_eq!(
            advise(&access(300, 300 * 5000, 16, 16, false)).recommendation,
            LayoutRecommendation::KeepAos
        );
        assert_eq!(
            advise(&access(300, 300 * 10, 16, 16, true)).recommendation,
            LayoutRecommendation::KeepAos
        );
        assert_eq!(
            advise(&access(0, 0, 0, 0, true)).recommendation,
            LayoutRecommendation::KeepAos
        );
    }
}
