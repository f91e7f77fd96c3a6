//! The reciprocals HPCC++'s per-hop arithmetic multiplies by, made once
//! with the engine's configuration.
//!
//! MeasureInflight divides by a hop's link speed B and by the flow's base
//! RTT T (draft 2022-10 §4.2, Figure 4, lines 4-5 and 9). Both are
//! constants of the fabric: a datacenter has a handful of link speeds and
//! of path RTTs. The configuration keeps their reciprocals, so an ACK
//! multiplies instead of dividing:
//!
//! ```text
//! per_byte(B) = round(8000 · 2^25 / B)     ns a byte takes on the link, in 2^-25 ns
//! per_rtt(T)  = round(2^38 / T)            1/T in 2^-38 per ns
//! ```
//!
//! | quantity | range | bits | relative error |
//! |---|---|---|---|
//! | `per_byte`, B in 100 Mb/s ..= 6.4 Tb/s | 41 943 ..= 2.7·10^9 | ≤ 32 | ≤ 2^-16.4 (≤ 2^-18.4 at 1.6 Tb/s) |
//! | `per_rtt`, T in 100 ns ..= 2^20 ns | 2^18 ..= 2.7·10^9 | ≤ 32 | ≤ 2^-19 |
//!
//! For each pair of a speed and an RTT in the table, the configuration
//! also keeps what a hop on that link takes from the pair (the engine's
//! link constants, [`Pair`]): the load's scale `k = 2^28/(B·T)` in the
//! hop walk's units, and the BDP in bytes, rounded down, which tells
//! whether a byte counter can wrap within T.
//!
//! A speed or RTT that is not in the table gets the same value from the
//! same function, with one division: the table changes how many
//! instructions an ACK takes, never its result. So decisions stay the same
//! to the bit whatever table a firmware and a simulator were configured
//! with. The default table holds the compact telemetry format's seven
//! speed codes (25 Gb/s to 1.6 Tb/s) and no RTT; a NIC adds its fabric's
//! other speeds (INT-MD, IOAM and IFA carry none: the units profile's port
//! speeds) and its flows' base RTTs.

use crate::error::Error;
use crate::units::{BaseRtt, LinkSpeed};

/// Most link speeds a table holds.
pub const MAX_SPEEDS: usize = 8;
/// Most base RTTs a table holds.
pub const MAX_RTTS: usize = 8;

/// No slot: an RTT not in the table ([`Reciprocals::rtt_entry`]).
pub(crate) const NO_SLOT: u32 = MAX_RTTS as u32;

/// Scale of [`per_byte`]: 2^-25 ns a byte.
pub(crate) const PER_BYTE_SHIFT: u32 = 25;
/// Scale of [`per_rtt`]: 2^-38 per ns.
pub(crate) const PER_RTT_SHIFT: u32 = 38;

/// `round(8000 · 2^25 / B)`: the time one byte takes on a link of `b`, in
/// 2^-25 ns, for a plausible B (100 Mb/s ..= 6.4 Tb/s: below 2^32); 0 for
/// any other B (the hop is skipped before this is used).
pub const fn per_byte(b: LinkSpeed) -> u32 {
    if !b.is_plausible() {
        return 0;
    }
    let mbps = b.as_mbps() as u64;
    // 8000 · 2^25 < 2^38: no overflow; mbps ≥ 100, so the quotient < 2^32.
    // `checked_div` has no divide-by-zero branch, which the firmware's
    // no-panic check relies on (a zero divisor cannot reach it).
    match ((8000u64 << PER_BYTE_SHIFT) + mbps / 2).checked_div(mbps) {
        Some(q) => q as u32,
        None => 0,
    }
}

/// `round(2^38 / T)`: 1/T in 2^-38 per ns (T in 100 ..= 2^20 ns: 2^18 ..=
/// 2^31.4).
pub const fn per_rtt(t: BaseRtt) -> u32 {
    let t = t.as_nanos() as u64;
    // T ≥ 100 (BaseRtt's range): the quotient < 2^32, and `checked_div`
    // has no divide-by-zero branch.
    match ((1u64 << PER_RTT_SHIFT) + t / 2).checked_div(t) {
        Some(q) => q as u32,
        None => 0,
    }
}

