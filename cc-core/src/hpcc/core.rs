//! The part of HPCC++ that sender and receiver share: per-hop history,
//! `MeasureInflight` and `ComputeWind` (draft 2022-10 §4.2, Figures 4-5;
//! §6.3.2: "The receiver performs the same functions").
//!
//! State: 32 bytes plus 12 bytes per hop of history.

use bitfield_struct::bitfield;

use super::{HpccConfig, QueueSignal, Reciprocals};
use crate::error::Error;
use crate::event::Decision;
use crate::fixmath::{mul_frac_q32, mul_shr41, ratio_q24, ratio_q24_once};
use crate::hop_walk::{self, Flow, HopLoad, HopTerm, Interval, Link, Walk};
use crate::reciprocals::{PER_BYTE_SHIFT, PER_RTT_SHIFT};
use crate::telemetry::{tx_bytes_between, HopHistory, HopSample, SIGNATURE_MASK};
use crate::units::{BaseRtt, Instant, Utilization, Window};

/// Flags and small counters packed in one word.
#[bitfield(u32, defmt = cfg(feature = "defmt"))]
#[derive(PartialEq, Eq)]
pub(crate) struct Status {
    /// 20-bit signature of the path the history belongs to.
    #[bits(20)]
    pub path_sig: u32,
    /// Number of hops in the history (≤ 15).
    #[bits(4)]
    pub hops: u8,
    /// incStage of Figure 5 (≤ 15).
    #[bits(4)]
    pub inc_stage: u8,
    /// Whether `hops` holds a sample (false until the first telemetry).
    pub has_history: bool,
    /// Probe mode: a probe is out and no response came yet.
    pub probe_outstanding: bool,
    /// The sender has bytes in flight (from the last `Sent` or `Ack`).
    pub in_flight: bool,
    #[bits(1)]
    __: u8,
}

/// Result of `MeasureInflight` for one telemetry stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Measured {
    /// No usable history (first sample, or the path changed): the sample
    /// was recorded and nothing else changed.
    Recorded,
    /// The new normalized inflight U.
    Updated(Utilization),
    /// No hop gave a measurement (every Δts 0, as on a duplicate ACK, or
    /// every hop skipped): the sample was recorded, U is unchanged, and
    /// there is nothing for ComputeWind to act on.
    Unmeasured,
}

/// HPCC++'s per-hop term for the shared walk ([`crate::hop_walk`]):
/// u' of Figure 4, line 5, weighted by tau/T. `SOJOURN` is the queue
/// signal it reads (the configuration's [`QueueSignal`], chosen once a
/// stack rather than tested every hop: the walk's loop has no register
/// to spare for it).
struct Term<'a, const SOJOURN: bool> {
    cfg: &'a HpccConfig,
}

impl<const SOJOURN: bool> Term<'_, SOJOURN> {
    const SIGNAL: QueueSignal = if SOJOURN {
        QueueSignal::Sojourn
    } else {
        QueueSignal::Length
    };
}

/// One hop's term under the configuration's queue signal.
#[inline(always)]
fn hop_load(cfg: &HpccConfig, flow: &Flow, link: &Link, s: &HopSample, h: &HopHistory) -> HopLoad {
    match cfg.queue_signal {
        QueueSignal::Length => Term::<false> { cfg }.load(flow, link, s, h),
        QueueSignal::Sojourn => Term::<true> { cfg }.load(flow, link, s, h),
    }
}

/// The values of a core that define its behaviour, for checkpointing a flow
/// and for testing against the reference model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct HpccSnapshot {
    /// Normalized inflight U.
    pub u: Utilization,
    /// Current window W.
    pub w: Window,
    /// Reference window Wc.
    pub wc: Window,
    /// incStage.
    pub inc_stage: u8,
}

/// HPCC++ state common to the sender and the Rx-HPCC receiver, with room
/// for `H` hops of history. 32 + 12·H bytes, 4-byte aligned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct HpccCore<const H: usize> {
    /// U in 2^-28 units ([`U_EXTRA_BITS`] finer than [`Utilization`]), 41
    /// bits, as two 32-bit halves (low, high): keeps the state 4-byte
    /// aligned, so no padding appears before the sender's lastUpdateSeq (an
    /// 8-byte aligned `u64` here cost 8 bytes a flow). U takes 9 bits of the
    /// high half; its top 23 bits hold when the history was recorded, on
    /// the local clock ([`RECORD_SHIFT`]).
    u: [u32; 2],
    w: Window,
    wc: Window,
    /// W_init = W_max.
    w_init: Window,
    w_ai: Window,
    t: BaseRtt,
    pub(crate) status: Status,
    hops: [HopHistory; H],
}

/// The local time the history was recorded is kept in units of
/// 2^12 ns = 4.096 µs, modulo 2^23 units (34.4 s): enough to tell any
/// telemetry timestamp's wrap (at most 2^32 ns = 4.3 s) apart. A flow idle
/// for more than 34.4 s sees the elapsed time modulo that; the counter
/// checks (no rate above twice the line rate) still refuse a bogus rate.
pub const RECORD_SHIFT: u32 = 12;
const RECORD_BITS: u32 = 23;
const U_HIGH_BITS: u32 = 9;
const U_HIGH_MASK: u32 = (1 << U_HIGH_BITS) - 1;

/// U is kept 4 bits finer than [`Utilization`]'s 2^-24, in 41 bits: below
/// 8192 (a queue of 8191 BDPs; U and u' saturate there). Line 9's EWMA
/// rounds at every step; with tau ≪ T the steps are tiny, and rounding them
/// at 2^-24 stopped U short of u' by up to T/tau LSB: −0.38 % at
/// 1.6 Tb/s, T = 300 µs, 1 KB packets, −1.9 % with 64-byte packets, in
/// effect a higher eta. At 2^-28, rounded to nearest, the shortfall is at
/// most T/(2·tau) units of 2^-28: under 0.06 % for tau ≥ 1 ns, T ≤ 300 µs,
/// and under 0.002 % for tau ≥ 100 ns, T ≤ 1 ms.
pub const U_EXTRA_BITS: u32 = 4;
/// The largest U kept, in 2^-28 units.
const U28_MAX: u64 = (1 << (32 + U_HIGH_BITS)) - 1;

