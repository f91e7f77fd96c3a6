//! **NSCC**, the network-signal congestion control of the Ultra Ethernet
//! transport (UEC 1.0, 2025), as its consortium's simulator uet-htsim
//! codes it (`UecSrc::updateCwndOnAck_NSCC`, `updateCwndOnNack_NSCC`,
//! `rtxTimerExpired`, `initNsccParams`, `htsim/sim/uec.cpp` at commit
//! 40ccb05; docs/design-notes.md, "NSCC readings", says where the engine
//! departs from it).
//!
//! A window in bytes, moved by ECN and delay together. On each ACK, with
//! `acked` the bytes newly received and `delay` the RTT sample less the
//! base RTT (or the delay average where the ACK has no sample):
//!
//! | ECN-Echo | delay ≥ target | delay < target |
//! |---|---|---|
//! | no | fair increase: `inc += fi·acked` | proportional increase: `inc += α·acked·(target − delay)`, or fast increase `cwnd += fi_scale·acked` once a window was acknowledged below 1 µs |
//! | yes | multiplicative decrease, at most once a base RTT: `cwnd ·= max(1 − γ·(avg − target)/avg, 0.5)` | nothing |
//!
//! The increases gather in `inc` (bytes²) and are paid out by the
//! *fulfil* step, `cwnd += inc/cwnd`, when more than `adjust_bytes` were
//! received or a network RTT passed since the last (then with `eta` added
//! once a period). *Quick adapt*: at the end of each window of
//! `base_rtt + target`, if a NACK came, or the delay passed `qa_threshold`, and less
//! than `maxwnd >> qa_gate` was delivered in it, the window becomes what
//! was delivered, and marked ACKs and NACKs are ignored until the bytes
//! then in flight are answered. A NACK (a packet trimmed) pulls the delay
//! average toward a network RTT, asks for quick adapt and takes the
//! packet's bytes off the window; a timeout ([`EventKind::Loss`]) takes one
//! MTU off. The window stays within `[mtu, 1.5·BDP]`, BDP the base RTT at
//! the line rate, and is not paced: uet-htsim's NSCC sends while the
//! window allows. The transport hands the receiver's cumulative received
//! bytes as an ACK's `cum_ack` and the bytes in flight as `snd_nxt −
//! cum_ack`.
//!
//! Fixed point: bytes and ns in integers, as uet-htsim truncates them
//! (its times are ps); the delay average in 2^-8 ns; gains: `fi` in
//! bytes, α in 2^-16 bytes per ns, `fi_scale` in 2^-16, γ, the floor and
//! the average's weight as 24-bit fractions. The increase accumulator has
//! 43 bits and saturates ([`INC_MAX`]): uet-htsim's has 32, and `fi` times
//! one period's bytes passes 2^32 at 800 Gb/s (111 256 B × 49 800 B ≈
//! 5.5·10^9), where its accumulator wraps; 43 hold a period of every
//! configuration [`NsccConfig::derive`] makes up to 1.6 Tb/s and 1 ms,
//! and share a word with the base RTT, so that a flow keeps 48 bytes.
//! One divide an ACK at most, and only on the ACKs that fulfil (64/32
//! bits, `divu` inline on both soft cores); a decrease divides by the
//! delay average (three `divu` on rv32), at most once a base RTT.
//!
//! [`EventKind::Loss`]: crate::event::EventKind::Loss

#[cfg(feature = "reference")]
pub mod reference;

use core::num::{NonZeroU32, NonZeroU64};

#[cfg(feature = "bench")]
use crate::bench::{AckBench, LossBench, NackBench};
use crate::codec::{ConfigReader, ConfigWriter};
use crate::controller::Controller;
use crate::error::Error;
use crate::event::{Ack, Algorithm, Decision, EcnEcho, FlowParams, MessageEnd, Nack, Request, TimerRequest};
use crate::fixmath::{div_u64, fraction_q24};
use crate::params::{param, EcnMarking, Gate, Network, Param, Unit};
use crate::units::{BaseRtt, Fraction, Instant, Seq, Window};
use crate::wire::Result as WireResult;

/// The largest window, bytes: the decision's window holds below 2^28.
pub const MAX_WINDOW: u32 = (1 << 28) - 1;

/// The largest RTT sample taken as it is, ns (16.8 ms); longer ones are
/// taken as this.
pub const MAX_RTT_NS: u32 = (1 << 24) - 1;

/// NSCC's parameters shared by every flow of an engine, as
/// [`NsccConfig::derive`] makes them from the link rate and the network's
/// RTT. Times in ns, windows in bytes (a packet's header included, as
/// uet-htsim counts them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct NsccConfig {
    /// Bytes of a full packet, header included (64 ..= 65 535): the
    /// window's floor and a timeout's cut.
    pub mtu: u32,
    /// The link rate the window's ceiling follows, Mb/s, a multiple of
    /// 125 (125 ..= 1 600 000): `maxwnd = 1.5 · base_rtt · rate`.
    pub line_rate_mbps: u32,
    /// The network's largest unloaded RTT, ns (1 ..= 2^20): the fulfil
    /// period, and the delay a NACK stands for.
    pub network_rtt_ns: u32,
    /// The target queueing delay, ns (1 ..= 2^23).
    pub target_delay_ns: u32,
    /// The delay above which a window's end runs quick adapt, ns (≤ 2^24).
    pub qa_threshold_ns: u32,
    /// Quick adapt only if less than `maxwnd >> qa_gate` was delivered in
    /// the window (0 ..= 31).
    pub qa_gate: u8,
    /// Fair increase: bytes² per byte acknowledged (≤ 2^26).
    pub fi: u32,
    /// Proportional increase α: bytes² per byte acknowledged per ns below
    /// the target, 2^-16 (≤ 2^24).
    pub alpha_q16: u32,
    /// Fast increase: bytes of window per byte acknowledged, 2^-16 (≤ 2^20).
    pub fi_scale_q16: u32,
    /// Added once a fulfil period, bytes (≤ 2^20).
    pub eta: u32,
    /// γ of the multiplicative decrease (0 < γ ≤ 1).
    pub gamma: Fraction,
    /// The decrease's floor: the window keeps at least this part
    /// (0 < floor ≤ 1; uet-htsim's 0.5).
    pub md_floor: Fraction,
    /// The delay average's weight (0 < w ≤ 1; 0.0125).
    pub delay_ewma: Fraction,
    /// Fulfil once more than this was received since the last, bytes (≥ 1).
    pub adjust_bytes: u32,
    /// Fast increase counts ACKs whose delay is below this, ns (≤ 2^24).
    pub fast_increase_delay_ns: u32,
    /// A new flow's window, bytes; 0: the window's ceiling (`-cwnd 0`).
    pub initial_window: u32,
    /// Whether a NACK's RTT lowers the base RTT (uet-htsim's default).
    pub nack_updates_base_rtt: bool,
    /// Whether quick adapt runs (uet-htsim's default; off is its
    /// `disable_quick_adapt`).
    pub quick_adapt: bool,
}

