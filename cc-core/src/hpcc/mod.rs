//! HPCC++: in-band-telemetry driven congestion control.
//!
//! Implements draft-miao-iccrg-hpccplus (October 2022):
//!
//! | part                        | draft                         | here                          |
//! |-----------------------------|-------------------------------|-------------------------------|
//! | MeasureInflight             | §4.2 Figure 4, lines 1-10     | [`HpccCore::measure_inflight`] |
//! | ComputeWind                 | §4.2 Figure 5, lines 11-20    | [`HpccCore::compute_wind`]     |
//! | NewAck, R = W/T             | §4.2 Figure 6, lines 21-27    | [`HpccSender::ack`]            |
//! | W_ai = W_init·(1−eta)/N     | §5                            | [`AdditiveIncrease`]           |
//! | probe mode                  | §6.2.1 item 2, §7.1           | [`TelemetrySource::Probe`], [`HpccReceiver::probe_request`] |
//! | Rx-HPCC NewINT              | §6.3.2 Figure 8, lines 28-34  | [`HpccReceiver::rx_telemetry`] |
//! | sojourn time for QoS queues | §9.3                          | [`QueueSignal::Sojourn`]       |
//!
//! Sender states:
//!
//! ```text
//!   start ──▶ [no history] ──first ACK: record L, lastUpdateSeq = snd_nxt──▶ [tracking]
//!                  ▲                                                          │
//!                  └────── path changed (hop count / identity / speed) ◀──────┘
//!                          (record L only; W unchanged)
//! ```
//!
//! Units: W, Wc, W_ai, W_min, W_init in [`Window`] (bytes, 1/16 byte);
//! U, u' in [`crate::units::Utilization`] (2^-24); eta in [`Fraction`] (2^-24); T in
//! [`BaseRtt`] (ns); B in [`LinkSpeed`] (Mb/s); R in [`Rate`] (bit/s).

mod core;
mod receiver;

mod sender;

pub use self::core::{HpccCore, HpccSnapshot, Measured};
pub use self::receiver::HpccReceiver;
pub use self::sender::HpccSender;
pub use crate::reciprocals::{per_byte, per_rtt, Reciprocals, MAX_RTTS, MAX_SPEEDS};

use crate::codec::{ConfigReader, ConfigWriter};
#[cfg(doc)]
use crate::controller::Controller;
use crate::error::Error;
use crate::event::{Decision, FlowParams};
use crate::params::{Gate, Network, TelemetryKind};
use crate::units::{BaseRtt, Fraction, LinkSpeed, Rate, Window};
use crate::wire::{Result as WireResult, WireError};

/// How W_ai, the additive-increase step, is chosen (HPCC++ §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum AdditiveIncrease {
    /// The §5 rule of thumb W_ai = W_init·(1−eta)/N for N expected
    /// concurrent flows on a link. A receiver report replaces N.
    PerFlows {
        /// Expected number of concurrent flows N, at least 1.
        n: u16,
    },
    /// W_ai = rate · T: the SIGCOMM'19 simulator's setting (50 Mb/s · T).
    RateTimesRtt(Rate),
}

/// Which queue signal feeds the first term of u' (Figure 4, line 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum QueueSignal {
    /// min(qlen, last qlen) / (B·T): the draft's default.
    Length,
    /// min(sojourn, last sojourn) / T: the sojourn-time variant for
    /// switches with QoS queues (§9.3), where a flow's own queue length does
    /// not tell its queuing delay.
    Sojourn,
}

/// Where the sender's telemetry comes from (§6.2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum TelemetrySource {
    /// Every data packet collects telemetry; ACKs echo it (item 1).
    Inband,
    /// Dedicated probes, one per RTT while data is in flight; the responder
    /// reports only the hop with the highest inflight (item 2, §7.1).
    Probe {
        /// A probe with no response after this many base RTTs is sent again.
        timeout_rtts: u8,
    },
}

/// HPCC++ parameters shared by all flows of an engine (§4.1 Figure 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct HpccConfig {
    /// Target link utilization eta (default 95 %).
    pub eta: Fraction,
    /// AI stages before MI/MD (default 5; the SIGCOMM'19 simulator uses 0).
    /// At most [`HpccConfig::MAX_STAGE_LIMIT`].
    pub max_stage: u8,
    /// The W_ai rule.
    pub additive_increase: AdditiveIncrease,
    /// Smallest window W_min; W is clamped to [W_min, W_init].
    pub w_min: Window,
    /// Queue length or sojourn time.
    pub queue_signal: QueueSignal,
    /// Telemetry on data packets or from probes.
    pub telemetry: TelemetrySource,
    /// Reciprocals of the fabric's link speeds and base RTTs, so that an
    /// ACK multiplies instead of dividing; a speed or RTT left out costs a
    /// division, never a different result (default: the compact format's
    /// speeds, no RTT).
    pub reciprocals: Reciprocals,
}

