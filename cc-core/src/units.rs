//! Units as types.
//!
//! Every quantity the engine handles has a type that carries its unit and
//! scale. The integer behind each is stated here once, with its range; the
//! algorithm files rely on these ranges in their overflow notes.
//!
//! | type            | unit              | representation            | range used by the engine        |
//! |-----------------|-------------------|---------------------------|---------------------------------|
//! | [`Instant`]     | ns since any epoch| `u64`                     | 0 ..= 2^64−1 (584 years)        |
//! | [`BaseRtt`]     | ns                | `u32`                     | 100 ns ..= 2^20 ns (1.048 ms)   |
//! | [`Window`]      | bytes             | `U28F4` (u32, 1/16 byte)  | 0 ..= 2^28 − 1/16 bytes         |
//! | [`Rate`]        | bit/s             | `u64`                     | 0 ..= 2^63                      |
//! | [`RateQ8`]      | Mbit/s            | `u32`, 2^-8 steps         | 0 ..= 2^24 − 2^-8 Mb/s          |
//! | [`LinkSpeed`]   | Mbit/s            | `u32`                     | 100 Mb/s ..= 6.4 Tb/s accepted  |
//! | [`Utilization`] | ratio             | `U40F24` (u64, 2^-24)     | 0 ..= 65536                     |
//! | [`Fraction`]    | ratio ≤ 1         | `U8F24` (u32, 2^-24)      | 0 ..= 1                         |
//! | [`Packets`]     | MTU-sized packets | `U16F16` (u32, 2^-16)     | 0 ..= 65535                     |
//! | [`Seq`]         | byte sequence     | `u32`, serial arithmetic  | any, compared within 2^31       |
//!
//! No arithmetic here depends on `usize`, so x86_64, riscv32 and riscv64 give
//! bit-identical results.

use core::fmt;
use core::num::NonZeroU64;
use fixed::types::{U16F16, U28F4, U40F24, U8F24};

/// A rate in Mb/s with 8 fractional bits (3.90625 kb/s steps, up to 16.7
/// Tb/s in a `u32`): the rate-based algorithms' (DCQCN, TIMELY) sending
/// rate.
pub type RateQ8 = u32;

/// A point in time: nanoseconds since an epoch chosen by the caller.
///
/// The engine never reads a clock; every event carries `now`. The epoch only
/// has to be the same for all events of one engine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Instant(u64);

impl Instant {
    /// The epoch.
    pub const ZERO: Instant = Instant(0);

    /// `ns` nanoseconds after the epoch.
    pub const fn from_nanos(ns: u64) -> Self {
        Instant(ns)
    }

    /// Nanoseconds since the epoch.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// `self + ns`, saturating at the end of time instead of wrapping.
    pub const fn saturating_add_nanos(self, ns: u64) -> Self {
        Instant(self.0.saturating_add(ns))
    }

    /// Nanoseconds from `earlier` to `self`, 0 if `earlier` is later.
    pub const fn saturating_nanos_since(self, earlier: Instant) -> u64 {
        self.0.saturating_sub(earlier.0)
    }
}

/// Base round-trip time T of a flow's path, in nanoseconds.
///
/// HPCC++ uses T as the control interval and the EWMA horizon (draft
/// 2022-10 §4.1, Figure 3: "Known baseline RTT", default 5 µs); LDCP uses it
/// as the RTT in RTT/cw and rate = cw/RTT. The accepted range,
/// [`BaseRtt::MIN_NS`] ..= [`BaseRtt::MAX_NS`], covers DESIGN §4's
/// 1 µs – 1 ms and bounds every product the engine forms with T.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct BaseRtt(u32);

impl BaseRtt {
    /// Smallest accepted T: 100 ns.
    pub const MIN_NS: u32 = 100;
    /// Largest accepted T: 2^20 ns ≈ 1.048 ms (keeps `U · T` below 2^60).
    pub const MAX_NS: u32 = 1 << 20;

