//! The NIC side of the engine as traits, and the event loop over them that
//! a firmware runs (DESIGN §3, HPCC++ §6.3.1 Figure 7): the `replay` image
//! of nic-firmware is `pump` over its event channel. The simulator does not
//! use it: its NIC model hands the engine one event at a time from its own
//! discrete-event queue, each answer acted on before the next event
//! exists, so it calls [`Engine::handle`] directly; a source it could
//! drain would be the whole simulation.
//!
//! ```text
//!   EventSource (Rx pipeline, scheduler PktSend, timers) ──▶ Engine ──▶ SchedulerPort
//! ```
//!
//! `embedded-hal` has no trait for a packet scheduler or a NIC Rx queue, so
//! these are the engine's own; a firmware's timer backend can still sit
//! behind `embedded_hal::delay` or a HAL timer in its implementation.

use crate::controller::Controller;
use crate::engine::Engine;
use crate::error::Error;
use crate::event::{Decision, Event, FlowId};
use crate::path::PathState;
use crate::units::Instant;

/// Where events come from: the sender's Rx pipeline (ACKs, NACKs, CNPs,
/// probe responses), the scheduler (PktSend), and expired timers.
pub trait EventSource {
    /// The next event and its time, borrowing any telemetry from the
    /// source's buffer; `None` when nothing is pending.
    fn next_event(&mut self) -> Option<(Instant, Event<'_>)>;
}

/// Where decisions go: the per-flow scheduler and pacer, the timer wheel,
/// and the Tx pipeline for probes and feedback.
pub trait SchedulerPort {
    /// Applies a flow's new decision: window, rate, ECN codepoint, timer,
    /// request.
    fn apply(&mut self, now: Instant, flow: FlowId, decision: &Decision);

    /// An event the engine refused; the flow's previous decision stands.
    /// The default drops it (the engine has counted it).
    fn refused(&mut self, now: Instant, flow: FlowId, error: Error) {
        let _ = (now, flow, error);
    }
}

/// Drains `source` through `engine` into `port`; returns how many events
/// were taken. A firmware's event loop.
pub fn pump<C, const N: usize, P>(
    engine: &mut Engine<C, N, P>,
    source: &mut impl EventSource,
    port: &mut impl SchedulerPort,
) -> usize
where
    C: Controller,
    P: PathState,
{
    let mut n = 0;
    while let Some((now, event)) = source.next_event() {
        n += 1;
        match engine.handle(now, &event) {
            Ok(d) => port.apply(now, event.flow, &d),
            Err(e) => port.refused(now, event.flow, e),
        }
    }
    n
}