impl<const H: usize> HpccCore<H> {
    /// A core for a path with base RTT `t` and initial window `w_init`
    /// (the path's BDP). W = Wc = W_init, U = 0.
    pub(crate) fn new(cfg: &HpccConfig, t: BaseRtt, w_init: Window) -> Result<Self, Error> {
        cfg.validate()?;
        if w_init < cfg.w_min || w_init.to_bits() > Window::from_bytes(Window::MAX_CONFIG_BYTES).to_bits() {
            return Err(Error::InvalidParams);
        }
        Ok(HpccCore {
            u: [0, 0],
            w: w_init,
            wc: w_init,
            w_init,
            w_ai: cfg.w_ai(w_init, t, None),
            t,
            status: Status::new(),
            hops: [HopHistory::default(); H],
        })
    }

    /// Current window W.
    pub fn window(&self) -> Window {
        self.w
    }

    /// W and R = W/T (Figure 6, line 27), nothing requested: the answer
    /// the sender and the receiver both start from.
    pub fn decision(&self) -> Decision {
        Decision::window_paced(self.w, self.t)
    }

    /// Reference window Wc.
    pub fn reference_window(&self) -> Window {
        self.wc
    }

    /// Normalized inflight U (rounded down to 2^-24).
    pub fn utilization(&self) -> Utilization {
        Utilization::from_bits(self.u28() >> U_EXTRA_BITS)
    }

    /// U in 2^-28 units.
    fn u28(&self) -> u64 {
        self.u[0] as u64 | ((self.u[1] & U_HIGH_MASK) as u64) << 32
    }

    /// Sets U in 2^-28 units, saturating at [`U28_MAX`].
    fn set_u28(&mut self, raw: u64) {
        let raw = raw.min(U28_MAX);
        self.u = [
            raw as u32,
            (self.u[1] & !U_HIGH_MASK) | ((raw >> 32) as u32 & U_HIGH_MASK),
        ];
    }

    fn set_utilization(&mut self, u: Utilization) {
        self.set_u28(u.to_bits().saturating_mul(1 << U_EXTRA_BITS));
    }

    fn set_recorded_at(&mut self, now: Instant) {
        let units = (now.as_nanos() >> RECORD_SHIFT) as u32 & ((1 << RECORD_BITS) - 1);
        self.u[1] = (self.u[1] & U_HIGH_MASK) | units << U_HIGH_BITS;
    }

    /// Local ns since the history was recorded, modulo 2^35 ns, to 4.096 µs.
    fn elapsed_since_record(&self, now: Instant) -> u64 {
        let then = self.u[1] >> U_HIGH_BITS;
        let units = ((now.as_nanos() >> RECORD_SHIFT) as u32).wrapping_sub(then) & ((1 << RECORD_BITS) - 1);
        (units as u64) << RECORD_SHIFT
    }

    /// W_init, which is also W_max.
    pub fn initial_window(&self) -> Window {
        self.w_init
    }

    /// W_ai in use.
    pub fn additive_increase(&self) -> Window {
        self.w_ai
    }

    /// incStage.
    pub fn inc_stage(&self) -> u8 {
        self.status.inc_stage()
    }

    /// Base RTT T.
    pub fn base_rtt(&self) -> BaseRtt {
        self.t
    }

    /// The stored per-hop history (empty before the first sample).
    pub fn history(&self) -> &[HopHistory] {
        let n = if self.status.has_history() {
            self.status.hops() as usize
        } else {
            0
        };
        &self.hops[..n.min(H)]
    }

    /// U, W, Wc and incStage.
    pub fn snapshot(&self) -> HpccSnapshot {
        HpccSnapshot {
            u: self.utilization(),
            w: self.w,
            wc: self.wc,
            inc_stage: self.status.inc_stage(),
        }
    }

    /// Restores U, W, Wc and incStage; refuses windows outside
    /// [W_min, W_init] and incStage above 15.
    pub fn restore(&mut self, cfg: &HpccConfig, s: HpccSnapshot) -> Result<(), Error> {
        let ok = |w: Window| w >= cfg.w_min && w <= self.w_init;
        if !ok(s.w) || !ok(s.wc) || s.inc_stage > HpccConfig::MAX_STAGE_LIMIT {
            return Err(Error::InvalidParams);
        }
        self.set_utilization(s.u);
        self.w = s.w;
        self.wc = s.wc;
        self.status.set_inc_stage(s.inc_stage);
        Ok(())
    }

    /// Sets W_ai from a receiver-reported number of flows (§5, §6.3.2).
    pub(crate) fn set_flow_count(&mut self, cfg: &HpccConfig, n: u16) -> Result<(), Error> {
        if n == 0 {
            return Err(Error::InvalidParams);
        }
        self.w_ai = cfg.w_ai(self.w_init, self.t, Some(n));
        Ok(())
    }

    /// Sets W (and Wc) from Rx-HPCC feedback, clamped to [W_min, W_init].
    pub(crate) fn apply_window(&mut self, cfg: &HpccConfig, w: Window) {
        self.w = w.clamp_to(cfg.w_min, self.w_init);
        self.wc = self.w;
    }

    /// Checks a telemetry stack's length before any state is touched (its
    /// counter widths were checked where they were made, by
    /// `CounterWidths::new`), and gives the hops the history follows and
    /// the path's signature.
    #[inline(always)]
    fn check_stack(hops: &[HopSample], first_index: u8) -> Result<(u16, u32), Error> {
        hop_walk::check_stack::<H>(hops, first_index)
    }

    /// Stores `hops` as the history L (Figure 6, line 27: `L = ack.L`) of
    /// a new path (or a restarted one), recorded at `now`: the samples and
    /// the path's signature and hop count.
    #[inline(never)]
    fn record(&mut self, cfg: &HpccConfig, now: Instant, hops: &[HopSample], tracked: u16, sig: u32) {
        self.store(cfg, now, hops, tracked);
        self.status.set_path_sig(sig & SIGNATURE_MASK);
        // check_stack keeps hops.len() ≤ 15; the mask keeps the setter in range.
        self.status.set_hops((hops.len() & 0xF) as u8);
        self.status.set_has_history(true);
    }

    /// Stores the samples of `hops` as the history of the path it already
    /// holds, recorded at `now` (the signature and hop count stay). A
    /// stack of one hop is written in place: where the compiler knows the
    /// length (the sender's one-hop path, the probe response) neither the
    /// test nor a call remains. Any other goes out of line, to
    /// [`Self::store_any`]: inlined, its registers weigh on
    /// MeasureInflight's loop.
    #[inline(always)]
    fn store(&mut self, cfg: &HpccConfig, now: Instant, hops: &[HopSample], tracked: u16) {
        match (hops, self.hops.first_mut()) {
            ([hop], Some(slot)) => {
                *slot = kept(cfg.queue_signal, hop);
                self.set_recorded_at(now);
            }
            _ => self.store_any(cfg, now, hops, tracked),
        }
    }

