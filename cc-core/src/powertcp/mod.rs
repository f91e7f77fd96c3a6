//! **θ-PowerTCP** (Addanki, Michel and Schmid, NSDI 2022, §3.4 and
//! Algorithm 2): PowerTCP's window law driven by power measured from RTT
//! samples alone, for fabrics whose switches write no telemetry.
//!
//! PowerTCP reacts to *power*, the product of a path's "current" (the rate
//! at which bytes arrive at the bottleneck) and "voltage" (the bytes it
//! holds: queue plus bandwidth-delay product). From an RTT θ and its
//! gradient the normalised power is
//!
//! ```text
//! Γ_norm = (dθ/dt + 1) · θ / τ                        (τ: the base RTT)
//! Γ      = ((τ − Δt)·Γ + Δt·Γ_norm) / τ,  Δt = min(dt, τ)
//! W      = γ·(W_old / Γ + β) + (1 − γ)·W               once per RTT
//! ```
//!
//! with the pacing rate W/τ. At equilibrium Γ = 1 + N·β/BDP for N flows
//! at one bottleneck: its queue holds the flows' β, no more.
//!
//! Read from the paper's Algorithm 2 and the authors' Linux module
//! (`powertcp-linux`, `rttptcp_*`); docs/design-notes.md, "θ-PowerTCP
//! readings", states every choice:
//!
//! - Γ takes a sample on every ACK ([`PowerClock::PerAck`], the paper's
//!   NORMPOWER per ACK: the gradient against the ACK before, Γ smoothed
//!   over τ by the time between them) or only on the ACK that updates the
//!   window ([`PowerClock::PerRtt`], the Linux module: Δt is then an RTT
//!   or more and Γ is Γ_norm unsmoothed); the first sample has no earlier
//!   one and takes a gradient of 0;
//! - the window is updated once per RTT: when the cumulative ACK reaches
//!   the `snd_nxt` of the last update (the module's
//!   `!before(snd_una, last_updated)`);
//! - a falling RTT lowers the factor 1 + dθ/dt to no less than
//!   [`ThetaPowerTcpConfig::min_growth`] (0 in the module; the authors'
//!   ns-3 code floors it at 0.5);
//! - Γ_norm is floored at 0.01, as the module's `p_norm_cutoff`; the first
//!   Γ is Γ_norm itself (no smoothing from nothing);
//! - W_old, "the window in force when the acknowledged packet left", is
//!   the window of the last update: the window changes only there, once per
//!   RTT, so the packets an update's ACK acknowledges left under it;
//! - β from the host's BDP and the expected number of flows (BDP/N, the
//!   module's default N = 10), or from a rate as the ns-3 code's 150 Mb/s
//!   (β = rate·τ);
//! - the window between [`ThetaPowerTcpConfig::min_window_bytes`] and the
//!   host's BDP (line rate × τ), which a new flow starts at.
//!
//! τ is the flow's base RTT ([`FlowParams::base_rtt`]), not the smallest
//! sample seen (the module's fallback when no base RTT is configured).
//!
//! Units: windows and β in 2^-4 byte ([`Window`]'s); Γ in 2^-24 while a
//! sample and an update run, kept between samples in 2^-16 (the module's
//! `power_scale`), rounded to nearest; the factor 1 + dθ/dt in 2^-32;
//! fractions in 2^-24; times in ns. Ranges: Γ below 256 (saturating: a window divided by 256 is at its floor for any
//! path this engine takes), the factor below 2^16, RTT samples below 2^24
//! ns, windows below 64 MiB.
//!
//! Divisions: a sample takes the gradient (one 64/32 division), θ/τ (one;
//! two 32-bit divides on a 32-bit core) and, when samples come less than
//! τ apart, the smoothing's /τ (one); a window update W_old/Γ (one) and β
//! (one).

mod int;
#[cfg(feature = "reference")]
pub mod reference;
#[cfg(test)]
mod tests;

use core::num::{NonZeroU32, NonZeroU64};

pub use self::int::{Arrivals, PowerTcp, PowerTcpConfig, UpdateClock, POWER28_LIMIT};

#[cfg(feature = "bench")]
use crate::bench::AckBench;
use crate::codec::{ConfigReader, ConfigWriter};
use crate::controller::Controller;
use crate::error::Error;
use crate::event::{Ack, Algorithm, Decision, FlowParams, MessageEnd, Request, TimerRequest};
use crate::fixmath::div_u64;
use crate::params::{param, Gate, Network, Param, ParamInfo, Unit};
use crate::units::{BaseRtt, Fraction, Instant, Seq, Window};
use crate::wire::{Result as WireResult, WireError};

