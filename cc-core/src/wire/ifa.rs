//! Inband Flow Analyzer 2.0 (draft-kumar-ippm-ifa): the IFA header, the
//! metadata header and the per-hop metadata stack, newest hop first, each
//! hop laid out by the profile of its local namespace (LNS).
//!
//! ```text
//! IFA header (4 bytes)       | ver 4 = 2 | GNS 4 | next header 8 | flags 8 | max length 8 |
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

use super::{be, fold_identity, Hops, Result, TxCounter, UnitsProfile, WireError, MAX_HOPS};
use crate::telemetry::{CounterWidths, HopSample};
use crate::units::LinkSpeed;

/// IFA header bytes.
pub const HEADER_LEN: usize = 4;
/// Metadata header bytes.
pub const MD_HEADER_LEN: usize = 4;
/// The version this code speaks.
pub const VERSION: u8 = 2;
/// IP protocol number of IFA.
pub const IP_PROTOCOL: u8 = 131;
/// Bytes of every hop layout here.
pub const HOP_LEN: usize = 32;

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
        NamespaceProfiles { layouts: [Some(layout); 16] }
    }

    fn layout(&self, lns: u8) -> Result<HopLayout> {
        self.layouts.get(lns as usize).copied().flatten().ok_or(WireError::UnknownType)
    }
}

