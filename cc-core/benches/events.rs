//! Host cost per event and per-flow state size, beside DESIGN §8's targets.
//!
//! ```text
//! cargo bench -p cc-core --features reference --bench events
//! ```
//!
//! Each figure is the median of 7 runs over a pre-built trace of 2^16
//! events, through `Engine::event` with the flow's handle (as the firmware
//! benchmark runs them), and for the `f64` reference on the same events. Instruction counts on the RISC-V
//! core, which DESIGN §8 targets, are measured by the firmware benchmark;
//! host nanoseconds are for the simulator's budget.

use std::hint::black_box;
use std::time::Instant as Clock;

use cc_core::prelude::*;
use cc_core::reference::LdcpRef;

#[path = "common/workload.rs"]
mod workload;
use workload::{hpcc_ack, hpcc_config, hpcc_params, hpcc_ref, ldcp_ack, ldcp_setup, Telemetry};

const EVENTS: usize = 1 << 16;
const RUNS: usize = 7;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn time_per_event(mut f: impl FnMut() -> usize) -> f64 {
    median(
        (0..RUNS)
            .map(|_| {
                let t = Clock::now();
                let n = f();
                t.elapsed().as_nanos() as f64 / n as f64
            })
            .collect(),
    )
}

/// Telemetry for `hops` hops over `n` ACKs (see `workload::Telemetry`).
fn telemetry(hops: usize, n: usize) -> Vec<Vec<HopSample>> {
    samples(Telemetry::new(), hops, n)
}

/// `n` ACKs' worth of `g`'s first `hops` hops.
fn samples(mut g: Telemetry, hops: usize, n: usize) -> Vec<Vec<HopSample>> {
    (0..n).map(|_| g.next()[..hops].to_vec()).collect()
}

struct Row {
    what: &'static str,
    /// Through `Engine::handle`: table lookup, dispatch, controller.
    engine_ns: f64,
    /// The controller alone, the same work the reference does.
    fixed_ns: f64,
    reference_ns: Option<f64>,
}

/// An HPCC++ ACK row: `hops` hops of `source`'s telemetry.
fn bench_hpcc_ack(what: &'static str, source: Telemetry, hops: usize) -> Row {
    let tel = samples(source, hops, EVENTS);
    let fixed = time_per_event(|| {
        let mut eng: Engine<HpccSender<5>, 4> = Engine::new(hpcc_config()).unwrap();
        let (h, _) = eng
            .start(Instant::ZERO, FlowId(1), &hpcc_params(Algorithm::Hpcc))
            .unwrap();
        for (i, t) in tel.iter().enumerate() {
            let ack = hpcc_ack(i as u32, t);
            black_box(eng.event(h, Instant::from_nanos(i as u64 * 1000), &EventKind::Ack(ack))).ok();
        }
        tel.len()
    });
    let cfg = hpcc_config();
    let bare = time_per_event(|| {
        let mut s = HpccSender::<5>::new(&cfg, &hpcc_params(Algorithm::Hpcc)).unwrap();
        for (i, t) in tel.iter().enumerate() {
            black_box(s.ack(&cfg, Instant::from_nanos(i as u64 * 1000), &hpcc_ack(i as u32, t))).ok();
        }
        tel.len()
    });
    let reference = time_per_event(|| {
        let mut r = hpcc_ref();
        for (i, t) in tel.iter().enumerate() {
            let seq = i as u32 * 1000;
            black_box(r.new_ack(seq as u64, seq, seq + 150_000, t));
        }
        tel.len()
    });
    Row {
        what,
        engine_ns: fixed,
        fixed_ns: bare,
        reference_ns: Some(reference),
    }
}

