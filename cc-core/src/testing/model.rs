//! One model of the engine for the property tests
//! (`cc-core/tests/invariants.rs`) and the fuzz target
//! (`fuzz/fuzz_targets/engine.rs`): the operations, their translation to
//! events, and the invariants every answer keeps (DESIGN §4, §9). Both
//! generate this module's [`Op`] itself: the property test by a proptest
//! strategy, the fuzz target through [`Op`]'s `Arbitrary` implementation
//! (feature `arbitrary`). One definition keeps the two from drifting apart.
//!
//! The invariants, checked after every step:
//!
//! - every decision's window is inside its algorithm's clamps: HPCC++
//!   [W_min, W_init], LDCP ≥ gamma·MTU;
//! - the pacing rate ≤ line rate (HPCC++), ≤ IW/T with IW rounded up to
//!   whole packets (LDCP);
//! - an armed timer is never in the past;
//! - a packet is released by the timer only while the window is below one
//!   packet;
//! - a refused event leaves its flow bit for bit as it was and is counted
//!   once among the refusals; a handled one changes no refusal counter;
//! - no event touches another flow;
//! - the table holds exactly the flows the model started and did not end.

use core::fmt;

use crate::algorithms::{AnyConfig, AnyController};
use crate::engine::Engine;
use crate::error::Error;
use crate::event::{
    Ack, Algorithm, Decision, EcnEcho, Event, EventKind, FlowId, FlowParams, MessageEnd, ProbeId, Request, TimerRequest,
};
use crate::hpcc::TelemetrySource;
use crate::path::{Balancer, Ev, Paths, Spray, Sprayer};
use crate::telemetry::HopSample;
use crate::units::{BaseRtt, Instant, LinkSpeed, Seq, Window};

/// Flow ids the operations address: more than the table holds, so some
/// events find no flow and some starts meet a full table.
pub const FLOW_IDS: u32 = 10;

/// The table under test: 8 flows of any algorithm, 5 hops of history,
/// path choice for the flows that spray.
pub type ModelEngine = Engine<AnyController<5>, 8, Sprayer>;

/// A telemetry stack of an operation: up to 16 hops, one more than the
/// engine reads, so that a stack too long to take is among the cases.
pub type Hops = heapless::Vec<HopSample, 16>;

/// One operation on one flow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// Start with `Algorithm::ALL[algo % Algorithm::COUNT]`; a T out of range is no event.
    Start {
        /// Index into [`Algorithm::ALL`], modulo [`Algorithm::COUNT`].
        algo: u8,
        /// Base RTT, ns.
        t_ns: u32,
        /// Line rate, Mb/s.
        mbps: u32,
        /// First sequence number.
        seq: u32,
    },
    /// End the flow.
    End,
    /// The scheduler sends `[seq, seq + len)`.
    Sent {
        /// First byte.
        seq: u32,
        /// Length.
        len: u32,
        /// Last packet of its message.
        last: bool,
    },
    /// An ACK.
    Ack {
        /// Cumulative ACK.
        cum: u32,
        /// snd_nxt.
        nxt: u32,
        /// ECN-Echo.
        ece: bool,
        /// Echoed telemetry.
        hops: Hops,
        /// RTT sample.
        rtt: Option<u32>,
        /// A PINT code: two bytes wide or one, and the code (any value,
        /// out-of-range ones included).
        pint: Option<(bool, u16)>,
        /// The EV echoed.
        ev: Option<u16>,
    },
    /// A loss.
    Loss {
        /// First byte lost.
        seq: u32,
        /// The timed-out packet's EV.
        ev: Option<u16>,
    },
    /// A NACK of a trimmed packet.
    Nack {
        /// Its first byte.
        seq: u32,
        /// Its bytes.
        len: u32,
        /// The cumulative ACK.
        cum: u32,
        /// `snd_nxt`.
        nxt: u32,
        /// RTT sample.
        rtt: Option<u32>,
        /// Trimmed at the last hop.
        last_hop: bool,
        /// ECN-Echo.
        ece: bool,
        /// The EV echoed.
        ev: Option<u16>,
    },
    /// The flow sprays: over the power of two at or above `paths`
    /// (2 ..= 256), with `Balancer::ALL[balancer % 4]`.
    Spray {
        /// Paths, rounded up to a power of two in 2 ..= 256.
        paths: u16,
        /// Index into [`Balancer::ALL`], modulo 4.
        balancer: u8,
        /// The flow's seed.
        seed: u32,
    },
    /// A CNP.
    Cnp,
    /// An RTT response; `probe: None` answers the flow's latest request.
    RttResponse {
        /// RTT sample.
        rtt: Option<u32>,
        /// The request answered, or the latest.
        probe: Option<u8>,
    },
    /// A probe response; `probe: None` answers the flow's latest probe.
    ProbeResponse {
        /// Hop index.
        idx: u8,
        /// The hop.
        hop: HopSample,
        /// The probe answered, or the latest.
        probe: Option<u8>,
    },
    /// Telemetry at the receiver.
    RxTelemetry {
        /// The stack.
        hops: Hops,
    },
    /// A probe at the receiver.
    ProbeRequest {
        /// The stack.
        hops: Hops,
    },
    /// Rx-HPCC feedback, raw window.
    Feedback {
        /// Raw [`Window`] bits.
        window: u32,
    },
    /// A flow count.
    FlowCount {
        /// N.
        n: u16,
    },
    /// The flow's timer.
    Timer,
}

