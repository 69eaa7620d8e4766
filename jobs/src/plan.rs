//! Lane plans: which lanes exist, how many workers each has, and which core each worker is
//! pinned to.
//!
//! Owns: deriving a sensible plan from the machine's cores, overriding it in code or from a
//! `name=count,...` spec, validating it, and printing it. Must never: spawn or pin anything
//! (that is the lane runtime's job) or query the affinity mask after start-up (the mask
//! `core_affinity` reports is the *calling thread's*: once a thread is pinned it sees one core).
//!
//! # The automatic plan
//! The owner thread (whoever calls `frame()`) is expected on the first core. Then, by core count:
//!
//! | cores | physics (frame-critical) | render (frame-critical) | asset (background) |
//! |------:|--------------------------|-------------------------|--------------------|
//! | 1     | 1 on c0 (shared)         | 1 on c0 (shared)        | 1 on c0 (shared)   |
//! | 2     | 1 on c1 (alone)          | 1 on c0 (shared)        | 1 on c0 (shared)   |
//! | 3     | 1 on c1                  | 1 on c2                 | 1 on c2 (shared)   |
//! | 4..7  | n-2 on c1..             | 1 on the last core      | 1 on the last core (shared) |
//! | >= 8  | the rest                 | n/8                     | n/8                |
//!
//! Physics is fork-join on the owner's critical path and gets most cores; render runs one
//! frame behind and needs one core per ~8 to keep up with recording; asset is throughput work
//! that runs at lower OS priority, so sharing its cores costs the frame lanes little. On small
//! machines lanes share cores and [`LanePlan::shared_cores`] says which.

use std::fmt;

/// Index of a lane in a [`LanePlan`] (and in the lanes built from it). Valid for the
/// plan it came from and every `Lanes` built from that plan; meaningless for any other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LaneId(pub(crate) u16);

impl LaneId {
    /// The lane's index in its plan.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A logical core as `core_affinity` numbers it.
pub type CoreIndex = usize;

/// How a lane's work relates to the frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LaneKind {
    /// The owner waits on it within the frame (physics fork-join, render recording). Its
    /// workers spin briefly before parking and run at normal priority.
    FrameCritical,
    /// Throughput work nobody waits on inside a frame (asset decoding). Its workers never spin,
    /// and run at lower OS priority where permitted.
    Background,
}

/// One lane of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaneSpec {
    /// The lane's name (`physics`, `render`, `asset`, or the game's own).
    pub name: String,
    /// Frame-critical or background.
    pub kind: LaneKind,
    /// One entry per worker: the core it is pinned to (`None`: unpinned).
    pub worker_cores: Vec<Option<CoreIndex>>,
}

/// The built-in lane names.
pub mod names {
    /// Frame-critical fork-join for the fixed step.
    pub const PHYSICS: &str = "physics";
    /// Frame-critical, pipelined one frame behind the owner.
    pub const RENDER: &str = "render";
    /// Background throughput (asset decoding and loading).
    pub const ASSET: &str = "asset";
}

/// Which lanes exist, their workers and their cores. Printable (`Display`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LanePlan {
    lanes: Vec<LaneSpec>,
    machine_cores: Vec<CoreIndex>,
    owner_core: Option<CoreIndex>,
    owner_lane: Option<LaneId>,
}

/// A plan could not be made or validated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// A worker was asked to pin to a core this machine does not have.
    #[error("lane `{lane}` asks for core {core}, but this machine has cores {available:?}; fix: pick cores from that list or use LanePlan::auto()")]
    NoSuchCore {
        /// The lane.
        lane: String,
        /// The core asked for.
        core: CoreIndex,
        /// The cores the machine reported at start.
        available: Vec<CoreIndex>,
    },
    /// Two lanes share a name.
    #[error("lane `{0}` is defined twice; fix: give every lane its own name")]
    DuplicateLane(String),
    /// A lane has no workers.
    #[error("lane `{0}` has no workers; fix: give it at least one worker")]
    EmptyLane(String),
    /// A lane name is empty, longer than [`MAX_LANE_NAME`], or not `[a-z0-9_]+`.
    #[error("lane name `{0}` is invalid; fix: use 1 to 32 lowercase letters, digits and `_`")]
    BadName(String),
    /// A `--lanes` spec could not be parsed.
    #[error("lane spec `{spec}` is invalid at `{part}`: {why}; fix: write it as name=workers[,name=workers...], e.g. physics=2,render=1,asset=1")]
    BadSpec {
        /// The whole spec.
        spec: String,
        /// The part that failed.
        part: String,
        /// Why.
        why: String,
    },
    /// More lanes than a [`LaneId`] can index.
    #[error("{0} lanes exceed the maximum of {max}; fix: merge lanes", max = MAX_LANES)]
    TooManyLanes(usize),
    /// A lane asks for more workers than the plan allows on this machine.
    #[error("lane `{lane}` asks for {workers} workers, more than the {max} this machine allows (4 per core, at most {cap}); fix: ask for at most {max}", cap = MAX_WORKERS_PER_LANE)]
    TooManyWorkers {
        /// The lane.
        lane: String,
        /// Workers asked for.
        workers: u64,
        /// The most allowed here.
        max: usize,
    },
}

