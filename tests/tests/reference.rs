//! hal-sim held to the HPCC reference simulator's own runs
//! (docs/reference-runs.md): each stored flow list is replayed with the
//! scenario file beside it in `scenarios/reference/`, and each flow-size
//! bucket of at least 200 flows has its slowdown p50 / p95 / p99 land
//! near the stored FCT file's wherever at least ten flows lie beyond that
//! percentile (the p99 from 1000 flows): below that a percentile is
//! decided by one or two flows. The table is printed side by side.

use std::io::Read;
use std::path::{Path, PathBuf};

/// The buckets' upper ends, bytes (the reports' buckets).
const BUCKETS: [u64; 10] = [
    3_000,
    7_000,
    10_000,
    30_000,
    100_000,
    300_000,
    1_000_000,
    3_000_000,
    10_000_000,
    u64::MAX,
];
const PERCENTILES: [f64; 3] = [0.5, 0.95, 0.99];
/// A bucket of fewer flows is printed, not held.
const MIN_FLOWS: usize = 200;
/// Nor is a percentile with fewer flows beyond it.
const BEYOND: f64 = 10.0;

/// Whether percentile `p` of a bucket of `n` flows is held.
fn held(p: f64, n: usize) -> bool {
    n >= MIN_FLOWS && (1.0 - p) * n as f64 >= BEYOND - 1e-9
}

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/reference")
}

/// Slowdowns (FCT over the standalone FCT, at least 1) by bucket, from an
/// FCT file: `sip dip sport dport bytes start_ns fct_ns standalone_ns`.
fn buckets(text: &str) -> Vec<Vec<f64>> {
    let mut b = vec![Vec::new(); BUCKETS.len()];
    for l in text.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 8 {
            continue;
        }
        let (bytes, fct, ideal): (u64, f64, f64) =
            (f[4].parse().unwrap(), f[6].parse().unwrap(), f[7].parse().unwrap());
        let i = BUCKETS.iter().position(|&x| bytes <= x).unwrap();
        b[i].push((fct / ideal).max(1.0));
    }
    for v in &mut b {
        v.sort_by(f64::total_cmp);
    }
    b
}

fn pct(v: &[f64], p: f64) -> f64 {
    v[((p * v.len() as f64) as usize).min(v.len() - 1)]
}

/// Replays `scenario` and compares with `fct_gz`; the largest relative
/// difference of each percentile over the buckets held.
fn compare(scenario: &str, fct_gz: &str) -> [f64; 3] {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(dir().join(fct_gz)).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    let reference = buckets(&text);
    let (w, _) = hal_sim::run_file(&dir().join(scenario)).unwrap_or_else(|e| panic!("{e}"));
    let out = std::env::temp_dir().join(format!("reference-{}-{scenario}.fct", std::process::id()));
    hal_sim::output::report::write_ns3_fct(&w, &out).unwrap();
    let ours = buckets(&std::fs::read_to_string(&out).unwrap());
    let _ = std::fs::remove_file(&out);
    println!("{scenario} against {fct_gz}: slowdown p50 / p95 / p99, reference / hal-sim (difference; * not held)");
    let mut worst = [0.0f64; 3];
    for (i, (r, o)) in reference.iter().zip(&ours).enumerate() {
        assert_eq!(r.len(), o.len(), "bucket {i}: every flow finishes in both");
        if r.is_empty() {
            continue;
        }
        let mut row = String::new();
        for (k, p) in PERCENTILES.into_iter().enumerate() {
            let (a, b) = (pct(r, p), pct(o, p));
            let d = (b - a) / a;
            let mark = if held(p, r.len()) {
                worst[k] = worst[k].max(d.abs());
                ' '
            } else {
                '*'
            };
            row += &format!("  {a:.2} / {b:.2} ({:+.0} %){mark}", d * 100.0);
        }
        let bucket = match BUCKETS[i] {
            u64::MAX => "> 10 MB".to_string(),
            x => format!("≤ {x} B"),
        };
        println!("  {bucket:>12}  {:>5} flows{row}", r.len());
    }
    println!(
        "  largest difference held, p50 / p95 / p99: {:.1} / {:.1} / {:.1} %",
        worst[0] * 100.0,
        worst[1] * 100.0,
        worst[2] * 100.0
    );
    worst
}

