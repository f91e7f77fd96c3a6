//! Per-hop telemetry as the engine sees it.
//!
//! Every wire format (compact HPCC stack, INT-MD, IOAM, IFA) converts into a
//! [`HopSample`]: a snapshot of one egress port taken when the packet left it
//! (HPCC++ draft pan-02 §6.1: "each switch should record all those
//! information at the single snapshot"). The engine never reads a wire
//! format itself.
//!
//! Counters wrap. A sample carries each counter's raw value and width, and a
//! delta is taken modulo 2^width ([`CounterWidths`]), so a counter may wrap
//! any number of times as long as the interval between two samples of the
//! same hop is shorter than one wrap. A delta at or past half the wrap is
//! taken as a sample older than the one before it (a reordered ACK) and the
//! whole telemetry is rejected as stale rather than read as a huge rate.

use core::fmt;
use core::num::NonZeroU16;

use crate::error::Error;
use crate::units::{Fraction, LinkSpeed};

/// Widths and units of a hop's wrapping counters, from the wire format or
/// the device's units profile: each width 1 ..= 32 bits, the unit ≥ 1 byte.
///
/// Checked once, where the widths are made ([`CounterWidths::new`]), so the
/// engine's per-sample path reads masks instead of checking widths on every
/// hop of every ACK. Kept as one word (`ts_bits`, `tx_bits` << 8,
/// `tx_unit_bytes` << 16): one load, and the path signature hashes it as is.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(transparent)]
pub struct CounterWidths(u32);

impl CounterWidths {
    /// 32-bit nanosecond timestamp and 32-bit byte counter.
    pub const FULL: CounterWidths = CounterWidths(32 | 32 << 8 | 1 << 16);

    /// Timestamp width `ts_bits` and transmitted-bytes counter width
    /// `tx_bits` (each 1 ..= 32), the counter counting `tx_unit_bytes`
    /// (≥ 1) bytes a unit; [`Error::BadCounterWidths`] otherwise.
    pub const fn new(ts_bits: u8, tx_bits: u8, tx_unit_bytes: u16) -> Result<Self, Error> {
        // b − 1 < 32 for b in 1 ..= 32, and 0 − 1 wraps to 255.
        if ts_bits.wrapping_sub(1) < 32 && tx_bits.wrapping_sub(1) < 32 && tx_unit_bytes != 0 {
            Ok(CounterWidths(
                ts_bits as u32 | (tx_bits as u32) << 8 | (tx_unit_bytes as u32) << 16,
            ))
        } else {
            Err(Error::BadCounterWidths)
        }
    }

    /// The same widths with the counter counting `unit` bytes a unit.
    pub const fn with_unit(self, unit: NonZeroU16) -> Self {
        CounterWidths(self.0 & 0xFFFF | (unit.get() as u32) << 16)
    }

    /// Width of the nanosecond timestamp, 1 ..= 32 bits.
    pub const fn ts_bits(self) -> u8 {
        self.0 as u8
    }

    /// Width of the transmitted-bytes counter, 1 ..= 32 bits.
    pub const fn tx_bits(self) -> u8 {
        (self.0 >> 8) as u8
    }

    /// Bytes per unit of the transmitted-bytes counter, ≥ 1.
    pub const fn tx_unit_bytes(self) -> u16 {
        (self.0 >> 16) as u16
    }

    /// 2^ts_bits − 1: the timestamp's wrap minus one. The shift is below
    /// 32 for every width `new` accepts (`wrapping_shr` states it, and is
    /// one `srl`).
    pub const fn ts_mask(self) -> u32 {
        u32::MAX.wrapping_shr(32 - self.ts_bits() as u32)
    }

    /// 2^tx_bits − 1, as [`Self::ts_mask`].
    pub const fn tx_mask(self) -> u32 {
        u32::MAX.wrapping_shr(32 - self.tx_bits() as u32)
    }

    /// The three fields in one word (`ts_bits`, `tx_bits` << 8,
    /// `tx_unit_bytes` << 16).
    #[inline(always)]
    pub const fn to_word(self) -> u32 {
        self.0
    }

