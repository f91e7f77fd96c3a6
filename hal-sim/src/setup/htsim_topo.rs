//! htsim's fat-tree topology files (`.topo`), as uet-htsim's
//! `topologies/` ship them (`leaf_spine_1024.topo`,
//! `leaf_spine_8192_400g.topo`, `fat_tree_1024_4os.topo`, …), resolved to
//! the leaf-spine or three-tier fat-tree they describe.
//!
//! ```text
//! Nodes 1024          hosts
//! Tiers 2             2: ToRs and spines; 3: ToRs, aggregation, cores
//! Podsize 1024        hosts a pod
//!
//! Tier 0              the ToRs
//! Downlink_speed_Gbps 100
//! Radix_Down 32       hosts a ToR
//! Radix_Up 32         uplinks a ToR
//! Downlink_Latency_ns 1000
//! Switch_Latency_ns 0
//! Oversubscribed 1    down / up capacity (default 1)
//! Bundle 1            parallel links to each switch above (default 1)
//!
//! Tier 1              aggregation switches (spines in two tiers), then Tier 2
//! ```
//!
//! The reading and the sizes follow uet-htsim's `FatTreeTopologyCfg`
//! (`fat_tree_topology.cpp`, `read_cfg` and `set_custom_params`; keywords
//! in any case): pods = Nodes / Podsize, ToRs a pod = Podsize /
//! Radix_Down(0), ToR uplinks = Nodes · speed(0) / (speed(1) ·
//! Oversubscribed(0)), aggregation switches a pod = ToR uplinks / (pods ·
//! Radix_Down(1)); with three tiers, aggregation uplinks = ToR uplinks ·
//! speed(1) / (speed(2) · Oversubscribed(1)) and cores = those /
//! Radix_Down(2). What hal-sim's shapes cannot hold is refused with its
//! reason: parallel links (`Bundle` above 1), switch latency (the
//! scenario's `[switch] latency_ns` gives one for every switch), per-tier
//! queue sizes (`[switch]` sets buffers), different latencies on
//! different tiers, and different speeds above the ToRs.

use crate::setup::scenario::{Count, DelayNs, Gbps, Shape};

/// A topology file's network, in hal-sim's terms.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    /// The leaf-spine or fat-tree.
    pub shape: Shape,
    /// The hosts' links (tier 0's downlinks).
    pub link_gbps: Gbps,
    /// Every link's propagation delay.
    pub link_delay_ns: DelayNs,
    /// The oversubscription, uet-htsim's `get_oversubscription_ratio`:
    /// tier 0's `Oversubscribed`, times tier 1's in three tiers.
    pub oversubscription: u64,
}

/// One tier's settings.
#[derive(Clone, Copy, Debug, Default)]
struct Tier {
    speed_gbps: u64,
    radix_down: u64,
    radix_up: u64,
    latency_ns: u64,
    switch_latency_ns: u64,
    oversub: u64,
    bundle: u64,
    seen: bool,
}