/// The hop walk's load scale for a link of `per_byte` (of B) and a flow
/// of `per_rtt` (of T): 2^28 / BDP in 2^-22 units per 2^-8 byte,
///
/// ```text
/// k = round(per_byte · per_rtt / 2^21) = round(8000 · 2^42 / (B·T))
/// ```
///
/// from the two reciprocals (per_byte · per_rtt = 8000·2^63/(B·T) < 2^64),
/// rounded to nearest; 0 where that is 2^32 or more (a BDP of 1 KiB or
/// less, below the design's range: such a hop takes its term's quotients
/// instead). At 1.6 Tb/s and T = 2^20 ns, k ≈ 20 900: a relative 2^-14.4.
#[inline(always)]
pub(crate) const fn link_k(per_byte: u32, per_rtt: u32) -> u32 {
    let p = per_byte as u64 * per_rtt as u64;
    let k = (p >> 21) + (p >> 20 & 1);
    if k >> 32 == 0 {
        k as u32
    } else {
        0
    }
}

/// A link's constants for flows of one base RTT, made with the
/// configuration for each pair of a speed and an RTT of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) struct Pair {
    /// [`link_k`] of the pair.
    pub k: u32,
    /// The BDP B·T in bytes, rounded down: `⌊mbps · T_ns / 8000⌋`
    /// ([`LinkSpeed::bdp_bytes`]; below 2^30 for a plausible B and T ≤
    /// 2^20 ns). Rounded down, `bdp ≥ n` holds for an integer n exactly
    /// when `B·T ≥ 8000·n` does (the counters' wrap test,
    /// [`crate::telemetry::counter_wraps_within`]).
    pub bdp: u32,
}

impl Pair {
    const EMPTY: Pair = Pair { k: 0, bdp: 0 };
}

/// Link speeds and base RTTs with their reciprocals, made once (see the
/// module docs). Part of [`crate::hpcc::HpccConfig`]. Two tables are equal when
/// they hold the same speeds and RTTs, in whatever order they were added.
///
/// Each table is a hash table of eight slots: a key's home slot is the top
/// three bits of `key · 0x9E37_79B1` (Fibonacci hashing), and a key whose
/// home is taken goes to the next free slot, the keys placed in order of
/// home slot whatever order they were added in (so two tables of the same
/// keys are laid out alike, and a lookup costs the same in both). A lookup
/// reads the home slot and, in a full table, at most seven more: an ACK's
/// lookups are a product, a load and a compare each, whatever the table
/// holds. Tables of the same keys being the same arrays, they compare
/// as arrays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Reciprocals {
    /// (B in Mb/s, per_byte(B)); free slots are (0, 0).
    speeds: [(u32, u32); MAX_SPEEDS],
    /// (T in ns, per_rtt(T)); free slots are (0, 0).
    rtts: [(u32, u32); MAX_RTTS],
    /// `pairs[i][j]`: the constants of `speeds[i]` and `rtts[j]`, or
    /// [`Pair::EMPTY`] where either slot is free. Made from the keys
    /// whenever one is added, so two tables of the same keys are equal.
    pairs: [[Pair; MAX_RTTS]; MAX_SPEEDS],
}

impl Reciprocals {
    /// The compact format's speed codes, 25 · 2^k Gb/s for k = 0..=6; no
    /// RTT.
    pub const fn compact() -> Self {
        let mut r = Reciprocals::EMPTY;
        let mut k = 0;
        // Seven keys in eight slots: every one finds a slot.
        while k < 7 {
            let b = LinkSpeed::from_gbps(25 << k);
            let _ = add(&mut r.speeds, b.as_mbps(), per_byte(b));
            k += 1;
        }
        r.pair_up();
        r
    }

    const EMPTY: Reciprocals = Reciprocals {
        speeds: [(0, 0); MAX_SPEEDS],
        rtts: [(0, 0); MAX_RTTS],
        pairs: [[Pair::EMPTY; MAX_RTTS]; MAX_SPEEDS],
    };

    /// Makes `pairs` from the keys and their reciprocals.
    const fn pair_up(&mut self) {
        let mut i = 0;
        while i < MAX_SPEEDS {
            let mut j = 0;
            while j < MAX_RTTS {
                let ((b, per_byte), (t, per_rtt)) = (self.speeds[i], self.rtts[j]);
                self.pairs[i][j] = match BaseRtt::from_nanos(t) {
                    Some(t) if b != 0 => Pair {
                        k: link_k(per_byte, per_rtt),
                        bdp: LinkSpeed::from_mbps(b).bdp_bytes(t) as u32,
                    },
                    _ => Pair::EMPTY,
                };
                j += 1;
            }
            i += 1;
        }
    }

