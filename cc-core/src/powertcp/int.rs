//! **PowerTCP** with in-band telemetry (Addanki, Michel and Schmid, NSDI
//! 2022, §3 and Algorithm 1): the window law of the θ form, driven by the
//! power each switch's telemetry shows.
//!
//! Per hop, from the sample and the one kept from the ACK before:
//!
//! ```text
//! λ = (Δq + Δtx)/Δts                     the bytes arriving at the port (queue growth + sent)
//! Γ_hop = λ·(q + B·τ) / (B²·τ)           power over the port's equilibrium power
//! Γ_norm = max over hops, Δt its Δts;    floored at 0.01
//! Γ = ((τ − Δt)·Γ + Δt·Γ_norm)/τ         Δt = min(Δt, τ); the first Γ is Γ_norm
//! W = γ·(W_old/Γ + β) + (1 − γ)·W         once per RTT, within [floor, host BDP]
//! ```
//!
//! with pacing W/τ. Weighted by Δt/τ the hop's term needs no division:
//!
//! ```text
//! a = (Δt/τ)·Γ_hop = (Δq + Δtx)/(B·τ) · (1 + q/(B·τ))
//! ```
//!
//! both factors products by the link's constant 2^28/(B·τ) that HPCC++
//! uses ([`crate::hop_walk`]): the hop walk, its checks (stale, expired,
//! counter reset, path change) and the smoothing's shape are HPCC++'s;
//! only the term differs.
//!
//! Read from the paper's Algorithm 1, the authors' Linux module
//! (`powertcp-linux`, `ptcp_norm_power`, `update_window`, `update_old`)
//! and their ns-3 code (`ns3-datacenter`, `UpdateRatePower` without
//! `PowerTCPdelay`); docs/design-notes.md, "PowerTCP readings", states
//! each choice. The ns-3 code's departures are configuration
//! ([`PowerTcpConfig::ns3`]): λ floored at B/2, Γ over a target η =
//! 0.95, β 150 Mb/s.
//!
//! τ is the flow's base RTT ([`FlowParams::base_rtt`]). Units: Γ in
//! 2^-28 (as HPCC++'s U: with Δt ≪ τ each ACK's step is tiny), below 256;
//! windows in 2^-4 byte; times in ns.

use core::num::NonZeroU64;

use bitfield_struct::bitfield;

use super::{WindowLaw, MIN_POWER};
#[cfg(feature = "bench")]
use crate::bench::AckBench;
use crate::codec::{ConfigReader, ConfigWriter};
use crate::controller::Controller;
use crate::error::Error;
use crate::event::{Ack, Algorithm, Decision, FlowParams, MessageEnd, Request, TimerRequest};
use crate::fixmath::{div_u64, mul_frac_q32, mul_shr41, ratio_q24};
use crate::hop_walk::{self, Flow, HopLoad, HopTerm, Interval, Link, Walk};
use crate::hpcc::{per_rtt, Reciprocals};
use crate::params::{param, Gate, Network, Param, ParamInfo, TelemetryKind, Unit};
use crate::reciprocals::NO_SLOT;
#[cfg(feature = "bench")]
use crate::telemetry::CounterWidths;
use crate::telemetry::{tx_bytes_between, HopHistory, HopSample, SIGNATURE_MASK};
#[cfg(feature = "bench")]
use crate::units::LinkSpeed;
use crate::units::{BaseRtt, Fraction, Instant, Seq, Window};
use crate::wire::{Result as WireResult, WireError};

/// Γ's ceiling in 2^-28, exclusive: 256.
pub const POWER28_LIMIT: u64 = 1 << 36;

/// Γ_norm's floor in 2^-28: θ-PowerTCP's 0.01 (655·2^-16).
const MIN_POWER28: u64 = (MIN_POWER as u64) << 12;

/// The local time the history was recorded is kept in units of 2^12 ns,
/// modulo 2^23 units (34.4 s), as HPCC++'s.
const RECORD_SHIFT: u32 = 12;
const RECORD_BITS: u32 = 23;
/// Γ's bits in the high word (Γ < 2^36 in 2^-28).
const POWER_HIGH_BITS: u32 = 4;
const POWER_HIGH_MASK: u32 = (1 << POWER_HIGH_BITS) - 1;

/// What λ, the bytes arriving at a port, is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Arrivals {
    /// The queue's growth plus the bytes sent, λ = Δq/Δt + Δtx/Δt: the
    /// bytes that arrived, as the paper, the Linux module and the authors'
    /// ns-3 code (whose switch counts the bytes each port enqueues) take
    /// it (floored at 0).
    QueueAndSent,
    /// The bytes sent alone, Δtx/Δt: the departure rate, the counter
    /// HPCC's switches write; no PowerTCP source reads it so.
    Sent,
}

/// When the window law runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum UpdateClock {
    /// Once per RTT, when the cumulative ACK reaches the `snd_nxt` of the
    /// last update, W_old the window then (the paper's UPDATEWINDOW).
    PerRtt,
    /// On every ACK whose telemetry gave Γ, W_old the window recorded at
    /// the last RTT's boundary (the Linux module's `cong_control` with
    /// `old_cwnd`).
    PerAck,
}

