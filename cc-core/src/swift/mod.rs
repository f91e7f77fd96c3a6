//! **Swift** (Kumar et al., SIGCOMM 2020), delay-based window control from
//! NIC timestamps, as Google's Falcon rate-update engine codes it (public
//! in the Isekai simulator's `rue/algorithm/swift.h`; docs/design-notes.md,
//! "Swift readings", says where the engine departs from it).
//!
//! Two windows, in packets of [`SwiftConfig::mtu`] bytes; the smaller
//! governs:
//!
//! - the **fabric window** `fcwnd`, from the fabric delay (t4 − t1) −
//!   (t3 − t2) of each ACK ([`crate::event::NicSample::delays`]) against
//!   the target `base + hops·hop_scaling + fs(fcwnd)` with the flow scaling
//!   `fs(W) = clamp(α·(1/√W − 1/√W_max), 0, fs_max)` (§3.4: smaller windows
//!   get more delay, so that many flows converge). Below the target:
//!   additive increase `ai·acked/fcwnd` packets (`ai·acked` while below one
//!   packet: per packet acknowledged). At or above it, at most once per
//!   RTT: `fcwnd·(1 − min(β·(delay − target)/delay, max_mdf))`;
//! - the **endpoint window** `ncwnd`, the same shape from the receiver's
//!   Rx buffer level against its target (Falcon's `ncwnd`: `+nic_ai` per
//!   ACK below the target, and a decrease scaled by (level − target)/level
//!   at most once per RTT above it).
//!
//! Each window is paced at one window per RTT, so below one packet a
//! packet leaves every RTT/cwnd (§3.5). A loss (timeout or NACK) cuts the
//! fabric window once by max_mdf and, from the `retransmit_limit`-th in a
//! row, sets it to its minimum (§3.6).
//!
//! Fixed point: windows in 2^-16 packets; fractions in 2^-24. 1/√W comes
//! from a 49-entry table with linear interpolation (relative error below
//! 4·10^-4), 1/level from a 32-entry one. The increase divides by
//! nothing: acked/mtu from a per-flow reciprocal of the MTU, 1/fcwnd as
//! the square of the target's 1/√fcwnd (relative error below 8·10^-4 of
//! the increase, far inside a window's step). The decrease's
//! (delay − target)/delay, at most once per RTT, is a 24-bit fraction:
//! three 32-bit `divu` inline on rv32, one on rv64. No call on the ACK
//! path.

#[cfg(feature = "reference")]
pub mod reference;

use core::num::{NonZeroU32, NonZeroU64};

#[cfg(feature = "bench")]
use crate::bench::AckBench;
use crate::codec::{ConfigReader, ConfigWriter};
use crate::controller::Controller;
use crate::error::Error;
use crate::event::{Ack, Algorithm, Decision, FlowParams, MessageEnd, NicSample, Request, TimerRequest};
use crate::fixmath::{div_u64, fraction_q24, leading_zeros_even};
use crate::params::{param, Gate, Network, Param, Unit};
use crate::units::{BaseRtt, Fraction, Instant, Seq, Window};
use crate::wire::Result as WireResult;

/// One packet in the windows' unit (2^-16 packets).
pub const ONE_PACKET: u32 = 1 << 16;