/// uet-htsim's ACK and header bytes.
const HEADER: u32 = 64;

/// The derivation's `a = BDP/150 kB` has this denominator over
/// `rtt_ps · rate_mbps`: BDP = rtt_ps·rate_mbps/8·10^6 bytes, and the
/// reference BDP (100 Gb/s × 12 µs) 150 000 bytes.
const A_DEN: u128 = 1_200_000_000_000;

impl NsccConfig {
    /// uet-htsim's defaults: a 100 Gb/s host in its default three-tier
    /// fat-tree of 1 µs links, network RTT 14 022 720 ps, MTU 4150,
    /// trimming on.
    pub const fn uet_htsim() -> Self {
        Self::derive(100_000, 14_022_720, 4_150, true)
    }

    /// `initNsccParams`: the parameters for hosts of `line_rate_mbps` in a
    /// network whose largest unloaded RTT is `network_rtt_ps` (ps, as
    /// uet-htsim's `calculate_rtt`), packets of `mtu` bytes (64 of them
    /// header), on a fabric that trims (`trimming`: the target is then
    /// 0.75 RTT, truncated to the ps, else one RTT). With the reference
    /// BDP 150 kB (100 Gb/s × 12 µs), a = BDP/150 kB and b = target/12 µs:
    /// α = 4·MSS·a·b/target (= 4·MSS·a/12 µs), fi = 5·MSS·a, eta =
    /// 0.15·MSS·a, fi_scale = 0.25·a, QA threshold 4·target, adjust bytes
    /// 8·MTU; γ 0.8, the floor 0.5, the average's weight 0.0125, the
    /// fast-increase gate 1 µs. In exact integer arithmetic (uet-htsim's is
    /// `double`): times rounded to the ns, gains to their units; `eta`
    /// truncated, as uet-htsim adds it to an integer window. Products
    /// saturate, so absurd inputs give values `validate` refuses.
    pub const fn derive(line_rate_mbps: u32, network_rtt_ps: u64, mtu: u32, trimming: bool) -> Self {
        let target_ps = if trimming {
            network_rtt_ps.saturating_mul(3) / 4
        } else {
            network_rtt_ps
        };
        Self::derive_with_target(line_rate_mbps, network_rtt_ps, mtu, target_ps)
    }

    /// [`NsccConfig::derive`] with the target queueing delay given, ps
    /// (uet-htsim's `-target_q_delay`, which `initNsccParams` takes in
    /// place of its 0.75 or 1 network RTT): the target and quick adapt's
    /// threshold, 4 · target, follow it; α = 4·MSS·a·b/target with b =
    /// target/12 µs does not.
    pub const fn derive_with_target(line_rate_mbps: u32, network_rtt_ps: u64, mtu: u32, target_ps: u64) -> Self {
        // a = r / A_DEN; every gain is r·k / (A_DEN·d) for its own k, d.
        let r = (network_rtt_ps as u128).saturating_mul(line_rate_mbps as u128);
        let mss = mtu.saturating_sub(HEADER) as u128;
        NsccConfig {
            mtu,
            line_rate_mbps,
            network_rtt_ns: round_ns(network_rtt_ps),
            target_delay_ns: round_ns(target_ps),
            qa_threshold_ns: round_ns(target_ps.saturating_mul(4)),
            qa_gate: 3,
            fi: ratio(r.saturating_mul(5 * mss), A_DEN, true),
            // 4·MSS·a / 12 000 ns, in 2^-16 bytes per ns.
            alpha_q16: ratio(r.saturating_mul(4 * 65_536 * mss), A_DEN * 12_000, true),
            fi_scale_q16: ratio(r.saturating_mul(65_536), A_DEN * 4, true),
            eta: ratio(r.saturating_mul(15 * mss), A_DEN * 100, false),
            gamma: Fraction::preset(4, 5),
            md_floor: Fraction::preset(1, 2),
            delay_ewma: Fraction::preset(1, 80),
            adjust_bytes: mtu.saturating_mul(8),
            fast_increase_delay_ns: 1_000,
            initial_window: 0,
            nack_updates_base_rtt: true,
            quick_adapt: true,
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
        let proper = |f: Fraction| f.to_bits() == 0 || f > Fraction::ONE;
        [
            (!(64..=65_535).contains(&self.mtu), "mtu"),
            (
                !(125..=1_600_000).contains(&self.line_rate_mbps) || !self.line_rate_mbps.is_multiple_of(125),
                "line_rate_mbps",
            ),
            (!(1..=BaseRtt::MAX_NS).contains(&self.network_rtt_ns), "network_rtt_ns"),
            (!(1..=1 << 23).contains(&self.target_delay_ns), "target_delay_ns"),
            (self.qa_threshold_ns > 1 << 24, "qa_threshold_ns"),
            (self.qa_gate > 31, "qa_gate"),
            (self.fi > 1 << 26, "fi"),
            (self.alpha_q16 > 1 << 24, "alpha_q16"),
            (self.fi_scale_q16 > 1 << 20, "fi_scale_q16"),
            (self.eta > 1 << 20, "eta"),
            (proper(self.gamma), "gamma"),
            (proper(self.md_floor), "md_floor"),
            (proper(self.delay_ewma), "delay_ewma"),
            (self.adjust_bytes == 0, "adjust_bytes"),
            (self.fast_increase_delay_ns > 1 << 24, "fast_increase_delay_ns"),
            (self.initial_window > MAX_WINDOW, "initial_window"),
        ]
        .into_iter()
        .find_map(|(bad, name)| bad.then_some(name))
    }

    /// The window's ceiling at base RTT `base_ns`: 1.5 BDP, BDP =
    /// ⌊base · rate / 8⌋ bytes (uet-htsim's `_maxwnd = 1.5·_bdp`, both
    /// truncated), within [`MAX_WINDOW`]. The rate is a multiple of 125
    /// Mb/s (validated), 1/64 byte a ns, so BDP = base·(rate/125) >> 6
    /// exactly and with no 64-bit divide: base < 2^24 ns, rate/125 ≤
    /// 12 800, the product < 2^38.
    #[inline(always)]
    pub fn max_window(&self, base_ns: u32) -> u32 {
        let bdp = (base_ns as u64 * (self.line_rate_mbps / 125) as u64) >> 6;
        (bdp + (bdp >> 1)).min(MAX_WINDOW as u64) as u32
    }
}

/// ps to the nearest ns, saturating.
const fn round_ns(ps: u64) -> u32 {
    ratio(ps as u128, 1_000, true)
}

/// n/d (d > 0) rounded to the nearest (`nearest`) or down, saturating at
/// `u32::MAX`.
const fn ratio(n: u128, d: u128, nearest: bool) -> u32 {
    let q = if nearest { n.saturating_add(d / 2) / d } else { n / d };
    if q > u32::MAX as u128 {
        u32::MAX
    } else {
        q as u32
    }
}

impl Default for NsccConfig {
    fn default() -> Self {
        Self::uet_htsim()
    }
}

impl crate::controller::AlgorithmConfig for NsccConfig {
    type Sender<const H: usize> = Nscc;

