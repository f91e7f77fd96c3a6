//! On-target tests: the engine's behaviour checked on the emulated soft core
//! itself (defmt-test under QEMU, `scripts/on-target-tests.sh` for both
//! XLENs and the `N passed, N failed` line).
//!
//! The host tests (cc-core, tests/) check the same behaviour on x86-64;
//! these catch what only the target can get wrong: 64-bit arithmetic done
//! in software on rv32, soft-float in the reference, alignment, stack use.
//! Each asserts a draft behaviour from figures, as the host scenario tests
//! do, with the engine in the same `Engine<AnyController<5>, N>` the replay
//! image runs.
#![no_std]
#![no_main]

use nic_firmware as _; // logger, panic handler (exit 101), timestamp

#[path = "../../cc-core/benches/common/workload.rs"]
#[allow(dead_code)]
mod workload;

use cc_core::prelude::*;

pub type NicEngine = Engine<AnyController<5>, 8>;

pub const FLOW: FlowId = FlowId(7);
/// HPCC++: 100 Gb/s, T = 12 µs: W_init = B·T = 150 000 bytes.
pub const W_INIT: u32 = 150_000;

pub fn engine() -> NicEngine {
    let cfg = AnyConfig::DEFAULT;
    Engine::new(cfg).unwrap()
}

pub fn at(ns: u64) -> Instant {
    Instant::from_nanos(ns)
}

pub fn handle(e: &mut NicEngine, now_ns: u64, kind: EventKind<'_>) -> Result<Decision, Error> {
    e.handle(at(now_ns), &Event { flow: FLOW, kind })
}

/// One hop of 100 Gb/s with a 32-bit ns clock and byte counter (the
/// fixture every test of the project shares).
pub use cc_core::testing::hop;

pub fn ack(i: u32, telemetry: &[HopSample]) -> Ack<'_> {
    let seq = Seq(i * 1000);
    Ack {
        telemetry,
        ..Ack::new(seq, seq.add(W_INIT))
    }
}

/// Feeds `n` ACKs, 1 µs apart, from a link sending `tx_per_us` bytes per
/// µs with `qlen` bytes queued; returns the last decision.
pub fn hpcc_acks(e: &mut NicEngine, from: u32, n: u32, tx_per_us: u32, qlen: u32) -> Decision {
    let mut last = None;
    for i in from..from + n {
        let h = [hop(i * 1000, i * tx_per_us, qlen)];
        last = Some(handle(e, i as u64 * 1000, EventKind::Ack(ack(i, &h))).unwrap());
    }
    last.unwrap()
}

#[defmt_test::tests]
mod tests {
    use cc_core::codec::{self, FrameKind, MAX_FRAME};
    use cc_core::prelude::*;
    use cc_core::wire::WireError;
    use defmt::{assert, assert_eq};

    use super::workload::{hpcc_params, hpcc_ref, ldcp_setup, Telemetry};
    use super::{ack, at, engine, handle, hop, hpcc_acks, FLOW, W_INIT};

    #[test]
    fn hpcc_starts_at_line_rate_with_a_bdp_window() {
        let mut e = engine();
        let d = handle(&mut e, 0, EventKind::Start(hpcc_params(Algorithm::Hpcc))).unwrap();
        assert_eq!(d.window.bytes_floor(), W_INIT);
        // R = W / T (HPCC++ §6.1): 150 000 B / 12 µs = 100 Gb/s.
        assert_eq!(d.rate().as_bps(), 100_000_000_000);
    }

    #[test]
    fn hpcc_cuts_the_window_when_the_hop_is_over_eta() {
        // Queue of 75 kB at line rate: U = qlen/(B·T) + txRate/B = 0.5 + 1 = 1.5
        // (Figure 4). Within the first reference window (150 ACKs of 1000 B)
        // W = Wc/(U/eta) + W_ai = W_init·0.95/1.5 + W_ai ≈ 0.633·W_init; the
        // per-RTT update then makes Wc that, and the next cut compounds.
        let mut e = engine();
        handle(&mut e, 0, EventKind::Start(hpcc_params(Algorithm::Hpcc))).unwrap();
        let one = hpcc_acks(&mut e, 0, 100, 12_500, 75_000).window.bytes_floor();
        let two = hpcc_acks(&mut e, 100, 200, 12_500, 75_000).window.bytes_floor();
        defmt::info!(
            "U 1.5: W {=u32} B after one reference window, {=u32} B after two (W_init {=u32})",
            one,
            two,
            W_INIT
        );
        assert!(one > W_INIT * 63 / 100 && one < W_INIT * 64 / 100, "W {=u32}", one);
        assert!(two > W_INIT * 39 / 100 && two < W_INIT * 41 / 100, "W {=u32}", two);
    }