/// Swift's parameters shared by every flow of an engine. Times in ns,
/// windows in 2^-16 packets, fractions in 2^-24.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SwiftConfig {
    /// Bytes of a packet: the windows' unit (64 ..= 65 535).
    pub mtu: u32,
    /// The target's base delay, ns (1 ..= 2^24).
    pub base_delay_ns: u32,
    /// The target's scaling per forward hop, ns (≤ 2^16).
    pub hop_scaling_ns: u32,
    /// α of the flow scaling, ns·√packet (≤ 2^24).
    pub flow_scaling_alpha_ns: u32,
    /// The flow scaling's ceiling, ns (≤ 2^24).
    pub max_flow_scaling_ns: u32,
    /// Additive increase, packets per window of ACKs (2^-16; 1 ..= 2^20).
    pub ai: u32,
    /// Multiplicative-decrease factor β (0 < β < 1).
    pub beta: Fraction,
    /// The largest decrease at once (0 < max_mdf < 1).
    pub max_mdf: Fraction,
    /// The fabric window's floor (2^-16 packets, ≥ 1).
    pub min_window: u32,
    /// The fabric window's ceiling, and the flow scaling's W_max (2^-16
    /// packets, ≥ min_window and ≥ one packet; below 65 536 packets by its
    /// type).
    pub max_window: u32,
    /// The Rx buffer level the endpoint window aims below (0 ..= 31).
    pub target_rx_level: u8,
    /// The endpoint window's increase per ACK (2^-16 packets, 1 ..= 2^20).
    pub nic_ai: u32,
    /// The endpoint window's β (0 < β < 1).
    pub nic_beta: Fraction,
    /// The endpoint window's largest decrease (0 < max_mdf < 1).
    pub nic_max_mdf: Fraction,
    /// The endpoint window's floor (2^-16 packets, ≥ 1).
    pub nic_min_window: u32,
    /// The endpoint window's ceiling (2^-16 packets, ≥ nic_min_window).
    pub nic_max_window: u32,
    /// Losses in a row from which the fabric window drops to its minimum
    /// (1 ..= 255).
    pub retransmit_limit: u8,
    /// A new flow's fabric window (2^-16 packets, within its bounds); 0:
    /// the path's BDP.
    pub initial_window: u32,
}

impl SwiftConfig {
    /// Falcon's Swift defaults (Isekai's `Swift::DefaultConfiguration`):
    /// base delay 25 µs, 1 µs a hop, flow scaling up to 100 µs between
    /// windows of 0.1 and 256 packets (α = 100 µs / (1/√0.1 − 1/√256) =
    /// 32 260 ns), ai 1, β 0.8, max_mdf 0.5, windows 0.01 ..= 256 packets;
    /// endpoint window 1 ..= 256 packets aiming below level 15 of 31 with
    /// ai 1, β 0.8, max_mdf 0.5; the minimum window after 3 losses in a
    /// row. Packets of 1000 bytes (hal-sim's payload); a new flow starts
    /// at the path's BDP.
    pub const fn falcon() -> Self {
        SwiftConfig {
            mtu: 1000,
            base_delay_ns: 25_000,
            hop_scaling_ns: 1_000,
            flow_scaling_alpha_ns: 32_260,
            max_flow_scaling_ns: 100_000,
            ai: ONE_PACKET,
            beta: Fraction::preset(4, 5),
            max_mdf: Fraction::preset(1, 2),
            min_window: 655,
            max_window: 256 * ONE_PACKET,
            target_rx_level: 15,
            nic_ai: ONE_PACKET,
            nic_beta: Fraction::preset(4, 5),
            nic_max_mdf: Fraction::preset(1, 2),
            nic_min_window: ONE_PACKET,
            nic_max_window: 256 * ONE_PACKET,
            retransmit_limit: 3,
            initial_window: 0,
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
        let proper = |f: Fraction| f.to_bits() == 0 || f >= Fraction::ONE;
        [
            (!(64..=65_535).contains(&self.mtu), "mtu"),
            (!(1..=1 << 24).contains(&self.base_delay_ns), "base_delay_ns"),
            (self.hop_scaling_ns > 1 << 16, "hop_scaling_ns"),
            (self.flow_scaling_alpha_ns > 1 << 24, "flow_scaling_alpha_ns"),
            (self.max_flow_scaling_ns > 1 << 24, "max_flow_scaling_ns"),
            (!(1..=1 << 20).contains(&self.ai), "ai"),
            (proper(self.beta), "beta"),
            (proper(self.max_mdf), "max_mdf"),
            (self.min_window == 0, "min_window"),
            (self.max_window < self.min_window.max(ONE_PACKET), "max_window"),
            (self.target_rx_level >= NicSample::RX_LEVELS, "target_rx_level"),
            (!(1..=1 << 20).contains(&self.nic_ai), "nic_ai"),
            (proper(self.nic_beta), "nic_beta"),
            (proper(self.nic_max_mdf), "nic_max_mdf"),
            (self.nic_min_window == 0, "nic_min_window"),
            (self.nic_max_window < self.nic_min_window, "nic_max_window"),
            (self.retransmit_limit == 0, "retransmit_limit"),
        ]
        .into_iter()
        .find_map(|(bad, name)| bad.then_some(name))
    }
}

impl Default for SwiftConfig {
    fn default() -> Self {
        Self::falcon()
    }
}

impl crate::controller::AlgorithmConfig for SwiftConfig {
    type Sender<const H: usize> = Swift;

