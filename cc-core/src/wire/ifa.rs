//! Inband Flow Analyzer 2.0 (draft-kumar-ippm-ifa): the IFA header, the
//! packet's own L4 header, the metadata header and the per-hop metadata
//! stack, newest hop first, each hop laid out by the profile of its local
//! namespace (LNS).
//!
//! The IFA header follows the IP header and names the original L4
//! protocol; the L4 header (TCP or UDP) stays in place after it, so that
//! ECMP and ACLs still see the L4 ports, and the metadata header and stack
//! come after the L4 header ("metadata is treated as L4 information"). A
//! view starts at the IFA header:
//!
//! ```text
//! IFA header (4 bytes)       | ver 4 = 2 | GNS 4 | next header 8 | flags 8 | max length 8 |
//! L4 header                  | TCP (data offset · 4 bytes) or UDP (8 bytes), as sent   |
//! metadata header (4 bytes)  | request vector 8 | action vector 8 | hop limit 8 | current length 8 |
//! stack: current length × 4 bytes; each hop starts with its 4-bit LNS
//! ```
//!
//! Flags, least significant bit first: C (checksum), TA (turn-around),
//! I (inband), TS (tail stamping), MF (metadata fragment); the top three are
//! reserved. Max and current length count 4-byte words of metadata.
//!
//! Hop layouts ([`HopLayout`]), 32 bytes:
//!
//! ```text
//! | LNS 4 | device id 20 | TTL 8 |
//! | speed 4 | ECN 2 | queue id 6 | rx timestamp seconds 20 |
//! | egress port 16 | ingress port 16 |
//! | rx timestamp nanoseconds 32 |
//! | residence time 32 (ns) |
//! | queue bytes 32 |
//! | reserved 16 | queue cells 16 |
//! | reserved 32 — or, in TxBytes, the egress transmitted-bytes counter |
//! ```
//!
//! Speed codes 0..=6: 10, 25, 40, 50, 100, 200, 400 Gb/s; others reserved.
//!
//! # What a receiver gets
//!
//! | input | result |
//! |---|---|
//! | version other than 2 | `UnknownVersion` |
//! | next header other than TCP (6) or UDP (17): the metadata header cannot be found | `UnknownType` |
//! | C, MF or TS set (checksum header, metadata fragments, tail stamping) | `Unsupported` |
//! | a TCP data offset below 5, current length above max length, a stack that is not a whole number of hops | `BadLength` |
//! | an LNS without a profile | `UnknownType` |
//! | more than [`MAX_HOPS`] hops | `TooManyHops` |
//! | a buffer shorter than the headers and stack | `Truncated` |
//! | the three reserved flag bits, a hop's reserved 16 bits (and its last word in the Standard layout) | ignored on receipt, written as zero |
//! | a reserved speed code | parses; `UnknownType` from [`IfaRepr::hop_samples`] (no link speed) |

use super::{be, fold_identity, Hops, Result, UnitsProfile, WireError, MAX_HOPS};
use crate::telemetry::HopSample;
use crate::units::LinkSpeed;

/// IFA header bytes.
pub const HEADER_LEN: usize = 4;
/// Metadata header bytes.
pub const MD_HEADER_LEN: usize = 4;
/// The version this code speaks.
pub const VERSION: u8 = 2;
/// The IP protocol number that announces IFA. The draft leaves the number
/// to IANA; deployments use an experimental value (RFC 3692), 253 here.
pub const EXPERIMENTAL_IP_PROTOCOL: u8 = 253;
/// Bytes of every hop layout here.
pub const HOP_LEN: usize = 32;

/// Where each field starts, in bytes: of the IFA header from its first
/// byte, of the metadata header from its first byte, of a hop from the
/// hop's first byte (the layouts above). A field narrower than its bytes is
/// masked where it is read.
mod field {
    /// IFA header: version (4 bits) and GNS (4).
    pub const VERSION_GNS: usize = 0;
    /// IFA header: the protocol of the L4 header that follows.
    pub const NEXT_HEADER: usize = 1;
    /// IFA header: flags.
    pub const FLAGS: usize = 2;
    /// IFA header: max metadata length, 4-byte words.
    pub const MAX_LENGTH: usize = 3;