    /// [`Self::store`] of a stack of any length.
    #[inline(never)]
    fn store_any(&mut self, cfg: &HpccConfig, now: Instant, hops: &[HopSample], tracked: u16) {
        self.set_recorded_at(now);
        let signal = cfg.queue_signal;
        hop_walk::store(&mut self.hops, hops, tracked, |s| kept(signal, s));
    }

    /// The hop with the highest inflight, for the probe responder (§7.1:
    /// "chooses the link with the highest inflight bytes").
    ///
    /// With history for this path, inflight is u' of Figure 4 line 5. On the
    /// first probe of a path (no rate yet) it is the queuing delay:
    /// `qlen·8000/B`, or the sojourn time itself in the §9.3 variant. With
    /// no load anywhere, the slowest link. Ties go to the hop nearest the
    /// sender. `sticky`, the hop reported last time, is kept (on the same
    /// path) while its load is at least 7/8 of the highest: the sender follows one hop's history
    /// and must start it again whenever the reported hop changes, so two
    /// equally loaded hops trading places by noise would leave it
    /// measuring nothing. Reads the history, changes nothing.
    pub(crate) fn bottleneck(
        &self,
        cfg: &HpccConfig,
        now: Instant,
        hops: &[HopSample],
        sticky: Option<usize>,
    ) -> Result<usize, Error> {
        let (mask, sig) = Self::check_stack(hops, 0)?;
        if hops.is_empty() {
            return Err(Error::NotApplicable);
        }
        let known =
            self.status.has_history() && self.status.path_sig() == sig && self.status.hops() as usize == hops.len();
        let flow = self.flow(cfg, now);
        // Loads as (a, tau), u' = a/tau, compared by cross-multiplication
        // (in 128 bits: the 7/8 test's factors overflow 64).
        let busier = |x: (u64, u32), y: (u64, u32)| x.0 as u128 * y.1 as u128 > y.0 as u128 * x.1 as u128;
        let mut best = (0usize, (0u64, 1u32));
        let mut sticky_load = None;
        let mut rank = 0usize;
        for (i, s) in hops.iter().enumerate() {
            let in_history = mask >> i & 1 == 1;
            let load = if known && in_history {
                rank += 1;
                let Some(h) = self.hops.get(rank - 1) else { continue };
                // An expired history has no rate to show either.
                match Link::new(&flow, &cfg.reciprocals, s).map(|link| hop_load(cfg, &flow, &link, s, h)) {
                    Some(HopLoad::Stale) => return Err(Error::StaleTelemetry),
                    None | Some(HopLoad::Skip) => (0, 1),
                    Some(HopLoad::Load { a, tau }) => (a, tau),
                }
            } else if known {
                // A hop the history does not follow has no rate to show.
                (0, 1)
            } else if s.bandwidth.is_plausible() {
                // The queuing delay, in one scale for every hop (ns · 2^24):
                // bytes times the link's time a byte, or the sojourn time
                // itself (a time already) for the §9.3 variant.
                let delay = match cfg.queue_signal {
                    QueueSignal::Length => mul_shr41(
                        s.qlen_bytes as u64,
                        cfg.reciprocals.per_byte(s.bandwidth),
                        PER_BYTE_SHIFT - 24,
                    ),
                    QueueSignal::Sojourn => (s.sojourn_ns as u64) << 24,
                };
                (delay, 1)
            } else {
                (0, 1)
            };
            if busier(load, best.1) {
                best = (i, load);
            }
            if sticky == Some(i) {
                sticky_load = Some(load);
            }
        }
        if let (true, Some(i), Some(load)) = (known, sticky, sticky_load) {
            // load ≥ 7/8 · best.
            if load.0 > 0 && 8 * load.0 as u128 * (best.1).1 as u128 >= 7 * (best.1).0 as u128 * load.1 as u128 {
                return Ok(i);
            }
        }
        if (best.1).0 == 0 {
            let slowest = hops
                .iter()
                .enumerate()
                .filter(|(_, s)| s.bandwidth.is_plausible())
                .min_by_key(|(i, s)| (s.bandwidth, *i))
                .map(|(i, _)| i);
            return Ok(slowest.unwrap_or(0));
        }
        Ok(best.0)
    }

    /// The flow's constants for one stack at local time `now`.
    #[inline(always)]
    fn flow(&self, cfg: &HpccConfig, now: Instant) -> Flow {
        let (per_rtt, rtt_slot) = cfg.reciprocals.rtt_entry(self.t);
        Flow {
            t: self.t.as_nanos(),
            per_rtt,
            rtt_slot,
            elapsed_ns: self.elapsed_since_record(now),
        }
    }

    /// The walk of `hops` against the history with `term`: hop i against
    /// slot i, or the hops of `tracked` on a path longer than the history.
    #[inline(always)]
    fn walk<T: HopTerm>(&self, term: &T, flow: &Flow, hops: &[HopSample], tracked: u16) -> Walk {
        if hops.len() <= H {
            // Every hop followed (the usual case): hop i against slot i.
            hop_walk::walk(term, flow, hops, &self.hops)
        } else {
            hop_walk::walk_tracked(term, flow, hops, &self.hops, tracked)
        }
    }

