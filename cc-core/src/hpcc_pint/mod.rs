//! HPCC-PINT (Ben Basat et al., "PINT: Probabilistic In-band Network
//! Telemetry", SIGCOMM 2020, §4.2 and Appendix A): HPCC's window law fed by
//! one utilization code a data packet carries instead of a per-hop stack.
//!
//! Each switch port keeps its utilization U as an EWMA over the fabric's
//! base RTT and writes ⌈log_b(U·512)⌉, rounded at random, into a packet
//! whose code is smaller ([`crate::wire::pint`]); the receiver echoes the
//! code; the sender reads U = b^p/512 and applies HPCC's ComputeWind:
//!
//! | step (HPCC++ Figure 5; the reference's `UpdateRateHpPint`)           | here                   |
//! |-----------------------------------------------------------------------|------------------------|
//! | U/η ≥ 1 or incStage ≥ maxStage: W = Wc/(U/η) + W_ai, incStage = 0     | [`HpccPint`]'s ACK     |
//! | else: W = Wc + W_ai, incStage + 1                                     | same                   |
//! | W within [W_min, W_init]                                              | same                   |
//! | ack.seq > lastUpdateSeq: Wc = W, lastUpdateSeq = snd_nxt             | same                   |
//! | an ACK sampled out (probability `PINT_PROB`) is ignored               | an ACK without a code  |
//!
//! The reference simulator's HPCC-PINT (its CC mode 10, `rdma-hw.cc`) is
//! rate-based with a window of W_init·R/R_max: the same law on R = W/T.
//! Which ACKs carry a code is the network's choice here (the simulator
//! thins them with the sampling probability), so an ACK without one only
//! acknowledges. docs/design-notes.md states each reading.
//!
//! Units: the windows are kept as fractions of the flow's BDP W_init in
//! 2^-20 (W_init/2^20 is 0.1 byte at 100 KB), so that a flow's state is 16
//! bytes; 1/U comes from the code's table ([`crate::wire::pint::PintWidth::inverse`]), and
//! U ≥ η is η/U ≤ 1: no division, no `pow`. W_ai and the floor are
//! fractions of the line rate (and so of W_init), as the reference's rates
//! are fractions of its line rate.

#[cfg(feature = "reference")]
pub mod reference;
#[cfg(test)]
mod tests;

#[cfg(feature = "bench")]
use crate::bench::AckBench;
use crate::codec::{ConfigReader, ConfigWriter};
use crate::controller::Controller;
use crate::error::Error;
#[cfg(feature = "bench")]
use crate::event::PintSample;
use crate::event::{Ack, Algorithm, Decision, FlowParams, TimerRequest};
use crate::params::{param, Gate, Network, Param, ParamInfo, TelemetryKind, Unit};
use crate::units::{BaseRtt, Fraction, Instant, Seq, Window};
#[cfg(feature = "bench")]
use crate::wire::pint::PintWidth;
use crate::wire::pint::INVERSE_BITS;
use crate::wire::Result as WireResult;

/// Fractional bits of a window kept as a fraction of W_init.
pub const X_BITS: u32 = 20;
/// W = W_init, as a fraction in 2^-[`X_BITS`].
const X_ONE: u32 = 1 << X_BITS;
/// The shortest base RTT (a fallback no flow reaches: T is a flow's own).
const SHORTEST_T: BaseRtt = match BaseRtt::from_nanos(BaseRtt::MIN_NS) {
    Some(t) => t,
    None => panic!("the shortest base RTT is one"),
};
/// The largest incStage kept (4 bits).
pub const MAX_STAGE_LIMIT: u8 = 15;

/// HPCC-PINT parameters shared by every flow of an engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct HpccPintConfig {
    /// Target utilization η, 0 < η ≤ 1.
    pub eta: Fraction,
    /// AI stages before MI/MD, 0 ..= 15.
    pub max_stage: u8,
    /// W_ai as a fraction of W_init (the rate step as a fraction of the
    /// line rate), 0 < W_ai ≤ 1.
    pub additive_increase: Fraction,
    /// The smallest window as a fraction of W_init (the rate floor as a
    /// fraction of the line rate), 2^-20 ≤ it ≤ 1.
    pub min_window: Fraction,
}

