//! IOAM trace option (RFC 9197 §4.4) with the Loopback and Active flags of
//! RFC 9322, carried in an IPv6 hop-by-hop option (RFC 9486 §3).
//!
//! ```text
//! IPv6 option (RFC 9486)
//! | type 0x31 | opt data len | reserved | IOAM option-type |     0 = pre-allocated, 1 = incremental
//! trace option header (8 bytes)
//! | namespace id 16 | NodeLen 5 | flags 4 | RemainingLen 7 |     flags: O L A reserved
//! | trace type 24                          | reserved 8      |
//! node data list, newest node first (pre-allocated: after RemainingLen·4
//! bytes of free space)
//! ```
//!
//! Trace-type bits (bit 0 = most significant) and the node data each adds:
//! 0 hop limit 1 + node id 3 · 1 ingress 2 + egress 2 · 2 timestamp seconds 4
//! · 3 timestamp fraction 4 · 4 transit delay 4 · 5 namespace data 4 ·
//! 6 queue depth 4 · 7 checksum complement 4 · 8 hop limit 1 + node id 7 ·
//! 9 ingress 4 + egress 4 · 10 namespace data 8 · 11 buffer occupancy 4 ·
//! 12-21 undefined, 4 each (a transit node fills them with 0xFFFFFFFF) ·
//! 22 opaque state snapshot (length 1 + schema id 3 + length·4 bytes, after
//! the fixed data) · 23 reserved. NodeLen counts the fixed data
//! in 4-byte words and must match the trace type.
//!
//! # What a receiver gets
//!
//! | input | result |
//! |---|---|
//! | an IPv6 option type other than 0x31, an IOAM option type other than 0 or 1 | `UnknownType` |
//! | NodeLen that does not match the trace type, RemainingLen past the data, data that is not a whole number of nodes | `BadLength` |
//! | more than [`MAX_HOPS`] nodes | `TooManyHops` |
//! | a buffer shorter than the option length says | `Truncated` |
//! | undefined trace-type bits 12-21 | 4-byte fields (RFC 9197 §4.4.1: a transit node fills them with 0xFFFFFFFF) |
//! | reserved fields: the option's reserved byte (RFC 9486 §3), the fourth flag bit, trace-type bit 23 and the reserved byte after the trace type (RFC 9197 §4.4.1) | ignored on receipt, written as zero |

use super::{be, fold_identity, Hops, PortSpeedStack, Result, TimestampFraction, UnitsProfile, WireError, MAX_HOPS};
use crate::telemetry::HopSample;
use crate::units::LinkSpeed;

/// IPv6 option type of IOAM (RFC 9486 §3): "00" skip, "1" may change en route.
pub const IPV6_OPTION_TYPE: u8 = 0x31;
/// Bytes before the trace header: option type, length, reserved, IOAM type.
pub const OPTION_HEADER_LEN: usize = 4;
/// Trace option header bytes.
pub const TRACE_HEADER_LEN: usize = 8;

/// Where each field of the option and the trace header starts, in bytes
/// from the option type (RFC 9486 §3, RFC 9197 §4.4.1; the layout above).
/// A field narrower than its bytes is masked where it is read.
mod field {
    /// IPv6 option type (0x31).
    pub const OPTION_TYPE: usize = 0;
    /// Option data length: bytes after this one.
    pub const OPTION_LEN: usize = 1;
    /// Reserved.
    pub const RESERVED: usize = 2;
    /// IOAM option type: 0 pre-allocated, 1 incremental.
    pub const IOAM_TYPE: usize = 3;
    /// Namespace id, 16 bits.
    pub const NAMESPACE: usize = 4;
    /// NodeLen (5 bits), flags (4), RemainingLen (7): 16 bits.
    pub const NODE_LEN_FLAGS: usize = 6;
    /// The low byte of `NODE_LEN_FLAGS`: a flag bit and RemainingLen (7).
    pub const REMAINING_LEN: usize = 7;
    /// Trace type (24 bits) and a reserved byte.
    pub const TRACE_TYPE: usize = 8;
}

