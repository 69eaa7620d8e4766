//! The errors of this crate: one small type per failure, each saying what, why and how to fix.
//!
//! Owns: error types only. Must never: carry behaviour.

/// A field list given to [`crate::SoaTable::new`] cannot make a table.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidFields {
    /// No fields at all.
    #[error("field-SoA table has no fields: a table needs at least one f32 field (fix: list the component's fields)")]
    Empty,
    /// Two fields share a name.
    #[error("field-SoA table lists field `{name}` twice: field names must be unique so lookups by name are unambiguous (fix: rename one)")]
    Duplicate {
        /// The repeated name.
        name: &'static str,
    },
    /// More fields than [`crate::MAX_FIELDS`].
    #[error("field-SoA table has {count} fields, more than the limit {max}: rows are staged on the stack (fix: split the component, hot fields apart from cold)")]
    TooMany {
        /// How many were given.
        count: usize,
        /// The limit.
        max: usize,
    },
}

/// A row index past the end of a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("row {row} is out of bounds: the table has {len} rows (fix: use a row below len; rows move on swap_remove)")]
pub struct RowOutOfBounds {
    /// The row asked for.
    pub row: usize,
    /// The table's row count.
    pub len: usize,
}

/// A row given as a slice has the wrong number of values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("row has {got} values but the table has {expected} fields (fix: pass one value per field, in field order)")]
pub struct RowWidthMismatch {
    /// Values given.
    pub got: usize,
    /// Fields in the table.
    pub expected: usize,
}

/// A component type was used with a table made for another field list.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("component `{component}` has fields {component_fields:?} but the table has {table_fields:?} (fix: use the table made by SoaTable::for_component::<{component}>())")]
pub struct ComponentMismatch {
    /// The component's type name.
    pub component: &'static str,
    /// Its fields.
    pub component_fields: &'static [&'static str],
    /// The table's fields.
    pub table_fields: Vec<&'static str>,
}

/// No field of that name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no field named `{name}`: the table has {fields:?} (fix: use one of those names)")]
pub struct UnknownField {
    /// The name asked for.
    pub name: String,
    /// The table's fields.
    pub fields: Vec<&'static str>,
}

/// A fixed-size view asked for a different number of fields than the table has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("asked for {asked} field columns but the table has {actual} (fix: match the const N to the table's field count)")]
pub struct FieldCountMismatch {
    /// N asked for.
    pub asked: usize,
    /// Fields in the table.
    pub actual: usize,
}

/// Chunks were asked for with a size of zero vectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("chunk size is zero: a chunk must hold at least one f32x8 (8 rows) (fix: pass lanes_per_chunk >= 1)")]
pub struct ZeroChunkSize;

/// Slices handed to a kernel disagree in length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("kernel `{kernel}`: input slices have {got} and {expected} elements; every field slice must have the same length (fix: pass columns of one table)")]
pub struct LengthMismatch {
    /// The kernel.
    pub kernel: &'static str,
    /// The first length that differed.
    pub got: usize,
    /// The length expected (of the first slice).
    pub expected: usize,
}

/// A build for a higher x86-64 level ran on a CPU that lacks its features.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("this binary was built for {level} but the CPU lacks {missing:?}: running it would fault with an illegal instruction (fix: use the portable build, i.e. build without RUSTFLAGS=\"-C target-cpu=x86-64-v3\"; see docs/simd.md)")]
pub struct CpuMismatch {
    /// The level the binary was built for.
    pub level: &'static str,
    /// Compiled-in features this CPU does not report.
    pub missing: Vec<&'static str>,
}

/// A kernel was told there are more rows than its vectors hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("kernel `{kernel}`: {rows} rows do not fit in vectors holding {capacity} lanes (fix: pass the table's row count with its own columns)")]
pub struct RowCountTooLarge {
    /// The kernel.
    pub kernel: &'static str,
    /// Rows given.
    pub rows: usize,
    /// Lanes available (`vectors * 8`).
    pub capacity: usize,
}

/// Bounds given to a kernel are not an interval.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("kernel `{kernel}`: bounds [{lo}, {hi}] are not a finite interval with lo <= hi (fix: pass finite bounds, lower first)")]
pub struct InvalidBounds {
    /// The kernel.
    pub kernel: &'static str,
    /// Lower bound given.
    pub lo: f32,
    /// Upper bound given.
    pub hi: f32,
}
