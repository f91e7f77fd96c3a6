//! P4.org In-band Network Telemetry, INT-MD mode, specification v2.0
//! (2020): the shim header for TCP/UDP (§5.7.2), the INT-MD metadata header
//! and the per-hop metadata stack, newest hop first.
//!
//! ```text
//! shim (4 bytes, §5.7.2)
//! +------+-----+----+---------+-----------------------+
//! | type | NPT | R  | length  | NPT-dependent (16)    |   type 1 = INT-MD; length in
//! |  4   |  2  | 2  |    8    |                       |   4-byte words, shim NOT counted
//! +------+-----+----+---------+-----------------------+
//! metadata header (12 bytes)
//! | ver 4 | D E M | reserved 12 | HopML 5 | remaining hop count 8 |   ver = 2
//! | instruction bitmap 16        | domain-specific ID 16           |
//! | DS instruction 16            | DS flags 16                     |
//! stack: hops × HopML words, the last switch's hop first
//! ```
//!
//! Since v2.0 the shim's length counts the metadata header and the stack
//! but not the shim itself: a 12-byte header and two 8-byte hops give
//! length 7 (the specification's example over TCP).
//!
//! Each hop is HopML · 4 bytes: the baseline fields its instruction bitmap
//! names, in bit order, then the domain-specific metadata, then the
//! checksum complement if bit 15 is set (the metadata header section: domain-specific metadata "is
//! appended to the Baseline Metadata before Checksum Complement is
//! inserted"). Instruction bits (bit 0 = most significant) and the bytes
//! each adds: 0 node id 4 · 1 level-1 ingress/egress port 2+2 · 2 hop
//! latency 4 · 3 queue id 1 + occupancy 3 · 4 ingress timestamp 8 · 5 egress
//! timestamp 8 · 6 level-2 ingress/egress port 4+4 · 7 egress tx
//! utilization 4 · 8 buffer id 1 + occupancy 3 · 9-14 reserved, 4 each · 15
//! checksum complement 4.
//!
//! # What a receiver gets
//!
//! | input | result |
//! |---|---|
//! | shim type other than 1 (INT-MD) | `UnknownType` |
//! | NPT 3 (only 0, 1, 2 are defined) | `UnknownType` |
//! | metadata header version other than 2 | `UnknownVersion` |
//! | length shorter than the metadata header, HopML shorter than the fields the bitmap names, a stack that is not a whole number of hops | `BadLength` |
//! | more than [`MAX_HOPS`] hops | `TooManyHops` |
//! | a buffer shorter than the length says | `Truncated` |
//! | reserved instruction bits 9-14 | read as unknown 4-byte fields (a minor version may only define 4-byte fields there; a transit hop that does not know one writes 0xFFFFFFFF), kept in [`IntHop::reserved`] |
//! | a hop longer than its baseline fields (HopML counts domain-specific metadata) | the extra bytes are kept in [`IntHop::domain_specific`] |
//! | reserved bits of the shim and of the metadata header, the reserved parts of the NPT-dependent field | ignored on receipt, written as zero |
//!
//! Source-only domain-specific metadata (the metadata header section: the INT source's hop may be
//! longer than HopML) has a length only the domain knows; a stack that is
//! not a whole number of HopML-sized hops is refused (`BadLength`).
//!
//! INT-MD has no transmitted-bytes counter; HPCC++'s rate term comes from
//! the egress tx utilization (bit 7), scaled by the profile's full scale,
//! and the link speed from the profile. See [`IntMdRepr::hop_samples`].

use super::{be, fold_identity, Hops, PortSpeedStack, Result, UnitsProfile, WireError, MAX_HOPS};
use crate::telemetry::{CounterWidths, HopSample};
use crate::units::LinkSpeed;

/// Shim header bytes.
pub const SHIM_LEN: usize = 4;
/// Metadata header bytes.
pub const MD_HEADER_LEN: usize = 12;

