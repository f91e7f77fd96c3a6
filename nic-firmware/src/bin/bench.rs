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
//! bracket is subtracted. The flow state and the configuration pass through
//! `black_box` on every event, so the compiler can neither hoist work that
//! looks loop-invariant out of the bracket nor fold the configuration into
//! constants (the replay image receives it at run time). QEMU runs with
//! `-icount shift=0`, so every figure is exact and the same on every run. Inputs (telemetry, ACKs) are built
//! outside the bracket. Figures are the mean and the maximum over the events
//! of a run.
#![no_std]
#![no_main]

use core::hint::black_box;

use cc_core::prelude::*;
use cc_core::reference::LdcpRef;
use nic_firmware::println;
use nic_firmware::{exit, instret};

#[path = "common/paths.rs"]
#[allow(dead_code)]
mod paths;
#[path = "../../../cc-core/benches/common/workload.rs"]
mod workload;
use cc_core::algorithms::{AlgorithmConfig, ConfigVisitor};
use paths::{Bracket, Path};
use workload::{hpcc_ack, hpcc_config, hpcc_params, hpcc_ref, ldcp_ack, ldcp_setup, Telemetry};

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

/// Runs `event` on `prep(i)` for `i` in `0..EVENTS`; `prep(i)` runs outside the
/// bracket, `event` inside it.
fn measure<P>(overhead: u64, mut prep: impl FnMut(u32) -> P, mut event: impl FnMut(&P)) -> Cost {
    let mut c = Counter::new(overhead);
    for i in 0..EVENTS {
        c.around(prep(i), &mut event);
    }
    c.cost()
}

/// One call, never inlined: the controller and the reference are measured
/// as the engine's entries are, a call in and an answer out (inlined into
/// the bracket, the benchmark's own copies of the answer counted against
/// them).
#[inline(never)]
fn call<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// Counts each event's instructions between two `minstret` reads.
struct Counter {
    overhead: u64,
    sum: u64,
    max: u64,
    n: u64,
}

impl Counter {
    fn new(overhead: u64) -> Self {
        Counter {
            overhead,
            sum: 0,
            max: 0,
            n: 0,
        }
    }

    fn cost(&self) -> Cost {
        Cost {
            mean: self.sum / self.n.max(1),
            max: self.max,
        }
    }
}

/// `event(prep)` between two `minstret` reads, in a function of its own:
/// the caller's loop keeps its state across this call, so the reloads of
/// that state (a dozen or more instructions, as many as the loop's
/// registers) fall outside the bracket rather than into it.
#[inline(never)]
fn timed<P>(prep: &P, event: impl FnOnce(&P)) -> u64 {
    let a = instret();
    event(black_box(prep));
    let b = instret();
    b - a
}

impl Bracket for Counter {
    fn around<P>(&mut self, prep: P, event: impl FnOnce(&P)) {
        let n = timed(&prep, event).saturating_sub(self.overhead);
        self.sum += n;
        self.max = self.max.max(n);
        self.n += 1;
    }
}

/// A reference model's call, as the controllers' are measured: through
/// [`call`], never inlined.
impl cc_core::bench::RefBracket for Counter {
    fn around<P>(&mut self, prep: P, step: impl FnOnce(&P)) {
        Bracket::around(self, prep, |p| call(|| step(p)));
    }
}

/// The engine path of `path`: event in through the flow's handle, decision out.
fn engine_path(o: u64, path: Path) -> Cost {
    let mut c = Counter::new(o);
    paths::run(path, EVENTS, &mut c);
    c.cost()
}

struct Row {
    path: Path,
    engine: Cost,
    controller: Cost,
    reference: Option<Cost>,
}

fn bench_hpcc_ack(o: u64, path: Path) -> Row {
    let hops = path.hops();
    let cfg = hpcc_config();
    let Ok(mut s) = HpccSender::<5>::new(&cfg, &hpcc_params(Algorithm::Hpcc)) else {
        exit(3)
    };
    // The ACK is built outside the bracket, as the engine path's is; it
    // borrows the telemetry, so the loop is written out.
    let mut t = path.telemetry();
    let mut counter = Counter::new(o);
    for i in 0..EVENTS {
        let tel = t.next();
        let now = Instant::from_nanos(i as u64 * 1000);
        counter.around((now, hpcc_ack(i, &tel[..hops])), |(now, ack)| {
            let _ = black_box(call(|| black_box(&mut s).ack(black_box(&cfg), *now, ack)));
        });
    }
    let controller = counter.cost();
    let mut r = hpcc_ref();
    let mut t = path.telemetry();
    let reference = measure(
        o,
        |i| (t.next(), i as u64 * 1000, i * 1000, i * 1000 + 150_000),
        |(tel, now_ns, cum, nxt)| {
            black_box(call(|| black_box(&mut r).new_ack(*now_ns, *cum, *nxt, &tel[..hops])));
        },
    );
    Row {
        path,
        engine: engine_path(o, path),
        controller,
        reference: Some(reference),
    }
}