/// The largest RTT sample taken, exclusive: 2^24 ns (16.8 ms). A larger
/// one, or 0, is no measurement a NIC makes: refused.
pub const MAX_RTT_NS: u32 = 1 << 24;

/// Fractional bits of Γ as a flow keeps it (24 bits of state).
pub const POWER_BITS: u32 = 16;

/// Fractional bits of Γ while an update runs, as the factor 1 + dθ/dt's:
/// at Γ's floor of 0.01, 2^-16 is a relative 0.15 %, which the window
/// law's W_old/Γ would carry into the window whole.
const RUN_BITS: u32 = 24;

/// [`MIN_POWER`] and [`POWER_LIMIT`] in 2^-[`RUN_BITS`].
const MIN_RUN: u64 = (MIN_POWER as u64) << (RUN_BITS - POWER_BITS);
const RUN_LIMIT: u64 = (POWER_LIMIT as u64) << (RUN_BITS - POWER_BITS);

/// Γ_norm's floor, 0.01 in 2^-16 (the Linux module's `p_norm_cutoff`,
/// 0.01·2^16 rounded down).
pub const MIN_POWER: u32 = 655;

/// Γ's ceiling, exclusive: 256 in 2^-16.
pub const POWER_LIMIT: u32 = 1 << 24;

/// The factor 1 + dθ/dt's ceiling, exclusive: 2^16 in 2^-24 (an RTT
/// rising 65 535 times faster than time passes).
pub const GROWTH_LIMIT: u64 = 1 << 40;

/// Bits below the window's 2^-4 byte that the window law keeps until
/// its one rounding.
const EXTRA_BITS: u32 = 4;

/// 125, a divisor of β's conversion from Mb/s·ns.
const N125: NonZeroU64 = match NonZeroU64::new(125) {
    Some(n) => n,
    None => panic!("125 is not 0"),
};

/// The largest window, 2^-4 byte: one step below
/// [`Window::MAX_CONFIG_BYTES`], so that it has 30 bits.
const MAX_WINDOW_BITS: u64 = ((Window::MAX_CONFIG_BYTES as u64) << Window::FRAC_BITS) - 1;

/// θ-PowerTCP's parameters shared by every flow of an engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ThetaPowerTcpConfig {
    /// γ, the new window's weight (0 < γ ≤ 1).
    pub gamma: Fraction,
    /// N, the flows expected to share a bottleneck: β = BDP/N when
    /// `beta_mbps` is 0 (1 ..= 65 535).
    pub expected_flows: u32,
    /// β as a rate, Mb/s: β = beta_mbps · τ bytes; 0 for BDP/N (≤ 2^24).
    pub beta_mbps: u32,
    /// The floor of the factor 1 + dθ/dt (0 ≤ it ≤ 1).
    pub min_growth: Fraction,
    /// The window's floor, bytes (1 ..= 65 535).
    pub min_window_bytes: u32,
    /// When Γ takes a sample.
    pub clock: PowerClock,
    /// τ in Γ_norm scaled by this, percent (100 ..= 200): the ns-3 code's
    /// 105 divides by 1.05·τ, so that an idle path whose RTT exceeds the
    /// base RTT by a few per cent still reads as unloaded.
    pub tau_scale_pct: u32,
}

/// When Γ takes an RTT sample (the window is updated once per RTT either
/// way).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum PowerClock {
    /// On every ACK, the gradient against the ACK before and Γ smoothed
    /// over τ with the time between them, as the paper's Algorithm 2
    /// (NORMPOWER on each ACK, UPDATEWINDOW once per RTT).
    PerAck,
    /// Only on the ACK that updates the window, the gradient against the
    /// last update's sample, as the authors' Linux module (`rttptcp`): Δt
    /// is then an RTT or more, so Γ is Γ_norm, unsmoothed.
    PerRtt,
}

impl ThetaPowerTcpConfig {
    /// The paper's and the authors' Linux module's θ-PowerTCP: γ 0.9, β =
    /// BDP/10, no floor on the gradient's factor; a 64-byte window floor.
    pub const fn paper() -> Self {
        ThetaPowerTcpConfig {
            gamma: Fraction::preset(9, 10),
            expected_flows: 10,
            beta_mbps: 0,
            min_growth: Fraction::ZERO,
            min_window_bytes: 64,
            clock: PowerClock::PerAck,
            tau_scale_pct: 100,
        }
    }

    /// The authors' Linux module (`rttpowertcp`): the paper's constants
    /// with Γ sampled once per RTT.
    pub const fn linux() -> Self {
        ThetaPowerTcpConfig {
            clock: PowerClock::PerRtt,
            ..Self::paper()
        }
    }

