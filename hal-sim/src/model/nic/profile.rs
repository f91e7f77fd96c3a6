//! What a NIC must do for a flow, as capabilities: the datapath asks these,
//! never which algorithm runs. [`Profile::of`] is the one place that turns
//! an algorithm and its placement into them; an algorithm of cc-core's
//! registry brings its own (`AlgorithmConfig::NETWORK`), so a new one adds
//! nothing here and no branch to the datapath.

use cc_core::params::TelemetryKind;
use cc_core::prelude::*;

use crate::run::event::Ps;
use crate::setup::scenario::{Cc, CcCfg, HpccMode};

/// When the scheduler may send a flow's next data packet: what the
/// engine's decision governs (cc-core's).
pub use cc_core::params::Gate;

/// What a `Request::Probe` from the engine becomes on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeKind {
    /// A packet that collects telemetry on its way (HPCC++ §6.2.1); the
    /// receiver's engine picks one hop to send back.
    Telemetry,
    /// An RTT request, answered by the receiver NIC at once.
    Rtt,
}

/// A flow's capabilities.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Profile {
    /// The sender engine's algorithm.
    pub sender: Algorithm,
    /// The receiver's engine, if the receiver runs one (Rx-HPCC feedback,
    /// the probe responder).
    pub receiver: Option<Algorithm>,
    /// Data packets carry a telemetry header.
    pub data_telemetry: bool,
    /// The receiver echoes the data's telemetry on its ACKs.
    pub echo_telemetry: bool,
    /// The receiver hands the data's telemetry to its engine (whose
    /// decision may ask for window feedback).
    pub rx_telemetry: bool,
    /// The receiver notifies CE-marked data packets: at most one CNP per
    /// flow per this interval, a packet of its own; zero: for every such
    /// packet, a flag on the ACK or NACK that answers it (no ACK or NACK,
    /// no notification), as the HPCC reference simulator's NICs do.
    pub cnp_on_ce: Option<Ps>,
    /// When data may go.
    pub gate: Gate,
    /// What a probe is.
    pub probe: ProbeKind,
}

impl Profile {
    /// The capabilities of the scenario's congestion control, whose engine
    /// configuration (checked) is `engine`.
    pub fn of(cc: &CcCfg, engine: &AnyConfig) -> Profile {
        match &cc.algorithm {
            Cc::Hpcc(h) => Profile {
                sender: Algorithm::Hpcc,
                receiver: match h.mode {
                    HpccMode::Sender => None,
                    HpccMode::RxHpcc | HpccMode::Probe => Some(Algorithm::HpccReceiver),
                },
                data_telemetry: h.mode != HpccMode::Probe,
                echo_telemetry: h.mode == HpccMode::Sender,
                rx_telemetry: h.mode == HpccMode::RxHpcc,
                cnp_on_ce: None,
                gate: Gate::Window,
                probe: ProbeKind::Telemetry,
            },
            Cc::Ldcp { .. } => Profile {
                sender: Algorithm::Ldcp,
                receiver: None,
                data_telemetry: false,
                echo_telemetry: false,
                rx_telemetry: false,
                cnp_on_ce: None,
                gate: Gate::WindowOrTicks,
                probe: ProbeKind::Telemetry,
            },
            // Any other algorithm of the registry: what it asks of the
            // network; its samples come with every ACK (its data's
            // telemetry echoed on them where it reads telemetry).
            Cc::Registered { algorithm, .. } => Profile {
                sender: *algorithm,
                receiver: None,
                data_telemetry: algorithm.network().telemetry != TelemetryKind::None,
                echo_telemetry: algorithm.network().telemetry != TelemetryKind::None,
                rx_telemetry: false,
                cnp_on_ce: engine.receiver_cnp_ns(*algorithm).map(|ns| Ps::from_ns(ns as u64)),
                gate: algorithm.network().gate,
                probe: ProbeKind::Rtt,
            },
            Cc::LdcpRate(_) => Profile {
                sender: Algorithm::LdcpRate,
                receiver: None,
                data_telemetry: false,
                echo_telemetry: false,
                rx_telemetry: false,
                cnp_on_ce: Some(Ps::ZERO),
                gate: Gate::Rate,
                probe: ProbeKind::Rtt,
            },
        }
    }
}
