//! Congestion-control settings of a scenario: the algorithm as an enum
//! carrying its own parameters, with the defaults each paper ran.

use cc_core::{Algorithm, AnyConfig};
use serde::Deserialize;

use super::*;

/// Congestion control: the algorithm with its parameters, and the base RTT.
#[derive(Clone, Debug, PartialEq)]
pub struct CcCfg {
    /// The algorithm (`algorithm` in a file) and its parameters.
    pub algorithm: Cc,
    /// Base RTT T for every flow; default: each flow's path base RTT.
    pub base_rtt_ns: Option<TimeNs>,
}

impl Cc {
    /// The algorithm's name, as reports and plots show it.
    pub fn label(&self) -> &'static str {
        match self {
            Cc::Hpcc(h) => match h.mode {
                HpccMode::Sender => "HPCC++",
                HpccMode::RxHpcc => "HPCC++ (Rx-HPCC)",
                HpccMode::Probe => "HPCC++ (probe mode)",
            },
            Cc::Ldcp { .. } => "LDCP",
            Cc::LdcpRate(_) => "LDCP (rate variant)",
            Cc::Registered { algorithm, .. } => algorithm.title(),
        }
    }

    /// An algorithm hal-sim sets from the registry's parameter tables,
    /// with its defaults (those that follow the payload follow the NIC's);
    /// `None` for one it configures by hand (HPCC++ and LDCP, whose
    /// scenario fields reach the NIC too).
    pub fn registered(algorithm: Algorithm) -> Option<Cc> {
        (algorithm.is_primary() && !BY_HAND.contains(&algorithm)).then_some(Cc::Registered {
            algorithm,
            engine: Box::new(AnyConfig::DEFAULT),
            given: 0,
        })
    }

    /// Whether control packets (ACKs, NACKs, CNPs, probes) take a
    /// strict-priority queue ahead of data when the scenario does not say
    /// (`[switch] control_priority`): for an algorithm of the registry,
    /// what it asks of the network (cc-core's `Network::control_priority`:
    /// yes for TIMELY, whose RTT samples then measure the data's queueing
    /// alone, as the HPCC reference simulator runs it, `ACK_HIGH_PRIO 1`);
    /// no for the others.
    pub fn control_priority_default(&self) -> bool {
        match self {
            Cc::Registered { algorithm, .. } => algorithm.network().control_priority,
            _ => false,
        }
    }

    /// When switches mark ECN-capable data unless `switch.ecn_at` says:
    /// on dequeue for an algorithm of the registry that asks for it
    /// (cc-core's `Network::marks_on_dequeue`: DCQCN, as the HPCC reference
    /// simulator's switch does, whose DCQCN runs are what hal-sim's DCQCN
    /// is held to, docs/reference-runs.md); on enqueue for the others
    /// (LDCP §2.1).
    pub fn ecn_at_default(&self) -> super::EcnAt {
        match self {
            Cc::Registered { algorithm, .. } if algorithm.network().marks_on_dequeue => super::EcnAt::Dequeue,
            _ => super::EcnAt::Enqueue,
        }
    }
}

/// An algorithm and its parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum Cc {
    /// HPCC++.
    Hpcc(HpccCfg),
    /// LDCP, window-based (programmable NIC).
    Ldcp {
        /// alpha, beta, gamma.
        params: LdcpCfg,
        /// Zero-RTT fast start (§2.3).
        fast_start: bool,
    },
    /// LDCP, rate-based (commercial NIC): CNP and RTT probes.
    LdcpRate(LdcpCfg),
    /// Any other algorithm of cc-core's registry (DCTCP, DCQCN, TIMELY, ...): its
    /// parameters set by name from its own table (cc-core's
    /// `AlgorithmConfig::PARAMS`), its network from its
    /// `AlgorithmConfig::NETWORK`.
    Registered {
        /// Which (a primary role, not one of [`BY_HAND`]).
        algorithm: Algorithm,
        /// Its configuration in `engine`'s field of it; every other field
        /// is its default.
        engine: Box<AnyConfig>,
        /// Bit i: the scenario gave parameter i of its table. A parameter
        /// that follows the payload (cc-core's `ParamInfo::follows_payload`)
        /// and was not given is set to the NIC's payload when the engine's
        /// configuration is made ([`super::engine_config`]).
        given: u64,
    },
}

/// The algorithms hal-sim configures by hand, each with a variant of
/// [`Cc`] of its own.
pub const BY_HAND: [Algorithm; 4] = [
    Algorithm::Hpcc,
    Algorithm::HpccReceiver,
    Algorithm::Ldcp,
    Algorithm::LdcpRate,
];

/// HPCC++ parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct HpccCfg {
    /// eta.
    pub eta: Prob,
    /// maxStage.
    pub max_stage: Stage,
    /// W_ai.
    pub additive_increase: Wai,
    /// W_min in bytes.
    pub w_min_bytes: u32,
    /// Placement and telemetry source.
    pub mode: HpccMode,
    /// Sojourn time instead of queue length (§9.3).
    pub sojourn: bool,
}

impl Default for HpccCfg {
    fn default() -> Self {
        HpccCfg {
            eta: Prob(0.95),
            max_stage: Stage(5),
            additive_increase: Wai::Flows(64),
            w_min_bytes: 16,
            mode: HpccMode::Sender,
            sojourn: false,
        }
    }
}

/// HPCC++'s additive increase W_ai.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wai {
    /// W_ai = rate · T, the rate in Mb/s (`wai_mbps`; SIGCOMM'19: 50).
    RateMbps(u32),
    /// W_ai = W_init·(1 − eta)/N (`wai_flows`).
    Flows(u16),
}

/// HPCC++ placement.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HpccMode {
    /// Sender-based, telemetry on every data packet, echoed on ACKs.
    #[default]
    Sender,
    /// Receiver-based Rx-HPCC: window feedback once per T.
    RxHpcc,
    /// Sender-based with one probe per RTT; the responder reports one hop.
    Probe,
}

/// LDCP parameters (both variants).
#[derive(Clone, Debug, PartialEq)]
pub struct LdcpCfg {
    /// alpha.
    pub alpha: Prob,
    /// beta.
    pub beta: Prob,
    /// gamma.
    pub gamma: Gamma,
}

impl Default for LdcpCfg {
    fn default() -> Self {
        LdcpCfg {
            alpha: Prob(1.0),
            beta: Prob(0.5),
            gamma: Gamma(0.125),
        }
    }
}