    /// Whether `w` is a word [`Self::new`] makes: each width byte b in
    /// 1 ..= 32 exactly when b − 1 has none of the bits 0xE0 (b = 0 gives
    /// 0xFF, and its borrow can only add bits to the next byte's test),
    /// and a unit of at least one byte.
    #[inline(always)]
    pub const fn is_valid_word(w: u32) -> bool {
        w.wrapping_sub(0x0101) & 0xE0E0 == 0 && w >> 16 != 0
    }
}

impl fmt::Debug for CounterWidths {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CounterWidths")
            .field("ts_bits", &self.ts_bits())
            .field("tx_bits", &self.tx_bits())
            .field("tx_unit_bytes", &self.tx_unit_bytes())
            .finish()
    }
}

impl Default for CounterWidths {
    fn default() -> Self {
        Self::FULL
    }
}

/// One hop's telemetry: the state of the packet's egress port when it left.
///
/// `repr(C)`, 36 bytes: the C API's `cc_hop` has this layout, so a C
/// caller's hops are checked and read where they lie, not copied (the
/// flag of [`TxUtilization`] is a word of 0 or 1, the counter widths a
/// word [`CounterWidths::is_valid_word`] accepts).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(C)]
pub struct HopSample {
    /// Egress timestamp in ns, modulo 2^`widths.ts_bits`.
    pub ts: u32,
    /// Transmitted-bytes counter in units of `widths.tx_unit_bytes`, modulo
    /// 2^`widths.tx_bits`.
    pub tx: u32,
    /// Queue length at the egress port, bytes (saturated by the wire layer).
    pub qlen_bytes: u32,
    /// Sojourn time of the packet in the switch (egress − ingress), ns; 0
    /// when the format does not carry it. Used by the sojourn-time variant.
    pub sojourn_ns: u32,
    /// Link capacity B of the egress port.
    pub bandwidth: LinkSpeed,
    /// Switch and port identity folded to 32 bits; 0 when the format has
    /// none (the compact HPCC stack). A change means the path changed.
    pub id: u32,
    /// Counter widths and units.
    pub widths: CounterWidths,
    /// Egress tx utilization txRate/B reported by the switch itself (INT-MD
    /// has no transmitted-bytes counter, only this). When present it is
    /// the rate term of u' and `tx` is not read.
    pub tx_utilization: TxUtilization,
}

/// A switch's own report of its egress utilization txRate/B, or none
/// ([`HopSample::tx_utilization`]): a flag word and a [`Fraction`]'s bits,
/// laid out (on a little-endian core) as the C API's `has_utilization`,
/// three zero bytes and `utilization_q24`: one load tests the flag and the
/// reserved bytes. The default is none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(C)]
pub struct TxUtilization {
    /// Whether reported (a word: 1 or 0).
    reported: Reported,
    /// The fraction's bits (at most 2^24) if reported, else 0.
    bits: u32,
}

/// [`TxUtilization`]'s flag, a word of 0 or 1: the C struct's flag byte
/// and its three zero bytes, read as one little-endian word.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(u32)]
enum Reported {
    #[default]
    No = 0,
    Yes = 1,
}

impl TxUtilization {
    /// Not reported.
    pub const NONE: TxUtilization = TxUtilization {
        reported: Reported::No,
        bits: 0,
    };

    /// Reported as `f`.
    pub const fn reported(f: Fraction) -> Self {
        TxUtilization {
            reported: Reported::Yes,
            bits: f.to_bits(),
        }
    }

    /// The reported fraction, if any.
    #[inline(always)]
    pub const fn get(self) -> Option<Fraction> {
        if let Reported::No = self.reported {
            None
        } else {
            // Every maker keeps bits ≤ 2^24 (the C API checks a hop it
            // reads in place before it is a sample).
            Some(Fraction::from_bits_trusted(self.bits))
        }
    }
}

impl From<Option<Fraction>> for TxUtilization {
    fn from(f: Option<Fraction>) -> Self {
        match f {
            Some(f) => Self::reported(f),
            None => Self::NONE,
        }
    }
}

/// What the engine keeps of one hop between samples (draft Figure 6, line
/// 27: `L = ack.L`): 12 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct HopHistory {
    /// Last `ts` seen.
    pub ts: u32,
    /// Last `tx` seen.
    pub tx: u32,
    /// Last queue signal (queue length in bytes, or sojourn in ns).
    pub queue: u32,
}

