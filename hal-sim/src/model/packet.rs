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
    /// Go-back-N request: the receiver saw a gap at `seq`; or, with the
    /// SACK transport, a trimmed packet's NACK (`seq` its first byte).
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

/// A packet with nothing in the slab's side table.
pub const NO_AUX: u32 = u32::MAX;

/// Bytes of an integrity tag: an ACK's lies after its telemetry buffer.
pub const TAG: usize = cc_core::wire::auth::TAG_LEN;

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

/// A packet in flight: 64 bytes, one cache line, as the network's queues
/// copy and load it on every hop. What only some packets carry lies apart:
/// the telemetry buffer (and an ACK's tag over it) in the slab's buffers,
/// a probe reply's hop and Rx-HPCC's window in its side table ([`Aux`]).
#[derive(Clone, Debug)]
#[repr(align(64))]
pub struct Packet {
    /// When it entered the current switch (for hop latency / sojourn).
    pub ingress_ps: Ps,
    /// Sender's transmit timestamp (data, RTT requests), echoed by the
    /// receiver (acks, RTT responses): the NIC's RTT measurement.
    pub ts_ps: Ps,
    /// The flow it belongs to.
    pub flow: u32,
    /// The flow's ECMP hash (a switch hashes the header; the flow's
    /// packets all hash alike).
    pub hash: u32,
    /// Source host node.
    pub src: u32,
    /// Destination host node.
    pub dst: u32,
    /// Data: byte offset of the payload; Ack/Nack: cumulative ack;
    /// Feedback: its sequence number. A flow is shorter than 2^31 bytes
    /// (the workload refuses longer ones).
    pub seq: u32,
    /// Telemetry header and stack (data, probes; echoed on acks), kept in
    /// the slab beside the packet ([`Slab::tel`]); `NO_TEL` when none.
    pub tel: u32,
    /// Probe replies and feedback: where what they carry lies in the
    /// slab's side table ([`Slab::aux`]); `NO_AUX` when nothing.
    pub aux: u32,
    /// Data: the receiver NIC's counter when it arrived, stamped there.
    /// Acks: the same for the acknowledged data (t2), and when the ack
    /// left (t3), ns modulo 2^32 ([`nic_clock`]).
    pub t2: u32,
    /// t3 (see `t2`). Sprayed data and NACKs: their entropy value
    /// ([`Packet::ev`]).
    pub t3: u32,
    /// Payload bytes (at most 9000, the scenario's bound).
    pub len: u16,
    /// Bytes on the wire (headers, telemetry, payload; headers are at
    /// most 4096 bytes, payload 9000, telemetry 288).
    pub wire: u16,
    /// The port it entered the current switch by.
    pub ingress_port: u16,
    /// What it is.
    pub kind: PktKind,
    /// Probes and RTT requests: the engine's number for them, echoed by
    /// their replies.
    pub probe: ProbeId,
    /// IP TTL: [`TTL`] from a host, less one at each switch.
    pub ttl: u8,
    /// Acks: switches the acknowledged data crossed (`TTL` − its TTL).
    /// Trimmed data: its TTL when it was cut.
    pub fwd_hops: u8,
    /// Acks: the receiver NIC's Rx buffer level when the ack was made, in
    /// 32 steps of its size (0 empty ..= 31 full; Falcon's 5-bit level).
    pub rx_level: u8,
    /// The ECN codepoint (bits 0-1), ECN-Echo (bit 2), the CNP flag
    /// (bit 3), and the SACK transport's ack request (bit 4), trimmed
    /// (bit 5), last-hop (bit 6) and SLEEK probe (bit 7) flags: read and
    /// written through [`Packet::ecn`], [`Packet::ece`], [`Packet::cnp`],
    /// [`Packet::ar`], [`Packet::trimmed`], [`Packet::last_hop`] and
    /// [`Packet::sleek_probe`].
    flags: u8,
}

const _: () = assert!(std::mem::size_of::<Packet>() == 64, "a packet is one cache line");

