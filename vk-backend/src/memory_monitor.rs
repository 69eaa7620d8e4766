//! The GPU memory monitor: each heap's usage against its budget, and how fast allocations come
//! and go (churn), by allocation name.
//!
//! Owns: [`MemoryLedger`] (live bytes, allocation and free counts, per-name counts, kept by
//! every allocation the backend makes) and [`GpuMemoryReport`], filled by
//! [`Gpu::memory_report_into`]. Must never: allocate in steady state (a report is written into
//! the caller's buffers; the ledger's name table grows only when a new allocation name first
//! appears), or call the allocator's own `generate_report` (it builds a `String` per
//! allocation).
//!
//! # Where the figures come from
//! - With `VK_EXT_memory_budget` (enabled at device creation when the device has it, unless
//!   [`GpuConfig::memory_budget`](crate::GpuConfig::memory_budget) is off): each heap's usage and
//!   budget as the driver reports them, for this process (`vkGetPhysicalDeviceMemoryProperties2`
//!   with `VkPhysicalDeviceMemoryBudgetPropertiesEXT`).
//! - Without it: each heap's budget is its size, its usage unknown; the ledger's live bytes (what
//!   this backend allocated, over every heap) stand in, held against the device-local heaps'
//!   total.
//!
//! Either way the ledger counts allocations and frees, so churn needs no extension.

use std::sync::atomic::Ordering;

use ash::vk;

use crate::context::Gpu;

pub use crate::ledger::MAX_TRACKED_NAMES;

pub use crate::ledger::MemoryLedger;

/// Where the heap figures came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MemorySource {
    /// `VK_EXT_memory_budget`: the driver's per-heap usage and budget.
    #[default]
    MemoryBudget,
    /// No extension: heap sizes as budgets, the backend's own live bytes as usage.
    Ledger,
}

impl MemorySource {
    /// `memory_budget` or `ledger`.
    pub fn name(self) -> &'static str {
        match self {
            MemorySource::MemoryBudget => "memory_budget",
            MemorySource::Ledger => "ledger",
        }
    }
}

/// One memory heap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HeapUsage {
    /// The heap's index.
    pub heap: u32,
    /// `DEVICE_LOCAL` (VRAM on a discrete GPU; all of RAM on lavapipe).
    pub device_local: bool,
    /// The heap's size, bytes.
    pub size: u64,
    /// This process's usage, bytes (`None` without `VK_EXT_memory_budget`).
    pub usage: Option<u64>,
    /// What this process may use before the driver starts evicting or failing, bytes (the
    /// heap's size without the extension).
    pub budget: u64,
}

/// The monitor's reading (see the module docs).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GpuMemoryReport {
    /// Where the heap figures came from.
    pub source: MemorySource,
    /// Every heap.
    pub heaps: Vec<HeapUsage>,
    /// Bytes live in the backend's allocations now.
    pub live_bytes: u64,
    /// Allocations live now.
    pub live_allocations: u64,
    /// Allocations plus frees since the device came up (churn = its rate).
    pub events: u64,
    /// Per allocation name, its allocations plus frees since the device came up.
    pub by_name: Vec<(&'static str, u64)>,
}

impl GpuMemoryReport {
    /// The fullest heap's `usage / budget` (with the extension), or the live bytes against the
    /// device-local heaps' total (without): 0..=1 and over when over budget.
    pub fn pressure(&self) -> f64 {
        match self.source {
            MemorySource::MemoryBudget => self
                .heaps
                .iter()
                .filter(|h| h.budget > 0)
                .map(|h| h.usage.unwrap_or(0) as f64 / h.budget as f64)
                .fold(0.0, f64::max),
            MemorySource::Ledger => {
                let local: u64 = self
                    .heaps
                    .iter()
                    .filter(|h| h.device_local)
                    .map(|h| h.budget)
                    .sum();
                if local == 0 {
                    0.0
                } else {
                    self.live_bytes as f64 / local as f64
                }
            }
        }
    }
}

impl Gpu {
    /// Reads the monitor into `out`, reusing its buffers (no allocation once they have grown
    /// to the heap and name counts). A query per call (`vkGetPhysicalDeviceMemoryProperties2`
    /// with the extension): call it every few frames, not per draw.
    pub fn memory_report_into(&self, out: &mut GpuMemoryReport) {
        let s = &self.shared;
        let pd = s.physical;
        let mut budget = vk::PhysicalDeviceMemoryBudgetPropertiesEXT::default();
        let props = if s.memory_budget {
            let mut p2 = vk::PhysicalDeviceMemoryProperties2::default().push_next(&mut budget);
            // SAFETY: the device was created with VK_EXT_memory_budget (checked at creation),
            // on a Vulkan 1.1+ instance (properties2 is core); `p2` and its chain live across
            // the call.
            unsafe {
                s.instance
                    .get_physical_device_memory_properties2(pd, &mut p2)
            };
            p2.memory_properties
        } else {
            // SAFETY: a plain property query on a valid physical device.
            unsafe { s.instance.get_physical_device_memory_properties(pd) }
        };
        out.source = if s.memory_budget {
            MemorySource::MemoryBudget
        } else {
            MemorySource::Ledger
        };
        out.heaps.clear();
        let n = (props.memory_heap_count as usize).min(vk::MAX_MEMORY_HEAPS);
        for (i, h) in props.memory_heaps[..n].iter().enumerate() {
            out.heaps.push(HeapUsage {
                heap: i as u32,
                device_local: h.flags.contains(vk::MemoryHeapFlags::DEVICE_LOCAL),
                size: h.size,
                usage: s.memory_budget.then_some(budget.heap_usage[i]),
                budget: if s.memory_budget {
                    budget.heap_budget[i]
                } else {
                    h.size
                },
            });
        }
        let l = &s.ledger;
        out.live_bytes = l.live_bytes.load(Ordering::Relaxed);
        out.live_allocations = l.live_allocations.load(Ordering::Relaxed);
        out.events = l.allocations.load(Ordering::Relaxed) + l.frees.load(Ordering::Relaxed);
        out.by_name.clear();
        out.by_name
            .extend_from_slice(&l.by_name.lock().unwrap_or_else(|p| p.into_inner()));
    }

    /// Whether `VK_EXT_memory_budget` is in use.
    pub fn has_memory_budget(&self) -> bool {
        self.shared.memory_budget
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pressure_is_the_fullest_heap_or_the_ledger_against_local_memory() {
        let heap = |device_local, usage, budget| HeapUsage {
            heap: 0,
            device_local,
            size: budget,
            usage,
            budget,
        };
        let r = GpuMemoryReport {
            source: MemorySource::MemoryBudget,
            heaps: vec![heap(true, Some(50), 100), heap(false, Some(90), 100)],
            ..Default::default()
        };
        assert_eq!(r.pressure(), 0.9);
        let r = GpuMemoryReport {
            source: MemorySource::Ledger,
            heaps: vec![heap(true, None, 1000), heap(false, None, 1000)],
            live_bytes: 250,
            ..Default::default()
        };
        assert_eq!(r.pressure(), 0.25);
    }

    #[test]
    fn the_ledger_counts_live_bytes_and_churn_by_name() {
        let l = MemoryLedger::default();
        l.allocated("a", 100);
        l.allocated("b", 50);
        l.freed("a", 100);
        l.allocated("a", 100);
        assert_eq!(l.live_bytes.load(Ordering::Relaxed), 150);
        assert_eq!(l.live_allocations.load(Ordering::Relaxed), 2);
        let t = l.by_name.lock().unwrap().clone();
        assert_eq!(t, vec![("a", 3), ("b", 1)]);
    }
}