/// How a sample's timestamp stands to the stored one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg(test)]
pub(crate) enum TsInterval {
    /// The sample is this many ns after the stored one.
    Forward(u32),
    /// The sample is older than the stored one (a reordered ACK): refuse it.
    Stale,
    /// A whole wrap of the timestamp or more has passed on the local clock
    /// since the stored sample was recorded: no delta can be trusted, the
    /// history starts again.
    Expired,
}

/// The interval from the stored timestamp `before` to the sample's `now`,
/// both in ns modulo 2^bits (`mask` = 2^bits − 1, [`CounterWidths::ts_mask`]), told apart by the local time `elapsed_ns` since the stored sample
/// was recorded (DESIGN §9: counters that wrapped give a correct delta).
///
/// The modular difference d alone cannot tell "d later" from "wrap − d
/// earlier". The local clock can: a switch's clock and the sender's run at
/// the same rate, and the two samples' one-way delays differ by at most the
/// queueing on the path. So, with W the wrap:
///
/// ```text
/// elapsed ≥ W                                 → Expired (the history restarts)
/// d ≤ max(W/2, min(elapsed + W/4, W − 1))     → Forward(d)
/// otherwise                                   → Stale
/// ```
///
/// A flow back from an idle gap of between W/2 and W gets its real
/// interval instead of being refused as stale until the timestamps come
/// round again; a reordered ACK (elapsed ≪ W/4, d near W) stays stale. The
/// W/4 margin covers queueing differences (4.2 ms for 24-bit ns stamps).
#[cfg(test)]
pub(crate) const fn ts_interval(now: u32, before: u32, mask: u32, elapsed_ns: u64) -> TsInterval {
    match TsReach::new(mask, elapsed_ns) {
        Some(reach) => match reach.interval(now, before) {
            Some(d) => TsInterval::Forward(d),
            None => TsInterval::Stale,
        },
        None => TsInterval::Expired,
    }
}

/// The part of the interval rule (`ts_interval`, its one-call form in the
/// tests) that depends on the timestamp's width and the local time only,
/// not on the timestamps: the largest forward interval
/// `max(W/2, min(elapsed + W/4, W − 1))`, or `None` (expired).
/// The hops of a stack share both, so a stack works it out once.
#[derive(Clone, Copy)]
pub(crate) struct TsReach {
    mask: u32,
    limit: u32,
}

impl TsReach {
    /// The reach for stamps of mask `mask` (W − 1), `elapsed_ns` after the
    /// history was recorded; `None` when a whole wrap or more has passed.
    #[inline(always)]
    pub(crate) const fn new(mask: u32, elapsed_ns: u64) -> Option<TsReach> {
        // In 32 bits: the mask is W − 1, W/2 = mask/2 + 1, W/4 = mask/4 +
        // (1 if W ≥ 4) (0 for a 1-bit stamp).
        if elapsed_ns >> 32 != 0 || elapsed_ns as u32 > mask {
            return None;
        }
        let quarter = (mask >> 2) + ((mask >> 1) & 1);
        let reach = (elapsed_ns as u32).saturating_add(quarter);
        let reach = if reach < mask { reach } else { mask };
        let half = (mask >> 1) + 1;
        let limit = if reach > half { reach } else { half };
        Some(TsReach { mask, limit })
    }

    /// The interval from `before` to `now` (`ts_interval`'s rule once the
    /// reach is known): the forward interval in ns, or `None` when the
    /// sample is stale (a reach cannot be expired).
    #[inline(always)]
    pub(crate) const fn interval(self, now: u32, before: u32) -> Option<u32> {
        let d = now.wrapping_sub(before) & self.mask;
        if d > self.limit {
            None
        } else {
            Some(d)
        }
    }
}

