//! Invariants of the whole engine under arbitrary and hostile event
//! sequences (DESIGN §4, §9), in the style of s2n-quic's `Operation` model
//! tests:
//!
//! - nothing panics;
//! - every decision's window is inside its algorithm's clamps: HPCC++
//!   [W_min, W_init], LDCP ≥ gamma·MTU;
//! - rate ≤ line rate (HPCC++), ≤ IW/T with IW rounded up to whole packets
//!   (LDCP);
//! - an armed timer is never in the past;
//! - a packet is released by the timer only while the window is below one
//!   packet;
//! - a refused event leaves its flow bit-for-bit unchanged, and no event
//!   touches another flow.

use cc_core::prelude::*;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use std::collections::HashMap;

type Eng = Engine<AnyController<5>, 8>;

#[derive(Clone, Debug)]
enum Op {
    Start {
        flow: u32,
        algo: u8,
        t_ns: u32,
        mbps: u32,
        seq: u32,
    },
    End {
        flow: u32,
    },
    Sent {
        flow: u32,
        seq: u32,
        len: u32,
        last: bool,
    },
    Ack {
        flow: u32,
        cum: u32,
        nxt: u32,
        ece: bool,
        hops: Vec<HopSample>,
        rtt: Option<u32>,
    },
    Loss {
        flow: u32,
        seq: u32,
    },
    Cnp {
        flow: u32,
    },
    /// `probe`: `None` answers the flow's latest request, `Some` any number.
    RttResponse {
        flow: u32,
        rtt: Option<u32>,
        probe: Option<u8>,
    },
    ProbeResponse {
        flow: u32,
        idx: u8,
        hop: HopSample,
        probe: Option<u8>,
    },
    RxTelemetry {
        flow: u32,
        hops: Vec<HopSample>,
    },
    ProbeRequest {
        flow: u32,
        hops: Vec<HopSample>,
    },
    Feedback {
        flow: u32,
        window: u32,
    },
    FlowCount {
        flow: u32,
        n: u16,
    },
    Timer {
        flow: u32,
    },
}

fn hop() -> impl Strategy<Value = HopSample> {
    (
        any::<u32>(),
        any::<u32>(),
        any::<u32>(),
        any::<u32>(),
        prop_oneof![Just(0u32), Just(100_000), Just(25_000), any::<u32>()],
        0u32..4,
        (0u8..=40, 0u8..=40, any::<u16>()),
        prop::option::of((0u32..=(1 << 24)).prop_map(|raw| Fraction::from_bits(raw).unwrap())),
    )
        .prop_map(
            |(ts, tx, qlen_bytes, sojourn_ns, mbps, id, (ts_bits, tx_bits, unit), tx_utilization)| HopSample {
                ts,
                tx,
                qlen_bytes,
                sojourn_ns,
                bandwidth: LinkSpeed::from_mbps(mbps),
                id,
                widths: CounterWidths {
                    ts_bits,
                    tx_bits,
                    tx_unit_bytes: unit,
                },
                tx_utilization,
            },
        )
}