/// The most workers one lane may have, on any machine (more threads than this on one lane only
/// add contention); on a given machine the bound is 4 per core, at most this.
pub const MAX_WORKERS_PER_LANE: usize = 256;

/// The longest lane name (it becomes part of thread and metric names).
pub const MAX_LANE_NAME: usize = 32;

/// The most workers a lane may have on a machine with `cores` cores.
pub fn max_workers_per_lane(cores: usize) -> usize {
    (4 * cores.max(1)).min(MAX_WORKERS_PER_LANE)
}

/// The most lanes a plan may hold (lanes are coarse: one per kind of work, not per job).
pub const MAX_LANES: usize = 64;

/// This process's core list, read once (at the first call) and cached. The first call must come
/// before any thread of the process is pinned: `core_affinity` reports the *calling thread's*
/// mask, so a pinned thread would see one core. [`LanePlan::auto`] and the lane runtime call it
/// before they pin anything; a binary that pins its own threads should call it first thing.
pub fn machine_cores() -> Vec<CoreIndex> {
    static CORES: std::sync::OnceLock<Vec<CoreIndex>> = std::sync::OnceLock::new();
    CORES
        .get_or_init(|| match core_affinity::get_core_ids() {
            Some(ids) if !ids.is_empty() => ids.into_iter().map(|c| c.id).collect(),
            _ => {
                let n = std::thread::available_parallelism()
                    .map(|n| n.get())
                    .unwrap_or(1);
                (0..n).collect()
            }
        })
        .clone()
}

impl LanePlan {
    /// The automatic plan for this machine (see the module docs for the table).
    pub fn auto() -> LanePlan {
        LanePlan::auto_for(&machine_cores())
    }

    /// The automatic plan for a given core list (unit-testable with simulated machines).
    pub fn auto_for(cores: &[CoreIndex]) -> LanePlan {
        let cores: Vec<CoreIndex> = if cores.is_empty() {
            vec![0]
        } else {
            cores.to_vec()
        };
        let n = cores.len();
        let c = |i: usize| Some(cores[i]);
        let (physics, render, asset): (Vec<_>, Vec<_>, Vec<_>) = match n {
            1 => (vec![c(0)], vec![c(0)], vec![c(0)]),
            // Physics alone on the second core, so its worker may spin between the fork-joins
            // of a step instead of being woken for each; render (one job per frame) and asset
            // (background, lower OS priority) share the owner's core.
            2 => (vec![c(1)], vec![c(0)], vec![c(0)]),
            3 => (vec![c(1)], vec![c(2)], vec![c(2)]),
            4..=7 => ((1..n - 1).map(c).collect(), vec![c(n - 1)], vec![c(n - 1)]),
            _ => {
                let side = n / 8;
                let physics_end = n - 2 * side;
                (
                    (1..physics_end).map(c).collect(),
                    (physics_end..physics_end + side).map(c).collect(),
                    (physics_end + side..n).map(c).collect(),
                )
            }
        };
        LanePlan {
            lanes: vec![
                LaneSpec {
                    name: names::PHYSICS.into(),
                    kind: LaneKind::FrameCritical,
                    worker_cores: physics,
                },
                LaneSpec {
                    name: names::RENDER.into(),
                    kind: LaneKind::FrameCritical,
                    worker_cores: render,
                },
                LaneSpec {
                    name: names::ASSET.into(),
                    kind: LaneKind::Background,
                    worker_cores: asset,
                },
            ],
            machine_cores: cores.clone(),
            owner_core: Some(cores[0]),
            owner_lane: None,
        }
    }

    /// An empty plan for `cores` (add lanes with [`LanePlan::with_lane`]).
    pub fn empty(cores: &[CoreIndex]) -> LanePlan {
        LanePlan {
            lanes: Vec::new(),
            machine_cores: cores.to_vec(),
            owner_core: cores.first().copied(),
            owner_lane: None,
        }
    }

