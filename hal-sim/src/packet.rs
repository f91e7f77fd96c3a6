//! Packets and the slab that owns them while they are in the network.

use cc_core::telemetry::HopSample;
use cc_core::units::Window;

use crate::event::Ps;
use cc_core::ProbeId;

/// What a packet is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PktKind {
    /// Payload of a flow.
    Data,
    /// Cumulative acknowledgement (echoes telemetry and ECE).
    Ack,
    /// Go-back-N request: the receiver saw a gap at `seq`.
    Nack,
    /// HPCC++ telemetry probe (collects telemetry like data).
    Probe,
    /// The responder's reply: one hop of telemetry.
    ProbeReply,
    /// Rx-HPCC window feedback.
    Feedback,
    /// Congestion notification (LDCP commercial-NIC variant).
    Cnp,
    /// RTT request (LDCP commercial-NIC variant).
    RttReq,
    /// RTT response.
    RttResp,
}

impl PktKind {
    /// Whether switches write telemetry into it.
    pub fn collects_telemetry(self) -> bool {
        matches!(self, PktKind::Data | PktKind::Probe)
    }
}

/// The two ECN bits of the IP header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnBits {
    /// Not ECN-capable.
    NotEct,
    /// ECN-capable.
    Ect,
    /// Congestion experienced.
    Ce,
}

/// A packet without a telemetry buffer.
pub const NO_TEL: u32 = u32::MAX;

/// Room for a telemetry header and stack of 8 hops in any format.
pub const TEL_CAP: usize = 288;

/// A telemetry byte buffer carried in a packet.
#[derive(Clone, Copy, Debug)]
pub struct TelBuf {
    /// How many of `buf`'s bytes the telemetry header and stack use.
    pub len: u16,
    /// Room for the largest header and stack a format writes for 8 hops.
    pub buf: [u8; TEL_CAP],
}

impl Default for TelBuf {
    fn default() -> Self {
        TelBuf {
            len: 0,
            buf: [0; TEL_CAP],
        }
    }
}

impl TelBuf {
    /// The used bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.buf[..self.len as usize]
    }
}

/// A packet in flight.
#[derive(Clone, Debug)]
pub struct Packet {
    /// What it is.
    pub kind: PktKind,
    /// The flow it belongs to.
    pub flow: u32,
    /// The flow's ECMP hash (a switch hashes the header; the flow's
    /// packets all hash alike).
    pub hash: u32,
    /// Source and destination host node ids.
    pub src: u32,
    /// Destination host node.
    pub dst: u32,
    /// Data: byte offset of the payload; Ack/Nack: cumulative ack.
    pub seq: u64,
    /// Payload bytes.
    pub len: u32,
    /// Bytes on the wire (headers, telemetry, payload).
    pub wire: u32,
    /// ECN codepoint.
    pub ecn: EcnBits,
    /// ECN-Echo (acks).
    pub ece: bool,
    /// Packets this ACK covers (acks).
    pub acked_pkts: u32,
    /// When it entered the current switch (for hop latency / sojourn).
    pub ingress_ps: Ps,
    /// The port it entered the current switch by.
    pub ingress_port: u16,
    /// Telemetry header and stack (data, probes; echoed on acks), kept in
    /// the slab beside the packet ([`Slab::tel`]); `NO_TEL` when none.
    pub tel: u32,
    /// Probe reply: the chosen hop.
    pub hop: Option<(u8, HopSample)>,
    /// Probes and RTT requests: the engine's number for them, echoed by
    /// their replies.
    pub probe: ProbeId,
    /// Feedback (Rx-HPCC): the window the receiver asks for; `tag` seals it.
    pub feedback: Window,
    /// Integrity tag over the notification (acks with telemetry, feedback).
    pub tag: [u8; 8],
    /// Sender's transmit timestamp (data, RTT requests), echoed by the
    /// receiver (acks, RTT responses): the NIC's RTT measurement.
    pub ts_ps: Ps,
}

impl Packet {
    /// A packet of `kind` of the flow `flow` hashing to `hash`, from host
    /// node `src` to `dst`, with everything else zero.
    pub fn new(kind: PktKind, flow: u32, hash: u32, src: u32, dst: u32) -> Self {
        Packet {
            kind,
            flow,
            hash,
            src,
            dst,
            seq: 0,
            len: 0,
            wire: 0,
            ecn: EcnBits::NotEct,
            ece: false,
            acked_pkts: 0,
            ingress_ps: Ps::ZERO,
            ingress_port: 0,
            probe: ProbeId(0),
            tel: NO_TEL,
            hop: None,
            feedback: Window::ZERO,
            tag: [0; 8],
            ts_ps: Ps::ZERO,
        }
    }
}

/// Packets by index, with a free list so indices are reused, and their
/// telemetry buffers apart: a packet is about 100 bytes to copy, and the
/// receiver hands the data packet's buffer to its ACK instead of copying
/// 288 bytes.
#[derive(Debug, Default)]
pub struct Slab {
    pkts: Vec<Packet>,
    free: Vec<u32>,
    tels: Vec<TelBuf>,
    tel_free: Vec<u32>,
}

impl Slab {
    /// Stores a packet; returns its index.
    pub fn insert(&mut self, p: Packet) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.pkts[i as usize] = p;
                i
            }
            None => {
                self.pkts.push(p);
                (self.pkts.len() - 1) as u32
            }
        }
    }

    /// The packet at `i`.
    pub fn get(&self, i: u32) -> &Packet {
        &self.pkts[i as usize]
    }

    /// The packet at `i`, mutably.
    pub fn get_mut(&mut self, i: u32) -> &mut Packet {
        &mut self.pkts[i as usize]
    }

    /// Frees `i` and its telemetry buffer for reuse.
    pub fn remove(&mut self, i: u32) {
        let t = std::mem::replace(&mut self.pkts[i as usize].tel, NO_TEL);
        if t != NO_TEL {
            self.tel_free.push(t);
        }
        self.free.push(i);
    }

    /// Telemetry buffers ever allocated, and how many are free now.
    pub fn tel_buffers(&self) -> (usize, usize) {
        (self.tels.len(), self.tel_free.len())
    }

    /// A new, empty telemetry buffer for a packet being built.
    pub fn new_tel(&mut self) -> u32 {
        match self.tel_free.pop() {
            Some(t) => {
                self.tels[t as usize].len = 0;
                t
            }
            None => {
                self.tels.push(TelBuf::default());
                (self.tels.len() - 1) as u32
            }
        }
    }

    /// The telemetry bytes of a packet (empty without a buffer).
    pub fn tel(&self, p: &Packet) -> &[u8] {
        match p.tel {
            NO_TEL => &[],
            t => self.tels[t as usize].bytes(),
        }
    }

    /// Telemetry buffer `t` (from [`Slab::new_tel`] or a packet's `tel`).
    pub fn tel_buf_mut(&mut self, t: u32) -> &mut TelBuf {
        &mut self.tels[t as usize]
    }

    /// Packet `i` and its telemetry buffer, if it has one.
    pub fn with_tel_mut(&mut self, i: u32) -> (&mut Packet, Option<&mut TelBuf>) {
        let p = &mut self.pkts[i as usize];
        let t = match p.tel {
            NO_TEL => None,
            t => Some(&mut self.tels[t as usize]),
        };
        (p, t)
    }

    /// Detaches packet `i`'s telemetry buffer (to hand it to another
    /// packet); `i` keeps none.
    pub fn take_tel(&mut self, i: u32) -> u32 {
        std::mem::replace(&mut self.pkts[i as usize].tel, NO_TEL)
    }
}
