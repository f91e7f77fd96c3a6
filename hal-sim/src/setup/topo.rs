//! Topologies: star, N-to-1 incast, dumbbell, leaf-spine, 3-tier fat-tree,
//! and the HPCC reference simulator's topology files.

use std::path::Path;

use crate::model::net::{Network, NodeKind};
use crate::run::event::Ps;
use crate::setup::scenario::{check_size, Count, Gbps, Shape, Topology};

/// Builds the network of a topology and computes its routes. Host index i
/// is the i-th host created; in an incast, host 0 is the receiver. `dir`
/// resolves a topology file's path; a file that cannot be read or is not
/// a topology is an error that names its line.
pub fn build(t: &Topology, dir: &Path) -> Result<Network, String> {
    if let Some((hosts, switches)) = t.shape.size() {
        check_size(hosts, switches)?;
    }
    if let (Shape::Ns3 { .. }, 1..) = (&t.shape, t.failed_links) {
        return Err("failed_links: applies to fat-trees and leaf-spines (an ns-3 file sets its own rates)".into());
    }
    if let Shape::Ns3 { path } = &t.shape {
        let file = dir.join(path);
        let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let mut n = ns3_topology(&text).map_err(|e| format!("{}:{e}", file.display()))?;
        let hosts = n.hosts.len() as u64;
        check_size(hosts, n.nodes.len() as u64 - hosts).map_err(|e| format!("{}: {e}", file.display()))?;
        let host = t.link_gbps.0 as u64 * 1_000_000_000;
        if let Some(bps) = n
            .hosts
            .iter()
            .flat_map(|&h| n.nodes[h as usize].ports.iter().map(|p| p.bps))
            .find(|&b| b != host)
        {
            return Err(format!(
                "{}: a host link runs at {bps} b/s where link_gbps says {host} (every host link must run at link_gbps)",
                file.display()
            ));
        }
        n.compute_routes();
        return Ok(n);
    }
    if let Shape::Htsim { path } = &t.shape {
        let file = dir.join(path);
        let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let r = crate::setup::htsim_topo::resolve(&text).map_err(|e| format!("{}: {e}", file.display()))?;
        if let Some((hosts, switches)) = r.shape.size() {
            check_size(hosts, switches).map_err(|e| format!("{}: {e}", file.display()))?;
        }
        if r.link_gbps != t.link_gbps {
            return Err(format!(
                "{}: the hosts' links run at {} Gb/s where link_gbps says {} (they must agree)",
                file.display(),
                r.link_gbps.0,
                t.link_gbps.0
            ));
        }
        return fail_links(
            build_shape(&Topology {
                shape: r.shape.clone(),
                link_gbps: r.link_gbps,
                link_delay_ns: r.link_delay_ns,
                failed_links: 0,
            }),
            &r.shape,
            t.failed_links,
        );
    }
    fail_links(build_shape(t), &t.shape, t.failed_links)
}