/// Every held percentile of `w` within `limit`.
fn within(w: [f64; 3], limit: f64) -> bool {
    w.iter().all(|&d| d <= limit)
}

/// HPCC++ with the reference's HPCC settings, on WebSearch: every held
/// percentile within 15 % (measured: 4.0 / 6.4 % at p50 / p95).
#[test]
fn hpcc_matches_the_reference_on_websearch() {
    let worst = compare("fattree320-websearch30-hpcc.toml", "websearch30-fct-hpcc.txt.gz");
    assert!(within(worst, 0.15), "{worst:?}");
}

/// The same on FB_Hadoop, whose 49 510 flows put a p99 in five buckets.
#[test]
fn hpcc_matches_the_reference_on_fbhadoop() {
    let worst = compare("fattree320-fbhadoop30-hpcc.toml", "fbhadoop30-fct-hpcc.txt.gz");
    assert!(within(worst, 0.15), "{worst:?}");
}

/// HPCC-PINT with only the algorithm named (the reference's run.py
/// settings: HPCC's, on a two-byte code of log base 1.01 read from every
/// ACK), on both lists, and on FB_Hadoop with the one-byte code too (log
/// base 1.05, `pint_bytes = 1`; the reference's `--pint_log_base 1.05`):
/// every held percentile within 15 %. Measured at seeds 1-4, whose random
/// rounding of the codes differs, p50 / p95 / p99: WebSearch 1.6-3.6 /
/// 5.0-6.1 %; FB_Hadoop 2.1-2.3 / 4.3-5.4 / 4.1-4.6 %, in one byte 1.7-2.1
/// / 3.3-4.5 / 5.2-8.5 %. FB_Hadoop's short flows' tail is the PINT
/// paper's claim (slowdowns close to full-INT HPCC).
#[test]
fn hpcc_pint_matches_the_reference() {
    for (scenario, fct) in [
        (
            "fattree320-websearch30-hpcc-pint.toml",
            "websearch30-fct-hpcc-pint.txt.gz",
        ),
        (
            "fattree320-fbhadoop30-hpcc-pint.toml",
            "fbhadoop30-fct-hpcc-pint.txt.gz",
        ),
        (
            "fattree320-fbhadoop30-hpcc-pint-1byte.toml",
            "fbhadoop30-fct-hpcc-pint-1byte.txt.gz",
        ),
    ] {
        let worst = compare(scenario, fct);
        assert!(within(worst, 0.15), "{scenario}: {worst:?}");
    }
}

/// DCQCN with only the algorithm named (its defaults are the reference's
/// run.py settings; its switches mark on dequeue and its NICs flag the ACK
/// of every CE-marked packet as the reference's do), on FB_Hadoop: every
/// held percentile within 15 % (measured at seeds 1, 2, 3: 8.5, 10.0,
/// 10.8 % at most). With ACKs ahead of data at the switches the short flows'
/// p95 falls 33 % below the reference's; with marking on enqueue their
/// p99 rises 45-59 % above it.
#[test]
fn dcqcn_matches_the_reference_on_fbhadoop() {
    let worst = compare("fattree320-fbhadoop30-dcqcn.toml", "fbhadoop30-fct-dcqcn.txt.gz");
    assert!(within(worst, 0.15), "{worst:?}");
}

/// DCQCN on WebSearch: p50 within 15 %, p95 within 50 % (measured: 4.0 %
/// and 8.5 %). WebSearch's buckets hold 140-705 flows, and random marking
/// moves the 1 MB flows' p95 (260 flows) from -8 to +35 % of the
/// reference's over seeds 1-5 in
/// hal-sim: the reference's single run is one such draw, so a tighter
/// bound here would hold a seed, not the model (FB_Hadoop holds it).
#[test]
fn dcqcn_is_near_the_reference_on_websearch() {
    let worst = compare("fattree320-websearch30-dcqcn.toml", "websearch30-fct-dcqcn.txt.gz");
    assert!(worst[0] <= 0.15 && worst[1] <= 0.5, "{worst:?}");
}