    /// Metadata header: request vector.
    pub const MD_REQUEST_VECTOR: usize = 0;
    /// Metadata header: action vector.
    pub const MD_ACTION_VECTOR: usize = 1;
    /// Metadata header: hop limit.
    pub const MD_HOP_LIMIT: usize = 2;
    /// Metadata header: current length, 4-byte words.
    pub const MD_CURRENT_LENGTH: usize = 3;

    /// Hop: LNS (4 bits), device id (20), TTL (8).
    pub const HOP_LNS_DEVICE_TTL: usize = 0;
    /// Hop: speed (4), ECN (2), queue id (6), rx timestamp seconds (20).
    pub const HOP_SPEED_QUEUE_SECONDS: usize = 4;
    /// Hop: egress port, 16 bits.
    pub const HOP_EGRESS_PORT: usize = 8;
    /// Hop: ingress port, 16 bits.
    pub const HOP_INGRESS_PORT: usize = 10;
    /// Hop: rx timestamp nanoseconds, 32 bits.
    pub const HOP_RX_NANOSECONDS: usize = 12;
    /// Hop: residence time, ns, 32 bits.
    pub const HOP_RESIDENCE: usize = 16;
    /// Hop: queue bytes, 32 bits.
    pub const HOP_QUEUE_BYTES: usize = 20;
    /// Hop: reserved, 16 bits.
    pub const HOP_RESERVED: usize = 24;
    /// Hop: queue cells, 16 bits.
    pub const HOP_QUEUE_CELLS: usize = 26;
    /// Hop: reserved, or the transmitted-bytes counter (TxBytes layout).
    pub const HOP_TAIL: usize = 28;
}
/// IP protocol number of TCP.
pub const TCP: u8 = 6;
/// IP protocol number of UDP.
pub const UDP: u8 = 17;
/// The longest L4 header a view carries (TCP with 40 bytes of options).
pub const MAX_L4_LEN: usize = 60;

/// IFA header flags.
pub mod flags {
    /// C: a checksum header is present.
    pub const CHECKSUM: u8 = 1 << 0;
    /// TA: turn-around.
    pub const TURN_AROUND: u8 = 1 << 1;
    /// I: inband.
    pub const INBAND: u8 = 1 << 2;
    /// TS: tail stamping (metadata at the end of the packet).
    pub const TAIL_STAMP: u8 = 1 << 3;
    /// MF: metadata fragment header present.
    pub const FRAGMENT: u8 = 1 << 4;
    /// The defined flags; the top three bits are reserved.
    pub const DEFINED: u8 = 0x1F;
    /// Flags that change where the metadata header is: not implemented.
    pub const UNSUPPORTED: u8 = CHECKSUM | TAIL_STAMP | FRAGMENT;
}

/// The packet's own L4 header, carried between the IFA header and the
/// metadata header.
pub type L4Header = heapless::Vec<u8, MAX_L4_LEN>;

/// How a namespace lays out its hop metadata.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum HopLayout {
    /// The draft's 32-byte record; no transmitted-bytes counter.
    Standard,
    /// The same record whose last word carries the egress port's
    /// transmitted-bytes counter (a deployment choice for HPCC++).
    TxBytes,
}

/// The hop profiles of a deployment: which layout each LNS uses. An LNS
/// without a profile is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct NamespaceProfiles {
    /// Layout per LNS value 0..=15; `None` = unknown namespace.
    pub layouts: [Option<HopLayout>; 16],
}

impl NamespaceProfiles {
    /// Every LNS uses `layout`.
    pub const fn uniform(layout: HopLayout) -> Self {
        NamespaceProfiles {
            layouts: [Some(layout); 16],
        }
    }

    fn layout(&self, lns: u8) -> Result<HopLayout> {
        self.layouts
            .get(lns as usize)
            .copied()
            .flatten()
            .ok_or(WireError::UnknownType)
    }
}

/// Bytes of the L4 header that `next_header` names, read from its first
/// bytes (TCP's data offset); `UnknownType` for another protocol.
fn l4_len(next_header: u8, l4: &[u8]) -> Result<usize> {
    match next_header {
        UDP => Ok(8),
        TCP => {
            let Some(&off) = l4.get(12) else {
                return Err(WireError::Truncated);
            };
            match (off >> 4) as usize {
                words @ 5.. => Ok(4 * words),
                _ => Err(WireError::BadLength),
            }
        }
        _ => Err(WireError::UnknownType),
    }
}