/// The network of a topology file of the HPCC reference simulator
/// (`third.cc`'s format, which the ns-3 trees built on it share): a first
/// line `nodes switches links` (or `nodes switches tors links`, the
/// PowerTCP authors' tree, whose `tors` is unused), the switches' node ids,
/// then one line a link: `a b rate delay error_rate`, a rate in b/s or with
/// a unit (`100Gbps`, `25000000000.0`), a delay with a unit (`1us`,
/// `1000ns`; seconds without one). Nodes keep their ids; hosts must be
/// numbered before the switches (the flow files name hosts by node id),
/// and no link may lose packets (hal-sim models no random loss). Routes
/// are not computed. Errors are `line: message`.
pub fn ns3_topology(text: &str) -> Result<Network, String> {
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
    let (head, first) = lines.next().ok_or("end of file: expected the node count")?;
    // The first line holds three numbers, or four.
    let first_line: Vec<(usize, &str)> = first.split_whitespace().map(|w| (head + 1, w)).collect();
    let mut words = lines.flat_map(|(i, l)| l.split_whitespace().map(move |w| (i + 1, w)));
    let mut next = |what: &str| words.next().ok_or_else(|| format!("end of file: expected {what}"));
    let count = |(line, w): (usize, &str)| -> Result<u32, String> {
        w.parse::<u32>()
            .map_err(|_| format!("{line}: expected a count, got {w:?}"))
    };
    let (nodes, switches, links) = match first_line[..] {
        [a, b, c] => (count(a)?, count(b)?, count(c)?),
        [a, b, _, d] => (count(a)?, count(b)?, count(d)?),
        _ => {
            return Err(format!(
                "{}: the first line is `nodes switches links` (or `nodes switches tors links`)",
                first_line[0].0
            ))
        }
    };
    if nodes == 0 || switches >= nodes || nodes > 1 << 20 {
        return Err(format!(
            "{}: {nodes} nodes with {switches} switches (at least one host; at most 2^20 nodes)",
            first_line[0].0
        ));
    }
    let hosts = nodes - switches;
    for _ in 0..switches {
        let (line, w) = next("a switch's node id")?;
        let id = count((line, w))?;
        if id < hosts || id >= nodes {
            return Err(format!(
                "{line}: switch {id}: switches must be nodes {hosts} ..= {} (hosts first: the flow files name hosts by node id)",
                nodes - 1
            ));
        }
    }
    let mut n = Network::default();
    for i in 0..nodes {
        n.add_node(if i < hosts { NodeKind::Host } else { NodeKind::Switch });
    }
    for _ in 0..links {
        let (line, a) = next("a link: a b rate delay error_rate")?;
        let a = count((line, a))?;
        let b = count(next("the link's other node")?)?;
        let (_, rate) = next("the link's rate")?;
        let (_, delay) = next("the link's delay")?;
        let (_, loss) = next("the link's error rate")?;
        if a >= nodes || b >= nodes || a == b {
            return Err(format!("{line}: link {a}-{b}: nodes are 0 ..= {}", nodes - 1));
        }
        let bps = ns3_rate(rate).ok_or_else(|| format!("{line}: rate {rate:?}: expected b/s, e.g. 100Gbps"))?;
        let delay_ps = ns3_delay_ps(delay).ok_or_else(|| format!("{line}: delay {delay:?}: expected e.g. 1us"))?;
        if loss.parse::<f64>() != Ok(0.0) {
            return Err(format!(
                "{line}: error rate {loss}: hal-sim's links lose no packets (0 only)"
            ));
        }
        n.link(a, b, bps, Ps::from_ps(delay_ps));
    }
    Ok(n)
}

/// A number followed by a unit of `units` (its scale beside it; "" for
/// none), scaled: `1.5Mbps`, `1000ns`, `25000000000.0`. `None` for a unit
/// not listed or a number that does not parse.
fn with_unit(s: &str, units: &[(&str, f64)]) -> Option<f64> {
    let split = s.find(|c: char| c.is_ascii_alphabetic() && c != 'e').unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let scale = units.iter().find(|(u, _)| *u == unit)?.1;
    Some(num.parse::<f64>().ok()? * scale)
}

/// A rate as ns-3's `DataRate` reads it: a number of b/s, with or without
/// a unit (bps, kbps, Mbps, Gbps, Tbps, or b/s, kb/s, …); 1 b/s ..= 2 Tb/s.
fn ns3_rate(s: &str) -> Option<u64> {
    const UNITS: &[(&str, f64)] = &[
        ("", 1.0),
        ("bps", 1.0),
        ("b/s", 1.0),
        ("kbps", 1e3),
        ("Kbps", 1e3),
        ("kb/s", 1e3),
        ("Mbps", 1e6),
        ("Mb/s", 1e6),
        ("Gbps", 1e9),
        ("Gb/s", 1e9),
        ("Tbps", 1e12),
        ("Tb/s", 1e12),
    ];
    let v = with_unit(s, UNITS)?;
    (v.is_finite() && (1.0..=2e12).contains(&v) && v.fract() == 0.0).then_some(v as u64)
}

