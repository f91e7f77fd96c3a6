//! Host vs firmware: event traces recorded by hal-sim (and one built here,
//! for five hops, which the simulator's topologies do not have) are replayed
//! into the `replay` image of nic-firmware on QEMU's riscv32 and riscv64
//! `virt` machines; every answer must equal, byte for byte, what the host
//! engine answers to the same trace.
//!
//! Needs `qemu-system-riscv32`/`-riscv64` (Debian's qemu-system-misc) and
//! the RISC-V targets; `./scripts/test.sh` installs both and runs these with
//! the `qemu` feature (`cargo test -p integration-tests --features qemu`).
//! Without the feature, `cargo test` leaves this file out. Each trace is
//! also checked to exercise its mode (e.g. the LDCP incast trace contains
//! timer releases of windows below one packet), so a trace that stopped
//! covering what it names fails.

#![cfg(feature = "qemu")]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};

use cc_core::codec::{self, FrameKind, MAX_FRAME};
use cc_core::prelude::*;
use hal_sim::model::telemetry::TelFormat;
use hal_sim::output::trace::Selection;
use hal_sim::setup::scenario::{self, *};
use hal_sim::{output::report, run::world::World};

const TARGETS: [&str; 2] = ["riscv32imac-unknown-none-elf", "riscv64imac-unknown-none-elf"];

fn firmware_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../nic-firmware")
}

/// Builds the replay image for `target` with `features` (`None`: the
/// defaults and `reference`) and, with `zbb`, the Zbb extension (the DPA
/// class of core: `clz` in one instruction), into `target_dir` under
/// nic-firmware/, and returns the path of a copy of it named `name`. The
/// folder is set explicitly, so the images go where the tests look
/// whatever target folder the host build uses. `reference` only adds the
/// benchmark's `f64` models, which the replay image does not call; with
/// it the default images are the ones scripts/test.sh and scripts/bench.sh
/// have built, not a second build of the same code.
///
/// Images of other features share a folder with them (cargo keeps each
/// feature set's artifacts apart, so the dependencies are built once), and
/// each build replaces that folder's `replay`: the tests run the copies,
/// made one build at a time.
fn build_replay(target: &str, features: Option<&str>, zbb: bool, target_dir: &str, name: &str) -> PathBuf {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = firmware_dir().join(target_dir);
    let mut cargo = Command::new(env!("CARGO"));
    cargo.args(["build", "--release", "--bin", "replay", "--target", target]);
    match features {
        Some(f) => cargo.args(["--no-default-features", "--features", f]),
        None => cargo.args(["--features", "reference"]),
    };
    if zbb {
        cargo.env("RUSTFLAGS", "-C target-feature=+zbb");
    } else {
        cargo.env_remove("RUSTFLAGS");
    }
    let status = cargo
        .current_dir(firmware_dir())
        .env("CARGO_TARGET_DIR", &dir)
        .status()
        .expect("cargo runs");
    assert!(status.success(), "building the {target} replay image failed");
    let release = dir.join(target).join("release");
    let copy = release.join(name);
    std::fs::copy(release.join("replay"), &copy).expect("the image copies");
    copy
}

/// The replay image for both targets, and for riscv64imac with Zbb (run
/// by scripts/qemu.sh on a core with Zbb), built once per test run.
fn images() -> &'static [PathBuf; 3] {
    static IMAGES: OnceLock<[PathBuf; 3]> = OnceLock::new();
    IMAGES.get_or_init(|| {
        [
            build_replay(TARGETS[0], None, false, "target", "replay-tested"),
            build_replay(TARGETS[1], None, false, "target", "replay-tested"),
            build_replay(TARGETS[1], None, true, "target/zbb", "replay-tested"),
        ]
    })
}

/// The riscv32 replay image with the UART as its event channel (no
/// `channel-semihosting`), as a board runs it; built once. With
/// `reference`, as the other images: the replay does not call the models,
/// and cc-core's build with the same features is the one already made.
fn uart_image() -> &'static PathBuf {
    static IMAGE: OnceLock<PathBuf> = OnceLock::new();
    IMAGE.get_or_init(|| {
        build_replay(
            TARGETS[0],
            Some("log-semihosting,reference"),
            false,
            "target",
            "replay-uart",
        )
    })
}

/// Runs `cmd` with `input` on its stdin (written from a thread of its own,
/// so a program that answers as it reads never blocks); returns its exit
/// status and stdout.
fn run_with_input(cmd: &mut Command, input: &[u8]) -> (std::process::ExitStatus, Vec<u8>) {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the program starts (is qemu-system-misc installed?)");
    let mut stdin = child.stdin.take().expect("piped");
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let mut out = Vec::new();
    child
        .stdout
        .take()
        .expect("piped")
        .read_to_end(&mut out)
        .expect("read the program's stdout");
    writer
        .join()
        .expect("writer thread")
        .expect("the program took its whole input");
    (child.wait().expect("the program exits"), out)
}