    const DEFAULT: Self = Self::uet_htsim();

    const PARAMS: &'static [Param<Self>] = &[
        param!(
            NsccConfig,
            "mtu_bytes",
            mtu,
            Unit::Bytes,
            "64 ..= 65535",
            "bytes of a full packet as the ACKs count them: the window's floor"; payload
        ),
        param!(
            NsccConfig,
            "line_rate_mbps",
            line_rate_mbps,
            Unit::Mbps,
            "125 ..= 1600000, a multiple of 125",
            "the link rate the window's ceiling (1.5 BDP) follows"
        ),
        param!(
            NsccConfig,
            "network_rtt_us",
            network_rtt_ns,
            Unit::Micros,
            "0.001 ..= 1048.576",
            "the network's largest unloaded RTT: the fulfil period"
        ),
        param!(
            NsccConfig,
            "target_delay_us",
            target_delay_ns,
            Unit::Micros,
            "0.001 ..= 8388.608",
            "the target queueing delay"
        ),
        param!(
            NsccConfig,
            "qa_threshold_us",
            qa_threshold_ns,
            Unit::Micros,
            "at most 16777.216",
            "the delay that runs quick adapt at a window's end"
        ),
        param!(
            NsccConfig,
            "qa_gate",
            qa_gate,
            Unit::Count,
            "0 ..= 31",
            "quick adapt only below maxwnd >> qa_gate delivered",
            u8
        ),
        param!(
            NsccConfig,
            "fi_bytes",
            fi,
            Unit::Bytes,
            "at most 67108864",
            "fair increase, bytes² per byte acknowledged"
        ),
        param!(
            NsccConfig,
            "alpha_q16",
            alpha_q16,
            Unit::Count,
            "at most 16777216",
            "proportional increase α, bytes² per byte per ns below the target, 2^-16"
        ),
        param!(
            NsccConfig,
            "fi_scale_q16",
            fi_scale_q16,
            Unit::Count,
            "at most 1048576",
            "fast increase, window bytes per byte acknowledged, 2^-16"
        ),
        param!(
            NsccConfig,
            "eta_bytes",
            eta,
            Unit::Bytes,
            "at most 1048576",
            "added to the window once a fulfil period"
        ),
        param!(
            NsccConfig,
            "gamma",
            gamma,
            Unit::Fraction,
            "(0, 1]",
            "γ of the multiplicative decrease",
            fraction
        ),
        param!(
            NsccConfig,
            "md_floor",
            md_floor,
            Unit::Fraction,
            "(0, 1]",
            "the part of the window a decrease keeps at least",
            fraction
        ),
        param!(
            NsccConfig,
            "delay_ewma",
            delay_ewma,
            Unit::Fraction,
            "(0, 1]",
            "the delay average's weight",
            fraction
        ),
        param!(
            NsccConfig,
            "adjust_bytes",
            adjust_bytes,
            Unit::Bytes,
            "at least 1",
            "fulfil once more than this was received"
        ),
        param!(
            NsccConfig,
            "fast_increase_delay_us",
            fast_increase_delay_ns,
            Unit::Micros,
            "at most 16777.216",
            "fast increase counts ACKs below this delay"
        ),
        param!(
            NsccConfig,
            "initial_window_bytes",
            initial_window,
            Unit::Bytes,
            "0 (the ceiling) ..= 268435455",
            "a new flow's window"
        ),
        param!(
            NsccConfig,
            "nack_updates_base_rtt",
            nack_updates_base_rtt,
            Unit::Flag,
            "true or false",
            "whether a NACK's RTT lowers the base RTT",
            flag
        ),
        param!(
            NsccConfig,
            "quick_adapt",
            quick_adapt,
            Unit::Flag,
            "true or false",
            "whether quick adapt runs",
            flag
        ),
    ];

    /// A window: ECN marked at dequeue between 20 % and 80 % of a 100 Gb/s
    /// port's BDP queue (uet-htsim's kmin and kmax, 37 350 and 145 250
    /// bytes at 100 Gb/s: 373 and 1452 bytes per Gb/s), every packet past
    /// kmax; ACKs and NACKs ahead of data.
    const NETWORK: Network = Network {
        marking: Some(EcnMarking {
            kmin_bytes_per_gbps: 373,
            kmax_bytes_per_gbps: 1_452,
            pmax_percent: 100,
        }),
        control_priority: true,
        marks_on_dequeue: true,
        ..Network::new(Gate::Window)
    };

    /// The four quadrants ([`Case`]).
    const ACK_CASES: &'static [&'static str] = &Case::NAMES;

    #[cfg(feature = "bench")]
    /// ACKs a microsecond apart through every quadrant ([`bench_ack`]).
    const ACK_BENCH: Option<AckBench> = Some(AckBench {
        name: "nscc-ack",
        row: "NSCC ACK",
        ack: bench_ack,
        interval_ns: 1_000,
        targets: Some((120, 100)),
        state_bytes: Some(48),
    });

    #[cfg(feature = "bench")]
    /// NACKs 2 µs apart ([`bench_nack`]).
    const NACK_BENCH: Option<NackBench> = Some(NackBench {
        name: "nscc-nack",
        row: "NSCC NACK",
        nack: bench_nack,
        interval_ns: 2_000,
    });

    #[cfg(feature = "bench")]
    /// Timeouts 100 µs apart.
    const LOSS_BENCH: Option<LossBench> = Some(LossBench {
        name: "nscc-timeout",
        row: "NSCC timeout",
        interval_ns: 100_000,
    });

    fn validate(&self) -> Result<(), Error> {
        NsccConfig::validate(self)
    }

    fn invalid_field(&self) -> Option<&'static str> {
        NsccConfig::invalid_field(self)
    }

    /// Each field in declaration order: u32s, the gate a u8, fractions'
    /// raw values, the two flags as u8s.
    fn encode(&self, w: &mut ConfigWriter<'_, '_>) -> WireResult<()> {
        for v in [
            self.mtu,
            self.line_rate_mbps,
            self.network_rtt_ns,
            self.target_delay_ns,
            self.qa_threshold_ns,
        ] {
            w.u32(v)?;
        }
        w.u8(self.qa_gate)?;
        for v in [
            self.fi,
            self.alpha_q16,
            self.fi_scale_q16,
            self.eta,
            self.gamma.to_bits(),
            self.md_floor.to_bits(),
            self.delay_ewma.to_bits(),
            self.adjust_bytes,
            self.fast_increase_delay_ns,
            self.initial_window,
        ] {
            w.u32(v)?;
        }
        w.bool(self.nack_updates_base_rtt)?;
        w.bool(self.quick_adapt)
    }

    fn decode(r: &mut ConfigReader<'_, '_>) -> WireResult<Self> {
        Ok(NsccConfig {
            mtu: r.u32()?,
            line_rate_mbps: r.u32()?,
            network_rtt_ns: r.u32()?,
            target_delay_ns: r.u32()?,
            qa_threshold_ns: r.u32()?,
            qa_gate: r.u8()?,
            fi: r.u32()?,
            alpha_q16: r.u32()?,
            fi_scale_q16: r.u32()?,
            eta: r.u32()?,
            gamma: r.fraction()?,
            md_floor: r.fraction()?,
            delay_ewma: r.fraction()?,
            adjust_bytes: r.u32()?,
            fast_increase_delay_ns: r.u32()?,
            initial_window: r.u32()?,
            nack_updates_base_rtt: r.bool()?,
            quick_adapt: r.bool()?,
        })
    }

    /// The window at most the ceiling of the flow's first base RTT, its
    /// initial window or one MTU, whichever is largest; paced the window every 100 ns (not at all, in
    /// effect); no timer, no request.
    fn check_decision(&self, p: &FlowParams, d: &Decision) -> Result<(), &'static str> {
        // One MTU is the window's floor even above a ceiling below it
        // (uet-htsim's timeout and quick adapt keep `min_cwnd`).
        let hi = self
            .max_window(p.base_rtt.as_nanos())
            .max(self.initial_window)
            .max(self.mtu);
        if d.window.bytes_floor() > hi {
            return Err("NSCC window above its ceiling");
        }
        if d.pacing.bytes != d.window || d.pacing.per != BaseRtt::SHORTEST {
            return Err("NSCC pacing is not the window every 100 ns");
        }
        if d.timer != TimerRequest::Keep || d.request != Request::None {
            return Err("NSCC asked for a timer or a request");
        }
        Ok(())
    }
}

