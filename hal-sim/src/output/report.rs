//! Reports: the run summary (terminal table and JSON with DESIGN §6's
//! keys), the per-flow CSV, and SVG plots (queue over time, window and rate
//! over time, FCT slowdown by flow size).

use std::io::Write;
use std::path::Path;

use plotters::prelude::*;
use serde::Serialize;

use crate::output::metrics::{ns, percentile, Counters, FlowResult, PortSeries};
use crate::run::world::World;

/// Percentiles of a distribution.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Pcts {
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Maximum.
    pub max: f64,
}

/// Utilization of one monitored port.
#[derive(Clone, Debug, Serialize)]
pub struct PortUtil {
    /// The port.
    pub port: String,
    /// Bytes sent / (capacity · time) from the warm-up to the port's last data packet.
    pub utilization: f64,
    /// The interval measured, ns.
    pub from_ns: f64,
    /// End of the interval, ns.
    pub to_ns: f64,
}

/// The run's headline figures.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Scenario name.
    pub scenario: String,
    /// The algorithm ([`crate::setup::scenario::Cc::label`]).
    pub algorithm: &'static str,
    /// The switches' marking and drop thresholds at the host link speed.
    pub marking: crate::setup::scenario::Marking,
    /// The NICs' retransmission timeout, µs.
    pub rto_us: f64,
    /// Simulated time at the end, ns.
    pub sim_ns: f64,
    /// The scenario's `stop_ms`, in ns.
    pub stop_ns: f64,
    /// Wall-clock seconds of the simulation loop.
    pub wall_s: f64,
    /// CPU seconds of the simulation loop.
    pub cpu_s: f64,
    /// Events handled.
    pub events: u64,
    /// Data packets sent.
    pub data_packets: u64,
    /// Data packets per CPU-second.
    pub data_packets_per_s: f64,
    /// The build that ran it, which the speed depends on: `"plain"` or
    /// `"profile-guided"` ([`crate::run::cpu::BUILD`]).
    pub build: &'static str,
    /// Per monitored port, after the warm-up.
    pub link_utilization: Vec<PortUtil>,
    /// Queue samples of all monitored ports after the warm-up, bytes.
    pub queue_bytes: Pcts,
    /// FCT slowdown over finished flows.
    pub fct_slowdown: Pcts,
    /// FCT slowdown by flow size.
    pub slowdown_by_size: Vec<SizeBucket>,
    /// FCT slowdown of the short flows (at most [`SHORT_BYTES`]).
    pub slowdown_short: Pcts,
    /// FCT slowdown of the long flows (more than [`LONG_BYTES`]).
    pub slowdown_long: Pcts,
    /// Finished flows faster than the ideal FCT, whose slowdown counts as
    /// 1 (see [`flow_results`]).
    pub slowdown_clamped: usize,
    /// Mean Jain index over windows after the warm-up.
    pub jain_fairness: f64,
    /// Drops, all causes.
    pub drops: u64,
    /// Retransmitted data packets.
    pub retransmits: u64,
    /// Flows that finished / all flows.
    pub flows_finished: usize,
    /// All flows.
    pub flows: usize,
    /// Every counter.
    pub counters: Counters,
    /// The NICs' congestion-control processors, if the scenario has them.
    pub cc_processor: Option<ProcessorReport>,
    /// The hosts' Rx buffers (`nic.rx_drain_gbps`): drain rate, Gb/s, and
    /// size, bytes; none where hosts take data as it arrives.
    pub rx_buffer: Option<(u32, u64)>,
}

/// What the NICs' congestion-control processors did
/// (`model::nic::processor`), in total and per NIC.
#[derive(Clone, Debug, Serialize)]
pub struct ProcessorReport {
    /// Cores per NIC.
    pub cores: u16,
    /// Nanoseconds an instruction takes.
    pub ns_per_instruction: f64,
    /// The coalescing policy: `none`, `latest` or `thinning`.
    pub coalescing: &'static str,
    /// All NICs together.
    pub total: ProcessorCounts,
    /// Each NIC that was offered an event, by host index.
    pub per_nic: Vec<(u32, ProcessorCounts)>,
}

/// One processor's (or all of them summed) counts.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ProcessorCounts {
    /// Events handed over (thinned and coalesced ACKs included).
    pub offered: u64,
    /// Events a core ran.
    pub served: u64,
    /// ACKs folded into another ACK event.
    pub coalesced: u64,
    /// Events dropped on a full queue.
    pub dropped: u64,
    /// Events still waiting when the run ended (offered = served +
    /// coalesced + dropped + these).
    pub waiting_at_end: u64,
    /// Busy time over the cores' time in the run (0 ..= 1).
    pub utilization: f64,
    /// How long events waited for a core, ns: median.
    pub wait_p50_ns: u64,
    /// 99th percentile.
    pub wait_p99_ns: u64,
    /// Longest.
    pub wait_max_ns: u64,
}