/// Trace-type bits, as masks of the 24-bit field.
pub mod bits {
    /// Hop limit and short node id.
    pub const ID_SHORT: u32 = 1 << 23;
    /// Short ingress and egress interface ids.
    pub const IF_SHORT: u32 = 1 << 22;
    /// Timestamp seconds.
    pub const TS_SEC: u32 = 1 << 21;
    /// Timestamp fraction.
    pub const TS_FRAC: u32 = 1 << 20;
    /// Transit delay.
    pub const TRANSIT_DELAY: u32 = 1 << 19;
    /// Namespace-specific data, short.
    pub const NS_SHORT: u32 = 1 << 18;
    /// Queue depth.
    pub const QUEUE_DEPTH: u32 = 1 << 17;
    /// Checksum complement.
    pub const CHECKSUM: u32 = 1 << 16;
    /// Hop limit and wide node id.
    pub const ID_WIDE: u32 = 1 << 15;
    /// Wide ingress and egress interface ids.
    pub const IF_WIDE: u32 = 1 << 14;
    /// Namespace-specific data, wide.
    pub const NS_WIDE: u32 = 1 << 13;
    /// Buffer occupancy.
    pub const BUFFER: u32 = 1 << 12;
    /// Bits 12-21: undefined, 4 bytes each.
    pub const UNDEFINED: u32 = 0x0F_FC;
    /// Opaque state snapshot.
    pub const OSS: u32 = 1 << 1;
    /// Bit 23: reserved.
    pub const RESERVED: u32 = 1 << 0;
}

/// (mask, bytes) of the fixed fields in node-data order.
const FIELDS: [(u32, usize); 12] = [
    (bits::ID_SHORT, 4),
    (bits::IF_SHORT, 4),
    (bits::TS_SEC, 4),
    (bits::TS_FRAC, 4),
    (bits::TRANSIT_DELAY, 4),
    (bits::NS_SHORT, 4),
    (bits::QUEUE_DEPTH, 4),
    (bits::CHECKSUM, 4),
    (bits::ID_WIDE, 8),
    (bits::IF_WIDE, 8),
    (bits::NS_WIDE, 8),
    (bits::BUFFER, 4),
];

/// Fixed node-data bytes for a trace type (undefined bits count 4 each).
pub fn node_fixed_len(trace_type: u32) -> usize {
    let defined: usize = FIELDS.iter().filter(|(m, _)| trace_type & m != 0).map(|(_, n)| n).sum();
    defined + 4 * (trace_type & bits::UNDEFINED).count_ones() as usize
}

/// Which trace option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum TraceKind {
    /// Pre-allocated: space reserved by the encapsulating node (type 0).
    PreAllocated,
    /// Incremental: each node inserts its data (type 1).
    Incremental,
}

/// The trace flags (RFC 9197 §4.4.1 Overflow; RFC 9322 Loopback, Active).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct TraceFlags {
    /// O: a node could not add its data.
    pub overflow: bool,
    /// L: loopback requested (RFC 9322 §2).
    pub loopback: bool,
    /// A: an active measurement packet (RFC 9322 §3).
    pub active: bool,
}

impl TraceFlags {
    fn from_nibble(n: u8) -> Self {
        TraceFlags {
            overflow: n & 0x8 != 0,
            loopback: n & 0x4 != 0,
            active: n & 0x2 != 0,
        }
    }
    fn nibble(self) -> u8 {
        (self.overflow as u8) << 3 | (self.loopback as u8) << 2 | (self.active as u8) << 1
    }
}

/// A view over the IPv6 IOAM option, from the option type byte.
#[derive(Debug, Clone)]
pub struct IoamOption<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> IoamOption<T> {
    /// Wraps a buffer without checking it.
    pub const fn new_unchecked(buffer: T) -> Self {
        IoamOption { buffer }
    }

    /// Wraps a buffer after [`Self::check_len`].
    pub fn new_checked(buffer: T) -> Result<Self> {
        let o = Self::new_unchecked(buffer);
        o.check_len()?;
        Ok(o)
    }