/// TIMELY with only the algorithm named (the reference's run.py settings;
/// ACKs ahead of data at the NICs, in the data's queues at the switches,
/// as the reference's), on both lists: every held percentile within 20 %
/// (measured: WebSearch 2.3 / 10.8 %, FB_Hadoop 4.2 % at most). With ACKs
/// ahead of data at the switches too, hal-sim's earlier reading of the
/// reference's `ACK_HIGH_PRIO`, short flows' p95 falls 65 % below.
#[test]
fn timely_matches_the_reference() {
    for (scenario, fct) in [
        ("fattree320-websearch30-timely.toml", "websearch30-fct-timely.txt.gz"),
        ("fattree320-fbhadoop30-timely.toml", "fbhadoop30-fct-timely.txt.gz"),
    ] {
        let worst = compare(scenario, fct);
        assert!(within(worst, 0.2), "{scenario}: {worst:?}");
    }
}

/// The reference's queue at node `switch`'s port `port` over its flows'
/// lifetime, from its `QLEN_MON_FILE` (cumulative counts of 100 ns
/// samples by whole KB, dumped every 100 ms; the last dump taken, and the
/// samples after `end_ns`, when every flow had finished and the queue
/// was empty, taken off the zero bin): (p99, max) in bytes, each the
/// bottom of its 1 KB bin.
fn reference_queue(qlen: &str, switch: u32, port: u32, end_ns: u64) -> (f64, f64) {
    let last = qlen.rsplit("time:").next().unwrap();
    let bins: Vec<u64> = last
        .lines()
        .map(|l| {
            l.split_whitespace()
                .map(|x| x.parse::<u64>().unwrap())
                .collect::<Vec<_>>()
        })
        .find(|f| f.len() > 2 && f[0] == switch as u64 && f[1] == port as u64)
        .map(|f| f[2..].to_vec())
        .unwrap();
    let mut bins = bins;
    let total: u64 = bins.iter().sum();
    bins[0] -= total - end_ns / 100;
    let n: u64 = bins.iter().sum();
    let mut seen = 0;
    let p99 = bins
        .iter()
        .position(|&c| {
            seen += c;
            seen > n * 99 / 100
        })
        .unwrap();
    (p99 as f64 * 1000.0, (bins.len() - 1) as f64 * 1000.0)
}

/// The reference's 2-to-1 (two 20 MB flows into one 100 Gb/s port),
/// replayed: each flow's completion time within 10 %, and the
/// bottleneck's queue p99 and maximum over the flows' lifetime within 10
/// % or 2 KB (measured: FCTs within 1 % for DCQCN and TIMELY, 3-7 % for
/// HPCC++, 0.1-5.8 % for HPCC-PINT over seeds 1-5; queue p99 and maximum
/// within 2-7 %).
#[test]
fn two_to_one_matches_the_reference() {
    for a in ["hpcc", "dcqcn", "timely", "hpcc-pint"] {
        let (w, s) = hal_sim::run_file(&dir().join(format!("twotoone20-{a}.toml"))).unwrap_or_else(|e| panic!("{e}"));
        let fct = std::fs::read_to_string(dir().join(format!("twotoone20-fct-{a}.txt"))).unwrap();
        // The first to finish against the first: which of two equal flows
        // that is, the first RTT's arrivals decide (HPCC++'s part there).
        let mut theirs: Vec<u64> = fct
            .lines()
            .map(|l| l.split_whitespace().nth(6).unwrap().parse().unwrap())
            .collect();
        let mut ours: Vec<u64> = w
            .flows
            .iter()
            .map(|f| (f.finish_ps.unwrap() - f.start_ps).as_ns())
            .collect();
        theirs.sort_unstable();
        ours.sort_unstable();
        assert_eq!(theirs.len(), ours.len());
        for (i, (t, o)) in theirs.iter().zip(&ours).enumerate() {
            let d = (*o as f64 - *t as f64) / *t as f64;
            println!(
                "{a} 2-to-1, flow finishing {}: FCT reference {t} ns, hal-sim {o} ns ({:+.1} %)",
                i + 1,
                d * 100.0
            );
            assert!(d.abs() <= 0.1, "{a}, flow finishing {}: {d}", i + 1);
        }
        let end = theirs.last().copied().unwrap_or(0);
        let qlen = std::fs::read_to_string(dir().join(format!("twotoone20-qlen-{a}.txt"))).unwrap();
        // Node 3's port 3 leads to host 2.
        let (p99, max) = reference_queue(&qlen, 3, 3, end);
        for (what, theirs, ours) in [("p99", p99, s.queue_bytes.p99), ("max", max, s.queue_bytes.max)] {
            println!("{a} 2-to-1, queue {what}: reference {theirs} B (1 KB bins), hal-sim {ours} B");
            assert!((ours - theirs).abs() <= (0.1 * theirs).max(2000.0), "{a}, queue {what}");
        }
    }
}