    /// A plan from a `name=workers,...` spec (the CLI's `--lanes`): workers are laid on the
    /// machine's cores round-robin, starting after the owner's core and reaching the owner's core
    /// last, wrapping (and so sharing) when the spec asks for more workers than there are cores. Names not built in become frame-critical lanes
    /// unless written `name=N:bg`.
    pub fn from_spec(spec: &str, cores: &[CoreIndex]) -> Result<LanePlan, PlanError> {
        let bad = |part: &str, why: &str| PlanError::BadSpec {
            spec: spec.into(),
            part: part.into(),
            why: why.into(),
        };
        let mut plan = LanePlan::empty(cores);
        let cores: Vec<CoreIndex> = if cores.is_empty() {
            vec![0]
        } else {
            cores.to_vec()
        };
        // Workers start after the owner's core when there is more than one.
        let mut next = usize::from(cores.len() > 1);
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, rest) = part
                .split_once('=')
                .ok_or_else(|| bad(part, "expected name=workers"))?;
            let (count, kind) = match rest.split_once(':') {
                Some((count, "bg")) => (count, LaneKind::Background),
                Some((count, "fc")) => (count, LaneKind::FrameCritical),
                Some((_, other)) => {
                    return Err(bad(
                        part,
                        &format!("unknown lane kind `{other}` (bg or fc)"),
                    ))
                }
                None if name == names::ASSET => (rest, LaneKind::Background),
                None => (rest, LaneKind::FrameCritical),
            };
            let count: u64 = count
                .parse()
                .map_err(|_| bad(part, "worker count is not a number"))?;
            if count == 0 {
                return Err(bad(part, "a lane needs at least one worker"));
            }
            // Checked before anything is sized from it.
            let max = max_workers_per_lane(cores.len());
            if count > max as u64 {
                return Err(PlanError::TooManyWorkers {
                    lane: name.into(),
                    workers: count,
                    max,
                });
            }
            let count = count as usize;
            let mut worker_cores = Vec::with_capacity(count);
            for _ in 0..count {
                // Round-robin over every core, the owner's last: sharing the owner's core beats
                // stacking two workers of one lane on the same core (physics=2 on 2 cores).
                worker_cores.push(Some(cores[next % cores.len()]));
                next += 1;
            }
            plan = plan.with_lane(name, kind, worker_cores)?;
        }
        if plan.lanes.is_empty() {
            return Err(bad(spec, "no lanes given"));
        }
        Ok(plan)
    }

    /// Adds a lane (the game's own, or a replacement for a built-in one removed with
    /// [`LanePlan::without_lane`]). Validated here: name, duplicates, cores, count.
    pub fn with_lane(
        mut self,
        name: &str,
        kind: LaneKind,
        worker_cores: Vec<Option<CoreIndex>>,
    ) -> Result<LanePlan, PlanError> {
        if name.is_empty()
            || name.len() > MAX_LANE_NAME
            || !name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        {
            return Err(PlanError::BadName(name.into()));
        }
        if self.lanes.iter().any(|l| l.name == name) {
            return Err(PlanError::DuplicateLane(name.into()));
        }
        if worker_cores.is_empty() {
            return Err(PlanError::EmptyLane(name.into()));
        }
        let max = max_workers_per_lane(self.machine_cores.len());
        if worker_cores.len() > max {
            return Err(PlanError::TooManyWorkers {
                lane: name.into(),
                workers: worker_cores.len() as u64,
                max,
            });
        }
        if self.lanes.len() >= MAX_LANES {
            return Err(PlanError::TooManyLanes(self.lanes.len() + 1));
        }
        for core in worker_cores.iter().flatten() {
            if !self.machine_cores.contains(core) {
                return Err(PlanError::NoSuchCore {
                    lane: name.into(),
                    core: *core,
                    available: self.machine_cores.clone(),
                });
            }
        }
        self.lanes.push(LaneSpec {
            name: name.into(),
            kind,
            worker_cores,
        });
        Ok(self)
    }

    /// Removes a lane by name (no-op when absent).
    pub fn without_lane(mut self, name: &str) -> LanePlan {
        self.lanes.retain(|l| l.name != name);
        if let Some(owner) = self.owner_lane {
            if owner.index() >= self.lanes.len() {
                self.owner_lane = None;
            }
        }
        self
    }

    /// Gives the owner thread a lane of its own: the owner thread runs that lane's jobs
    /// while it waits for any graph, scope or parallel-for it started. The lane must exist.
    pub fn with_owner_lane(mut self, name: &str) -> Option<LanePlan> {
        let id = self.lane_id(name)?;
        self.owner_lane = Some(id);
        Some(self)
    }

    /// The lane the owner thread serves, if any.
    pub fn owner_lane(&self) -> Option<LaneId> {
        self.owner_lane
    }

    /// The lanes, indexed by [`LaneId`].
    pub fn lanes(&self) -> &[LaneSpec] {
        &self.lanes
    }

    /// The lane called `name`.
    pub fn lane_id(&self, name: &str) -> Option<LaneId> {
        self.lanes
            .iter()
            .position(|l| l.name == name)
            .map(|i| LaneId(i as u16))
    }

    /// The spec of a lane.
    pub fn lane(&self, id: LaneId) -> Option<&LaneSpec> {
        self.lanes.get(id.index())
    }

    /// The cores the machine reported when the plan was made.
    pub fn machine_cores(&self) -> &[CoreIndex] {
        &self.machine_cores
    }

    /// The core the owner thread is expected on.
    pub fn owner_core(&self) -> Option<CoreIndex> {
        self.owner_core
    }

    /// Total workers over all lanes.
    pub fn total_workers(&self) -> usize {
        self.lanes.iter().map(|l| l.worker_cores.len()).sum()
    }

    /// Cores used by more than one thread (owner or worker), with who uses them.
    pub fn shared_cores(&self) -> Vec<(CoreIndex, Vec<String>)> {
        let mut users: Vec<(CoreIndex, Vec<String>)> = Vec::new();
        let mut add =
            |core: CoreIndex, who: String| match users.iter_mut().find(|(c, _)| *c == core) {
                Some((_, v)) => v.push(who),
                None => users.push((core, vec![who])),
            };
        if let Some(c) = self.owner_core {
            add(c, "owner".into());
        }
        for lane in &self.lanes {
            for (w, core) in lane.worker_cores.iter().enumerate() {
                if let Some(c) = core {
                    add(*c, format!("{}#{w}", lane.name));
                }
            }
        }
        users.retain(|(_, v)| v.len() > 1);
        users.sort_by_key(|(c, _)| *c);
        users
    }

    /// Whether a lane's workers share a core with any other thread.
    pub fn lane_shares_core(&self, id: LaneId) -> bool {
        let Some(lane) = self.lane(id) else {
            return false;
        };
        let shared = self.shared_cores();
        lane.worker_cores
            .iter()
            .flatten()
            .any(|c| shared.iter().any(|(s, _)| s == c))
    }
}

