//! Arbitration: one strategy per agent, maximising total quality within a cost capacity.
//!
//! Owns: the exact multiple-choice knapsack solver and its reusable tables. Must never:
//! calibrate costs or apply hysteresis itself (the controller hands it the costs with the
//! hysteresis margins already applied), or iterate anything whose order is not fixed.
//!
//! # Problem
//! Agents `1..A`; agent `i` offers options `j` with integer value `v_ij` (quality rank times
//! the agent's weight) and cost `c_ij` (calibrated ms). Choose exactly one option per agent,
//! maximising `sum v` subject to `sum c <= capacity`: the multiple-choice knapsack problem
//! (Sinha & Zoltners, "The multiple-choice knapsack problem", Operations Research 27(3), 1979).
//!
//! # Exact solution
//! Values are small integers and costs are real, so the dynamic programme runs over *value*,
//! keeping the least cost per value (the "dynamic programming by profits" form; Kellerer,
//! Pferschy & Pisinger, *Knapsack Problems*, 2004, §11.5). No cost is rounded, so the answer is
//! exact:
//!
//! 1. Scalarise the tie-break into the value: `v' = v * (A + 1) + [option is the current
//!    strategy]`. Since at most `A` options are current, `v'` orders solutions by quality
//!    first, then by fewest changes, exactly.
//! 2. `best[v]` = least cost of reaching `v'`-total `v` with the agents seen so far;
//!    `best[0] = 0`, the rest infinite. For each agent, for each reachable `v`, for each
//!    option: relax `next[v + v'_ij]` with `best[v] + c_ij` (strict `<`, options in index
//!    order: among equal costs the first wins, so the result is deterministic). Record the
//!    winning option per `(agent, v)`.
//! 3. The answer is the largest `v` with `best[v] <= capacity`; walk the recorded options back.
//!
//! Complexity: `O(A * S * V)` time and `O(A * V)` bytes, with `S` options per agent and
//! `V = (A + 1) * sum_i max_j v_ij + 1`. For an engine's 4 agents of 3 ranks, `V = 61`: about
//! 700 relaxations. 16 agents of 5 ranks at weight 1 give `V = 1,361` and ~110 k relaxations.
//! Registration refuses agent sets whose table would pass [`MAX_TABLE_CELLS`].

/// Largest choice table (agents x values), in one-byte cells: 8 MiB.
pub(crate) const MAX_TABLE_CELLS: usize = 8 << 20;

/// One option an agent offers the arbiter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ArbiterOption {
    /// The strategy index it stands for.
    pub strategy: u8,
    /// Its cost as the arbiter should count it (calibrated, margins applied).
    pub cost: f64,
    /// Quality rank times the agent's weight.
    pub value: u32,
    /// True for the agent's current strategy (fewest changes wins a quality tie).
    pub current: bool,
}

/// The arbiter's answer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Solution {
    /// Total value (quality times weight) of the choice.
    pub value: u32,
    /// Total counted cost of the choice.
    pub cost: f64,
    /// How many agents keep their current strategy.
    pub kept: usize,
}

/// The table size a set of agents needs (for validation): `(agents, values)`.
pub(crate) fn table_size(max_values: impl Iterator<Item = u32>) -> (usize, usize) {
    let mut agents = 0usize;
    let mut sum = 0usize;
    for v in max_values {
        agents += 1;
        sum += v as usize;
    }
    (agents, (agents + 1) * sum + agents + 1)
}

/// The solver with its reusable tables (no allocation once warm at a given size).
#[derive(Debug, Default, Clone)]
pub(crate) struct Arbiter {
    best: Vec<f64>,
    next: Vec<f64>,
    pick: Vec<u8>,
}

