//! The hop walk every telemetry reader shares: HPCC++'s MeasureInflight
//! (draft 2022-10 §4.2, Figure 4) and PowerTCP's NORMPOWER (NSDI 2022,
//! Algorithm 1) both compare each hop's sample with the one the flow kept
//! from the ACK before, keep the busiest hop and smooth its load over the
//! base RTT T with weight tau/T. What differs is only the hop's term:
//!
//! ```text
//! HPCC++    u' = min(q, q_prev)/(B·T) + txRate/B            (line 5)
//! PowerTCP  Γ  = λ·(q + B·T)/(B²·T),  λ = (Δq + Δtx)/Δts
//! ```
//!
//! This module does the rest once: the path's signature and which hops a
//! history follows, the timestamps' interval (stale, expired), the byte
//! counter's delta (wrap, reset), the link's constants by speed (its
//! reciprocals, so that no hop divides), the busiest hop by
//! cross-multiplication and its tau. An algorithm supplies a [`HopTerm`]:
//! its term weighted by tau/T in 2^-28 units, on the fast path from those
//! products and, where they do not serve (Δts ≥ T, or a BDP of 1 KiB or
//! less), from quotients.

use crate::error::Error;
use crate::reciprocals::{link_k, Reciprocals, PER_RTT_SHIFT};
use crate::telemetry::{
    counter_wraps_within, stack_signature, tx_bytes_between, tx_bytes_counted, tx_counter_may_wrap, CounterWidths,
    HopHistory, HopSample, TsReach,
};
use crate::units::LinkSpeed;

/// Longest telemetry stack the engine reads: a path's hop count is kept
/// in 4 bits.
pub(crate) const MAX_STACK: usize = 15;

/// One hop's weighted term, as the walk compares hops.
pub(crate) enum HopLoad {
    /// The sample is older than the history: reject the whole stack.
    Stale,
    /// No usable rate (Δts 0, bandwidth 0 or absurd, counter reset).
    Skip,
    /// tau = min(Δts, T) in ns and a = (tau/T)·x in 2^-28 units, x the
    /// algorithm's per-hop term: x = a·T/tau.
    Load { a: u64, tau: u32 },
}

/// The flow's constants for one stack: T, its reciprocal, T's slot in the
/// term's [`Reciprocals`] (`NO_SLOT` if it has none) and the local time
/// since the history was recorded.
#[derive(Clone, Copy)]
pub(crate) struct Flow {
    pub t: u32,
    pub per_rtt: u32,
    pub rtt_slot: u32,
    pub elapsed_ns: u64,
}

impl Flow {
    /// tau/T in 2^-32 units for tau < T, from the reciprocal:
    /// `tau · round(2^38/T) / 2^6`, within a relative 2^-19 (the
    /// reciprocal's) and one unit; tau·per_rtt < 2^20·2^31.4.
    #[inline(always)]
    pub fn fraction(&self, tau: u32) -> u32 {
        let f = (tau as u64 * self.per_rtt as u64) >> (PER_RTT_SHIFT - 32);
        if f >> 32 != 0 {
            u32::MAX
        } else {
            f as u32
        }
    }
}

/// What a stack's hops share when they have the same link speed and
/// counter widths (nearly always, along a path): worked out once per stack
/// for each such pair.
#[derive(Clone, Copy)]
pub(crate) struct Link {
    pub bandwidth: LinkSpeed,
    pub widths: CounterWidths,
    /// The timestamps' reach.
    pub reach: TsReach,
    /// 2^28 / BDP in 2^-22 units per 2^-8 byte ([`link_k`]); 0, too,
    /// where B is not a speed the engine uses ([`LinkSpeed::is_plausible`]):
    /// [`interval`] then skips the hop.
    pub k: u32,
    /// Whether the byte counter can wrap within T at this speed; where it
    /// cannot, [`tx_bytes`] skips that test (see [`tx_counter_may_wrap`]).
    pub counter_may_wrap: bool,
}