    const DEFAULT: Self = Self::falcon();

    const PARAMS: &'static [Param<Self>] = &[
        param!(
            SwiftConfig,
            "mtu_bytes",
            mtu,
            Unit::Bytes,
            "64 ..= 65535",
            "bytes of a packet, the windows' unit"; payload
        ),
        param!(
            SwiftConfig,
            "base_delay_us",
            base_delay_ns,
            Unit::Micros,
            "0.001 ..= 16777.216",
            "the target's base delay"
        ),
        param!(
            SwiftConfig,
            "hop_scaling_us",
            hop_scaling_ns,
            Unit::Micros,
            "at most 65.536",
            "the target's delay per forward hop"
        ),
        param!(
            SwiftConfig,
            "flow_scaling_alpha_us",
            flow_scaling_alpha_ns,
            Unit::Micros,
            "at most 16777.216",
            "α of the flow scaling α·(1/√cwnd − 1/√max_window)"
        ),
        param!(
            SwiftConfig,
            "max_flow_scaling_us",
            max_flow_scaling_ns,
            Unit::Micros,
            "at most 16777.216",
            "the flow scaling's ceiling"
        ),
        param!(
            SwiftConfig,
            "ai",
            ai,
            Unit::Packets,
            "0.0001 ..= 16",
            "additive increase, packets per window of ACKs"
        ),
        param!(
            SwiftConfig,
            "beta",
            beta,
            Unit::Fraction,
            "(0, 1)",
            "multiplicative-decrease factor",
            fraction
        ),
        param!(
            SwiftConfig,
            "max_mdf",
            max_mdf,
            Unit::Fraction,
            "(0, 1)",
            "the largest decrease at once",
            fraction
        ),
        param!(
            SwiftConfig,
            "min_window",
            min_window,
            Unit::Packets,
            "above 0",
            "the fabric window's floor, packets"
        ),
        param!(
            SwiftConfig,
            "max_window",
            max_window,
            Unit::Packets,
            "max(min_window, 1) ..= 65535.99",
            "the fabric window's ceiling, packets"
        ),
        param!(
            SwiftConfig,
            "target_rx_level",
            target_rx_level,
            Unit::Count,
            "0 ..= 31",
            "the Rx buffer level the endpoint window aims below",
            u8
        ),
        param!(
            SwiftConfig,
            "nic_ai",
            nic_ai,
            Unit::Packets,
            "0.0001 ..= 16",
            "the endpoint window's increase per ACK, packets"
        ),
        param!(
            SwiftConfig,
            "nic_beta",
            nic_beta,
            Unit::Fraction,
            "(0, 1)",
            "the endpoint window's β",
            fraction
        ),
        param!(
            SwiftConfig,
            "nic_max_mdf",
            nic_max_mdf,
            Unit::Fraction,
            "(0, 1)",
            "the endpoint window's largest decrease",
            fraction
        ),
        param!(
            SwiftConfig,
            "nic_min_window",
            nic_min_window,
            Unit::Packets,
            "above 0",
            "the endpoint window's floor, packets"
        ),
        param!(
            SwiftConfig,
            "nic_max_window",
            nic_max_window,
            Unit::Packets,
            "nic_min_window ..= 65535.99",
            "the endpoint window's ceiling, packets"
        ),
        param!(
            SwiftConfig,
            "retransmit_limit",
            retransmit_limit,
            Unit::Count,
            "1 ..= 255",
            "losses in a row that drop the window to its minimum",
            u8
        ),
        param!(
            SwiftConfig,
            "initial_window",
            initial_window,
            Unit::Packets,
            "0 (the path's BDP) or within the window's bounds",
            "a new flow's fabric window, packets"
        ),
    ];

    /// A window from NIC timestamps: no ECN marking; ACKs share the data's
    /// queues (Swift's fabric delay takes the ACK path's queueing in, as
    /// it is measured).
    const NETWORK: Network = Network::new(Gate::Window);

    #[cfg(feature = "bench")]
    /// ACKs a microsecond apart through every branch ([`bench_ack`]).
    const ACK_BENCH: Option<AckBench> = Some(AckBench {
        name: "swift-ack",
        row: "Swift ACK",
        ack: bench_ack,
        interval_ns: 1_000,
        targets: Some((160, 130)),
        state_bytes: Some(32),
    });

