//! Building a prebuilt graph: named nodes on lanes, edges, and validation in `build()`.
//!
//! Owns: the declaration types and every check a graph must pass before it may run (unknown
//! lanes, duplicate names, dangling edges, cycles named node by node). Must never: panic on bad
//! input; every failure is a [`GraphError`].

use std::collections::HashMap;

use super::run::{Graph, NodeBody};
use super::{GraphError, NodeCtx, NodeId};
use crate::lanes::Lanes;

struct NodeDecl<C> {
    name: String,
    lane: String,
    body: NodeBody<C>,
}

/// Declares a graph over a shared context type `C` (passed by reference to every node on every
/// run). See the crate docs for an example.
pub struct GraphBuilder<C> {
    name: String,
    nodes: Vec<NodeDecl<C>>,
    edges: Vec<(NodeId, NodeId)>,
    record_timing: bool,
    /// Distinguishes this builder's ids from another builder's (dangling-edge check).
    tag: u32,
}

static NEXT_TAG: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);

impl<C: Sync> GraphBuilder<C> {
    /// An empty graph called `name` (the name appears in errors and traces).
    pub fn new(name: &str) -> Self {
        GraphBuilder {
            name: name.to_string(),
            nodes: Vec::new(),
            edges: Vec::new(),
            record_timing: true,
            // Relaxed: only uniqueness matters.
            tag: NEXT_TAG.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        }
    }

    /// Whether runs record per-node start/end stamps (default on; two clock reads per node,
    /// ~15 ns: turn off for graphs of very fine nodes).
    pub fn record_timing(mut self, on: bool) -> Self {
        self.record_timing = on;
        self
    }

    /// Adds a node called `name` that runs `body` on the lane called `lane`.
    pub fn node(
        &mut self,
        name: &str,
        lane: &str,
        body: impl Fn(&NodeCtx<'_>, &C) + Send + Sync + 'static,
    ) -> NodeId {
        let index = self.nodes.len() as u32;
        self.nodes.push(NodeDecl {
            name: name.to_string(),
            lane: lane.to_string(),
            body: Box::new(body),
        });
        NodeId {
            index,
            tag: self.tag,
        }
    }

    /// `to` runs after `from` has finished.
    pub fn edge(&mut self, from: NodeId, to: NodeId) -> &mut Self {
        self.edges.push((from, to));
        self
    }

    /// `to` runs after every node in `from`.
    pub fn edges_from(&mut self, from: &[NodeId], to: NodeId) -> &mut Self {
        for f in from {
            self.edges.push((*f, to));
        }
        self
    }

    /// Validates and builds the graph for `lanes`.
    ///
    /// Errors: an empty graph, a duplicate or empty node name, a node on a lane the plan lacks,
    /// an edge to or from a node of another builder (or itself), a cycle (named node by node).
    pub fn build(self, lanes: &Lanes) -> Result<Graph<C>, GraphError> {
        let n = self.nodes.len();
        if n == 0 {
            return Err(GraphError::Empty(self.name));
        }
        if n > u32::MAX as usize / 2 {
            return Err(GraphError::TooLarge(n));
        }
        let mut seen: HashMap<&str, usize> = HashMap::with_capacity(n);
        let mut lane_of = Vec::with_capacity(n);
        for (i, node) in self.nodes.iter().enumerate() {
            if node.name.is_empty() {
                return Err(GraphError::EmptyName { index: i });
            }
            if seen.insert(&node.name, i).is_some() {
                return Err(GraphError::DuplicateNode(node.name.clone()));
            }
            let lane = lanes
                .lane(&node.lane)
                .ok_or_else(|| GraphError::UnknownLane {
                    node: node.name.clone(),
                    lane: node.lane.clone(),
                    lanes: lanes
                        .plan()
                        .lanes()
                        .iter()
                        .map(|l| l.name.clone())
                        .collect(),
                })?;
            lane_of.push(lane);
        }
        let mut succ_lists: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut preds = vec![0u32; n];
        for &(from, to) in &self.edges {
            for end in [from, to] {
                if end.tag != self.tag || end.index as usize >= n {
                    return Err(GraphError::DanglingEdge {
                        graph: self.name.clone(),
                        from: self.name_of(from),
                        to: self.name_of(to),
                    });
                }
            }
            if from.index == to.index {
                return Err(GraphError::Cycle(vec![self.nodes[from.index as usize]
                    .name
                    .clone()]));
            }
            if !succ_lists[from.index as usize].contains(&to.index) {
                succ_lists[from.index as usize].push(to.index);
                preds[to.index as usize] += 1;
            }
        }
        if let Some(cycle) = find_cycle(&succ_lists) {
            return Err(GraphError::Cycle(
                cycle
                    .into_iter()
                    .map(|i| self.nodes[i as usize].name.clone())
                    .collect(),
            ));
        }
        let names: Vec<String> = self.nodes.iter().map(|d| d.name.clone()).collect();
        let bodies: Vec<NodeBody<C>> = self.nodes.into_iter().map(|d| d.body).collect();
        Ok(Graph::from_parts(
            self.name,
            names,
            bodies,
            lane_of,
            succ_lists,
            preds,
            self.record_timing,
            lanes,
        ))
    }

    fn name_of(&self, id: NodeId) -> String {
        if id.tag == self.tag {
            if let Some(d) = self.nodes.get(id.index as usize) {
                return d.name.clone();
            }
        }
        format!("<node #{} of another graph>", id.index)
    }
}

/// A cycle of `succs` as node indices in edge order (first node not repeated), if any.
/// Iterative three-colour DFS: O(nodes + edges), no recursion (graphs of any depth).
fn find_cycle(succs: &[Vec<u32>]) -> Option<Vec<u32>> {
    const WHITE: u8 = 0;
    const GREY: u8 = 1;
    const BLACK: u8 = 2;
    let n = succs.len();
    let mut colour = vec![WHITE; n];
    let mut parent = vec![u32::MAX; n];
    let mut stack: Vec<(u32, usize)> = Vec::new();
    for start in 0..n {
        if colour[start] != WHITE {
            continue;
        }
        stack.push((start as u32, 0));
        colour[start] = GREY;
        while let Some(&mut (v, ref mut next)) = stack.last_mut() {
            let vs = &succs[v as usize];
            if *next < vs.len() {
                let w = vs[*next];
                *next += 1;
                match colour[w as usize] {
                    WHITE => {
                        colour[w as usize] = GREY;
                        parent[w as usize] = v;
                        stack.push((w, 0));
                    }
                    GREY => {
                        // v -> w closes a cycle: walk parents from v back to w.
                        let mut cycle = vec![v];
                        let mut u = v;
                        while u != w {
                            u = parent[u as usize];
                            cycle.push(u);
                        }
                        cycle.reverse();
                        return Some(cycle);
                    }
                    _ => {}
                }
            } else {
                colour[v as usize] = BLACK;
                stack.pop();
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::find_cycle;

    #[test]
    fn finds_a_cycle_in_edge_order() {
        // 0 -> 1 -> 2 -> 3 -> 1
        let succs = vec![vec![1], vec![2], vec![3], vec![1]];
        assert_eq!(find_cycle(&succs), Some(vec![1, 2, 3]));
    }

    #[test]
    fn dag_has_no_cycle() {
        let succs = vec![vec![1, 2], vec![3], vec![3], vec![]];
        assert_eq!(find_cycle(&succs), None);
    }
}