/// A delay as ns-3's `Time` reads it: a number with a unit (s, ms, us, ns,
/// ps; seconds without one), in ps; 0 ..= 1 s, a whole number of ps.
fn ns3_delay_ps(s: &str) -> Option<u64> {
    const UNITS: &[(&str, f64)] = &[
        ("", 1e12),
        ("s", 1e12),
        ("ms", 1e9),
        ("us", 1e6),
        ("ns", 1e3),
        ("ps", 1.0),
    ];
    let v = with_unit(s, UNITS)?.round();
    (v.is_finite() && (0.0..=1e12).contains(&v)).then_some(v as u64)
}

/// The network of one of the built-in shapes.
fn build_shape(t: &Topology) -> Network {
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
        // Read from a file by `build`.
        Shape::Ns3 { .. } | Shape::Htsim { .. } => {}
    }
    n.compute_routes();
    n
}

/// Degrades `failed` links of network `n` of `shape` to a quarter of their
/// rate, as uet-htsim's `-failed N` does (`FatTreeTopology`,
/// `_failed_link_ratio` 0.25; the switch's port buffer follows, and its
/// ECN thresholds with the port's speed). In a three-tier fat-tree, the
/// first `failed` core-to-aggregation downlinks, aggregation switch by
/// aggregation switch (pod 0's first, its core links in order): one
/// direction only. In a leaf-spine, every leaf's links to the first
/// `failed` spines, both ways. Each degraded port is listed in the
/// network's `degraded`.
fn fail_links(mut n: Network, shape: &Shape, failed: u32) -> Result<Network, String> {
    if failed == 0 {
        return Ok(n);
    }
    let switches: Vec<u32> = (0..n.nodes.len() as u32)
        .filter(|&i| n.nodes[i as usize].kind == NodeKind::Switch)
        .collect();
    let mut pairs = Vec::new();
    match *shape {
        Shape::FatTree {
            pods,
            tors_per_pod,
            aggs_per_pod,
            cores_per_agg,
            ..
        } => {
            // Nodes as `build_shape` made them: ToRs, aggregation switches,
            // cores; aggregation switch j of each pod reaches core group j.
            let (aggs, cpa) = (aggs_per_pod.0, cores_per_agg.0);
            let (agg0, core0) = (pods.0 * tors_per_pod.0, pods.0 * (tors_per_pod.0 + aggs));
            let all = pods.0 * aggs * cpa;
            if failed > all {
                return Err(format!("failed_links: {failed}, but the fat-tree has {all} core links"));
            }
            for i in 0..failed {
                let (a, c) = (i / cpa, i % cpa);
                let agg = switches[(agg0 + a) as usize];
                let core = switches[(core0 + (a % aggs) * cpa + c) as usize];
                pairs.push((core, agg));
            }
        }
        Shape::LeafSpine { leaves, spines, .. } => {
            if failed > spines.0 {
                return Err(format!(
                    "failed_links: {failed}, but the leaf-spine has {} spines",
                    spines.0
                ));
            }
            for l in 0..leaves.0 {
                for sp in 0..failed {
                    let (leaf, spine) = (switches[l as usize], switches[(leaves.0 + sp) as usize]);
                    pairs.push((spine, leaf));
                    pairs.push((leaf, spine));
                }
            }
        }
        _ => return Err("failed_links: applies to fat-trees and leaf-spines".into()),
    }
    for (from, to) in pairs {
        let node = &mut n.nodes[from as usize];
        if let Some(port) = node.ports.iter().position(|l| l.peer.0 == to) {
            node.ports[port].bps /= 4;
            n.degraded.push((from, port as u16));
        }
    }
    Ok(n)
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
    use crate::model::net::{flow_hash, Ecmp};
    use crate::setup::scenario::DelayNs;

    fn fat_tree(pods: u32, tors: u32, per: u32, aggs: u32, cpa: u32) -> Network {
        build_shape(&Topology {
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
            failed_links: 0,
        })
    }

    /// Hosts behind one switch share a column of the routing table, and
    /// every (node, host) has the lists a column of its own gives, in
    /// either ECMP's order: on fat-trees of one and several hosts a ToR,
    /// and on a dumbbell (hosts reached through one of two switches).
    #[test]
    fn shared_route_columns_hold_every_hosts_routes() {
        let dumbbell = build_shape(&Topology {
            shape: Shape::Dumbbell {
                left: Count(3),
                right: Count(2),
                bottleneck_gbps: None,
            },
            link_gbps: Gbps(100),
            link_delay_ns: DelayNs(1000),
            failed_links: 0,
        });
        for (mut n, columns) in [
            (fat_tree(4, 2, 2, 2, 2), 8),
            (fat_tree(2, 2, 1, 2, 1), 4),
            (fat_tree(3, 2, 4, 2, 3), 6),
            (dumbbell, 2),
        ] {
            for ecmp in [Ecmp::FlowHash, Ecmp::Reference] {
                n.set_ecmp(ecmp);
                assert_eq!(n.route_columns(), columns);
                let own = n.per_host_routes();
                for u in 0..n.nodes.len() as u32 {
                    for h in 0..n.hosts.len() as u32 {
                        assert_eq!(n.routes.get(u, h), own.get(u, h), "node {u} to host {h}, {ecmp:?}");
                    }
                }
                // A host has no route to itself, and out of range is none.
                assert!(n.routes.get(n.hosts[0], 0).is_empty());
                assert!(n.routes.get(0, n.hosts.len() as u32).is_empty());
            }
        }
    }

    /// uet-htsim's `-failed N`: on a k = 4 fat-tree the first core links
    /// of pod 0's first aggregation switch, core to aggregation only; on
    /// a leaf-spine every leaf's links to the first spines, both ways; a
    /// quarter of the rate each.
    #[test]
    fn failed_links_run_at_a_quarter_of_their_rate() {
        let k4 = |failed| Topology {
            shape: Shape::FatTree {
                pods: Count(4),
                tors_per_pod: Count(2),
                hosts_per_tor: Count(2),
                aggs_per_pod: Count(2),
                cores_per_agg: Count(2),
                fabric_gbps: None,
            },
            link_gbps: Gbps(100),
            link_delay_ns: DelayNs(1000),
            failed_links: failed,
        };
        let slow = |n: &Network| -> Vec<(u32, u32)> {
            let mut v = Vec::new();
            for (i, node) in n.nodes.iter().enumerate() {
                for l in node.ports.iter().filter(|l| l.bps == 25_000_000_000) {
                    v.push((i as u32, l.peer.0));
                }
            }
            v
        };
        let dir = Path::new(".");
        // Hosts 0-15, ToRs 16-23, aggregation switches 24-31, cores 32-35;
        // aggregation switch 24 reaches cores 32 and 33.
        let n = build(&k4(1), dir).unwrap();
        assert_eq!((slow(&n), n.degraded.len()), (vec![(32, 24)], 1));
        let n = build(&k4(3), dir).unwrap();
        assert_eq!(slow(&n), vec![(32, 24), (33, 24), (34, 25)]);
        assert!(build(&k4(17), dir)
            .unwrap_err()
            .starts_with("failed_links: 17, but the fat-tree has 16 core links"));
        let ls = Topology {
            shape: Shape::LeafSpine {
                leaves: Count(3),
                spines: Count(2),
                hosts_per_leaf: Count(2),
                fabric_gbps: None,
            },
            failed_links: 1,
            ..k4(0)
        };
        // Hosts 0-5, leaves 6-8, spines 9-10.
        let n = build(&ls, dir).unwrap();
        assert_eq!(slow(&n), vec![(6, 9), (7, 9), (8, 9), (9, 6), (9, 7), (9, 8)]);
        let star = Topology {
            shape: Shape::Star { hosts: Count(2) },
            failed_links: 1,
            ..k4(0)
        };
        assert!(build(&star, dir).unwrap_err().contains("fat-trees and leaf-spines"));
    }

    fn switches(n: &Network) -> usize {
        n.nodes.iter().filter(|x| x.kind == NodeKind::Switch).count()
    }

    /// uet-htsim's `leaf_spine_1024.topo` read from a file: 1024 hosts on
    /// 32 ToRs, 32 spines, 1 µs links; a path between ToRs crosses 3
    /// switches with 32 choices; host links must run at `link_gbps`.
    #[test]
    fn an_htsim_topology_file_builds_its_leaf_spine() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("ls.topo"),
            "Nodes 1024\nTiers 2\nPodsize 1024\n\nTier 0\nDownlink_speed_Gbps 100\nRadix_Down 32\n\
             Radix_Up 32\nDownlink_Latency_ns 1000\nSwitch_Latency_ns 0\n\nTier 1\nDownlink_speed_Gbps 100\n\
             Radix_Down 32\nDownlink_Latency_ns 1000\nSwitch_Latency_ns 0\n",
        )
        .unwrap();
        let t = |gbps| Topology {
            shape: Shape::Htsim { path: "ls.topo".into() },
            link_gbps: Gbps(gbps),
            link_delay_ns: DelayNs(0),
            failed_links: 0,
        };
        let n = build(&t(100), dir.path()).unwrap();
        assert_eq!((n.hosts.len(), switches(&n)), (1024, 64));
        let (a, b) = (n.hosts[0], n.hosts[1000]);
        let path = n.path(a, b, 0);
        assert_eq!(path.len(), 1 + 3);
        let link = &n.nodes[a as usize].ports[path[0].1 as usize];
        assert_eq!(link.delay_ps.as_ns(), 1_000);
        let spines: std::collections::HashSet<_> = (0..512).map(|f| n.path(a, b, flow_hash(f))[2].0).collect();
        assert_eq!(spines.len(), 32);
        let e = build(&t(400), dir.path()).unwrap_err();
        assert!(e.contains("link_gbps"), "{e}");
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

    /// `switch.ecmp_salt`: salt 0 is the unsalted hash; another salt draws
    /// the flows' paths anew (a permutation's flows land on other cores,
    /// and which flows share a core changes) while still spreading them
    /// over every core.
    #[test]
    fn a_salt_draws_the_paths_anew() {
        use crate::model::net::salted_flow_hash;
        let n = fat_tree(5, 4, 16, 4, 4);
        let (a, other_pod) = (n.hosts[0], n.hosts[64]);
        let core = |f: u32, salt: u32| n.path(a, other_pod, salted_flow_hash(f, salt))[3].0;
        for f in 0..1000 {
            assert_eq!(salted_flow_hash(f, 0), flow_hash(f));
        }
        let draw = |salt: u32| (0..64).map(|f| core(f, salt)).collect::<Vec<_>>();
        let unsalted = draw(0);
        for salt in 1..=8 {
            let salted = draw(salt);
            let moved = unsalted.iter().zip(&salted).filter(|(x, y)| x != y).count();
            // 15 of 16 cores differ for a flow drawn anew: about 60 of 64.
            assert!(moved > 40, "salt {salt}: {moved} of 64 flows moved");
            let cores: std::collections::HashSet<_> = (0..256).map(|f| core(f, salt)).collect();
            assert_eq!(cores.len(), 16, "salt {salt}: every core carries some flow");
        }
        assert_ne!(draw(1), draw(2));
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

    /// The reference simulator's own 2-to-1 file (hosts 0-2 on switch 3,
    /// 100Gbps, 1000ns) is the `incast` shape with two senders, port by
    /// port.
    #[test]
    fn the_reference_two_to_one_file_is_the_incast_shape() {
        let file = ns3_topology(include_str!("../../../scenarios/reference/twotoone-topology.txt")).unwrap();
        let shape = build_shape(&Topology {
            shape: Shape::Incast { senders: Count(2) },
            link_gbps: Gbps(100),
            link_delay_ns: DelayNs(1000),
            failed_links: 0,
        });
        assert_eq!(file.hosts, shape.hosts);
        for (a, b) in file.nodes.iter().zip(&shape.nodes) {
            assert_eq!(a.kind, b.kind);
            let key = |l: &crate::model::net::Link| (l.peer, l.bps, l.delay_ps);
            assert_eq!(
                a.ports.iter().map(key).collect::<Vec<_>>(),
                b.ports.iter().map(key).collect::<Vec<_>>()
            );
        }
    }

    /// The PowerTCP authors' burst topology (`276 20 8 288`: four numbers
    /// on the first line, rates in plain b/s): 256 hosts at 25 Gb/s, 32 on
    /// each of 8 ToRs; each ToR to 2 aggregation switches and each of those
    /// to 2 of 4 cores at 100 Gb/s, the core links 5 µs long. From host 0:
    /// host 16 under the same ToR, host 32 in the same pair of ToRs, host
    /// 64 across the cores.
    #[test]
    fn the_powertcp_burst_topology_file() {
        let mut n = ns3_topology(include_str!("../../../scenarios/reference/powertcp-topology256.txt")).unwrap();
        n.compute_routes();
        assert_eq!((n.hosts.len(), switches(&n)), (256, 20));
        assert!(n
            .hosts
            .iter()
            .all(|&h| n.nodes[h as usize].ports[0].bps == 25_000_000_000));
        assert_eq!(n.nodes[0].ports[0].delay_ps, Ps::from_ns(1000));
        assert_eq!(n.path(0, 16, 0).len(), 1 + 1);
        assert_eq!(n.path(0, 32, 0).len(), 1 + 3);
        let far = n.path(0, 64, 0);
        assert_eq!(far.len(), 1 + 5);
        let (agg, p) = far[2];
        assert_eq!(n.nodes[agg as usize].ports[p as usize].delay_ps, Ps::from_ns(5000));
        assert_eq!(n.nodes[agg as usize].ports[p as usize].bps, 100_000_000_000);
    }

    #[test]
    fn ns3_rates_and_delays() {
        assert_eq!(ns3_rate("25000000000.0"), Some(25_000_000_000));
        assert_eq!(ns3_rate("100Gbps"), Some(100_000_000_000));
        assert_eq!(ns3_rate("400Gb/s"), Some(400_000_000_000));
        assert_eq!(ns3_rate("1.5Mbps"), Some(1_500_000));
        for bad in ["", "Gbps", "100Gbit", "-1", "0", "1e13", "0.5"] {
            assert_eq!(ns3_rate(bad), None, "{bad}");
        }
        assert_eq!(ns3_delay_ps("1us"), Some(1_000_000));
        assert_eq!(ns3_delay_ps("1000ns"), Some(1_000_000));
        assert_eq!(ns3_delay_ps("0.000005"), Some(5_000_000));
        assert_eq!(ns3_delay_ps("2ms"), Some(2_000_000_000));
        for bad in ["1 us", "us", "1fortnight", "-1us", "2s"] {
            assert_eq!(ns3_delay_ps(bad), None, "{bad}");
        }
    }

    /// A file that is not a topology hal-sim can run says which line and why.
    #[test]
    fn bad_topology_files_name_the_line() {
        for (text, says) in [
            ("", "end of file"),
            ("3 1\n2\n", "1: the first line is"),
            ("3 1 2\n3\n", "2: switch 3"),
            ("3 1 2\n0\n1 0 100Gbps 1us 0\n", "switches must be nodes 2"),
            ("3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0.01\n", "4: error rate"),
            ("3 1 2\n2\n0 2 100Gbit 1us 0\n", "3: rate"),
            ("3 1 2\n2\n0 2 100Gbps 1us 0\n", "end of file: expected a link"),
            ("3 1 2\n2\n0 9 100Gbps 1us 0\n1 2 1Gbps 1us 0\n", "3: link 0-9"),
            ("x 1 2\n", "1: expected a count"),
        ] {
            let e = ns3_topology(text).err().unwrap_or_default();
            assert!(e.contains(says), "{text:?}: {e:?} should say {says:?}");
        }
    }
}