/// Where each field of the shim and the metadata header starts, in bytes
/// from the shim's first byte (§5.7.2 and the metadata header's layout
/// above); a field narrower than its byte is masked where it is read.
mod field {
    /// Shim: type (4 bits), NPT (2), reserved (2).
    pub const TYPE_NPT: usize = 0;
    /// Shim: length in 4-byte words, shim not counted.
    pub const LENGTH: usize = 1;
    /// Shim: the NPT-dependent field, 16 bits.
    pub const NPT_FIELD: usize = 2;
    /// Version (4 bits), D, E and M flags, one reserved bit.
    pub const VERSION_FLAGS: usize = 4;
    /// Reserved.
    pub const RESERVED: usize = 5;
    /// Three reserved bits and HopML (5).
    pub const HOP_ML: usize = 6;
    /// Remaining hop count.
    pub const REMAINING_HOPS: usize = 7;
    /// Instruction bitmap, 16 bits.
    pub const INSTRUCTIONS: usize = 8;
    /// Domain-specific id, 16 bits.
    pub const DOMAIN_ID: usize = 10;
    /// Domain-specific instructions, 16 bits.
    pub const DS_INSTRUCTIONS: usize = 12;
    /// Domain-specific flags, 16 bits.
    pub const DS_FLAGS: usize = 14;
}
/// The shim type of INT-MD.
pub const TYPE_MD: u8 = 1;
/// The metadata header version of INT v2.0.
pub const VERSION: u8 = 2;
/// Most bytes one hop may carry: HopML is 5 bits of 4-byte words.
pub const MAX_HOP_BYTES: usize = 31 * 4;
/// The value a hop writes for a field it cannot provide, per word.
pub const INVALID_WORD: u32 = 0xFFFF_FFFF;

/// Domain-specific metadata of one hop.
pub type DomainBytes = heapless::Vec<u8, MAX_HOP_BYTES>;

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
    /// Bits 9-14, reserved: 4 bytes each.
    pub const RESERVED: u16 = 0x007E;
    /// Reserved bit `9 + k` as a mask, for k in 0..6.
    pub const fn reserved(k: u8) -> u16 {
        1 << (6 - (k & 7))
    }
}

/// Baseline fields before the domain-specific metadata: (bit mask, bytes)
/// in stack order (bits 0-14; the reserved ones are 4 bytes each).
const FIELDS: [(u16, usize); 15] = [
    (instr::NODE_ID, 4),
    (instr::L1_PORTS, 4),
    (instr::HOP_LATENCY, 4),
    (instr::QUEUE, 4),
    (instr::INGRESS_TS, 8),
    (instr::EGRESS_TS, 8),
    (instr::L2_PORTS, 8),
    (instr::TX_UTIL, 4),
    (instr::BUFFER, 4),
    (instr::reserved(0), 4),
    (instr::reserved(1), 4),
    (instr::reserved(2), 4),
    (instr::reserved(3), 4),
    (instr::reserved(4), 4),
    (instr::reserved(5), 4),
];

/// Bytes of the fields an instruction bitmap names: the baseline fields
/// (reserved bits 4 each) and the checksum complement. A hop is at least
/// this long; HopML may make it longer (domain-specific metadata).
pub fn hop_len(bitmap: u16) -> usize {
    let baseline: usize = FIELDS.iter().filter(|(m, _)| bitmap & m != 0).map(|(_, n)| n).sum();
    baseline + if bitmap & instr::CHECKSUM != 0 { 4 } else { 0 }
}