/// The processors' report of `w`, if it has processors.
fn processor_report(w: &World) -> Option<ProcessorReport> {
    use crate::model::nic::processor::Coalescing;
    let params = w.nics.iter().find_map(|n| n.ccp.as_ref())?.params;
    let run_ps = w.now.as_ps().max(1) as f64 * params.cores as f64;
    let counts = |st: &crate::model::nic::processor::Stats, waiting: u64, cores_ps: f64| ProcessorCounts {
        offered: st.offered,
        served: st.served,
        coalesced: st.coalesced,
        dropped: st.dropped,
        waiting_at_end: waiting,
        utilization: st.busy_ps as f64 / cores_ps,
        wait_p50_ns: st.delays.quantile(0.5),
        wait_p99_ns: st.delays.quantile(0.99),
        wait_max_ns: st.delays.max_ns(),
    };
    let mut total = crate::model::nic::processor::Stats::default();
    let mut per_nic = Vec::new();
    let mut left = 0;
    for n in &w.nics {
        let Some(p) = n.ccp.as_ref() else { continue };
        let st = &p.stats;
        if st.offered == 0 {
            continue;
        }
        let waiting = p.waiting() as u64;
        per_nic.push((n.host, counts(st, waiting, run_ps)));
        left += waiting;
        total.offered += st.offered;
        total.served += st.served;
        total.coalesced += st.coalesced;
        total.dropped += st.dropped;
        total.busy_ps += st.busy_ps;
        total.delays.merge(&st.delays);
    }
    let nics = w.nics.len().max(1) as f64;
    Some(ProcessorReport {
        cores: params.cores,
        ns_per_instruction: params.ps_per_instruction / 1000.0,
        coalescing: match params.coalescing {
            Coalescing::None => "none",
            Coalescing::Latest => "latest",
            Coalescing::Thinning { .. } => "thinning",
        },
        total: counts(&total, left, run_ps * nics),
        per_nic,
    })
}

/// Flows of at most this many bytes are short ([`Summary::slowdown_short`]).
pub const SHORT_BYTES: u64 = 30_000;

/// Flows of more than this many bytes are long ([`Summary::slowdown_long`]).
pub const LONG_BYTES: u64 = 1_000_000;

/// Per-flow results. The ideal FCT is the path's own base RTT (whatever T
/// the engine was given) plus the flow's bytes with their headers, not
/// their telemetry, at the bottleneck's speed: the HPCC reference
/// simulator's "standalone" FCT, so slowdowns compare with its. The base
/// RTT counts a full packet's store-and-forward at every hop, so a flow
/// whose last (or only) packet is smaller can finish up to
/// hops · (MTU − that packet) of serialization sooner than this ideal; its
/// slowdown is clamped to 1 and [`Summary::slowdown_clamped`] counts it.
pub fn flow_results(w: &World) -> Vec<FlowResult> {
    w.flows
        .iter()
        .map(|f| {
            let fct = f.finish_ps.map(|e| ns(e - f.start_ps));
            let pkts = f.size.div_ceil(w.cfg.payload as u64);
            let wire = f.size + pkts * w.cfg.header as u64;
            let ideal = f.path_rtt_ns as f64 + wire as f64 * 8.0 / f.bottleneck_bps as f64 * 1e9;
            FlowResult {
                id: f.id,
                src: f.src_host,
                dst: f.dst_host,
                bytes: f.size,
                start_ns: ns(f.start_ps),
                fct_ns: fct,
                ideal_fct_ns: ideal,
                slowdown: fct.map(|x| (x / ideal).max(1.0)),
                base_rtt_ns: f.path_rtt_ns as f64,
                retransmits: f.retransmits,
            }
        })
        .collect()
}

/// Upper edges of the flow-size buckets, bytes: the published comparisons'
/// "short flows" (≤ 7 kB for FB_Hadoop, < 10 kB for WebSearch) fall on
/// edges, then half-decades up to 10 MB; the last bucket is open.
pub const SIZE_EDGES: [u64; 9] = [
    3_000, 7_000, 10_000, 30_000, 100_000, 300_000, 1_000_000, 3_000_000, 10_000_000,
];

/// FCT slowdown of the finished flows of one size bucket.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct SizeBucket {
    /// Flows larger than this, bytes.
    pub from_bytes: u64,
    /// Flows up to this size, bytes (none: no upper edge).
    pub upto_bytes: Option<u64>,
    /// Finished flows in the bucket.
    pub flows: usize,
    /// Median slowdown (0 without flows).
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
}

/// Slowdown percentiles per [`SIZE_EDGES`] bucket.
pub fn slowdown_by_size(flows: &[FlowResult]) -> Vec<SizeBucket> {
    let mut from = 0;
    let mut out = Vec::new();
    for upto in SIZE_EDGES.iter().copied().map(Some).chain([None]) {
        let v: Vec<f64> = flows
            .iter()
            .filter(|f| f.bytes > from && upto.is_none_or(|u| f.bytes <= u))
            .filter_map(|f| f.slowdown)
            .collect();
        let p = pcts(&v);
        out.push(SizeBucket {
            from_bytes: from,
            upto_bytes: upto,
            flows: v.len(),
            p50: p.p50,
            p95: p.p95,
            p99: p.p99,
        });
        from = upto.unwrap_or(from);
    }
    out
}

fn pcts(v: &[f64]) -> Pcts {
    Pcts {
        p50: percentile(v, 50.0),
        p95: percentile(v, 95.0),
        p99: percentile(v, 99.0),
        max: v.iter().copied().fold(0.0, f64::max),
    }
}

fn utilization(p: &PortSeries, warmup_ns: f64) -> Option<PortUtil> {
    let to = ns(p.last_data_ps);
    let i0 = p.t_ns.iter().position(|&t| t >= warmup_ns)?;
    let i1 = p.t_ns.iter().rposition(|&t| t <= to)?;
    if i1 <= i0 {
        return None;
    }
    let bytes = (p.tx_bytes[i1] - p.tx_bytes[i0]) as f64;
    let secs = (p.t_ns[i1] - p.t_ns[i0]) / 1e9;
    Some(PortUtil {
        port: p.name.clone(),
        utilization: bytes * 8.0 / (p.bps as f64 * secs),
        from_ns: p.t_ns[i0],
        to_ns: p.t_ns[i1],
    })
}