/// PowerTCP's parameters shared by every flow of an engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct PowerTcpConfig {
    /// γ, the new window's weight (0 < γ ≤ 1).
    pub gamma: Fraction,
    /// N, the flows expected to share a bottleneck: β = BDP/N when
    /// `beta_mbps` is 0 (1 ..= 65 535).
    pub expected_flows: u32,
    /// β as a rate, Mb/s: β = beta_mbps · τ bytes; 0 for BDP/N (≤ 2^24).
    pub beta_mbps: u32,
    /// The window's floor, bytes (1 ..= 65 535).
    pub min_window_bytes: u32,
    /// η: the window law divides Γ by it (0.5 ..= 1; 1 in the paper).
    pub eta: Fraction,
    /// λ's floor as a fraction of the link's speed (0 ..= 1; 0 in the
    /// paper, 0.5 in the ns-3 code).
    pub min_arrival: Fraction,
    /// What λ is made of.
    pub arrivals: Arrivals,
    /// When the window law runs.
    pub clock: UpdateClock,
}

impl PowerTcpConfig {
    /// The paper's PowerTCP, with the Linux module's constants: γ 0.9, β =
    /// BDP/10, λ = Δq/Δt + Δtx/Δt, no target η, the window once per RTT; a
    /// 64-byte window floor.
    pub const fn paper() -> Self {
        PowerTcpConfig {
            gamma: Fraction::preset(9, 10),
            expected_flows: 10,
            beta_mbps: 0,
            min_window_bytes: 64,
            eta: Fraction::ONE,
            min_arrival: Fraction::ZERO,
            arrivals: Arrivals::QueueAndSent,
            clock: UpdateClock::PerRtt,
        }
    }

    /// The authors' Linux module (`powertcp`): the paper's constants with
    /// the window law on every ACK.
    pub const fn linux() -> Self {
        PowerTcpConfig {
            clock: UpdateClock::PerAck,
            ..Self::paper()
        }
    }

    /// The constants of the authors' ns-3 code (`UpdateRatePower`): λ the
    /// arrival rate (their switch counts the bytes each port enqueues),
    /// floored at half the link's speed, Γ over η = 0.95, β 150 Mb/s, γ
    /// 0.9, once per RTT.
    pub const fn ns3() -> Self {
        PowerTcpConfig {
            gamma: Fraction::preset(9, 10),
            expected_flows: 10,
            beta_mbps: 150,
            min_window_bytes: 64,
            eta: Fraction::preset(95, 100),
            min_arrival: Fraction::preset(1, 2),
            arrivals: Arrivals::QueueAndSent,
            clock: UpdateClock::PerRtt,
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
            (!(1..=65_535).contains(&self.min_window_bytes), "min_window_bytes"),
            (self.eta < Fraction::preset(1, 2) || self.eta > Fraction::ONE, "eta"),
            (self.min_arrival > Fraction::ONE, "min_arrival"),
        ]
        .into_iter()
        .find_map(|(bad, name)| bad.then_some(name))
    }

    fn law(&self) -> WindowLaw {
        WindowLaw {
            gamma: self.gamma,
            expected_flows: self.expected_flows,
            beta_mbps: self.beta_mbps,
            min_window_bytes: self.min_window_bytes,
            eta: self.eta,
        }
    }
}

impl Default for PowerTcpConfig {
    fn default() -> Self {
        Self::paper()
    }
}

impl crate::controller::AlgorithmConfig for PowerTcpConfig {
    type Sender<const H: usize> = PowerTcp<H>;

    const DEFAULT: Self = Self::paper();