/// The NPT-dependent field with its reserved bits cleared (§5.7.2): NPT 0
/// keeps the original DSCP (bits 2-7 of the second byte), NPT 1 the whole
/// original UDP port, NPT 2 the IP protocol (second byte).
fn npt_field_defined(npt: u8, field: u16) -> u16 {
    match npt {
        0 => field & 0x00FC,
        1 => field,
        _ => field & 0x00FF,
    }
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
    /// type, NPT and version are known, HopML covers the fields the bitmap
    /// names, the length covers the metadata header and the stack is a
    /// whole number of hops, at most [`MAX_HOPS`] of them, and the buffer
    /// holds it all.
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        if b.len() < SHIM_LEN + MD_HEADER_LEN {
            return Err(WireError::Truncated);
        }
        if self.shim_type() != TYPE_MD || self.npt() == 3 {
            return Err(WireError::UnknownType);
        }
        if self.version() != VERSION {
            return Err(WireError::UnknownVersion);
        }
        let stride = self.hop_stride();
        if stride < hop_len(self.instructions()) {
            return Err(WireError::BadLength);
        }
        let Some(stack) = (4 * self.length_words() as usize).checked_sub(MD_HEADER_LEN) else {
            return Err(WireError::BadLength);
        };
        let hops = match (stack, stride) {
            (0, _) => 0,
            (_, 0) => return Err(WireError::BadLength),
            (s, h) if !s.is_multiple_of(h) => return Err(WireError::BadLength),
            (s, h) => s / h,
        };
        if hops > MAX_HOPS {
            return Err(WireError::TooManyHops);
        }
        if b.len() < self.total_len() {
            return Err(WireError::Truncated);
        }
        Ok(())
    }

    /// Shim type (1 = INT-MD).
    pub fn shim_type(&self) -> u8 {
        be::u8_at(self.buffer.as_ref(), field::TYPE_NPT) >> 4
    }
    /// Next-protocol type (NPT): 0 = DSCP marks INT, 1 = the original UDP
    /// payload follows, 2 = the original L4 header follows.
    pub fn npt(&self) -> u8 {
        be::u8_at(self.buffer.as_ref(), field::TYPE_NPT) >> 2 & 0x3
    }
    /// Shim length in 4-byte words: the metadata header and the stack,
    /// not the shim (§5.7.2).
    pub fn length_words(&self) -> u8 {
        be::u8_at(self.buffer.as_ref(), field::LENGTH)
    }
    /// The NPT-dependent field, reserved bits cleared (original DSCP,
    /// original UDP port, or IP protocol).
    pub fn npt_field(&self) -> u16 {
        npt_field_defined(self.npt(), be::u16_at(self.buffer.as_ref(), field::NPT_FIELD))
    }
    /// Total bytes of shim, header and stack.
    pub fn total_len(&self) -> usize {
        SHIM_LEN + 4 * self.length_words() as usize
    }
    /// Metadata header version.
    pub fn version(&self) -> u8 {
        be::u8_at(self.buffer.as_ref(), field::VERSION_FLAGS) >> 4
    }
    /// D, E, M flags as the low 3 bits (D = 4, E = 2, M = 1).
    pub fn flags(&self) -> u8 {
        be::u8_at(self.buffer.as_ref(), field::VERSION_FLAGS) >> 1 & 0x7
    }
    /// Per-hop metadata length in 4-byte words, domain-specific metadata
    /// included.
    pub fn hop_ml(&self) -> u8 {
        be::u8_at(self.buffer.as_ref(), field::HOP_ML) & 0x1F
    }
    /// Bytes per hop (HopML · 4).
    pub fn hop_stride(&self) -> usize {
        4 * self.hop_ml() as usize
    }
    /// Remaining hop count.
    pub fn remaining_hops(&self) -> u8 {
        be::u8_at(self.buffer.as_ref(), field::REMAINING_HOPS)
    }
    /// Instruction bitmap.
    pub fn instructions(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::INSTRUCTIONS)
    }
    /// Domain-specific id.
    pub fn domain_id(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::DOMAIN_ID)
    }
    /// Domain-specific instructions.
    pub fn ds_instructions(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::DS_INSTRUCTIONS)
    }
    /// Domain-specific flags.
    pub fn ds_flags(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::DS_FLAGS)
    }
    /// Hops in the stack (valid after `check_len`).
    pub fn hop_count(&self) -> usize {
        match self.hop_stride() {
            0 => 0,
            h => (4 * self.length_words() as usize).saturating_sub(MD_HEADER_LEN) / h,
        }
    }
}

/// One hop's metadata; fields the bitmap does not select read as 0.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
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
    /// The words of reserved instruction bits 9-14, index k for bit 9 + k
    /// (0 where the bit is clear; a hop that does not know the field
    /// writes [`INVALID_WORD`]).
    pub reserved: [u32; 6],
    /// Domain-specific metadata: the bytes between the baseline fields and
    /// the checksum complement (HopML · 4 − [`hop_len`]).
    pub domain_specific: DomainBytes,
    /// Checksum complement.
    pub checksum_complement: u32,
}