/// The summary of a finished run.
pub fn summary(w: &World, name: &str, time: &crate::run::cpu::Stopwatch) -> Summary {
    let (wall_s, cpu_s) = (time.wall_s(), time.cpu_s());
    let warm = ns(w.cfg.warmup_ps);
    let mut queue = Vec::new();
    for p in &w.metrics.ports {
        let to = ns(p.last_data_ps);
        queue.extend(
            p.t_ns
                .iter()
                .zip(&p.queue)
                .filter(|(t, _)| **t >= warm && **t <= to)
                .map(|(_, q)| *q as f64),
        );
    }
    let flows = flow_results(w);
    let slow: Vec<f64> = flows.iter().filter_map(|f| f.slowdown).collect();
    let jain: Vec<f64> = w
        .metrics
        .jain
        .iter()
        .filter(|(t, _, _)| *t >= warm)
        .map(|(_, j, _)| *j)
        .collect();
    let c = w.metrics.counters;
    Summary {
        scenario: name.into(),
        algorithm: w.cfg.algorithm,
        marking: w.cfg.marking,
        rto_us: ns(w.cfg.rto_ps) / 1e3,
        rx_buffer: w.cfg.rx_buffer,
        sim_ns: ns(w.now),
        stop_ns: ns(w.cfg.stop_ps),
        wall_s,
        cpu_s,
        events: w.q.handled(),
        data_packets: c.data_packets,
        data_packets_per_s: c.data_packets as f64 / cpu_s.max(1e-9),
        build: crate::run::cpu::BUILD,
        link_utilization: w.metrics.ports.iter().filter_map(|p| utilization(p, warm)).collect(),
        queue_bytes: pcts(&queue),
        fct_slowdown: pcts(&slow),
        slowdown_by_size: slowdown_by_size(&flows),
        slowdown_short: pcts(
            &flows
                .iter()
                .filter(|f| f.bytes <= SHORT_BYTES)
                .filter_map(|f| f.slowdown)
                .collect::<Vec<_>>(),
        ),
        slowdown_long: pcts(
            &flows
                .iter()
                .filter(|f| f.bytes > LONG_BYTES)
                .filter_map(|f| f.slowdown)
                .collect::<Vec<_>>(),
        ),
        slowdown_clamped: flows
            .iter()
            .filter(|f| f.fct_ns.is_some_and(|t| t < f.ideal_fct_ns))
            .count(),
        jain_fairness: if jain.is_empty() {
            1.0
        } else {
            jain.iter().sum::<f64>() / jain.len() as f64
        },
        drops: c.drops,
        retransmits: c.retransmits,
        flows_finished: flows.iter().filter(|f| f.fct_ns.is_some()).count(),
        flows: flows.len(),
        counters: c,
        cc_processor: processor_report(w),
    }
}

/// A byte count in B, kB, MB, GB or TB (powers of 1000), to three
/// significant figures at most, trailing zeros dropped: `512 B`, `1.5 kB`,
/// `400 kB`, `10 MB`.
pub fn bytes(b: u64) -> String {
    let v = b as f64;
    let (scaled, prefix) = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
        .iter()
        .find(|(p, _)| v >= *p)
        .map_or((v, ""), |(p, n)| (v / p, *n));
    let digits = if scaled >= 100.0 {
        0
    } else if scaled >= 10.0 {
        1
    } else {
        2
    };
    let text = format!("{scaled:.digits$}");
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    };
    format!("{text} {prefix}B")
}