    /// The constants of the authors' ns-3 code (`UpdateRatePower` with
    /// `PowerTCPdelay`): γ 0.7, β 150 Mb/s, the factor floored at 0.5,
    /// Γ_norm over 1.05·τ. (Its per-ACK rate from the last update's rate
    /// is not taken: docs/design-notes.md.)
    pub const fn ns3() -> Self {
        ThetaPowerTcpConfig {
            gamma: Fraction::preset(7, 10),
            expected_flows: 10,
            beta_mbps: 150,
            min_growth: Fraction::preset(1, 2),
            min_window_bytes: 64,
            clock: PowerClock::PerAck,
            tau_scale_pct: 105,
        }
    }

    /// Checks every field's range.
    pub fn validate(&self) -> Result<(), Error> {
        match self.invalid_field() {
            None => Ok(()),
            Some(_) => Err(Error::InvalidParams),
        }
    }

    /// The first field out of its range, by its name here.
    pub fn invalid_field(&self) -> Option<&'static str> {
        [
            (self.gamma.to_bits() == 0 || self.gamma > Fraction::ONE, "gamma"),
            (!(1..=65_535).contains(&self.expected_flows), "expected_flows"),
            (self.beta_mbps > 1 << 24, "beta_mbps"),
            (self.min_growth > Fraction::ONE, "min_growth"),
            (!(1..=65_535).contains(&self.min_window_bytes), "min_window_bytes"),
            (!(100..=200).contains(&self.tau_scale_pct), "tau_scale_pct"),
        ]
        .into_iter()
        .find_map(|(bad, name)| bad.then_some(name))
    }
}

impl Default for ThetaPowerTcpConfig {
    fn default() -> Self {
        Self::paper()
    }
}

impl crate::controller::AlgorithmConfig for ThetaPowerTcpConfig {
    type Sender<const H: usize> = ThetaPowerTcp;

    const DEFAULT: Self = Self::paper();

    const PARAMS: &'static [Param<Self>] = &[
        param!(
            ThetaPowerTcpConfig,
            "gamma",
            gamma,
            Unit::Fraction,
            "(0, 1]",
            "the new window's weight",
            fraction
        ),
        param!(
            ThetaPowerTcpConfig,
            "expected_flows",
            expected_flows,
            Unit::Count,
            "1 ..= 65535",
            "flows expected at a bottleneck: beta = BDP / expected_flows"
        ),
        param!(
            ThetaPowerTcpConfig,
            "beta_mbps",
            beta_mbps,
            Unit::Mbps,
            "0 ..= 16777216",
            "beta as a rate times the base RTT; 0 for BDP / expected_flows"
        ),
        param!(
            ThetaPowerTcpConfig,
            "min_growth",
            min_growth,
            Unit::Fraction,
            "[0, 1]",
            "the floor of the factor 1 + dRTT/dt",
            fraction
        ),
        param!(
            ThetaPowerTcpConfig,
            "min_window_bytes",
            min_window_bytes,
            Unit::Bytes,
            "1 ..= 65535",
            "the window's floor"
        ),
        Param {
            info: ParamInfo {
                name: "clock",
                field: "clock",
                unit: Unit::Choice(&["per_ack", "per_rtt"]),
                range: "per_ack or per_rtt",
                doc: "when power takes an RTT sample: every ACK (the paper's) or once per RTT (the Linux module's)",
                follows_payload: false,
                preset: false,
            },
            get: |c| c.clock as u32,
            set: |c, v| c.clock = if v == 0 { PowerClock::PerAck } else { PowerClock::PerRtt },
        },
        param!(
            ThetaPowerTcpConfig,
            "tau_scale_pct",
            tau_scale_pct,
            Unit::Count,
            "100 ..= 200",
            "the base RTT in power's normaliser scaled by this, percent"
        ),
    ];

    /// A window from RTT samples: no ECN, ACKs queued with data (the RTT
    /// it measures is the data's).
    const NETWORK: Network = Network::new(Gate::Window);

    #[cfg(feature = "bench")]
    /// Updating ACKs an RTT apart ([`bench_ack`]).
    const ACK_BENCH: Option<AckBench> = Some(AckBench {
        name: "theta-powertcp-ack",
        row: "θ-PowerTCP ACK",
        ack: bench_ack,
        interval_ns: 10_000,
        targets: Some((220, 140)),
        state_bytes: Some(24),
    });

    fn validate(&self) -> Result<(), Error> {
        ThetaPowerTcpConfig::validate(self)
    }

    fn invalid_field(&self) -> Option<&'static str> {
        ThetaPowerTcpConfig::invalid_field(self)
    }

    /// gamma 4 | expected flows 4 | beta Mb/s 4 | min growth 4 | min window
    /// 4 | clock 1 (0 per ACK, 1 per RTT) | τ scale 4.
    fn encode(&self, w: &mut ConfigWriter<'_, '_>) -> WireResult<()> {
        for v in [
            self.gamma.to_bits(),
            self.expected_flows,
            self.beta_mbps,
            self.min_growth.to_bits(),
            self.min_window_bytes,
        ] {
            w.u32(v)?;
        }
        w.u8(match self.clock {
            PowerClock::PerAck => 0,
            PowerClock::PerRtt => 1,
        })?;
        w.u32(self.tau_scale_pct)
    }

    fn decode(r: &mut ConfigReader<'_, '_>) -> WireResult<Self> {
        Ok(ThetaPowerTcpConfig {
            gamma: r.fraction()?,
            expected_flows: r.u32()?,
            beta_mbps: r.u32()?,
            min_growth: r.fraction()?,
            min_window_bytes: r.u32()?,
            clock: match r.u8()? {
                0 => PowerClock::PerAck,
                1 => PowerClock::PerRtt,
                _ => return Err(WireError::UnknownType),
            },
            tau_scale_pct: r.u32()?,
        })
    }

    /// The window within [its floor, max(floor, the host's BDP)], paced
    /// one window per base RTT; no timer, no request.
    fn check_decision(&self, p: &FlowParams, d: &Decision) -> Result<(), &'static str> {
        let floor = (self.min_window_bytes as u64) << Window::FRAC_BITS;
        let ceiling = host_bdp(p).max(floor);
        let w = d.window.to_bits() as u64;
        if w < floor {
            return Err("θ-PowerTCP window below its floor");
        }
        if w > ceiling {
            return Err("θ-PowerTCP window above the host's BDP");
        }
        if d.pacing.bytes != d.window || d.pacing.per != p.base_rtt {
            return Err("θ-PowerTCP not paced one window per base RTT");
        }
        if d.timer != TimerRequest::Keep || d.request != Request::None {
            return Err("θ-PowerTCP asked for a timer or a request");
        }
        Ok(())
    }
}

