//! TIMELY (Mittal et al., SIGCOMM 2015): rate-based congestion control
//! from RTT samples alone, for fabrics whose switches write no telemetry
//! and mark no ECN that the NIC can use.
//!
//! | part (paper, Algorithm 1)                                     | here                 |
//! |---------------------------------------------------------------|----------------------|
//! | new_rtt_diff = new_rtt − prev_rtt; rtt_diff EWMA, weight α    | [`Timely`]'s ACK     |
//! | normalized_gradient = rtt_diff / minRTT                       | same                 |
//! | new_rtt < T_low: rate + δ                                     | same                 |
//! | new_rtt > T_high: rate·(1 − β·(1 − T_high/new_rtt))           | same                 |
//! | gradient ≤ 0: rate + N·δ, N = 5 after five increases (HAI)    | same                 |
//! | gradient > 0: rate·(1 − β·gradient)                           | same                 |
//!
//! Two update clocks ([`TimelyClock`]), read from the two public codes
//! that run TIMELY (docs/design-notes.md states each reading):
//!
//! - [`TimelyClock::PerRtt`], the default: the HPCC reference simulator's
//!   `UpdateRateTimely` (its CC mode 7, the TIMELY of the HPCC and PowerTCP
//!   evaluations). One update per RTT: when the ACK passes the `snd_nxt`
//!   of the last update; the first RTT only records its sample; the
//!   difference is taken against the sample of the last update; an
//!   increase step is the HAI step once five updates in a row increased;
//!   a decrease factor below 0 is 0, and the rate never falls below the
//!   minimum rate.
//! - [`TimelyClock::PerSample`]: eRPC's per-ACK form (`src/cc/timely.h`).
//!   Every sample of at least minRTT updates; each step is scaled by
//!   φ = min(Δt/minRTT, 1), Δt the time since the last update; the HAI
//!   step after five negative differences in a row; each update cuts the
//!   rate by at most one half.
//!
//! Defaults ([`TimelyConfig::hpcc_sim`]): the reference simulator's
//! `run.py` for TIMELY: α 0.875, β 0.8, T_low 50 µs, T_high 500 µs, minRTT
//! 20 µs, δ = 10·B/10 Mb/s and HAI = 50·B/10 Mb/s for B Gb/s (a thousandth
//! and five thousandths of the line rate), minimum rate 1 Gb/s. TIMELY has
//! no window: the decision's window is the largest one the engine
//! configures, and a rate-gated NIC enforces the pacing alone.
//!
//! Units: rates in [`RateQ8`] (Mb/s in 2^-8 steps, 3.9 kb/s) up to 2^24
//! Mb/s; the RTT difference in 2^-4 ns (signed, |d| < 2^28); fractions α,
//! β, δ/B in [`Fraction`] (2^-24); times in ns. The decision paces the rate
//! as bytes per microsecond: `bytes = rate_q8 >> 7` in 2^-4 byte, no
//! division (1 Mb/s = 125 bytes/ms = 2^-8·2^7 raw units per µs).
//!
//! Divisions: none on an increase, none on the gradient's decrease
//! (β·rtt_diff/minRTT from a per-flow reciprocal of 16·minRTT with β in
//! it, taken when the flow starts: a product and a shift). A decrease
//! above T_high takes (rtt − T_high)/rtt as a 24-bit fraction: three
//! 32-bit `divu` inline on rv32, one on rv64; so does the per-sample
//! clock's φ when Δt < minRTT. No call on the ACK path.

#[cfg(feature = "reference")]
pub mod reference;

use core::num::{NonZeroU32, NonZeroU64};

#[cfg(feature = "bench")]
use crate::bench::AckBench;
use crate::codec::{ConfigReader, ConfigWriter};
use crate::controller::Controller;
use crate::error::Error;
use crate::event::{Ack, Algorithm, Decision, Ecn, FlowParams, Pacing, Request, TimerRequest};
use crate::fixmath::{div_u64, fraction_q24};
use crate::params::{param, Gate, Network, Param, ParamInfo, Unit};
use crate::units::{BaseRtt, Fraction, Instant, Seq, Window};
use crate::wire::{Result as WireResult, WireError};

/// A rate: Mb/s in 2^-8 steps, DCQCN's unit.
pub use crate::units::RateQ8;

