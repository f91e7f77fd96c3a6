//! uet-htsim's command line (`htsim_uec`, ultraethernet/uet-htsim at
//! commit 40ccb05, `htsim/sim/datacenter/main_uec.cpp`) read into a
//! scenario, and the lines of its output that its `validate.py` reads:
//! `hal-sim uet-htsim -tm FILE …` runs what `htsim_uec -tm FILE …` runs.
//!
//! What it leaves out takes uet-htsim's defaults: packets of 4150 bytes
//! (64 of them header) and ACKs of 64; the three-tier k-ary fat-tree sized
//! to the matrix (k³/4 hosts; with `-tiers 2` K leaves of K/2 hosts and
//! K/2 spines, K²/2 hosts), 1 µs links at 100 Gb/s; the network RTT of
//! its `calculate_rtt` (twice the diameter's propagation, plus a data
//! packet's and an ACK's serialization at each of the diameter's links)
//! and NSCC's parameters derived from it (`initNsccParams`); data queues
//! of one BDP in packets (`calculate_bdp_pkt`), ECN between 20 % and 80 %
//! of it (rounded up, in packets), trimming to 64 bytes, the least RTO
//! 15 µs plus six queue drains; 64 entropy values, the `mixed` chooser;
//! SACKs every 16 KiB; seed 13; the end at 1000 µs; NSCC alone, at the
//! sender, as uet-htsim runs it unless its flags turn on receiver credit
//! or the receiver's oversubscribed CC. Each flag of uet-htsim's is read,
//! or taken as changing nothing hal-sim models (its logging), or refused
//! by name with why.

use std::path::Path;

use crate::run::world::World;
use crate::setup::scenario::{parse, Cc, Scenario};

/// A command line, read.
#[derive(Clone, Debug, PartialEq)]
pub struct Command {
    /// `-tm`: the connection matrix.
    pub tm: String,
    /// `-topo`: an htsim topology file, instead of the k-ary fat-tree.
    pub topo: Option<String>,
    /// `-paths`.
    pub paths: u32,
    /// `-linkspeed`, Mb/s.
    pub linkspeed_mbps: u64,
    /// `-failed`.
    pub failed: u32,
    /// `-load_balancing_algo`.
    pub load_balancing: String,
    /// `-sack_threshold`, bytes.
    pub sack_threshold: Option<u64>,
    /// `-end`, µs.
    pub end_us: u64,
    /// `-seed`.
    pub seed: u64,
    /// `-mtu`, bytes.
    pub mtu: u32,
    /// `-q`: data queues, packets.
    pub queue_pkts: Option<u64>,
    /// `-ecn LOW HIGH`, packets.
    pub ecn_pkts: Option<(u64, u64)>,
    /// `-trimsize`, bytes.
    pub trim_bytes: u32,
    /// `-hop_latency`, µs.
    pub hop_latency_us: f64,
    /// `-switch_latency`, ps (uet-htsim's `timeFromUs`, truncated): each
    /// switch of the fat-tree sized to the matrix holds a packet this long
    /// between its arrival and its egress queue. A `-topo` file sets its
    /// own (uet-htsim reads the flag only for the fat-tree it builds).
    pub switch_latency_ps: u64,
    /// `-cwnd`: NSCC's first window, packets of `-mtu` bytes (0: its
    /// ceiling, 1.5 BDP).
    pub cwnd_pkts: u32,
    /// `-enable_accurate_base_rtt`: each flow's NSCC starts from its own
    /// path's base RTT; without it, from the network's (uet-htsim's
    /// `network_max_unloaded_rtt`, every flow alike).
    pub accurate_base_rtt: bool,
    /// `-disable_trim`: a full queue drops what it would trim; queues of
    /// five BDPs unless `-q` says, and NSCC's target delay one network
    /// RTT instead of three quarters of it.
    pub disable_trim: bool,
    /// `-sleek`: SLEEK's loss recovery.
    pub sleek: bool,
    /// `-target_q_delay`, ps (uet-htsim's `timeFromUs`, truncated): NSCC's
    /// target queueing delay, quick adapt's threshold four times it; 0:
    /// derived (0.75 network RTT, one with `-disable_trim`).
    pub target_q_delay_ps: u64,
    /// `-qa_gate`: quick adapt's gate, a shift of the window's ceiling
    /// (a negative value, as its absence: uet-htsim's 3).
    pub qa_gate: Option<u8>,
    /// `-queue_size_bdp_factor`: data queues of this many BDPs where `-q`
    /// leaves them (0: one, five with `-disable_trim`).
    pub queue_bdp_factor: u32,
    /// `-nodes`: the matrix's hosts, checked (0: any).
    pub nodes: u32,
    /// Off with `-disable_base_rtt_update_on_nack`: a NACK's RTT no longer
    /// lowers NSCC's base RTT.
    pub nack_updates_base_rtt: bool,
    /// `-tiers`, 2 or 3: the fat-tree's, where no `-topo` gives one.
    pub tiers: u32,
    /// Whose congestion control runs, as the flags left it.
    pub roles: Roles,
}