/// The summary as a terminal table.
pub fn table(s: &Summary) -> String {
    let mut out = String::new();
    let mut row = |k: &str, v: String| out.push_str(&format!("  {k:<28} {v}\n"));
    row("scenario", format!("{} ({})", s.scenario, s.algorithm));
    row("simulated", format!("{:.3} ms", s.sim_ns / 1e6));
    row(
        "flows finished",
        if s.flows_finished < s.flows && s.sim_ns >= s.stop_ns {
            format!(
                "{} / {}  (the run reached stop_ms with {} unfinished: raise it to see them end)",
                s.flows_finished,
                s.flows,
                s.flows - s.flows_finished
            )
        } else {
            format!("{} / {}", s.flows_finished, s.flows)
        },
    );
    if s.link_utilization.len() <= 4 {
        for u in &s.link_utilization {
            row(
                "utilization",
                format!(
                    "{:.1} %  {}  ({:.2}-{:.2} ms)",
                    u.utilization * 100.0,
                    u.port,
                    u.from_ns / 1e6,
                    u.to_ns / 1e6
                ),
            );
        }
    } else if let Some(top) = s
        .link_utilization
        .iter()
        .max_by(|a, b| a.utilization.total_cmp(&b.utilization))
    {
        let mean = s.link_utilization.iter().map(|u| u.utilization).sum::<f64>() / s.link_utilization.len() as f64;
        row(
            "utilization",
            format!(
                "{} monitored ports: mean {:.1} %, max {:.1} % ({}); all in the JSON",
                s.link_utilization.len(),
                mean * 100.0,
                top.utilization * 100.0,
                top.port
            ),
        );
    }
    let q = s.queue_bytes;
    row(
        "queue p50 / p99 / max",
        format!("{:.0} / {:.0} / {:.0} B", q.p50, q.p99, q.max),
    );
    let f = s.fct_slowdown;
    row(
        "FCT slowdown p50/p95/p99",
        format!("{:.2} / {:.2} / {:.2}", f.p50, f.p95, f.p99),
    );
    if s.slowdown_clamped > 0 {
        row(
            "  counted as 1",
            format!(
                "{} flows finished sooner than the ideal (a last packet smaller than the full one \
                 the ideal's base RTT assumes at each hop)",
                s.slowdown_clamped
            ),
        );
    }
    for b in s.slowdown_by_size.iter().filter(|b| b.flows > 0) {
        let size = match b.upto_bytes {
            Some(u) => format!("≤ {}", bytes(u)),
            None => format!("> {}", bytes(b.from_bytes)),
        };
        row(
            &format!("  flows {size}"),
            format!("{:.2} / {:.2} / {:.2}  ({} flows)", b.p50, b.p95, b.p99, b.flows),
        );
    }
    row("Jain fairness (mean)", format!("{:.3}", s.jain_fairness));
    let m = s.marking;
    row(
        "ECN marks",
        if m.pmax > 0.0 {
            format!(
                "{}  (K_min {}, K_max {}, P_max {} at the host link speed)",
                s.counters.ecn_marks,
                bytes(m.kmin),
                bytes(m.kmax),
                m.pmax
            )
        } else {
            format!("{}  (switches do not mark)", s.counters.ecn_marks)
        },
    );
    if m.drops_at_k() {
        row(
            "drops (at K / ECN-capable)",
            format!(
                "{} ({} / {})",
                s.drops, s.counters.drops_fast_start, s.counters.drops_stable
            ),
        );
    } else {
        row("drops", s.drops.to_string());
    }
    if s.counters.pfc_pauses > 0 {
        row(
            "PFC pauses / paused switch, host",
            format!(
                "{} / {:.1} µs, {:.1} µs (summed over ports)",
                s.counters.pfc_pauses,
                s.counters.pfc_paused_ns as f64 / 1e3,
                s.counters.pfc_host_paused_ns as f64 / 1e3
            ),
        );
    }
    if let Some((gbps, size)) = s.rx_buffer {
        let c = &s.counters;
        row(
            "Rx buffer (hosts)",
            format!(
                "{} drained at {gbps} Gb/s: peak {}, mean level {:.1} of 31 on ACKs, {} drops",
                bytes(size),
                bytes(c.rx_buffer_peak_bytes),
                c.rx_level_sum as f64 / c.rx_level_acks.max(1) as f64,
                c.rx_buffer_drops
            ),
        );
    }
    row(
        "retransmits / timeouts",
        format!("{} / {}  (RTO {:.0} µs)", s.retransmits, s.counters.timeouts, s.rto_us),
    );
    if s.counters.sleek_probes > 0 || s.counters.sleek_pkts > 0 {
        row(
            "  SLEEK",
            format!(
                "{} packets put up again from the out-of-order count, {} probes",
                s.counters.sleek_pkts, s.counters.sleek_probes
            ),
        );
    }
    if s.counters.timeouts > 0 && s.drops == 0 {
        row(
            "  spurious timeouts",
            format!(
                "{} timeouts and no drop: packets waited in queues (up to {}) longer than the RTO; \
                 raise nic.rto_us",
                s.counters.timeouts,
                bytes(s.queue_bytes.max as u64)
            ),
        );
    }
    row(
        "integrity rejects / replays",
        format!("{} / {}", s.counters.bad_tags, s.counters.replayed_feedback),
    );
    if s.counters.probe_replies + s.counters.probes_lost > 0 {
        row(
            "probe replies / lost",
            format!("{} / {}", s.counters.probe_replies, s.counters.probes_lost),
        );
    }
    if let Some(p) = &s.cc_processor {
        let t = &p.total;
        row(
            "CC processor",
            format!(
                "{} cores a NIC at {:.3} ns an instruction, coalescing {}",
                p.cores, p.ns_per_instruction, p.coalescing
            ),
        );
        row(
            "  events",
            format!(
                "{} offered, {} served, {} coalesced, {} dropped, {} left waiting",
                t.offered, t.served, t.coalesced, t.dropped, t.waiting_at_end
            ),
        );
        let busiest = p
            .per_nic
            .iter()
            .max_by(|a, b| a.1.utilization.total_cmp(&b.1.utilization));
        row(
            "  utilization",
            match busiest {
                Some((host, b)) => format!(
                    "mean {:.1} %, busiest NIC {:.1} % (host {host}: wait p99 {} ns)",
                    t.utilization * 100.0,
                    b.utilization * 100.0,
                    b.wait_p99_ns
                ),
                None => format!("mean {:.1} %", t.utilization * 100.0),
            },
        );
        row(
            "  wait p50 / p99 / max",
            format!("{} / {} / {} ns", t.wait_p50_ns, t.wait_p99_ns, t.wait_max_ns),
        );
    }
    row("events / data packets", format!("{} / {}", s.events, s.data_packets));
    row(
        "speed",
        format!(
            "{:.2} M data packets per CPU-second ({:.2} s CPU, {:.2} s wall; {} build)",
            s.data_packets_per_s / 1e6,
            s.cpu_s,
            s.wall_s,
            s.build
        ),
    );
    out
}

/// Writes the finished flows in the HPCC reference simulator's FCT file
/// format, in the order they finished: `sip dip sport dport bytes
/// start_ns fct_ns standalone_ns`, the addresses in hex as the reference
/// numbers its nodes (0x0b000001 + (id / 256)·2^16 + (id mod 256)·2^8, host
/// index = node id), the source port 10000 + the flow's rank among the
/// flows of its host pair (as the reference hands them out), and the standalone
/// FCT the ideal of [`flow_results`].
pub fn write_ns3_fct(w: &World, path: &Path) -> std::io::Result<()> {
    let ip = |host: u32| 0x0b00_0001u32 + (host / 256) * 0x0001_0000 + (host % 256) * 0x0000_0100;
    let results = flow_results(w);
    let mut rank = std::collections::HashMap::new();
    // Source ports numbered per host pair from 10 000, as the reference
    // simulator numbers them.
    let sport: Vec<u32> = w
        .flows
        .iter()
        .map(|f| {
            let r = rank.entry((f.src_host, f.dst_host)).or_insert(0u32);
            *r += 1;
            10_000 + *r - 1
        })
        .collect();
    let mut done: Vec<_> = w.flows.iter().filter_map(|f| Some((f.finish_ps?, f.id))).collect();
    done.sort();
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    for (end, id) in done {
        let (f, r) = (&w.flows[id as usize], &results[id as usize]);
        writeln!(
            out,
            "{:08x} {:08x} {} {} {} {} {} {}",
            ip(f.src_host),
            ip(f.dst_host),
            sport[id as usize],
            f.dport,
            f.size,
            f.start_ps.as_ns(),
            (end - f.start_ps).as_ns(),
            r.ideal_fct_ns.round() as u64
        )?;
    }
    out.flush()
}

