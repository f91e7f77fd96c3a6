//! LDCP on a programmable NIC (draft-dai §2.2, §2.3, §3.1): window-based,
//! per-ACK window adjustment (PAWA), timer-clocked windows below one packet,
//! and the zero-RTT fast start.
//!
//! ```text
//!             Sent: first IW bytes Not-ECT (the IW-th / last-of-message ECT)
//!  [FastStart] ──Loss: cw = bytes acked in order / MTU, go-back-N──────▶ [Stable]
//!       │                                                                  │  ▲
//!       └──ACK covering the full IW: cw = IW (= BDP)─────────────────────▶│  │
//!                                                 cw ≥ 1: ACK-clocked, eq. (1)/(2)
//!                                                 cw < 1: timer every RTT/cw releases
//!                                                         one packet; +gamma / max(gamma, cw/2)
//! ```
//!
//! State: 24 bytes (cw, snd_una, start, smoothed RTT, next tick, packed
//! IW/phase/flags).
//!
//! RTT: the draft's "RTT/cw" and rate = cw/RTT use the measured RTT, which
//! makes timer-clocked windows self-regulating (a longer queue stretches
//! every tick). The flow starts from the path's base RTT and smooths the
//! samples ACKs carry: `srtt += (sample − srtt) · g`, clamped to
//! [`BaseRtt::MIN_NS`, `BaseRtt::MAX_NS`]. With an ACK per packet g = 1/8
//! (TCP's gain, RFC 6298). Below one packet an ACK comes once every 1/cw
//! RTTs, so the gain is scaled by the samples an RTT brings (as RFC 7323
//! App. G scales it for many samples an RTT): g = min(1, 1/(8·cw)). With
//! 1/8 a sample, a flow at cw = 1/16 took 8 samples, 128 RTTs, to follow a
//! queue that had come and gone, and kept ticking at the stale RTT.

use core::num::{NonZeroU32, NonZeroU64};

use bitfield_struct::bitfield;

use super::{iw_packets, FastStart, LdcpConfig, Tick16};
use crate::controller::Controller;
use crate::error::Error;
use crate::event::{Ack, Algorithm, Decision, Ecn, EcnEcho, FlowParams, MessageEnd, Pacing, Request, TimerRequest};
use crate::fixmath::{div_u64, mul_shr};
use crate::units::{BaseRtt, Instant, Packets, Seq, Window};

/// Which stage of §2 a flow is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Phase {
    /// The first RTT's zero-RTT bandwidth acquisition (§2.3).
    FastStart,
    /// Congestion avoidance with PAWA (§2.2).
    Stable,
}

impl Phase {
    // Stable is 0, so that the common ACK's test (stable, no tick
    // pending) is of the status word's top two bits being clear.
    const fn into_bits(self) -> u8 {
        match self {
            Phase::Stable => 0,
            Phase::FastStart => 1,
        }
    }

    const fn from_bits(bits: u8) -> Self {
        match bits {
            0 => Phase::Stable,
            _ => Phase::FastStart,
        }
    }
}

#[bitfield(u32, defmt = cfg(feature = "defmt"))]
#[derive(PartialEq, Eq)]
struct Status {
    /// IW in 1/16 packets (16 ..= 65 535·16, see
    /// `LdcpConfig::initial_window_16ths`).
    #[bits(20)]
    iw16: u32,
    /// The additive increase below cw's resolution, in 2^-25 packets
    /// (see `AI_EXTRA_BITS`).
    #[bits(9)]
    ai_carry: u16,
    #[bits(1)]
    __: u8,
    // The top two bits: zero in the stable stage with no tick pending.
    #[bits(1)]
    phase: Phase,
    /// cw < 1 and the tick timer is armed for `tick`.
    timer_armed: bool,
}

/// Extra fractional bits of the additive increase: alpha/cw is computed in
/// 2^-25 packets and the part below cw's 2^-16 is carried to the next ACK.
/// At cw = 48 000 with alpha = 1/4, alpha/cw is 0.34 of cw's last bit, so
/// truncating it added nothing at all; in 2^-25 units it is 174.8, and the
/// growth over an RTT of ACKs is within 0.6 % of alpha.
const AI_EXTRA_BITS: u32 = 9;
const AI_CARRY_MASK: u64 = (1 << AI_EXTRA_BITS) - 1;

/// The LDCP scales: cw and n in 2^-16 packets ([`Packets::FRAC_BITS`]),
/// alpha and beta in 2^-24 ([`crate::units::Fraction::FRAC_BITS`]).
const FRACTION_BITS: u32 = crate::units::Fraction::FRAC_BITS;

/// PAWA, eq. (1)/(2), for cw ≥ 1, `carry` the increase carried below cw's
/// resolution, n packets acknowledged: the new cw (raw, before any floor)
/// and the new carry.
#[inline(always)]
fn pawa(cfg: &LdcpConfig, cw: Packets, carry: u16, n: u32, ece: EcnEcho) -> (u64, u16) {
    let cw = cw.to_bits();
    match ece {
        EcnEcho::NotMarked => {
            let inc = pawa_increase(cfg, n, cw) + carry as u64;
            (cw as u64 + (inc >> AI_EXTRA_BITS), (inc & AI_CARRY_MASK) as u16)
        }
        EcnEcho::Marked => ((cw as u64).saturating_sub(pawa_decrease(cfg, n)), carry),
    }
}

/// PAWA's increase, eq. (1)/(2) with ECE = 0 (draft-dai §2.2):
///
/// ```text
/// cw = cw + n · alpha / cw
/// ```
/// in 2^-25 packets (`AI_EXTRA_BITS` below cw's 2^-16), for cw ≥ 1
/// (cw_raw ≥ 2^16): with n_raw (2^-16), alpha_raw (2^-24), cw_raw (2^-16),
/// the increase is `n_raw · alpha_raw · 2 / cw_raw` units of 2^-25.
///
/// Without a 64-bit division on the common path: X = n·alpha in 2^-19
/// packets (`n_raw · alpha_raw >> 21`, short by less than 2^-19 packet, a
/// relative 2^-9 at the smallest alpha of 2^-10 and 2^-19 at alpha = 1),
/// and while X < 2^20 (n·alpha < 2 packets) X·2^12 fits 32 bits:
///
/// ```text
/// cw_raw < 2^22 (cw < 64):  q = X·2^12 / cw_raw  (2^-15 packets), r its remainder,
///                           increase = q·2^10 + r·2^10 / cw_raw      (r < 2^22: fits)
/// cw_raw ≥ 2^22:            increase = X·2^12 / (cw_raw >> 10)      (divisor ≥ 2^12:
///                           the shift costs under 2^-12 of the increase)
/// ```
/// Both rounded down. Larger n·alpha (a delayed ACK of two or more
/// packets at alpha = 1) takes the exact 64-bit division.
#[inline]
fn pawa_increase(cfg: &LdcpConfig, n: u32, cw_raw: u32) -> u64 {
    if let Some(inc) = pawa_increase_narrow(cfg, n, cw_raw) {
        return inc as u64;
    }
    match NonZeroU32::new(cw_raw) {
        Some(cw) => pawa_increase_wide(n, cfg.alpha.to_bits(), cw),
        None => 0,
    }
}

/// [`pawa_increase`] while n·alpha < 2 packets and cw ≥ 1 (cw_raw ≥
/// 2^16), in 32 bits: q < 2^32 / 2^16, so the increase is below 2^26 + 2^10.
/// `None` outside that range (and for cw = 0).
#[inline(always)]
fn pawa_increase_narrow(cfg: &LdcpConfig, n: u32, cw_raw: u32) -> Option<u32> {
    let x = mul_shr(n, cfg.alpha.to_bits(), FRACTION_BITS - 3);
    if x >= 1 << 20 || cw_raw >> Packets::FRAC_BITS == 0 {
        return None;
    }
    let cw = NonZeroU32::new(cw_raw)?;
    let x = (x as u32) << 12;
    if cw_raw >> 22 == 0 {
        let (q, r) = (x / cw, x % cw);
        return Some((q << 10) | ((r << 10) / cw));
    }
    // cw_raw ≥ 2^22, so the shifted divisor is at least 2^12.
    let d = NonZeroU32::new(cw_raw >> 10)?;
    Some(x / d)
}

