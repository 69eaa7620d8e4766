//! A field-SoA table: N [`Column`]s of equal length, one per field of one component type.
//!
//! Owns: keeping its columns equally long and dense, and field lookup by name. Must never: hand
//! out a `&mut Column` (that could change one column's length alone); mutable access to the data
//! goes through [`SoaTable::lanes_mut`] (whole vectors, padding restored afterwards) or
//! [`SoaTable::field_mut`] (rows only).

use crate::column::{Column, LANES};
use crate::component::SoaComponent;
use crate::error::{
    ComponentMismatch, FieldCountMismatch, InvalidFields, RowOutOfBounds, RowWidthMismatch,
    UnknownField,
};
use crate::lanes::LanesMut;
use wide::f32x8;

/// Most fields one table may have. Rows are staged through a stack buffer of this many `f32`s
/// (256 bytes); a component with more `f32` fields than this wants a hot/cold split anyway.
pub const MAX_FIELDS: usize = 64;

/// N field columns of equal length: the field-SoA storage of one component type.
///
/// Rows are dense `0..len`; [`SoaTable::swap_remove`] says which row moved so an owner (the
/// World) can fix its entity-to-row map.
#[derive(Clone, Debug)]
pub struct SoaTable {
    names: Vec<&'static str>,
    columns: Vec<Column>,
    len: usize,
}

