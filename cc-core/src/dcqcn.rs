//! DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments",
//! SIGCOMM 2015), as RoCE NICs run it: the rate-based baseline the HPCC
//! paper compares against, behind the same event API as HPCC++ and LDCP.
//!
//! | part                                                | here                          |
//! |-----------------------------------------------------|-------------------------------|
//! | NP: a CNP for CE-marked data, at most one per interval | [`NotificationPoint`]      |
//! | RP: alpha = (1 − g)·alpha + g·1{CNP}, every Ta      | [`Dcqcn::cnp`], lazily        |
//! | RP: on CNP, every Td: Rt = Rc, Rc = Rc·(1 − alpha/2) | [`Dcqcn::timer`]             |
//! | RP: every Ti and every B bytes: fast recovery, additive, hyper increase | [`Dcqcn::timer`], [`Dcqcn::sent`] |
//!
//! The reaction point follows the NIC model the HPCC paper's simulator
//! uses (timers at fixed phases from the first CNP; the decrease period
//! checks whether a CNP came; the increase timer restarts at every
//! decrease; increase stage below F: fast recovery Rc = (Rc + Rt)/2; at F:
//! Rt += R_AI; above: Rt += R_HAI, then Rc = (Rc + Rt)/2), with the paper's
//! byte counter as an option: with it, the stage is the timer's and the
//! byte counter's count, fast recovery while the larger is below F, hyper
//! increase once the smaller is above F.
//!
//! The alpha timer is not a timer here: between CNPs alpha only decays, so
//! it is brought up to date when it is read (a CNP or a decrease), by
//! `(1 − g)^k` for the k periods passed. The engine's one timer per flow is
//! armed for the next decrease check (only while a CNP waits for one) or
//! the next increase (only while Rc or Rt is below the line rate): a flow
//! at full rate costs no events.
//!
//! Units: rates in [`RateQ8`] (Mb/s in 2^-8 steps, 3.9 kb/s); alpha and g
//! in [`Fraction`] (2^-24); times in ns. The decision paces Rc as bytes per
//! base RTT T (2^-4 byte per T: 0.04 % of 100 Mb/s at T = 12 µs); its
//! window is the line rate's BDP, which a rate-gated NIC does not enforce.

use core::num::NonZeroU64;

#[cfg(feature = "bench")]
use crate::bench::CnpBench;
use crate::codec::{ConfigReader, ConfigWriter};
use crate::controller::Controller;
use crate::error::Error;
use crate::event::{Ack, Algorithm, Decision, Ecn, FlowParams, MessageEnd, Pacing, Request, TimerRequest};
use crate::fixmath::div_u64;
use crate::params::{param, EcnMarking, Gate, Network, Param, ParamInfo, Unit};
use crate::units::{BaseRtt, Fraction, Instant, Seq, Window};
use crate::wire::Result as WireResult;

pub use crate::notification::NotificationPoint;
pub use crate::units::RateQ8;

/// No deadline.
const NEVER: u64 = u64::MAX;

/// 2^8 (RateQ8) · 8 bits · 10^3 (ns per µs · Mb/s → bits) / 2^4 (2^-4 byte):
/// `bytes_raw = r · T_ns / 128 000`, taken as `(r · T_ns >> 10) / 125`
/// (the same floor; a divisor below 2^16 is four 32-bit divides on rv32).
const PACING_DIVISOR: NonZeroU64 = match NonZeroU64::new(125) {
    Some(d) => d,
    None => NonZeroU64::MIN,
};

/// DCQCN parameters shared by every flow of an engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct DcqcnConfig {
    /// Alpha's gain g, 0 < g ≤ 1.
    pub g: Fraction,
    /// Ta: alpha update period, ns (1 ..= 2^30).
    pub alpha_interval_ns: u32,
    /// Td: rate decrease check period, ns (1 ..= 2^30).
    pub decrease_interval_ns: u32,
    /// Ti: rate increase timer, ns (1 ..= 2^30).
    pub increase_interval_ns: u32,
    /// F: increase events of fast recovery before additive increase (≤ 31).
    pub fast_recovery_steps: u8,
    /// R_AI as a fraction of the flow's line rate, > 0.
    pub rate_ai: Fraction,
    /// R_HAI as a fraction of the flow's line rate, > 0.
    pub rate_hai: Fraction,
    /// The smallest rate, Mb/s (≥ 1; a line rate below it is the floor).
    pub min_rate_mbps: u32,
    /// B: an increase event every this many bytes sent; 0 turns the byte
    /// counter off (else 1024 ..= 2^30).
    pub byte_counter: u32,
    /// Whether every decrease sets Rt = Rc; otherwise only a decrease after
    /// at least one increase event does (the NIC model's default).
    pub clamp_target: bool,
    /// NP: at most one CNP per flow per this many ns (0: one per CE-marked
    /// packet).
    pub cnp_interval_ns: u32,
}

