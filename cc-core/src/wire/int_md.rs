//! P4.org In-band Network Telemetry, INT-MD mode, specification v2.0
//! (2020): the shim header for TCP/UDP, the INT-MD metadata header and the
//! per-hop metadata stack, newest hop first.
//!
//! ```text
//! shim (4 bytes)
//! +------+-----+----+---------+-----------------------+
//! | type | NPT | R  | length  | NPT-dependent (16)    |   type 1 = INT-MD; length in
//! |  4   |  2  | 2  |    8    |                       |   4-byte words, shim included
//! +------+-----+----+---------+-----------------------+
//! metadata header (12 bytes)
//! | ver 4 | D E M | reserved 12 | HopML 5 | remaining hop count 8 |   ver = 2
//! | instruction bitmap 16        | domain-specific ID 16           |
//! | DS instruction 16            | DS flags 16                     |
//! stack: hops × HopML words, the last switch's hop first
//! ```
//!
//! Instruction bits (bit 0 = most significant) and the bytes each adds:
//! 0 node id 4 · 1 level-1 ingress/egress port 2+2 · 2 hop latency 4 ·
//! 3 queue id 1 + occupancy 3 · 4 ingress timestamp 8 · 5 egress timestamp 8
//! · 6 level-2 ingress/egress port 4+4 · 7 egress tx utilization 4 ·
//! 8 buffer id 1 + occupancy 3 · 15 checksum complement 4. Bits 9-14 are
//! reserved: a bitmap that sets them is refused (their sizes are unknown).
//!
//! INT-MD has no transmitted-bytes counter; HPCC++'s rate term comes from
//! the egress tx utilization (bit 7), scaled by the profile's full scale,
//! and the link speed from the profile. See [`IntMdRepr::hop_samples`].

use super::{be, fold_identity, Hops, Result, UnitsProfile, WireError, MAX_HOPS};
use crate::telemetry::{CounterWidths, HopSample};

/// Shim header bytes.
pub const SHIM_LEN: usize = 4;
/// Metadata header bytes.
pub const MD_HEADER_LEN: usize = 12;
/// The shim type of INT-MD.
pub const TYPE_MD: u8 = 1;
/// The metadata header version of INT v2.0.
pub const VERSION: u8 = 2;

/// Instruction bits, as masks of the 16-bit bitmap.
pub mod instr {
    /// Node id.
    pub const NODE_ID: u16 = 1 << 15;
    /// Level-1 ingress and egress port ids.
    pub const L1_PORTS: u16 = 1 << 14;
    /// Hop latency.
    pub const HOP_LATENCY: u16 = 1 << 13;
    /// Queue id and occupancy.
    pub const QUEUE: u16 = 1 << 12;
    /// Ingress timestamp.
    pub const INGRESS_TS: u16 = 1 << 11;
    /// Egress timestamp.
    pub const EGRESS_TS: u16 = 1 << 10;
    /// Level-2 ingress and egress port ids.
    pub const L2_PORTS: u16 = 1 << 9;
    /// Egress port tx utilization.
    pub const TX_UTIL: u16 = 1 << 8;
    /// Buffer id and occupancy.
    pub const BUFFER: u16 = 1 << 7;
    /// Checksum complement.
    pub const CHECKSUM: u16 = 1 << 0;
    /// Bits 9-14, reserved.
    pub const RESERVED: u16 = 0x007E;
}

/// (bit mask, bytes) in stack order.
const FIELDS: [(u16, usize); 10] = [
    (instr::NODE_ID, 4),
    (instr::L1_PORTS, 4),
    (instr::HOP_LATENCY, 4),
    (instr::QUEUE, 4),
    (instr::INGRESS_TS, 8),
    (instr::EGRESS_TS, 8),
    (instr::L2_PORTS, 8),
    (instr::TX_UTIL, 4),
    (instr::BUFFER, 4),
    (instr::CHECKSUM, 4),
];

/// Bytes per hop for an instruction bitmap without reserved bits.
pub fn hop_len(bitmap: u16) -> usize {
    FIELDS.iter().filter(|(m, _)| bitmap & m != 0).map(|(_, n)| n).sum()
}

/// A view over shim + metadata header + stack.
#[derive(Debug, Clone)]
pub struct IntMdPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> IntMdPacket<T> {
    /// Wraps a buffer without checking it.
    pub const fn new_unchecked(buffer: T) -> Self {
        IntMdPacket { buffer }
    }

