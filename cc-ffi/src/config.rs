//! The engine's configuration as plain C structs: one per algorithm, every
//! one in a `cc_config` (an engine holds flows of any of them).
//! `cc_config_default` fills one with the drafts' defaults and
//! `cc_config_check` names the first field out of its range.

use core::ffi::{c_char, CStr};

use cc_core::controller::AnyConfig;
use cc_core::dcqcn::DcqcnConfig;
use cc_core::dctcp::DctcpConfig;
use cc_core::hpcc::{AdditiveIncrease, HpccConfig, QueueSignal, Reciprocals, TelemetrySource, MAX_RTTS, MAX_SPEEDS};
use cc_core::hpcc_pint::HpccPintConfig;
use cc_core::ldcp::{FastStart, LdcpConfig};
use cc_core::powertcp::{PowerTcpConfig, ThetaPowerTcpConfig};
use cc_core::swift::SwiftConfig;
use cc_core::timely::TimelyConfig;
use cc_core::units::{BaseRtt, Fraction, LinkSpeed, Mtu, Rate, Window};

use crate::cc_status;

mod dcqcn;
mod dctcp;
mod hpcc_pint;
mod powertcp;
mod swift;
mod theta_powertcp;
mod timely;

pub use self::dcqcn::*;
pub use self::dctcp::*;
pub use self::hpcc_pint::*;
pub use self::powertcp::*;
pub use self::swift::*;
pub use self::theta_powertcp::*;
pub use self::timely::*;

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
}

/// LDCP (draft-dai).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct cc_ldcp_config {
    /// The flows' MTU, bytes (64 ..= 65 535).
    pub mtu: u32,
    /// Additive increase per RTT, packets, 2^-24 (> 0).
    pub alpha_q24: u32,
    /// Decrease per marked packet, packets, 2^-24 (> 0).
    pub beta_q24: u32,
    /// Smallest window, packets, 2^-24 (2^-10 ≤ gamma < 1).
    pub gamma_q24: u32,
    /// 1: zero-RTT fast start (the first BDP without ECN); 0: off.
    pub fast_start: u8,
    /// RTTs before an unanswered RTT request is sent again (≥ 1).
    pub probe_timeout_rtts: u8,
    /// Zero.
    pub reserved: [u8; 2],
}

/// Every algorithm's configuration: an engine's flows may use any of them.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct cc_config {
    /// HPCC++ and Rx-HPCC flows.
    pub hpcc: cc_hpcc_config,
    /// LDCP flows, both variants.
    pub ldcp: cc_ldcp_config,
    /// DCTCP flows.
    pub dctcp: cc_dctcp_config,
    /// DCQCN flows.
    pub dcqcn: cc_dcqcn_config,
    /// TIMELY flows.
    pub timely: cc_timely_config,
    /// Swift flows.
    pub swift: cc_swift_config,
    /// θ-PowerTCP flows.
    pub theta_powertcp: cc_theta_powertcp_config,
    /// PowerTCP flows.
    pub powertcp: cc_powertcp_config,
    /// HPCC-PINT flows.
    pub hpcc_pint: cc_hpcc_pint_config,
}