/// Where the ECN codepoint lies in [`Packet`]'s flags.
const ECN_MASK: u8 = 0b11;
/// ECN-Echo's bit.
const ECE_BIT: u8 = 1 << 2;
/// The CNP flag's bit.
const CNP_BIT: u8 = 1 << 3;
/// The ack-request flag's bit.
const AR_BIT: u8 = 1 << 4;
/// The trimmed flag's bit.
const TRIMMED_BIT: u8 = 1 << 5;
/// The last-hop flag's bit.
const LAST_HOP_BIT: u8 = 1 << 6;
/// The SLEEK probe flag's bit.
const PROBE_BIT: u8 = 1 << 7;

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
            ingress_ps: Ps::ZERO,
            ts_ps: Ps::ZERO,
            flow,
            hash,
            src,
            dst,
            seq: 0,
            tel: NO_TEL,
            aux: NO_AUX,
            t2: 0,
            t3: 0,
            len: 0,
            wire: 0,
            ingress_port: 0,
            kind,
            probe: ProbeId(0),
            ttl: TTL,
            fwd_hops: 0,
            rx_level: 0,
            flags: 0,
        }
    }

    /// The ECN codepoint.
    #[inline(always)]
    pub fn ecn(&self) -> EcnBits {
        match self.flags & ECN_MASK {
            0 => EcnBits::NotEct,
            1 => EcnBits::Ect,
            _ => EcnBits::Ce,
        }
    }

    /// Sets the ECN codepoint.
    #[inline(always)]
    pub fn set_ecn(&mut self, e: EcnBits) {
        let bits = match e {
            EcnBits::NotEct => 0,
            EcnBits::Ect => 1,
            EcnBits::Ce => 2,
        };
        self.flags = (self.flags & !ECN_MASK) | bits;
    }

    /// ECN-Echo (acks).
    #[inline(always)]
    pub fn ece(&self) -> bool {
        self.flags & ECE_BIT != 0
    }

    /// Sets ECN-Echo.
    pub fn set_ece(&mut self, on: bool) {
        self.set_flag(ECE_BIT, on);
    }

    /// Acks and NACKs: a CNP rides on it (DCQCN's notification point
    /// flags the answer to a CE-marked packet, as the HPCC reference
    /// simulator's NICs do).
    #[inline(always)]
    pub fn cnp(&self) -> bool {
        self.flags & CNP_BIT != 0
    }

    /// Sets the CNP flag.
    pub fn set_cnp(&mut self, on: bool) {
        self.set_flag(CNP_BIT, on);
    }

    /// Sprayed data, and the NACK that answers it: the entropy value the
    /// sender chose (kept in `t3`, which only ACKs use otherwise).
    #[inline(always)]
    pub fn ev(&self) -> u16 {
        self.t3 as u16
    }

    /// Sets the entropy value.
    pub fn set_ev(&mut self, ev: u16) {
        self.t3 = ev as u32;
    }

    /// Data (SACK transport): the sender asks for an ACK at once (UEC's
    /// AR flag: its last packet, a full window, a retransmission).
    #[inline(always)]
    pub fn ar(&self) -> bool {
        self.flags & AR_BIT != 0
    }

    /// Sets the ack-request flag.
    pub fn set_ar(&mut self, on: bool) {
        self.set_flag(AR_BIT, on);
    }

    /// Data: a switch cut it to its header (its `len` is still the
    /// payload it carried; `fwd_hops` keeps its TTL at the cut).
    #[inline(always)]
    pub fn trimmed(&self) -> bool {
        self.flags & TRIMMED_BIT != 0
    }

    /// Sets the trimmed flag.
    pub fn set_trimmed(&mut self, on: bool) {
        self.set_flag(TRIMMED_BIT, on);
    }

    /// A trimmed packet's NACK: the cut was at the last switch, before the
    /// receiver's own link.
    #[inline(always)]
    pub fn last_hop(&self) -> bool {
        self.flags & LAST_HOP_BIT != 0
    }

    /// Sets the last-hop flag.
    pub fn set_last_hop(&mut self, on: bool) {
        self.set_flag(LAST_HOP_BIT, on);
    }

    /// Data (SACK transport): a SLEEK probe, a header alone that the
    /// receiver answers at once with an ACK (uet-htsim's `DATA_PROBE`);
    /// its `seq` is the probe's number.
    #[inline(always)]
    pub fn sleek_probe(&self) -> bool {
        self.flags & PROBE_BIT != 0
    }

    /// Sets the probe flag.
    pub fn set_sleek_probe(&mut self, on: bool) {
        self.set_flag(PROBE_BIT, on);
    }

    fn set_flag(&mut self, bit: u8, on: bool) {
        if on {
            self.flags |= bit;
        } else {
            self.flags &= !bit;
        }
    }
}

