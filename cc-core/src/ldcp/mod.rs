//! LDCP: the PFC-free Low Delay Control Protocol (draft-dai-tsvwg-pfc-free-
//! congestion-control-01).
//!
//! | part                                    | draft        | here                      |
//! |-----------------------------------------|--------------|---------------------------|
//! | PAWA, eq. (1) per ACK, eq. (2) delayed  | §2.2         | [`Ldcp::ack`]             |
//! | cw < 1: timer every RTT/cw, +gamma, /2 a packet acked | §2.2 | [`Ldcp::ack`], [`Ldcp::timer`] |
//! | zero-RTT fast start, ECN-incapable IW   | §2.3, §3.1   | [`Ldcp::sent`], [`Ldcp::loss`] |
//! | byte sequence space (LSN)               | §3.1         | [`crate::units::Seq`] on every ACK |
//! | commercial NIC: MD per CNP, AI per probe| §3.2         | [`LdcpRate`]              |
//!
//! The receiver rule of §2.2 (acknowledge a CE-marked packet at once,
//! otherwise at most m packets per ACK) belongs to the receiver's transport;
//! [`ack_now`] states it for the simulator and firmware to share.
//!
//! Units: cw in [`Packets`] (MTU-sized, 2^-16); alpha, beta, gamma in
//! [`Fraction`]; window out in bytes ([`crate::units::Window`]); RTT T in
//! [`crate::units::BaseRtt`].

mod rate;
mod window;

pub use self::rate::LdcpRate;
pub use self::window::{Ldcp, Phase};

use crate::codec::{ConfigReader, ConfigWriter};
#[cfg(doc)]
use crate::controller::Controller;
use crate::error::Error;
use crate::event::{Decision, FlowParams, Request, TimerRequest};
use crate::params::{Gate, Network};
use crate::units::{Fraction, Instant, Mtu, Packets};
use crate::wire::{Result as WireResult, WireError};

/// 1 KB, the drafts' packet size (evaluated at compile time).
const DEFAULT_MTU: Mtu = match Mtu::new(1000) {
    Some(m) => m,
    None => panic!("1000 B is within Mtu's range"),
};

/// Whether new flows use the zero-RTT fast start of §2.3.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum FastStart {
    /// Send IW = BDP in the first RTT, ECN-incapable but for the last packet.
    Enabled,
    /// Start in the stable stage at cw = BDP with every packet ECN-capable.
    Disabled,
}

/// LDCP parameters shared by all flows of an engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct LdcpConfig {
    /// Packet size the window is counted in (64 ..= 65 535 bytes), with
    /// the reciprocal that turns acknowledged bytes into packets.
    pub mtu: Mtu,
    /// Increase constant alpha of eq. (1), 0 < alpha ≤ 1.
    pub alpha: Fraction,
    /// Decrease constant beta of eq. (1), 0 < beta ≤ 1.
    pub beta: Fraction,
    /// Increase step and smallest window when cw < 1 (§2.2: typically 1/4,
    /// 1/8, 1/16); 2^-10 ≤ gamma < 1.
    pub gamma: Fraction,
    /// Zero-RTT fast start on or off.
    pub fast_start: FastStart,
    /// Commercial-NIC variant: an RTT probe with no response after this many
    /// base RTTs is sent again (§3.2 "or a timeout is experienced"), ≥ 1.
    pub probe_timeout_rtts: u8,
}

impl LdcpConfig {
    /// Smallest accepted gamma, 2^-10: keeps RTT/cw below 2^30 ns.
    pub const MIN_GAMMA_BITS: u32 = 1 << (Fraction::FRAC_BITS - 10);

