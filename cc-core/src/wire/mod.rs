//! Telemetry wire formats and feedback integrity. (The host-firmware event
//! codec is [`crate::codec`]: a protocol between two ends of this project,
//! not a network format.)
//!
//! Each format is a zero-copy view over a byte buffer in the smoltcp style:
//! `new_unchecked` wraps, `check_len` validates every length and count
//! before any field is read, `new_checked` is the two together, and a
//! `Repr` parses from a checked view and emits into one. Untrusted bytes
//! only ever go through `new_checked`. Each `Repr` converts into the
//! engine's [`HopSample`]s, first hop first.
//!
//! | module      | format                                                        |
//! |-------------|---------------------------------------------------------------|
//! | [`compact`] | the compact HPCC hop stack: 8 bytes per hop                   |
//! | [`int_md`]  | P4.org INT-MD v2.0 over TCP/UDP: shim, metadata header, stack  |
//! | [`ioam`]    | IOAM trace option (RFC 9197, RFC 9322 flags) in an IPv6 hop-by-hop option (RFC 9486) |
//! | [`ifa`]     | IFA 2.0 (draft-kumar-ippm-ifa): header, metadata header, stack |
//! | [`pint`]    | HPCC-PINT's one- or two-byte utilization code (SIGCOMM 2020)  |
//! | [`auth`]    | keyed SipHash-2-4 tag on feedback (HPCC++ §9.1)                |
//!
//! What a format leaves to the device (queue units, timestamp formats, link
//! speed, where a transmitted-bytes counter lives) comes from a
//! [`UnitsProfile`].

pub mod auth;
pub mod compact;
pub mod ifa;
pub mod int_md;
pub mod ioam;
pub mod pint;

use core::fmt;
use core::num::NonZeroU16;

use crate::telemetry::{CounterWidths, HopSample};
use crate::units::{Fraction, LinkSpeed};

/// Most hops a parsed stack may hold (DESIGN §4: up to 8 hops).
pub const MAX_HOPS: usize = 8;

/// Parsed hop samples, first hop first.
pub type Hops = heapless::Vec<HopSample, MAX_HOPS>;

/// Why bytes were refused. Nothing is read past the first problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum WireError {
    /// The buffer ends before what the headers say is there.
    Truncated,
    /// A length field disagrees with the others or with the buffer.
    BadLength,
    /// More hops than [`MAX_HOPS`].
    TooManyHops,
    /// A version this code does not speak.
    UnknownVersion,
    /// A type, code or namespace this code does not know.
    UnknownType,
    /// A defined option this code does not implement (e.g. IFA tail
    /// stamping, where the metadata sits at the end of the packet).
    Unsupported,
    /// A field the engine needs is not in this packet (e.g. INT-MD without
    /// an egress timestamp or tx utilization).
    MissingField,
    /// An output buffer too small to emit into.
    BufferTooSmall,
    /// The integrity tag does not match.
    BadTag,
    /// A notification whose sequence number is not after the last one
    /// accepted for its flow: a replay (or a reordered, obsolete one).
    Replayed,
    /// The frame's checksum does not match.
    BadChecksum,
    /// The bytes do not start with the codec's frame magic.
    BadMagic,
    /// A field's value is outside its defined range (e.g. a counter width
    /// of 0 or above 32 bits).
    OutOfRange,
}

/// Lets `?` turn it into `Box<dyn Error>` and friends on hosts.
impl core::error::Error for WireError {}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WireError::Truncated => "truncated",
            WireError::BadLength => "inconsistent length",
            WireError::TooManyHops => "too many hops",
            WireError::UnknownVersion => "unknown version",
            WireError::UnknownType => "unknown type",
            WireError::Unsupported => "a defined option this code does not implement",
            WireError::MissingField => "a field the engine needs is absent",
            WireError::BufferTooSmall => "output buffer too small",
            WireError::BadTag => "integrity tag mismatch",
            WireError::Replayed => "replayed notification",
            WireError::BadChecksum => "checksum mismatch",
            WireError::BadMagic => "not a frame (bad magic)",
            WireError::OutOfRange => "field value out of range",
        })
    }
}

/// Result of wire operations.
pub type Result<T> = core::result::Result<T, WireError>;

/// How an IOAM timestamp's fraction field counts (RFC 9197 §5.4.2.3 leaves
/// the format to the namespace: PTP, NTP or POSIX).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum TimestampFraction {
    /// Nanoseconds (PTP, POSIX).
    Nanoseconds,
    /// Units of 2^-32 s (NTP).
    Binary32,
}

/// Where a transmitted-bytes counter lives in formats that define none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum TxCounter {
    /// Nowhere: the format cannot feed HPCC++'s rate term.
    Absent,
    /// IOAM namespace-specific data, short (32 bits) or the low 32 bits of
    /// wide; IFA's trailing reserved word. Counts units of `unit_bytes`.
    Present {
        /// Bytes per counter unit.
        unit_bytes: u16,
    },
}

impl TxCounter {
    /// The counter widths of a format whose counters are 32 bits wide (IFA,
    /// IOAM), counting this counter's units (a unit of 0 is taken as 1
    /// byte); `None` when there is no counter.
    pub fn widths_32(self) -> Option<CounterWidths> {
        match self {
            TxCounter::Absent => None,
            TxCounter::Present { unit_bytes } => {
                Some(CounterWidths::FULL.with_unit(NonZeroU16::new(unit_bytes).unwrap_or(NonZeroU16::MIN)))
            }
        }
    }
}