/// A view over IFA header + L4 header + metadata header + stack.
#[derive(Debug, Clone)]
pub struct IfaPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> IfaPacket<T> {
    /// Wraps a buffer without checking it.
    pub const fn new_unchecked(buffer: T) -> Self {
        IfaPacket { buffer }
    }

    /// Wraps a buffer after [`Self::check_len`].
    pub fn new_checked(buffer: T, profiles: &NamespaceProfiles) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        p.check_len(profiles)?;
        Ok(p)
    }

    /// Checks the IFA header, the version and flags, finds the metadata
    /// header past the L4 header, checks current length ≤ max length and
    /// that the buffer holds the stack, and walks the stack: every hop's
    /// LNS has a profile and the hops fill the stack exactly, at most
    /// [`MAX_HOPS`] of them.
    pub fn check_len(&self, profiles: &NamespaceProfiles) -> Result<()> {
        let b = self.buffer.as_ref();
        if b.len() < HEADER_LEN {
            return Err(WireError::Truncated);
        }
        if self.version() != VERSION {
            return Err(WireError::UnknownVersion);
        }
        if self.flags() & flags::UNSUPPORTED != 0 {
            return Err(WireError::Unsupported);
        }
        let md = self.metadata_offset()?;
        if b.len() < md + MD_HEADER_LEN {
            return Err(WireError::Truncated);
        }
        if self.current_length() > self.max_length() {
            return Err(WireError::BadLength);
        }
        let total = self.total_len()?;
        if b.len() < total {
            return Err(WireError::Truncated);
        }
        let mut at = md + MD_HEADER_LEN;
        let mut n = 0;
        while at < total {
            if n == MAX_HOPS {
                return Err(WireError::TooManyHops);
            }
            profiles.layout(be::u8_at(b, at) >> 4)?;
            at += HOP_LEN;
            n += 1;
        }
        if at != total {
            return Err(WireError::BadLength);
        }
        Ok(())
    }

    /// Version.
    pub fn version(&self) -> u8 {
        be::u8_at(self.buffer.as_ref(), field::VERSION_GNS) >> 4
    }
    /// Global namespace.
    pub fn gns(&self) -> u8 {
        be::u8_at(self.buffer.as_ref(), field::VERSION_GNS) & 0xF
    }
    /// Protocol of the L4 header that follows (TCP or UDP).
    pub fn next_header(&self) -> u8 {
        be::u8_at(self.buffer.as_ref(), field::NEXT_HEADER)
    }
    /// Flags; the reserved top three bits read as zero.
    pub fn flags(&self) -> u8 {
        be::u8_at(self.buffer.as_ref(), field::FLAGS) & flags::DEFINED
    }
    /// Max metadata length, 4-byte words.
    pub fn max_length(&self) -> u8 {
        be::u8_at(self.buffer.as_ref(), field::MAX_LENGTH)
    }
    /// The L4 header's bytes (valid after `check_len`).
    pub fn l4_header(&self) -> &[u8] {
        let b = self.buffer.as_ref();
        let end = self.metadata_offset().unwrap_or(HEADER_LEN);
        b.get(HEADER_LEN..end).unwrap_or(&[])
    }
    /// Where the metadata header starts: past the IFA header and the L4
    /// header the next-header field names.
    pub fn metadata_offset(&self) -> Result<usize> {
        let b = self.buffer.as_ref();
        let l4 = b.get(HEADER_LEN..).unwrap_or(&[]);
        Ok(HEADER_LEN + l4_len(self.next_header(), l4)?)
    }
    fn md_u8(&self, k: usize) -> u8 {
        let md = self.metadata_offset().unwrap_or(usize::MAX - 8);
        be::u8_at(self.buffer.as_ref(), md + k)
    }
    /// Request vector.
    pub fn request_vector(&self) -> u8 {
        self.md_u8(field::MD_REQUEST_VECTOR)
    }
    /// Action vector.
    pub fn action_vector(&self) -> u8 {
        self.md_u8(field::MD_ACTION_VECTOR)
    }
    /// Hop limit.
    pub fn hop_limit(&self) -> u8 {
        self.md_u8(field::MD_HOP_LIMIT)
    }
    /// Current metadata length, 4-byte words.
    pub fn current_length(&self) -> u8 {
        self.md_u8(field::MD_CURRENT_LENGTH)
    }
    /// Bytes from the IFA header to the end of the stack.
    pub fn total_len(&self) -> Result<usize> {
        Ok(self.metadata_offset()? + MD_HEADER_LEN + 4 * self.current_length() as usize)
    }
}

