//! What a run measures: per-flow FCT and slowdown, per-port queue and
//! utilization series, Jain fairness over windows, window/rate traces, and
//! event counters.

use cc_core::controller::MAX_ACK_CASES;
use serde::Serialize;

use crate::run::event::Ps;

/// Event counters.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Counters {
    /// Data packets sent by NICs (retransmissions included).
    pub data_packets: u64,
    /// Control packets (acks, nacks, probes, feedback, CNPs).
    pub ctrl_packets: u64,
    /// Packets CE-marked by WRED/ECN.
    pub ecn_marks: u64,
    /// Packets dropped, all causes.
    pub drops: u64,
    /// ECN-incapable (fast-start) packets dropped at threshold K (eq. 3).
    pub drops_fast_start: u64,
    /// ECN-capable packets dropped (buffer full).
    pub drops_stable: u64,
    /// Data packets sent again (go-back-N).
    pub retransmits: u64,
    /// Data packets the LDCP timer released (window below one packet).
    pub timer_releases: u64,
    /// Retransmission timeouts fired.
    pub timeouts: u64,
    /// Telemetry the sender could not parse.
    pub bad_telemetry: u64,
    /// Notifications refused for a wrong integrity tag.
    pub bad_tags: u64,
    /// Window feedback refused as a replay (an old sequence number).
    pub replayed_feedback: u64,
    /// Engine refusals (all reasons).
    pub engine_refusals: u64,
    /// Probe replies dropped by `nic.probe_loss`.
    pub probes_lost: u64,
    /// Probe replies the senders received.
    pub probe_replies: u64,
    /// PFC pause frames (XOFF) sent by switches.
    pub pfc_pauses: u64,
    /// Time switch egress ports spent paused by PFC, summed over ports, ns
    /// (pauses that ended).
    pub pfc_paused_ns: u64,
    /// Time NIC uplinks spent paused by PFC, summed over hosts, ns.
    pub pfc_host_paused_ns: u64,
    /// Data packets a receiving NIC dropped for a full Rx buffer
    /// (`nic.rx_drain_gbps`; counted in `drops` too).
    pub rx_buffer_drops: u64,
    /// The fullest any NIC's Rx buffer was, bytes.
    pub rx_buffer_peak_bytes: u64,
    /// ACKs that carried an Rx buffer level from a draining buffer, and
    /// the sum of their levels (their mean: the sum over the count).
    pub rx_level_acks: u64,
    /// See `rx_level_acks`.
    pub rx_level_sum: u64,
    /// Data packets trimming switches cut to their header.
    pub trims: u64,
    /// NACKs of trimmed packets the senders received (SACK transport).
    pub nacks: u64,
    /// ACKs the senders received (SACK transport).
    pub acks: u64,
    /// Packets SLEEK put up to be sent again (uet-htsim's `sleek_pkts`;
    /// some are answered before they go).
    pub sleek_pkts: u64,
    /// SLEEK probes the senders sent.
    pub sleek_probes: u64,
}

/// One flow's outcome.
#[derive(Clone, Debug, Serialize)]
pub struct FlowResult {
    /// Flow id.
    pub id: u32,
    /// Source host index.
    pub src: u32,
    /// Destination host index.
    pub dst: u32,
    /// Payload bytes the flow carried.
    pub bytes: u64,
    /// Start, ns.
    pub start_ns: f64,
    /// Completion time, ns (None: did not finish).
    pub fct_ns: Option<f64>,
    /// The ideal FCT: the path's base RTT plus the bytes with headers at the
    /// bottleneck's speed, ns.
    pub ideal_fct_ns: f64,
    /// FCT / ideal FCT, ≥ 1.
    pub slowdown: Option<f64>,
    /// The path's base RTT, ns.
    pub base_rtt_ns: f64,
    /// Data packets sent again.
    pub retransmits: u64,
}

/// A monitored port's samples.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PortSeries {
    /// "switch N port P → node M".
    pub name: String,
    /// Link bandwidth, bit/s.
    pub bps: u64,
    /// Sample times, ns.
    pub t_ns: Vec<f64>,
    /// Queued bytes at each sample.
    pub queue: Vec<u64>,
    /// Transmitted bytes counter at each sample.
    pub tx_bytes: Vec<u64>,
    /// Last time the port sent a data packet, ps.
    #[serde(skip)]
    pub last_data_ps: Ps,
    /// Largest queue seen at any enqueue.
    pub max_queue: u64,
}

/// Window and rate over time of a traced flow.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FlowTrace {
    /// Flow id.
    pub id: u32,
    /// Sample times, ns.
    pub t_ns: Vec<f64>,
    /// Window, bytes.
    pub window: Vec<f64>,
    /// Pacing rate, Gb/s.
    pub rate_gbps: Vec<f64>,
    /// The flow's ACKs since the previous sample in each case its
    /// algorithm names (`case_names`, by number; NSCC's quadrants);
    /// empty for an algorithm that names none.
    pub cases: Vec<[u32; MAX_ACK_CASES]>,
    /// The ACKs counted since the last sample.
    #[serde(skip)]
    pub pending_cases: [u32; MAX_ACK_CASES],
    /// The cases' names (`cc_core::controller::AlgorithmConfig::ACK_CASES`).
    #[serde(skip)]
    pub case_names: &'static [&'static str],
}

/// The network's losses and signals over time: the run's counters at
/// each port sample.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SignalSeries {
    /// Sample times, ns.
    pub t_ns: Vec<f64>,
    /// Packets trimmed so far.
    pub trims: Vec<u64>,
    /// NACKs received so far.
    pub nacks: Vec<u64>,
    /// Packets dropped so far.
    pub drops: Vec<u64>,
    /// Timeouts so far.
    pub timeouts: Vec<u64>,
    /// Packets SLEEK put up to be sent again so far.
    pub sleek: Vec<u64>,
    /// ECN marks so far.
    pub ecn_marks: Vec<u64>,
}

