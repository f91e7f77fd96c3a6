//! The state a NIC keeps for each flow while it runs: [`Sender`] at the
//! source (its engine handle, pacer and sequence numbers), [`Receiver`] at
//! the destination, each in a [`PerFlow`] table of numbered places, both
//! dropped when the flow finishes.

use cc_core::engine::FlowHandle;
use cc_core::prelude::*;
use cc_core::wire::auth::ReplayGuard;

use crate::run::event::Ps;

/// The sender's pacer for one flow: when its next data packet may go.
#[derive(Clone, Copy, Debug, Default)]
pub struct Pacer {
    /// Earliest next data packet.
    pub next_send_ps: Ps,
    /// The gap after the last data packet, always `ser_ps(wire, rate)`;
    /// kept so that re-timing it on a new rate (every ACK may bring one)
    /// takes one division, not two.
    pub gap_ps: Ps,
    /// Wire bytes of the last data packet.
    pub wire: u32,
}

/// What the source NIC keeps for a flow it sends (what the flow is, its
/// destination and size, is its [`FlowRecord`](crate::model::flow::FlowRecord)).
#[derive(Clone, Debug)]
pub struct Sender {
    /// Next byte to send.
    pub snd_nxt: u64,
    /// Cumulatively acknowledged bytes.
    pub snd_una: u64,
    /// Highest byte ever sent (retransmission accounting).
    pub max_sent: u64,
    /// Window from the engine.
    pub window: Window,
    /// Pacing rate from the engine (its decision's pacing, in bit/s).
    pub rate: Rate,
    /// The decision's pacing `rate` was computed from.
    pub pacing: Option<Pacing>,
    /// The rate's divisions by the pacing's `per` (the base RTT), kept:
    /// a new window then costs no divide.
    pub rate_div: Option<RateDivisor>,
    /// The pacer.
    pub pacer: Pacer,
    /// Packets the engine's timer released (windows below one packet).
    pub credits: u32,
    /// Current engine-timer generation (older timer events are void).
    pub cc_gen: u32,
    /// Retransmission deadline ([`Ps::NEVER`]: none).
    pub rto_deadline: Ps,
    /// An Rto event is in the queue.
    pub rto_pending: bool,
    /// Bytes the application has handed over so far (`size` unless the
    /// workload is on/off).
    pub app_limit: u64,
    /// An on/off flow waits for its next burst (one release queued).
    pub app_waiting: bool,
    /// The last window feedback number accepted (replays are refused).
    pub feedback_guard: ReplayGuard,
    /// The flow's handle in the NIC's engine (none if the engine refused
    /// it or the firmware runs it).
    pub engine: Option<FlowHandle>,
    /// The SACK transport's state (`nic.transport = "sack"`); none:
    /// go-back-N.
    pub sack: Option<Box<super::sack::SackTx>>,
}

impl Sender {
    /// A flow about to send its first byte; `app_limit` is what the
    /// application hands over first.
    pub fn new(app_limit: u64) -> Self {
        Sender {
            snd_nxt: 0,
            snd_una: 0,
            max_sent: 0,
            window: Window::ZERO,
            rate: Rate::ZERO,
            pacing: None,
            rate_div: None,
            pacer: Pacer::default(),
            credits: 0,
            cc_gen: 0,
            rto_deadline: Ps::NEVER,
            rto_pending: false,
            app_limit,
            app_waiting: false,
            feedback_guard: ReplayGuard::default(),
            engine: None,
            sack: None,
        }
    }
}

/// What the destination NIC keeps for a flow it receives.
#[derive(Clone, Copy, Debug)]
pub struct Receiver {
    /// Next byte expected.
    pub rcv_nxt: u64,
    /// Packets received since the last ACK.
    pub unacked: u32,
    /// A CE mark waits to be echoed.
    pub ce_pending: bool,
    /// rcv_nxt for which a NACK went out.
    pub nack_for: Option<u64>,
    /// Bytes delivered in order.
    pub delivered: u64,
    /// The number of the next window feedback it seals.
    pub feedback_seq: u32,
    /// When it last sent a CNP (the notification point of an algorithm
    /// that asks for CNPs).
    pub np: cc_core::notification::NotificationPoint,
    /// The flow's handle in the receiver engine, if it runs one.
    pub engine: Option<FlowHandle>,
    /// The SACK transport: the flow's place in the NIC's `sack_rx`
    /// ([`NOWHERE`](crate::model::flow::NOWHERE) under go-back-N).
    pub sack_at: u32,
}