/// One hop's metadata.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct IfaHop {
    /// Local namespace (4 bits).
    pub lns: u8,
    /// Device id (20 bits).
    pub device_id: u32,
    /// IP TTL seen.
    pub ttl: u8,
    /// Egress port speed code (4 bits).
    pub speed: u8,
    /// ECN bits.
    pub ecn: u8,
    /// Queue id (6 bits).
    pub queue_id: u8,
    /// Rx timestamp seconds (20 bits).
    pub rx_seconds: u32,
    /// Egress port.
    pub egress_port: u16,
    /// Ingress port.
    pub ingress_port: u16,
    /// Rx timestamp nanoseconds.
    pub rx_nanoseconds: u32,
    /// Residence time, ns.
    pub residence_ns: u32,
    /// Queue occupancy, bytes.
    pub queue_bytes: u32,
    /// Queue occupancy, cells.
    pub queue_cells: u16,
    /// The last word: reserved (Standard) or transmitted bytes (TxBytes).
    pub tail: u32,
}

/// A parsed IFA header, L4 header, metadata header and stack.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IfaRepr {
    /// Global namespace.
    pub gns: u8,
    /// Protocol of the L4 header (TCP or UDP).
    pub next_header: u8,
    /// Flags (the defined bits; C, MF and TS are not implemented).
    pub flags: u8,
    /// Max metadata length, words.
    pub max_length: u8,
    /// The packet's L4 header as it travels between the IFA header and the
    /// metadata header.
    pub l4: L4Header,
    /// Request vector.
    pub request_vector: u8,
    /// Action vector.
    pub action_vector: u8,
    /// Hop limit.
    pub hop_limit: u8,
    /// Hops, newest first, as on the wire.
    pub hops: heapless::Vec<IfaHop, MAX_HOPS>,
}

impl IfaRepr {
    /// Parses a checked packet.
    pub fn parse<T: AsRef<[u8]>>(p: &IfaPacket<T>, profiles: &NamespaceProfiles) -> Result<Self> {
        p.check_len(profiles)?;
        let b = p.buffer.as_ref();
        let md = p.metadata_offset()?;
        let total = p.total_len()?;
        let mut hops = heapless::Vec::new();
        let mut at = md + MD_HEADER_LEN;
        while at < total {
            let w0 = be::u32_at(b, at + field::HOP_LNS_DEVICE_TTL);
            let w1 = be::u32_at(b, at + field::HOP_SPEED_QUEUE_SECONDS);
            let layout = profiles.layout((w0 >> 28) as u8)?;
            let h = IfaHop {
                lns: (w0 >> 28) as u8,
                device_id: w0 >> 8 & 0xF_FFFF,
                ttl: w0 as u8,
                speed: (w1 >> 28) as u8,
                ecn: (w1 >> 26 & 0x3) as u8,
                queue_id: (w1 >> 20 & 0x3F) as u8,
                rx_seconds: w1 & 0xF_FFFF,
                egress_port: be::u16_at(b, at + field::HOP_EGRESS_PORT),
                ingress_port: be::u16_at(b, at + field::HOP_INGRESS_PORT),
                rx_nanoseconds: be::u32_at(b, at + field::HOP_RX_NANOSECONDS),
                residence_ns: be::u32_at(b, at + field::HOP_RESIDENCE),
                queue_bytes: be::u32_at(b, at + field::HOP_QUEUE_BYTES),
                queue_cells: be::u16_at(b, at + field::HOP_QUEUE_CELLS),
                tail: match layout {
                    HopLayout::TxBytes => be::u32_at(b, at + field::HOP_TAIL),
                    HopLayout::Standard => 0,
                },
            };
            hops.push(h).map_err(|_| WireError::TooManyHops)?;
            at += HOP_LEN;
        }
        Ok(IfaRepr {
            gns: p.gns(),
            next_header: p.next_header(),
            flags: p.flags(),
            max_length: p.max_length(),
            l4: L4Header::from_slice(p.l4_header()).map_err(|_| WireError::BadLength)?,
            request_vector: p.request_vector(),
            action_vector: p.action_vector(),
            hop_limit: p.hop_limit(),
            hops,
        })
    }