/// Bytes the link transmitted between two samples `dts_ns` apart, from a
/// counter `bits` wide (1 ..= 32) in units of `unit_bytes`, on a link of
/// `b_mbps`; `None` when the counter cannot give it:
///
/// ```text
/// most = dts · B / 8000                    bytes the link can send in dts
/// most ≥ 2^bits · unit                     → None (a whole counter wrap fits: ambiguous)
/// Δ = ((now − before) mod 2^bits) · unit
/// Δ > 2 · most + unit                      → None (no link sends twice its rate:
///                                            the counter was reset)
/// ```
///
/// The margin of 2 and one unit covers where each switch takes its
/// snapshot and the counter's unit. Both tests are done multiplied by 8000,
/// without a division: dts·B < 2^32·2^23 = 2^55; 2^bits·unit·8000 <
/// 2^48·2^13 = 2^61; Δ·8000 < 2^61; 2·dts·B + unit·8000 < 2^57.
#[inline(always)]
pub(crate) const fn tx_bytes_between(now: u32, before: u32, w: CounterWidths, dts_ns: u32, b_mbps: u32) -> Option<u64> {
    // unit·8000 < 2^16·2^13: fits 32 bits, and every product below is
    // 32 × 32 → 64 bits (`mul` and `mulhu` on rv32).
    let unit = w.tx_unit_bytes() as u32;
    let unit_x8000 = unit * 8000;
    let most_x8000 = dts_ns as u64 * b_mbps as u64;
    // bits ≤ 32 (CounterWidths::new): the shift stays below 64.
    if most_x8000 >= (unit_x8000 as u64) << w.tx_bits() {
        return None;
    }
    tx_bytes_counted(now, before, w, most_x8000)
}

/// Whether a counter of widths `w` can wrap within `span_ns` on a link of
/// `b_mbps`: the first test of [`tx_bytes_between`] for the longest
/// interval. Where it cannot, every shorter interval passes that test, and
/// [`tx_bytes_counted`] alone gives the same answer.
#[inline(always)]
pub(crate) const fn tx_counter_may_wrap(w: CounterWidths, span_ns: u32, b_mbps: u32) -> bool {
    let unit_x8000 = w.tx_unit_bytes() as u32 * 8000;
    span_ns as u64 * b_mbps as u64 >= (unit_x8000 as u64) << w.tx_bits()
}

/// [`tx_counter_may_wrap`] for the longest interval T from the link's BDP
/// in bytes, rounded down (`bdp = ⌊T·B/8000⌋`, made with the
/// configuration: `reciprocals::Pair::bdp`):
///
/// ```text
/// T·B ≥ unit·8000·2^bits  ⇔  bdp ≥ unit·2^bits  ⇔  ⌊bdp / 2^bits⌋ ≥ unit
/// ```
///
/// (unit·2^bits is an integer, so the rounding down keeps the first
/// equivalence; it is a multiple of 2^bits, so the second.) A 32-bit
/// counter never wraps within T: bdp < 2^30.
#[inline(always)]
pub(crate) const fn counter_wraps_within(w: CounterWidths, bdp: u32) -> bool {
    match bdp.checked_shr(w.tx_bits() as u32) {
        Some(units) => units >= w.tx_unit_bytes() as u32,
        None => false,
    }
}

/// The second test of [`tx_bytes_between`], for an interval in which the
/// counter cannot wrap: the bytes, or `None` for a counter reset.
/// `most_x8000` is Δts · B. The test Δ·8000 > 2·Δts·B + unit·8000 is
/// taken halved, Δ·4000 > Δts·B + unit·4000: both sides are even, so the
/// answer is the same, with one 64-bit doubling fewer a hop.
#[inline(always)]
pub(crate) const fn tx_bytes_counted(now: u32, before: u32, w: CounterWidths, most_x8000: u64) -> Option<u64> {
    let unit = w.tx_unit_bytes() as u32;
    let unit_x4000 = unit * 4000;
    let units = now.wrapping_sub(before) & w.tx_mask();
    if units as u64 * unit_x4000 as u64 > most_x8000 + unit_x4000 as u64 {
        None
    } else {
        Some(units as u64 * unit as u64)
    }
}