impl Link {
    /// The constants of the link `s` was sampled on; `None` when a
    /// timestamp wrap or more of local time has passed since the history
    /// was recorded (the history expired).
    ///
    /// Where the link's speed and the flow's RTT are both in the table,
    /// its constants were made with the configuration ([`Reciprocals`]'s
    /// pairs); otherwise they are worked out here, to the same values.
    #[inline(always)]
    pub fn new(flow: &Flow, rec: &Reciprocals, s: &HopSample) -> Option<Link> {
        let (k, counter_may_wrap) = match rec.pair(s.bandwidth, flow.rtt_slot) {
            Some(p) => (p.k, counter_wraps_within(s.widths, p.bdp)),
            None if s.bandwidth.is_plausible() => (
                link_k(rec.per_byte(s.bandwidth), flow.per_rtt),
                tx_counter_may_wrap(s.widths, flow.t, s.bandwidth.as_mbps()),
            ),
            None => (0, false),
        };
        Some(Link {
            bandwidth: s.bandwidth,
            widths: s.widths,
            reach: TsReach::new(s.widths.ts_mask(), flow.elapsed_ns)?,
            k,
            counter_may_wrap,
        })
    }

    /// [`Link::new`] out of line, for a hop whose link differs from the
    /// one before: inlined in the hop loop, its table lookups kept
    /// registers live across every hop.
    #[cold]
    #[inline(never)]
    fn renewed(flow: Flow, rec: &Reciprocals, s: &HopSample) -> Option<Link> {
        Link::new(&flow, rec, s)
    }
}

/// An algorithm's per-hop term.
pub(crate) trait HopTerm {
    /// One hop against its history as the weighted term a = (tau/T)·x in
    /// 2^-28 units: the term starts from [`interval`] (the checks every
    /// reader makes) and takes what the link sent from [`tx_bytes`], each
    /// where its arithmetic wants it.
    fn load(&self, flow: &Flow, link: &Link, s: &HopSample, h: &HopHistory) -> HopLoad;

    /// The reciprocals of the fabric's link speeds and RTTs the term's
    /// links take their constants from.
    fn reciprocals(&self) -> &Reciprocals;
}

/// Where a hop's interval leaves its term.
pub(crate) enum Interval {
    /// The sample is older than the history: reject the stack.
    Stale,
    /// Nothing to measure (Δts 0, or a link whose speed is not plausible).
    Skip,
    /// Δts ≥ T, or a BDP of 1 KiB or less on a plausible link: the term's
    /// quotients, out of line.
    Slow(u32),
    /// 0 < Δts < T, and f = Δts/T in 2^-32 ([`Flow::fraction`]).
    Fast { dts: u32, f: u32 },
}

/// The checks every reader makes of a hop's timestamps. Guards: Δts = 0,
/// B = 0 or absurd → skip the hop; the interval by [`TsReach`] (older →
/// stale; a wrap or more of local time is found earlier, by [`Link::new`]:
/// expired).
#[inline(always)]
pub(crate) fn interval(flow: &Flow, link: &Link, s: &HopSample, h: &HopHistory) -> Interval {
    let Some(dts) = link.reach.interval(s.ts, h.ts) else {
        return Interval::Stale;
    };
    if dts == 0 {
        return Interval::Skip;
    }
    if dts >= flow.t || link.k == 0 {
        // k is 0 on a link whose speed is not plausible: skipped. (Its
        // speed is the sample's: the walk renews the link where it
        // changes.)
        if !s.bandwidth.is_plausible() {
            return Interval::Skip;
        }
        return Interval::Slow(dts);
    }
    Interval::Fast {
        dts,
        f: flow.fraction(dts),
    }
}

/// The bytes the link of `s` sent in the `dts` ns since `h`, from the
/// transmitted-bytes counters: `None` where they cannot give it (a wrap
/// fits in the interval, or the counter was reset). Where a switch reports
/// its own utilization instead (INT-MD), the term reads that.
#[inline(always)]
pub(crate) fn tx_bytes(link: &Link, s: &HopSample, h: &HopHistory, dts: u32) -> Option<u64> {
    if link.counter_may_wrap {
        tx_bytes_between(s.tx, h.tx, s.widths, dts, s.bandwidth.as_mbps())
    } else {
        tx_bytes_counted(s.tx, h.tx, s.widths, dts as u64 * s.bandwidth.as_mbps() as u64)
    }
}

/// How a walk over a stack's hops ended.
pub(crate) enum Walk {
    /// A hop's sample is older than its history: reject the stack.
    Stale,
    /// A timestamp wrap or more has passed: restart the history.
    Expired,
    /// Every hop looked at.
    Done(Busiest),
}