/// The largest RTT sample taken, exclusive: 2^24 ns (16.8 ms). A larger
/// one, or 0, is no measurement a NIC makes: refused.
pub const MAX_RTT_NS: u32 = 1 << 24;

/// The pacing period of every TIMELY decision: 1 µs.
const PACING_PERIOD: BaseRtt = match BaseRtt::from_nanos(1_000) {
    Some(t) => t,
    None => panic!("1 µs is a base RTT"),
};

/// The increases in a row after which an increase takes the HAI step
/// (the paper's N = 5 after five completion events).
pub const HAI_AFTER: u8 = 5;

/// When the rate is updated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum TimelyClock {
    /// Once per RTT, as the HPCC reference simulator's `UpdateRateTimely`.
    PerRtt,
    /// On every RTT sample, each step scaled by min(Δt/minRTT, 1) and each
    /// decrease at most one half, as eRPC's `Timely::update_rate`.
    PerSample,
}

/// TIMELY parameters shared by every flow of an engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct TimelyConfig {
    /// EWMA weight α of the new RTT difference, 0 < α ≤ 1.
    pub alpha: Fraction,
    /// Multiplicative-decrease factor β, 0 < β ≤ 1.
    pub beta: Fraction,
    /// T_low, ns: below it every sample increases the rate.
    pub t_low_ns: u32,
    /// T_high, ns (T_low < T_high < 2^24): above it the rate decreases by
    /// β·(1 − T_high/RTT).
    pub t_high_ns: u32,
    /// minRTT, ns (1 ..= 2^20): the gradient's normaliser, and the
    /// per-sample clock's unit of time.
    pub min_rtt_ns: u32,
    /// The additive step δ, as a fraction of the flow's line rate, > 0.
    pub delta: Fraction,
    /// The hyperactive-increase step, as a fraction of the line rate, ≥ δ.
    pub hai: Fraction,
    /// The smallest rate, Mb/s (≥ 1; a line rate below it is the floor).
    pub min_rate_mbps: u32,
    /// When the rate is updated.
    pub clock: TimelyClock,
}

impl TimelyConfig {
    /// The HPCC reference simulator's TIMELY (`run.py --cc timely`): α
    /// 0.875, β 0.8, T_low 50 µs, T_high 500 µs, minRTT 20 µs, δ one
    /// thousandth and HAI five thousandths of the line rate (100 and 500
    /// Mb/s at 100 Gb/s), 1 Gb/s minimum, updated once per RTT.
    pub const fn hpcc_sim() -> Self {
        TimelyConfig {
            alpha: Fraction::preset(7, 8),
            beta: Fraction::preset(4, 5),
            t_low_ns: 50_000,
            t_high_ns: 500_000,
            min_rtt_ns: 20_000,
            delta: Fraction::preset(1, 1_000),
            hai: Fraction::preset(5, 1_000),
            min_rate_mbps: 1_000,
            clock: TimelyClock::PerRtt,
        }
    }

    /// Checks every field's range.
    pub fn validate(&self) -> Result<(), Error> {
        match self.invalid_field() {
            None => Ok(()),
            Some(_) => Err(Error::InvalidParams),
        }
    }

    /// The first field out of its range, by its name here; `None` if
    /// every field is in range.
    pub fn invalid_field(&self) -> Option<&'static str> {
        let one = Fraction::ONE;
        [
            (self.alpha.to_bits() == 0 || self.alpha > one, "alpha"),
            (self.beta.to_bits() == 0 || self.beta > one, "beta"),
            (self.t_low_ns >= self.t_high_ns, "t_low_ns"),
            (self.t_high_ns >= MAX_RTT_NS, "t_high_ns"),
            (!(1..=1 << 20).contains(&self.min_rtt_ns), "min_rtt_ns"),
            (self.delta.to_bits() == 0 || self.delta > one, "delta"),
            (self.hai < self.delta || self.hai > one, "hai"),
            (!(1..=1 << 24).contains(&self.min_rate_mbps), "min_rate_mbps"),
        ]
        .into_iter()
        .find_map(|(bad, name)| bad.then_some(name))
    }
}

impl Default for TimelyConfig {
    fn default() -> Self {
        Self::hpcc_sim()
    }
}

impl crate::controller::AlgorithmConfig for TimelyConfig {
    type Sender<const H: usize> = Timely;

