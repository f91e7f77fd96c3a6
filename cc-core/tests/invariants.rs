//! Invariants of the whole engine under arbitrary and hostile event
//! sequences (DESIGN §4, §9), in the style of s2n-quic's `Operation` model
//! tests. The model (operations, their events, the invariants) is
//! `cc_core::testing::model`, shared with the fuzz target; this file
//! generates the sequences. Nothing may panic either.

use cc_core::prelude::*;
use cc_core::testing::model::{self, Model, FLOW_IDS};
use proptest::prelude::*;
use proptest::strategy::ValueTree;

type Eng = model::ModelEngine;

fn hop() -> impl Strategy<Value = HopSample> {
    (
        any::<u32>(),
        any::<u32>(),
        any::<u32>(),
        any::<u32>(),
        prop_oneof![Just(0u32), Just(100_000), Just(25_000), any::<u32>()],
        0u32..4,
        // Every width the type admits (CounterWidths::new refuses the rest
        // where widths are made; its unit test covers that).
        (1u8..=32, 1u8..=32, 1u16..),
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
                widths: CounterWidths::new(ts_bits, tx_bits, unit).unwrap(),
                tx_utilization: tx_utilization.into(),
            },
        )
}

/// Telemetry that mostly continues the previous sample of the same flow
/// (so the engine gets past "first sample" into real updates), sometimes
/// garbage.
fn hops() -> impl Strategy<Value = model::Hops> {
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
                    tx_utilization: TxUtilization::NONE,
                })
                .collect()
        }),
        1 => prop::collection::vec(hop(), 0..=7).prop_map(|v| v.into_iter().collect()),
    ]
}

/// A flow id and an operation on it.
fn op() -> impl Strategy<Value = (u32, model::Op)> {
    use model::Op;
    // Ids 0..10 over a table of 8: most events find their flow, some do not,
    // and some starts meet a full table.
    let flow = 0u32..FLOW_IDS;
    prop_oneof![
        4 => (flow.clone(), 0u8..4, prop_oneof![9 => 1_000u32..200_000, 1 => any::<u32>()], prop_oneof![4 => Just(100_000u32), 4 => 10_000u32..1_600_000, 1 => any::<u32>()], any::<u32>())
            .prop_map(|(flow, algo, t_ns, mbps, seq)| (flow, Op::Start { algo, t_ns, mbps, seq })),
        1 => flow.clone().prop_map(|flow| (flow, Op::End)),
        4 => (flow.clone(), any::<u32>(), 0u32..9000, any::<bool>()).prop_map(|(flow, seq, len, last)| (flow, Op::Sent { seq, len, last })),
        8 => (flow.clone(), any::<u32>(), any::<u32>(), any::<bool>(), hops(), prop::option::of(any::<u32>()), prop::option::of((any::<bool>(), 0u16..1300)), prop::option::of(any::<u16>())).prop_map(|(flow, cum, nxt, ece, hops, rtt, pint, ev)| (flow, Op::Ack { cum, nxt, ece, hops, rtt, pint, ev })),
        1 => (flow.clone(), any::<u32>(), prop::option::of(any::<u16>())).prop_map(|(flow, seq, ev)| (flow, Op::Loss { seq, ev })),
        1 => (flow.clone(), (any::<u32>(), 0u32..9000, any::<u32>(), any::<u32>()), prop::option::of(any::<u32>()), any::<bool>(), any::<bool>(), prop::option::of(any::<u16>())).prop_map(|(flow, (seq, len, cum, nxt), rtt, last_hop, ece, ev)| (flow, Op::Nack { seq, len, cum, nxt, rtt, last_hop, ece, ev })),
        1 => (flow.clone(), any::<u16>(), any::<u8>(), any::<u32>()).prop_map(|(flow, paths, balancer, seed)| (flow, Op::Spray { paths, balancer, seed })),
        2 => flow.clone().prop_map(|flow| (flow, Op::Cnp)),
        2 => (flow.clone(), prop::option::of(any::<u32>()), prop::option::weighted(0.3, any::<u8>())).prop_map(|(flow, rtt, probe)| (flow, Op::RttResponse { rtt, probe })),
        1 => (flow.clone(), any::<u8>(), hop(), prop::option::weighted(0.3, any::<u8>())).prop_map(|(flow, idx, hop, probe)| (flow, Op::ProbeResponse { idx, hop, probe })),
        3 => (flow.clone(), hops()).prop_map(|(flow, hops)| (flow, Op::RxTelemetry { hops })),
        1 => (flow.clone(), hops()).prop_map(|(flow, hops)| (flow, Op::ProbeRequest { hops })),
        1 => (flow.clone(), any::<u32>()).prop_map(|(flow, window)| (flow, Op::Feedback { window })),
        1 => (flow.clone(), any::<u16>()).prop_map(|(flow, n)| (flow, Op::FlowCount { n })),
        4 => flow.prop_map(|flow| (flow, Op::Timer)),
    ]
}

/// Runs one sequence through the model; returns how many events a live
/// flow handled.
fn run(ops: &[(u32, (u32, model::Op))], probe: bool) -> Result<u64, TestCaseError> {
    let mut m = Model::new(probe);
    let (mut now, mut handled) = (1_000_000u64, 0u64);
    for (dt, (flow, op)) in ops {
        now = now.saturating_add(*dt as u64);
        let answer = m
            .step(Instant::from_nanos(now), *flow, op)
            .map_err(|v| TestCaseError::fail(v.to_string()))?;
        if let Some(Ok(_)) = answer {
            handled += 1;
        }
    }
    Ok(handled)
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
    assert_eq!((s.table_full, s.bad_start, s.unknown_flow, s.refused()), (1, 1, 1, 3));
}
