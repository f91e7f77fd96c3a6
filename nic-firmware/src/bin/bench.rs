//! Instructions per event on the emulated core, beside DESIGN §8's targets
//! and beside the `f64` reference compiled for the same core (software
//! floating point: rv32imac and rv64imac have no F/D extension).
//!
//! ```text
//! cd nic-firmware && cargo run --release --features reference --bin bench
//! cd nic-firmware && cargo run --release --features reference --bin bench --target riscv64imac-unknown-none-elf
//! ```
//!
//! Each event is bracketed by two `minstret` reads; the cost of an empty
//! bracket is subtracted. QEMU runs with `-icount shift=0`, so every figure
//! is exact and the same on every run. Inputs (telemetry, ACKs) are built
//! outside the bracket. Figures are the mean and the maximum over the events
//! of a run.
#![no_std]
#![no_main]

use core::hint::black_box;

use cc_core::prelude::*;
use cc_core::reference::{HpccRef, HpccRefParams, LdcpRef, LdcpRefParams};
use nic_firmware::{exit, instret};
use semihosting::println;

/// Events per measured kind.
const EVENTS: u32 = 512;

/// Mean and maximum instructions per event.
#[derive(Clone, Copy)]
struct Cost {
    mean: u64,
    max: u64,
}

/// The smallest cost of an empty bracket: the reads themselves.
fn bracket_overhead() -> u64 {
    let mut best = u64::MAX;
    for _ in 0..64 {
        let a = instret();
        let b = instret();
        best = best.min(b - a);
    }
    best
}

/// Runs `event(i)` for `i` in `0..EVENTS`; `prep(i)` runs outside the
/// bracket and hands its result to `event`.
fn measure<P>(overhead: u64, mut prep: impl FnMut(u32) -> P, mut event: impl FnMut(u32, &P)) -> Cost {
    let (mut sum, mut max) = (0u64, 0u64);
    for i in 0..EVENTS {
        let p = prep(i);
        let a = instret();
        event(i, black_box(&p));
        let b = instret();
        let n = (b - a).saturating_sub(overhead);
        sum += n;
        max = max.max(n);
    }
    Cost { mean: sum / EVENTS as u64, max }
}

/// Deterministic telemetry: `hops` hops of 100 Gb/s, a bottleneck queue
/// under 90-110 % load, 24-bit timestamps and 20-bit byte counters in
/// 64-byte units (INT-MD-like widths).
struct Telemetry {
    rng: u64,
    q: i64,
    hops: [HopSample; 5],
}

impl Telemetry {
    fn new() -> Self {
        let h = HopSample {
            ts: 0,
            tx: 0,
            qlen_bytes: 0,
            sojourn_ns: 0,
            bandwidth: LinkSpeed::from_gbps(100),
            id: 0,
            widths: CounterWidths { ts_bits: 24, tx_bits: 20, tx_unit_bytes: 64 },
            tx_utilization: None,
        };
        let mut hops = [h; 5];
        for (i, h) in hops.iter_mut().enumerate() {
            h.id = i as u32;
        }
        Telemetry { rng: 0x9E37_79B9_7F4A_7C15, q: 0, hops }
    }

    fn next(&mut self) -> [HopSample; 5] {
        let mut r = || {
            self.rng ^= self.rng << 13;
            self.rng ^= self.rng >> 7;
            self.rng ^= self.rng << 17;
            self.rng
        };
        let dt = 800 + (r() % 400) as u32;
        let load = 900 + (r() % 200) as i64;
        self.q = (self.q + (load - 1000) * dt as i64 * 100 / 8000 / 1000).max(0);
        for h in self.hops.iter_mut() {
            h.ts = h.ts.wrapping_add(dt) & 0xFF_FFFF;
            h.tx = h.tx.wrapping_add(dt * 100 / 8 / 64) & 0xF_FFFF;
            h.qlen_bytes = self.q as u32;
        }
        self.hops
    }
}

fn hpcc_params(algorithm: Algorithm) -> FlowParams {
    FlowParams {
        algorithm,
        base_rtt: BaseRtt::from_nanos(12_000).unwrap_or_else(|| exit(3)),
        line_rate: LinkSpeed::from_gbps(100),
        start_seq: Seq(0),
    }
}

