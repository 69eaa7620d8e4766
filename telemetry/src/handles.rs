//! Typed metric handles: [`Counter`] and [`Gauge`] ([`super::Histogram`] has its own file).
//!
//! Owns: the hot-path update of one metric through a cloned handle. Must never: look a name up,
//! allocate, lock or log on an update.
//!
//! A handle is an `Arc` to the metric's cells; cloning it is how a lane or system keeps its own
//! copy. Handles stay valid for as long as they live, whatever happens to the registry.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::shard::{self, PaddedCell};
use super::sync::AtomicU64;

/// A monotonic count. `add` is sharded per thread (see `super::shard`): lanes adding at once
/// each write their own cache line.
#[derive(Debug, Clone)]
pub struct Counter {
    cells: Arc<[PaddedCell]>,
}

impl Counter {
    /// The body of [`HandleHooks::new_detached`](crate::hooks::HandleHooks::new_detached), which documents it.
    pub(crate) fn new_detached() -> Self {
        Counter {
            cells: shard::new_cells().into(),
        }
    }

    /// Adds `v` (wrapping at `u64::MAX`, which at one billion adds per second takes 584 years).
    #[inline]
    pub fn add(&self, v: u64) {
        shard::add(&self.cells, v);
    }

    /// Adds one.
    #[inline]
    pub fn inc(&self) {
        self.add(1);
    }

    /// The total over all threads (exact once the adding threads have synchronised with the
    /// caller, e.g. been joined; a lower bound of the final value while they run).
    pub fn get(&self) -> u64 {
        shard::sum(&self.cells)
    }

    /// The body of [`HandleHooks::same_metric`](crate::hooks::HandleHooks::same_metric), which documents it.
    pub(crate) fn same_metric(&self, other: &Counter) -> bool {
        Arc::ptr_eq(&self.cells, &other.cells)
    }
}

/// A value that goes up and down; the last `set` wins. Not sharded: a gauge has one meaning at a
/// time, so it lives in one cell (an `f64` stored as its bits).
#[derive(Debug, Clone)]
pub struct Gauge {
    bits: Arc<PaddedCell>,
}

impl Gauge {
    /// The body of [`HandleHooks::new_detached`](crate::hooks::HandleHooks::new_detached), which documents it.
    pub(crate) fn new_detached() -> Self {
        Gauge {
            bits: Arc::new(PaddedCell(AtomicU64::new(0f64.to_bits()))),
        }
    }

    /// Sets the value.
    #[inline]
    pub fn set(&self, v: f64) {
        self.bits.0.store(v.to_bits(), Ordering::Relaxed);
    }

    /// Adds `delta` (a compare-and-swap loop: concurrent adds all land).
    pub fn add(&self, delta: f64) {
        let cell = &self.bits.0;
        let mut cur = cell.load(Ordering::Relaxed);
        loop {
            let next = (f64::from_bits(cur) + delta).to_bits();
            match cell.compare_exchange_weak(cur, next, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return,
                Err(seen) => cur = seen,
            }
        }
    }

    /// The current value.
    pub fn get(&self) -> f64 {
        f64::from_bits(self.bits.0.load(Ordering::Relaxed))
    }

    /// The body of [`HandleHooks::same_metric`](crate::hooks::HandleHooks::same_metric), which documents it.
    pub(crate) fn same_metric(&self, other: &Gauge) -> bool {
        Arc::ptr_eq(&self.bits, &other.bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_sums_across_threads_exactly() {
        let c = Counter::new_detached();
        std::thread::scope(|s| {
            for _ in 0..4 {
                let c = c.clone();
                s.spawn(move || {
                    for _ in 0..25_000 {
                        c.inc();
                    }
                });
            }
        });
        c.add(5);
        assert_eq!(c.get(), 100_005);
    }

    #[test]
    fn gauge_set_and_concurrent_add() {
        let g = Gauge::new_detached();
        g.set(1.5);
        assert_eq!(g.get(), 1.5);
        std::thread::scope(|s| {
            for _ in 0..4 {
                let g = g.clone();
                s.spawn(move || (0..1000).for_each(|_| g.add(1.0)));
            }
        });
        assert_eq!(g.get(), 4001.5);
    }
}