    const DEFAULT: Self = Self::hpcc_sim();

    const PARAMS: &'static [Param<Self>] = &[
        param!(
            TimelyConfig,
            "alpha",
            alpha,
            Unit::Fraction,
            "(0, 1]",
            "EWMA weight of the new RTT difference",
            fraction
        ),
        param!(
            TimelyConfig,
            "beta",
            beta,
            Unit::Fraction,
            "(0, 1]",
            "multiplicative-decrease factor",
            fraction
        ),
        param!(
            TimelyConfig,
            "t_low_us",
            t_low_ns,
            Unit::Micros,
            "below t_high_us",
            "T_low: below it every sample increases the rate"
        ),
        param!(
            TimelyConfig,
            "t_high_us",
            t_high_ns,
            Unit::Micros,
            "above t_low_us, below 16777.216 (2^24 ns)",
            "T_high: above it the rate decreases"
        ),
        param!(
            TimelyConfig,
            "min_rtt_us",
            min_rtt_ns,
            Unit::Micros,
            "0.001 ..= 1048.576 (2^20 ns)",
            "minRTT, the gradient's normaliser"
        ),
        param!(
            TimelyConfig,
            "rate_ai",
            delta,
            Unit::Fraction,
            "(0, 1]",
            "additive step δ, a fraction of the line rate",
            fraction
        ),
        param!(
            TimelyConfig,
            "rate_hai",
            hai,
            Unit::Fraction,
            "[rate_ai, 1]",
            "hyperactive-increase step, a fraction of the line rate",
            fraction
        ),
        param!(
            TimelyConfig,
            "min_rate_mbps",
            min_rate_mbps,
            Unit::Mbps,
            "1 ..= 16777216",
            "the rate floor"
        ),
        Param {
            info: ParamInfo {
                name: "clock",
                field: "clock",
                unit: Unit::Choice(&["per_rtt", "per_sample"]),
                range: "per_rtt or per_sample",
                doc: "the update clock: once per RTT (the HPCC reference simulator's) or per sample (eRPC's)",
                follows_payload: false,
                preset: false,
            },
            get: |c| c.clock as u32,
            set: |c, v| {
                c.clock = if v == 0 {
                    TimelyClock::PerRtt
                } else {
                    TimelyClock::PerSample
                }
            },
        },
    ];

    /// A rate from RTT samples: no ECN marking; ACKs in the data's queues
    /// at the switches, as the HPCC reference simulator runs TIMELY (its
    /// `ACK_HIGH_PRIO 1` moves ACKs ahead of data only at the hosts' NICs,
    /// where every NIC, here too, sends them first: the switches'
    /// `AckHighPrio` is never set).
    const NETWORK: Network = Network::new(Gate::Rate);

    #[cfg(feature = "bench")]
    /// ACKs a microsecond apart, each passing the last update's `snd_nxt`
    /// ([`bench_ack`]).
    const ACK_BENCH: Option<AckBench> = Some(AckBench {
        name: "timely-ack",
        row: "TIMELY ACK",
        ack: bench_ack,
        interval_ns: 1_000,
        targets: Some((110, 90)),
        state_bytes: Some(24),
    });

    /// [`reference::TimelyRef`] on the same ACKs, per RTT as the row.
    #[cfg(all(feature = "reference", feature = "bench"))]
    fn reference_ack<B: crate::bench::RefBracket>(p: &FlowParams, events: u32, bracket: &mut B) -> bool {
        use reference::{TimelyRef, TimelyRefParams};
        let line = p.line_rate.to_rate().as_bps() as f64;
        let mut r = TimelyRef::new(TimelyRefParams::from_config(&Self::DEFAULT, line), p.start_seq.0 as f64);
        for i in 0..events {
            bracket.around(
                bench_ack(i + 1, &mut [crate::telemetry::HopSample::default(); 5]),
                |ack| {
                    let (cum, nxt, rtt) = (
                        ack.cum_ack.0 as f64,
                        ack.snd_nxt.0 as f64,
                        ack.rtt_ns.unwrap_or(0) as f64,
                    );
                    core::hint::black_box(&mut r).ack(0.0, cum, nxt, rtt);
                    core::hint::black_box(&r);
                },
            );
        }
        true
    }

    fn validate(&self) -> Result<(), Error> {
        TimelyConfig::validate(self)
    }

    fn invalid_field(&self) -> Option<&'static str> {
        TimelyConfig::invalid_field(self)
    }

    /// alpha 4 | beta 4 | T_low 4 | T_high 4 | minRTT 4 | delta 4 | HAI 4 |
    /// min Mb/s 4 | clock 1 (0 per RTT, 1 per sample).
    fn encode(&self, w: &mut ConfigWriter<'_, '_>) -> WireResult<()> {
        for v in [
            self.alpha.to_bits(),
            self.beta.to_bits(),
            self.t_low_ns,
            self.t_high_ns,
            self.min_rtt_ns,
            self.delta.to_bits(),
            self.hai.to_bits(),
            self.min_rate_mbps,
        ] {
            w.u32(v)?;
        }
        w.u8(match self.clock {
            TimelyClock::PerRtt => 0,
            TimelyClock::PerSample => 1,
        })
    }

    fn decode(r: &mut ConfigReader<'_, '_>) -> WireResult<Self> {
        Ok(TimelyConfig {
            alpha: r.fraction()?,
            beta: r.fraction()?,
            t_low_ns: r.u32()?,
            t_high_ns: r.u32()?,
            min_rtt_ns: r.u32()?,
            delta: r.fraction()?,
            hai: r.fraction()?,
            min_rate_mbps: r.u32()?,
            clock: match r.u8()? {
                0 => TimelyClock::PerRtt,
                1 => TimelyClock::PerSample,
                _ => return Err(WireError::UnknownType),
            },
        })
    }

    /// The rate within [min(minimum rate, line rate), line rate] (pacing
    /// floors to 2^-4 byte per µs: one unit allowed below); no timer, no
    /// request.
    fn check_decision(&self, p: &FlowParams, d: &Decision) -> Result<(), &'static str> {
        let line = p.line_rate.to_rate().as_bps();
        let floor = (self.min_rate_mbps as u64 * 1_000_000).min(line);
        if d.rate().as_bps() + 128_000 < floor {
            return Err("TIMELY rate below its minimum");
        }
        if d.rate().as_bps() > line {
            return Err("TIMELY rate above the line rate");
        }
        if d.timer != TimerRequest::Keep || d.request != Request::None {
            return Err("TIMELY asked for a timer or a request");
        }
        Ok(())
    }
}