    const PARAMS: &'static [Param<Self>] = &[
        param!(
            PowerTcpConfig,
            "gamma",
            gamma,
            Unit::Fraction,
            "(0, 1]",
            "the new window's weight",
            fraction
        ),
        param!(
            PowerTcpConfig,
            "expected_flows",
            expected_flows,
            Unit::Count,
            "1 ..= 65535",
            "flows expected at a bottleneck: beta = BDP / expected_flows"
        ),
        param!(
            PowerTcpConfig,
            "beta_mbps",
            beta_mbps,
            Unit::Mbps,
            "0 ..= 16777216",
            "beta as a rate times the base RTT; 0 for BDP / expected_flows"
        ),
        param!(
            PowerTcpConfig,
            "min_window_bytes",
            min_window_bytes,
            Unit::Bytes,
            "1 ..= 65535",
            "the window's floor"
        ),
        param!(
            PowerTcpConfig,
            "eta",
            eta,
            Unit::Fraction,
            "[0.5, 1]",
            "the target the window law divides power by (1 in the paper, 0.95 in the ns-3 code)",
            fraction
        ),
        param!(
            PowerTcpConfig,
            "min_arrival",
            min_arrival,
            Unit::Fraction,
            "[0, 1]",
            "the arrival rate's floor, a fraction of the link's speed (0.5 in the ns-3 code)",
            fraction
        ),
        Param {
            info: ParamInfo {
                name: "arrivals",
                field: "arrivals",
                unit: Unit::Choice(&["queue_and_sent", "sent"]),
                range: "queue_and_sent or sent",
                doc: "the arrival rate: queue growth plus bytes sent (the paper's) or bytes sent (the ns-3 code's)",
                follows_payload: false,
                preset: false,
            },
            get: |c| c.arrivals as u32,
            set: |c, v| c.arrivals = if v == 0 { Arrivals::QueueAndSent } else { Arrivals::Sent },
        },
        Param {
            info: ParamInfo {
                name: "clock",
                field: "clock",
                unit: Unit::Choice(&["per_rtt", "per_ack"]),
                range: "per_rtt or per_ack",
                doc: "when the window law runs: once per RTT (the paper's) or on every ACK (the Linux module's)",
                follows_payload: false,
                preset: false,
            },
            get: |c| c.clock as u32,
            set: |c, v| {
                c.clock = if v == 0 {
                    UpdateClock::PerRtt
                } else {
                    UpdateClock::PerAck
                }
            },
        },
    ];

    /// A window from in-band telemetry: the data collects it, the ACK
    /// echoes it; no ECN.
    const NETWORK: Network = Network {
        telemetry: TelemetryKind::Stack,
        ..Network::new(Gate::Window)
    };

    #[cfg(feature = "bench")]
    /// Five hops of telemetry on ACKs 4.1 µs apart (`bench_ack` in this module).
    const ACK_BENCH: Option<AckBench> = Some(AckBench {
        name: "powertcp-ack-5",
        row: "PowerTCP ACK, 5 hops",
        ack: bench_ack,
        interval_ns: BENCH_DTS,
        targets: Some((1050, 820)),
        state_bytes: Some(96),
    });

    fn validate(&self) -> Result<(), Error> {
        PowerTcpConfig::validate(self)
    }

    fn invalid_field(&self) -> Option<&'static str> {
        PowerTcpConfig::invalid_field(self)
    }

    /// gamma 4 | expected flows 4 | beta Mb/s 4 | min window 4 | eta 4 |
    /// min arrival 4 | arrivals 1 (0 queue and sent, 1 sent) | clock 1 (0
    /// per RTT, 1 per ACK).
    fn encode(&self, w: &mut ConfigWriter<'_, '_>) -> WireResult<()> {
        for v in [
            self.gamma.to_bits(),
            self.expected_flows,
            self.beta_mbps,
            self.min_window_bytes,
            self.eta.to_bits(),
            self.min_arrival.to_bits(),
        ] {
            w.u32(v)?;
        }
        w.u8(self.arrivals as u8)?;
        w.u8(self.clock as u8)
    }

    fn decode(r: &mut ConfigReader<'_, '_>) -> WireResult<Self> {
        Ok(PowerTcpConfig {
            gamma: r.fraction()?,
            expected_flows: r.u32()?,
            beta_mbps: r.u32()?,
            min_window_bytes: r.u32()?,
            eta: r.fraction()?,
            min_arrival: r.fraction()?,
            arrivals: match r.u8()? {
                0 => Arrivals::QueueAndSent,
                1 => Arrivals::Sent,
                _ => return Err(WireError::UnknownType),
            },
            clock: match r.u8()? {
                0 => UpdateClock::PerRtt,
                1 => UpdateClock::PerAck,
                _ => return Err(WireError::UnknownType),
            },
        })
    }

    /// The window within [its floor, max(floor, the host's BDP)], paced
    /// one window per base RTT; no timer, no request.
    fn check_decision(&self, p: &FlowParams, d: &Decision) -> Result<(), &'static str> {
        let floor = (self.min_window_bytes as u64) << Window::FRAC_BITS;
        let ceiling = super::host_bdp(p).max(floor);
        let w = d.window.to_bits() as u64;
        if w < floor {
            return Err("PowerTCP window below its floor");
        }
        if w > ceiling {
            return Err("PowerTCP window above the host's BDP");
        }
        if d.pacing.bytes != d.window || d.pacing.per != p.base_rtt {
            return Err("PowerTCP not paced one window per base RTT");
        }
        if d.timer != TimerRequest::Keep || d.request != Request::None {
            return Err("PowerTCP asked for a timer or a request");
        }
        Ok(())
    }
}

#[cfg(feature = "bench")]
/// The benchmark's timestamps' interval, ns: the ACKs' spacing too.
const BENCH_DTS: u32 = 4096;
#[cfg(feature = "bench")]
/// ACKs in the benchmark's cycle of queue lengths and loads.
const BENCH_CYCLE: usize = 16;
#[cfg(feature = "bench")]
/// Bytes each hop sends in an interval, over the cycle (4096 ns at 100
/// Gb/s is 51 200 bytes): the third hop near line rate while its queue
/// builds, then below it while the queue drains; the fifth near line rate
/// throughout.
const BENCH_SENT: [[u32; BENCH_CYCLE]; 5] = {
    const BUSY: u32 = 49_152;
    const IDLE: u32 = 16_384;
    [
        [32_768; BENCH_CYCLE],
        [32_768; BENCH_CYCLE],
        [
            BUSY, BUSY, BUSY, BUSY, BUSY, BUSY, BUSY, BUSY, IDLE, IDLE, IDLE, IDLE, IDLE, IDLE, IDLE, IDLE,
        ],
        [32_768; BENCH_CYCLE],
        [50_688; BENCH_CYCLE],
    ]
};
#[cfg(feature = "bench")]
/// The third hop's queue over the cycle, bytes.
const BENCH_QUEUE: [u32; BENCH_CYCLE] = [
    0, 3000, 9000, 18_000, 30_000, 45_000, 60_000, 72_000, 80_000, 70_000, 52_000, 36_000, 20_000, 9000, 2000, 0,
];