impl DcqcnConfig {
    /// The HPCC paper's simulator setting for DCQCN ("dcqcn" in its run
    /// script): g = 1/256, Ta = 1 µs, Td = 4 µs, Ti = 300 µs, F = 1, R_AI =
    /// 5 Mb/s and R_HAI = 50 Mb/s per 25 Gb/s of line rate, 1000 Mb/s
    /// floor (its `MIN_RATE`), no byte counter, no target clamp, and a CNP
    /// for every CE-marked packet (its NICs flag the ACK of each): with Ta
    /// below Td, alpha counts the periods that saw a CNP, so spacing CNPs
    /// by Td would hold alpha lower than the reference's.
    pub const fn hpcc_sim() -> Self {
        DcqcnConfig {
            g: match Fraction::inverse_pow2(8) {
                Some(f) => f,
                None => Fraction::ONE,
            },
            alpha_interval_ns: 1_000,
            decrease_interval_ns: 4_000,
            increase_interval_ns: 300_000,
            fast_recovery_steps: 1,
            rate_ai: match Fraction::ratio(1, 5_000) {
                Some(f) => f,
                None => Fraction::ONE,
            },
            rate_hai: match Fraction::ratio(1, 500) {
                Some(f) => f,
                None => Fraction::ONE,
            },
            min_rate_mbps: 1_000,
            byte_counter: 0,
            clamp_target: false,
            cnp_interval_ns: 0,
        }
    }

    /// The DCQCN paper's timers (Ta = Td = 50 µs, Ti = 55 µs, F = 5, B =
    /// 10 MB), with the rest as [`DcqcnConfig::hpcc_sim`].
    pub const fn paper() -> Self {
        let mut c = Self::hpcc_sim();
        c.alpha_interval_ns = 50_000;
        c.decrease_interval_ns = 50_000;
        c.increase_interval_ns = 55_000;
        c.fast_recovery_steps = 5;
        c.byte_counter = 10_000_000;
        c.cnp_interval_ns = 50_000;
        c
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
        let period = |ns: u32| !(1..=1 << 30).contains(&ns);
        [
            (self.g.to_bits() == 0, "g"),
            (period(self.alpha_interval_ns), "alpha_interval_ns"),
            (period(self.decrease_interval_ns), "decrease_interval_ns"),
            (period(self.increase_interval_ns), "increase_interval_ns"),
            (self.fast_recovery_steps > 31, "fast_recovery_steps"),
            (self.rate_ai.to_bits() == 0, "rate_ai"),
            (self.rate_hai.to_bits() == 0, "rate_hai"),
            (!(1..=16_000_000).contains(&self.min_rate_mbps), "min_rate_mbps"),
            (
                self.byte_counter != 0 && !(1024..=1 << 30).contains(&self.byte_counter),
                "byte_counter",
            ),
            (self.cnp_interval_ns > 1 << 30, "cnp_interval_ns"),
        ]
        .into_iter()
        .find_map(|(bad, name)| bad.then_some(name))
    }
}

impl Default for DcqcnConfig {
    fn default() -> Self {
        Self::hpcc_sim()
    }
}

impl crate::controller::AlgorithmConfig for DcqcnConfig {
    type Sender<const H: usize> = Dcqcn;

    /// A rate; WRED marking at K_min 4 KB, K_max 16 KB per Gb/s with
    /// P_max 0.2 (the HPCC reference simulator's DCQCN runs: 100 / 400 KB
    /// at 25 Gb/s). Its control packets share the data's queue: DCQCN
    /// reads no delay (those runs set `ACK_HIGH_PRIO 1`, which a front end
    /// may follow).
    const NETWORK: Network = Network {
        marking: Some(EcnMarking {
            kmin_bytes_per_gbps: 4_000,
            kmax_bytes_per_gbps: 16_000,
            pmax_percent: 20,
        }),
        // The reference simulator's switch marks on dequeue (its DCQCN
        // runs are what hal-sim's DCQCN is held to).
        marks_on_dequeue: true,
        ..Network::new(Gate::Rate)
    };

