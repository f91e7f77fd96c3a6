//! Packets and the slab that owns them while they are in the network.

use cc_core::telemetry::HopSample;
use cc_core::units::Window;

use crate::place;
use crate::run::event::Ps;
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

/// A packet without a probe reply's hop.
pub const NO_HOP: u32 = u32::MAX;

/// Room for a telemetry header and stack of 8 hops in any format.
pub const TEL_CAP: usize = 288;

/// A telemetry buffer carried in a packet, where it lies in the slab: two
/// bytes of used length, then the room for the run's format.
#[derive(Debug)]
pub struct TelBuf<'a>(&'a mut [u8]);

impl<'a> TelBuf<'a> {
    /// A buffer over `room`: its first two bytes keep the length, the rest
    /// are the room (none if `room` is shorter than two bytes).
    pub fn new(room: &'a mut [u8]) -> Self {
        TelBuf(room)
    }

    /// How many bytes the telemetry header and stack use.
    pub fn len(&self) -> u16 {
        stored_len(self.0)
    }

    /// Whether the buffer holds no telemetry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Sets how many bytes are used.
    pub fn set_len(&mut self, n: u16) {
        if let Some(b) = self.0.first_chunk_mut::<2>() {
            *b = n.to_le_bytes();
        }
    }

    /// The room, used or not.
    pub fn room(&mut self) -> &mut [u8] {
        self.0.get_mut(2..).unwrap_or_default()
    }

    /// The used bytes.
    pub fn bytes(&self) -> &[u8] {
        used(self.0)
    }
}

/// The length kept in a buffer laid out as [`TelBuf`]'s.
fn stored_len(b: &[u8]) -> u16 {
    b.first_chunk::<2>().map_or(0, |n| u16::from_le_bytes(*n))
}

/// The used bytes of a buffer laid out as [`TelBuf`]'s.
fn used(b: &[u8]) -> &[u8] {
    let n = stored_len(b) as usize;
    b.get(2..(2 + n).min(b.len())).unwrap_or_default()
}

/// Asks the CPU to bring the cache line at `at` in (a hint: it neither
/// reads the memory into the program nor faults; nothing off x86-64).
#[inline(always)]
fn prefetch(at: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE is part of every x86-64 CPU, and a prefetch of any
    // address is only a hint.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(at.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
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
    /// Acks and NACKs: a CNP rides on it (DCQCN's notification point
    /// flags the answer to a CE-marked packet, as the HPCC reference
    /// simulator's NICs do).
    pub cnp: bool,
    /// Packets this ACK covers (acks).
    pub acked_pkts: u32,
    /// When it entered the current switch (for hop latency / sojourn).
    pub ingress_ps: Ps,
    /// The port it entered the current switch by.
    pub ingress_port: u16,
    /// Telemetry header and stack (data, probes; echoed on acks), kept in
    /// the slab beside the packet ([`Slab::tel`]); `NO_TEL` when none.
    pub tel: u32,
    /// Probe reply: where its chosen hop lies in the slab
    /// ([`Slab::hop`]); `NO_HOP` when none.
    pub hop: u32,
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
    /// Data: the receiver NIC's counter when it arrived, stamped there.
    /// Acks: the same for the acknowledged data (t2), and when the ack
    /// left (t3), ns modulo 2^32 ([`nic_clock`]).
    pub t2: u32,
    /// t3 (see `t2`).
    pub t3: u32,
    /// IP TTL: [`TTL`] from a host, less one at each switch.
    pub ttl: u8,
    /// Acks: switches the acknowledged data crossed (`TTL` − its TTL).
    pub fwd_hops: u8,
    /// Acks: the receiver NIC's Rx buffer level when the ack was made, in
    /// 32 steps of its size (0 empty ..= 31 full; Falcon's 5-bit level).
    pub rx_level: u8,
}

/// The TTL every host sends with.
pub const TTL: u8 = 64;

/// A host NIC's free-running nanosecond counter at `at`, as its timestamps
/// read it: each NIC's starts at its own point (a hash of its node id), and
/// wraps at 2^32 ns, so the engine only ever sees differences on one
/// counter, across wraps, as hardware gives them.
pub fn nic_clock(node: u32, at: Ps) -> u32 {
    let offset = (node as u64).wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32;
    at.as_ns().wrapping_add(offset) as u32
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
            cnp: false,
            acked_pkts: 0,
            ingress_ps: Ps::ZERO,
            ingress_port: 0,
            probe: ProbeId(0),
            tel: NO_TEL,
            hop: NO_HOP,
            feedback: Window::ZERO,
            tag: [0; 8],
            ts_ps: Ps::ZERO,
            t2: 0,
            t3: 0,
            ttl: TTL,
            fwd_hops: 0,
            rx_level: 0,
        }
    }
}

