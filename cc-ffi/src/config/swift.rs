//! Swift's configuration as a C struct, and its conversions.

use core::ffi::CStr;

use cc_core::swift::SwiftConfig;

use super::{fraction, Mirrored};

/// Swift (fabric and endpoint windows from the NICs' timestamps: an ACK's
/// `t1_ns` ..= `t4_ns`, `forward_hops` and `rx_buffer_level`).
pub const CC_ALGORITHM_SWIFT: u8 = 7;

/// Swift. Windows in 2^-16 packets, fractions in 2^-24, times in ns.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct cc_swift_config {
    /// Bytes of a packet, the windows' unit (64 ..= 65 535).
    pub mtu: u32,
    /// The target's base delay, ns (1 ..= 2^24).
    pub base_delay_ns: u32,
    /// The target's delay per forward hop, ns (≤ 2^16).
    pub hop_scaling_ns: u32,
    /// α of the flow scaling, ns·√packet (≤ 2^24).
    pub flow_scaling_alpha_ns: u32,
    /// The flow scaling's ceiling, ns (≤ 2^24).
    pub max_flow_scaling_ns: u32,
    /// Additive increase, 2^-16 packets (1 ..= 2^20).
    pub ai_q16: u32,
    /// β, 2^-24 (0 < β < 2^24).
    pub beta_q24: u32,
    /// The largest decrease at once, 2^-24 (0 < max_mdf < 2^24).
    pub max_mdf_q24: u32,
    /// The fabric window's floor, 2^-16 packets (≥ 1).
    pub min_window_q16: u32,
    /// Its ceiling and the flow scaling's W_max (≥ the floor, ≥ one packet).
    pub max_window_q16: u32,
    /// The endpoint window's increase per ACK, 2^-16 packets (1 ..= 2^20).
    pub nic_ai_q16: u32,
    /// The endpoint window's β, 2^-24.
    pub nic_beta_q24: u32,
    /// The endpoint window's largest decrease, 2^-24.
    pub nic_max_mdf_q24: u32,
    /// The endpoint window's floor, 2^-16 packets (≥ 1).
    pub nic_min_window_q16: u32,
    /// Its ceiling (≥ the floor).
    pub nic_max_window_q16: u32,
    /// The Rx buffer level the endpoint window aims below (0 ..= 31).
    pub target_rx_level: u8,
    /// Losses in a row that drop the fabric window to its floor (≥ 1).
    pub retransmit_limit: u8,
    /// Zero.
    pub reserved: [u8; 2],
    /// A new flow's fabric window, 2^-16 packets; 0: the path's BDP.
    pub initial_window_q16: u32,
}

impl TryFrom<&cc_swift_config> for SwiftConfig {
    /// The first field out of range, as `cc_config_check` names it.
    type Error = &'static CStr;

    fn try_from(c: &cc_swift_config) -> Result<SwiftConfig, &'static CStr> {
        let s = SwiftConfig {
            mtu: c.mtu,
            base_delay_ns: c.base_delay_ns,
            hop_scaling_ns: c.hop_scaling_ns,
            flow_scaling_alpha_ns: c.flow_scaling_alpha_ns,
            max_flow_scaling_ns: c.max_flow_scaling_ns,
            ai: c.ai_q16,
            beta: fraction(c.beta_q24, c"swift.beta_q24")?,
            max_mdf: fraction(c.max_mdf_q24, c"swift.max_mdf_q24")?,
            min_window: c.min_window_q16,
            max_window: c.max_window_q16,
            target_rx_level: c.target_rx_level,
            nic_ai: c.nic_ai_q16,
            nic_beta: fraction(c.nic_beta_q24, c"swift.nic_beta_q24")?,
            nic_max_mdf: fraction(c.nic_max_mdf_q24, c"swift.nic_max_mdf_q24")?,
            nic_min_window: c.nic_min_window_q16,
            nic_max_window: c.nic_max_window_q16,
            retransmit_limit: c.retransmit_limit,
            initial_window: c.initial_window_q16,
        };
        match s.invalid_field() {
            None => Ok(s),
            Some(f) => Err(match f {
                "mtu" => c"swift.mtu",
                "base_delay_ns" => c"swift.base_delay_ns",
                "hop_scaling_ns" => c"swift.hop_scaling_ns",
                "flow_scaling_alpha_ns" => c"swift.flow_scaling_alpha_ns",
                "max_flow_scaling_ns" => c"swift.max_flow_scaling_ns",
                "ai" => c"swift.ai_q16",
                "beta" => c"swift.beta_q24",
                "max_mdf" => c"swift.max_mdf_q24",
                "min_window" => c"swift.min_window_q16",
                "max_window" => c"swift.max_window_q16",
                "target_rx_level" => c"swift.target_rx_level",
                "nic_ai" => c"swift.nic_ai_q16",
                "nic_beta" => c"swift.nic_beta_q24",
                "nic_max_mdf" => c"swift.nic_max_mdf_q24",
                "nic_min_window" => c"swift.nic_min_window_q16",
                "nic_max_window" => c"swift.nic_max_window_q16",
                _ => c"swift.retransmit_limit",
            }),
        }
    }
}

impl From<&SwiftConfig> for cc_swift_config {
    fn from(s: &SwiftConfig) -> cc_swift_config {
        cc_swift_config {
            mtu: s.mtu,
            base_delay_ns: s.base_delay_ns,
            hop_scaling_ns: s.hop_scaling_ns,
            flow_scaling_alpha_ns: s.flow_scaling_alpha_ns,
            max_flow_scaling_ns: s.max_flow_scaling_ns,
            ai_q16: s.ai,
            beta_q24: s.beta.to_bits(),
            max_mdf_q24: s.max_mdf.to_bits(),
            min_window_q16: s.min_window,
            max_window_q16: s.max_window,
            nic_ai_q16: s.nic_ai,
            nic_beta_q24: s.nic_beta.to_bits(),
            nic_max_mdf_q24: s.nic_max_mdf.to_bits(),
            nic_min_window_q16: s.nic_min_window,
            nic_max_window_q16: s.nic_max_window,
            target_rx_level: s.target_rx_level,
            retransmit_limit: s.retransmit_limit,
            reserved: [0; 2],
            initial_window_q16: s.initial_window,
        }
    }
}

impl Mirrored for SwiftConfig {
    type C = cc_swift_config;
}