    const DEFAULT: Self = Self::hpcc_sim();

    /// The preset first (the HPCC paper's simulator or the DCQCN paper),
    /// then each field over it.
    const PARAMS: &'static [Param<Self>] = &[
        Param {
            info: ParamInfo {
                name: "preset",
                field: "preset",
                unit: Unit::Choice(&["hpcc_sim", "paper"]),
                range: "hpcc_sim or paper",
                doc: "where the other fields default from: the HPCC paper's simulator or the DCQCN paper",
                follows_payload: false,
                preset: true,
            },
            get: |c| (*c == DcqcnConfig::paper()) as u32,
            set: |c, v| {
                *c = if v == 1 {
                    DcqcnConfig::paper()
                } else {
                    DcqcnConfig::hpcc_sim()
                }
            },
        },
        param!(DcqcnConfig, "g", g, Unit::Fraction, "(0, 1]", "alpha's gain g", fraction),
        param!(
            DcqcnConfig,
            "ta_us",
            alpha_interval_ns,
            Unit::Micros,
            "0.001 ..= 1073741.824",
            "alpha's update period"
        ),
        param!(
            DcqcnConfig,
            "td_us",
            decrease_interval_ns,
            Unit::Micros,
            "0.001 ..= 1073741.824",
            "the rate decrease's period"
        ),
        param!(
            DcqcnConfig,
            "ti_us",
            increase_interval_ns,
            Unit::Micros,
            "0.001 ..= 1073741.824",
            "the rate increase's period"
        ),
        param!(
            DcqcnConfig,
            "fast_recovery",
            fast_recovery_steps,
            Unit::Count,
            "0 ..= 31",
            "F, the fast-recovery steps",
            u8
        ),
        param!(
            DcqcnConfig,
            "rate_ai",
            rate_ai,
            Unit::Fraction,
            "(0, 1]",
            "R_AI as a fraction of the line rate",
            fraction
        ),
        param!(
            DcqcnConfig,
            "rate_hai",
            rate_hai,
            Unit::Fraction,
            "(0, 1]",
            "R_HAI as a fraction of the line rate",
            fraction
        ),
        param!(
            DcqcnConfig,
            "min_rate_mbps",
            min_rate_mbps,
            Unit::Mbps,
            "1 ..= 16000000",
            "the rate floor"
        ),
        param!(
            DcqcnConfig,
            "byte_counter",
            byte_counter,
            Unit::Bytes,
            "0 (off) or 1024 ..= 1073741824",
            "B, the byte counter's period"
        ),
        param!(
            DcqcnConfig,
            "clamp_target",
            clamp_target,
            Unit::Flag,
            "true or false",
            "Rt = Rc at every decrease",
            flag
        ),
        param!(
            DcqcnConfig,
            "cnp_interval_us",
            cnp_interval_ns,
            Unit::Micros,
            "0 ..= 1073741.824",
            "the receiver's NIC sends at most one CNP per flow per this interval (0: one with the ACK of every CE-marked packet)"
        ),
    ];

    #[cfg(feature = "bench")]
    /// A CNP every 10 µs: each brings alpha up over ten periods and waits
    /// for the next decrease check (the timer's events are not counted).
    const CNP_BENCH: Option<CnpBench> = Some(CnpBench {
        name: "dcqcn-cnp",
        row: "DCQCN CNP (baseline)",
        interval_ns: 10_000,
    });

    /// The notification point at the receiver's NIC: a CNP for CE-marked
    /// data, at most one per flow per `cnp_interval_ns`.
    fn receiver_cnp_ns(&self) -> Option<u32> {
        Some(self.cnp_interval_ns)
    }

    fn invalid_field(&self) -> Option<&'static str> {
        DcqcnConfig::invalid_field(self)
    }

    fn validate(&self) -> Result<(), Error> {
        DcqcnConfig::validate(self)
    }

    /// g 4 | Ta 4 | Td 4 | Ti 4 | R_AI 4 | R_HAI 4 | min Mb/s 4 | B 4 |
    /// CNP interval 4 | F 1 | clamp 1.
    fn encode(&self, w: &mut ConfigWriter<'_, '_>) -> WireResult<()> {
        for v in [
            self.g.to_bits(),
            self.alpha_interval_ns,
            self.decrease_interval_ns,
            self.increase_interval_ns,
            self.rate_ai.to_bits(),
            self.rate_hai.to_bits(),
            self.min_rate_mbps,
            self.byte_counter,
            self.cnp_interval_ns,
        ] {
            w.u32(v)?;
        }
        w.u8(self.fast_recovery_steps)?;
        w.bool(self.clamp_target)
    }

    fn decode(r: &mut ConfigReader<'_, '_>) -> WireResult<Self> {
        Ok(DcqcnConfig {
            g: r.fraction()?,
            alpha_interval_ns: r.u32()?,
            decrease_interval_ns: r.u32()?,
            increase_interval_ns: r.u32()?,
            rate_ai: r.fraction()?,
            rate_hai: r.fraction()?,
            min_rate_mbps: r.u32()?,
            byte_counter: r.u32()?,
            cnp_interval_ns: r.u32()?,
            fast_recovery_steps: r.u8()?,
            clamp_target: r.bool()?,
        })
    }

    /// The rate within [the floor, the line rate] (pacing rounds to 2^-4
    /// byte per T: one unit allowed below the floor); no request.
    fn check_decision(&self, p: &FlowParams, d: &Decision) -> Result<(), &'static str> {
        let t = p.base_rtt.as_nanos() as u64;
        let floor = (self.min_rate_mbps as u64 * 1_000_000).min(p.line_rate.to_rate().as_bps());
        let unit = 8_000_000_000 / 16 / t.max(1) + 1;
        if d.rate().as_bps() + unit < floor {
            return Err("DCQCN rate below its floor");
        }
        if d.rate() > p.line_rate.to_rate() {
            return Err("DCQCN rate above the line rate");
        }
        if d.request != Request::None {
            return Err("DCQCN made a request");
        }
        Ok(())
    }
}

