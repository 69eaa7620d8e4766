//! The three-component query: `for_each_mut3::<A, B, C>(|e, a, b, c| ..)`, every component
//! mutable, any layout.
//!
//! Owns: [`World::for_each_mut3`] and its filtered form. Must never: visit an entity that lacks
//! any of the three, or alias a column (three distinct components, checked, else
//! [`WorldError::AliasedQuery`](super::WorldError::AliasedQuery)).
//!
//! When all three are AoS, the leading rows where all three columns hold the same entity at
//! the same index (components inserted together) run as a bare loop over three slices, with
//! that count cached per column pair like the pair query's; later rows, and any field-SoA
//! component, go through per-row lookups (see `mixed_query`).

use super::component::Component;
use super::entity::Entity;
use super::mixed_query::{row_of, QuerySide};
use super::query::{aligned_rows, query_type, Filter};
use super::World;
use crate::world::error::WorldError;

impl World {
    /// The body of [`WorldHooks::for_each_mut3`](crate::hooks::WorldHooks::for_each_mut3), which documents it.
    pub(crate) fn for_each_mut3<A: Component, B: Component, C: Component>(
        &mut self,
        f: impl FnMut(Entity, &mut A, &mut B, &mut C),
    ) -> Result<usize, WorldError> {
        self.for_each_mut3_filtered(&Filter::new(), f)
    }

    /// The body of [`WorldHooks::for_each_mut3_filtered`](crate::hooks::WorldHooks::for_each_mut3_filtered), which documents it.
    pub(crate) fn for_each_mut3_filtered<A: Component, B: Component, C: Component>(
        &mut self,
        filter: &Filter,
        mut f: impl FnMut(Entity, &mut A, &mut B, &mut C),
    ) -> Result<usize, WorldError> {
        let types = [query_type::<A>(), query_type::<B>(), query_type::<C>()];
        let Some(split) = self.split_columns(types, filter)? else {
            return Ok(0);
        };
        let [(ca, ia), (cb, ib), (cc, ic)] = split.columns;
        let conditions = split.filter;
        let rows = ca.len();
        let mut a = QuerySide::<A>::of(ca, rows);
        let mut b = QuerySide::<B>::of(cb, rows);
        let mut c = QuerySide::<C>::of(cc, rows);
        let mut visited = 0;
        let mut start = 0;
        if let (
            QuerySide::Aos {
                entities: ea,
                values: va,
                order_gen: ga,
                ..
            },
            QuerySide::Aos {
                entities: eb,
                values: vb,
                order_gen: gb,
                ..
            },
            QuerySide::Aos {
                entities: ec,
                values: vc,
                order_gen: gc,
                ..
            },
        ) = (&mut a, &mut b, &mut c)
        {
            let ab = aligned_rows(split.pair_rows, (ia, *ga, ea), (ib, *gb, eb));
            let ac = aligned_rows(split.pair_rows, (ia, *ga, ea), (ic, *gc, ec));
            let head = ab.min(ac);
            let rows = ea[..head]
                .iter()
                .zip(&mut va[..head])
                .zip(&mut vb[..head])
                .zip(&mut vc[..head]);
            if conditions.is_some() {
                for (((&e, x), y), z) in rows {
                    if conditions.passes(e) {
                        f(e, x, y, z);
                        visited += 1;
                    }
                }
            } else {
                for (((&e, x), y), z) in rows {
                    f(e, x, y, z);
                }
                visited = head;
            }
            start = head;
        }
        let filtered = conditions.is_some();
        for i in start..rows {
            let e = a.entities()[i];
            let Some(j) = row_of(&b, i, e) else {
                continue;
            };
            let Some(k) = row_of(&c, i, e) else {
                continue;
            };
            if filtered && !conditions.passes(e) {
                continue;
            }
            a.with_row(i, |x| b.with_row(j, |y| c.with_row(k, |z| f(e, x, y, z))));
            visited += 1;
        }
        Ok(visited)
    }
}