impl HpccPintConfig {
    /// The HPCC reference simulator's HPCC-PINT (`run.py --cc hpccPint`):
    /// η 0.95, maxStage 0, the rate step 10·B/25 Mb/s for B Gb/s (4·10^-4
    /// of the line rate), the floor `MIN_RATE` 1 Gb/s of 100 Gb/s (1 %).
    /// The code's width is the fabric's: each ACK's sample names it.
    pub const fn hpcc_sim() -> Self {
        HpccPintConfig {
            eta: Fraction::preset(95, 100),
            max_stage: 0,
            additive_increase: Fraction::preset(4, 10_000),
            min_window: Fraction::preset(1, 100),
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
            (self.eta.to_bits() == 0 || self.eta > one, "eta"),
            (self.max_stage > MAX_STAGE_LIMIT, "max_stage"),
            (
                self.additive_increase.to_bits() == 0 || self.additive_increase > one,
                "additive_increase",
            ),
            (
                self.min_window.to_bits() < 1 << (Fraction::FRAC_BITS - X_BITS) || self.min_window > one,
                "min_window",
            ),
        ]
        .into_iter()
        .find_map(|(bad, name)| bad.then_some(name))
    }

    /// A fraction of 2^-24 in the windows' 2^-20, rounded to nearest.
    const fn x_of(f: Fraction) -> u32 {
        let shift = Fraction::FRAC_BITS - X_BITS;
        (f.to_bits() + (1 << (shift - 1))) >> shift
    }
}

impl Default for HpccPintConfig {
    fn default() -> Self {
        Self::hpcc_sim()
    }
}

impl crate::controller::AlgorithmConfig for HpccPintConfig {
    type Sender<const H: usize> = HpccPint;

    const DEFAULT: Self = Self::hpcc_sim();

    const PARAMS: &'static [Param<Self>] = &[
        param!(
            HpccPintConfig,
            "eta",
            eta,
            Unit::Fraction,
            "(0, 1]",
            "target utilization η",
            fraction
        ),
        Param {
            info: ParamInfo {
                name: "max_stage",
                field: "max_stage",
                unit: Unit::Count,
                range: "0 ..= 15",
                doc: "additive-increase stages before a multiplicative step",
                follows_payload: false,
                preset: false,
            },
            get: |c| c.max_stage as u32,
            set: |c, v| c.max_stage = v.min(u8::MAX as u32) as u8,
        },
        param!(
            HpccPintConfig,
            "rate_ai",
            additive_increase,
            Unit::Fraction,
            "(0, 1]",
            "W_ai, a fraction of the BDP (the rate step, of the line rate)",
            fraction
        ),
        param!(
            HpccPintConfig,
            "min_rate",
            min_window,
            Unit::Fraction,
            "[2^-20, 1]",
            "the rate floor, a fraction of the line rate (the window's, of the BDP)",
            fraction
        ),
    ];

    /// A window paced at W/T from the switches' PINT codes; no ECN.
    const NETWORK: Network = Network {
        telemetry: TelemetryKind::Pint,
        ..Network::new(Gate::Window)
    };

    #[cfg(feature = "bench")]
    /// Every ACK carries a code and passes the last update's `snd_nxt`
    /// ([`bench_ack`]).
    const ACK_BENCH: Option<AckBench> = Some(AckBench {
        name: "hpcc-pint-ack",
        row: "HPCC-PINT ACK",
        ack: bench_ack,
        interval_ns: 1_000,
        targets: Some((110, 90)),
        state_bytes: Some(16),
    });

    fn validate(&self) -> Result<(), Error> {
        HpccPintConfig::validate(self)
    }

    fn invalid_field(&self) -> Option<&'static str> {
        HpccPintConfig::invalid_field(self)
    }

    /// eta 4 | maxStage 1 | W_ai 4 | W_min 4.
    fn encode(&self, w: &mut ConfigWriter<'_, '_>) -> WireResult<()> {
        w.u32(self.eta.to_bits())?;
        w.u8(self.max_stage)?;
        w.u32(self.additive_increase.to_bits())?;
        w.u32(self.min_window.to_bits())
    }

    fn decode(r: &mut ConfigReader<'_, '_>) -> WireResult<Self> {
        Ok(HpccPintConfig {
            eta: r.fraction()?,
            max_stage: r.u8()?,
            additive_increase: r.fraction()?,
            min_window: r.fraction()?,
        })
    }

    /// W within [W_min − one step of 2^-20·W_init, W_init] and paced at
    /// W/T; no timer, no request.
    fn check_decision(&self, p: &FlowParams, d: &Decision) -> Result<(), &'static str> {
        let w_init = bdp_bytes(p) as u64;
        let w = d.window.to_bits() as u64;
        let floor = (w_init * Self::x_of(self.min_window) as u64) >> (X_BITS - Window::FRAC_BITS);
        if w + (w_init >> (X_BITS - Window::FRAC_BITS)) + 1 < floor.max(16) {
            return Err("HPCC-PINT window below its floor");
        }
        if w > w_init << Window::FRAC_BITS {
            return Err("HPCC-PINT window above the BDP");
        }
        if d.pacing.bytes != d.window || d.pacing.per != p.base_rtt {
            return Err("HPCC-PINT not paced at W/T");
        }
        if d.timer != TimerRequest::Keep || d.request != crate::event::Request::None {
            return Err("HPCC-PINT asked for a timer or a request");
        }
        Ok(())
    }
}

