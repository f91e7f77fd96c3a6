//! A flow as the simulator knows it: what it is, one [`FlowRecord`] per
//! flow for the whole run, with its outcome. The state the two NICs keep
//! for it while it runs is the NIC's (`nic/flows.rs`).

use crate::run::event::Ps;

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
    /// its packets carry it, as real packets carry their 5-tuple. Under
    /// [`crate::model::net::Ecmp::Reference`] it is the data's ports
    /// (source port in the low 16 bits).
    pub hash: u32,
    /// The same for packets from the destination back to the source
    /// (ACKs, NACKs, CNPs): `hash`, or under `Ecmp::Reference` the ports
    /// swapped.
    pub back_hash: u32,
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
    /// The flow's place in its source NIC's senders ([`NOWHERE`] when
    /// not sending).
    pub tx_at: u32,
    /// Its place in its destination NIC's receivers ([`NOWHERE`] when
    /// not receiving).
    pub rx_at: u32,
}

/// No place in a NIC's per-flow table (a flow not open on that side).
pub const NOWHERE: u32 = u32::MAX;