    /// [`reference::SwiftRef`] on the same ACKs, a microsecond apart.
    #[cfg(all(feature = "reference", feature = "bench"))]
    fn reference_ack<B: crate::bench::RefBracket>(p: &FlowParams, events: u32, bracket: &mut B) -> bool {
        use reference::{SwiftRef, SwiftRefParams};
        let cfg = Self::DEFAULT;
        let Ok(s) = Swift::new(&cfg, p, Instant::ZERO) else {
            return false;
        };
        let pk = |w: u32| w as f64 / ONE_PACKET as f64;
        let mut r = SwiftRef::new(
            SwiftRefParams::from_config(&cfg),
            pk(s.fabric_window()),
            pk(s.endpoint_window()),
            0,
            p.start_seq.0,
            s.rtt_ns(),
        );
        let mut now = 0u32;
        for i in 0..events {
            now = now.wrapping_add(1_000);
            bracket.around(
                bench_ack(i + 1, &mut [crate::telemetry::HopSample::default(); 5]),
                |ack| {
                    if let Some(n) = ack.nic.as_ref() {
                        let _ = core::hint::black_box(core::hint::black_box(&mut r).ack(now, ack.cum_ack.0, n));
                    }
                },
            );
        }
        true
    }

    fn validate(&self) -> Result<(), Error> {
        SwiftConfig::validate(self)
    }

    fn invalid_field(&self) -> Option<&'static str> {
        SwiftConfig::invalid_field(self)
    }

    /// Each field in declaration order: u32s, fractions' raw values, u8s.
    fn encode(&self, w: &mut ConfigWriter<'_, '_>) -> WireResult<()> {
        for v in [
            self.mtu,
            self.base_delay_ns,
            self.hop_scaling_ns,
            self.flow_scaling_alpha_ns,
            self.max_flow_scaling_ns,
            self.ai,
            self.beta.to_bits(),
            self.max_mdf.to_bits(),
            self.min_window,
            self.max_window,
        ] {
            w.u32(v)?;
        }
        w.u8(self.target_rx_level)?;
        for v in [
            self.nic_ai,
            self.nic_beta.to_bits(),
            self.nic_max_mdf.to_bits(),
            self.nic_min_window,
            self.nic_max_window,
        ] {
            w.u32(v)?;
        }
        w.u8(self.retransmit_limit)?;
        w.u32(self.initial_window)
    }

    fn decode(r: &mut ConfigReader<'_, '_>) -> WireResult<Self> {
        Ok(SwiftConfig {
            mtu: r.u32()?,
            base_delay_ns: r.u32()?,
            hop_scaling_ns: r.u32()?,
            flow_scaling_alpha_ns: r.u32()?,
            max_flow_scaling_ns: r.u32()?,
            ai: r.u32()?,
            beta: r.fraction()?,
            max_mdf: r.fraction()?,
            min_window: r.u32()?,
            max_window: r.u32()?,
            target_rx_level: r.u8()?,
            nic_ai: r.u32()?,
            nic_beta: r.fraction()?,
            nic_max_mdf: r.fraction()?,
            nic_min_window: r.u32()?,
            nic_max_window: r.u32()?,
            retransmit_limit: r.u8()?,
            initial_window: r.u32()?,
        })
    }

    /// The window within [min(min_window, nic_min_window), max(max_window,
    /// nic_max_window)] packets (rounded down to 2^-4 byte), paced at most
    /// one window per RTT; no timer, no request.
    fn check_decision(&self, _p: &FlowParams, d: &Decision) -> Result<(), &'static str> {
        let bytes = |w: u32| (w as u64 * self.mtu as u64) >> 16;
        let lo = bytes(self.min_window.min(self.nic_min_window));
        let hi = bytes(self.max_window.max(self.nic_max_window));
        let w = d.window.to_bits() as u64 >> 4;
        if w + 1 < lo || w > hi {
            return Err("Swift window outside its bounds");
        }
        if d.pacing.bytes != d.window {
            return Err("Swift pacing is not one window per RTT");
        }
        if d.timer != TimerRequest::Keep || d.request != Request::None {
            return Err("Swift asked for a timer or a request");
        }
        Ok(())
    }
}