/// Writes the per-flow CSV.
pub fn write_csv(w: &World, path: &Path) -> std::io::Result<()> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(
        f,
        "flow,src,dst,bytes,start_ns,fct_ns,ideal_fct_ns,slowdown,base_rtt_ns,retransmits"
    )?;
    for r in flow_results(w) {
        let fct = r.fct_ns.map_or(String::new(), |x| format!("{x:.1}"));
        let sd = r.slowdown.map_or(String::new(), |x| format!("{x:.4}"));
        writeln!(
            f,
            "{},{},{},{},{:.1},{},{:.1},{},{:.1},{}",
            r.id, r.src, r.dst, r.bytes, r.start_ns, fct, r.ideal_fct_ns, sd, r.base_rtt_ns, r.retransmits
        )?;
    }
    f.flush()
}

/// NSCC's window changes by rule for each flow (`nscc.csv`), as
/// uet-htsim sums them (`cc_core::nscc::Stats`): bytes, the decreases
/// as the amounts taken. `false` (nothing written) when the senders are
/// not NSCC.
pub fn write_nscc_csv(w: &World, path: &Path) -> std::io::Result<bool> {
    if w.metrics.nscc.is_empty() {
        return Ok(false);
    }
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(
        f,
        "flow,src,dst,fair_inc,prop_inc,fast_inc,eta_inc,multi_dec,quick_dec,nack_dec"
    )?;
    for (r, n) in w.flows.iter().zip(&w.metrics.nscc) {
        writeln!(
            f,
            "{},{},{},{},{},{},{},{},{},{}",
            r.id,
            r.src_host,
            r.dst_host,
            n.fair_inc,
            n.prop_inc,
            n.fast_inc,
            n.eta_inc,
            n.multi_dec,
            n.quick_dec,
            n.nack_dec
        )?;
    }
    f.flush()?;
    Ok(true)
}

/// A named line of (x, y) points.
pub type Series = (String, Vec<(f64, f64)>);

/// What drawing a plot can fail with.
pub type PlotResult = Result<(), Box<dyn std::error::Error>>;

/// One panel of a figure: its title and its lines.
pub type Panel = (String, Vec<Series>);

/// Line colours that print and that readers with a colour-vision
/// deficiency tell apart: Okabe and Ito's palette without its yellow,
/// which is too pale on white, then darker shades.
const PALETTE: [RGBColor; 10] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(230, 159, 0),   // orange
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(0, 0, 0),       // black
    RGBColor(120, 60, 0),    // brown
    RGBColor(90, 90, 160),   // slate
    RGBColor(110, 110, 110), // grey
];

/// The `i`-th line colour.
fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Columns a line is thinned to ([`thin`]): about the plot area's width
/// in pixels.
const PLOT_COLUMNS: usize = 800;

/// A series reduced to what a plot `columns` pixels wide can show: over
/// equal slices of its x range, each slice's lowest and highest point (in
/// x order, so a peak or a dip one sample wide stays), and of a run of
/// equal y values only its ends. A time series of 10^6 samples draws as
/// at most 2 · `columns` points. `pts` is in increasing x.
pub fn thin(pts: &[(f64, f64)], columns: usize) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::with_capacity(pts.len().min(2 * columns + 2));
    let (Some(first), Some(last)) = (pts.first(), pts.last()) else {
        return out;
    };
    let width = (last.0 - first.0) / columns.max(1) as f64;
    let column = |x: f64| {
        if width > 0.0 {
            ((x - first.0) / width) as usize
        } else {
            0
        }
    };
    let mut i = 0;
    while i < pts.len() {
        let c = column(pts[i].0);
        let (mut lo, mut hi, mut j) = (i, i, i);
        while j < pts.len() && column(pts[j].0) == c {
            if pts[j].1 < pts[lo].1 {
                lo = j;
            }
            if pts[j].1 > pts[hi].1 {
                hi = j;
            }
            j += 1;
        }
        let mut keep = [lo.min(hi), lo.max(hi)];
        if i == 0 {
            keep[0] = 0;
        }
        if j == pts.len() {
            keep[1] = j - 1;
        }
        out.push(pts[keep[0]]);
        if keep[1] != keep[0] {
            out.push(pts[keep[1]]);
        }
        i = j;
    }
    // Of a run of equal y, the ends.
    let mut runs: Vec<(f64, f64)> = Vec::with_capacity(out.len());
    for (k, p) in out.iter().enumerate() {
        let same_before = k > 0 && out[k - 1].1 == p.1;
        let same_after = k + 1 < out.len() && out[k + 1].1 == p.1;
        if !(same_before && same_after) {
            runs.push(*p);
        }
    }
    runs
}

/// A line plot of `series` with labelled axes, each line thinned to what
/// the picture can show ([`thin`]).
pub fn line_plot_xy(path: &Path, title: &str, x_label: &str, y_label: &str, series: &[Series]) -> PlotResult {
    let series = thinned(series);
    let root = SVGBackend::new(path, (900, 480)).into_drawing_area();
    root.fill(&WHITE)?;
    panel(&root, Some(title), x_range(&series), (x_label, y_label), &series)?;
    root.present()?;
    Ok(())
}

/// Each line of `series` thinned to what [`PLOT_COLUMNS`] pixels show.
fn thinned(series: &[Series]) -> Vec<Series> {
    series
        .iter()
        .map(|(name, pts)| (name.clone(), thin(pts, PLOT_COLUMNS)))
        .collect()
}