    /// The shortest T, `MIN_NS`.
    pub const SHORTEST: BaseRtt = BaseRtt(Self::MIN_NS);

    /// T in nanoseconds, or `None` outside `MIN_NS ..= MAX_NS`.
    pub const fn from_nanos(ns: u32) -> Option<Self> {
        if ns >= Self::MIN_NS && ns <= Self::MAX_NS {
            Some(BaseRtt(ns))
        } else {
            None
        }
    }

    /// T in nanoseconds (always within `MIN_NS ..= MAX_NS`).
    pub const fn as_nanos(self) -> u32 {
        self.0
    }

    /// T in nanoseconds as a 32-bit divisor: dividing by a `NonZeroU32` has
    /// no divide-by-zero branch, which the firmware's no-panic check relies on.
    pub const fn as_divisor32(self) -> core::num::NonZeroU32 {
        match core::num::NonZeroU32::new(self.0) {
            Some(t) => t,
            // Unreachable: from_nanos never builds T below MIN_NS.
            None => core::num::NonZeroU32::MIN,
        }
    }

    /// T as a 64-bit divisor.
    pub const fn as_divisor(self) -> NonZeroU64 {
        match NonZeroU64::new(self.0 as u64) {
            Some(t) => t,
            // Unreachable: from_nanos never builds T below MIN_NS.
            None => NonZeroU64::MIN,
        }
    }
}

/// A congestion window in bytes, with 4 fractional bits (1/16 byte).
///
/// Fractional bytes keep small additive steps (W_ai of a few bytes, LDCP's
/// alpha/cw) exact to 1/16 byte, and let a window be smaller than one MTU.
/// Range 0 ..= 2^28 − 1/16 bytes; windows the engine produces are clamped to
/// a flow's [W_min, W_max] with W_max ≤ [`Window::MAX_CONFIG_BYTES`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Window(U28F4);

impl Window {
    /// Fractional bits of the raw representation.
    pub const FRAC_BITS: u32 = 4;
    /// The empty window.
    pub const ZERO: Window = Window(U28F4::ZERO);
    /// The largest window a flow may be configured with: 64 MiB (DESIGN §4).
    pub const MAX_CONFIG_BYTES: u32 = 64 << 20;

    /// A window of whole bytes, saturating at the representable maximum.
    pub const fn from_bytes(bytes: u32) -> Self {
        let raw = if bytes > (u32::MAX >> Self::FRAC_BITS) {
            u32::MAX
        } else {
            bytes << Self::FRAC_BITS
        };
        Window(U28F4::from_bits(raw))
    }

    /// A window from its raw value in 1/16 bytes.
    pub const fn from_bits(raw: u32) -> Self {
        Window(U28F4::from_bits(raw))
    }

    /// A raw value computed in `u64`, saturated into the representation.
    pub(crate) const fn from_bits_saturating(raw: u64) -> Self {
        if raw > u32::MAX as u64 {
            Window(U28F4::MAX)
        } else {
            Window(U28F4::from_bits(raw as u32))
        }
    }

    /// The raw value in 1/16 bytes.
    pub const fn to_bits(self) -> u32 {
        self.0.to_bits()
    }

    /// Whole bytes, rounded down.
    pub const fn bytes_floor(self) -> u32 {
        self.0.to_bits() >> Self::FRAC_BITS
    }

    /// The value as a `fixed` number.
    pub const fn to_fixed(self) -> U28F4 {
        self.0
    }

    /// `self` clamped into `[lo, hi]`. If `lo > hi`, `hi` wins.
    pub fn clamp_to(self, lo: Window, hi: Window) -> Window {
        if self > hi {
            hi
        } else if self < lo {
            lo.min(hi)
        } else {
            self
        }
    }
}

impl fmt::Display for Window {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} B", self.0)
    }
}

/// A rate in bits per second.
///
/// 1.6 Tb/s is 1.6·10^12 < 2^41, so `u64` leaves 2^22 of headroom for the
/// products that convert windows to rates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Rate(u64);