fn fraction(raw: u32, field: &'static CStr) -> Result<Fraction, &'static CStr> {
    Fraction::from_bits(raw).ok_or(field)
}

fn flag(v: u8, field: &'static CStr) -> Result<bool, &'static CStr> {
    match v {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(field),
    }
}

/// The engine's configuration, or the first field out of range.
fn convert(c: &cc_config) -> Result<AnyConfig, &'static CStr> {
    let h = &c.hpcc;
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
    let l = &c.ldcp;
    let ldcp = LdcpConfig {
        mtu: Mtu::new(l.mtu).ok_or(c"ldcp.mtu")?,
        alpha: fraction(l.alpha_q24, c"ldcp.alpha_q24")?,
        beta: fraction(l.beta_q24, c"ldcp.beta_q24")?,
        gamma: fraction(l.gamma_q24, c"ldcp.gamma_q24")?,
        fast_start: if flag(l.fast_start, c"ldcp.fast_start")? {
            FastStart::Enabled
        } else {
            FastStart::Disabled
        },
        probe_timeout_rtts: l.probe_timeout_rtts,
    };
    if let Some(f) = ldcp.invalid_field() {
        return Err(match f {
            "alpha" => c"ldcp.alpha_q24",
            "beta" => c"ldcp.beta_q24",
            "gamma" => c"ldcp.gamma_q24",
            _ => c"ldcp.probe_timeout_rtts",
        });
    }
    let dctcp = DctcpConfig::try_from(&c.dctcp)?;
    let dcqcn = DcqcnConfig::try_from(&c.dcqcn)?;
    let timely = TimelyConfig::try_from(&c.timely)?;
    let swift = SwiftConfig::try_from(&c.swift)?;
    let theta_powertcp = ThetaPowerTcpConfig::try_from(&c.theta_powertcp)?;
    let powertcp = PowerTcpConfig::try_from(&c.powertcp)?;
    let hpcc_pint = HpccPintConfig::try_from(&c.hpcc_pint)?;
    Ok(AnyConfig {
        hpcc,
        ldcp,
        dctcp,
        dcqcn,
        timely,
        swift,
        theta_powertcp,
        powertcp,
        hpcc_pint,
    })
}

/// The engine's configuration of a checked C one.
pub(crate) fn any_config(c: &cc_config) -> Result<AnyConfig, cc_status> {
    convert(c).map_err(|_| cc_status::InvalidParams)
}

impl From<&AnyConfig> for cc_config {
    fn from(a: &AnyConfig) -> Self {
        let h = &a.hpcc;
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
        let l = &a.ldcp;
        cc_config {
            hpcc: cc_hpcc_config {
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
            },
            ldcp: cc_ldcp_config {
                mtu: l.mtu.bytes(),
                alpha_q24: l.alpha.to_bits(),
                beta_q24: l.beta.to_bits(),
                gamma_q24: l.gamma.to_bits(),
                fast_start: (l.fast_start == FastStart::Enabled) as u8,
                probe_timeout_rtts: l.probe_timeout_rtts,
                reserved: [0; 2],
            },
            dctcp: cc_dctcp_config::from(&a.dctcp),
            dcqcn: cc_dcqcn_config::from(&a.dcqcn),
            timely: cc_timely_config::from(&a.timely),
            swift: cc_swift_config::from(&a.swift),
            theta_powertcp: cc_theta_powertcp_config::from(&a.theta_powertcp),
            powertcp: cc_powertcp_config::from(&a.powertcp),
            hpcc_pint: cc_hpcc_pint_config::from(&a.hpcc_pint),
        }
    }
}

/// The defaults: HPCC++ and LDCP as their drafts give them, DCTCP as
/// RFC 8257, DCQCN and TIMELY as the HPCC evaluation ran them, Swift as
/// Falcon's, θ-PowerTCP as its paper's.
pub(crate) fn defaults() -> AnyConfig {
    AnyConfig::DEFAULT
}

/// Fills `*out` with the defaults: HPCC++ and LDCP as their drafts give
/// them, DCTCP as RFC 8257, DCQCN and TIMELY as the HPCC evaluation ran
/// them, Swift as Falcon's, θ-PowerTCP as its paper's.
///
/// # Safety
/// `out` is a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn cc_config_default(out: *mut cc_config) -> cc_status {
    if out.is_null() {
        return cc_status::NullPointer;
    }
    // SAFETY: the caller's promise.
    unsafe { out.write(cc_config::from(&defaults())) };
    cc_status::Ok
}

/// Checks `*cfg` as `cc_engine_init` does. On `CC_STATUS_INVALID_PARAMS`,
/// `*field` (if `field` is not NULL) names the first field out of range,
/// as `c"ldcp.gamma_q24"`: a NUL-terminated string the library owns.
///
/// # Safety
/// `cfg` is a valid pointer; `field` is NULL or a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn cc_config_check(cfg: *const cc_config, field: *mut *const c_char) -> cc_status {
    if cfg.is_null() {
        return cc_status::NullPointer;
    }
    // SAFETY: the caller's promise.
    match convert(unsafe { &*cfg }) {
        Ok(_) => cc_status::Ok,
        Err(name) => {
            if !field.is_null() {
                // SAFETY: field is valid; the name is a static C string.
                unsafe { field.write(name.as_ptr()) };
            }
            cc_status::InvalidParams
        }
    }
}
