//! What an algorithm implements: its per-flow [`Controller`] and its
//! [`AlgorithmConfig`], below the registry ([`crate::algorithms`]) that
//! names every algorithm once and builds [`AnyController`], the enum that
//! picks an algorithm per flow without `dyn` (smoltcp's `AnyController`
//! pattern), and [`AnyConfig`] from them.
//!
//! A single-algorithm table (`Engine<Ldcp, N>`) stores only that
//! algorithm's state: 24 bytes a flow for LDCP. A mixed table
//! (`Engine<AnyController<H>, N>`) stores the largest variant plus a tag.

#[cfg(doc)]
use crate::algorithms::{Algorithm, AnyConfig, AnyController};
#[cfg(feature = "bench")]
use crate::bench::{AckBench, CnpBench, LossBench, NackBench};
use crate::codec::{ConfigReader, ConfigWriter};
use crate::error::Error;
#[cfg(doc)]
use crate::event::EventKind;
use crate::event::{Ack, Decision, FlowParams, MessageEnd, Nack, ProbeId};
use crate::params::{Network, Param};
use crate::telemetry::HopSample;
use crate::units::{Instant, Seq, Window};
use crate::wire::Result as WireResult;

/// A congestion controller for one flow.
///
/// An algorithm implements [`Controller::start`], [`Controller::decision`]
/// and the hooks of the events it takes; every other event is refused with
/// the hooks' default, `Err(NotApplicable)`. The engine calls one hook per
/// event: [`crate::engine::Engine::event`] is the one match on the event,
/// and each of the engine's per-kind entries calls its hook directly.
/// `Start` and `End` are the table's business and never reach a
/// controller. On `Err` the state is unchanged.
pub trait Controller: Sized {
    /// Parameters shared by every flow of an engine.
    type Config;

    /// Checks the shared parameters once, when the engine is built.
    fn validate(cfg: &Self::Config) -> Result<(), Error>;

    /// A new flow's state and its first decision.
    fn start(cfg: &Self::Config, now: Instant, params: &FlowParams) -> Result<(Self, Decision), Error>;

    /// The flow's current decision, with no timer change or request.
    fn decision(&self, cfg: &Self::Config) -> Decision;

    /// [`EventKind::Sent`].
    fn sent(
        &mut self,
        cfg: &Self::Config,
        now: Instant,
        seq: Seq,
        len: u32,
        end: MessageEnd,
    ) -> Result<Decision, Error> {
        let _ = (cfg, now, seq, len, end);
        Err(Error::NotApplicable)
    }

    /// [`EventKind::Ack`].
    fn ack(&mut self, cfg: &Self::Config, now: Instant, ack: &Ack<'_>) -> Result<Decision, Error> {
        let _ = (cfg, now, ack);
        Err(Error::NotApplicable)
    }

    /// Whether [`Controller::short_ack`] can take an ACK (the engine tries
    /// it first only then).
    const SHORT_ACK: bool = false;

    /// The common ACK's short path, for a controller whose ACKs are
    /// mostly one simple case: `Some` with the decision when it took the
    /// ACK, with the state changed exactly as [`Controller::ack`] would
    /// change it; `None`, the state untouched, for `ack` to take it.
    /// [`crate::engine::Engine::ack`] calls `ack` out of line after a
    /// `None`, so the short path needs no registers kept across a call
    /// and no frame. The default takes nothing.
    #[inline(always)]
    fn short_ack(&mut self, cfg: &Self::Config, ack: &Ack<'_>) -> Option<Decision> {
        let _ = (cfg, ack);
        None
    }

    /// [`EventKind::Loss`].
    fn loss(&mut self, cfg: &Self::Config, now: Instant, first_lost: Seq) -> Result<Decision, Error> {
        let _ = (cfg, now, first_lost);
        Err(Error::NotApplicable)
    }

    /// [`EventKind::Nack`]: by default the loss of the trimmed packet
    /// ([`Controller::loss`] at its first byte), for an algorithm with no
    /// rule of its own for a trimmed packet.
    fn nack(&mut self, cfg: &Self::Config, now: Instant, nack: &Nack) -> Result<Decision, Error> {
        self.loss(cfg, now, nack.seq)
    }

    /// [`EventKind::Cnp`].
    fn cnp(&mut self, cfg: &Self::Config, now: Instant) -> Result<Decision, Error> {
        let _ = (cfg, now);
        Err(Error::NotApplicable)
    }

    /// [`EventKind::RttResponse`].
    fn rtt_response(
        &mut self,
        cfg: &Self::Config,
        now: Instant,
        probe: ProbeId,
        rtt_ns: Option<u32>,
    ) -> Result<Decision, Error> {
        let _ = (cfg, now, probe, rtt_ns);
        Err(Error::NotApplicable)
    }