#[cfg(feature = "bench")]
/// The firmware benchmark's ACK `n`: it passes the `snd_nxt` of ACK
/// n − 1, so each one updates the rate, with an RTT sample from a cycle of
/// eight that takes every branch under the defaults: below T_low
/// (increase), a rising and a falling gradient between T_low and T_high
/// (decrease with its division, increase), above T_high (decrease).
pub fn bench_ack(n: u32, _hops: &mut [crate::telemetry::HopSample; 5]) -> Ack<'static> {
    const RTTS: [u32; 8] = [40_000, 60_000, 75_000, 70_000, 62_000, 520_000, 90_000, 55_000];
    Ack {
        rtt_ns: Some(RTTS[(n % 8) as usize]),
        ..Ack::new(Seq(n.wrapping_mul(1000)), Seq(n.wrapping_mul(1000).wrapping_add(500)))
    }
}

/// One TIMELY flow at its sender: 24 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Timely {
    /// The sending rate.
    rate: RateQ8,
    /// The line rate, the largest rate, in Mb/s (below 2^23) in the low 24
    /// bits; in the high 8, the gradient reciprocal's shift S.
    line_and_shift: u32,
    /// rtt_diff, the EWMA of RTT differences, 2^-4 ns.
    rtt_diff: i32,
    /// The sample the next difference is taken against, ns (0: none yet),
    /// in the low 24 bits; in the high 8, the increases in a row (per
    /// RTT) or negative differences in a row (per sample), saturating.
    prev_and_count: u32,
    /// Per RTT: the update ends when the cumulative ACK passes this
    /// `snd_nxt`. Per sample: the last update's time, ns modulo 2^32.
    mark: u32,
    /// The gradient's reciprocal K = ⌊β·2^S / (16·minRTT)⌋ in [2^31, 2^32)
    /// ([`gradient_reciprocal`]): β·rtt_diff/minRTT in 2^-24 is
    /// ⌊rtt_diff·K / 2^S⌋ for rtt_diff in 2^-4 ns, a product and a shift
    /// where it was a division. Taken once at the start (the
    /// configuration is fixed while a flow lives).
    grad_k: u32,
}