/// [`pawa_increase`] for n·alpha of two packets or more: one 64-bit
/// division (n_raw·alpha_raw·2 < 2^32·2^25 fits u64).
#[cold]
#[inline(never)]
fn pawa_increase_wide(n: u32, alpha: u32, cw: NonZeroU32) -> u64 {
    div_u64((n as u64 * alpha as u64) << 1, NonZeroU64::from(cw))
}

/// PAWA's decrease, eq. (1)/(2) with ECE = 1: `n · beta` in 2^-16 packets,
/// `n_raw · beta_raw >> 24`, rounded down.
#[inline]
fn pawa_decrease(cfg: &LdcpConfig, n: u32) -> u64 {
    mul_shr(n, cfg.beta.to_bits(), FRACTION_BITS)
}

/// §2.2's rules below one packet (cw_raw < 2^16), for an ACK of n
/// packets (`n_raw` in 2^-16, at least 1): the new cw, raw, before the
/// floor at gamma.
///
/// ```text
/// ECE = 0: cw = cw + k·gamma
/// ECE = 1: cw = max(gamma, cw / 2^k)        (eta = 1/2, k times)
/// k = ⌈n⌉, the packets the ACK acknowledges
/// ```
/// The draft gives the rules per ACK, each ACK acknowledging one packet;
/// an ACK for k packets applies them k times, as eq. (2) extends eq. (1)
/// to an ACK for n packets (the crossing of 1 keeps k·gamma, with no
/// switch to eq. (2) midway, as a fall through 1 keeps n·beta). Without
/// coalescing k is 1 and this is the draft's rule as written; a NIC that
/// coalesces ACKs before its engine (hal-sim's `[nic.cc_processor]`)
/// grows cw as fast as one that does not. k ≤ 2^16 and gamma_raw < 2^16:
/// the product fits u64 with room; a shift of 32 or more gives 0.
#[inline]
fn below_one(cw_raw: u32, gamma: Packets, n_raw: u32, ece: EcnEcho) -> u64 {
    // n_raw = ⌊bytes·2^16/MTU⌋ is a multiple of 2^16 exactly when the
    // bytes are whole packets (MTU < 2^16), so this rounds up exactly.
    let k = ((n_raw as u64 + 0xFFFF) >> Packets::FRAC_BITS).max(1);
    match ece {
        EcnEcho::NotMarked => cw_raw as u64 + k * gamma.to_bits() as u64,
        EcnEcho::Marked => (cw_raw as u64).checked_shr(k as u32).unwrap_or(0),
    }
}

/// LDCP window-variant state for one flow. 24 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Ldcp {
    cw: Packets,
    snd_una: Seq,
    /// Fast start: the first sequence number (for transition 1 and the IW
    /// boundary). Stable stage: the base RTT in ns, the floor of srtt, so a
    /// bogus sample can never pace faster than IW/T (the line rate).
    aux: u32,
    srtt: BaseRtt,
    tick: Tick16,
    status: Status,
}

impl Ldcp {
    /// A flow starting in fast start with IW = BDP (or, with fast start
    /// off, in the stable stage at cw = BDP).
    pub fn new(cfg: &LdcpConfig, p: &FlowParams) -> Result<Self, Error> {
        let iw16 = cfg.initial_window_16ths(p)?;
        let phase = match cfg.fast_start {
            FastStart::Enabled => Phase::FastStart,
            FastStart::Disabled => Phase::Stable,
        };
        Ok(Ldcp {
            cw: iw_packets(iw16),
            snd_una: p.start_seq,
            aux: match phase {
                Phase::FastStart => p.start_seq.0,
                Phase::Stable => p.base_rtt.as_nanos(),
            },
            srtt: p.base_rtt,
            tick: Tick16::default(),
            status: Status::new().with_iw16(iw16 & 0xF_FFFF).with_phase(phase),
        })
    }

    /// The congestion window cw in packets.
    pub fn cw(&self) -> Packets {
        self.cw
    }

    /// Fast start or stable stage.
    pub fn phase(&self) -> Phase {
        self.status.phase()
    }

    /// The smoothed RTT.
    pub fn srtt(&self) -> BaseRtt {
        self.srtt
    }

    /// Highest cumulative ACK seen.
    pub fn snd_una(&self) -> Seq {
        self.snd_una
    }

    /// IW in packets (to 1/16 packet).
    pub fn initial_window(&self) -> Packets {
        iw_packets(self.status.iw16())
    }

    /// Restores a checkpointed window: the flow continues in the stable
    /// stage at `cw` (timer-clocked if below one packet, the first tick at
    /// now + RTT/cw). `InvalidParams` if `cw` is below gamma.
    pub fn restore(&mut self, cfg: &LdcpConfig, now: Instant, cw: Packets) -> Result<Decision, Error> {
        if cw < cfg.gamma_packets() {
            return Err(Error::InvalidParams);
        }
        let old = self.cw;
        self.cw = cw;
        if self.phase() == Phase::FastStart {
            self.enter_stable();
        }
        Ok(self.after_cw_change(cfg, now, old))
    }

    /// End of the fast-start window: start + IW·MTU bytes, rounded up
    /// (fast start only).
    fn iw_end(&self, cfg: &LdcpConfig) -> Seq {
        // iw16 < 2^20 and mtu ≤ 65535: the product fits u64, and IW·MTU ≤
        // 65535 · 65535 < 2^32.
        let bytes = (self.status.iw16() as u64 * cfg.mtu.bytes() as u64).div_ceil(16);
        Seq(self.aux).add(bytes as u32)
    }

    /// Leaves fast start: the start sequence gives way to the RTT floor
    /// (srtt is still the base RTT: fast start takes no samples).
    fn enter_stable(&mut self) {
        self.status.set_phase(Phase::Stable);
        self.aux = self.srtt.as_nanos();
    }

    fn rtt_floor(&self) -> u32 {
        match self.phase() {
            Phase::Stable => self.aux,
            Phase::FastStart => self.srtt.as_nanos(),
        }
    }

    /// Window = cw·MTU bytes (IW·MTU in fast start); rate = window/T capped
    /// at IW/T, the line rate. In timer mode, cw·MTU/T is one packet every
    /// RTT/cw: the same pace as the ticks.
    #[inline]
    pub fn decision(&self, cfg: &LdcpConfig) -> Decision {
        let iw = self.initial_window();
        let window = self.cw.to_window(cfg.mtu.bytes());
        // Paced at most at IW per RTT, the line rate: one conversion when
        // cw is below IW, as it nearly always is.
        let paced = if self.cw <= iw {
            window
        } else {
            // iw.to_window(mtu) = (iw16·2^12·MTU) >> 12 = iw16·MTU in
            // 1/16 bytes, exactly (iw16 < 2^20: iw16·2^12 fits u32).
            Window::from_bits_saturating(self.status.iw16() as u64 * cfg.mtu.bytes() as u64)
        };
        Decision {
            window,
            pacing: Pacing {
                bytes: paced,
                per: self.srtt,
            },
            ecn: Ecn::Ect,
            timer: TimerRequest::Keep,
            request: Request::None,
            ev: None,
        }
    }

