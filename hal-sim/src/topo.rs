//! Topologies: star, N-to-1 incast, dumbbell, leaf-spine.

use crate::event::Ps;
use crate::net::{Network, NodeKind};
use crate::scenario::{Count, Gbps, Shape, Topology};

/// Builds the network of a topology and computes its routes. Host index i
/// is the i-th host created; in an incast, host 0 is the receiver.
pub fn build(t: &Topology) -> Network {
    let mut n = Network::default();
    let bps = t.link_gbps.0 as u64 * 1_000_000_000;
    let delay = Ps::from_ns(t.link_delay_ns.0);
    let gbps = |g: Option<Gbps>| g.map_or(bps, |g| g.0 as u64 * 1_000_000_000);
    match t.shape {
        Shape::Star { hosts: Count(hosts) } | Shape::Incast { senders: Count(hosts) } => {
            let hosts = match t.shape {
                Shape::Incast { .. } => hosts + 1,
                _ => hosts,
            };
            let h: Vec<u32> = (0..hosts).map(|_| n.add_node(NodeKind::Host)).collect();
            let s = n.add_node(NodeKind::Switch);
            for x in h {
                n.link(x, s, bps, delay);
            }
        }
        Shape::Dumbbell {
            left,
            right,
            bottleneck_gbps,
        } => {
            let left: Vec<u32> = (0..left.0).map(|_| n.add_node(NodeKind::Host)).collect();
            let right: Vec<u32> = (0..right.0).map(|_| n.add_node(NodeKind::Host)).collect();
            let (a, b) = (n.add_node(NodeKind::Switch), n.add_node(NodeKind::Switch));
            for x in left {
                n.link(x, a, bps, delay);
            }
            for x in right {
                n.link(x, b, bps, delay);
            }
            n.link(a, b, gbps(bottleneck_gbps), delay);
        }
        Shape::LeafSpine {
            leaves,
            spines,
            hosts_per_leaf,
            fabric_gbps,
        } => {
            let fabric = gbps(fabric_gbps);
            let (leaves, spines, per) = (leaves.0, spines.0, hosts_per_leaf.0);
            let hosts: Vec<Vec<u32>> = (0..leaves)
                .map(|_| (0..per).map(|_| n.add_node(NodeKind::Host)).collect())
                .collect();
            let leaf: Vec<u32> = (0..leaves).map(|_| n.add_node(NodeKind::Switch)).collect();
            let spine: Vec<u32> = (0..spines).map(|_| n.add_node(NodeKind::Switch)).collect();
            for (l, hs) in leaf.iter().zip(&hosts) {
                for &h in hs {
                    n.link(h, *l, bps, delay);
                }
                for &s in &spine {
                    n.link(*l, s, fabric, delay);
                }
            }
        }
    }
    n.compute_routes();
    n
}

/// The speed of every link if they are all equal.
pub fn uniform_speed(n: &Network) -> Option<u64> {
    let mut speeds = n.nodes.iter().flat_map(|x| x.ports.iter().map(|p| p.bps));
    let first = speeds.next()?;
    speeds.all(|s| s == first).then_some(first)
}
