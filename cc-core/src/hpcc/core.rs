//! The part of HPCC++ that sender and receiver share: per-hop history,
//! `MeasureInflight` and `ComputeWind` (draft 2022-10 §4.2, Figures 4-5;
//! §6.3.2: "The receiver performs the same functions").
//!
//! State: 32 bytes plus 12 bytes per hop of history.

use bitfield_struct::bitfield;

use super::{HpccConfig, QueueSignal};
use crate::event::{Decision, Error};
use crate::fixmath::{ewma, fraction_q32, mul_frac_q32, ratio_q24};
use crate::telemetry::{
    one_hop_signature, stack_signature, ts_interval, tx_bytes_between, HopHistory, HopSample, TsInterval, TsReach,
    SIGNATURE_MASK,
};
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

/// The new U for a path of one hop, or why there is none.
enum OneStep {
    /// The sample is older than the history: reject it.
    Stale,
    /// A timestamp wrap or more has passed: restart the history.
    Expired,
    /// No usable rate: U is unchanged.
    Skip,
    /// The new U in 2^-28 units (saturated by `set_u28`).
    Updated(u64),
}

/// Load of one hop for one sample, as [`Self::hop_load`] computes it
/// ([`PackedLoad`] is how it crosses that function's boundary).
enum HopLoad {
    /// The sample is older than the history: reject the whole stack.
    Stale,
    /// A timestamp wrap or more has passed since the history was recorded:
    /// restart the history.
    Expired,
    /// No usable rate (ts delta 0, bandwidth 0 or absurd, counter reset).
    Skip,
    /// u' of this hop and the ts delta it was measured over (ns).
    Load { u: u64, dts: u32 },
}

/// A [`HopLoad`] in one word, so that the out-of-line per-hop function of
/// the cold walks (a path longer than the history, the probe responder)
/// answers in two registers instead of through memory (on rv32, an enum
/// with a 64-bit field is returned by a store and reloaded by the caller).
/// MeasureInflight's usual loop computes the load inline and needs no
/// packing:
///
/// ```text
/// bits 62-63   0 load, 1 skip, 2 expired, 3 stale
/// bits 41-61   min(Δts, T) in ns (T ≤ 2^20: 21 bits)
/// bits 0-40    u' in 2^-24 units (≤ 2^40, Utilization::MAX)
/// ```
/// Δts is capped at T: line 8 keeps only min(tau, T), and the longest
/// Δts (tau of an idle path) passes through the same cap, so the cap
/// changes no result.
#[derive(Clone, Copy)]
struct PackedLoad(u64);

impl PackedLoad {
    const U_BITS: u32 = 41;
    const DTS_MASK: u64 = (1 << 21) - 1;
    const SKIP: PackedLoad = PackedLoad(1 << 62);
    const EXPIRED: PackedLoad = PackedLoad(2 << 62);
    const STALE: PackedLoad = PackedLoad(3 << 62);

    /// Packs `load`, its Δts capped at T already (`load_within`).
    #[inline(always)]
    fn pack(load: HopLoad) -> PackedLoad {
        match load {
            HopLoad::Load { u, dts } => {
                // u ≤ 2^40 (load_over saturates it), dts ≤ T ≤ 2^20.
                PackedLoad(u | (dts as u64 & Self::DTS_MASK) << Self::U_BITS)
            }
            HopLoad::Skip => Self::SKIP,
            HopLoad::Expired => Self::EXPIRED,
            HopLoad::Stale => Self::STALE,
        }
    }

    #[inline(always)]
    fn unpack(self) -> HopLoad {
        match self.0 >> 62 {
            0 => HopLoad::Load {
                u: self.0 & ((1 << Self::U_BITS) - 1),
                dts: (self.0 >> Self::U_BITS & Self::DTS_MASK) as u32,
            },
            1 => HopLoad::Skip,
            2 => HopLoad::Expired,
            _ => HopLoad::Stale,
        }
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
        if hops.len() > MAX_STACK {
            return Err(Error::TooManyHops);
        }
        let mask = Self::tracked(hops);
        Ok((mask, stack_signature(hops, first_index, mask)))
    }