/// A parsed INT-MD shim, header and stack.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IntMdRepr {
    /// Next-protocol type of the shim (0, 1 or 2).
    pub npt: u8,
    /// NPT-dependent field (its reserved bits are written as zero).
    pub npt_field: u16,
    /// D, E, M flags (D = 4, E = 2, M = 1).
    pub flags: u8,
    /// Per-hop metadata length, 4-byte words (at least [`hop_len`] / 4).
    pub hop_ml: u8,
    /// Remaining hop count.
    pub remaining_hops: u8,
    /// Instruction bitmap.
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
        let stride = p.hop_stride();
        let ds_len = stride - hop_len(bitmap);
        let mut hops = heapless::Vec::new();
        for i in 0..p.hop_count() {
            let mut at = SHIM_LEN + MD_HEADER_LEN + i * stride;
            let mut h = IntHop::default();
            for (k, (mask, len)) in FIELDS.iter().enumerate() {
                if bitmap & mask == 0 {
                    continue;
                }
                match *mask {
                    instr::NODE_ID => h.node_id = be::u32_at(b, at),
                    instr::L1_PORTS => (h.l1_ingress, h.l1_egress) = (be::u16_at(b, at), be::u16_at(b, at + 2)),
                    instr::HOP_LATENCY => h.hop_latency = be::u32_at(b, at),
                    instr::QUEUE => (h.queue_id, h.queue_occupancy) = (be::u8_at(b, at), be::u32_at(b, at) & 0xFF_FFFF),
                    instr::INGRESS_TS => h.ingress_ts = be::u64_at(b, at),
                    instr::EGRESS_TS => h.egress_ts = be::u64_at(b, at),
                    instr::L2_PORTS => (h.l2_ingress, h.l2_egress) = (be::u32_at(b, at), be::u32_at(b, at + 4)),
                    instr::TX_UTIL => h.tx_util = be::u32_at(b, at),
                    instr::BUFFER => {
                        (h.buffer_id, h.buffer_occupancy) = (be::u8_at(b, at), be::u32_at(b, at) & 0xFF_FFFF)
                    }
                    _ => {
                        if let Some(slot) = h.reserved.get_mut(k.saturating_sub(9)) {
                            *slot = be::u32_at(b, at);
                        }
                    }
                }
                at += len;
            }
            let ds = b.get(at..at + ds_len).ok_or(WireError::Truncated)?;
            h.domain_specific = DomainBytes::from_slice(ds).map_err(|_| WireError::BadLength)?;
            at += ds_len;
            if bitmap & instr::CHECKSUM != 0 {
                h.checksum_complement = be::u32_at(b, at);
            }
            hops.push(h).map_err(|_| WireError::TooManyHops)?;
        }
        Ok(IntMdRepr {
            npt: p.npt(),
            npt_field: p.npt_field(),
            flags: p.flags(),
            hop_ml: p.hop_ml(),
            remaining_hops: p.remaining_hops(),
            instructions: bitmap,
            domain_id: p.domain_id(),
            ds_instructions: p.ds_instructions(),
            ds_flags: p.ds_flags(),
            hops,
        })
    }

    /// The smallest HopML for an instruction bitmap without domain-specific
    /// metadata.
    pub fn hop_ml_for(bitmap: u16) -> u8 {
        (hop_len(bitmap) / 4) as u8
    }

    /// Bytes [`Self::emit`] writes.
    pub fn buffer_len(&self) -> usize {
        SHIM_LEN + MD_HEADER_LEN + self.hops.len() * 4 * self.hop_ml as usize
    }

    /// Writes shim, header and stack. Refused (`BadLength`): NPT 3, HopML
    /// above 31 or shorter than the bitmap's fields, a hop whose
    /// domain-specific bytes do not fill HopML exactly, or a stack too long
    /// for the 8-bit length.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut IntMdPacket<T>) -> Result<()> {
        let stride = 4 * self.hop_ml as usize;
        let known = hop_len(self.instructions);
        let ds_ok = self.hops.iter().all(|h| known + h.domain_specific.len() == stride);
        if self.npt > 2 || self.hop_ml > 31 || stride < known || !ds_ok {
            return Err(WireError::BadLength);
        }
        let len = self.buffer_len();
        let words = (len - SHIM_LEN) / 4;
        if words > u8::MAX as usize {
            return Err(WireError::BadLength);
        }
        let b = p.buffer.as_mut();
        if b.len() < len {
            return Err(WireError::BufferTooSmall);
        }
        be::put_u8(b, field::TYPE_NPT, TYPE_MD << 4 | (self.npt & 0x3) << 2);
        be::put_u8(b, field::LENGTH, words as u8);
        be::put_u16(b, field::NPT_FIELD, npt_field_defined(self.npt, self.npt_field));
        be::put_u8(b, field::VERSION_FLAGS, VERSION << 4 | (self.flags & 0x7) << 1);
        be::put_u8(b, field::RESERVED, 0);
        be::put_u8(b, field::HOP_ML, self.hop_ml & 0x1F);
        be::put_u8(b, field::REMAINING_HOPS, self.remaining_hops);
        be::put_u16(b, field::INSTRUCTIONS, self.instructions);
        be::put_u16(b, field::DOMAIN_ID, self.domain_id);
        be::put_u16(b, field::DS_INSTRUCTIONS, self.ds_instructions);
        be::put_u16(b, field::DS_FLAGS, self.ds_flags);
        for (i, h) in self.hops.iter().enumerate() {
            let mut at = SHIM_LEN + MD_HEADER_LEN + i * stride;
            for (k, (mask, flen)) in FIELDS.iter().enumerate() {
                if self.instructions & mask == 0 {
                    continue;
                }
                match *mask {
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
                    _ => be::put_u32(
                        b,
                        at,
                        h.reserved.get(k.saturating_sub(9)).copied().unwrap_or(INVALID_WORD),
                    ),
                }
                at += flen;
            }
            if let Some(ds) = b.get_mut(at..at + h.domain_specific.len()) {
                ds.copy_from_slice(&h.domain_specific);
            }
            at += h.domain_specific.len();
            if self.instructions & instr::CHECKSUM != 0 {
                be::put_u32(b, at, h.checksum_complement);
            }
        }
        Ok(())
    }
}

