//! Model: the network's parts and what crosses it. [`nic`] (scheduler,
//! pacer, transmit and receive pipelines, the per-flow sender and
//! receiver state, the cc-core engine), [`switch`] (queues, WRED/ECN,
//! PFC, telemetry at dequeue), [`net`] (links and ports), and the
//! [`packet`]s, [`telemetry`] stacks and [`flow`] records they pass.
//! Each part acts on a [`crate::run::ctx::Ctx`], never on the world
//! that owns it.

pub mod flow;
pub mod net;
pub mod nic;
pub mod packet;
pub mod switch;
pub mod telemetry;
