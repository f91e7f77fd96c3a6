//! Nodes, ports, links and routes.
//!
//! A link joins two ports, one per direction: each port serializes its own
//! packets at the link's bandwidth and delivers them after the propagation
//! delay. Hosts have one port (the NIC uplink); switches have output-queued
//! ports. Routes are all shortest paths, chosen per flow by hash (ECMP).

use std::collections::{HashMap, VecDeque};

use crate::run::event::Ps;

/// Host or switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// A host with a NIC.
    Host,
    /// A switch.
    Switch,
}

/// One direction of a link, at its sending end: where it goes, how fast,
/// how far. What waits to be sent on it belongs to the node that sends
/// (a switch's egress queue, a NIC's scheduler).
#[derive(Debug, Clone, Copy)]
pub struct Link {
    /// The node and port at the other end.
    pub peer: (u32, u16),
    /// Bandwidth, bit/s.
    pub bps: u64,
    /// Propagation delay.
    pub delay_ps: Ps,
}

/// A host or switch with its ports.
#[derive(Debug, Clone)]
pub struct Node {
    /// Host or switch.
    pub kind: NodeKind,
    /// The link each port sends on, by port index.
    pub ports: Vec<Link>,
}

/// The whole network.
#[derive(Debug, Clone, Default)]
pub struct Network {
    /// All nodes; hosts and switches share the id space.
    pub nodes: Vec<Node>,
    /// Node ids of the hosts, in creation order.
    pub hosts: Vec<u32>,
    /// For each node, the host index of a host node (else u32::MAX).
    pub host_index: Vec<u32>,
    /// The ports on a shortest path from each node to each host.
    pub routes: Routes,
    /// hop distance[node][host index].
    pub dist: Vec<Vec<u32>>,
}

/// Next hops: for each (node, host) the egress ports on a shortest path
/// to the host. A switch looks its row up for every packet, so the table
/// is flat: one 32-bit entry per (node, host) naming a port list, and each
/// distinct list stored once (a fat-tree switch has a handful: down to
/// each of its hosts or pods, or up to any of its uplinks).
#[derive(Debug, Clone, Default)]
pub struct Routes {
    hosts: usize,
    /// Entry (node · hosts + host): index into `spans`; 0 is the empty list.
    choice: Vec<u32>,
    /// (start, length) of each distinct list in `ports`.
    spans: Vec<(u32, u32)>,
    ports: Vec<u16>,
}

impl Routes {
    /// Every (node, host) with no route.
    fn new(nodes: usize, hosts: usize) -> Self {
        Routes {
            hosts,
            choice: vec![0; nodes * hosts],
            spans: vec![(0, 0)],
            ports: Vec::new(),
        }
    }

    /// Routes `node` to `host` over `ports`; `interned` has each distinct
    /// list's index so far.
    fn set(&mut self, interned: &mut HashMap<Vec<u16>, u32>, node: usize, host: usize, ports: &[u16]) {
        let id = match interned.get(ports) {
            Some(&id) => id,
            None => {
                let id = self.spans.len() as u32;
                self.spans.push((self.ports.len() as u32, ports.len() as u32));
                self.ports.extend_from_slice(ports);
                interned.insert(ports.to_vec(), id);
                id
            }
        };
        self.choice[node * self.hosts + host] = id;
    }

    /// The egress ports at `node` on a shortest path to host index
    /// `host` (empty if none, or if either is out of range).
    pub fn get(&self, node: u32, host: u32) -> &[u16] {
        let (node, host) = (node as usize, host as usize);
        if host >= self.hosts {
            return &[];
        }
        let id = self.choice.get(node * self.hosts + host).copied().unwrap_or(0);
        let (start, len) = self.spans.get(id as usize).copied().unwrap_or((0, 0));
        self.ports.get(start as usize..(start + len) as usize).unwrap_or(&[])
    }
}

impl Network {
    /// Adds a node; returns its id.
    pub fn add_node(&mut self, kind: NodeKind) -> u32 {
        self.nodes.push(Node {
            kind,
            ports: Vec::new(),
        });
        let id = (self.nodes.len() - 1) as u32;
        if kind == NodeKind::Host {
            self.host_index.push(self.hosts.len() as u32);
            self.hosts.push(id);
        } else {
            self.host_index.push(u32::MAX);
        }
        id
    }

    /// Joins `a` and `b` with a full-duplex link.
    pub fn link(&mut self, a: u32, b: u32, bps: u64, delay_ps: Ps) {
        let pa = self.nodes[a as usize].ports.len() as u16;
        let pb = self.nodes[b as usize].ports.len() as u16;
        self.nodes[a as usize].ports.push(Link {
            peer: (b, pb),
            bps,
            delay_ps,
        });
        self.nodes[b as usize].ports.push(Link {
            peer: (a, pa),
            bps,
            delay_ps,
        });
    }

