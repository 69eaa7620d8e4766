//! Choosing the physical device and its queue family.
//!
//! Owns: the ranking rule (discrete > integrated > virtual > CPU > other, overridable by name or
//! index) and the queue-family rule (graphics + compute, preferring one that writes timestamps).
//! Must never: call Vulkan (the rules are pure functions over [`Candidate`]s, unit-tested with
//! synthetic tables; `context` fills the tables from the driver).

use crate::error::GpuError;

/// The kind of a physical device, in the order the ranking prefers them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DeviceKind {
    /// A discrete GPU.
    Discrete,
    /// A GPU sharing the CPU's memory.
    Integrated,
    /// A virtualised GPU.
    Virtual,
    /// A CPU implementation (lavapipe, SwiftShader).
    Cpu,
    /// Anything else the driver reports.
    Other,
}

/// Which device to use.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum DevicePick {
    /// The best by [`DeviceKind`], ties broken by enumeration order.
    #[default]
    Best,
    /// The first device whose name contains this text (case-insensitive).
    Name(String),
    /// The device at this enumeration index.
    Index(usize),
}

/// One queue family as the selection sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FamilyCandidate {
    /// Supports graphics and compute.
    pub graphics_compute: bool,
    /// `timestampValidBits` (0: writes no timestamps).
    pub timestamp_valid_bits: u32,
}

/// One physical device as the selection sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// `deviceName`.
    pub name: String,
    /// `deviceType`.
    pub kind: DeviceKind,
    /// Its queue families, in index order.
    pub families: Vec<FamilyCandidate>,
}

/// The queue family to use on a device: graphics + compute, the first one that writes
/// timestamps if any does (else the first graphics + compute one: frames render, the profiler
/// reports itself unavailable). `None`: the device cannot run our passes.
pub fn choose_family(families: &[FamilyCandidate]) -> Option<u32> {
    let usable = || {
        families
            .iter()
            .enumerate()
            .filter(|(_, f)| f.graphics_compute)
    };
    usable()
        .find(|(_, f)| f.timestamp_valid_bits > 0)
        .or_else(|| usable().next())
        .map(|(i, _)| i as u32)
}

/// Picks the device index per `pick`. Devices without a graphics + compute family never qualify.
pub fn choose_device(cands: &[Candidate], pick: &DevicePick) -> Result<usize, GpuError> {
    let present = || {
        cands
            .iter()
            .enumerate()
            .map(|(i, c)| format!("#{i} {} ({:?})", c.name, c.kind))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let usable = |i: usize| choose_family(&cands[i].families).is_some();
    match pick {
        DevicePick::Best => (0..cands.len())
            .filter(|&i| usable(i))
            .min_by_key(|&i| (cands[i].kind, i))
            .ok_or_else(|| GpuError::NoDevice {
                why: if cands.is_empty() {
                    "the loader enumerated no physical device".into()
                } else {
                    format!("no device has a graphics+compute queue: {}", present())
                },
            }),
        DevicePick::Index(i) => {
            if *i < cands.len() && usable(*i) {
                Ok(*i)
            } else {
                Err(GpuError::DeviceNotFound {
                    wanted: format!("index {i}"),
                    present: present(),
                })
            }
        }
        DevicePick::Name(name) => {
            let needle = name.to_lowercase();
            (0..cands.len())
                .find(|&i| usable(i) && cands[i].name.to_lowercase().contains(&needle))
                .ok_or_else(|| GpuError::DeviceNotFound {
                    wanted: name.clone(),
                    present: present(),
                })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GC_TS: FamilyCandidate = FamilyCandidate {
        graphics_compute: true,
        timestamp_valid_bits: 64,
    };
    const GC_NO_TS: FamilyCandidate = FamilyCandidate {
        graphics_compute: true,
        timestamp_valid_bits: 0,
    };
    const TRANSFER_ONLY: FamilyCandidate = FamilyCandidate {
        graphics_compute: false,
        timestamp_valid_bits: 36,
    };

    fn dev(name: &str, kind: DeviceKind, families: &[FamilyCandidate]) -> Candidate {
        Candidate {
            name: name.into(),
            kind,
            families: families.to_vec(),
        }
    }

    #[test]
    fn family_prefers_timestamps_then_falls_back() {
        assert_eq!(choose_family(&[TRANSFER_ONLY, GC_NO_TS, GC_TS]), Some(2));
        assert_eq!(choose_family(&[TRANSFER_ONLY, GC_NO_TS]), Some(1));
        assert_eq!(choose_family(&[TRANSFER_ONLY]), None);
    }

    #[test]
    fn best_prefers_discrete_and_skips_unusable() {
        let cands = [
            dev("llvmpipe", DeviceKind::Cpu, &[GC_TS]),
            dev("iGPU", DeviceKind::Integrated, &[GC_TS]),
            dev("broken dGPU", DeviceKind::Discrete, &[TRANSFER_ONLY]),
            dev("dGPU", DeviceKind::Discrete, &[TRANSFER_ONLY, GC_TS]),
        ];
        assert_eq!(choose_device(&cands, &DevicePick::Best).unwrap(), 3);
        assert_eq!(choose_device(&cands[..3], &DevicePick::Best).unwrap(), 1);
    }

    #[test]
    fn overrides_by_name_and_index() {
        let cands = [
            dev("llvmpipe (LLVM 15)", DeviceKind::Cpu, &[GC_TS]),
            dev("NVIDIA H200", DeviceKind::Discrete, &[GC_TS]),
        ];
        let by_name = DevicePick::Name("LLVMPIPE".into());
        assert_eq!(choose_device(&cands, &by_name).unwrap(), 0);
        assert_eq!(choose_device(&cands, &DevicePick::Index(1)).unwrap(), 1);
        let e = choose_device(&cands, &DevicePick::Index(7)).unwrap_err();
        assert!(e.to_string().contains("NVIDIA H200"), "{e}");
        let e = choose_device(&cands, &DevicePick::Name("radeon".into())).unwrap_err();
        assert!(matches!(e, GpuError::DeviceNotFound { .. }), "{e}");
    }

    #[test]
    fn no_device_says_why() {
        let e = choose_device(&[], &DevicePick::Best).unwrap_err();
        assert!(e.is_unavailable());
        assert!(
            e.to_string().contains("enumerated no physical device"),
            "{e}"
        );
    }
}
