//! System order: before/after constraints on systems and named sets, and the deterministic
//! topological order the schedule runs in.
//!
//! Owns: each system's symbolic constraints ([`Ordering`]), resolving names to systems (a name
//! is a system's, or a set's: every system in it), and the order (Kahn's algorithm, ties broken
//! by registration index, so unconstrained systems keep registration order and the order is the
//! same on every run). Must never: accept a cycle or an unknown name (typed errors naming the
//! systems), or run at frame time (the order is computed when a system registers).

/// One system's place constraints, as declared ([`super::SystemDef::before`],
/// [`super::SystemDef::after`], [`super::SystemDef::in_set`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Ordering {
    /// Names (systems or sets) this system runs before.
    pub(crate) before: Vec<String>,
    /// Names (systems or sets) this system runs after.
    pub(crate) after: Vec<String>,
    /// Sets this system belongs to.
    pub(crate) sets: Vec<String>,
}

/// Why an order could not be made (`register_system` turns it into its `RegisterError`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum OrderError {
    /// A constraint names neither a registered system nor a set.
    #[error("system `{system}` is ordered relative to `{target}`, which is neither a registered system nor a set (fix: register `{target}` first, or put a system in that set with `in_set`)")]
    UnknownTarget {
        /// The constrained system.
        system: String,
        /// The unknown name.
        target: String,
    },
    /// The constraints form a cycle.
    #[error("system order has a cycle: {} (fix: drop one of these before/after constraints)", cycle.join(" -> "))]
    Cycle {
        /// The systems on the cycle, each running before the next (the first repeated last).
        cycle: Vec<String>,
    },
}

/// The schedule order of `n` systems named `names`, with `orders[i]` the constraints of system
/// `i` (registration index). Deterministic: ties go to the lower registration index.
pub(crate) fn schedule(names: &[&str], orders: &[Ordering]) -> Result<Vec<u32>, OrderError> {
    let n = names.len();
    // Resolve a name to system indices: the system itself, or every member of the set.
    let resolve = |system: usize, target: &str| -> Result<Vec<usize>, OrderError> {
        if let Some(i) = names.iter().position(|&x| x == target) {
            return Ok(vec![i]);
        }
        let members: Vec<usize> = (0..n)
            .filter(|&j| orders[j].sets.iter().any(|s| s == target))
            .collect();
        if members.is_empty() {
            return Err(OrderError::UnknownTarget {
                system: names[system].to_string(),
                target: target.to_string(),
            });
        }
        Ok(members)
    };
    // Edges `a -> b`: a runs before b.
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, o) in orders.iter().enumerate() {
        for t in &o.before {
            for j in resolve(i, t)? {
                if j != i {
                    succ[i].push(j);
                }
            }
        }
        for t in &o.after {
            for j in resolve(i, t)? {
                if j != i {
                    succ[j].push(i);
                }
            }
        }
    }
    for s in &mut succ {
        s.sort_unstable();
        s.dedup();
    }
    let mut indeg = vec![0usize; n];
    for s in &succ {
        for &j in s {
            indeg[j] += 1;
        }
    }
    // Kahn's algorithm; the ready set is kept sorted by registration index (smallest first).
    let mut ready: std::collections::BTreeSet<usize> = (0..n).filter(|&i| indeg[i] == 0).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(i) = ready.pop_first() {
        order.push(i as u32);
        for &j in &succ[i] {
            indeg[j] -= 1;
            if indeg[j] == 0 {
                ready.insert(j);
            }
        }
    }
    if order.len() == n {
        return Ok(order);
    }
    // A cycle among the systems left: walk successors inside them until one repeats.
    let left: Vec<bool> = (0..n).map(|i| indeg[i] > 0).collect();
    let start = (0..n).find(|&i| left[i]).unwrap_or(0);
    let mut path = vec![start];
    let mut at = start;
    while let Some(&next) = succ[at].iter().find(|&&j| left[j]) {
        if let Some(p) = path.iter().position(|&x| x == next) {
            let mut cycle: Vec<String> = path[p..].iter().map(|&i| names[i].to_string()).collect();
            cycle.push(names[next].to_string());
            return Err(OrderError::Cycle { cycle });
        }
        path.push(next);
        at = next;
    }
    Err(OrderError::Cycle {
        cycle: path.iter().map(|&i| names[i].to_string()).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(before: &[&str], after: &[&str], sets: &[&str]) -> Ordering {
        let v = |x: &[&str]| x.iter().map(|s| s.to_string()).collect();
        Ordering {
            before: v(before),
            after: v(after),
            sets: v(sets),
        }
    }

    #[test]
    fn constraints_order_and_ties_keep_registration_order() {
        let names = ["render_prep", "input", "physics_a", "physics_b", "score"];
        let orders = [
            o(&[], &["physics"], &[]),
            o(&["physics"], &[], &[]),
            o(&[], &[], &["physics"]),
            o(&[], &[], &["physics"]),
            o(&[], &[], &[]),
        ];
        let order = schedule(&names, &orders).unwrap();
        let named: Vec<&str> = order.iter().map(|&i| names[i as usize]).collect();
        assert_eq!(
            named,
            ["input", "physics_a", "physics_b", "render_prep", "score"]
        );
    }

    #[test]
    fn a_cycle_names_its_systems_and_an_unknown_name_is_refused() {
        let names = ["a", "b", "c"];
        let orders = [
            o(&["b"], &[], &[]),
            o(&["c"], &[], &[]),
            o(&["a"], &[], &[]),
        ];
        let e = schedule(&names, &orders).unwrap_err();
        assert_eq!(
            e,
            OrderError::Cycle {
                cycle: vec!["a".into(), "b".into(), "c".into(), "a".into()]
            }
        );
        assert!(e.to_string().contains("a -> b -> c -> a"), "{e}");
        let e = schedule(&["a"], &[o(&["nope"], &[], &[])]).unwrap_err();
        assert!(matches!(e, OrderError::UnknownTarget { .. }), "{e}");
    }
}