/// W_init in whole bytes: the flow's BDP, at most 64 MiB (HPCC++'s).
fn bdp_bytes(p: &FlowParams) -> u32 {
    // bdp_bytes < 2^30 (see LinkSpeed::bdp_bytes).
    p.line_rate.bdp_bytes(p.base_rtt).min(Window::MAX_CONFIG_BYTES as u64) as u32
}

#[cfg(feature = "bench")]
/// The firmware benchmark's ACK `n`: it passes the `snd_nxt` of ACK n − 1,
/// so each one commits, with a two-byte code from a cycle of four, U from
/// 0.2 to 1.65 (with maxStage 0, as the defaults, every update multiplies).
pub fn bench_ack(n: u32, _hops: &mut [crate::telemetry::HopSample; 5]) -> Ack<'static> {
    // 1.01^p/512 for p = 466, 622, 632, 677: U ≈ 0.21, 0.96, 1.06, 1.65.
    const CODES: [u16; 4] = [466, 622, 632, 677];
    Ack {
        pint: Some(PintSample {
            width: PintWidth::Two,
            code: CODES[(n % 4) as usize],
        }),
        ..Ack::new(Seq(n.wrapping_mul(1000)), Seq(n.wrapping_mul(1000).wrapping_add(500)))
    }
}

/// One HPCC-PINT flow at its sender: 16 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct HpccPint {
    /// lastUpdateSeq: Wc is committed when the cumulative ACK passes it.
    last_update_seq: Seq,
    /// W_init in bytes (bits 0..27, at most 2^26), incStage (27..31),
    /// whether a code has been seen (bit 31).
    bdp_stage: u32,
    /// W/W_init in 2^-20 (bits 0..21, at most 2^20); T's low 11 bits.
    x: u32,
    /// Wc/W_init in 2^-20 (bits 0..21); T's high 10 bits (T ≤ 2^20 ns).
    xc: u32,
}

const X_MASK: u32 = (1 << 21) - 1;
const BDP_MASK: u32 = (1 << 27) - 1;
const STAGE_SHIFT: u32 = 27;
const SEEN: u32 = 1 << 31;