#[cfg(feature = "bench")]
/// The firmware benchmark's NACK `n`: one 4150-byte packet trimmed, its
/// RTT 20 µs (above the bench flow's 8 µs base), 200 kB in flight, trimmed
/// at the last hop on every fourth; with NACKs 2 µs apart, every quick-
/// adapt window's end meets one (the window set to what was delivered)
/// and the others cut the window or are ignored.
pub fn bench_nack(n: u32) -> Nack {
    let cum = n.wrapping_mul(4_150);
    Nack {
        rtt_ns: Some(20_000),
        last_hop: n.is_multiple_of(4),
        ..Nack::new(Seq(cum), 4_150, Seq(cum), Seq(cum.wrapping_add(200_000)))
    }
}

#[cfg(feature = "bench")]
/// The firmware benchmark's ACK `n`: 16 KiB newly received (uet-htsim's
/// ACK every 16 KB, four 4150-byte packets), RTTs from a cycle of eight
/// around the default target (10.5 µs above the bench flow's 8 µs base
/// RTT): below 1 µs
/// of delay (fast increase once a window is acknowledged), below the
/// target (proportional), above it (fair), and ECN-marked above it
/// (decrease, at most once a base RTT) and below (nothing); every third
/// ACK or so fulfils.
pub fn bench_ack(n: u32, _hops: &mut [crate::telemetry::HopSample; 5]) -> Ack<'static> {
    const DELAY: [u32; 8] = [500, 4_000, 30_000, 200, 12_000, 6_000, 25_000, 9_000];
    const MARKED: u8 = 0b0100_0100;
    let i = (n % 8) as usize;
    let cum = n.wrapping_mul(16_600);
    Ack {
        ece: if MARKED >> i & 1 == 1 {
            EcnEcho::Marked
        } else {
            EcnEcho::NotMarked
        },
        rtt_ns: Some(8_000 + DELAY[i]),
        ..Ack::new(Seq(cum), Seq(cum.wrapping_add(200_000)))
    }
}

/// `flags`: fast increase is on.
const INCREASE: u32 = 1 << 28;
/// `flags`: a NACK asked for quick adapt at the window's end.
const TRIGGER_QA: u32 = 1 << 30;
/// `flags`: a quick-adapt window is open (uet-htsim's `_qa_endtime != 0`).
const QA_OPEN: u32 = 1 << 29;
/// `flags`: the window may be above its ceiling (a timeout's cut, quick
/// adapt, or a lower base RTT with quick adapt taking the event leave it
/// unbounded, as uet-htsim does until the next ACK). The sign bit: every
/// ACK tests it, and the sign needs no mask.
const UNBOUNDED: u32 = 1 << 31;
/// `fi_count` saturates here: it is only compared with the window, which
/// is at most this.
const FI_COUNT_MAX: u32 = (1 << 28) - 1;

/// NSCC's four cases of an ACK: its ECN-Echo against whether the
/// queueing delay reached the target (the module's table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Case {
    /// Not marked, delay at or above the target: fair increase.
    FairIncrease = 0,
    /// Not marked, delay below the target: proportional (or fast) increase.
    ProportionalIncrease = 1,
    /// Marked, delay at or above the target: multiplicative decrease.
    MultiplicativeDecrease = 2,
    /// Marked, delay below the target: nothing.
    NoChange = 3,
}

impl Case {
    /// Every case, by its number.
    pub const ALL: [Case; 4] = [
        Case::FairIncrease,
        Case::ProportionalIncrease,
        Case::MultiplicativeDecrease,
        Case::NoChange,
    ];

    /// The cases' names in the module's table, by number.
    pub const NAMES: [&'static str; 4] = [
        "fair increase",
        "proportional increase",
        "multiplicative decrease",
        "no change",
    ];

    /// The case's name in the module's table.
    pub const fn name(self) -> &'static str {
        Case::NAMES[self as usize]
    }
}

/// Told what NSCC's rules did on an event ([`Nscc::ack_observed`],
/// [`Nscc::nack_observed`]), for reports: `()` hears nothing and costs
/// nothing (the controller's own path), [`Stats`] keeps uet-htsim's
/// per-flow sums. Windows in bytes, the gathered increases in bytes².
pub trait Observer {
    /// A fair increase gathered `inc`.
    #[inline(always)]
    fn fair(&mut self, _inc: u64) {}
    /// A proportional increase gathered `inc`.
    #[inline(always)]
    fn proportional(&mut self, _inc: u64) {}
    /// A fast increase added `bytes` to the window.
    #[inline(always)]
    fn fast(&mut self, _bytes: u32) {}
    /// A fulfil paid out what was gathered: the window is now `cwnd`,
    /// before any eta.
    #[inline(always)]
    fn fulfil(&mut self, _cwnd: u32) {}
    /// A fulfil added `eta` (once a period).
    #[inline(always)]
    fn eta(&mut self, _eta: u32) {}
    /// A multiplicative decrease took the window from `from` to `to`
    /// (above it where the one-MTU floor is above the window).
    #[inline(always)]
    fn multiplicative(&mut self, _from: u32, _to: u32) {}
    /// A quick adapt took the window from `from` to `to` (above it when
    /// more was delivered than the window).
    #[inline(always)]
    fn quick(&mut self, _from: u32, _to: u32) {}
    /// A NACK of `bytes`.
    #[inline(always)]
    fn nack(&mut self, _bytes: u32) {}
}