#[cfg(feature = "bench")]
/// The firmware benchmark's ACK `n` (from 1): five hops of 100 Gb/s
/// telemetry with 32-bit byte counters and timestamps, 4096 ns after ACK
/// n − 1's, written into `hops`; each ACK passes the last update's
/// `snd_nxt`, so each runs the window law.
pub fn bench_ack(n: u32, hops: &mut [HopSample; 5]) -> Ack<'_> {
    let (cycles, at) = (n / BENCH_CYCLE as u32, n as usize % BENCH_CYCLE);
    for (i, (s, sent)) in hops.iter_mut().zip(&BENCH_SENT).enumerate() {
        let per_cycle: u32 = sent.iter().sum();
        let partial: u32 = sent[..at].iter().sum();
        *s = HopSample {
            ts: n.wrapping_mul(BENCH_DTS),
            tx: cycles.wrapping_mul(per_cycle).wrapping_add(partial),
            qlen_bytes: if i == 2 { BENCH_QUEUE[at] } else { i as u32 * 1000 },
            sojourn_ns: 0,
            bandwidth: LinkSpeed::from_gbps(100),
            id: i as u32 + 1,
            widths: CounterWidths::FULL,
            tx_utilization: crate::telemetry::TxUtilization::NONE,
        };
    }
    Ack {
        telemetry: hops,
        ..Ack::new(Seq(n.wrapping_mul(1000)), Seq(n.wrapping_mul(1000).wrapping_add(500)))
    }
}

/// The path the history belongs to, packed in one word.
#[bitfield(u32, defmt = cfg(feature = "defmt"))]
#[derive(PartialEq, Eq)]
struct PathStatus {
    /// 20-bit signature of the path.
    #[bits(20)]
    sig: u32,
    /// Hops in the history (≤ 15).
    #[bits(4)]
    hops: u8,
    /// Whether the history holds a sample.
    has_history: bool,
    #[bits(7)]
    __: u8,
}

/// One PowerTCP flow at its sender, with `H` hops of history: 36 + 12·H
/// bytes (96 at H = 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct PowerTcp<const H: usize> {
    /// Γ in 2^-28 (0: none yet) as (low, high) words; the high word's low
    /// 4 bits are Γ's, its top 23 bits when the history was recorded, in
    /// 2^12 ns modulo 2^23.
    power: [u32; 2],
    /// The window, 2^-4 byte.
    w: u32,
    /// W_old for the per-ACK clock: the window at the last RTT boundary.
    w_old: u32,
    /// The host's BDP, the window's ceiling, 2^-4 byte.
    bdp: u32,
    /// The next RTT boundary: when the cumulative ACK reaches this
    /// `snd_nxt`.
    mark: u32,
    /// τ, the base RTT, ns.
    tau: u32,
    /// round(2^38/τ).
    per_rtt: u32,
    status: PathStatus,
    hops: [HopHistory; H],
}

/// PowerTCP's per-hop term for the shared walk.
struct Term<'a> {
    cfg: &'a PowerTcpConfig,
}

/// The shared walk with PowerTCP's term, out of line: the hop loop then
/// has the registers to itself, where inlined into the ACK's frame it
/// spilled (`nic-firmware/scripts/profile.sh powertcp-ack-5`: 36 fewer
/// instructions on rv32imac, 59 on rv64imac+Zbb, for the one call). The
/// HPCC++ paths keep it inlined: out of line they measured slower.
#[inline(never)]
fn walk<const H: usize>(term: &Term<'_>, flow: &Flow, hops: &[HopSample], history: &[HopHistory; H]) -> Walk {
    hop_walk::walk(term, flow, hops, history)
}

/// The link speeds whose reciprocals a flow multiplies by: the compact
/// telemetry format's seven (25 Gb/s to 1.6 Tb/s); any other speed takes
/// one division a stack (the same value, see [`Reciprocals`]).
static SPEEDS: Reciprocals = Reciprocals::compact();

impl Term<'_> {
    /// The bytes that arrived at the port in the interval, (Δq + Δtx)^+ or
    /// Δtx, from what it sent (`sent`, bytes, < 2^31 by `tx_bytes`), with
    /// Δtx + q capped at 2^32 − 1 before q_prev comes off: the same value
    /// in 64-bit words (sent + q < 2^33) and in 32-bit words, saturating,
    /// each core's shortest form.
    #[inline(always)]
    fn arrived(&self, s: &HopSample, h: &HopHistory, sent: u64) -> u64 {
        #[cfg(target_pointer_width = "64")]
        {
            match self.cfg.arrivals {
                Arrivals::QueueAndSent => (sent + s.qlen_bytes as u64)
                    .min(u32::MAX as u64)
                    .saturating_sub(h.queue as u64),
                Arrivals::Sent => sent.min(u32::MAX as u64),
            }
        }
        #[cfg(not(target_pointer_width = "64"))]
        {
            let sent = sent.min(u32::MAX as u64) as u32;
            let arrived = match self.cfg.arrivals {
                Arrivals::QueueAndSent => sent.saturating_add(s.qlen_bytes).saturating_sub(h.queue),
                Arrivals::Sent => sent,
            };
            arrived as u64
        }
    }
}