/// Runs `trace` through the firmware image; returns its output (the
/// answers, over whichever channel the image was built with).
fn run_firmware(image: &Path, trace: &[u8]) -> Vec<u8> {
    let mut qemu = Command::new(firmware_dir().join("scripts/qemu.sh"));
    qemu.arg(image).env("QEMU_TIMEOUT", "240");
    let (status, out) = run_with_input(&mut qemu, trace);
    assert!(
        status.success(),
        "{}: firmware verdict {status} (1: it saw a bad frame, 124: timeout)",
        image.display()
    );
    out
}

/// The C API's example programs (cc-ffi/examples/c), built once by
/// cc-ffi/scripts/build-c.sh for the host and both soft cores (which also
/// proves no panic path is left in what they call).
fn c_programs() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let ffi = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cc-ffi");
        let out = ffi.join("target/c-programs");
        let status = Command::new(ffi.join("scripts/build-c.sh"))
            .arg(&out)
            .status()
            .expect("build-c.sh starts");
        assert!(status.success(), "building the C examples failed");
        out
    })
}

/// Where a C program runs: on the host, or on a soft core under QEMU.
const C_CORES: [&str; 3] = ["host", "riscv32imac", "riscv64imac"];

/// Runs C program `name` built for `core` with `input` on its stdin;
/// returns its exit status and stdout. Under QEMU the program opens the
/// host's /dev/stdin and /dev/stdout through semihosting, which also
/// carries its exit status out.
fn run_c(core: &str, name: &str, input: &[u8]) -> (std::process::ExitStatus, Vec<u8>) {
    let dir = c_programs().join(core);
    let mut cmd = if core == "host" {
        Command::new(dir.join(name))
    } else {
        let (qemu, cpu) = if core == "riscv32imac" {
            ("qemu-system-riscv32", "rv32")
        } else {
            ("qemu-system-riscv64", "rv64")
        };
        let mut c = Command::new("timeout");
        c.args([
            "240", qemu, "-machine", "virt", "-cpu", cpu, "-bios", "none", "-m", "64M",
        ])
        .args(["-display", "none", "-monitor", "none", "-serial", "null"])
        .args(["-semihosting-config", "enable=on,target=native", "-kernel"])
        .arg(dir.join(format!("{name}.elf")));
        c
    };
    run_with_input(&mut cmd, input)
}

/// One engine answer: the flow and its decision or refusal.
type Answer = (FlowId, Result<Decision, Error>);

/// What the host engine answers to `trace`, and the decoded answers.
fn host_answers(trace: &[u8]) -> (Vec<u8>, Vec<Answer>) {
    let default = AnyConfig::DEFAULT;
    let mut engine: Box<Engine<AnyController<8>, 1024, cc_core::path::Sprayer>> =
        Box::new(Engine::new(default).unwrap());
    let (mut out, mut answers, mut at) = (Vec::new(), Vec::new(), 0);
    let mut buf = [0u8; MAX_FRAME];
    loop {
        let f = codec::read_frame(&trace[at..]).expect("traces are well formed");
        at += f.len;
        match f.kind {
            FrameKind::Config => {
                engine.reset(codec::decode_config(&f).unwrap()).unwrap();
                out.extend_from_slice(&trace[at - f.len..at]);
            }
            FrameKind::Event => {
                let ev = codec::decode_event(&f).unwrap();
                let event = ev.event();
                let answer = engine.handle(ev.now, &event);
                let n = codec::encode_answer(event.flow, &answer, &mut buf).unwrap();
                out.extend_from_slice(&buf[..n]);
                answers.push((event.flow, answer));
            }
            FrameKind::Halt => return (out, answers),
            FrameKind::Decision | FrameKind::Refusal => panic!("an answer in a trace"),
        }
    }
}

/// Replays `trace` on every image and compares every byte; returns the
/// host's decoded answers for the mode checks.
fn equivalent(name: &str, trace: &[u8]) -> Vec<Answer> {
    let (expected, answers) = host_answers(trace);
    for image in images() {
        let got = run_firmware(image, trace);
        if got != expected {
            let at = got
                .iter()
                .zip(&expected)
                .position(|(a, b)| a != b)
                .unwrap_or(got.len().min(expected.len()));
            panic!(
                "{name} on {}: firmware output differs from the host engine at byte {at} of {} (firmware sent {} bytes)",
                image.display(),
                expected.len(),
                got.len()
            );
        }
        eprintln!(
            "{name}: {} events, {} answer bytes identical on {}",
            answers.len(),
            expected.len(),
            image.display()
        );
    }
    for core in C_CORES {
        let (status, got) = run_c(core, "replay", trace);
        assert!(status.success(), "{name}: the C replay on {core} exits with {status}");
        if got != expected {
            let at = got.iter().zip(&expected).position(|(a, b)| a != b);
            panic!(
                "{name}: the C API's answers on {core} differ from the Rust engine's at byte {} of {} ({} sent)",
                at.unwrap_or(got.len().min(expected.len())),
                expected.len(),
                got.len()
            );
        }
        eprintln!(
            "{name}: {} answer bytes identical through the C API on {core}",
            expected.len()
        );
    }
    answers
}