impl Observer for () {}

/// A flow's window changes by rule, summed as uet-htsim's
/// `_nscc_overall_stats` sums them (the `fair_inc … nack_dec` of its
/// "finished at" line): the increases' gatherings counted at each fulfil
/// over the window it leaves, truncated; eta as added; the decreases as
/// taken, signed (negative where a rule raised the window); a NACK's
/// bytes whether or not they came off.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// `fair_inc`, bytes.
    pub fair_inc: u64,
    /// `prop_inc`, bytes.
    pub prop_inc: u64,
    /// `fast_inc`, bytes.
    pub fast_inc: u64,
    /// `eta_inc`, bytes.
    pub eta_inc: u64,
    /// `multi_dec`, bytes (negative where a decrease met the one-MTU
    /// floor above a ceiling below it).
    pub multi_dec: i64,
    /// `quick_dec`, bytes.
    pub quick_dec: i64,
    /// `nack_dec`, bytes.
    pub nack_dec: u64,
    /// Fair increase gathered since the last fulfil, bytes².
    fair_pending: u64,
    /// Proportional increase gathered since the last fulfil, bytes².
    prop_pending: u64,
}

impl Observer for Stats {
    fn fair(&mut self, inc: u64) {
        self.fair_pending = self.fair_pending.saturating_add(inc);
    }
    fn proportional(&mut self, inc: u64) {
        self.prop_pending = self.prop_pending.saturating_add(inc);
    }
    fn fast(&mut self, bytes: u32) {
        self.fast_inc += bytes as u64;
    }
    fn fulfil(&mut self, cwnd: u32) {
        // uet-htsim divides each gathering by the window the fulfil
        // leaves, truncating; a zero window pays nothing.
        let w = (cwnd as u64).max(1);
        self.fair_inc += self.fair_pending / w;
        self.prop_inc += self.prop_pending / w;
        (self.fair_pending, self.prop_pending) = (0, 0);
    }
    fn eta(&mut self, eta: u32) {
        self.eta_inc += eta as u64;
    }
    fn multiplicative(&mut self, from: u32, to: u32) {
        self.multi_dec += from as i64 - to as i64;
    }
    fn quick(&mut self, from: u32, to: u32) {
        self.quick_dec += from as i64 - to as i64;
    }
    fn nack(&mut self, bytes: u32) {
        self.nack_dec += bytes as u64;
    }
}

/// One NSCC flow at its sender: 48 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Nscc {
    /// The window, bytes.
    cwnd: u32,
    /// The base RTT, ns (the flow's, lowered by every shorter sample: at
    /// most [`BaseRtt::MAX_NS`], 21 bits), in the top [`BASE_BITS`] bits,
    /// and bits 32 ..< 43 of the increase accumulator below them.
    base_inc: u32,
    /// The queueing delay's average, 2^-8 ns.
    avg_delay: u32,
    /// The cumulative acknowledgement when the current quick-adapt window
    /// opened: the bytes delivered in it are `recvd − qa_mark`.
    qa_mark: u32,
    /// The cumulative acknowledgement at the last fulfil: the bytes
    /// received since are `recvd − fulfil_mark`.
    fulfil_mark: u32,
    /// Bytes acknowledged with a delay below the fast-increase gate in a
    /// row (saturating at 2^28 − 1), with the four flags in bits 28 ..= 31.
    fi_count_flags: u32,
    /// When the quick-adapt window ends, ns mod 2^32.
    qa_end: u32,
    /// Bytes still to answer before marked ACKs and NACKs count again.
    ignore_left: u32,
    /// The last fulfil that added eta, ns mod 2^32.
    last_adjust: u32,
    /// The last multiplicative decrease, ns mod 2^32.
    last_dec: u32,
    /// The cumulative acknowledgement seen last.
    recvd: u32,
    /// The increase gathered since the last fulfil, bytes²: its low 32
    /// bits (the rest in `base_inc`).
    inc_lo: u32,
}

/// The base RTT's bits in [`Nscc::base_inc`]: [`BaseRtt::MAX_NS`] = 2^20
/// needs 21. Above the accumulator's, so that it reads with one shift
/// and the accumulator's with a mask that fits an instruction.
const BASE_BITS: u32 = 21;
/// The accumulator's bits in [`Nscc::base_inc`], and their mask.
const INC_HI_BITS: u32 = 32 - BASE_BITS;
const INC_HI_MASK: u32 = (1 << INC_HI_BITS) - 1;

/// The increase accumulator's ceiling, 2^43 − 1 bytes² (it saturates
/// there): 43 bits, the low word and the 11 bits below the base RTT's.
/// uet-htsim's 32-bit accumulator wraps at 800 Gb/s, where one period's
/// fair increase reaches about 2^32.4; this one holds 1 500 times that.
pub const INC_MAX: u64 = (1 << (32 + INC_HI_BITS)) - 1;

impl Nscc {
    /// A new flow: base RTT the flow's, window `initial_window` (or the
    /// ceiling), within [mtu, ceiling]; the last fulfil and decrease at
    /// time 0, as uet-htsim starts them.
    pub fn new(cfg: &NsccConfig, p: &FlowParams) -> Result<Self, Error> {
        cfg.validate()?;
        let base = p.base_rtt.as_nanos();
        let max = cfg.max_window(base);
        let w = match cfg.initial_window {
            0 => max,
            w => w,
        };
        Ok(Nscc {
            cwnd: w.max(cfg.mtu).min(max),
            // ≤ BaseRtt::MAX_NS < 2^21.
            base_inc: base << INC_HI_BITS,
            avg_delay: 0,
            qa_mark: p.start_seq.0,
            fulfil_mark: p.start_seq.0,
            fi_count_flags: 0,
            qa_end: 0,
            ignore_left: 0,
            last_adjust: 0,
            last_dec: 0,
            recvd: p.start_seq.0,
            inc_lo: 0,
        })
    }

    /// The window, bytes.
    pub fn window(&self) -> u32 {
        self.cwnd
    }

    /// The base RTT, ns.
    pub fn base_rtt_ns(&self) -> u32 {
        self.base_inc >> INC_HI_BITS
    }

    /// The delay average, 2^-8 ns.
    pub fn avg_delay_q8(&self) -> u32 {
        self.avg_delay
    }