#[cfg(feature = "bench")]
/// The firmware benchmark's ACK `n`, 10 µs after ACK n − 1 on a flow
/// with τ = 8 µs: it passes the `snd_nxt` of ACK n − 1, so each one
/// updates, with an RTT from a cycle of eight that takes every branch: a
/// rising RTT, a falling one, one rising faster than time (the factor
/// past 2), one falling faster (the factor at its floor), a steady one.
pub fn bench_ack(n: u32, _hops: &mut [crate::telemetry::HopSample; 5]) -> Ack<'static> {
    const RTTS: [u32; 8] = [9_000, 12_000, 15_000, 11_000, 8_500, 30_000, 10_000, 9_500];
    Ack {
        rtt_ns: Some(RTTS[(n % 8) as usize]),
        ..Ack::new(Seq(n.wrapping_mul(1000)), Seq(n.wrapping_mul(1000).wrapping_add(500)))
    }
}

/// The host's BDP, line rate × base RTT, in 2^-4 byte, at most
/// [`Window::MAX_CONFIG_BYTES`]: Mb/s·ns/8000 bytes = Mb/s·ns/500 in 2^-4
/// byte (< 2^23·2^21).
fn host_bdp(p: &FlowParams) -> u64 {
    (p.line_rate.as_mbps() as u64 * p.base_rtt.as_nanos() as u64 / 500).min(MAX_WINDOW_BITS)
}

/// One θ-PowerTCP flow at its sender: 24 bytes. τ − 1 (20 bits: τ ≤
/// 2^20 ns) lives in the spare top bits of four words: bits 0-7 of it
/// above the RTT, 8-15 above Γ, 16-17 above the window, 18-19 above the
/// BDP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ThetaPowerTcp {
    /// The window, 2^-4 byte, in the low 30 bits.
    w_tau: u32,
    /// The host's BDP, the window's ceiling, 2^-4 byte, in the low 30 bits.
    bdp_tau: u32,
    /// The window's next update comes when the cumulative ACK reaches this
    /// `snd_nxt`.
    mark: u32,
    /// The time of the sample Γ last took, ns modulo 2^32.
    t_prev: u32,
    /// The RTT sample Γ last took, ns (0: none yet), in the low 24 bits.
    rtt_tau: u32,
    /// Γ in 2^-16 (0: none yet), below 256, in the low 24 bits.
    power_tau: u32,
}