/// The x range the lines of `series` span (0..1 if they span none).
fn x_range<'a>(series: impl IntoIterator<Item = &'a Series>) -> (f64, f64) {
    let xs = series.into_iter().flat_map(|(_, v)| v.iter().map(|p| p.0));
    let (x0, x1) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
    if x0 < x1 {
        (x0, x1)
    } else {
        (0.0, 1.0)
    }
}

/// One chart of `series` on `area`, over x range `x` and y from 0 to a
/// little above the highest point, with its axes' labels and, if given,
/// a caption.
fn panel<DB>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    caption: Option<&str>,
    (x0, x1): (f64, f64),
    (x_label, y_label): (&str, &str),
    series: &[Series],
) -> PlotResult
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
{
    let ys = series.iter().flat_map(|(_, v)| v.iter().map(|p| p.1));
    let y1 = ys.fold(0.0f64, f64::max).max(1e-9) * 1.05;
    let mut builder = ChartBuilder::on(area);
    if let Some(title) = caption {
        builder.caption(title, ("sans-serif", 20));
    }
    let mut chart = builder
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, 0.0..y1)?;
    chart.configure_mesh().x_desc(x_label).y_desc(y_label).draw()?;
    draw_lines(&mut chart, series, false)?;
    Ok(())
}

/// A figure of `panels` side by side, each with its own y range from 0,
/// with the legend to their right, outside every plotted area: a line of the same
/// name has the same colour in every panel. Lines named in `dashed` (the
/// sweep's baselines) are drawn dashed.
pub fn panel_plot(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    panels: &[Panel],
    dashed: &[String],
) -> PlotResult {
    let mut names: Vec<&str> = Vec::new();
    for (_, lines) in panels {
        for (n, _) in lines {
            if !names.contains(&n.as_str()) {
                names.push(n);
            }
        }
    }
    let all = panels.iter().flat_map(|(_, l)| l.iter().flat_map(|(_, p)| p.iter()));
    let (x0, x1) = all.fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let (x0, x1) = if x0 < x1 { (x0, x1) } else { (0.0, 1.0) };
    // x spanning 32 times or more (paths 1 to 128) goes on a log2 axis:
    // drawn at log2(x), labelled with x.
    let log = x0 > 0.0 && x1 / x0 >= 32.0;
    let at = |x: f64| if log { x.log2() } else { x };
    let (x0, x1) = (at(x0), at(x1));
    let x_desc = if log {
        format!("{x_label} (log scale)")
    } else {
        x_label.to_string()
    };
    let legend_width = 40 + 8 * names.iter().map(|n| n.chars().count()).max().unwrap_or(0) as u32;
    let width = 440 * panels.len().max(1) as u32 + legend_width;
    let root = SVGBackend::new(path, (width, 460)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 20))?;
    let (plots, legend) = root.split_horizontally(width - legend_width);
    let areas = plots.split_evenly((1, panels.len().max(1)));
    for ((name, lines), area) in panels.iter().zip(&areas) {
        // Each panel its own y range from 0: short and long flows' slowdowns
        // differ by ten.
        let y1 = lines
            .iter()
            .flat_map(|(_, p)| p.iter().map(|q| q.1))
            .fold(0.0f64, f64::max)
            .max(1e-9)
            * 1.08;
        let mut chart = ChartBuilder::on(area)
            .caption(name, ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(56)
            .build_cartesian_2d(x0..x1, 0.0..y1)?;
        // Where every x is a whole number (cores, hosts), a tick at one
        // prints as one ("4", not "4.0").
        let whole = lines.iter().flat_map(|(_, p)| p.iter()).all(|p| p.0.fract() == 0.0);
        let x_fmt = |x: &f64| {
            let x = if log { 2f64.powf(*x) } else { *x };
            if (x - x.round()).abs() < 1e-6 {
                format!("{x:.0}")
            } else {
                format!("{x:.1}")
            }
        };
        let mut mesh = chart.configure_mesh();
        mesh.x_desc(x_desc.as_str()).y_desc(y_label);
        if whole || log {
            mesh.x_label_formatter(&x_fmt);
        }
        mesh.draw()?;
        for (n, pts) in lines {
            let i = names.iter().position(|m| m == n).unwrap_or(0);
            let style = colour(i).stroke_width(2);
            let pts: Vec<(f64, f64)> = pts.iter().map(|p| (at(p.0), p.1)).collect();
            if dashed.contains(n) {
                chart.draw_series(DashedLineSeries::new(pts.iter().copied(), 6, 4, style))?;
            } else {
                chart.draw_series(LineSeries::new(pts.iter().copied(), style))?;
                chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, colour(i).filled())))?;
            }
        }
    }
    for (i, n) in names.iter().enumerate() {
        let y = 60 + 24 * i as i32;
        let c = colour(i);
        if dashed.iter().any(|d| d == n) {
            legend.draw(&PathElement::new(vec![(8, y), (14, y)], c.stroke_width(2)))?;
            legend.draw(&PathElement::new(vec![(18, y), (24, y)], c.stroke_width(2)))?;
        } else {
            legend.draw(&PathElement::new(vec![(8, y), (24, y)], c.stroke_width(2)))?;
            legend.draw(&Circle::new((16, y), 3, c.filled()))?;
        }
        legend.draw(&Text::new(n.to_string(), (32, y - 7), ("sans-serif", 14)))?;
    }
    root.present()?;
    Ok(())
}

fn line_plot(path: &Path, title: &str, y_label: &str, series: &[Series]) -> PlotResult {
    line_plot_xy(path, title, "time (ms)", y_label, series)
}

/// Draws one labelled line a series (with a dot at each point if `dots`)
/// and the legend.
fn draw_lines<'a, DB, CT>(chart: &mut ChartContext<'a, DB, CT>, series: &[Series], dots: bool) -> PlotResult
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    CT: CoordTranslate<From = (f64, f64)>,
{
    for (i, (name, pts)) in series.iter().enumerate() {
        let color = colour(i).to_rgba();
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))?
            .label(name.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
        if dots {
            chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
        }
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .draw()?;
    Ok(())
}