    /// The case an ACK with ECN-Echo `marked` and RTT sample `rtt_ns`
    /// falls in for this flow as it stands: the sample's delay over the
    /// base RTT (none if the sample is below it; the average without a
    /// sample) against the target, as [`Controller::ack`] takes it. What
    /// the ACK then does is that case's, unless a quick adapt runs first.
    /// For traces and plots; the controller does not call it.
    pub fn case(&self, cfg: &NsccConfig, marked: bool, rtt_ns: Option<u32>) -> Case {
        let delay = match rtt_ns {
            Some(r) => r.min(MAX_RTT_NS).saturating_sub(self.base_rtt_ns()),
            None => self.avg_delay >> 8,
        };
        match (marked, delay >= cfg.target_delay_ns) {
            (false, true) => Case::FairIncrease,
            (false, false) => Case::ProportionalIncrease,
            (true, true) => Case::MultiplicativeDecrease,
            (true, false) => Case::NoChange,
        }
    }

    /// The increase gathered since the last fulfil, bytes² (at most
    /// [`INC_MAX`]).
    pub fn inc(&self) -> u64 {
        self.inc_lo as u64 | ((self.base_inc & INC_HI_MASK) as u64) << 32
    }

    /// Bytes delivered in the current quick-adapt window, modulo 2^32:
    /// only a window that delivers 4 GiB (at 1.4 Tb/s, in the longest
    /// window a base RTT and target allow, 25 ms) wraps.
    fn achieved(&self) -> u32 {
        self.recvd.wrapping_sub(self.qa_mark)
    }

    /// Bytes received since the last fulfil, modulo 2^32. Every ACK that
    /// takes the count past `adjust_bytes` fulfils and clears it, so it
    /// wraps only if one ACK's advance passes 2^32 − `adjust_bytes`.
    fn received(&self) -> u32 {
        self.recvd.wrapping_sub(self.fulfil_mark)
    }

    /// `add` (< 2^57) added to the accumulator, saturating at
    /// [`INC_MAX`]: the low words added with their carry, the high part
    /// added in place below the base RTT when it stays within its bits.
    #[inline(always)]
    fn add_inc(&mut self, add: u64) {
        let (lo, carry) = self.inc_lo.overflowing_add(add as u32);
        // < 2^25 + 1: no wrap.
        let up = (add >> 32) as u32 + carry as u32;
        if (self.base_inc & INC_HI_MASK) + up <= INC_HI_MASK {
            self.inc_lo = lo;
            self.base_inc += up;
        } else {
            self.inc_lo = u32::MAX;
            self.base_inc |= INC_HI_MASK;
        }
    }

    /// The accumulator cleared.
    #[inline(always)]
    fn clear_inc(&mut self) {
        self.inc_lo = 0;
        self.base_inc &= !INC_HI_MASK;
    }

    fn fi_count(&self) -> u32 {
        self.fi_count_flags & FI_COUNT_MAX
    }

    fn flag(&self, f: u32) -> bool {
        self.fi_count_flags & f != 0
    }

    fn set_flag(&mut self, f: u32, on: bool) {
        self.fi_count_flags = if on {
            self.fi_count_flags | f
        } else {
            self.fi_count_flags & !f
        };
    }

    /// The current decision: the window, not paced (uet-htsim's NSCC
    /// sends as the window allows): the window every 100 ns, above any
    /// rate the window itself allows over a round trip.
    pub fn decision(&self) -> Decision {
        // cwnd ≤ MAX_WINDOW: its 1/16 bytes fit 32 bits.
        Decision::window_paced(Window::from_bits(self.cwnd << 4), BaseRtt::SHORTEST)
    }

    /// An ACK (uet-htsim's `processAck`), each rule that runs told to
    /// `o`: `cum_ack` counts the bytes the receiver has (its
    /// `recvd_bytes`), `snd_nxt − cum_ack` are in flight, `rtt_ns` is the
    /// acknowledged packet's RTT where the sender can tell it (`None`: the
    /// delay is the average), ECN-Echo the packet's mark. An RTT of 0 is
    /// `BadSample`, the state unchanged and `o` told nothing. The
    /// controller's `ack` is this with `()`.
    #[inline(always)]
    pub fn ack_observed<O: Observer>(
        &mut self,
        cfg: &NsccConfig,
        now: Instant,
        ack: &Ack<'_>,
        o: &mut O,
    ) -> Result<Decision, Error> {
        let rtt = sample(ack.rtt_ns)?;
        let acked = self.take(ack.cum_ack);
        let skip = ack.ece == EcnEcho::Marked;
        let (delay, lower) = match rtt {
            Some(rtt) => {
                let lower = self.update_base(rtt);
                let d = rtt - self.base_rtt_ns();
                self.average(cfg, d, skip);
                (d, lower)
            }
            None => (self.avg_delay >> 8, false),
        };
        let now = now.as_nanos() as u32;
        let taken = Taken {
            skip,
            delay,
            acked,
            flight: (ack.cum_ack, ack.snd_nxt),
            lower,
        };
        self.on_ack(cfg, now, taken, o);
        Ok(self.decision())
    }

    /// A NACK of a trimmed packet (`processNack`, `updateCwndOnNack_NSCC`),
    /// each rule that runs told to `o`: its RTT lowers the base RTT (if
    /// configured so); the delay average moves toward a network RTT; quick
    /// adapt is asked for and, if it does not run now, the packet's bytes
    /// come off the window. Marked ACKs and NACKs being ignored after a
    /// quick adapt, this one counts toward the bytes to answer. The
    /// controller's `nack` is this with `()`.
    pub fn nack_observed<O: Observer>(
        &mut self,
        cfg: &NsccConfig,
        now: Instant,
        nack: &Nack,
        o: &mut O,
    ) -> Result<Decision, Error> {
        let rtt = sample(nack.rtt_ns)?;
        if let (Some(rtt), true) = (rtt, cfg.nack_updates_base_rtt) {
            if self.update_base(rtt) {
                // A lower ceiling: bounded below, or at the next ACK.
                self.set_flag(UNBOUNDED, true);
            }
        }
        let len = nack.len.min(MAX_WINDOW);
        o.nack(len);
        self.ignore_left = self.ignore_left.saturating_sub(len);
        self.average(cfg, cfg.network_rtt_ns, true);
        self.set_flag(TRIGGER_QA, true);
        let now = now.as_nanos() as u32;
        if !self.quick_adapt(cfg, now, true, true, 0, (nack.cum_ack, nack.snd_nxt), o) {
            self.cwnd = self.cwnd.saturating_sub(len);
            self.bound(cfg);
        }
        Ok(self.decision())
    }

    /// `update_base_rtt`: a shorter sample lowers the base RTT (and with
    /// it the ceiling); whether it did.
    #[inline(always)]
    fn update_base(&mut self, rtt: u32) -> bool {
        let lower = rtt < self.base_rtt_ns();
        if lower {
            // rtt < the base ≤ BaseRtt::MAX_NS: 21 bits.
            self.base_inc = (self.base_inc & INC_HI_MASK) | rtt << INC_HI_BITS;
        }
        lower
    }