/// The window's and the BDP's bits in their words.
const WINDOW_MASK: u32 = (1 << 30) - 1;
/// Γ's and the RTT's bits in their words.
const LOW24: u32 = (1 << 24) - 1;

impl ThetaPowerTcp {
    /// A flow at the host's BDP, no sample yet.
    pub fn new(cfg: &ThetaPowerTcpConfig, p: &FlowParams, now: Instant) -> Result<Self, Error> {
        cfg.validate()?;
        if !p.line_rate.is_plausible() {
            return Err(Error::InvalidParams);
        }
        // τ ∈ [100, 2^20] by BaseRtt's range: τ − 1 < 2^20.
        let t1 = p.base_rtt.as_nanos().saturating_sub(1) & 0xF_FFFF;
        // ≤ 2^30 − 1: the low 30 bits.
        let bdp = host_bdp(p) as u32;
        let floor = cfg.min_window_bytes << Window::FRAC_BITS;
        Ok(ThetaPowerTcp {
            w_tau: bdp.max(floor) | (t1 >> 16 & 3) << 30,
            bdp_tau: bdp | (t1 >> 18) << 30,
            mark: p.start_seq.0,
            t_prev: now.as_nanos() as u32,
            rtt_tau: (t1 & 0xFF) << 24,
            power_tau: (t1 >> 8 & 0xFF) << 24,
        })
    }

    /// The window, 2^-4 byte.
    pub fn window_bits(&self) -> u32 {
        self.w_tau & WINDOW_MASK
    }

    /// The window's ceiling, the host's BDP, 2^-4 byte.
    pub fn bdp_bits(&self) -> u32 {
        self.bdp_tau & WINDOW_MASK
    }

    /// τ, the flow's base RTT, ns.
    pub fn tau_ns(&self) -> u32 {
        ((self.rtt_tau >> 24) | (self.power_tau >> 24) << 8 | (self.w_tau >> 30) << 16 | (self.bdp_tau >> 30) << 18) + 1
    }

    /// The RTT sample Γ last took, ns (0: none yet).
    pub fn prev_rtt(&self) -> u32 {
        self.rtt_tau & LOW24
    }

    /// Γ, 2^-16 (0: none yet).
    pub fn power_q16(&self) -> u32 {
        self.power_tau & LOW24
    }

    /// The time of the sample Γ last took, ns modulo 2^32.
    pub fn last_sample_ns(&self) -> u32 {
        self.t_prev
    }

    fn set_window(&mut self, w: u32) {
        self.w_tau = (self.w_tau & !WINDOW_MASK) | (w & WINDOW_MASK);
    }

    fn set_sample(&mut self, power: u32, rtt: u32, now: u32) {
        self.power_tau = (self.power_tau & !LOW24) | (power & LOW24);
        self.rtt_tau = (self.rtt_tau & !LOW24) | (rtt & LOW24);
        self.t_prev = now;
    }

    /// Sets the window (2^-4 byte), Γ (2^-16, 0 for none), the last
    /// sample (ns, 0 for none) and its time, e.g. to restore a checkpoint;
    /// refuses a window outside [floor, max(floor, BDP)], a Γ below
    /// Γ_norm's floor (other than 0) or of 256 or more, or a sample of
    /// 2^24 ns or more.
    pub fn restore(
        &mut self,
        cfg: &ThetaPowerTcpConfig,
        w: u32,
        power_q16: u32,
        prev_rtt: u32,
        t_prev_ns: u32,
    ) -> Result<(), Error> {
        let floor = cfg.min_window_bytes << Window::FRAC_BITS;
        let power_ok = power_q16 == 0 || (MIN_POWER..POWER_LIMIT).contains(&power_q16);
        if w < floor || w > self.bdp_bits().max(floor) || !power_ok || prev_rtt >= MAX_RTT_NS {
            return Err(Error::InvalidParams);
        }
        self.set_window(w);
        self.set_sample(power_q16, prev_rtt, t_prev_ns);
        Ok(())
    }

    /// The current decision: the window, paced one window per τ.
    pub fn decision(&self) -> Decision {
        let per = BaseRtt::from_nanos(self.tau_ns()).unwrap_or(BaseRtt::SHORTEST);
        Decision::window_paced(Window::from_bits(self.window_bits()), per)
    }

