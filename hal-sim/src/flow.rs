//! A flow as the simulator knows it: what it is ([`FlowRecord`], one per
//! flow for the whole run, with its outcome), and the state the two NICs
//! keep for it while it runs ([`Sender`] at the source, [`Receiver`] at
//! the destination; both dropped when the flow finishes).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use cc_core::prelude::*;
use cc_core::wire::auth::ReplayGuard;

use crate::event::Ps;

/// A flow's identity, path figures and outcome.
#[derive(Clone, Debug)]
pub struct FlowRecord {
    /// The flow's index in `World::flows` and its id in the engines' tables.
    pub id: u32,
    /// Source host index.
    pub src_host: u32,
    /// Destination host index.
    pub dst_host: u32,
    /// Payload bytes the flow carries in all.
    pub size: u64,
    /// When the flow starts, ps.
    pub start_ps: Ps,
    /// The flow's hash that picks its path among equal-cost ones (ECMP);
    /// its packets carry it, as real packets carry their 5-tuple.
    pub hash: u32,
    /// The base RTT T the flow's engine uses, ns: the path's, or the
    /// scenario's `cc.base_rtt_ns` for every flow.
    pub base_rtt_ns: u32,
    /// The path's own base RTT, ns (propagation, and one data packet's and
    /// one ACK's serialization on every link): what the ideal FCT counts.
    pub path_rtt_ns: u32,
    /// Slowest link on the path, bit/s.
    pub bottleneck_bps: u64,
    /// Switches on the path.
    pub hops: usize,
    /// Destination port (for the ns-3 FCT file).
    pub dport: u16,
    /// When every byte was acknowledged.
    pub finish_ps: Option<Ps>,
    /// Data packets sent again.
    pub retransmits: u64,
}

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
/// destination and size, is its [`FlowRecord`]).
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
            pacer: Pacer::default(),
            credits: 0,
            cc_gen: 0,
            rto_deadline: Ps::NEVER,
            rto_pending: false,
            app_limit,
            app_waiting: false,
            feedback_guard: ReplayGuard::default(),
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
    /// When it last sent a CNP (DCQCN's notification point).
    pub np: cc_core::dcqcn::NotificationPoint,
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
            np: cc_core::dcqcn::NotificationPoint::default(),
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

/// Per-flow state by flow id, for the flows one NIC has: a hash map with
/// a multiplicative hash of the id (ids are small integers; SipHash would
/// cost more than the rest of a lookup).
pub type ById<T> = HashMap<u32, T, BuildHasherDefault<IdHasher>>;

/// Fibonacci hashing of a `u32` id.
#[derive(Default)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u32(&mut self, i: u32) {
        self.0 = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}
