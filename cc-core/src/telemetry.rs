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

use crate::units::{Fraction, LinkSpeed};

/// Widths and units of a hop's wrapping counters, from the wire format or
/// the device's units profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CounterWidths {
    /// Width of the nanosecond timestamp `ts`, 1 ..= 32 bits.
    pub ts_bits: u8,
    /// Width of the transmitted-bytes counter `tx`, 1 ..= 32 bits.
    pub tx_bits: u8,
    /// Bytes per unit of `tx` (1 for a plain byte counter), 1 ..= 65535.
    pub tx_unit_bytes: u16,
}

impl CounterWidths {
    /// 32-bit nanosecond timestamp and 32-bit byte counter.
    pub const FULL: CounterWidths = CounterWidths { ts_bits: 32, tx_bits: 32, tx_unit_bytes: 1 };

    /// Whether the widths are usable (1 ..= 32 bits, unit ≥ 1).
    pub const fn is_valid(&self) -> bool {
        self.ts_bits >= 1 && self.ts_bits <= 32 && self.tx_bits >= 1 && self.tx_bits <= 32 && self.tx_unit_bytes >= 1
    }
}

impl Default for CounterWidths {
    fn default() -> Self {
        Self::FULL
    }
}

/// One hop's telemetry: the state of the packet's egress port when it left.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
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
    pub tx_utilization: Option<Fraction>,
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

/// Difference `now − before` of a counter `bits` wide, or `None` when the
/// difference is at or past half the wrap (the sample is older than the
/// stored one). `bits` must be 1 ..= 32 (checked by [`CounterWidths::is_valid`]).
pub(crate) const fn wrapping_delta(now: u32, before: u32, bits: u8) -> Option<u32> {
    let mask = if bits >= 32 { u32::MAX } else { (1u32 << bits) - 1 };
    let d = now.wrapping_sub(before) & mask;
    // Half the wrap: 2^(bits-1). With bits = 1 this is 1, so only d = 0 passes.
    if d > (mask >> 1) {
        None
    } else {
        Some(d)
    }
}

/// 20-bit signature of a path: hop count, and each hop's position, identity,
/// link speed and counter widths. Two telemetry stacks with different
/// signatures come from different paths and the per-hop history is reset
/// (DESIGN §9). A 20-bit signature misses a path change with probability
/// 2^-20 per change, and then only until the next change of any field.
pub(crate) fn path_signature(hops: &[HopSample], first_index: u8) -> u32 {
    let mut h: u32 = 0x811C_9DC5 ^ hops.len() as u32;
    for (idx, s) in (first_index as u32..).zip(hops) {
        let w = s.widths;
        for word in [idx, s.id, s.bandwidth.as_mbps(), (w.ts_bits as u32) << 24 | (w.tx_bits as u32) << 16 | w.tx_unit_bytes as u32] {
            h = (h ^ word).wrapping_mul(0x0100_0193).rotate_left(5);
        }
    }
    (h ^ (h >> 20)) & SIGNATURE_MASK
}

/// Mask of the 20 signature bits.
pub(crate) const SIGNATURE_MASK: u32 = (1 << 20) - 1;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delta_wraps_at_any_width() {
        assert_eq!(wrapping_delta(5, (1 << 24) - 3, 24), Some(8));
        assert_eq!(wrapping_delta(5, u32::MAX - 2, 32), Some(8));
        assert_eq!(wrapping_delta(2, 1, 1), None);
        assert_eq!(wrapping_delta(3, 3, 1), Some(0));
        // Going backwards reads as stale, not as a near-full wrap.
        assert_eq!(wrapping_delta(100, 200, 24), None);
        assert_eq!(wrapping_delta(100, 200, 32), None);
        // Upper bits beyond the width are ignored.
        assert_eq!(wrapping_delta(0xFF00_0010, 0x0000_0008, 24), Some(8));
    }

    #[test]
    fn signature_sees_identity_count_and_speed() {
        let a = HopSample { id: 7, bandwidth: LinkSpeed::from_gbps(100), ..Default::default() };
        let mut b = a;
        b.id = 8;
        let mut c = a;
        c.bandwidth = LinkSpeed::from_gbps(400);
        let s1 = path_signature(&[a], 0);
        assert_ne!(s1, path_signature(&[b], 0));
        assert_ne!(s1, path_signature(&[c], 0));
        assert_ne!(s1, path_signature(&[a, a], 0));
        assert_ne!(s1, path_signature(&[a], 1));
        assert_eq!(s1, path_signature(&[a], 0));
        assert!(s1 <= SIGNATURE_MASK);
    }
}