    /// The factor 1 + dθ/dt in 2^-32 for the sample `rtt` at `dt` ns (≥ 1)
    /// after the sample before, `prev` (0: none, the factor is 1): rounded
    /// down, below [`GROWTH_LIMIT`] (in 2^-24), at least `min_growth`. In
    /// 2^-32, not 2^-24: Γ = factor·θ/τ multiplies its rounding by θ/τ,
    /// which a queue of a thousand base RTTs makes a thousand, and a
    /// falling RTT's factor can be as small as 1/dt.
    #[inline(always)]
    fn growth(cfg: &ThetaPowerTcpConfig, rtt: u32, prev: u32, dt: u32) -> u64 {
        let one = 1u64 << 32;
        let dt = NonZeroU64::new(dt as u64).unwrap_or(NonZeroU64::MIN);
        let a = if prev == 0 {
            one
        } else if rtt >= prev {
            // (θ − θ_prev)·2^32 < 2^56; over dt, capped below the limit.
            let limit = GROWTH_LIMIT << (32 - Fraction::FRAC_BITS);
            one + div_u64(((rtt - prev) as u64) << 32, dt).min(limit - 1 - one)
        } else {
            // 1 − min(1, (θ_prev − θ)/dt), as the module's negative branch,
            // as (dt − (θ_prev − θ))/dt rounded once: (dt − fall)·2^32 <
            // 2^64, the quotient below 2^32.
            let fall = (prev - rtt) as u64;
            if fall >= dt.get() {
                0
            } else {
                div_u64((dt.get() - fall) << 32, dt)
            }
        };
        a.max((cfg.min_growth.to_bits() as u64) << (32 - Fraction::FRAC_BITS))
    }

    /// Γ after the sample `rtt` (1 ..< 2^24 ns) at `now` (ns mod 2^32)
    /// (NORMPOWER): Γ_norm = (1 + dθ/dt)·θ/τ against the sample before,
    /// then smoothed over τ. In 2^-24, in [655·2^8, 2^32); kept with the
    /// sample in 2^-16, rounded to nearest.
    #[inline(always)]
    fn power(&mut self, cfg: &ThetaPowerTcpConfig, now: u32, rtt: u32, tau: u32) -> u64 {
        // τ ≥ 1 by construction (τ − 1 + 1).
        let tau64 = NonZeroU64::new(tau as u64).unwrap_or(NonZeroU64::MIN);
        // dt ≥ 1 (the module's not_zero); Δt = min(dt, τ).
        let dt = now.wrapping_sub(self.t_prev).max(1);
        let dt_w = dt.min(tau);
        let a = Self::growth(cfg, rtt, self.prev_rtt(), dt);
        // Γ_norm = A·θ/τ in 2^-24, as ⌊⌊A·θ·2^16⌋·2^8/τ⌋ ([`quotient_q8`]:
        // the bits dropped are worth less than 2^8/τ < 3 units). A·θ·2^16
        // from A in 2^-32 below 1 (A·θ < 2^56), from A in 2^-24 at 1 or
        // more (below 2^40: the product < 2^64), each rounded down once.
        // Where τ is scaled, by 100/scale from at most twice the ceiling (scale ≤ 200: what
        // lies above reaches the ceiling either way), so that ·100 <
        // 2^40. Floored at 0.01, below 256.
        let tau32 = NonZeroU32::new(tau).unwrap_or(NonZeroU32::MIN);
        let scaled = if a >> 32 == 0 {
            (a * rtt as u64) >> 16
        } else {
            ((a >> 8) * rtt as u64) >> 8
        };
        let mut norm = quotient_q8(scaled, tau32);
        if cfg.tau_scale_pct != 100 {
            let pct = NonZeroU64::new(cfg.tau_scale_pct as u64).unwrap_or(NonZeroU64::MIN);
            norm = div_u64(norm.min(2 * RUN_LIMIT) * 100, pct);
        }
        let norm = norm.clamp(MIN_RUN, RUN_LIMIT - 1);
        // Γ = ((τ − Δt)·Γ_prev + Δt·Γ_norm)/τ, rounded to nearest (so that
        // a Γ smoothed on every ACK does not drift down by a truncation
        // each time); Γ_norm alone at first or when Δt = τ (the same
        // value, no division). Each product < 2^20·2^32; a mean of values
        // in [MIN_RUN, RUN_LIMIT), rounded to nearest, stays there; in
        // 2^-16, rounded to nearest, it is at least 655 and is held below
        // the ceiling.
        let kept = (self.power_q16() as u64) << (RUN_BITS - POWER_BITS);
        let power = if kept == 0 || dt_w == tau {
            norm
        } else {
            div_u64(
                (tau - dt_w) as u64 * kept + dt_w as u64 * norm + (tau as u64 >> 1),
                tau64,
            )
        };
        let q16 = to_q16(power).min(POWER_LIMIT as u64 - 1);
        self.set_sample(q16 as u32, rtt, now);
        power
    }

