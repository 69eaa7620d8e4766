//! Scoped jobs and the parallel helpers through the public API.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use lanegraph_jobs::{ParallelError, SpawnError};

#[test]
fn scoped_jobs_borrow_the_stack_and_respect_dependencies() {
    let lanes = common::lanes(2, 1, 1);
    let physics = lanes.lane("physics").unwrap();
    let render = lanes.lane("render").unwrap();
    for _ in 0..100 {
        let mut data = vec![0u64; 64];
        let log = Mutex::new(Vec::new());
        lanes
            .scope(|s| {
                let (left, right) = data.split_at_mut(32);
                let a = s
                    .spawn(physics, || {
                        left.iter_mut().for_each(|x| *x += 1);
                        log.lock().unwrap().push("a");
                    })
                    .unwrap();
                let b = s
                    .spawn(physics, || {
                        right.iter_mut().for_each(|x| *x += 2);
                        log.lock().unwrap().push("b");
                    })
                    .unwrap();
                s.spawn_after(render, &[a, b], || log.lock().unwrap().push("c"))
                    .unwrap();
            })
            .unwrap();
        assert_eq!(data.iter().sum::<u64>(), 32 + 64);
        let log = log.into_inner().unwrap();
        assert_eq!(log.len(), 3);
        assert_eq!(log[2], "c", "c must run after a and b: {log:?}");
    }
}

#[test]
fn a_panicking_scoped_job_skips_its_dependants() {
    let lanes = common::lanes(1, 1, 1);
    let physics = lanes.lane("physics").unwrap();
    let ran = AtomicUsize::new(0);
    let err = lanes
        .scope(|s| {
            let bad = s
                .spawn_named_after("explode", physics, &[], || panic!("kaput"))
                .unwrap();
            s.spawn_after(physics, &[bad], || {
                ran.fetch_add(100, Ordering::SeqCst);
            })
            .unwrap();
            s.spawn(physics, || {
                ran.fetch_add(1, Ordering::SeqCst);
            })
            .unwrap();
        })
        .unwrap_err();
    assert_eq!(err.job, "explode");
    assert_eq!(err.message, "kaput");
    assert_eq!(err.skipped, 1);
    assert_eq!(ran.load(Ordering::SeqCst), 1);
    // Still works.
    let n = AtomicUsize::new(0);
    lanes
        .scope(|s| {
            s.spawn(physics, || {
                n.fetch_add(1, Ordering::SeqCst);
            })
            .unwrap();
        })
        .unwrap();
    assert_eq!(n.load(Ordering::SeqCst), 1);
}

#[test]
fn foreign_handles_and_unknown_lanes_are_errors() {
    let lanes = common::lanes(1, 1, 1);
    let physics = lanes.lane("physics").unwrap();
    let first = lanes.scope(|s| s.spawn(physics, || {}).unwrap()).unwrap();
    lanes
        .scope(|s| {
            let err = s.spawn_after(physics, &[first], || {}).unwrap_err();
            assert!(matches!(err, SpawnError::ForeignHandle(_)));
        })
        .unwrap();
    lanes
        .scope(|s| {
            let bad_lane = lanegraph_jobs::LanePlan::auto_for(&[0; 1]).lanes().len() + 7;
            let foreign = other_lane(bad_lane);
            assert!(matches!(
                s.spawn(foreign, || {}),
                Err(SpawnError::UnknownLane(_))
            ));
        })
        .unwrap();
}

/// A lane id past the end of a 3-lane plan, taken from a bigger plan.
fn other_lane(index: usize) -> lanegraph_jobs::LaneId {
    let mut plan = lanegraph_jobs::LanePlan::empty(&[0]);
    for i in 0..=index {
        plan = plan
            .with_lane(
                &format!("l{i}"),
                lanegraph_jobs::LaneKind::Background,
                vec![None],
            )
            .unwrap();
    }
    plan.lane_id(&format!("l{index}")).unwrap()
}

#[test]
fn large_closures_are_boxed_and_still_run() {
    let lanes = common::lanes(1, 1, 1);
    let physics = lanes.lane("physics").unwrap();
    let big = [7u8; 256];
    let sum = AtomicUsize::new(0);
    let sum_ref = &sum;
    lanes
        .scope(|s| {
            s.spawn(physics, move || {
                sum_ref.fetch_add(big.iter().map(|&b| b as usize).sum(), Ordering::SeqCst);
            })
            .unwrap();
        })
        .unwrap();
    assert_eq!(sum.load(Ordering::SeqCst), 7 * 256);
}

#[test]
fn parallel_for_visits_every_index_once() {
    let lanes = common::lanes(3, 1, 1);
    let physics = lanes.lane("physics").unwrap();
    let hits: Vec<AtomicUsize> = (0..10_007).map(|_| AtomicUsize::new(0)).collect();
    lanes
        .parallel_for(physics, 0..hits.len(), 64, |_, r| {
            for i in r {
                hits[i].fetch_add(1, Ordering::Relaxed);
            }
        })
        .unwrap();
    assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
    assert!(matches!(
        lanes.parallel_for(physics, 0..10, 0, |_, _| {}),
        Err(ParallelError::ZeroSize { .. })
    ));
}

#[test]
fn parallel_chunks_mut_hands_out_disjoint_chunks() {
    let lanes = common::lanes(2, 1, 1);
    let physics = lanes.lane("physics").unwrap();
    let mut v: Vec<u32> = vec![0; 1001];
    lanes
        .parallel_chunks_mut(physics, &mut v, 100, |c, chunk| {
            for x in chunk.iter_mut() {
                *x += c as u32 + 1;
            }
        })
        .unwrap();
    for (i, x) in v.iter().enumerate() {
        assert_eq!(*x, (i / 100) as u32 + 1);
    }
}

#[test]
fn a_panicking_parallel_body_is_reported() {
    let lanes = common::lanes(2, 1, 1);
    let physics = lanes.lane("physics").unwrap();
    let err = lanes
        .parallel_for(physics, 0..100, 1, |c, _| {
            if c == 42 {
                panic!("chunk 42 failed")
            }
        })
        .unwrap_err();
    match err {
        ParallelError::Panicked(p) => assert_eq!(p.message, "chunk 42 failed"),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn parallel_for_near_the_end_of_the_index_space_does_not_overflow() {
    let lanes = common::lanes(2, 1, 1);
    let physics = lanes.lane("physics").unwrap();
    let seen = Mutex::new(Vec::new());
    lanes
        .parallel_for(physics, usize::MAX - 10..usize::MAX, usize::MAX, |c, r| {
            seen.lock().unwrap().push((c, r));
        })
        .unwrap();
    assert_eq!(
        seen.into_inner().unwrap(),
        vec![(0, usize::MAX - 10..usize::MAX)]
    );
}