fn hpcc_ref() -> HpccRef {
    let cfg = HpccConfig::draft_default();
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

fn ack(i: u32, telemetry: &[HopSample]) -> Ack<'_> {
    let seq = Seq(i * 1000);
    Ack { cum_ack: seq, snd_nxt: seq.add(150_000), ece: EcnEcho::NotMarked, telemetry, rtt_ns: None }
}

struct Row {
    what: &'static str,
    engine: Option<Cost>,
    controller: Cost,
    reference: Option<Cost>,
    target: Option<u64>,
}

fn hpcc_ack(o: u64, hops: usize) -> Row {
    let cfg = HpccConfig::draft_default();
    let mut eng: Engine<HpccSender<5>, 4> = match Engine::new(cfg) {
        Ok(e) => e,
        Err(_) => exit(3),
    };
    let _ = eng.handle(Instant::ZERO, &Event { flow: FlowId(1), kind: EventKind::Start(hpcc_params(Algorithm::Hpcc)) });
    let mut t = Telemetry::new();
    let engine = measure(
        o,
        |_| t.next(),
        |i, tel| {
            let ev = Event { flow: FlowId(1), kind: EventKind::Ack(ack(i, &tel[..hops])) };
            let _ = black_box(eng.handle(Instant::from_nanos(i as u64 * 1000), &ev));
        },
    );
    let Ok(mut s) = HpccSender::<5>::new(&cfg, &hpcc_params(Algorithm::Hpcc)) else { exit(3) };
    let mut t = Telemetry::new();
    let controller = measure(
        o,
        |_| t.next(),
        |i, tel| {
            let _ = black_box(s.new_ack(&cfg, &ack(i, &tel[..hops])));
        },
    );
    let mut r = hpcc_ref();
    let mut t = Telemetry::new();
    let reference = measure(
        o,
        |_| t.next(),
        |i, tel| {
            black_box(r.new_ack(i * 1000, i * 1000 + 150_000, &tel[..hops]));
            black_box(r.rate_bps());
        },
    );
    let (what, target) = if hops == 1 { ("HPCC++ ACK, 1 hop", 150) } else { ("HPCC++ ACK, 5 hops", 400) };
    Row { what, engine: Some(engine), controller, reference: Some(reference), target: Some(target) }
}

fn rx_hpcc(o: u64) -> Row {
    let cfg = HpccConfig::draft_default();
    let p = hpcc_params(Algorithm::HpccReceiver);
    let mut eng: Engine<HpccReceiver<5>, 4> = match Engine::new(cfg) {
        Ok(e) => e,
        Err(_) => exit(3),
    };
    let _ = eng.handle(Instant::ZERO, &Event { flow: FlowId(1), kind: EventKind::Start(p) });
    let mut t = Telemetry::new();
    let engine = measure(
        o,
        |_| t.next(),
        |i, tel| {
            let ev = Event { flow: FlowId(1), kind: EventKind::RxTelemetry { telemetry: &tel[..] } };
            let _ = black_box(eng.handle(Instant::from_nanos(i as u64 * 1000), &ev));
        },
    );
    let Ok(mut rx) = HpccReceiver::<5>::new(&cfg, &p, Instant::ZERO) else { exit(3) };
    let mut t = Telemetry::new();
    let controller = measure(
        o,
        |_| t.next(),
        |i, tel| {
            let _ = black_box(rx.new_int(&cfg, Instant::from_nanos(i as u64 * 1000), &tel[..]));
        },
    );
    let mut r = hpcc_ref();
    let mut t = Telemetry::new();
    let reference = measure(
        o,
        |_| t.next(),
        |i, tel| {
            black_box(r.new_int(i as f64 * 1000.0, &tel[..]));
        },
    );
    Row { what: "Rx-HPCC telemetry, 5 hops", engine: Some(engine), controller, reference: Some(reference), target: None }
}