/// A line plot with a logarithmic x axis of bytes and a y axis from
/// `y_from`.
fn log_x_plot(path: &Path, title: &str, x_label: &str, y_label: &str, y_from: f64, series: &[Series]) -> PlotResult {
    let root = SVGBackend::new(path, (900, 480)).into_drawing_area();
    root.fill(&WHITE)?;
    let all = series.iter().flat_map(|(_, p)| p.iter());
    let (xmin, xmax, ymax) = all.fold((f64::MAX, 1.0f64, 1.0f64), |(a, b, c), p| {
        (a.min(p.0), b.max(p.0), c.max(p.1))
    });
    let xmin = xmin.min(xmax * 0.5).max(1.0);
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(
            (xmin * 0.7..xmax * 1.5).log_scale(),
            y_from..ymax.max(y_from + 1.0) * 1.1,
        )?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .x_label_formatter(&|x| bytes(x.round() as u64))
        .draw()?;
    draw_lines(&mut chart, series, true)?;
    root.present()?;
    Ok(())
}

/// Writes queue.svg, window_rate.svg, window.svg and fct_slowdown.svg
/// (and signals.svg, if a packet was trimmed, dropped or timed out, and
/// NAME.svg, if the traced flows' algorithm NAME sorts ACKs into cases,
/// as NSCC does) into `dir`, their titles
/// naming the scenario `name` and the algorithm.
pub fn write_plots(w: &World, name: &str, dir: &Path) -> PlotResult {
    let of = format!("{name}, {}", w.cfg.algorithm);
    // The busiest ports (largest queue seen), at most six: a plot of
    // hundreds of lines would show none.
    let mut busiest: Vec<&PortSeries> = w.metrics.ports.iter().collect();
    busiest.sort_by_key(|p| std::cmp::Reverse(p.max_queue));
    busiest.truncate(6);
    let queues: Vec<Series> = busiest
        .iter()
        .map(|p| {
            (
                p.name.clone(),
                p.t_ns
                    .iter()
                    .zip(&p.queue)
                    .map(|(t, q)| (t / 1e6, *q as f64 / 1e3))
                    .collect(),
            )
        })
        .collect();
    line_plot(
        &dir.join("queue.svg"),
        &if w.metrics.ports.len() > busiest.len() {
            format!(
                "Queue at the {} of {} ports with the largest queue ({of})",
                busiest.len(),
                w.metrics.ports.len()
            )
        } else {
            format!("Queue at monitored ports ({of})")
        },
        "queue (KB)",
        &queues,
    )?;
    // One series per traced flow, `value` picking the quantity.
    let traces = |label: &str, value: &dyn Fn(&crate::output::metrics::FlowTrace, usize) -> f64| -> Vec<Series> {
        w.metrics
            .traces
            .iter()
            .map(|tr| {
                (
                    format!("flow {} {label}", tr.id),
                    (0..tr.t_ns.len()).map(|i| (tr.t_ns[i] / 1e6, value(tr, i))).collect(),
                )
            })
            .collect()
    };
    let rates = traces("rate", &|tr, i| tr.rate_gbps[i]);
    line_plot(
        &dir.join("window_rate.svg"),
        &format!("Pacing rate of traced flows ({of})"),
        "rate (Gb/s)",
        &rates,
    )?;
    let windows = traces("window", &|tr, i| tr.window[i] / 1e3);
    line_plot(
        &dir.join("window.svg"),
        &format!("Window of traced flows ({of})"),
        "window (KB)",
        &windows,
    )?;
    // FCT slowdown percentiles by flow size (log x), as the HPCC paper
    // draws them: one line per percentile, a point per size bucket.
    let buckets = slowdown_by_size(&flow_results(w));
    let line = |label: &str, pick: fn(&SizeBucket) -> f64| {
        let pts = buckets
            .iter()
            .filter(|b| b.flows > 0)
            .map(|b| (b.upto_bytes.map_or(b.from_bytes as f64 * 3.0, |u| u as f64), pick(b)))
            .collect::<Vec<_>>();
        (label.to_string(), pts)
    };
    let lines = [line("p50", |b| b.p50), line("p95", |b| b.p95), line("p99", |b| b.p99)];
    log_x_plot(
        &dir.join("fct_slowdown.svg"),
        &format!("FCT slowdown by flow size ({of})"),
        "flow size (bucket's upper edge)",
        "FCT slowdown (1 = the ideal FCT)",
        1.0,
        &lines,
    )?;
    if let Some(series) = signal_rates(&w.metrics.signals) {
        line_plot(
            &dir.join("signals.svg"),
            &format!("Losses and signals ({of})"),
            "per µs, between samples",
            &series,
        )?;
    }
    if let Some(cases) = case_shares(&w.metrics.traces) {
        stacked_plot(
            &dir.join(format!("{}.svg", w.cfg.sender_name)),
            &format!("Window and each ACK's case, traced flows ({of})"),
            ("window (KB)", &windows),
            ("share of the ACKs", &cases),
        )?;
    }
    Ok(())
}