/// Whose congestion control uet-htsim runs, as its flags set it, each in
/// the order given (`main_uec.cpp`): NSCC at the sender unless
/// `-receiver_cc_only`; receiver credit (RCCC) after `-receiver_cc` or
/// `-receiver_cc_only` until a `-sender_cc_only`; the receiver's
/// oversubscribed CC after `-oversubscribed_cc`, or on an oversubscribed
/// topology where no flag made the sender's CC explicit
/// (`-sender_cc_only`, `-sender_cc`, `-sender_cc_algo`) and none forced it
/// off. hal-sim models NSCC alone: a command whose flags leave either of
/// the others on is refused. (uet-htsim's `sender_driven` needs no field:
/// only `-receiver_cc_only` clears it, and that leaves receiver credit
/// on.)
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Roles {
    /// uet-htsim's `receiver_driven`: receiver credit runs.
    pub receiver: bool,
    /// `UecSrc::_sender_based_cc` as the flags leave it (before
    /// `initNsccParams` sets it).
    pub sender_explicit: bool,
    /// `UecSink::_oversubscribed_cc` as the flags leave it.
    pub oversubscribed_cc: bool,
    /// `-force_disable_oversubscribed_cc`.
    pub oversubscribed_cc_forced_off: bool,
}

/// Flags uet-htsim takes that hal-sim does not model, with why.
const REFUSED: &[(&str, &str)] = &[
    ("-conn_reuse", "several messages on one connection are not modelled"),
    ("-pcie", "the receiver's PCIe model is not modelled"),
];

/// Flags hal-sim models at uet-htsim's default value only: the flag, its
/// default, and why another value is refused.
const DEFAULT_ONLY: &[(&str, &str, &str)] = &[
    (
        "-queue_type",
        "composite",
        "only uet-htsim's default trimming queue is modelled",
    ),
    (
        "-host_queue_type",
        "fair_prio",
        "only uet-htsim's default NIC queue is modelled",
    ),
    (
        "-strat",
        "ecmp_host",
        "only uet-htsim's default ECMP over entropy values is modelled",
    ),
    (
        "-sender_cc_algo",
        "nscc",
        "NSCC is the sender's algorithm (uet-htsim's dctcp is its own per-mark AIMD, not hal-sim's RFC 8257 DCTCP; constant, a fixed window)",
    ),
    ("-planes", "1", "multi-plane fabrics are not modelled"),
];

/// Flags that change nothing hal-sim models, each with the values uet-htsim
/// takes (`None`: no value; an empty list: any): its logging (`-debug`,
/// `-log WHAT`, `-logtime MS`, `-logtime_us US`, `-o FILE`), the gains of
/// the receiver's oversubscribed CC (`-Ai`, `-Md`, `-alpha`; that CC is
/// refused where it would run) and adaptive routing's settings
/// (`-ar_sticky_delta`, `-ar_granularity`, `-ar_method`, read only by the
/// `-strat` values that route adaptively, which are refused).
const QUIET: &[(&str, Option<&[&str]>)] = &[
    ("-debug", None),
    (
        "-log",
        Some(&[
            "flow_events",
            "sink",
            "nic",
            "tor_downqueue",
            "tor_upqueue",
            "switch",
            "traffic",
            "queue_usage",
        ]),
    ),
    ("-logtime", Some(&[])),
    ("-logtime_us", Some(&[])),
    ("-o", Some(&[])),
    ("-Ai", Some(&[])),
    ("-Md", Some(&[])),
    ("-alpha", Some(&[])),
    ("-ar_sticky_delta", Some(&[])),
    ("-ar_granularity", Some(&["packet", "flow"])),
    (
        "-ar_method",
        Some(&["pause", "queue", "bandwidth", "pqb", "pq", "pb", "qb"]),
    ),
];