/// Rounds `x·f` for a rate and a fraction, down (< 2^32·2^24 < 2^64).
fn scale(x: RateQ8, f: Fraction) -> u64 {
    (x as u64 * f.to_bits() as u64) >> Fraction::FRAC_BITS
}

/// The gradient's decrease term β·x/(16·minRTT) for x = rtt_diff in 2^-4
/// ns is b·x/d in 2^-24, b = β's bits (1 ..= 2^24), d = 16·minRTT (16 ..=
/// 2^24). Returns (K, S) with K = ⌊b·2^S/d⌋ in [2^31, 2^32), so that
/// ⌊x·K/2^S⌋ is b·x/d rounded down, low by at most 1 + (b·x/d)/2^31 steps
/// of 2^-24 (K's relative error is below 2^-31): one step wherever the term
/// is below 1, the only range where the factor is not 0. b/d lies in
/// [2^-24, 2^20], so S lies in
/// [11, 56]. Exact integer steps: q = ⌊b·2^32/d⌋ (b·2^32 < 2^57), then
/// shifted right, or extended left with the remainder's next bits.
fn gradient_reciprocal(b: u32, d: NonZeroU64) -> (u32, u32) {
    let n = (b as u64) << 32;
    let q = div_u64(n, d);
    // q ≥ 2^32/2^24 = 2^8 > 0; its top bit's position fixes the shift.
    let top = 63 - q.leading_zeros();
    if top >= 31 {
        // K = ⌊q / 2^(top − 31)⌋, S = 32 − (top − 31).
        let s = top - 31;
        ((q >> s) as u32, 32 - s)
    } else {
        // K = q·2^s + ⌊r·2^s / d⌋, S = 32 + s, with r < d < 2^25 and s ≤
        // 23: r·2^s < 2^48.
        let s = 31 - top;
        let r = n - q * d.get();
        (((q << s) + div_u64(r << s, d)) as u32, 32 + s)
    }
}

/// The decrease factor 1 − x in 2^-24 for a decrease term x in 2^-24,
/// floored at 0.
fn one_minus(x: u64) -> u64 {
    (Fraction::ONE.to_bits() as u64).saturating_sub(x)
}

impl Timely {
    /// A flow at the line rate, no sample yet.
    pub fn new(cfg: &TimelyConfig, p: &FlowParams, now: Instant) -> Result<Self, Error> {
        cfg.validate()?;
        if !p.line_rate.is_plausible() {
            return Err(Error::InvalidParams);
        }
        // ≤ 6.4·10^6 Mb/s < 2^23; as a rate, · 2^8 < 2^31.
        let line_mbps = p.line_rate.as_mbps();
        // 16·minRTT ≥ 16 by validation.
        let Some(d) = NonZeroU64::new((cfg.min_rtt_ns as u64) << 4) else {
            return Err(Error::InvalidParams);
        };
        let (grad_k, shift) = gradient_reciprocal(cfg.beta.to_bits(), d);
        Ok(Timely {
            rate: line_mbps << 8,
            line_and_shift: (line_mbps & 0x00FF_FFFF) | shift << 24,
            rtt_diff: 0,
            prev_and_count: 0,
            mark: match cfg.clock {
                TimelyClock::PerRtt => p.start_seq.0,
                TimelyClock::PerSample => now.as_nanos() as u32,
            },
            grad_k,
        })
    }

    /// The current decision: the rate paced as bytes per µs, no window
    /// (the largest the engine configures), ECN-capable, nothing asked.
    pub fn decision(&self) -> Decision {
        Decision {
            window: Window::from_bytes(Window::MAX_CONFIG_BYTES),
            pacing: Pacing {
                bytes: Window::from_bits(self.rate >> 7),
                per: PACING_PERIOD,
            },
            ecn: Ecn::Ect,
            timer: TimerRequest::Keep,
            request: Request::None,
            ev: None,
        }
    }

    /// The sending rate, Mb/s in 2^-8 steps.
    pub fn rate(&self) -> RateQ8 {
        self.rate
    }