impl Rate {
    /// Zero bits per second.
    pub const ZERO: Rate = Rate(0);

    /// A rate of `bps` bits per second.
    pub const fn from_bps(bps: u64) -> Self {
        Rate(bps)
    }

    /// Bits per second.
    pub const fn as_bps(self) -> u64 {
        self.0
    }
}

/// In the largest of Gb/s, Mb/s, kb/s and bit/s that is at most the
/// rate, with two decimals, rounded down: `92.74 Gb/s`.
impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (unit, name) = match self.0 {
            r if r >= 1_000_000_000 => (1_000_000_000, "Gb/s"),
            r if r >= 1_000_000 => (1_000_000, "Mb/s"),
            r if r >= 1_000 => (1_000, "kb/s"),
            _ => return write!(f, "{} bit/s", self.0),
        };
        // unit ≥ 1000: the hundredths are (remainder · 100) / unit < 100.
        let (whole, rest) = (self.0 / unit, self.0 % unit);
        write!(f, "{}.{:02} {}", whole, rest * 100 / unit, name)
    }
}

/// A link's capacity B in megabits per second, as telemetry reports it.
///
/// Link speeds are whole multiples of 1 Mb/s on every format the engine
/// reads. A value outside [`LinkSpeed::MIN_MBPS`] ..= [`LinkSpeed::MAX_MBPS`]
/// (zero included) is "absurd" in the sense of DESIGN §9: the hop is skipped
/// for that sample.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(transparent)]
pub struct LinkSpeed(u32);

impl LinkSpeed {
    /// Slowest link the engine accepts: 100 Mb/s.
    pub const MIN_MBPS: u32 = 100;
    /// Fastest link the engine accepts: 6.4 Tb/s (4× DESIGN's 1.6 Tb/s).
    pub const MAX_MBPS: u32 = 6_400_000;

    /// A link of `mbps` megabits per second (not validated here).
    pub const fn from_mbps(mbps: u32) -> Self {
        LinkSpeed(mbps)
    }

    /// A link of `gbps` gigabits per second, saturating.
    pub const fn from_gbps(gbps: u32) -> Self {
        LinkSpeed(gbps.saturating_mul(1000))
    }

    /// Megabits per second.
    pub const fn as_mbps(self) -> u32 {
        self.0
    }

    /// Whether the engine will use this value (not zero, not absurd).
    pub const fn is_plausible(self) -> bool {
        self.0 >= Self::MIN_MBPS && self.0 <= Self::MAX_MBPS
    }

    /// The same speed as a [`Rate`].
    pub const fn to_rate(self) -> Rate {
        Rate(self.0 as u64 * 1_000_000)
    }

    /// Bandwidth-delay product B·T in bytes, rounded down:
    /// `mbps · 10^6 / 8 · T_ns / 10^9 = mbps · T_ns / 8000`.
    /// At most 6.4·10^6 · 2^20 / 8000 < 2^30.
    pub const fn bdp_bytes(self, t: BaseRtt) -> u64 {
        self.0 as u64 * t.as_nanos() as u64 / 8000
    }
}

/// A normalized load, HPCC++'s U and u (draft 2022-10 §4.2, Figure 4).
///
/// `U40F24` in a `u64`: 24 fractional bits keep W = Wc/(U/eta) within 0.1 %
/// down to U ≈ 10^-4, and 40 integer bits cover a queue of 65536 BDPs (the
/// engine saturates u' at [`Utilization::MAX`]: a bigger standing queue
/// already drives W to W_min). U = 1 means the link is exactly full.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Utilization(U40F24);

impl Utilization {
    /// Fractional bits of the raw representation.
    pub const FRAC_BITS: u32 = 24;
    /// 1.0: the link is exactly at capacity with no queue.
    pub const ONE: Utilization = Utilization(U40F24::ONE);
    /// Saturation point of u' and U: 65536.
    pub const MAX: Utilization = Utilization(U40F24::from_bits(1 << 40));
    /// Zero load.
    pub const ZERO: Utilization = Utilization(U40F24::ZERO);