/// Which engine of a flow to record.
#[derive(Clone, Copy)]
enum Side {
    Sender,
    Receiver,
    /// Every sender host merged: flows have distinct ids and LDCP keeps no
    /// receiver state.
    AllSenders,
}

/// Records every event one host's engine handles in a short run of a
/// scenario: the host sending flow 0, the one receiving it, or all senders.
fn record(s: &Scenario, side: Side) -> Vec<u8> {
    let mut w = World::new(s, Path::new("."), "trace").unwrap();
    let host = match side {
        Side::Sender => Some(w.flows[0].src_host),
        Side::Receiver => Some(w.flows[0].dst_host),
        Side::AllSenders => None,
    };
    w.record(Selection { host, flows: None }).unwrap();
    w.run(|_| {});
    w.tap.trace.take().unwrap().finish()
}

/// The trace runs: `senders` into one receiver at 100 Gb/s over 1 µs
/// links, `bytes` each, WRED/ECN between 5 and 40 KB and ECN-incapable data
/// dropped at 20 KB; telemetry (compact) only for HPCC++.
fn incast(senders: u32, stop_ms: f64, algorithm: Cc, bytes: u64) -> Scenario {
    let hpcc = matches!(algorithm, Cc::Hpcc(_));
    let cc = CcCfg {
        algorithm,
        base_rtt_ns: None,
    };
    let mut s = Scenario::new(
        "trace",
        stop_ms,
        Topology::incast(senders, 100, 1000),
        cc,
        Workload::incast(bytes),
    );
    s.switch.ecn_kmin_bytes = Some(Bytes(5000));
    s.switch.ecn_kmax_bytes = Some(Bytes(40_000));
    s.switch.ecn_pmax = Some(Prob(0.2));
    s.switch.drop_k_bytes = Some(Bytes(20_000));
    if !hpcc {
        s.nic.telemetry = TelFormat::None;
    }
    s
}

/// HPCC++ as the SIGCOMM'19 simulator ran it (maxStage 0, W_ai from 50 Mb/s).
fn hpcc_sigcomm() -> Cc {
    Cc::Hpcc(HpccCfg {
        max_stage: Stage(0),
        additive_increase: Wai::RateMbps(50),
        ..HpccCfg::default()
    })
}

/// HPCC++ at its defaults, placed by `mode`.
fn hpcc_mode(mode: HpccMode) -> Cc {
    Cc::Hpcc(HpccCfg {
        mode,
        ..HpccCfg::default()
    })
}

fn count(answers: &[Answer], f: impl Fn(&Decision) -> bool) -> usize {
    answers.iter().filter(|(_, a)| a.as_ref().is_ok_and(&f)).count()
}

#[test]
fn hpcc_one_hop_inband() {
    let trace = record(&incast(2, 0.3, hpcc_sigcomm(), 1_000_000), Side::Sender);
    let a = equivalent("HPCC++ 1 hop", &trace);
    assert!(a.len() > 500);
    assert!(a.iter().all(|(_, d)| d.is_ok()), "the sender takes every event");
    // The window moved away from W_init: ComputeWind ran.
    let windows: std::collections::BTreeSet<u32> = a
        .iter()
        .filter_map(|(_, d)| d.as_ref().ok().map(|d| d.window.to_bits()))
        .collect();
    assert!(windows.len() > 100, "{} distinct windows", windows.len());
}

/// The same events over the UART channel of a board build (the
/// `embedded-io` implementation of QEMU's 16550): byte-identical answers.
/// A short trace: the UART moves about 500 events a second under QEMU.
#[test]
fn the_uart_channel_answers_as_the_host_engine_does() {
    let trace = record(&incast(1, 0.02, hpcc_sigcomm(), 100_000), Side::Sender);
    let (expected, answers) = host_answers(&trace);
    assert!(answers.len() > 20, "{} events", answers.len());
    let got = run_firmware(uart_image(), &trace);
    assert!(
        got == expected,
        "the UART build's answers differ from the host engine's"
    );
    eprintln!(
        "UART channel: {} events, {} answer bytes identical",
        answers.len(),
        expected.len()
    );
}