/// The reaction point of one flow, at its sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Dcqcn {
    /// Current rate Rc.
    rc: RateQ8,
    /// Target rate Rt.
    rt: RateQ8,
    /// Line rate, the largest rate.
    line: RateQ8,
    /// The decision's window: the line rate's bytes per T, computed once.
    window: Window,
    /// alpha.
    alpha: Fraction,
    /// Base RTT T: the pacing period.
    t: BaseRtt,
    /// The next alpha update not yet applied, ns (NEVER before the first CNP).
    alpha_due: u64,
    /// A decrease check point, ns: the checks are at this plus multiples of
    /// Td (NEVER before the first CNP).
    dec_phase: u64,
    /// The decrease check that will act on a CNP, ns (NEVER if no CNP waits).
    dec_due: u64,
    /// The next increase event of the timer, ns (NEVER when at full rate or
    /// before the first decrease).
    inc_due: u64,
    /// Bytes sent towards the next byte-counter event.
    bytes: u32,
    /// Increase events by the timer since the last decrease.
    stage_t: u8,
    /// Increase events by the byte counter since the last decrease.
    stage_b: u8,
    /// A CNP came since the last alpha update.
    alpha_cnp: bool,
}

/// `r·T/8` bytes, in 2^-4 bytes: `r·T_ns/128 000` rounded down (r < 2^32,
/// T < 2^21: the product < 2^53), at least one unit.
fn bytes_per(r: RateQ8, t: BaseRtt) -> Window {
    let num = r as u64 * t.as_nanos() as u64;
    let q = div_u64(num >> 10, PACING_DIVISOR);
    Window::from_bits(q.clamp(1, u32::MAX as u64) as u32)
}

/// `x·f` for a rate and a fraction ≤ 1, rounded down (< 2^32·2^24).
fn scale(x: RateQ8, f: Fraction) -> RateQ8 {
    ((x as u64 * f.to_bits() as u64) >> Fraction::FRAC_BITS) as RateQ8
}