    /// [`Ldcp::ack`] with its decision handed to `answer`, so a caller
    /// that wraps it (the engine's `Result`) gets it built in place rather
    /// than returned and copied into the wrapper.
    #[inline(always)]
    pub(crate) fn ack_into<R>(
        &mut self,
        cfg: &LdcpConfig,
        now: Instant,
        ack: &Ack<'_>,
        answer: impl FnOnce(Decision) -> R,
    ) -> R {
        if self.ack_clocked_ack(cfg, ack) {
            return answer(self.decision(cfg));
        }
        answer(self.any_ack(cfg, now, ack))
    }

    /// The common ACK, on its own so that the rest stays out of its way
    /// (registers, prologue): the stable stage, ACK-clocked before and
    /// after (cw ≥ 1, no tick pending), under 64 KiB newly acknowledged
    /// (none included). The same arithmetic as [`Ldcp::any_ack`], which takes every other
    /// ACK; `false` leaves the state untouched for it.
    #[inline(always)]
    pub(crate) fn ack_clocked_ack(&mut self, cfg: &LdcpConfig, ack: &Ack<'_>) -> bool {
        let status = self.status;
        // Stable and no tick pending, in one test of the packed word: its
        // top two bits clear.
        const STABLE_UNARMED: u32 = Status::new().with_phase(Phase::Stable).into_bits();
        const MASK: u32 = Status::new()
            .with_phase(Phase::FastStart)
            .with_timer_armed(true)
            .into_bits();
        const { assert!(STABLE_UNARMED == 0 && MASK == 0b11 << 30) };
        if status.into_bits() >> 30 != 0 || self.cw < Packets::ONE {
            return false;
        }
        // Under 64 KiB newly acknowledged, none included: an ACK of
        // nothing new changes only srtt here, as in `any_ack` (n = 0 adds
        // and takes nothing). An ACK behind snd_una is 2^31 or more ahead
        // in the wrapped difference, so it is the general path's.
        let newly = ack.cum_ack.0.wrapping_sub(self.snd_una.0);
        if newly >> Packets::FRAC_BITS != 0 {
            return false;
        }
        // n of eq. (2) in 2^-16 packets, by the MTU's reciprocal.
        let n = cfg.mtu.packets_raw(newly);
        // pawa() in 32 bits, for the range where it is exact in them; the
        // rest (n·alpha of two packets or more, cw leaving [1, 2^16)) is
        // the general path's.
        let cw = self.cw.to_bits();
        let (new, carry) = match ack.ece {
            EcnEcho::NotMarked => {
                let Some(inc) = pawa_increase_narrow(cfg, n, cw) else {
                    return false;
                };
                // inc < 2^26 + 2^10 and the carry < 2^9: no overflow.
                let inc = inc + status.ai_carry() as u32;
                let Some(new) = cw.checked_add(inc >> AI_EXTRA_BITS) else {
                    return false;
                };
                (new, (inc & AI_CARRY_MASK as u32) as u16)
            }
            // n·beta >> 24 < 2^32: fits.
            EcnEcho::Marked => (cw.saturating_sub(pawa_decrease(cfg, n) as u32), status.ai_carry()),
        };
        // Below one packet the tick timer starts: the general path.
        if new < Packets::ONE.to_bits() {
            return false;
        }
        if let Some(sample) = ack.rtt_ns {
            // Stable stage: aux is the RTT floor.
            self.srtt = smooth_rtt(self.srtt, sample.max(self.aux));
        }
        self.snd_una = ack.cum_ack;
        self.cw = Packets::from_bits(new);
        self.status.set_ai_carry(carry);
        true
    }

    /// Any ACK: what [`Ldcp::ack`] says.
    #[cold]
    #[inline(never)]
    pub(crate) fn any_ack(&mut self, cfg: &LdcpConfig, now: Instant, ack: &Ack<'_>) -> Decision {
        if let (Some(sample), Phase::Stable) = (ack.rtt_ns, self.phase()) {
            self.srtt = smooth_rtt_at(self.srtt, sample.max(self.rtt_floor()), self.cw);
        }
        let newly = ack.cum_ack.bytes_since(self.snd_una);
        if newly == 0 {
            return self.decision(cfg);
        }
        self.snd_una = ack.cum_ack;
        if self.phase() == Phase::FastStart {
            if !self.iw_end(cfg).after(ack.cum_ack) {
                self.enter_stable();
                self.cw = self.initial_window();
            }
            return self.decision(cfg);
        }
        let old = self.cw;
        let gamma = cfg.gamma_packets();
        let cw = old.to_bits();
        let new = if old >= Packets::ONE {
            let (new, carry) = pawa(cfg, old, self.status.ai_carry(), cfg.mtu.packets_raw(newly), ack.ece);
            self.status.set_ai_carry(carry);
            new
        } else {
            below_one(cw, gamma, cfg.mtu.packets_raw(newly), ack.ece)
        };
        self.cw = Packets::from_bits_saturating(new).max(gamma);
        self.after_cw_change(cfg, now, old)
    }

    /// Arms or disarms the tick timer when cw crosses one packet, and
    /// re-times the pending tick when cw changes below one packet.
    #[inline]
    fn after_cw_change(&mut self, cfg: &LdcpConfig, now: Instant, old: Packets) -> Decision {
        let mut d = self.decision(cfg);
        let was_timed = old < Packets::ONE && self.status.timer_armed();
        let timed = self.cw < Packets::ONE;
        if timed && !was_timed {
            d.timer = self.arm_tick(now);
        } else if timed && self.cw > old {
            d.timer = self.retime_tick(now);
        } else if !timed && self.status.timer_armed() {
            self.status.set_timer_armed(false);
            d.timer = TimerRequest::Cancel;
        }
        d
    }

    /// RTT/cw in ns (§2.2: "ticked out by a timer, whose timeout is set as
    /// RTT/cw"): srtt · 2^16 / cw_raw, rounded up. srtt ≤ 2^20 and
    /// cw_raw ≥ 64 (cw ≥ gamma ≥ 2^-10), so at most 2^30 ns: a `u32`
    /// (cw = 0, which the floor at gamma rules out, saturates).
    ///
    /// Timer-clocked windows are below one packet (cw_raw < 2^16), and then
    /// the quotient is two 32-bit divides, 16 bits at a time: srtt / cw_raw,
    /// and (remainder · 2^16 + cw_raw − 1) / cw_raw, whose dividend stays
    /// below 2^32 since the remainder is below cw_raw < 2^16; the first
    /// quotient is at most 2^20 / 64, so shifted by 16 it stays below 2^31.
    #[inline]
    fn tick_interval(&self, cw: Packets) -> u32 {
        let srtt = self.srtt.as_nanos();
        let Some(c) = NonZeroU32::new(cw.to_bits()) else {
            return u32::MAX;
        };
        if c.get() >> Packets::FRAC_BITS == 0 {
            let (q, r) = (srtt / c, srtt % c);
            let low = ((r << Packets::FRAC_BITS) + (c.get() - 1)) / c;
            return (q << Packets::FRAC_BITS).saturating_add(low);
        }
        // cw ≥ 1: at most srtt. Rounded up: (a + cw − 1) / cw, a ≤ 2^36
        // so the sum cannot overflow.
        let ns = div_u64(
            ((srtt as u64) << Packets::FRAC_BITS) + (c.get() as u64 - 1),
            NonZeroU64::from(c),
        );
        ns.min(u32::MAX as u64) as u32
    }

    /// Stores the tick `interval_ns` after `now` (rounded up to 16 ns) and
    /// asks for the timer.
    #[inline]
    fn set_tick(&mut self, now: Instant, interval_ns: u32) -> TimerRequest {
        let (tick, arm) = Tick16::after(now, interval_ns);
        self.tick = tick;
        self.status.set_timer_armed(true);
        arm
    }

    /// Arms the tick at now + RTT/cw.
    #[inline]
    fn arm_tick(&mut self, now: Instant) -> TimerRequest {
        self.set_tick(now, self.tick_interval(self.cw))
    }