    /// From the raw value in units of 2^-24, saturating at [`Self::MAX`].
    pub const fn from_bits(raw: u64) -> Self {
        if raw > Self::MAX.0.to_bits() {
            Self::MAX
        } else {
            Utilization(U40F24::from_bits(raw))
        }
    }

    /// Raw value in units of 2^-24 (at most 2^40).
    pub const fn to_bits(self) -> u64 {
        self.0.to_bits()
    }

    /// The value as a `fixed` number.
    pub const fn to_fixed(self) -> U40F24 {
        self.0
    }
}

impl fmt::Display for Utilization {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A ratio in [0, 1] with 24 fractional bits: eta, LDCP's alpha, beta, gamma.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Fraction(U8F24);

impl Fraction {
    /// Fractional bits of the raw representation.
    pub const FRAC_BITS: u32 = 24;
    /// Exactly 1.
    pub const ONE: Fraction = Fraction(U8F24::ONE);
    /// Exactly 0.
    pub const ZERO: Fraction = Fraction(U8F24::ZERO);

    /// `num / den`, rounded to nearest; `None` unless `0 <= num <= den`
    /// and `den > 0`.
    pub const fn ratio(num: u32, den: u32) -> Option<Self> {
        if den == 0 || num > den {
            return None;
        }
        let raw = ((num as u64) << Self::FRAC_BITS) + (den as u64 / 2);
        Some(Fraction(U8F24::from_bits((raw / den as u64) as u32)))
    }

    /// `num / den` for the algorithms' presets, rounded to nearest; 1 where
    /// [`Fraction::ratio`] has none (a preset never asks that: evaluated
    /// at compile time, and no panic path if it is not).
    pub(crate) const fn preset(num: u32, den: u32) -> Self {
        match Self::ratio(num, den) {
            Some(f) => f,
            None => Self::ONE,
        }
    }

    /// `1 / 2^k` for `k <= 24`; `None` otherwise.
    pub const fn inverse_pow2(k: u32) -> Option<Self> {
        if k > Self::FRAC_BITS {
            None
        } else {
            Some(Fraction(U8F24::from_bits(1 << (Self::FRAC_BITS - k))))
        }
    }

    /// From the raw value in units of 2^-24; `None` above 1.
    pub const fn from_bits(raw: u32) -> Option<Self> {
        if raw > (1 << Self::FRAC_BITS) {
            None
        } else {
            Some(Fraction(U8F24::from_bits(raw)))
        }
    }

    /// From a raw value its maker keeps at most 2^24 (a larger one is
    /// out of the type's range: the arithmetic that takes it may wrap).
    pub(crate) const fn from_bits_trusted(raw: u32) -> Self {
        Fraction(U8F24::from_bits(raw))
    }

    /// Raw value in units of 2^-24 (at most 2^24).
    pub const fn to_bits(self) -> u32 {
        self.0.to_bits()
    }

    /// The value as a `fixed` number.
    pub const fn to_fixed(self) -> U8F24 {
        self.0
    }
}

/// A window counted in MTU-sized packets, 16 fractional bits: LDCP's cw.
///
/// Range 0 ..= 65535 + 65535/65536 packets; LDCP keeps cw in
/// [gamma, [`Packets::MAX`]]. 2^-16 packet resolution is 0.016 byte at a
/// 1 KB MTU, so alpha/cw steps stay exact far beyond useful windows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Packets(U16F16);

impl Packets {
    /// Fractional bits of the raw representation.
    pub const FRAC_BITS: u32 = 16;
    /// Exactly one packet: the border between ACK-clocked and timer-clocked LDCP.
    pub const ONE: Packets = Packets(U16F16::ONE);
    /// The largest representable window.
    pub const MAX: Packets = Packets(U16F16::MAX);