fn bench_rx_hpcc(o: u64) -> Row {
    let cfg = hpcc_config();
    let p = hpcc_params(Algorithm::HpccReceiver);
    let Ok(mut rx) = HpccReceiver::<5>::new(&cfg, &p, Instant::ZERO) else {
        exit(3)
    };
    let mut t = Telemetry::new();
    let controller = measure(
        o,
        |i| (Instant::from_nanos(i as u64 * 1000), t.next()),
        |(now, tel)| {
            let _ = black_box(call(|| {
                black_box(&mut rx).rx_telemetry(black_box(&cfg), *now, &tel[..])
            }));
        },
    );
    let mut r = hpcc_ref();
    let mut t = Telemetry::new();
    let reference = measure(
        o,
        |i| (i as f64 * 1000.0, t.next()),
        |(now, tel)| {
            black_box(call(|| black_box(&mut r).new_int(*now, &tel[..])));
        },
    );
    Row {
        path: Path::RxHpcc5,
        engine: engine_path(o, Path::RxHpcc5),
        controller,
        reference: Some(reference),
    }
}

fn bench_probe_response(o: u64) -> Row {
    let mut cfg = hpcc_config();
    cfg.telemetry = TelemetrySource::Probe { timeout_rtts: 2 };
    let Ok(mut s) = HpccSender::<1>::new(&cfg, &hpcc_params(Algorithm::Hpcc)) else {
        exit(3)
    };
    let _ = s.sent(&cfg, Instant::ZERO, Seq(0), 1000, MessageEnd::More);
    let mut t = Telemetry::new();
    let controller = measure(
        o,
        |i| {
            (
                ProbeId((i + 1) as u8),
                Instant::from_nanos(i as u64 * 12_000),
                t.next()[0],
            )
        },
        |(probe, now, hop)| {
            let _ = black_box(call(|| {
                black_box(&mut s).probe_response(black_box(&cfg), *now, *probe, 2, hop)
            }));
        },
    );
    Row {
        path: Path::ProbeResponse,
        engine: engine_path(o, Path::ProbeResponse),
        controller,
        reference: None,
    }
}

fn bench_ldcp_ack(o: u64) -> Row {
    let (cfg, p, rp) = ldcp_setup();
    let Ok(mut l) = Ldcp::new(&cfg, &p) else { exit(3) };
    let controller = measure(
        o,
        |i| (Instant::from_nanos((i as u64 + 1) * 100), ldcp_ack(i + 1)),
        |(now, a)| {
            let _ = black_box(call(|| black_box(&mut l).ack(black_box(&cfg), *now, a)));
        },
    );
    let mut r = LdcpRef::new(rp, 0);
    let reference = measure(
        o,
        |i| {
            let n = i + 1;
            (n as f64 * 100.0, n * 1000, n.is_multiple_of(8))
        },
        |&(now, cum, marked)| {
            call(|| black_box(&mut r).on_ack(now, cum, marked));
        },
    );
    Row {
        path: Path::LdcpAck,
        engine: engine_path(o, Path::LdcpAck),
        controller,
        reference: Some(reference),
    }
}

fn bench_ldcp_timer(o: u64) -> Row {
    let (cfg, p, rp) = ldcp_setup();
    let Ok(mut l) = Ldcp::new(&cfg, &p) else { exit(3) };
    // cw = 1/4 packet: RTT/cw = 32 us, so every tick 32.016 us apart is due.
    let _ = l.restore(&cfg, Instant::ZERO, Packets::from_bits(1 << 14));
    let controller = measure(
        o,
        |i| Instant::from_nanos((i as u64 + 1) * 32_016),
        |&now| {
            let _ = black_box(call(|| black_box(&mut l).timer(black_box(&cfg), now)));
        },
    );
    let mut r = LdcpRef::new(rp, 0);
    r.cw = 0.25;
    r.next_tick = Some(0.0);
    let reference = measure(
        o,
        |i| (i as f64 + 1.0) * 32_016.0,
        |&now| {
            black_box(call(|| black_box(&mut r).on_timer(now)));
        },
    );
    Row {
        path: Path::LdcpTimer,
        engine: engine_path(o, Path::LdcpTimer),
        controller,
        reference: Some(reference),
    }
}