/// Packets by index, with a free list so indices are reused, and their
/// telemetry buffers apart: a packet is about 100 bytes to copy, and the
/// receiver hands the data packet's buffer to its ACK instead of copying
/// it. The buffers lie end to end, each as big as the run's format needs
/// (66 bytes of compact stack, or up to [`TEL_CAP`]): thousands are in
/// flight on a fabric, and a switch writes into one per hop.
#[derive(Debug)]
pub struct Slab {
    pkts: Vec<Packet>,
    free: Vec<u32>,
    /// Buffer t is `tels[t · stride ..][.. stride]`, laid out as a
    /// [`TelBuf`].
    tels: Vec<u8>,
    stride: usize,
    tel_free: Vec<u32>,
    /// Probe replies' hops (index and sample), kept apart: they are few,
    /// and 40 bytes in every packet would make every packet that much
    /// longer to copy and to load.
    hops: Vec<(u8, HopSample)>,
    hop_free: Vec<u32>,
}

impl Default for Slab {
    /// Room for any format's telemetry.
    fn default() -> Self {
        Slab::new(TEL_CAP)
    }
}

impl Slab {
    /// An empty slab whose telemetry buffers have `room` bytes each.
    pub fn new(room: usize) -> Self {
        Slab {
            pkts: Vec::new(),
            free: Vec::new(),
            tels: Vec::new(),
            stride: 2 + room,
            tel_free: Vec::new(),
            hops: Vec::new(),
            hop_free: Vec::new(),
        }
    }

    /// Stores a packet; returns its index.
    #[inline(always)]
    pub fn insert(&mut self, p: Packet) -> u32 {
        place(&mut self.pkts, &mut self.free, p)
    }

    /// The packet at `i`.
    pub fn get(&self, i: u32) -> &Packet {
        &self.pkts[i as usize]
    }

    /// Asks the CPU to bring packet `i` into its cache ahead of use (a
    /// hint: nothing happens if `i` is no packet).
    #[inline(always)]
    pub fn prefetch(&self, i: u32) {
        if let Some(p) = self.pkts.get(i as usize) {
            let at = std::ptr::from_ref(p).cast::<u8>();
            prefetch(at);
            prefetch(at.wrapping_add(64));
        }
    }

    /// Asks the CPU to bring the start of telemetry buffer `t` (a
    /// packet's `tel`, where a switch writes its hop) into its cache ahead
    /// of use (nothing for [`NO_TEL`]).
    #[inline(always)]
    pub fn prefetch_tel(&self, t: u32) {
        if let Some(b) = (t as usize).checked_mul(self.stride).and_then(|at| self.tels.get(at)) {
            prefetch(b);
        }
    }

    /// The packet at `i`, mutably.
    pub fn get_mut(&mut self, i: u32) -> &mut Packet {
        &mut self.pkts[i as usize]
    }

    /// Frees `i`, its telemetry buffer and its hop for reuse.
    #[inline(always)]
    pub fn remove(&mut self, i: u32) {
        let p = &mut self.pkts[i as usize];
        let (t, h) = (
            std::mem::replace(&mut p.tel, NO_TEL),
            std::mem::replace(&mut p.hop, NO_HOP),
        );
        if t != NO_TEL {
            self.tel_free.push(t);
        }
        if h != NO_HOP {
            self.hop_free.push(h);
        }
        self.free.push(i);
    }

    /// Keeps a probe reply's hop (its index on the path, and its sample)
    /// for a packet being built: the answer goes in the packet's `hop`.
    pub fn put_hop(&mut self, hop: (u8, HopSample)) -> u32 {
        place(&mut self.hops, &mut self.hop_free, hop)
    }

    /// A probe reply's hop (none for other packets).
    pub fn hop(&self, p: &Packet) -> Option<(u8, HopSample)> {
        self.hops.get(p.hop as usize).copied()
    }

    /// Telemetry buffers ever allocated, and how many are free now.
    pub fn tel_buffers(&self) -> (usize, usize) {
        (self.tels.len() / self.stride, self.tel_free.len())
    }

