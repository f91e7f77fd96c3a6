//! The per-flow controller contract, and [`AnyController`], the enum that
//! picks an algorithm per flow without `dyn` (smoltcp's `AnyController`
//! pattern).
//!
//! A single-algorithm table (`Engine<Ldcp, N>`) stores only that
//! algorithm's state: 24 bytes a flow for LDCP. A mixed table
//! (`Engine<AnyController<H>, N>`) stores the largest variant plus a tag.

use crate::event::{Algorithm, Decision, Error, EventKind, FlowParams};
use crate::hpcc::{HpccConfig, HpccReceiver, HpccSender};
use crate::ldcp::{Ldcp, LdcpConfig, LdcpRate};
use crate::units::Instant;

/// A congestion controller for one flow.
pub trait Controller: Sized {
    /// Parameters shared by every flow of an engine.
    type Config;

    /// Checks the shared parameters once, when the engine is built.
    fn validate(cfg: &Self::Config) -> Result<(), Error>;

    /// A new flow's state and its first decision.
    fn start(cfg: &Self::Config, now: Instant, params: &FlowParams) -> Result<(Self, Decision), Error>;

    /// One event. `Start` and `End` are the table's business and never
    /// reach here. On `Err` the state is unchanged.
    fn on_event(&mut self, cfg: &Self::Config, now: Instant, event: &EventKind<'_>) -> Result<Decision, Error>;

    /// The flow's current decision, with no timer change or request.
    fn decision(&self, cfg: &Self::Config) -> Decision;
}

impl<const H: usize> Controller for HpccSender<H> {
    type Config = HpccConfig;

    fn validate(cfg: &HpccConfig) -> Result<(), Error> {
        cfg.validate()
    }

    fn start(cfg: &HpccConfig, _now: Instant, p: &FlowParams) -> Result<(Self, Decision), Error> {
        if p.algorithm != Algorithm::Hpcc {
            return Err(Error::NotApplicable);
        }
        let s = HpccSender::new(cfg, p)?;
        let d = s.decision();
        Ok((s, d))
    }

    fn on_event(&mut self, cfg: &HpccConfig, now: Instant, event: &EventKind<'_>) -> Result<Decision, Error> {
        match *event {
            EventKind::Ack(ref ack) => self.new_ack(cfg, now, ack),
            EventKind::Sent { .. } => Ok(self.on_sent(cfg, now)),
            EventKind::ProbeResponse {
                probe,
                hop_index,
                ref hop,
            } => self.on_probe_response(cfg, now, probe, hop_index, hop),
            EventKind::Feedback { window } => Ok(self.on_feedback(cfg, window)),
            EventKind::FlowCount { flows } => self.on_flow_count(cfg, flows),
            EventKind::Timer => Ok(self.on_timer(cfg, now)),
            // Loss recovery is the transport's; HPCC++ has no loss rule.
            EventKind::Loss { .. } => Ok(self.decision()),
            _ => Err(Error::NotApplicable),
        }
    }

    fn decision(&self, _cfg: &HpccConfig) -> Decision {
        HpccSender::decision(self)
    }
}

impl<const H: usize> Controller for HpccReceiver<H> {
    type Config = HpccConfig;

    fn validate(cfg: &HpccConfig) -> Result<(), Error> {
        cfg.validate()
    }

    fn start(cfg: &HpccConfig, now: Instant, p: &FlowParams) -> Result<(Self, Decision), Error> {
        if p.algorithm != Algorithm::HpccReceiver {
            return Err(Error::NotApplicable);
        }
        let r = HpccReceiver::new(cfg, p, now)?;
        let d = r.decision();
        Ok((r, d))
    }

    fn on_event(&mut self, cfg: &HpccConfig, now: Instant, event: &EventKind<'_>) -> Result<Decision, Error> {
        match *event {
            EventKind::RxTelemetry { telemetry } => self.new_int(cfg, now, telemetry),
            EventKind::ProbeRequest { telemetry } => self.respond_probe(cfg, now, telemetry),
            EventKind::FlowCount { flows } => self.on_flow_count(cfg, flows),
            _ => Err(Error::NotApplicable),
        }
    }