    /// [`EventKind::ProbeResponse`].
    fn probe_response(
        &mut self,
        cfg: &Self::Config,
        now: Instant,
        probe: ProbeId,
        hop_index: u8,
        hop: &HopSample,
    ) -> Result<Decision, Error> {
        let _ = (cfg, now, probe, hop_index, hop);
        Err(Error::NotApplicable)
    }

    /// [`EventKind::RxTelemetry`].
    fn rx_telemetry(&mut self, cfg: &Self::Config, now: Instant, telemetry: &[HopSample]) -> Result<Decision, Error> {
        let _ = (cfg, now, telemetry);
        Err(Error::NotApplicable)
    }

    /// [`EventKind::ProbeRequest`].
    fn probe_request(&mut self, cfg: &Self::Config, now: Instant, telemetry: &[HopSample]) -> Result<Decision, Error> {
        let _ = (cfg, now, telemetry);
        Err(Error::NotApplicable)
    }

    /// [`EventKind::Feedback`].
    fn feedback(&mut self, cfg: &Self::Config, now: Instant, window: Window) -> Result<Decision, Error> {
        let _ = (cfg, now, window);
        Err(Error::NotApplicable)
    }

    /// [`EventKind::FlowCount`].
    fn flow_count(&mut self, cfg: &Self::Config, now: Instant, flows: u16) -> Result<Decision, Error> {
        let _ = (cfg, now, flows);
        Err(Error::NotApplicable)
    }

    /// For traces and plots: which of its algorithm's ACK cases
    /// ([`AlgorithmConfig::ACK_CASES`], by index) an ACK would fall in,
    /// the flow as it stands; `None` for an algorithm that names none.
    /// The controller itself never calls it.
    fn ack_case(&self, cfg: &Self::Config, ack: &Ack<'_>) -> Option<u8> {
        let _ = (cfg, ack);
        None
    }

    /// [`EventKind::Timer`].
    fn timer(&mut self, cfg: &Self::Config, now: Instant) -> Result<Decision, Error> {
        let _ = (cfg, now);
        Err(Error::NotApplicable)
    }
}

/// The most ACK cases an algorithm names ([`AlgorithmConfig::ACK_CASES`]).
pub const MAX_ACK_CASES: usize = 4;

/// A sprayed flow's `Sent` on controller `c`: its packet needs an EV
/// whatever its algorithm makes of a `Sent`, so an algorithm that takes
/// none answers its decision unchanged. The engine's rule and the C
/// API's.
pub fn sprayed_sent<C: Controller>(
    c: &mut C,
    cfg: &C::Config,
    now: Instant,
    seq: Seq,
    len: u32,
    end: MessageEnd,
) -> Result<Decision, Error> {
    match c.sent(cfg, now, seq, len, end) {
        Err(Error::NotApplicable) => Ok(c.decision(cfg)),
        r => r,
    }
}