    /// cw rose while timer-clocked: the next release comes no later than
    /// now + RTT/cw at the new cw (raising cw from 1/16 to 1/2 brings it
    /// from 16 RTTs away to 2). A lower cw leaves the pending tick alone
    /// and takes effect from the next interval.
    fn retime_tick(&mut self, now: Instant) -> TimerRequest {
        let interval = self.tick_interval(self.cw);
        if now.saturating_add_nanos(interval as u64) < self.tick_instant(now) {
            self.set_tick(now, interval)
        } else {
            TimerRequest::Keep
        }
    }

    /// The stored tick as a full instant near `now`.
    fn tick_instant(&self, now: Instant) -> Instant {
        self.tick.instant_near(now)
    }

    /// [`Ldcp::decision`] for a flow below one packet, as on every tick:
    /// cw·MTU fits 32 bits there (cw_raw < 2^16, MTU ≤ 65 535), and IW is
    /// at least one packet, above cw, so the pace is the window itself. A
    /// product that does not fit (an MTU out of range, which only an
    /// unchecked configuration can bring) takes the general form.
    #[inline(always)]
    fn decision_below_one(&self, cfg: &LdcpConfig) -> Decision {
        match self.cw.to_bits().checked_mul(cfg.mtu.bytes()) {
            Some(raw) if self.cw < Packets::ONE => Decision::window_paced(
                Window::from_bits(raw >> (Packets::FRAC_BITS - Window::FRAC_BITS)),
                self.srtt,
            ),
            _ => self.decision(cfg),
        }
    }
}

/// `srtt + (sample − srtt) / 8`, truncated toward zero, clamped to the
/// [`BaseRtt`] range. A sample of 2^24 ns or more gives at least
/// (2^24 − 2^20)/8 > 2^20 = [`BaseRtt::MAX_NS`] whatever srtt is, so it is
/// capped there first and the rest fits `i32`.
#[inline]
pub(crate) fn smooth_rtt(srtt: BaseRtt, sample_ns: u32) -> BaseRtt {
    let s = srtt.as_nanos() as i32;
    let x = sample_ns.min(1 << 24) as i32;
    let next = (s + (x - s) / 8).clamp(BaseRtt::MIN_NS as i32, BaseRtt::MAX_NS as i32);
    BaseRtt::from_nanos(next as u32).unwrap_or(srtt)
}

/// [`smooth_rtt`] with the gain scaled to the samples an RTT brings at
/// window `cw`: g = 1/8 for cw ≥ 1, g = min(1, 1/(8·cw)) below (see the
/// module doc). In integers, cw = c/2^16 with c < 2^16 below one packet, so
/// 1/(8·cw) = 2^13/c: c ≤ 2^13 (cw ≤ 1/8) takes the sample itself, else
/// srtt + (sample − srtt)·2^13/c, truncated toward zero as `smooth_rtt`
/// truncates; |sample − srtt| < 2^24, so the product stays below 2^37, and
/// c > 2^13 is a non-zero divisor.
#[inline]
pub(crate) fn smooth_rtt_at(srtt: BaseRtt, sample_ns: u32, cw: Packets) -> BaseRtt {
    const ONE_EIGHTH: u32 = 1 << (Packets::FRAC_BITS - 3);
    let c = cw.to_bits();
    if c >> Packets::FRAC_BITS != 0 {
        return smooth_rtt(srtt, sample_ns);
    }
    // As in smooth_rtt: a sample past 2^24 ns is capped first, and the
    // result is clamped to the RTT range.
    let x = sample_ns.min(1 << 24);
    let s = srtt.as_nanos();
    let next = match NonZeroU64::new(c as u64).filter(|c| c.get() > ONE_EIGHTH as u64) {
        None => x,
        Some(c) => {
            // The step is at most |x − s| < 2^24: no overflow either way.
            let step = |d: u32| div_u64((d as u64) << (Packets::FRAC_BITS - 3), c) as u32;
            if x >= s {
                s + step(x - s)
            } else {
                s - step(s - x)
            }
        }
    };
    BaseRtt::from_nanos(next.clamp(BaseRtt::MIN_NS, BaseRtt::MAX_NS)).unwrap_or(srtt)
}

impl Controller for Ldcp {
    type Config = LdcpConfig;

    fn validate(cfg: &LdcpConfig) -> Result<(), Error> {
        cfg.validate()
    }

    fn start(cfg: &LdcpConfig, _now: Instant, p: &FlowParams) -> Result<(Self, Decision), Error> {
        if p.algorithm != Algorithm::Ldcp {
            return Err(Error::NotApplicable);
        }
        let l = Ldcp::new(cfg, p)?;
        let d = l.decision(cfg);
        Ok((l, d))
    }

    fn decision(&self, cfg: &LdcpConfig) -> Decision {
        Ldcp::decision(self, cfg)
    }

    /// An ACK. Old and duplicate cumulative ACKs change nothing (the
    /// window slides in bytes, §3.1 LSN).
    ///
    /// Fast start: an ACK that covers the whole IW moves to the stable stage
    /// with cw = IW = BDP (§3.1 transition 2).
    ///
    /// Stable stage, cw ≥ 1 — PAWA, eq. (2) with n = newly acked bytes / MTU
    /// (eq. (1) when n = 1):
    /// ```text
    /// ECE = 0: cw = cw + n·alpha/cw      pawa_increase, in 2^-25 packets
    /// ECE = 1: cw = cw − n·beta          pawa_decrease: n·beta >> 24
    /// ```
    /// Both round down; the increase keeps the 9 bits below cw's 2^-16 and
    /// carries them to the next ACK (`AI_EXTRA_BITS`), so many small
    /// increases add up as they should. When eq. (1) takes cw below 1 the flow enters timer
    /// mode at max(gamma, cw − n·beta): "cw ≥ 1" in eq. (1) is read as the
    /// domain of the rule, not a floor, since a floor at 1 would make windows
    /// below one packet unreachable.
    ///
    /// cw < 1 (§2.2), per packet the ACK acknowledges (k of them, see
    /// `below_one`):
    /// ```text
    /// ECE = 0: cw = cw + k·gamma
    /// ECE = 1: cw = max(gamma, cw/2^k)     (eta = 1/2)
    /// ```
    /// Crossing 1 upwards disarms the tick timer; crossing downwards arms it
    /// at now + RTT/cw.
    #[inline(always)]
    fn ack(&mut self, cfg: &LdcpConfig, now: Instant, ack: &Ack<'_>) -> Result<Decision, Error> {
        self.ack_into(cfg, now, ack, Ok)
    }

    const SHORT_ACK: bool = true;

    /// The stable stage's ACK-clocked ACK: cw of one packet or more, no
    /// tick pending, under 64 KiB newly acknowledged.
    #[inline(always)]
    fn short_ack(&mut self, cfg: &LdcpConfig, ack: &Ack<'_>) -> Option<Decision> {
        if self.ack_clocked_ack(cfg, ack) {
            Some(self.decision(cfg))
        } else {
            None
        }
    }

    /// ECN codepoint for a packet about to be sent (§2.3, §3.1): in fast
    /// start, the first IW bytes are Not-ECT so WRED drops them above K,
    /// except "the IW-th packet if the message is larger than BDP, or the
    /// last packet of a message if its size is below BDP", which is ECT so
    /// the receiver can detect a tail loss. Everything after the first IW,
    /// and everything in the stable stage, is ECT.
    fn sent(
        &mut self,
        cfg: &LdcpConfig,
        _now: Instant,
        seq: Seq,
        len: u32,
        end: MessageEnd,
    ) -> Result<Decision, Error> {
        let mut d = self.decision(cfg);
        if self.phase() == Phase::FastStart {
            let iw_end = self.iw_end(cfg);
            let first_rtt = iw_end.after(seq);
            let closes_iw = !iw_end.after(seq.add(len));
            if first_rtt && !closes_iw && end == MessageEnd::More {
                d.ecn = Ecn::NotEct;
            }
        }
        Ok(d)
    }