    /// `MeasureInflight` (draft 2022-10 §4.2, Figure 4):
    ///
    /// ```text
    /// 1: Function MeasureInflight(ack)
    /// 2:    u = 0;
    /// 3:    for each link i on the path do
    /// 4:       txRate = (ack.L[i].txBytes-L[i].txBytes)/(ack.L[i].ts-L[i].ts);
    /// 5:       u' = min(ack.L[i].qlen,L[i].qlen)/(ack.L[i].B*T) + txRate/ack.L[i].B;
    /// 6:       if u' > u then
    /// 7:          u = u'; tau = ack.L[i].ts - L[i].ts;
    /// 8:    tau = min(tau, T);
    /// 9:    U = (1 - tau/T)*U + tau/T*u;
    /// 10:   return U;
    /// ```
    ///
    /// Without a division. Line 9 needs u' only weighted by tau/T, and with
    /// tau = Δts ≤ T the hop's own interval cancels out of the rate term:
    ///
    /// ```text
    /// a = (tau/T)·u' = (q·tau/T + Δtx) / (B·T)         q, Δtx in bytes, B·T in bytes
    /// u' > u  ⇔  a / tau > a_u / tau_u  ⇔  a·tau_u > a_u·tau
    /// U = U − U·tau/T + a
    /// ```
    /// so each hop (`hop_load`) takes products by the reciprocals of B
    /// and T ([`super::Reciprocals`]), the busiest hop is found by
    /// cross-multiplication (`Busiest`), and line 9 takes one more
    /// product. Only a hop with Δts ≥ T (after an idle gap; tau = T and
    /// U = u') or a BDP of 1 KiB or less takes `slow_load`, which divides.
    ///
    /// The draft leaves tau undefined when no hop has u' > 0. A measured
    /// zero load is still a measurement: tau is then the longest Δts among
    /// the hops that gave a load, so an idle path pulls U down (keeping U
    /// left a flow that had seen U = 2 at a window of W_ai/(1 − eta/U) for
    /// good). When every hop was skipped, U is kept.
    ///
    /// U is kept in 2^-28 units (`U_EXTRA_BITS`) below 8192, a queue of
    /// 8191 BDPs, where u' saturates too. The first sample, or one from a
    /// different path (hop count, identity, link speed or counter widths
    /// changed), is only recorded, and so is one that arrives a whole
    /// timestamp wrap or more after the history was recorded (`now` is the
    /// local clock: it tells a long gap from an older sample). A stale
    /// stack (older timestamps) changes nothing.
    ///
    /// Inlined into its callers (the sender's `apply_telemetry`, the
    /// receiver's and the probe's handlers), which then need one frame
    /// where they needed two (`nic-firmware/scripts/profile.sh rx-hpcc-5`
    /// shows the difference).
    #[inline(always)]
    pub fn measure_inflight(
        &mut self,
        cfg: &HpccConfig,
        now: Instant,
        hops: &[HopSample],
        first_index: u8,
    ) -> Result<Measured, Error> {
        let (tracked, sig) = Self::check_stack(hops, first_index)?;
        if !self.status.has_history() || self.status.path_sig() != sig || self.status.hops() as usize != hops.len() {
            self.record(cfg, now, hops, tracked, sig);
            return Ok(Measured::Recorded);
        }
        let flow = self.flow(cfg, now);
        let walked = match cfg.queue_signal {
            QueueSignal::Length => self.walk(&Term::<false> { cfg }, &flow, hops, tracked),
            QueueSignal::Sojourn => self.walk(&Term::<true> { cfg }, &flow, hops, tracked),
        };
        let busiest = match walked {
            Walk::Stale => return Err(Error::StaleTelemetry),
            Walk::Expired => {
                self.record(cfg, now, hops, tracked, sig);
                return Ok(Measured::Recorded);
            }
            Walk::Done(b) => b,
        };
        if !busiest.measured() {
            self.store(cfg, now, hops, tracked);
            return Ok(Measured::Unmeasured);
        }
        // Line 8 is in each hop's tau already; line 9, rounded to nearest
        // ([`mul_frac_q32`], never above U). U·(1 − tau/T) as
        // U − U·(tau/T) while tau ≤ T/2, else as U·((T − tau)/T): the
        // reciprocal of T is within a relative 2^-19, and each form
        // carries that error only on a term no larger than the result
        // (U − U·(tau/T) with tau near T left a small U 4 LSB of 2^-24
        // off at T near 2^20 ns).
        let (a, tau) = busiest.load();
        let u = self.u28();
        let u_new = if tau >= flow.t {
            a
        } else if tau <= flow.t / 2 {
            u - mul_frac_q32(u, flow.fraction(tau)) + a
        } else {
            mul_frac_q32(u, flow.fraction(flow.t - tau)) + a
        };
        self.set_u28(u_new);
        self.store(cfg, now, hops, tracked);
        Ok(Measured::Updated(self.utilization()))
    }

    /// `ComputeWind` (draft 2022-10 §4.2, Figure 5):
    ///
    /// ```text
    /// 11: Function ComputeWind(U, updateWc)
    /// 12:    if U >= eta or incStage >= maxStage then
    /// 13:       W = Wc / (U/eta) + W_ai;
    /// 14:       if updateWc then
    /// 15:          incStage = 0; Wc = W ;
    /// 16:    else
    /// 17:       W = Wc + W_ai ;
    /// 18:       if updateWc then
    /// 19:          incStage++; Wc = W ;
    /// 20:    return W
    /// ```
    ///
    /// Line 13 in integers: the factor eta/U in 2^-24 by `ratio_q24_once`
    /// (the event's one division, within a relative 2^-15, rounded to
    /// nearest), then `W_raw = (Wc_raw · factor + 2^23) >> 24 + W_ai_raw`
    /// (Wc_raw < 2^32, factor < 2^32: product < 2^64), rounded to nearest:
    /// Wc is fed back into itself every RTT, and a rounding that always
    /// went down made windows drift low against the reference. A factor
    /// of 2^32 or more (U below eta/256) takes the product in 64 bits,
    /// out of the usual path, saturating; U = 0 (possible when maxStage =
    /// 0) is the formula's limit, infinity, which the clamp turns into
    /// W_init, as it does any product past 2^64. W is clamped to [W_min, W_init] before it becomes Wc. incStage
    /// saturates at 15 (maxStage ≤ 15, so line 12's test is unaffected).
    #[inline(always)]
    pub fn compute_wind(&mut self, cfg: &HpccConfig, u: Utilization, update_wc: bool) -> Window {
        let stage = self.status.inc_stage();
        let wc = self.wc.to_bits() as u64;
        let w_ai = self.w_ai.to_bits() as u64;
        let md = u.to_bits() >= cfg.eta.to_bits() as u64 || stage >= cfg.max_stage;
        let raw = if md {
            let scale = ratio_q24_once(cfg.eta.to_bits(), u.to_bits());
            let scaled = if scale >> 32 != 0 {
                scaled_wide(wc, scale)
            } else {
                (wc * scale + (1 << 23)) >> 24
            };
            scaled.saturating_add(w_ai)
        } else {
            wc + w_ai
        };
        let w = Window::from_bits_saturating(raw).clamp_to(cfg.w_min, self.w_init);
        self.w = w;
        if update_wc {
            self.wc = w;
            let next = if md {
                0
            } else {
                (stage + 1).min(HpccConfig::MAX_STAGE_LIMIT)
            };
            self.status.set_inc_stage(next);
        }
        w
    }
}

/// `(wc · scale + 2^23) >> 24` where the factor `scale` is 2^32 or more
/// (U below eta/256): Wc·eta/U is below W_init only for a Wc of less than
/// W_init/256, such as W_min after a deep cut. Saturates at `u64::MAX`
/// (U = 0's infinite factor included), which the clamp makes W_init.
#[inline(always)]
fn scaled_wide(wc: u64, scale: u64) -> u64 {
    // wc < 2^32: wc·scale = wc·s_hi·2^32 + wc·s_lo, each product < 2^64.
    let hi = wc * (scale >> 32);
    let lo = wc * (scale as u32 as u64);
    if hi >> 32 != 0 {
        return u64::MAX;
    }
    match (hi << 32).checked_add(lo) {
        Some(p) => (p >> 24) + (p >> 23 & 1),
        None => u64::MAX,
    }
}