    /// The line rate, Mb/s in 2^-8 steps.
    fn line(&self) -> RateQ8 {
        self.line_and_shift << 8
    }

    /// The rate floor, Mb/s in 2^-8 steps: min_rate_mbps, at most the
    /// line rate.
    #[inline(always)]
    fn floor(&self, cfg: &TimelyConfig) -> RateQ8 {
        cfg.min_rate_mbps.saturating_mul(256).min(self.line())
    }

    /// rtt_diff, 2^-4 ns.
    pub fn rtt_diff(&self) -> i32 {
        self.rtt_diff
    }

    /// The sample the next difference is taken against, ns (0: none yet).
    pub fn prev_rtt(&self) -> u32 {
        self.prev_and_count & (MAX_RTT_NS - 1)
    }

    /// Increases in a row (per RTT) or negative differences in a row (per
    /// sample).
    pub fn count(&self) -> u8 {
        (self.prev_and_count >> 24) as u8
    }

    /// Sets the rate, rtt_diff (2^-4 ns), the sample compared with (ns, 0
    /// for none) and the count, e.g. to restore a checkpoint; refuses a
    /// rate outside [the floor, the line rate], a difference of 2^28 or
    /// more in magnitude, or a sample of 2^24 ns or more.
    pub fn restore(
        &mut self,
        cfg: &TimelyConfig,
        rate: RateQ8,
        rtt_diff: i32,
        prev_rtt: u32,
        count: u8,
    ) -> Result<(), Error> {
        let floor = self.floor(cfg);
        if rate < floor || rate > self.line() || rtt_diff.unsigned_abs() >= 1 << 28 || prev_rtt >= MAX_RTT_NS {
            return Err(Error::InvalidParams);
        }
        self.rate = rate;
        self.rtt_diff = rtt_diff;
        self.set_prev(prev_rtt, count);
        Ok(())
    }

    fn set_prev(&mut self, rtt: u32, count: u8) {
        self.prev_and_count = (count as u32) << 24 | (rtt & (MAX_RTT_NS - 1));
    }

    /// rtt_diff ← (1 − α)·rtt_diff + α·new_rtt_diff (paper Algorithm 1),
    /// in 2^-4 ns rounded to nearest. Returns the new value (not stored).
    #[inline(always)]
    fn ewma(&self, cfg: &TimelyConfig, new_diff_ns: i32) -> i32 {
        // The same as rtt_diff + α·(new − rtt_diff), one product rounded
        // to nearest; the result lies between rtt_diff and new, so
        // |rtt_diff| stays below 2^28. The step |16·new − rtt_diff| <
        // 2^28 + 2^28, doubled < 2^30, fits i32; α·2^7 ≤ 2^31 fits u32;
        // their product (< 2^61) in i64 is one signed-by-unsigned multiply
        // on a 32-bit core (`mulhsu`, `mul`), and
        // ⌊(2·step·α·2^7 + 2^31) / 2^32⌋ = ⌊(step·α + 2^23) / 2^24⌋.
        let a = cfg.alpha.to_bits().min(Fraction::ONE.to_bits()) << 7;
        let step2 = ((new_diff_ns << 4).wrapping_sub(self.rtt_diff)) << 1;
        let p = step2 as i64 * a as i64;
        self.rtt_diff + ((p + (1 << 31)) >> 32) as i32
    }

    /// The gradient's decrease term β·rtt_diff/minRTT in 2^-24 for
    /// `diff` > 0 in 2^-4 ns (< 2^28): ⌊diff·K/2^S⌋ < 2^60/2^11, no
    /// division.
    #[inline(always)]
    fn gradient_term(&self, diff: u32) -> u64 {
        // S ∈ [11, 56] by construction; masked so the shift never passes 63.
        let s = (self.line_and_shift >> 24) & 63;
        (diff as u64 * self.grad_k as u64) >> s
    }

    /// The decrease factor above T_high, 1 − β·φ·(rtt − T_high)/rtt in
    /// 2^-24, floored at 0: (rtt − T_high)/rtt as a proper fraction in
    /// 2^-24 (rtt < 2^24; [`fraction_q24`], inline divides, no call), then
    /// by β·φ. Low by at most two LSBs of 2^-24.
    #[inline(always)]
    fn high_factor(bphi: u64, rtt: u32, t_high: u32) -> u64 {
        let Some(d) = NonZeroU32::new(rtt) else {
            return 0;
        };
        let y = fraction_q24(rtt.saturating_sub(t_high), d) as u64;
        one_minus((bphi * y) >> Fraction::FRAC_BITS)
    }