/// Reads uet-htsim's flags.
pub fn parse_args(args: &[String]) -> Result<Command, String> {
    let mut c = Command {
        tm: String::new(),
        topo: None,
        paths: 64,
        linkspeed_mbps: 100_000,
        failed: 0,
        load_balancing: "mixed".into(),
        sack_threshold: None,
        end_us: 1000,
        seed: 13,
        mtu: 4150,
        queue_pkts: None,
        ecn_pkts: None,
        trim_bytes: 64,
        hop_latency_us: 1.0,
        switch_latency_ps: 0,
        cwnd_pkts: 0,
        accurate_base_rtt: false,
        disable_trim: false,
        sleek: false,
        target_q_delay_ps: 0,
        qa_gate: None,
        queue_bdp_factor: 0,
        nodes: 0,
        nack_updates_base_rtt: true,
        tiers: 3,
        roles: Roles::default(),
    };
    let mut i = 0;
    let value = |i: usize, flag: &str| -> Result<&String, String> {
        args.get(i + 1).ok_or_else(|| format!("{flag}: expected a value"))
    };
    fn num<T: std::str::FromStr>(v: &str, flag: &str) -> Result<T, String> {
        v.parse().map_err(|_| format!("{flag}: expected a number, got {v:?}"))
    }
    // A delay in µs, as uet-htsim's flags give them: 0 ..= 10^6 (a
    // negative, NaN or huge one is refused, not wrapped).
    fn delay_us(v: &str, flag: &str) -> Result<f64, String> {
        let us: f64 = num(v, flag)?;
        if !(0.0..=1e6).contains(&us) {
            return Err(format!("{flag} {us}: a delay of 0 ..= 10^6 µs"));
        }
        Ok(us)
    }
    while i < args.len() {
        let flag = args[i].as_str();
        let mut used = 1;
        match flag {
            "-tm" => (c.tm, used) = (value(i, flag)?.clone(), 2),
            "-topo" => (c.topo, used) = (Some(value(i, flag)?.clone()), 2),
            "-paths" => (c.paths, used) = (num(value(i, flag)?, flag)?, 2),
            "-linkspeed" => (c.linkspeed_mbps, used) = (num(value(i, flag)?, flag)?, 2),
            "-failed" => (c.failed, used) = (num(value(i, flag)?, flag)?, 2),
            "-load_balancing_algo" => (c.load_balancing, used) = (value(i, flag)?.clone(), 2),
            "-sack_threshold" => (c.sack_threshold, used) = (Some(num(value(i, flag)?, flag)?), 2),
            "-end" => (c.end_us, used) = (num(value(i, flag)?, flag)?, 2),
            "-seed" => (c.seed, used) = (num(value(i, flag)?, flag)?, 2),
            "-mtu" => (c.mtu, used) = (num(value(i, flag)?, flag)?, 2),
            "-q" => (c.queue_pkts, used) = (Some(num(value(i, flag)?, flag)?), 2),
            "-trimsize" => (c.trim_bytes, used) = (num(value(i, flag)?, flag)?, 2),
            "-hop_latency" => (c.hop_latency_us, used) = (delay_us(value(i, flag)?, flag)?, 2),
            "-cwnd" => (c.cwnd_pkts, used) = (num(value(i, flag)?, flag)?, 2),
            "-ecn" => {
                let low = num(value(i, flag)?, flag)?;
                let high = num(value(i + 1, flag)?, flag)?;
                (c.ecn_pkts, used) = (Some((low, high)), 3);
            }
            // 0: derived from the link speed and the network RTT.
            "-target_q_delay" => (c.target_q_delay_ps, used) = ((delay_us(value(i, flag)?, flag)? * 1e6) as u64, 2),
            "-switch_latency" => {
                let us = delay_us(value(i, flag)?, flag)?;
                let ps = (us * 1e6) as u64;
                if !ps.is_multiple_of(1000) {
                    return Err(format!("{flag} {us}: a whole number of ns"));
                }
                (c.switch_latency_ps, used) = (ps, 2);
            }
            "-qa_gate" => {
                // uet-htsim keeps it in an int8_t: negative is its default.
                let g: f64 = num(value(i, flag)?, flag)?;
                c.qa_gate = match g.trunc() {
                    g if g < 0.0 => None,
                    g if g <= 31.0 => Some(g as u8),
                    _ => return Err(format!("{flag} {g}: a shift of the window's ceiling, 0 ..= 31")),
                };
                used = 2;
            }
            "-queue_size_bdp_factor" => (c.queue_bdp_factor, used) = (num(value(i, flag)?, flag)?, 2),
            "-nodes" => (c.nodes, used) = (num(value(i, flag)?, flag)?, 2),
            "-tiers" => {
                (c.tiers, used) = (num(value(i, flag)?, flag)?, 2);
                if !(2..=3).contains(&c.tiers) {
                    return Err(format!("{flag} {}: 2 or 3 (uet-htsim asserts it)", c.tiers));
                }
            }
            "-disable_base_rtt_update_on_nack" => c.nack_updates_base_rtt = false,
            "-enable_accurate_base_rtt" => c.accurate_base_rtt = true,
            "-disable_trim" => c.disable_trim = true,
            "-sleek" => c.sleek = true,
            // Whose congestion control runs (`Roles`).
            "-sender_cc_only" => {
                let r = &mut c.roles;
                (r.receiver, r.sender_explicit, r.oversubscribed_cc) = (false, true, false);
            }
            "-receiver_cc_only" => {
                let r = &mut c.roles;
                (r.receiver, r.sender_explicit, r.oversubscribed_cc) = (true, false, false);
            }
            "-sender_cc" => {
                let r = &mut c.roles;
                (r.sender_explicit, r.oversubscribed_cc) = (true, false);
            }
            "-receiver_cc" => c.roles.receiver = true,
            "-oversubscribed_cc" => c.roles.oversubscribed_cc = true,
            "-force_disable_oversubscribed_cc" => {
                (c.roles.oversubscribed_cc, c.roles.oversubscribed_cc_forced_off) = (false, true)
            }
            f => {
                if let Some(&(_, values)) = QUIET.iter().find(|(q, _)| *q == f) {
                    if let Some(values) = values {
                        let v = value(i, flag)?;
                        if !values.is_empty() && !values.contains(&v.as_str()) {
                            return Err(format!("{f} {v}: uet-htsim takes {}", values.join(", ")));
                        }
                        used = 2;
                    }
                } else if let Some(&(_, default, why)) = DEFAULT_ONLY.iter().find(|(d, _, _)| *d == f) {
                    let v = value(i, flag)?;
                    let same =
                        v == default || matches!((v.parse::<f64>(), default.parse::<f64>()), (Ok(a), Ok(b)) if a == b);
                    if !same {
                        return Err(format!("{f} {v}: not supported: {why} ({default})"));
                    }
                    if f == "-sender_cc_algo" {
                        // As uet-htsim's: the sender's CC made explicit.
                        c.roles.sender_explicit = true;
                    }
                    used = 2;
                } else {
                    return Err(match REFUSED.iter().find(|(r, _)| *r == f) {
                        Some((_, why)) => format!("{f}: not supported: {why}"),
                        None => format!("{f}: not a flag hal-sim's uet-htsim command knows (nor models)"),
                    });
                }
            }
        }
        i += used;
    }
    if c.tm.is_empty() {
        return Err("-tm: a connection matrix is required".into());
    }
    if c.roles.receiver {
        return Err(
            "-receiver_cc, -receiver_cc_only: not supported: receiver credit (RCCC) is not modelled (hal-sim runs NSCC alone; a later -sender_cc_only turns RCCC off, as in uet-htsim)".into(),
        );
    }
    if c.roles.oversubscribed_cc {
        return Err(
            "-oversubscribed_cc: not supported: the receiver's oversubscribed CC is not modelled (a later -sender_cc_only, -sender_cc or -force_disable_oversubscribed_cc turns it off, as in uet-htsim)".into(),
        );
    }
    Ok(c)
}