#[cfg(feature = "bench")]
/// The firmware benchmark's ACK `n`: one packet of 1000 bytes acknowledged,
/// 5 hops, Rx level 10 (below the endpoint target), with fabric delays from
/// a cycle of eight around the default target (about 30 µs plus the flow
/// scaling): below it (increase, with its division), above it (decrease,
/// with its division, when an RTT has passed since the last), far above
/// (capped at max_mdf).
pub fn bench_ack(n: u32, _hops: &mut [crate::telemetry::HopSample; 5]) -> Ack<'static> {
    const FABRIC: [u32; 8] = [20_000, 25_000, 60_000, 22_000, 90_000, 28_000, 40_000, 21_000];
    let fabric = FABRIC[(n % 8) as usize];
    let t1 = n.wrapping_mul(1_000);
    Ack {
        rtt_ns: Some(fabric + 2_000),
        nic: Some(NicSample {
            t1,
            t2: 500_000,
            t3: 502_000,
            t4: t1.wrapping_add(fabric + 2_000),
            forward_hops: 5,
            rx_buffer_level: 10,
        }),
        ..Ack::new(
            Seq(n.wrapping_mul(1000)),
            Seq(n.wrapping_mul(1000).wrapping_add(64_000)),
        )
    }
}

/// 1/√(1 + i/16) in 2^-16, i = 0 ..= 48: [`rsqrt`]'s table.
const RSQRT: [u32; 49] = [
    65536, 63579, 61788, 60140, 58617, 57205, 55889, 54661, 53510, 52429, 51411, 50450, 49541, 48679, 47861, 47082,
    46341, 45633, 44957, 44310, 43691, 43096, 42525, 41977, 41449, 40940, 40450, 39977, 39520, 39078, 38651, 38238,
    37837, 37449, 37073, 36708, 36353, 36008, 35673, 35347, 35030, 34722, 34421, 34128, 33843, 33564, 33292, 33027,
    32768,
];

/// 1/√W for a window `w` in 2^-16 packets (> 0), in 2^-16: the table's
/// value at W's mantissa in [1, 4), linearly interpolated, scaled by W's
/// even power of two. With e the even shift that puts w's top bit at 30
/// or 31, m = w·2^e / 2^30 ∈ [1, 4) and W = m·2^(30 − e − 16), so 1/√W =
/// 2^((e − 14)/2)/√m. Relative error below 4·10^-4. `w` = 0 is taken as 1.
pub fn rsqrt(w: u32) -> u32 {
    rsqrt_from_parts(rsqrt_parts(w))
}

/// 1/√W in 2^-16 from [`rsqrt_parts`]'s (t, s): t·2^s.
#[inline(always)]
fn rsqrt_from_parts((t, s): (u32, i32)) -> u32 {
    if s >= 0 {
        t << s
    } else {
        t >> -s
    }
}

/// [`rsqrt`] before its last shift: (t, s) with 1/√W = t·2^s in 2^-16,
/// t = 1/√m in 2^-16 ∈ [2^15, 2^16], s = (e − 14)/2 ∈ [−7, 8]. The
/// interpolation's only rounding is t's; the increase's 1/W = t²·2^(2s)
/// keeps its 16 bits where the shifted 1/√W of a large window keeps few.
#[inline(always)]
fn rsqrt_parts(w: u32) -> (u32, i32) {
    let w = w.max(1);
    // The even count of leading zeros: one `clz` with Zbb, a four-step
    // search without (the compiler's own expansion takes about 35).
    let e = leading_zeros_even(w) as i32;
    let m = w << e; // [2^30, 2^32)
    let i = ((m >> 26) - 16) as usize; // [0, 48)
    let frac = (m >> 10) & 0xFFFF;
    let i = i.min(47);
    let (a, b) = (RSQRT[i], RSQRT[i + 1]);
    (a - (((a - b) * frac) >> 16), (e - 14) / 2)
}

/// 2^24 / level for the Rx buffer's levels 1 ..= 31 (0 unused).
const RECIP_LEVEL: [u32; 32] = {
    let mut t = [0u32; 32];
    let mut l = 1;
    while l < 32 {
        t[l] = (1 << 24) / l as u32;
        l += 1;
    }
    t
};

