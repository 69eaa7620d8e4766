//! The machine's data-cache sizes, and the working-set sizes the benches place in each level.
//!
//! Owns: reading `/sys/devices/system/cpu/cpu0/cache/index*/{level,type,size}` and turning it
//! into entity counts. Must never: guess silently: when sysfs is unreadable it says so
//! ([`CacheSizes::source`]) and uses the stated fallback.

use crate::LANES;

/// Fallbacks when sysfs has no cache data: 32 KiB L1d, 1 MiB L2, 32 MiB last level (a common
/// server core of the 2020s; only used where `/sys` is missing, e.g. some containers).
const FALLBACK: [usize; 3] = [32 << 10, 1 << 20, 32 << 20];

/// Data-cache sizes of CPU 0, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheSizes {
    /// Level-1 data cache (per core).
    pub l1d: usize,
    /// Level-2 cache (per core on most x86-64 parts).
    pub l2: usize,
    /// The last-level cache (shared).
    pub llc: usize,
    /// Where the sizes came from: `"sysfs"` or `"fallback"`.
    pub source: &'static str,
}

impl CacheSizes {
    /// Reads the sizes from sysfs, or the fallback (see [`CacheSizes::source`]).
    pub fn detect() -> CacheSizes {
        read_sysfs().unwrap_or(CacheSizes {
            l1d: FALLBACK[0],
            l2: FALLBACK[1],
            llc: FALLBACK[2],
            source: "fallback",
        })
    }
}

fn read_sysfs() -> Option<CacheSizes> {
    let base = "/sys/devices/system/cpu/cpu0/cache";
    let (mut l1d, mut l2, mut llc) = (None, None, None);
    let mut max_level = 0;
    for entry in std::fs::read_dir(base).ok()?.flatten() {
        let dir = entry.path();
        let read = |f: &str| std::fs::read_to_string(dir.join(f)).ok();
        let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size"))
        else {
            continue;
        };
        let level: u32 = level.trim().parse().ok()?;
        let bytes = parse_size(size.trim())?;
        match (level, kind.trim()) {
            (1, "Data") => l1d = Some(bytes),
            (2, "Unified" | "Data") => l2 = Some(bytes),
            _ => {}
        }
        if kind.trim() != "Instruction" && level >= max_level {
            max_level = level;
            llc = Some(bytes);
        }
    }
    Some(CacheSizes {
        l1d: l1d?,
        l2: l2?,
        llc: llc?,
        source: "sysfs",
    })
}

/// `"32K"`, `"1024K"`, `"32M"`, `"512"` to bytes.
fn parse_size(s: &str) -> Option<usize> {
    let (digits, mult) = match s.as_bytes().last()? {
        b'K' => (&s[..s.len() - 1], 1 << 10),
        b'M' => (&s[..s.len() - 1], 1 << 20),
        b'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    digits.parse::<usize>().ok().map(|n| n * mult)
}

/// One bench working set: a name, the entity count, and why that count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkingSet {
    /// `l1`, `l2`, `llc` or `mem`.
    pub level: &'static str,
    /// Entities (a multiple of 8).
    pub entities: usize,
    /// Bytes of one layout's data (`entities * entity_bytes`).
    pub bytes: usize,
    /// How the count was placed, for the figure's notes.
    pub note: String,
}

/// Working sets for the integrate benches, placed by `caches` for entities of `entity_bytes`:
/// half of L1d, half of L2, half of the LLC (room for the other half's traffic), and past the
/// LLC by [`MEM_FACTOR`] (at least [`MEM_MIN_BYTES`]). `mem_cap_bytes` caps the last (the quick
/// mode's time limit); a capped size says so in its note, and says when the cap left it inside
/// the LLC.
pub fn working_sets(
    caches: &CacheSizes,
    entity_bytes: usize,
    mem_cap_bytes: Option<usize>,
) -> Vec<WorkingSet> {
    let count = |bytes: usize| ((bytes / entity_bytes) / LANES * LANES).max(LANES);
    let mk = |level, bytes: usize, note: String| {
        let entities = count(bytes);
        WorkingSet {
            level,
            entities,
            bytes: entities * entity_bytes,
            note,
        }
    };
    let want_mem = (caches.llc * MEM_FACTOR).max(MEM_MIN_BYTES);
    let mem = mem_cap_bytes.map_or(want_mem, |cap| want_mem.min(cap));
    let mem_note = if mem < want_mem {
        format!(
            "capped at {} MiB by --quick (wanted {} MiB = {}x LLC){}",
            mem >> 20,
            want_mem >> 20,
            MEM_FACTOR,
            if mem <= caches.llc {
                "; NOT past the LLC on this machine"
            } else {
                ""
            }
        )
    } else {
        format!("{}x the {} MiB LLC", MEM_FACTOR, caches.llc >> 20)
    };
    vec![
        mk(
            "l1",
            caches.l1d / 2,
            format!("half the {} KiB L1d", caches.l1d >> 10),
        ),
        mk(
            "l2",
            caches.l2 / 2,
            format!("half the {} KiB L2", caches.l2 >> 10),
        ),
        mk(
            "llc",
            caches.llc / 2,
            format!("half the {} MiB LLC", caches.llc >> 20),
        ),
        mk("mem", mem, mem_note),
    ]
}

/// How far past the LLC the `mem` working set goes (4x: a quarter at most could still hit).
pub const MEM_FACTOR: usize = 4;

/// The `mem` working set is at least this (64 MiB), whatever the LLC.
pub const MEM_MIN_BYTES: usize = 64 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("32K"), Some(32768));
        assert_eq!(parse_size("260M"), Some(260 << 20));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("x"), None);
    }

    #[test]
    fn detect_gives_ordered_sizes() {
        let c = CacheSizes::detect();
        assert!(c.l1d > 0 && c.l1d <= c.l2 && c.l2 <= c.llc, "{c:?}");
    }

    #[test]
    fn working_sets_fit_their_level_and_mem_passes_the_llc() {
        let c = CacheSizes {
            l1d: 32 << 10,
            l2: 512 << 10,
            llc: 260 << 20,
            source: "test",
        };
        let w = working_sets(&c, 24, None);
        assert_eq!(w.len(), 4);
        assert!(w[0].bytes <= c.l1d / 2 && w[1].bytes <= c.l2 / 2 && w[2].bytes <= c.llc / 2);
        assert!(w.iter().all(|s| s.entities % 8 == 0));
        assert!(w[3].bytes > c.llc, "{:?}", w[3]);
        let capped = working_sets(&c, 24, Some(128 << 20));
        assert!(
            capped[3].note.contains("NOT past the LLC"),
            "{}",
            capped[3].note
        );
    }
}
