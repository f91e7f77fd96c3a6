//! The engine paths the benchmark measures and the profiler traces: each
//! event kind as a firmware runs it, from [`Engine::event`] with the flow's
//! handle (the NIC's flow context) to the decision. One definition, so the
//! profile is of exactly the events the benchmark counts.

use core::hint::black_box;

use cc_core::algorithms::{AlgorithmConfig, ConfigVisitor};
use cc_core::bench::AckBench;
use cc_core::engine::FlowHandle;
use cc_core::prelude::*;

use super::workload::{self, hpcc_ack, hpcc_config, hpcc_params, ldcp_ack, ldcp_setup, Telemetry};

/// One event kind's engine path.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Path {
    LdcpAck,
    LdcpTimer,
    HpccAck1,
    /// Two hops: the general walk's shortest stack (one hop has a path of
    /// its own), from which hal-sim's processor model takes the cost of
    /// every stack longer than one hop.
    HpccAck2,
    HpccAck5,
    HpccAck5OneQueue,
    RxHpcc5,
    ProbeResponse,
    /// The ACK row of an algorithm of the registry that names one
    /// (cc-core's `AlgorithmConfig::ACK_BENCH`).
    Ack(Algorithm),
    /// The CNP row of an algorithm of the registry that names one
    /// (`AlgorithmConfig::CNP_BENCH`).
    Cnp(Algorithm),
    /// The NACK row of an algorithm of the registry that names one
    /// (`AlgorithmConfig::NACK_BENCH`).
    Nack(Algorithm),
    /// The timeout row of an algorithm of the registry that names one
    /// (`AlgorithmConfig::LOSS_BENCH`).
    Loss(Algorithm),
    /// A sprayed NSCC flow's `Sent`: the packet's EV from the mixed
    /// chooser over 128 paths.
    SprayedSent,
    /// A sprayed NSCC flow's ACK with its packet's EV: NSCC's ACK and the
    /// mixed chooser's answer.
    SprayedAck,
    /// HPCC++'s 5-hop ACK from Rust on the controller the C API runs
    /// (`HpccSender<MAX_HOPS>`, eight hops of history): what the C API's
    /// 5-hop row is held to, so that their difference is the boundary's
    /// own cost and not two instantiations' register allocations. Only in
    /// the image without the C API: a Rust caller of the C API's
    /// controller beside the C table changes what is inlined into the C
    /// API's rows.
    #[cfg(not(feature = "c-api"))]
    HpccAck5Wide,
    #[cfg(feature = "c-api")]
    LdcpAckC,
    #[cfg(feature = "c-api")]
    HpccAck5C,
}

impl Path {
    /// Every path: those below, then the registry's CNP, ACK, NACK and
    /// timeout rows, then the C API's.
    pub fn all() -> impl Iterator<Item = Path> {
        let (own, c_api) = Path::BY_HAND.split_at(Path::BY_HAND.iter().take_while(|p| !p.is_c_api()).count());
        let cnp = Algorithm::ALL
            .into_iter()
            .filter(|a| a.cnp_bench().is_some())
            .map(Path::Cnp);
        let ack = Algorithm::ALL
            .into_iter()
            .filter(|a| a.ack_bench().is_some())
            .map(Path::Ack);
        let nack = Algorithm::ALL
            .into_iter()
            .filter(|a| a.nack_bench().is_some())
            .map(Path::Nack);
        let loss = Algorithm::ALL
            .into_iter()
            .filter(|a| a.loss_bench().is_some())
            .map(Path::Loss);
        own.iter()
            .copied()
            .chain(cnp)
            .chain(ack)
            .chain(nack)
            .chain(loss)
            .chain(c_api.iter().copied())
    }

    /// Whether the row runs through the C API (cc-ffi).
    const fn is_c_api(self) -> bool {
        self.rust_row().is_some()
    }