/// One Swift flow at its sender: 32 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Swift {
    /// The fabric window, 2^-16 packets.
    fcwnd: u32,
    /// The endpoint window, 2^-16 packets.
    ncwnd: u32,
    /// When the fabric window last fell (or trails now by one RTT), ns mod 2^32.
    f_marker: u32,
    /// The same for the endpoint window.
    n_marker: u32,
    /// The cumulative ACK seen last.
    acked: u32,
    /// The last RTT sample, ns (the pacing period and the once-per-RTT
    /// guard); the flow's base RTT until one comes.
    rtt: u32,
    /// 1/√max_window in 2^-16 ([`rsqrt`]) less one, the flow scaling's
    /// zero: max_window ≥ one packet puts 1/√max_window in [256, 65 536].
    /// Taken once at the start (the configuration is fixed while a flow
    /// lives).
    rsqrt_max_less_1: u16,
    /// Losses in a row (saturating).
    retransmits: u8,
    /// ⌈2^37 / mtu⌉ (mtu ≥ 64: at most 2^31): bytes to packets in 2^-16
    /// by a product and a shift of 21, exact for whole packets below 2^21
    /// bytes acknowledged at once. Taken once at the start.
    inv_mtu: u32,
}

/// `x·(1 − f)` for a window and a fraction in 2^-24, rounded down.
fn cut(x: u32, f: u32) -> u32 {
    ((x as u64 * ((1u64 << 24) - f as u64)) >> 24) as u32
}

/// (Bounds are applied as max then min, never `clamp`, whose panic on
/// reversed bounds would be a panic path: validation keeps them in order.)
///
/// Isekai's window time marker: now after a decrease or at the floor;
/// else trailing now by one RTT once more than an RTT has passed (so the
/// marker never falls more than an RTT behind); else unchanged.
fn marker(now: u32, last: u32, rtt: u32, old: u32, new: u32, floor: u32) -> u32 {
    if new < old || new == floor {
        now
    } else if now.wrapping_sub(last) > rtt {
        now.wrapping_sub(rtt)
    } else {
        last
    }
}

impl Swift {
    /// A new flow: the fabric window at `initial_window`, or at the path's
    /// BDP (line rate × base RTT, in packets), within its bounds; the
    /// endpoint window at its ceiling.
    pub fn new(cfg: &SwiftConfig, p: &FlowParams, now: Instant) -> Result<Self, Error> {
        cfg.validate()?;
        if !p.line_rate.is_plausible() {
            return Err(Error::InvalidParams);
        }
        // BDP bytes = Mb/s · ns / 8000 < 2^23 · 2^20; in packets · 2^16.
        let bdp = p.line_rate.as_mbps() as u64 * p.base_rtt.as_nanos() as u64 / 8_000;
        let Some(mtu) = NonZeroU64::new(cfg.mtu as u64) else {
            return Err(Error::InvalidParams);
        };
        let w = match cfg.initial_window {
            0 => div_u64(bdp << 16, mtu),
            w => w as u64,
        };
        let w = w.max(cfg.min_window as u64).min(cfg.max_window as u64) as u32;
        let now = now.as_nanos() as u32;
        Ok(Swift {
            fcwnd: w,
            ncwnd: cfg.nic_max_window,
            f_marker: now,
            n_marker: now,
            acked: p.start_seq.0,
            rtt: p.base_rtt.as_nanos(),
            rsqrt_max_less_1: rsqrt(cfg.max_window).saturating_sub(1).min(u16::MAX as u32) as u16,
            retransmits: 0,
            // ⌈2^37/mtu⌉ ≤ 2^31 for mtu ≥ 64 (validated).
            inv_mtu: div_u64((1 << 37) + mtu.get() - 1, mtu) as u32,
        })
    }

    /// The fabric window, 2^-16 packets.
    pub fn fabric_window(&self) -> u32 {
        self.fcwnd
    }

    /// The endpoint window, 2^-16 packets.
    pub fn endpoint_window(&self) -> u32 {
        self.ncwnd
    }

    /// The last RTT sample (the flow's base RTT before one), ns.
    pub fn rtt_ns(&self) -> u32 {
        self.rtt
    }

    /// Losses in a row (saturating at 255).
    pub fn retransmits(&self) -> u8 {
        self.retransmits
    }

    /// The target delay for `hops` forward hops at the current fabric
    /// window, ns: base + hops·hop_scaling + clamp(α·(1/√fcwnd −
    /// 1/√max_window), 0, max_flow_scaling).
    pub fn target_ns(&self, cfg: &SwiftConfig, hops: u8) -> u32 {
        self.target_from(cfg, hops, rsqrt(self.fcwnd))
    }

