//! θ-PowerTCP's configuration as a C struct, and its conversions.

use core::ffi::CStr;

use cc_core::powertcp::{PowerClock, ThetaPowerTcpConfig};

use super::{fraction, Mirrored};

/// θ-PowerTCP (a window from the power of RTT samples: an ACK's `rtt_ns`).
pub const CC_ALGORITHM_THETA_POWERTCP: u8 = 8;

/// θ-PowerTCP. Fractions in 2^-24.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct cc_theta_powertcp_config {
    /// γ, the new window's weight, 2^-24 (> 0, ≤ 2^24).
    pub gamma_q24: u32,
    /// Flows expected at a bottleneck: β = BDP / this (1 ..= 65 535).
    pub expected_flows: u32,
    /// β as a rate times the base RTT, Mb/s; 0 for BDP / expected_flows
    /// (≤ 2^24).
    pub beta_mbps: u32,
    /// The floor of the factor 1 + dRTT/dt, 2^-24 (≤ 2^24).
    pub min_growth_q24: u32,
    /// The window's floor, bytes (1 ..= 65 535).
    pub min_window_bytes: u32,
    /// The base RTT in power's normaliser scaled by this, percent
    /// (100 ..= 200; the authors' ns-3 code: 105).
    pub tau_scale_pct: u32,
    /// `CC_POWER_PER_ACK` or `CC_POWER_PER_RTT`.
    pub clock: u8,
    /// Zero.
    pub reserved: [u8; 3],
}

/// `cc_theta_powertcp_config::clock`: power takes a sample on every ACK
/// (the paper's Algorithm 2).
pub const CC_POWER_PER_ACK: u8 = 0;
/// `cc_theta_powertcp_config::clock`: power takes a sample once per RTT,
/// with the window's update (the authors' Linux module).
pub const CC_POWER_PER_RTT: u8 = 1;

impl TryFrom<&cc_theta_powertcp_config> for ThetaPowerTcpConfig {
    /// The first field out of range, as `cc_config_check` names it.
    type Error = &'static CStr;

    fn try_from(t: &cc_theta_powertcp_config) -> Result<ThetaPowerTcpConfig, &'static CStr> {
        let cfg = ThetaPowerTcpConfig {
            gamma: fraction(t.gamma_q24, c"theta_powertcp.gamma_q24")?,
            expected_flows: t.expected_flows,
            beta_mbps: t.beta_mbps,
            min_growth: fraction(t.min_growth_q24, c"theta_powertcp.min_growth_q24")?,
            min_window_bytes: t.min_window_bytes,
            clock: match t.clock {
                CC_POWER_PER_ACK => PowerClock::PerAck,
                CC_POWER_PER_RTT => PowerClock::PerRtt,
                _ => return Err(c"theta_powertcp.clock"),
            },
            tau_scale_pct: t.tau_scale_pct,
        };
        match cfg.invalid_field() {
            None => Ok(cfg),
            Some(f) => Err(match f {
                "gamma" => c"theta_powertcp.gamma_q24",
                "expected_flows" => c"theta_powertcp.expected_flows",
                "beta_mbps" => c"theta_powertcp.beta_mbps",
                "min_growth" => c"theta_powertcp.min_growth_q24",
                "min_window_bytes" => c"theta_powertcp.min_window_bytes",
                _ => c"theta_powertcp.tau_scale_pct",
            }),
        }
    }
}

impl From<&ThetaPowerTcpConfig> for cc_theta_powertcp_config {
    fn from(t: &ThetaPowerTcpConfig) -> cc_theta_powertcp_config {
        cc_theta_powertcp_config {
            gamma_q24: t.gamma.to_bits(),
            expected_flows: t.expected_flows,
            beta_mbps: t.beta_mbps,
            min_growth_q24: t.min_growth.to_bits(),
            min_window_bytes: t.min_window_bytes,
            tau_scale_pct: t.tau_scale_pct,
            clock: match t.clock {
                PowerClock::PerAck => CC_POWER_PER_ACK,
                PowerClock::PerRtt => CC_POWER_PER_RTT,
            },
            reserved: [0; 3],
        }
    }
}

impl Mirrored for ThetaPowerTcpConfig {
    type C = cc_theta_powertcp_config;
}