/// 20-bit signature of a path: hop count, which hops the history follows,
/// where the stack starts, and each followed hop's identity, link speed and
/// counter widths, in order. Two telemetry stacks with different signatures
/// come from different paths and the per-hop history is reset (DESIGN §9).
/// A 20-bit signature misses a path change with probability 2^-20 per
/// change, and then only until the next change of any field.
///
/// `tracked` selects the hops kept in the history (bit i for hop i).
///
/// One word a hop (a product by an odd constant is a bijection in any one
/// field, so each field alone changes it), then one FNV-style round; the
/// rounds' order carries the hops' positions. Multiplies, not rotations:
/// rv32imac has no rotate.
#[inline]
pub(crate) fn stack_signature(hops: &[HopSample], first_index: u8, tracked: u16) -> u32 {
    let mut h = signature_seed(hops.len() as u32, first_index, tracked);
    if hops.len() < 16 && tracked as u32 == (1 << hops.len()) - 1 {
        // Every hop followed (the usual case): no per-hop test.
        h = hops.iter().fold(h, signature_round);
    } else {
        for (i, s) in hops.iter().enumerate() {
            if tracked >> (i & 15) & 1 != 0 {
                h = signature_round(h, s);
            }
        }
    }
    signature_finish(h)
}

/// The signature's start: hop count, where the stack starts, which hops
/// are followed.
#[inline(always)]
const fn signature_seed(hops: u32, first_index: u8, tracked: u16) -> u32 {
    0x811C_9DC5 ^ hops ^ (first_index as u32).wrapping_mul(0x9E37_79B9) ^ (tracked as u32).wrapping_mul(0x27D4_EB2F)
}

/// One followed hop's round of the signature.
#[inline(always)]
fn signature_round(h: u32, s: &HopSample) -> u32 {
    let word = s.id ^ s.bandwidth.as_mbps().wrapping_mul(0x85EB_CA6B) ^ s.widths.to_word().wrapping_mul(0xC2B2_AE35);
    let h = (h ^ word).wrapping_mul(0x0100_0193);
    h ^ (h >> 15)
}

/// The signature's last fold to [`SIGNATURE_MASK`]'s 20 bits.
#[inline(always)]
const fn signature_finish(h: u32) -> u32 {
    (h ^ (h >> 20)) & SIGNATURE_MASK
}

/// Mask of the 20 signature bits.
pub(crate) const SIGNATURE_MASK: u32 = (1 << 20) - 1;

#[cfg(test)]
mod tests {
    use super::*;

    fn mask(bits: u8) -> u32 {
        CounterWidths::new(bits, 32, 1).unwrap().ts_mask()
    }

    /// The one-word test accepts exactly the words `new` makes: every
    /// pair of width bytes, with units 0, 1, 2^8 and the largest.
    #[test]
    fn the_word_test_is_the_constructor_test() {
        for ts in 0..=255u8 {
            for tx in 0..=255u8 {
                for unit in [0u16, 1, 256, u16::MAX] {
                    let w = ts as u32 | (tx as u32) << 8 | (unit as u32) << 16;
                    assert_eq!(
                        CounterWidths::is_valid_word(w),
                        CounterWidths::new(ts, tx, unit).is_ok(),
                        "{ts} {tx} {unit}"
                    );
                }
            }
        }
    }

    /// The C API's layout (cc-ffi asserts each field's offset), and the
    /// utilization through it.
    #[test]
    fn a_sample_is_laid_out_as_the_c_api_reads_it() {
        let u = TxUtilization::reported(Fraction::ONE);
        assert_eq!(u.get(), Some(Fraction::ONE));
        assert_eq!(TxUtilization::NONE.get(), None);
        assert_eq!(TxUtilization::default(), TxUtilization::NONE);
        assert_eq!(TxUtilization::from(Some(Fraction::ONE)), u);
        // The C API's layout (cc-ffi asserts each field's offset).
        assert_eq!(core::mem::size_of::<HopSample>(), 36);
        assert_eq!(core::mem::offset_of!(HopSample, tx_utilization), 28);
    }

    proptest::proptest! {
        /// Where the counter cannot wrap within a span, the count alone is
        /// the whole test for every interval below the span.
        #[test]
        fn a_counter_that_cannot_wrap_needs_only_the_count(
            tx_bits in 1u8..=32, unit in 1u16..=256, span in 1u32..=1 << 20, frac: u32,
            b in 100u32..=6_400_000, now: u32, before: u32,
        ) {
            let w = CounterWidths::new(32, tx_bits, unit).unwrap();
            let dts = ((frac as u64 * span as u64) >> 32) as u32;
            if !tx_counter_may_wrap(w, span, b) {
                proptest::prop_assert_eq!(
                    tx_bytes_counted(now, before, w, dts as u64 * b as u64),
                    tx_bytes_between(now, before, w, dts, b)
                );
            }
        }
    }