    /// A table of `speeds` (at most [`MAX_SPEEDS`], each plausible) and
    /// `rtts` (at most [`MAX_RTTS`]); [`Error::InvalidParams`] otherwise.
    /// Repeated values are kept once.
    pub fn new(speeds: &[LinkSpeed], rtts: &[BaseRtt]) -> Result<Self, Error> {
        let mut r = Reciprocals::EMPTY;
        for &b in speeds {
            r.add_speed(b)?;
        }
        for &t in rtts {
            r.add_rtt(t)?;
        }
        Ok(r)
    }

    /// Adds a link speed; [`Error::InvalidParams`] for an implausible one
    /// or a full table. A speed already there changes nothing.
    pub fn add_speed(&mut self, b: LinkSpeed) -> Result<(), Error> {
        if !b.is_plausible() {
            return Err(Error::InvalidParams);
        }
        add(&mut self.speeds, b.as_mbps(), per_byte(b))?;
        self.pair_up();
        Ok(())
    }

    /// Adds a base RTT; [`Error::InvalidParams`] for a full table. An RTT
    /// already there changes nothing.
    pub fn add_rtt(&mut self, t: BaseRtt) -> Result<(), Error> {
        add(&mut self.rtts, t.as_nanos(), per_rtt(t))?;
        self.pair_up();
        Ok(())
    }

    /// The speeds in the table (in slot order).
    pub fn speeds(&self) -> impl Iterator<Item = LinkSpeed> + '_ {
        self.speeds
            .iter()
            .filter(|e| e.0 != 0)
            .map(|e| LinkSpeed::from_mbps(e.0))
    }

    /// The base RTTs in the table (in slot order).
    pub fn rtts(&self) -> impl Iterator<Item = BaseRtt> + '_ {
        self.rtts
            .iter()
            .filter(|e| e.0 != 0)
            .filter_map(|e| BaseRtt::from_nanos(e.0))
    }

    /// [`per_byte`] of `b`: from the table, or worked out (one division).
    #[inline(always)]
    pub(crate) fn per_byte(&self, b: LinkSpeed) -> u32 {
        match find(&self.speeds, b.as_mbps()) {
            Some(v) => v,
            None => per_byte_cold(b),
        }
    }

    /// [`per_rtt`] of `t` and its slot in the table, for [`Self::pair`];
    /// [`NO_SLOT`] for an RTT not in the table (its reciprocal worked out).
    #[inline(always)]
    pub(crate) fn rtt_entry(&self, t: BaseRtt) -> (u32, u32) {
        match find_slot(&self.rtts, t.as_nanos()) {
            Some(j) => (self.rtts[j].1, j as u32),
            None => (per_rtt_cold(t), NO_SLOT),
        }
    }

    /// The constants of a link of `b` for flows of the RTT in slot
    /// `rtt_slot`, where both are in the table.
    #[inline(always)]
    pub(crate) fn pair(&self, b: LinkSpeed, rtt_slot: u32) -> Option<Pair> {
        if rtt_slot >= NO_SLOT {
            return None;
        }
        let row = self.pairs.get(find_slot(&self.speeds, b.as_mbps())?)?;
        row.get(rtt_slot as usize).copied()
    }
}

impl Default for Reciprocals {
    fn default() -> Self {
        Self::compact()
    }
}

/// A key's home slot: the top three bits of its Fibonacci hash.
#[inline(always)]
const fn home(key: u32) -> usize {
    (key.wrapping_mul(0x9E37_79B1) >> 29) as usize
}

/// The value of `key` (not 0), from its home slot on.
#[inline(always)]
fn find(table: &[(u32, u32); 8], key: u32) -> Option<u32> {
    find_slot(table, key).map(|slot| table[slot].1)
}

/// The slot of `key` (not 0), from its home slot on.
#[inline(always)]
fn find_slot(table: &[(u32, u32); 8], key: u32) -> Option<usize> {
    for slot in home(key)..home(key) + table.len() {
        let (k, _) = table[slot & 7];
        if k == key {
            return Some(slot & 7);
        }
        if k == 0 {
            return None;
        }
    }
    None
}