    /// 1 KB packets, alpha 1, beta 1/2, gamma 1/8, fast start on, probe
    /// timeout 4 RTTs. The draft gives no values for alpha and beta; these
    /// mark about alpha/(beta·cw) of packets at equilibrium (1.3 % at a
    /// 150-packet window).
    pub const fn draft_default() -> Self {
        LdcpConfig {
            mtu: DEFAULT_MTU,
            alpha: Fraction::ONE,
            beta: match Fraction::inverse_pow2(1) {
                Some(f) => f,
                None => Fraction::ONE,
            },
            gamma: match Fraction::inverse_pow2(3) {
                Some(f) => f,
                None => Fraction::ONE,
            },
            fast_start: FastStart::Enabled,
            probe_timeout_rtts: 4,
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
        let gamma_ok = self.gamma.to_bits() >= Self::MIN_GAMMA_BITS && self.gamma < Fraction::ONE;
        [
            (self.alpha.to_bits() == 0, "alpha"),
            (self.beta.to_bits() == 0, "beta"),
            (!gamma_ok, "gamma"),
            (self.probe_timeout_rtts == 0, "probe_timeout_rtts"),
        ]
        .into_iter()
        .find_map(|(bad, name)| bad.then_some(name))
    }

    /// gamma as a window, the smallest cw: 2^-24 → 2^-16 packet, rounded to nearest (exact
    /// for 1/4, 1/8, 1/16); at least 64 raw since gamma ≥ 2^-10.
    pub fn gamma_packets(&self) -> Packets {
        Packets::from_bits((self.gamma.to_bits() + (1 << (FRACTION_TO_PACKETS - 1))) >> FRACTION_TO_PACKETS)
    }

    /// IW = BDP / MTU (§2.3: "IW is set as BDP") in 1/16 packets, rounded
    /// down, at least one packet and at most 65 535 (cw's range): the raw
    /// value of a [`Packets`] is `iw16 << 12`. `InvalidParams` when the line
    /// rate is absurd.
    ///
    /// Rounded down, so the pace of a full window, IW·MTU/T, never exceeds
    /// the line rate (rounded up to whole packets it did: 2 packets of
    /// 1000 B per µs is 16 Gb/s on a 10 Gb/s, 1 µs path; now 1.25 packets).
    /// A BDP below one packet still gets one packet: that flow's first
    /// window paces above the line rate. A BDP above 65 535 packets is
    /// clamped there (the flow then cannot fill the pipe alone) rather
    /// than refused.
    pub(crate) fn initial_window_16ths(&self, p: &FlowParams) -> Result<u32, Error> {
        self.validate()?;
        if !p.line_rate.is_plausible() {
            return Err(Error::InvalidParams);
        }
        // bdp < 2^30 (LinkSpeed::bdp_bytes), · 16 < 2^34; MTU ≥ 64.
        let bdp = p.line_rate.bdp_bytes(p.base_rtt);
        let iw16 = (bdp * 16 / self.mtu.bytes().max(1) as u64).clamp(16, IW16_MAX as u64);
        Ok(iw16 as u32)
    }
}

/// From a [`Fraction`] (2^-24) to a [`Packets`] step (2^-16): alpha and
/// beta of the rate variant, gamma as a window.
pub(crate) const FRACTION_TO_PACKETS: u32 = Fraction::FRAC_BITS - Packets::FRAC_BITS;

/// A timer deadline of either variant (the window variant's tick, the rate
/// variant's probe timeout) kept as ⌈ns / 16⌉ modulo 2^32: 4 bytes a flow
/// instead of 8. The full instant is rebuilt from `now`, which is
/// unambiguous while the timer event comes within 2^35 ns (34 s) of its
/// deadline; ticks are at most RTT/gamma ≤ 2^30 ns apart and probe
/// timeouts at most 255 RTTs ≤ 2^28 ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) struct Tick16(u32);

impl Tick16 {
    /// 16 ns units.
    const SHIFT: u32 = 4;