/// Telemetry that mostly continues the previous sample of the same flow
/// (so the engine gets past "first sample" into real updates), sometimes
/// garbage.
fn hops() -> impl Strategy<Value = Vec<HopSample>> {
    prop_oneof![
        3 => (1usize..=5, 0u32..50_000, 0u32..200_000, 0u32..300_000).prop_map(|(n, dt, dtx, q)| {
            (0..n)
                .map(|i| HopSample {
                    ts: dt,
                    tx: dtx,
                    qlen_bytes: q,
                    sojourn_ns: q / 12,
                    bandwidth: LinkSpeed::from_gbps(100),
                    id: i as u32,
                    widths: CounterWidths::FULL,
                    tx_utilization: None,
                })
                .collect()
        }),
        1 => prop::collection::vec(hop(), 0..=7),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    // Ids 0..10 over a table of 8: most events find their flow, some do not,
    // and some starts meet a full table.
    let flow = 0u32..10;
    prop_oneof![
        4 => (flow.clone(), 0u8..4, prop_oneof![9 => 1_000u32..200_000, 1 => any::<u32>()], prop_oneof![4 => Just(100_000u32), 4 => 10_000u32..1_600_000, 1 => any::<u32>()], any::<u32>())
            .prop_map(|(flow, algo, t_ns, mbps, seq)| Op::Start { flow, algo, t_ns, mbps, seq }),
        1 => flow.clone().prop_map(|flow| Op::End { flow }),
        4 => (flow.clone(), any::<u32>(), 0u32..9000, any::<bool>()).prop_map(|(flow, seq, len, last)| Op::Sent { flow, seq, len, last }),
        8 => (flow.clone(), any::<u32>(), any::<u32>(), any::<bool>(), hops()).prop_flat_map(|(flow, cum, nxt, ece, hops)| prop::option::of(any::<u32>()).prop_map(move |rtt| Op::Ack { flow, cum, nxt, ece, hops: hops.clone(), rtt })),
        1 => (flow.clone(), any::<u32>()).prop_map(|(flow, seq)| Op::Loss { flow, seq }),
        2 => flow.clone().prop_map(|flow| Op::Cnp { flow }),
        2 => (flow.clone(), prop::option::of(any::<u32>()), prop::option::weighted(0.3, any::<u8>())).prop_map(|(flow, rtt, probe)| Op::RttResponse { flow, rtt, probe }),
        1 => (flow.clone(), any::<u8>(), hop(), prop::option::weighted(0.3, any::<u8>())).prop_map(|(flow, idx, hop, probe)| Op::ProbeResponse { flow, idx, hop, probe }),
        3 => (flow.clone(), hops()).prop_map(|(flow, hops)| Op::RxTelemetry { flow, hops }),
        1 => (flow.clone(), hops()).prop_map(|(flow, hops)| Op::ProbeRequest { flow, hops }),
        1 => (flow.clone(), any::<u32>()).prop_map(|(flow, window)| Op::Feedback { flow, window }),
        1 => (flow.clone(), any::<u16>()).prop_map(|(flow, n)| Op::FlowCount { flow, n }),
        4 => flow.prop_map(|flow| Op::Timer { flow }),
    ]
}

#[derive(Clone, Copy)]
struct Model {
    params: FlowParams,
}

fn config(probe: bool) -> AnyConfig {
    let mut c = AnyConfig::default();
    if probe {
        c.hpcc.telemetry = TelemetrySource::Probe { timeout_rtts: 2 };
    }
    c
}

fn check(cfg: &AnyConfig, m: &Model, now: Instant, d: &Decision) -> Result<(), TestCaseError> {
    let p = m.params;
    let t = p.base_rtt.as_nanos() as u64;
    let bdp = p.line_rate.bdp_bytes(p.base_rtt);
    match p.algorithm {
        Algorithm::Hpcc | Algorithm::HpccReceiver => {
            prop_assert!(d.window >= cfg.hpcc.w_min, "W {} below W_min", d.window);
            prop_assert!(
                d.window.bytes_floor() as u64 <= bdp,
                "W {} above W_init {}",
                d.window,
                bdp
            );
            prop_assert!(d.rate() <= p.line_rate.to_rate(), "R {} above line rate", d.rate());
        }
        Algorithm::Ldcp | Algorithm::LdcpRate => {
            let mtu = cfg.ldcp.mtu as u64;
            let gamma_bytes = cfg.ldcp.gamma_packets().to_window(cfg.ldcp.mtu);
            prop_assert!(d.window >= gamma_bytes, "window {} below gamma", d.window);
            let iw_bytes = bdp.div_ceil(mtu).max(1) * mtu;
            prop_assert!(
                d.rate().as_bps() <= iw_bytes * 8_000_000_000 / t,
                "rate {} above IW/T",
                d.rate()
            );
            if d.request == Request::ReleaseOne {
                prop_assert!(
                    (d.window.bytes_floor() as u64) < mtu,
                    "released with window {}",
                    d.window
                );
            }
        }
    }
    if let TimerRequest::Arm(at) = d.timer {
        prop_assert!(at >= now, "timer armed in the past: {:?} < {:?}", at, now);
    }
    Ok(())
}

/// Runs one sequence; returns how many events a live flow handled.
fn run(ops: &[(u32, Op)], probe: bool) -> Result<u64, TestCaseError> {
    let cfg = config(probe);
    let mut eng = Eng::new(cfg).unwrap();
    let mut model: HashMap<u32, Model> = HashMap::new();
    let mut latest_probe: HashMap<u32, ProbeId> = HashMap::new();
    let mut now = 1_000_000u64;
    for (dt, op) in ops {
        now = now.saturating_add(*dt as u64);
        let t = Instant::from_nanos(now);
        let (flow, kind, start) = match op {
            Op::Start {
                flow,
                algo,
                t_ns,
                mbps,
                seq,
            } => {
                let algorithm = [
                    Algorithm::Hpcc,
                    Algorithm::HpccReceiver,
                    Algorithm::Ldcp,
                    Algorithm::LdcpRate,
                ][*algo as usize];
                let Some(base_rtt) = BaseRtt::from_nanos(*t_ns) else {
                    continue; // invalid T cannot even be expressed in FlowParams
                };
                let params = FlowParams {
                    algorithm,
                    base_rtt,
                    line_rate: LinkSpeed::from_mbps(*mbps),
                    start_seq: Seq(*seq),
                };
                (*flow, EventKind::Start(params), Some(params))
            }
            Op::End { flow } => (*flow, EventKind::End, None),
            Op::Sent { flow, seq, len, last } => (
                *flow,
                EventKind::Sent {
                    seq: Seq(*seq),
                    len: *len,
                    end: if *last { MessageEnd::Last } else { MessageEnd::More },
                },
                None,
            ),
            Op::Ack {
                flow,
                cum,
                nxt,
                ece,
                hops,
                rtt,
            } => (
                *flow,
                EventKind::Ack(Ack {
                    cum_ack: Seq(*cum),
                    snd_nxt: Seq(*nxt),
                    ece: if *ece { EcnEcho::Marked } else { EcnEcho::NotMarked },
                    telemetry: hops,
                    rtt_ns: *rtt,
                }),
                None,
            ),
            Op::Loss { flow, seq } => (*flow, EventKind::Loss { first_lost: Seq(*seq) }, None),
            Op::Cnp { flow } => (*flow, EventKind::Cnp, None),
            Op::RttResponse { flow, rtt, probe } => {
                let probe = probe.map_or_else(|| latest_probe.get(flow).copied().unwrap_or_default(), ProbeId);
                (*flow, EventKind::RttResponse { probe, rtt_ns: *rtt }, None)
            }
            Op::ProbeResponse { flow, idx, hop, probe } => {
                let probe = probe.map_or_else(|| latest_probe.get(flow).copied().unwrap_or_default(), ProbeId);
                (
                    *flow,
                    EventKind::ProbeResponse {
                        probe,
                        hop_index: *idx,
                        hop: *hop,
                    },
                    None,
                )
            }
            Op::RxTelemetry { flow, hops } => (*flow, EventKind::RxTelemetry { telemetry: hops }, None),
            Op::ProbeRequest { flow, hops } => (*flow, EventKind::ProbeRequest { telemetry: hops }, None),
            Op::Feedback { flow, window } => (
                *flow,
                EventKind::Feedback {
                    window: Window::from_bits(*window),
                },
                None,
            ),
            Op::FlowCount { flow, n } => (*flow, EventKind::FlowCount { flows: *n }, None),
            Op::Timer { flow } => (*flow, EventKind::Timer, None),
        };
        let before: Vec<(u32, Option<AnyController<5>>)> = (0..10).map(|f| (f, eng.flow(FlowId(f)).copied())).collect();
        let stats_before = eng.stats();
        let r = eng.handle(
            t,
            &Event {
                flow: FlowId(flow),
                kind,
            },
        );
        for (f, state) in &before {
            if *f != flow {
                prop_assert_eq!(
                    eng.flow(FlowId(*f)).copied(),
                    *state,
                    "event for flow {} touched flow {}",
                    flow,
                    f
                );
            }
        }
        match r {
            Ok(d) => {
                if let Request::Probe { id } = d.request {
                    latest_probe.insert(flow, id);
                }
                match (&kind, start) {
                    (EventKind::Start(_), Some(params)) => {
                        model.insert(flow, Model { params });
                    }
                    (EventKind::End, _) => {
                        let m = model.remove(&flow).expect("ended a flow the model knows");
                        check(&cfg, &m, t, &d)?;
                        continue;
                    }
                    _ => {}
                }
                let m = model.get(&flow).expect("Ok for a flow the model knows");
                check(&cfg, m, t, &d)?;
                prop_assert_eq!(eng.stats().handled, stats_before.handled + 1);
            }
            Err(e) => {
                let was = before[flow as usize].1;
                prop_assert_eq!(
                    eng.flow(FlowId(flow)).copied(),
                    was,
                    "refused event ({}) changed the flow",
                    e
                );
                prop_assert_eq!(eng.stats().handled, stats_before.handled);
                if e == Error::UnknownFlow {
                    prop_assert!(!model.contains_key(&flow));
                }
            }
        }
        prop_assert_eq!(eng.len(), model.len());
    }
    Ok(eng.stats().handled)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn hostile_sequences_keep_invariants(ops in prop::collection::vec((prop_oneof![0u32..5_000, any::<u32>()], op()), 1..300)) {
        run(&ops, false)?;
    }

    #[test]
    fn hostile_sequences_keep_invariants_in_probe_mode(ops in prop::collection::vec((0u32..20_000, op()), 1..300)) {
        run(&ops, true)?;
    }
}

/// The generated sequences must exercise live flows, not just bounce off
/// unknown ids. About half of the event kinds belong to another
/// algorithm's vocabulary (refused as `NotApplicable`, itself a tested
/// path), so at least a fifth of all events must be handled.
#[test]
fn sequences_reach_live_flows() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strat = prop::collection::vec((0u32..5_000, op()), 1..300);
    let (mut handled, mut total) = (0u64, 0u64);
    for _ in 0..64 {
        let ops = strat.new_tree(&mut runner).unwrap().current();
        handled += run(&ops, false).unwrap();
        total += ops.len() as u64;
    }
    println!("{handled} of {total} events handled by a live flow");
    assert!(
        handled * 5 >= total,
        "only {handled} of {total} events reached a live flow"
    );
}