impl HpccPint {
    /// A flow at W = Wc = W_init, incStage 0, no code seen.
    pub fn new(cfg: &HpccPintConfig, p: &FlowParams) -> Result<Self, Error> {
        cfg.validate()?;
        let bdp = bdp_bytes(p);
        if !p.line_rate.is_plausible() || bdp == 0 {
            return Err(Error::InvalidParams);
        }
        let t = p.base_rtt.as_nanos();
        Ok(HpccPint {
            last_update_seq: p.start_seq,
            bdp_stage: bdp & BDP_MASK,
            x: X_ONE | (t & 0x7FF) << 21,
            xc: X_ONE | (t >> 11) << 21,
        })
    }

    /// W_init in bytes.
    pub fn bdp_bytes(&self) -> u32 {
        self.bdp_stage & BDP_MASK
    }

    /// incStage.
    pub fn inc_stage(&self) -> u8 {
        ((self.bdp_stage >> STAGE_SHIFT) & 0xF) as u8
    }

    /// W/W_init in 2^-20.
    pub fn window_fraction(&self) -> u32 {
        self.x & X_MASK
    }

    /// Wc/W_init in 2^-20.
    pub fn reference_fraction(&self) -> u32 {
        self.xc & X_MASK
    }

    /// lastUpdateSeq.
    pub fn last_update_seq(&self) -> Seq {
        self.last_update_seq
    }

    /// Sets W/W_init and Wc/W_init (2^-20) and incStage, as a flow that
    /// has seen a code and committed at `last_update_seq`, e.g. to restore
    /// a checkpoint; refuses a fraction above 1 or below one step of
    /// 2^-20, or incStage above 15.
    pub fn restore(&mut self, x: u32, xc: u32, inc_stage: u8, last_update_seq: Seq) -> Result<(), Error> {
        let ok = |f: u32| (1..=X_ONE).contains(&f);
        if !ok(x) || !ok(xc) || inc_stage > MAX_STAGE_LIMIT {
            return Err(Error::InvalidParams);
        }
        self.x = (self.x & !X_MASK) | x;
        self.xc = (self.xc & !X_MASK) | xc;
        self.bdp_stage = (self.bdp_stage & BDP_MASK) | (inc_stage as u32) << STAGE_SHIFT | SEEN;
        self.last_update_seq = last_update_seq;
        Ok(())
    }

    /// The base RTT T (pacing W/T).
    pub fn base_rtt(&self) -> BaseRtt {
        let t = (self.x >> 21) | (self.xc >> 21) << 11;
        // T came from a BaseRtt; never the fallback.
        BaseRtt::from_nanos(t).unwrap_or(SHORTEST_T)
    }

    /// W = W_init·x in 2^-4 bytes (< 2^26·2^20, ≥ one byte).
    pub fn window(&self) -> Window {
        let raw = (self.bdp_bytes() as u64 * self.window_fraction() as u64) >> (X_BITS - Window::FRAC_BITS);
        Window::from_bits((raw as u32).max(1 << Window::FRAC_BITS))
    }

    /// W paced at W/T, nothing asked.
    pub fn decision(&self) -> Decision {
        Decision::window_paced(self.window(), self.base_rtt())
    }