    fn decision(&self, _cfg: &HpccConfig) -> Decision {
        HpccReceiver::decision(self)
    }
}

impl Controller for Ldcp {
    type Config = LdcpConfig;

    fn validate(cfg: &LdcpConfig) -> Result<(), Error> {
        cfg.validate()
    }

    fn start(cfg: &LdcpConfig, _now: Instant, p: &FlowParams) -> Result<(Self, Decision), Error> {
        if p.algorithm != Algorithm::Ldcp {
            return Err(Error::NotApplicable);
        }
        let l = Ldcp::new(cfg, p)?;
        let d = l.decision(cfg);
        Ok((l, d))
    }

    fn on_event(&mut self, cfg: &LdcpConfig, now: Instant, event: &EventKind<'_>) -> Result<Decision, Error> {
        match *event {
            EventKind::Ack(ref ack) => Ok(self.on_ack(cfg, now, ack)),
            EventKind::Sent { seq, len, end } => Ok(self.on_sent(cfg, seq, len, end)),
            EventKind::Loss { first_lost } => Ok(self.on_loss(cfg, now, first_lost)),
            EventKind::Timer => Ok(self.on_timer(cfg, now)),
            _ => Err(Error::NotApplicable),
        }
    }

    fn decision(&self, cfg: &LdcpConfig) -> Decision {
        Ldcp::decision(self, cfg)
    }
}

impl Controller for LdcpRate {
    type Config = LdcpConfig;

    fn validate(cfg: &LdcpConfig) -> Result<(), Error> {
        cfg.validate()
    }

    fn start(cfg: &LdcpConfig, now: Instant, p: &FlowParams) -> Result<(Self, Decision), Error> {
        if p.algorithm != Algorithm::LdcpRate {
            return Err(Error::NotApplicable);
        }
        LdcpRate::new(cfg, p, now)
    }

    fn on_event(&mut self, cfg: &LdcpConfig, now: Instant, event: &EventKind<'_>) -> Result<Decision, Error> {
        match *event {
            EventKind::Cnp => Ok(self.on_cnp(cfg)),
            EventKind::RttResponse { probe, rtt_ns } => Ok(self.on_rtt_response(cfg, now, probe, rtt_ns)),
            EventKind::Timer => Ok(self.on_timer(cfg, now)),
            // The commercial NIC's ACK/NACK handling stays in the ASIC.
            EventKind::Ack(_) | EventKind::Sent { .. } | EventKind::Loss { .. } => Ok(self.decision(cfg)),
            _ => Err(Error::NotApplicable),
        }
    }

    fn decision(&self, cfg: &LdcpConfig) -> Decision {
        LdcpRate::decision(self, cfg)
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
}

impl<const H: usize> Controller for AnyController<H> {
    type Config = AnyConfig;

    fn validate(cfg: &AnyConfig) -> Result<(), Error> {
        cfg.hpcc.validate()?;
        cfg.ldcp.validate()
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
        })
    }

    fn on_event(&mut self, cfg: &AnyConfig, now: Instant, event: &EventKind<'_>) -> Result<Decision, Error> {
        match self {
            AnyController::Hpcc(s) => s.on_event(&cfg.hpcc, now, event),
            AnyController::HpccReceiver(s) => s.on_event(&cfg.hpcc, now, event),
            AnyController::Ldcp(s) => s.on_event(&cfg.ldcp, now, event),
            AnyController::LdcpRate(s) => s.on_event(&cfg.ldcp, now, event),
        }
    }

    fn decision(&self, cfg: &AnyConfig) -> Decision {
        match self {
            AnyController::Hpcc(s) => Controller::decision(s, &cfg.hpcc),
            AnyController::HpccReceiver(s) => Controller::decision(s, &cfg.hpcc),
            AnyController::Ldcp(s) => Controller::decision(s, &cfg.ldcp),
            AnyController::LdcpRate(s) => Controller::decision(s, &cfg.ldcp),
        }
    }
}