    /// From the raw value in units of 2^-16 packet.
    pub const fn from_bits(raw: u32) -> Self {
        Packets(U16F16::from_bits(raw))
    }

    /// From a raw value computed in `u64`, saturating at [`Self::MAX`].
    pub(crate) const fn from_bits_saturating(raw: u64) -> Self {
        if raw > u32::MAX as u64 {
            Self::MAX
        } else {
            Packets(U16F16::from_bits(raw as u32))
        }
    }

    /// `n` whole packets, saturating.
    pub const fn from_int(n: u32) -> Self {
        Self::from_bits_saturating((n as u64) << Self::FRAC_BITS)
    }

    /// Raw value in units of 2^-16 packet.
    pub const fn to_bits(self) -> u32 {
        self.0.to_bits()
    }

    /// The value as a `fixed` number.
    pub const fn to_fixed(self) -> U16F16 {
        self.0
    }

    /// The window in bytes for packets of `mtu` bytes: cw · MTU, exact
    /// (2^32 · 2^16 raw product fits u64), rounded down to 1/16 byte.
    pub const fn to_window(self, mtu: u32) -> Window {
        let raw = (self.0.to_bits() as u64 * mtu as u64) >> (Self::FRAC_BITS - Window::FRAC_BITS);
        Window::from_bits_saturating(raw)
    }
}

/// The packet size LDCP counts its window in, 64 ..= 65 535 bytes, with
/// its reciprocal, made once with the configuration, so that an ACK turns
/// bytes into packets (PAWA's n, draft-dai §2.2 eq. (2)) by a product:
///
/// ```text
/// per_byte = ⌈2^48 / MTU⌉                      ≤ 2^42 (MTU ≥ 64)
/// n        = bytes · 2^16 / MTU = (bytes · per_byte) >> 32, rounded down
/// ```
/// Exact for bytes < 2^16: per_byte exceeds 2^48/MTU by e < 1, which adds
/// bytes·e/2^32 < 2^-16 to a quotient whose fractional part is a multiple
/// of 1/MTU and at most 1 − 1/MTU, with 1/MTU > 2^-16: the floor cannot
/// move. Larger byte counts divide.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Mtu {
    bytes: u32,
    per_byte: u64,
}

impl Mtu {
    /// Smallest accepted MTU, bytes.
    pub const MIN: u32 = 64;
    /// Largest accepted MTU, bytes.
    pub const MAX: u32 = 65_535;

    /// An MTU of `bytes`; `None` outside [`Self::MIN`] ..= [`Self::MAX`].
    pub const fn new(bytes: u32) -> Option<Self> {
        if bytes < Self::MIN || bytes > Self::MAX {
            return None;
        }
        // bytes ≥ 64: `checked_div` has no divide-by-zero branch (the
        // firmware's no-panic check) and cannot fail.
        match ((1u64 << 48) + bytes as u64 - 1).checked_div(bytes as u64) {
            Some(per_byte) => Some(Mtu { bytes, per_byte }),
            None => None,
        }
    }

    /// The MTU in bytes.
    pub const fn bytes(self) -> u32 {
        self.bytes
    }

    /// `bytes / MTU` in 2^-16 packets, rounded down, saturating at
    /// 2^32 − 1 (65 535 packets): by the reciprocal below 64 KiB, dividing
    /// above.
    #[inline(always)]
    pub fn packets_raw(self, bytes: u32) -> u32 {
        if bytes >> Packets::FRAC_BITS == 0 {
            // bytes < 2^16, per_byte ≤ 2^42: the product is below 2^58.
            return ((bytes as u64 * self.per_byte) >> 32) as u32;
        }
        self.packets_raw_wide(bytes)
    }

