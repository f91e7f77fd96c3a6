//! A scripted tour of the bare engine, without the packet-level simulator
//! (`hal-sim` runs the same engine in a network of NICs and switches):
//!
//! ```text
//! cargo run --release -p cc-core --example scripted
//! ```
//!
//! Part 1 — HPCC++, two senders into one 100 Gb/s link (T = 12 µs). The
//! link is a fluid model stepped every 100 ns: the queue integrates the
//! senders' rates minus capacity, and every 1 µs each sender gets an ACK
//! whose telemetry (timestamp, transmitted bytes, queue) was stamped one
//! RTT earlier. Both start at W_init = BDP, so the link is 2x
//! oversubscribed in the first RTT and a 330 kB queue builds. Telemetry a
//! whole RTT old keeps reporting that queue after it has begun to drain,
//! so several RTTs of multiplicative decrease compound: by 80 µs the
//! windows are a few kB and the link idles at ~5 %. Additive increase
//! then runs its maxStage = 5 stages, the next multiplicative step (U far
//! below eta) brings each window to ~69 kB at 160 µs, and from 240 µs the
//! link holds at eta: U 0.952, 95.2 % of the link, no queue.
//!
//! Part 2 — LDCP, one flow whose ACKs come back marked (as in a heavy
//! incast): cw falls below one packet, the engine clocks packets out by
//! timer every RTT/cw, and unmarked ACKs bring it back above one packet.
//! Each decision is printed.

use std::collections::VecDeque;

use cc_core::prelude::*;

const T_NS: u64 = 12_000;
const LINK_GBPS: u64 = 100;
const STEP_NS: u64 = 100;
const ACK_EVERY_NS: u64 = 1_000;
const REPORT_NS: u64 = 20_000;

fn hpcc_two_to_one() {
    println!("HPCC++ 2-to-1, 100 Gb/s, T = 12 us, eta = 95 %, maxStage = 5 (draft defaults)");
    println!();
    let mut eng: Engine<HpccSender<1>, 4> = Engine::new(HpccConfig::draft_default()).expect("valid config");
    let params = FlowParams {
        algorithm: Algorithm::Hpcc,
        base_rtt: BaseRtt::from_nanos(T_NS as u32).expect("T in range"),
        line_rate: LinkSpeed::from_gbps(LINK_GBPS as u32),
        start_seq: Seq(0),
    };
    let mut rate_bps = [0f64; 2];
    for (i, r) in rate_bps.iter_mut().enumerate() {
        let d = eng
            .handle(
                Instant::ZERO,
                &Event {
                    flow: FlowId(i as u32),
                    kind: EventKind::Start(params),
                },
            )
            .expect("start");
        *r = d.rate().as_bps() as f64;
    }
    let cap_bytes_per_ns = LINK_GBPS as f64 / 8.0;
    let (mut queue, mut tx_total, mut sent_total) = (0f64, 0f64, [0f64; 2]);
    // Telemetry stamped at the switch, delivered one RTT later with a
    // cumulative ACK for what each sender had sent by the stamp time.
    let mut in_flight: VecDeque<(u64, HopSample, [f64; 2])> = VecDeque::new();
    let mut delivered_in_window = 0f64;
    println!(
        "{:>8} {:>12} {:>12} {:>10} {:>10} {:>10}",
        "t (us)", "W1 (B)", "W2 (B)", "U", "queue (B)", "util"
    );
    let mut t = 0u64;
    while t <= 600_000 {
        // Fluid link: arrivals at the senders' pacing rates.
        let arrival = (rate_bps[0] + rate_bps[1]) / 8e9 * STEP_NS as f64;
        for (s, r) in sent_total.iter_mut().zip(rate_bps) {
            *s += r / 8e9 * STEP_NS as f64;
        }
        let service = (queue + arrival).min(cap_bytes_per_ns * STEP_NS as f64);
        queue = queue + arrival - service;
        tx_total += service;
        delivered_in_window += service;
        if t.is_multiple_of(ACK_EVERY_NS) {
            let hop = HopSample {
                ts: t as u32,
                tx: tx_total as u64 as u32,
                qlen_bytes: queue as u32,
                sojourn_ns: 0,
                bandwidth: LinkSpeed::from_gbps(LINK_GBPS as u32),
                id: 1,
                widths: CounterWidths::FULL,
                tx_utilization: TxUtilization::NONE,
            };
            in_flight.push_back((t + T_NS, hop, sent_total));
        }
        while in_flight.front().is_some_and(|(due, _, _)| *due <= t) {
            let (_, hop, acked) = in_flight.pop_front().expect("front exists");
            for (i, r) in rate_bps.iter_mut().enumerate() {
                let ack = Ack {
                    telemetry: core::slice::from_ref(&hop),
                    ..Ack::new(Seq(acked[i] as u64 as u32), Seq(sent_total[i] as u64 as u32))
                };
                match eng.handle(
                    Instant::from_nanos(t),
                    &Event {
                        flow: FlowId(i as u32),
                        kind: EventKind::Ack(ack),
                    },
                ) {
                    Ok(d) => *r = d.rate().as_bps() as f64,
                    Err(e) => println!("  ACK refused: {e}"),
                }
            }
        }
        if t.is_multiple_of(REPORT_NS) {
            let w = |f: u32| {
                eng.flow(FlowId(f))
                    .map(|s| s.core().window().bytes_floor())
                    .unwrap_or(0)
            };
            let u = eng
                .flow(FlowId(0))
                .map(|s| s.core().utilization().to_fixed().to_num::<f64>())
                .unwrap_or(0.0);
            let util = delivered_in_window / (cap_bytes_per_ns * REPORT_NS as f64);
            println!(
                "{:>8} {:>12} {:>12} {:>10.3} {:>10.0} {:>9.1}%",
                t / 1000,
                w(0),
                w(1),
                u,
                queue,
                util * 100.0
            );
            delivered_in_window = 0.0;
        }
        t += STEP_NS;
    }
    println!();
}

