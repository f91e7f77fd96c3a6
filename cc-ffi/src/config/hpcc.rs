//! HPCC++'s configuration as a C struct, and its conversions.

use core::ffi::CStr;

use cc_core::hpcc::{AdditiveIncrease, HpccConfig, QueueSignal, Reciprocals, TelemetrySource, MAX_RTTS, MAX_SPEEDS};
use cc_core::units::{BaseRtt, LinkSpeed, Rate, Window};

use super::{fraction, Mirrored};

/// HPCC++ sender (window from telemetry echoed on ACKs).
pub const CC_ALGORITHM_HPCC: u8 = 0;
/// HPCC++ receiver (Rx-HPCC: the receiver computes the window).
pub const CC_ALGORITHM_HPCC_RECEIVER: u8 = 1;

/// Link speeds an HPCC++ configuration may list.
pub const CC_MAX_SPEEDS: u32 = 8;
/// Base RTTs an HPCC++ configuration may list.
pub const CC_MAX_BASE_RTTS: u32 = 8;
const _: () = assert!(CC_MAX_SPEEDS as usize == MAX_SPEEDS && CC_MAX_BASE_RTTS as usize == MAX_RTTS);

/// `cc_hpcc_config::w_ai_kind`: W_ai = W_init·(1 − eta)/N, N = `w_ai_flows`.
pub const CC_WAI_PER_FLOWS: u8 = 0;
/// `cc_hpcc_config::w_ai_kind`: W_ai = `w_ai_bps` · T.
pub const CC_WAI_RATE: u8 = 1;
/// `cc_hpcc_config::queue_signal`: the queue's length in bytes.
pub const CC_QUEUE_LENGTH: u8 = 0;
/// `cc_hpcc_config::queue_signal`: the packet's sojourn time.
pub const CC_QUEUE_SOJOURN: u8 = 1;
/// `cc_hpcc_config::telemetry`: telemetry rides every data packet.
pub const CC_TELEMETRY_INBAND: u8 = 0;
/// `cc_hpcc_config::telemetry`: telemetry comes from probes.
pub const CC_TELEMETRY_PROBE: u8 = 1;

/// HPCC++ (draft 2022-10).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct cc_hpcc_config {
    /// Target utilisation eta, 2^-24 (0 < eta ≤ 2^24; 0.95 is 15 938 355).
    pub eta_q24: u32,
    /// Smallest window, 1/16 byte (> 0).
    pub w_min_q4: u32,
    /// W_ai's rate when `w_ai_kind` is `CC_WAI_RATE`, bit/s (≤ 6.4 Tb/s).
    pub w_ai_bps: u64,
    /// N when `w_ai_kind` is `CC_WAI_PER_FLOWS` (≥ 1).
    pub w_ai_flows: u16,
    /// maxStage: additive steps before a multiplicative one, 0 ..= 15.
    pub max_stage: u8,
    /// One of `CC_WAI_*`.
    pub w_ai_kind: u8,
    /// One of `CC_QUEUE_*`.
    pub queue_signal: u8,
    /// One of `CC_TELEMETRY_*`.
    pub telemetry: u8,
    /// With probes: RTTs before an unanswered probe is sent again (≥ 1).
    pub probe_timeout_rtts: u8,
    /// Entries used in `speeds_mbps`, 0 ..= `CC_MAX_SPEEDS`.
    pub n_speeds: u8,
    /// Link speeds whose reciprocals the engine keeps, Mb/s (100 ..= 6 400 000).
    pub speeds_mbps: [u32; 8],
    /// Entries used in `base_rtts_ns`, 0 ..= `CC_MAX_BASE_RTTS`.
    pub n_base_rtts: u8,
    /// Zero.
    pub reserved: [u8; 3],
    /// Base RTTs whose reciprocals the engine keeps, ns (100 ..= 1 048 576).
    pub base_rtts_ns: [u32; 8],
    /// Zero (the struct's tail, named so that no byte of it is padding).
    pub reserved2: u32,
}

impl TryFrom<&cc_hpcc_config> for HpccConfig {
    /// The first field out of range, as `cc_config_check` names it.
    type Error = &'static CStr;