impl Dcqcn {
    /// A flow at the line rate, alpha 1, no timers.
    pub fn new(cfg: &DcqcnConfig, p: &FlowParams) -> Result<Self, Error> {
        cfg.validate()?;
        if !p.line_rate.is_plausible() {
            return Err(Error::InvalidParams);
        }
        // ≤ 6.4·10^6 Mb/s · 2^8 < 2^31.
        let line = p.line_rate.as_mbps() << 8;
        Ok(Dcqcn {
            rc: line,
            rt: line,
            line,
            window: bytes_per(line, p.base_rtt),
            alpha: Fraction::ONE,
            t: p.base_rtt,
            alpha_due: NEVER,
            dec_phase: NEVER,
            dec_due: NEVER,
            inc_due: NEVER,
            bytes: 0,
            stage_t: 0,
            stage_b: 0,
            alpha_cnp: false,
        })
    }

    /// Current rate Rc.
    pub fn rate(&self) -> RateQ8 {
        self.rc
    }

    /// Target rate Rt.
    pub fn target(&self) -> RateQ8 {
        self.rt
    }

    /// alpha as of the last CNP or decrease (it is brought up to date when
    /// read by the algorithm; see the module documentation).
    pub fn alpha(&self) -> Fraction {
        self.alpha
    }

    /// When the engine's timer is due for this flow, if at all.
    pub fn next_deadline(&self) -> Option<Instant> {
        let next = self.dec_due.min(self.inc_due);
        (next != NEVER).then_some(Instant::from_nanos(next))
    }

    fn floor(&self, cfg: &DcqcnConfig) -> RateQ8 {
        (cfg.min_rate_mbps.saturating_mul(256)).min(self.line)
    }

    /// Paces Rc as bytes per T: `Rc·T/8` in 2^-4 bytes, rounded down, at
    /// least one unit.
    pub fn decision(&self) -> Decision {
        Decision {
            window: self.window,
            pacing: Pacing {
                bytes: bytes_per(self.rc, self.t),
                per: self.t,
            },
            ecn: Ecn::Ect,
            timer: TimerRequest::Keep,
            request: Request::None,
            ev: None,
        }
    }

    /// The decision, with the timer re-armed if the next deadline is not
    /// `before` any more.
    fn decision_after(&self, before: Option<Instant>) -> Decision {
        let mut d = self.decision();
        let now = self.next_deadline();
        if now != before {
            d.timer = match now {
                Some(at) => TimerRequest::Arm(at),
                None => TimerRequest::Cancel,
            };
        }
        d
    }

    /// Applies every alpha update due at or before `now` (one per Ta from
    /// the first CNP): the first with the CNP flag, `alpha = (1 − g)·alpha +
    /// g·flag`, rounded to nearest (products < 2^48); the other k − 1 with
    /// no CNP, `alpha·(1 − g)^(k−1)`, the power by squaring in 2^-32 units
    /// (the running power ≤ 2^32 and the base < 2^32, so every product <
    /// 2^64), each product rounded down: within k·2^-32 of the power.
    fn catch_up_alpha(&mut self, cfg: &DcqcnConfig, now: u64) {
        if self.alpha_due > now {
            return;
        }
        let ta = cfg.alpha_interval_ns as u64;
        let Some(ta_nz) = NonZeroU64::new(ta) else { return };
        let k = div_u64(now - self.alpha_due, ta_nz) + 1;
        let one = Fraction::ONE.to_bits() as u64;
        let g = (cfg.g.to_bits() as u64).min(one);
        let a = self.alpha.to_bits() as u64;
        let flag = if self.alpha_cnp { g * one } else { 0 };
        let mut a = (a * (one - g) + flag + (one >> 1)) >> Fraction::FRAC_BITS;
        // (1 − g)^(k − 1) in 2^-32.
        let base = (one - g) << 8;
        let (mut p, mut b, mut e) = (1u64 << 32, base, k - 1);
        while e > 0 && p > 0 {
            if e & 1 == 1 {
                p = (p * b) >> 32;
            }
            b = (b * b) >> 32;
            e >>= 1;
        }
        a = (a * p) >> 32;
        self.alpha = Fraction::from_bits(a.min(one) as u32).unwrap_or(Fraction::ONE);
        self.alpha_cnp = false;
        self.alpha_due = self.alpha_due.saturating_add(k.saturating_mul(ta));
    }