/// The traced flows' ACKs in each case their algorithm names (NSCC's
/// four quadrants) as a share of their ACKs between samples, against ms:
/// a line for each case that happened; none if the traced flows counted
/// no case (their algorithm names none).
pub fn case_shares(traces: &[crate::output::metrics::FlowTrace]) -> Option<Vec<Series>> {
    use std::collections::BTreeMap;
    // The traced flows' counts summed at each sample time.
    let mut at: BTreeMap<u64, [u32; cc_core::controller::MAX_ACK_CASES]> = BTreeMap::new();
    for tr in traces {
        for (t, c) in tr.t_ns.iter().zip(&tr.cases) {
            let sum = at.entry(t.to_bits()).or_default();
            for (s, n) in sum.iter_mut().zip(c) {
                *s += n;
            }
        }
    }
    let names = traces.iter().map(|t| t.case_names).find(|n| !n.is_empty())?;
    let lines: Vec<Series> = names
        .iter()
        .take(cc_core::controller::MAX_ACK_CASES)
        .enumerate()
        .filter(|&(i, _)| at.values().any(|c| c[i] > 0))
        .map(|(i, name)| {
            let pts = at
                .iter()
                .filter(|(_, c)| c.iter().sum::<u32>() > 0)
                .map(|(t, c)| (f64::from_bits(*t) / 1e6, c[i] as f64 / c.iter().sum::<u32>() as f64))
                .collect();
            (name.to_string(), pts)
        })
        .collect();
    (!lines.is_empty()).then_some(lines)
}

/// Two line plots against time (ms), one above the other on one x range:
/// `top` and `bottom`, each a y label and its lines.
fn stacked_plot(path: &Path, title: &str, top: (&str, &[Series]), bottom: (&str, &[Series])) -> PlotResult {
    let (top_s, bottom_s) = (thinned(top.1), thinned(bottom.1));
    let x = x_range(top_s.iter().chain(&bottom_s));
    let root = SVGBackend::new(path, (900, 720)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 20))?;
    let (upper, lower) = root.split_vertically(340);
    panel(&upper, None, x, ("time (ms)", top.0), &top_s)?;
    panel(&lower, None, x, ("time (ms)", bottom.0), &bottom_s)?;
    root.present()?;
    Ok(())
}

/// The losses and signals of a run as rates (per µs between samples),
/// against ms: a line for each that happened; none if nothing did.
pub fn signal_rates(g: &crate::output::metrics::SignalSeries) -> Option<Vec<Series>> {
    let line = |name: &str, v: &[u64]| -> Option<Series> {
        (v.last().copied().unwrap_or(0) > 0).then(|| {
            let pts = g
                .t_ns
                .windows(2)
                .zip(v.windows(2))
                .map(|(t, c)| (t[1] / 1e6, (c[1] - c[0]) as f64 * 1e3 / (t[1] - t[0]).max(1e-9)))
                .collect();
            (name.to_string(), pts)
        })
    };
    let lines: Vec<Series> = [
        line("trims", &g.trims),
        line("NACKs", &g.nacks),
        line("drops", &g.drops),
        line("timeouts", &g.timeouts),
        line("SLEEK resends", &g.sleek),
        line("ECN marks", &g.ecn_marks),
    ]
    .into_iter()
    .flatten()
    .collect();
    lines.iter().any(|(n, _)| n != "ECN marks").then_some(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Signals as rates between samples, a line for each that happened;
    /// no plot when nothing was trimmed, dropped or timed out (ECN marks
    /// alone are every marking run's).
    #[test]
    fn signal_rates_are_per_microsecond_and_only_what_happened() {
        let mut g = crate::output::metrics::SignalSeries::default();
        let mut c = Counters::default();
        g.push(0.0, &c);
        c.trims = 30;
        c.nacks = 20;
        c.ecn_marks = 100;
        g.push(10_000.0, &c);
        c.trims = 40;
        c.nacks = 40;
        c.sleek_pkts = 10;
        g.push(20_000.0, &c);
        let lines = signal_rates(&g).unwrap();
        let names: Vec<&str> = lines.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["trims", "NACKs", "SLEEK resends", "ECN marks"]);
        assert_eq!(lines[2].1, [(0.01, 0.0), (0.02, 1.0)]);
        assert_eq!(lines[0].1, [(0.01, 3.0), (0.02, 1.0)]);
        assert_eq!(lines[1].1, [(0.01, 2.0), (0.02, 2.0)]);
        let mut marks = crate::output::metrics::SignalSeries::default();
        marks.push(0.0, &Counters::default());
        marks.push(
            1000.0,
            &Counters {
                ecn_marks: 5,
                ..Counters::default()
            },
        );
        assert!(signal_rates(&marks).is_none());
    }

    fn flow(bytes: u64, slowdown: f64) -> FlowResult {
        FlowResult {
            id: 0,
            src: 0,
            dst: 1,
            bytes,
            start_ns: 0.0,
            fct_ns: Some(1.0),
            ideal_fct_ns: 1.0,
            slowdown: Some(slowdown),
            base_rtt_ns: 1.0,
            retransmits: 0,
        }
    }

    /// A bucket holds the flows up to its edge, edge included; the last
    /// holds everything above 10 MB; unfinished flows count nowhere.
    #[test]
    fn size_buckets_include_their_upper_edge() {
        let mut flows = vec![flow(7_000, 2.0), flow(7_001, 3.0), flow(20_000_000, 5.0), flow(1, 1.5)];
        flows.push(FlowResult {
            slowdown: None,
            ..flow(5_000, 9.0)
        });
        let b = slowdown_by_size(&flows);
        assert_eq!(b.len(), SIZE_EDGES.len() + 1);
        let at = |upto: Option<u64>| b.iter().find(|x| x.upto_bytes == upto).unwrap();
        assert_eq!((at(Some(3_000)).flows, at(Some(3_000)).p99), (1, 1.5));
        assert_eq!((at(Some(7_000)).flows, at(Some(7_000)).p50), (1, 2.0));
        assert_eq!((at(Some(10_000)).flows, at(Some(10_000)).p50), (1, 3.0));
        assert_eq!(
            (at(None).flows, at(None).from_bytes, at(None).p95),
            (1, 10_000_000, 5.0)
        );
        assert_eq!(b.iter().map(|x| x.flows).sum::<usize>(), 4);
    }
}
