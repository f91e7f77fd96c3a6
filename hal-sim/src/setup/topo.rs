//! Topologies: star, N-to-1 incast, dumbbell, leaf-spine, 3-tier fat-tree.

use crate::model::net::{Network, NodeKind};
use crate::run::event::Ps;
use crate::setup::scenario::{Count, Gbps, Shape, Topology};

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
        Shape::FatTree {
            pods,
            tors_per_pod,
            hosts_per_tor,
            aggs_per_pod,
            cores_per_agg,
            fabric_gbps,
        } => {
            let fabric = gbps(fabric_gbps);
            let (pods, tors, per, aggs, cpa) =
                (pods.0, tors_per_pod.0, hosts_per_tor.0, aggs_per_pod.0, cores_per_agg.0);
            // Hosts first (host index = creation order: pod by pod, ToR by
            // ToR), then ToRs, aggregation switches and cores.
            let hosts: Vec<u32> = (0..pods * tors * per).map(|_| n.add_node(NodeKind::Host)).collect();
            let tor: Vec<u32> = (0..pods * tors).map(|_| n.add_node(NodeKind::Switch)).collect();
            let agg: Vec<u32> = (0..pods * aggs).map(|_| n.add_node(NodeKind::Switch)).collect();
            let core: Vec<u32> = (0..aggs * cpa).map(|_| n.add_node(NodeKind::Switch)).collect();
            for (i, &h) in hosts.iter().enumerate() {
                n.link(h, tor[i / per as usize], bps, delay);
            }
            for p in 0..pods as usize {
                for t in 0..tors as usize {
                    for a in 0..aggs as usize {
                        n.link(tor[p * tors as usize + t], agg[p * aggs as usize + a], fabric, delay);
                    }
                }
                // Aggregation switch j of every pod reaches core group j.
                for a in 0..aggs as usize {
                    for c in 0..cpa as usize {
                        n.link(agg[p * aggs as usize + a], core[a * cpa as usize + c], fabric, delay);
                    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::net::flow_hash;
    use crate::setup::scenario::DelayNs;

    fn fat_tree(pods: u32, tors: u32, per: u32, aggs: u32, cpa: u32) -> Network {
        build(&Topology {
            shape: Shape::FatTree {
                pods: Count(pods),
                tors_per_pod: Count(tors),
                hosts_per_tor: Count(per),
                aggs_per_pod: Count(aggs),
                cores_per_agg: Count(cpa),
                fabric_gbps: Some(Gbps(400)),
            },
            link_gbps: Gbps(100),
            link_delay_ns: DelayNs(1000),
        })
    }

    fn switches(n: &Network) -> usize {
        n.nodes.iter().filter(|x| x.kind == NodeKind::Switch).count()
    }

    /// The HPCC paper's fabric: 320 hosts on 20 ToRs in 5 pods, 4
    /// aggregation switches a pod, 16 cores; a path across pods crosses 5
    /// switches and has 16 equal-cost choices (4 aggregation switches × 4
    /// cores), one within a pod 3, one under a ToR 1.
    #[test]
    fn the_hpcc_paper_fat_tree() {
        let n = fat_tree(5, 4, 16, 4, 4);
        assert_eq!((n.hosts.len(), switches(&n)), (320, 20 + 20 + 16));
        let (a, same_tor, same_pod, other_pod) = (n.hosts[0], n.hosts[15], n.hosts[16], n.hosts[64]);
        assert_eq!(n.path(a, same_tor, 0).len(), 1 + 1);
        assert_eq!(n.path(a, same_pod, 0).len(), 1 + 3);
        assert_eq!(n.path(a, other_pod, 0).len(), 1 + 5);
        let cores: std::collections::HashSet<_> = (0..256).map(|f| n.path(a, other_pod, flow_hash(f))[3].0).collect();
        assert_eq!(cores.len(), 16, "every core carries some flow");
        // Host links at 100 Gb/s, the rest at 400.
        assert_eq!(n.nodes[a as usize].ports[0].bps, 100_000_000_000);
        let (tor, p) = n.path(a, other_pod, 0)[1];
        assert_eq!(n.nodes[tor as usize].ports[p as usize].bps, 400_000_000_000);
    }

    /// A k-ary fat-tree, k = 4: 16 hosts, 8 edge, 8 aggregation and 4 core
    /// switches, (k/2)² = 4 paths between pods.
    #[test]
    fn a_k_ary_fat_tree() {
        let n = fat_tree(4, 2, 2, 2, 2);
        assert_eq!((n.hosts.len(), switches(&n)), (16, 20));
        let (a, b) = (n.hosts[0], n.hosts[15]);
        let paths: std::collections::HashSet<_> = (0..64).map(|f| n.path(a, b, flow_hash(f))).collect();
        assert_eq!(paths.len(), 4);
    }
}