    /// Checks option type and length, the IOAM option type, the trace
    /// header, NodeLen against the trace type, RemainingLen against the
    /// space, and walks the node list (opaque snapshots included) to count
    /// the nodes — all before any node field is read.
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        if b.len() < OPTION_HEADER_LEN + TRACE_HEADER_LEN {
            return Err(WireError::Truncated);
        }
        if b[0] != IPV6_OPTION_TYPE {
            return Err(WireError::UnknownType);
        }
        if self.total_len() > b.len() {
            return Err(WireError::Truncated);
        }
        let Some(data) = self.total_len().checked_sub(OPTION_HEADER_LEN + TRACE_HEADER_LEN) else {
            return Err(WireError::BadLength);
        };
        if !data.is_multiple_of(4) {
            return Err(WireError::BadLength);
        }
        self.kind()?;
        let tt = self.trace_type();
        if self.node_len() as usize * 4 != node_fixed_len(tt) || self.node_len() == 0 {
            return Err(WireError::BadLength);
        }
        self.walk(|_, _| Ok(()))?;
        Ok(())
    }

    /// Option type (0x31).
    pub fn option_type(&self) -> u8 {
        be::u8_at(self.buffer.as_ref(), field::OPTION_TYPE)
    }
    /// Bytes of the whole option (type and length bytes included).
    pub fn total_len(&self) -> usize {
        2 + be::u8_at(self.buffer.as_ref(), field::OPTION_LEN) as usize
    }
    /// Pre-allocated or incremental; other IOAM option types are refused.
    pub fn kind(&self) -> Result<TraceKind> {
        match be::u8_at(self.buffer.as_ref(), field::IOAM_TYPE) {
            0 => Ok(TraceKind::PreAllocated),
            1 => Ok(TraceKind::Incremental),
            _ => Err(WireError::UnknownType),
        }
    }
    /// IOAM namespace id.
    pub fn namespace(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::NAMESPACE)
    }
    /// NodeLen in 4-byte words.
    pub fn node_len(&self) -> u8 {
        be::u8_at(self.buffer.as_ref(), field::NODE_LEN_FLAGS) >> 3
    }
    /// The flags.
    pub fn flags(&self) -> TraceFlags {
        let w = be::u16_at(self.buffer.as_ref(), field::NODE_LEN_FLAGS);
        TraceFlags::from_nibble((w >> 7 & 0xF) as u8)
    }
    /// RemainingLen in 4-byte words.
    pub fn remaining_len(&self) -> u8 {
        be::u8_at(self.buffer.as_ref(), field::REMAINING_LEN) & 0x7F
    }
    /// The 24-bit trace type. Bit 23 is reserved, "ignored upon receipt"
    /// (RFC 9197 §4.4.1): it reads as 0.
    pub fn trace_type(&self) -> u32 {
        be::u32_at(self.buffer.as_ref(), field::TRACE_TYPE) >> 8 & !bits::RESERVED
    }

    /// Start and end of the filled node data.
    fn data_span(&self) -> Result<(usize, usize)> {
        let start = OPTION_HEADER_LEN + TRACE_HEADER_LEN;
        let end = self.total_len();
        let filled_start = match self.kind()? {
            TraceKind::PreAllocated => start + 4 * self.remaining_len() as usize,
            TraceKind::Incremental => start,
        };
        if filled_start > end {
            return Err(WireError::BadLength);
        }
        Ok((filled_start, end))
    }

    /// Calls `f(node offset, oss length in bytes)` for each node, newest
    /// first, checking every length on the way.
    fn walk(&self, mut f: impl FnMut(usize, usize) -> Result<()>) -> Result<usize> {
        let (mut at, end) = self.data_span()?;
        let fixed = 4 * self.node_len() as usize;
        let oss = self.trace_type() & bits::OSS != 0;
        let mut n = 0;
        while at < end {
            if n == MAX_HOPS {
                return Err(WireError::TooManyHops);
            }
            let mut next = at + fixed;
            let mut oss_len = 0;
            if oss {
                let words = be::u8_at(self.buffer.as_ref(), next) as usize;
                oss_len = 4 + 4 * words;
                next += oss_len;
            }
            if next > end {
                return Err(WireError::BadLength);
            }
            f(at, oss_len)?;
            at = next;
            n += 1;
        }
        Ok(n)
    }
}

/// An opaque state snapshot (trace-type bit 22).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct OpaqueSnapshot<'a> {
    /// Schema id (24 bits).
    pub schema_id: u32,
    /// The opaque bytes, a multiple of 4 long.
    pub data: &'a [u8],
}