    /// Stores `hops` as the history L (Figure 6, line 27: `L = ack.L`),
    /// recorded at `now`.
    fn record(&mut self, cfg: &HpccConfig, now: Instant, hops: &[HopSample], tracked: u16, sig: u32) {
        self.set_recorded_at(now);
        let signal = cfg.queue_signal;
        let keep = |s: &HopSample| kept(signal, s);
        if hops.len() <= H {
            // Every hop is followed (the usual case): hop i in slot i.
            for (h, s) in self.hops.iter_mut().zip(hops) {
                *h = keep(s);
            }
        } else {
            self.record_tracked(hops, tracked, keep);
        }
        self.status.set_path_sig(sig & SIGNATURE_MASK);
        // check_stack keeps hops.len() ≤ 15; the mask keeps the setter in range.
        self.status.set_hops((hops.len() & 0xF) as u8);
        self.status.set_has_history(true);
    }

    /// [`Self::record`] for a path longer than the history: the hops of
    /// `tracked`, in order.
    #[cold]
    #[inline(never)]
    fn record_tracked(&mut self, hops: &[HopSample], tracked: u16, keep: impl Fn(&HopSample) -> HopHistory) {
        let mut rank = 0;
        for (i, s) in hops.iter().enumerate() {
            if tracked >> (i & 15) & 1 == 0 {
                continue;
            }
            let Some(h) = self.hops.get_mut(rank) else { break };
            rank += 1;
            *h = keep(s);
        }
    }

    /// Which hops of a stack the history follows (bit i for hop i): all of
    /// them when they fit in `H`; on a longer path, the `H` slowest links
    /// (the first on ties; a link whose speed is not plausible counts as
    /// fastest). A path's link speeds do not change between samples, so
    /// the choice is the same for every sample of a path, and it is part of
    /// the path signature. In a fabric of 100 Gb/s hosts and 400 Gb/s
    /// cores, the slowest links are the edges, where incast queues build;
    /// a congested hop outside the choice is not seen. `H ≥ 8` (the
    /// design's longest path) tracks every hop.
    #[inline(always)]
    fn tracked(hops: &[HopSample]) -> u16 {
        let n = hops.len().min(MAX_STACK);
        if n <= H {
            return ((1u32 << n) - 1) as u16;
        }
        Self::slowest(hops)
    }

