//! The engine under arbitrary event sequences (DESIGN §4, §9): no panic,
//! and the invariants of `cc_core::testing::model` (windows inside their
//! clamps, rate within line rate or IW/T, no timer armed in the past, a
//! refused event changes nothing, no event touches another flow), the model
//! the property tests share. This file only turns fuzzer bytes into
//! operations.
#![no_main]
use arbitrary::Arbitrary;
use cc_core::prelude::*;
use cc_core::testing::model::{self, Model};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Hop {
    ts: u32,
    tx: u32,
    qlen: u32,
    sojourn: u32,
    mbps: u32,
    id: u8,
    ts_bits: u8,
    tx_bits: u8,
    unit: u16,
    util: Option<u32>,
}

impl Hop {
    fn sample(&self) -> HopSample {
        HopSample {
            ts: self.ts,
            tx: self.tx,
            qlen_bytes: self.qlen,
            sojourn_ns: self.sojourn,
            bandwidth: LinkSpeed::from_mbps(self.mbps),
            id: self.id as u32 % 4,
            // Widths are checked where they are made: the engine only ever
            // sees valid ones.
            widths: CounterWidths::new(self.ts_bits % 34, self.tx_bits % 34, self.unit).unwrap_or(CounterWidths::FULL),
            tx_utilization: self.util.and_then(|u| Fraction::from_bits(u % (1 << 25))),
        }
    }
}

#[derive(Arbitrary, Debug)]
enum Op {
    Start {
        algo: u8,
        t_ns: u32,
        mbps: u32,
        seq: u32,
    },
    End,
    Sent {
        seq: u32,
        len: u32,
        last: bool,
    },
    Ack {
        cum: u32,
        nxt: u32,
        ece: bool,
        hops: Vec<Hop>,
        rtt: Option<u32>,
    },
    Loss {
        seq: u32,
    },
    Cnp,
    RttResponse {
        probe: u8,
        rtt: Option<u32>,
    },
    ProbeResponse {
        probe: u8,
        idx: u8,
        hop: Hop,
    },
    RxTelemetry {
        hops: Vec<Hop>,
    },
    ProbeRequest {
        hops: Vec<Hop>,
    },
    Feedback {
        window: u32,
    },
    FlowCount {
        n: u16,
    },
    Timer,
}

#[derive(Arbitrary, Debug)]
struct Step {
    flow: u8,
    dt: u32,
    op: Op,
}

fuzz_target!(|input: (bool, Vec<Step>)| {
    let (probe, steps) = input;
    let mut m = Model::new(probe);
    let mut now = 0u64;
    for step in steps.iter().take(512) {
        now = now.saturating_add(step.dt as u64);
        let samples: Vec<HopSample> = match &step.op {
            Op::Ack { hops, .. } | Op::RxTelemetry { hops } | Op::ProbeRequest { hops } => {
                hops.iter().map(Hop::sample).collect()
            }
            _ => Vec::new(),
        };
        let op = match &step.op {
            Op::Start { algo, t_ns, mbps, seq } => model::Op::Start {
                algo: *algo,
                t_ns: *t_ns,
                mbps: *mbps,
                seq: *seq,
            },
            Op::End => model::Op::End,
            Op::Sent { seq, len, last } => model::Op::Sent {
                seq: *seq,
                len: *len,
                last: *last,
            },
            Op::Ack { cum, nxt, ece, rtt, .. } => model::Op::Ack {
                cum: *cum,
                nxt: *nxt,
                ece: *ece,
                hops: &samples,
                rtt: *rtt,
            },
            Op::Loss { seq } => model::Op::Loss { seq: *seq },
            Op::Cnp => model::Op::Cnp,
            Op::RttResponse { probe, rtt } => model::Op::RttResponse {
                rtt: *rtt,
                probe: Some(*probe),
            },
            Op::ProbeResponse { probe, idx, hop } => model::Op::ProbeResponse {
                idx: *idx,
                hop: hop.sample(),
                probe: Some(*probe),
            },
            Op::RxTelemetry { .. } => model::Op::RxTelemetry { hops: &samples },
            Op::ProbeRequest { .. } => model::Op::ProbeRequest { hops: &samples },
            Op::Feedback { window } => model::Op::Feedback { window: *window },
            Op::FlowCount { n } => model::Op::FlowCount { n: *n },
            Op::Timer => model::Op::Timer,
        };
        if let Err(v) = m.step(Instant::from_nanos(now), step.flow as u32, &op) {
            panic!("{v}");
        }
    }
});