    #[inline(never)]
    fn packets_raw_wide(self, bytes: u32) -> u32 {
        let Some(d) = core::num::NonZeroU64::new(self.bytes as u64) else {
            return u32::MAX;
        };
        crate::fixmath::div_u64((bytes as u64) << Packets::FRAC_BITS, d).min(u32::MAX as u64) as u32
    }
}

impl fmt::Display for Mtu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} B", self.bytes)
    }
}

impl fmt::Display for Packets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} pkt", self.0)
    }
}

/// A flow's identity in the flow table (a QP number, a hashed 5-tuple, …):
/// not a quantity, but kept with them so that the wire formats, which tag
/// a flow's notifications, need nothing of the event API above them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct FlowId(pub u32);

/// A byte sequence number (TCP sequence, RoCE LSN), compared with serial
/// arithmetic (RFC 1982) so it may wrap: `a` is after `b` when
/// `a − b mod 2^32` is in (0, 2^31).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Seq(pub u32);

impl Seq {
    /// Whether `self` comes strictly after `other`.
    pub const fn after(self, other: Seq) -> bool {
        // d in (0, 2^31) is d > 0 read as a signed word: a subtract and
        // one compare (written as the range test, rv32imac took six).
        (self.0.wrapping_sub(other.0) as i32) > 0
    }

    /// Whether `self` is `other` or comes after it (`a − b mod 2^32` in
    /// [0, 2^31)).
    pub const fn at_or_after(self, other: Seq) -> bool {
        (self.0.wrapping_sub(other.0) as i32) >= 0
    }

    /// Bytes from `earlier` to `self` if `self` is not before it, else 0.
    pub const fn bytes_since(self, earlier: Seq) -> u32 {
        if self.after(earlier) {
            self.0.wrapping_sub(earlier.0)
        } else {
            0
        }
    }