    /// The window law with Γ = `power` (2^-24, in [655·2^8, 2^32)), once
    /// per RTT (UPDATEWINDOW), W_old the window itself; `snd_nxt` becomes
    /// the next mark.
    ///
    /// The law divides by Γ in 2^-20 below 1/16 and in 2^-16 (rounded to
    /// nearest) from there: at least 13 bits of Γ either way (a relative
    /// 2^-13 at most), and a divisor below 2^16 wherever Γ < 1, which a
    /// 32-bit core divides by two 16-bit steps where a wider one takes
    /// the normalised long division.
    #[inline(always)]
    fn window(&mut self, cfg: &ThetaPowerTcpConfig, power: u64, tau: u32, snd_nxt: Seq) {
        let (power, bits) = if power < 1 << (RUN_BITS - 4) {
            (power >> 4, RUN_BITS - 4)
        } else {
            (to_q16(power), POWER_BITS)
        };
        let law = WindowLaw {
            gamma: cfg.gamma,
            expected_flows: cfg.expected_flows,
            beta_mbps: cfg.beta_mbps,
            min_window_bytes: cfg.min_window_bytes,
            eta: Fraction::ONE,
        };
        let w = self.window_bits();
        self.set_window(law.next(w, w, self.bdp_bits(), power, bits, tau));
        self.mark = snd_nxt.0;
    }
}

/// Γ from 2^-[`RUN_BITS`] to 2^-[`POWER_BITS`], rounded to nearest.
#[inline(always)]
fn to_q16(power: u64) -> u64 {
    (power + (1 << (RUN_BITS - POWER_BITS - 1))) >> (RUN_BITS - POWER_BITS)
}

/// ⌊n·2^8/d⌋ for n < 2^56: one division on a 64-bit core. On a 32-bit
/// one, the quotient of n by d and eight more bits from its remainder
/// (< d), the same value, each a 32-bit divide where n < 2^32 and d ≤
/// 2^24, where n·2^8 over d took the long division. Compiled on every
/// target so that the host tests hold the two forms together.
#[inline(always)]
pub(crate) fn quotient_q8(n: u64, d: NonZeroU32) -> u64 {
    #[cfg(target_pointer_width = "64")]
    {
        (n << 8) / NonZeroU64::from(d)
    }
    #[cfg(not(target_pointer_width = "64"))]
    {
        quotient_q8_narrow(n, d)
    }
}

/// [`quotient_q8`] on a 32-bit core (q < 2^56 / d: q·2^8 < 2^64; the
/// remainder r < d ≤ 2^24: r·2^8 < 2^32).
#[cfg_attr(target_pointer_width = "64", allow(dead_code))]
#[inline(always)]
pub(crate) fn quotient_q8_narrow(n: u64, d: NonZeroU32) -> u64 {
    let q = div_u64(n, NonZeroU64::from(d));
    let r = (n - q * d.get() as u64) as u32;
    (q << 8) | ((r << 8) / d) as u64
}

/// PowerTCP's window law, shared by both forms (NSDI 2022, Algorithms 1
/// and 2, UPDATEWINDOW):
///
/// ```text
/// W = γ·(η·W_old/Γ + β) + (1 − γ)·W          within [floor, the host's BDP]
/// ```
/// η is 1 in the paper; the authors' ns-3 code divides Γ by a target
/// utilization η = 0.95.
pub(crate) struct WindowLaw {
    pub gamma: Fraction,
    pub expected_flows: u32,
    pub beta_mbps: u32,
    pub min_window_bytes: u32,
    pub eta: Fraction,
}