    /// The paths the benchmark drives by hand.
    const BY_HAND: &[Path] = &[
        Path::LdcpAck,
        Path::LdcpTimer,
        Path::HpccAck1,
        Path::HpccAck2,
        Path::HpccAck5,
        Path::HpccAck5OneQueue,
        Path::RxHpcc5,
        Path::ProbeResponse,
        Path::SprayedSent,
        Path::SprayedAck,
        #[cfg(not(feature = "c-api"))]
        Path::HpccAck5Wide,
        #[cfg(feature = "c-api")]
        Path::LdcpAckC,
        #[cfg(feature = "c-api")]
        Path::HpccAck5C,
    ];

    /// The name the profiler is given.
    pub const fn name(self) -> &'static str {
        match self {
            Path::LdcpAck => "ldcp-ack",
            Path::LdcpTimer => "ldcp-timer",
            Path::HpccAck1 => "hpcc-ack-1",
            Path::HpccAck2 => "hpcc-ack-2",
            Path::HpccAck5 => "hpcc-ack-5",
            Path::HpccAck5OneQueue => "hpcc-ack-5-one-queue",
            Path::RxHpcc5 => "rx-hpcc-5",
            Path::ProbeResponse => "probe-response",
            Path::SprayedSent => "sprayed-sent",
            Path::SprayedAck => "sprayed-ack",
            Path::Ack(a) => match a.ack_bench() {
                Some(b) => b.name,
                None => "",
            },
            Path::Cnp(a) => match a.cnp_bench() {
                Some(b) => b.name,
                None => "",
            },
            Path::Nack(a) => match a.nack_bench() {
                Some(b) => b.name,
                None => "",
            },
            Path::Loss(a) => match a.loss_bench() {
                Some(b) => b.name,
                None => "",
            },
            #[cfg(not(feature = "c-api"))]
            Path::HpccAck5Wide => "hpcc-ack-5-wide",
            #[cfg(feature = "c-api")]
            Path::LdcpAckC => "ldcp-ack-c",
            #[cfg(feature = "c-api")]
            Path::HpccAck5C => "hpcc-ack-5-c",
        }
    }

    /// The benchmark table's row label.
    pub const fn label(self) -> &'static str {
        match self {
            Path::LdcpAck => "LDCP ACK (PAWA)",
            Path::LdcpTimer => "LDCP timer (cw < 1)",
            Path::HpccAck1 => "HPCC++ ACK, 1 hop",
            Path::HpccAck2 => "HPCC++ ACK, 2 hops",
            Path::HpccAck5 => "HPCC++ ACK, 5 hops",
            Path::HpccAck5OneQueue => "HPCC++ ACK, 5 hops, 1 queue",
            Path::RxHpcc5 => "Rx-HPCC telemetry, 5 hops",
            Path::ProbeResponse => "HPCC++ probe response",
            Path::SprayedSent => "Sprayed Sent, mixed, 128",
            Path::SprayedAck => "Sprayed NSCC ACK, mixed",
            Path::Ack(a) => match a.ack_bench() {
                Some(b) => b.row,
                None => "",
            },
            Path::Cnp(a) => match a.cnp_bench() {
                Some(b) => b.row,
                None => "",
            },
            Path::Nack(a) => match a.nack_bench() {
                Some(b) => b.row,
                None => "",
            },
            Path::Loss(a) => match a.loss_bench() {
                Some(b) => b.row,
                None => "",
            },
            #[cfg(not(feature = "c-api"))]
            Path::HpccAck5Wide => "HPCC++ 5 hops, 8-hop history",
            #[cfg(feature = "c-api")]
            Path::LdcpAckC => "LDCP ACK, C API",
            #[cfg(feature = "c-api")]
            Path::HpccAck5C => "HPCC++ ACK, 5 hops, C API",
        }
    }

    /// The instruction target for the engine path (DESIGN §8): rv32imac's
    /// (the strict row, also shown for rv64imac), or the DPA-class core's
    /// on an image built with Zbb; the baselines have none (they are
    /// measured for comparison).
    pub const fn target(self) -> Option<u64> {
        let dpa = cfg!(target_feature = "zbb");
        match self {
            // DESIGN §8: LDCP no higher than it is (the ACK's mean and
            // max both at most today's max); HPCC++ at the hop walk's
            // accepted slope with the rest of the event at its floor.
            Path::LdcpAck => Some(if dpa { 90 } else { 100 }),
            Path::LdcpTimer => Some(if dpa { 77 } else { 85 }),
            Path::HpccAck1 => Some(if dpa { 350 } else { 450 }),
            Path::ProbeResponse => Some(if dpa { 300 } else { 400 }),
            Path::HpccAck5 | Path::HpccAck5OneQueue => Some(if dpa { 820 } else { 1050 }),
            Path::RxHpcc5 => Some(if dpa { 770 } else { 1030 }),
            Path::Ack(a) => match a.ack_bench() {
                Some(AckBench {
                    targets: Some((rv32, zbb)),
                    ..
                }) => Some(if dpa { zbb as u64 } else { rv32 as u64 }),
                _ => None,
            },
            // The baselines' CNP rows are measured for comparison; NACK
            // and timeout rows have no target.
            Path::Cnp(_) | Path::Nack(_) | Path::Loss(_) => None,
            // Path choice's cost, measured: no target in DESIGN §8.
            Path::SprayedSent | Path::SprayedAck => None,
            // The general walk's shortest stack, for the processor model.
            Path::HpccAck2 => None,
            // Held to their Rust rows instead (`Path::rust_row`).
            #[cfg(feature = "c-api")]
            Path::LdcpAckC | Path::HpccAck5C => None,
            // Measured as the C API's 5-hop row's base, with no target of
            // its own.
            #[cfg(not(feature = "c-api"))]
            Path::HpccAck5Wide => None,
        }
    }

    /// For a row through the C API (cc-ffi), the label of the Rust engine
    /// path it is held to, on the same controller (the image without the
    /// C API measures it): the boundary's own cost, at most +40
    /// instructions on an LDCP ACK and +80 on an HPCC++ 5-hop ACK.
    pub const fn rust_row(self) -> Option<&'static str> {
        match self {
            #[cfg(feature = "c-api")]
            Path::LdcpAckC => Some("LDCP ACK (PAWA)"),
            #[cfg(feature = "c-api")]
            Path::HpccAck5C => Some("HPCC++ 5 hops, 8-hop history"),
            _ => None,
        }
    }

    /// The hops an HPCC++ ACK row's ACKs carry.
    pub fn hops(self) -> usize {
        match self {
            Path::HpccAck1 => 1,
            Path::HpccAck2 => 2,
            _ => 5,
        }
    }

    /// The telemetry an HPCC++ ACK row's ACKs carry.
    pub fn telemetry(self) -> Telemetry {
        match self {
            Path::HpccAck5OneQueue => Telemetry::one_queue(),
            _ => Telemetry::new(),
        }
    }

    pub fn from_name(name: &[u8]) -> Option<Path> {
        Path::all().find(|p| p.name().as_bytes() == name)
    }
}