    /// `self + n` modulo 2^32.
    pub const fn add(self, n: u32) -> Seq {
        Seq(self.0.wrapping_add(n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `bytes · 2^16 / MTU`, rounded down and saturated, by its definition.
    fn packets_by_definition(bytes: u32, mtu: u32) -> u32 {
        (((bytes as u64) << 16) / mtu as u64).min(u32::MAX as u64) as u32
    }

    #[test]
    fn rates_print_in_the_largest_unit() {
        let show = |bps| {
            let mut text = heapless::String::<32>::new();
            core::fmt::Write::write_fmt(&mut text, format_args!("{}", Rate::from_bps(bps))).unwrap();
            text
        };
        assert_eq!(show(92_746_700_000), "92.74 Gb/s");
        assert_eq!(show(100_000_000_000), "100.00 Gb/s");
        assert_eq!(show(25_500_000), "25.50 Mb/s");
        assert_eq!(show(1_000), "1.00 kb/s");
        assert_eq!(show(999), "999 bit/s");
    }

    #[test]
    fn mtu_range_is_64_to_65535_bytes() {
        assert_eq!(Mtu::new(63), None);
        assert_eq!(Mtu::new(65_536), None);
        assert_eq!(Mtu::new(64).map(Mtu::bytes), Some(64));
        assert_eq!(Mtu::new(65_535).map(Mtu::bytes), Some(65_535));
    }

    /// Every MTU against every byte count below 2^16 would be 2^32 cases;
    /// the MTUs where the reciprocal's excess e is largest relative to
    /// 1/MTU (the largest ones, and odd ones near powers of two) against
    /// every such count, exhaustively.
    #[test]
    fn mtu_reciprocal_is_exact_below_64_kib_at_the_hard_mtus() {
        for mtu in [
            64, 65, 127, 129, 1000, 1500, 4095, 4097, 9000, 32_767, 32_769, 65_533, 65_534, 65_535,
        ] {
            let m = Mtu::new(mtu).unwrap();
            for bytes in 0..1u32 << 16 {
                assert_eq!(
                    m.packets_raw(bytes),
                    packets_by_definition(bytes, mtu),
                    "{bytes} B at MTU {mtu}"
                );
            }
        }
    }

    proptest::proptest! {
        /// `after` against its definition: `a − b mod 2^32` in (0, 2^31).
        #[test]
        fn seq_after_is_the_serial_range(a: u32, d: u32) {
            let b = a.wrapping_sub(d);
            proptest::prop_assert_eq!(Seq(a).after(Seq(b)), d != 0 && d < 1 << 31);
            proptest::prop_assert_eq!(Seq(a).at_or_after(Seq(b)), Seq(a).after(Seq(b)) || a == b);
        }

        #[test]
        fn mtu_reciprocal_is_the_quotient(mtu in Mtu::MIN..=Mtu::MAX, bytes: u32, small in 0u32..1 << 16) {
            let m = Mtu::new(mtu).unwrap();
            proptest::prop_assert_eq!(m.packets_raw(bytes), packets_by_definition(bytes, mtu));
            proptest::prop_assert_eq!(m.packets_raw(small), packets_by_definition(small, mtu));
        }
    }

    #[test]
    fn seq_serial_arithmetic_wraps() {
        assert!(Seq(5).after(Seq(u32::MAX - 3)));
        assert!(!Seq(u32::MAX - 3).after(Seq(5)));
        assert!(!Seq(7).after(Seq(7)));
        assert_eq!(Seq(5).bytes_since(Seq(u32::MAX - 3)), 9);
        assert_eq!(Seq(5).bytes_since(Seq(6)), 0);
        // RFC 1982 §3.2: a distance of exactly 2^31 is undefined, and
        // neither number is after the other; 2^31 − 1 ahead is after.
        assert!(!Seq(1 << 31).after(Seq(0)));
        assert!(!Seq(0).after(Seq(1 << 31)));
        assert!(Seq((1 << 31) - 1).after(Seq(0)));
        assert!(!Seq(0).after(Seq((1 << 31) - 1)));
        assert!(Seq(0).after(Seq((1 << 31) + 1)));
    }

    #[test]
    fn window_bytes_round_trip_and_saturate() {
        assert_eq!(Window::from_bytes(1500).bytes_floor(), 1500);
        assert_eq!(Window::from_bytes(u32::MAX).to_bits(), u32::MAX);
        assert_eq!(Window::from_bits_saturating(1 << 40).to_bits(), u32::MAX);
        let lo = Window::from_bytes(10);
        let hi = Window::from_bytes(20);
        assert_eq!(Window::from_bytes(5).clamp_to(lo, hi), lo);
        assert_eq!(Window::from_bytes(25).clamp_to(lo, hi), hi);
        assert_eq!(Window::from_bytes(15).clamp_to(hi, lo), lo);
    }

    #[test]
    fn bdp_of_100g_12us_is_150kb() {
        let t = BaseRtt::from_nanos(12_000).unwrap();
        assert_eq!(LinkSpeed::from_gbps(100).bdp_bytes(t), 150_000);
    }

    #[test]
    fn base_rtt_range_is_enforced() {
        assert!(BaseRtt::from_nanos(0).is_none());
        assert!(BaseRtt::from_nanos(99).is_none());
        assert!(BaseRtt::from_nanos(BaseRtt::MAX_NS + 1).is_none());
        assert!(BaseRtt::from_nanos(1_000).is_some());
    }

    #[test]
    fn fractions() {
        assert_eq!(Fraction::ratio(95, 100).unwrap().to_bits(), 15_938_355);
        assert!(Fraction::ratio(2, 1).is_none());
        assert!(Fraction::ratio(0, 0).is_none());
        assert_eq!(Fraction::inverse_pow2(4).unwrap().to_bits(), 1 << 20);
        assert!(Fraction::from_bits((1 << 24) + 1).is_none());
    }

    #[test]
    fn packets_to_window() {
        let half = Packets::from_bits(1 << 15);
        assert_eq!(half.to_window(1000).bytes_floor(), 500);
        assert_eq!(Packets::from_int(3).to_window(1024).bytes_floor(), 3072);
    }
}