/// An algorithm of the registry's ACK row: its sender's controller with
/// its defaults; no `f64` reference column (its property tests hold it to
/// its reference).
fn bench_registered(o: u64, a: Algorithm) -> Row {
    struct Ack(u64, Algorithm);
    impl ConfigVisitor for Ack {
        type Output = Cost;
        fn visit<C: AlgorithmConfig>(self) -> Cost {
            let (Some(bench), cfg) = (C::ACK_BENCH, C::DEFAULT) else {
                exit(3)
            };
            let Ok((mut c, _)) = C::Sender::<5>::start(&cfg, Instant::ZERO, &hpcc_params(self.1)) else {
                exit(3)
            };
            // `measure` with the ACK's telemetry in a buffer it borrows.
            let mut counter = Counter::new(self.0);
            let mut hops = [HopSample::default(); 5];
            for i in 0..EVENTS {
                let now = Instant::from_nanos((i as u64 + 1) * bench.interval_ns as u64);
                counter.around((bench.ack)(i + 1, &mut hops), |ack| {
                    let _ = black_box(call(|| black_box(&mut c).ack(black_box(&cfg), now, ack)));
                });
            }
            counter.cost()
        }
    }
    Row {
        path: Path::Ack(a),
        engine: engine_path(o, Path::Ack(a)),
        controller: a.with_config(Ack(o, a)),
        reference: reference_ack(o, a),
    }
}

/// An algorithm of the registry's CNP row: its sender's controller with
/// its defaults, a CNP every `CnpBench::interval_ns`; no `f64` column.
fn bench_registered_cnp(o: u64, a: Algorithm) -> Row {
    struct Cnp(u64, Algorithm);
    impl ConfigVisitor for Cnp {
        type Output = Cost;
        fn visit<C: AlgorithmConfig>(self) -> Cost {
            let (Some(bench), cfg) = (C::CNP_BENCH, C::DEFAULT) else {
                exit(3)
            };
            let Ok((mut c, _)) = C::Sender::<5>::start(&cfg, Instant::ZERO, &hpcc_params(self.1)) else {
                exit(3)
            };
            measure(
                self.0,
                |i| Instant::from_nanos((i as u64 + 1) * bench.interval_ns as u64),
                |now| {
                    let _ = black_box(call(|| black_box(&mut c).cnp(black_box(&cfg), *now)));
                },
            )
        }
    }
    Row {
        path: Path::Cnp(a),
        engine: engine_path(o, Path::Cnp(a)),
        controller: a.with_config(Cnp(o, a)),
        reference: None,
    }
}

/// A NACK or timeout row of an algorithm of the registry: the engine
/// path, and the controller's hook alone on the same events.
/// A sprayed flow's rows: the engine's whole event beside the mixed
/// chooser's own part (its next EV, or its answer for an ACK's EV).
fn bench_sprayed(o: u64, path: Path) -> Row {
    use cc_core::path::{Balancer, Feedback, PathState, Paths, Spray, Sprayer};
    let Some(paths) = Paths::new(128) else { exit(3) };
    let mut p = Sprayer::new(&Spray {
        paths,
        balancer: Balancer::Mixed,
        seed: 13,
    });
    let controller = if path == Path::SprayedSent {
        measure(
            o,
            |_| (),
            |_| {
                let _ = black_box(call(|| black_box(&mut p).next()));
            },
        )
    } else {
        measure(
            o,
            |i| {
                let f = if i % 4 == 3 { Feedback::Ecn } else { Feedback::Good };
                (
                    cc_core::path::Ev::new((i % 128) as u16),
                    f,
                    Instant::from_nanos((i as u64 + 1) * 1_000),
                )
            },
            |(ev, f, now)| {
                black_box(&mut p).feedback(*ev, *f, *now);
            },
        )
    };
    Row {
        path,
        engine: engine_path(o, path),
        controller,
        reference: None,
    }
}

