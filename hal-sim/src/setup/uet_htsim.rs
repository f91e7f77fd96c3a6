//! uet-htsim's command line (`htsim_uec`, ultraethernet/uet-htsim at
//! commit 40ccb05, `htsim/sim/datacenter/main_uec.cpp`) read into a
//! scenario, and the lines of its output that its `validate.py` reads:
//! `hal-sim uet-htsim -tm FILE …` runs what `htsim_uec -tm FILE …` runs.
//!
//! What it leaves out takes uet-htsim's defaults: packets of 4150 bytes
//! (64 of them header) and ACKs of 64; the three-tier k-ary fat-tree sized
//! to the matrix (k³/4 hosts), 1 µs links at 100 Gb/s; the network RTT of
//! its `calculate_rtt` (twice the diameter's propagation, plus a data
//! packet's and an ACK's serialization at each of the diameter's links)
//! and NSCC's parameters derived from it (`initNsccParams`); data queues
//! of one BDP in packets (`calculate_bdp_pkt`), ECN between 20 % and 80 %
//! of it (rounded up, in packets), trimming to 64 bytes, the least RTO
//! 15 µs plus six queue drains; 64 entropy values, the `mixed` chooser;
//! SACKs every 16 KiB; seed 13; the end at 1000 µs. A flag it does not
//! model is refused by name.

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
}

/// Flags uet-htsim takes that hal-sim does not model, with why.
const REFUSED: &[(&str, &str)] = &[
    ("-receiver_cc_only", "receiver credit (RCCC) is not modelled"),
    ("-sender_cc", "receiver credit (RCCC) is not modelled"),
    ("-receiver_cc", "receiver credit (RCCC) is not modelled"),
    ("-oversubscribed_cc", "receiver credit (RCCC) is not modelled"),
    ("-conn_reuse", "several messages on one connection are not modelled"),
    (
        "-tiers",
        "the fat-tree sized to the matrix has three tiers; give -topo for two",
    ),
    ("-planes", "multi-plane fabrics are not modelled"),
    ("-pcie", "the receiver's PCIe model is not modelled"),
    ("-switch_latency", "switch latency is not modelled"),
    (
        "-strat",
        "only uet-htsim's default ECMP over entropy values is modelled",
    ),
    ("-queue_type", "only uet-htsim's default trimming queue is modelled"),
    ("-host_queue_type", "only uet-htsim's default NIC queue is modelled"),
    ("-sender_cc_algo", "NSCC is the sender's algorithm"),
];

/// Flags with no value that change nothing hal-sim models (uet-htsim's
/// logging).
const QUIET: &[&str] = &["-debug", "-log"];

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
        cwnd_pkts: 0,
        accurate_base_rtt: false,
        disable_trim: false,
        sleek: false,
    };
    let mut sender_only = false;
    let mut i = 0;
    let value = |i: usize, flag: &str| -> Result<&String, String> {
        args.get(i + 1).ok_or_else(|| format!("{flag}: expected a value"))
    };
    fn num<T: std::str::FromStr>(v: &str, flag: &str) -> Result<T, String> {
        v.parse().map_err(|_| format!("{flag}: expected a number, got {v:?}"))
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
            "-hop_latency" => (c.hop_latency_us, used) = (num(value(i, flag)?, flag)?, 2),
            "-cwnd" => (c.cwnd_pkts, used) = (num(value(i, flag)?, flag)?, 2),
            "-ecn" => {
                let low = num(value(i, flag)?, flag)?;
                let high = num(value(i + 1, flag)?, flag)?;
                (c.ecn_pkts, used) = (Some((low, high)), 3);
            }
            "-sender_cc_only" => sender_only = true,
            "-enable_accurate_base_rtt" => c.accurate_base_rtt = true,
            "-disable_trim" => c.disable_trim = true,
            "-sleek" => c.sleek = true,
            f if QUIET.contains(&f) => {}
            f => {
                return Err(match REFUSED.iter().find(|(r, _)| *r == f) {
                    Some((_, why)) => format!("{f}: not supported: {why}"),
                    None => format!("{f}: not a flag hal-sim's uet-htsim command knows (nor models)"),
                })
            }
        }
        i += used;
    }
    if c.tm.is_empty() {
        return Err("-tm: a connection matrix is required".into());
    }
    if !sender_only {
        return Err(
            "-sender_cc_only: required: hal-sim runs NSCC alone (receiver credit, RCCC, is not modelled)".into(),
        );
    }
    Ok(c)
}