/// One node's data; fields the trace type does not select read as 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct IoamNode<'a> {
    /// Hop limit (from bit 0, or bit 8 if only that is set).
    pub hop_limit: u8,
    /// Short node id (24 bits).
    pub node_id: u32,
    /// Short ingress interface id.
    pub ingress_if: u16,
    /// Short egress interface id.
    pub egress_if: u16,
    /// Timestamp seconds.
    pub ts_seconds: u32,
    /// Timestamp fraction (profile format).
    pub ts_fraction: u32,
    /// Transit delay: top bit overflow, 31 bits ns.
    pub transit_delay: u32,
    /// Namespace-specific data, short.
    pub ns_data: u32,
    /// Queue depth (profile units).
    pub queue_depth: u32,
    /// Checksum complement.
    pub checksum_complement: u32,
    /// Hop limit of the wide node id field.
    pub hop_limit_wide: u8,
    /// Wide node id (56 bits).
    pub node_id_wide: u64,
    /// Wide ingress interface id.
    pub ingress_if_wide: u32,
    /// Wide egress interface id.
    pub egress_if_wide: u32,
    /// Namespace-specific data, wide.
    pub ns_data_wide: u64,
    /// Buffer occupancy.
    pub buffer_occupancy: u32,
    /// Opaque state snapshot.
    pub snapshot: Option<OpaqueSnapshot<'a>>,
}

/// A parsed IOAM trace option.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IoamRepr<'a> {
    /// Pre-allocated or incremental.
    pub kind: TraceKind,
    /// Namespace id.
    pub namespace: u16,
    /// Flags.
    pub flags: TraceFlags,
    /// RemainingLen (free words, pre-allocated; capacity left, incremental).
    pub remaining_len: u8,
    /// Trace type (24 bits).
    pub trace_type: u32,
    /// Nodes, newest first, as on the wire.
    pub nodes: heapless::Vec<IoamNode<'a>, MAX_HOPS>,
}