/// A view over IFA header + metadata header + stack.
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

    /// Checks the headers, the version, that current length ≤ max length,
    /// that the buffer holds the stack, and walks the stack: every hop's
    /// LNS has a profile and the hops fill the stack exactly, at most
    /// [`MAX_HOPS`] of them.
    pub fn check_len(&self, profiles: &NamespaceProfiles) -> Result<()> {
        let b = self.buffer.as_ref();
        if b.len() < HEADER_LEN + MD_HEADER_LEN {
            return Err(WireError::Truncated);
        }
        if self.version() != VERSION {
            return Err(WireError::UnknownVersion);
        }
        if self.current_length() > self.max_length() {
            return Err(WireError::BadLength);
        }
        if b.len() < self.total_len() {
            return Err(WireError::Truncated);
        }
        let mut at = HEADER_LEN + MD_HEADER_LEN;
        let mut n = 0;
        while at < self.total_len() {
            if n == MAX_HOPS {
                return Err(WireError::TooManyHops);
            }
            profiles.layout(be::u8_at(b, at) >> 4)?;
            at += HOP_LEN;
            n += 1;
        }
        if at != self.total_len() {
            return Err(WireError::BadLength);
        }
        Ok(())
    }

    /// Version.
    pub fn version(&self) -> u8 {
        be::u8_at(self.buffer.as_ref(), 0) >> 4
    }
    /// Global namespace.
    pub fn gns(&self) -> u8 {
        be::u8_at(self.buffer.as_ref(), 0) & 0xF
    }
    /// Protocol of the header that follows.
    pub fn next_header(&self) -> u8 {
        be::u8_at(self.buffer.as_ref(), 1)
    }
    /// Flags.
    pub fn flags(&self) -> u8 {
        be::u8_at(self.buffer.as_ref(), 2)
    }
    /// Max metadata length, 4-byte words.
    pub fn max_length(&self) -> u8 {
        be::u8_at(self.buffer.as_ref(), 3)
    }
    /// Request vector.
    pub fn request_vector(&self) -> u8 {
        be::u8_at(self.buffer.as_ref(), 4)
    }
    /// Action vector.
    pub fn action_vector(&self) -> u8 {
        be::u8_at(self.buffer.as_ref(), 5)
    }
    /// Hop limit.
    pub fn hop_limit(&self) -> u8 {
        be::u8_at(self.buffer.as_ref(), 6)
    }
    /// Current metadata length, 4-byte words.
    pub fn current_length(&self) -> u8 {
        be::u8_at(self.buffer.as_ref(), 7)
    }
    /// Headers plus stack, bytes.
    pub fn total_len(&self) -> usize {
        HEADER_LEN + MD_HEADER_LEN + 4 * self.current_length() as usize
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

/// A parsed IFA header, metadata header and stack.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IfaRepr {
    /// Global namespace.
    pub gns: u8,
    /// Next header.
    pub next_header: u8,
    /// Flags.
    pub flags: u8,
    /// Max metadata length, words.
    pub max_length: u8,
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
        let mut hops = heapless::Vec::new();
        let mut at = HEADER_LEN + MD_HEADER_LEN;
        while at < p.total_len() {
            let w0 = be::u32_at(b, at);
            let w1 = be::u32_at(b, at + 4);
            let h = IfaHop {
                lns: (w0 >> 28) as u8,
                device_id: w0 >> 8 & 0xF_FFFF,
                ttl: w0 as u8,
                speed: (w1 >> 28) as u8,
                ecn: (w1 >> 26 & 0x3) as u8,
                queue_id: (w1 >> 20 & 0x3F) as u8,
                rx_seconds: w1 & 0xF_FFFF,
                egress_port: be::u16_at(b, at + 8),
                ingress_port: be::u16_at(b, at + 10),
                rx_nanoseconds: be::u32_at(b, at + 12),
                residence_ns: be::u32_at(b, at + 16),
                queue_bytes: be::u32_at(b, at + 20),
                queue_cells: be::u16_at(b, at + 26),
                tail: be::u32_at(b, at + 28),
            };
            hops.push(h).map_err(|_| WireError::TooManyHops)?;
            at += HOP_LEN;
        }
        Ok(IfaRepr {
            gns: p.gns(),
            next_header: p.next_header(),
            flags: p.flags(),
            max_length: p.max_length(),
            request_vector: p.request_vector(),
            action_vector: p.action_vector(),
            hop_limit: p.hop_limit(),
            hops,
        })
    }

    /// Bytes [`Self::emit`] writes.
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN + MD_HEADER_LEN + HOP_LEN * self.hops.len()
    }

    /// Writes headers and stack; current length is set from the hops.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut IfaPacket<T>) -> Result<()> {
        let words = HOP_LEN / 4 * self.hops.len();
        if words > self.max_length as usize {
            return Err(WireError::BadLength);
        }
        let b = p.buffer.as_mut();
        if b.len() < self.buffer_len() {
            return Err(WireError::BufferTooSmall);
        }
        be::put_u8(b, 0, VERSION << 4 | (self.gns & 0xF));
        be::put_u8(b, 1, self.next_header);
        be::put_u8(b, 2, self.flags);
        be::put_u8(b, 3, self.max_length);
        be::put_u8(b, 4, self.request_vector);
        be::put_u8(b, 5, self.action_vector);
        be::put_u8(b, 6, self.hop_limit);
        be::put_u8(b, 7, words as u8);
        let mut at = HEADER_LEN + MD_HEADER_LEN;
        for h in &self.hops {
            be::put_u32(b, at, (h.lns as u32 & 0xF) << 28 | (h.device_id & 0xF_FFFF) << 8 | h.ttl as u32);
            be::put_u32(
                b,
                at + 4,
                (h.speed as u32 & 0xF) << 28 | (h.ecn as u32 & 0x3) << 26 | (h.queue_id as u32 & 0x3F) << 20 | (h.rx_seconds & 0xF_FFFF),
            );
            be::put_u16(b, at + 8, h.egress_port);
            be::put_u16(b, at + 10, h.ingress_port);
            be::put_u32(b, at + 12, h.rx_nanoseconds);
            be::put_u32(b, at + 16, h.residence_ns);
            be::put_u32(b, at + 20, h.queue_bytes);
            be::put_u16(b, at + 24, 0);
            be::put_u16(b, at + 26, h.queue_cells);
            be::put_u32(b, at + 28, h.tail);
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
    /// units of the profile's [`TxCounter`]; a Standard hop gives
    /// `MissingField`, as does a reserved speed code `UnknownType`.
    pub fn hop_samples(&self, profiles: &NamespaceProfiles, profile: &UnitsProfile) -> Result<Hops> {
        let TxCounter::Present { unit_bytes } = profile.tx_counter else {
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
                widths: CounterWidths { ts_bits: 32, tx_bits: 32, tx_unit_bytes: unit_bytes.max(1) },
                tx_utilization: None,
            };
            out.push(s).map_err(|_| WireError::TooManyHops)?;
        }
        Ok(out)
    }
}