/// An algorithm's configuration, shared by every flow of an engine that
/// runs it.
pub trait AlgorithmConfig: Copy + Sized + 'static {
    /// The defaults of the paper or draft (the engine runs these until the
    /// host configures it; each type's docs say which).
    const DEFAULT: Self;

    /// The parameters a table sets by name (a scenario's `[cc]` table),
    /// in the order a table lists them; empty for an algorithm whose front
    /// ends configure it by hand.
    const PARAMS: &'static [Param<Self>] = &[];

    /// What its flows need of the network.
    const NETWORK: Network;

    /// The cases its controller sorts an ACK into ([`Controller::ack_case`]),
    /// by name, at most [`MAX_ACK_CASES`]: NSCC's four quadrants. None by
    /// default.
    const ACK_CASES: &'static [&'static str] = &[];

    /// The controller of its first role (its data sender), with `H` hops
    /// of telemetry history where it keeps any: what
    /// [`Algorithm::with_config`] hands a [`ConfigVisitor`].
    type Sender<const H: usize>: Controller<Config = Self>;

    /// The firmware benchmark's ACK row, for an algorithm whose front ends
    /// take it from the registry; `None` for one the benchmark drives by
    /// hand (HPCC++ and LDCP have rows of their own).
    #[cfg(feature = "bench")]
    const ACK_BENCH: Option<AckBench> = None;

    /// The firmware benchmark's CNP row, for an algorithm whose flows
    /// answer congestion notification packets (DCQCN's reaction point).
    #[cfg(feature = "bench")]
    const CNP_BENCH: Option<CnpBench> = None;

    /// The firmware benchmark's NACK row, for an algorithm with a rule
    /// of its own for a trimmed packet's NACK (NSCC's).
    #[cfg(feature = "bench")]
    const NACK_BENCH: Option<NackBench> = None;

    /// The firmware benchmark's timeout row, for an algorithm with a rule
    /// of its own for a timeout (NSCC's).
    #[cfg(feature = "bench")]
    const LOSS_BENCH: Option<LossBench> = None;

    /// The `f64` reference model's cost column of the benchmark's ACK
    /// row: the model made for a flow started with `p` and the defaults,
    /// then the row's ACKs 1 ..= `events` each given to it inside
    /// `bracket`. Returns whether the algorithm has such a model (by
    /// default not: its property tests still hold it to its reference).
    #[cfg(all(feature = "reference", feature = "bench"))]
    fn reference_ack<B: crate::bench::RefBracket>(p: &FlowParams, events: u32, bracket: &mut B) -> bool {
        let _ = (p, events, bracket);
        false
    }

    /// Checks every field's range.
    fn validate(&self) -> Result<(), Error>;

    /// Whether the receiver's NIC answers CE-marked data with congestion
    /// notification packets (CNPs) for its flows, and then at most one
    /// per flow per how many ns (0: one with the ACK of every marked
    /// packet); `None`, as by default: its flows read ECN, if at all, from
    /// the ACKs' echo.
    fn receiver_cnp_ns(&self) -> Option<u32> {
        None
    }

    /// The first field out of its range, by its name in the type (a
    /// [`crate::params::ParamInfo::field`] where a parameter sets it); `None` if every
    /// field is in range. By default the whole configuration is named.
    fn invalid_field(&self) -> Option<&'static str> {
        self.validate().err().map(|_| "configuration")
    }

    /// Writes this configuration's block of the codec's configuration frame.
    fn encode(&self, w: &mut ConfigWriter<'_, '_>) -> WireResult<()>;

    /// Reads the block [`AlgorithmConfig::encode`] wrote. The values are
    /// only decoded, not validated: the engine's constructor checks them.
    fn decode(r: &mut ConfigReader<'_, '_>) -> WireResult<Self>;

    /// The bounds every decision of a flow started with `p` keeps, beyond
    /// those of every algorithm (a timer never armed in the past): the
    /// engine model's invariants (`testing::model`, the property tests
    /// and the fuzz target). `Err` names the bound broken.
    fn check_decision(&self, p: &FlowParams, d: &Decision) -> Result<(), &'static str>;
}

/// Code generic over an algorithm's configuration type, run for the one
/// an [`Algorithm`] names by [`Algorithm::with_config`].
pub trait ConfigVisitor {
    /// What it gives back.
    type Output;

    /// Runs with configuration type `C`.
    fn visit<C: AlgorithmConfig>(self) -> Self::Output;
}

/// Work to run on a flow's controller, whatever its algorithm, with that
/// algorithm's part of the [`AnyConfig`]: [`AnyController::visit`] picks
/// the algorithm once and runs [`Visit::on`] made for it. An embedding
/// that wants its own code per algorithm (cc-ffi's C entry points: an
/// LDCP event does not carry the frame HPCC++'s hop loop needs) writes a
/// `Visit` instead of matching the variants itself.
pub trait Visit {
    /// What the work gives back.
    type Output;
    /// The work on `c`, configured by `cfg`.
    fn on<C: Controller>(self, c: &mut C, cfg: &C::Config) -> Self::Output;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::{AnyConfig, AnyController};
    use crate::event::Algorithm;
    use crate::units::{BaseRtt, LinkSpeed, Seq};

    /// A visit reaches the flow's own controller with its algorithm's
    /// configuration: each algorithm's timer, run through `visit`, answers
    /// as the flow's own hook does, and changes the same state.
    #[test]
    fn a_visit_runs_the_flows_own_controller() {
        struct Timer(Instant);
        impl Visit for Timer {
            type Output = Result<Decision, Error>;
            fn on<C: Controller>(self, c: &mut C, cfg: &C::Config) -> Self::Output {
                c.timer(cfg, self.0)
            }
        }
        let cfg = AnyConfig::default();
        for algorithm in Algorithm::ALL {
            let p = FlowParams {
                algorithm,
                base_rtt: BaseRtt::from_nanos(8_000).unwrap(),
                line_rate: LinkSpeed::from_gbps(100),
                start_seq: Seq(0),
            };
            let (mut a, _) = AnyController::<2>::start(&cfg, Instant::ZERO, &p).unwrap();
            let mut b = a;
            let now = Instant::from_nanos(1_000_000);
            assert_eq!(a.visit(&cfg, Timer(now)), b.timer(&cfg, now), "{algorithm:?}");
            assert_eq!(a, b, "{algorithm:?}");
        }
    }
}
