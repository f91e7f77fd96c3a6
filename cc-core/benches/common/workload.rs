//! The events both benchmarks measure: the host one (`cc-core/benches/events.rs`,
//! nanoseconds) and the firmware one (`nic-firmware/src/bin/bench.rs`,
//! instructions on the soft core, which includes this file by path). One
//! definition keeps the two sets of figures about the same events.
//! `no_std`-clean: only `cc_core` types.

use cc_core::prelude::*;
use cc_core::reference::{HpccRef, HpccRefParams, LdcpRefParams};

/// Deterministic telemetry: up to 5 hops of 100 Gb/s, a bottleneck queue
/// under 90-110 % load, 24-bit timestamps and 20-bit byte counters in
/// 64-byte units (INT-MD-like widths), all wrapping. By default every hop
/// carries the queue and the load (the worst case for MeasureInflight:
/// every hop needs both of u''s ratios); [`Telemetry::one_queue`] puts them
/// on one hop, as on a path with one congested link.
pub struct Telemetry {
    rng: u64,
    q: i64,
    hops: [HopSample; 5],
    /// The hop with the queue, or every hop (`None`).
    queued: Option<usize>,
}

impl Telemetry {
    pub fn new() -> Self {
        let h = HopSample {
            ts: 0,
            tx: 0,
            qlen_bytes: 0,
            sojourn_ns: 0,
            bandwidth: LinkSpeed::from_gbps(100),
            id: 0,
            widths: CounterWidths::new(24, 20, 64).unwrap(),
            tx_utilization: TxUtilization::NONE,
        };
        let mut hops = [h; 5];
        for (i, h) in hops.iter_mut().enumerate() {
            h.id = i as u32;
        }
        Telemetry {
            rng: 0x9E37_79B9_7F4A_7C15,
            q: 0,
            hops,
            queued: None,
        }
    }

    /// The queue and the 90-110 % load on hop 2 only; the other hops run
    /// at half the line rate with empty queues (a path with one congested
    /// link).
    pub fn one_queue() -> Self {
        Telemetry {
            queued: Some(2),
            ..Self::new()
        }
    }

    /// The next ACK's five hops; take the first `n` for an `n`-hop path.
    pub fn next(&mut self) -> [HopSample; 5] {
        let mut r = || {
            self.rng ^= self.rng << 13;
            self.rng ^= self.rng >> 7;
            self.rng ^= self.rng << 17;
            self.rng
        };
        let dt = 800 + (r() % 400) as u32;
        let load = 900 + (r() % 200) as i64;
        self.q = (self.q + (load - 1000) * dt as i64 * 100 / 8000 / 1000).max(0);
        for (i, h) in self.hops.iter_mut().enumerate() {
            let congested = self.queued.is_none_or(|q| q == i);
            let bytes = if congested { dt * 100 / 8 } else { dt * 100 / 16 };
            h.ts = h.ts.wrapping_add(dt) & 0xFF_FFFF;
            h.tx = h.tx.wrapping_add(bytes / 64) & 0xF_FFFF;
            h.qlen_bytes = if congested { self.q as u32 } else { 0 };
        }
        self.hops
    }
}

/// The draft's HPCC++ defaults, with the benchmark flows' base RTT among
/// the configuration's reciprocals (as a NIC configures its fabric's).
pub fn hpcc_config() -> HpccConfig {
    let mut cfg = HpccConfig::draft_default();
    let _ = cfg.reciprocals.add_rtt(hpcc_params(Algorithm::Hpcc).base_rtt);
    cfg
}

/// An HPCC++ flow (or its receiver): T = 12 µs at 100 Gb/s.
pub fn hpcc_params(algorithm: Algorithm) -> FlowParams {
    FlowParams {
        algorithm,
        base_rtt: BaseRtt::from_nanos(12_000).expect("12 us is in range"),
        line_rate: LinkSpeed::from_gbps(100),
        start_seq: Seq(0),
    }
}

/// The event that puts data in flight, so that probe mode has a probe out
/// (probe 1).
pub fn data_in_flight() -> EventKind<'static> {
    EventKind::Sent {
        seq: Seq(0),
        len: 1000,
        end: MessageEnd::More,
    }
}

/// Probe response number `i` (from 0) for flow 1: it answers probe i + 1,
/// and each response asks for the next probe, so every one counts.
pub fn probe_response(i: u32, hop: HopSample) -> Event<'static> {
    Event {
        flow: FlowId(1),
        kind: EventKind::ProbeResponse {
            probe: ProbeId((i + 1) as u8),
            hop_index: 2,
            hop,
        },
    }
}

/// The `f64` model with the same parameters as `HpccConfig::draft_default`.
pub fn hpcc_ref() -> HpccRef {
    let cfg = hpcc_config();
    HpccRef::new(HpccRefParams {
        t_ns: 12_000.0,
        eta: 0.95,
        max_stage: cfg.max_stage as u32,
        w_ai: 150_000.0 * 0.05 / 64.0,
        w_min: 16.0,
        w_init: 150_000.0,
        sojourn: false,
    })
}

/// ACK number `i` (from 0) of an HPCC++ flow: 1000 bytes each, 150 kB in flight.
pub fn hpcc_ack(i: u32, telemetry: &[HopSample]) -> Ack<'_> {
    let seq = Seq(i * 1000);
    Ack {
        telemetry,
        ..Ack::new(seq, seq.add(150_000))
    }
}

/// An LDCP flow at 100 Gb/s, T = 8 µs, fast start off, and its `f64` model.
pub fn ldcp_setup() -> (LdcpConfig, FlowParams, LdcpRefParams) {
    let mut cfg = LdcpConfig::draft_default();
    cfg.fast_start = FastStart::Disabled;
    let p = FlowParams {
        algorithm: Algorithm::Ldcp,
        base_rtt: BaseRtt::from_nanos(8_000).expect("8 us is in range"),
        line_rate: LinkSpeed::from_gbps(100),
        start_seq: Seq(0),
    };
    let rp = LdcpRefParams {
        mtu: 1000.0,
        alpha: 1.0,
        beta: 0.5,
        gamma: 0.125,
        t_ns: 8_000.0,
        iw_pkts: 100.0,
        fast_start: false,
    };
    (cfg, p, rp)
}

/// LDCP ACK number `n` (from 1), acknowledging 1000 bytes, ECE on every
/// 8th: cw hovers around 16 packets.
pub fn ldcp_ack(n: u32) -> Ack<'static> {
    let ece = if n.is_multiple_of(8) {
        EcnEcho::Marked
    } else {
        EcnEcho::NotMarked
    };
    Ack {
        ece,
        ..Ack::new(Seq(n * 1000), Seq(n * 1000))
    }
}