impl fmt::Display for LanePlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "lane plan: {} cores {:?}, owner on {}",
            self.machine_cores.len(),
            self.machine_cores,
            self.owner_core
                .map(|c| format!("core {c}"))
                .unwrap_or_else(|| "any core".into())
        )?;
        for lane in &self.lanes {
            let kind = match lane.kind {
                LaneKind::FrameCritical => "frame-critical",
                LaneKind::Background => "background",
            };
            let cores: Vec<String> = lane
                .worker_cores
                .iter()
                .map(|c| c.map_or_else(|| "-".to_string(), |c| c.to_string()))
                .collect();
            writeln!(
                f,
                "  {:<10} {:<15} {} worker(s) on cores [{}]",
                lane.name,
                kind,
                lane.worker_cores.len(),
                cores.join(", ")
            )?;
        }
        let shared = self.shared_cores();
        if shared.is_empty() {
            write!(f, "  no core is shared")
        } else {
            write!(f, "  shared cores:")?;
            for (core, who) in shared {
                write!(f, " c{core}=[{}]", who.join(" "))?;
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cores(n: usize) -> Vec<CoreIndex> {
        (0..n).collect()
    }

    #[test]
    fn auto_plans_for_common_machines() {
        for n in [1, 2, 3, 4, 8, 16, 64, 128] {
            let plan = LanePlan::auto_for(&cores(n));
            assert_eq!(plan.lanes().len(), 3, "{n} cores");
            for lane in plan.lanes() {
                assert!(
                    !lane.worker_cores.is_empty(),
                    "{n} cores: {} empty",
                    lane.name
                );
                for c in lane.worker_cores.iter().flatten() {
                    assert!(*c < n, "{n} cores: core {c} out of range");
                }
            }
            let physics = plan.lane(plan.lane_id("physics").unwrap()).unwrap();
            let total = plan.total_workers();
            if n >= 8 {
                assert!(plan.shared_cores().is_empty(), "{n} cores: {plan}");
                assert_eq!(total, n - 1, "{n} cores: every core but the owner's");
                assert!(
                    physics.worker_cores.len() >= n / 2,
                    "{n} cores: physics too small"
                );
                assert!(
                    !physics.worker_cores.contains(&Some(0)),
                    "physics on owner core"
                );
            } else {
                assert!(
                    !plan.shared_cores().is_empty(),
                    "{n} cores must share: {plan}"
                );
            }
        }
    }

    #[test]
    fn plan_for_sixteen_cores() {
        let plan = LanePlan::auto_for(&cores(16));
        let len = |name| {
            plan.lane(plan.lane_id(name).unwrap())
                .unwrap()
                .worker_cores
                .len()
        };
        assert_eq!((len("physics"), len("render"), len("asset")), (11, 2, 2));
    }

    #[test]
    fn auto_uses_reported_core_ids_not_indices() {
        let plan = LanePlan::auto_for(&[4, 5, 6, 7]);
        assert_eq!(plan.owner_core(), Some(4));
        for lane in plan.lanes() {
            for c in lane.worker_cores.iter().flatten() {
                assert!((5..=7).contains(c));
            }
        }
    }

    #[test]
    fn spec_parses_and_lays_out_cores() {
        let plan = LanePlan::from_spec("physics=2,render=1,asset=1", &cores(4)).unwrap();
        let lane = |n| plan.lane(plan.lane_id(n).unwrap()).unwrap().clone();
        assert_eq!(lane("physics").worker_cores, vec![Some(1), Some(2)]);
        assert_eq!(lane("render").worker_cores, vec![Some(3)]);
        assert_eq!(lane("asset").kind, LaneKind::Background);
        assert_eq!(lane("asset").worker_cores, vec![Some(0)]);
        // Two workers of one lane on two cores land on different cores.
        let two = LanePlan::from_spec("physics=2", &cores(2)).unwrap();
        assert_eq!(two.lanes()[0].worker_cores, vec![Some(1), Some(0)]);
        let custom = LanePlan::from_spec("ai=2:bg", &cores(2)).unwrap();
        assert_eq!(custom.lanes()[0].kind, LaneKind::Background);
    }

    #[test]
    fn worker_counts_and_names_are_bounded_before_anything_is_sized() {
        // Ten billion workers: refused from the number, before a vector is sized from it.
        match LanePlan::from_spec("physics=10000000000", &cores(2)) {
            Err(PlanError::TooManyWorkers { workers, max, .. }) => {
                assert_eq!((workers, max), (10_000_000_000, 8));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            LanePlan::from_spec("physics=999", &cores(2)),
            Err(PlanError::TooManyWorkers { .. })
        ));
        assert!(LanePlan::from_spec("physics=8", &cores(2)).is_ok());
        assert_eq!(max_workers_per_lane(1_000), MAX_WORKERS_PER_LANE);
        let long = format!("{}=1", "a".repeat(MAX_LANE_NAME + 1));
        assert!(matches!(
            LanePlan::from_spec(&long, &cores(2)),
            Err(PlanError::BadName(_))
        ));
        let ok = format!("{}=1", "a".repeat(MAX_LANE_NAME));
        assert!(LanePlan::from_spec(&ok, &cores(2)).is_ok());
        assert!(matches!(
            LanePlan::empty(&cores(1)).with_lane("x", LaneKind::Background, vec![None; 5]),
            Err(PlanError::TooManyWorkers { .. })
        ));
    }

    #[test]
    fn spec_errors_are_typed() {
        assert!(matches!(
            LanePlan::from_spec("physics", &cores(2)),
            Err(PlanError::BadSpec { .. })
        ));
        assert!(matches!(
            LanePlan::from_spec("physics=x", &cores(2)),
            Err(PlanError::BadSpec { .. })
        ));
        assert!(matches!(
            LanePlan::from_spec("physics=0", &cores(2)),
            Err(PlanError::BadSpec { .. })
        ));
        assert!(matches!(
            LanePlan::from_spec("physics=1,physics=1", &cores(2)),
            Err(PlanError::DuplicateLane(_))
        ));
        assert!(matches!(
            LanePlan::from_spec("Phys=1", &cores(2)),
            Err(PlanError::BadName(_))
        ));
    }

    #[test]
    fn asking_for_a_missing_core_is_an_error() {
        let err = LanePlan::empty(&cores(2))
            .with_lane("ai", LaneKind::FrameCritical, vec![Some(7)])
            .unwrap_err();
        assert!(matches!(err, PlanError::NoSuchCore { core: 7, .. }));
        assert!(err.to_string().contains("fix:"));
    }

    #[test]
    fn plans_print() {
        let s = LanePlan::auto_for(&cores(2)).to_string();
        assert!(s.contains("physics") && s.contains("shared cores"), "{s}");
    }
}