    /// Wraps a buffer after [`Self::check_len`].
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Checks, before any per-hop field is read: the headers are present,
    /// type and version are known, no reserved instruction is set, HopML
    /// matches the bitmap, the shim length covers the headers and is a
    /// whole number of hops, the hop count is at most [`MAX_HOPS`], and the
    /// buffer holds it all.
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        if b.len() < SHIM_LEN + MD_HEADER_LEN {
            return Err(WireError::Truncated);
        }
        if self.shim_type() != TYPE_MD {
            return Err(WireError::UnknownType);
        }
        if self.version() != VERSION {
            return Err(WireError::UnknownVersion);
        }
        let bitmap = self.instructions();
        if bitmap & instr::RESERVED != 0 {
            return Err(WireError::UnknownType);
        }
        let hop = hop_len(bitmap);
        if hop != 4 * self.hop_ml() as usize {
            return Err(WireError::BadLength);
        }
        let total = self.total_len();
        let Some(stack) = total.checked_sub(SHIM_LEN + MD_HEADER_LEN) else {
            return Err(WireError::BadLength);
        };
        let hops = match (stack, hop) {
            (0, _) => 0,
            (_, 0) => return Err(WireError::BadLength),
            (s, h) if !s.is_multiple_of(h) => return Err(WireError::BadLength),
            (s, h) => s / h,
        };
        if hops > MAX_HOPS {
            return Err(WireError::TooManyHops);
        }
        if b.len() < total {
            return Err(WireError::Truncated);
        }
        Ok(())
    }

    /// Shim type (1 = INT-MD).
    pub fn shim_type(&self) -> u8 {
        be::u8_at(self.buffer.as_ref(), 0) >> 4
    }
    /// Next-protocol type (NPT).
    pub fn npt(&self) -> u8 {
        be::u8_at(self.buffer.as_ref(), 0) >> 2 & 0x3
    }
    /// Shim length in 4-byte words (shim, header and stack).
    pub fn length_words(&self) -> u8 {
        be::u8_at(self.buffer.as_ref(), 1)
    }
    /// The NPT-dependent field (original UDP port, or IP protocol / DSCP).
    pub fn npt_field(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), 2)
    }
    /// Total bytes of shim, header and stack.
    pub fn total_len(&self) -> usize {
        4 * self.length_words() as usize
    }
    /// Metadata header version.
    pub fn version(&self) -> u8 {
        be::u8_at(self.buffer.as_ref(), 4) >> 4
    }
    /// D, E, M flags as the low 3 bits (D = 4, E = 2, M = 1).
    pub fn flags(&self) -> u8 {
        be::u8_at(self.buffer.as_ref(), 4) >> 1 & 0x7
    }
    /// Per-hop metadata length in 4-byte words.
    pub fn hop_ml(&self) -> u8 {
        be::u8_at(self.buffer.as_ref(), 6) & 0x1F
    }
    /// Remaining hop count.
    pub fn remaining_hops(&self) -> u8 {
        be::u8_at(self.buffer.as_ref(), 7)
    }
    /// Instruction bitmap.
    pub fn instructions(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), 8)
    }
    /// Domain-specific id.
    pub fn domain_id(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), 10)
    }
    /// Domain-specific instructions.
    pub fn ds_instructions(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), 12)
    }
    /// Domain-specific flags.
    pub fn ds_flags(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), 14)
    }
    /// Hops in the stack (valid after `check_len`).
    pub fn hop_count(&self) -> usize {
        match hop_len(self.instructions()) {
            0 => 0,
            h => self.total_len().saturating_sub(SHIM_LEN + MD_HEADER_LEN) / h,
        }
    }
}

/// One hop's metadata; fields the bitmap does not select read as 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct IntHop {
    /// Node id.
    pub node_id: u32,
    /// Level-1 ingress port.
    pub l1_ingress: u16,
    /// Level-1 egress port.
    pub l1_egress: u16,
    /// Hop latency, ns.
    pub hop_latency: u32,
    /// Queue id.
    pub queue_id: u8,
    /// Queue occupancy (24 bits), profile units.
    pub queue_occupancy: u32,
    /// Ingress timestamp, ns.
    pub ingress_ts: u64,
    /// Egress timestamp, ns.
    pub egress_ts: u64,
    /// Level-2 ingress port.
    pub l2_ingress: u32,
    /// Level-2 egress port.
    pub l2_egress: u32,
    /// Egress port tx utilization, profile units.
    pub tx_util: u32,
    /// Buffer id.
    pub buffer_id: u8,
    /// Buffer occupancy (24 bits), profile units.
    pub buffer_occupancy: u32,
    /// Checksum complement.
    pub checksum_complement: u32,
}