    /// A new, empty telemetry buffer for a packet being built.
    #[inline(always)]
    pub fn new_tel(&mut self) -> u32 {
        let t = match self.tel_free.pop() {
            Some(t) => t,
            None => {
                let t = self.tels.len() / self.stride;
                self.tels.resize(self.tels.len() + self.stride, 0);
                t as u32
            }
        };
        self.tel_buf_mut(t).set_len(0);
        t
    }

    /// Where buffer `t` lies in `tels`.
    fn tel_span(&self, t: u32) -> std::ops::Range<usize> {
        let at = t as usize * self.stride;
        at..at + self.stride
    }

    /// The telemetry bytes of a packet (empty without a buffer).
    pub fn tel(&self, p: &Packet) -> &[u8] {
        match p.tel {
            NO_TEL => &[],
            t => used(&self.tels[self.tel_span(t)]),
        }
    }

    /// Telemetry buffer `t` (from [`Slab::new_tel`] or a packet's `tel`).
    #[inline(always)]
    pub fn tel_buf_mut(&mut self, t: u32) -> TelBuf<'_> {
        let span = self.tel_span(t);
        TelBuf(&mut self.tels[span])
    }

    /// Packet `i` and its telemetry buffer, if it has one.
    #[inline(always)]
    pub fn with_tel_mut(&mut self, i: u32) -> (&mut Packet, Option<TelBuf<'_>>) {
        let span = match self.pkts[i as usize].tel {
            NO_TEL => None,
            t => Some(self.tel_span(t)),
        };
        let t = span.map(|s| TelBuf(&mut self.tels[s]));
        (&mut self.pkts[i as usize], t)
    }

    /// Detaches packet `i`'s telemetry buffer (to hand it to another
    /// packet); `i` keeps none.
    pub fn take_tel(&mut self, i: u32) -> u32 {
        std::mem::replace(&mut self.pkts[i as usize].tel, NO_TEL)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Buffers of a slab sized for the compact stack keep their bytes and
    /// lengths apart, and a freed one comes back empty.
    #[test]
    fn telemetry_buffers_lie_end_to_end() {
        let mut slab = Slab::new(66);
        let (a, b) = (slab.new_tel(), slab.new_tel());
        for (t, fill) in [(a, 0xAA), (b, 0xBB)] {
            let mut buf = slab.tel_buf_mut(t);
            assert_eq!(buf.room().len(), 66);
            buf.room().fill(fill);
            buf.set_len(66);
        }
        let mut p = Packet::new(PktKind::Data, 0, 0, 0, 1);
        p.tel = b;
        let id = slab.insert(p);
        assert_eq!(slab.tel(slab.get(id)), &[0xBB; 66][..]);
        slab.remove(id);
        assert_eq!(slab.tel_buffers(), (2, 1));
        let c = slab.new_tel();
        assert_eq!(c, b);
        assert!(slab.tel_buf_mut(c).is_empty());
        assert_eq!(slab.tel_buf_mut(a).bytes(), &[0xAA; 66][..]);
    }

    /// A probe reply's hop is kept beside the packet, freed with it, and
    /// its place used again.
    #[test]
    fn a_hop_lives_and_goes_with_its_packet() {
        let mut slab = Slab::default();
        let sample = |id| HopSample {
            id,
            ..HopSample::default()
        };
        let mut p = Packet::new(PktKind::ProbeReply, 0, 0, 0, 1);
        assert_eq!(slab.hop(&p), None);
        p.hop = slab.put_hop((3, sample(9)));
        let id = slab.insert(p.clone());
        assert_eq!(slab.hop(slab.get(id)), Some((3, sample(9))));
        slab.remove(id);
        assert_eq!(slab.get(id).hop, NO_HOP);
        let mut q = Packet::new(PktKind::ProbeReply, 0, 0, 0, 1);
        q.hop = slab.put_hop((1, sample(4)));
        assert_eq!(q.hop, p.hop, "the freed place is used again");
        assert_eq!(slab.hop(&q), Some((1, sample(4))));
    }

    /// A buffer too short for its length field reads as empty and takes
    /// no bytes, without a panic.
    #[test]
    fn a_short_buffer_is_empty() {
        let mut one = [7u8];
        let mut buf = TelBuf::new(&mut one);
        buf.set_len(5);
        assert_eq!((buf.len(), buf.room().len(), buf.bytes().len()), (0, 0, 0));
    }
}