/// The scenario a command runs; relative files are read from `cwd`.
pub fn scenario(c: &Command, cwd: &Path) -> Result<Scenario, String> {
    let text = std::fs::read_to_string(cwd.join(&c.tm)).map_err(|e| format!("-tm {}: {e}", c.tm))?;
    let matrix = crate::setup::connection_matrix::parse(&text, &c.tm).map_err(|e| e.to_string())?;
    if !c.linkspeed_mbps.is_multiple_of(1000) || c.linkspeed_mbps == 0 {
        return Err(format!(
            "-linkspeed {}: a whole number of Gb/s, in Mb/s",
            c.linkspeed_mbps
        ));
    }
    let gbps = c.linkspeed_mbps / 1000;
    if c.mtu <= 64 || c.mtu - 64 > 9000 {
        return Err(format!("-mtu {}: 65 ..= 9064 bytes (64 of them header)", c.mtu));
    }
    let ns = (c.hop_latency_us * 1000.0).round() as u64;
    // The network and its diameter in links (uet-htsim's `get_diameter`).
    let (topology, diameter, delay_ns) = match &c.topo {
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
    // calculate_rtt, ps: 2·diameter·latency + (MTU + ACK)·8/Gb/s·diameter.
    let rtt_ps = 2 * diameter * delay_ns * 1000 + (c.mtu as u64 + 64) * 8 * 1000 * diameter / gbps;
    // calculate_bdp_pkt: ⌈RTT · rate / 8 / MTU⌉.
    let bdp_bytes = rtt_ps as u128 * c.linkspeed_mbps as u128 / 8_000_000;
    let bdp_pkts = bdp_bytes.div_ceil(c.mtu as u128) as u64;
    // Queues of one BDP where switches trim, five where they drop
    // (`DEFAULT_TRIMMING_QUEUESIZE_FACTOR`, `…NONTRIMMING…`).
    let queue_pkts = c.queue_pkts.unwrap_or(bdp_pkts * if c.disable_trim { 5 } else { 1 });
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
         [switch]\nport_buffer_bytes = {q}\necn_kmin_bytes = {kmin}\necn_kmax_bytes = {kmax}\n{overflow}\n\
         [nic]\ntelemetry = \"none\"\npayload_bytes = {payload}\nheader_bytes = 64\nack_bytes = 64\ntransport = \"sack\"\n{sack}paths = {paths}\nload_balancing = \"{lb}\"\nsleek = {sleek}\n\
         [cc]\nalgorithm = \"nscc\"\n{base}\
         [workload]\nkind = \"connection_matrix\"\npath = {tm:?}\n",
        seed = c.seed,
        stop = c.end_us as f64 / 1000.0,
        failed = c.failed,
        q = queue_pkts * mtu,
        kmin = low * mtu,
        kmax = high * mtu,
        overflow = match c.disable_trim {
            true => "drop_by_coin = true".to_string(),
            false => format!("trim_bytes = {}", c.trim_bytes),
        },
        sleek = c.sleek,
        payload = c.mtu - 64,
        paths = c.paths,
        tm = tm.display().to_string(),
    );
    let mut s = parse(&text, "uet-htsim").map_err(|e| e.to_string())?;
    if let Cc::Registered { engine, .. } = &mut s.cc.algorithm {
        engine.nscc = cc_core::nscc::NsccConfig::derive(c.linkspeed_mbps as u32, rtt_ps, c.mtu, !c.disable_trim);
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
        let s = scenario(&parse_args(&args("-tm one.cm -sender_cc_only -q 190")).unwrap(), &dir).unwrap();
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
        let e = parse_args(&args("-tm m.cm")).unwrap_err();
        assert!(e.starts_with("-sender_cc_only"), "{e}");
        let e = parse_args(&args("-sender_cc_only -paths")).unwrap_err();
        assert!(e.starts_with("-paths: expected a value"), "{e}");
    }
}