    /// [`Swift::target_ns`] with 1/√fcwnd in 2^-16 given.
    #[inline(always)]
    fn target_from(&self, cfg: &SwiftConfig, hops: u8, rsqrt_w: u32) -> u32 {
        let r = rsqrt_w.saturating_sub(self.rsqrt_max_less_1 as u32 + 1);
        // α ≤ 2^24 ns, r < 2^25: the product < 2^49, back to ns.
        let fs = ((cfg.flow_scaling_alpha_ns as u64 * r as u64) >> 16).min(cfg.max_flow_scaling_ns as u64);
        cfg.base_delay_ns + hops as u32 * cfg.hop_scaling_ns + fs as u32
    }

    /// The current decision: min(fcwnd, ncwnd) packets, paced one window
    /// per RTT (below one packet: a packet every RTT/cwnd).
    pub fn decision(&self, cfg: &SwiftConfig) -> Decision {
        let w = self.fcwnd.min(self.ncwnd);
        // ≤ 2^32 · 2^16 >> 12 < 2^36: saturate to the window's range.
        let bits = ((w as u64 * cfg.mtu as u64) >> 12).min(u32::MAX as u64) as u32;
        let per =
            BaseRtt::from_nanos(self.rtt_ns().clamp(BaseRtt::MIN_NS, BaseRtt::MAX_NS)).unwrap_or(BaseRtt::SHORTEST);
        Decision::window_paced(Window::from_bits(bits), per)
    }

    /// The fabric window after an ACK of `acked` bytes with fabric delay
    /// `delay` (< 2^24 ns) against `target` (Isekai's
    /// `ComputeAckFabricCongestionWindow`); `inv` is 1/√fcwnd before its
    /// last shift ([`rsqrt_parts`]), from the target's computation.
    #[inline(always)]
    fn fabric(&mut self, cfg: &SwiftConfig, now: u32, acked: u32, delay: u32, target: u32, inv: (u32, i32)) {
        let old = self.fcwnd;
        let rtt = self.rtt;
        let mut w = old;
        if delay < target {
            // ai·acked_packets, over fcwnd at or above one packet; no
            // division. acked/mtu in 2^-16 packets from the reciprocal:
            // acked < 2^24 by ⌈2^37/mtu⌉ ≤ 2^31 < 2^55, >> 21 < 2^34;
            // by ai (2^-16, ≤ 2^20): < 2^54, >> 16 in 2^-16 packets.
            let pkts = (acked.min(1 << 24) as u64 * self.inv_mtu as u64) >> 21;
            let mut inc = (pkts * cfg.ai as u64) >> 16;
            if w >= ONE_PACKET {
                // Over W: times 1/W = t²·2^(2s) in 2^-32, s ∈ [−7, 0] here
                // (W ≥ 1 packet): inc (capped below 2^32, 65 536 packets,
                // past any window) by t²/2^16 (t ≤ 2^16: ≤ 2^16) < 2^48,
                // then shifted right by 32 − 16 − 2s ∈ [16, 30].
                let (t, s) = inv;
                let t2 = ((t as u64 * t as u64) >> 16) as u32;
                let shift = (16 - 2 * s).clamp(16, 30) as u32;
                inc = (inc.min(u32::MAX as u64) * t2 as u64) >> shift;
            }
            w = (w as u64 + inc).min(u32::MAX as u64) as u32;
        } else if now.wrapping_sub(self.f_marker) >= rtt {
            // (delay − target)/delay in 2^-24 (delay ≥ target > 0, delay <
            // 2^24): a proper fraction, inline divides.
            let scale = NonZeroU32::new(delay).map_or(0, |d| fraction_q24(delay - target, d)) as u64;
            let f = ((scale * cfg.beta.to_bits() as u64) >> 24).min(cfg.max_mdf.to_bits() as u64);
            w = cut(w, f as u32);
        }
        self.fcwnd = w.max(cfg.min_window).min(cfg.max_window);
        self.f_marker = marker(now, self.f_marker, rtt, old, self.fcwnd, cfg.min_window);
    }