fn probe_response(o: u64) -> Row {
    let mut cfg = HpccConfig::draft_default();
    cfg.telemetry = TelemetrySource::Probe { timeout_rtts: 2 };
    let mut eng: Engine<HpccSender<1>, 4> = match Engine::new(cfg) {
        Ok(e) => e,
        Err(_) => exit(3),
    };
    let _ = eng.handle(Instant::ZERO, &Event { flow: FlowId(1), kind: EventKind::Start(hpcc_params(Algorithm::Hpcc)) });
    let mut t = Telemetry::new();
    let engine = measure(
        o,
        |_| t.next(),
        |i, tel| {
            let ev = Event { flow: FlowId(1), kind: EventKind::ProbeResponse { hop_index: 2, hop: tel[0] } };
            let _ = black_box(eng.handle(Instant::from_nanos(i as u64 * 12_000), &ev));
        },
    );
    let Ok(mut s) = HpccSender::<1>::new(&cfg, &hpcc_params(Algorithm::Hpcc)) else { exit(3) };
    let mut t = Telemetry::new();
    let controller = measure(
        o,
        |_| t.next(),
        |i, tel| {
            let _ = black_box(s.on_probe_response(&cfg, Instant::from_nanos(i as u64 * 12_000), 2, &tel[0]));
        },
    );
    Row { what: "HPCC++ probe response", engine: Some(engine), controller, reference: None, target: None }
}

fn ldcp_setup() -> (LdcpConfig, FlowParams, LdcpRefParams) {
    let mut cfg = LdcpConfig::draft_default();
    cfg.fast_start = FastStart::Disabled;
    let p = FlowParams {
        algorithm: Algorithm::Ldcp,
        base_rtt: BaseRtt::from_nanos(8_000).unwrap_or_else(|| exit(3)),
        line_rate: LinkSpeed::from_gbps(100),
        start_seq: Seq(0),
    };
    let rp = LdcpRefParams { mtu: 1000.0, alpha: 1.0, beta: 0.5, gamma: 0.125, t_ns: 8_000.0, iw_pkts: 100.0, fast_start: false };
    (cfg, p, rp)
}

/// ECE on every 8th ACK: cw hovers around 16 packets.
fn ldcp_ack_of(i: u32) -> Ack<'static> {
    let ece = if i.is_multiple_of(8) { EcnEcho::Marked } else { EcnEcho::NotMarked };
    Ack { cum_ack: Seq((i + 1) * 1000), snd_nxt: Seq((i + 1) * 1000), ece, telemetry: &[], rtt_ns: None }
}

fn ldcp_ack(o: u64) -> Row {
    let (cfg, p, rp) = ldcp_setup();
    let mut eng: Engine<Ldcp, 4> = match Engine::new(cfg) {
        Ok(e) => e,
        Err(_) => exit(3),
    };
    let _ = eng.handle(Instant::ZERO, &Event { flow: FlowId(1), kind: EventKind::Start(p) });
    let engine = measure(
        o,
        |i| Event { flow: FlowId(1), kind: EventKind::Ack(ldcp_ack_of(i)) },
        |i, ev| {
            let _ = black_box(eng.handle(Instant::from_nanos(i as u64 * 100 + 100), ev));
        },
    );
    let Ok(mut l) = Ldcp::new(&cfg, &p) else { exit(3) };
    let controller = measure(o, ldcp_ack_of, |i, a| {
        black_box(l.on_ack(&cfg, Instant::from_nanos(i as u64 * 100 + 100), a));
    });
    let mut r = LdcpRef::new(rp, 0);
    let reference = measure(
        o,
        |i| i,
        |_, &i| {
            r.on_ack(i as f64 * 100.0 + 100.0, (i + 1) * 1000, i.is_multiple_of(8));
            black_box(r.rate_bps());
        },
    );
    Row { what: "LDCP ACK (PAWA)", engine: Some(engine), controller, reference: Some(reference), target: Some(60) }
}

fn ldcp_timer(o: u64) -> Row {
    let (cfg, p, rp) = ldcp_setup();
    let Ok(mut l) = Ldcp::new(&cfg, &p) else { exit(3) };
    // cw = 1/4 packet: RTT/cw = 32 us, so every tick 32.016 us apart is due.
    let _ = l.restore(&cfg, Instant::ZERO, Packets::from_bits(1 << 14));
    let controller = measure(
        o,
        |i| i,
        |_, &i| {
            black_box(l.on_timer(&cfg, Instant::from_nanos((i as u64 + 1) * 32_016)));
        },
    );
    let mut r = LdcpRef::new(rp, 0);
    r.cw = 0.25;
    r.next_tick = Some(0.0);
    let reference = measure(
        o,
        |i| i,
        |_, &i| {
            black_box(r.on_timer((i as f64 + 1.0) * 32_016.0));
        },
    );
    Row { what: "LDCP timer (cw < 1)", engine: None, controller, reference: Some(reference), target: None }
}