fn bench_registered_loss(o: u64, path: Path, a: Algorithm) -> Row {
    struct Hook(u64, Algorithm, bool);
    impl ConfigVisitor for Hook {
        type Output = Cost;
        fn visit<C: AlgorithmConfig>(self) -> Cost {
            let cfg = C::DEFAULT;
            let Ok((mut c, _)) = C::Sender::<5>::start(&cfg, Instant::ZERO, &hpcc_params(self.1)) else {
                exit(3)
            };
            match (self.2, C::NACK_BENCH, C::LOSS_BENCH) {
                (true, Some(bench), _) => measure(
                    self.0,
                    |i| {
                        (
                            Instant::from_nanos((i as u64 + 1) * bench.interval_ns as u64),
                            (bench.nack)(i + 1),
                        )
                    },
                    |(now, nack)| {
                        let _ = black_box(call(|| black_box(&mut c).nack(black_box(&cfg), *now, nack)));
                    },
                ),
                (false, _, Some(bench)) => measure(
                    self.0,
                    |i| Instant::from_nanos((i as u64 + 1) * bench.interval_ns as u64),
                    |now| {
                        let _ = black_box(call(|| black_box(&mut c).loss(black_box(&cfg), *now, Seq(0))));
                    },
                ),
                _ => exit(3),
            }
        }
    }
    Row {
        path,
        engine: engine_path(o, path),
        controller: a.with_config(Hook(o, a, matches!(path, Path::Nack(_)))),
        reference: None,
    }
}

/// The `f64` reference's cost of the same ACKs as [`bench_registered`]'s,
/// for the algorithms of the registry that have one
/// ([`AlgorithmConfig::reference_ack`]).
fn reference_ack(o: u64, a: Algorithm) -> Option<Cost> {
    struct Reference(u64, Algorithm);
    impl ConfigVisitor for Reference {
        type Output = Option<Cost>;
        fn visit<C: AlgorithmConfig>(self) -> Option<Cost> {
            let mut counter = Counter::new(self.0);
            C::reference_ack(&hpcc_params(self.1), EVENTS, &mut counter).then(|| counter.cost())
        }
    }
    a.with_config(Reference(o, a))
}

/// A row of the engine's path alone: through the C API (cc-ffi), the C
/// call from the caller's structs to the `cc_decision` (the C API has
/// only the engine's path), and the Rust row the C API's 5-hop row is
/// held to.
fn engine_only(o: u64, path: Path) -> Row {
    Row {
        path,
        engine: engine_path(o, path),
        controller: Cost { mean: 0, max: 0 },
        reference: None,
    }
}

/// Each C API row beside the Rust engine path it is held to, mean and
/// max, as the boundary's own cost (DESIGN §8): LDCP's at most 40
/// instructions more, HPCC++'s 5-hop ACK at most 80, each against the
/// same controller from Rust (the 5-hop row on the C API's eight hops of
/// history). scripts/bench.sh compares with the Rust rows of an image
/// without the C API, whose inlining a second caller does not change.
fn c_api_table(rows: &[Row]) {
    for r in rows {
        let Some(rust) = r.path.rust_row() else { continue };
        let Some(base) = rows.iter().find(|b| b.path.label() == rust) else {
            continue;
        };
        let pct = |c: u64, b: u64| (c as i64 - b as i64) * 1000 / b.max(1) as i64;
        let (m, x) = (pct(r.engine.mean, base.engine.mean), pct(r.engine.max, base.engine.max));
        let more = |c: u64, b: u64| c as i64 - b as i64;
        let (dm, dx) = (
            more(r.engine.mean, base.engine.mean),
            more(r.engine.max, base.engine.max),
        );
        let (ok, rule) = match base.path {
            Path::LdcpAck => (dm <= 40 && dx <= 40, "≤ +40 instructions"),
            _ => (dm <= 80 && dx <= 80, "≤ +80 instructions"),
        };
        println!(
            "{} against {}: mean {:+}.{} % ({:+}), max {:+}.{} % ({:+})  ({} {})",
            r.path.label(),
            rust,
            m / 10,
            (m % 10).abs(),
            dm,
            x / 10,
            (x % 10).abs(),
            dx,
            rule,
            if ok { "ok" } else { "OVER" }
        );
    }
}

/// A soft core at 1.8 GHz retiring one instruction per cycle.
const CORE_HZ: u64 = 1_800_000_000;