/// What runs around each event: `prep` was built outside, `event` is the
/// engine path to count.
pub trait Bracket {
    fn around<P>(&mut self, prep: P, event: impl FnOnce(&P));
}

/// An engine of `C` with flow 1 started: the engine and the flow's handle
/// (exit status 3 if the parameters were refused).
fn started<C: Controller>(cfg: C::Config, p: FlowParams) -> (Engine<C, 4>, FlowHandle) {
    let Ok(mut eng) = Engine::new(cfg) else {
        nic_firmware::exit(3)
    };
    let Ok((h, _)) = eng.start(Instant::ZERO, FlowId(1), &p) else {
        nic_firmware::exit(3)
    };
    (eng, h)
}

/// Bytes for a C API engine of a few flows (`cc_engine_size(4)` is about 1.7 KiB).
#[cfg(feature = "c-api")]
const C_MEM: usize = 256;

/// An engine of the C API (cc-ffi) in `mem`, with `cfg`'s HPCC++ and LDCP
/// parts (the rows' only ones) and flow `p` started: the engine and the
/// flow's handle (exit status 3 if refused).
#[cfg(feature = "c-api")]
fn c_started(mem: &mut [u128; C_MEM], cfg: &AnyConfig, p: &FlowParams) -> (*mut cc_ffi::cc_engine, u32) {
    let hpcc = cc_ffi::cc_hpcc_config::from(&cfg.hpcc);
    let ldcp = cc_ffi::cc_ldcp_config::from(&cfg.ldcp);
    let mut e = core::ptr::null_mut();
    let len = core::mem::size_of_val(mem);
    // SAFETY: `mem` is `len` writable bytes, 16-aligned, used by no one
    // else; the structs are live and of the sizes passed.
    let s = unsafe {
        [
            cc_ffi::cc_engine_init(mem.as_mut_ptr().cast(), len, 4, &mut e),
            cc_ffi::cc_engine_configure(
                e,
                cc_ffi::CC_ALGORITHM_HPCC,
                (&hpcc as *const cc_ffi::cc_hpcc_config).cast(),
                core::mem::size_of_val(&hpcc),
            ),
            cc_ffi::cc_engine_configure(
                e,
                cc_ffi::CC_ALGORITHM_LDCP,
                (&ldcp as *const cc_ffi::cc_ldcp_config).cast(),
                core::mem::size_of_val(&ldcp),
            ),
        ]
    };
    let (mut h, mut d) = (0, cc_ffi::cc_decision::default());
    // SAFETY: `e` was just made; the pointers are valid.
    let started = unsafe { cc_ffi::cc_flow_start(e, 0, &cc_ffi::cc_flow_params::from(p), &mut h, &mut d) };
    if s.iter().any(|&s| s != cc_ffi::cc_status::Ok) || started != cc_ffi::cc_status::Ok {
        nic_firmware::exit(3)
    }
    (e, h)
}