/// The reference's own topology file for the 2-to-1
/// (`twotoone-topology.txt`, read as `[topology] kind = "ns3"`) replays
/// as the `incast` shape it stands for: every flow finishes at the same
/// picosecond, every monitored queue peaks at the same byte.
#[test]
fn the_two_to_one_topology_file_replays_as_the_incast_shape() {
    use hal_sim::setup::scenario::{load, Shape};
    let path = dir().join("twotoone20-hpcc.toml");
    let shape = load(&path).unwrap_or_else(|e| panic!("{e}"));
    let mut file = shape.clone();
    file.topology.shape = Shape::Ns3 {
        path: "twotoone-topology.txt".into(),
    };
    let run = |s| hal_sim::run_scenario(s, &dir(), "twotoone20-hpcc").unwrap_or_else(|e| panic!("{e}"));
    let ((a, _), (b, _)) = (run(&shape), run(&file));
    let finish = |w: &hal_sim::run::world::World| w.flows.iter().map(|f| f.finish_ps).collect::<Vec<_>>();
    assert_eq!(finish(&a), finish(&b));
    assert!(finish(&a).iter().all(Option::is_some));
    let peaks = |w: &hal_sim::run::world::World| {
        w.metrics
            .ports
            .iter()
            .map(|p| (p.name.clone(), p.max_queue))
            .collect::<Vec<_>>()
    };
    assert_eq!(peaks(&a), peaks(&b));
}

/// The receiver's port in the PowerTCP authors' burst: (time ns, queue
/// bytes, bytes sent since the sample before), from the authors' run
/// (`powertcp-burst256-port16-{a}.txt`: their `PrintResults` lines for
/// ToR 0's port 16, every 1.5 minimum RTTs, 149 to 160 ms) or from
/// hal-sim's series for switch 256's port 16 (every µs).
type Series = Vec<(f64, f64, f64)>;

/// What the burst shows at the receiver's port and in its short flows:
/// the queue's peak after 150 ms (bytes), the time from 150 ms until the
/// queue, past that peak, first falls below a tenth of it (µs), the
/// port's utilization from 151 to 160 ms, the 255 short flows' FCT p50
/// and p99 (µs), and the port's mean queue from 151 to 160 ms (bytes).
fn burst_figures(port: &Series, short_fct_ns: &mut [f64]) -> [f64; 6] {
    let after: Vec<_> = port.iter().filter(|s| s.0 >= 150.0e6 && s.0 <= 160.0e6).collect();
    let (i_peak, peak) = after
        .iter()
        .enumerate()
        .map(|(i, s)| (i, s.1))
        .fold((0, 0.0), |a, b| if b.1 > a.1 { b } else { a });
    let drained = after[i_peak..]
        .iter()
        .find(|s| s.1 < peak / 10.0)
        .map_or(f64::INFINITY, |s| (s.0 - 150.0e6) / 1e3);
    let busy: Vec<_> = port.iter().filter(|s| s.0 > 151.0e6 && s.0 <= 160.0e6).collect();
    let span = busy.last().unwrap().0 - busy.first().unwrap().0;
    let sent: f64 = busy[1..].iter().map(|s| s.2).sum();
    let utilization = sent * 8.0 / (span * 1e-9) / 25e9;
    let queue = busy.iter().map(|s| s.1).sum::<f64>() / busy.len() as f64;
    short_fct_ns.sort_by(f64::total_cmp);
    let p = |q: f64| short_fct_ns[((q * short_fct_ns.len() as f64) as usize).min(short_fct_ns.len() - 1)] / 1e3;
    [peak, drained, utilization, p(0.5), p(0.99), queue]
}