    /// ComputeWind on a code's U (HPCC++ Figure 5, lines 11-20, as the
    /// reference's `UpdateRateHpPint`), as fractions of W_init in 2^-20:
    ///
    /// ```text
    /// x = xc · η · (1/U) + a     if U ≥ η or incStage ≥ maxStage
    /// x = xc + a                 otherwise
    /// x within [x_min, 1]
    /// ```
    ///
    /// f = η/U = η·(1/U) in 2^-22: η ≤ 2^24 (2^-24) by 1/U ≤ 2^31 (2^-22)
    /// is below 2^55, >> 24 below 2^31, rounded down: within 2^-22 of η/U,
    /// relatively within 1.3·10^-4 at the largest U (f ≥ 0.0018 for η ≥
    /// 0.95). U ≥ η exactly where f ≤ 1 (2^22). xc ≤ 2^20 by f < 2^31 is
    /// below 2^51, >> 22 to 2^-20, rounded to nearest. a and x_min are the
    /// configuration's fractions rounded to 2^-20. No division, no `pow`.
    #[inline(always)]
    fn compute(&self, cfg: &HpccPintConfig, inv: u32) -> (u32, bool) {
        let xc = self.reference_fraction();
        let f = ((cfg.eta.to_bits() as u64 * inv as u64) >> Fraction::FRAC_BITS) as u32;
        let md = f <= 1 << INVERSE_BITS || self.inc_stage() >= cfg.max_stage;
        // Below 2^51 >> 22 = 2^29: the sum with a (≤ 2^20) fits 32 bits.
        let x = if md {
            ((xc as u64 * f as u64 + (1 << (INVERSE_BITS - 1))) >> INVERSE_BITS) as u32
        } else {
            xc
        };
        let a = HpccPintConfig::x_of(cfg.additive_increase);
        let x_min = HpccPintConfig::x_of(cfg.min_window).max(1);
        // max then min, not `clamp`: no panic path even for a floor past 1.
        ((x + a).max(x_min).min(X_ONE), md)
    }
}

impl Controller for HpccPint {
    type Config = HpccPintConfig;

    fn validate(cfg: &HpccPintConfig) -> Result<(), Error> {
        cfg.validate()
    }

    fn start(cfg: &HpccPintConfig, _now: Instant, p: &FlowParams) -> Result<(Self, Decision), Error> {
        if p.algorithm != Algorithm::HpccPint {
            return Err(Error::NotApplicable);
        }
        let s = HpccPint::new(cfg, p)?;
        Ok((s, s.decision()))
    }

    fn decision(&self, _cfg: &HpccPintConfig) -> Decision {
        HpccPint::decision(self)
    }

    /// An ACK with a code updates W: per ACK from Wc (the reference's fast
    /// reaction), committing Wc, incStage and lastUpdateSeq = snd_nxt when
    /// the ACK passes lastUpdateSeq. The first code only sets
    /// lastUpdateSeq, as the reference's first RTT. An ACK without a code
    /// changes nothing. The code is read in the width its sample names
    /// (the fabric's); one above its width's largest is refused
    /// (`BadSample`) with the state unchanged.
    #[inline(always)]
    fn ack(&mut self, cfg: &HpccPintConfig, _now: Instant, ack: &Ack<'_>) -> Result<Decision, Error> {
        let Some(s) = ack.pint else {
            return Ok(self.decision());
        };
        let Some(inv) = s.width.inverse(s.code) else {
            return Err(Error::BadSample);
        };
        if self.bdp_stage & SEEN == 0 {
            self.bdp_stage |= SEEN;
            self.last_update_seq = ack.snd_nxt;
            return Ok(self.decision());
        }
        let (x, md) = self.compute(cfg, inv);
        self.x = (self.x & !X_MASK) | x;
        if ack.cum_ack.after(self.last_update_seq) {
            self.xc = (self.xc & !X_MASK) | x;
            let stage = if md {
                0
            } else {
                (self.inc_stage() + 1).min(MAX_STAGE_LIMIT)
            };
            self.bdp_stage = (self.bdp_stage & !(0xF << STAGE_SHIFT)) | (stage as u32) << STAGE_SHIFT;
            if ack.snd_nxt.after(self.last_update_seq) {
                self.last_update_seq = ack.snd_nxt;
            }
        }
        Ok(self.decision())
    }

    /// A packet goes out: nothing changes (the window is the codes').
    fn sent(
        &mut self,
        _cfg: &HpccPintConfig,
        _now: Instant,
        _seq: Seq,
        _len: u32,
        _end: crate::event::MessageEnd,
    ) -> Result<Decision, Error> {
        Ok(self.decision())
    }

    /// A loss changes nothing (go-back-N is the transport's; HPCC reacts
    /// to the codes).
    fn loss(&mut self, _cfg: &HpccPintConfig, _now: Instant, _first_lost: Seq) -> Result<Decision, Error> {
        Ok(self.decision())
    }
}