impl<'a> IoamRepr<'a> {
    /// Parses a checked option.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(o: &IoamOption<&'a T>) -> Result<Self> {
        o.check_len()?;
        let b: &'a [u8] = <T as AsRef<[u8]>>::as_ref(o.buffer);
        let tt = o.trace_type();
        let mut nodes = heapless::Vec::new();
        o.walk(|start, oss_len| {
            let mut n = IoamNode::default();
            let mut at = start;
            for (mask, len) in FIELDS {
                if tt & mask == 0 {
                    continue;
                }
                match mask {
                    bits::ID_SHORT => (n.hop_limit, n.node_id) = (be::u8_at(b, at), be::u32_at(b, at) & 0xFF_FFFF),
                    bits::IF_SHORT => (n.ingress_if, n.egress_if) = (be::u16_at(b, at), be::u16_at(b, at + 2)),
                    bits::TS_SEC => n.ts_seconds = be::u32_at(b, at),
                    bits::TS_FRAC => n.ts_fraction = be::u32_at(b, at),
                    bits::TRANSIT_DELAY => n.transit_delay = be::u32_at(b, at),
                    bits::NS_SHORT => n.ns_data = be::u32_at(b, at),
                    bits::QUEUE_DEPTH => n.queue_depth = be::u32_at(b, at),
                    bits::CHECKSUM => n.checksum_complement = be::u32_at(b, at),
                    bits::ID_WIDE => {
                        (n.hop_limit_wide, n.node_id_wide) = (be::u8_at(b, at), be::u64_at(b, at) & 0xFF_FFFF_FFFF_FFFF)
                    }
                    bits::IF_WIDE => (n.ingress_if_wide, n.egress_if_wide) = (be::u32_at(b, at), be::u32_at(b, at + 4)),
                    bits::NS_WIDE => n.ns_data_wide = be::u64_at(b, at),
                    _ => n.buffer_occupancy = be::u32_at(b, at),
                }
                at += len;
            }
            if oss_len > 0 {
                let oss_at = start + node_fixed_len(tt);
                let data = b.get(oss_at + 4..oss_at + oss_len).ok_or(WireError::BadLength)?;
                n.snapshot = Some(OpaqueSnapshot {
                    schema_id: be::u32_at(b, oss_at) & 0xFF_FFFF,
                    data,
                });
            }
            nodes.push(n).map_err(|_| WireError::TooManyHops)
        })?;
        Ok(IoamRepr {
            kind: o.kind()?,
            namespace: o.namespace(),
            flags: o.flags(),
            remaining_len: o.remaining_len(),
            trace_type: tt,
            nodes,
        })
    }

    fn node_bytes(&self, n: &IoamNode<'_>) -> usize {
        node_fixed_len(self.trace_type)
            + if self.trace_type & bits::OSS != 0 {
                4 + n.snapshot.map_or(0, |s| s.data.len())
            } else {
                0
            }
    }

    /// Bytes [`Self::emit`] writes: the whole option, free space included.
    pub fn buffer_len(&self) -> usize {
        let free = match self.kind {
            TraceKind::PreAllocated => 4 * self.remaining_len as usize,
            TraceKind::Incremental => 0,
        };
        OPTION_HEADER_LEN + TRACE_HEADER_LEN + free + self.nodes.iter().map(|n| self.node_bytes(n)).sum::<usize>()
    }

    /// Writes the option (free space of a pre-allocated trace as zeros).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, o: &mut IoamOption<T>) -> Result<()> {
        // Bit 23 is reserved: "MUST be set to zero upon transmission".
        let tt = self.trace_type & !bits::RESERVED;
        let node_words = node_fixed_len(tt) / 4;
        let len = self.buffer_len();
        let oss = tt & bits::OSS != 0;
        let snapshots_ok = self.nodes.iter().all(|n| {
            !oss || n
                .snapshot
                .is_none_or(|s| s.data.len().is_multiple_of(4) && s.data.len() / 4 <= u8::MAX as usize)
        });
        if tt >> 24 != 0 || node_words == 0 || node_words > 31 || self.remaining_len > 0x7F || !snapshots_ok {
            return Err(WireError::BadLength);
        }
        if len - 2 > u8::MAX as usize {
            return Err(WireError::BadLength);
        }
        let b = o.buffer.as_mut();
        if b.len() < len {
            return Err(WireError::BufferTooSmall);
        }
        be::put_u8(b, field::OPTION_TYPE, IPV6_OPTION_TYPE);
        be::put_u8(b, field::OPTION_LEN, (len - 2) as u8);
        be::put_u8(b, field::RESERVED, 0);
        be::put_u8(
            b,
            field::IOAM_TYPE,
            match self.kind {
                TraceKind::PreAllocated => 0,
                TraceKind::Incremental => 1,
            },
        );
        be::put_u16(b, field::NAMESPACE, self.namespace);
        be::put_u16(
            b,
            field::NODE_LEN_FLAGS,
            (node_words as u16) << 11 | (self.flags.nibble() as u16) << 7 | self.remaining_len as u16,
        );
        be::put_u32(b, field::TRACE_TYPE, tt << 8);
        let mut at = OPTION_HEADER_LEN + TRACE_HEADER_LEN;
        if self.kind == TraceKind::PreAllocated {
            let free = 4 * self.remaining_len as usize;
            b[at..at + free].fill(0);
            at += free;
        }
        for n in &self.nodes {
            for (mask, flen) in FIELDS {
                if tt & mask == 0 {
                    continue;
                }
                match mask {
                    bits::ID_SHORT => be::put_u32(b, at, (n.hop_limit as u32) << 24 | (n.node_id & 0xFF_FFFF)),
                    bits::IF_SHORT => {
                        be::put_u16(b, at, n.ingress_if);
                        be::put_u16(b, at + 2, n.egress_if);
                    }
                    bits::TS_SEC => be::put_u32(b, at, n.ts_seconds),
                    bits::TS_FRAC => be::put_u32(b, at, n.ts_fraction),
                    bits::TRANSIT_DELAY => be::put_u32(b, at, n.transit_delay),
                    bits::NS_SHORT => be::put_u32(b, at, n.ns_data),
                    bits::QUEUE_DEPTH => be::put_u32(b, at, n.queue_depth),
                    bits::CHECKSUM => be::put_u32(b, at, n.checksum_complement),
                    bits::ID_WIDE => be::put_u64(
                        b,
                        at,
                        (n.hop_limit_wide as u64) << 56 | (n.node_id_wide & 0xFF_FFFF_FFFF_FFFF),
                    ),
                    bits::IF_WIDE => {
                        be::put_u32(b, at, n.ingress_if_wide);
                        be::put_u32(b, at + 4, n.egress_if_wide);
                    }
                    bits::NS_WIDE => be::put_u64(b, at, n.ns_data_wide),
                    _ => be::put_u32(b, at, n.buffer_occupancy),
                }
                at += flen;
            }
            // Undefined bits: the reserved value (RFC 9197 §4.4.1).
            for _ in 0..(tt & bits::UNDEFINED).count_ones() {
                be::put_u32(b, at, 0xFFFF_FFFF);
                at += 4;
            }
            if oss {
                let s = n.snapshot.unwrap_or(OpaqueSnapshot {
                    schema_id: 0,
                    data: &[],
                });
                be::put_u32(b, at, ((s.data.len() / 4) as u32) << 24 | (s.schema_id & 0xFF_FFFF));
                b[at + 4..at + 4 + s.data.len()].copy_from_slice(s.data);
                at += 4 + s.data.len();
            }
        }
        Ok(())
    }
}