    /// One update with the sample `rtt` (ns, 1 ..< 2^24) against the
    /// previous sample, scaled by φ (2^-24, 1 per RTT), per `cfg.clock`.
    #[inline(always)]
    fn update(&mut self, cfg: &TimelyConfig, rtt: u32, phi: u64) {
        let one = Fraction::ONE.to_bits() as u64;
        let per_sample = cfg.clock == TimelyClock::PerSample;
        let new_diff = rtt as i32 - self.prev_rtt() as i32;
        let diff = self.ewma(cfg, new_diff);
        // Per RTT the count is of increases; per sample, of negative
        // differences, kept whatever the branch.
        let mut count = self.count();
        if per_sample {
            count = if new_diff < 0 { count.saturating_add(1) } else { 0 };
        }
        let hai = count >= HAI_AFTER;
        let line = self.line();
        // Some(step fraction) on an increase, None on a decrease with `c`.
        let (inc, c): (Option<Fraction>, u64) = if rtt < cfg.t_low_ns {
            // Per sample (eRPC) the T_low increase is δ alone.
            (Some(if hai && !per_sample { cfg.hai } else { cfg.delta }), 0)
        } else if rtt > cfg.t_high_ns {
            // c = 1 − β·φ·(1 − T_high/rtt) = 1 − β·φ·(rtt − T_high)/rtt,
            // β·φ in 2^-24 (each ≤ 2^24); φ = 1 on the per-RTT clock.
            let beta = (cfg.beta.to_bits() as u64).min(one);
            let bphi = if phi >= one {
                beta
            } else {
                (beta * phi) >> Fraction::FRAC_BITS
            };
            (None, Self::high_factor(bphi, rtt, cfg.t_high_ns))
        } else if diff <= 0 {
            (Some(if hai { cfg.hai } else { cfg.delta }), 0)
        } else {
            // c = 1 − β·φ·rtt_diff/minRTT: the term from the reciprocal
            // (< 2^49), then by φ: a product past 2^64 is a term past 1.
            let x = self.gradient_term(diff as u32);
            let x = if phi >= one {
                x
            } else {
                x.checked_mul(phi).map_or(u64::MAX, |p| p >> Fraction::FRAC_BITS)
            };
            (None, one_minus(x))
        };
        let old = self.rate;
        self.rate = match inc {
            Some(step) => {
                // rate + step·line·φ, saturating at the line rate. No
                // floor: the rate is at or above it already (a flow starts
                // at the line rate, `restore` refuses a rate below it,
                // every decrease applies it), and an increase only adds.
                let add = if phi >= one {
                    scale(line, step)
                } else {
                    (scale(line, step) * phi) >> Fraction::FRAC_BITS
                };
                old.saturating_add(add as u32).min(line)
            }
            None => {
                let mut r = ((old as u64 * c) >> Fraction::FRAC_BITS) as u32;
                if per_sample {
                    r = r.max(old >> 1);
                }
                r.max(self.floor(cfg))
            }
        };
        if !per_sample {
            count = match inc {
                Some(_) => count.saturating_add(1),
                None => 0,
            };
        }
        self.rtt_diff = diff;
        self.set_prev(self.prev_rtt(), count);
    }
}

impl Controller for Timely {
    type Config = TimelyConfig;

    fn validate(cfg: &TimelyConfig) -> Result<(), Error> {
        cfg.validate()
    }

    fn start(cfg: &TimelyConfig, now: Instant, p: &FlowParams) -> Result<(Self, Decision), Error> {
        if p.algorithm != Algorithm::Timely {
            return Err(Error::NotApplicable);
        }
        let t = Timely::new(cfg, p, now)?;
        Ok((t, t.decision()))
    }

    fn decision(&self, _cfg: &TimelyConfig) -> Decision {
        Timely::decision(self)
    }