    /// The rate decrease at a check point `at` with a CNP waiting:
    /// `Rt = Rc` (see [`DcqcnConfig::clamp_target`]), `Rc = max(floor,
    /// Rc·(1 − alpha/2))` rounded down (`Rc·(2^25 − alpha) >> 25`, < 2^57),
    /// the increase stages and byte counter reset, the increase timer
    /// restarted at `at + Ti`.
    fn decrease(&mut self, cfg: &DcqcnConfig, at: u64) {
        self.catch_up_alpha(cfg, at);
        if cfg.clamp_target || self.stage_t != 0 || self.stage_b != 0 {
            self.rt = self.rc;
        }
        let factor = (2u64 << Fraction::FRAC_BITS) - self.alpha.to_bits() as u64;
        let rc = ((self.rc as u64 * factor) >> (Fraction::FRAC_BITS + 1)) as RateQ8;
        self.rc = rc.max(self.floor(cfg));
        self.stage_t = 0;
        self.stage_b = 0;
        self.bytes = 0;
        self.dec_phase = at;
        self.dec_due = NEVER;
        self.inc_due = at.saturating_add(cfg.increase_interval_ns as u64);
    }

    /// One increase event: the phase from the stages (timer count t, byte
    /// count b; b = t without a byte counter): max < F fast recovery, min >
    /// F hyper increase (Rt += R_HAI), otherwise additive (Rt += R_AI); Rt at
    /// most the line rate; then Rc = (Rc + Rt)/2, rounded up so that Rc
    /// reaches Rt (Rc ≤ Rt throughout: Rt only grows, or is set to Rc).
    fn increase(&mut self, cfg: &DcqcnConfig) {
        let f = cfg.fast_recovery_steps;
        let (t, b) = if cfg.byte_counter == 0 {
            (self.stage_t, self.stage_t)
        } else {
            (self.stage_t, self.stage_b)
        };
        if t.max(b) >= f {
            let step = if t.min(b) > f { cfg.rate_hai } else { cfg.rate_ai };
            self.rt = self.rt.saturating_add(scale(self.line, step).max(1)).min(self.line);
        }
        self.rc = ((self.rc as u64 + self.rt as u64).div_ceil(2)) as RateQ8;
    }

    /// Whether the flow is back at the line rate (no more increases).
    fn recovered(&self) -> bool {
        self.rc >= self.line && self.rt >= self.line
    }
}

impl Controller for Dcqcn {
    type Config = DcqcnConfig;

    fn validate(cfg: &DcqcnConfig) -> Result<(), Error> {
        cfg.validate()
    }

    fn start(cfg: &DcqcnConfig, _now: Instant, p: &FlowParams) -> Result<(Self, Decision), Error> {
        if p.algorithm != Algorithm::Dcqcn {
            return Err(Error::NotApplicable);
        }
        let d = Dcqcn::new(cfg, p)?;
        Ok((d, d.decision()))
    }

    fn decision(&self, _cfg: &DcqcnConfig) -> Decision {
        Dcqcn::decision(self)
    }

    /// A CNP arrived. The first one sets alpha = 1 and Rt = Rc, and starts
    /// the alpha and decrease periods; every one marks the current alpha
    /// period and asks the next decrease check (the first check point after
    /// now) to act.
    fn cnp(&mut self, cfg: &DcqcnConfig, now: Instant) -> Result<Decision, Error> {
        let before = self.next_deadline();
        let now = now.as_nanos();
        let td = cfg.decrease_interval_ns as u64;
        if self.dec_phase == NEVER {
            self.alpha = Fraction::ONE;
            self.alpha_cnp = false;
            self.alpha_due = now.saturating_add(cfg.alpha_interval_ns as u64);
            self.rt = self.rc;
            self.dec_phase = now.saturating_add(td);
            self.dec_due = self.dec_phase;
            return Ok(self.decision_after(before));
        }
        self.catch_up_alpha(cfg, now);
        self.alpha_cnp = true;
        if self.dec_due == NEVER {
            // The first check point strictly after now.
            let next = if now < self.dec_phase {
                self.dec_phase
            } else {
                let periods = match NonZeroU64::new(td) {
                    Some(d) => div_u64(now - self.dec_phase, d) + 1,
                    None => 1,
                };
                self.dec_phase.saturating_add(periods.saturating_mul(td))
            };
            self.dec_phase = next;
            self.dec_due = next;
        }
        Ok(self.decision_after(before))
    }