    /// `update_delay` with the average updated: the delay `d` (ns) into
    /// the average, or base/4 for a delay above the target without ECN
    /// (high delay no mark of this flow's path shows is taken as
    /// congestion elsewhere). avg' = w·x + (1 − w)·avg, truncated.
    #[inline(always)]
    fn average(&mut self, cfg: &NsccConfig, d: u32, skip: bool) {
        // x in 2^-8 ns (base/4 exactly): d ≤ MAX_RTT_NS < 2^24 (a sample
        // is at most that, the base below it) and base ≤ 2^20, so x < 2^32.
        let x = if !skip && d > cfg.target_delay_ns {
            self.base_rtt_ns() << 6
        } else {
            d << 8
        };
        // ⌊w·x + (1 − w)·avg⌋ = avg + ⌊w·(x − avg)⌋: one product of w
        // (≤ 2^24) by the difference (< 2^32), rounded down either way,
        // the result between avg and x.
        let w = cfg.delay_ewma.to_bits() as u64;
        let avg = self.avg_delay;
        self.avg_delay = if x >= avg {
            avg + ((w * (x - avg) as u64) >> 24) as u32
        } else {
            avg - ((w * (avg - x) as u64 + (1 << 24) - 1) >> 24) as u32
        };
    }

    /// The window within [mtu, ceiling] (`set_cwnd_bounds`: the floor
    /// first, so a ceiling below one MTU wins).
    #[inline(always)]
    fn bound(&mut self, cfg: &NsccConfig) {
        self.cwnd = self.cwnd.max(cfg.mtu).min(cfg.max_window(self.base_rtt_ns()));
        self.set_flag(UNBOUNDED, false);
    }

    /// `quick_adapt`: whether it took the event (and then no other rule
    /// runs). `flight` is the event's `(cum_ack, snd_nxt)`: the bytes in
    /// flight are taken from it only when quick adapt runs.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn quick_adapt<O: Observer>(
        &mut self,
        cfg: &NsccConfig,
        now: u32,
        is_loss: bool,
        skip: bool,
        delay: u32,
        flight: (Seq, Seq),
        o: &mut O,
    ) -> bool {
        if !cfg.quick_adapt {
            return false;
        }
        let mut done = false;
        if self.ignore_left > 0 && skip {
            done = true;
        } else if !self.flag(QA_OPEN) || (now.wrapping_sub(self.qa_end) as i32) > 0 {
            if self.flag(QA_OPEN)
                && (self.flag(TRIGGER_QA) || is_loss || delay > cfg.qa_threshold_ns)
                && self.achieved() < cfg.max_window(self.base_rtt_ns()) >> cfg.qa_gate
            {
                o.quick(self.cwnd, self.achieved().max(cfg.mtu));
                self.cwnd = self.achieved().max(cfg.mtu);
                self.ignore_left = in_flight(flight.0, flight.1);
                self.set_flag(TRIGGER_QA, false);
                // Above a ceiling below one MTU: bounded at the next ACK,
                // as uet-htsim does.
                self.set_flag(UNBOUNDED, true);
                done = true;
            }
            self.qa_mark = self.recvd;
            self.qa_end = now.wrapping_add(self.base_rtt_ns()).wrapping_add(cfg.target_delay_ns);
            self.set_flag(QA_OPEN, true);
        }
        if done {
            self.clear_inc();
            self.fulfil_mark = self.recvd;
        }
        done
    }

    /// `fast_increase`: whether it took the ACK.
    #[inline(always)]
    fn fast_increase<O: Observer>(&mut self, cfg: &NsccConfig, acked: u32, delay: u32, o: &mut O) -> bool {
        if delay < cfg.fast_increase_delay_ns {
            let fi = (self.fi_count() as u64 + acked as u64).min(FI_COUNT_MAX as u64) as u32;
            self.fi_count_flags = (self.fi_count_flags & !(FI_COUNT_MAX)) | fi;
            if fi > self.cwnd || self.flag(INCREASE) {
                // acked < 2^31 by ≤ 2^20: < 2^51.
                let add = (acked as u64 * cfg.fi_scale_q16 as u64) >> 16;
                let w = (self.cwnd as u64 + add).min(MAX_WINDOW as u64) as u32;
                o.fast(w - self.cwnd);
                self.cwnd = w;
                self.set_flag(INCREASE, true);
                return true;
            }
        } else {
            self.fi_count_flags &= !(FI_COUNT_MAX);
        }
        self.set_flag(INCREASE, false);
        false
    }

    /// `multiplicative_decrease`: at most once a base RTT, with the delay
    /// average above the target, cwnd ·= max(1 − γ·(avg − target)/avg,
    /// floor), truncated.
    #[inline(always)]
    fn decrease<O: Observer>(&mut self, cfg: &NsccConfig, now: u32, o: &mut O) {
        self.fi_count_flags &= !(INCREASE | (FI_COUNT_MAX));
        let target = cfg.target_delay_ns << 8;
        let avg = self.avg_delay;
        if avg > target && now.wrapping_sub(self.last_dec) > self.base_rtt_ns() {
            // (avg − target)/avg in 2^-24: a proper fraction (target ≥ 1),
            // both shifted until avg < 2^24 (a delay of 65 µs in 2^-8 ns)
            // for the division's envelope.
            let s = (32 - avg.leading_zeros()).saturating_sub(24);
            let f = NonZeroU32::new(avg >> s).map_or(0, |a| fraction_q24((avg - target) >> s, a)) as u64;
            let cut = (f * cfg.gamma.to_bits() as u64) >> 24;
            let keep = ((1u64 << 24) - cut.min(1 << 24)).max(cfg.md_floor.to_bits() as u64);
            let w = (((self.cwnd as u64 * keep) >> 24) as u32).max(cfg.mtu);
            o.multiplicative(self.cwnd, w);
            self.cwnd = w;
            self.last_dec = now;
        }
    }

    /// `fulfill_adjustment`: the gathered increase over the window, and
    /// eta once a period.
    #[inline(always)]
    fn fulfil<O: Observer>(&mut self, cfg: &NsccConfig, now: u32, o: &mut O) {
        // cwnd ≥ 1 here (bounded by mtu ≥ 64 before, unless the ceiling
        // is 0 at a base RTT below 6 ns); a zero window adds nothing.
        if let Some(w) = NonZeroU64::new(self.cwnd as u64) {
            let add = div_u64(self.inc(), w);
            self.cwnd = (self.cwnd as u64 + add).min(MAX_WINDOW as u64) as u32;
        }
        o.fulfil(self.cwnd);
        if now.wrapping_sub(self.last_adjust) >= cfg.network_rtt_ns {
            o.eta(cfg.eta);
            self.cwnd = self.cwnd.saturating_add(cfg.eta).min(MAX_WINDOW);
            self.last_adjust = now;
        }
        self.clear_inc();
        self.fulfil_mark = self.recvd;
    }

    /// `updateCwndOnAck_NSCC` after the ACK's bytes and delay are taken.
    #[inline(always)]
    fn on_ack<O: Observer>(&mut self, cfg: &NsccConfig, now: u32, a: Taken, o: &mut O) {
        let Taken {
            skip,
            delay,
            acked,
            flight,
            lower: bound,
        } = a;
        if self.quick_adapt(cfg, now, false, skip, delay, flight, o) {
            if bound {
                // A lower ceiling the window meets at the next ACK.
                self.set_flag(UNBOUNDED, true);
            }
            return;
        }
        let w0 = self.cwnd;
        let target = cfg.target_delay_ns;
        if !skip && delay >= target {
            // fi ≤ 2^26 by acked < 2^31: < 2^57.
            let add = cfg.fi as u64 * acked as u64;
            o.fair(add);
            self.add_inc(add);
        } else if !skip {
            if !self.fast_increase(cfg, acked, delay, o) {
                // α·(target − delay) ≤ 2^24·2^23 = 2^47 in 2^-16.
                let p = cfg.alpha_q16 as u64 * (target - delay) as u64;
                let add = mul_shr16(p, acked);
                o.proportional(add);
                self.add_inc(add);
            }
        } else if delay >= target {
            self.decrease(cfg, now, o);
        }
        // Bounded after every event but a timeout: unchanged, with the
        // ceiling where it was, the window needs no bound (the ceiling's
        // product is paid on the ACKs that move either).
        if bound || self.cwnd != w0 || self.flag(UNBOUNDED) {
            self.bound(cfg);
        }
        if self.received() > cfg.adjust_bytes || now.wrapping_sub(self.last_adjust) > cfg.network_rtt_ns {
            self.fulfil(cfg, now, o);
            self.bound(cfg);
        }
    }

    /// The bytes `acked` newly received by an ACK or NACK of `cum_ack`
    /// (0 for one that does not advance), counted into the windows' tallies.
    #[inline(always)]
    fn take(&mut self, cum_ack: Seq) -> u32 {
        if !cum_ack.after(Seq(self.recvd)) {
            return 0;
        }
        // Below 2^31: the ACK is after the last.
        let acked = cum_ack.0.wrapping_sub(self.recvd);
        self.recvd = cum_ack.0;
        self.ignore_left = self.ignore_left.saturating_sub(acked);
        acked
    }
}