    proptest::proptest! {
        /// The wrap test from a BDP rounded down is the test from T·B
        /// itself, T·B ≥ unit·8000·2^bits, at its edge: T·B within 8000
        /// of that, for every width and unit whose edge a BDP (< 2^30)
        /// can reach.
        #[test]
        fn the_wrap_test_from_the_bdp_is_the_test_from_the_product(
            tx_bits in 1u8..=30, unit in 1u16..=u16::MAX, delta in -8000i64..=8000,
        ) {
            proptest::prop_assume!((unit as u64) << tx_bits < 1 << 30);
            let w = CounterWidths::new(32, tx_bits, unit).unwrap();
            let edge = (unit as u64 * 8000) << tx_bits;
            let tb = (edge as i64 + delta) as u64;
            proptest::prop_assert_eq!(counter_wraps_within(w, (tb / 8000) as u32), tb >= edge);
        }
    }

    proptest::proptest! {
        /// The reset test is the doc comment's, Δ > 2·most + unit, with
        /// most = Δts·B/8000, taken in 128 bits over every counter width
        /// and unit and every interval and speed the engine reads.
        #[test]
        fn the_reset_test_is_the_definition(
            tx_bits in 1u8..=32, unit in 1u16..=u16::MAX, dts: u32, b in 0u32..1 << 23,
            now: u32, before: u32,
        ) {
            let w = CounterWidths::new(32, tx_bits, unit).unwrap();
            let units = (now.wrapping_sub(before) as u64) & ((1u64 << tx_bits) - 1);
            let delta = units as u128 * unit as u128;
            let reset = delta * 8000 > 2 * (dts as u128 * b as u128) + unit as u128 * 8000;
            let want = if reset { None } else { Some(delta as u64) };
            proptest::prop_assert_eq!(tx_bytes_counted(now, before, w, dts as u64 * b as u64), want);
        }

        /// The same at the edge: Δts·B just below, at and just above the
        /// most under which `units` is no reset, (units − 1)·unit·4000
        /// (where units·unit·8000 = 2·Δts·B + unit·8000).
        #[test]
        fn the_reset_test_is_the_definition_at_its_edge(
            unit in 1u16..=u16::MAX, units in 1u32..=1 << 20, before: u32, step in 0u64..3,
        ) {
            let w = CounterWidths::new(32, 32, unit).unwrap();
            let most_x8000 = ((units - 1) as u64 * unit as u64 * 4000 + step).saturating_sub(1);
            let delta = units as u64 * unit as u64;
            let reset = delta as u128 * 8000 > 2 * most_x8000 as u128 + unit as u128 * 8000;
            let want = if reset { None } else { Some(delta) };
            proptest::prop_assert_eq!(tx_bytes_counted(before.wrapping_add(units), before, w, most_x8000), want);
        }
    }

    #[test]
    fn timestamp_intervals_wrap_at_any_width() {
        use TsInterval::*;
        assert_eq!(ts_interval(5, (1 << 24) - 3, mask(24), 0), Forward(8));
        assert_eq!(ts_interval(5, u32::MAX - 2, mask(32), 0), Forward(8));
        assert_eq!(ts_interval(3, 3, mask(1), 0), Forward(0));
        // Upper bits beyond the width are ignored.
        assert_eq!(ts_interval(0xFF00_0010, 0x0000_0008, mask(24), 0), Forward(8));
        // Going backwards soon after the stored sample: stale.
        assert_eq!(ts_interval(100, 200, mask(24), 50), Stale);
        assert_eq!(ts_interval(100, 200, mask(32), 50), Stale);
    }