    /// A deadline `interval_ns` after `now`, rounded up to 16 ns, and the
    /// timer request that arms it; near the end of time it saturates rather
    /// than wrapping to a timer in the past.
    ///
    /// ```text
    /// deadline = ⌈(now + interval) / 16⌉ · 16 = (now + interval + 15) with its low 4 bits cleared
    /// tick     = deadline / 16, its low 32 bits
    /// ```
    /// The interval is capped at 2^31 ns (every use is below: RTT/cw ≤ 2^30
    /// ns, a probe timeout ≤ 255 RTTs < 2^28 ns; a longer one is 2.1 s), so
    /// interval + 15 fits 32 bits and the deadline is one 64-bit add. The
    /// add carries out of 64 bits exactly when ⌈(now + interval)/16⌉ ≥
    /// 2^60, a deadline past the end of time: it saturates.
    #[inline]
    pub(crate) fn after(now: Instant, interval_ns: u32) -> (Self, TimerRequest) {
        const ROUND: u32 = (1 << Tick16::SHIFT) - 1;
        let Some(end) = now.as_nanos().checked_add((interval_ns.min(1 << 31) + ROUND) as u64) else {
            return (Tick16(0), TimerRequest::Arm(Instant::from_nanos(u64::MAX)));
        };
        let deadline = end & !(ROUND as u64);
        (
            Tick16((deadline >> Self::SHIFT) as u32),
            TimerRequest::Arm(Instant::from_nanos(deadline)),
        )
    }

    /// The deadline as a full instant near `now`.
    pub(crate) fn instant_near(self, now: Instant) -> Instant {
        let now16 = now.as_nanos() >> Self::SHIFT;
        let diff = self.0.wrapping_sub(now16 as u32) as i32 as i64;
        Instant::from_nanos(((now16 as i64).saturating_add(diff).max(0) as u64) << Self::SHIFT)
    }

    /// Whether the deadline is at or before `now`.
    #[inline]
    pub(crate) fn due(self, now: Instant) -> bool {
        let now16 = (now.as_nanos() >> Self::SHIFT) as u32;
        self.0.wrapping_sub(now16) as i32 <= 0
    }
}

/// The largest IW in 1/16 packets: 65 535 packets, cw's integer range.
pub(crate) const IW16_MAX: u32 = 65_535 * 16;

/// IW in 1/16 packets as a [`Packets`] value.
pub(crate) const fn iw_packets(iw16: u32) -> Packets {
    Packets::from_bits(iw16 << 12)
}

impl Default for LdcpConfig {
    fn default() -> Self {
        Self::draft_default()
    }
}

impl crate::controller::AlgorithmConfig for LdcpConfig {
    type Sender<const H: usize> = crate::ldcp::Ldcp;

    /// The window variant's: a window, ticked by the timer below one
    /// packet (draft-dai §2.2); the draft gives no marking thresholds, so
    /// none is stated here.
    const NETWORK: Network = Network::new(Gate::WindowOrTicks);

    const DEFAULT: Self = Self::draft_default();

    fn validate(&self) -> Result<(), Error> {
        LdcpConfig::validate(self)
    }

    /// mtu 4 | alpha 4 | beta 4 | gamma 4 | fast start 1 | probe timeout 1.
    fn encode(&self, w: &mut ConfigWriter<'_, '_>) -> WireResult<()> {
        for v in [
            self.mtu.bytes(),
            self.alpha.to_bits(),
            self.beta.to_bits(),
            self.gamma.to_bits(),
        ] {
            w.u32(v)?;
        }
        w.bool(self.fast_start == FastStart::Enabled)?;
        w.u8(self.probe_timeout_rtts)
    }

    fn decode(r: &mut ConfigReader<'_, '_>) -> WireResult<Self> {
        let mtu = Mtu::new(r.u32()?).ok_or(WireError::BadLength)?;
        let (alpha, beta, gamma) = (r.fraction()?, r.fraction()?, r.fraction()?);
        let fast_start = if r.bool()? {
            FastStart::Enabled
        } else {
            FastStart::Disabled
        };
        Ok(LdcpConfig {
            mtu,
            alpha,
            beta,
            gamma,
            fast_start,
            probe_timeout_rtts: r.u8()?,
        })
    }