/// A parsed telemetry stack whose hops carry no link speed (INT-MD, IOAM):
/// the engine's samples, each hop's speed from the device's configuration
/// where the fabric's links differ, else the profile's. (The compact stack
/// and IFA carry a speed code and have their own `hop_samples`.)
pub trait PortSpeedStack {
    /// The engine's samples, first hop first: `speed(node id, egress
    /// port)` gives a hop's egress link speed, as the device's
    /// configuration knows it; `None` falls back to the profile's.
    fn hop_samples_by_port(
        &self,
        profile: &UnitsProfile,
        speed: impl Fn(u64, u32) -> Option<LinkSpeed>,
    ) -> Result<Hops>;

    /// [`Self::hop_samples_by_port`] with every link at the profile's speed.
    fn hop_samples(&self, profile: &UnitsProfile) -> Result<Hops> {
        self.hop_samples_by_port(profile, |_, _| None)
    }
}

/// Device units that the formats leave open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct UnitsProfile {
    /// Link capacity when the format carries none (INT-MD, IOAM).
    pub link_speed: LinkSpeed,
    /// Bytes per unit of queue occupancy or depth (1 for bytes, the cell
    /// size for cells).
    pub queue_unit_bytes: u32,
    /// INT-MD egress tx utilization: the raw value that means 100 %.
    pub tx_util_full_scale: u32,
    /// IOAM timestamp fraction format.
    pub ioam_fraction: TimestampFraction,
    /// The transmitted-bytes counter, where the format has none of its own.
    pub tx_counter: TxCounter,
}

impl UnitsProfile {
    /// 100 Gb/s links, queues in bytes, utilization in 1/10000 (0.01 %),
    /// IOAM in PTP nanoseconds, tx counter in namespace data counting bytes.
    pub const fn default_100g() -> Self {
        UnitsProfile {
            link_speed: LinkSpeed::from_gbps(100),
            queue_unit_bytes: 1,
            tx_util_full_scale: 10_000,
            ioam_fraction: TimestampFraction::Nanoseconds,
            tx_counter: TxCounter::Present { unit_bytes: 1 },
        }
    }

    /// Queue occupancy in bytes, saturating at `u32::MAX`.
    pub(crate) fn queue_bytes(&self, units: u32) -> u32 {
        units.saturating_mul(self.queue_unit_bytes)
    }

    /// Raw INT utilization as a fraction of capacity, capped at 1:
    /// `raw · 2^24 / full_scale`, rounded down; `None` if full scale is 0.
    pub(crate) fn utilization(&self, raw: u32) -> Option<Fraction> {
        if self.tx_util_full_scale == 0 {
            return None;
        }
        let q = ((raw as u64) << Fraction::FRAC_BITS) / self.tx_util_full_scale as u64;
        Fraction::from_bits(q.min(1 << Fraction::FRAC_BITS) as u32)
    }
}

impl Default for UnitsProfile {
    fn default() -> Self {
        Self::default_100g()
    }
}

/// Folds a device identity and an egress port into the 32-bit hop identity
/// the engine compares for path changes.
pub(crate) const fn fold_identity(device: u64, egress_port: u32) -> u32 {
    let d = (device ^ (device >> 32)) as u32;
    d.wrapping_mul(0x9E37_79B1) ^ egress_port.rotate_left(16) ^ (egress_port >> 16)
}

/// Big-endian reads and writes at fixed offsets; callers have checked the
/// length, and out-of-range offsets read as 0 / write nothing rather than
/// panic.
pub(crate) mod be {
    pub fn u8_at(b: &[u8], at: usize) -> u8 {
        b.get(at).copied().unwrap_or(0)
    }
    pub fn u16_at(b: &[u8], at: usize) -> u16 {
        match b.get(at..at + 2) {
            Some(s) => u16::from_be_bytes([s[0], s[1]]),
            None => 0,
        }
    }
    pub fn u32_at(b: &[u8], at: usize) -> u32 {
        match b.get(at..at + 4) {
            Some(s) => u32::from_be_bytes([s[0], s[1], s[2], s[3]]),
            None => 0,
        }
    }
    pub fn u64_at(b: &[u8], at: usize) -> u64 {
        (u32_at(b, at) as u64) << 32 | u32_at(b, at + 4) as u64
    }
    pub fn put_u8(b: &mut [u8], at: usize, v: u8) {
        if let Some(x) = b.get_mut(at) {
            *x = v;
        }
    }
    pub fn put_u16(b: &mut [u8], at: usize, v: u16) {
        if let Some(s) = b.get_mut(at..at + 2) {
            s.copy_from_slice(&v.to_be_bytes());
        }
    }
    pub fn put_u32(b: &mut [u8], at: usize, v: u32) {
        if let Some(s) = b.get_mut(at..at + 4) {
            s.copy_from_slice(&v.to_be_bytes());
        }
    }
    pub fn put_u64(b: &mut [u8], at: usize, v: u64) {
        put_u32(b, at, (v >> 32) as u32);
        put_u32(b, at + 4, v as u32);
    }
}