/// What an ACK brought, for the rules: its ECN-Echo (`skip`), the delay
/// (ns), the bytes newly received, its `(cum_ack, snd_nxt)` (the bytes
/// in flight, read only by quick adapt), and whether its
/// RTT lowered the base RTT (and with it the window's ceiling).
#[derive(Clone, Copy)]
struct Taken {
    skip: bool,
    delay: u32,
    acked: u32,
    flight: (Seq, Seq),
    lower: bool,
}

/// ⌊p·a/2^16⌋, exact, for p ≤ 2^47 and a < 2^31 (the proportional
/// increase: p = α·(target − delay) in 2^-16, a the bytes acknowledged).
/// The product would pass 2^64, so in two parts: the whole part of p
/// (< 2^31) by a (< 2^62), and the fraction's product (< 2^47) shifted.
/// Where p fits a word (with uet-htsim's gains at 100 Gb/s, whenever
/// target − delay < 41 µs) one 32×32-bit product is the same value.
#[inline(always)]
fn mul_shr16(p: u64, a: u32) -> u64 {
    let a = a as u64;
    match u32::try_from(p) {
        Ok(p) => (p as u64 * a) >> 16,
        Err(_) => (p >> 16) * a + (((p & 0xFFFF) * a) >> 16),
    }
}

/// Bytes in flight from a `cum_ack` and `snd_nxt`: none where `snd_nxt`
/// is not after it.
fn in_flight(cum_ack: Seq, snd_nxt: Seq) -> u32 {
    if snd_nxt.after(cum_ack) {
        snd_nxt.0.wrapping_sub(cum_ack.0)
    } else {
        0
    }
}

/// An RTT sample as NSCC takes it: `BadSample` for 0, at most
/// [`MAX_RTT_NS`].
fn sample(rtt_ns: Option<u32>) -> Result<Option<u32>, Error> {
    match rtt_ns {
        Some(0) => Err(Error::BadSample),
        r => Ok(r.map(|r| r.min(MAX_RTT_NS))),
    }
}

impl Controller for Nscc {
    type Config = NsccConfig;

    fn validate(cfg: &NsccConfig) -> Result<(), Error> {
        cfg.validate()
    }

    fn start(cfg: &NsccConfig, _now: Instant, p: &FlowParams) -> Result<(Self, Decision), Error> {
        if p.algorithm != Algorithm::Nscc {
            return Err(Error::NotApplicable);
        }
        let s = Nscc::new(cfg, p)?;
        Ok((s, s.decision()))
    }

    fn decision(&self, _cfg: &NsccConfig) -> Decision {
        Nscc::decision(self)
    }

    /// Nothing to do when a packet leaves.
    fn sent(
        &mut self,
        _cfg: &NsccConfig,
        _now: Instant,
        _seq: Seq,
        _len: u32,
        _end: MessageEnd,
    ) -> Result<Decision, Error> {
        Ok(self.decision())
    }

    /// An ACK: [`Nscc::ack_observed`], unobserved.
    #[inline(always)]
    fn ack(&mut self, cfg: &NsccConfig, now: Instant, ack: &Ack<'_>) -> Result<Decision, Error> {
        self.ack_observed(cfg, now, ack, &mut ())
    }

    /// A NACK: [`Nscc::nack_observed`], unobserved.
    fn nack(&mut self, cfg: &NsccConfig, now: Instant, nack: &Nack) -> Result<Decision, Error> {
        self.nack_observed(cfg, now, nack, &mut ())
    }

    /// The ACK's quadrant ([`Nscc::case`]).
    fn ack_case(&self, cfg: &NsccConfig, ack: &Ack<'_>) -> Option<u8> {
        Some(self.case(cfg, ack.ece == EcnEcho::Marked, ack.rtt_ns) as u8)
    }

    /// A timeout (`rtxTimerExpired`): one MTU off the window, at least one
    /// MTU kept. No quick adapt, no change to the delay average.
    fn loss(&mut self, cfg: &NsccConfig, _now: Instant, _first_lost: Seq) -> Result<Decision, Error> {
        self.cwnd = self.cwnd.saturating_sub(cfg.mtu).max(cfg.mtu);
        self.set_flag(UNBOUNDED, true);
        Ok(self.decision())
    }
}

#[cfg(test)]
mod tests;