    /// The endpoint window after an ACK reporting Rx level `level` (the
    /// per-ACK increase of Falcon's BNA generation).
    fn endpoint(&mut self, cfg: &SwiftConfig, now: u32, level: u8) {
        let old = self.ncwnd;
        let mut w = old;
        if level < cfg.target_rx_level {
            w = w.saturating_add(cfg.nic_ai);
        } else if now.wrapping_sub(self.n_marker) >= self.rtt {
            // level ≥ target ≥ 0 and level < 32; level 0 only at target 0,
            // which asks nothing.
            let scale = (level - cfg.target_rx_level) as u64 * RECIP_LEVEL[(level & 31) as usize] as u64;
            let f = ((scale * cfg.nic_beta.to_bits() as u64) >> 24).min(cfg.nic_max_mdf.to_bits() as u64);
            w = cut(w, f as u32);
        }
        self.ncwnd = w.max(cfg.nic_min_window).min(cfg.nic_max_window);
        self.n_marker = marker(now, self.n_marker, self.rtt, old, self.ncwnd, cfg.nic_min_window);
    }
}

impl Controller for Swift {
    type Config = SwiftConfig;

    fn validate(cfg: &SwiftConfig) -> Result<(), Error> {
        cfg.validate()
    }

    fn start(cfg: &SwiftConfig, now: Instant, p: &FlowParams) -> Result<(Self, Decision), Error> {
        if p.algorithm != Algorithm::Swift {
            return Err(Error::NotApplicable);
        }
        let s = Swift::new(cfg, p, now)?;
        Ok((s, s.decision(cfg)))
    }

    fn decision(&self, cfg: &SwiftConfig) -> Decision {
        Swift::decision(self, cfg)
    }

    /// Nothing to do when a packet leaves.
    fn sent(
        &mut self,
        cfg: &SwiftConfig,
        _now: Instant,
        _seq: Seq,
        _len: u32,
        _end: MessageEnd,
    ) -> Result<Decision, Error> {
        Ok(self.decision(cfg))
    }

    /// An ACK with the NICs' sample: without one, or with one no network
    /// makes, `BadSample` and the state unchanged. The RTT sample becomes
    /// the pacing period and the once-per-RTT guard; the fabric window
    /// moves on the fabric delay, the endpoint window on the Rx level. An
    /// ACK that advances the cumulative ACK ends a run of losses.
    // Inlined into the engine's entry, its one caller in a firmware
    // (an out-of-line call there cost 14-23 instructions an ACK).
    #[inline(always)]
    fn ack(&mut self, cfg: &SwiftConfig, now: Instant, ack: &Ack<'_>) -> Result<Decision, Error> {
        let Some(n) = ack.nic else {
            return Err(Error::BadSample);
        };
        let (rtt, delay) = n.delays()?;
        let acked = if ack.cum_ack.after(Seq(self.acked)) {
            let a = ack.cum_ack.0.wrapping_sub(self.acked);
            self.acked = ack.cum_ack.0;
            self.retransmits = 0;
            a
        } else {
            0
        };
        self.rtt = rtt;
        let now = now.as_nanos() as u32;
        let inv = rsqrt_parts(self.fcwnd);
        let target = self.target_from(cfg, n.forward_hops, rsqrt_from_parts(inv));
        self.fabric(cfg, now, acked, delay, target, inv);
        self.endpoint(cfg, now, n.rx_buffer_level);
        Ok(self.decision(cfg))
    }

    /// A loss (timeout or NACK), at most once per RTT: the first in a row
    /// cuts the fabric window by max_mdf, the `retransmit_limit`-th and
    /// later set it to its minimum (Isekai's
    /// `ComputeTimeoutFabricCongestionWindow`).
    fn loss(&mut self, cfg: &SwiftConfig, now: Instant, _first_lost: Seq) -> Result<Decision, Error> {
        let retransmits = self.retransmits.saturating_add(1);
        self.retransmits = retransmits;
        let rtt = self.rtt;
        let now = now.as_nanos() as u32;
        let old = self.fcwnd;
        if now.wrapping_sub(self.f_marker) >= rtt {
            if retransmits == 1 {
                self.fcwnd = cut(old, cfg.max_mdf.to_bits());
            } else if retransmits >= cfg.retransmit_limit {
                self.fcwnd = cfg.min_window;
            }
        }
        self.fcwnd = self.fcwnd.max(cfg.min_window).min(cfg.max_window);
        self.f_marker = marker(now, self.f_marker, rtt, old, self.fcwnd, cfg.min_window);
        Ok(self.decision(cfg))
    }
}

#[cfg(test)]
mod tests;