/// A C API ACK of `a`, its hops at `hops`.
#[cfg(feature = "c-api")]
fn c_ack(a: &Ack<'_>, hops: &[cc_ffi::cc_hop]) -> cc_ffi::cc_ack {
    cc_ffi::cc_ack {
        cum_ack: a.cum_ack.0,
        snd_nxt: a.snd_nxt.0,
        ece: (a.ece == EcnEcho::Marked) as u8,
        has_rtt: a.rtt_ns.is_some() as u8,
        has_nic: 0,
        rx_buffer_level: 0,
        rtt_ns: a.rtt_ns.unwrap_or(0),
        t1_ns: 0,
        t2_ns: 0,
        t3_ns: 0,
        t4_ns: 0,
        hops: hops.as_ptr(),
        n_hops: hops.len() as u32,
        forward_hops: 0,
        pint_width: a.pint.map_or(0, |p| p.width.bytes() as u8),
        pint_code: a.pint.map_or(0, |p| p.code),
        ev: a.ev.unwrap_or_default().get(),
        has_ev: a.ev.is_some() as u8,
        reserved: 0,
    }
}

/// Every algorithm's configuration, `ldcp` and `hpcc` as the Rust rows have them.
#[cfg(feature = "c-api")]
fn c_config(ldcp: LdcpConfig) -> AnyConfig {
    AnyConfig {
        hpcc: hpcc_config(),
        ldcp,
        ..AnyConfig::DEFAULT
    }
}