impl HpccConfig {
    /// Largest accepted `max_stage` (the stage counter is 4 bits wide).
    pub const MAX_STAGE_LIMIT: u8 = 15;

    /// The draft's defaults: eta 95 %, maxStage 5, W_ai by the §5 rule with
    /// N = 64, W_min 16 bytes, queue length, telemetry on every packet.
    pub const fn draft_default() -> Self {
        HpccConfig {
            // 0.95 · 2^24 rounded to nearest.
            eta: match Fraction::ratio(95, 100) {
                Some(f) => f,
                None => Fraction::ONE,
            },
            max_stage: 5,
            additive_increase: AdditiveIncrease::PerFlows { n: 64 },
            w_min: Window::from_bytes(16),
            queue_signal: QueueSignal::Length,
            telemetry: TelemetrySource::Inband,
            reciprocals: Reciprocals::compact(),
        }
    }

    /// As the SIGCOMM'19 simulator ran HPCC: eta 95 %, maxStage 0,
    /// W_ai = 50 Mb/s · T.
    pub const fn sigcomm19() -> Self {
        let mut c = Self::draft_default();
        c.max_stage = 0;
        c.additive_increase = AdditiveIncrease::RateTimesRtt(Rate::from_bps(50_000_000));
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
        let ai_ok = match self.additive_increase {
            AdditiveIncrease::PerFlows { n } => n >= 1,
            AdditiveIncrease::RateTimesRtt(r) => {
                r.as_bps() <= LinkSpeed::from_mbps(LinkSpeed::MAX_MBPS).to_rate().as_bps()
            }
        };
        let probe_ok = match self.telemetry {
            TelemetrySource::Inband => true,
            TelemetrySource::Probe { timeout_rtts } => timeout_rtts >= 1,
        };
        [
            (self.eta.to_bits() == 0, "eta"),
            (self.max_stage > Self::MAX_STAGE_LIMIT, "max_stage"),
            (!ai_ok, "additive_increase"),
            (!probe_ok, "telemetry"),
            (self.w_min == Window::ZERO, "w_min"),
        ]
        .into_iter()
        .find_map(|(bad, name)| bad.then_some(name))
    }

    /// W_ai for a flow with initial window `w_init` and base RTT `t`, for
    /// the configured rule or a receiver-reported `n`.
    ///
    /// ```text
    /// PerFlows:     W_ai = W_init · (1 − eta) / N         (§5)
    ///               raw  = W_init_raw · (2^24 − eta_raw) / (N · 2^24)
    /// RateTimesRtt: W_ai = rate[bit/s] · T[ns] / (8·10^9) bytes
    ///               raw  = rate · T / (5·10^8)
    /// ```
    /// Envelopes: 2^32 · 2^24 = 2^56; 6.4·10^12 · 2^20 < 2^63. Rounded down.
    ///
    /// W_ai is at least one unit of [`Window`] (1/16 byte): a W_ai that
    /// rounds to 0 (10 Gb/s × 1 µs with N = 2000 gives 0.03 B) would stop
    /// the additive increase, and with it convergence to fairness.
    pub(crate) fn w_ai(&self, w_init: Window, t: BaseRtt, reported_n: Option<u16>) -> Window {
        let per_flows = |n: u16| {
            let headroom = (Fraction::ONE.to_bits() - self.eta.to_bits()) as u64;
            let den = (n.max(1) as u64) << Fraction::FRAC_BITS;
            w_init.to_bits() as u64 * headroom / den
        };
        let raw = match (reported_n, self.additive_increase) {
            (Some(n), _) | (None, AdditiveIncrease::PerFlows { n }) => per_flows(n),
            (None, AdditiveIncrease::RateTimesRtt(r)) => r.as_bps().saturating_mul(t.as_nanos() as u64) / 500_000_000,
        };
        Window::from_bits_saturating(raw.max(1))
    }
}

/// W_init = W_max = the path's BDP (line rate · T), clamped to
/// [`Window::MAX_CONFIG_BYTES`] (64 MiB, the design's largest window): a
/// path with a larger BDP (1.6 Tb/s × 1 ms is 200 MB) runs with a 64 MiB
/// window rather than being refused; alone it cannot fill that pipe.
pub(crate) fn initial_window(p: &FlowParams) -> Window {
    // bdp_bytes < 2^30 (see LinkSpeed::bdp_bytes).
    let bdp = p.line_rate.bdp_bytes(p.base_rtt).min(Window::MAX_CONFIG_BYTES as u64);
    Window::from_bytes(bdp as u32)
}

impl Default for HpccConfig {
    fn default() -> Self {
        Self::draft_default()
    }
}

impl crate::controller::AlgorithmConfig for HpccConfig {
    type Sender<const H: usize> = crate::hpcc::HpccSender<H>;

