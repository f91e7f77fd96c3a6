//! Scenario acceptance: hal-sim runs the shipped scenarios with the cc-core
//! engine in its NICs, and these tests assert the drafts' behaviour from
//! measured figures (issue: queues drain, utilization reaches eta, windows
//! go below one packet under heavy incast, fast start drops only first-RTT
//! packets), at the bounds. Where a bound holds with little room
//! (the 2-to-1 FCTs, the 60-to-1 drain) the comment says why, and the
//! README's "Known shortfalls" gives the spread over seeds.

use std::path::{Path, PathBuf};

use hal_sim::output::report::Summary;
use hal_sim::run::world::World;

fn scenario(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(format!("{name}.toml"))
}

fn run(name: &str) -> (World, Summary) {
    hal_sim::run_file(&scenario(name)).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs a shipped scenario after `change`.
fn run_changed(name: &str, change: impl FnOnce(&mut hal_sim::setup::scenario::Scenario)) -> (World, Summary) {
    let path = scenario(name);
    let mut s = hal_sim::setup::scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
    change(&mut s);
    hal_sim::run_scenario(&s, path.parent().unwrap(), name).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs uet-htsim's command line `line` through `hal-sim uet-htsim`, from
/// the folder of uet-htsim's stored files.
fn run_uet_line(line: &str) -> (World, Summary) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/reference/uet-htsim");
    let args: Vec<String> = line.split_whitespace().map(String::from).collect();
    let c = hal_sim::setup::uet_htsim::parse_args(&args).unwrap_or_else(|e| panic!("{line}: {e}"));
    let s = hal_sim::setup::uet_htsim::scenario(&c, &dir).unwrap_or_else(|e| panic!("{line}: {e}"));
    hal_sim::run_scenario(&s, &dir, "uet-htsim").unwrap_or_else(|e| panic!("{line}: {e}"))
}

/// A shipped 2-to-1 incast with its second flow starting 5 ms after the
/// first.
fn run_second_flow_late(name: &str) -> (World, Summary) {
    run_changed(name, |s| {
        use hal_sim::setup::scenario::{FlowSpec, Flows};
        let Flows::Incast { bytes, .. } = s.workload.flows else {
            panic!("{name} is an incast")
        };
        let flow = |src, start_ns| FlowSpec {
            src,
            dst: 0,
            bytes: bytes.0,
            start_ns,
            dport: 100,
        };
        s.workload.flows = Flows::List(vec![flow(1, 0), flow(2, 5_000_000)]);
    })
}

/// Wire bytes of one full data packet of a run.
fn data_packet_wire(w: &World) -> u64 {
    (w.cfg.payload + u32::from(w.cfg.header) + w.cfg.tel.wire_bytes(1)) as u64
}

/// How the first monitored port's queue came down from its peak, on a
/// 100 Gb/s port: its peak (bytes) and when (ns), the RTT then (the
/// flows' base RTT plus the peak's drain at 12.5 bytes a ns), how many of
/// those RTTs passed before the queue was below `threshold` bytes, and
/// how many of the samples after that were at or above it, of how many.
struct Drain {
    peak: u64,
    peak_at: f64,
    rtt_at_peak: f64,
    rtts_to_under: f64,
    above: usize,
    after: usize,
}

impl Drain {
    /// Under the threshold within `rtts` RTTs of the peak, and at or above
    /// it in at most 1 % of the samples after.
    fn assert_held(&self, rtts: f64, what: &str) {
        self.assert_held_but(rtts, 0.01, what)
    }

    /// [`Drain::assert_held`] with at most `share` of the samples after at
    /// or above the threshold.
    fn assert_held_but(&self, rtts: f64, share: f64, what: &str) {
        assert!(self.rtts_to_under <= rtts, "{what}: {:.2} RTTs", self.rtts_to_under);
        assert!(
            self.above as f64 <= share * self.after as f64,
            "{what}: {} of {} samples at the threshold or more",
            self.above,
            self.after
        );
    }
}

fn drain(w: &World, threshold: f64) -> Drain {
    let base_rtt = hal_sim::output::report::flow_results(w)[0].base_rtt_ns;
    let p = &w.metrics.ports[0];
    let samples = || p.t_ns.iter().copied().zip(p.queue.iter().copied());
    let (peak_at, peak) = samples().fold((0.0, 0u64), |(t0, q0), (t, q)| if q > q0 { (t, q) } else { (t0, q0) });
    let rtt_at_peak = base_rtt + peak as f64 / 12.5;
    let under = samples()
        .find(|&(t, q)| t > peak_at && (q as f64) < threshold)
        .map(|(t, _)| t)
        .expect("the queue falls below the threshold");
    let after: Vec<u64> = samples().filter(|&(t, _)| t > under).map(|(_, q)| q).collect();
    Drain {
        peak,
        peak_at,
        rtt_at_peak,
        rtts_to_under: (under - peak_at) / rtt_at_peak,
        above: after.iter().filter(|&&q| q as f64 >= threshold).count(),
        after: after.len(),
    }
}

/// HPCC++ 2-to-1 as the SIGCOMM'19 simulator ran it.
#[test]
fn hpcc_2to1_reaches_eta_with_a_near_empty_queue() {
    let (w, s) = run("hpcc-2to1");
    assert_eq!(s.flows_finished, 2);
    let u = &s.link_utilization[0];
    assert!(
        u.utilization >= 0.94,
        "bottleneck utilization after 1 ms: {:.4}",
        u.utilization
    );
    // "queue p99 ≤ 1 KB": read as at most one packet waiting; a packet with
    // 1000 bytes of payload is 1050 bytes when it is queued.
    assert!(
        s.queue_bytes.p99 <= data_packet_wire(&w) as f64,
        "queue p99 {} B",
        s.queue_bytes.p99
    );
    assert_eq!(s.drops, 0);
    assert!(s.jain_fairness >= 0.98, "Jain {:.4}", s.jain_fairness);
}

/// How far apart the two FCTs of the 2-to-1 end, over seeds 1-8 (the seed
/// moves the NICs' Tx jitter, so which sender's Wc update meets the higher
/// U in the first RTT). That first-RTT split is what is left at the end:
/// W_ai = 26 B per RTT takes milliseconds to undo it. Measured: 7.3, 0.1,
/// 6.0, 2.2, 4.7, 3.4, 0.8, 0.8 % apart (median 2.8 %; which seed lands
/// where moves with the engine's last bits). The bounds hold for every
/// seed with room: median ≤ 6 %, worst ≤ 12 %.
#[test]
fn hpcc_2to1_fcts_end_close_over_seeds() {
    let text = std::fs::read_to_string(scenario("hpcc-2to1")).unwrap();
    let apart = |seed: u32| {
        let s = hal_sim::setup::scenario::parse(
            &text.replace("seed = 1\n", &format!("seed = {seed}\n")),
            "hpcc-2to1.toml",
        )
        .unwrap();
        let mut w = World::new(&s, Path::new("."), "hpcc-2to1.toml").unwrap();
        w.run(|_| {});
        let fct: Vec<f64> = hal_sim::output::report::flow_results(&w)
            .iter()
            .map(|f| f.fct_ns.unwrap())
            .collect();
        (fct[0] - fct[1]).abs() / fct[0].max(fct[1])
    };
    let mut all: Vec<f64> = std::thread::scope(|sc| {
        let runs: Vec<_> = (1..=8).map(|seed| sc.spawn(move || apart(seed))).collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    all.sort_by(f64::total_cmp);
    let median = (all[3] + all[4]) / 2.0;
    let pct: Vec<String> = all.iter().map(|a| format!("{:.1}", a * 100.0)).collect();
    assert!(median <= 0.06, "median {:.1} % apart (sorted: {pct:?})", median * 100.0);
    assert!(all[7] <= 0.12, "worst {:.1} % apart (sorted: {pct:?})", all[7] * 100.0);
}

/// HPCC++ 60-to-1: the initial burst drains and the last flow ends near
/// the ideal drain time.
#[test]
fn hpcc_incast60_drains_and_finishes_near_the_ideal_time() {
    let (w, s) = run("hpcc-incast60");
    assert_eq!(s.flows_finished, 60);
    assert_eq!(s.drops, 0);
    let flows = hal_sim::output::report::flow_results(&w);
    let last = flows.iter().map(|f| f.start_ns + f.fct_ns.unwrap()).fold(0.0, f64::max);
    // Every byte on the wire: payload plus header and telemetry per packet.
    let per_packet = data_packet_wire(&w) - w.cfg.payload as u64;
    let bytes: u64 = flows
        .iter()
        .map(|f| f.bytes + f.bytes.div_ceil(w.cfg.payload as u64) * per_packet)
        .sum();
    let ideal = bytes as f64 * 8.0 / 100e9 * 1e9 + flows[0].base_rtt_ns;
    // Once the burst has drained HPCC++ holds the link at eta (0.95 in the
    // scenario file), which costs 1/eta - 1 = 5.3 %; the burst drains at
    // line rate, so the whole run can do a little better than 1/eta.
    // Measured 5.2 % (the run draws nothing at random: no jitter). It was
    // 4.9 % while the EWMA's rounding held U below u' (an effective eta of
    // about 95.4 %); the bound is the draft's, 1/eta, with 0.5 % of room.
    let eta = 0.95;
    let over = last / ideal;
    assert!(
        over <= 1.0 / eta + 0.005,
        "last FCT {:.1} us vs ideal {:.1} us ({:.3}x)",
        last / 1e3,
        ideal / 1e3,
        over
    );
    // The burst of 60 BDPs is gone within half a millisecond.
    let p = &w.metrics.ports[0];
    let late: Vec<u64> = p
        .t_ns
        .iter()
        .zip(&p.queue)
        .filter(|(t, _)| **t > 500_000.0)
        .map(|(_, q)| *q)
        .collect();
    let max_late = late.iter().copied().max().unwrap_or(0);
    assert!(max_late < 100_000, "queue after 0.5 ms peaks at {max_late} B");
}

/// LDCP 1000-to-1: windows below one packet, no stable-stage drops, the
/// queue under K_max most of the time.
#[test]
fn ldcp_incast1000_goes_below_one_packet_without_stable_drops() {
    let (w, s) = run("ldcp-incast1000");
    assert_eq!(s.flows_finished, 1000);
    assert!(
        s.counters.timer_releases > 10_000,
        "timer releases {}",
        s.counters.timer_releases
    );
    let below = w
        .metrics
        .traces
        .iter()
        .flat_map(|t| t.window.iter())
        .filter(|&&b| b < w.cfg.payload as f64)
        .count();
    assert!(below > 0, "no traced window below one packet");
    assert_eq!(s.counters.drops_stable, 0, "stable-stage drops");
    let kmax = w.cfg.marking.kmax as f64;
    let p = &w.metrics.ports[0];
    let under = p.queue.iter().filter(|&&q| (q as f64) < kmax).count() as f64 / p.queue.len() as f64;
    assert!(under >= 0.6, "queue under K_max {:.1} % of the time", under * 100.0);
}

/// LDCP fast start: under a 60-to-1 incast only first-RTT (ECN-incapable)
/// packets are dropped, and every flow completes.
#[test]
fn ldcp_fast_start_drops_only_first_rtt_packets() {
    let (_, s) = run("ldcp-incast60");
    assert_eq!(s.flows_finished, 60);
    assert!(s.counters.drops_fast_start > 0, "the incast should overflow K");
    assert_eq!(
        s.drops, s.counters.drops_fast_start,
        "a drop that was not a first-RTT packet"
    );
    assert_eq!(s.counters.drops_stable, 0);
}

/// LDCP 2-to-1: PAWA holds the queue between the marking thresholds at
/// full utilization, and the two flows share fairly.
#[test]
fn ldcp_2to1_holds_the_queue_at_full_rate() {
    let (w, s) = run("ldcp-2to1");
    assert_eq!(s.flows_finished, 2);
    assert!(s.link_utilization[0].utilization >= 0.95, "{:?}", s.link_utilization);
    assert!(
        s.queue_bytes.p99 < w.cfg.marking.kmax as f64,
        "queue p99 {} B",
        s.queue_bytes.p99
    );
    assert_eq!(s.counters.drops_stable, 0);
    let fct: Vec<f64> = hal_sim::output::report::flow_results(&w)
        .iter()
        .map(|f| f.fct_ns.unwrap())
        .collect();
    assert!(fct[0].max(fct[1]) / fct[0].min(fct[1]) <= 1.05, "FCTs {fct:?}");
}

/// DCTCP 2-to-1, the baseline, against the DCTCP paper's analysis of its
/// steady state (Alizadeh et al., SIGCOMM 2010, §3.3): the windows
/// saw-tooth in step, so the queue peaks at Q_max = K + N packets and
/// swings down by A = N·D, with W* = (C·RTT + K)/N packets a flow, alpha =
/// sqrt(2/W*) and D = W*·alpha/2. Here (N = 2, K = 30 KB, C·RTT ≈ 175 KB):
/// Q_max ≈ 32 KB, A ≈ 15 KB. Measured: queue p50 27.2 KB, p99 32.5 KB, max
/// 33.5 KB, utilization 99.9 %: the queue sits near K where HPCC++ keeps
/// about one packet (hpcc_2to1_reaches_eta_with_a_near_empty_queue).
#[test]
fn dctcp_2to1_holds_the_queue_at_k_as_its_analysis_predicts() {
    let (w, s) = run("dctcp-2to1");
    assert_eq!(s.flows_finished, 2);
    assert!(s.link_utilization[0].utilization >= 0.98, "{:?}", s.link_utilization);
    assert_eq!(s.drops, 0);
    assert!(s.jain_fairness >= 0.99, "Jain {:.4}", s.jain_fairness);
    let pkt = data_packet_wire(&w) as f64;
    let n = 2.0;
    let k = w.cfg.marking.kmax as f64;
    let bdp = 100e9 / 8.0 * w.flows[0].path_rtt_ns as f64 * 1e-9;
    let w_star = (bdp + k) / pkt / n;
    let amplitude = n * w_star * (2.0 / w_star).sqrt() / 2.0 * pkt;
    let q_max = k + n * pkt;
    assert!(
        s.queue_bytes.p99 <= q_max + 2.0 * pkt,
        "queue p99 {} B, Q_max {q_max:.0} B",
        s.queue_bytes.p99
    );
    assert!(
        s.queue_bytes.p50 >= q_max - amplitude && s.queue_bytes.p50 <= q_max,
        "queue p50 {} B, Q_max {q_max:.0} B, swing {amplitude:.0} B",
        s.queue_bytes.p50
    );
}

/// DCQCN 2-to-1 with the HPCC paper simulator's parameters and marking
/// (400 KB to 1.6 MB): CNPs cut both flows together, the 300 µs increase
/// timer brings them back, and the queue swings through the marking band.
/// Measured over seeds 1-5: utilization 88.8-90.7 %, queue p99 760 KB to
/// 1.1 MB, Jain ≥ 0.998, no drops: a full link most of the time, at a
/// queue hundreds of times HPCC++'s.
#[test]
fn dcqcn_2to1_keeps_the_queue_in_its_marking_band() {
    let (w, s) = run("dcqcn-2to1");
    assert_eq!(s.flows_finished, 2);
    assert!(s.link_utilization[0].utilization >= 0.85, "{:?}", s.link_utilization);
    assert_eq!(s.drops, 0);
    assert!(s.jain_fairness >= 0.99, "Jain {:.4}", s.jain_fairness);
    // K_min as the scenario file sets it; K_max as the run holds it.
    let (kmin, kmax) = (400_000.0, w.cfg.marking.kmax as f64);
    assert!(
        s.queue_bytes.p99 >= kmin && s.queue_bytes.p99 <= kmax,
        "queue p99 {} B outside [{kmin}, {kmax}]",
        s.queue_bytes.p99
    );
}

/// TIMELY 2-to-1 with the HPCC reference simulator's TIMELY (T_low 50 µs,
/// T_high 500 µs), no telemetry, no ECN: below T_low both flows only
/// increase, so the queue grows until the RTT passes T_low, and the
/// gradient then holds it in a band well below T_high. Measured over seeds
/// 1-5: utilization 89.0-90.0 %, queue p99 790-813 KB (an RTT of 67-69
/// µs), max 840-886 KB (75 µs), Jain 0.996-0.997, no drops. TIMELY's
/// fluid model has no unique fixed point (any split with the same sum
/// holds the gradient at 0); the engine's two flows, starting together or
/// 5 ms apart, end up sharing evenly (Jain 0.995 with the late start,
/// whose arrival peaks the queue at 1.7 MB, 141 µs).
#[test]
fn timely_2to1_holds_its_rtt_between_t_low_and_t_high() {
    let t_low_ns = 50_000.0;
    let t_high_ns = 500_000.0;
    let rtt_ns = |w: &World, queue: f64| w.flows[0].path_rtt_ns as f64 + queue * 8.0 / 100.0;
    let (w, s) = run("timely-2to1");
    assert_eq!(s.flows_finished, 2);
    assert!(s.link_utilization[0].utilization >= 0.85, "{:?}", s.link_utilization);
    assert_eq!(s.drops, 0);
    assert!(s.jain_fairness >= 0.99, "Jain {:.4}", s.jain_fairness);
    let (p99, max) = (rtt_ns(&w, s.queue_bytes.p99), rtt_ns(&w, s.queue_bytes.max));
    assert!(
        p99 >= t_low_ns && max < t_high_ns,
        "RTT at the queue's p99 {p99:.0} ns, at its max {max:.0} ns"
    );
    // The second flow 5 ms late.
    let (w, s) = run_second_flow_late("timely-2to1");
    assert_eq!(s.flows_finished, 2);
    assert!(s.jain_fairness >= 0.98, "Jain {:.4} with a late start", s.jain_fairness);
    let max = rtt_ns(&w, s.queue_bytes.max);
    assert!(max < t_high_ns, "RTT at the queue's max {max:.0} ns with a late start");
}

/// θ-PowerTCP 2-to-1 with the paper's constants (γ 0.9, β = BDP/10, Γ
/// sampled on every ACK): at equilibrium Γ = 1 + N·β/BDP, so the queue
/// holds the flows' β, N·β = 20 % of a BDP here, at a full link. Measured:
/// utilization 100.0 %, queue p50 8.4 KB against N·β = 10.4 KB (the NICs'
/// 100 ns send jitter reads as a rising RTT a little more often than a
/// falling one; without it p50 is 10.5 KB), p99 11.5 KB, Jain 1.000; with
/// the second flow 5 ms late, utilization 99.2 %, queue p50 7.3 KB, Jain
/// 1.000.
#[test]
fn theta_powertcp_2to1_holds_n_betas_of_queue_at_full_rate() {
    n_betas_at_full_rate("theta-powertcp-2to1", 1.25);
}

/// A PowerTCP 2-to-1 (`name`), together and with the second flow 5 ms
/// late: the link full, nothing dropped, the flows fair, the queue's p50
/// at least half of N·β (β = BDP/10) and its p99 at most `p99_of` N·β.
fn n_betas_at_full_rate(name: &str, p99_of: f64) {
    let check = |w: &World, s: &Summary, late: bool| {
        assert_eq!(s.flows_finished, 2);
        assert!(s.link_utilization[0].utilization >= 0.99, "{:?}", s.link_utilization);
        assert_eq!(s.drops, 0);
        assert!(
            s.jain_fairness >= 0.98,
            "Jain {:.4} (late start: {late})",
            s.jain_fairness
        );
        let bdp = 100e9 / 8.0 * w.flows[0].base_rtt_ns as f64 * 1e-9;
        let n_beta = 2.0 * bdp / 10.0;
        assert!(
            s.queue_bytes.p50 >= 0.5 * n_beta && s.queue_bytes.p99 <= p99_of * n_beta,
            "{name}: queue p50 {} / p99 {} B against N·β {n_beta:.0} B (late start: {late})",
            s.queue_bytes.p50,
            s.queue_bytes.p99
        );
    };
    let (w, s) = run(name);
    check(&w, &s, false);
    let (w, s) = run_second_flow_late(name);
    check(&w, &s, true);
}

/// PowerTCP 2-to-1 with the paper's constants (γ 0.9, β = BDP/10, the
/// window once per RTT) and compact telemetry: at equilibrium Γ = 1 +
/// N·β/BDP, so the queue holds N·β = 20 % of a BDP at a full link, as the
/// θ form's, here measured by the switch itself. Measured: utilization
/// 100.0 %, queue p50 11.6 KB / p99 13.7 KB against N·β = 10.4 KB (the
/// same without send jitter), Jain 1.000; second flow 5 ms late: 100.0 %,
/// 10.5 / 13.7 KB, Jain 1.000.
#[test]
fn powertcp_2to1_holds_n_betas_of_queue_at_full_rate() {
    n_betas_at_full_rate("powertcp-2to1", 1.5);
}

/// The PowerTCP paper's burst (`scenarios/{powertcp,theta-powertcp,hpcc}-incast255.toml`):
/// four long flows hold a 100 Gb/s port; at 3 ms 255 senders each start
/// one 4 kB flow at line rate, 1.02 MB at once (its own bytes take 82 µs
/// to leave at line rate). The three algorithms bring the queue under one
/// BDP within ten RTTs of its peak (the RTT then, about 90 µs, is mostly
/// that drain), drop nothing and keep the port full: PowerTCP and
/// θ-PowerTCP at their N·β standing queue (4 flows: 21 KB), HPCC++ at η.
/// Measured, PowerTCP / θ / HPCC++: peak 1.09 / 1.09 / 1.07 MB, under one
/// BDP 0.97 / 0.97 / 0.96 RTTs after it (the long flows out of the way at
/// once), samples at a BDP or more afterwards 34 / 0 / 10 of 1910,
/// utilization 99.9 / 99.8 / 94.9 %. PowerTCP's 34: while the burst
/// drains, its telemetry shows arrivals near zero (the queue falls as fast
/// as the port sends), Γ falls to its floor and the next update sets each
/// long flow's window to the BDP; the four windows hold a queue of about 3
/// BDPs for some 40 µs before Γ brings them back.
#[test]
fn a_burst_of_255_drains_within_ten_rtts_and_the_port_stays_full() {
    for (name, utilization, above) in [
        ("powertcp-incast255", 0.99, 0.03),
        ("theta-powertcp-incast255", 0.99, 0.01),
        ("hpcc-incast255", 0.94, 0.01),
    ] {
        let (w, s) = run(name);
        assert_eq!((s.flows_finished, s.drops), (255, 0), "{name}");
        assert!(
            s.link_utilization[0].utilization >= utilization,
            "{name}: {:?}",
            s.link_utilization
        );
        let bdp = 12.5 * hal_sim::output::report::flow_results(&w)[0].base_rtt_ns;
        let d = drain(&w, bdp);
        println!(
            "{name}: peak {} B at {:.0} ns (RTT {:.0} ns); under one BDP ({bdp:.0} B) {:.2} RTTs later; {} of {} samples above after; utilization {:.3}",
            d.peak,
            d.peak_at,
            d.rtt_at_peak,
            d.rtts_to_under,
            d.above,
            d.after,
            s.link_utilization[0].utilization
        );
        assert!(
            d.peak as f64 > 900_000.0,
            "{name}: the burst arrives at once ({} B)",
            d.peak
        );
        d.assert_held_but(10.0, above, name);
    }
}

/// PowerTCP and θ-PowerTCP on the HPCC paper's fat-tree under FB_Hadoop
/// at 30 % (`scenarios/fattree320-fbhadoop-{powertcp,theta-powertcp}.toml`,
/// the same flows as `fattree320-fbhadoop`): their short flows fare within
/// 20 % of HPCC++'s, θ-PowerTCP with RTT samples alone. Measured, slowdown
/// p95 / p99 of flows ≤ 3 kB against HPCC++'s: seed 11 (shipped) PowerTCP
/// 1.56 / 2.21, θ-PowerTCP 1.50 / 2.21, HPCC++ 1.39 / 2.03; seeds 12 and
/// 13, PowerTCP 1.53 / 2.19 and 1.62 / 2.31, θ-PowerTCP 1.44 / 2.12 and
/// 1.52 / 2.29, HPCC++ 1.38 / 2.04 and 1.41 / 2.08 (4-15 % above).
#[test]
fn powertcp_short_flows_on_the_fat_tree_stay_near_hpcc() {
    short_flows_near_hpcc(
        &["fattree320-fbhadoop-powertcp", "fattree320-fbhadoop-theta-powertcp"],
        1.2,
    );
}

/// Each of `names` (FB_Hadoop on the HPCC paper's fat-tree, the flows of
/// `fattree320-fbhadoop`) finishes every flow, and its flows ≤ 3 kB have a
/// p95 and p99 slowdown within `factor` of HPCC++'s there.
fn short_flows_near_hpcc(names: &[&str], factor: f64) {
    let short = |s: &Summary| {
        let b = &s.slowdown_by_size[0];
        assert_eq!(b.upto_bytes, Some(3000));
        (b.p95, b.p99)
    };
    let (_, hpcc) = run("fattree320-fbhadoop");
    let (h95, h99) = short(&hpcc);
    for &name in names {
        let (_, s) = run(name);
        assert_eq!(s.flows_finished, s.flows, "{name}");
        let (p95, p99) = short(&s);
        eprintln!("{name}: flows ≤ 3 kB p95 / p99 {p95:.2} / {p99:.2}, HPCC++ {h95:.2} / {h99:.2}");
        assert!(p95 <= factor * h95 && p99 <= factor * h99, "{name}");
    }
}

/// HPCC-PINT 2-to-1 (`scenarios/hpcc-pint-2to1.toml`, the HPCC reference
/// simulator's parameters): one code of the port's utilization per packet
/// holds the port at η = 95 % with almost no queue and the two flows
/// level, in both widths and with one ACK in sixteen read. Measured, two
/// bytes / one byte / two bytes sampled 1/16: utilization 94.9 / 94.8 /
/// 94.9 %, queue p99 1050 / 2098 / 1050 B, Jain 0.992 / 0.945 / 0.990
/// (seeds 2-5: 0.992-0.997 in two bytes, 0.959-0.973 in one). One byte's
/// codes step U by 5 %: both flows read the same coarse U, a multiplicative
/// step keeps their ratio, and only W_ai closes the gap.
#[test]
fn hpcc_pint_2to1_holds_the_port_at_eta() {
    for (what, bytes, sampling, jain) in [
        ("two bytes", 2, 1.0, 0.98),
        ("one byte", 1, 1.0, 0.9),
        ("sampled", 2, 1.0 / 16.0, 0.98),
    ] {
        let change = |s: &mut hal_sim::setup::scenario::Scenario| {
            s.nic.pint_bytes = bytes;
            s.nic.pint_sampling.0 = sampling;
        };
        let (_, s) = run_changed("hpcc-pint-2to1", change);
        assert_eq!((s.flows_finished, s.drops), (2, 0), "{what}");
        let u = s.link_utilization[0].utilization;
        assert!((0.93..=0.965).contains(&u), "{what}: utilization {u}");
        assert!(
            s.queue_bytes.p99 <= 10_000.0,
            "{what}: queue p99 {} B",
            s.queue_bytes.p99
        );
        assert!(s.jain_fairness >= jain, "{what}: Jain {:.4}", s.jain_fairness);
    }
}

/// The PINT paper's claim, on the HPCC paper's fat-tree under FB_Hadoop at
/// 30 % (`scenarios/fattree320-fbhadoop-hpcc-pint{,-1byte}.toml`, HPCC++'s
/// η, maxStage and W_ai): one code per packet, in two bytes or one, gives
/// short flows the slowdowns of HPCC++ with its full per-hop stack. p95 /
/// p99 of flows ≤ 3 kB measured: two bytes 1.37 / 1.96, one byte 1.38 /
/// 1.98, HPCC++ 1.39 / 2.03.
#[test]
fn hpcc_pint_short_flows_on_the_fat_tree_match_hpcc() {
    short_flows_near_hpcc(
        &["fattree320-fbhadoop-hpcc-pint", "fattree320-fbhadoop-hpcc-pint-1byte"],
        1.1,
    );
}

/// PFC: the right switch's port to host 9 is the only congested one; its
/// pauses reach the left switch and, through its queue, the hosts two hops
/// away, and host 8's flow, which shares only the paused link, is slowed
/// with the incast (head-of-line blocking). Measured: 214 pauses, hosts
/// paused 1.5 ms in all, the victim done at 4.8 ms; without PFC, at 2.3 ms
/// and no pause. Nothing is dropped either way.
#[test]
fn pfc_pauses_propagate_and_block_a_victim() {
    let (w, s) = run("pfc-victim");
    assert_eq!(s.flows_finished, 9);
    assert_eq!(s.drops, 0);
    assert!(s.counters.pfc_pauses > 10, "{} pauses", s.counters.pfc_pauses);
    assert!(s.counters.pfc_paused_ns > 0);
    assert!(
        s.counters.pfc_host_paused_ns > 100_000,
        "hosts paused {} ns",
        s.counters.pfc_host_paused_ns
    );
    let victim = |w: &World| w.flows[8].finish_ps.unwrap().as_ns_f64();
    let (w0, s0) = run_changed("pfc-victim", |s| s.switch.pfc = None);
    assert_eq!(s0.counters.pfc_pauses, 0);
    assert_eq!(s0.counters.pfc_host_paused_ns, 0);
    assert!(
        victim(&w) > 1.5 * victim(&w0),
        "victim done at {} ns with PFC, {} ns without",
        victim(&w),
        victim(&w0)
    );
}

/// PFC makes the fabric lossless: the DCQCN 60-to-1 start that overflows
/// the 8 MB port buffer without it (thousands of drops) loses nothing with
/// a 200 KB XOFF or a dynamic one, the hosts paused, and every flow
/// finishes. (Each of the 60 ingress ports brings at most about 270 KB, so
/// an XOFF of 500 KB or an eighth of the free buffer never pauses: there
/// PFC only lifts the per-port tail drop.)
#[test]
fn pfc_makes_the_dcqcn_incast_lossless() {
    let (_, lossy) = run("dcqcn-incast60");
    assert!(lossy.drops > 1000, "{} drops without PFC", lossy.drops);
    // A static XOFF, and a dynamic one (a hundredth of the free buffer).
    for (xoff, alpha) in [(Some(200_000), None), (None, Some(0.01))] {
        let (_, s) = run_changed("dcqcn-incast60", |s| {
            s.switch.pfc = Some(hal_sim::setup::scenario::PfcCfg {
                xoff_bytes: xoff.map(hal_sim::setup::scenario::Bytes),
                dynamic_alpha: alpha,
                xon_gap_bytes: hal_sim::setup::scenario::Bytes(2048),
            })
        });
        assert_eq!(s.drops, 0, "XOFF {xoff:?} / {alpha:?}");
        assert_eq!(s.flows_finished, 60);
        assert!(s.counters.pfc_host_paused_ns > 0);
    }
}

/// TIMELY's 60-to-1 start: every sender at line rate, and TIMELY cuts once
/// an RTT by β·(1 − T_high/RTT), about a fifth at the RTT a full 8 MB port
/// buffer gives (670 µs), so the burst overflows the buffer before the
/// rates come down: measured, 21 497 drops and 59 timeouts, every flow
/// done by 5.1 ms against the 2.4 ms a drained link needs. With PFC (a
/// 500 KB XOFF, as the HPCC reference simulator runs every algorithm) it
/// loses nothing and ends at 2.52 ms, the link full throughout.
#[test]
fn timely_incast60_overflows_without_pfc_and_not_with_it() {
    let (_, lossy) = run("timely-incast60");
    assert_eq!(lossy.flows_finished, 60);
    assert!(lossy.drops > 1000, "{} drops without PFC", lossy.drops);
    let (_, s) = run_changed("timely-incast60", |s| {
        s.switch.pfc = Some(hal_sim::setup::scenario::PfcCfg {
            xoff_bytes: Some(hal_sim::setup::scenario::Bytes(500_000)),
            dynamic_alpha: None,
            xon_gap_bytes: hal_sim::setup::scenario::Bytes(2048),
        })
    });
    assert_eq!((s.drops, s.flows_finished), (0, 60));
    // 60 × 500 kB at 100 Gb/s take 2.4 ms of payload alone.
    assert!(s.sim_ns < 2.4e6 * 1.1, "done at {} ns", s.sim_ns);
    assert!(s.link_utilization[0].utilization >= 0.95, "{:?}", s.link_utilization);
}

/// The four algorithms on the CI-size fat-tree, same flows, each with the
/// marking the HPCC paper's simulator gives it (DCQCN WRED 400 KB-1.6 MB,
/// DCTCP a step at 300 KB, both per 100 Gb/s and scaled by port speed;
/// LDCP its draft's 5-40 KB band): slowdown p99 of flows ≤ 3 kB and the
/// queue p99 over the monitored ports.
fn fattree16(seed: u64, cc: hal_sim::setup::scenario::Cc) -> Summary {
    use hal_sim::setup::scenario::*;
    run_changed("fattree16-fbhadoop", |s| {
        s.seed = seed;
        let (kmin, kmax, pmax) = match &cc {
            Cc::Registered {
                algorithm: cc_core::Algorithm::Dcqcn,
                ..
            } => (400_000, 1_600_000, 0.2),
            Cc::Registered { .. } => (300_000, 300_000, 1.0),
            _ => (5_000, 40_000, 0.2),
        };
        s.switch.ecn_kmin_bytes = Some(Bytes(kmin));
        s.switch.ecn_kmax_bytes = Some(Bytes(kmax));
        s.switch.ecn_pmax = Some(Prob(pmax));
        s.switch.ecn_scale_with_speed = true;
        if let Cc::Ldcp { .. } = cc {
            s.switch.drop_k_bytes = Some(Bytes(20_000));
        }
        s.switch.control_priority = Some(matches!(
            cc,
            Cc::Registered {
                algorithm: cc_core::Algorithm::Dcqcn,
                ..
            }
        ));
        s.nic.telemetry = hal_sim::model::telemetry::TelFormat::None;
        s.cc.algorithm = cc;
    })
    .1
}

fn short_p99(s: &Summary) -> f64 {
    s.slowdown_by_size[0].p99
}

/// HPCC++ against the baselines on a fat-tree (the paper's comparison, at
/// CI size): its short flows' p99 slowdown and its queues below DCQCN's and
/// DCTCP's; LDCP, without PFC, drops nothing in its stable stage (its
/// first-RTT drops are by design). Measured over seeds 1-5 (2 000 flows at
/// 50 %; `FATTREE_SEED=N` runs another): short-flow p99 HPCC++ 2.5-3.3,
/// DCTCP 5.6-7.2, DCQCN 9.0-13.6, LDCP 1.6-2.0; queue p99 55-72 KB,
/// 205-263 KB, 0.46-0.65 MB, 22-24 KB.
#[test]
fn hpcc_beats_the_baselines_on_a_small_fat_tree() {
    use hal_sim::setup::scenario::*;
    let seed: u64 = std::env::var("FATTREE_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let (_, hpcc) = run_changed("fattree16-fbhadoop", |s| s.seed = seed);
    let dcqcn = fattree16(seed, Cc::registered(cc_core::Algorithm::Dcqcn).unwrap());
    let dctcp = fattree16(seed, Cc::registered(cc_core::Algorithm::Dctcp).unwrap());
    let ldcp = fattree16(
        seed,
        Cc::Ldcp {
            params: LdcpCfg::default(),
            fast_start: true,
        },
    );
    for (name, s) in [("HPCC++", &hpcc), ("DCQCN", &dcqcn), ("DCTCP", &dctcp), ("LDCP", &ldcp)] {
        eprintln!(
            "{name}: short p99 {:.2}, queue p99 {:.0} B, drops {} (stable {}), finished {}/{}",
            short_p99(s),
            s.queue_bytes.p99,
            s.drops,
            s.counters.drops_stable,
            s.flows_finished,
            s.flows
        );
        assert_eq!(s.flows_finished, s.flows, "{name}");
    }
    assert!(short_p99(&hpcc) < short_p99(&dcqcn));
    assert!(short_p99(&hpcc) < short_p99(&dctcp));
    assert!(hpcc.queue_bytes.p99 < dcqcn.queue_bytes.p99);
    assert!(hpcc.queue_bytes.p99 < dctcp.queue_bytes.p99);
    assert_eq!(ldcp.counters.drops_stable, 0);
}

/// A leaf-spine fabric under Poisson WebSearch arrivals: every flow
/// completes without loss, and short flows finish close to their ideal.
#[test]
fn websearch_on_leaf_spine_completes_every_flow() {
    let (w, s) = run("websearch-leafspine");
    assert_eq!(s.flows_finished, s.flows);
    assert_eq!(s.drops, 0);
    assert!(s.fct_slowdown.p50 < 2.0, "slowdown p50 {}", s.fct_slowdown.p50);
    let small: Vec<f64> = hal_sim::output::report::flow_results(&w)
        .iter()
        .filter(|f| f.bytes <= 10_000)
        .filter_map(|f| f.slowdown)
        .collect();
    assert!(!small.is_empty());
    let p99 = hal_sim::output::metrics::percentile(&small, 99.0);
    assert!(p99 < 5.0, "slowdown p99 of flows ≤ 10 kB: {p99}");
}

/// HPCC++ flows idle past half the 16.8 ms timestamp wrap between bursts
/// (issue: every ACK after such a gap was refused as stale for up to
/// 7.8 ms, W frozen): no telemetry is refused, the first burst's 2x
/// overload is cut within a few base RTTs, and later bursts keep the queue
/// at about a packet. Before the fix the same run refused 8 000 ACKs and
/// its queue p99 was 23 KB.
#[test]
fn hpcc_flows_back_from_idle_stay_in_control() {
    let (w, s) = run("hpcc-onoff");
    assert_eq!(s.flows_finished, 2);
    assert_eq!(s.counters.engine_refusals, 0, "ACKs refused after an idle gap");
    assert_eq!(s.drops, 0);
    assert!(
        s.queue_bytes.p99 <= 2.0 * data_packet_wire(&w) as f64,
        "queue p99 {} B",
        s.queue_bytes.p99
    );
    // Both senders start at W_init = BDP: within 10 base RTTs each window
    // is below 3/4 of it.
    let flows = hal_sim::output::report::flow_results(&w);
    let t = flows[0].base_rtt_ns;
    let bdp = 100e9 / 8.0 * t / 1e9;
    assert!(!w.metrics.traces.is_empty(), "the run traces its flows");
    for tr in &w.metrics.traces {
        let w10 = tr
            .t_ns
            .iter()
            .zip(&tr.window)
            .filter(|(ts, _)| **ts <= 10.0 * t)
            .map(|(_, w)| *w)
            .fold(f64::MAX, f64::min);
        assert!(
            w10 < 0.75 * bdp,
            "flow {}: smallest window in the first 10 T {w10} B (BDP {bdp} B)",
            tr.id
        );
    }
}

/// HPCC++ probe mode with 20 % of probe replies lost and idle gaps
/// between bursts (issue: a probe lost while idle stopped probing for
/// good, W frozen). Probing goes on through every burst: about 250-350
/// replies arrive over the run for seeds 1-5 (73 before the fix, seed 1),
/// and nothing is refused or dropped.
#[test]
fn hpcc_probe_mode_keeps_probing_through_lost_replies() {
    let (_, s) = run("hpcc-probe-loss");
    assert_eq!(s.flows_finished, 2);
    assert_eq!(s.drops, 0);
    assert!(
        s.counters.probes_lost > 20,
        "probe replies lost: {}",
        s.counters.probes_lost
    );
    assert!(
        s.counters.probe_replies >= 150,
        "probe replies received: {}",
        s.counters.probe_replies
    );
    assert_eq!(s.counters.engine_refusals, 0);
}

/// Swift 60-to-1 (`scenarios/swift-incast60.toml`: Falcon's rules with its
/// delays scaled to this 4 µs fabric): every sender starts at one BDP, so
/// 60 BDPs arrive at once; the queue falls below two BDPs within ten of
/// the RTTs the flows then measure (the burst's peak queue is their RTT)
/// and stays there, without a drop.
#[test]
fn swift_incast60_brings_the_queue_under_two_bdps() {
    let (w, s) = run("swift-incast60");
    assert_eq!((s.flows_finished, s.drops), (60, 0));
    let bdp = 12.5 * hal_sim::output::report::flow_results(&w)[0].base_rtt_ns;
    let d = drain(&w, 2.0 * bdp);
    println!(
        "peak {} B at {:.0} ns (RTT {:.0} ns); under 2 BDP ({:.0} B) {:.2} RTTs later; {} of {} samples above after",
        d.peak,
        d.peak_at,
        d.rtt_at_peak,
        2.0 * bdp,
        d.rtts_to_under,
        d.above,
        d.after
    );
    d.assert_held(10.0, "Swift 60-to-1, 2 BDPs");
}

/// Swift 1000-to-1 (`scenarios/swift-incast1000.toml`, flows starting at
/// one packet): a thousand flows share a 100 Gb/s link. The bytes in
/// flight are one BDP plus the queue, so with the queue's median below a
/// thousand packets less a BDP the mean window is below one packet: the
/// flows are paced at RTT/cwnd. They all finish with no drop and no
/// timeout, and the link stays busy.
#[test]
fn swift_incast1000_paces_windows_below_one_packet_without_a_timeout() {
    let (w, s) = run("swift-incast1000");
    assert_eq!((s.flows_finished, s.drops, s.counters.timeouts), (1000, 0, 0));
    let base_rtt = hal_sim::output::report::flow_results(&w)[0].base_rtt_ns;
    let one_packet_each = 1000.0 * w.cfg.payload as f64 - 12.5 * base_rtt;
    assert!(
        s.queue_bytes.p50 < one_packet_each,
        "queue p50 {} B: windows average a packet or more",
        s.queue_bytes.p50
    );
    let u = s.link_utilization[0].utilization;
    assert!(u > 0.95, "utilization {u}");
}

/// Swift's endpoint window (`scenarios/swift-rxbuffer.toml`): one sender
/// at 100 Gb/s into a host that empties its NIC's Rx buffer at 40 Gb/s.
/// The fabric is idle; the Rx buffer's level on the ACKs is what Falcon's
/// endpoint window steers by (+1 packet an ACK below the target, so it
/// doubles an RTT, and a cut at most once an RTT above it), so the mean
/// level follows the target, above it by the overshoot of that growth at
/// a low one (measured: 14.0 at target 15, 11.5 at target 8); the link
/// carries the host's 40 Gb/s (42 % with headers) and the buffer never
/// overflows.
#[test]
fn swift_rxbuffer_holds_the_receivers_level_near_its_target() {
    let mut means = Vec::new();
    for target in [15u8, 8] {
        let (w, s) = run_changed("swift-rxbuffer", |s| {
            if let hal_sim::setup::scenario::Cc::Registered { engine, .. } = &mut s.cc.algorithm {
                engine.swift.target_rx_level = target;
            }
        });
        let c = &s.counters;
        let mean = c.rx_level_sum as f64 / c.rx_level_acks.max(1) as f64;
        let u = s.link_utilization[0].utilization;
        println!(
            "target {target}: mean level {mean:.2} over {} ACKs, peak {} B, {} drops, utilization {u:.4}",
            c.rx_level_acks, c.rx_buffer_peak_bytes, c.rx_buffer_drops
        );
        assert_eq!((s.flows_finished, s.drops, c.timeouts), (1, 0, 0));
        assert!(c.rx_level_acks > 10_000);
        let t = target as f64;
        assert!(mean >= t - 2.0 && mean <= t + 4.0, "mean level {mean} against {target}");
        // 40 Gb/s of payload is 40·(payload + header)/payload on the wire.
        let wire = 0.40 * (w.cfg.payload + u32::from(w.cfg.header)) as f64 / w.cfg.payload as f64;
        assert!((u - wire).abs() <= 0.01, "utilization {u} against {wire}");
        means.push(mean);
    }
    assert!(
        means[1] < means[0] - 2.0,
        "a lower target keeps a lower level: {means:?}"
    );
}

/// The shipped ring all-reduce from an htsim connection matrix
/// (`scenarios/allreduce-ring8.toml`): every step of every chunk starts at
/// the instant the step before it finishes (its one-shot trigger), so each
/// chunk's 15 steps run back to back, and the whole takes about 15 steps'
/// time: each 1 MB step at least its ideal at 100 Gb/s, and the ring, whose
/// links each carry one chunk a step, within 30 % of 15 ideal steps.
#[test]
fn a_triggered_ring_all_reduce_runs_its_steps_back_to_back() {
    let (w, _) = run("allreduce-ring8");
    assert_eq!(w.flows.len(), 120);
    let finish = |i: usize| w.flows[i].finish_ps.unwrap_or_else(|| panic!("flow {i} finished"));
    for chunk in 0..8 {
        let first = chunk * 15;
        assert_eq!(w.flows[first].start_ps.as_ns(), 0);
        for step in 1..15 {
            assert_eq!(
                w.flows[first + step].start_ps,
                finish(first + step - 1),
                "chunk {chunk} step {step}"
            );
        }
    }
    let ideal_step_ns = w.flows[0].path_rtt_ns as u64 + 1_000_000 * 8 / 100;
    let end_ns = (0..120).map(finish).max().unwrap().as_ns();
    assert!(
        end_ns >= 15 * ideal_step_ns && end_ns <= 15 * ideal_step_ns * 13 / 10,
        "ends at {end_ns} ns; 15 ideal steps are {} ns",
        15 * ideal_step_ns
    );
}

/// NSCC 8-to-1 with uet-htsim's parameters for 100 Gb/s hosts: the eight
/// windows start at their ceilings (12 BDP together), and NSCC holds the
/// queueing delay at its target, 10.5 µs (131 KB at 100 Gb/s): below it
/// the proportional increase slows as the delay nears it, above it marked
/// ACKs cut at most once a base RTT. Measured: utilization 100.0 %, queue
/// p50 149 KB (11.9 µs), p99 174 KB, Jain 0.982, no drops, no timeouts
/// (seeds 1-3 alike); 4-to-1: p50 140 KB. The bounds: the p50 within 25 %
/// of the target's bytes, the p99 within twice them, the peak below half
/// of what the ceilings together would put in flight.
#[test]
fn nscc_incast8_holds_the_queue_at_its_target_delay() {
    let (w, s) = run("nscc-incast8");
    assert_eq!(s.flows_finished, 8);
    assert!(s.link_utilization[0].utilization >= 0.98, "{:?}", s.link_utilization);
    assert_eq!((s.drops, s.counters.timeouts), (0, 0));
    assert!(s.jain_fairness >= 0.97, "Jain {:.4}", s.jain_fairness);
    let target = cc_core::nscc::NsccConfig::uet_htsim().target_delay_ns as f64 * 100.0 / 8.0;
    assert!(
        (s.queue_bytes.p50 - target).abs() <= 0.25 * target,
        "queue p50 {} B against the target's {target:.0} B",
        s.queue_bytes.p50
    );
    let ceilings = 8.0 * 1.5 * w.flows[0].path_rtt_ns as f64 * 100.0 / 8.0;
    assert!(
        s.queue_bytes.p99 <= 2.0 * target && s.queue_bytes.max < ceilings / 2.0,
        "queue p99 {} B, max {} B (the ceilings together {ceilings:.0} B)",
        s.queue_bytes.p99,
        s.queue_bytes.max
    );
}

/// uet-htsim's own runs (`scenarios/uet-*.toml`, its 40ccb05 outputs in
/// `scenarios/reference/uet-htsim/validate_uec_sender.out`), on its
/// fabrics, packets, trimming switches, SACK transport and spraying,
/// under NSCC: one.cm and bidir.cm (one 2 MB flow across its k = 4
/// fat-tree, two, one each way), outcast_incast.cm (21 flows on its k = 8
/// fat-tree), incast.cm and incast_128.cm (15 and 127 hosts sending 2 MB
/// each into one, where the last hop trims and NSCC's NACK rule runs),
/// incast_1024_100K.cm and incast_3-1_overlapped.tm with `-cwnd 50` (1023
/// hosts sending 100 KB into one; a 2 MB flow joined by two of 250 KB),
/// and
/// perm_16n_16c_2MB.cm (a 16-host permutation) sprayed over 128 paths, on
/// one, and over 128 with one core link degraded (`-failed 1`). Every
/// flow's NSCC starts from the network's RTT, as uet-htsim's does.
///
/// | run | uet-htsim: tail µs, new, rtx, ACKs, NACKs | hal-sim, seed 13 |
/// |---|---|---|
/// | one | 176.2, 490, 0, 124, 0 | 176.2, 490, 0, 124, 0 |
/// | bidir | 176.804, 980, 0, 248, 0 | 176.804, 980, 0, 248, 0 |
/// | outcast_incast | 1638.08 (flow 1 → 0: 208.019), 10 290, 0, 2629, 0 | 1638.08 (207.355), 10 290, 0, 2622, 0 |
/// | incast | 2478.53, 7350, 811, 7131, 811 | 2495.99, 7350, 821, 7168, 821 |
/// | incast_128 | 21 029.3, 62 230, 72 623, 62 126, 72 623 | 21 044.1, 62 230, 72 384, 62 168, 72 384 |
/// | incast_1024_100K, `-cwnd 50` | 10 556.2, 25 575, 448 242, 25 569, 433 185 | 10 567.9, 25 575, 450 396, 25 566, 435 305 |
/// | incast_3-1_overlapped, `-cwnd 50` | 221.731, 614, 80, 351, 80 | 225.38, 614, 80, 329, 80 |
/// | perm_16n, 128 paths | 194.022, 7840, 0, 2547, 0 | 194.221, 7840, 0, 2598, 0 |
/// | perm_16n, 1 path | 527.755, 7840, 279, 6083, 279 | 539.83, 7840, 288, 5509, 288 |
/// | perm_16n, 128 paths, one link at 25 % | 238.218, 7840, 99, 2731, 99 | 232.066, 7840, 96, 2777, 96 |
///
/// The bounds are the (the tail within 2 % on the runs that trim
/// nothing, 10 % on the others; NACKs within 30 %, and within 10 % on the
/// incasts, whose counts are large: 775-828, 72 693-73 071 and
/// 432 742-435 483 over seeds 1-5 or 1-4, and 15 % on one path, 282-303;
/// the degraded link's 99 moves most, 73-98 over seeds 1-8; spraying's
/// gain on perm_16n above 2.5 times), with the new packets exact, every
/// resend a NACK's or a timeout's, and the ACKs within 10 % (15 % on one
/// path and on the 3-to-1, where hal-sim's flows ask for fewer ACKs:
/// seeds 1-8 give 5473-5645 and 320-349; docs/reference-runs.md).
/// What they catch: trimming off (no NACKs, a timeout per lost packet),
/// data queues of 5 BDPs (404 NACKs), no spraying (perm_16n). ECN marked
/// at enqueue is caught by `nscc_rules_move_incast128s_windows_as_uet_htsims`.
#[test]
fn uet_htsim_runs_finish_as_uet_htsim() {
    let mut tails = std::collections::HashMap::new();
    for (name, tail_us, tol, new, acks, ack_tol, nacks, nack_tol) in [
        ("uet-one", 176.2, 0.02, 490, 124.0, 0.10, 0.0, 0.0),
        ("uet-bidir", 176.804, 0.02, 980, 248.0, 0.10, 0.0, 0.0),
        ("uet-outcast-incast", 1638.08, 0.02, 10_290, 2629.0, 0.10, 0.0, 0.0),
        ("uet-incast", 2478.53, 0.10, 7350, 7131.0, 0.10, 811.0, 0.10),
        ("uet-incast128", 21_029.3, 0.10, 62_230, 62_126.0, 0.10, 72_623.0, 0.10),
        (
            "uet-incast1024",
            10_556.2,
            0.10,
            25_575,
            25_569.0,
            0.10,
            433_185.0,
            0.10,
        ),
        ("uet-incast3to1", 221.731, 0.10, 614, 351.0, 0.15, 80.0, 0.30),
        ("uet-perm16", 194.022, 0.10, 7840, 2547.0, 0.10, 0.0, 0.0),
        ("uet-perm16-1path", 527.755, 0.10, 7840, 6083.0, 0.15, 279.0, 0.15),
        ("uet-perm16-failed1", 238.218, 0.10, 7840, 2731.0, 0.10, 99.0, 0.30),
    ] {
        let (w, s) = run(name);
        assert_eq!(s.flows_finished, w.flows.len(), "{name}");
        let fct =
            |f: &hal_sim::model::flow::FlowRecord| (f.finish_ps.unwrap().as_ns() - f.start_ps.as_ns()) as f64 / 1000.0;
        let tail = w.flows.iter().map(fct).fold(0.0, f64::max);
        assert!(
            (tail / tail_us - 1.0).abs() <= tol,
            "{name}: tail FCT {tail:.3} µs against uet-htsim's {tail_us}"
        );
        tails.insert(name, tail);
        let c = &s.counters;
        let rtx: u64 = w.flows.iter().map(|f| f.retransmits).sum();
        assert_eq!(s.data_packets - rtx, new, "{name}: new packets");
        assert!(rtx <= c.nacks + c.timeouts, "{name}: {rtx} resends, {c:?}");
        if name == "uet-perm16-failed1" {
            // The degraded link: a quarter of the rate and of the buffer.
            let slow: Vec<u64> = w
                .switches
                .iter()
                .flat_map(|s| s.ports.iter())
                .filter(|p| p.link.bps == 25_000_000_000)
                .map(|p| p.port_buffer)
                .collect();
            assert_eq!(slow, [178_450 / 4], "{name}");
        }
        if name == "uet-outcast-incast" {
            // uet-htsim's named flow, Uec_1_0: host 1 to host 0.
            let f = fct(&w.flows[0]);
            assert!(
                (f / 208.019 - 1.0).abs() <= 0.02,
                "flow 1 -> 0: {f:.3} µs against 208.019"
            );
        }
        let got = c.acks as f64;
        assert!(
            (got / acks - 1.0).abs() <= ack_tol,
            "{name}: {got} ACKs against uet-htsim's {acks}"
        );
        let got = c.nacks as f64;
        assert!(
            (got - nacks).abs() <= nack_tol * nacks,
            "{name}: {got} NACKs against uet-htsim's {nacks}"
        );
    }
    let gain = tails["uet-perm16-1path"] / tails["uet-perm16"];
    assert!(gain > 2.5, "spraying's gain on perm_16n: {gain:.2} (uet-htsim 2.72)");
}

/// uet-htsim's runs on switches that drop rather than trim, with SLEEK's
/// loss recovery (`-sleek -disable_trim -q 190`, its
/// validate_uec_sender_sleek.txt at 40ccb05; the outputs in
/// `scenarios/reference/uet-htsim/validate_uec_sender_sleek.out`) and,
/// on the incast, without it (`-disable_trim` alone: losses found by
/// timeouts, docs/reference-runs.md): the
/// tail within 10 %, the new packets exact, no NACK and nothing trimmed,
/// every resend SLEEK's or a timeout's, the ACKs within 10 %, and the
/// resends and the packets SLEEK put up within 30 % of uet-htsim's
/// (`Rtx`, `sleek_pkts`). What they catch, tried: no SLEEK (every loss
/// waits for the least RTO, 393 µs: the incast ends at 2715 µs, 10.5 %
/// late, and nothing is SLEEK's); SLEEK taking any gap in the receiver's
/// out-of-order count for loss instead of 1.5 windows' worth (the incast
/// resends 3251 packets and ends 28 % late; the sprayed permutation, where
/// uet-htsim resends none, resends 7075 and ends at 346 µs).
#[test]
fn uet_htsim_sleek_runs_finish_as_uet_htsim() {
    for (name, tail_us, new, acks, rtx, sleek) in [
        ("uet-incast-drop", 2737.78, 7350, 7187.0, 421.0, 0.0),
        ("uet-incast-sleek", 2456.3, 7350, 7170.0, 485.0, 485.0),
        ("uet-incast128-sleek", 20_845.8, 62_230, 69_965.0, 10_318.0, 9667.0),
        ("uet-perm16-sleek", 194.022, 7840, 2547.0, 0.0, 0.0),
    ] {
        let (w, s) = run(name);
        assert_eq!(s.flows_finished, w.flows.len(), "{name}");
        let tail = w
            .flows
            .iter()
            .map(|f| (f.finish_ps.unwrap().as_ns() - f.start_ps.as_ns()) as f64 / 1000.0)
            .fold(0.0, f64::max);
        assert!(
            (tail / tail_us - 1.0).abs() <= 0.10,
            "{name}: tail FCT {tail:.3} µs against uet-htsim's {tail_us}"
        );
        let c = &s.counters;
        let resent: u64 = w.flows.iter().map(|f| f.retransmits).sum();
        assert_eq!(s.data_packets - resent, new, "{name}: new packets");
        assert_eq!((c.nacks, c.trims), (0, 0), "{name}: {c:?}");
        assert!(resent <= c.sleek_pkts + c.timeouts, "{name}: {resent} resends, {c:?}");
        let near = |got: u64, want: f64, tol: f64| (got as f64 - want).abs() <= tol * want;
        assert!(
            near(c.acks, acks, 0.10),
            "{name}: {} ACKs against uet-htsim's {acks}",
            c.acks
        );
        assert!(
            near(resent, rtx, 0.30),
            "{name}: {resent} resends against uet-htsim's {rtx}"
        );
        assert!(
            near(c.sleek_pkts, sleek, 0.30),
            "{name}: SLEEK put up {} against uet-htsim's {sleek}",
            c.sleek_pkts
        );
    }
}

/// A trimming port keeps the packet it is sending in its queue until the
/// serialization ends, as uet-htsim's `CompositeQueue` does
/// (`receivePacket` counts it against the queue's room; `completeService`
/// takes it off, then decides its ECN from the data queue behind it).
/// One sender, 100 Gb/s links into a 30 Gb/s bottleneck: the sender's
/// 4150-byte packets reach the bottleneck port every 332 ns, which sends
/// one every 1106.7 ns, so packet k arrives while packet 0 is on the wire
/// for k = 1, 2, 3, and no two events coincide. Worked by hand from
/// those two functions:
///
/// - a queue of 8300 bytes (two packets) with the one on the wire
///   counted: packet 1 fits (1 on the wire + 1 waiting), packets 2 and 3
///   do not, 2 trims (counting only the waiting ones: packets 1, 2 wait,
///   3 is trimmed, 1 trim);
/// - ECN certain from one packet waiting (K_max 4150 bytes at the port's
///   speed), a flow of two packets: packet 0 ends with packet 1 behind it
///   and is marked, packet 1 ends with none (decided as each starts out:
///   neither, both start with nothing behind).
#[test]
fn a_trimming_port_holds_its_packet_until_it_is_sent() {
    let run = |bytes: u64, port_buffer: u64| {
        let text = format!(
            "name = \"hold\"\nstop_ms = 1.0\n\
             [topology]\nkind = \"dumbbell\"\nleft = 1\nright = 1\nlink_gbps = 100\nbottleneck_gbps = 30\nlink_delay_ns = 1000\n\
             [switch]\nport_buffer_bytes = {port_buffer}\necn_kmin_bytes = 1\necn_kmax_bytes = 13834\ntrim_bytes = 64\n\
             [nic]\ntelemetry = \"none\"\npayload_bytes = 4086\nheader_bytes = 64\nack_bytes = 64\ntransport = \"sack\"\n\
             [cc]\nalgorithm = \"nscc\"\n\
             [workload]\nkind = \"list\"\nflows = [{{ src = 0, dst = 1, bytes = {bytes} }}]\n"
        );
        let s = hal_sim::setup::scenario::parse(&text, "hold.toml").unwrap_or_else(|e| panic!("{e}"));
        let (w, sum) = hal_sim::run_scenario(&s, std::path::Path::new("."), "hold.toml").unwrap();
        assert_eq!(sum.flows_finished, 1, "{bytes} B");
        let _ = w;
        sum.counters
    };
    // The threshold as the port reads it: 13 834 · 30/100 = 4150.
    let c = run(4 * 4086, 8300);
    assert_eq!(c.trims, 2, "{c:?}");
    let c = run(2 * 4086, 1 << 20);
    assert_eq!((c.trims, c.ecn_marks), (0, 1), "{c:?}");
}

/// Events of one instant at a trimming port in uet-htsim's order: its
/// packet's end before the arrivals of that instant on links that carry
/// packets back to back (`Switch::ends_first`). Two hosts of one
/// top-of-rack switch send six packets each at once to a third
/// (`tor_2to1_6pkts.cm`, uet-htsim's k = 6 fat-tree), so both streams
/// reach the receiver's port in lockstep, two arrivals at each end of a
/// packet. uet-htsim's NACKs, from `./htsim_uec -tm tor_2to1_6pkts.cm
/// -sender_cc_only -q Q -ecn 1 2 -cwnd 50 -end 200` at 40ccb05, for
/// queues of 4, 5, 6 and 8 packets: 4, 2, 1, 0. With the arrivals first,
/// hal-sim trimmed 4, 3, 2, 0.
#[test]
fn a_trimming_port_ends_its_packet_before_lockstep_arrivals() {
    for (q, nacks) in [(4, 4), (5, 2), (6, 1), (8, 0)] {
        let (_, sum) = run_uet_line(&format!(
            "-tm tor_2to1_6pkts.cm -sender_cc_only -q {q} -ecn 1 2 -cwnd 50 -end 200"
        ));
        assert_eq!(sum.flows_finished, 2, "-q {q}");
        assert_eq!(sum.counters.nacks, nacks, "-q {q}: NACKs");
    }
}

/// uet-htsim's flags that set NSCC, the queues and the switches' latency,
/// run through `hal-sim uet-htsim` as uet-htsim runs them: its incast.cm
/// with `-target_q_delay 5 -qa_gate 2` (a target of 5 µs where 10.5 is
/// derived, quick adapt's gate a quarter of the ceiling where an eighth),
/// with `-queue_size_bdp_factor 2 -disable_base_rtt_update_on_nack`
/// (queues of two BDPs), and with `-switch_latency 0.5` and `1`. uet-htsim
/// at 40ccb05, `./htsim_uec -tm incast.cm -end 4000 FLAGS`
/// (docs/reference-runs.md): tails 2496.76, 2467.05, 2482.92 and 2469.17
/// µs, NACKs 1107, 663, 1061 and 1329; with no flag 2478.53 µs, 811 NACKs.
/// The NACKs tell the flags apart (the default's 811 is 22 % or more off
/// each), so each is held within 12 % (hal-sim's seeds 1-3 and 13 for the
/// first two: 1017-1093 and 656-671; uet-htsim's seeds 1-2: 1015-1066
/// and 661-665).
#[test]
fn uet_htsims_nscc_queue_and_latency_flags_run_as_uet_htsims() {
    for (flags, tail_us, nacks, acks) in [
        ("-target_q_delay 5 -qa_gate 2", 2496.76, 1107.0, 6354.0),
        (
            "-queue_size_bdp_factor 2 -disable_base_rtt_update_on_nack",
            2467.05,
            663.0,
            7095.0,
        ),
        ("-switch_latency 0.5", 2482.92, 1061.0, 6922.0),
        ("-switch_latency 1", 2469.17, 1329.0, 6958.0),
    ] {
        let (w, sum) = run_uet_line(&format!("-tm incast.cm -end 4000 {flags}"));
        assert_eq!(sum.flows_finished, 15, "{flags}");
        let tail = w
            .flows
            .iter()
            .map(|f| (f.finish_ps.unwrap().as_ns() - f.start_ps.as_ns()) as f64 / 1000.0)
            .fold(0.0, f64::max);
        let near = |got: f64, want: f64, tol: f64| (got - want).abs() <= tol * want;
        assert!(
            near(tail, tail_us, 0.05),
            "{flags}: tail {tail:.2} µs against uet-htsim's {tail_us}"
        );
        let c = &sum.counters;
        assert!(
            near(c.nacks as f64, nacks, 0.12),
            "{flags}: {} NACKs against uet-htsim's {nacks}",
            c.nacks
        );
        assert!(
            near(c.acks as f64, acks, 0.10),
            "{flags}: {} ACKs against uet-htsim's {acks}",
            c.acks
        );
    }
    // One flow across the diameter: five switches each way at 0.5 µs add
    // 5 µs to its RTT and to its FCT, uet-htsim's 181.2 µs (176.2
    // without).
    let (w, _) = run_uet_line("-tm one.cm -end 1000 -switch_latency 0.5");
    let f = &w.flows[0];
    assert_eq!(f.path_rtt_ns, 19_022);
    let fct = (f.finish_ps.unwrap().as_ns() - f.start_ps.as_ns()) as f64 / 1000.0;
    assert!(
        (fct / 181.2 - 1.0).abs() <= 0.002,
        "one.cm: {fct} µs against uet-htsim's 181.2"
    );
}

/// uet-htsim's two-tier fat-tree built for a matrix (`-tiers 2`: K ToRs
/// of K/2 hosts, K/2 spines, K = 16 for 128 hosts), against uet-htsim's
/// own runs at 40ccb05 (docs/reference-runs.md): incast_128.cm, 21 526
/// µs and 169 377 NACKs; a permutation of 128 hosts
/// (`perm_128n_128c_2MB.cm`) at 128 paths 192.681 µs, at one path 706.867
/// (spraying's gain 3.7 times), with two spine links at a quarter 275.704.
/// hal-sim: 21 521.6 µs and 169 625 NACKs; 195.624, 713.733 and 264.074.
#[test]
fn uet_htsims_two_tier_fat_tree_runs_as_uet_htsims() {
    let tail = |w: &World| {
        w.flows
            .iter()
            .map(|f| (f.finish_ps.unwrap().as_ns() - f.start_ps.as_ns()) as f64 / 1000.0)
            .fold(0.0, f64::max)
    };
    let near = |got: f64, want: f64, tol: f64| (got - want).abs() <= tol * want;
    let (w, s) = run_uet_line("-tm incast_128.cm -tiers 2 -end 30000");
    assert_eq!(s.flows_finished, 127);
    assert!(near(tail(&w), 21_526.0, 0.10), "incast_128: {}", tail(&w));
    let nacks = s.counters.nacks as f64;
    assert!(near(nacks, 169_377.0, 0.10), "incast_128: {nacks} NACKs");
    let mut tails = Vec::new();
    for (flags, want) in [
        ("-paths 128 -end 2000", 192.681),
        ("-paths 1 -end 3000", 706.867),
        ("-paths 128 -failed 2 -end 3000", 275.704),
    ] {
        let (w, s) = run_uet_line(&format!("-tm perm_128n_128c_2MB.cm -tiers 2 {flags}"));
        assert_eq!(s.flows_finished, 128, "{flags}");
        assert!(
            near(tail(&w), want, 0.10),
            "{flags}: tail {} against uet-htsim's {want}",
            tail(&w)
        );
        tails.push(tail(&w));
    }
    assert!(tails[1] > 2.5 * tails[0], "spraying's gain: {tails:?}");
}

/// NSCC's window changes by rule (uet-htsim's `fair_inc`, `eta_inc`,
/// `multi_dec`, `quick_dec`, `nack_dec`), summed over incast_128's 127
/// flows, against the sums of the lines uet-htsim printed as each flow
/// finished in its runs with `-seed 1` to `8`
/// (`scenarios/reference/uet-htsim/incast_128-seed*.finished`), and
/// hal-sim's seeds 1-8. Each of hal-sim's runs holds eta, the
/// multiplicative and quick decreases and the NACKed bytes within 7 % of
/// uet-htsim's mean (seeds 1-17: 0.1-4.5 % off; with a port's queue that
/// let its packet go as it started out, the multiplicative decrease was
/// up to 7.2 % off and the NACKed bytes 2-2.5 % below). The fair increase
/// (gathered on ACKs that are not marked though their delay is at or
/// above the target) is the few packets of each burst that wait behind a
/// long queue yet leave it short: small (0.6 % of eta) and moving with
/// the seed in both simulators (uet-htsim's seeds 1-8: 101 000-252 000,
/// hal-sim's 1-17: 107 000-235 000), so the eight seeds' means are held
/// within 35 % (hal-sim 167 800, uet-htsim 189 300; hal-sim's seeds 9-16
/// give 19 % below). Marking ECN at enqueue marks those packets by the
/// queue ahead of them: their fair increase falls to 76 500 (60 % below),
/// which this catches.
#[test]
fn nscc_rules_move_incast128s_windows_as_uet_htsims() {
    const RULES: [&str; 5] = ["fair_inc", "eta_inc", "multi_dec", "quick_dec", "nack_dec"];
    // uet-htsim's sums of each rule over its eight runs' flows, averaged.
    const SEEDS: u64 = 8;
    let mut uet = [0.0f64; 5];
    for seed in 1..=SEEDS {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!(
            "../scenarios/reference/uet-htsim/incast_128-seed{seed}.finished"
        ));
        let text = std::fs::read_to_string(path).unwrap();
        let mut flows = 0;
        for line in text.lines().filter(|l| l.contains("finished at")) {
            flows += 1;
            let words: Vec<&str> = line.split_whitespace().collect();
            for (k, sum) in RULES.iter().zip(&mut uet) {
                let at = words
                    .iter()
                    .position(|w| w == k)
                    .unwrap_or_else(|| panic!("{k} in {line}"));
                *sum += words[at + 1].trim_start_matches('-').parse::<f64>().unwrap() / SEEDS as f64;
            }
        }
        assert_eq!(flows, 127, "uet-htsim's seed {seed}");
    }
    let mut fair = 0.0;
    for seed in 1..=SEEDS {
        let (w, s) = run_changed("uet-incast128", |s| s.seed = seed);
        assert_eq!(s.flows_finished, 127);
        let n = &w.metrics.nscc;
        let sum = |f: fn(&cc_core::nscc::Stats) -> f64| n.iter().map(f).sum::<f64>();
        let ours = [
            sum(|s| s.fair_inc as f64),
            sum(|s| s.eta_inc as f64),
            sum(|s| s.multi_dec as f64),
            sum(|s| s.quick_dec as f64),
            sum(|s| s.nack_dec as f64),
        ];
        for ((k, theirs), got) in RULES.iter().zip(uet).zip(ours).skip(1) {
            assert!(
                (got / theirs - 1.0).abs() <= 0.07,
                "seed {seed}: {k} {got} against uet-htsim's {theirs}"
            );
        }
        fair += ours[0] / SEEDS as f64;
    }
    assert!(
        (fair / uet[0] - 1.0).abs() <= 0.35,
        "fair_inc, seeds 1-8's mean: {fair:.0} against uet-htsim's {:.0}",
        uet[0]
    );
}