/// What a few kinds of packet carry beside the packet, in the slab's side
/// table: they are few, and their 40 bytes in every packet would make
/// every packet that much longer to copy and to load.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Aux {
    /// A SACK transport's ACK (UEC's ACK: `seq` is the cumulative ACK in
    /// packets, the next one expected).
    Sack {
        /// Wire bytes of every distinct data packet received so far.
        recvd: u64,
        /// The packet whose arrival sent this ACK.
        acked: u32,
        /// The packet of the bitmap's bit 0.
        base: u32,
        /// Bit i: packet `base + i` was received.
        bitmap: u64,
        /// The entropy value of the packet that sent it (0 unsprayed).
        ev: u16,
        /// Packets the receiver held out of order when it sent the ACK
        /// (uet-htsim's `ooo`, which SLEEK reads).
        ooo: u32,
        /// It answers a SLEEK probe (`acked` is the probe's number).
        probe: bool,
    },
    /// A probe reply's hop: its index on the path, and its sample.
    Hop(u8, HopSample),
    /// Rx-HPCC feedback: the window the receiver asks for, and the tag
    /// that seals it.
    Feedback {
        /// The window.
        window: Window,
        /// The integrity tag over the window and the packet's `seq`.
        tag: [u8; TAG],
    },
}

/// Packets by index, with a free list so indices are reused, and their
/// telemetry buffers apart: a packet is one 64-byte line to copy, and the
/// receiver hands the data packet's buffer to its ACK instead of copying
/// it. The buffers lie end to end, each as big as the run's format needs
/// (66 bytes of compact stack, or up to [`TEL_CAP`]) and [`TAG`] bytes for
/// the tag an ACK seals it with: thousands are in flight on a fabric, and
/// a switch writes into one per hop.
#[derive(Debug)]
pub struct Slab {
    pkts: Vec<Packet>,
    free: Vec<u32>,
    /// Buffer t is `tels[t · stride ..][.. stride − TAG]`, laid out as a
    /// [`TelBuf`], and its tag the `TAG` bytes after it.
    tels: Vec<u8>,
    stride: usize,
    tel_free: Vec<u32>,
    /// What probe replies and feedback carry ([`Aux`]).
    aux: Vec<Aux>,
    aux_free: Vec<u32>,
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
            stride: 2 + room + TAG,
            tel_free: Vec::new(),
            aux: Vec::new(),
            aux_free: Vec::new(),
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
            prefetch(std::ptr::from_ref(p).cast::<u8>());
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

    /// Frees `i`, its telemetry buffer and what it keeps in the side
    /// table for reuse.
    #[inline(always)]
    pub fn remove(&mut self, i: u32) {
        let p = &mut self.pkts[i as usize];
        let (t, a) = (
            std::mem::replace(&mut p.tel, NO_TEL),
            std::mem::replace(&mut p.aux, NO_AUX),
        );
        if t != NO_TEL {
            self.tel_free.push(t);
        }
        if a != NO_AUX {
            self.aux_free.push(a);
        }
        self.free.push(i);
    }

    /// Keeps what a packet being built carries beside it: the answer goes
    /// in the packet's `aux`.
    pub fn put_aux(&mut self, a: Aux) -> u32 {
        place(&mut self.aux, &mut self.aux_free, a)
    }

    /// What a packet carries in the side table (none for most).
    pub fn aux(&self, p: &Packet) -> Option<Aux> {
        self.aux.get(p.aux as usize).copied()
    }

    /// A probe reply's hop (none for other packets).
    pub fn hop(&self, p: &Packet) -> Option<(u8, HopSample)> {
        match self.aux(p) {
            Some(Aux::Hop(i, h)) => Some((i, h)),
            _ => None,
        }
    }