    /// Bytes [`Self::emit`] writes.
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN + self.l4.len() + MD_HEADER_LEN + HOP_LEN * self.hops.len()
    }

    /// Bytes the IFA headers and metadata add to a packet (the L4 header
    /// was there before).
    pub fn added_len(&self) -> usize {
        self.buffer_len() - self.l4.len()
    }

    /// Writes headers and stack; current length is set from the hops.
    /// Refused: an L4 header that is not the one `next_header` names
    /// (`BadLength`, `UnknownType`), flags C, MF or TS (`Unsupported`), more
    /// metadata than max length (`BadLength`).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut IfaPacket<T>) -> Result<()> {
        if l4_len(self.next_header, &self.l4)? != self.l4.len() {
            return Err(WireError::BadLength);
        }
        if self.flags & flags::UNSUPPORTED != 0 {
            return Err(WireError::Unsupported);
        }
        let words = HOP_LEN / 4 * self.hops.len();
        if words > self.max_length as usize {
            return Err(WireError::BadLength);
        }
        let b = p.buffer.as_mut();
        if b.len() < self.buffer_len() {
            return Err(WireError::BufferTooSmall);
        }
        be::put_u8(b, field::VERSION_GNS, VERSION << 4 | (self.gns & 0xF));
        be::put_u8(b, field::NEXT_HEADER, self.next_header);
        be::put_u8(b, field::FLAGS, self.flags & flags::DEFINED);
        be::put_u8(b, field::MAX_LENGTH, self.max_length);
        let md = HEADER_LEN + self.l4.len();
        if let Some(l4) = b.get_mut(HEADER_LEN..md) {
            l4.copy_from_slice(&self.l4);
        }
        be::put_u8(b, md + field::MD_REQUEST_VECTOR, self.request_vector);
        be::put_u8(b, md + field::MD_ACTION_VECTOR, self.action_vector);
        be::put_u8(b, md + field::MD_HOP_LIMIT, self.hop_limit);
        be::put_u8(b, md + field::MD_CURRENT_LENGTH, words as u8);
        let mut at = md + MD_HEADER_LEN;
        for h in &self.hops {
            be::put_u32(
                b,
                at + field::HOP_LNS_DEVICE_TTL,
                (h.lns as u32 & 0xF) << 28 | (h.device_id & 0xF_FFFF) << 8 | h.ttl as u32,
            );
            be::put_u32(
                b,
                at + field::HOP_SPEED_QUEUE_SECONDS,
                (h.speed as u32 & 0xF) << 28
                    | (h.ecn as u32 & 0x3) << 26
                    | (h.queue_id as u32 & 0x3F) << 20
                    | (h.rx_seconds & 0xF_FFFF),
            );
            be::put_u16(b, at + field::HOP_EGRESS_PORT, h.egress_port);
            be::put_u16(b, at + field::HOP_INGRESS_PORT, h.ingress_port);
            be::put_u32(b, at + field::HOP_RX_NANOSECONDS, h.rx_nanoseconds);
            be::put_u32(b, at + field::HOP_RESIDENCE, h.residence_ns);
            be::put_u32(b, at + field::HOP_QUEUE_BYTES, h.queue_bytes);
            be::put_u16(b, at + field::HOP_RESERVED, 0);
            be::put_u16(b, at + field::HOP_QUEUE_CELLS, h.queue_cells);
            be::put_u32(b, at + field::HOP_TAIL, h.tail);
            at += HOP_LEN;
        }
        Ok(())
    }

    /// The engine's samples, first hop first (the stack is reversed).
    ///
    /// Timestamp: the egress instant, rx seconds · 10^9 + rx nanoseconds +
    /// residence time, modulo 2^32 (HPCC++ wants the egress port's snapshot,
    /// and the tx counter is an egress counter); queue from queue bytes;
    /// sojourn from residence time; speed from the code;
    /// identity from device id and egress port. The transmitted-bytes
    /// counter exists only in the [`HopLayout::TxBytes`] layout, counting
    /// units of the profile's [`TxCounter`](super::TxCounter); a Standard hop gives
    /// `MissingField`, as does a reserved speed code `UnknownType`.
    pub fn hop_samples(&self, profiles: &NamespaceProfiles, profile: &UnitsProfile) -> Result<Hops> {
        let Some(widths) = profile.tx_counter.widths_32() else {
            return Err(WireError::MissingField);
        };
        let mut out = Hops::new();
        for h in self.hops.iter().rev() {
            if profiles.layout(h.lns)? != HopLayout::TxBytes {
                return Err(WireError::MissingField);
            }
            let ts = (h.rx_seconds as u64 * 1_000_000_000 + h.rx_nanoseconds as u64 + h.residence_ns as u64) as u32;
            let s = HopSample {
                ts,
                tx: h.tail,
                qlen_bytes: h.queue_bytes,
                sojourn_ns: h.residence_ns,
                bandwidth: speed(h.speed)?,
                id: fold_identity(h.device_id as u64, h.egress_port as u32),
                widths,
                tx_utilization: crate::telemetry::TxUtilization::NONE,
            };
            out.push(s).map_err(|_| WireError::TooManyHops)?;
        }
        Ok(out)
    }
}