/// The scenario a command runs; relative files are read from `cwd`.
pub fn scenario(c: &Command, cwd: &Path) -> Result<Scenario, String> {
    let text = std::fs::read_to_string(cwd.join(&c.tm)).map_err(|e| format!("-tm {}: {e}", c.tm))?;
    let matrix = crate::setup::connection_matrix::parse(&text, &c.tm).map_err(|e| e.to_string())?;
    if !c.linkspeed_mbps.is_multiple_of(1000) || !(1000..=1_600_000).contains(&c.linkspeed_mbps) {
        return Err(format!(
            "-linkspeed {}: a whole number of Gb/s, in Mb/s, up to 1 600 000",
            c.linkspeed_mbps
        ));
    }
    if c.nodes != 0 && c.nodes != matrix.nodes {
        return Err(format!(
            "-nodes {}: the connection matrix {} has {} nodes (uet-htsim stops on the same mismatch)",
            c.nodes, c.tm, matrix.nodes
        ));
    }
    let gbps = c.linkspeed_mbps / 1000;
    if c.mtu <= 64 || c.mtu - 64 > 9000 {
        return Err(format!("-mtu {}: 65 ..= 9064 bytes (64 of them header)", c.mtu));
    }
    let ns = (c.hop_latency_us * 1000.0).round() as u64;
    // The switches' latency: the flag's on the fat-tree built here; a
    // `-topo` file's own (0: htsim_topo refuses any other).
    let switch_ps = match c.topo {
        None => c.switch_latency_ps,
        Some(_) => 0,
    };
    // The network and its diameter in links (uet-htsim's `get_diameter`).
    let (topology, diameter, delay_ns) = match &c.topo {
        None if c.tiers == 2 => {
            // uet-htsim's two tiers (`set_params`): K ToRs of K/2 hosts
            // each, every ToR to each of K/2 spines, K²/2 hosts.
            let n = matrix.nodes as u64;
            let k = (2..=2000u64).step_by(2).find(|k| k * k / 2 >= n).unwrap_or(0);
            if k == 0 || k * k / 2 != n {
                return Err(format!(
                    "-tm {}: {n} nodes: uet-htsim's two-tier fat-tree holds K²/2 hosts for an even K (2, 8, 18, 32, 50, 72, 98, 128, …)",
                    c.tm
                ));
            }
            let t = format!(
                "kind = \"leaf_spine\"\nleaves = {k}\nspines = {h}\nhosts_per_leaf = {h}\nlink_gbps = {gbps}\nlink_delay_ns = {ns}\n",
                h = k / 2
            );
            (t, 4, ns)
        }
        None => {
            let n = matrix.nodes as u64;
            let k = (2..=64u64).step_by(2).find(|k| k * k * k / 4 >= n).unwrap_or(0);
            if k == 0 || k * k * k / 4 != n {
                return Err(format!(
                    "-tm {}: {n} nodes: uet-htsim's three-tier fat-tree holds k³/4 hosts (16, 54, 128, 250, 432, 686, 1024, …)",
                    c.tm
                ));
            }
            let t = format!("kind = \"k_ary_fat_tree\"\nk = {k}\nlink_gbps = {gbps}\nlink_delay_ns = {ns}\n");
            (t, 6, ns)
        }
        Some(path) => {
            let file = cwd.join(path);
            let text = std::fs::read_to_string(&file).map_err(|e| format!("-topo {path}: {e}"))?;
            let r = crate::setup::htsim_topo::resolve(&text).map_err(|e| format!("-topo {path}: {e}"))?;
            if r.link_gbps.0 as u64 != gbps {
                return Err(format!(
                    "-topo {path}: its hosts' links run at {} Gb/s; give -linkspeed {} (uet-htsim sizes the NICs, NSCC and the queues by -linkspeed)",
                    r.link_gbps.0,
                    r.link_gbps.0 as u64 * 1000
                ));
            }
            // `main_uec.cpp`: on an oversubscribed fabric the receiver's
            // oversubscribed CC runs unless the flags made the sender's CC
            // explicit or forced it off.
            let roles = c.roles;
            if r.oversubscription > 1 && !roles.sender_explicit && !roles.oversubscribed_cc_forced_off {
                return Err(format!(
                    "-topo {path}: oversubscribed {}:1, where uet-htsim runs the receiver's oversubscribed CC, which hal-sim does not model; give -sender_cc_only (or -force_disable_oversubscribed_cc) for NSCC alone",
                    r.oversubscription
                ));
            }
            let tiers = match r.shape {
                crate::setup::scenario::Shape::LeafSpine { .. } => 4,
                _ => 6,
            };
            let abs = file.canonicalize().unwrap_or(file);
            let t = format!(
                "kind = \"htsim\"\npath = {:?}\nlink_gbps = {gbps}\n",
                abs.display().to_string()
            );
            (t, tiers, r.link_delay_ns.0)
        }
    };
    // calculate_rtt, ps: 2·(diameter·latency + (diameter − 1)·switch
    // latency) + (MTU + ACK)·8/Gb/s·diameter.
    let rtt_ps = 2 * (diameter * delay_ns * 1000 + (diameter - 1) * switch_ps)
        + (c.mtu as u64 + 64) * 8 * 1000 * diameter / gbps;
    // calculate_bdp_pkt: ⌈RTT · rate / 8 / MTU⌉.
    let bdp_bytes = rtt_ps as u128 * c.linkspeed_mbps as u128 / 8_000_000;
    let bdp_pkts = bdp_bytes.div_ceil(c.mtu as u128) as u64;
    // Queues of one BDP where switches trim, five where they drop
    // (`DEFAULT_TRIMMING_QUEUESIZE_FACTOR`, `…NONTRIMMING…`).
    let factor = match (c.queue_bdp_factor, c.disable_trim) {
        (0, false) => 1,
        (0, true) => 5,
        (f, _) => f as u64,
    };
    let queue_pkts = c.queue_pkts.unwrap_or(bdp_pkts.saturating_mul(factor));
    let (low, high) = c
        .ecn_pkts
        .unwrap_or(((bdp_pkts * 2).div_ceil(10), (bdp_pkts * 8).div_ceil(10)));
    // uet-htsim asserts both (`main_uec.cpp`, where it sets ECN).
    if low > high {
        return Err(format!("-ecn {low} {high}: the low threshold above the high one"));
    }
    if high > queue_pkts {
        return Err(format!(
            "-q {queue_pkts}: ECN's high threshold ({high} packets) must fit the data queue (uet-htsim asserts it; give -ecn)"
        ));
    }
    let mtu = c.mtu as u64;
    let lb = match c.load_balancing.as_str() {
        "oblivious" | "bitmap" | "reps" | "mixed" => c.load_balancing.as_str(),
        other => {
            return Err(format!(
                "-load_balancing_algo {other}: oblivious, bitmap, reps or mixed"
            ))
        }
    };
    let tm = cwd
        .join(&c.tm)
        .canonicalize()
        .map_err(|e| format!("-tm {}: {e}", c.tm))?;
    let sack = c
        .sack_threshold
        .map(|b| format!("sack_bytes = {b}\n"))
        .unwrap_or_default();
    // `initNscc`'s base RTT: the network's unloaded RTT for every flow,
    // or with `-enable_accurate_base_rtt` the flow's own path's.
    let base = match c.accurate_base_rtt {
        true => String::new(),
        false => format!("base_rtt_ns = {}\n", (rtt_ps + 500) / 1000),
    };
    let text = format!(
        "name = \"uet-htsim\"\ndescription = \"uet-htsim's command line\"\nseed = {seed}\nstop_ms = {stop}\n\
         [topology]\n{topology}failed_links = {failed}\n\
         [switch]\nport_buffer_bytes = {q}\necn_kmin_bytes = {kmin}\necn_kmax_bytes = {kmax}\n{overflow}\nlatency_ns = {sw_ns}\n\
         [nic]\ntelemetry = \"none\"\npayload_bytes = {payload}\nheader_bytes = 64\nack_bytes = 64\ntransport = \"sack\"\n{sack}paths = {paths}\nload_balancing = \"{lb}\"\nsleek = {sleek}\n\
         [cc]\nalgorithm = \"nscc\"\n{base}\
         [workload]\nkind = \"connection_matrix\"\npath = {tm:?}\n",
        seed = c.seed,
        stop = c.end_us as f64 / 1000.0,
        failed = c.failed,
        // Saturating: past the fields' ranges, which the parse refuses.
        q = queue_pkts.saturating_mul(mtu),
        kmin = low.saturating_mul(mtu),
        kmax = high.saturating_mul(mtu),
        overflow = match c.disable_trim {
            true => "drop_by_coin = true".to_string(),
            false => format!("trim_bytes = {}", c.trim_bytes),
        },
        sleek = c.sleek,
        sw_ns = switch_ps / 1000,
        payload = c.mtu - 64,
        paths = c.paths,
        tm = tm.display().to_string(),
    );
    let mut s = parse(&text, "uet-htsim").map_err(|e| e.to_string())?;
    if let Cc::Registered { engine, .. } = &mut s.cc.algorithm {
        let nscc = &mut engine.nscc;
        *nscc = match c.target_q_delay_ps {
            0 => cc_core::nscc::NsccConfig::derive(c.linkspeed_mbps as u32, rtt_ps, c.mtu, !c.disable_trim),
            t => cc_core::nscc::NsccConfig::derive_with_target(c.linkspeed_mbps as u32, rtt_ps, c.mtu, t),
        };
        if let Some(g) = c.qa_gate {
            nscc.qa_gate = g;
        }
        nscc.nack_updates_base_rtt = c.nack_updates_base_rtt;
        if let Some(field) = nscc.invalid_field() {
            return Err(format!(
                "NSCC's {field} out of its range with these flags (-target_q_delay at most 4194 µs)"
            ));
        }
        // `initNscc`: the first window `-cwnd` packets of `-mtu` bytes.
        let first = c.cwnd_pkts as u64 * mtu;
        if first > cc_core::nscc::MAX_WINDOW as u64 {
            return Err(format!(
                "-cwnd {}: at most {} packets of {mtu} bytes",
                c.cwnd_pkts,
                cc_core::nscc::MAX_WINDOW as u64 / mtu
            ));
        }
        engine.nscc.initial_window = first as u32;
    }
    Ok(s)
}