/// The busiest hop so far: its (a, tau), compared by cross-multiplication.
/// Until a hop gives a load above 0, a is 0 and tau is the longest tau of
/// any measured hop (0 until a hop is measured: every measured hop has
/// tau ≥ 1), so that an idle path pulls the smoothed value down over the
/// longest interval measured. One word fewer than a separate longest tau,
/// which the hop loop has no register for.
pub(crate) struct Busiest {
    pub a: u64,
    pub tau: u32,
}

impl Busiest {
    /// No hop yet.
    fn new() -> Self {
        Busiest { a: 0, tau: 0 }
    }

    /// Whether any hop gave a measurement.
    pub fn measured(&self) -> bool {
        self.tau != 0
    }

    /// The busiest hop's (a, tau); where every measured hop's load was 0,
    /// (0, the longest tau).
    pub fn load(&self) -> (u64, u32) {
        (self.a, self.tau)
    }

    /// `if x' > x` for x' = a/tau and x = self.a/self.tau:
    /// `a · self.tau > self.a · tau` (a < 2^41, tau ≤ 2^20: below 2^61).
    /// Strict, so the first of equally loaded hops stays. While no hop
    /// has a load, the first with one is the busiest, and one without
    /// only lengthens tau.
    #[inline(always)]
    fn offer(&mut self, a: u64, tau: u32) {
        if self.a == 0 {
            if a != 0 {
                self.a = a;
                self.tau = tau;
            } else {
                self.tau = self.tau.max(tau);
            }
        } else if a * self.tau as u64 > self.a * tau as u64 {
            self.a = a;
            self.tau = tau;
        }
    }
}

/// Each hop of `hops` against the history slot of the same rank, the
/// busiest kept.
#[inline(always)]
pub(crate) fn walk<T: HopTerm, const H: usize>(
    term: &T,
    flow: &Flow,
    hops: &[HopSample],
    history: &[HopHistory; H],
) -> Walk {
    let mut busiest = Busiest::new();
    let Some(first) = hops.first() else {
        return Walk::Done(busiest);
    };
    let Some(mut link) = Link::new(flow, term.reciprocals(), first) else {
        return Walk::Expired;
    };
    for (s, h) in hops.iter().zip(history) {
        // The link's constants, worked out again only where they change.
        if link.bandwidth != s.bandwidth || link.widths != s.widths {
            let Some(l) = Link::renewed(*flow, term.reciprocals(), s) else {
                return Walk::Expired;
            };
            link = l;
        }
        match term.load(flow, &link, s, h) {
            HopLoad::Stale => return Walk::Stale,
            HopLoad::Skip => {}
            HopLoad::Load { a, tau } => busiest.offer(a, tau),
        }
    }
    Walk::Done(busiest)
}

/// [`walk`] for a path longer than the history of `H` hops: the hops of
/// `tracked`, in order.
#[cold]
#[inline(never)]
pub(crate) fn walk_tracked<T: HopTerm, const H: usize>(
    term: &T,
    flow: &Flow,
    hops: &[HopSample],
    history: &[HopHistory; H],
    tracked: u16,
) -> Walk {
    let mut followed = [HopSample::default(); H];
    let picked = hops.iter().enumerate().filter(|(i, _)| tracked >> (i & 15) & 1 == 1);
    for (slot, (_, s)) in followed.iter_mut().zip(picked) {
        *slot = *s;
    }
    walk(term, flow, &followed, history)
}

/// Checks a telemetry stack's length before any state is touched (its
/// counter widths were checked where they were made, by
/// `CounterWidths::new`), and gives the hops a history of `H` follows and
/// the path's signature.
#[inline(always)]
pub(crate) fn check_stack<const H: usize>(hops: &[HopSample], first_index: u8) -> Result<(u16, u32), Error> {
    if hops.len() > MAX_STACK {
        return Err(Error::TooManyHops);
    }
    let mask = tracked::<H>(hops);
    Ok((mask, stack_signature(hops, first_index, mask)))
}