    #[test]
    fn hpcc_grows_back_when_the_hop_is_idle() {
        // 40 % load, no queue: U = 0.4 < eta, so W grows (multiplicatively
        // toward Wc·eta/U, then by W_ai) and never above W_init... the cap is
        // the line rate: R = W/T ≤ B.
        let mut e = engine();
        handle(&mut e, 0, EventKind::Start(hpcc_params(Algorithm::Hpcc))).unwrap();
        let low = hpcc_acks(&mut e, 0, 200, 12_500, 75_000).window.bytes_floor();
        let high = hpcc_acks(&mut e, 200, 2_000, 5_000, 0);
        defmt::info!(
            "after congestion {=u32} B, after 2 ms idle {=u32} B",
            low,
            high.window.bytes_floor()
        );
        assert!(high.window.bytes_floor() > low);
        assert!(high.rate().as_bps() <= 100_000_000_000);
    }

    #[test]
    fn hpcc_matches_the_f64_reference_over_a_trace() {
        // The workload's wrapping 24-bit clocks and 20-bit counters in
        // 64-byte units, 1000 ACKs: fixed point within 1 % of the f64 model
        // (soft float on this core).
        let mut e = engine();
        handle(&mut e, 0, EventKind::Start(hpcc_params(Algorithm::Hpcc))).unwrap();
        let mut r = hpcc_ref();
        let mut t = Telemetry::new();
        let mut worst = 0.0f64;
        for i in 0..1000u32 {
            let tel = t.next();
            let seq = Seq(i * 1000);
            let a = Ack {
                telemetry: &tel[..1],
                ..Ack::new(seq, seq.add(150_000))
            };
            let d = handle(&mut e, i as u64 * 1000, EventKind::Ack(a)).unwrap();
            r.new_ack(i as u64 * 1000, i * 1000, i * 1000 + 150_000, &tel[..1]);
            let w = d.window.to_bits() as f64 / 16.0;
            let err = if w > r.w { w - r.w } else { r.w - w } / r.w;
            worst = if err > worst { err } else { worst };
        }
        defmt::info!("largest relative W difference to the f64 model: {=f64}", worst);
        assert!(worst < 0.01);
    }

    #[test]
    fn rx_hpcc_receiver_sends_window_feedback() {
        let mut e = engine();
        handle(&mut e, 0, EventKind::Start(hpcc_params(Algorithm::HpccReceiver))).unwrap();
        let mut feedback = 0;
        let mut last = 0;
        for i in 0..100u32 {
            let h = [hop(i * 1000, i * 12_500, 75_000)];
            let d = handle(&mut e, i as u64 * 1000, EventKind::RxTelemetry { telemetry: &h }).unwrap();
            if let Request::Feedback { window } = d.request {
                feedback += 1;
                last = window.bytes_floor();
            }
        }
        defmt::info!("{=u32} feedback packets, last window {=u32} B", feedback, last);
        assert!(feedback > 0);
        assert!(last < W_INIT);
    }

    #[test]
    fn probe_responder_reports_the_busiest_hop() {
        // §7.1: the responder answers with the one hop of highest inflight.
        let mut e = engine();
        handle(&mut e, 0, EventKind::Start(hpcc_params(Algorithm::HpccReceiver))).unwrap();
        let quiet = hop(1000, 2_000, 0);
        let busy = hop(1000, 12_000, 60_000);
        let d = handle(
            &mut e,
            1000,
            EventKind::ProbeRequest {
                telemetry: &[quiet, quiet, busy, quiet],
            },
        )
        .unwrap();
        assert_eq!(d.request, Request::ProbeReply { hop_index: 2 });
    }

    #[test]
    fn ldcp_goes_below_one_packet_and_ticks_packets_out() {
        // Every ACK ECN-marked (heavy incast): PAWA's decrease drives cw
        // below one packet; the decision then arms the timer and each tick
        // releases one packet (draft-dai §2.2).
        let (cfg, p, _) = ldcp_setup();
        let mut e: Engine<Ldcp, 4> = Engine::new(cfg).unwrap();
        e.handle(
            at(0),
            &Event {
                flow: FLOW,
                kind: EventKind::Start(p),
            },
        )
        .unwrap();
        let (mut d, mut armed) = (None, None);
        for n in 1..=400u32 {
            let a = Ack {
                ece: EcnEcho::Marked,
                ..Ack::new(Seq(n * 1000), Seq(n * 1000))
            };
            let dn = e
                .handle(
                    at(n as u64 * 100),
                    &Event {
                        flow: FLOW,
                        kind: EventKind::Ack(a),
                    },
                )
                .unwrap();
            match dn.timer {
                TimerRequest::Arm(when) => armed = Some(when),
                TimerRequest::Cancel => armed = None,
                TimerRequest::Keep => {}
            }
            d = Some(dn);
        }
        let d = d.unwrap();
        defmt::info!("after 400 marked ACKs: window {=u32} bytes", d.window.bytes_floor());
        assert!(d.window.bytes_floor() < cfg.mtu.bytes());
        let Some(when) = armed else {
            defmt::panic!("no timer armed with cw < 1")
        };
        let t = e
            .handle(
                when,
                &Event {
                    flow: FLOW,
                    kind: EventKind::Timer,
                },
            )
            .unwrap();
        assert_eq!(t.request, Request::ReleaseOne);
    }