/// A parsed INT-MD shim, header and stack.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IntMdRepr {
    /// Next-protocol type of the shim.
    pub npt: u8,
    /// NPT-dependent field.
    pub npt_field: u16,
    /// D, E, M flags (D = 4, E = 2, M = 1).
    pub flags: u8,
    /// Remaining hop count.
    pub remaining_hops: u8,
    /// Instruction bitmap (no reserved bits).
    pub instructions: u16,
    /// Domain-specific id.
    pub domain_id: u16,
    /// Domain-specific instructions.
    pub ds_instructions: u16,
    /// Domain-specific flags.
    pub ds_flags: u16,
    /// The stack, newest hop (last switch) first, as on the wire.
    pub hops: heapless::Vec<IntHop, MAX_HOPS>,
}

impl IntMdRepr {
    /// Parses a checked packet.
    pub fn parse<T: AsRef<[u8]>>(p: &IntMdPacket<T>) -> Result<Self> {
        p.check_len()?;
        let b = p.buffer.as_ref();
        let bitmap = p.instructions();
        let hop = hop_len(bitmap);
        let mut hops = heapless::Vec::new();
        for i in 0..p.hop_count() {
            let mut at = SHIM_LEN + MD_HEADER_LEN + i * hop;
            let mut h = IntHop::default();
            for (mask, len) in FIELDS {
                if bitmap & mask == 0 {
                    continue;
                }
                match mask {
                    instr::NODE_ID => h.node_id = be::u32_at(b, at),
                    instr::L1_PORTS => (h.l1_ingress, h.l1_egress) = (be::u16_at(b, at), be::u16_at(b, at + 2)),
                    instr::HOP_LATENCY => h.hop_latency = be::u32_at(b, at),
                    instr::QUEUE => (h.queue_id, h.queue_occupancy) = (be::u8_at(b, at), be::u32_at(b, at) & 0xFF_FFFF),
                    instr::INGRESS_TS => h.ingress_ts = be::u64_at(b, at),
                    instr::EGRESS_TS => h.egress_ts = be::u64_at(b, at),
                    instr::L2_PORTS => (h.l2_ingress, h.l2_egress) = (be::u32_at(b, at), be::u32_at(b, at + 4)),
                    instr::TX_UTIL => h.tx_util = be::u32_at(b, at),
                    instr::BUFFER => (h.buffer_id, h.buffer_occupancy) = (be::u8_at(b, at), be::u32_at(b, at) & 0xFF_FFFF),
                    _ => h.checksum_complement = be::u32_at(b, at),
                }
                at += len;
            }
            hops.push(h).map_err(|_| WireError::TooManyHops)?;
        }
        Ok(IntMdRepr {
            npt: p.npt(),
            npt_field: p.npt_field(),
            flags: p.flags(),
            remaining_hops: p.remaining_hops(),
            instructions: bitmap,
            domain_id: p.domain_id(),
            ds_instructions: p.ds_instructions(),
            ds_flags: p.ds_flags(),
            hops,
        })
    }

    /// Bytes [`Self::emit`] writes.
    pub fn buffer_len(&self) -> usize {
        SHIM_LEN + MD_HEADER_LEN + self.hops.len() * hop_len(self.instructions)
    }

