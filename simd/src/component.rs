//! How a component declares itself field-SoA: the [`SoaComponent`] trait and the
//! [`soa_component!`](crate::soa_component) macro that implements it.
//!
//! Owns: the mapping between a component struct and its ordered `f32` field list. Must never:
//! decide storage (that is [`crate::SoaTable`]'s) or apply to components with non-`f32` fields:
//! plain components stay array-of-structs in the World.

/// A component stored field-SoA: one `f32` column per field.
///
/// Contract: `FIELDS` is non-empty, has unique names and at most [`crate::MAX_FIELDS`] entries;
/// `write` fills `out[i]` with field `FIELDS[i]` for every `i` (`out.len() == FIELDS.len()`);
/// `read(write(x)) == x` bit for bit. The [`soa_component!`](crate::soa_component) macro
/// writes all three for a struct of named `f32` fields.
pub trait SoaComponent: Sized + 'static {
    /// The field names, in column order.
    const FIELDS: &'static [&'static str];
    /// Writes the fields into `out`, in `FIELDS` order.
    fn write(&self, out: &mut [f32]);
    /// Builds the component from `fields`, in `FIELDS` order.
    fn read(fields: &[f32]) -> Self;

    /// Builds the component from field `i`'s value `field(i)` for each `i` in `FIELDS` order,
    /// with no slice in between: a query reads a row's fields straight from their columns.
    /// The default goes through [`read`](Self::read) over a stack buffer as long as `FIELDS`
    /// (a constant, so the loop unrolls and the buffer folds away once inlined).
    #[inline(always)]
    fn read_with(mut field: impl FnMut(usize) -> f32) -> Self {
        let mut buf = [0.0f32; crate::MAX_FIELDS];
        let n = Self::FIELDS.len().min(crate::MAX_FIELDS);
        for (i, b) in buf[..n].iter_mut().enumerate() {
            *b = field(i);
        }
        Self::read(&buf[..n])
    }

    /// Hands each field's value to `field(i, value)`, in `FIELDS` order (the inverse of
    /// [`read_with`](Self::read_with)).
    #[inline(always)]
    fn write_with(&self, mut field: impl FnMut(usize, f32)) {
        let mut buf = [0.0f32; crate::MAX_FIELDS];
        let n = Self::FIELDS.len().min(crate::MAX_FIELDS);
        self.write(&mut buf[..n]);
        for (i, v) in buf[..n].iter().enumerate() {
            field(i, *v);
        }
    }
}

/// Typed, named access to a field-SoA component's columns: `#[derive(SoaComponent)]` on
/// `struct Pos { x: f32, y: f32 }` also generates `PosFields<'a> { pub x: &'a mut [f32], pub y:
/// &'a mut [f32] }` and this impl, so kernels name fields as Rust fields, not strings.
pub trait SoaFields: SoaComponent {
    /// One mutable slice of rows per field, as named fields.
    type Mut<'a>;
    /// The rows of every field of `table`, by name; `None` when `table` was not built for this
    /// component's fields.
    fn fields_mut(table: &mut crate::SoaTable) -> Option<Self::Mut<'_>>;
}

/// Implements [`SoaComponent`] for a struct whose listed fields are all `f32`.
///
/// ```
/// #[derive(Debug, Clone, Copy, PartialEq)]
/// struct Velocity { x: f32, y: f32, z: f32 }
/// lanegraph_simd::soa_component!(Velocity { x, y, z });
///
/// use lanegraph_simd::SoaComponent;
/// assert_eq!(Velocity::FIELDS, &["x", "y", "z"]);
/// let mut out = [0.0; 3];
/// Velocity { x: 1.0, y: 2.0, z: 3.0 }.write(&mut out);
/// assert_eq!(Velocity::read(&out), Velocity { x: 1.0, y: 2.0, z: 3.0 });
/// ```
///
/// Every field of the struct must be listed (the generated `read` builds the struct from them),
/// and each must be `f32`:
///
/// ```compile_fail
/// struct Tagged { x: f32, id: u32 }
/// lanegraph_simd::soa_component!(Tagged { x, id });
/// ```
#[macro_export]
macro_rules! soa_component {
    ($ty:ident { $($field:ident),+ $(,)? }) => {
        impl $crate::SoaComponent for $ty {
            const FIELDS: &'static [&'static str] = &[$(stringify!($field)),+];
            fn write(&self, out: &mut [f32]) {
                let mut i = 0usize;
                $( out[i] = self.$field; i += 1; )+
                let _ = i;
            }
            fn read(fields: &[f32]) -> Self {
                let mut i = 0usize;
                $( let $field: f32 = fields[i]; i += 1; )+
                let _ = i;
                $ty { $($field),+ }
            }
        }
    };
}
