//! The queue's unit tests: the spin budget, the learned frame period, and whom a push wakes.

use super::idle::*;
use super::*;
use crate::clock;

#[test]
fn a_spin_budget_learns_a_gap_it_can_cover_and_drops_on_a_long_one() {
    let mut b = SpinBudget::new(50_000);
    assert_eq!(b.cur, MIN_SPIN_NS);
    // Parked, and the work came 30 µs after the spin began: next time spin 37.5 µs.
    b.parked(30_000);
    assert_eq!(b.cur, 37_500);
    // A gap near the cap is clamped to it.
    b.parked(45_000);
    assert_eq!(b.cur, 50_000);
    // A gap the cap cannot cover quarters the budget, down to the floor.
    b.parked(1_000_000);
    assert_eq!(b.cur, 12_500);
    b.parked(1_000_000);
    b.parked(1_000_000);
    assert_eq!(b.cur, MIN_SPIN_NS);
    // A tiny gap never goes below the floor; success doubles up to the cap.
    b.parked(10);
    assert_eq!(b.cur, MIN_SPIN_NS);
    for _ in 0..10 {
        b.success();
    }
    assert_eq!(b.cur, 50_000);
}

#[test]
fn the_frame_period_is_learned_from_frame_starts_and_a_pause_is_not() {
    let mut f = Arrivals::default();
    let ms = 1_000_000u64;
    // Stamps are clock ticks: make them from nanoseconds.
    clock::init();
    let stamp = |ns: u64| clock::Stamp((ns as f64 / clock::ns_per_tick()) as u64);
    assert!(
        f.next().is_none(),
        "nothing learned before two frame starts"
    );
    let mut t = 1_000 * ms;
    f.arrived(stamp(t));
    assert!(f.next().is_none());
    for _ in 0..20 {
        t += 16 * ms + 200_000;
        f.arrived(stamp(t));
    }
    let (period, started, jitter) = f.next().unwrap();
    assert!(period.abs_diff(16_200_000) < 100_000, "period {period}");
    assert_eq!(started, stamp(t));
    assert!(jitter < TICK_LEAD_MAX_NS, "jitter {jitter}");
    // A pause of a second is not averaged in.
    t += 1_000 * ms;
    f.arrived(stamp(t));
    assert!(f.next().unwrap().0.abs_diff(16_200_000) < 100_000);
    // One skipped frame is rejected; four gaps of a new period in a row adopt it.
    t += 33 * ms;
    f.arrived(stamp(t));
    assert!(f.next().unwrap().0.abs_diff(16_200_000) < 100_000);
    for _ in 0..4 {
        t += 33 * ms;
        f.arrived(stamp(t));
    }
    assert!(f.next().unwrap().0.abs_diff(33 * ms) < 1_000_000);
}

#[test]
fn a_zero_budget_never_spins() {
    let mut b = SpinBudget::new(0);
    b.parked(10);
    b.success();
    assert_eq!(b.cur, 0);
}

#[test]
fn a_push_wakes_the_most_recently_parked_workers_once_each() {
    // No real sleepers here: set the state as three parked workers would (parked in the
    // order 0, 1, 2), and check whom each push notifies.
    let q = LaneQueue::new(0, LaneId(0), 3, false);
    {
        let mut s = lock(&q.state);
        for w in 0..3u16 {
            s.parked.push(w);
            s.waiting[w as usize] = true;
        }
        s.waiting_workers = 3;
    }
    let job = JobRef {
        data: std::ptr::null(),
        arg: 0,
        exec: |_, _, _| {},
    };
    // One job: the most recently parked worker (2) is notified, the others sleep on.
    assert!(q.push(job));
    assert_eq!(lock(&q.state).parked, vec![0, 1]);
    // Two more: workers 1 and 0; a fourth push finds nobody left to notify.
    assert!(q.push_batch(&[job, job]));
    assert!(lock(&q.state).parked.is_empty());
    assert!(q.push(job), "sleepers still counted until they wake");
    // A helper: notified once, its credit kept until it wakes.
    {
        let mut s = lock(&q.state);
        s.helpers = 1;
    }
    assert!(q.push(job));
    assert_eq!(lock(&q.state).helpers_notified, 1);
    assert!(q.push(job));
    assert_eq!(lock(&q.state).helpers_notified, 1, "no second notification");
    lock(&q.state).jobs.clear();
}