    fn try_from(h: &cc_hpcc_config) -> Result<HpccConfig, &'static CStr> {
        let additive_increase = match h.w_ai_kind {
            CC_WAI_PER_FLOWS => AdditiveIncrease::PerFlows { n: h.w_ai_flows },
            CC_WAI_RATE => AdditiveIncrease::RateTimesRtt(Rate::from_bps(h.w_ai_bps)),
            _ => return Err(c"hpcc.w_ai_kind"),
        };
        let n_speeds = h.n_speeds as usize;
        let n_rtts = h.n_base_rtts as usize;
        let (Some(speeds), Some(rtts)) = (h.speeds_mbps.get(..n_speeds), h.base_rtts_ns.get(..n_rtts)) else {
            return Err(if n_speeds > MAX_SPEEDS {
                c"hpcc.n_speeds"
            } else {
                c"hpcc.n_base_rtts"
            });
        };
        let mut reciprocals = Reciprocals::new(&[], &[]).map_err(|_| c"hpcc.speeds_mbps")?;
        for &s in speeds {
            reciprocals
                .add_speed(LinkSpeed::from_mbps(s))
                .map_err(|_| c"hpcc.speeds_mbps")?;
        }
        for &t in rtts {
            let t = BaseRtt::from_nanos(t).ok_or(c"hpcc.base_rtts_ns")?;
            reciprocals.add_rtt(t).map_err(|_| c"hpcc.base_rtts_ns")?;
        }
        let hpcc = HpccConfig {
            eta: fraction(h.eta_q24, c"hpcc.eta_q24")?,
            max_stage: h.max_stage,
            additive_increase,
            w_min: Window::from_bits(h.w_min_q4),
            queue_signal: match h.queue_signal {
                CC_QUEUE_LENGTH => QueueSignal::Length,
                CC_QUEUE_SOJOURN => QueueSignal::Sojourn,
                _ => return Err(c"hpcc.queue_signal"),
            },
            telemetry: match h.telemetry {
                CC_TELEMETRY_INBAND => TelemetrySource::Inband,
                CC_TELEMETRY_PROBE => TelemetrySource::Probe {
                    timeout_rtts: h.probe_timeout_rtts,
                },
                _ => return Err(c"hpcc.telemetry"),
            },
            reciprocals,
        };
        if let Some(f) = hpcc.invalid_field() {
            return Err(match f {
                "eta" => c"hpcc.eta_q24",
                "max_stage" => c"hpcc.max_stage",
                "additive_increase" if h.w_ai_kind == CC_WAI_RATE => c"hpcc.w_ai_bps",
                "additive_increase" => c"hpcc.w_ai_flows",
                "telemetry" => c"hpcc.probe_timeout_rtts",
                _ => c"hpcc.w_min_q4",
            });
        }
        Ok(hpcc)
    }
}

impl From<&HpccConfig> for cc_hpcc_config {
    fn from(h: &HpccConfig) -> cc_hpcc_config {
        let mut speeds_mbps = [0; MAX_SPEEDS];
        let mut n_speeds = 0;
        for (slot, s) in speeds_mbps.iter_mut().zip(h.reciprocals.speeds()) {
            *slot = s.as_mbps();
            n_speeds += 1;
        }
        let mut base_rtts_ns = [0; MAX_RTTS];
        let mut n_base_rtts = 0;
        for (slot, t) in base_rtts_ns.iter_mut().zip(h.reciprocals.rtts()) {
            *slot = t.as_nanos();
            n_base_rtts += 1;
        }
        let (w_ai_kind, w_ai_flows, w_ai_bps) = match h.additive_increase {
            AdditiveIncrease::PerFlows { n } => (CC_WAI_PER_FLOWS, n, 0),
            AdditiveIncrease::RateTimesRtt(r) => (CC_WAI_RATE, 0, r.as_bps()),
        };
        let (telemetry, probe_timeout_rtts) = match h.telemetry {
            TelemetrySource::Inband => (CC_TELEMETRY_INBAND, 0),
            TelemetrySource::Probe { timeout_rtts } => (CC_TELEMETRY_PROBE, timeout_rtts),
        };
        cc_hpcc_config {
            eta_q24: h.eta.to_bits(),
            w_min_q4: h.w_min.to_bits(),
            w_ai_bps,
            w_ai_flows,
            max_stage: h.max_stage,
            w_ai_kind,
            queue_signal: match h.queue_signal {
                QueueSignal::Length => CC_QUEUE_LENGTH,
                QueueSignal::Sojourn => CC_QUEUE_SOJOURN,
            },
            telemetry,
            probe_timeout_rtts,
            n_speeds,
            speeds_mbps,
            n_base_rtts,
            reserved: [0; 3],
            base_rtts_ns,
            reserved2: 0,
        }
    }
}

impl Mirrored for HpccConfig {
    type C = cc_hpcc_config;
}
