//! A recorded cost trace: what every rung of every agent measured, frame by frame, on a real
//! run, so the simulator (`lanegraph_tools::budget_sim`) replays a game's real ladder instead of a law
//! with noise.
//!
//! Owns: the trace, its text form (written by `lanegraph demo --record-costs FILE`, read by
//! the `budget` bench) and the lookup of one rung's cost at one frame. Must never: read a file
//! or a clock (the caller brings the text), or invent a cost the run did not measure (a rung
//! the run never measured is reported as such, not priced).
//!
//! # The text form
//! ```text
//! lanegraph-cost-trace 1
//! # free comment lines: the command, the machine
//! budget_ms 16.666667
//! agent physics cpu full detail_7_8 no_detail
//! frame 1 12.403 -
//! s 0 2 100000 0.512
//! ```
//! `agent NAME POOL RUNG...` declares an agent and its rungs (by index, in the order the game
//! declares its strategies); `frame N CPU_MS GPU_MS|-` opens a frame; each `s AGENT RUNG N MS`
//! after it is a sample of that frame's work: agent index, rung index, workload, ms.

use std::fmt::Write as _;

use super::agent::Pool;

/// The first line of every trace.
pub const MAGIC: &str = "lanegraph-cost-trace 1";

/// Longest trace accepted, in frames (a day at 60 fps: a hand-edited count cannot make a
/// reader allocate without bound).
pub const MAX_FRAMES: usize = 60 * 60 * 60 * 24;

/// One agent of a trace: its name, pool, rungs and, per rung, the frames that measured it.
#[derive(Debug, Clone, PartialEq)]
pub struct TracedAgent {
    /// The agent's name.
    pub name: String,
    /// Its pool.
    pub pool: Pool,
    /// Its rungs' names, in the game's declaration order (strategy index = rung index).
    pub rungs: Vec<String>,
    /// Per rung, `(frame index, n, ms)` of every sample with work, in frame order.
    measured: Vec<Vec<(usize, u64, f64)>>,
}

/// One frame of a trace.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TracedFrame {
    /// The run's frame number.
    pub frame: u64,
    /// The CPU frame, ms.
    pub cpu_ms: f64,
    /// The GPU frame, ms, when the run drew.
    pub gpu_ms: Option<f64>,
    /// The CPU and GPU time no traced sample owns, ms (the frame less its samples).
    overhead_ms: [f64; 2],
}

/// A recorded cost trace (module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct CostTrace {
    /// The frame budget the run had, ms.
    pub budget_ms: f64,
    /// The comment lines (without `# `): what recorded it, where.
    pub notes: Vec<String>,
    /// The agents.
    pub agents: Vec<TracedAgent>,
    /// The frames, in order.
    pub frames: Vec<TracedFrame>,
}

/// A trace that cannot be read: where, what, and how to fix it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("cost trace line {line}: {what} (fix: {fix})")]
pub struct TraceError {
    /// 1-based line (0: the trace as a whole).
    pub line: usize,
    /// What is wrong.
    pub what: String,
    /// How to fix it.
    pub fix: &'static str,
}

const RERECORD: &str =
    "record it again with `lanegraph demo --no-gpu --frames 1200 --record-costs FILE`";

impl CostTrace {
    /// An empty trace for a run with this frame budget.
    pub fn new(budget_ms: f64) -> Self {
        CostTrace {
            budget_ms,
            notes: Vec::new(),
            agents: Vec::new(),
            frames: Vec::new(),
        }
    }

    /// Declares an agent; returns its index for [`push_sample`](Self::push_sample).
    pub fn add_agent(&mut self, name: &str, pool: Pool, rungs: Vec<String>) -> usize {
        self.agents.push(TracedAgent {
            name: name.to_string(),
            pool,
            measured: vec![Vec::new(); rungs.len()],
            rungs,
        });
        self.agents.len() - 1
    }

    /// Opens a frame: the samples pushed next belong to it.
    pub fn push_frame(&mut self, frame: u64, cpu_ms: f64, gpu_ms: Option<f64>) {
        self.frames.push(TracedFrame {
            frame,
            cpu_ms,
            gpu_ms,
            overhead_ms: [cpu_ms.max(0.0), gpu_ms.unwrap_or(0.0).max(0.0)],
        });
    }