impl Arbiter {
    /// A solver with empty tables.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Solves one instance. `groups[i]` are agent `i`'s options (non-empty, at most 255).
    /// On success `chosen[i]` is the strategy picked for agent `i`. `None` when even the
    /// cheapest choice does not fit `capacity` (then `chosen` is untouched).
    pub(crate) fn solve(
        &mut self,
        groups: &[&[ArbiterOption]],
        capacity: f64,
        chosen: &mut Vec<u8>,
    ) -> Option<Solution> {
        let a = groups.len();
        let scale = a as u32 + 1;
        let scaled = |o: &ArbiterOption| o.value * scale + o.current as u32;
        let max_total: usize = groups
            .iter()
            .map(|g| g.iter().map(scaled).max().unwrap_or(0) as usize)
            .sum();
        let width = max_total + 1;
        self.best.clear();
        self.best.resize(width, f64::INFINITY);
        self.next.clear();
        self.next.resize(width, f64::INFINITY);
        self.pick.clear();
        self.pick.resize(a * width, u8::MAX);
        self.best[0] = 0.0;
        let mut reach = 0usize; // highest reachable total so far
        for (i, g) in groups.iter().enumerate() {
            self.next[..=reach + g.iter().map(scaled).max().unwrap_or(0) as usize]
                .fill(f64::INFINITY);
            let mut new_reach = 0;
            for v in 0..=reach {
                let base = self.best[v];
                if base == f64::INFINITY {
                    continue;
                }
                for (j, o) in g.iter().enumerate() {
                    let nv = v + scaled(o) as usize;
                    let c = base + o.cost;
                    if c < self.next[nv] {
                        self.next[nv] = c;
                        self.pick[i * width + nv] = j as u8;
                        new_reach = new_reach.max(nv);
                    }
                }
            }
            reach = new_reach;
            std::mem::swap(&mut self.best, &mut self.next);
        }
        let top = (0..=reach).rev().find(|&v| self.best[v] <= capacity)?;
        let cost = self.best[top];
        chosen.clear();
        chosen.resize(a, 0);
        let mut v = top;
        let mut kept = 0;
        let mut value = 0;
        for i in (0..a).rev() {
            let j = self.pick[i * width + v] as usize;
            let o = &groups[i][j];
            chosen[i] = o.strategy;
            kept += o.current as usize;
            value += o.value;
            v -= scaled(o) as usize;
        }
        debug_assert_eq!(v, 0, "arbiter backtrack must end at the empty choice");
        Some(Solution { value, cost, kept })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opt(strategy: u8, cost: f64, value: u32, current: bool) -> ArbiterOption {
        ArbiterOption {
            strategy,
            cost,
            value,
            current,
        }
    }

    /// Exhaustive search: the reference the DP must match.
    fn brute(groups: &[&[ArbiterOption]], capacity: f64) -> Option<(u32, usize, f64)> {
        let mut best: Option<(u32, usize, f64)> = None;
        let mut idx = vec![0usize; groups.len()];
        loop {
            let (mut v, mut k, mut c) = (0, 0, 0.0);
            for (g, &j) in groups.iter().zip(&idx) {
                v += g[j].value;
                k += g[j].current as usize;
                c += g[j].cost;
            }
            if c <= capacity {
                let better = match best {
                    None => true,
                    Some((bv, bk, bc)) => (v, k) > (bv, bk) || ((v, k) == (bv, bk) && c < bc),
                };
                if better {
                    best = Some((v, k, c));
                }
            }
            let mut i = 0;
            loop {
                if i == groups.len() {
                    return best;
                }
                idx[i] += 1;
                if idx[i] < groups[i].len() {
                    break;
                }
                idx[i] = 0;
                i += 1;
            }
        }
    }

    #[test]
    fn matches_exhaustive_search_on_seeded_instances() {
        let mut seed = 0x9e3779b97f4a7c15u64;
        let mut rnd = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut arb = Arbiter::new();
        let mut chosen = Vec::new();
        for _ in 0..300 {
            let agents = 1 + (rnd() % 5) as usize;
            let groups: Vec<Vec<ArbiterOption>> = (0..agents)
                .map(|_| {
                    let s = 1 + (rnd() % 4) as usize;
                    let cur = (rnd() % s as u64) as usize;
                    (0..s)
                        .map(|j| {
                            opt(
                                j as u8,
                                (rnd() % 1000) as f64 / 100.0,
                                (rnd() % 4) as u32,
                                j == cur,
                            )
                        })
                        .collect()
                })
                .collect();
            let refs: Vec<&[ArbiterOption]> = groups.iter().map(|g| g.as_slice()).collect();
            let cap = (rnd() % 2500) as f64 / 100.0;
            let got = arb.solve(&refs, cap, &mut chosen);
            let want = brute(&refs, cap);
            match (got, want) {
                (None, None) => {}
                (Some(s), Some((v, k, c))) => {
                    assert_eq!((s.value, s.kept), (v, k));
                    assert!((s.cost - c).abs() < 1e-9, "{} vs {c}", s.cost);
                    let total: f64 = chosen
                        .iter()
                        .zip(&refs)
                        .map(|(&st, g)| g.iter().find(|o| o.strategy == st).unwrap().cost)
                        .sum();
                    assert!(total <= cap + 1e-9);
                }
                other => panic!("mismatch {other:?}"),
            }
        }
    }

    #[test]
    fn quality_tie_keeps_the_current_strategy() {
        let a = [opt(0, 5.0, 2, false), opt(1, 6.0, 2, true)];
        let mut chosen = Vec::new();
        let s = Arbiter::new().solve(&[&a], 10.0, &mut chosen).unwrap();
        assert_eq!(chosen, vec![1]);
        assert_eq!(s.kept, 1);
    }

    #[test]
    fn infeasible_is_none() {
        let a = [opt(0, 5.0, 2, false), opt(1, 6.0, 3, true)];
        assert!(Arbiter::new().solve(&[&a], 4.0, &mut Vec::new()).is_none());
    }
}