fn cell(c: Option<Cost>) -> (u64, u64) {
    c.map_or((0, 0), |c| (c.mean, c.max))
}

#[riscv_rt::entry]
fn main() -> ! {
    let xlen = core::mem::size_of::<usize>() * 8;
    let o = bracket_overhead();
    println!("nic-firmware benchmark: rv{}imac, QEMU virt, -icount shift=0 (exact); {} events per kind", xlen, EVENTS);
    println!("instructions per event (mean / max); minstret bracket overhead {} subtracted", o);
    println!();
    println!("{:<28} {:>13} {:>13} {:>15} {:>9} {:>8}", "event", "engine", "controller", "f64 reference", "ref/ctrl", "target");
    let rows = [ldcp_ack(o), ldcp_timer(o), hpcc_ack(o, 1), hpcc_ack(o, 5), rx_hpcc(o), probe_response(o)];
    let mut over = 0u32;
    for r in &rows {
        let (em, ex) = cell(r.engine);
        let (rm, rx) = cell(r.reference);
        let mut eng = heapless::String::<16>::new();
        let mut refc = heapless::String::<16>::new();
        let mut ratio = heapless::String::<12>::new();
        let mut target = heapless::String::<12>::new();
        use core::fmt::Write;
        let _ = if r.engine.is_some() { write!(eng, "{} / {}", em, ex) } else { write!(eng, "-") };
        let _ = if r.reference.is_some() { write!(refc, "{} / {}", rm, rx) } else { write!(refc, "-") };
        let _ = match r.reference {
            Some(c) if r.controller.mean > 0 => write!(ratio, "{}.{}x", c.mean / r.controller.mean, c.mean * 10 / r.controller.mean % 10),
            _ => write!(ratio, "-"),
        };
        let _ = match r.target {
            Some(t) => {
                let n = r.engine.unwrap_or(r.controller).mean;
                if n > t {
                    over += 1;
                }
                write!(target, "≤ {} {}", t, if n <= t { "ok" } else { "OVER" })
            }
            None => write!(target, "-"),
        };
        let mut ctrl = heapless::String::<16>::new();
        let _ = write!(ctrl, "{} / {}", r.controller.mean, r.controller.max);
        println!(
            "{:<28} {:>13} {:>13} {:>15} {:>9} {:>8}",
            r.what,
            eng.as_str(),
            ctrl.as_str(),
            refc.as_str(),
            ratio.as_str(),
            target.as_str()
        );
    }
    println!();
    if over > 0 {
        println!("{} event kind(s) over their instruction target", over);
    }
    println!("targets (DESIGN §8) are for the engine path (table lookup included), rv32imac release;");
    println!("fixed-point vs f64 reference on the same core: target ≥ 10x fewer instructions.");
    println!();
    println!("{:<36} {:>6} {:>8} {:>16}", "per-flow state on this core", "state", "in table", "flows in 256 KiB");
    capacity::<HpccSender<1>>("HPCC++ sender, bottleneck hop", Some(48));
    capacity::<HpccSender<5>>("HPCC++ sender, 5-hop history", Some(96));
    capacity::<HpccReceiver<5>>("HPCC++ receiver (Rx-HPCC)", None);
    capacity::<Ldcp>("LDCP (window)", Some(24));
    capacity::<LdcpRate>("LDCP (rate, CNP variant)", Some(24));
    capacity::<AnyController<5>>("AnyController<5> (mixed table)", None);
    println!("\"in table\" is size_of(Engine<C, 4096>) / 4096: state plus the heapless index map's key, hash and index.");
    exit(0)
}

/// Prints a controller's state size, its bytes per flow inside a table of
/// 4096, and how many flows a 256 KiB SRAM holds.
fn capacity<C: Controller>(what: &str, target: Option<usize>) {
    let state = core::mem::size_of::<C>();
    let per_flow = core::mem::size_of::<Engine<C, 4096>>() as f64 / 4096.0;
    let flows = (256.0 * 1024.0 / per_flow) as u32;
    match target {
        Some(t) => println!(
            "{:<36} {:>6} {:>8.1} {:>16}   target ≤ {} {}",
            what,
            state,
            per_flow,
            flows,
            t,
            if state <= t { "ok" } else { "OVER" }
        ),
        None => println!("{:<36} {:>6} {:>8.1} {:>16}", what, state, per_flow, flows),
    }
}