    /// A sample of the last frame's work: `agent` ran rung `rung` on `n` units in `ms`.
    /// Samples without work (`n == 0`), with no frame open, or naming an unknown agent or
    /// rung are not kept (they measure nothing a rung costs).
    pub fn push_sample(&mut self, agent: usize, rung: usize, n: u64, ms: f64) {
        let Some(f) = self.frames.len().checked_sub(1) else {
            return;
        };
        let Some(a) = self.agents.get_mut(agent) else {
            return;
        };
        if n == 0 || !ms.is_finite() || ms < 0.0 || rung >= a.rungs.len() {
            return;
        }
        a.measured[rung].push((f, n, ms));
        let o = &mut self.frames[f].overhead_ms[a.pool.index()];
        *o = (*o - ms).max(0.0);
    }

    /// The cost of `agent`'s rung `rung` at frame index `at`: the sample of that rung nearest
    /// in time (`(n, ms)`), `None` when the run never measured the rung.
    pub fn rung_cost(&self, agent: usize, rung: usize, at: usize) -> Option<(u64, f64)> {
        let m = self.agents.get(agent)?.measured.get(rung)?;
        let k = m.partition_point(|&(f, _, _)| f < at);
        let after = m.get(k);
        let before = k.checked_sub(1).and_then(|k| m.get(k));
        let pick = match (before, after) {
            (Some(b), Some(a)) => {
                if at - b.0 <= a.0 - at {
                    b
                } else {
                    a
                }
            }
            (Some(b), None) => b,
            (None, Some(a)) => a,
            (None, None) => return None,
        };
        Some((pick.1, pick.2))
    }

    /// The time of frame index `at` no traced sample owns, per pool (CPU, GPU), ms.
    pub fn overhead_ms(&self, at: usize) -> [f64; 2] {
        self.frames.get(at).map_or([0.0; 2], |f| f.overhead_ms)
    }

    /// The trace with only the agents `keep` (indices, in the new order): the time of every
    /// agent left out stays in its frames as overhead, as it was in the run.
    pub fn keep_agents(&self, keep: &[usize]) -> CostTrace {
        let mut t = CostTrace::new(self.budget_ms);
        t.notes = self.notes.clone();
        // The kept agents' new indices, by old index.
        let mut index = vec![None; self.agents.len()];
        for &k in keep {
            if let Some(a) = self.agents.get(k) {
                index[k] = Some(t.add_agent(&a.name, a.pool, a.rungs.clone()));
            }
        }
        // The frames replayed: what the left-out agents measured stays as overhead.
        for (f, samples) in self.frames.iter().zip(self.samples_by_frame()) {
            t.push_frame(f.frame, f.cpu_ms, f.gpu_ms);
            for (a, r, n, ms) in samples {
                if let Some(new) = index[a] {
                    t.push_sample(new, r, n, ms);
                }
            }
        }
        t
    }

    /// Every sample as `(agent, rung, n, ms)`, grouped by frame index, in agent order.
    fn samples_by_frame(&self) -> Vec<Vec<(usize, usize, u64, f64)>> {
        let mut by_frame = vec![Vec::new(); self.frames.len()];
        for (ai, a) in self.agents.iter().enumerate() {
            for (ri, m) in a.measured.iter().enumerate() {
                for &(f, n, ms) in m {
                    by_frame[f].push((ai, ri, n, ms));
                }
            }
        }
        by_frame
    }

    /// The rungs of `agent` the run never measured, by name.
    pub fn unmeasured(&self, agent: usize) -> Vec<&str> {
        self.agents.get(agent).map_or(Vec::new(), |a| {
            a.rungs
                .iter()
                .zip(&a.measured)
                .filter(|(_, m)| m.is_empty())
                .map(|(r, _)| r.as_str())
                .collect()
        })
    }

    /// Frame index of simulated frame `frame` (1-based) when a run longer than the trace
    /// replays it back and forth (1, 2, ..., T, T-1, ..., 1, 2, ...): the costs stay
    /// continuous where a plain loop would jump from the run's end to its start.
    pub fn index_of(&self, frame: u64) -> usize {
        let t = self.frames.len() as u64;
        if t <= 1 {
            return 0;
        }
        let period = 2 * (t - 1);
        let r = (frame.saturating_sub(1)) % period;
        (if r < t { r } else { period - r }) as usize
    }