fn ldcp_below_one_packet() {
    println!("LDCP, one flow, T = 8 us, MTU 1000 B, alpha 1, beta 1/2, gamma 1/8, fast start off");
    println!();
    let mut cfg = LdcpConfig::draft_default();
    cfg.fast_start = FastStart::Disabled;
    let mut eng: Engine<Ldcp, 4> = Engine::new(cfg).expect("valid config");
    let flow = FlowId(9);
    let params = FlowParams {
        algorithm: Algorithm::Ldcp,
        base_rtt: BaseRtt::from_nanos(8_000).expect("T in range"),
        line_rate: LinkSpeed::from_gbps(10),
        start_seq: Seq(0),
    };
    let show = |what: &str, now: u64, d: &Decision, cw: Packets| {
        let timer = match d.timer {
            TimerRequest::Arm(t) => format!("arm {:.2} us", t.as_nanos() as f64 / 1000.0),
            TimerRequest::Cancel => "cancel".into(),
            TimerRequest::Keep => "".into(),
        };
        let req = match d.request {
            Request::ReleaseOne => "release one packet",
            Request::None => "",
            _ => "other",
        };
        println!(
            "{:>9.2} us  {:<16} cw {:>8.4} pkt  window {:>7} B  rate {:>6.2} Gb/s  {:<16} {}",
            now as f64 / 1000.0,
            what,
            cw.to_fixed().to_num::<f64>(),
            d.window.bytes_floor(),
            d.rate().as_bps() as f64 / 1e9,
            timer,
            req
        );
    };
    let mut now = 0u64;
    let d = eng
        .handle(
            Instant::ZERO,
            &Event {
                flow,
                kind: EventKind::Start(params),
            },
        )
        .expect("start");
    show("start", now, &d, eng.flow(flow).expect("flow").cw());
    let mut acked = 0u32;
    let mut next_tick = None;
    // Marked ACKs: cw falls by beta each, then halves below one packet.
    for ece in [true; 26].into_iter().chain([false; 12]) {
        now += 2_000;
        // Fire any due tick first.
        while let Some(at) = next_tick.filter(|at| *at <= now) {
            let d = eng
                .handle(
                    Instant::from_nanos(at),
                    &Event {
                        flow,
                        kind: EventKind::Timer,
                    },
                )
                .expect("timer");
            show("timer", at, &d, eng.flow(flow).expect("flow").cw());
            next_tick = match d.timer {
                TimerRequest::Arm(t) => Some(t.as_nanos()),
                TimerRequest::Cancel => None,
                TimerRequest::Keep => next_tick,
            };
            if d.timer == TimerRequest::Keep {
                break;
            }
        }
        acked += 1000;
        let ack = Ack {
            ece: if ece { EcnEcho::Marked } else { EcnEcho::NotMarked },
            ..Ack::new(Seq(acked), Seq(acked + 1000))
        };
        let d = eng
            .handle(
                Instant::from_nanos(now),
                &Event {
                    flow,
                    kind: EventKind::Ack(ack),
                },
            )
            .expect("ack");
        next_tick = match d.timer {
            TimerRequest::Arm(t) => Some(t.as_nanos()),
            TimerRequest::Cancel => None,
            TimerRequest::Keep => next_tick,
        };
        show(
            if ece { "ACK, ECE=1" } else { "ACK, ECE=0" },
            now,
            &d,
            eng.flow(flow).expect("flow").cw(),
        );
        // Below one packet the ACKs come one per tick, not every 2 us.
        if let Some(at) = next_tick {
            now = now.max(at);
        }
    }
    println!();
    println!("engine stats: {:?}", eng.stats());
}

fn main() {
    hpcc_two_to_one();
    ldcp_below_one_packet();
}