/// An invariant that did not hold, and where.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Violation {
    /// What failed.
    pub what: &'static str,
    /// The flow id of the step.
    pub flow: u32,
    /// The step's time, ns.
    pub now: u64,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (flow {}, at {} ns)", self.what, self.flow, self.now)
    }
}

/// The engine under test beside what the model knows of it.
pub struct Model {
    cfg: AnyConfig,
    eng: ModelEngine,
    params: [Option<FlowParams>; FLOW_IDS as usize],
    latest_probe: [ProbeId; FLOW_IDS as usize],
}

impl Model {
    /// An empty table with the default configuration, HPCC++ telemetry from
    /// probes if `probe_mode`.
    pub fn new(probe_mode: bool) -> Self {
        let mut cfg = AnyConfig::default();
        if probe_mode {
            cfg.hpcc.telemetry = TelemetrySource::Probe { timeout_rtts: 2 };
        }
        Model {
            cfg,
            eng: Engine::new(cfg).unwrap_or_else(|_| panic!("the default configuration is valid")),
            params: [None; FLOW_IDS as usize],
            latest_probe: [ProbeId::default(); FLOW_IDS as usize],
        }
    }

    /// The engine.
    pub fn engine(&self) -> &ModelEngine {
        &self.eng
    }

    /// `op` for flow `flow % FLOW_IDS` at `now`, through
    /// [`Engine::handle`], with every invariant checked. The answer, or
    /// `None` when the operation is no event (a start with T out of range).
    pub fn step(&mut self, now: Instant, flow: u32, op: &Op) -> Result<Option<Result<Decision, Error>>, Violation> {
        let f = flow % FLOW_IDS;
        let fail = |what| Violation {
            what,
            flow: f,
            now: now.as_nanos(),
        };
        let latest = self.latest_probe[f as usize];
        let Some(kind) = event_kind(op, latest) else {
            return Ok(None);
        };
        let state = |e: &ModelEngine, i: u32| {
            let h = e.lookup(FlowId(i))?;
            Some((*e.get(h)?, *e.path(h)?))
        };
        let before: [Option<(AnyController<5>, Sprayer)>; FLOW_IDS as usize] =
            core::array::from_fn(|i| state(&self.eng, i as u32));
        let stats_before = self.eng.stats();
        let r = self.eng.handle(now, &Event { flow: FlowId(f), kind });
        for (i, was) in before.iter().enumerate() {
            if i as u32 != f && state(&self.eng, i as u32) != *was {
                return Err(fail("an event touched another flow"));
            }
        }
        match r {
            Ok(d) => {
                if self.eng.stats() != stats_before {
                    return Err(fail("a handled event was counted as refused"));
                }
                if let Request::Probe { id } = d.request {
                    self.latest_probe[f as usize] = id;
                }
                let params = match kind {
                    EventKind::Start(p) => {
                        self.params[f as usize] = Some(p);
                        p
                    }
                    EventKind::End => self.params[f as usize]
                        .take()
                        .ok_or(fail("ended a flow the model does not know"))?,
                    _ => self.params[f as usize].ok_or(fail("a flow the model does not know answered"))?,
                };
                check_decision(&self.cfg, &params, now, &d).map_err(fail)?;
            }
            Err(e) => {
                if state(&self.eng, f) != before[f as usize] {
                    return Err(fail("a refused event changed its flow or its path"));
                }
                if self.eng.stats().refused() != stats_before.refused() + 1 {
                    return Err(fail("a refused event was not counted once"));
                }
                if e == Error::UnknownFlow && self.params[f as usize].is_some() {
                    return Err(fail("a flow the model knows was unknown to the engine"));
                }
            }
        }
        if self.eng.len() != self.params.iter().filter(|p| p.is_some()).count() {
            return Err(fail("the table and the model hold different flows"));
        }
        Ok(Some(r))
    }
}

