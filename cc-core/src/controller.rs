//! The per-flow controller contract, and [`AnyController`], the enum that
//! picks an algorithm per flow without `dyn` (smoltcp's `AnyController`
//! pattern).
//!
//! A single-algorithm table (`Engine<Ldcp, N>`) stores only that
//! algorithm's state: 24 bytes a flow for LDCP. A mixed table
//! (`Engine<AnyController<H>, N>`) stores the largest variant plus a tag.

use crate::dcqcn::{Dcqcn, DcqcnConfig};
use crate::dctcp::{Dctcp, DctcpConfig};
#[cfg(doc)]
use crate::event::EventKind;
use crate::event::{Ack, Algorithm, Decision, Error, FlowParams, MessageEnd, ProbeId};
use crate::hpcc::{HpccConfig, HpccReceiver, HpccSender};
use crate::ldcp::{Ldcp, LdcpConfig, LdcpRate};
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

/// Parameters of every algorithm, for a table that mixes them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct AnyConfig {
    /// HPCC++ parameters.
    pub hpcc: HpccConfig,
    /// LDCP parameters.
    pub ldcp: LdcpConfig,
    /// DCTCP parameters.
    pub dctcp: DctcpConfig,
    /// DCQCN parameters.
    pub dcqcn: DcqcnConfig,
}

/// Any controller, chosen per flow by [`FlowParams::algorithm`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum AnyController<const H: usize> {
    /// HPCC++ sender.
    Hpcc(HpccSender<H>),
    /// HPCC++ receiver (Rx-HPCC, probe responder).
    HpccReceiver(HpccReceiver<H>),
    /// LDCP, window-based.
    Ldcp(Ldcp),
    /// LDCP, rate-based (commercial NIC).
    LdcpRate(LdcpRate),
    /// DCTCP.
    Dctcp(Dctcp),
    /// DCQCN.
    Dcqcn(Dcqcn),
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

/// The one dispatch on the algorithm: `$body` with `$s` the flow's
/// controller and `$c` its algorithm's part of the [`AnyConfig`]. Every
/// hook of [`AnyController`] is this match around the variant's own hook.
macro_rules! each {
    ($self:ident, $cfg:ident, |$s:ident, $c:ident| $body:expr) => {
        match $self {
            AnyController::Hpcc($s) => {
                let $c = &$cfg.hpcc;
                $body
            }
            AnyController::HpccReceiver($s) => {
                let $c = &$cfg.hpcc;
                $body
            }
            AnyController::Ldcp($s) => {
                let $c = &$cfg.ldcp;
                $body
            }
            AnyController::LdcpRate($s) => {
                let $c = &$cfg.ldcp;
                $body
            }
            AnyController::Dctcp($s) => {
                let $c = &$cfg.dctcp;
                $body
            }
            AnyController::Dcqcn($s) => {
                let $c = &$cfg.dcqcn;
                $body
            }
        }
    };
}

impl<const H: usize> AnyController<H> {
    /// `v` on the controller inside, with its algorithm's configuration
    /// from `cfg` (the same match every hook of this type makes).
    #[inline(always)]
    pub fn visit<V: Visit>(&mut self, cfg: &AnyConfig, v: V) -> V::Output {
        each!(self, cfg, |s, c| v.on(s, c))
    }
}

impl<const H: usize> Controller for AnyController<H> {
    type Config = AnyConfig;

    fn validate(cfg: &AnyConfig) -> Result<(), Error> {
        cfg.hpcc.validate()?;
        cfg.ldcp.validate()?;
        cfg.dctcp.validate()?;
        cfg.dcqcn.validate()
    }

    fn start(cfg: &AnyConfig, now: Instant, p: &FlowParams) -> Result<(Self, Decision), Error> {
        Ok(match p.algorithm {
            Algorithm::Hpcc => {
                let (s, d) = HpccSender::start(&cfg.hpcc, now, p)?;
                (AnyController::Hpcc(s), d)
            }
            Algorithm::HpccReceiver => {
                let (s, d) = HpccReceiver::start(&cfg.hpcc, now, p)?;
                (AnyController::HpccReceiver(s), d)
            }
            Algorithm::Ldcp => {
                let (s, d) = Ldcp::start(&cfg.ldcp, now, p)?;
                (AnyController::Ldcp(s), d)
            }
            Algorithm::LdcpRate => {
                let (s, d) = LdcpRate::start(&cfg.ldcp, now, p)?;
                (AnyController::LdcpRate(s), d)
            }
            Algorithm::Dctcp => {
                let (s, d) = Dctcp::start(&cfg.dctcp, now, p)?;
                (AnyController::Dctcp(s), d)
            }
            Algorithm::Dcqcn => {
                let (s, d) = Dcqcn::start(&cfg.dcqcn, now, p)?;
                (AnyController::Dcqcn(s), d)
            }
        })
    }

    fn decision(&self, cfg: &AnyConfig) -> Decision {
        each!(self, cfg, |s, c| Controller::decision(s, c))
    }

    fn ack(&mut self, cfg: &AnyConfig, now: Instant, ack: &Ack<'_>) -> Result<Decision, Error> {
        each!(self, cfg, |s, c| s.ack(c, now, ack))
    }

    fn sent(&mut self, cfg: &AnyConfig, now: Instant, seq: Seq, len: u32, end: MessageEnd) -> Result<Decision, Error> {
        each!(self, cfg, |s, c| s.sent(c, now, seq, len, end))
    }

    fn loss(&mut self, cfg: &AnyConfig, now: Instant, first_lost: Seq) -> Result<Decision, Error> {
        each!(self, cfg, |s, c| s.loss(c, now, first_lost))
    }

    fn cnp(&mut self, cfg: &AnyConfig, now: Instant) -> Result<Decision, Error> {
        each!(self, cfg, |s, c| s.cnp(c, now))
    }

    fn rtt_response(
        &mut self,
        cfg: &AnyConfig,
        now: Instant,
        probe: ProbeId,
        rtt_ns: Option<u32>,
    ) -> Result<Decision, Error> {
        each!(self, cfg, |s, c| s.rtt_response(c, now, probe, rtt_ns))
    }

    fn probe_response(
        &mut self,
        cfg: &AnyConfig,
        now: Instant,
        probe: ProbeId,
        hop_index: u8,
        hop: &HopSample,
    ) -> Result<Decision, Error> {
        each!(self, cfg, |s, c| s.probe_response(c, now, probe, hop_index, hop))
    }

    fn rx_telemetry(&mut self, cfg: &AnyConfig, now: Instant, telemetry: &[HopSample]) -> Result<Decision, Error> {
        each!(self, cfg, |s, c| s.rx_telemetry(c, now, telemetry))
    }

    fn probe_request(&mut self, cfg: &AnyConfig, now: Instant, telemetry: &[HopSample]) -> Result<Decision, Error> {
        each!(self, cfg, |s, c| s.probe_request(c, now, telemetry))
    }

    fn feedback(&mut self, cfg: &AnyConfig, now: Instant, window: Window) -> Result<Decision, Error> {
        each!(self, cfg, |s, c| s.feedback(c, now, window))
    }

    fn flow_count(&mut self, cfg: &AnyConfig, now: Instant, flows: u16) -> Result<Decision, Error> {
        each!(self, cfg, |s, c| s.flow_count(c, now, flows))
    }

    fn timer(&mut self, cfg: &AnyConfig, now: Instant) -> Result<Decision, Error> {
        each!(self, cfg, |s, c| s.timer(c, now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