fn bench_rx_hpcc() -> Row {
    let tel = telemetry(5, EVENTS);
    let p = hpcc_params(Algorithm::HpccReceiver);
    let fixed = time_per_event(|| {
        let mut eng: Engine<HpccReceiver<5>, 4> = Engine::new(hpcc_config()).unwrap();
        let (h, _) = eng.start(Instant::ZERO, FlowId(1), &p).unwrap();
        for (i, t) in tel.iter().enumerate() {
            let ev = EventKind::RxTelemetry { telemetry: t };
            black_box(eng.event(h, Instant::from_nanos(i as u64 * 1000), &ev)).ok();
        }
        tel.len()
    });
    let cfg = hpcc_config();
    let bare = time_per_event(|| {
        let mut r = HpccReceiver::<5>::new(&cfg, &p, Instant::ZERO).unwrap();
        for (i, t) in tel.iter().enumerate() {
            black_box(r.rx_telemetry(&cfg, Instant::from_nanos(i as u64 * 1000), t)).ok();
        }
        tel.len()
    });
    let reference = time_per_event(|| {
        let mut r = hpcc_ref();
        for (i, t) in tel.iter().enumerate() {
            black_box(r.new_int(i as f64 * 1000.0, t));
        }
        tel.len()
    });
    Row {
        what: "Rx-HPCC telemetry, 5 hops",
        engine_ns: fixed,
        fixed_ns: bare,
        reference_ns: Some(reference),
    }
}

fn bench_probe_response() -> Row {
    let tel = telemetry(1, EVENTS);
    let mut cfg = hpcc_config();
    cfg.telemetry = TelemetrySource::Probe { timeout_rtts: 2 };
    let fixed = time_per_event(|| {
        let mut eng: Engine<HpccSender<1>, 4> = Engine::new(cfg).unwrap();
        let (h, _) = eng
            .start(Instant::ZERO, FlowId(1), &hpcc_params(Algorithm::Hpcc))
            .unwrap();
        eng.event(h, Instant::ZERO, &workload::data_in_flight()).unwrap();
        for (i, t) in tel.iter().enumerate() {
            let ev = workload::probe_response(i as u32, t[0]).kind;
            black_box(eng.event(h, Instant::from_nanos(i as u64 * 12_000), &ev)).ok();
        }
        tel.len()
    });
    let bare = time_per_event(|| {
        let mut s = HpccSender::<1>::new(&cfg, &hpcc_params(Algorithm::Hpcc)).unwrap();
        s.sent(&cfg, Instant::ZERO, Seq(0), 0, MessageEnd::More).unwrap();
        for (i, t) in tel.iter().enumerate() {
            let probe = ProbeId((i + 1) as u8);
            black_box(s.probe_response(&cfg, Instant::from_nanos(i as u64 * 12_000), probe, 2, &t[0])).ok();
        }
        tel.len()
    });
    Row {
        what: "HPCC++ probe response",
        engine_ns: fixed,
        fixed_ns: bare,
        reference_ns: None,
    }
}

fn bench_ldcp_ack() -> Row {
    let (cfg, p, rp) = ldcp_setup();
    let fixed = time_per_event(|| {
        let mut eng: Engine<Ldcp, 4> = Engine::new(cfg).unwrap();
        let (h, _) = eng.start(Instant::ZERO, FlowId(1), &p).unwrap();
        for i in 1..=EVENTS as u32 {
            let ev = EventKind::Ack(ldcp_ack(i));
            black_box(eng.event(h, Instant::from_nanos(i as u64 * 100), &ev)).ok();
        }
        EVENTS
    });
    let bare = time_per_event(|| {
        let mut l = Ldcp::new(&cfg, &p).unwrap();
        for i in 1..=EVENTS as u32 {
            black_box(l.ack(&cfg, Instant::from_nanos(i as u64 * 100), &ldcp_ack(i)).unwrap());
        }
        EVENTS
    });
    let reference = time_per_event(|| {
        let mut r = LdcpRef::new(rp, 0);
        for i in 1..=EVENTS as u32 {
            r.on_ack(i as f64 * 100.0, i * 1000, i % 8 == 0);
        }
        EVENTS
    });
    Row {
        what: "LDCP ACK (PAWA)",
        engine_ns: fixed,
        fixed_ns: bare,
        reference_ns: Some(reference),
    }
}