    /// A loss at `first_lost`. In fast start (§3.1 transition 1): "cw in
    /// stable stage is set to the number of packets that are accumulatively
    /// acknowledged before packet loss", at least gamma, and "the lost
    /// packets are retransmitted using go-back-N". In the stable stage the
    /// draft gives no window rule for a loss (only a full buffer drops an
    /// ECN-capable packet); cw is kept and go-back-N requested.
    fn loss(&mut self, cfg: &LdcpConfig, now: Instant, first_lost: Seq) -> Result<Decision, Error> {
        let old = self.cw;
        if self.phase() == Phase::FastStart {
            let acked = self.snd_una.bytes_since(Seq(self.aux)) as u64;
            self.enter_stable();
            let cw = cfg.mtu.packets_raw(acked.min(u32::MAX as u64) as u32);
            self.cw = Packets::from_bits(cw).max(cfg.gamma_packets());
        }
        let mut d = self.after_cw_change(cfg, now, old);
        d.request = Request::GoBackN { from: first_lost };
        Ok(d)
    }

    /// The tick timer fired. If the flow is timer-clocked and the tick is
    /// due, one packet is released and the next tick armed at now + RTT/cw.
    /// A timer event while ACK-clocked, or before the tick, is ignored.
    #[inline(always)]
    fn timer(&mut self, cfg: &LdcpConfig, now: Instant) -> Result<Decision, Error> {
        if !self.status.timer_armed() || self.cw >= Packets::ONE || !self.tick.due(now) {
            return Ok(self.decision(cfg));
        }
        let mut d = self.decision_below_one(cfg);
        d.request = Request::ReleaseOne;
        d.timer = self.arm_tick(now);
        Ok(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Algorithm;
    use crate::units::{Fraction, LinkSpeed, Mtu};
    use proptest::prelude::{any, prop_oneof};

    const T_NS: u32 = 8_000;

    // 100 Gb/s · 8 us = 100 kB = 100 packets of 1000 B.
    fn params() -> FlowParams {
        FlowParams {
            algorithm: Algorithm::Ldcp,
            base_rtt: BaseRtt::from_nanos(T_NS).unwrap(),
            line_rate: LinkSpeed::from_gbps(100),
            start_seq: Seq(1_000_000),
        }
    }

    fn ack(cum: u32, ece: EcnEcho) -> Ack<'static> {
        Ack {
            ece,
            ..Ack::new(Seq(cum), Seq(cum))
        }
    }

    fn pk(x: f64) -> f64 {
        x * 65_536.0
    }

    fn stable(cw_raw: u32) -> (LdcpConfig, Ldcp) {
        let mut cfg = LdcpConfig::draft_default();
        cfg.fast_start = FastStart::Disabled;
        let mut l = Ldcp::new(&cfg, &params()).unwrap();
        l.cw = Packets::from_bits(cw_raw);
        (cfg, l)
    }

    proptest::proptest! {
        /// The ACK-clocked fast path is the general path where it applies:
        /// the same state and the same decision, for any window, carry,
        /// valid alpha, beta and MTU, and ACK (delayed ACKs of jumbo
        /// frames, ACKs of nothing new and ACKs behind snd_una included).
        #[test]
        fn the_ack_clocked_path_is_the_general_path(
            cw_raw in 1u32..=u32::MAX,
            carry in 0u16..512,
            newly in prop_oneof![0u32..(1 << 17), proptest::strategy::Just(0u32), proptest::strategy::Strategy::prop_map(1u32..(1 << 17), u32::wrapping_neg)],
            marked: bool,
            alpha in 1u32..=(1 << 24),
            beta in 1u32..=(1 << 24),
            mtu in 64u32..=65_535,
            rtt in proptest::option::of(1u32..(1 << 22)),
        ) {
            let (mut cfg, mut fast) = stable(cw_raw);
            cfg.alpha = Fraction::from_bits(alpha).unwrap();
            cfg.beta = Fraction::from_bits(beta).unwrap();
            proptest::prop_assume!(cfg.validate().is_ok());
            cfg.mtu = Mtu::new(mtu).unwrap();
            fast.status.set_ai_carry(carry);
            let mut general = fast;
            let mut a = ack(1_000_000u32.wrapping_add(newly), if marked { EcnEcho::Marked } else { EcnEcho::NotMarked });
            a.rtt_ns = rtt;
            if fast.ack_clocked_ack(&cfg, &a) {
                let d = general.any_ack(&cfg, Instant::from_nanos(1_000), &a);
                proptest::prop_assert_eq!(fast, general);
                proptest::prop_assert_eq!(fast.decision(&cfg), d);
            } else {
                // Refused: untouched, for the general path to take.
                proptest::prop_assert_eq!(fast, general);
            }
        }

        /// The tick's decision is the general one for every window (below
        /// one packet, where it applies, and above, where it must defer:
        /// above IW, 100 packets here, with an MTU small enough for cw·MTU
        /// to fit 32 bits, the pace is IW's), MTU and RTT.
        #[test]
        fn the_decision_below_one_packet_is_the_general_decision(
            cw_raw in prop_oneof![1u32..(1 << 16), (100u32 << 16)..(1 << 26), any::<u32>()],
            mtu in prop_oneof![64u32..=65_535, 64u32..=64, 65_535u32..=65_535],
            rtt in BaseRtt::MIN_NS..=BaseRtt::MAX_NS,
            fast_start: bool,
        ) {
            let (mut cfg, mut l) = stable(cw_raw);
            cfg.mtu = Mtu::new(mtu).unwrap();
            l.srtt = BaseRtt::from_nanos(rtt).unwrap();
            if fast_start {
                l.status.set_phase(Phase::FastStart);
            }
            proptest::prop_assert_eq!(l.decision_below_one(&cfg), l.decision(&cfg));
        }
    }

    #[test]
    fn starts_with_iw_of_one_bdp_at_line_rate() {
        let cfg = LdcpConfig::draft_default();
        let l = Ldcp::new(&cfg, &params()).unwrap();
        assert_eq!(l.initial_window(), Packets::from_int(100));
        let d = l.decision(&cfg);
        assert_eq!(d.window.bytes_floor(), 100_000);
        assert_eq!(d.rate().as_bps(), 100_000_000_000);
        assert_eq!(l.phase(), Phase::FastStart);
    }

    /// Eq. (1): ECE = 0 adds alpha/cw; ECE = 1 takes beta.
    #[test]
    fn pawa_per_ack() {
        let (cfg, mut l) = stable(10 << 16);
        l.ack(&cfg, Instant::ZERO, &ack(1_001_000, EcnEcho::NotMarked)).unwrap();
        // 10 + 1/10
        assert_eq!(l.cw().to_bits(), (10 << 16) + 6_553);
        let before = l.cw().to_bits();
        l.ack(&cfg, Instant::ZERO, &ack(1_002_000, EcnEcho::Marked)).unwrap();
        assert_eq!(l.cw().to_bits(), before - (1 << 15));
    }

    /// Eq. (2): a delayed ACK for n packets moves cw n times as far.
    #[test]
    fn pawa_delayed_ack() {
        let (cfg, mut l) = stable(20 << 16);
        l.ack(&cfg, Instant::ZERO, &ack(1_004_000, EcnEcho::NotMarked)).unwrap();
        // 20 + 4·1/20 = 20.2
        assert!((l.cw().to_bits() as f64 - pk(20.2)).abs() <= 1.0);
        l.ack(&cfg, Instant::ZERO, &ack(1_007_000, EcnEcho::Marked)).unwrap();
        // 20.2 − 3·0.5 = 18.7
        assert!((l.cw().to_bits() as f64 - pk(18.7)).abs() <= 2.0);
    }

    /// Mixed packet sizes: a 500-byte ACK counts half a packet (§3.1 LSN).
    #[test]
    fn byte_sequence_space() {
        let (cfg, mut l) = stable(10 << 16);
        l.ack(&cfg, Instant::ZERO, &ack(1_000_500, EcnEcho::Marked)).unwrap();
        assert_eq!(l.cw().to_bits(), (10 << 16) - (1 << 14));
    }

    #[test]
    fn old_and_duplicate_acks_change_nothing() {
        let (cfg, mut l) = stable(10 << 16);
        l.ack(&cfg, Instant::ZERO, &ack(1_005_000, EcnEcho::NotMarked)).unwrap();
        let before = l;
        l.ack(&cfg, Instant::ZERO, &ack(1_005_000, EcnEcho::Marked)).unwrap();
        l.ack(&cfg, Instant::ZERO, &ack(1_003_000, EcnEcho::Marked)).unwrap();
        assert_eq!(l, before);
    }

    /// Crossing 1 downwards: eq. (1) result below 1 enters timer mode with
    /// the tick at now + RTT/cw; crossing back up cancels it.
    #[test]
    fn crossing_one_both_ways_is_continuous() {
        let (cfg, mut l) = stable((1 << 16) + (1 << 14)); // 1.25
        let now = Instant::from_nanos(1_000);
        let d = l.ack(&cfg, now, &ack(1_001_000, EcnEcho::Marked)).unwrap();
        // 1.25 − 0.5 = 0.75: no jump to a fixed value.
        assert_eq!(l.cw().to_bits(), 3 << 14);
        // RTT/cw = 8000/0.75 = 10666.67 ns → 11_680 after rounding up to 16 ns.
        assert_eq!(d.timer, TimerRequest::Arm(Instant::from_nanos(11_680)));
        assert!(d.window.bytes_floor() == 750);
        // +gamma steps: 0.875 (now + 8000/0.875 = 10_143 → 10_144 comes
        // before the pending 11_680: the tick moves up), then 1.0 →
        // ACK-clocked again.
        let d = l.ack(&cfg, now, &ack(1_002_000, EcnEcho::NotMarked)).unwrap();
        assert_eq!(l.cw().to_bits(), 7 << 13);
        assert_eq!(d.timer, TimerRequest::Arm(Instant::from_nanos(10_144)));
        let d = l.ack(&cfg, now, &ack(1_003_000, EcnEcho::NotMarked)).unwrap();
        assert_eq!(l.cw(), Packets::ONE);
        assert_eq!(d.timer, TimerRequest::Cancel);
        // Now eq. (1) again: 1 + 1/1.
        l.ack(&cfg, now, &ack(1_004_000, EcnEcho::NotMarked)).unwrap();
        assert_eq!(l.cw(), Packets::from_int(2));
    }

    /// Below one packet: ECE halves down to gamma, never below.
    #[test]
    fn sub_packet_halving_floors_at_gamma() {
        let (cfg, mut l) = stable(1 << 15); // 0.5
        let now = Instant::ZERO;
        for (i, expect) in [1u32 << 14, 1 << 13, 1 << 13].iter().enumerate() {
            l.ack(&cfg, now, &ack(1_001_000 + 1000 * i as u32, EcnEcho::Marked))
                .unwrap();
            assert_eq!(l.cw().to_bits(), *expect);
        }
        // And eq. (1) cannot go below gamma either.
        let (cfg, mut l) = stable(1 << 16);
        l.ack(&cfg, now, &ack(1_010_000, EcnEcho::Marked)).unwrap();
        assert_eq!(l.cw(), cfg.gamma_packets());
    }

    /// Below one packet, an ACK for k packets (a NIC's coalesced ACK) takes
    /// §2.2's per-ACK rules k times; a part of a packet counts as one.
    #[test]
    fn a_sub_packet_ack_for_k_packets_applies_the_rule_k_times() {
        let now = Instant::ZERO;
        // 1/4 + 3 · 1/8 (gamma) = 5/8: three whole packets.
        let (cfg, mut l) = stable(1 << 14);
        l.ack(&cfg, now, &ack(1_003_000, EcnEcho::NotMarked)).unwrap();
        assert_eq!(l.cw().to_bits(), 5 << 13);
        // 2.5 packets are three: 5/8 + 3/8 = 1, ACK-clocked again.
        let d = l.ack(&cfg, now, &ack(1_005_500, EcnEcho::NotMarked)).unwrap();
        assert_eq!(l.cw(), Packets::ONE);
        assert_eq!(d.timer, TimerRequest::Cancel);
        // Marked, two packets at 3/4: halved twice, 3/16; three: floored
        // at gamma (3/32 < 1/8).
        let (cfg, mut l) = stable(3 << 14);
        l.ack(&cfg, now, &ack(1_002_000, EcnEcho::Marked)).unwrap();
        assert_eq!(l.cw().to_bits(), 3 << 12);
        let (cfg, mut l) = stable(3 << 14);
        l.ack(&cfg, now, &ack(1_003_000, EcnEcho::Marked)).unwrap();
        assert_eq!(l.cw(), cfg.gamma_packets());
        // One packet, or part of one: once, as the draft writes it.
        let (cfg, mut l) = stable(1 << 14);
        l.ack(&cfg, now, &ack(1_000_400, EcnEcho::NotMarked)).unwrap();
        assert_eq!(l.cw().to_bits(), 3 << 13);
    }

    /// The timer releases one packet per RTT/cw and ignores early firings.
    #[test]
    fn timer_releases_one_packet_per_tick() {
        let (cfg, mut l) = stable((1 << 16) + (1 << 14));
        let d = l.ack(&cfg, Instant::ZERO, &ack(1_001_000, EcnEcho::Marked)).unwrap();
        let TimerRequest::Arm(t1) = d.timer else { panic!() };
        // Early: ignored.
        let early = l.timer(&cfg, Instant::from_nanos(t1.as_nanos() - 1)).unwrap();
        assert_eq!(early.request, Request::None);
        assert_eq!(early.timer, TimerRequest::Keep);
        let d = l.timer(&cfg, t1).unwrap();
        assert_eq!(d.request, Request::ReleaseOne);
        let TimerRequest::Arm(t2) = d.timer else { panic!() };
        let gap = t2.as_nanos() - t1.as_nanos();
        assert!((10_666..=10_682).contains(&gap), "gap {gap}");
        // Second firing at the same instant: not due again.
        assert_eq!(l.timer(&cfg, t1).unwrap().request, Request::None);
    }

    #[test]
    fn timer_while_ack_clocked_is_ignored() {
        let (cfg, mut l) = stable(5 << 16);
        let before = l;
        let d = l.timer(&cfg, Instant::from_nanos(123)).unwrap();
        assert_eq!(d.request, Request::None);
        assert_eq!(l, before);
    }

    /// Fast start: Not-ECT for the first IW bytes but the IW-th packet, the
    /// last of a short message, and everything after the IW.
    #[test]
    fn fast_start_ecn_marks() {
        let cfg = LdcpConfig::draft_default();
        let mut l = Ldcp::new(&cfg, &params()).unwrap();
        let s = 1_000_000u32;
        assert_eq!(
            l.sent(&cfg, Instant::ZERO, Seq(s), 1000, MessageEnd::More).unwrap().ecn,
            Ecn::NotEct
        );
        assert_eq!(
            l.sent(&cfg, Instant::ZERO, Seq(s + 98_000), 1000, MessageEnd::More)
                .unwrap()
                .ecn,
            Ecn::NotEct
        );
        // The IW-th (100th) packet.
        assert_eq!(
            l.sent(&cfg, Instant::ZERO, Seq(s + 99_000), 1000, MessageEnd::More)
                .unwrap()
                .ecn,
            Ecn::Ect
        );
        // Last packet of a message shorter than a BDP.
        assert_eq!(
            l.sent(&cfg, Instant::ZERO, Seq(s + 5_000), 700, MessageEnd::Last)
                .unwrap()
                .ecn,
            Ecn::Ect
        );
        // Past the IW, still before the transition: ECT.
        assert_eq!(
            l.sent(&cfg, Instant::ZERO, Seq(s + 100_000), 1000, MessageEnd::More)
                .unwrap()
                .ecn,
            Ecn::Ect
        );
    }

    /// Transition (2): a full IW acknowledged → stable at cw = BDP.
    #[test]
    fn full_iw_acked_enters_stable_at_bdp() {
        let cfg = LdcpConfig::draft_default();
        let mut l = Ldcp::new(&cfg, &params()).unwrap();
        l.ack(&cfg, Instant::ZERO, &ack(1_050_000, EcnEcho::NotMarked)).unwrap();
        assert_eq!(l.phase(), Phase::FastStart);
        l.ack(&cfg, Instant::ZERO, &ack(1_100_000, EcnEcho::NotMarked)).unwrap();
        assert_eq!(l.phase(), Phase::Stable);
        assert_eq!(l.cw(), Packets::from_int(100));
        assert_eq!(
            l.sent(&cfg, Instant::ZERO, Seq(1_000), 1000, MessageEnd::More)
                .unwrap()
                .ecn,
            Ecn::Ect
        );
    }

    /// Transition (1): loss → cw = packets acked in order before it, and
    /// go-back-N from the loss.
    #[test]
    fn fast_start_loss_sets_cw_to_acked_packets() {
        let cfg = LdcpConfig::draft_default();
        let mut l = Ldcp::new(&cfg, &params()).unwrap();
        l.ack(&cfg, Instant::ZERO, &ack(1_037_000, EcnEcho::NotMarked)).unwrap();
        let d = l.loss(&cfg, Instant::ZERO, Seq(1_037_000)).unwrap();
        assert_eq!(l.phase(), Phase::Stable);
        assert_eq!(l.cw(), Packets::from_int(37));
        assert_eq!(d.request, Request::GoBackN { from: Seq(1_037_000) });
        // Nothing acked before the loss: gamma, timer-clocked.
        let mut l = Ldcp::new(&cfg, &params()).unwrap();
        let d = l.loss(&cfg, Instant::ZERO, Seq(1_000_000)).unwrap();
        assert_eq!(l.cw(), cfg.gamma_packets());
        assert!(matches!(d.timer, TimerRequest::Arm(_)));
    }

    /// A timer-clocked flow follows its RTT as fast per RTT as an
    /// ACK-clocked one. A queue had pushed srtt to 5 base RTTs and drained;
    /// the next ACK brings a base-RTT sample. At cw = 1/16 that ACK comes 16
    /// RTTs after the last, and the gain of 1/8 a sample left srtt at 4.5
    /// base RTTs (the flow kept ticking at less than a quarter of its
    /// rate for dozens of RTTs more); now it takes the sample (gain
    /// min(1, 1/(8·cw)) = 1) and the next tick is base RTT / cw. At cw = 1/2
    /// the gain is 1/4; ACK-clocked (cw = 2) it stays 1/8.
    #[test]
    fn a_timer_clocked_flow_follows_its_rtt_per_rtt_not_per_sample() {
        for (cw_raw, want_in_bases) in [(1u32 << 12, 1.0), (1 << 15, 4.0), (2 << 16, 4.5)] {
            let (cfg, mut l) = stable(cw_raw);
            let base = l.srtt().as_nanos();
            l.srtt = BaseRtt::from_nanos(5 * base).unwrap();
            let now = Instant::from_nanos(1_000_000);
            let ack = Ack {
                rtt_ns: Some(base),
                ..Ack::new(l.snd_una.add(1000), l.snd_una.add(1000))
            };
            let d = l.ack(&cfg, now, &ack).unwrap();
            let srtt = l.srtt().as_nanos() as f64 / base as f64;
            assert!(
                (srtt - want_in_bases).abs() < 1e-3,
                "cw {cw_raw:#x}: srtt {srtt} base RTTs"
            );
            if cw_raw < 1 << 13 {
                // Still timer-clocked: the tick follows the new RTT.
                let TimerRequest::Arm(t) = d.timer else {
                    panic!("{:?}", d.timer)
                };
                let expect = base as f64 / (l.cw().to_bits() as f64 / 65_536.0);
                let got = (t.as_nanos() - now.as_nanos()) as f64;
                assert!((got - expect).abs() <= 16.0, "tick in {got} ns, RTT/cw {expect} ns");
            }
        }
        // The integer gain at the corners: 2^24 ns samples are capped, the
        // result stays in the RTT range.
        let eighth = Packets::from_bits(1 << 13);
        let s = BaseRtt::from_nanos(1000).unwrap();
        assert_eq!(smooth_rtt_at(s, u32::MAX, eighth).as_nanos(), BaseRtt::MAX_NS);
        assert_eq!(smooth_rtt_at(s, 0, eighth).as_nanos(), BaseRtt::MIN_NS);
        assert_eq!(smooth_rtt_at(s, 0, Packets::from_bits(0)).as_nanos(), BaseRtt::MIN_NS);
        assert_eq!(smooth_rtt_at(s, 3000, Packets::from_bits(1 << 14)).as_nanos(), 2000);
        assert_eq!(smooth_rtt_at(s, 9000, Packets::ONE), smooth_rtt(s, 9000));
    }

    /// Samples below the base RTT cannot speed the flow past IW/T.
    #[test]
    fn rtt_never_falls_below_the_base_rtt() {
        let (cfg, mut l) = stable(10 << 16);
        for i in 1..=100u32 {
            let ack = Ack {
                rtt_ns: Some(1),
                ..Ack::new(Seq(1_000_000 + i), Seq(1_000_000 + i))
            };
            l.ack(&cfg, Instant::ZERO, &ack).unwrap();
        }
        assert_eq!(l.srtt(), BaseRtt::from_nanos(T_NS).unwrap());
        assert!(l.decision(&cfg).rate().as_bps() <= 100_000_000_000);
    }

    /// RTT samples stretch the ticks: RTT/cw uses the smoothed RTT.
    #[test]
    fn measured_rtt_sets_the_tick_interval() {
        let (cfg, mut l) = stable(1 << 15); // 0.5
        for i in 1..=40u32 {
            let ack = Ack {
                ece: EcnEcho::Marked,
                rtt_ns: Some(32_000),
                ..Ack::new(Seq(1_000_000 + i), Seq(1_000_000 + i))
            };
            l.ack(&cfg, Instant::ZERO, &ack).unwrap();
        }
        // 8 us → 32 us by 1/8 steps: after 40 samples within 0.5 %.
        assert!((l.srtt().as_nanos() as i64 - 32_000).abs() < 160, "{:?}", l.srtt());
        // Into timer mode at cw 0.5: the first tick at srtt / 0.5.
        l.restore(&cfg, Instant::ZERO, Packets::ONE).unwrap();
        let d = l.restore(&cfg, Instant::ZERO, Packets::from_bits(1 << 15)).unwrap();
        let TimerRequest::Arm(t) = d.timer else {
            panic!("timer mode")
        };
        assert!(
            (t.as_nanos() as i64 - 2 * l.srtt().as_nanos() as i64).abs() <= 16,
            "{t:?}"
        );
        assert_eq!(
            smooth_rtt(BaseRtt::from_nanos(1000).unwrap(), u32::MAX),
            BaseRtt::from_nanos(BaseRtt::MAX_NS).unwrap()
        );
        assert_eq!(
            smooth_rtt(BaseRtt::from_nanos(1000).unwrap(), 0),
            BaseRtt::from_nanos(875).unwrap()
        );
    }

    /// The divide-free increase against the exact n·alpha·2/cw (2^-25
    /// packets): within a relative 2^-12 (the shifted divisor at cw ≥ 64)
    /// plus the 2^-19-packet truncation of n·alpha, and exact below cw = 64
    /// when n·alpha has no bits below 2^-19.
    #[test]
    fn pawa_increase_against_the_exact_quotient() {
        use proptest::prelude::*;
        let mut runner = proptest::test_runner::TestRunner::default();
        let strategy = (1u32..=1 << 24, 1u32..=8 << 16, 1u32 << 16..=u32::MAX);
        runner
            .run(&strategy, |(alpha, n, cw)| {
                let mut cfg = LdcpConfig::draft_default();
                cfg.alpha = Fraction::from_bits(alpha).unwrap();
                let exact = (n as u64 * alpha as u64 * 2) / cw as u64;
                let got = pawa_increase(&cfg, n, cw);
                prop_assert!(got <= exact + exact / 4096 + 1, "{got} > {exact}");
                // X's truncation: < 2^-19 packet = 64 units of 2^-25, scaled by 1/cw ≤ 1.
                prop_assert!(exact <= got + 64 + exact / 4096 + 1, "{got} vs {exact}");
                if cw < 1 << 22
                    && (n as u64 * alpha as u64).is_multiple_of(1 << 21)
                    && (n as u64 * alpha as u64) >> 21 < 1 << 20
                {
                    prop_assert_eq!(got, exact);
                }
                Ok(())
            })
            .unwrap();
    }

    #[test]
    fn gamma_choices() {
        for k in [2u32, 3, 4] {
            let mut cfg = LdcpConfig::draft_default();
            cfg.gamma = Fraction::inverse_pow2(k).unwrap();
            cfg.fast_start = FastStart::Disabled;
            let mut l = Ldcp::new(&cfg, &params()).unwrap();
            l.cw = Packets::from_bits(1 << 15);
            l.ack(&cfg, Instant::ZERO, &ack(1_001_000, EcnEcho::NotMarked)).unwrap();
            assert_eq!(l.cw().to_bits(), (1 << 15) + (1 << (16 - k)));
        }
    }

    /// One RTT of per-packet ACKs at window cw, unmarked: the growth in
    /// packets (should be alpha, eq. (1) summed over cw ACKs).
    fn growth_over_one_rtt(cfg: &LdcpConfig, cw: u32) -> f64 {
        let mut l = Ldcp::new(cfg, &params()).unwrap();
        l.status.set_phase(Phase::Stable);
        l.cw = Packets::from_int(cw);
        let start = l.snd_una();
        for k in 1..=cw {
            let a = Ack::new(start.add(k * cfg.mtu.bytes()), start);
            l.ack(cfg, Instant::ZERO, &a).unwrap();
        }
        (l.cw().to_bits() as f64 - (cw as f64 * 65_536.0)) / 65_536.0
    }

    /// Issue: the increase truncated alpha/cw to 2^-16 of a packet, so an
    /// RTT of ACKs grew the window 0.92 packets at cw = 20 000, 0.50 at
    /// 33 000 and 0.76 at 50 000 instead of 1; with alpha = 1/4, MTU 4096
    /// and cw = 48 000 (1.6 Tb/s × 1 ms) it grew by nothing, for good.
    #[test]
    fn additive_increase_adds_alpha_per_rtt_at_large_windows() {
        let mut cfg = LdcpConfig::draft_default();
        cfg.fast_start = FastStart::Disabled;
        for cw in [100, 20_000, 33_000, 50_000, 65_000] {
            let g = growth_over_one_rtt(&cfg, cw);
            assert!((g - 1.0).abs() < 0.01, "cw {cw}: grew {g} packets per RTT");
        }
        cfg.alpha = Fraction::ratio(1, 4).unwrap();
        cfg.mtu = Mtu::new(4096).unwrap();
        let g = growth_over_one_rtt(&cfg, 48_000);
        assert!((g - 0.25).abs() < 0.0025, "grew {g} packets per RTT");
    }

    /// Issue: raising cw below one packet left the pending tick where the
    /// old cw had put it: from 1/16 to 1/2 the next release stayed 16 RTTs
    /// away instead of about 2.
    #[test]
    fn a_window_change_below_one_packet_retimes_the_tick() {
        let (mut cfg, mut l) = stable(1 << 12); // 1/16
        cfg.gamma = Fraction::inverse_pow2(4).unwrap();
        let d = l.restore(&cfg, Instant::ZERO, Packets::from_bits(1 << 12)).unwrap();
        assert_eq!(d.timer, TimerRequest::Arm(Instant::from_nanos(16 * T_NS as u64)));
        // cw rises to 1/2 (here by restoring, as seven +gamma ACKs would):
        // the next release 2 RTTs from now.
        let d = l
            .restore(&cfg, Instant::from_nanos(1_008), Packets::from_bits(1 << 15))
            .unwrap();
        assert_eq!(d.timer, TimerRequest::Arm(Instant::from_nanos(1_008 + 2 * T_NS as u64)));
        // Halved by a mark to 1/4: the pending tick stays.
        let a = Ack {
            ece: EcnEcho::Marked,
            ..Ack::new(l.snd_una().add(1000), l.snd_una())
        };
        let d = l.ack(&cfg, Instant::from_nanos(3_000), &a).unwrap();
        assert_eq!(d.timer, TimerRequest::Keep);
    }

    /// Issue: near the end of the `Instant` range the deadline wrapped to a
    /// timer in the past (`ticks << 4`); it saturates.
    #[test]
    fn a_tick_near_the_end_of_time_saturates() {
        let (mut cfg, mut l) = stable(1 << 12);
        cfg.gamma = Fraction::inverse_pow2(4).unwrap();
        let d = l
            .restore(&cfg, Instant::from_nanos(u64::MAX - 100), Packets::from_bits(1 << 12))
            .unwrap();
        let TimerRequest::Arm(at) = d.timer else {
            panic!("timer mode")
        };
        assert!(at.as_nanos() >= u64::MAX - 100, "{at:?}");
    }

    /// Issue: IW rounded up to whole packets paced above the line rate at
    /// small BDPs (2 packets per µs, 16 Gb/s, on a 10 Gb/s, 1 µs path).
    #[test]
    fn a_small_bdp_is_paced_at_the_line_rate() {
        let cfg = LdcpConfig::draft_default();
        let p = FlowParams {
            base_rtt: BaseRtt::from_nanos(1_000).unwrap(),
            line_rate: LinkSpeed::from_gbps(10),
            ..params()
        };
        let l = Ldcp::new(&cfg, &p).unwrap();
        assert_eq!(l.initial_window(), Packets::from_bits(5 << 14)); // 1.25 packets
        let d = l.decision(&cfg);
        assert_eq!(d.rate().as_bps(), 10_000_000_000);
        assert_eq!(d.window.bytes_floor(), 1_250);
    }

    /// Issue: Start was refused where clamping serves: IW above 65 535
    /// packets (400 Gb/s × 1 ms with 512-byte packets) now starts at 65 535.
    #[test]
    fn an_iw_past_the_window_range_is_clamped() {
        let mut cfg = LdcpConfig::draft_default();
        cfg.mtu = Mtu::new(512).unwrap();
        let p = FlowParams {
            base_rtt: BaseRtt::from_nanos(1_000_000).unwrap(),
            line_rate: LinkSpeed::from_gbps(400),
            ..params()
        };
        let l = Ldcp::new(&cfg, &p).unwrap();
        assert_eq!(l.initial_window(), Packets::from_int(65_535));
    }
}