/// Runs `events` events of `path` through `b`. Each path is a function
/// of its own, never inlined: one path's locals (the HPCC++ rows' hop
/// arrays) would otherwise grow a shared frame past the reach of a
/// 12-bit offset, and every `black_box` slot inside a bracket would cost
/// the other rows three instructions instead of one.
pub fn run(path: Path, events: u32, b: &mut impl Bracket) {
    match path {
        Path::LdcpAck => ldcp_ack_path(events, b),
        Path::LdcpTimer => ldcp_timer_path(events, b),
        Path::HpccAck1 | Path::HpccAck2 | Path::HpccAck5 | Path::HpccAck5OneQueue => {
            hpcc_ack_path::<5>(path, events, b)
        }
        #[cfg(not(feature = "c-api"))]
        Path::HpccAck5Wide => hpcc_ack_path::<{ cc_core::wire::MAX_HOPS }>(path, events, b),
        Path::RxHpcc5 => rx_hpcc_path(events, b),
        Path::Cnp(a) => registered_path(a, Kind::Cnp, events, b),
        Path::Ack(a) => registered_path(a, Kind::Ack, events, b),
        Path::Nack(a) => registered_path(a, Kind::Nack, events, b),
        Path::Loss(a) => registered_path(a, Kind::Loss, events, b),
        #[cfg(feature = "c-api")]
        Path::LdcpAckC => ldcp_ack_c_path(events, b),
        #[cfg(feature = "c-api")]
        Path::HpccAck5C => hpcc_ack_5_c_path(path, events, b),
        Path::ProbeResponse => probe_response_path(events, b),
        Path::SprayedSent | Path::SprayedAck => sprayed_path(path, events, b),
    }
}

/// A sprayed NSCC flow (the mixed chooser over 128 paths): its `Sent`
/// events 500 ns apart, or its ACKs (NSCC's own row's) each with the EV
/// its packet took, a round of the paths in turn, every fourth marked.
#[inline(never)]
fn sprayed_path(path: Path, events: u32, b: &mut impl Bracket) {
    use cc_core::nscc::{Nscc, NsccConfig};
    use cc_core::path::{Balancer, Paths, Spray, Sprayer};
    let Ok(mut eng) = Engine::<Nscc, 4, Sprayer>::new(NsccConfig::DEFAULT) else {
        nic_firmware::exit(3)
    };
    let Ok((h, _)) = eng.start(Instant::ZERO, FlowId(1), &hpcc_params(Algorithm::Nscc)) else {
        nic_firmware::exit(3)
    };
    let (Some(paths), Some(bench)) = (Paths::new(128), NsccConfig::ACK_BENCH) else {
        nic_firmware::exit(3)
    };
    let spray = Spray {
        paths,
        balancer: Balancer::Mixed,
        seed: 13,
    };
    if eng.spray(h, Instant::ZERO, &spray).is_err() {
        nic_firmware::exit(3)
    }
    let at = |i: u32, interval: u64| Instant::from_nanos((i as u64 + 1) * interval);
    let mut hops = [HopSample::default(); 5];
    for i in 0..events {
        if path == Path::SprayedSent {
            b.around(at(i, 500), |now| {
                let d = black_box(&mut eng).sent(black_box(h), *now, Seq(i.wrapping_mul(4096)), 4096, MessageEnd::More);
                let _ = black_box(d);
            });
        } else {
            let ack = Ack {
                ev: Some(cc_core::path::Ev::new((i % 128) as u16)),
                ece: if i % 4 == 3 {
                    EcnEcho::Marked
                } else {
                    EcnEcho::NotMarked
                },
                ..(bench.ack)(i + 1, &mut hops)
            };
            b.around((at(i, bench.interval_ns as u64), ack), |(now, ack)| {
                let _ = black_box(black_box(&mut eng).ack(black_box(h), *now, ack));
            });
        }
    }
}

#[inline(never)]
fn ldcp_ack_path(events: u32, b: &mut impl Bracket) {
    let (cfg, p, _) = ldcp_setup();
    let (mut eng, h) = started::<Ldcp>(cfg, p);
    // ACK n = i + 1 arrives at n · 100 ns.
    for i in 0..events {
        let now = Instant::from_nanos((i as u64 + 1) * 100);
        b.around((now, ldcp_ack(i + 1)), |(now, ack)| {
            let _ = black_box(black_box(&mut eng).ack(black_box(h), *now, ack));
        });
    }
}