impl HopTerm for Term<'_> {
    /// The hop's power weighted by f = Δt/τ, in 2^-28:
    ///
    /// ```text
    /// x = f·λ/B = arrived · 2^28/(B·τ)           2^-28: bytes · Link::k / 2^14
    ///   ≥ f·min_arrival                          the ns-3 code's floor
    ///   or f·util + Δq·2^28/(B·τ)                a switch-reported txRate/B (INT-MD)
    /// v = 1 + q/(B·τ)                            2^-20: 2^20 + q · k / 2^22
    /// a = x·v                                    capped at f·256
    /// ```
    /// (k is 2^28/BDP in 2^-22 units per 2^-8 byte, so bytes·k/2^14 is in
    /// 2^-28 and bytes·k/2^22 in 2^-20.) Ranges (0 < Δts < τ ≤ 2^20):
    /// arrived and q below 2^32 bytes, k below 2^32: each product one 32 ×
    /// 32 → 64 multiply; x capped at 2^36 (Γ < 256 with v ≥ 1), v at 2^28
    /// (a queue of 255 BDPs): x·v < 2^64 ([`mul_shr41`]'s 41-bit x). Each
    /// rounds down by less than one unit of its scale.
    #[inline(always)]
    fn load(&self, flow: &Flow, link: &Link, s: &HopSample, h: &HopHistory) -> HopLoad {
        let (dts, f) = match hop_walk::interval(flow, link, s, h) {
            Interval::Stale => return HopLoad::Stale,
            Interval::Skip => return HopLoad::Skip,
            Interval::Slow(dts) => return self.slow(flow, s, h, dts),
            Interval::Fast { dts, f } => (dts, f),
        };
        let k = link.k as u64;
        let x = match s.tx_utilization.get() {
            Some(util) => {
                let grown = match self.cfg.arrivals {
                    Arrivals::QueueAndSent => s.qlen_bytes.saturating_sub(h.queue),
                    Arrivals::Sent => 0,
                };
                ((util.to_bits() as u64 * f as u64) >> (32 + 24 - 28)) + ((grown as u64 * k) >> 14)
            }
            None => {
                let Some(sent) = hop_walk::tx_bytes(link, s, h, dts) else {
                    return HopLoad::Skip;
                };
                (self.arrived(s, h, sent) * k) >> 14
            }
        };
        let floor = self.cfg.min_arrival.to_bits();
        let x = if floor == 0 {
            x
        } else {
            x.max((floor as u64 * f as u64) >> (32 + 24 - 28))
        };
        let x = x.min(POWER28_LIMIT);
        let v = (1 << 20) + ((s.qlen_bytes as u64 * k) >> 22).min((1 << 28) - (1 << 20)) as u32;
        HopLoad::Load {
            a: mul_shr41(x, v, 20).min((f as u64) << 4),
            tau: dts,
        }
    }

    #[inline(always)]
    fn reciprocals(&self) -> &Reciprocals {
        &SPEEDS
    }
}

impl Term<'_> {
    /// Where the products do not serve: Δts ≥ τ (Δt = τ, and a = Γ_hop
    /// itself), or a BDP of 1 KiB or less. Γ_hop by its two quotients
    /// ([`ratio_q24`], 2^-24, rounded down):
    ///
    /// ```text
    /// r = arrived · 8000 / (Δts · B)      λ/B; arrived < 2^32 → num < 2^45
    ///     or the reported tx utilization (+ Δq's share)
    /// y = q · 8000 / (B · τ)              q < 2^32 → num < 2^45
    /// Γ_hop = r·(1 + y)                   r, y capped below 2^32: < 2^64
    /// ```
    #[cold]
    #[inline(never)]
    fn slow(&self, flow: &Flow, s: &HopSample, h: &HopHistory, dts: u32) -> HopLoad {
        let b = s.bandwidth.as_mbps() as u64;
        let t = flow.t as u64;
        // Denominators ≥ 100 · 100 > 0 (plausible B, valid τ, dts > 0).
        let r = match s.tx_utilization.get() {
            Some(util) => {
                let grown = match self.cfg.arrivals {
                    Arrivals::QueueAndSent => s.qlen_bytes.saturating_sub(h.queue) as u64,
                    Arrivals::Sent => 0,
                };
                util.to_bits() as u64 + ratio_q24(grown * 8000, dts as u64 * b).unwrap_or(0)
            }
            None => {
                let Some(sent) = tx_bytes_between(s.tx, h.tx, s.widths, dts, b as u32) else {
                    return HopLoad::Skip;
                };
                ratio_q24(self.arrived(s, h, sent) * 8000, dts as u64 * b).unwrap_or(0)
            }
        };
        let r = r.max(self.cfg.min_arrival.to_bits() as u64).min(u32::MAX as u64);
        let y = ratio_q24(s.qlen_bytes as u64 * 8000, b * t)
            .unwrap_or(0)
            .min(u32::MAX as u64);
        let power = ((r + ((r * y) >> 24)) << 4).min(POWER28_LIMIT);
        if dts >= flow.t {
            HopLoad::Load { a: power, tau: flow.t }
        } else {
            HopLoad::Load {
                a: mul_frac_q32(power, flow.fraction(dts)),
                tau: dts,
            }
        }
    }
}

/// What [`PowerTcp::measure`] found.
enum Measured {
    /// The sample was recorded; no Γ from it (first sample, new path,
    /// expired history, or no hop measured).
    Recorded,
    /// Γ, 2^-28.
    Power(u64),
}

impl<const H: usize> PowerTcp<H> {
    /// A flow at the host's BDP, no sample yet.
    pub fn new(cfg: &PowerTcpConfig, p: &FlowParams, now: Instant) -> Result<Self, Error> {
        cfg.validate()?;
        if !p.line_rate.is_plausible() {
            return Err(Error::InvalidParams);
        }
        // ≤ 2^30 − 1.
        let bdp = super::host_bdp(p) as u32;
        let floor = cfg.min_window_bytes << Window::FRAC_BITS;
        let mut f = PowerTcp {
            power: [0, 0],
            w: bdp.max(floor),
            w_old: bdp.max(floor),
            bdp,
            mark: p.start_seq.0,
            tau: p.base_rtt.as_nanos(),
            per_rtt: per_rtt(p.base_rtt),
            status: PathStatus::new(),
            hops: [HopHistory::default(); H],
        };
        f.set_recorded_at(now);
        Ok(f)
    }

    /// The window, 2^-4 byte.
    pub fn window_bits(&self) -> u32 {
        self.w
    }

