//! The per-flow controller contract, and [`AnyController`], the enum that
//! picks an algorithm per flow without `dyn` (smoltcp's `AnyController`
//! pattern).
//!
//! A single-algorithm table (`Engine<Ldcp, N>`) stores only that
//! algorithm's state: 24 bytes a flow for LDCP. A mixed table
//! (`Engine<AnyController<H>, N>`) stores the largest variant plus a tag.

pub use crate::algorithms::{AnyConfig, AnyController};
#[cfg(doc)]
use crate::event::EventKind;
use crate::event::{Ack, Decision, Error, FlowParams, MessageEnd, ProbeId};
use crate::telemetry::HopSample;
use crate::units::{Instant, Seq, Window};

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

    /// [`EventKind::Timer`].
    fn timer(&mut self, cfg: &Self::Config, now: Instant) -> Result<Decision, Error> {
        let _ = (cfg, now);
        Err(Error::NotApplicable)
    }
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