/// Finds the IOAM option in an IPv6 hop-by-hop options header (starting at
/// its Next Header byte), skipping Pad1, PadN and other options.
pub fn find_in_hop_by_hop(hbh: &[u8]) -> Result<&[u8]> {
    if hbh.len() < 2 {
        return Err(WireError::Truncated);
    }
    let len = 8 * (hbh[1] as usize + 1);
    let hbh = hbh.get(..len).ok_or(WireError::Truncated)?;
    let mut at = 2;
    while at < len {
        match hbh[at] {
            0 => at += 1,
            t => {
                let l = 2 + *hbh.get(at + 1).ok_or(WireError::Truncated)? as usize;
                let opt = hbh.get(at..at + l).ok_or(WireError::BadLength)?;
                if t == IPV6_OPTION_TYPE {
                    return Ok(opt);
                }
                at += l;
            }
        }
    }
    Err(WireError::MissingField)
}

impl PortSpeedStack for IoamRepr<'_> {
    /// The engine's samples, first hop first (the list is reversed).
    ///
    /// The timestamp (bits 2 and 3) is converted to ns modulo 2^32 under
    /// the profile's fraction format; queue depth × unit is the queue,
    /// transit delay the sojourn time, node id and egress interface the
    /// identity, the profile the link speed. IOAM has no transmitted-bytes
    /// counter: the profile must place one in the namespace-specific data
    /// (short, or the low 32 bits of wide); without it, or without both
    /// timestamp fields, the result is `MissingField`.
    fn hop_samples_by_port(
        &self,
        profile: &UnitsProfile,
        speed: impl Fn(u64, u32) -> Option<LinkSpeed>,
    ) -> Result<Hops> {
        let tt = self.trace_type;
        let Some(widths) = profile.tx_counter.widths_32() else {
            return Err(WireError::MissingField);
        };
        if tt & bits::TS_SEC == 0 || tt & bits::TS_FRAC == 0 || tt & (bits::NS_SHORT | bits::NS_WIDE) == 0 {
            return Err(WireError::MissingField);
        }
        let mut out = Hops::new();
        for n in self.nodes.iter().rev() {
            let frac_ns = match profile.ioam_fraction {
                TimestampFraction::Nanoseconds => n.ts_fraction as u64,
                // 2^-32 s → ns, rounded down: frac · 10^9 / 2^32.
                TimestampFraction::Binary32 => (n.ts_fraction as u64 * 1_000_000_000) >> 32,
            };
            let ts = (n.ts_seconds as u64).wrapping_mul(1_000_000_000).wrapping_add(frac_ns) as u32;
            let tx = if tt & bits::NS_SHORT != 0 {
                n.ns_data
            } else {
                n.ns_data_wide as u32
            };
            let (node, egress) = if tt & bits::ID_WIDE != 0 {
                (n.node_id_wide, n.egress_if_wide)
            } else {
                (n.node_id as u64, n.egress_if as u32)
            };
            let s = HopSample {
                ts,
                tx,
                qlen_bytes: profile.queue_bytes(n.queue_depth),
                sojourn_ns: n.transit_delay & 0x7FFF_FFFF,
                bandwidth: speed(node, egress).unwrap_or(profile.link_speed),
                id: fold_identity(node, egress),
                widths,
                tx_utilization: crate::telemetry::TxUtilization::NONE,
            };
            out.push(s).map_err(|_| WireError::TooManyHops)?;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::TxCounter;

    fn node(k: u32) -> IoamNode<'static> {
        IoamNode {
            hop_limit: 64 - k as u8,
            node_id: 0x100 + k,
            ingress_if: 1,
            egress_if: 2 + k as u16,
            ts_seconds: 1000,
            ts_fraction: 500_000 + k,
            transit_delay: 700 + k,
            ns_data: 10_000 * k,
            queue_depth: 3000 + k,
            ..Default::default()
        }
    }

    fn repr(kind: TraceKind) -> IoamRepr<'static> {
        let mut nodes = heapless::Vec::new();
        for k in [2, 1, 0] {
            nodes.push(node(k)).unwrap();
        }
        IoamRepr {
            kind,
            namespace: 123,
            flags: TraceFlags {
                overflow: false,
                loopback: true,
                active: true,
            },
            remaining_len: if kind == TraceKind::PreAllocated { 7 } else { 0 },
            trace_type: bits::ID_SHORT
                | bits::IF_SHORT
                | bits::TS_SEC
                | bits::TS_FRAC
                | bits::TRANSIT_DELAY
                | bits::NS_SHORT
                | bits::QUEUE_DEPTH,
            nodes,
        }
    }

    #[test]
    fn round_trip_both_kinds() {
        for kind in [TraceKind::PreAllocated, TraceKind::Incremental] {
            let r = repr(kind);
            let mut buf = [0u8; 256];
            r.emit(&mut IoamOption::new_unchecked(&mut buf[..])).unwrap();
            let o = IoamOption::new_checked(&buf[..r.buffer_len()]).unwrap();
            assert_eq!(o.node_len(), 7);
            assert_eq!(IoamRepr::parse(&o).unwrap(), r);
        }
    }

    #[test]
    fn wide_fields_undefined_bits_and_snapshots() {
        let data = [1u8, 2, 3, 4, 5, 6, 7, 8];
        let mut r = repr(TraceKind::Incremental);
        r.trace_type =
            bits::ID_WIDE | bits::IF_WIDE | bits::NS_WIDE | bits::BUFFER | bits::CHECKSUM | (1 << 9) | bits::OSS;
        for (i, n) in r.nodes.iter_mut().enumerate() {
            *n = IoamNode {
                hop_limit_wide: 9,
                node_id_wide: 0x00AB_CDEF_0123_4567,
                ingress_if_wide: 7,
                egress_if_wide: 0xFFFF_0001,
                ns_data_wide: u64::MAX - i as u64,
                buffer_occupancy: 42,
                checksum_complement: 1,
                snapshot: Some(OpaqueSnapshot {
                    schema_id: 0xABCDEF,
                    data: &data[..4 * (i % 3)],
                }),
                ..Default::default()
            };
        }
        let mut buf = [0u8; 256];
        r.emit(&mut IoamOption::new_unchecked(&mut buf[..])).unwrap();
        let o = IoamOption::new_checked(&buf[..r.buffer_len()]).unwrap();
        let p = IoamRepr::parse(&o).unwrap();
        assert_eq!(p, r);
        // The undefined bit's word carries the reserved value.
        assert_eq!(&buf[12 + 32..12 + 36], &[0xFF; 4]);
    }

    /// RFC 9197 §4.4.1: bit 23 of the trace type and the byte after it are
    /// "set to zero upon transmission and ignored upon receipt"; so are the
    /// option's reserved byte (RFC 9486 §3) and the flag bit RFC 9322 left
    /// reserved.
    #[test]
    fn reserved_fields_are_ignored_and_written_as_zero() {
        let r = repr(TraceKind::PreAllocated);
        let mut buf = [0u8; 256];
        r.emit(&mut IoamOption::new_unchecked(&mut buf[..])).unwrap();
        let n = r.buffer_len();
        let mut v = buf;
        v[2] = 0x5A; // option reserved byte
        v[7] |= 0x80; // fourth flag bit
        v[10] |= 0x01; // trace-type bit 23 (the low bit of byte 10)
        v[11] = 0xA5; // reserved byte after the trace type
        let got = IoamRepr::parse(&IoamOption::new_checked(&v[..n]).unwrap()).unwrap();
        assert_eq!(got, r);
        let mut out = [0u8; 256];
        got.emit(&mut IoamOption::new_unchecked(&mut out[..])).unwrap();
        assert_eq!(out[..n], buf[..n]);
    }

    #[test]
    fn malformed_inputs_are_errors() {
        let r = repr(TraceKind::PreAllocated);
        let mut buf = [0u8; 256];
        r.emit(&mut IoamOption::new_unchecked(&mut buf[..])).unwrap();
        let n = r.buffer_len();
        let check = |b: &[u8]| IoamOption::new_checked(b).map(|_| ());
        assert_eq!(check(&buf[..n - 1]), Err(WireError::Truncated));
        let mut v = buf;
        v[0] = 0x1E;
        assert_eq!(check(&v[..n]), Err(WireError::UnknownType));
        let mut v = buf;
        v[3] = 2; // proof of transit
        assert_eq!(check(&v[..n]), Err(WireError::UnknownType));
        let mut v = buf;
        v[6] = (v[6] & 0x07) | 6 << 3; // NodeLen 6 vs 7 words
        assert_eq!(check(&v[..n]), Err(WireError::BadLength));
        let mut v = buf;
        v[7] = (v[7] & 0x80) | 0x7F; // RemainingLen past the end
        assert_eq!(check(&v[..n]), Err(WireError::BadLength));
        let mut v = buf;
        v[1] = 9; // shorter than the option and trace headers
        assert_eq!(check(&v[..n]), Err(WireError::BadLength));
        let mut v = buf;
        v[1] -= 4; // data not a whole number of nodes
        assert_eq!(check(&v[..n - 4]), Err(WireError::BadLength));
    }

    #[test]
    fn nine_nodes_are_too_many() {
        let mut r = repr(TraceKind::Incremental);
        r.trace_type = bits::ID_SHORT;
        r.nodes.clear();
        for k in 0..8 {
            r.nodes.push(node(k)).unwrap();
        }
        let mut buf = [0u8; 64];
        r.emit(&mut IoamOption::new_unchecked(&mut buf[..])).unwrap();
        // Append a ninth 4-byte node by extending the length.
        buf[1] += 4;
        assert_eq!(
            IoamOption::new_checked(&buf[..r.buffer_len() + 4]).map(|_| ()),
            Err(WireError::TooManyHops)
        );
    }

    #[test]
    fn samples_first_hop_first() {
        let s = repr(TraceKind::PreAllocated)
            .hop_samples(&UnitsProfile::default_100g())
            .unwrap();
        assert_eq!(s.len(), 3);
        // Newest first on the wire: node(0) is the first hop.
        assert_eq!(s[0].tx, 0);
        assert_eq!(s[2].tx, 20_000);
        assert_eq!(s[0].ts, (1000u64 * 1_000_000_000 + 500_000) as u32);
        assert_eq!(s[0].sojourn_ns, 700);
        let mut p = UnitsProfile::default_100g();
        p.tx_counter = TxCounter::Absent;
        assert_eq!(
            repr(TraceKind::PreAllocated).hop_samples(&p).unwrap_err(),
            WireError::MissingField
        );
    }

    #[test]
    fn finds_the_option_among_padding() {
        let r = repr(TraceKind::Incremental);
        let mut opt = [0u8; 128];
        r.emit(&mut IoamOption::new_unchecked(&mut opt[..])).unwrap();
        let n = r.buffer_len();
        // next header, hdr ext len, Pad1, PadN(len 1), the option, padding.
        let mut hbh = [0u8; 128];
        hbh[0] = 59;
        hbh[2] = 0;
        hbh[3] = 1;
        hbh[4] = 1;
        hbh[6..6 + n].copy_from_slice(&opt[..n]);
        let total = (6 + n).div_ceil(8) * 8;
        hbh[1] = (total / 8 - 1) as u8;
        if total - (6 + n) >= 2 {
            hbh[6 + n] = 1;
            hbh[6 + n + 1] = (total - (6 + n) - 2) as u8;
        }
        assert_eq!(find_in_hop_by_hop(&hbh[..total]).unwrap(), &opt[..n]);
    }
}