    #[test]
    fn ldcp_fast_start_sends_the_first_window_not_ect() {
        // Fast start (draft-dai §3.1): the first IW packets are Not-ECT except
        // the IW-th; later packets are ECN-capable.
        let mut cfg = LdcpConfig::draft_default();
        cfg.fast_start = FastStart::Enabled;
        let (_, p, _) = ldcp_setup();
        let mut e: Engine<Ldcp, 4> = Engine::new(cfg).unwrap();
        let d = e
            .handle(
                at(0),
                &Event {
                    flow: FLOW,
                    kind: EventKind::Start(p),
                },
            )
            .unwrap();
        let iw = d.window.bytes_floor() / cfg.mtu.bytes();
        assert!(iw > 2);
        let mut not_ect = 0;
        for k in 0..iw + 5 {
            let sent = EventKind::Sent {
                seq: Seq(k * cfg.mtu.bytes()),
                len: cfg.mtu.bytes(),
                end: MessageEnd::More,
            };
            let d = e.handle(at(k as u64 * 80), &Event { flow: FLOW, kind: sent }).unwrap();
            if d.ecn == Ecn::NotEct {
                not_ect += 1;
                assert!(k < iw - 1, "packet {=u32} of IW {=u32} sent Not-ECT", k, iw);
            }
        }
        assert_eq!(not_ect, iw - 1);
    }

    #[test]
    fn refusals_are_errors_and_leave_state_alone() {
        let mut e = engine();
        assert_eq!(handle(&mut e, 0, EventKind::Timer), Err(Error::UnknownFlow));
        let first = handle(&mut e, 0, EventKind::Start(hpcc_params(Algorithm::Hpcc))).unwrap();
        assert_eq!(
            handle(&mut e, 0, EventKind::Start(hpcc_params(Algorithm::Hpcc))),
            Err(Error::FlowExists)
        );
        // Sixteen hops: more than any path the engine reads (15).
        let sixteen = [hop(0, 0, 0); 16];
        assert_eq!(
            handle(&mut e, 10, EventKind::Ack(ack(1, &sixteen))),
            Err(Error::TooManyHops)
        );
        // A zero-width counter is refused where the widths are made.
        assert_eq!(CounterWidths::new(0, 20, 64), Err(Error::BadCounterWidths));
        // Nothing moved: a flow count of 1 answers with the start's window.
        let d = handle(&mut e, 20, EventKind::FlowCount { flows: 1 }).unwrap();
        assert_eq!(d.window, first.window);
        // A full table.
        for f in 100..107 {
            e.handle(
                at(0),
                &Event {
                    flow: FlowId(f),
                    kind: EventKind::Start(hpcc_params(Algorithm::Hpcc)),
                },
            )
            .unwrap();
        }
        let full = e.handle(
            at(0),
            &Event {
                flow: FlowId(200),
                kind: EventKind::Start(hpcc_params(Algorithm::Hpcc)),
            },
        );
        assert_eq!(full, Err(Error::TableFull));
        let s = e.stats();
        assert_eq!(
            (s.unknown_flow, s.table_full, s.bad_start, s.bad_telemetry),
            (1, 1, 1, 1)
        );
    }

    #[test]
    fn codec_round_trips_and_rejects_a_flipped_bit() {
        let tel = Telemetry::new().next();
        let a = Ack {
            ece: EcnEcho::Marked,
            telemetry: &tel,
            rtt_ns: Some(12_345),
            ..Ack::new(Seq(u32::MAX - 10), Seq(5))
        };
        let ev = Event {
            flow: FLOW,
            kind: EventKind::Ack(a),
        };
        let mut buf = [0u8; MAX_FRAME];
        let n = codec::encode_event(at(u64::MAX / 3), &ev, &mut buf).unwrap();
        let f = codec::read_frame(&buf[..n]).unwrap();
        assert_eq!(f.kind, FrameKind::Event);
        let back = codec::decode_event(&f).unwrap();
        assert_eq!(back.now, at(u64::MAX / 3));
        assert_eq!(back.event(), ev);
        buf[n / 2] ^= 0x10;
        assert_eq!(codec::read_frame(&buf[..n]).err(), Some(WireError::BadChecksum));
    }

    #[test]
    fn wrapping_telemetry_counters_are_read_modulo_their_width() {
        // A 16-bit timestamp and tx counter that wrap between two ACKs give
        // the same utilization as unwrapped ones.
        let mut narrow = engine();
        let mut wide = engine();
        for e in [&mut narrow, &mut wide] {
            handle(e, 0, EventKind::Start(hpcc_params(Algorithm::Hpcc))).unwrap();
        }
        let base = 65_000u32;
        for i in 0..50u32 {
            let (ts, tx) = (base + i * 1000, base + i * 12_000);
            let mut h = hop(ts, tx, 30_000);
            let w = handle(&mut wide, i as u64 * 1000, EventKind::Ack(ack(i, &[h]))).unwrap();
            h.ts &= 0xFFFF;
            h.tx &= 0xFFFF;
            h.widths = CounterWidths::new(16, 16, h.widths.tx_unit_bytes()).unwrap();
            let n = handle(&mut narrow, i as u64 * 1000, EventKind::Ack(ack(i, &[h]))).unwrap();
            assert_eq!(n, w);
        }
    }
}