    /// The text form (module docs).
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "{MAGIC}");
        for n in &self.notes {
            let _ = writeln!(s, "# {}", n.replace(['\n', '\r'], " "));
        }
        let _ = writeln!(s, "budget_ms {}", self.budget_ms);
        for a in &self.agents {
            let _ = writeln!(
                s,
                "agent {} {} {}",
                a.name,
                a.pool.name(),
                a.rungs.join(" ")
            );
        }
        for (f, samples) in self.frames.iter().zip(&self.samples_by_frame()) {
            let gpu = f.gpu_ms.map_or("-".to_string(), |g| format!("{g:.4}"));
            let _ = writeln!(s, "frame {} {:.4} {gpu}", f.frame, f.cpu_ms);
            for &(a, r, n, ms) in samples {
                let _ = writeln!(s, "s {a} {r} {n} {ms:.4}");
            }
        }
        s
    }

    /// Reads the text form (module docs). Every line is checked: a damaged or hand-edited
    /// trace is an error naming its line, never a silently different ladder.
    pub fn parse(text: &str) -> Result<CostTrace, TraceError> {
        let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l.trim()));
        match lines.next() {
            Some((_, l)) if l == MAGIC => {}
            _ => return Err(trace_error(1, format!("the first line is not `{MAGIC}`"))),
        }
        let mut t = CostTrace::new(0.0);
        let mut budget = None;
        for (no, line) in lines {
            if line.is_empty() {
                continue;
            }
            if let Some(note) = line.strip_prefix('#') {
                t.notes.push(note.trim().to_string());
                continue;
            }
            let mut words = line.split_ascii_whitespace();
            let key = words.next().unwrap_or_default();
            let mut l = Line { no, key, words };
            match key {
                "budget_ms" => budget = Some(l.budget()?),
                "agent" => t.parse_agent(&mut l)?,
                "frame" => t.parse_frame(&mut l)?,
                "s" => t.parse_sample(&mut l)?,
                other => return Err(l.err(format!("unknown line kind `{other}`"))),
            }
            if let Some(extra) = l.words.next() {
                return Err(l.err(format!("unexpected `{extra}` at the end")));
            }
        }
        t.budget_ms = budget.ok_or_else(|| trace_error(0, "no `budget_ms` line".into()))?;
        if t.frames.is_empty() || t.agents.is_empty() {
            return Err(trace_error(0, "no frames or no agents".into()));
        }
        Ok(t)
    }

    /// An `agent NAME POOL RUNG...` line.
    fn parse_agent(&mut self, l: &mut Line<'_>) -> Result<(), TraceError> {
        if !self.frames.is_empty() {
            return Err(l.err("an agent declared after the first frame".into()));
        }
        let name = l
            .words
            .next()
            .ok_or_else(|| l.err("an agent without a name".into()))?;
        let pool = match l.words.next() {
            Some("cpu") => Pool::Cpu,
            Some("gpu") => Pool::Gpu,
            other => return Err(l.err(format!("pool {other:?} is not `cpu` or `gpu`"))),
        };
        let rungs: Vec<String> = l.words.by_ref().map(str::to_string).collect();
        if rungs.is_empty() || rungs.len() > usize::from(u8::MAX) {
            return Err(l.err(format!("agent `{name}` has {} rungs", rungs.len())));
        }
        self.add_agent(name, pool, rungs);
        Ok(())
    }

    /// A `frame N CPU_MS GPU_MS|-` line.
    fn parse_frame(&mut self, l: &mut Line<'_>) -> Result<(), TraceError> {
        if self.frames.len() >= MAX_FRAMES {
            return Err(l.err(format!("more than {MAX_FRAMES} frames")));
        }
        let frame = l.int("the frame number")?;
        let cpu = l.num("the CPU time in ms")?;
        let gpu = match l.words.clone().next() {
            Some("-") => {
                l.words.next();
                None
            }
            _ => Some(l.num("the GPU time in ms or `-`")?),
        };
        if self.frames.last().is_some_and(|f| f.frame >= frame) {
            return Err(l.err(format!("frame {frame} is not after the one before")));
        }
        self.push_frame(frame, cpu, gpu);
        Ok(())
    }

    /// An `s AGENT RUNG N MS` sample line.
    fn parse_sample(&mut self, l: &mut Line<'_>) -> Result<(), TraceError> {
        if self.frames.is_empty() {
            return Err(l.err("a sample before the first frame".into()));
        }
        let a = l.int("the agent index")? as usize;
        let r = l.int("the rung index")? as usize;
        let n = l.int("the workload")?;
        let ms = l.num("the time in ms")?;
        let Some(agent) = self.agents.get(a) else {
            return Err(l.err(format!("agent {a} was never declared")));
        };
        if r >= agent.rungs.len() {
            return Err(l.err(format!("agent `{}` has no rung {r}", agent.name)));
        }
        self.push_sample(a, r, n, ms);
        Ok(())
    }
}