    /// A window; reads in-band telemetry, not ECN.
    const NETWORK: Network = Network {
        telemetry: TelemetryKind::Stack,
        ..Network::new(Gate::Window)
    };

    const DEFAULT: Self = Self::draft_default();

    fn validate(&self) -> Result<(), Error> {
        HpccConfig::validate(self)
    }

    /// eta 4 | maxStage 1 | W_ai tag 1 (0: N 2, 1: bit/s 8) | W_min 4 |
    /// queue signal 1 | telemetry tag 1 [probe timeout 1] | speeds n 1 |
    /// n × Mb/s 4 | base RTTs m 1 | m × ns 4 (the reciprocals' keys: the
    /// reader works the values out).
    fn encode(&self, w: &mut ConfigWriter<'_, '_>) -> WireResult<()> {
        w.u32(self.eta.to_bits())?;
        w.u8(self.max_stage)?;
        match self.additive_increase {
            AdditiveIncrease::PerFlows { n } => {
                w.u8(0)?;
                w.u16(n)?;
            }
            AdditiveIncrease::RateTimesRtt(r) => {
                w.u8(1)?;
                w.u64(r.as_bps())?;
            }
        }
        w.u32(self.w_min.to_bits())?;
        w.u8(match self.queue_signal {
            QueueSignal::Length => 0,
            QueueSignal::Sojourn => 1,
        })?;
        match self.telemetry {
            TelemetrySource::Inband => w.u8(0)?,
            TelemetrySource::Probe { timeout_rtts } => {
                w.u8(1)?;
                w.u8(timeout_rtts)?;
            }
        }
        // Each table's keys in ascending order, whatever order its slots
        // hold them in (which hangs on the order they were added): one
        // table, one encoding.
        let mut keys = [0u32; MAX_SPEEDS];
        let speeds = self.reciprocals.speeds().map(|b| b.as_mbps());
        write_sorted(w, &mut keys, speeds)?;
        write_sorted(w, &mut keys, self.reciprocals.rtts().map(|t| t.as_nanos()))
    }

    fn decode(r: &mut ConfigReader<'_, '_>) -> WireResult<Self> {
        let eta = r.fraction()?;
        let max_stage = r.u8()?;
        let additive_increase = match r.u8()? {
            0 => AdditiveIncrease::PerFlows { n: r.u16()? },
            1 => AdditiveIncrease::RateTimesRtt(Rate::from_bps(r.u64()?)),
            _ => return Err(WireError::UnknownType),
        };
        let w_min = Window::from_bits(r.u32()?);
        let queue_signal = match r.u8()? {
            0 => QueueSignal::Length,
            1 => QueueSignal::Sojourn,
            _ => return Err(WireError::UnknownType),
        };
        let telemetry = match r.u8()? {
            0 => TelemetrySource::Inband,
            1 => TelemetrySource::Probe { timeout_rtts: r.u8()? },
            _ => return Err(WireError::UnknownType),
        };
        let mut reciprocals = Reciprocals::new(&[], &[]).map_err(|_| WireError::BadLength)?;
        for _ in 0..r.u8()? {
            reciprocals
                .add_speed(LinkSpeed::from_mbps(r.u32()?))
                .map_err(|_| WireError::BadLength)?;
        }
        for _ in 0..r.u8()? {
            let t = BaseRtt::from_nanos(r.u32()?).ok_or(WireError::BadLength)?;
            reciprocals.add_rtt(t).map_err(|_| WireError::BadLength)?;
        }
        Ok(HpccConfig {
            eta,
            max_stage,
            additive_increase,
            w_min,
            queue_signal,
            telemetry,
            reciprocals,
        })
    }

    /// The window within [W_min, W_init = B·T], the rate at most the line
    /// rate.
    fn check_decision(&self, p: &FlowParams, d: &Decision) -> Result<(), &'static str> {
        if d.window < self.w_min {
            return Err("HPCC++ window below W_min");
        }
        if d.window.bytes_floor() as u64 > p.line_rate.bdp_bytes(p.base_rtt) {
            return Err("HPCC++ window above W_init");
        }
        if d.rate() > p.line_rate.to_rate() {
            return Err("HPCC++ rate above the line rate");
        }
        Ok(())
    }
}

/// Writes the count of `keys` (a reciprocal table's, at most its slots)
/// and the keys in ascending order, sorted in `buf`.
fn write_sorted(
    w: &mut ConfigWriter<'_, '_>,
    buf: &mut [u32; MAX_SPEEDS],
    keys: impl Iterator<Item = u32>,
) -> WireResult<()> {
    const _: () = assert!(MAX_RTTS <= MAX_SPEEDS);
    let mut n = 0;
    for (slot, k) in buf.iter_mut().zip(keys) {
        *slot = k;
        n += 1;
    }
    let keys = &mut buf[..n];
    keys.sort_unstable();
    w.u8(n as u8)?;
    keys.iter().try_for_each(|&k| w.u32(k))
}