    /// Computes all shortest-path next hops towards every host (BFS from
    /// each host over the undirected graph).
    pub fn compute_routes(&mut self) {
        let n = self.nodes.len();
        let mut routes = Routes::new(n, self.hosts.len());
        let mut interned = HashMap::new();
        self.dist = vec![vec![u32::MAX; self.hosts.len()]; n];
        for (hi, &h) in self.hosts.iter().enumerate() {
            let mut dist = vec![u32::MAX; n];
            dist[h as usize] = 0;
            let mut q = VecDeque::from([h]);
            while let Some(u) = q.pop_front() {
                for p in &self.nodes[u as usize].ports {
                    let v = p.peer.0 as usize;
                    if dist[v] == u32::MAX {
                        dist[v] = dist[u as usize] + 1;
                        // Hosts do not forward.
                        if self.nodes[v].kind == NodeKind::Switch {
                            q.push_back(v as u32);
                        }
                    }
                }
            }
            for (u, node) in self.nodes.iter().enumerate() {
                self.dist[u][hi] = dist[u];
                if dist[u] == u32::MAX || dist[u] == 0 {
                    continue;
                }
                let ports: Vec<u16> = node
                    .ports
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| dist[p.peer.0 as usize] == dist[u] - 1)
                    .map(|(i, _)| i as u16)
                    .collect();
                routes.set(&mut interned, u, hi, &ports);
            }
        }
        self.routes = routes;
    }

    /// The egress port at `node` towards host `dst` for a flow hashing to
    /// `hash`. Each switch hashes with a seed of its own, as real switches
    /// do: with one hash everywhere, a choice at one tier would fix the
    /// choice at the next (a fat-tree's aggregation switch j would only
    /// ever use core j of its group: ECMP polarization).
    pub fn next_port(&self, node: u32, dst: u32, hash: u32) -> Option<u16> {
        let hi = self.host_index[dst as usize];
        let c = self.routes.get(node, hi);
        match c.len() {
            0 => None,
            1 => Some(c[0]),
            n => Some(c[switch_hash(hash, node) as usize % n]),
        }
    }

    /// The path a flow's packets take from `src` to `dst`: (node, egress port) pairs.
    pub fn path(&self, src: u32, dst: u32, hash: u32) -> Vec<(u32, u16)> {
        let mut out = Vec::new();
        let mut at = src;
        while at != dst && out.len() < 64 {
            let Some(p) = self.next_port(at, dst, hash) else { break };
            out.push((at, p));
            at = self.nodes[at as usize].ports[p as usize].peer.0;
        }
        out
    }
}

/// A flow's hash as switch `node` sees it: the flow's hash mixed with the
/// switch's seed.
fn switch_hash(hash: u32, node: u32) -> u32 {
    let mut x = hash ^ node.wrapping_mul(0x9E37_79B9);
    x ^= x >> 16;
    x = x.wrapping_mul(0x85EB_CA6B);
    x ^ (x >> 13)
}

/// A flow's ECMP hash (fixed per flow).
pub fn flow_hash(flow: u32) -> u32 {
    let mut x = flow.wrapping_mul(0x9E37_79B9) ^ 0x85EB_CA6B;
    x ^= x >> 16;
    x = x.wrapping_mul(0x7FEB_352D);
    x ^ (x >> 15)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dumbbell_routes_cross_the_bottleneck() {
        let mut n = Network::default();
        let a = n.add_node(NodeKind::Host);
        let b = n.add_node(NodeKind::Host);
        let s1 = n.add_node(NodeKind::Switch);
        let s2 = n.add_node(NodeKind::Switch);
        n.link(a, s1, 100, Ps::from_ps(1));
        n.link(s1, s2, 100, Ps::from_ps(1));
        n.link(s2, b, 100, Ps::from_ps(1));
        n.compute_routes();
        let path = n.path(a, b, 7);
        assert_eq!(path, vec![(a, 0), (s1, 1), (s2, 1)]);
        assert_eq!(n.dist[a as usize][1], 3);
    }

    #[test]
    fn ecmp_spreads_over_equal_paths() {
        let mut n = Network::default();
        let a = n.add_node(NodeKind::Host);
        let b = n.add_node(NodeKind::Host);
        let l1 = n.add_node(NodeKind::Switch);
        let l2 = n.add_node(NodeKind::Switch);
        let s1 = n.add_node(NodeKind::Switch);
        let s2 = n.add_node(NodeKind::Switch);
        n.link(a, l1, 1, Ps::from_ps(1));
        n.link(b, l2, 1, Ps::from_ps(1));
        for s in [s1, s2] {
            n.link(l1, s, 1, Ps::from_ps(1));
            n.link(l2, s, 1, Ps::from_ps(1));
        }
        n.compute_routes();
        assert_eq!(n.routes.get(l1, 1), &[1, 2]);
        assert_eq!(n.routes.get(l1, 0), &[0]);
        // A host has no route to itself; out of range is no route either.
        assert!(n.routes.get(a, 0).is_empty());
        assert!(n.routes.get(l1, 2).is_empty() && n.routes.get(99, 0).is_empty());
        // Both spines route to host 1 by their port to l2: one list, kept once.
        assert_eq!(n.routes.get(s1, 1), n.routes.get(s2, 1));
        // Every route here is one of [0], [1] and [1, 2], kept once each
        // beside the empty list.
        assert_eq!(n.routes.spans.len(), 1 + 3);
        let spines: std::collections::HashSet<_> = (0..32).map(|f| n.path(a, b, flow_hash(f))[1].1).collect();
        assert_eq!(spines.len(), 2);
    }
}
