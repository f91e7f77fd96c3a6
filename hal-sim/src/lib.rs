//! hal-sim: a packet-level datacenter simulator whose NICs run the cc-core
//! engine, the same one the RISC-V firmware runs (DESIGN §6).
//!
//! ```text
//!  NIC scheduler+pacer ─PktSend─▶ Tx pipeline ─▶ link ─▶ switch(es) ─▶ link ─▶ Rx pipeline (receiver)
//!        ▲                        (telemetry header,     (queue, WRED/ECN,        │ ACK / NACK / CNP /
//!        │ window, rate, timers    ECN codepoint)         telemetry at dequeue)   │ feedback / probe reply
//!  cc-core engine ◀── Rx pipeline (sender) ◀──────────── reverse path ◀───────────┘
//! ```
//!
//! Deterministic for a seed: one event heap ordered by (time, sequence),
//! one seeded generator, the clock owned by the [`world::World`].
#![warn(missing_docs)]

pub mod cc;
pub mod event;
mod host;
pub mod metrics;
pub mod net;
pub mod packet;
pub mod report;
pub mod scenario;
pub mod telemetry;
pub mod topo;
pub mod workload;
pub mod world;