impl WindowLaw {
    /// The next window, 2^-4 byte, from W_old and W (2^-4 byte, < 2^30),
    /// the host's BDP (2^-4 byte) and Γ = `power` in 2^-`power_bits`
    /// (≥ 1; `power_bits` ≤ 28), τ in ns.
    #[inline(always)]
    pub fn next(&self, w_old: u32, w: u32, bdp: u32, power: u64, power_bits: u32, tau: u32) -> u32 {
        let power_nz = NonZeroU64::new(power).unwrap_or(NonZeroU64::MIN);
        // In 2^-8 byte (four bits below the window's, so that the result
        // is rounded once): W_old/Γ, W_old < 2^30 in 2^-4 byte,
        // ·2^(bits + 4) ≤ 2^62, over Γ (≥ 0.01): < 2^41, capped at the
        // largest window (< 2^34).
        let w_old = w_old as u64;
        let w = w as u64;
        let bdp = bdp as u64;
        let mut scaled = div_u64(w_old << (power_bits + EXTRA_BITS), power_nz).min(MAX_WINDOW_BITS << EXTRA_BITS);
        if self.eta != Fraction::ONE {
            // η·W_old/Γ: < 2^34 · 2^24.
            scaled = (scaled * self.eta.to_bits() as u64) >> Fraction::FRAC_BITS;
        }
        // β: BDP/N, or beta_mbps·τ bytes = beta_mbps·τ·4/125 in 2^-8 byte
        // (< 2^24·2^20·4).
        let beta = if self.beta_mbps == 0 {
            let n = NonZeroU64::new(self.expected_flows as u64).unwrap_or(NonZeroU64::MIN);
            div_u64(bdp << EXTRA_BITS, n)
        } else {
            div_u64(self.beta_mbps as u64 * tau as u64 * 4, N125).min(MAX_WINDOW_BITS << EXTRA_BITS)
        };
        // γ·(W_old/Γ + β) + (1 − γ)·W back to 2^-4 byte rounded to
        // nearest, as W + γ·(W_old/Γ + β − W): with s = 2^(24 + 4), the
        // same value as (γ·(W_old/Γ + β) + (2^24 − γ)·W·2^4 + s/2) / s
        // floored, since W·2^4·2^24 is W·s. The difference lies within
        // ±2^36, by γ ≤ 2^24 within ±2^60; the sum is that of the
        // unfactored form, at least 0.
        let g = self.gamma.to_bits().min(Fraction::ONE.to_bits()) as i64;
        let shift = Fraction::FRAC_BITS + EXTRA_BITS;
        let diff = (scaled + beta) as i64 - (w << EXTRA_BITS) as i64;
        let mixed = (w as i64 + ((g * diff + (1 << (shift - 1))) >> shift)) as u64;
        let floor = (self.min_window_bytes as u64) << Window::FRAC_BITS;
        mixed.min(bdp).max(floor) as u32
    }
}

impl Controller for ThetaPowerTcp {
    type Config = ThetaPowerTcpConfig;

    fn validate(cfg: &ThetaPowerTcpConfig) -> Result<(), Error> {
        cfg.validate()
    }

    fn start(cfg: &ThetaPowerTcpConfig, now: Instant, p: &FlowParams) -> Result<(Self, Decision), Error> {
        if p.algorithm != Algorithm::ThetaPowerTcp {
            return Err(Error::NotApplicable);
        }
        let t = ThetaPowerTcp::new(cfg, p, now)?;
        Ok((t, t.decision()))
    }

    fn decision(&self, _cfg: &ThetaPowerTcpConfig) -> Decision {
        ThetaPowerTcp::decision(self)
    }

    /// A loss (timeout or NACK) changes nothing: PowerTCP reacts to power
    /// alone (the authors' Linux module leaves loss to TCP's recovery;
    /// here the NIC's retransmission), and the queue that dropped the
    /// packet reads as power in the RTTs that follow.
    fn loss(&mut self, _cfg: &ThetaPowerTcpConfig, _now: Instant, _first_lost: Seq) -> Result<Decision, Error> {
        Ok(self.decision())
    }

    /// Nothing to do when a packet leaves: W_old is the last update's
    /// window, kept in `w` until the next.
    fn sent(
        &mut self,
        _cfg: &ThetaPowerTcpConfig,
        _now: Instant,
        _seq: Seq,
        _len: u32,
        _end: MessageEnd,
    ) -> Result<Decision, Error> {
        Ok(self.decision())
    }

    /// An ACK with its RTT sample. Without one the window stands; a sample
    /// of 0 or of 2^24 ns or more is refused (`InvalidParams`) with the
    /// state unchanged. An ACK whose cumulative ACK reaches the mark
    /// updates (the module's `!before(snd_una, last_updated)`); any other
    /// changes nothing.
    #[inline(always)]
    fn ack(&mut self, cfg: &ThetaPowerTcpConfig, now: Instant, ack: &Ack<'_>) -> Result<Decision, Error> {
        let Some(rtt) = ack.rtt_ns else {
            return Ok(self.decision());
        };
        if rtt == 0 || rtt >= MAX_RTT_NS {
            return Err(Error::InvalidParams);
        }
        let reached = ack.cum_ack.at_or_after(Seq(self.mark));
        if !reached && cfg.clock == PowerClock::PerRtt {
            return Ok(self.decision());
        }
        let tau = self.tau_ns();
        let power = self.power(cfg, now.as_nanos() as u32, rtt, tau);
        if reached {
            self.window(cfg, power, tau, ack.snd_nxt);
        }
        Ok(self.decision())
    }
}
