//! The snapshot suite's incremental-capture row: a capture of a world where one column in ten
//! changed, against a capture where every column changed.
//!
//! Owns: `snapshot_one_column_in_ten`. Must never: time a capture that did not copy what
//! changed (the suite checks `columns_copied` and fails otherwise).
//!
//! The world: 10,000 entities with ten components of four `f32`s, each in its own change
//! domain (four built-in, six game-defined). Each sample writes one component through a query
//! and captures into a warm snapshot; the baseline marks every domain changed and captures.
//! Microseconds, medians of interleaved samples. Goal: <= 0.2x.

use lanegraph::hooks::{SnapshotHooks, WorldHooks};
use lanegraph::world::{Component, Domain, DomainSet, Snapshot, StateHash, World};
use lanegraph_jobs::clock;

use super::stats::median;
use super::{BenchError, Figure};

const SUITE: &str = "snapshot";
const ENTITIES: usize = 10_000;

/// Game-defined domain `i` (a constant, as a game declares one).
const fn custom(i: u8) -> Domain {
    match Domain::custom(i) {
        Some(d) => d,
        None => panic!("a game-defined domain index"),
    }
}
const D5: Domain = custom(5);
const D6: Domain = custom(6);
const D7: Domain = custom(7);
const D8: Domain = custom(8);
const D9: Domain = custom(9);
const D10: Domain = custom(10);

macro_rules! columns {
    ($($name:ident => $domain:path),*) => {$(
        #[derive(Clone, Copy, Component, StateHash)]
        #[component(domains($domain))]
        struct $name([f32; 4]);
    )*};
}
columns!(
    C0 => Domain::TRANSFORM, C1 => Domain::PHYSICS, C2 => Domain::RENDER,
    C3 => Domain::GAMEPLAY, C4 => self::D5, C5 => self::D6, C6 => self::D7, C7 => self::D8,
    C8 => self::D9, C9 => self::D10
);

fn fail(why: impl std::fmt::Display) -> BenchError {
    BenchError::failed(SUITE, why.to_string())
}

/// The row.
pub(super) fn row(samples: usize) -> Result<Figure, BenchError> {
    let mut w = World::new();
    let es = w
        .spawn_batch((0..ENTITIES).map(|i| {
            let v = [i as f32; 4];
            (C0(v), C1(v), C2(v), C3(v), C4(v))
        }))
        .map_err(fail)?
        .to_vec();
    for (i, e) in es.into_iter().enumerate() {
        let v = [i as f32; 4];
        let r = (w.insert(e, C5(v)).and(w.insert(e, C6(v))))
            .and(w.insert(e, C7(v)).and(w.insert(e, C8(v))))
            .and(w.insert(e, C9(v)));
        r.map_err(fail)?;
    }
    let mut snap = Snapshot::default();
    w.snapshot_into(&mut snap).map_err(fail)?;
    let (mut one, mut all) = (Vec::new(), Vec::new());
    for _ in 0..samples {
        w.query::<&mut C0>()
            .map_err(fail)?
            .for_each(|c| c.0[0] += 1.0);
        let t0 = clock::now();
        w.snapshot_into(&mut snap).map_err(fail)?;
        one.push(clock::now().ns_since(t0) as f64 / 1e3);
        if snap.columns_copied() != 1 {
            return Err(fail(format!(
                "one changed column, {} copied",
                snap.columns_copied()
            )));
        }
        w.mark_changed(DomainSet::ALL);
        let t0 = clock::now();
        w.snapshot_into(&mut snap).map_err(fail)?;
        all.push(clock::now().ns_since(t0) as f64 / 1e3);
        if snap.columns_copied() != 10 {
            return Err(fail(format!(
                "every column changed, {} copied",
                snap.columns_copied()
            )));
        }
    }
    Ok(Figure::new(
        SUITE,
        "snapshot_one_column_in_ten",
        1,
        "us_per_capture",
        "us",
        median(&mut one),
    )
    .with_baseline("a capture with every column changed", median(&mut all)))
}
