//! What a component may use while it handles one input ([`Ctx`]), and the
//! run's settings and random streams it carries. The world that owns all
//! of it lends it to the components (`world/`); components import this
//! module, never the world.

use cc_core::wire::auth::FeedbackKey;
use rand_chacha::ChaCha8Rng;

use crate::model::flow::FlowRecord;
use crate::model::net::Network;
use crate::model::packet::Slab;
use crate::model::telemetry::{PortSpeeds, Telemetry};
use crate::output::metrics::Metrics;
use crate::run::event::{EventQueue, Ps};

/// Run settings derived from the scenario, shared by every component.
#[derive(Clone, Debug)]
pub struct RunCfg {
    /// Payload per data packet.
    pub payload: u32,
    /// Data header bytes.
    pub header: u16,
    /// Control packet bytes.
    pub ack_bytes: u16,
    /// ACK every n packets.
    pub ack_every: u32,
    /// Retransmission timeout.
    pub rto_ps: Ps,
    /// Telemetry format.
    pub tel: Telemetry,
    /// Link speed of every switch port, for telemetry that carries none.
    pub port_speeds: PortSpeeds,
    /// Tag and verify notifications.
    pub integrity: bool,
    /// Control packets travel ahead of data (and are not paused by PFC).
    pub control_priority: bool,
    /// The switches' marking and drop thresholds, at the host link speed.
    pub marking: crate::setup::scenario::Marking,
    /// The algorithm's name ([`crate::setup::scenario::Cc::label`]).
    pub algorithm: &'static str,
    /// The run ends at this simulated time, ps, whatever is unfinished.
    pub stop_ps: Ps,
    /// Metrics sampling period.
    pub sample_ps: Ps,
    /// Fairness window.
    pub window_ps: Ps,
    /// Warm-up.
    pub warmup_ps: Ps,
    /// Flows traced over time.
    pub trace_flows: u32,
    /// The cases the senders' algorithm sorts an ACK into
    /// (`AlgorithmConfig::ACK_CASES`, NSCC's quadrants); the traced flows'
    /// ACKs are counted by case when there are any.
    pub ack_cases: &'static [&'static str],
    /// The senders' algorithm's name, which the cases' plot is named by.
    pub sender_name: &'static str,
    /// NIC Tx latency variation (exclusive upper bound; 0: none).
    pub tx_jitter_ps: Ps,
    /// Probability that a probe reply is lost.
    pub probe_loss: f64,
    /// On/off application: bytes per burst and the idle time after each.
    pub on_off: Option<(u64, Ps)>,
    /// The hosts' Rx buffers: the drain rate, Gb/s, and the size, bytes
    /// (`nic.rx_drain_gbps`); none: data goes to the host as it arrives.
    pub rx_buffer: Option<(u32, u64)>,
    /// The SACK transport (`nic.transport = "sack"`): the receiver ACKs
    /// once this many wire bytes arrived since its last ACK; none:
    /// go-back-N.
    pub sack_bytes: Option<u64>,
    /// SLEEK's loss recovery (`nic.sleek`, SACK transport, NSCC).
    pub sleek: bool,
    /// Sprayed flows (`nic.paths` above 1): the paths and the chooser.
    pub spray: Option<(cc_core::path::Paths, crate::setup::scenario::LoadBalancing)>,
}

/// The run's random streams, one per use, so that turning one use on
/// changes no other draw.
pub struct Rngs {
    /// WRED marking (after the workload's draws, from the same seed).
    pub wred: ChaCha8Rng,
    /// The NICs' Tx jitter.
    pub jitter: ChaCha8Rng,
    /// Probe-reply losses.
    pub loss: ChaCha8Rng,
    /// HPCC-PINT's randomized rounding at the switches and ACK sampling.
    pub pint: ChaCha8Rng,
    /// Trimming switches' coin: the arrival or the newest queued packet.
    pub trim: ChaCha8Rng,
    /// The seeds of sprayed flows' path choosers (their EVs come from the engine).
    pub ev: ChaCha8Rng,
}

/// Where engine events can be copied to: a trace being recorded (see
/// [`crate::run::world::World::record`]) and firmware co-simulating some flows.
#[derive(Default)]
pub struct Tap {
    /// Event trace being recorded, if any.
    pub trace: Option<crate::output::trace::TraceRecorder>,
    /// Firmware running some flows' congestion control.
    pub cosim: Option<crate::run::cosim::Firmware>,
}

/// What a component may use while it handles one input.
pub struct Ctx<'a> {
    /// The time of the event being handled, ps.
    pub now: Ps,
    /// Where to schedule what follows.
    pub q: &'a mut EventQueue,
    /// Packets in flight.
    pub pkts: &'a mut Slab,
    /// The run's settings.
    pub cfg: &'a RunCfg,
    /// The network's shape and routes.
    pub net: &'a Network,
    /// Every flow: what it is, and its outcome so far.
    pub flows: &'a mut [FlowRecord],
    /// What the run measures.
    pub metrics: &'a mut Metrics,
    /// Random streams.
    pub rng: &'a mut Rngs,
    /// Trace and co-simulation.
    pub tap: &'a mut Tap,
    /// The notification key shared by all NICs.
    pub key: FeedbackKey,
    /// Flows that finished while handling this input (their receivers
    /// close next).
    pub finished: &'a mut Vec<u32>,
}