fn bench_ldcp_timer() -> Row {
    let (cfg, p, rp) = ldcp_setup();
    let fixed = time_per_event(|| {
        let mut l = Ldcp::new(&cfg, &p).unwrap();
        l.restore(&cfg, Instant::ZERO, Packets::from_bits(1 << 14)).unwrap();
        for i in 1..=EVENTS as u64 {
            // 32 us apart: every tick is due (RTT/cw = 32 us).
            black_box(l.timer(&cfg, Instant::from_nanos(i * 32_016)).unwrap());
        }
        EVENTS
    });
    let reference = time_per_event(|| {
        let mut r = LdcpRef::new(rp, 0);
        r.cw = 0.25;
        r.next_tick = Some(0.0);
        for i in 1..=EVENTS as u64 {
            black_box(r.on_timer(i as f64 * 32_016.0));
        }
        EVENTS
    });
    Row {
        what: "LDCP timer (cw < 1)",
        engine_ns: f64::NAN,
        fixed_ns: fixed,
        reference_ns: Some(reference),
    }
}

fn per_flow<C: Controller>() -> usize {
    std::mem::size_of::<C>()
}

fn main() {
    println!("cc-core host benchmark: median of {RUNS} runs of {EVENTS} events, Engine::handle path");
    println!();
    println!(
        "{:<28} {:>10} {:>12} {:>12} {:>10}",
        "event", "engine ns", "controller", "f64 ref ns", "ref/ctrl"
    );
    for row in [
        bench_ldcp_ack(),
        bench_ldcp_timer(),
        bench_hpcc_ack("HPCC++ ACK, 1 hop", Telemetry::new(), 1),
        bench_hpcc_ack("HPCC++ ACK, 5 hops", Telemetry::new(), 5),
        bench_hpcc_ack("HPCC++ ACK, 5 hops, 1 queue", Telemetry::one_queue(), 5),
        bench_rx_hpcc(),
        bench_probe_response(),
    ] {
        let engine = if row.engine_ns.is_nan() {
            "-".to_string()
        } else {
            format!("{:.1}", row.engine_ns)
        };
        let (r, ratio) = match row.reference_ns {
            Some(r) => (format!("{r:.1}"), format!("{:.1}x", r / row.fixed_ns)),
            None => ("-".into(), "-".into()),
        };
        println!(
            "{:<28} {:>10} {:>12.1} {:>12} {:>10}",
            row.what, engine, row.fixed_ns, r, ratio
        );
    }
    println!();
    println!("host target: none in DESIGN §8; the simulator's budget is the user. This host has an FPU, so");
    println!("the f64 reference runs at hardware speed here; the ≥ 10x target is for rv32imac with soft");
    println!("floating point and 64-bit divides in software, measured in instructions by the firmware benchmark.");
    println!();
    println!("{:<40} {:>6} {:>8}", "per-flow state", "bytes", "target");
    let rows: [(&str, usize, Option<usize>); 6] = [
        (
            "HPCC++ sender, bottleneck hop (probe)",
            per_flow::<HpccSender<1>>(),
            Some(48),
        ),
        ("HPCC++ sender, 5-hop history", per_flow::<HpccSender<5>>(), Some(96)),
        ("HPCC++ receiver (Rx-HPCC), 5 hops", per_flow::<HpccReceiver<5>>(), None),
        ("LDCP (window)", per_flow::<Ldcp>(), Some(24)),
        ("LDCP (commercial NIC, rate)", per_flow::<LdcpRate>(), Some(24)),
        ("AnyController<5> (mixed table)", per_flow::<AnyController<5>>(), None),
    ];
    for (what, bytes, target) in rows {
        match target {
            Some(t) => println!(
                "{:<40} {:>6} {:>8}  {}",
                what,
                bytes,
                format!("≤ {t}"),
                if bytes <= t { "ok" } else { "OVER" }
            ),
            None => println!("{:<40} {:>6} {:>8}", what, bytes, "-"),
        }
    }
    let table = std::mem::size_of::<Engine<Ldcp, 4096>>() as f64 / 4096.0;
    println!();
    println!(
        "flow table per flow (state, slot generation and id, free list, id index): LDCP table of 4096 = {table:.1} bytes/flow"
    );
}