/// Reads the `.topo` text; errors are `line N: message` or, for the
/// sizes, what does not divide.
pub fn resolve(text: &str) -> Result<Resolved, String> {
    let (mut nodes, mut tiers, mut podsize) = (0u64, 0u64, 0u64);
    let mut t = [Tier {
        oversub: 1,
        bundle: 1,
        ..Tier::default()
    }; 3];
    let mut current: Option<usize> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let tokens: Vec<&str> = raw.split_whitespace().collect();
        let Some(first) = tokens.first() else { continue };
        if first.starts_with('#') {
            continue;
        }
        let key = first.to_ascii_lowercase();
        let value = || -> Result<u64, String> {
            let v = tokens
                .get(1)
                .ok_or_else(|| format!("line {line}: {first} needs a value"))?;
            v.parse()
                .map_err(|_| format!("line {line}: {first} takes an unsigned integer, got {v:?}"))
        };
        let tier = |current: Option<usize>| -> Result<usize, String> {
            current.ok_or_else(|| format!("line {line}: {first} before any `Tier` line"))
        };
        match key.as_str() {
            "nodes" => nodes = value()?,
            "tiers" => tiers = value()?,
            "podsize" => podsize = value()?,
            "tier" => {
                let n = value()?;
                if n > 2 {
                    return Err(format!("line {line}: tier {n}: tiers are 0, 1 and 2"));
                }
                if t[n as usize].seen {
                    return Err(format!("line {line}: tier {n} is given twice"));
                }
                t[n as usize].seen = true;
                current = Some(n as usize);
            }
            "downlink_speed_gbps" => t[tier(current)?].speed_gbps = value()?,
            "radix_down" => t[tier(current)?].radix_down = value()?,
            "radix_up" => t[tier(current)?].radix_up = value()?,
            "downlink_latency_ns" => t[tier(current)?].latency_ns = value()?,
            "switch_latency_ns" => t[tier(current)?].switch_latency_ns = value()?,
            "oversubscribed" => t[tier(current)?].oversub = value()?,
            "bundle" => t[tier(current)?].bundle = value()?,
            "queue_up" | "queue_down" => {
                return Err(format!(
                    "line {line}: {first}: per-tier queue sizes are not modelled (set [switch] port_buffer_bytes)"
                ))
            }
            _ => return Err(format!("line {line}: unknown attribute {first:?}")),
        }
    }
    if nodes == 0 || podsize == 0 {
        return Err("the header needs `Nodes` and `Podsize`".into());
    }
    if tiers != 2 && tiers != 3 {
        return Err(format!("`Tiers` must be 2 or 3, got {tiers}"));
    }
    let n = tiers as usize;
    for (k, x) in t.iter().enumerate().take(n) {
        if !x.seen {
            return Err(format!("no `Tier {k}` section"));
        }
        if x.speed_gbps == 0 || x.radix_down == 0 || x.latency_ns == 0 || x.oversub == 0 {
            return Err(format!(
                "tier {k} needs Downlink_speed_Gbps, Radix_Down, Downlink_Latency_ns (and Oversubscribed ≥ 1)"
            ));
        }
        if k + 1 < n && x.radix_up == 0 {
            return Err(format!("tier {k} needs Radix_Up"));
        }
        if x.bundle != 1 {
            return Err(format!(
                "tier {k}: Bundle {}: parallel links are not modelled",
                x.bundle
            ));
        }
        if x.switch_latency_ns != 0 {
            return Err(format!(
                "tier {k}: Switch_Latency_ns {}: a file's switch latency is not read; [switch] latency_ns sets one for every switch",
                x.switch_latency_ns
            ));
        }
        if x.latency_ns != t[0].latency_ns {
            return Err(format!(
                "tier {k}'s latency {} ns differs from tier 0's {} ns: one latency for every link is modelled",
                x.latency_ns, t[0].latency_ns
            ));
        }
    }
    if n == 3 && t[2].speed_gbps != t[1].speed_gbps {
        return Err("tiers 1 and 2 run at different speeds: one fabric speed above the ToRs is modelled".into());
    }
    // Products of the file's numbers, each of which may be any u64.
    let product = |what: &str, a: u64, b: u64| -> Result<u64, String> {
        a.checked_mul(b).ok_or_else(|| format!("{what}: {a} × {b} passes 2^64"))
    };
    let divide = |what: &str, a: u64, b: u64| -> Result<u64, String> {
        if b == 0 || !a.is_multiple_of(b) {
            Err(format!("{what}: {a} is not a multiple of {b}"))
        } else {
            Ok(a / b)
        }
    };
    let pods = divide("Nodes / Podsize", nodes, podsize)?;
    let tors_per_pod = divide("Podsize / tier 0's Radix_Down", podsize, t[0].radix_down)?;
    // Tier k's uplinks, from the links below it: they carry what comes
    // up at tier k's speed, over Oversubscribed(k), at tier k + 1's.
    let uplinks = |k: usize, below: u64| {
        let what = format!(
            "tier {k}'s uplinks (links below · speed {k} / (speed {} · Oversubscribed {k}))",
            k + 1
        );
        divide(
            &what,
            product(&what, below, t[k].speed_gbps)?,
            product(&what, t[k + 1].speed_gbps, t[k].oversub)?,
        )
    };
    // Each switch of tier k must have Radix_Up(k) of them.
    let radix_up = |k: usize, each: u64, of: &str| {
        if each == t[k].radix_up {
            Ok(each)
        } else {
            Err(format!(
                "tier {k}'s Radix_Up {} does not match the {each} {of} the speeds and radices give",
                t[k].radix_up
            ))
        }
    };
    let tor_uplinks = uplinks(0, nodes)?;
    let aggs_per_pod = radix_up(
        0,
        divide(
            "aggregation switches a pod (ToR uplinks / (pods · tier 1's Radix_Down))",
            tor_uplinks,
            product("pods · tier 1's Radix_Down", pods, t[1].radix_down)?,
        )?,
        "aggregation switches a pod",
    )?;
    let count = |what: &str, v: u64| -> Result<Count, String> {
        u32::try_from(v)
            .ok()
            .filter(|&v| (1..=100_000).contains(&v))
            .map(Count)
            .ok_or_else(|| format!("{what} = {v} is outside 1 ..= 100 000"))
    };
    let gbps = |k: usize| {
        u32::try_from(t[k].speed_gbps)
            .ok()
            .filter(|&g| (1..=1600).contains(&g))
            .map(Gbps)
            .ok_or_else(|| format!("tier {k}'s speed {} Gb/s is outside 1 ..= 1600", t[k].speed_gbps))
    };
    let fabric_gbps = Some(gbps(1)?);
    let shape = if n == 2 {
        if pods != 1 {
            return Err(format!(
                "two tiers with {pods} pods: a leaf-spine has one (Podsize = Nodes)"
            ));
        }
        Shape::LeafSpine {
            leaves: count("ToRs", tors_per_pod)?,
            spines: count("spines", aggs_per_pod)?,
            hosts_per_leaf: count("hosts a ToR", t[0].radix_down)?,
            fabric_gbps,
        }
    } else {
        let cores = divide(
            "cores (aggregation uplinks / tier 2's Radix_Down)",
            uplinks(1, tor_uplinks)?,
            t[2].radix_down,
        )?;
        let cores_per_agg = radix_up(
            1,
            divide("cores an aggregation switch reaches", cores, aggs_per_pod)?,
            "cores an aggregation switch reaches",
        )?;
        Shape::FatTree {
            pods: count("pods", pods)?,
            tors_per_pod: count("ToRs a pod", tors_per_pod)?,
            hosts_per_tor: count("hosts a ToR", t[0].radix_down)?,
            aggs_per_pod: count("aggregation switches a pod", aggs_per_pod)?,
            cores_per_agg: count("cores an aggregation switch reaches", cores_per_agg)?,
            fabric_gbps,
        }
    };
    Ok(Resolved {
        shape,
        link_gbps: gbps(0)?,
        link_delay_ns: Some(t[0].latency_ns)
            .filter(|&d| d <= 1_000_000_000)
            .map(DelayNs)
            .ok_or_else(|| format!("tier 0's latency {} ns is above 1 s", t[0].latency_ns))?,
        oversubscription: match n {
            2 => t[0].oversub,
            _ => t[0].oversub.saturating_mul(t[1].oversub),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// uet-htsim's `topologies/leaf_spine_1024.topo`: 32 ToRs of 32 hosts,
    /// 32 spines, 100 Gb/s, 1 µs links.
    const LEAF_SPINE_1024: &str = "Nodes 1024\nTiers 2\nPodsize 1024\n\nTier 0\nDownlink_speed_Gbps 100\n\
        Radix_Down 32\nRadix_Up 32\nDownlink_Latency_ns 1000\nSwitch_Latency_ns 0\n\nTier 1\n\
        Downlink_speed_Gbps 100\nRadix_Down 32\nDownlink_Latency_ns 1000\nSwitch_Latency_ns 0\n";

    #[test]
    fn the_shipped_leaf_spines_resolve() {
        let r = resolve(LEAF_SPINE_1024).unwrap();
        assert_eq!(
            r.shape,
            Shape::LeafSpine {
                leaves: Count(32),
                spines: Count(32),
                hosts_per_leaf: Count(32),
                fabric_gbps: Some(Gbps(100)),
            }
        );
        assert_eq!((r.link_gbps, r.link_delay_ns), (Gbps(100), DelayNs(1000)));
        // `leaf_spine_8192_400g.topo`: 128 ToRs of 64 hosts, 64 spines.
        let big = "Nodes 8192\nTiers 2\nPodsize 8192\nTier 0\nDownlink_speed_Gbps 400\nRadix_Down 64\n\
            Radix_Up 64\nDownlink_Latency_ns 1000\nOversubscribed 1\nSwitch_Latency_ns 0\nTier 1\n\
            Downlink_speed_Gbps 400\nRadix_Down 128\nDownlink_Latency_ns 1000\nSwitch_Latency_ns 0\n";
        let r = resolve(big).unwrap();
        assert_eq!(
            r.shape,
            Shape::LeafSpine {
                leaves: Count(128),
                spines: Count(64),
                hosts_per_leaf: Count(64),
                fabric_gbps: Some(Gbps(400)),
            }
        );
        // `leaf_spine_1024_oversub.topo`, 4:1: 8 uplinks, so 8 spines.
        let oversub = "Nodes 1024\nTiers 2\nPodsize 1024\nTier 0\nDownlink_speed_Gbps 100\nRadix_Down 32\n\
            Radix_Up 8\nOversubscribed 4\nDownlink_Latency_ns 1000\nSwitch_Latency_ns 0\nTier 1\n\
            Downlink_speed_Gbps 100\nRadix_Down 32\nDownlink_Latency_ns 1000\nSwitch_Latency_ns 0\n";
        assert!(matches!(
            resolve(oversub).unwrap().shape,
            Shape::LeafSpine { spines: Count(8), .. }
        ));
    }

    /// uet-htsim's `topologies/fat_tree_1024_4os.topo`: 16 pods of 64
    /// hosts, 8 ToRs and 2 aggregation switches a pod (4:1 at the ToRs),
    /// 16 cores, 200 Gb/s.
    #[test]
    fn the_shipped_three_tier_fat_tree_resolves() {
        let text = "# Test 3-tier FatTree\nNodes 1024\nTiers 3\nPodsize 64\n\nTier 0\nOversubscribed 4\n\
            Downlink_speed_Gbps 200\nRadix_Down 8\nRadix_Up 2\nDownlink_Latency_ns 1000\nSwitch_Latency_ns 0\n\n\
            Tier 1\nOversubscribed 1\nDownlink_speed_Gbps 200\nRadix_Down 8\nRadix_Up 8\nDownlink_Latency_ns 1000\n\
            Switch_Latency_ns 0\nBundle 1\n\nTier 2\nDownlink_speed_Gbps 200\nRadix_Down 16\n\
            Downlink_Latency_ns 1000\nSwitch_Latency_ns 0\nBundle 1\n";
        let r = resolve(text).unwrap();
        assert_eq!(
            r.shape,
            Shape::FatTree {
                pods: Count(16),
                tors_per_pod: Count(8),
                hosts_per_tor: Count(8),
                aggs_per_pod: Count(2),
                cores_per_agg: Count(8),
                fabric_gbps: Some(Gbps(200)),
            }
        );
        assert_eq!(r.link_gbps, Gbps(200));
    }

    /// uet-htsim's own files (kept in `scenarios/reference/uet-htsim/`,
    /// from its `topologies/` at 40ccb05).
    #[test]
    fn uet_htsims_own_topology_files_resolve() {
        let leaf_spine = |text: &str| match resolve(text).unwrap().shape {
            Shape::LeafSpine {
                leaves,
                spines,
                hosts_per_leaf,
                ..
            } => (leaves.0, spines.0, hosts_per_leaf.0),
            s => panic!("{s:?}"),
        };
        assert_eq!(
            leaf_spine(include_str!(
                "../../../scenarios/reference/uet-htsim/leaf_spine_1024.topo"
            )),
            (32, 32, 32)
        );
        assert_eq!(
            leaf_spine(include_str!(
                "../../../scenarios/reference/uet-htsim/leaf_spine_1024_oversub.topo"
            )),
            (32, 8, 32)
        );
        assert_eq!(
            leaf_spine(include_str!(
                "../../../scenarios/reference/uet-htsim/leaf_spine_8192_400g.topo"
            )),
            (128, 64, 64)
        );
        let r = resolve(include_str!(
            "../../../scenarios/reference/uet-htsim/fat_tree_1024_4os.topo"
        ))
        .unwrap();
        assert!(matches!(
            r.shape,
            Shape::FatTree {
                pods: Count(16),
                aggs_per_pod: Count(2),
                cores_per_agg: Count(8),
                ..
            }
        ));
        // The 128-host tree its default k = 8 fat-tree builds: 8 pods of 4
        // ToRs of 4 hosts, 4 aggregation switches a pod, 16 cores.
        let r = resolve(include_str!(
            "../../../scenarios/reference/uet-htsim/fat_tree_128_1os.topo"
        ))
        .unwrap();
        assert_eq!(
            r.shape,
            Shape::FatTree {
                pods: Count(8),
                tors_per_pod: Count(4),
                hosts_per_tor: Count(4),
                aggs_per_pod: Count(4),
                cores_per_agg: Count(4),
                fabric_gbps: Some(Gbps(100)),
            }
        );
    }

    #[test]
    fn what_no_shape_holds_is_refused_with_its_reason() {
        let cases = [
            (
                LEAF_SPINE_1024.replace("Switch_Latency_ns 0\n\nTier 1", "Bundle 2\n\nTier 1"),
                "parallel links",
            ),
            (
                LEAF_SPINE_1024.replacen("Switch_Latency_ns 0", "Switch_Latency_ns 50", 1),
                "switch latency",
            ),
            (
                LEAF_SPINE_1024.replacen("Downlink_Latency_ns 1000", "Downlink_Latency_ns 500", 1),
                "one latency",
            ),
            (LEAF_SPINE_1024.replace("Radix_Up 32", "Radix_Up 16"), "Radix_Up 16"),
            (LEAF_SPINE_1024.replace("Tiers 2", "Tiers 4"), "2 or 3"),
            (LEAF_SPINE_1024.replace("Podsize 1024", "Podsize 1000"), "multiple"),
            (
                LEAF_SPINE_1024.replace("Radix_Up 32", "Radix_Up 32\nQueue_Up 100"),
                "queue sizes",
            ),
            (
                LEAF_SPINE_1024.replace("Radix_Up 32", "Radix_Up 32\nColour 3"),
                "line 9: unknown",
            ),
            ("Nodes 16\nTiers 2\nPodsize 16\n".to_string(), "no `Tier 0`"),
            // Numbers whose products pass 2^64, or whose speed or latency
            // no link has (an oversubscription of 2^63 multiplied out wrapped, and a
            // speed of 2^32 + 100 Gb/s was cut to 100).
            (
                LEAF_SPINE_1024.replacen("Radix_Up 32", "Radix_Up 32\nOversubscribed 9223372036854775807", 1),
                "passes 2^64",
            ),
            (
                LEAF_SPINE_1024.replacen("Downlink_speed_Gbps 100", "Downlink_speed_Gbps 4294967396", 2),
                "outside 1 ..= 1600",
            ),
            (
                LEAF_SPINE_1024.replace("Downlink_Latency_ns 1000", "Downlink_Latency_ns 18446744073709551615"),
                "above 1 s",
            ),
        ];
        for (text, says) in cases {
            let e = resolve(&text).unwrap_err();
            assert!(e.contains(says), "{e:?} should say {says:?}");
        }
    }
}