    /// An ACK with its RTT sample. Without one the rate stands; a sample of
    /// 0 or of 2^24 ns or more is refused (`InvalidParams`) with the state
    /// unchanged.
    ///
    /// Per RTT: an ACK past the mark updates (except in the first RTT,
    /// which only records), then takes the sample as the one to compare
    /// with and `snd_nxt` as the next mark; an ACK before it changes
    /// nothing. Per sample: a sample below minRTT is skipped; every other
    /// one updates with φ = min(Δt/minRTT, 1).
    // Inlined into the engine's entry, its one caller in a firmware
    // (an out-of-line call there cost 14-23 instructions an ACK).
    #[inline(always)]
    fn ack(&mut self, cfg: &TimelyConfig, now: Instant, ack: &Ack<'_>) -> Result<Decision, Error> {
        let Some(rtt) = ack.rtt_ns else {
            return Ok(self.decision());
        };
        if rtt == 0 || rtt >= MAX_RTT_NS {
            return Err(Error::InvalidParams);
        }
        let one = Fraction::ONE.to_bits() as u64;
        match cfg.clock {
            TimelyClock::PerRtt => {
                if !ack.cum_ack.after(Seq(self.mark)) {
                    return Ok(self.decision());
                }
                if self.prev_rtt() != 0 {
                    self.update(cfg, rtt, one);
                }
                if ack.snd_nxt.after(Seq(self.mark)) {
                    self.mark = ack.snd_nxt.0;
                    self.set_prev(rtt, self.count());
                }
            }
            TimelyClock::PerSample => {
                if rtt < cfg.min_rtt_ns {
                    return Ok(self.decision());
                }
                if self.prev_rtt() == 0 {
                    // eRPC starts prev_rtt at minRTT.
                    self.set_prev(cfg.min_rtt_ns, 0);
                }
                let now32 = now.as_nanos() as u32;
                let dt = now32.wrapping_sub(self.mark);
                // φ = min(Δt/minRTT, 1) in 2^-24: Δt·2^24 < 2^44.
                let phi = match NonZeroU32::new(cfg.min_rtt_ns) {
                    // dt < minRTT ≤ 2^20: a proper fraction.
                    Some(m) if dt < cfg.min_rtt_ns => fraction_q24(dt, m) as u64,
                    _ => one,
                };
                self.update(cfg, rtt, phi);
                self.mark = now32;
                self.set_prev(rtt, self.count());
            }
        }
        Ok(self.decision())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 20_000, failure_persistence: None, ..ProptestConfig::default() })]
        /// The gradient's reciprocal: K in [2^31, 2^32), S in [11, 56],
        /// and ⌊x·K/2^S⌋ never above b·x/d and below it by at most
        /// 1 + (b·x/d)/2^31 steps (one step below 2^24, a term below 1),
        /// over every β (b), minRTT (d = 16·minRTT) and rtt_diff (x < 2^28).
        #[test]
        fn the_gradient_reciprocal_is_within_two_steps(
            b in 1u32..=1 << 24,
            min_rtt in 1u32..=1 << 20,
            x in 1u32..1 << 28,
        ) {
            let d = (min_rtt as u64) << 4;
            let (k, s) = gradient_reciprocal(b, NonZeroU64::new(d).unwrap());
            prop_assert!(k >= 1 << 31, "K {k}");
            prop_assert!((11..=56).contains(&s), "S {s}");
            let got = (x as u128 * k as u128) >> s;
            let exact = (b as u128 * x as u128) / d as u128;
            prop_assert!(got <= exact && exact - got <= 1 + (exact >> 31), "{got} against {exact}");
        }
    }

    #[test]
    fn the_gradient_reciprocal_at_its_corners() {
        for (b, m) in [
            (1u32, 1u32),
            (1, 1 << 20),
            (1 << 24, 1),
            (1 << 24, 1 << 20),
            (13_421_773, 20_000),
        ] {
            let d = (m as u64) << 4;
            let (k, s) = gradient_reciprocal(b, NonZeroU64::new(d).unwrap());
            assert!(k >= 1 << 31 && (11..=56).contains(&s), "{b} {m}: {k} {s}");
            for x in [1u32, 16, (1 << 28) - 1] {
                let got = (x as u128 * k as u128) >> s;
                let exact = (b as u128 * x as u128) / d as u128;
                assert!(
                    got <= exact && exact - got <= 1 + (exact >> 31),
                    "{b} {m} {x}: {got} against {exact}"
                );
            }
        }
    }
}