    /// The host's BDP, 2^-4 byte.
    pub fn bdp_bits(&self) -> u32 {
        self.bdp
    }

    /// τ, ns.
    pub fn tau_ns(&self) -> u32 {
        self.tau
    }

    /// Γ in 2^-28 (0: none yet).
    pub fn power_q28(&self) -> u64 {
        self.power[0] as u64 | ((self.power[1] & POWER_HIGH_MASK) as u64) << 32
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

    fn set_power(&mut self, p: u64) {
        let p = p.min(POWER28_LIMIT - 1);
        self.power = [
            p as u32,
            (self.power[1] & !POWER_HIGH_MASK) | ((p >> 32) as u32 & POWER_HIGH_MASK),
        ];
    }

    fn set_recorded_at(&mut self, now: Instant) {
        let units = (now.as_nanos() >> RECORD_SHIFT) as u32 & ((1 << RECORD_BITS) - 1);
        self.power[1] = (self.power[1] & POWER_HIGH_MASK) | units << (32 - RECORD_BITS);
    }

    /// Local ns since the history was recorded, modulo 2^35 ns, to 4.096 µs.
    fn elapsed_since_record(&self, now: Instant) -> u64 {
        let then = self.power[1] >> (32 - RECORD_BITS);
        let units = ((now.as_nanos() >> RECORD_SHIFT) as u32).wrapping_sub(then) & ((1 << RECORD_BITS) - 1);
        (units as u64) << RECORD_SHIFT
    }

    /// Sets the window and Γ (2^-28; 0 for none), e.g. to restore a
    /// checkpoint; refuses a window outside [floor, max(floor, BDP)] and a
    /// Γ below Γ_norm's floor (other than 0) or of 256 or more.
    pub fn restore(&mut self, cfg: &PowerTcpConfig, w: u32, power_q28: u64) -> Result<(), Error> {
        let floor = cfg.min_window_bytes << Window::FRAC_BITS;
        let power_ok = power_q28 == 0 || (MIN_POWER28..POWER28_LIMIT).contains(&power_q28);
        if w < floor || w > self.bdp.max(floor) || !power_ok {
            return Err(Error::InvalidParams);
        }
        self.w = w;
        self.w_old = w;
        self.set_power(power_q28);
        Ok(())
    }

    /// The current decision: the window, paced one window per τ.
    pub fn decision(&self) -> Decision {
        let per = BaseRtt::from_nanos(self.tau).unwrap_or(BaseRtt::SHORTEST);
        Decision::window_paced(Window::from_bits(self.w), per)
    }

    /// Stores the stack as the history of a new (or restarted) path.
    #[inline(never)]
    fn record(&mut self, now: Instant, hops: &[HopSample], tracked: u16, sig: u32) {
        self.store(now, hops, tracked);
        self.status.set_sig(sig & SIGNATURE_MASK);
        // The stack's length was checked (≤ 15).
        self.status.set_hops((hops.len() & 0xF) as u8);
        self.status.set_has_history(true);
    }

    /// Stores the stack's samples as the history of the path it holds.
    #[inline(never)]
    fn store(&mut self, now: Instant, hops: &[HopSample], tracked: u16) {
        self.set_recorded_at(now);
        hop_walk::store(&mut self.hops, hops, tracked, |s| HopHistory {
            ts: s.ts,
            tx: s.tx,
            queue: s.qlen_bytes,
        });
    }

    /// NORMPOWER (Algorithm 1): Γ from a telemetry stack, smoothed over τ;
    /// the stack becomes the history.
    #[inline(always)]
    fn measure(&mut self, cfg: &PowerTcpConfig, now: Instant, hops: &[HopSample]) -> Result<Measured, Error> {
        let (tracked, sig) = hop_walk::check_stack::<H>(hops, 0)?;
        if !self.status.has_history() || self.status.sig() != sig || self.status.hops() as usize != hops.len() {
            self.record(now, hops, tracked, sig);
            return Ok(Measured::Recorded);
        }
        let flow = Flow {
            t: self.tau,
            per_rtt: self.per_rtt,
            rtt_slot: NO_SLOT,
            elapsed_ns: self.elapsed_since_record(now),
        };
        let term = Term { cfg };
        let walked = if hops.len() <= H {
            walk(&term, &flow, hops, &self.hops)
        } else {
            hop_walk::walk_tracked(&term, &flow, hops, &self.hops, tracked)
        };
        let busiest = match walked {
            Walk::Stale => return Err(Error::StaleTelemetry),
            Walk::Expired => {
                self.record(now, hops, tracked, sig);
                return Ok(Measured::Recorded);
            }
            Walk::Done(b) => b,
        };
        self.store(now, hops, tracked);
        if !busiest.measured() {
            return Ok(Measured::Recorded);
        }
        let (a, tau) = busiest.load();
        let full = tau >= flow.t;
        // f = Δt/τ; Γ_norm's floor 0.01, weighted by f.
        let f = if full { u32::MAX } else { flow.fraction(tau) };
        let a = if full {
            a.max(MIN_POWER28)
        } else {
            a.max(mul_frac_q32(MIN_POWER28, f))
        };
        let kept = self.power_q28();
        let power = if full {
            a
        } else if kept == 0 {
            // The first Γ is Γ_norm = a/f (one division a path): a < 2^36,
            // a·2^27 < 2^63; f ≥ 1.
            let f = NonZeroU64::new(f as u64).unwrap_or(NonZeroU64::MIN);
            div_u64(a << 27, f) << 5
        } else {
            // Γ·(1 − f) + a, rounded to nearest (never above Γ).
            kept - mul_frac_q32(kept, f) + a
        };
        let power = power.clamp(MIN_POWER28, POWER28_LIMIT - 1);
        self.set_power(power);
        Ok(Measured::Power(power))
    }
}

impl<const H: usize> Controller for PowerTcp<H> {
    type Config = PowerTcpConfig;

