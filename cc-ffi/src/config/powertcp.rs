//! PowerTCP's configuration as a C struct, and its conversions.

use core::ffi::CStr;

use cc_core::powertcp::{Arrivals, PowerTcpConfig, UpdateClock};

use super::{fraction, Mirrored};

/// PowerTCP (a window from the power of in-band telemetry: an ACK's hops).
pub const CC_ALGORITHM_POWERTCP: u8 = 9;

/// PowerTCP with in-band telemetry. Fractions in 2^-24.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct cc_powertcp_config {
    /// γ, the new window's weight, 2^-24 (> 0, ≤ 2^24).
    pub gamma_q24: u32,
    /// Flows expected at a bottleneck: β = BDP / this (1 ..= 65 535).
    pub expected_flows: u32,
    /// β as a rate times the base RTT, Mb/s; 0 for BDP / expected_flows
    /// (≤ 2^24).
    pub beta_mbps: u32,
    /// The window's floor, bytes (1 ..= 65 535).
    pub min_window_bytes: u32,
    /// η, the target the window law divides power by, 2^-24 (2^23 ..=
    /// 2^24; the paper: 2^24, the authors' ns-3 code: 0.95).
    pub eta_q24: u32,
    /// The arrival rate's floor as a fraction of the link's speed, 2^-24
    /// (≤ 2^24; the ns-3 code: 0.5).
    pub min_arrival_q24: u32,
    /// `CC_ARRIVALS_QUEUE_AND_SENT` or `CC_ARRIVALS_SENT`.
    pub arrivals: u8,
    /// `CC_WINDOW_PER_RTT` or `CC_WINDOW_PER_ACK`.
    pub clock: u8,
    /// Zero.
    pub reserved: [u8; 2],
}

/// `cc_powertcp_config::arrivals`: the queue's growth plus the bytes sent,
/// the bytes that arrived (the paper's and the authors' ns-3 code's).
pub const CC_ARRIVALS_QUEUE_AND_SENT: u8 = 0;
/// `cc_powertcp_config::arrivals`: the bytes sent alone, the departure rate.
pub const CC_ARRIVALS_SENT: u8 = 1;
/// `cc_powertcp_config::clock`: the window law once per RTT (the paper's).
pub const CC_WINDOW_PER_RTT: u8 = 0;
/// `cc_powertcp_config::clock`: the window law on every ACK (the authors'
/// Linux module).
pub const CC_WINDOW_PER_ACK: u8 = 1;

impl TryFrom<&cc_powertcp_config> for PowerTcpConfig {
    /// The first field out of range, as `cc_config_check` names it.
    type Error = &'static CStr;

    fn try_from(t: &cc_powertcp_config) -> Result<PowerTcpConfig, &'static CStr> {
        let cfg = PowerTcpConfig {
            gamma: fraction(t.gamma_q24, c"powertcp.gamma_q24")?,
            expected_flows: t.expected_flows,
            beta_mbps: t.beta_mbps,
            min_window_bytes: t.min_window_bytes,
            eta: fraction(t.eta_q24, c"powertcp.eta_q24")?,
            min_arrival: fraction(t.min_arrival_q24, c"powertcp.min_arrival_q24")?,
            arrivals: match t.arrivals {
                CC_ARRIVALS_QUEUE_AND_SENT => Arrivals::QueueAndSent,
                CC_ARRIVALS_SENT => Arrivals::Sent,
                _ => return Err(c"powertcp.arrivals"),
            },
            clock: match t.clock {
                CC_WINDOW_PER_RTT => UpdateClock::PerRtt,
                CC_WINDOW_PER_ACK => UpdateClock::PerAck,
                _ => return Err(c"powertcp.clock"),
            },
        };
        match cfg.invalid_field() {
            None => Ok(cfg),
            Some(f) => Err(match f {
                "gamma" => c"powertcp.gamma_q24",
                "expected_flows" => c"powertcp.expected_flows",
                "beta_mbps" => c"powertcp.beta_mbps",
                "min_window_bytes" => c"powertcp.min_window_bytes",
                "eta" => c"powertcp.eta_q24",
                _ => c"powertcp.min_arrival_q24",
            }),
        }
    }
}

impl From<&PowerTcpConfig> for cc_powertcp_config {
    fn from(t: &PowerTcpConfig) -> cc_powertcp_config {
        cc_powertcp_config {
            gamma_q24: t.gamma.to_bits(),
            expected_flows: t.expected_flows,
            beta_mbps: t.beta_mbps,
            min_window_bytes: t.min_window_bytes,
            eta_q24: t.eta.to_bits(),
            min_arrival_q24: t.min_arrival.to_bits(),
            arrivals: match t.arrivals {
                Arrivals::QueueAndSent => CC_ARRIVALS_QUEUE_AND_SENT,
                Arrivals::Sent => CC_ARRIVALS_SENT,
            },
            clock: match t.clock {
                UpdateClock::PerRtt => CC_WINDOW_PER_RTT,
                UpdateClock::PerAck => CC_WINDOW_PER_ACK,
            },
            reserved: [0; 2],
        }
    }
}

impl Mirrored for PowerTcpConfig {
    type C = cc_powertcp_config;
}