/// The link speed of an IFA speed code.
pub fn speed(code: u8) -> Result<LinkSpeed> {
    const GBPS: [u32; 7] = [10, 25, 40, 50, 100, 200, 400];
    GBPS.get(code as usize).map(|g| LinkSpeed::from_gbps(*g)).ok_or(WireError::UnknownType)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repr() -> IfaRepr {
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
        IfaRepr { gns: 0, next_header: 17, flags: 0x04, max_length: 64, request_vector: 0xFF, action_vector: 0, hop_limit: 8, hops }
    }

    fn profiles() -> NamespaceProfiles {
        let mut p = NamespaceProfiles { layouts: [None; 16] };
        p.layouts[1] = Some(HopLayout::TxBytes);
        p
    }

    #[test]
    fn round_trip() {
        let r = repr();
        let mut buf = [0u8; 128];
        r.emit(&mut IfaPacket::new_unchecked(&mut buf[..])).unwrap();
        assert_eq!(buf[0], 0x20);
        assert_eq!(buf[7], 16);
        let p = IfaPacket::new_checked(&buf[..r.buffer_len()], &profiles()).unwrap();
        assert_eq!(IfaRepr::parse(&p, &profiles()).unwrap(), r);
    }

    #[test]
    fn malformed_inputs_are_errors() {
        let r = repr();
        let mut buf = [0u8; 128];
        r.emit(&mut IfaPacket::new_unchecked(&mut buf[..])).unwrap();
        let n = r.buffer_len();
        let check = |b: &[u8]| IfaPacket::new_checked(b, &profiles()).map(|_| ());
        assert_eq!(check(&buf[..n - 1]), Err(WireError::Truncated));
        let mut v = buf;
        v[0] = 0x30;
        assert_eq!(check(&v[..n]), Err(WireError::UnknownVersion));
        let mut v = buf;
        v[3] = 15; // max length below current
        assert_eq!(check(&v[..n]), Err(WireError::BadLength));
        let mut v = buf;
        v[7] = 15; // not a whole hop
        assert_eq!(check(&v[..n]), Err(WireError::BadLength));
        let mut v = buf;
        v[8] = 0x20 | (v[8] & 0xF); // LNS 2 has no profile
        assert_eq!(check(&v[..n]), Err(WireError::UnknownType));
        let mut v = [0u8; 8 + 9 * 32];
        v[..n].copy_from_slice(&buf[..n]);
        v[3] = 255;
        v[7] = 72;
        for k in 2..9 {
            v[8 + 32 * k] = 0x10;
        }
        assert_eq!(check(&v[..]), Err(WireError::TooManyHops));
    }

    #[test]
    fn samples_need_the_tx_layout() {
        let s = repr().hop_samples(&profiles(), &UnitsProfile::default_100g()).unwrap();
        assert_eq!(s[0].tx, 0xDEAD_0000);
        assert_eq!(s[0].bandwidth, LinkSpeed::from_gbps(100));
        assert_eq!(s[0].ts, (0xF_0000u64 * 1_000_000_000 + 999_999_000 + 1_200) as u32);
        let std = NamespaceProfiles::uniform(HopLayout::Standard);
        assert_eq!(repr().hop_samples(&std, &UnitsProfile::default_100g()).unwrap_err(), WireError::MissingField);
        let mut r = repr();
        r.hops[0].speed = 9;
        assert_eq!(r.hop_samples(&profiles(), &UnitsProfile::default_100g()).unwrap_err(), WireError::UnknownType);
    }
}