    /// The flow's timer: the decrease check and the increase events due at
    /// or before `now`, in time order (an increase before a decrease at the
    /// same instant), at most 256 of them (the rest at the next timer, armed
    /// for now). The timer is armed again for the next deadline, or
    /// cancelled when there is none.
    fn timer(&mut self, cfg: &DcqcnConfig, now: Instant) -> Result<Decision, Error> {
        let now = now.as_nanos();
        for _ in 0..256 {
            let next = self.dec_due.min(self.inc_due);
            if next > now {
                break;
            }
            if self.inc_due <= self.dec_due {
                let at = self.inc_due;
                self.increase(cfg);
                self.stage_t = self.stage_t.saturating_add(1);
                self.inc_due = if self.recovered() {
                    NEVER
                } else {
                    at.saturating_add(cfg.increase_interval_ns as u64)
                };
            } else {
                self.decrease(cfg, self.dec_due);
            }
        }
        let mut d = self.decision();
        d.timer = match self.next_deadline() {
            Some(at) => TimerRequest::Arm(at.max(Instant::from_nanos(now))),
            None => TimerRequest::Cancel,
        };
        Ok(d)
    }

    /// The scheduler sends `len` bytes: with a byte counter, an increase
    /// event per B bytes while the flow recovers.
    fn sent(&mut self, cfg: &DcqcnConfig, _now: Instant, _: Seq, len: u32, _: MessageEnd) -> Result<Decision, Error> {
        let before = self.next_deadline();
        let b = cfg.byte_counter;
        if b == 0 || self.inc_due == NEVER {
            return Ok(self.decision());
        }
        self.bytes = self.bytes.saturating_add(len);
        // len < 2^32 and b ≥ 1024: at most 2^22 rounds; a packet is far
        // less than that (one round per B bytes).
        while self.bytes >= b && !self.recovered() {
            self.bytes -= b;
            self.increase(cfg);
            self.stage_b = self.stage_b.saturating_add(1);
        }
        if self.recovered() {
            self.inc_due = NEVER;
            self.bytes = 0;
        }
        Ok(self.decision_after(before))
    }

    /// ACKs, NACKs and losses are the transport's: DCQCN reacts to CNPs only.
    fn ack(&mut self, _cfg: &DcqcnConfig, _now: Instant, _ack: &Ack<'_>) -> Result<Decision, Error> {
        Ok(Dcqcn::decision(self))
    }