#[test]
fn hpcc_probe_mode() {
    let s = incast(2, 0.3, hpcc_mode(HpccMode::Probe), 1_000_000);
    let a = equivalent("HPCC++ probe mode, sender", &record(&s, Side::Sender));
    assert!(
        count(&a, |d| matches!(d.request, Request::Probe { .. })) > 10,
        "probe requests"
    );
    let a = equivalent("HPCC++ probe mode, responder", &record(&s, Side::Receiver));
    assert!(
        count(&a, |d| matches!(d.request, Request::ProbeReply { .. })) > 10,
        "probe replies"
    );
}

#[test]
fn rx_hpcc() {
    let s = incast(2, 0.3, hpcc_mode(HpccMode::RxHpcc), 1_000_000);
    let a = equivalent("Rx-HPCC, receiver", &record(&s, Side::Receiver));
    assert!(
        count(&a, |d| matches!(d.request, Request::Feedback { .. })) > 10,
        "receiver feedback"
    );
    let a = equivalent("Rx-HPCC, sender", &record(&s, Side::Sender));
    assert!(a.iter().all(|(_, d)| d.is_ok()), "the sender takes every event");
}

/// LDCP's parameters, the draft's constants (alpha 1, beta 1/2, gamma 1/8).
fn ldcp() -> LdcpCfg {
    LdcpCfg {
        alpha: Prob(1.0),
        beta: Prob(0.5),
        gamma: Gamma(0.125),
    }
}

/// LDCP's window variant with fast start.
fn ldcp_window() -> Cc {
    Cc::Ldcp {
        params: ldcp(),
        fast_start: true,
    }
}

#[test]
fn ldcp_pawa_and_fast_start() {
    let trace = record(&incast(2, 0.5, ldcp_window(), 2_000_000), Side::Sender);
    let a = equivalent("LDCP 2-to-1", &trace);
    // Fast start: first-RTT packets Not-ECT, later ones ECN-capable.
    assert!(count(&a, |d| d.ecn == Ecn::NotEct) > 10);
    assert!(count(&a, |d| d.ecn == Ecn::Ect) > 100);
}

#[test]
fn ldcp_below_one_packet() {
    let trace = record(&incast(200, 0.4, ldcp_window(), 100_000), Side::AllSenders);
    let a = equivalent("LDCP 200-to-1", &trace);
    assert!(
        count(&a, |d| d.request == Request::ReleaseOne) > 100,
        "timer releases below one packet"
    );
    assert!(
        count(&a, |d| d.window.to_bits() < Window::from_bytes(1000).to_bits()) > 100,
        "windows below one MTU"
    );
}

#[test]
fn ldcp_cnp_variant() {
    let trace = record(&incast(4, 0.4, Cc::LdcpRate(ldcp()), 1_000_000), Side::Sender);
    let a = equivalent("LDCP CNP variant", &trace);
    assert!(
        count(&a, |d| matches!(d.request, Request::Probe { .. })) > 10,
        "RTT probes"
    );
}

/// DCTCP: the window is cut on ECE and grows back between cuts.
#[test]
fn dctcp_cuts_and_grows() {
    let trace = record(
        &incast(4, 0.4, Cc::registered(Algorithm::Dctcp).unwrap(), 1_000_000),
        Side::Sender,
    );
    let a = equivalent("DCTCP 4-to-1", &trace);
    let windows: Vec<u32> = a
        .iter()
        .filter_map(|(_, d)| d.as_ref().ok())
        .map(|d| d.window.to_bits())
        .collect();
    let w_max = windows.iter().copied().max().unwrap();
    assert!(windows.iter().filter(|&&w| w < w_max / 2).count() > 100, "windows cut");
    assert!(
        windows.windows(2).filter(|p| p[1] > p[0]).count() > 100,
        "windows growing"
    );
}

/// The pacing of every decision among `answers` (2^-4 byte a period).
fn pacing(answers: &[Answer]) -> Vec<u64> {
    answers
        .iter()
        .filter_map(|(_, d)| d.as_ref().ok())
        .map(|d| d.pacing.bytes.to_bits() as u64)
        .collect()
}

/// DCQCN: CNPs, its decrease checks and increase timer, on both cores.
#[test]
fn dcqcn_cnps_and_timers() {
    let mut s = incast(4, 0.6, Cc::registered(Algorithm::Dcqcn).unwrap(), 2_000_000);
    s.switch.drop_k_bytes = Some(Bytes(u64::MAX >> 24));
    let a = equivalent("DCQCN 4-to-1", &record(&s, Side::Sender));
    let armed = count(&a, |d| matches!(d.timer, TimerRequest::Arm(_)));
    assert!(armed > 20, "{armed} timers armed");
    let rates = pacing(&a);
    let top = rates.iter().copied().max().unwrap();
    assert!(rates.iter().filter(|&&r| r < top / 2 + 1).count() > 20, "rates cut");
}