    /// An idle gap between half a wrap and a wrap is a forward interval
    /// when the local clock says that much time passed; past a wrap the
    /// history expires.
    #[test]
    fn long_gaps_are_told_apart_by_the_local_clock() {
        use TsInterval::*;
        let wrap = 1u64 << 24; // 16.8 ms of 24-bit ns stamps
        let gap = 9_000_000u32; // 9 ms idle: past half the wrap
        assert_eq!(ts_interval(gap, 0, mask(24), gap as u64 + 20_000), Forward(gap));
        // The same bytes 50 µs after the stored sample: a reordered ACK.
        assert_eq!(ts_interval(gap, 0, mask(24), 50_000), Stale);
        assert_eq!(ts_interval(5, 0, mask(24), wrap), Expired);
        assert_eq!(ts_interval(5, 0, mask(32), 3_000_000_000), Forward(5));
    }

    #[test]
    fn transmitted_bytes_accept_any_interval_shorter_than_a_wrap() {
        // Compact counters: 20 bits of 128 bytes wrap every 134 MB, 671 µs
        // at 1.6 Tb/s. Samples 350 µs apart at line rate: past half a wrap.
        let w = CounterWidths::new(24, 20, 128).unwrap();
        let b = 1_600_000; // Mb/s
        let sent = 350_000u64 * b as u64 / 8000; // 70 MB
        let units = (sent / 128) as u32;
        assert_eq!(
            tx_bytes_between(units & 0xF_FFFF, 0, w, 350_000, b),
            Some(units as u64 * 128)
        );
        // An interval that could hold a whole wrap: ambiguous.
        assert_eq!(tx_bytes_between(5, 0, w, 700_000, b), None);
        // More than twice the line rate: the counter was reset.
        assert_eq!(tx_bytes_between(0xF_0000, 0, w, 1_000, b), None);
        assert_eq!(tx_bytes_between(1, 0, w, 0, b), Some(128));
    }

    fn sig(hops: &[HopSample], first: u8) -> u32 {
        stack_signature(hops, first, 0xFFFF)
    }

    #[test]
    fn signature_sees_identity_count_and_speed() {
        let a = HopSample {
            id: 7,
            bandwidth: LinkSpeed::from_gbps(100),
            ..Default::default()
        };
        let mut b = a;
        b.id = 8;
        let mut c = a;
        c.bandwidth = LinkSpeed::from_gbps(400);
        let s1 = sig(&[a], 0);
        assert_ne!(s1, sig(&[b], 0));
        assert_ne!(s1, sig(&[c], 0));
        assert_ne!(s1, sig(&[a, a], 0));
        assert_ne!(s1, sig(&[a], 1));
        assert_eq!(s1, sig(&[a], 0));
        assert!(s1 <= SIGNATURE_MASK);
        // Which hops are followed is part of the path.
        assert_ne!(stack_signature(&[a, a], 0, 0b01), stack_signature(&[a, a], 0, 0b10));
        // Widths: each field alone changes it; an unusable one is refused.
        let mut d = a;
        d.widths = CounterWidths::new(32, 20, 1).unwrap();
        assert_ne!(s1, sig(&[d], 0));
        d.widths = CounterWidths::FULL.with_unit(NonZeroU16::new(2).unwrap());
        assert_ne!(s1, sig(&[d], 0));
        d.widths = CounterWidths::new(31, 32, 1).unwrap();
        assert_ne!(s1, sig(&[d], 0));
    }

    #[test]
    fn counter_widths_are_checked_where_they_are_made() {
        for (ts, tx, unit) in [
            (0, 32, 1),
            (33, 32, 1),
            (32, 0, 1),
            (32, 33, 1),
            (32, 32, 0),
            (255, 255, 1),
        ] {
            assert_eq!(
                CounterWidths::new(ts, tx, unit),
                Err(Error::BadCounterWidths),
                "{ts} {tx} {unit}"
            );
        }
        let w = CounterWidths::new(24, 20, 128).unwrap();
        assert_eq!((w.ts_bits(), w.tx_bits(), w.tx_unit_bytes()), (24, 20, 128));
        assert_eq!((w.ts_mask(), w.tx_mask()), ((1 << 24) - 1, (1 << 20) - 1));
        let one = CounterWidths::new(1, 32, 1).unwrap();
        assert_eq!((one.ts_mask(), one.tx_mask()), (1, u32::MAX));
        assert_eq!(CounterWidths::FULL, CounterWidths::new(32, 32, 1).unwrap());
    }
}