/// Events per second one port delivers with an ACK per frame: line rate /
/// frame bits, for (label, Gb/s, frame bytes).
const PORTS: [(&str, u64, u64); 4] = [
    ("400G 4KiB", 400, 4096),
    ("800G 4KiB", 800, 4096),
    ("400G 1KiB", 400, 1024),
    ("800G 1KiB", 800, 1024),
];

/// What the figures mean for a NIC: events per second per core, and the
/// cores one port needs (the engine path where measured, else the
/// controller), in tenths.
fn port_table(rows: &[Row]) {
    println!();
    println!(
        "what that is for a port, at {}.{} GHz and one instruction per cycle, an ACK per frame (cores a port needs):",
        CORE_HZ / 1_000_000_000,
        CORE_HZ / 100_000_000 % 10
    );
    println!(
        "{:<28} {:>13} {:>10} {:>10} {:>10} {:>10}",
        "event", "M events/s", PORTS[0].0, PORTS[1].0, PORTS[2].0, PORTS[3].0
    );
    for r in rows {
        let n = r.engine.mean.max(1);
        let per_core = CORE_HZ / n;
        let mut cols: [heapless::String<12>; 4] = Default::default();
        for (c, (_, gbps, frame)) in cols.iter_mut().zip(PORTS) {
            // events/s = gbps·1e9 / (frame·8); cores = events/s · n / CORE_HZ.
            let cores_x10 = gbps * 1_000_000_000 / (frame * 8) * n * 10 / CORE_HZ;
            use core::fmt::Write;
            let _ = write!(c, "{}.{} cores", cores_x10 / 10, cores_x10 % 10);
        }
        let mut rate = heapless::String::<16>::new();
        {
            use core::fmt::Write;
            let _ = write!(rate, "{}.{}", per_core / 1_000_000, per_core / 100_000 % 10);
        }
        println!(
            "{:<28} {:>13} {:>10} {:>10} {:>10} {:>10}",
            r.path.label(),
            rate.as_str(),
            cols[0].as_str(),
            cols[1].as_str(),
            cols[2].as_str(),
            cols[3].as_str()
        );
    }
}

fn cell(c: Option<Cost>) -> (u64, u64) {
    c.map_or((0, 0), |c| (c.mean, c.max))
}