    /// Writes shim, header and stack.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut IntMdPacket<T>) -> Result<()> {
        if self.instructions & instr::RESERVED != 0 {
            return Err(WireError::UnknownType);
        }
        let len = self.buffer_len();
        if len / 4 > u8::MAX as usize {
            return Err(WireError::BadLength);
        }
        let b = p.buffer.as_mut();
        if b.len() < len {
            return Err(WireError::BufferTooSmall);
        }
        let hop = hop_len(self.instructions);
        be::put_u8(b, 0, TYPE_MD << 4 | (self.npt & 0x3) << 2);
        be::put_u8(b, 1, (len / 4) as u8);
        be::put_u16(b, 2, self.npt_field);
        be::put_u8(b, 4, VERSION << 4 | (self.flags & 0x7) << 1);
        be::put_u8(b, 5, 0);
        be::put_u8(b, 6, (hop / 4) as u8 & 0x1F);
        be::put_u8(b, 7, self.remaining_hops);
        be::put_u16(b, 8, self.instructions);
        be::put_u16(b, 10, self.domain_id);
        be::put_u16(b, 12, self.ds_instructions);
        be::put_u16(b, 14, self.ds_flags);
        for (i, h) in self.hops.iter().enumerate() {
            let mut at = SHIM_LEN + MD_HEADER_LEN + i * hop;
            for (mask, flen) in FIELDS {
                if self.instructions & mask == 0 {
                    continue;
                }
                match mask {
                    instr::NODE_ID => be::put_u32(b, at, h.node_id),
                    instr::L1_PORTS => {
                        be::put_u16(b, at, h.l1_ingress);
                        be::put_u16(b, at + 2, h.l1_egress);
                    }
                    instr::HOP_LATENCY => be::put_u32(b, at, h.hop_latency),
                    instr::QUEUE => be::put_u32(b, at, (h.queue_id as u32) << 24 | (h.queue_occupancy & 0xFF_FFFF)),
                    instr::INGRESS_TS => be::put_u64(b, at, h.ingress_ts),
                    instr::EGRESS_TS => be::put_u64(b, at, h.egress_ts),
                    instr::L2_PORTS => {
                        be::put_u32(b, at, h.l2_ingress);
                        be::put_u32(b, at + 4, h.l2_egress);
                    }
                    instr::TX_UTIL => be::put_u32(b, at, h.tx_util),
                    instr::BUFFER => be::put_u32(b, at, (h.buffer_id as u32) << 24 | (h.buffer_occupancy & 0xFF_FFFF)),
                    _ => be::put_u32(b, at, h.checksum_complement),
                }
                at += flen;
            }
        }
        Ok(())
    }

    /// The engine's samples, first hop first (the stack is reversed).
    ///
    /// Needs the egress timestamp (bit 5; the ingress timestamp, bit 4, is
    /// used if it is absent) and the egress tx utilization (bit 7):
    /// otherwise `MissingField`. Queue occupancy (bit 3) × the profile's
    /// unit gives the queue, hop latency (bit 2) the sojourn time, node id
    /// and level-1 egress port the identity, the profile the link speed.
    pub fn hop_samples(&self, profile: &UnitsProfile) -> Result<Hops> {
        let has = |m: u16| self.instructions & m != 0;
        if !(has(instr::EGRESS_TS) || has(instr::INGRESS_TS)) || !has(instr::TX_UTIL) {
            return Err(WireError::MissingField);
        }
        let util_ok = profile.utilization(0).is_some();
        if !util_ok {
            return Err(WireError::MissingField);
        }
        let mut out = Hops::new();
        for h in self.hops.iter().rev() {
            let ts = if has(instr::EGRESS_TS) { h.egress_ts } else { h.ingress_ts };
            let s = HopSample {
                ts: ts as u32,
                tx: 0,
                qlen_bytes: profile.queue_bytes(h.queue_occupancy),
                sojourn_ns: h.hop_latency,
                bandwidth: profile.link_speed,
                id: fold_identity(h.node_id as u64, h.l1_egress as u32),
                widths: CounterWidths::FULL,
                tx_utilization: profile.utilization(h.tx_util),
            };
            out.push(s).map_err(|_| WireError::TooManyHops)?;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repr() -> IntMdRepr {
        let mut hops = heapless::Vec::new();
        for k in 0..3u32 {
            hops.push(IntHop {
                node_id: 10 + k,
                l1_ingress: 1,
                l1_egress: 2 + k as u16,
                hop_latency: 500 * k,
                queue_id: 3,
                queue_occupancy: 0x12_3456 + k,
                egress_ts: 1_000_000 + 10 * k as u64,
                tx_util: 9_000 + k,
                ..Default::default()
            })
            .unwrap();
        }
        IntMdRepr {
            npt: 1,
            npt_field: 0x0011,
            flags: 0,
            remaining_hops: 5,
            instructions: instr::NODE_ID | instr::L1_PORTS | instr::HOP_LATENCY | instr::QUEUE | instr::EGRESS_TS | instr::TX_UTIL,
            domain_id: 0,
            ds_instructions: 0,
            ds_flags: 0,
            hops,
        }
    }

    #[test]
    fn round_trip_and_layout() {
        let r = repr();
        assert_eq!(hop_len(r.instructions), 28);
        let mut buf = [0u8; 256];
        r.emit(&mut IntMdPacket::new_unchecked(&mut buf[..])).unwrap();
        assert_eq!(buf[0], 0x14); // type 1, NPT 1
        assert_eq!(buf[1] as usize * 4, 16 + 3 * 28);
        assert_eq!(buf[4] >> 4, 2);
        assert_eq!(buf[6], 7); // HopML
        let p = IntMdPacket::new_checked(&buf[..r.buffer_len()]).unwrap();
        assert_eq!(p.hop_count(), 3);
        assert_eq!(IntMdRepr::parse(&p).unwrap(), r);
    }

    #[test]
    fn every_instruction_round_trips() {
        let mut r = repr();
        r.instructions = 0xFF81; // bits 0-8 and 15
        for h in r.hops.iter_mut() {
            h.ingress_ts = 77;
            h.l2_ingress = 0xDEAD_BEEF;
            h.l2_egress = 5;
            h.buffer_id = 9;
            h.buffer_occupancy = 0xABCDEF;
            h.checksum_complement = 0x1234_5678;
        }
        let mut buf = [0u8; 256];
        r.emit(&mut IntMdPacket::new_unchecked(&mut buf[..])).unwrap();
        let p = IntMdPacket::new_checked(&buf[..r.buffer_len()]).unwrap();
        assert_eq!(IntMdRepr::parse(&p).unwrap(), r);
    }

    #[test]
    fn malformed_inputs_are_errors() {
        let r = repr();
        let mut buf = [0u8; 256];
        r.emit(&mut IntMdPacket::new_unchecked(&mut buf[..])).unwrap();
        let n = r.buffer_len();
        let check = |b: &[u8]| IntMdPacket::new_checked(b).map(|_| ());
        assert_eq!(check(&buf[..n - 1]), Err(WireError::Truncated));
        assert_eq!(check(&buf[..10]), Err(WireError::Truncated));
        let mut v = buf;
        v[0] = 0x34; // type 3 = INT-MX
        assert_eq!(check(&v[..n]), Err(WireError::UnknownType));
        let mut v = buf;
        v[4] = 0x10; // version 1
        assert_eq!(check(&v[..n]), Err(WireError::UnknownVersion));
        let mut v = buf;
        v[9] |= 0x02; // reserved instruction bit 14
        assert_eq!(check(&v[..n]), Err(WireError::UnknownType));
        let mut v = buf;
        v[6] = 6; // HopML disagrees with the bitmap
        assert_eq!(check(&v[..n]), Err(WireError::BadLength));
        let mut v = buf;
        v[1] += 1; // not a whole number of hops
        assert_eq!(check(&v[..]), Err(WireError::BadLength));
        let mut v = buf;
        v[1] = 3; // shorter than the headers
        assert_eq!(check(&v[..]), Err(WireError::BadLength));
        let mut v = buf;
        v[1] = ((16 + 9 * 28) / 4) as u8; // nine hops
        assert_eq!(check(&v[..]), Err(WireError::TooManyHops));
    }

    #[test]
    fn samples_are_first_hop_first_with_utilization() {
        let s = repr().hop_samples(&UnitsProfile::default_100g()).unwrap();
        assert_eq!(s.len(), 3);
        // Newest first on the wire, so the wire's last entry is the first hop.
        assert_eq!(s[0].ts, 1_000_020);
        assert_eq!(s[2].ts, 1_000_000);
        assert_eq!(s[0].qlen_bytes, 0x12_3458);
        // 9002 / 10000 of capacity.
        let u = s[0].tx_utilization.unwrap().to_bits() as f64 / (1u64 << 24) as f64;
        assert!((u - 0.9002).abs() < 1e-6);
        let mut r = repr();
        r.instructions &= !instr::TX_UTIL;
        assert_eq!(r.hop_samples(&UnitsProfile::default_100g()).unwrap_err(), WireError::MissingField);
    }
}