/// TIMELY: rates from the ACKs' RTT samples, cut and grown, on every core
/// and through the C API, with no telemetry and no marking.
#[test]
fn timely_rtt_gradient() {
    let mut s = incast(4, 0.6, Cc::registered(cc_core::Algorithm::Timely).unwrap(), 2_000_000);
    s.switch.ecn_pmax = Some(Prob(0.0));
    s.switch.drop_k_bytes = Some(Bytes(u64::MAX >> 24));
    let a = equivalent("TIMELY 4-to-1", &record(&s, Side::Sender));
    let rates = pacing(&a);
    let top = rates.iter().copied().max().unwrap();
    assert!(rates.iter().filter(|&&r| r < top / 2).count() > 20, "rates cut");
    assert!(rates.windows(2).filter(|p| p[1] > p[0]).count() > 20, "rates growing");
}

/// The NICs' samples on the simulator's ACKs (Swift's input): each ACK of
/// a 4-to-1 incast through one switch carries t1..t4 from which the engine
/// takes its round trip (within a nanosecond of the ACK's RTT sample, the
/// two rounded apart) and a fabric delay of at least the four links' 4 µs
/// that grows with the switch's queue, and one forward hop (TTL 64 → 63).
#[test]
fn acks_carry_the_nics_samples() {
    let s = incast(4, 0.3, Cc::registered(cc_core::Algorithm::Timely).unwrap(), 2_000_000);
    let trace = record(&s, Side::Sender);
    let (mut at, mut fabric) = (0, Vec::new());
    loop {
        let f = codec::read_frame(&trace[at..]).expect("traces are well formed");
        at += f.len;
        match f.kind {
            FrameKind::Halt => break,
            FrameKind::Event => {
                if let EventKind::Ack(a) = codec::decode_event(&f).unwrap().event().kind {
                    let n = a.nic.expect("every ACK carries the NICs' sample");
                    let (rtt, fab) = n.delays().expect("the simulator's samples are sane");
                    assert_eq!(n.forward_hops, 1, "{n:?}");
                    assert!(rtt.abs_diff(a.rtt_ns.unwrap()) <= 1, "{n:?} vs {:?}", a.rtt_ns);
                    assert!((4_000..=rtt).contains(&fab), "{n:?}");
                    fabric.push(fab);
                }
            }
            _ => {}
        }
    }
    let (lo, hi) = (fabric.iter().min().unwrap(), fabric.iter().max().unwrap());
    assert!(
        fabric.len() > 500 && hi - lo > 20_000,
        "{} ACKs, fabric delay {lo} ..= {hi} ns",
        fabric.len()
    );
}

/// Swift on the shipped 2-to-1 (`scenarios/swift-2to1.toml`, cut to 4 ms):
/// the sender's trace replays bit for bit on every core and through the C
/// API, and past its first millisecond the fabric delay its ACKs carry
/// averages within 10 % of the target the engine held each against (base
/// 25 µs, 1 µs for the one switch, the flow scaling at the window then).
#[test]
fn swift_2to1_holds_its_fabric_delay_at_the_target() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/swift-2to1.toml");
    let mut s = scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
    s.stop_ms = TimeMs(4.0);
    let trace = record(&s, Side::Sender);
    equivalent("Swift 2-to-1", &trace);
    let cfg = cc_core::swift::SwiftConfig::falcon();
    let mut flow: Option<cc_core::swift::Swift> = None;
    let (mut at, mut fabric, mut target) = (0, 0.0, 0.0);
    loop {
        let f = codec::read_frame(&trace[at..]).expect("traces are well formed");
        at += f.len;
        if f.kind == FrameKind::Halt {
            break;
        }
        if f.kind != FrameKind::Event {
            continue;
        }
        let ev = codec::decode_event(&f).unwrap();
        let e = ev.event();
        match (e.kind, flow.as_mut()) {
            (EventKind::Start(p), None) if e.flow == FlowId(0) => {
                flow = Some(cc_core::swift::Swift::new(&cfg, &p, ev.now).unwrap());
            }
            (EventKind::Ack(a), Some(sw)) if e.flow == FlowId(0) => {
                let n = a.nic.unwrap();
                if ev.now.as_nanos() > 1_000_000 {
                    fabric += n.delays().unwrap().1 as f64;
                    target += sw.target_ns(&cfg, n.forward_hops) as f64;
                }
                let _ = cc_core::controller::Controller::ack(sw, &cfg, ev.now, &a);
            }
            (EventKind::Loss { first_lost, .. }, Some(sw)) if e.flow == FlowId(0) => {
                let _ = cc_core::controller::Controller::loss(sw, &cfg, ev.now, first_lost);
            }
            _ => {}
        }
    }
    assert!(target > 0.0, "no ACKs after the first millisecond");
    let ratio = fabric / target;
    assert!((0.9..=1.1).contains(&ratio), "mean fabric delay / target = {ratio:.3}");
}