impl PortSpeedStack for IntMdRepr {
    /// The engine's samples, first hop first (the stack is reversed).
    ///
    /// Needs the egress timestamp (bit 5; the ingress timestamp, bit 4, is
    /// used if it is absent) and the egress tx utilization (bit 7):
    /// otherwise `MissingField`, as when a hop wrote the invalid value
    /// (all ones) into either. Queue occupancy (bit 3) × the profile's unit
    /// gives the queue, hop latency (bit 2) the sojourn time, node id and
    /// level-1 egress port the identity, the profile the link speed.
    fn hop_samples_by_port(
        &self,
        profile: &UnitsProfile,
        speed: impl Fn(u64, u32) -> Option<LinkSpeed>,
    ) -> Result<Hops> {
        let has = |m: u16| self.instructions & m != 0;
        if !(has(instr::EGRESS_TS) || has(instr::INGRESS_TS)) || !has(instr::TX_UTIL) {
            return Err(WireError::MissingField);
        }
        if profile.utilization(0).is_none() {
            return Err(WireError::MissingField);
        }
        let mut out = Hops::new();
        for h in self.hops.iter().rev() {
            let ts = if has(instr::EGRESS_TS) {
                h.egress_ts
            } else {
                h.ingress_ts
            };
            if ts == u64::MAX || h.tx_util == INVALID_WORD {
                return Err(WireError::MissingField);
            }
            let s = HopSample {
                ts: ts as u32,
                tx: 0,
                qlen_bytes: profile.queue_bytes(h.queue_occupancy),
                sojourn_ns: h.hop_latency,
                bandwidth: speed(h.node_id as u64, h.l1_egress as u32).unwrap_or(profile.link_speed),
                id: fold_identity(h.node_id as u64, h.l1_egress as u32),
                widths: CounterWidths::FULL,
                tx_utilization: profile.utilization(h.tx_util).into(),
            };
            out.push(s).map_err(|_| WireError::TooManyHops)?;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The specification's own example (v2.0, "Example with INT over TCP"):
    /// the packet the INT sink receives after two hops that each wrote a
    /// switch id and a queue occupancy. Bytes from the figure.
    const SPEC_TCP_EXAMPLE: [u8; 32] = [
        // Shim: Type=1 | NPT=0 | R R | Length=7 | reserved 8 | DSCP 6 | R R
        0x10,
        0x07,
        0x00,
        0x17 << 2, //
        // Ver=2 |0|0|0| reserved | HopML=2 | RemainingHopCnt=6
        0x20,
        0x00,
        0x02,
        0x06, //
        // Instruction bitmap 1001 0000 0000 0000 | domain-specific id 0
        0x90,
        0x00,
        0x00,
        0x00, //
        // DS instruction 0 | DS flags 0
        0x00,
        0x00,
        0x00,
        0x00, //
        // sw id of hop2, queue occupancy of hop2 (queue id 0)
        0x00,
        0x00,
        0x00,
        0x02,
        0x00,
        0x00,
        0x01,
        0x2C, //
        // sw id of hop1, queue occupancy of hop1
        0x00,
        0x00,
        0x00,
        0x01,
        0x00,
        0x00,
        0x00,
        0x64,
    ];

    #[test]
    fn the_specifications_tcp_example_parses() {
        let p = IntMdPacket::new_checked(&SPEC_TCP_EXAMPLE[..]).unwrap();
        assert_eq!(p.length_words(), 7);
        assert_eq!(p.total_len(), 32);
        assert_eq!(p.hop_count(), 2);
        let r = IntMdRepr::parse(&p).unwrap();
        assert_eq!((r.npt, r.npt_field), (0, 0x17 << 2));
        assert_eq!((r.hop_ml, r.remaining_hops), (2, 6));
        assert_eq!(r.instructions, instr::NODE_ID | instr::QUEUE);
        let ids: heapless::Vec<u32, 2> = r.hops.iter().map(|h| h.node_id).collect();
        assert_eq!(&ids[..], &[2, 1]); // newest first
        assert_eq!((r.hops[0].queue_occupancy, r.hops[1].queue_occupancy), (300, 100));
        // Emitting the parsed packet gives the figure's bytes back.
        let mut buf = [0u8; 32];
        r.emit(&mut IntMdPacket::new_unchecked(&mut buf[..])).unwrap();
        assert_eq!(buf, SPEC_TCP_EXAMPLE);
    }

    #[test]
    fn a_length_that_counts_the_shim_or_is_a_word_short_is_refused() {
        // v1.0 counted the shim: Length = 8 for the same stack.
        // Read as v2.0 that is 20 bytes of stack: not a whole number of hops.
        let mut v = SPEC_TCP_EXAMPLE;
        v[1] = 8;
        let mut longer = [0u8; 36];
        longer[..32].copy_from_slice(&v);
        assert_eq!(
            IntMdPacket::new_checked(&longer[..]).map(|_| ()),
            Err(WireError::BadLength)
        );
        // One word short: 12 bytes of stack is not a whole number of 8-byte hops.
        v[1] = 6;
        assert_eq!(IntMdPacket::new_checked(&v[..]).map(|_| ()), Err(WireError::BadLength));
        // Shorter than the metadata header.
        v[1] = 2;
        assert_eq!(IntMdPacket::new_checked(&v[..]).map(|_| ()), Err(WireError::BadLength));
    }

    #[test]
    fn hop_ml_is_the_stride_and_domain_specific_bytes_are_kept() {
        // HopML = 4 words with a 2-word bitmap (node id, queue) and the
        // checksum complement: 4 bytes of domain-specific metadata sit
        // between the baseline fields and the checksum complement.
        let mut v = [0u8; 4 + 12 + 2 * 16];
        v[..16].copy_from_slice(&[0x10, 11, 0, 0, 0x20, 0, 4, 6, 0x90, 0x01, 0x00, 0x07, 0x80, 0x00, 0, 0]);
        for (k, hop) in v[16..].chunks_mut(16).enumerate() {
            let k = k as u8;
            hop.copy_from_slice(&[
                0,
                0,
                0,
                9 - k,
                0,
                0,
                0,
                50 + k,
                0xD5,
                0xD5,
                0xD5,
                k,
                0xCC,
                0xCC,
                0xCC,
                k,
            ]);
        }
        let r = IntMdRepr::parse(&IntMdPacket::new_checked(&v[..]).unwrap()).unwrap();
        assert_eq!(r.hops.len(), 2);
        assert_eq!(r.hops[1].node_id, 8);
        assert_eq!(r.hops[1].queue_occupancy, 51);
        assert_eq!(&r.hops[1].domain_specific[..], &[0xD5, 0xD5, 0xD5, 1]);
        assert_eq!(r.hops[1].checksum_complement, 0xCCCC_CC01);
        let mut out = [0u8; 48];
        r.emit(&mut IntMdPacket::new_unchecked(&mut out[..])).unwrap();
        assert_eq!(out, v);
        // HopML shorter than the named fields: refused.
        let mut w = v;
        w[6] = 2;
        assert_eq!(IntMdPacket::new_checked(&w[..]).map(|_| ()), Err(WireError::BadLength));
    }

    #[test]
    fn reserved_instruction_bits_are_unknown_four_byte_fields() {
        // Bits 0 (node id), 5 (egress ts), 7 (tx util) and reserved 10:
        // a hop that does not know bit 10 fills 0xFFFFFFFF (v2.0, reserved
        // bits "may be used for a 4B metadata in a subsequent minor version").
        let bitmap = instr::NODE_ID | instr::EGRESS_TS | instr::TX_UTIL | instr::reserved(1);
        assert_eq!(bitmap, 0x8520);
        assert_eq!(hop_len(bitmap), 20);
        let mut v = [0u8; 16 + 20];
        v[..16].copy_from_slice(&[0x10, 8, 0, 0, 0x20, 0, 5, 7, 0x85, 0x20, 0, 0, 0, 0, 0, 0]);
        v[16..].copy_from_slice(&[
            0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0x03, 0xE8, 0, 0, 0x23, 0x28, 0xFF, 0xFF, 0xFF, 0xFF,
        ]);
        let r = IntMdRepr::parse(&IntMdPacket::new_checked(&v[..]).unwrap()).unwrap();
        assert_eq!(
            (r.hops[0].node_id, r.hops[0].egress_ts, r.hops[0].tx_util),
            (3, 1000, 9000)
        );
        assert_eq!(r.hops[0].reserved, [0, INVALID_WORD, 0, 0, 0, 0]);
        let s = r.hop_samples(&UnitsProfile::default_100g()).unwrap();
        assert_eq!(s[0].ts, 1000);
        let mut out = [0u8; 36];
        r.emit(&mut IntMdPacket::new_unchecked(&mut out[..])).unwrap();
        assert_eq!(out, v);
    }

    #[test]
    fn npt_3_is_refused_and_reserved_header_bits_are_ignored() {
        let mut v = SPEC_TCP_EXAMPLE;
        v[0] = 0x1C; // NPT 3
        assert_eq!(
            IntMdPacket::new_checked(&v[..]).map(|_| ()),
            Err(WireError::UnknownType)
        );
        // Reserved bits set everywhere the spec reserves them: the shim's R
        // bits, the NPT=0 field's first byte and last two bits, the metadata
        // header's 12 reserved bits.
        let mut v = SPEC_TCP_EXAMPLE;
        v[0] |= 0x03;
        v[2] = 0xAB;
        v[3] |= 0x03;
        v[4] |= 0x01;
        v[5] = 0xFF;
        v[6] |= 0xE0;
        let r = IntMdRepr::parse(&IntMdPacket::new_checked(&v[..]).unwrap()).unwrap();
        let clean = IntMdRepr::parse(&IntMdPacket::new_checked(&SPEC_TCP_EXAMPLE[..]).unwrap()).unwrap();
        assert_eq!(r, clean);
        // ... and written as zero.
        let mut out = [0u8; 32];
        r.emit(&mut IntMdPacket::new_unchecked(&mut out[..])).unwrap();
        assert_eq!(out, SPEC_TCP_EXAMPLE);
        // NPT 2 keeps the IP protocol in the second byte only.
        let mut v = SPEC_TCP_EXAMPLE;
        v[0] = 0x18;
        v[2] = 0x5A;
        v[3] = 6;
        assert_eq!(IntMdPacket::new_checked(&v[..]).unwrap().npt_field(), 6);
    }

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
        let instructions =
            instr::NODE_ID | instr::L1_PORTS | instr::HOP_LATENCY | instr::QUEUE | instr::EGRESS_TS | instr::TX_UTIL;
        IntMdRepr {
            npt: 1,
            npt_field: 0x0011,
            flags: 0,
            hop_ml: IntMdRepr::hop_ml_for(instructions),
            remaining_hops: 5,
            instructions,
            domain_id: 0,
            ds_instructions: 0,
            ds_flags: 0,
            hops,
        }
    }

    /// INT-MD carries no link speed: on a fabric of mixed speeds the
    /// device's configuration gives each (node, egress port) its own, and
    /// a port it does not know keeps the profile's.
    #[test]
    fn link_speeds_by_port_on_a_mixed_fabric() {
        let profile = UnitsProfile::default_100g();
        let fast = LinkSpeed::from_gbps(400);
        let hops = repr()
            .hop_samples_by_port(&profile, |node, port| ((node, port) == (11, 3)).then_some(fast))
            .unwrap();
        assert_eq!(hops.len(), 3);
        for h in &hops {
            let want = if h.id == fold_identity(11, 3) {
                fast
            } else {
                profile.link_speed
            };
            assert_eq!(h.bandwidth, want, "hop {:x}", h.id);
        }
        assert_eq!(hops.iter().filter(|h| h.bandwidth == fast).count(), 1);
        // Without a table: the profile's speed everywhere, as before.
        assert!(repr()
            .hop_samples(&profile)
            .unwrap()
            .iter()
            .all(|h| h.bandwidth == profile.link_speed));
    }

    #[test]
    fn round_trip_and_layout() {
        let r = repr();
        assert_eq!(hop_len(r.instructions), 28);
        let mut buf = [0u8; 256];
        r.emit(&mut IntMdPacket::new_unchecked(&mut buf[..])).unwrap();
        assert_eq!(buf[0], 0x14); // type 1, NPT 1
        assert_eq!(buf[1] as usize * 4, 12 + 3 * 28); // the shim is not counted
        assert_eq!(buf[4] >> 4, 2);
        assert_eq!(buf[6], 7); // HopML
        let p = IntMdPacket::new_checked(&buf[..r.buffer_len()]).unwrap();
        assert_eq!(p.hop_count(), 3);
        assert_eq!(IntMdRepr::parse(&p).unwrap(), r);
    }

    #[test]
    fn every_instruction_round_trips() {
        let mut r = repr();
        r.instructions = 0xFFFF; // every baseline, reserved and checksum bit
        r.hop_ml = IntMdRepr::hop_ml_for(0xFFFF);
        assert_eq!(r.hop_ml, 19);
        for h in r.hops.iter_mut() {
            h.ingress_ts = 77;
            h.l2_ingress = 0xDEAD_BEEF;
            h.l2_egress = 5;
            h.buffer_id = 9;
            h.buffer_occupancy = 0xABCDEF;
            h.reserved = [1, 2, 3, 4, 5, INVALID_WORD];
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
        v[6] = 6; // HopML shorter than the bitmap's fields
        assert_eq!(check(&v[..n]), Err(WireError::BadLength));
        let mut v = buf;
        v[1] += 1; // not a whole number of hops
        assert_eq!(check(&v[..]), Err(WireError::BadLength));
        let mut v = buf;
        v[1] = ((12 + 9 * 28) / 4) as u8; // nine hops
        assert_eq!(check(&v[..]), Err(WireError::TooManyHops));
        // The emitter refuses what the parser would refuse.
        let mut bad = repr();
        bad.npt = 3;
        assert_eq!(
            bad.emit(&mut IntMdPacket::new_unchecked(&mut buf[..])),
            Err(WireError::BadLength)
        );
        let mut bad = repr();
        bad.hop_ml = 8; // 4 domain-specific bytes that no hop carries
        assert_eq!(
            bad.emit(&mut IntMdPacket::new_unchecked(&mut buf[..])),
            Err(WireError::BadLength)
        );
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
        let u = s[0].tx_utilization.get().unwrap().to_bits() as f64 / (1u64 << 24) as f64;
        assert!((u - 0.9002).abs() < 1e-6);
        let mut r = repr();
        r.instructions &= !instr::TX_UTIL;
        assert_eq!(
            r.hop_samples(&UnitsProfile::default_100g()).unwrap_err(),
            WireError::MissingField
        );
        // A hop that could not provide its utilization wrote all ones.
        let mut r = repr();
        r.hops[1].tx_util = INVALID_WORD;
        assert_eq!(
            r.hop_samples(&UnitsProfile::default_100g()).unwrap_err(),
            WireError::MissingField
        );
    }
}