/// Which hops of a stack a history of `H` hops follows (bit i for hop i):
/// all of them when they fit; on a longer path, the `H` slowest links (the
/// first on ties; a link whose speed is not plausible counts as fastest).
/// A path's link speeds do not change between samples, so the choice is
/// the same for every sample of a path, and it is part of the path
/// signature. In a fabric of 100 Gb/s hosts and 400 Gb/s cores, the
/// slowest links are the edges, where incast queues build; a congested hop
/// outside the choice is not seen. `H ≥ 8` (the design's longest path)
/// tracks every hop.
#[inline(always)]
pub(crate) fn tracked<const H: usize>(hops: &[HopSample]) -> u16 {
    let n = hops.len().min(MAX_STACK);
    if n <= H {
        return ((1u32 << n) - 1) as u16;
    }
    slowest::<H>(hops)
}

/// The `H` slowest hops of a stack longer than `H` (see [`tracked`]).
#[inline(never)]
#[cold]
fn slowest<const H: usize>(hops: &[HopSample]) -> u16 {
    let speed = |s: &HopSample| {
        if s.bandwidth.is_plausible() {
            s.bandwidth.as_mbps()
        } else {
            u32::MAX
        }
    };
    let mut mask = 0u16;
    for _ in 0..H {
        let pick = hops
            .iter()
            .enumerate()
            .filter(|(i, _)| mask >> i & 1 == 0)
            .min_by_key(|(i, s)| (speed(s), *i));
        if let Some((i, _)) = pick {
            mask |= 1 << i;
        }
    }
    mask
}

/// Stores the samples of `hops` in a history of `H` slots, each as `keep`
/// makes it: hop i in slot i when every hop is followed, else the hops of
/// `tracked`, in order.
#[inline(always)]
pub(crate) fn store<const H: usize>(
    slots: &mut [HopHistory; H],
    hops: &[HopSample],
    tracked: u16,
    keep: impl Fn(&HopSample) -> HopHistory,
) {
    if hops.len() <= H {
        // Every hop is followed (the usual case): hop i in slot i.
        for (h, s) in slots.iter_mut().zip(hops) {
            *h = keep(s);
        }
    } else {
        store_tracked(slots, hops, tracked, keep);
    }
}

/// [`store`] for a path longer than the history.
#[cold]
#[inline(never)]
fn store_tracked<const H: usize>(
    slots: &mut [HopHistory; H],
    hops: &[HopSample],
    tracked: u16,
    keep: impl Fn(&HopSample) -> HopHistory,
) {
    let mut rank = 0;
    for (i, s) in hops.iter().enumerate() {
        if tracked >> (i & 15) & 1 == 0 {
            continue;
        }
        let Some(h) = slots.get_mut(rank) else { break };
        rank += 1;
        *h = keep(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What the walk must pick, straight from its definition (Figure 4,
    /// lines 6-8, and the longest tau where no hop has a load): the first
    /// hop of the highest a/tau, compared exactly as fractions; (0, the
    /// longest tau) where every a is 0; nothing measured where no hop was.
    fn defined(offers: &[(u64, u32)]) -> (bool, u64, u32) {
        let Some(longest) = offers.iter().map(|o| o.1).max() else {
            return (false, 0, 0);
        };
        let mut best: Option<(u64, u32)> = None;
        for &(a, tau) in offers.iter().filter(|o| o.0 > 0) {
            match best {
                Some((ba, bt)) if a as u128 * bt as u128 <= ba as u128 * tau as u128 => {}
                _ => best = Some((a, tau)),
            }
        }
        match best {
            Some((a, tau)) => (true, a, tau),
            None => (true, 0, longest),
        }
    }

    proptest! {
        /// `Busiest` keeps a and tau in two fields (the longest tau lives
        /// in tau while no hop has a load) and gives the defined choice
        /// for any order of offers: loads of 0 among them, ties, a hop
        /// with a load after hops without.
        #[test]
        fn busiest_is_the_defined_choice(
            offers in proptest::collection::vec(
                (prop_oneof![Just(0u64), 1u64..1 << 41, Just((1u64 << 41) - 1)], 1u32..=1 << 20),
                0..8,
            ),
        ) {
            let mut b = Busiest::new();
            for &(a, tau) in &offers {
                b.offer(a, tau);
            }
            let (measured, a, tau) = defined(&offers);
            prop_assert_eq!(b.measured(), measured);
            if measured {
                prop_assert_eq!(b.load(), (a, tau));
            }
        }
    }
}