/// The event an operation stands for (`None`: a start with T out of
/// range, which `FlowParams` cannot express). `latest` is the flow's latest
/// probe number, for responses that answer it.
pub fn event_kind(op: &Op, latest: ProbeId) -> Option<EventKind<'_>> {
    Some(match *op {
        Op::Start { algo, t_ns, mbps, seq } => EventKind::Start(FlowParams {
            algorithm: Algorithm::ALL[algo as usize % Algorithm::COUNT],
            base_rtt: BaseRtt::from_nanos(t_ns)?,
            line_rate: LinkSpeed::from_mbps(mbps),
            start_seq: Seq(seq),
        }),
        Op::End => EventKind::End,
        Op::Sent { seq, len, last } => EventKind::Sent {
            seq: Seq(seq),
            len,
            end: if last { MessageEnd::Last } else { MessageEnd::More },
        },
        Op::Ack {
            cum,
            nxt,
            ece,
            ref hops,
            rtt,
            pint,
            ev,
        } => EventKind::Ack(Ack {
            ece: if ece { EcnEcho::Marked } else { EcnEcho::NotMarked },
            telemetry: hops,
            rtt_ns: rtt,
            pint: pint.map(|(two, code)| crate::event::PintSample {
                width: if two {
                    crate::wire::pint::PintWidth::Two
                } else {
                    crate::wire::pint::PintWidth::One
                },
                code,
            }),
            ev: ev.map(Ev::new),
            ..Ack::new(Seq(cum), Seq(nxt))
        }),
        Op::Loss { seq, ev } => EventKind::Loss {
            first_lost: Seq(seq),
            ev: ev.map(Ev::new),
        },
        Op::Nack {
            seq,
            len,
            cum,
            nxt,
            rtt,
            last_hop,
            ece,
            ev,
        } => EventKind::Nack(crate::event::Nack {
            rtt_ns: rtt,
            last_hop,
            ece: if ece { EcnEcho::Marked } else { EcnEcho::NotMarked },
            ev: ev.map(Ev::new),
            ..crate::event::Nack::new(Seq(seq), len, Seq(cum), Seq(nxt))
        }),
        Op::Spray { paths, balancer, seed } => EventKind::Spray(Spray {
            paths: Paths::new(paths.clamp(2, 256).next_power_of_two())?,
            balancer: Balancer::ALL[balancer as usize % Balancer::ALL.len()],
            seed,
        }),
        Op::Cnp => EventKind::Cnp,
        Op::RttResponse { rtt, probe } => EventKind::RttResponse {
            probe: probe.map_or(latest, ProbeId),
            rtt_ns: rtt,
        },
        Op::ProbeResponse { idx, hop, probe } => EventKind::ProbeResponse {
            probe: probe.map_or(latest, ProbeId),
            hop_index: idx,
            hop,
        },
        Op::RxTelemetry { ref hops } => EventKind::RxTelemetry { telemetry: hops },
        Op::ProbeRequest { ref hops } => EventKind::ProbeRequest { telemetry: hops },
        Op::Feedback { window } => EventKind::Feedback {
            window: Window::from_bits(window),
        },
        Op::FlowCount { n } => EventKind::FlowCount { flows: n },
        Op::Timer => EventKind::Timer,
    })
}

