//! The engine under arbitrary event sequences (DESIGN §4, §9): no panic,
//! windows inside their clamps, rate within line rate (HPCC++) or IW/T
//! (LDCP), no timer armed in the past, a refused event changes nothing, and
//! no event touches another flow.
#![no_main]
use arbitrary::Arbitrary;
use cc_core::prelude::*;
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
            widths: CounterWidths {
                ts_bits: self.ts_bits % 34,
                tx_bits: self.tx_bits % 34,
                tx_unit_bytes: self.unit,
            },
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
    let mut cfg = AnyConfig::default();
    if probe {
        cfg.hpcc.telemetry = TelemetrySource::Probe { timeout_rtts: 2 };
    }
    let mut eng: Engine<AnyController<5>, 8> = Engine::new(cfg).unwrap();
    let mut params: [Option<FlowParams>; 10] = [None; 10];
    let mut now = 0u64;
    for step in steps.iter().take(512) {
        now = now.saturating_add(step.dt as u64);
        let t = Instant::from_nanos(now);
        let f = step.flow % 10;
        let samples: Vec<HopSample>;
        let kind = match &step.op {
            Op::Start { algo, t_ns, mbps, seq } => {
                let Some(base_rtt) = BaseRtt::from_nanos(*t_ns) else {
                    continue;
                };
                let algorithm = [
                    Algorithm::Hpcc,
                    Algorithm::HpccReceiver,
                    Algorithm::Ldcp,
                    Algorithm::LdcpRate,
                ][*algo as usize % 4];
                EventKind::Start(FlowParams {
                    algorithm,
                    base_rtt,
                    line_rate: LinkSpeed::from_mbps(*mbps),
                    start_seq: Seq(*seq),
                })
            }
            Op::End => EventKind::End,
            Op::Sent { seq, len, last } => EventKind::Sent {
                seq: Seq(*seq),
                len: *len,
                end: if *last { MessageEnd::Last } else { MessageEnd::More },
            },
            Op::Ack {
                cum,
                nxt,
                ece,
                hops,
                rtt,
            } => {
                samples = hops.iter().map(Hop::sample).collect();
                let ece = if *ece { EcnEcho::Marked } else { EcnEcho::NotMarked };
                EventKind::Ack(Ack {
                    cum_ack: Seq(*cum),
                    snd_nxt: Seq(*nxt),
                    ece,
                    telemetry: &samples,
                    rtt_ns: *rtt,
                })
            }
            Op::Loss { seq } => EventKind::Loss { first_lost: Seq(*seq) },
            Op::Cnp => EventKind::Cnp,
            Op::RttResponse { probe, rtt } => EventKind::RttResponse {
                probe: ProbeId(*probe),
                rtt_ns: *rtt,
            },
            Op::ProbeResponse { probe, idx, hop } => EventKind::ProbeResponse {
                probe: ProbeId(*probe),
                hop_index: *idx,
                hop: hop.sample(),
            },
            Op::RxTelemetry { hops } => {
                samples = hops.iter().map(Hop::sample).collect();
                EventKind::RxTelemetry { telemetry: &samples }
            }
            Op::ProbeRequest { hops } => {
                samples = hops.iter().map(Hop::sample).collect();
                EventKind::ProbeRequest { telemetry: &samples }
            }
            Op::Feedback { window } => EventKind::Feedback {
                window: Window::from_bits(*window),
            },
            Op::FlowCount { n } => EventKind::FlowCount { flows: *n },
            Op::Timer => EventKind::Timer,
        };
        let before: Vec<Option<AnyController<5>>> = (0..10).map(|i| eng.flow(FlowId(i)).copied()).collect();
        let r = eng.handle(
            t,
            &Event {
                flow: FlowId(f as u32),
                kind,
            },
        );
        for i in 0..10u32 {
            if i != f as u32 {
                assert_eq!(eng.flow(FlowId(i)).copied(), before[i as usize], "touched another flow");
            }
        }
        let d = match r {
            Err(_) => {
                assert_eq!(
                    eng.flow(FlowId(f as u32)).copied(),
                    before[f as usize],
                    "refused event changed the flow"
                );
                continue;
            }
            Ok(d) => d,
        };
        match kind {
            EventKind::Start(p) => params[f as usize] = Some(p),
            EventKind::End => {
                params[f as usize] = None;
                continue;
            }
            _ => {}
        }
        let p = params[f as usize].expect("a handled event has a started flow");
        let bdp = p.line_rate.bdp_bytes(p.base_rtt);
        let t_ns = p.base_rtt.as_nanos() as u64;
        match p.algorithm {
            Algorithm::Hpcc | Algorithm::HpccReceiver => {
                assert!(
                    d.window >= cfg.hpcc.w_min && d.window.bytes_floor() as u64 <= bdp,
                    "window {} outside clamps",
                    d.window
                );
                assert!(d.rate() <= p.line_rate.to_rate(), "rate above line rate");
            }
            Algorithm::Ldcp | Algorithm::LdcpRate => {
                let mtu = cfg.ldcp.mtu as u64;
                assert!(
                    d.window >= cfg.ldcp.gamma_packets().to_window(cfg.ldcp.mtu),
                    "cw below gamma"
                );
                assert!(
                    d.rate().as_bps() <= bdp.div_ceil(mtu).max(1) * mtu * 8_000_000_000 / t_ns,
                    "rate above IW/T"
                );
                if d.request == Request::ReleaseOne {
                    assert!((d.window.bytes_floor() as u64) < mtu);
                }
            }
        }
        if let TimerRequest::Arm(at) = d.timer {
            assert!(at >= t, "timer armed in the past");
        }
    }
});