impl Receiver {
    /// A flow with nothing received yet.
    pub fn new() -> Self {
        Receiver {
            rcv_nxt: 0,
            unacked: 0,
            ce_pending: false,
            nack_for: None,
            delivered: 0,
            feedback_seq: 0,
            np: cc_core::notification::NotificationPoint::default(),
            engine: None,
            sack_at: crate::model::flow::NOWHERE,
        }
    }

    /// The state of a finished flow of `size` bytes, for a copy of its data
    /// that arrives late: everything received and acknowledged (the sender
    /// finished on the ACK of the last byte, sent at once with nothing
    /// pending, and every later copy was out of order and acknowledged at
    /// once too).
    pub fn finished(size: u64) -> Self {
        Receiver {
            rcv_nxt: size,
            delivered: size,
            ..Receiver::new()
        }
    }
}

impl Default for Receiver {
    fn default() -> Self {
        Self::new()
    }
}

/// The state one NIC keeps for each of its flows on one side (sending or
/// receiving), in numbered places. A flow's place is kept in its
/// [`FlowRecord`](crate::model::flow::FlowRecord) (`tx_at`, `rx_at`), so finding its state takes one
/// index, not a hash lookup; each place also keeps the flow's id, and a
/// lookup whose id does not match finds nothing. Places freed are used
/// again, so a table is as long as the most flows open on that side at
/// once, not as the run's flow count.
#[derive(Clone, Debug)]
pub struct PerFlow<T> {
    places: Vec<Option<(u32, T)>>,
    free: Vec<u32>,
    open: usize,
}

impl<T> Default for PerFlow<T> {
    fn default() -> Self {
        PerFlow {
            places: Vec::new(),
            free: Vec::new(),
            open: 0,
        }
    }
}

impl<T> PerFlow<T> {
    /// Opens `flow` with state `v`; the answer is its place.
    pub fn open(&mut self, flow: u32, v: T) -> u32 {
        self.open += 1;
        crate::place(&mut self.places, &mut self.free, Some((flow, v)))
    }

    /// The state of `flow` at place `at`.
    pub fn get(&self, at: u32, flow: u32) -> Option<&T> {
        match self.places.get(at as usize) {
            Some(Some((id, v))) if *id == flow => Some(v),
            _ => None,
        }
    }

    /// The state of `flow` at place `at`, mutably.
    pub fn get_mut(&mut self, at: u32, flow: u32) -> Option<&mut T> {
        match self.places.get_mut(at as usize) {
            Some(Some((id, v))) if *id == flow => Some(v),
            _ => None,
        }
    }

    /// Closes `flow` at place `at`: its state, if it was there.
    pub fn close(&mut self, at: u32, flow: u32) -> Option<T> {
        self.get(at, flow)?;
        let (_, v) = self.places.get_mut(at as usize)?.take()?;
        self.free.push(at);
        self.open -= 1;
        Some(v)
    }

    /// Flows open.
    pub fn len(&self) -> usize {
        self.open
    }

    /// Whether no flow is open.
    pub fn is_empty(&self) -> bool {
        self.open == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::flow::NOWHERE;

    #[test]
    fn a_place_finds_only_its_own_flow_and_is_used_again_once_closed() {
        let mut t = PerFlow::default();
        let a = t.open(7, "seven");
        let b = t.open(9, "nine");
        assert_ne!(a, b);
        assert_eq!((t.get(a, 7), t.get(b, 9)), (Some(&"seven"), Some(&"nine")));
        // Another flow's place, a place never given, no place: nothing.
        assert_eq!((t.get(a, 9), t.get(5, 7), t.get(NOWHERE, 7)), (None, None, None));
        assert_eq!(t.len(), 2);
        assert_eq!(t.close(a, 9), None, "the wrong flow closes nothing");
        assert_eq!(t.close(a, 7), Some("seven"));
        assert_eq!(t.get(a, 7), None);
        assert_eq!((t.close(a, 7), t.len()), (None, 1));
        // The freed place is the next one given; the table does not grow.
        let c = t.open(11, "eleven");
        assert_eq!(c, a);
        assert_eq!(t.places.len(), 2);
        *t.get_mut(c, 11).unwrap() = "ELEVEN";
        assert_eq!(t.get(c, 11), Some(&"ELEVEN"));
        assert_eq!(t.get_mut(c, 7), None);
        assert!(t.close(b, 9).is_some() && t.close(c, 11).is_some() && t.is_empty());
    }
}