impl SoaTable {
    /// An empty table with the given field names, in column order.
    pub fn new(fields: &[&'static str]) -> Result<Self, InvalidFields> {
        if fields.is_empty() {
            return Err(InvalidFields::Empty);
        }
        if fields.len() > MAX_FIELDS {
            return Err(InvalidFields::TooMany {
                count: fields.len(),
                max: MAX_FIELDS,
            });
        }
        for (i, name) in fields.iter().enumerate() {
            if fields[..i].contains(name) {
                return Err(InvalidFields::Duplicate { name });
            }
        }
        Ok(SoaTable {
            names: fields.to_vec(),
            columns: fields.iter().map(|_| Column::new()).collect(),
            len: 0,
        })
    }

    /// An empty table for component `C` (its [`SoaComponent::FIELDS`]).
    pub fn for_component<C: SoaComponent>() -> Result<Self, InvalidFields> {
        SoaTable::new(C::FIELDS)
    }

    /// Rows in the table.
    pub fn len(&self) -> usize {
        self.len
    }

    /// `true` when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The field names, in column order.
    pub fn field_names(&self) -> &[&'static str] {
        &self.names
    }

    /// Number of fields (columns).
    pub fn field_count(&self) -> usize {
        self.names.len()
    }

    /// The column index of field `name`.
    pub fn field_index(&self, name: &str) -> Result<usize, UnknownField> {
        self.names
            .iter()
            .position(|n| *n == name)
            .ok_or_else(|| UnknownField {
                name: name.to_string(),
                fields: self.names.clone(),
            })
    }

    /// Reserves room for `additional` more rows in every column.
    pub fn reserve(&mut self, additional: usize) {
        for c in &mut self.columns {
            c.reserve(additional);
        }
    }

    /// Appends a row given as one value per field, in field order; returns its row index.
    pub fn push_row(&mut self, values: &[f32]) -> Result<usize, RowWidthMismatch> {
        if values.len() != self.columns.len() {
            return Err(RowWidthMismatch {
                got: values.len(),
                expected: self.columns.len(),
            });
        }
        for (c, v) in self.columns.iter_mut().zip(values) {
            c.push(*v);
        }
        self.len += 1;
        Ok(self.len - 1)
    }

    /// Appends component `c` as a row; returns its row index.
    pub fn push<C: SoaComponent>(&mut self, c: &C) -> Result<usize, ComponentMismatch> {
        self.check_component::<C>()?;
        let mut row = [0.0f32; MAX_FIELDS];
        let row = &mut row[..C::FIELDS.len()];
        c.write(row);
        for (col, v) in self.columns.iter_mut().zip(row.iter()) {
            col.push(*v);
        }
        self.len += 1;
        Ok(self.len - 1)
    }

    /// Reads row `row` as component `C`.
    pub fn get<C: SoaComponent>(&self, row: usize) -> Result<C, GetError> {
        self.check_component::<C>()?;
        self.check_row(row)?;
        let mut buf = [0.0f32; MAX_FIELDS];
        let buf = &mut buf[..C::FIELDS.len()];
        for (b, col) in buf.iter_mut().zip(&self.columns) {
            *b = col.as_slice()[row];
        }
        Ok(C::read(buf))
    }

    /// Overwrites row `row` with component `c`.
    pub fn set<C: SoaComponent>(&mut self, row: usize, c: &C) -> Result<(), GetError> {
        self.check_component::<C>()?;
        self.check_row(row)?;
        let mut buf = [0.0f32; MAX_FIELDS];
        let buf = &mut buf[..C::FIELDS.len()];
        c.write(buf);
        for (b, col) in buf.iter().zip(&mut self.columns) {
            col.as_mut_slice()[row] = *b;
        }
        Ok(())
    }

    /// Removes row `row` by moving the last row into it (O(fields), keeps every column dense).
    ///
    /// Returns `Some(old_index)` of the row that moved into `row`, or `None` when `row` was the
    /// last row and nothing moved.
    pub fn swap_remove(&mut self, row: usize) -> Result<Option<usize>, RowOutOfBounds> {
        self.check_row(row)?;
        for c in &mut self.columns {
            c.swap_remove(row);
        }
        self.len -= 1;
        Ok((row != self.len).then_some(self.len))
    }

    /// Makes this table a copy of `src` (same fields), reusing this table's allocations: no
    /// allocation once they are large enough. Returns false (and changes nothing) when the two
    /// tables' fields differ.
    pub fn copy_from(&mut self, src: &SoaTable) -> bool {
        if self.names != src.names {
            return false;
        }
        for (d, s) in self.columns.iter_mut().zip(&src.columns) {
            d.copy_from(s);
        }
        self.len = src.len;
        true
    }

    /// Removes every row; keeps the allocations.
    pub fn clear(&mut self) {
        for c in &mut self.columns {
            c.clear();
        }
        self.len = 0;
    }

    /// Column `index` (read-only: rows, padded rows and `f32x8` lanes), `None` when out of range.
    pub fn column(&self, index: usize) -> Option<&Column> {
        self.columns.get(index)
    }

    /// The rows of field `name`.
    pub fn field(&self, name: &str) -> Result<&[f32], UnknownField> {
        Ok(self.columns[self.field_index(name)?].as_slice())
    }

    /// The rows of field `name`, mutable (padding is not reachable).
    pub fn field_mut(&mut self, name: &str) -> Result<&mut [f32], UnknownField> {
        let i = self.field_index(name)?;
        Ok(self.columns[i].as_mut_slice())
    }

    /// The rows of every field at once, mutable, in field order (padding not reachable); for
    /// scalar systems over field-SoA data. `N` must equal the field count.
    pub fn fields_mut<const N: usize>(&mut self) -> Result<[&mut [f32]; N], FieldCountMismatch> {
        if N != self.columns.len() {
            return Err(FieldCountMismatch {
                asked: N,
                actual: self.columns.len(),
            });
        }
        let mut it = self.columns.iter_mut();
        Ok(std::array::from_fn(|_| {
            it.next()
                .expect("SoaTable::fields_mut: field count checked above")
                .as_mut_slice()
        }))
    }

    /// The rows of every field, mutable, in field order, whatever the field count (padding not
    /// reachable): for code that learns the width at run time.
    pub fn field_slices_mut(&mut self) -> impl Iterator<Item = &mut [f32]> + '_ {
        self.columns.iter_mut().map(Column::as_mut_slice)
    }

    /// The padded rows of field `name` as `f32x8` vectors (padding lanes hold [`crate::PAD`]).
    pub fn field_lanes(&self, name: &str) -> Result<&[f32x8], UnknownField> {
        Ok(self.columns[self.field_index(name)?].lanes())
    }

    /// Number of `f32x8` vectors per column: `padded_len(len) / 8`.
    pub fn lane_count(&self) -> usize {
        self.len.div_ceil(LANES)
    }

    /// Mutable access to every column's vectors at once, for kernels and for splitting into
    /// disjoint chunks that jobs on different threads own at once. Padding lanes may be written
    /// through it; they are reset to [`crate::PAD`] when the returned guard drops.
    pub fn lanes_mut(&mut self) -> LanesMut<'_> {
        LanesMut::new(&mut self.columns, self.len)
    }

    fn check_row(&self, row: usize) -> Result<(), RowOutOfBounds> {
        if row < self.len {
            Ok(())
        } else {
            Err(RowOutOfBounds { row, len: self.len })
        }
    }

    fn check_component<C: SoaComponent>(&self) -> Result<(), ComponentMismatch> {
        if C::FIELDS == self.names.as_slice() {
            Ok(())
        } else {
            Err(ComponentMismatch {
                component: std::any::type_name::<C>(),
                component_fields: C::FIELDS,
                table_fields: self.names.clone(),
            })
        }
    }
}