/// One hop against its history (Figure 4, lines 4-5, and tau of line 7
/// capped by line 8), as the weighted term a = (tau/T)·u' in 2^-28 units;
/// the checks before it are the shared walk's ([`hop_walk::interval`], [`hop_walk::tx_bytes`]):
///
/// ```text
/// f  = tau/T                          2^-32, Flow::fraction
/// a  = (q·f + Δtx) · 2^28/(B·T)       B·T in bytes; the bytes in 2^-8 units times Link::k
///    + f·sojourn/T                    §9.3 variant, instead of q·f
///    + f·util                         a switch-reported txRate/B (INT-MD), instead of Δtx
/// ```
/// Ranges, for 0 < Δts < T ≤ 2^20: q·f < 2^32·2^-8 bytes in 2^-8 units
/// (< 2^40); Δtx < 2^31 by `tx_bytes_between` (at most twice what the
/// link sends in Δts < T, plus a unit, and B·T/8000 < 2^30 bytes), so the
/// bytes are below 2^41 in 2^-8 units and [`mul_shr41`] takes them. Every
/// term rounds down by less than one unit of 2^-28.
impl<const SOJOURN: bool> HopTerm for Term<'_, SOJOURN> {
    #[inline(always)]
    fn load(&self, flow: &Flow, link: &Link, s: &HopSample, h: &HopHistory) -> HopLoad {
        let (dts, f) = match hop_walk::interval(flow, link, s, h) {
            Interval::Stale => return HopLoad::Stale,
            Interval::Skip => return HopLoad::Skip,
            Interval::Slow(dts) => return self.slow(flow, s, h, dts),
            Interval::Fast { dts, f } => (dts, f),
        };
        let q = queue_signal(Self::SIGNAL, s).min(h.queue) as u64;
        let qf8 = (q * f as u64) >> 24;
        let (mut bytes8, mut a) = match Self::SIGNAL {
            QueueSignal::Length => (qf8, 0),
            QueueSignal::Sojourn => (0, mul_shr41(qf8, flow.per_rtt, PER_RTT_SHIFT - 20)),
        };
        match s.tx_utilization.get() {
            Some(util) => a += (util.to_bits() as u64 * f as u64) >> (32 - U_EXTRA_BITS),
            None => {
                let Some(dtx) = hop_walk::tx_bytes(link, s, h, dts) else {
                    return HopLoad::Skip;
                };
                bytes8 += dtx << 8;
            }
        }
        a += mul_shr41(bytes8, link.k, 22);
        HopLoad::Load {
            a: a.min(saturated(flow, dts)),
            tau: dts,
        }
    }

    #[inline(always)]
    fn reciprocals(&self) -> &Reciprocals {
        &self.cfg.reciprocals
    }
}

impl<const SOJOURN: bool> Term<'_, SOJOURN> {
    /// Where the products do not serve: Δts ≥ T (tau = T, and a = u'
    /// itself), or a BDP of 1 KiB or less. u' of line 5 by its two
    /// quotients ([`ratio_q24`]):
    ///
    /// ```text
    /// queue term = min(q) · 8000 / (B · T)          q ≤ 2^32 → num ≤ 2^45, den ≤ 2^43
    /// rate term  = Δtx · 8000 / (Δts · B)           Δtx ≤ 2^31·2^16 → num ≤ 2^60, den ≤ 2^55
    ///              or the reported tx utilization (INT-MD), already txRate/B
    /// sojourn    = min(s) / T                        (§9.3 variant)
    /// ```
    /// each in 2^-24 units, rounded down, saturating at 2^40.
    #[cold]
    #[inline(never)]
    fn slow(&self, flow: &Flow, s: &HopSample, h: &HopHistory, dts: u32) -> HopLoad {
        let b = s.bandwidth.as_mbps() as u64;
        let t = flow.t as u64;
        let q = queue_signal(Self::SIGNAL, s).min(h.queue) as u64;
        // Denominators are ≥ 100 · 100 > 0 (plausible B, valid T, dts > 0):
        // the `None` arms cannot happen, and would only zero a term.
        let queue_term = match Self::SIGNAL {
            QueueSignal::Length => ratio_q24(q * 8000, b * t),
            QueueSignal::Sojourn => ratio_q24(q, t),
        }
        .unwrap_or(0);
        let rate_term = match s.tx_utilization.get() {
            Some(util) => util.to_bits() as u64,
            None => {
                let Some(dtx_bytes) = tx_bytes_between(s.tx, h.tx, s.widths, dts, b as u32) else {
                    return HopLoad::Skip;
                };
                ratio_q24(dtx_bytes * 8000, dts as u64 * b).unwrap_or(0)
            }
        };
        let u = ((queue_term + rate_term) << U_EXTRA_BITS).min(U28_MAX);
        let tau = dts.min(flow.t);
        let a = if u == U28_MAX {
            saturated(flow, tau)
        } else if dts >= flow.t {
            u
        } else {
            mul_frac_q32(u, flow.fraction(dts))
        };
        HopLoad::Load { a, tau }
    }
}

/// A hop at the cap, as the weighted term a = (tau/T)·8192 in 2^-28
/// units: u' saturates at 8192 = 2^41 units (a queue of 8191 BDPs), each
/// hop's before the busiest is chosen (the reference caps it there too).
/// Taken as `tau · per_rtt · 2^3` (per_rtt = round(2^38/T)), exactly
/// proportional to tau, so that hops at the cap tie exactly in the
/// busiest hop's cross-multiplication and the first of them on the path
/// stays: the rule the `f64` reference keeps. tau ≤ T ≤ 2^20 and
/// per_rtt·T < 2^38 + 2^19: below 2^41 + 2^22, which the core's U
/// saturates at once. The product is `Flow::fraction`'s, shared.
#[inline(always)]
fn saturated(flow: &Flow, tau: u32) -> u64 {
    const SHIFT: u32 = U_HIGH_BITS + 32 - PER_RTT_SHIFT;
    (tau as u64 * flow.per_rtt as u64) << SHIFT
}

/// What the history keeps of a sample (Figure 6, line 27: `L = ack.L`).
#[inline(always)]
fn kept(signal: QueueSignal, s: &HopSample) -> HopHistory {
    HopHistory {
        ts: s.ts,
        tx: s.tx,
        queue: queue_signal(signal, s),
    }
}