/// θ-PowerTCP on the shipped 2-to-1 (`scenarios/theta-powertcp-2to1.toml`,
/// cut to 1.5 ms): the sender's trace replays bit for bit on every core and
/// through the C API; the window, cut from the BDP it starts at to about
/// 60 % of it (the two flows' equilibrium), moves both ways around it.
#[test]
fn theta_powertcp_2to1_replays_bit_for_bit() {
    replays_with_windows_moving("theta-powertcp-2to1", "θ-PowerTCP 2-to-1");
}

/// The sender's trace of `scenarios/NAME.toml`, cut to 1.5 ms, replayed
/// bit for bit; more than 1000 of its windows below three quarters of the
/// largest, and more than 50 rises.
fn replays_with_windows_moving(name: &str, what: &str) {
    replays_with_windows_moving_for(name, what, 1.5)
}

/// [`replays_with_windows_moving`], the trace cut to `ms`.
fn replays_with_windows_moving_for(name: &str, what: &str, ms: f64) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../scenarios/{name}.toml"));
    let mut s = scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
    s.stop_ms = TimeMs(ms);
    let a = equivalent(what, &record(&s, Side::Sender));
    let windows: Vec<u32> = a
        .iter()
        .filter_map(|(_, d)| d.as_ref().ok())
        .map(|d| d.window.to_bits())
        .collect();
    let top = windows.iter().copied().max().unwrap();
    assert!(
        windows.iter().filter(|&&w| w < top / 4 * 3).count() > 1000,
        "{what}: windows cut"
    );
    assert!(
        windows.windows(2).filter(|p| p[1] > p[0]).count() > 50,
        "{what}: windows growing"
    );
}

/// PowerTCP on the shipped 2-to-1 (`scenarios/powertcp-2to1.toml`, cut
/// to 1.5 ms): the sender's trace, with the switches' compact telemetry on
/// every ACK, replays bit for bit on every core and through the C API;
/// the window, cut from the BDP it starts at toward the two flows'
/// equilibrium, moves both ways.
#[test]
fn powertcp_2to1_replays_bit_for_bit() {
    replays_with_windows_moving("powertcp-2to1", "PowerTCP 2-to-1");
}

/// NSCC 8-to-1 (`scenarios/nscc-incast8.toml`, cut to 4 ms): the first
/// sender's trace, ACKs with RTT samples and ECN echoes, replays bit for
/// bit on every core and through the C API; its window, cut from the
/// ceiling it starts at toward an eighth of the path's BDP and target
/// queue, moves both ways (the increases come at the fulfils, every 8 MTU
/// received: cut to 1.5 ms, fewer than 50).
#[test]
fn nscc_incast8_replays_bit_for_bit() {
    replays_with_windows_moving_for("nscc-incast8", "NSCC 8-to-1", 4.0);
}

/// NSCC on uet-htsim's trimming switches and SACK transport
/// (`scenarios/uet-incast.toml`, 15 hosts into one, cut to 0.5 ms): the
/// first sender's trace, with the NACKs of its trimmed packets and ACKs
/// that count the receiver's bytes, replays bit for bit on every core and
/// through the C API, the flow sprayed over 64 paths by the engine's
/// mixed chooser: every packet's EV, and what each ACK, NACK and timeout
/// taught it, are the host engine's.
#[test]
fn nscc_over_trimming_replays_bit_for_bit() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut s = scenario::load(&dir.join("uet-incast.toml")).unwrap_or_else(|e| panic!("{e}"));
    s.stop_ms = TimeMs(0.5);
    let mut w = World::new(&s, &dir, "trace").unwrap();
    let host = Some(w.flows[0].src_host);
    w.record(Selection { host, flows: None }).unwrap();
    w.run(|_| {});
    let trace = w.tap.trace.take().unwrap().finish();
    let (mut nacks, mut acks, mut sprays, mut at) = (0, 0, 0, 0);
    loop {
        let f = codec::read_frame(&trace[at..]).expect("traces are well formed");
        at += f.len;
        match f.kind {
            FrameKind::Event => match codec::decode_event(&f).unwrap().event().kind {
                EventKind::Nack(n) => nacks += n.ev.is_some() as u32,
                EventKind::Ack(a) => acks += a.ev.is_some() as u32,
                EventKind::Spray(_) => sprays += 1,
                _ => {}
            },
            FrameKind::Halt => break,
            _ => {}
        }
    }
    eprintln!("NSCC over trimming: {nacks} NACKs and {acks} ACKs in the trace");
    // 58 NACKs and 93 ACKs when written: the first round's burst trims.
    // Each names its packet's path.
    assert!(
        nacks >= 20 && acks >= 40,
        "{nacks} NACKs, {acks} ACKs with EVs in the trace"
    );
    assert_eq!(sprays, 1, "the flow sprays");
    let a = equivalent("NSCC over trimming", &trace);
    assert!(a.iter().all(|(_, d)| d.is_ok()), "every event answered");
    let evs: std::collections::BTreeSet<cc_core::path::Ev> =
        a.iter().filter_map(|(_, d)| d.as_ref().ok()?.ev).collect();
    assert!(evs.len() > 32, "the packets spread over the paths: {} EVs", evs.len());
}