#[inline(never)]
fn ldcp_timer_path(events: u32, b: &mut impl Bracket) {
    let (cfg, p, _) = ldcp_setup();
    let (mut eng, h) = started::<Ldcp>(cfg, p);
    // cw = 1/4 packet: RTT/cw = 32 us, so every tick 32.016 us apart is due.
    if let Some(l) = eng.get_mut(h) {
        let _ = l.restore(&cfg, Instant::ZERO, Packets::from_bits(1 << 14));
    }
    for i in 0..events {
        let now = Instant::from_nanos((i as u64 + 1) * 32_016);
        b.around(now, |now| {
            let _ = black_box(black_box(&mut eng).timer(black_box(h), *now));
        });
    }
}

/// HPCC++ ACKs of one or five hops on a sender of `H` hops of history:
/// five for the benchmark's rows, the C API's eight for
/// [`Path::HpccAck5Wide`].
#[inline(never)]
fn hpcc_ack_path<const H: usize>(path: Path, events: u32, b: &mut impl Bracket) {
    let hops = path.hops();
    let (mut eng, h) = started::<HpccSender<H>>(hpcc_config(), hpcc_params(Algorithm::Hpcc));
    let mut t = path.telemetry();
    for i in 0..events {
        let now = Instant::from_nanos(i as u64 * 1000);
        let tel = t.next();
        b.around((now, hpcc_ack(i, &tel[..hops])), |(now, ack)| {
            let _ = black_box(black_box(&mut eng).ack(black_box(h), *now, ack));
        });
    }
}

#[inline(never)]
fn rx_hpcc_path(events: u32, b: &mut impl Bracket) {
    let p = hpcc_params(Algorithm::HpccReceiver);
    let (mut eng, h) = started::<HpccReceiver<5>>(hpcc_config(), p);
    let mut t = Telemetry::new();
    for i in 0..events {
        let now = Instant::from_nanos(i as u64 * 1000);
        b.around((now, t.next()), |(now, tel)| {
            let _ = black_box(black_box(&mut eng).rx_telemetry(black_box(h), *now, &tel[..]));
        });
    }
}

/// An event path of an algorithm of the registry: its sender's controller
/// with its defaults, driven by its module's `AckBench` (its ACKs) or
/// `CnpBench` (a CNP every `interval_ns`).
fn registered_path(a: Algorithm, kind: Kind, events: u32, b: &mut impl Bracket) {
    a.with_config(RegisteredPath { a, kind, events, b });
}

/// Which of an algorithm's registered rows.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Ack,
    Cnp,
    Nack,
    Loss,
}

/// [`registered_path`] for configuration type `C`.
struct RegisteredPath<'b, B> {
    a: Algorithm,
    kind: Kind,
    events: u32,
    b: &'b mut B,
}

impl<B: Bracket> ConfigVisitor for RegisteredPath<'_, B> {
    type Output = ();

    #[inline(never)]
    fn visit<C: AlgorithmConfig>(self) {
        // Five hops of history, as the HPCC++ rows (an algorithm that keeps
        // none has the same controller for any H).
        let (mut eng, h) = started::<C::Sender<5>>(C::DEFAULT, hpcc_params(self.a));
        let at = |i: u32, interval: u32| Instant::from_nanos((i as u64 + 1) * interval as u64);
        match self.kind {
            Kind::Cnp => {
                let Some(bench) = C::CNP_BENCH else {
                    nic_firmware::exit(3)
                };
                for i in 0..self.events {
                    self.b.around(at(i, bench.interval_ns), |now| {
                        let _ = black_box(black_box(&mut eng).cnp(black_box(h), *now));
                    });
                }
            }
            Kind::Ack => {
                let Some(bench) = C::ACK_BENCH else {
                    nic_firmware::exit(3)
                };
                let mut hops = [HopSample::default(); 5];
                for i in 0..self.events {
                    self.b.around(
                        (at(i, bench.interval_ns), (bench.ack)(i + 1, &mut hops)),
                        |(now, ack)| {
                            let _ = black_box(black_box(&mut eng).ack(black_box(h), *now, ack));
                        },
                    );
                }
            }
            Kind::Nack => {
                let Some(bench) = C::NACK_BENCH else {
                    nic_firmware::exit(3)
                };
                for i in 0..self.events {
                    self.b
                        .around((at(i, bench.interval_ns), (bench.nack)(i + 1)), |(now, nack)| {
                            let _ = black_box(black_box(&mut eng).nack(black_box(h), *now, nack));
                        });
                }
            }
            Kind::Loss => {
                let Some(bench) = C::LOSS_BENCH else {
                    nic_firmware::exit(3)
                };
                for i in 0..self.events {
                    self.b.around(at(i, bench.interval_ns), |now| {
                        let _ = black_box(black_box(&mut eng).loss(black_box(h), *now, Seq(i), None));
                    });
                }
            }
        }
    }
}