    fn validate(cfg: &PowerTcpConfig) -> Result<(), Error> {
        cfg.validate()
    }

    fn start(cfg: &PowerTcpConfig, now: Instant, p: &FlowParams) -> Result<(Self, Decision), Error> {
        if p.algorithm != Algorithm::PowerTcp {
            return Err(Error::NotApplicable);
        }
        let t = PowerTcp::new(cfg, p, now)?;
        Ok((t, t.decision()))
    }

    fn decision(&self, _cfg: &PowerTcpConfig) -> Decision {
        PowerTcp::decision(self)
    }

    /// A loss changes nothing: PowerTCP reacts to power alone (as the
    /// θ form, [`super::ThetaPowerTcp`]).
    fn loss(&mut self, _cfg: &PowerTcpConfig, _now: Instant, _first_lost: Seq) -> Result<Decision, Error> {
        Ok(self.decision())
    }

    fn sent(
        &mut self,
        _cfg: &PowerTcpConfig,
        _now: Instant,
        _seq: Seq,
        _len: u32,
        _end: MessageEnd,
    ) -> Result<Decision, Error> {
        Ok(self.decision())
    }

    /// An ACK with its echoed telemetry. Without any the window stands; a
    /// stack of more than 15 hops is refused (`TooManyHops`), a stale one
    /// (`StaleTelemetry`), each with the state unchanged. Γ is updated
    /// from every usable stack; the window once per RTT (when the
    /// cumulative ACK reaches the last update's `snd_nxt`) or on every
    /// ACK with the per-ACK clock.
    #[inline(always)]
    fn ack(&mut self, cfg: &PowerTcpConfig, now: Instant, ack: &Ack<'_>) -> Result<Decision, Error> {
        if ack.telemetry.is_empty() {
            return Ok(self.decision());
        }
        let measured = self.measure(cfg, now, ack.telemetry)?;
        let reached = ack.cum_ack.at_or_after(Seq(self.mark));
        let Measured::Power(power) = measured else {
            return Ok(self.decision());
        };
        let law = cfg.law();
        match cfg.clock {
            UpdateClock::PerRtt => {
                if reached {
                    self.w = law.next(self.w, self.w, self.bdp, power, 28, self.tau);
                    self.mark = ack.snd_nxt.0;
                }
            }
            UpdateClock::PerAck => {
                self.w = law.next(self.w_old, self.w, self.bdp, power, 28, self.tau);
                if reached {
                    self.w_old = self.w;
                    self.mark = ack.snd_nxt.0;
                }
            }
        }
        Ok(self.decision())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::CounterWidths;
    use crate::units::LinkSpeed;

    /// 100 Gb/s, τ = 10 µs: a BDP of 125 000 bytes.
    fn flow(cfg: &PowerTcpConfig) -> PowerTcp<5> {
        let p = FlowParams {
            algorithm: Algorithm::PowerTcp,
            base_rtt: BaseRtt::from_nanos(10_000).unwrap(),
            line_rate: LinkSpeed::from_gbps(100),
            start_seq: Seq(0),
        };
        PowerTcp::new(cfg, &p, Instant::ZERO).unwrap()
    }

    fn hop(ts: u32, tx: u32, qlen: u32) -> HopSample {
        HopSample {
            ts,
            tx,
            qlen_bytes: qlen,
            bandwidth: LinkSpeed::from_gbps(100),
            id: 7,
            widths: CounterWidths::FULL,
            ..HopSample::default()
        }
    }

    fn ack(cum: u32, hops: &[HopSample]) -> Ack<'_> {
        Ack {
            telemetry: hops,
            ..Ack::new(Seq(cum), Seq(cum + 100_000))
        }
    }

    fn power(f: &PowerTcp<5>) -> f64 {
        f.power_q28() as f64 / (1u64 << 28) as f64
    }

    /// Worked by hand: a port sending at line rate (12 500 bytes in 1 µs at
    /// 100 Gb/s) with a steady queue of one BDP has λ = B and Γ = λ·(q +
    /// B·τ)/(B²·τ) = 2; the first Γ is Γ_norm itself, and the window law
    /// gives W = 0.9·(BDP/2 + BDP/10) + 0.1·BDP = 0.64 BDP = 80 000 bytes.
    #[test]
    fn line_rate_at_one_bdp_of_queue_is_a_power_of_two() {
        let cfg = PowerTcpConfig::paper();
        let mut f = flow(&cfg);
        assert_eq!(f.window_bits(), 125_000 << 4);
        f.ack(&cfg, Instant::from_nanos(1_000), &ack(0, &[hop(5_000, 0, 125_000)]))
            .unwrap();
        assert_eq!(f.power_q28(), 0, "the first stack is only recorded");
        let d = f
            .ack(
                &cfg,
                Instant::from_nanos(2_000),
                &ack(1, &[hop(6_000, 12_500, 125_000)]),
            )
            .unwrap();
        assert!((power(&f) - 2.0).abs() < 1e-4, "Γ {}", power(&f));
        let w = d.window.to_bits() as f64 / 16.0;
        assert!((w - 80_000.0).abs() < 10.0, "W {w}");
    }