/// HPCC-PINT 2-to-1 with two-byte codes: the sender's ACKs, each with the
/// code its data collected, replayed bit for bit on every core and through
/// the C API; the window, cut from the BDP to about half of it (two flows
/// at η), moves both ways.
#[test]
fn hpcc_pint_2to1_replays_bit_for_bit() {
    replays_with_windows_moving("hpcc-pint-2to1", "HPCC-PINT 2-to-1");
}

/// Five hops: built here (the simulator's topologies have at most three
/// switch hops on a path), with 20-bit counters wrapping many times.
#[test]
fn hpcc_five_hops() {
    five_hops(Algorithm::Hpcc, "HPCC++ 5 hops", 100);
}

/// PowerTCP on the same five hops, through the hop walk it shares with
/// HPCC++: bit for bit on every core and through the C API. Its window
/// law runs once per RTT, an RTT being 150 ACKs here: 13 updates.
#[test]
fn powertcp_five_hops() {
    five_hops(Algorithm::PowerTcp, "PowerTCP 5 hops", 10);
}

/// A trace of 2000 ACKs over five hops for `algorithm`, replayed; its
/// windows take more than `distinct` values.
fn five_hops(algorithm: Algorithm, what: &str, distinct: usize) {
    let mut out = Vec::new();
    let mut buf = [0u8; MAX_FRAME];
    let cfg = AnyConfig::DEFAULT;
    let n = codec::encode_config(&cfg, &mut buf).unwrap();
    out.extend_from_slice(&buf[..n]);
    let mut push = |now: u64, kind: EventKind<'_>, out: &mut Vec<u8>| {
        let n = codec::encode_event(Instant::from_nanos(now), &Event { flow: FlowId(9), kind }, &mut buf).unwrap();
        out.extend_from_slice(&buf[..n]);
    };
    let p = FlowParams {
        algorithm,
        base_rtt: BaseRtt::from_nanos(12_000).unwrap(),
        line_rate: LinkSpeed::from_gbps(100),
        start_seq: Seq(0),
    };
    push(0, EventKind::Start(p), &mut out);
    let mut hops: Vec<HopSample> = (0..5)
        .map(|i| HopSample {
            ts: 0,
            tx: 0,
            qlen_bytes: 0,
            sojourn_ns: 0,
            bandwidth: LinkSpeed::from_gbps(if i == 3 { 100 } else { 400 }),
            id: i,
            widths: CounterWidths::new(24, 20, 64).unwrap(),
            tx_utilization: TxUtilization::NONE,
        })
        .collect();
    let (mut rng, mut q, mut t) = (0x2545_F491_4F6C_DD1Du64, 0i64, 0u64);
    for i in 0..2000u32 {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let dt = 600 + (rng % 600) as u32;
        q = (q + (rng >> 32) as i64 % 3000 - 1400).clamp(0, 400_000);
        t += dt as u64;
        for h in hops.iter_mut() {
            h.ts = h.ts.wrapping_add(dt) & 0xFF_FFFF;
            h.tx = h.tx.wrapping_add(dt * 100 / 8 / 64 + (rng % 7) as u32) & 0xF_FFFF;
            h.qlen_bytes = if h.id == 3 { q as u32 } else { (q / 8) as u32 };
        }
        let seq = Seq(i * 1000);
        push(
            t,
            EventKind::Sent {
                seq: seq.add(150_000),
                len: 1000,
                end: MessageEnd::More,
            },
            &mut out,
        );
        let ack = Ack {
            telemetry: &hops,
            ..Ack::new(seq, seq.add(150_000))
        };
        push(t, EventKind::Ack(ack), &mut out);
    }
    let n = codec::encode_halt(&mut buf).unwrap();
    out.extend_from_slice(&buf[..n]);
    let a = equivalent(what, &out);
    let windows: std::collections::BTreeSet<u32> = a
        .iter()
        .filter_map(|(_, d)| d.as_ref().ok().map(|d| d.window.to_bits()))
        .collect();
    assert!(windows.len() > distinct, "{} distinct windows", windows.len());
}