    fn loss(&mut self, _cfg: &DcqcnConfig, _now: Instant, _first_lost: Seq) -> Result<Decision, Error> {
        Ok(Dcqcn::decision(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Algorithm;
    use crate::units::{LinkSpeed, Seq};

    fn flow(cfg: &DcqcnConfig) -> Dcqcn {
        let p = FlowParams {
            algorithm: Algorithm::Dcqcn,
            base_rtt: BaseRtt::from_nanos(12_000).unwrap(),
            line_rate: LinkSpeed::from_gbps(100),
            start_seq: Seq(0),
        };
        Dcqcn::new(cfg, &p).unwrap()
    }

    fn at(ns: u64) -> Instant {
        Instant::from_nanos(ns)
    }

    fn gbps(r: RateQ8) -> f64 {
        r as f64 / 256.0 / 1000.0
    }

    /// The first CNP starts the periods; the first check Td later halves the
    /// rate (alpha = 1 then), and the increase timer starts there.
    #[test]
    fn first_cnp_halves_at_the_first_check() {
        let cfg = DcqcnConfig::hpcc_sim();
        let mut d = flow(&cfg);
        let out = d.cnp(&cfg, at(10_000)).unwrap();
        assert_eq!(out.timer, TimerRequest::Arm(at(14_000)));
        let out = d.timer(&cfg, at(14_000)).unwrap();
        // alpha decayed for 4 periods of 1 µs with no CNP: (255/256)^4.
        let alpha = (255.0f64 / 256.0).powi(4);
        assert!(
            (gbps(d.rate()) - 100.0 * (1.0 - alpha / 2.0)).abs() < 1e-3,
            "{}",
            gbps(d.rate())
        );
        assert_eq!(gbps(d.target()), 100.0);
        assert_eq!(out.timer, TimerRequest::Arm(at(314_000)));
        // Pacing: Rc·T/8 bytes per T.
        let bytes = out.pacing.bytes.to_bits() as f64 / 16.0;
        assert!((bytes - gbps(d.rate()) * 12_000.0 / 8.0).abs() <= 1.0 / 16.0);
    }

    /// With F = 1: one fast-recovery step, then additive steps of R_AI =
    /// 20 Mb/s at 100 Gb/s, then hyper steps of 200 Mb/s.
    #[test]
    fn increase_goes_fast_recovery_then_additive_then_hyper() {
        let cfg = DcqcnConfig::hpcc_sim();
        let mut d = flow(&cfg);
        d.cnp(&cfg, at(0)).unwrap();
        d.timer(&cfg, at(4_000)).unwrap();
        let (rc0, rt0) = (gbps(d.rate()), gbps(d.target()));
        d.timer(&cfg, at(304_000)).unwrap();
        assert!((gbps(d.rate()) - (rc0 + rt0) / 2.0).abs() < 1e-4);
        assert_eq!(gbps(d.target()), rt0);
        // Rt is the line rate here: AI and HAI are capped there.
        assert_eq!(rt0, 100.0);
        // From a lower target: a second cut after an increase clamps Rt.
        d.cnp(&cfg, at(305_000)).unwrap();
        d.timer(&cfg, at(308_000)).unwrap();
        let rt1 = gbps(d.target());
        assert!(rt1 < 100.0);
        d.timer(&cfg, at(608_000)).unwrap(); // stage 0: fast recovery
        assert_eq!(gbps(d.target()), rt1);
        d.timer(&cfg, at(908_000)).unwrap(); // stage 1 = F: additive
        assert!(
            (gbps(d.target()) - rt1 - 0.02).abs() < 1e-4,
            "{}",
            gbps(d.target()) - rt1
        );
        d.timer(&cfg, at(1_208_000)).unwrap(); // stage 2 > F: hyper
        assert!(
            (gbps(d.target()) - rt1 - 0.22).abs() < 1e-4,
            "{}",
            gbps(d.target()) - rt1
        );
    }

    /// A CNP between checks waits for the next check point of the Td
    /// grid; with none waiting, no decrease check is armed.
    #[test]
    fn decrease_checks_keep_their_phase() {
        let cfg = DcqcnConfig::hpcc_sim();
        let mut d = flow(&cfg);
        d.cnp(&cfg, at(1_000)).unwrap();
        d.timer(&cfg, at(5_000)).unwrap();
        let out = d.cnp(&cfg, at(17_500)).unwrap();
        // Checks at 5 000 + 4 000·k: the next after 17 500 is 21 000.
        assert_eq!(out.timer, TimerRequest::Arm(at(21_000)));
    }

    /// Alpha brought up to date lazily equals the period-by-period EWMA.
    #[test]
    fn lazy_alpha_matches_step_by_step() {
        let cfg = DcqcnConfig::hpcc_sim();
        let mut d = flow(&cfg);
        d.cnp(&cfg, at(0)).unwrap();
        d.cnp(&cfg, at(2_500)).unwrap(); // periods at 1 000, 2 000 applied; flag set
        d.cnp(&cfg, at(50_500)).unwrap(); // 3 000 (flag) … 50 000
        let mut a = 1.0f64;
        let g = 1.0 / 256.0;
        for k in 1..=50 {
            let flag = if k == 3 { 1.0 } else { 0.0 };
            a = (1.0 - g) * a + g * flag;
        }
        let got = d.alpha().to_bits() as f64 / (1u64 << 24) as f64;
        assert!((got - a).abs() < 1e-6, "{got} vs {a}");
    }

    #[test]
    fn the_rate_never_falls_below_the_floor_and_recovery_stops_the_timer() {
        let cfg = DcqcnConfig::hpcc_sim();
        let mut d = flow(&cfg);
        let mut now = 0;
        for _ in 0..200 {
            d.cnp(&cfg, at(now)).unwrap();
            now += 4_000;
            d.timer(&cfg, at(now)).unwrap();
        }
        // The floor, MIN_RATE 1000 Mb/s.
        assert_eq!(gbps(d.rate()), 1.0);
        let mut armed = d.next_deadline();
        while let Some(t) = armed {
            let out = d.timer(&cfg, t).unwrap();
            armed = d.next_deadline();
            if armed.is_none() {
                assert_eq!(out.timer, TimerRequest::Cancel);
            }
        }
        assert_eq!(gbps(d.rate()), 100.0);
    }
}