/// Puts `key` with `value` in the table; a key already there is kept as
/// it is. The table is then laid out as if its keys had been added in
/// order of home slot (and of key within one): its layout depends on which
/// keys it holds, never on the order they came in. So a key costs an
/// engine the same probes however its configuration was made (the C API
/// lists a table's keys in slot order and adds them again), and no key is
/// pushed far from its home by keys added before it (placed as they come,
/// the compact speeds in their own order would leave 1.6 Tb/s five slots
/// from home; placed by home, none is more than two away).
const fn add(table: &mut [(u32, u32); 8], key: u32, value: u32) -> Result<(), Error> {
    let mut held = [(0u32, 0u32); 8];
    let mut n = 0;
    let mut i = 0;
    while i < table.len() {
        if table[i].0 == key {
            return Ok(());
        }
        if table[i].0 != 0 {
            held[n] = table[i];
            n += 1;
        }
        i += 1;
    }
    if n == held.len() {
        return Err(Error::InvalidParams);
    }
    held[n] = (key, value);
    n += 1;
    // Insertion sort by (home, key): at most eight entries.
    let mut a = 1;
    while a < n {
        let mut b = a;
        while b > 0 && sorts_before(held[b].0, held[b - 1].0) {
            let e = held[b];
            held[b] = held[b - 1];
            held[b - 1] = e;
            b -= 1;
        }
        a += 1;
    }
    *table = [(0, 0); 8];
    i = 0;
    while i < n {
        place(table, held[i]);
        i += 1;
    }
    Ok(())
}

/// Whether `a` comes before `b` in a table's order: by home slot, then by
/// key.
const fn sorts_before(a: u32, b: u32) -> bool {
    home(a) < home(b) || (home(a) == home(b) && a < b)
}

/// Puts an entry in its key's home slot or the next free one (the table
/// has one: `add` checked).
const fn place(table: &mut [(u32, u32); 8], entry: (u32, u32)) {
    let mut probe = 0;
    while probe < table.len() {
        let slot = (home(entry.0) + probe) & 7;
        if table[slot].0 == 0 {
            table[slot] = entry;
            return;
        }
        probe += 1;
    }
}

#[cold]
#[inline(never)]
fn per_byte_cold(b: LinkSpeed) -> u32 {
    per_byte(b)
}

