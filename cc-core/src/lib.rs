//! `cc-core`: precise datacenter congestion control for SmartNIC firmware.
//!
//! A `no_std`, allocation-free, fixed-point engine implementing
//!
//! - **HPCC++** (draft-miao-iccrg-hpccplus, October 2022): in-band-telemetry
//!   driven `MeasureInflight` / `ComputeWind` / `NewAck`, Rx-HPCC, probe
//!   mode, the sojourn-time variant — module [`hpcc`];
//! - **LDCP** (draft-dai-tsvwg-pfc-free-congestion-control-01): PAWA,
//!   windows below one packet, zero-RTT fast start, the commercial-NIC
//!   variant — module [`ldcp`];
//! - the baselines operators run today, to compare with: **DCTCP** (RFC
//!   8257) — module [`dctcp`]; **DCQCN** (SIGCOMM 2015, as RoCE NICs run it:
//!   notification and reaction points) — module [`dcqcn`];
//!
//! behind one event API ([`event`]): an [`Event`] in, a [`Decision`] out,
//! per-flow state in a fixed-capacity [`Engine`] table.
//!
//! The engine is sans-IO: it reads no clock, draws no random numbers,
//! allocates nothing, logs nothing, and never panics on any event. No
//! arithmetic depends on `usize`, so a trace gives bit-identical decisions
//! on x86_64, riscv32imac and riscv64imac.
//!
//! ```
//! use cc_core::prelude::*;
//!
//! let mut engine: Engine<Ldcp, 16> = Engine::new(LdcpConfig::draft_default()).unwrap();
//! let flow = FlowId(7);
//! let params = FlowParams {
//!     algorithm: Algorithm::Ldcp,
//!     base_rtt: BaseRtt::from_nanos(8_000).unwrap(),
//!     line_rate: LinkSpeed::from_gbps(100),
//!     start_seq: Seq(0),
//! };
//! let d = engine.handle(Instant::ZERO, &Event { flow, kind: EventKind::Start(params) }).unwrap();
//! assert_eq!(d.window.bytes_floor(), 100_000); // IW = BDP
//! ```
//!
//! Features: `reference` adds the `f64` models of the drafts' pseudocode
//! and of the baselines (never enabled in firmware); `defmt` derives `defmt::Format`.

#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

// The fuzz target's `Arbitrary` derive (feature `arbitrary`, never in
// firmware) names `std`; in-file tests read soak settings from the
// environment.
#[cfg(any(test, feature = "arbitrary"))]
extern crate std;

#[macro_use]
mod registry;
mod algorithm;
#[macro_use]
pub mod algorithms;
#[cfg(feature = "bench")]
pub mod bench;
pub mod codec;
pub mod controller;
pub mod dcqcn;
pub mod dctcp;
pub mod engine;
pub mod error;
pub mod event;
mod fixmath;
pub mod hal;
pub mod hns;
mod hop_walk;
pub mod hpcc;
pub mod hpcc_pint;
pub mod ldcp;
pub mod notification;
pub mod nscc;
pub mod params;
pub mod path;
mod per_rtt;
pub mod powertcp;
mod reciprocals;
#[cfg(feature = "reference")]
pub mod reference;
pub mod swift;
pub mod telemetry;
#[cfg(any(test, feature = "test-support"))]
pub mod testing;
pub mod timely;
pub mod units;
pub mod wire;

/// docs/engine.md's code example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../../docs/engine.md")]
pub struct EngineGuideExample;

pub use algorithms::{AnyConfig, AnyController};
pub use controller::{AlgorithmConfig, Controller};
pub use engine::{Engine, Stats};
pub use event::{
    Ack, Algorithm, Decision, Ecn, EcnEcho, Error, Event, EventKind, FlowId, FlowParams, MessageEnd, ProbeId, Request,
    TimerRequest,
};

/// Everything a NIC integration needs, in one import: the event API, the
/// engine and its mixed table, every algorithm's configuration (from the
/// registry, so a new one is here by its registry line), units and
/// telemetry. An algorithm's own controller type is in its module
/// (`cc_core::swift::Swift`); the first ones' are here too.
pub mod prelude {
    pub use crate::algorithms::{AnyConfig, AnyController};
    pub use crate::controller::{AlgorithmConfig, Controller};
    pub use crate::dcqcn::Dcqcn;
    pub use crate::dctcp::Dctcp;
    pub use crate::engine::{Engine, Stats};
    pub use crate::event::*;
    pub use crate::hal::{pump, EventSource, SchedulerPort};
    pub use crate::hpcc::{AdditiveIncrease, HpccReceiver, HpccSender, QueueSignal, Reciprocals, TelemetrySource};
    pub use crate::ldcp::{FastStart, Ldcp, LdcpRate, Phase};
    pub use crate::telemetry::{CounterWidths, HopHistory, HopSample, TxUtilization};
    pub use crate::units::*;

    /// Each configuration type of the registry, by its own name.
    macro_rules! configurations {
        ($($field:ident: $cfg:path, $title:literal { $($variant:ident = $name:literal,)+ })+) => {
            $( pub use $cfg; )+
        };
    }
    for_each_algorithm!(configurations);
}