    /// The integrity tag stored after telemetry buffer `t` (an ACK's tag
    /// over the telemetry it echoes); zeros for [`NO_TEL`].
    pub fn tag(&self, t: u32) -> [u8; TAG] {
        self.tels
            .get(self.tag_span(t))
            .and_then(|b| b.try_into().ok())
            .unwrap_or([0; TAG])
    }

    /// Stores `tag` after telemetry buffer `t` (nothing for [`NO_TEL`]).
    pub fn set_tag(&mut self, t: u32, tag: [u8; TAG]) {
        let span = self.tag_span(t);
        if let Some(b) = self.tels.get_mut(span) {
            b.copy_from_slice(&tag);
        }
    }

    /// Where buffer `t`'s tag lies in `tels`: the `TAG` bytes after its
    /// telemetry ([`NO_TEL`]'s lies past any slab: t · stride < 2^32 · 2^10).
    fn tag_span(&self, t: u32) -> std::ops::Range<usize> {
        let end = (t as usize + 1) * self.stride;
        end - TAG..end
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

    /// Where buffer `t` lies in `tels` (its tag follows it).
    fn tel_span(&self, t: u32) -> std::ops::Range<usize> {
        let at = t as usize * self.stride;
        at..at + self.stride - TAG
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
        slab.set_tag(a, [0x11; TAG]);
        let mut p = Packet::new(PktKind::Data, 0, 0, 0, 1);
        p.tel = b;
        let id = slab.insert(p);
        assert_eq!(slab.tel(slab.get(id)), &[0xBB; 66][..]);
        assert_eq!(
            (slab.tag(a), slab.tag(b), slab.tag(NO_TEL)),
            ([0x11; TAG], [0; TAG], [0; TAG])
        );
        slab.remove(id);
        assert_eq!(slab.tel_buffers(), (2, 1));
        let c = slab.new_tel();
        assert_eq!(c, b);
        assert!(slab.tel_buf_mut(c).is_empty());
        assert_eq!(slab.tel_buf_mut(a).bytes(), &[0xAA; 66][..]);
        assert_eq!(slab.tag(a), [0x11; TAG], "the tag lies apart from the bytes");
    }

    /// The flags byte keeps the ECN codepoint, ECE and the CNP flag apart.
    #[test]
    fn flags_keep_apart() {
        let mut p = Packet::new(PktKind::Ack, 0, 0, 0, 1);
        assert_eq!((p.ecn(), p.ece(), p.cnp()), (EcnBits::NotEct, false, false));
        for e in [EcnBits::Ce, EcnBits::Ect, EcnBits::NotEct, EcnBits::Ce] {
            p.set_cnp(true);
            p.set_ecn(e);
            p.set_ece(e == EcnBits::Ce);
            assert_eq!((p.ecn(), p.ece(), p.cnp()), (e, e == EcnBits::Ce, true));
            p.set_cnp(false);
            assert_eq!((p.ecn(), p.cnp()), (e, false));
        }
    }

    /// A probe reply's hop is kept beside the packet, freed with it, and
    /// its place used again by a feedback's window.
    #[test]
    fn a_hop_lives_and_goes_with_its_packet() {
        let mut slab = Slab::default();
        let sample = |id| HopSample {
            id,
            ..HopSample::default()
        };
        let mut p = Packet::new(PktKind::ProbeReply, 0, 0, 0, 1);
        assert_eq!(slab.hop(&p), None);
        p.aux = slab.put_aux(Aux::Hop(3, sample(9)));
        let id = slab.insert(p.clone());
        assert_eq!(slab.hop(slab.get(id)), Some((3, sample(9))));
        slab.remove(id);
        assert_eq!(slab.get(id).aux, NO_AUX);
        let mut q = Packet::new(PktKind::Feedback, 0, 0, 0, 1);
        let fb = Aux::Feedback {
            window: Window::from_bytes(5000),
            tag: [7; TAG],
        };
        q.aux = slab.put_aux(fb);
        assert_eq!(q.aux, p.aux, "the freed place is used again");
        assert_eq!((slab.aux(&q), slab.hop(&q)), (Some(fb), None));
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