/// Reading or writing a row as a component failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GetError {
    /// The component does not match the table.
    #[error(transparent)]
    Component(#[from] ComponentMismatch),
    /// The row is past the end.
    #[error(transparent)]
    Row(#[from] RowOutOfBounds),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PAD;

    #[derive(Debug, Clone, Copy, PartialEq)]
    struct Pos {
        x: f32,
        y: f32,
        z: f32,
    }
    crate::soa_component!(Pos { x, y, z });

    #[derive(Debug, Clone, Copy, PartialEq)]
    struct Other {
        a: f32,
    }
    crate::soa_component!(Other { a });

    fn p(i: usize) -> Pos {
        Pos {
            x: i as f32,
            y: i as f32 * 10.0,
            z: -(i as f32),
        }
    }

    #[test]
    fn invalid_field_lists_are_typed_errors() {
        assert_eq!(SoaTable::new(&[]).unwrap_err(), InvalidFields::Empty);
        assert_eq!(
            SoaTable::new(&["x", "y", "x"]).unwrap_err(),
            InvalidFields::Duplicate { name: "x" }
        );
        let many: Vec<&'static str> = (0..=MAX_FIELDS)
            .map(|i| &*Box::leak(format!("f{i}").into_boxed_str()))
            .collect();
        assert!(matches!(
            SoaTable::new(&many).unwrap_err(),
            InvalidFields::TooMany { count: 65, max: 64 }
        ));
    }

    #[test]
    fn push_get_set_round_trip_by_component() {
        let mut t = SoaTable::for_component::<Pos>().unwrap();
        for i in 0..21 {
            assert_eq!(t.push(&p(i)).unwrap(), i);
        }
        assert_eq!(t.len(), 21);
        assert_eq!(t.get::<Pos>(7).unwrap(), p(7));
        t.set(7, &p(100)).unwrap();
        assert_eq!(t.get::<Pos>(7).unwrap(), p(100));
        assert_eq!(t.field("y").unwrap()[3], 30.0);
        assert_eq!(t.field_lanes("z").unwrap().len(), 3);
        assert_eq!(t.lane_count(), 3);
        let [x, _, z] = t.fields_mut::<3>().unwrap();
        x[0] = 5.0;
        z[20] = 6.0;
        assert_eq!(x.len(), 21);
        assert_eq!(t.get::<Pos>(0).unwrap().x, 5.0);
        assert_eq!(t.get::<Pos>(20).unwrap().z, 6.0);
        assert!(t.fields_mut::<2>().is_err());
    }

    #[test]
    fn mismatches_are_typed_errors() {
        let mut t = SoaTable::for_component::<Pos>().unwrap();
        let e = t.push(&Other { a: 1.0 }).unwrap_err();
        assert_eq!(e.component_fields, &["a"]);
        assert!(e.to_string().contains("fix:"));
        assert_eq!(
            t.push_row(&[1.0]).unwrap_err(),
            RowWidthMismatch {
                got: 1,
                expected: 3
            }
        );
        assert_eq!(
            t.get::<Pos>(0).unwrap_err(),
            GetError::Row(RowOutOfBounds { row: 0, len: 0 })
        );
        assert!(t
            .field("w")
            .unwrap_err()
            .to_string()
            .contains("[\"x\", \"y\", \"z\"]"));
    }

    #[test]
    fn swap_remove_reports_the_moved_row_and_stays_dense() {
        let mut t = SoaTable::for_component::<Pos>().unwrap();
        for i in 0..10 {
            t.push(&p(i)).unwrap();
        }
        assert_eq!(t.swap_remove(2).unwrap(), Some(9));
        assert_eq!(t.get::<Pos>(2).unwrap(), p(9));
        assert_eq!(t.swap_remove(8).unwrap(), None);
        assert_eq!(t.len(), 8);
        for c in 0..3 {
            let col = t.column(c).unwrap();
            assert_eq!(col.len(), 8);
            assert_eq!(col.padded().len(), 8);
        }
        assert_eq!(
            t.swap_remove(8).unwrap_err(),
            RowOutOfBounds { row: 8, len: 8 }
        );
        t.swap_remove(0).unwrap();
        assert!(t.column(0).unwrap().padded()[7..].iter().all(|v| *v == PAD));
    }
}