#[cold]
#[inline(never)]
fn per_rtt_cold(t: BaseRtt) -> u32 {
    per_rtt(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::vec::Vec;

    #[test]
    fn reciprocals_are_within_their_stated_error() {
        for mbps in [100u32, 999, 10_000, 25_000, 100_000, 1_600_000, 6_400_000] {
            let v = per_byte(LinkSpeed::from_mbps(mbps)) as f64;
            let exact = 8000.0 * (1u64 << 25) as f64 / mbps as f64;
            let tol = if mbps <= 1_600_000 {
                2f64.powf(-18.4)
            } else {
                2f64.powf(-16.4)
            };
            assert!((v - exact).abs() / exact <= tol, "{mbps} Mb/s: {v} vs {exact}");
        }
        for t in [100u32, 1_000, 12_000, 300_000, 1 << 20] {
            let v = per_rtt(BaseRtt::from_nanos(t).unwrap()) as f64;
            let exact = (1u64 << 38) as f64 / t as f64;
            assert!((v - exact).abs() / exact <= 2f64.powf(-19.0), "{t} ns: {v} vs {exact}");
        }
    }

    /// The table only saves the division: a value found there is the one
    /// worked out, and a speed or RTT not there gets it worked out.
    #[test]
    fn a_table_gives_what_the_function_gives() {
        let t = BaseRtt::from_nanos(12_000).unwrap();
        let r = Reciprocals::new(&[LinkSpeed::from_gbps(40)], &[t]).unwrap();
        assert_eq!(r.rtt_entry(t).0, per_rtt(t));
        let other = BaseRtt::from_nanos(7_777).unwrap();
        assert_eq!(r.rtt_entry(other), (per_rtt(other), NO_SLOT));
        for b in [40u32, 100, 10] {
            let b = LinkSpeed::from_gbps(b);
            assert_eq!(r.per_byte(b), per_byte(b));
            assert_eq!(Reciprocals::compact().per_byte(b), per_byte(b));
        }
        assert_eq!(r.speeds().count(), 1);
        assert!(r.rtts().eq([t]));
        // Equal whatever the order the keys were added in.
        let (a, b) = (BaseRtt::from_nanos(1_000).unwrap(), BaseRtt::from_nanos(2_000).unwrap());
        assert_eq!(Reciprocals::new(&[], &[a, b]), Reciprocals::new(&[], &[b, a]));
        assert_ne!(Reciprocals::new(&[], &[a]), Reciprocals::new(&[], &[b]));
    }

    /// How far each key of `table` sits from its home slot.
    fn displacement(table: &[(u32, u32); 8], key: u32) -> usize {
        let slot = table.iter().position(|e| e.0 == key).unwrap();
        (slot + 8 - home(key)) & 7
    }

    proptest::proptest! {
        /// A table's layout is a function of its keys: added in any order
        /// (and listed in slot order and added again, as the C API copies
        /// a configuration), the same keys sit in the same slots, and each
        /// is found where it sits.
        #[test]
        fn the_layout_does_not_depend_on_the_order(
            keys in proptest::sample::subsequence(
                (1u32..=64).map(|g| g * 25_000).collect::<Vec<_>>(), 0..=8,
            ).prop_shuffle(),
            rotate in 0usize..8,
        ) {
            let speeds: Vec<LinkSpeed> = keys.iter().map(|&k| LinkSpeed::from_mbps(k)).collect();
            let mut other = speeds.clone();
            other.reverse();
            let turn = rotate % other.len().max(1);
            other.rotate_left(turn);
            let a = Reciprocals::new(&speeds, &[]).unwrap();
            let b = Reciprocals::new(&other, &[]).unwrap();
            prop_assert_eq!(a.speeds, b.speeds);
            let listed: Vec<LinkSpeed> = a.speeds().collect();
            prop_assert_eq!(Reciprocals::new(&listed, &[]).unwrap().speeds, a.speeds);
            for &s in &speeds {
                prop_assert_eq!(a.per_byte(s), per_byte(s));
            }
        }
    }

    proptest::proptest! {
        /// A pair made with the configuration is what an ACK would work
        /// out: k from the two reciprocals, and the counter's wrap test
        /// from the BDP rounded down the same as from T·B, at the test's
        /// edge too (a unit that puts unit·2^bits at the BDP, one below
        /// or one above it).
        #[test]
        fn a_pair_gives_what_the_hop_would_work_out(
            b in LinkSpeed::MIN_MBPS..=LinkSpeed::MAX_MBPS, t in 100u32..=1 << 20,
            tx_bits in 1u8..=32, nudge in 0u32..3, unit: u16,
        ) {
            let (speed, rtt) = (LinkSpeed::from_mbps(b), BaseRtt::from_nanos(t).unwrap());
            let r = Reciprocals::new(&[speed], &[rtt]).unwrap();
            let (per, slot) = r.rtt_entry(rtt);
            prop_assert_eq!(per, per_rtt(rtt));
            let p = r.pair(speed, slot).unwrap();
            prop_assert_eq!(p.k, link_k(per_byte(speed), per_rtt(rtt)));
            let edge = (p.bdp as i64 >> tx_bits) + nudge as i64 - 1;
            let unit = if unit % 2 == 0 && (1..=u16::MAX as i64).contains(&edge) {
                edge as u16
            } else {
                unit.max(1)
            };
            let w = crate::telemetry::CounterWidths::new(32, tx_bits, unit).unwrap();
            prop_assert_eq!(
                crate::telemetry::counter_wraps_within(w, p.bdp),
                crate::telemetry::tx_counter_may_wrap(w, t, b)
            );
            // Not in the table: no pair, the constants worked out.
            prop_assert!(r.pair(LinkSpeed::from_mbps(b ^ 1), slot).is_none() || b ^ 1 == b);
            prop_assert!(r.pair(speed, NO_SLOT).is_none());
        }
    }

    /// The compact speeds: 100 Gb/s at its home, none more than two slots
    /// from it (in the order they were once added, 1.6 Tb/s was five).
    #[test]
    fn the_compact_speeds_sit_near_home() {
        let r = Reciprocals::compact();
        assert_eq!(displacement(&r.speeds, 100_000), 0);
        for k in 0..7 {
            assert!(displacement(&r.speeds, 25_000 << k) <= 2, "{} Mb/s", 25_000 << k);
        }
    }

    #[test]
    fn a_full_table_or_an_absurd_speed_is_refused() {
        let mut r = Reciprocals::compact();
        assert_eq!(r.add_speed(LinkSpeed::from_mbps(0)), Err(Error::InvalidParams));
        assert_eq!(r.add_speed(LinkSpeed::from_gbps(100)), Ok(()), "already there");
        assert_eq!(r.add_speed(LinkSpeed::from_gbps(10)), Ok(()));
        assert_eq!(r.add_speed(LinkSpeed::from_gbps(40)), Err(Error::InvalidParams));
        assert_eq!(r.speeds().count(), MAX_SPEEDS);
        for t in 1..=MAX_RTTS as u32 {
            r.add_rtt(BaseRtt::from_nanos(1000 * t).unwrap()).unwrap();
        }
        assert_eq!(
            r.add_rtt(BaseRtt::from_nanos(99_999).unwrap()),
            Err(Error::InvalidParams)
        );
    }
}