/// A trace error at `line` (0: the trace as a whole), with the one fix: record it again.
fn trace_error(line: usize, what: String) -> TraceError {
    TraceError {
        line,
        what,
        fix: RERECORD,
    }
}

/// One line of a trace being read: its number, its kind, and the words after the kind.
struct Line<'a> {
    no: usize,
    key: &'a str,
    words: std::str::SplitAsciiWhitespace<'a>,
}

impl Line<'_> {
    fn err(&self, what: String) -> TraceError {
        trace_error(self.no, what)
    }

    /// The next word as a finite number >= 0.
    fn num(&mut self, what: &str) -> Result<f64, TraceError> {
        self.words
            .next()
            .and_then(|v| v.parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| self.err(format!("`{}` needs {what}, a finite number >= 0", self.key)))
    }

    /// The next word as a whole number.
    fn int(&mut self, what: &str) -> Result<u64, TraceError> {
        self.words
            .next()
            .and_then(|v| v.parse::<u64>().ok())
            .ok_or_else(|| self.err(format!("`{}` needs {what}, a whole number", self.key)))
    }

    /// A `budget_ms MS` line's budget, 0.1 to 1,000 ms.
    fn budget(&mut self) -> Result<f64, TraceError> {
        let b = self.num("the frame budget in ms")?;
        if !(0.1..=1000.0).contains(&b) {
            return Err(self.err(format!("budget {b} ms is outside 0.1..=1000")));
        }
        Ok(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> CostTrace {
        let mut t = CostTrace::new(16.5);
        t.notes.push("test".into());
        let a = t.add_agent("physics", Pool::Cpu, vec!["full".into(), "none".into()]);
        t.push_frame(1, 10.0, None);
        t.push_sample(a, 0, 100, 8.0);
        t.push_frame(2, 3.0, None);
        t.push_sample(a, 1, 100, 0.5);
        t.push_frame(3, 11.0, None);
        t.push_sample(a, 0, 100, 9.0);
        t
    }

    #[test]
    fn the_text_form_reads_back_to_the_same_trace() {
        let t = small();
        assert_eq!(CostTrace::parse(&t.to_text()).unwrap(), t);
    }

    #[test]
    fn a_rung_costs_what_its_nearest_sample_measured() {
        let t = small();
        assert_eq!(t.rung_cost(0, 0, 0), Some((100, 8.0)));
        assert_eq!(t.rung_cost(0, 0, 1), Some((100, 8.0)));
        assert_eq!(t.rung_cost(0, 0, 2), Some((100, 9.0)));
        assert_eq!(t.rung_cost(0, 1, 0), Some((100, 0.5)));
        assert_eq!(t.overhead_ms(0), [2.0, 0.0]);
        assert_eq!(t.overhead_ms(1), [2.5, 0.0]);
        assert!(t.unmeasured(0).is_empty());
    }

    #[test]
    fn a_longer_run_replays_the_trace_back_and_forth() {
        let t = small();
        let idx: Vec<usize> = (1..=7).map(|f| t.index_of(f)).collect();
        assert_eq!(idx, [0, 1, 2, 1, 0, 1, 2]);
    }

    #[test]
    fn damaged_traces_name_their_line() {
        let good = small().to_text();
        for (bad, line) in [
            (
                good.replacen("lanegraph-cost-trace 1", "lanegraph-cost-trace 9", 1),
                1,
            ),
            (good.replacen("frame 2 ", "frame 1 ", 1), 7),
            (good.replacen("s 0 1 ", "s 0 7 ", 1), 8),
            (good.replacen("s 0 1 ", "s 4 1 ", 1), 8),
            (good.replacen("budget_ms 16.5", "budget_ms 1e9", 1), 3),
            (good.replacen("frame 3 11.0000", "frame 3 NaN", 1), 9),
            (good.replacen("frame 3 11.0000 -", "frame 3 11.0 - x", 1), 9),
        ] {
            let e = CostTrace::parse(&bad).unwrap_err();
            assert_eq!(e.line, line, "{e}\n{bad}");
            assert!(e.to_string().contains("--record-costs"), "{e}");
        }
        assert!(CostTrace::parse("").is_err());
        assert!(CostTrace::parse(MAGIC).is_err());
    }
}