/// hal-sim's run of `powertcp-burst256-{a}.toml`.
fn burst_ours(a: &str) -> [f64; 6] {
    let (w, _) =
        hal_sim::run_file(&dir().join(format!("powertcp-burst256-{a}.toml"))).unwrap_or_else(|e| panic!("{e}"));
    let p = w
        .metrics
        .ports
        .iter()
        .find(|p| p.name == "switch 256 port 16 → node 16")
        .unwrap();
    let mut port = Vec::new();
    for i in 0..p.t_ns.len() {
        let sent = if i == 0 { 0 } else { p.tx_bytes[i] - p.tx_bytes[i - 1] };
        port.push((p.t_ns[i], p.queue[i] as f64, sent as f64));
    }
    let mut fct: Vec<f64> = w
        .flows
        .iter()
        .filter(|f| f.size == 2800)
        .map(|f| (f.finish_ps.unwrap() - f.start_ps).as_ns() as f64)
        .collect();
    assert_eq!(fct.len(), 255);
    burst_figures(&port, &mut fct)
}

/// The authors' run of the same: its port lines and its FCT file.
fn burst_theirs(a: &str) -> [f64; 6] {
    let text = std::fs::read_to_string(dir().join(format!("powertcp-burst256-port16-{a}.txt"))).unwrap();
    let port: Series = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let f: Vec<f64> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
            (f[0] * 1e9, f[1], f[2])
        })
        .collect();
    let fct = std::fs::read_to_string(dir().join(format!("powertcp-burst256-fct-{a}.txt"))).unwrap();
    let mut fct: Vec<f64> = fct
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() >= 8 && f[4] == "2800")
        .map(|f| f[6].parse().unwrap())
        .collect();
    assert_eq!(fct.len(), 255);
    burst_figures(&port, &mut fct)
}

/// The PowerTCP authors' burst (docs/reference-runs.md), replayed with
/// their settings for HPCC, PowerTCP, θ-PowerTCP and HPCC-PINT, against
/// their ns-3 runs: the receiver port's queue peak, the time it takes to
/// drain, and the short flows' FCT p50 and p99 each within 15 %
/// (measured: HPCC 1.6-2.3 %, θ-PowerTCP 1.0-13.0 %, HPCC-PINT 0.7-3.3
/// %); once the burst has drained, the port's utilization within 0.03
/// (0.965 / 0.965, 1.001 / 0.993, 0.985 / 0.978, 0.962 / 0.961; authors /
/// hal-sim) and its mean queue within 1 kB (1.36 / 1.41, 2.04 / 2.81,
/// 1.84 / 1.76, 1.45 / 1.41 kB). Both simulators are deterministic here.
/// PowerTCP is held only once the burst has drained: their
/// `UpdateRatePower` has no first-RTT branch (their HPCC's has), so each
/// flow's first ACK reads power against hop records of zero (U 12.3 for
/// host 1's long flow, its rate cut from 25 to 4.4 Gb/s 4.8 µs into the
/// burst), where hal-sim's PowerTCP, as the paper's, only records; its
/// queue then peaks 41 % higher than theirs, as HPCC's does
/// (docs/reference-runs.md).
#[test]
fn the_powertcp_burst_against_the_authors_run() {
    for a in ["hpcc", "powertcp", "theta-powertcp", "hpcc-pint"] {
        let (t, o) = (burst_theirs(a), burst_ours(a));
        println!(
            "{a} burst: queue peak {:.0} / {:.0} B, drained below a tenth in {:.0} / {:.0} µs, utilization {:.3} / {:.3}, short FCT p50 {:.1} / {:.1} µs, p99 {:.1} / {:.1} µs, then a mean queue of {:.0} / {:.0} B (authors / hal-sim)",
            t[0], o[0], t[1], o[1], t[2], o[2], t[3], o[3], t[4], o[4], t[5], o[5]
        );
        for (what, i) in [
            ("queue peak", 0),
            ("drain time", 1),
            ("short FCT p50", 3),
            ("short FCT p99", 4),
        ] {
            if a == "powertcp" {
                continue;
            }
            let d = (o[i] - t[i]) / t[i];
            assert!(d.abs() <= 0.15, "{a}: {what} {:.1} % off", d * 100.0);
        }
        assert!(
            (o[2] - t[2]).abs() <= 0.03,
            "{a}: utilization {} against {}",
            o[2],
            t[2]
        );
        assert!(
            (o[5] - t[5]).abs() <= 1000.0,
            "{a}: mean queue {} against {}",
            o[5],
            t[5]
        );
    }
}