    /// The window at least gamma packets; the rate at most IW/T with IW
    /// rounded up to whole packets; a packet released by the timer only
    /// while the window is below one packet.
    fn check_decision(&self, p: &FlowParams, d: &Decision) -> Result<(), &'static str> {
        let t = p.base_rtt.as_nanos() as u64;
        let mtu = self.mtu.bytes() as u64;
        if d.window < self.gamma_packets().to_window(self.mtu.bytes()) {
            return Err("LDCP window below gamma");
        }
        let iw_bytes = p.line_rate.bdp_bytes(p.base_rtt).div_ceil(mtu).max(1) * mtu;
        if d.rate().as_bps() > iw_bytes * 8_000_000_000 / t.max(1) {
            return Err("LDCP rate above IW/T");
        }
        if d.request == Request::ReleaseOne && d.window.bytes_floor() as u64 >= mtu {
            return Err("a packet released by the timer with a window of a packet or more");
        }
        Ok(())
    }
}

/// What the receiver does with a data packet under LDCP's ACK rule (§2.2):
/// "generate an ACK for at most m data packets if they all are not marked,
/// but would generate an ACK with ECE flag immediately once a CE marked
/// packet is received". `unacked` counts packets received since the last
/// ACK, this one included; `m` is the delayed-ACK limit (1 = per packet).
pub const fn ack_now(ce_marked: bool, unacked: u32, m: u32) -> bool {
    ce_marked || unacked >= m
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The deadline against its definition in 128-bit integers:
    /// ⌈(now + interval) / 16⌉ ticks, the instant 16 ns times that, the
    /// stored tick its low 32 bits; past the end of time, saturated.
    fn tick_by_definition(now: u64, interval: u32) -> (u32, u64) {
        let ticks = (now as u128 + interval.min(1 << 31) as u128).div_ceil(16);
        if ticks >= 1 << 60 {
            (0, u64::MAX)
        } else {
            (ticks as u32, (ticks * 16) as u64)
        }
    }

    proptest::proptest! {
        #[test]
        fn a_tick_is_its_deadline_rounded_up_to_16_ns(now: u64, interval: u32, near_end: bool) {
            // Half the cases in the last 2^32 ns of time, where the saturation is.
            let now = if near_end { u64::MAX - (now >> 32) } else { now };
            let (tick, arm) = Tick16::after(Instant::from_nanos(now), interval);
            let (want_tick, want_at) = tick_by_definition(now, interval);
            proptest::prop_assert_eq!(tick, Tick16(want_tick));
            proptest::prop_assert_eq!(arm, TimerRequest::Arm(Instant::from_nanos(want_at)));
        }
    }

    #[test]
    fn a_tick_on_a_16_ns_boundary_is_not_rounded() {
        let (tick, arm) = Tick16::after(Instant::from_nanos(160), 32);
        assert_eq!(tick, Tick16(12));
        assert_eq!(arm, TimerRequest::Arm(Instant::from_nanos(192)));
        assert!(tick.due(Instant::from_nanos(192)));
        assert!(!tick.due(Instant::from_nanos(191)));
    }

    #[test]
    fn ce_is_acked_at_once() {
        assert!(ack_now(true, 1, 8));
        assert!(!ack_now(false, 3, 8));
        assert!(ack_now(false, 8, 8));
        assert!(ack_now(false, 1, 1));
    }

    #[test]
    fn config_ranges() {
        let c = LdcpConfig::draft_default();
        assert_eq!(c.validate(), Ok(()));
        assert_eq!(c.gamma_packets(), Packets::from_bits(1 << 13));
        let mut bad = c;
        bad.gamma = Fraction::ONE;
        assert!(bad.validate().is_err());
        bad = c;
        bad.gamma = Fraction::inverse_pow2(11).unwrap();
        assert!(bad.validate().is_err());
        assert_eq!(Mtu::new(63), None);
        assert_eq!(Mtu::new(65_536), None);
    }
}