/// `x` as C++'s `cout` prints a double: six significant digits, trailing
/// zeros dropped.
pub fn g6(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let exp = x.abs().log10().floor() as i32;
    if !(-5..6).contains(&exp) {
        let s = format!("{:.5e}", x);
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let m = m.trim_end_matches('0').trim_end_matches('.');
        let e: i32 = e.parse().unwrap_or(0);
        return format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs());
    }
    let decimals = (5 - exp).max(0) as usize;
    let s = format!("{:.*}", decimals, x);
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// What uet-htsim prints that its `validate.py` reads: a line per
/// finished flow, in the order they finished (`Flow Uec_SRC_DST flowId N
/// uecSrc SRC finished at µs total messages 1 total packets P RTS 0 total
/// bytes B`, then under NSCC its window changes by rule, `fair_inc …
/// prop_inc … fast_inc … eta_inc … multi_dec -… quick_dec -… nack_dec
/// -…`; uet-htsim's `in_flight now` is left out), and the packet counts
/// (`New: … Rtx: … RTS: 0 Bounced: 0 ACKs: … NACKs: … Pulls: 0
/// sleek_pkts: …`). New packets are the data packets sent less the
/// resends.
pub fn report(w: &World, payload: u32) -> String {
    let mut done: Vec<_> = w.flows.iter().filter(|f| f.finish_ps.is_some()).collect();
    done.sort_by_key(|f| (f.finish_ps, f.id));
    let mut out = String::new();
    for f in done {
        let at = f.finish_ps.map_or(0.0, |t| t.as_ps() as f64 / 1e6);
        let packets = f.size.div_ceil(payload.max(1) as u64);
        out += &format!(
            "Flow Uec_{s}_{d} flowId {id} uecSrc {s} finished at {t} total messages 1 total packets {packets} RTS 0 total bytes {b}",
            s = f.src_host,
            d = f.dst_host,
            id = f.id,
            t = g6(at),
            b = packets * payload as u64,
        );
        if let Some(n) = w.metrics.nscc.get(f.id as usize) {
            out += &format!(
                " fair_inc {} prop_inc {} fast_inc {} eta_inc {} multi_dec -{} quick_dec -{} nack_dec -{}",
                n.fair_inc, n.prop_inc, n.fast_inc, n.eta_inc, n.multi_dec, n.quick_dec, n.nack_dec
            );
        }
        out.push('\n');
    }
    let c = &w.metrics.counters;
    out += &format!(
        "New: {} Rtx: {} RTS: 0 Bounced: 0 ACKs: {} NACKs: {} Pulls: 0 sleek_pkts: {}\n",
        c.data_packets - c.retransmits,
        c.retransmits,
        c.acks,
        c.nacks,
        c.sleek_pkts
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    /// The scenario command line `line` (which parses) makes, its files
    /// read from uet-htsim's stored folder.
    fn made(line: &str) -> Result<Scenario, String> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/reference/uet-htsim");
        scenario(&parse_args(&args(line)).unwrap(), &dir)
    }

    /// C++'s default output of a double.
    #[test]
    fn doubles_print_as_cout_prints_them() {
        for (x, s) in [
            (176.2, "176.2"),
            (176.804, "176.804"),
            (2478.5312, "2478.53"),
            (21029.31, "21029.3"),
            (194.0, "194"),
            (0.5, "0.5"),
            (1234567.0, "1.23457e+06"),
        ] {
            assert_eq!(g6(x), s);
        }
    }

    /// A validation plan's command line reads; what is not modelled is
    /// refused by name.
    #[test]
    fn uet_htsims_flags_read_or_are_refused_by_name() {
        let c = parse_args(&args("-tm m.cm -sender_cc_only -end 2000 -paths 128 -failed 1")).unwrap();
        assert_eq!((c.tm.as_str(), c.end_us, c.paths, c.failed), ("m.cm", 2000, 128, 1));
        assert_eq!(
            (c.mtu, c.linkspeed_mbps, c.seed, c.load_balancing.as_str()),
            (4150, 100_000, 13, "mixed")
        );
        let c = parse_args(&args("-tm m.cm -sender_cc_only -ecn 10 30 -q 50 -sack_threshold 4000")).unwrap();
        assert_eq!(
            (c.ecn_pkts, c.queue_pkts, c.sack_threshold),
            (Some((10, 30)), Some(50), Some(4000))
        );
        assert_eq!(
            parse_args(&args("-tm m.cm -sender_cc_only -cwnd 50"))
                .unwrap()
                .cwnd_pkts,
            50
        );
        // Every flow's NSCC starts from the network's RTT, as uet-htsim's
        // `initNscc` does, unless -enable_accurate_base_rtt.
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/reference/uet-htsim");
        let c = parse_args(&args("-tm one.cm -sender_cc_only")).unwrap();
        assert_eq!(scenario(&c, &dir).unwrap().cc.base_rtt_ns.map(|t| t.0), Some(14_023));
        let c = parse_args(&args("-tm one.cm -sender_cc_only -enable_accurate_base_rtt")).unwrap();
        assert!(c.accurate_base_rtt);
        assert_eq!(scenario(&c, &dir).unwrap().cc.base_rtt_ns, None);
        let e = parse_args(&args("-tm m.cm -sender_cc_only -conn_reuse")).unwrap_err();
        assert!(e.starts_with("-conn_reuse: not supported"), "{e}");
        // -disable_trim: queues of five BDPs (43 packets each here), ports
        // that drop by trimming's coin, NSCC's target one network RTT;
        // -sleek: SLEEK.
        let c = parse_args(&args("-tm one.cm -sender_cc_only -disable_trim -sleek")).unwrap();
        let s = scenario(&c, &dir).unwrap();
        assert_eq!(
            (
                s.switch.port_buffer_bytes.0,
                s.switch.trim_bytes,
                s.switch.drop_by_coin,
                s.nic.sleek
            ),
            (5 * 43 * 4150, None, true, true)
        );
        let Cc::Registered { engine, .. } = &s.cc.algorithm else {
            panic!("NSCC is registered")
        };
        assert_eq!(engine.nscc.target_delay_ns, 14_023);
        let s = made("-tm one.cm -sender_cc_only -q 190").unwrap();
        assert_eq!(
            (
                s.switch.port_buffer_bytes.0,
                s.switch.trim_bytes.map(|t| t.0),
                s.switch.drop_by_coin,
                s.nic.sleek
            ),
            (190 * 4150, Some(64), false, false)
        );
        let e = parse_args(&args("-tm m.cm -sender_cc_only -frobnicate")).unwrap_err();
        assert!(e.starts_with("-frobnicate:"), "{e}");
        let e = parse_args(&args("-sender_cc_only -paths")).unwrap_err();
        assert!(e.starts_with("-paths: expected a value"), "{e}");
    }

    /// Every flag `main_uec.cpp` (40ccb05) reads, as its parser names
    /// them, each with a value it takes there (none: the flag takes none).
    const UET_HTSIM_FLAGS: [(&str, &str); 49] = [
        ("-Ai", "2"),
        ("-Md", "0.5"),
        ("-alpha", "2"),
        ("-ar_granularity", "flow"),
        ("-ar_method", "queue"),
        ("-ar_sticky_delta", "5"),
        ("-conn_reuse", ""),
        ("-cwnd", "50"),
        ("-debug", ""),
        ("-disable_base_rtt_update_on_nack", ""),
        ("-disable_trim", ""),
        ("-ecn", "2 3"),
        ("-enable_accurate_base_rtt", ""),
        ("-end", "2000"),
        ("-failed", "1"),
        ("-force_disable_oversubscribed_cc", ""),
        ("-hop_latency", "2"),
        ("-host_queue_type", "swift"),
        ("-linkspeed", "400000"),
        ("-load_balancing_algo", "reps"),
        ("-log", "sink"),
        ("-logtime", "0.1"),
        ("-logtime_us", "10"),
        ("-mtu", "2112"),
        ("-nodes", "16"),
        ("-o", "log.dat"),
        ("-oversubscribed_cc", ""),
        ("-paths", "128"),
        ("-pcie", "1.2"),
        ("-planes", "2"),
        ("-q", "50"),
        ("-qa_gate", "2"),
        ("-queue_size_bdp_factor", "2"),
        ("-queue_type", "composite_ecn"),
        ("-receiver_cc", ""),
        ("-receiver_cc_only", ""),
        ("-sack_threshold", "4000"),
        ("-seed", "7"),
        ("-sender_cc", ""),
        ("-sender_cc_algo", "dctcp"),
        ("-sender_cc_only", ""),
        ("-sleek", ""),
        ("-strat", "ecmp_ar"),
        ("-switch_latency", "0.5"),
        ("-target_q_delay", "5"),
        ("-tiers", "2"),
        ("-tm", "m.cm"),
        ("-topo", "t.topo"),
        ("-trimsize", "128"),
    ];

    /// hal-sim reads each of uet-htsim's flags, takes it as changing
    /// nothing it models, or refuses it by name with why; none is unknown.
    #[test]
    fn every_flag_of_uet_htsims_is_read_or_refused_with_why() {
        for (f, value) in UET_HTSIM_FLAGS {
            let line = format!("-tm m.cm {f} {value}");
            if let Err(e) = parse_args(&args(&line)) {
                assert!(!e.contains("not a flag"), "{line}: {e}");
                assert!(e.contains(f) && e.contains("not supported: "), "{line}: {e}");
            }
        }
        // uet-htsim's own mistakes stay mistakes: `-disable_fd` is
        // commented out of its parser.
        let e = parse_args(&args("-tm m.cm -disable_fd")).unwrap_err();
        assert!(e.contains("not a flag"), "{e}");
        let e = parse_args(&args("-tm m.cm -log everything")).unwrap_err();
        assert!(e.starts_with("-log everything: uet-htsim takes flow_events"), "{e}");
    }

    /// Whose congestion control runs follows the flags in order, as in
    /// uet-htsim: NSCC alone by default; receiver credit or the
    /// receiver's oversubscribed CC left on is refused.
    #[test]
    fn the_sender_runs_nscc_alone_unless_the_flags_say_otherwise() {
        for ok in [
            "-tm m.cm",
            "-tm m.cm -sender_cc_only",
            "-tm m.cm -sender_cc",
            "-tm m.cm -receiver_cc -sender_cc_only",
            "-tm m.cm -receiver_cc_only -sender_cc_only",
            "-tm m.cm -oversubscribed_cc -sender_cc_only",
            "-tm m.cm -oversubscribed_cc -force_disable_oversubscribed_cc",
            "-tm m.cm -sender_cc_algo nscc -Ai 2 -Md 0.5 -alpha 3",
            "-tm m.cm -debug -log flow_events -logtime 0.1 -logtime_us 5 -o log.dat",
            "-tm m.cm -queue_type composite -host_queue_type fair_prio -strat ecmp_host -planes 1 -switch_latency 0.25",
            "-tm m.cm -ar_sticky_delta 5 -ar_granularity packet -ar_method pqb",
        ] {
            assert!(parse_args(&args(ok)).is_ok(), "{ok}: {:?}", parse_args(&args(ok)));
        }
        for (bad, why) in [
            ("-tm m.cm -receiver_cc_only", "receiver credit"),
            ("-tm m.cm -sender_cc_only -receiver_cc", "receiver credit"),
            ("-tm m.cm -oversubscribed_cc", "oversubscribed CC"),
            ("-tm m.cm -sender_cc_only -oversubscribed_cc", "oversubscribed CC"),
            ("-tm m.cm -strat ecmp_ar", "default ECMP"),
            ("-tm m.cm -planes 2", "multi-plane"),
            ("-tm m.cm -sender_cc_algo constant", "NSCC is the sender's"),
        ] {
            let e = parse_args(&args(bad)).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
        // On an oversubscribed fabric uet-htsim runs the receiver's
        // oversubscribed CC unless the sender's CC was named.
        let os = "-tm perm_1024n_1024c_0u_2000000b.cm -topo leaf_spine_1024_oversub.topo";
        let e = made(os).unwrap_err();
        assert!(e.contains("oversubscribed 4:1"), "{e}");
        for ok in [
            "-sender_cc_only",
            "-force_disable_oversubscribed_cc",
            "-sender_cc_algo nscc",
        ] {
            assert!(made(&format!("{os} {ok}")).is_ok(), "{ok}");
        }
    }

    /// `-switch_latency`: every switch of the fat-tree built for the matrix
    /// holds a packet that long, and the network RTT counts it at each of
    /// the diameter's five switches both ways: uet-htsim prints
    /// `_target_Qdelay=14267040` for 0.5 µs, three quarters of 19 022 720
    /// ps. A `-topo` file keeps its own (uet-htsim reads the flag only for
    /// the fat-tree it builds).
    #[test]
    fn switch_latency_reaches_the_switches_and_the_rtt() {
        let s = made("-tm one.cm -switch_latency 0.5").unwrap();
        assert_eq!(s.switch.latency_ns.0, 500);
        assert_eq!(s.cc.base_rtt_ns.map(|t| t.0), Some(19_023));
        let Cc::Registered { engine, .. } = &s.cc.algorithm else {
            panic!("NSCC is registered")
        };
        assert_eq!(engine.nscc.target_delay_ns, 14_267);
        let line = "-tm perm_1024n_1024c_0u_2000000b.cm -topo leaf_spine_1024.topo -switch_latency 0.5";
        let s = made(line).unwrap();
        assert_eq!(s.switch.latency_ns.0, 0);
        let e = parse_args(&args("-tm one.cm -switch_latency 0.0005")).unwrap_err();
        assert!(e.contains("a whole number of ns"), "{e}");
        for bad in [
            "-hop_latency -5",
            "-hop_latency nan",
            "-hop_latency 1e30",
            "-switch_latency inf",
        ] {
            let e = parse_args(&args(&format!("-tm one.cm {bad}"))).unwrap_err();
            assert!(e.contains("0 ..= 10^6 µs"), "{bad}: {e}");
        }
        // Numbers at their types' ends are refused, not wrapped.
        for bad in [
            "-q 18446744073709551615",
            "-q 18446744073709551615 -ecn 18446744073709551615 18446744073709551615",
            "-linkspeed 18446744073709551000",
            "-queue_size_bdp_factor 4294967295",
        ] {
            assert!(made(&format!("-tm one.cm {bad}")).is_err(), "{bad}");
        }
    }

    /// The flags that set NSCC and the queues: -target_q_delay (target
    /// and quick adapt's threshold, as uet-htsim prints them for 5 µs:
    /// 5 000 000 and 2e+07 ps), -qa_gate, -queue_size_bdp_factor,
    /// -disable_base_rtt_update_on_nack, -nodes and -tiers checked
    /// against the matrix and the fabric.
    #[test]
    fn nscc_and_queue_flags_reach_the_scenario() {
        let nscc = |line: &str| {
            let s = made(line).unwrap();
            let Cc::Registered { engine, .. } = s.cc.algorithm else {
                panic!("NSCC is registered")
            };
            (engine.nscc, s.switch.port_buffer_bytes.0)
        };
        let (n, q) = nscc("-tm one.cm");
        assert_eq!(
            (n.target_delay_ns, n.qa_threshold_ns, n.qa_gate, q),
            (10_517, 42_068, 3, 43 * 4150)
        );
        assert!(n.nack_updates_base_rtt);
        let (n, q) =
            nscc("-tm one.cm -target_q_delay 5 -qa_gate 2 -queue_size_bdp_factor 2 -disable_base_rtt_update_on_nack");
        assert_eq!(
            (n.target_delay_ns, n.qa_threshold_ns, n.qa_gate, q),
            (5_000, 20_000, 2, 2 * 43 * 4150)
        );
        assert!(!n.nack_updates_base_rtt);
        // -q wins over the factor; a negative gate is uet-htsim's default.
        let (n, q) = nscc("-tm one.cm -queue_size_bdp_factor 3 -q 50 -qa_gate -1 -target_q_delay 0");
        assert_eq!((n.target_delay_ns, n.qa_gate, q), (10_517, 3, 50 * 4150));
        assert_eq!(nscc("-tm one.cm -nodes 16 -tiers 3").1, 43 * 4150);
        for (bad, why) in [
            ("-tm one.cm -nodes 17", "has 16 nodes"),
            ("-tm one.cm -tiers 2", "two-tier fat-tree holds K²/2 hosts"),
            ("-tm one.cm -target_q_delay 5000", "target"),
        ] {
            let e = made(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
        for (bad, why) in [
            ("-tm one.cm -qa_gate 32", "0 ..= 31"),
            ("-tm one.cm -target_q_delay -1", "0 ..= 10^6"),
            ("-tm one.cm -tiers 4", "2 or 3"),
        ] {
            let e = parse_args(&args(bad)).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