/// The queue signal a sample contributes under `signal`.
#[inline(always)]
fn queue_signal(signal: QueueSignal, s: &HopSample) -> u32 {
    match signal {
        QueueSignal::Length => s.qlen_bytes,
        QueueSignal::Sojourn => s.sojourn_ns,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::CounterWidths;
    use crate::testing::{hop, T_NS};
    use crate::units::LinkSpeed;

    fn core1() -> (HpccConfig, HpccCore<5>) {
        let cfg = HpccConfig::draft_default();
        let t = BaseRtt::from_nanos(T_NS).unwrap();
        let w_init = Window::from_bytes(150_000);
        (cfg, HpccCore::new(&cfg, t, w_init).unwrap())
    }

    fn as_f64(u: Utilization) -> f64 {
        u.to_bits() as f64 / (1u64 << 24) as f64
    }

    /// U settles within 0.1 % of the true load at the corners of the
    /// documented range, where each ACK's step is tiny (tau ≪ T): a link
    /// held at 95 % of 1.6 Tb/s with T = 300 µs, with byte counters and
    /// with 64-byte counter units, and 400 Gb/s with T = 2^20 ns; one
    /// 1 KB packet per ACK. Every rounding of the step is below 2^-28, so
    /// its bias over T/tau steps stays far below 0.1 %.
    #[test]
    fn u_settles_within_a_tenth_of_a_percent_at_the_ranges_corners() {
        for (gbps, t_ns, unit) in [(1600u32, 300_000u32, 1u16), (1600, 300_000, 64), (400, 1 << 20, 64)] {
            let cfg = HpccConfig::draft_default();
            let t = BaseRtt::from_nanos(t_ns).unwrap();
            let b = LinkSpeed::from_gbps(gbps);
            let mut c = HpccCore::<1>::new(&cfg, t, Window::from_bytes(1 << 20)).unwrap();
            let widths = CounterWidths::new(32, 32, unit).unwrap();
            // A 1 KB packet every 1000·8000/B ns at 95 % load: 5.26 ns at 1.6 Tb/s.
            let gap_ps = 1000u64 * 8_000_000 / b.as_mbps() as u64 * 100 / 95;
            let (mut now_ps, mut sent) = (0u64, 0u64);
            let steps = 8 * t_ns as u64 * 1000 / gap_ps;
            for _ in 0..steps {
                now_ps += gap_ps;
                sent += 1000;
                let s = HopSample {
                    ts: (now_ps / 1000) as u32,
                    tx: (sent / unit as u64) as u32,
                    bandwidth: b,
                    widths,
                    ..HopSample::default()
                };
                c.measure_inflight(&cfg, Instant::from_nanos(now_ps / 1000), &[s], 0)
                    .unwrap();
            }
            let u = as_f64(c.utilization());
            assert!(
                (u - 0.95).abs() <= 0.95e-3,
                "{gbps} Gb/s, T {t_ns} ns, unit {unit}: U {u}"
            );
        }
    }

    #[test]
    fn first_sample_only_records() {
        let (cfg, mut c) = core1();
        assert_eq!(
            c.measure_inflight(&cfg, Instant::ZERO, &[hop(0, 0, 0)], 0),
            Ok(Measured::Recorded)
        );
        assert_eq!(c.utilization(), Utilization::ZERO);
        assert_eq!(c.history().len(), 1);
    }

    /// One 100 Gb/s hop, T = 12 us, a standing queue of one BDP (150 kB) and
    /// the link sending at full rate: u' = 1 + 1 = 2, and with tau = T the
    /// EWMA takes u' whole.
    #[test]
    fn bdp_queue_at_full_rate_gives_u_two() {
        let (cfg, mut c) = core1();
        c.measure_inflight(&cfg, Instant::ZERO, &[hop(0, 0, 150_000)], 0)
            .unwrap();
        // 12 us at 100 Gb/s = 150 kB transmitted.
        let m = c
            .measure_inflight(&cfg, Instant::ZERO, &[hop(T_NS, 150_000, 150_000)], 0)
            .unwrap();
        let Measured::Updated(u) = m else {
            panic!("expected an update")
        };
        assert!((as_f64(u) - 2.0).abs() < 1e-6, "U = {}", as_f64(u));
    }

    /// tau = T/4 moves U a quarter of the way to u'.
    #[test]
    fn ewma_weight_is_tau_over_t() {
        let (cfg, mut c) = core1();
        c.measure_inflight(&cfg, Instant::ZERO, &[hop(0, 0, 0)], 0).unwrap();
        // 3 us at full rate, no queue: u' = 1, tau = T/4.
        c.measure_inflight(&cfg, Instant::ZERO, &[hop(3_000, 37_500, 0)], 0)
            .unwrap();
        assert!((as_f64(c.utilization()) - 0.25).abs() < 1e-6);
    }

    /// The queue term takes min(current, last) qlen (line 5).
    #[test]
    fn queue_term_uses_min_of_current_and_last() {
        let (cfg, mut c) = core1();
        c.measure_inflight(&cfg, Instant::ZERO, &[hop(0, 0, 30_000)], 0)
            .unwrap();
        c.measure_inflight(&cfg, Instant::ZERO, &[hop(T_NS, 0, 300_000)], 0)
            .unwrap();
        // min(30 kB, 300 kB) / 150 kB = 0.2; no bytes sent.
        assert!((as_f64(c.utilization()) - 0.2).abs() < 1e-6);
    }

    /// The hop with the largest u' sets U and tau (lines 6-7).
    #[test]
    fn bottleneck_hop_wins() {
        let (cfg, mut c) = core1();
        let a0 = hop(0, 0, 0);
        let mut b0 = hop(0, 0, 0);
        b0.id = 2;
        b0.bandwidth = LinkSpeed::from_gbps(400);
        c.measure_inflight(&cfg, Instant::ZERO, &[a0, b0], 0).unwrap();
        // Hop 0: half rate. Hop 1 (400G): same bytes, an eighth of capacity.
        let a1 = hop(T_NS, 75_000, 0);
        let mut b1 = hop(T_NS, 75_000, 0);
        b1.id = 2;
        b1.bandwidth = LinkSpeed::from_gbps(400);
        c.measure_inflight(&cfg, Instant::ZERO, &[a1, b1], 0).unwrap();
        assert!((as_f64(c.utilization()) - 0.5).abs() < 1e-6);
    }

    #[test]
    fn zero_bandwidth_and_zero_dts_hops_are_skipped() {
        let (cfg, mut c) = core1();
        c.measure_inflight(&cfg, Instant::ZERO, &[hop(0, 0, 0)], 0).unwrap();
        let mut bad = hop(T_NS, 150_000, 0);
        bad.bandwidth = LinkSpeed::from_mbps(0);
        // A different bandwidth is a path change: recorded only.
        assert_eq!(
            c.measure_inflight(&cfg, Instant::ZERO, &[bad], 0),
            Ok(Measured::Recorded)
        );
        let mut bad2 = bad;
        bad2.ts += T_NS;
        bad2.tx += 150_000;
        // Same (zero) bandwidth again: the hop is skipped, nothing measured.
        assert_eq!(
            c.measure_inflight(&cfg, Instant::ZERO, &[bad2], 0),
            Ok(Measured::Unmeasured)
        );
        // ts delta 0: skipped.
        let (cfg, mut c) = core1();
        c.measure_inflight(&cfg, Instant::ZERO, &[hop(5, 0, 0)], 0).unwrap();
        assert_eq!(
            c.measure_inflight(&cfg, Instant::ZERO, &[hop(5, 1_000_000, 0)], 0),
            Ok(Measured::Unmeasured)
        );
    }

    #[test]
    fn wrapped_counters_give_the_true_delta() {
        let (cfg, mut c) = core1();
        let w = CounterWidths::new(24, 20, 64).unwrap();
        let mut a = hop((1 << 24) - 6_000, (1 << 20) - 1_000, 0);
        a.widths = w;
        c.measure_inflight(&cfg, Instant::ZERO, &[a], 0).unwrap();
        // 12 us later, 150 kB later: 150000/64 = 2343.75 units → use 2344 units.
        let mut b = hop(6_000, 1_344, 0);
        b.widths = w;
        c.measure_inflight(&cfg, Instant::ZERO, &[b], 0).unwrap();
        let expect = 2_344.0 * 64.0 / 150_000.0;
        assert!((as_f64(c.utilization()) - expect).abs() < 1e-6);
    }

    #[test]
    fn older_timestamps_are_stale_and_change_nothing() {
        let (cfg, mut c) = core1();
        c.measure_inflight(&cfg, Instant::ZERO, &[hop(10_000, 0, 0)], 0)
            .unwrap();
        let before = c;
        assert_eq!(
            c.measure_inflight(&cfg, Instant::ZERO, &[hop(9_000, 5, 0)], 0),
            Err(Error::StaleTelemetry)
        );
        assert_eq!(c, before);
    }

    #[test]
    fn too_many_hops_are_an_error() {
        let (cfg, mut c) = core1();
        let sixteen = [hop(0, 0, 0); 16];
        assert_eq!(
            c.measure_inflight(&cfg, Instant::ZERO, &sixteen, 0),
            Err(Error::TooManyHops)
        );
        assert!(c.history().is_empty());
    }

    /// Issue: with room for 5 hops, every ACK of an 8-hop path was refused
    /// as `TooManyHops` and W stayed at W_init. The history now follows the
    /// 5 slowest links: a congested 100 Gb/s edge among 400 Gb/s fabric
    /// hops is measured, and W comes down.
    #[test]
    fn a_path_longer_than_the_history_follows_its_slowest_links() {
        let cfg = HpccConfig::draft_default();
        let mut c = HpccCore::<5>::new(&cfg, BaseRtt::from_nanos(T_NS).unwrap(), Window::from_bytes(150_000)).unwrap();
        // Eight hops: 400 Gb/s fabric except hops 0 and 7 (the host edges).
        let path = |k: u32, q: u32| -> [HopSample; 8] {
            core::array::from_fn(|i| {
                let mut s = hop(k * T_NS, 0, 0);
                s.id = i as u32;
                if i == 0 || i == 7 {
                    s.bandwidth = LinkSpeed::from_gbps(100);
                    // The last edge is 2x overloaded: line rate and a queue.
                    if i == 7 {
                        s.tx = k * 150_000;
                        s.qlen_bytes = q;
                    }
                } else {
                    s.bandwidth = LinkSpeed::from_gbps(400);
                }
                s
            })
        };
        assert_eq!(
            c.measure_inflight(&cfg, Instant::ZERO, &path(0, 150_000), 0),
            Ok(Measured::Recorded)
        );
        assert_eq!(c.history().len(), 5);
        for k in 1..=3 {
            let Measured::Updated(u) = c.measure_inflight(&cfg, Instant::ZERO, &path(k, 150_000), 0).unwrap() else {
                panic!("measured")
            };
            c.compute_wind(&cfg, u, true);
        }
        assert!(as_f64(c.utilization()) > 1.9, "U {}", as_f64(c.utilization()));
        assert!(c.window() < Window::from_bytes(80_000), "W {:?}", c.window());
        // The choice: both edges and the first three fabric hops.
        assert_eq!(hop_walk::tracked::<5>(&path(0, 0)), 0b1000_1111);
        assert_eq!(hop_walk::tracked::<8>(&path(0, 0)), 0xFF);
    }

    #[test]
    fn path_change_resets_history() {
        let (cfg, mut c) = core1();
        c.measure_inflight(&cfg, Instant::ZERO, &[hop(0, 0, 0)], 0).unwrap();
        let mut other = hop(T_NS, 150_000, 0);
        other.id = 99;
        assert_eq!(
            c.measure_inflight(&cfg, Instant::ZERO, &[other], 0),
            Ok(Measured::Recorded)
        );
        assert_eq!(
            c.measure_inflight(&cfg, Instant::ZERO, &[hop(T_NS, 150_000, 0), hop(T_NS, 0, 0)], 0),
            Ok(Measured::Recorded)
        );
        assert_eq!(c.history().len(), 2);
    }

    /// U exactly at eta takes the MI/MD branch and keeps W = Wc + W_ai.
    #[test]
    fn u_exactly_eta_is_md_branch() {
        let (cfg, mut c) = core1();
        c.restore(
            &cfg,
            HpccSnapshot {
                u: Utilization::ZERO,
                w: Window::from_bytes(100_000),
                wc: Window::from_bytes(100_000),
                inc_stage: 3,
            },
        )
        .unwrap();
        let eta = Utilization::from_bits(cfg.eta.to_bits() as u64);
        let w = c.compute_wind(&cfg, eta, true);
        assert_eq!(
            w,
            Window::from_bits(Window::from_bytes(100_000).to_bits() + c.additive_increase().to_bits())
        );
        assert_eq!(c.inc_stage(), 0, "MD branch resets incStage");
    }

    /// Below eta, each Wc update is one AI stage; at maxStage the MI branch
    /// runs and resets the counter.
    #[test]
    fn ai_stage_counter_reaches_max_stage() {
        let (cfg, mut c) = core1();
        let w0 = Window::from_bytes(50_000);
        c.restore(
            &cfg,
            HpccSnapshot {
                u: Utilization::ZERO,
                w: w0,
                wc: w0,
                inc_stage: 0,
            },
        )
        .unwrap();
        let half = Utilization::from_bits(1 << 23);
        let ai = c.additive_increase().to_bits();
        for stage in 1..=cfg.max_stage {
            let w = c.compute_wind(&cfg, half, true);
            assert_eq!(w.to_bits(), w0.to_bits() + stage as u32 * ai);
            assert_eq!(c.inc_stage(), stage);
        }
        // Stage 5 = maxStage: MI with U = 0.5 doubles Wc/eta... W = Wc·0.95/0.5 + W_ai.
        let wc = c.reference_window().to_bits() as u64;
        let w = c.compute_wind(&cfg, half, true);
        // eta/U by one division: within a relative 2^-15 (ratio_q24_once).
        let expect = (wc * cfg.eta.to_bits() as u64) as f64 / (1u64 << 23) as f64 + ai as f64;
        let got = w.to_bits() as f64;
        assert!(
            (got - expect).abs() <= expect * 2f64.powi(-15) + 1.0,
            "{got} vs {expect}"
        );
        assert_eq!(c.inc_stage(), 0);
    }

    /// Without updateWc the stage and Wc stay put (lines 14, 18).
    #[test]
    fn no_update_leaves_wc_and_stage() {
        let (cfg, mut c) = core1();
        let wc = c.reference_window();
        c.compute_wind(&cfg, Utilization::from_bits(1 << 23), false);
        assert_eq!(c.reference_window(), wc);
        assert_eq!(c.inc_stage(), 0);
    }

    /// maxStage 0 with U = 0 divides by zero in the draft; here W = W_init.
    #[test]
    fn zero_u_with_max_stage_zero_gives_w_init() {
        let cfg = HpccConfig::sigcomm19();
        let t = BaseRtt::from_nanos(T_NS).unwrap();
        let mut c = HpccCore::<1>::new(&cfg, t, Window::from_bytes(150_000)).unwrap();
        assert_eq!(
            c.compute_wind(&cfg, Utilization::ZERO, true),
            Window::from_bytes(150_000)
        );
    }

    #[test]
    fn window_is_clamped_to_w_min_and_w_init() {
        let mut cfg = HpccConfig::draft_default();
        cfg.max_stage = 0;
        cfg.w_min = Window::from_bytes(1_000);
        let t = BaseRtt::from_nanos(T_NS).unwrap();
        let mut c = HpccCore::<1>::new(&cfg, t, Window::from_bytes(150_000)).unwrap();
        // 150 kB · 0.95 / 65536 + 117 B ≈ 119 B: below W_min.
        assert_eq!(c.compute_wind(&cfg, Utilization::MAX, true), Window::from_bytes(1_000));
        // U = 0.01: 1000 · 0.95 / 0.01 = 95 kB + W_ai, under W_init.
        let w = c.compute_wind(&cfg, Utilization::from_bits(167_772), true);
        assert!(w > Window::from_bytes(94_000) && w < Window::from_bytes(96_000), "{w}");
        // U = 0.001: far above W_init.
        assert_eq!(
            c.compute_wind(&cfg, Utilization::from_bits(16_777), true),
            Window::from_bytes(150_000)
        );
    }

    #[test]
    fn sojourn_variant_normalizes_by_t() {
        let mut cfg = HpccConfig::draft_default();
        cfg.queue_signal = QueueSignal::Sojourn;
        let t = BaseRtt::from_nanos(T_NS).unwrap();
        let mut c = HpccCore::<1>::new(&cfg, t, Window::from_bytes(150_000)).unwrap();
        let mut a = hop(0, 0, 999_999);
        a.sojourn_ns = 6_000;
        c.measure_inflight(&cfg, Instant::ZERO, &[a], 0).unwrap();
        let mut b = hop(T_NS, 0, 999_999);
        b.sojourn_ns = 6_000;
        c.measure_inflight(&cfg, Instant::ZERO, &[b], 0).unwrap();
        // Queue length is ignored; 6 us of sojourn over T = 12 us is 0.5.
        assert!((as_f64(c.utilization()) - 0.5).abs() < 1e-6);
    }

    #[test]
    fn w_ai_rules() {
        let t = BaseRtt::from_nanos(T_NS).unwrap();
        let w_init = Window::from_bytes(150_000);
        // 150 kB · 0.05 / 64 ≈ 117.19 B.
        let w = HpccConfig::draft_default().w_ai(w_init, t, None);
        assert!((w.to_bits() as f64 / 16.0 - 117.1875).abs() < 0.07);
        // 50 Mb/s · 12 us = 75 B.
        assert_eq!(HpccConfig::sigcomm19().w_ai(w_init, t, None), Window::from_bytes(75));
        // Reported N = 1: 7500 B.
        let w = HpccConfig::sigcomm19().w_ai(w_init, t, Some(1));
        assert!((w.to_bits() as f64 / 16.0 - 7_500.0).abs() < 0.07);
    }

    /// A stack of one hop stored in place is the general store's: the
    /// same state, on histories of one and of five hops, under both queue
    /// signals, at any local time.
    #[test]
    fn one_hop_stored_in_place_is_the_general_store() {
        use crate::testing::Lcg;
        let t = BaseRtt::from_nanos(T_NS).unwrap();
        let mut r = Lcg(7);
        for signal in [QueueSignal::Length, QueueSignal::Sojourn] {
            let cfg = HpccConfig {
                queue_signal: signal,
                ..HpccConfig::draft_default()
            };
            for _ in 0..500 {
                let mut s = hop(r.draw(), r.draw(), r.draw());
                s.sojourn_ns = r.draw();
                let now = Instant::from_nanos((r.draw() as u64) << 12 | r.draw() as u64);
                let mut one = HpccCore::<1>::new(&cfg, t, Window::from_bytes(150_000)).unwrap();
                one.u = [r.draw(), r.draw()];
                let mut five = HpccCore::<5>::new(&cfg, t, Window::from_bytes(150_000)).unwrap();
                five.u = one.u;
                let (mut one_any, mut five_any) = (one, five);
                one.store(&cfg, now, &[s], 1);
                one_any.store_any(&cfg, now, &[s], 1);
                five.store(&cfg, now, &[s], 1);
                five_any.store_any(&cfg, now, &[s], 1);
                assert_eq!((one, five), (one_any, five_any));
            }
        }
    }
}