/// The invariants of one decision of a flow started with `p`, at `now`.
pub fn check_decision(cfg: &AnyConfig, p: &FlowParams, now: Instant, d: &Decision) -> Result<(), &'static str> {
    cfg.check_decision(p, d)?;
    if let TimerRequest::Arm(at) = d.timer {
        if at < now {
            return Err("a timer armed in the past");
        }
    }
    Ok(())
}

/// One step of a fuzzed sequence: the flow id, the time since the last
/// step, the operation.
#[cfg(feature = "arbitrary")]
#[derive(Clone, Debug, arbitrary::Arbitrary)]
pub struct Step {
    /// Flow id (taken modulo [`FLOW_IDS`]).
    pub flow: u8,
    /// ns since the previous step.
    pub dt: u32,
    /// The operation.
    pub op: Op,
}

/// Any operation from fuzzer bytes, every field free: hops of any speed
/// and widths (valid widths: the engine only ever sees those, as
/// `CounterWidths::new` checks them where they are made), probe numbers
/// any (or the latest).
#[cfg(feature = "arbitrary")]
impl<'a> arbitrary::Arbitrary<'a> for Op {
    fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<Self> {
        fn hop(u: &mut arbitrary::Unstructured<'_>) -> arbitrary::Result<HopSample> {
            let (ts_bits, tx_bits, unit): (u8, u8, u16) = u.arbitrary()?;
            let util: Option<u32> = u.arbitrary()?;
            Ok(HopSample {
                ts: u.arbitrary()?,
                tx: u.arbitrary()?,
                qlen_bytes: u.arbitrary()?,
                sojourn_ns: u.arbitrary()?,
                bandwidth: LinkSpeed::from_mbps(u.arbitrary()?),
                id: u.int_in_range(0..=3)?,
                widths: crate::telemetry::CounterWidths::new(ts_bits % 34, tx_bits % 34, unit)
                    .unwrap_or(crate::telemetry::CounterWidths::FULL),
                tx_utilization: util
                    .and_then(|u| crate::units::Fraction::from_bits(u % (1 << 25)))
                    .into(),
            })
        }
        fn hops(u: &mut arbitrary::Unstructured<'_>) -> arbitrary::Result<Hops> {
            let mut v = Hops::new();
            for _ in 0..u.int_in_range(0..=16)? {
                let _ = v.push(hop(u)?);
            }
            Ok(v)
        }
        Ok(match u.int_in_range(0u8..=15)? {
            0 => Op::Start {
                algo: u.arbitrary()?,
                t_ns: u.arbitrary()?,
                mbps: u.arbitrary()?,
                seq: u.arbitrary()?,
            },
            1 => Op::End,
            2 => Op::Sent {
                seq: u.arbitrary()?,
                len: u.arbitrary()?,
                last: u.arbitrary()?,
            },
            3 => Op::Ack {
                cum: u.arbitrary()?,
                nxt: u.arbitrary()?,
                ece: u.arbitrary()?,
                hops: hops(u)?,
                rtt: u.arbitrary()?,
                pint: u.arbitrary()?,
                ev: u.arbitrary()?,
            },
            4 => Op::Loss {
                seq: u.arbitrary()?,
                ev: u.arbitrary()?,
            },
            5 => Op::Cnp,
            6 => Op::RttResponse {
                rtt: u.arbitrary()?,
                probe: u.arbitrary()?,
            },
            7 => Op::ProbeResponse {
                idx: u.arbitrary()?,
                hop: hop(u)?,
                probe: u.arbitrary()?,
            },
            8 => Op::RxTelemetry { hops: hops(u)? },
            9 => Op::ProbeRequest { hops: hops(u)? },
            10 => Op::Feedback { window: u.arbitrary()? },
            11 => Op::FlowCount { n: u.arbitrary()? },
            13 => Op::Nack {
                seq: u.arbitrary()?,
                len: u.arbitrary()?,
                cum: u.arbitrary()?,
                nxt: u.arbitrary()?,
                rtt: u.arbitrary()?,
                last_hop: u.arbitrary()?,
                ece: u.arbitrary()?,
                ev: u.arbitrary()?,
            },
            14 => Op::Spray {
                paths: u.arbitrary()?,
                balancer: u.arbitrary()?,
                seed: u.arbitrary()?,
            },
            _ => Op::Timer,
        })
    }
}