    /// A queue draining as fast as the port sends has no arrivals: Γ_norm
    /// is the floor, 0.01 (smoothed in with weight Δt/τ = 0.1 from Γ = 2:
    /// 0.9·2 + 0.1·0.01 = 1.801); read as the bytes sent alone (`sent`)
    /// the same port shows λ = B: Γ_norm = 1.5 at half a BDP.
    #[test]
    fn a_draining_queue_shows_no_arrivals_but_the_sent_bytes() {
        for (cfg, expected) in [
            (PowerTcpConfig::paper(), 0.9 * 2.0 + 0.1 * 0.01),
            (
                PowerTcpConfig {
                    arrivals: Arrivals::Sent,
                    ..PowerTcpConfig::paper()
                },
                0.9 * 2.0 + 0.1 * 1.5,
            ),
        ] {
            let mut f = flow(&cfg);
            let stacks = [
                hop(5_000, 0, 125_000),
                hop(6_000, 12_500, 125_000),
                hop(7_000, 25_000, 112_500),
            ];
            let mut got = 0.0;
            for (i, s) in stacks.iter().enumerate() {
                let mut q = *s;
                if i == 2 {
                    // Half a BDP for the second reading's queue term.
                    q.qlen_bytes = if cfg.arrivals == Arrivals::Sent {
                        62_500
                    } else {
                        112_500
                    };
                }
                f.ack(&cfg, Instant::from_nanos(1_000 * (i as u64 + 1)), &ack(i as u32, &[q]))
                    .unwrap();
                got = power(&f);
            }
            assert!((got - expected).abs() < 1e-3, "Γ {got} against {expected}");
        }
    }

    /// The busiest of several hops drives Γ: a second hop at half the
    /// load leaves Γ at the first's 2.
    #[test]
    fn the_busiest_hop_drives_power() {
        let cfg = PowerTcpConfig::paper();
        let mut f = flow(&cfg);
        let quiet = |ts, tx| HopSample {
            id: 8,
            ..hop(ts, tx, 0)
        };
        f.ack(
            &cfg,
            Instant::from_nanos(1_000),
            &ack(0, &[quiet(100, 0), hop(5_000, 0, 125_000)]),
        )
        .unwrap();
        f.ack(
            &cfg,
            Instant::from_nanos(2_000),
            &ack(1, &[quiet(1_100, 6_250), hop(6_000, 12_500, 125_000)]),
        )
        .unwrap();
        assert!((power(&f) - 2.0).abs() < 1e-4, "Γ {}", power(&f));
    }

    /// Bad stacks: more than 15 hops and an older sample are refused with
    /// nothing changed; a counter that went backwards more than a link
    /// could send (a reset) skips the hop; a new path restarts the history.
    #[test]
    fn bad_stacks_are_refused_or_skipped() {
        let cfg = PowerTcpConfig::paper();
        let mut f = flow(&cfg);
        let long = [hop(0, 0, 0); 16];
        assert_eq!(f.ack(&cfg, Instant::ZERO, &ack(0, &long)), Err(Error::TooManyHops));
        f.ack(&cfg, Instant::from_nanos(1_000), &ack(0, &[hop(5_000, 0, 125_000)]))
            .unwrap();
        f.ack(
            &cfg,
            Instant::from_nanos(2_000),
            &ack(1, &[hop(6_000, 12_500, 125_000)]),
        )
        .unwrap();
        let before = f;
        assert_eq!(
            f.ack(&cfg, Instant::from_nanos(3_000), &ack(2, &[hop(5_500, 20_000, 0)])),
            Err(Error::StaleTelemetry)
        );
        assert_eq!(f, before);
        // The counter 2^31 bytes ahead in 1 µs: a reset, the hop skipped.
        f.ack(
            &cfg,
            Instant::from_nanos(3_000),
            &ack(2, &[hop(7_000, 1 << 31, 125_000)]),
        )
        .unwrap();
        assert_eq!(f.power_q28(), before.power_q28());
        // Another switch: recorded, Γ kept.
        let other = HopSample {
            id: 99,
            ..hop(8_000, 0, 0)
        };
        f.ack(&cfg, Instant::from_nanos(4_000), &ack(3, &[other])).unwrap();
        assert_eq!(f.power_q28(), before.power_q28());
        assert_eq!(f.history()[0].ts, 8_000);
        // No telemetry: the window stands.
        let d = f.ack(&cfg, Instant::from_nanos(5_000), &ack(4, &[])).unwrap();
        assert_eq!(d.window.to_bits(), f.window_bits());
    }

    #[test]
    fn restore_refuses_out_of_range() {
        let cfg = PowerTcpConfig::paper();
        let mut f = flow(&cfg);
        assert!(f.restore(&cfg, 63 << 4, 0).is_err());
        assert!(f.restore(&cfg, (125_000 << 4) + 1, 0).is_err());
        assert!(f.restore(&cfg, 1000 << 4, MIN_POWER28 - 1).is_err());
        assert!(f.restore(&cfg, 1000 << 4, POWER28_LIMIT).is_err());
        assert!(f.restore(&cfg, 1000 << 4, 1 << 28).is_ok());
        assert_eq!(f.window_bits(), 1000 << 4);
    }

    #[test]
    fn presets_validate_and_ranges_hold() {
        for c in [PowerTcpConfig::paper(), PowerTcpConfig::linux(), PowerTcpConfig::ns3()] {
            assert_eq!(c.validate(), Ok(()));
        }
        let bad = PowerTcpConfig {
            eta: Fraction::preset(1, 4),
            ..PowerTcpConfig::paper()
        };
        assert_eq!(bad.invalid_field(), Some("eta"));
    }
}