/// A full table refuses the ninth flow and leaves the other eight alone.
#[test]
fn full_table_is_an_error_value() {
    let mut eng = Eng::new(AnyConfig::default()).unwrap();
    let params = FlowParams {
        algorithm: Algorithm::Ldcp,
        base_rtt: BaseRtt::from_nanos(10_000).unwrap(),
        line_rate: LinkSpeed::from_gbps(100),
        start_seq: Seq(0),
    };
    for f in 0..8 {
        eng.handle(
            Instant::ZERO,
            &Event {
                flow: FlowId(f),
                kind: EventKind::Start(params),
            },
        )
        .unwrap();
    }
    let states: Vec<_> = (0..8).map(|f| *eng.flow(FlowId(f)).unwrap()).collect();
    assert_eq!(
        eng.handle(
            Instant::ZERO,
            &Event {
                flow: FlowId(8),
                kind: EventKind::Start(params)
            }
        ),
        Err(Error::TableFull)
    );
    assert_eq!(
        eng.handle(
            Instant::ZERO,
            &Event {
                flow: FlowId(3),
                kind: EventKind::Start(params)
            }
        ),
        Err(Error::FlowExists)
    );
    assert_eq!(
        eng.handle(
            Instant::ZERO,
            &Event {
                flow: FlowId(99),
                kind: EventKind::Timer
            }
        ),
        Err(Error::UnknownFlow)
    );
    for f in 0..8 {
        assert_eq!(*eng.flow(FlowId(f)).unwrap(), states[f as usize]);
    }
    let s = eng.stats();
    assert_eq!((s.table_full, s.bad_start, s.unknown_flow, s.handled), (1, 1, 1, 8));
}