#[cfg(feature = "c-api")]
#[inline(never)]
fn ldcp_ack_c_path(events: u32, b: &mut impl Bracket) {
    let (cfg, p, _) = ldcp_setup();
    let mut mem = [0u128; C_MEM];
    let (e, h) = c_started(&mut mem, &c_config(cfg), &p);
    let mut d = cc_ffi::cc_decision::default();
    for i in 0..events {
        let now = (i as u64 + 1) * 100;
        b.around((now, c_ack(&ldcp_ack(i + 1), &[])), |(now, ack)| {
            // SAFETY: the engine and the ACK are valid.
            let _ = black_box(unsafe { cc_ffi::cc_on_ack(black_box(e), black_box(h), *now, ack, &mut d) });
        });
    }
}

#[cfg(feature = "c-api")]
#[inline(never)]
fn hpcc_ack_5_c_path(path: Path, events: u32, b: &mut impl Bracket) {
    let (cfg, _, _) = ldcp_setup();
    let mut mem = [0u128; C_MEM];
    let (e, h) = c_started(&mut mem, &c_config(cfg), &hpcc_params(Algorithm::Hpcc));
    let mut d = cc_ffi::cc_decision::default();
    let mut t = path.telemetry();
    for i in 0..events {
        let now = i as u64 * 1000;
        let tel = t.next();
        let mut hops = [cc_ffi::cc_hop::default(); 5];
        for (c, s) in hops.iter_mut().zip(&tel[..5]) {
            *c = cc_ffi::cc_hop::from(s);
        }
        b.around((now, c_ack(&hpcc_ack(i, &tel[..5]), &hops)), |(now, ack)| {
            // SAFETY: the engine, the ACK and its hops are valid.
            let _ = black_box(unsafe { cc_ffi::cc_on_ack(black_box(e), black_box(h), *now, ack, &mut d) });
        });
    }
}

#[inline(never)]
fn probe_response_path(events: u32, b: &mut impl Bracket) {
    let mut cfg = hpcc_config();
    cfg.telemetry = TelemetrySource::Probe { timeout_rtts: 2 };
    let (mut eng, h) = started::<HpccSender<1>>(cfg, hpcc_params(Algorithm::Hpcc));
    // Data in flight and probe 1 out; each response to probe n asks for n+1.
    if eng.event(h, Instant::ZERO, &workload::data_in_flight()).is_err() {
        nic_firmware::exit(3)
    }
    let mut t = Telemetry::new();
    for i in 0..events {
        let now = Instant::from_nanos(i as u64 * 12_000);
        let EventKind::ProbeResponse { probe, hop_index, hop } = workload::probe_response(i, t.next()[0]).kind else {
            nic_firmware::exit(3)
        };
        b.around((now, probe, hop_index, hop), |(now, probe, hop_index, hop)| {
            let eng = black_box(&mut eng);
            let _ = black_box(eng.probe_response(black_box(h), *now, *probe, *hop_index, hop));
        });
    }
}