/// Co-simulation: flow 0's sender-side congestion control runs in the
/// riscv32 firmware under QEMU; every figure of the run equals the
/// in-process run's.
#[test]
fn cosimulation_equals_the_in_process_run() {
    let s = incast(2, 0.4, hpcc_sigcomm(), 400_000);
    let run = |cosim: bool| {
        let mut w = World::new(&s, Path::new("."), "cosim.toml").unwrap();
        if cosim {
            let sel = Selection {
                host: Some(w.flows[0].src_host),
                flows: Some(vec![0]),
            };
            w.cosimulate(&firmware_dir().join("scripts/qemu.sh"), &images()[0], sel)
                .unwrap();
        }
        w.run(|_| {});
        let events = w.tap.cosim.take().map(|fw| fw.finish().unwrap());
        let mut sum = report::summary(&w, "cosim", &hal_sim::run::cpu::Stopwatch::start());
        sum.wall_s = 0.0;
        sum.cpu_s = 0.0;
        sum.data_packets_per_s = 0.0;
        (format!("{sum:?}"), format!("{:?}", report::flow_results(&w)), events)
    };
    let (local, local_flows, _) = run(false);
    let (hil, hil_flows, events) = run(true);
    let events = events.unwrap();
    assert!(events > 300, "the firmware answered {events} events");
    assert!(local_flows.contains("fct_ns: Some"), "flows finish: {local_flows}");
    assert_eq!(hil_flows, local_flows, "per-flow results");
    assert_eq!(hil, local, "summary");
    eprintln!(
        "co-simulation: {events} events of flow 0 answered by the riscv32 firmware; summary and per-flow results equal"
    );
}

/// Co-simulation of a whole host: every flow of one leaf-spine host, as
/// sender of its own flows and as Rx-HPCC receiver of others', runs in the
/// riscv32 firmware; the run's summary and every flow's results equal the
/// in-process run's.
#[test]
fn cosimulating_a_whole_leaf_spine_host_equals_the_in_process_run() {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/websearch-leafspine.toml"))
            .unwrap()
            .replace("stop_ms = 50.0", "stop_ms = 4.0")
            .replace("count = 400", "count = 120")
            .replace("wai_flows = 16", "wai_flows = 16\nmode = \"rx_hpcc\"");
    let s = scenario::parse(&text, "leafspine-cosim.toml").unwrap();
    let probe = World::new(&s, Path::new("."), "leafspine-cosim.toml").unwrap();
    // A host that both sends and receives flows in this run.
    let host = probe
        .flows
        .iter()
        .map(|f| f.src_host)
        .find(|h| probe.flows.iter().any(|f| f.dst_host == *h))
        .expect("some host both sends and receives");
    let (sends, receives) = (
        probe.flows.iter().filter(|f| f.src_host == host).count(),
        probe.flows.iter().filter(|f| f.dst_host == host).count(),
    );
    let run = |cosim: bool| {
        let mut w = World::new(&s, Path::new("."), "leafspine-cosim.toml").unwrap();
        if cosim {
            let sel = Selection {
                host: Some(host),
                flows: None,
            };
            w.cosimulate(&firmware_dir().join("scripts/qemu.sh"), &images()[0], sel)
                .unwrap();
        }
        w.run(|_| {});
        let rate = w.tap.cosim.as_ref().map(|fw| fw.events_per_second());
        let events = w.tap.cosim.take().map(|fw| fw.finish().unwrap());
        let mut sum = report::summary(&w, "cosim", &hal_sim::run::cpu::Stopwatch::start());
        sum.wall_s = 0.0;
        sum.cpu_s = 0.0;
        sum.data_packets_per_s = 0.0;
        (
            format!("{sum:?}"),
            format!("{:?}", report::flow_results(&w)),
            events,
            rate,
        )
    };
    let (local, local_flows, _, _) = run(false);
    let (hil, hil_flows, events, rate) = run(true);
    let events = events.unwrap();
    assert!(events > 1_000, "the firmware answered {events} events");
    assert_eq!(hil_flows, local_flows, "per-flow results");
    assert_eq!(hil, local, "summary");
    eprintln!(
        "co-simulation of host {host} ({sends} flows sent, {receives} received, Rx-HPCC): {events} events answered by the riscv32 firmware at {:.0} events/s; summary and per-flow results equal",
        rate.unwrap_or(0.0)
    );
}

/// The callback-shaped example (cc-ffi/examples/c/pcc_shape.c) checks
/// the drafts' reactions through the C API on every core: HPCC++ slows
/// behind a standing queue and speeds up when the link empties, DCQCN
/// halves at its first CNP, LDCP's rate variant cuts at a CNP.
#[test]
fn c_callback_example_holds_on_every_core() {
    for core in C_CORES {
        let (status, out) = run_c(core, "pcc_shape", &[]);
        let text = String::from_utf8_lossy(&out);
        assert!(status.success(), "pcc_shape on {core}: {status}\n{text}");
        assert!(
            text.contains("pcc_shape: all checks hold"),
            "pcc_shape on {core}:\n{text}"
        );
        assert!(!text.contains("FAIL"), "pcc_shape on {core}:\n{text}");
    }
}