impl SignalSeries {
    /// Records `c` at `t_ns`.
    pub fn push(&mut self, t_ns: f64, c: &Counters) {
        self.t_ns.push(t_ns);
        self.trims.push(c.trims);
        self.nacks.push(c.nacks);
        self.drops.push(c.drops);
        self.timeouts.push(c.timeouts);
        self.sleek.push(c.sleek_pkts);
        self.ecn_marks.push(c.ecn_marks);
    }
}

/// Port samples kept over all monitored ports: about 100 MB. Past it,
/// every second sample of every port is dropped and the ports are sampled
/// half as often from then on, so a long run on a large fabric keeps a
/// coarser series rather than running out of memory. Runs that stay below
/// it keep every sample.
pub const PORT_SAMPLE_BUDGET: usize = 1 << 22;

/// Everything measured.
#[derive(Clone, Debug, Default)]
pub struct Metrics {
    /// Counters.
    pub counters: Counters,
    /// Monitored ports.
    pub ports: Vec<PortSeries>,
    /// Losses and signals, sampled with the ports.
    pub signals: SignalSeries,
    /// Port samples are taken every `port_stride`-th sampling tick (1
    /// until [`PORT_SAMPLE_BUDGET`] is reached).
    pub port_stride: u64,
    /// Sampling ticks so far.
    pub ticks: u64,
    /// Traced flows.
    pub traces: Vec<FlowTrace>,
    /// Jain index per window (window end ns, index, active flows).
    pub jain: Vec<(f64, f64, usize)>,
    /// NSCC senders' window changes summed by rule, by flow id, as
    /// uet-htsim sums them (its `fair_inc … nack_dec`;
    /// `model::nic::nscc_sums`); empty under other algorithms.
    pub nscc: Vec<cc_core::nscc::Stats>,
}

impl Metrics {
    /// Whether this sampling tick samples the ports; thins every series
    /// to half first when the next samples would pass the budget.
    pub fn port_tick(&mut self) -> bool {
        self.port_tick_within(PORT_SAMPLE_BUDGET)
    }

    fn port_tick_within(&mut self, budget: usize) -> bool {
        self.ticks += 1;
        let stride = self.port_stride.max(1);
        if !(self.ticks - 1).is_multiple_of(stride) {
            return false;
        }
        let per_port = self.ports.first().map_or(0, |p| p.t_ns.len());
        if (per_port + 1) * self.ports.len() > budget {
            for p in &mut self.ports {
                halve(&mut p.t_ns);
                halve(&mut p.queue);
                halve(&mut p.tx_bytes);
            }
            let g = &mut self.signals;
            halve(&mut g.t_ns);
            halve(&mut g.trims);
            halve(&mut g.nacks);
            halve(&mut g.drops);
            halve(&mut g.timeouts);
            halve(&mut g.ecn_marks);
            self.port_stride = stride * 2;
            // This tick is on the new stride only if it is even.
            return (self.ticks - 1).is_multiple_of(self.port_stride);
        }
        true
    }
}

/// Keeps the samples at even positions (the ticks on the doubled stride).
fn halve<T>(v: &mut Vec<T>) {
    let mut i = 0;
    v.retain(|_| {
        i += 1;
        i % 2 == 1
    });
}

/// Percentile of an unsorted slice (nearest rank), 0 if empty.
pub fn percentile(values: &[f64], p: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let rank = ((p / 100.0) * v.len() as f64).ceil().max(1.0) as usize;
    v[rank.min(v.len()) - 1]
}

/// Jain's fairness index of throughputs: (Σx)² / (n·Σx²); 1 when equal.
pub fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    if x.is_empty() || s2 == 0.0 {
        return 1.0;
    }
    s * s / (x.len() as f64 * s2)
}

/// ns from ps, as f64 for reports.
pub fn ns(t: Ps) -> f64 {
    t.as_ns_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Under the budget every tick samples; past it the series thin to
    /// every other sample and the stride doubles, so the samples kept are
    /// still evenly spaced: ticks 1, 1 + s, 1 + 2s, … for the stride s.
    #[test]
    fn port_samples_thin_to_stay_within_the_budget() {
        let mut m = Metrics {
            ports: vec![PortSeries::default(); 2],
            ..Default::default()
        };
        for tick in 1..=100u64 {
            if m.port_tick_within(40) {
                for p in &mut m.ports {
                    p.t_ns.push(tick as f64);
                    p.queue.push(tick);
                    p.tx_bytes.push(tick);
                }
            }
            assert!(m.ports.iter().map(|p| p.t_ns.len()).sum::<usize>() <= 40);
        }
        let t = &m.ports[0].t_ns;
        let s = m.port_stride as f64;
        assert_eq!(m.port_stride, 8);
        assert!(t.iter().enumerate().all(|(i, &x)| x == 1.0 + i as f64 * s), "{t:?}");
        assert_eq!(m.ports[1].queue.len(), t.len());
    }

    #[test]
    fn percentiles_and_jain() {
        let v: Vec<f64> = (1..=100).map(|x| x as f64).collect();
        assert_eq!(percentile(&v, 50.0), 50.0);
        assert_eq!(percentile(&v, 99.0), 99.0);
        assert_eq!(percentile(&v, 100.0), 100.0);
        assert_eq!(percentile(&[], 99.0), 0.0);
        assert!((jain(&[1.0, 1.0, 1.0]) - 1.0).abs() < 1e-12);
        assert!((jain(&[1.0, 0.0]) - 0.5).abs() < 1e-12);
    }
}