#[riscv_rt::entry]
fn main() -> ! {
    let xlen = core::mem::size_of::<usize>() * 8;
    let o = bracket_overhead();
    let zbb = if cfg!(target_feature = "zbb") { "+zbb" } else { "" };
    println!(
        "nic-firmware benchmark: rv{}imac{}, QEMU virt, -icount shift=0 (exact); {} events per kind",
        xlen, zbb, EVENTS
    );
    println!(
        "instructions per event (mean / max); minstret bracket overhead {} subtracted",
        o
    );
    println!();
    println!(
        "{:<28} {:>13} {:>13} {:>15} {:>9} {:>8}",
        "event", "engine", "controller", "f64 reference", "ref/ctrl", "target"
    );
    let mut rows = heapless::Vec::<Row, 24>::new();
    for path in Path::all() {
        let row = match path {
            Path::LdcpAck => bench_ldcp_ack(o),
            Path::LdcpTimer => bench_ldcp_timer(o),
            Path::HpccAck1 | Path::HpccAck2 | Path::HpccAck5 | Path::HpccAck5OneQueue => bench_hpcc_ack(o, path),
            Path::RxHpcc5 => bench_rx_hpcc(o),
            Path::ProbeResponse => bench_probe_response(o),
            Path::Cnp(a) => bench_registered_cnp(o, a),
            Path::Ack(a) => bench_registered(o, a),
            Path::Nack(a) | Path::Loss(a) => bench_registered_loss(o, path, a),
            Path::SprayedSent | Path::SprayedAck => bench_sprayed(o, path),
            #[cfg(not(feature = "c-api"))]
            Path::HpccAck5Wide => engine_only(o, path),
            #[cfg(feature = "c-api")]
            Path::LdcpAckC | Path::HpccAck5C => engine_only(o, path),
        };
        if rows.push(row).is_err() {
            exit(3)
        }
    }
    let (mut over, mut slow) = (0u32, 0u32);
    for r in &rows {
        let (em, ex) = (r.engine.mean, r.engine.max);
        let (rm, rx) = cell(r.reference);
        let mut eng = heapless::String::<16>::new();
        let mut refc = heapless::String::<16>::new();
        let mut ratio = heapless::String::<12>::new();
        let mut target = heapless::String::<16>::new();
        use core::fmt::Write;
        let _ = write!(eng, "{} / {}", em, ex);
        let _ = if r.reference.is_some() {
            write!(refc, "{} / {}", rm, rx)
        } else {
            write!(refc, "-")
        };
        let _ = match r.reference {
            Some(c) if r.controller.mean > 0 => {
                if c.mean < 10 * r.controller.mean {
                    slow += 1;
                }
                write!(
                    ratio,
                    "{}.{}x",
                    c.mean / r.controller.mean,
                    c.mean * 10 / r.controller.mean % 10
                )
            }
            _ => write!(ratio, "-"),
        };
        let _ = match r.path.target() {
            Some(t) => {
                // Mean and maximum both count.
                let ok = r.engine.mean <= t && r.engine.max <= t;
                if !ok {
                    over += 1;
                }
                write!(target, "≤ {} {}", t, if ok { "ok" } else { "OVER" })
            }
            None => write!(target, "-"),
        };
        let mut ctrl = heapless::String::<16>::new();
        let _ = if r.path.rust_row().is_some() {
            write!(ctrl, "-")
        } else {
            write!(ctrl, "{} / {}", r.controller.mean, r.controller.max)
        };
        println!(
            "{:<28} {:>13} {:>13} {:>15} {:>9} {:>8}",
            r.path.label(),
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
    if slow > 0 {
        println!(
            "{} event kind(s) under 10x fewer instructions than the f64 reference",
            slow
        );
    }
    c_api_table(&rows);
    port_table(&rows);
    // What scripts/profile.sh calls each row, for bench.sh's division counts.
    for r in &rows {
        println!("profile kind: {}\t{}", r.path.name(), r.path.label());
    }
    println!("(DCQCN's CNPs come one per CE-marked packet, not one per frame: its row overstates.)");
    println!(
        "targets (DESIGN §8) are for the engine path (table lookup included): rv32imac's, or with Zbb the DPA class's;"
    );
    println!("fixed-point vs f64 reference on the same core: target ≥ 10x fewer instructions.");
    println!();
    println!(
        "{:<36} {:>6} {:>8} {:>16}",
        "per-flow state on this core", "state", "in table", "flows in 256 KiB"
    );
    capacity::<HpccSender<1>>("HPCC++ sender, bottleneck hop", Some(48));
    capacity::<HpccSender<5>>("HPCC++ sender, 5-hop history", Some(96));
    capacity::<HpccReceiver<5>>("HPCC++ receiver (Rx-HPCC)", None);
    capacity::<Ldcp>("LDCP (window)", Some(24));
    capacity::<LdcpRate>("LDCP (rate, CNP variant)", Some(24));
    // Each algorithm with an ACK row, with five hops of history as the
    // row (an algorithm that keeps none has the same state for any H).
    struct State(Algorithm);
    impl ConfigVisitor for State {
        type Output = ();
        fn visit<C: AlgorithmConfig>(self) {
            if let Some(b) = C::ACK_BENCH {
                capacity::<C::Sender<5>>(self.0.title(), b.state_bytes.map(|t| t as usize));
            } else if C::CNP_BENCH.is_some() {
                capacity::<C::Sender<5>>(self.0.title(), None);
            }
        }
    }
    for a in Algorithm::ALL.into_iter().filter(|a| a.is_primary()) {
        a.with_config(State(a));
    }
    capacity::<AnyController<8>>("AnyController<8> (mixed table, 8 hops)", None);
    println!(
        "\"in table\" is size_of(Engine<C, 4096>) / 4096: state, its slot's generation and id, the free list and the id index."
    );
    exit(0)
}

/// Prints a controller's state size, its bytes per flow inside a table of
/// 4096, and how many flows a 256 KiB SRAM holds.
fn capacity<C: Controller>(what: &str, target: Option<usize>) {
    let state = core::mem::size_of::<C>();
    let per_flow = core::mem::size_of::<Engine<C, 4096>>() as f64 / 4096.0;
    let flows = (256.0 * 1024.0 / per_flow) as u32;
    capacity_row(what, state, per_flow, flows, target);
}

fn capacity_row(what: &str, state: usize, per_flow: f64, flows: u32, target: Option<usize>) {
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