/// The link speed of an IFA speed code.
pub fn speed(code: u8) -> Result<LinkSpeed> {
    const GBPS: [u32; 7] = [10, 25, 40, 50, 100, 200, 400];
    GBPS.get(code as usize)
        .map(|g| LinkSpeed::from_gbps(*g))
        .ok_or(WireError::UnknownType)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A TCP header as the sender wrote it: ports 49152 → 4791, data
    /// offset `words` (RFC 9293 §3.1), ACK flag; options as NOPs.
    fn tcp_header(words: u8) -> L4Header {
        let mut h = L4Header::new();
        h.extend_from_slice(&[
            0xC0,
            0x00,
            0x12,
            0xB7,
            0,
            0,
            0,
            1,
            0,
            0,
            0,
            0,
            words << 4,
            0x10,
            0xFF,
            0xFF,
            0,
            0,
            0,
            0,
        ])
        .unwrap();
        while h.len() < 4 * words as usize {
            h.push(0x01).unwrap(); // NOP option
        }
        h
    }

    /// A UDP header (RFC 768): ports 49152 → 4791 (RoCEv2), length, checksum.
    fn udp_header() -> L4Header {
        L4Header::from_slice(&[0xC0, 0x00, 0x12, 0xB7, 0x04, 0x00, 0, 0]).unwrap()
    }

    fn repr_with(next_header: u8, l4: L4Header) -> IfaRepr {
        let mut hops = heapless::Vec::new();
        for k in [1u32, 0] {
            hops.push(IfaHop {
                lns: 1,
                device_id: 0xABCDE + k,
                ttl: 63 - k as u8,
                speed: 4,
                ecn: 1,
                queue_id: 5,
                rx_seconds: 0xF_0000 + k,
                egress_port: 10 + k as u16,
                ingress_port: 3,
                rx_nanoseconds: 999_999_000 + k,
                residence_ns: 1_200,
                queue_bytes: 40_000 * (k + 1),
                queue_cells: 200,
                tail: 0xDEAD_0000 + k,
            })
            .unwrap();
        }
        IfaRepr {
            gns: 0xF,
            next_header,
            flags: flags::INBAND,
            max_length: 64,
            l4,
            request_vector: 0xFF,
            action_vector: 0,
            hop_limit: 8,
            hops,
        }
    }

    fn repr() -> IfaRepr {
        repr_with(UDP, udp_header())
    }

    fn profiles() -> NamespaceProfiles {
        let mut p = NamespaceProfiles { layouts: [None; 16] };
        p.layouts[1] = Some(HopLayout::TxBytes);
        p
    }

    /// The draft's layout, byte by byte, for a TCP packet: IFA header
    /// (version 2, GNS 15, next header 6, flags I, max length 64), the
    /// original 20-byte TCP header, the metadata header (request vector
    /// 0xFF, action vector 0, hop limit 8, current length 8), one 32-byte
    /// hop of LNS 1.
    #[test]
    fn the_metadata_header_is_found_past_the_tcp_header() {
        let mut v = [0u8; 4 + 20 + 4 + 32];
        v[..4].copy_from_slice(&[0x2F, 6, 0x04, 64]);
        v[4..24].copy_from_slice(&tcp_header(5));
        v[24..28].copy_from_slice(&[0xFF, 0, 8, 8]);
        v[28..32].copy_from_slice(&[0x1A, 0xBC, 0xDE, 63]); // LNS 1, device 0xABCDE, TTL 63
        v[32..36].copy_from_slice(&[0x44, 0x5F, 0x00, 0x01]); // speed 4 (100G), ECN 1, queue 5, 0xF0001 s
        v[36..40].copy_from_slice(&[0, 11, 0, 3]); // egress 11, ingress 3
        v[40..44].copy_from_slice(&999_999_001u32.to_be_bytes());
        v[44..48].copy_from_slice(&1_200u32.to_be_bytes());
        v[48..52].copy_from_slice(&40_000u32.to_be_bytes());
        v[52..56].copy_from_slice(&[0, 0, 0, 200]);
        v[56..60].copy_from_slice(&0xDEAD_0001u32.to_be_bytes());
        let p = IfaPacket::new_checked(&v[..], &profiles()).unwrap();
        assert_eq!(p.metadata_offset(), Ok(24));
        assert_eq!(p.l4_header(), &tcp_header(5)[..]);
        let r = IfaRepr::parse(&p, &profiles()).unwrap();
        assert_eq!(r.hops.len(), 1);
        let h = r.hops[0];
        assert_eq!(
            (h.device_id, h.ttl, h.speed, h.queue_id, h.rx_seconds),
            (0xABCDE, 63, 4, 5, 0xF_0001)
        );
        assert_eq!(
            (h.egress_port, h.residence_ns, h.queue_bytes, h.tail),
            (11, 1_200, 40_000, 0xDEAD_0001)
        );
        let mut out = [0u8; 60];
        r.emit(&mut IfaPacket::new_unchecked(&mut out[..])).unwrap();
        assert_eq!(out, v);
        assert_eq!(r.added_len(), 4 + 4 + 32);
        // The layout that put the metadata header right after the IFA
        // header reads the TCP ports as a metadata header: refused.
        let mut old = [0u8; 4 + 4 + 32];
        old[..4].copy_from_slice(&[0x2F, 6, 0x04, 64]);
        old[4..8].copy_from_slice(&[0xFF, 0, 8, 8]);
        old[8..].copy_from_slice(&v[28..]);
        assert!(IfaPacket::new_checked(&old[..], &profiles()).is_err());
    }

    #[test]
    fn tcp_options_and_udp_move_the_metadata_header() {
        for (l4, md) in [(tcp_header(8), 36), (udp_header(), 12)] {
            let next = if l4.len() == 8 { UDP } else { TCP };
            let r = repr_with(next, l4);
            let mut buf = [0u8; 256];
            r.emit(&mut IfaPacket::new_unchecked(&mut buf[..])).unwrap();
            let p = IfaPacket::new_checked(&buf[..r.buffer_len()], &profiles()).unwrap();
            assert_eq!(p.metadata_offset(), Ok(md));
            assert_eq!(p.current_length(), 16);
            assert_eq!(IfaRepr::parse(&p, &profiles()).unwrap(), r);
        }
    }

    #[test]
    fn round_trip() {
        let r = repr();
        let mut buf = [0u8; 128];
        r.emit(&mut IfaPacket::new_unchecked(&mut buf[..])).unwrap();
        assert_eq!(buf[0], 0x2F);
        assert_eq!(buf[12 + 3], 16);
        let p = IfaPacket::new_checked(&buf[..r.buffer_len()], &profiles()).unwrap();
        assert_eq!(IfaRepr::parse(&p, &profiles()).unwrap(), r);
    }

    #[test]
    fn reserved_bits_are_ignored_and_written_as_zero() {
        let r = repr();
        let mut buf = [0u8; 128];
        r.emit(&mut IfaPacket::new_unchecked(&mut buf[..])).unwrap();
        let n = r.buffer_len();
        let mut v = buf;
        v[2] |= 0xE0; // the three reserved flag bits
        v[16 + 24] = 0xAB; // a hop's reserved 16 bits
        v[16 + 25] = 0xCD;
        let got = IfaRepr::parse(&IfaPacket::new_checked(&v[..n], &profiles()).unwrap(), &profiles()).unwrap();
        assert_eq!(got, r);
        let mut out = [0u8; 128];
        got.emit(&mut IfaPacket::new_unchecked(&mut out[..])).unwrap();
        assert_eq!(out[..n], buf[..n]);
        // The Standard layout's last word is reserved too.
        let std = NamespaceProfiles::uniform(HopLayout::Standard);
        let got = IfaRepr::parse(&IfaPacket::new_checked(&buf[..n], &std).unwrap(), &std).unwrap();
        assert_eq!(got.hops[0].tail, 0);
    }

    #[test]
    fn malformed_inputs_are_errors() {
        let r = repr();
        let mut buf = [0u8; 128];
        r.emit(&mut IfaPacket::new_unchecked(&mut buf[..])).unwrap();
        let n = r.buffer_len();
        let check = |b: &[u8]| IfaPacket::new_checked(b, &profiles()).map(|_| ());
        assert_eq!(check(&buf[..n - 1]), Err(WireError::Truncated));
        assert_eq!(check(&buf[..10]), Err(WireError::Truncated));
        let mut v = buf;
        v[0] = 0x30;
        assert_eq!(check(&v[..n]), Err(WireError::UnknownVersion));
        let mut v = buf;
        v[1] = 1; // ICMP: no L4 header to skip
        assert_eq!(check(&v[..n]), Err(WireError::UnknownType));
        for f in [flags::CHECKSUM, flags::FRAGMENT, flags::TAIL_STAMP] {
            let mut v = buf;
            v[2] |= f;
            assert_eq!(check(&v[..n]), Err(WireError::Unsupported));
        }
        let mut v = buf;
        v[3] = 15; // max length below current
        assert_eq!(check(&v[..n]), Err(WireError::BadLength));
        let mut v = buf;
        v[15] = 15; // not a whole hop
        assert_eq!(check(&v[..n]), Err(WireError::BadLength));
        let mut v = buf;
        v[16] = 0x20 | (v[16] & 0xF); // LNS 2 has no profile
        assert_eq!(check(&v[..n]), Err(WireError::UnknownType));
        // A TCP data offset below 5 words.
        let t = repr_with(TCP, tcp_header(5));
        let mut tb = [0u8; 128];
        t.emit(&mut IfaPacket::new_unchecked(&mut tb[..])).unwrap();
        tb[4 + 12] = 0x40;
        assert_eq!(check(&tb[..t.buffer_len()]), Err(WireError::BadLength));
        let mut v = [0u8; 16 + 9 * 32];
        v[..n].copy_from_slice(&buf[..n]);
        v[3] = 255;
        v[15] = 72;
        for k in 2..9 {
            v[16 + 32 * k] = 0x10;
        }
        assert_eq!(check(&v[..]), Err(WireError::TooManyHops));
        // The emitter refuses an L4 header that is not the named one.
        let bad = repr_with(TCP, udp_header());
        assert!(bad.emit(&mut IfaPacket::new_unchecked(&mut buf[..])).is_err());
    }

    #[test]
    fn samples_need_the_tx_layout() {
        let s = repr().hop_samples(&profiles(), &UnitsProfile::default_100g()).unwrap();
        assert_eq!(s[0].tx, 0xDEAD_0000);
        assert_eq!(s[0].bandwidth, LinkSpeed::from_gbps(100));
        assert_eq!(s[0].ts, (0xF_0000u64 * 1_000_000_000 + 999_999_000 + 1_200) as u32);
        let std = NamespaceProfiles::uniform(HopLayout::Standard);
        assert_eq!(
            repr().hop_samples(&std, &UnitsProfile::default_100g()).unwrap_err(),
            WireError::MissingField
        );
        let mut r = repr();
        r.hops[0].speed = 9;
        assert_eq!(
            r.hop_samples(&profiles(), &UnitsProfile::default_100g()).unwrap_err(),
            WireError::UnknownType
        );
    }
}