    /// The `H` slowest hops of a stack longer than `H` (see [`Self::tracked`]).
    #[inline(never)]
    #[cold]
    fn slowest(hops: &[HopSample]) -> u16 {
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

    /// One hop's u' against its history (Figure 4, lines 4-5).
    ///
    /// ```text
    /// txRate = (ack.L[i].txBytes − L[i].txBytes) / (ack.L[i].ts − L[i].ts)
    /// u'     = min(ack.L[i].qlen, L[i].qlen) / (B·T) + txRate / B
    /// ```
    /// In integers, with B in Mb/s (B·T in bits is `B·T_ns/1000`):
    /// ```text
    /// queue term = min(q) · 8000 / (B · T)          q ≤ 2^32 → num ≤ 2^45, den ≤ 2^43
    /// rate term  = Δtx · 8000 / (Δts · B)           Δtx ≤ 2^31·2^16 → num ≤ 2^60, den ≤ 2^55
    ///              or the reported tx utilization (INT-MD), already txRate/B
    /// sojourn    = min(s) / T                        (§9.3 variant)
    /// ```
    /// each through [`ratio_q24`] (2^-24 units, rounded down, saturating at
    /// 2^40). Guards: Δts = 0, B = 0 or absurd → skip the hop; the
    /// timestamp's interval by [`ts_interval`] (older → stale, a wrap or
    /// more of local time → expired); the transmitted bytes by
    /// [`tx_bytes_between`] (an interval that could hold a counter wrap, or
    /// a counter reset → skip the hop).
    ///
    /// The Δts it returns is capped at T (see [`PackedLoad`]).
    #[inline(always)]
    fn hop_load(&self, signal: QueueSignal, s: &HopSample, h: &HopHistory, elapsed_ns: u64) -> HopLoad {
        match TsReach::new(s.widths.ts_mask(), elapsed_ns) {
            Some(reach) => self.hop_load_within(signal, s, h, reach),
            None => HopLoad::Expired,
        }
    }

    /// [`Self::hop_load`] once the timestamp's reach is known (not
    /// expired).
    #[inline(always)]
    fn hop_load_within(&self, signal: QueueSignal, s: &HopSample, h: &HopHistory, reach: TsReach) -> HopLoad {
        self.hop_load_packed(signal, s, h, reach).unpack()
    }

    /// [`Self::hop_load_within`] out of line, its answer in one word.
    #[inline(never)]
    fn hop_load_packed(&self, signal: QueueSignal, s: &HopSample, h: &HopHistory, reach: TsReach) -> PackedLoad {
        PackedLoad::pack(self.load_within(signal, s, h, reach))
    }

    /// The hop's load once the timestamp's reach is known: the interval,
    /// then u' over it, its Δts capped at T (line 8's min(tau, T), which
    /// changes no result: `ewma` gives u for tau ≥ T).
    #[inline(always)]
    fn load_within(&self, signal: QueueSignal, s: &HopSample, h: &HopHistory, reach: TsReach) -> HopLoad {
        match reach.interval(s.ts, h.ts) {
            Some(dts) => match self.load_over(signal, s, h, dts) {
                HopLoad::Load { u, dts } => HopLoad::Load {
                    u,
                    dts: dts.min(self.t.as_nanos()),
                },
                other => other,
            },
            None => HopLoad::Stale,
        }
    }

    /// [`Self::hop_load`] once the timestamp interval `dts` is known.
    #[inline(always)]
    fn load_over(&self, signal: QueueSignal, s: &HopSample, h: &HopHistory, dts: u32) -> HopLoad {
        if dts == 0 || !s.bandwidth.is_plausible() {
            return HopLoad::Skip;
        }
        let b = s.bandwidth.as_mbps() as u64;
        let t = self.t.as_nanos() as u64;
        let q = queue_signal(signal, s).min(h.queue) as u64;
        // Denominators are ≥ 100 · 100 > 0 (plausible B, valid T, dts > 0):
        // the `None` arms cannot happen, and would only zero a term. An
        // empty queue (most hops of most paths) needs no division.
        let queue_term = if q == 0 {
            0
        } else {
            match signal {
                QueueSignal::Length => ratio_q24(q * 8000, b * t),
                QueueSignal::Sojourn => ratio_q24(q, t),
            }
            .unwrap_or(0)
        };
        // txRate/B: the switch's own utilization if it reports one (same
        // 2^-24 scale as U), else from the counters.
        let rate_term = match s.tx_utilization {
            Some(util) => util.to_bits() as u64,
            None => {
                let Some(dtx_bytes) = tx_bytes_between(s.tx, h.tx, s.widths, dts, b as u32) else {
                    return HopLoad::Skip;
                };
                ratio_q24(dtx_bytes * 8000, dts as u64 * b).unwrap_or(0)
            }
        };
        let u = (queue_term + rate_term).min(Utilization::MAX.to_bits());
        HopLoad::Load { u, dts }
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
        let elapsed = self.elapsed_since_record(now);
        let mut best = (0usize, 0u64);
        let mut sticky_load = None;
        let mut rank = 0usize;
        for (i, s) in hops.iter().enumerate() {
            let in_history = mask >> i & 1 == 1;
            let load = if known && in_history {
                rank += 1;
                let Some(h) = self.hops.get(rank - 1) else { continue };
                match self.hop_load(cfg.queue_signal, s, h, elapsed) {
                    HopLoad::Stale => return Err(Error::StaleTelemetry),
                    HopLoad::Skip | HopLoad::Expired => 0,
                    HopLoad::Load { u, .. } => u,
                }
            } else if known {
                // A hop the history does not follow has no rate to show.
                0
            } else if s.bandwidth.is_plausible() {
                // The queuing delay, in one scale for every hop: bytes ·
                // 8000 / B for a queue length, the sojourn time itself (a
                // time already) for the §9.3 variant.
                match cfg.queue_signal {
                    QueueSignal::Length => {
                        ratio_q24(s.qlen_bytes as u64 * 8000, s.bandwidth.as_mbps() as u64).unwrap_or(0)
                    }
                    QueueSignal::Sojourn => (s.sojourn_ns as u64) << 24,
                }
            } else {
                0
            };
            if load > best.1 {
                best = (i, load);
            }
            if sticky == Some(i) {
                sticky_load = Some(load);
            }
        }
        if let (true, Some(i), Some(load)) = (known, sticky, sticky_load) {
            // load ≥ 7/8 · best, in integers: best ≤ 2^40, so 8·load fits.
            if load > 0 && 8 * load >= 7 * best.1 {
                return Ok(i);
            }
        }
        if best.1 == 0 {
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
    /// The draft leaves tau undefined when no hop has u' > 0. A measured
    /// zero load is still a measurement: tau is then the longest Δts among
    /// the hops that gave a load, so an idle path pulls U down (keeping U
    /// left a flow that had seen U = 2 at a window of W_ai/(1 − eta/U) for
    /// good). When every hop was skipped, tau = 0 and U is kept. Line 9 in
    /// integers:
    ///
    /// ```text
    /// U = U + (tau/T)·(u − U)     U, u < 2^41 (2^-28 units), tau ≤ T ≤ 2^20
    /// ```
    /// in 2^-28 units (`U_EXTRA_BITS`), rounded to nearest, by `fixmath::ewma`
    /// (32-bit divides and products; within a relative 2^-32 of the step). The first sample, or one from a different path (hop
    /// count, identity, link speed or counter widths changed), is only
    /// recorded, and so is one that arrives a whole timestamp wrap or more
    /// after the history was recorded (`now` is the local clock: it tells a
    /// long gap from an older sample). A stale stack (older timestamps) changes nothing.
    #[inline(always)]
    pub fn measure_inflight(
        &mut self,
        cfg: &HpccConfig,
        now: Instant,
        hops: &[HopSample],
        first_index: u8,
    ) -> Result<Measured, Error> {
        match hops {
            [one] => self.measure_one(cfg, now, one, first_index),
            _ => self.measure_many(cfg, now, hops, first_index),
        }
    }

    /// [`Self::measure_inflight`] for any stack but one of a single hop
    /// (the loop's registers would otherwise be saved for that one too).
    #[inline(never)]
    fn measure_many(
        &mut self,
        cfg: &HpccConfig,
        now: Instant,
        hops: &[HopSample],
        first_index: u8,
    ) -> Result<Measured, Error> {
        let (mask, sig) = Self::check_stack(hops, first_index)?;
        if !self.status.has_history() || self.status.path_sig() != sig || self.status.hops() as usize != hops.len() {
            self.record(cfg, now, hops, mask, sig);
            return Ok(Measured::Recorded);
        }
        let elapsed = self.elapsed_since_record(now);
        let mut u_max = 0u64;
        let mut tau = 0u32;
        let mut dts_max = 0u32;
        let mut measured = false;
        let mut expired = false;
        // Lines 3-7 for one followed hop; false stops the loop (stale or
        // expired).
        let mut visit = |load: HopLoad| -> bool {
            match load {
                HopLoad::Stale => return false,
                HopLoad::Expired => {
                    expired = true;
                    return false;
                }
                HopLoad::Skip => {}
                HopLoad::Load { u, dts } => {
                    measured = true;
                    dts_max = dts_max.max(dts);
                    if u > u_max {
                        u_max = u;
                        tau = dts;
                    }
                }
            }
            true
        };
        let signal = cfg.queue_signal;
        let complete = if hops.len() <= H {
            // Every hop followed (the usual case): hop i against slot i,
            // the timestamps' reach worked out again only where the
            // widths change (they seldom do along a path).
            let mut widths = None;
            let mut reach = None;
            hops.iter().zip(&self.hops).all(|(s, h)| {
                if widths != Some(s.widths) {
                    widths = Some(s.widths);
                    reach = TsReach::new(s.widths.ts_mask(), elapsed);
                }
                match reach {
                    // The hop's load inline: on the usual path its answer
                    // never crosses a frame (the packed out-of-line form
                    // serves the cold walks, and adds no copy of this body
                    // to the loop's frame).
                    Some(r) => visit(self.load_within(signal, s, h, r)),
                    None => visit(HopLoad::Expired),
                }
            })
        } else {
            let mut rank = 0;
            hops.iter().enumerate().all(|(i, s)| {
                if mask >> (i & 15) & 1 == 0 {
                    return true;
                }
                let Some(h) = self.hops.get(rank) else { return true };
                rank += 1;
                visit(self.hop_load(signal, s, h, elapsed))
            })
        };
        if expired {
            self.record(cfg, now, hops, mask, sig);
            return Ok(Measured::Recorded);
        }
        if !complete {
            return Err(Error::StaleTelemetry);
        }
        if !measured {
            self.record(cfg, now, hops, mask, sig);
            return Ok(Measured::Unmeasured);
        }
        if u_max == 0 {
            tau = dts_max;
        }
        let u_max28 = (u_max << U_EXTRA_BITS).min(U28_MAX);
        self.set_u28(ewma(self.u28(), u_max28, tau, self.t.as_divisor32()));
        let u_new = self.utilization();
        self.record(cfg, now, hops, mask, sig);
        Ok(Measured::Updated(u_new))
    }

    /// [`Self::measure_inflight`] for a stack of one hop (a path reduced to
    /// its bottleneck, a probe's reply): the same steps, without the loop
    /// (the one hop is the most loaded, tau its Δts), and with line 9 in
    /// the form [`Self::step_one`] gives it. `measure_inflight` hands a
    /// one-hop stack here, so a stack gets the same answer by either door.
    #[inline(never)]
    pub(crate) fn measure_one(
        &mut self,
        cfg: &HpccConfig,
        now: Instant,
        s: &HopSample,
        first_index: u8,
    ) -> Result<Measured, Error> {
        let hops = core::slice::from_ref(s);
        let (mask, sig) = Self::check_stack(hops, first_index)?;
        if !self.status.has_history() || self.status.path_sig() != sig || self.status.hops() != 1 {
            self.record(cfg, now, hops, mask, sig);
            return Ok(Measured::Recorded);
        }
        let elapsed = self.elapsed_since_record(now);
        let step = match self.hops.first() {
            Some(h) => self.step_one(cfg.queue_signal, s, h, elapsed),
            None => OneStep::Skip,
        };
        let measured = match step {
            OneStep::Stale => return Err(Error::StaleTelemetry),
            OneStep::Expired => Measured::Recorded,
            OneStep::Skip => Measured::Unmeasured,
            OneStep::Updated(u28) => {
                self.set_u28(u28);
                Measured::Updated(self.utilization())
            }
        };
        self.record(cfg, now, hops, mask, sig);
        Ok(measured)
    }

    /// Lines 4-9 of Figure 4 for a path of one hop: the new U (2^-28 units).
    ///
    /// With one hop, tau is that hop's Δts, and when Δts < T line 9's
    /// weight tau/T cancels the rate term's division by Δts:
    ///
    /// ```text
    /// U' = U + f·(u' − U)                       f = Δts/T
    ///    = U − f·U + f·q/(B·T) + f·Δtx/(Δts·B)
    ///    = U − f·U + 8000·(f·q + Δtx)/(B·T)    q, Δtx in bytes, B in Mb/s, T in ns
    /// ```
    /// so one [`ratio_q24`] replaces the two of [`Self::hop_load`] and the
    /// EWMA's step. In integers: f in 2^-32 ([`fraction_q32`], exact); f·q
    /// in 2^-8 bytes, rounded down (q < 2^32: < 2^40); Δtx < 2^32 by
    /// [`tx_bytes_between`] (at most twice the line rate over Δts < T ≤
    /// 2^20 ns, plus a unit), in 2^-8 bytes < 2^40; numerator (sum · 8000)
    /// < 2^54, denominator B·T·2^8 < 2^23·2^20·2^8 = 2^51. The term f·u' is
    /// held at f·8192 (u' saturates at 8192 = 2^(32 + U_HIGH_BITS) units of
    /// 2^-28 on every path, so f·8192 is `f << U_HIGH_BITS`) and U·f is
    /// rounded to nearest ([`mul_frac_q32`], never above U), as the general
    /// path does.
    ///
    /// The general path ([`Self::load_over`] then [`ewma`]) serves the rest:
    /// Δts ≥ T (tau = T, U' = u'), a switch-reported tx utilization, and the
    /// sojourn-time signal.
    #[inline(always)]
    fn step_one(&self, signal: QueueSignal, s: &HopSample, h: &HopHistory, elapsed_ns: u64) -> OneStep {
        match ts_interval(s.ts, h.ts, s.widths.ts_mask(), elapsed_ns) {
            TsInterval::Forward(dts) => self.step_over(signal, s, h, dts),
            TsInterval::Stale => OneStep::Stale,
            TsInterval::Expired => OneStep::Expired,
        }
    }

    /// [`Self::step_one`] once the timestamp interval `dts` is known.
    #[inline(always)]
    fn step_over(&self, signal: QueueSignal, s: &HopSample, h: &HopHistory, dts: u32) -> OneStep {
        if !Self::fusable(signal, s, dts, self.t) {
            return self.step_general(signal, s, h, dts);
        }
        match self.fused_step(s, h, dts) {
            Some(u28) => OneStep::Updated(u28),
            None => OneStep::Skip,
        }
    }

    /// Whether [`Self::fused_step`] serves a sample: 0 < Δts < T, the
    /// queue-length signal, the rate from the counters, a plausible B.
    #[inline(always)]
    fn fusable(signal: QueueSignal, s: &HopSample, dts: u32, t: BaseRtt) -> bool {
        dts != 0
            && dts < t.as_nanos()
            && signal == QueueSignal::Length
            && s.tx_utilization.is_none()
            && s.bandwidth.is_plausible()
    }

    /// The new U (2^-28 units, before saturation) by line 9's one-hop form
    /// (see [`Self::step_one`]), for a sample [`Self::fusable`] accepts;
    /// `None` when the counters give no rate (skip the hop).
    #[inline(always)]
    fn fused_step(&self, s: &HopSample, h: &HopHistory, dts: u32) -> Option<u64> {
        let t = self.t.as_divisor32();
        let b = s.bandwidth.as_mbps();
        let dtx = tx_bytes_between(s.tx, h.tx, s.widths, dts, b)?;
        let f = fraction_q32(dts, t);
        let q = s.qlen_bytes.min(h.queue) as u64;
        let v8 = ((q * f as u64) >> 24) + (dtx << 8);
        // Denominator ≥ 100 · 100 · 2^8 > 0 (plausible B, valid T): the
        // `None` arm cannot happen.
        let a24 = ratio_q24(v8 * 8000, (b as u64 * t.get() as u64) << 8).unwrap_or(0);
        let a28 = (a24 << U_EXTRA_BITS).min((f as u64) << U_HIGH_BITS);
        let u = self.u28();
        Some(u - mul_frac_q32(u, f) + a28)
    }

    /// The common one-hop sample from start to finish, for the sender's ACK
    /// and the probe reply: a followed path of one hop with history
    /// (`first_index` the hop's place in its stack), a forward interval the
    /// fused step serves, a rate from the counters. MeasureInflight by
    /// [`Self::fused_step`], ComputeWind with `update_wc`, and the history
    /// recorded: the same state, bit for bit, as [`Self::measure_one`]
    /// followed by [`Self::compute_wind`] (property-tested). Written as one
    /// piece so that no `Result` or [`Measured`] crosses a frame on the
    /// path nearly every ACK takes. `false`, with nothing changed, for any
    /// other sample: the general path decides it.
    #[inline(always)]
    pub(crate) fn one_hop_fast(
        &mut self,
        cfg: &HpccConfig,
        now: Instant,
        s: &HopSample,
        first_index: u8,
        update_wc: bool,
    ) -> bool {
        let status = self.status;
        if !status.has_history() || status.hops() != 1 || status.path_sig() != one_hop_signature(s, first_index) {
            return false;
        }
        let Some(h) = self.hops.first() else {
            return false;
        };
        // An expired history, or an interval past half a wrap, is the
        // general path's to judge.
        let elapsed = self.elapsed_since_record(now);
        let Some(dts) = TsReach::short_interval(s.ts, h.ts, s.widths.ts_mask(), elapsed) else {
            return false;
        };
        if !Self::fusable(cfg.queue_signal, s, dts, self.t) {
            return false;
        }
        let Some(u28) = self.fused_step(s, h, dts) else {
            return false;
        };
        self.set_u28(u28);
        self.compute_wind(cfg, self.utilization(), update_wc);
        // Same path, one hop: the history's count, signature and flag
        // stand; the slot and the time it was recorded change.
        self.set_recorded_at(now);
        if let Some(h) = self.hops.first_mut() {
            *h = kept(cfg.queue_signal, s);
        }
        true
    }

    /// [`Self::step_over`] by u' of line 5 and then line 9's EWMA. Out of
    /// line: it serves the less common cases, and inlined its registers
    /// would be saved on every ACK.
    #[inline(never)]
    fn step_general(&self, signal: QueueSignal, s: &HopSample, h: &HopHistory, dts: u32) -> OneStep {
        match self.load_over(signal, s, h, dts) {
            HopLoad::Stale => OneStep::Stale,
            HopLoad::Expired => OneStep::Expired,
            HopLoad::Skip => OneStep::Skip,
            HopLoad::Load { u, dts } => {
                let u28 = (u << U_EXTRA_BITS).min(U28_MAX);
                OneStep::Updated(ewma(self.u28(), u28, dts, self.t.as_divisor32()))
            }
        }
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
    /// Line 13 in integers: the factor eta/U in 2^-24 by `ratio_q24`
    /// (32-bit divides, within a relative 2^-22), then
    /// `W_raw = (Wc_raw · factor + 2^23) >> 24 + W_ai_raw` (Wc_raw < 2^32,
    /// factor < 2^32: product < 2^64), rounded to nearest: Wc is fed back
    /// into itself every RTT, and rounding down made windows of a few dozen
    /// bytes drift 0.1 % low per RTT against the reference. U = 0 (possible
    /// when maxStage = 0) is the formula's limit, infinity, and so is a
    /// factor of 2^32 or more: the clamp turns either into W_init. W is
    /// clamped to [W_min, W_init] before it becomes Wc. incStage saturates
    /// at 15 (maxStage ≤ 15, so line 12's test is unaffected).
    pub fn compute_wind(&mut self, cfg: &HpccConfig, u: Utilization, update_wc: bool) -> Window {
        let stage = self.status.inc_stage();
        let wc = self.wc.to_bits() as u64;
        let w_ai = self.w_ai.to_bits() as u64;
        let md = u.to_bits() >= cfg.eta.to_bits() as u64 || stage >= cfg.max_stage;
        let raw = if md {
            // eta/U in 2^-24 (U = 0 saturates it: the formula's infinity),
            // then Wc · that, rounded to nearest.
            let scale = ratio_q24(cfg.eta.to_bits() as u64, u.to_bits()).unwrap_or(1 << 40);
            let scaled = if scale >> 32 != 0 {
                u64::MAX
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

/// Longest telemetry stack the engine reads: the path's hop count is kept
/// in 4 bits.
pub(crate) const MAX_STACK: usize = 15;

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
    use crate::testing::{hop, hop_of, T_NS};
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

    proptest::proptest! {
        /// The one-hop step (line 9 with Δts/T folded into u') agrees with
        /// u' then the EWMA on every forward interval: the same outcome for
        /// skipped and measured samples, and U within a relative 2^-20 and
        /// 64 units of 2^-28 (the one ratio's bound, ratio_q24). Stale and
        /// expired intervals are decided before either step, by the one
        /// `ts_interval`.
        #[test]
        fn one_hop_step_is_the_general_step(
            steps in proptest::collection::vec((0u32..40_000, 0u32..700_000, 0u32..400_000, 0u64..20_000_000, proptest::bool::weighted(0.1)), 1..60),
        ) {
            let (cfg, mut c) = core1();
            let (mut ts, mut tx, mut now) = (0u32, 0u32, 0u64);
            for (dts, dtx, q, dnow, backwards) in steps {
                if backwards {
                    ts = ts.wrapping_sub(dts);
                } else {
                    ts = ts.wrapping_add(dts);
                    tx = tx.wrapping_add(dtx);
                }
                now += dnow;
                let s = hop(ts, tx, q);
                let at = Instant::from_nanos(now);
                let history = c.history().first().copied();
                let interval = history.map(|h| ts_interval(s.ts, h.ts, s.widths.ts_mask(), c.elapsed_since_record(at)));
                if let (Some(h), Some(TsInterval::Forward(d))) = (history, interval) {
                    let fused = c.step_over(cfg.queue_signal, &s, &h, d);
                    let general = c.step_general(cfg.queue_signal, &s, &h, d);
                    match (fused, general) {
                        (OneStep::Updated(x), OneStep::Updated(y)) => {
                            let (x, y) = (x.min(U28_MAX), y.min(U28_MAX));
                            let bound = y.max(x) >> 20 | 64;
                            proptest::prop_assert!(x.abs_diff(y) <= bound, "{} vs {}", x, y);
                        }
                        (OneStep::Skip, OneStep::Skip) => {}
                        _ => proptest::prop_assert!(false, "outcomes differ"),
                    }
                }
                let _ = c.measure_one(&cfg, at, &s, 0);
            }
        }
    }

    proptest::proptest! {
        /// The one-piece one-hop path is the general path where it applies:
        /// measure_one then compute_wind give the same state bit for bit
        /// (U, W, Wc, incStage, history, its time and signature), over
        /// traces that wrap 24-bit stamps and 20-bit counters, or 14-bit
        /// stamps whose half wrap (8.2 µs) is shorter than T (12 µs), leave
        /// gaps past half a wrap, go backwards, change switch or speed, and
        /// switch to the sojourn signal or a reported utilization (which it
        /// must leave alone, untouched, to the general path).
        #[test]
        fn the_one_hop_fast_path_is_the_general_path(
            steps in proptest::collection::vec(
                (
                    0u32..40_000,
                    0u32..700_000,
                    0u32..400_000,
                    // Local gaps both shorter and longer than T and the wraps.
                    proptest::prop_oneof![0u64..20_000, 0u64..20_000_000],
                    0u8..16,
                    proptest::bool::ANY,
                    0u8..4,
                ),
                1..60,
            ),
            narrow in 0u8..3,
            max_stage in 0u8..6,
            u0 in 0u64..(1 << 26),
        ) {
            let (mut cfg, mut c) = core1();
            cfg.max_stage = max_stage;
            c.set_utilization(Utilization::from_bits(u0));
            let widths = match narrow {
                0 => CounterWidths::FULL,
                1 => CounterWidths::new(24, 20, 64).unwrap(),
                _ => CounterWidths::new(14, 20, 64).unwrap(),
            };
            let (mut ts, mut tx, mut now) = (0u32, 0u32, 0u64);
            for (dts, dtx, q, dnow, odd, update, kind) in steps {
                match odd {
                    0 => ts = ts.wrapping_sub(dts),
                    _ => {
                        ts = ts.wrapping_add(dts);
                        tx = tx.wrapping_add(if narrow > 0 { dtx / 64 } else { dtx });
                    }
                }
                now += dnow;
                let mut s = hop(ts, tx, q);
                s.widths = widths;
                match odd {
                    1 => s.id = 2,
                    2 => s.bandwidth = LinkSpeed::from_gbps(400),
                    3 => s.tx_utilization = Some(crate::units::Fraction::from_bits(1 << 23).unwrap()),
                    _ => {}
                }
                cfg.queue_signal = if kind == 0 { QueueSignal::Sojourn } else { QueueSignal::Length };
                let first_index = kind & 1;
                let at = Instant::from_nanos(now);
                let before = c;
                let mut fast = c;
                if fast.one_hop_fast(&cfg, at, &s, first_index, update) {
                    let r = c.measure_one(&cfg, at, &s, first_index);
                    proptest::prop_assert!(matches!(r, Ok(Measured::Updated(_))), "general path: {:?}", r);
                    let Ok(Measured::Updated(u)) = r else { continue };
                    c.compute_wind(&cfg, u, update);
                    proptest::prop_assert_eq!(fast, c);
                } else {
                    proptest::prop_assert_eq!(fast, before);
                    if let Ok(Measured::Updated(u)) = c.measure_one(&cfg, at, &s, first_index) {
                        c.compute_wind(&cfg, u, update);
                    }
                }
            }
        }
    }

    /// The samples of a steady one-hop path take the one-piece path (the
    /// property test above holds it to the general path wherever it does).
    #[test]
    fn a_steady_one_hop_path_takes_the_one_piece_path() {
        let (cfg, mut c) = core1();
        let at = |ns: u64| Instant::from_nanos(ns);
        assert!(!c.one_hop_fast(&cfg, at(0), &hop(0, 0, 0), 0, false), "no history yet");
        assert_eq!(c.measure_one(&cfg, at(0), &hop(0, 0, 0), 0), Ok(Measured::Recorded));
        for i in 1..=4u32 {
            let s = hop(i * 1_000, i * 12_500, 3_000);
            assert!(
                c.one_hop_fast(&cfg, at(i as u64 * 1_000), &s, 0, i == 4),
                "sample {}",
                i
            );
        }
        assert!(c.utilization() > Utilization::ZERO);
        assert_eq!(c.history()[0].ts, 4_000);
        // Another switch: a new path, for the general path to record.
        assert!(!c.one_hop_fast(&cfg, at(5_000), &hop_of(9, 5_000, 62_500, 0), 0, false));
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
        assert_eq!(HpccCore::<5>::tracked(&path(0, 0)), 0b1000_1111);
        assert_eq!(HpccCore::<8>::tracked(&path(0, 0)), 0xFF);
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
        let expect = (wc * cfg.eta.to_bits() as u64 + (1 << 22)) / (1 << 23) + ai as u64;
        assert_eq!(w.to_bits() as u64, expect);
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
}
