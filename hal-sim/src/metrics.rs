//! What a run measures: per-flow FCT and slowdown, per-port queue and
//! utilization series, Jain fairness over windows, window/rate traces, and
//! event counters.

use serde::Serialize;

use crate::event::Ps;

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
}

/// Everything measured.
#[derive(Clone, Debug, Default)]
pub struct Metrics {
    /// Counters.
    pub counters: Counters,
    /// Monitored ports.
    pub ports: Vec<PortSeries>,
    /// Traced flows.
    pub traces: Vec<FlowTrace>,
    /// Jain index per window (window end ns, index, active flows).
    pub jain: Vec<(f64, f64, usize)>,
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
