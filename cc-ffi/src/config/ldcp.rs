//! LDCP's configuration as a C struct, and its conversions.

use core::ffi::CStr;

use cc_core::ldcp::{FastStart, LdcpConfig};
use cc_core::units::Mtu;

use super::{flag, fraction, Mirrored};

/// LDCP, window variant (ECN per ACK, PAWA, timer below one packet).
pub const CC_ALGORITHM_LDCP: u8 = 2;
/// LDCP, rate variant for NICs that keep ACKs in hardware (CNP, RTT probe).
pub const CC_ALGORITHM_LDCP_RATE: u8 = 3;

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

impl TryFrom<&cc_ldcp_config> for LdcpConfig {
    /// The first field out of range, as `cc_config_check` names it.
    type Error = &'static CStr;

    fn try_from(l: &cc_ldcp_config) -> Result<LdcpConfig, &'static CStr> {
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
        Ok(ldcp)
    }
}

impl From<&LdcpConfig> for cc_ldcp_config {
    fn from(l: &LdcpConfig) -> cc_ldcp_config {
        cc_ldcp_config {
            mtu: l.mtu.bytes(),
            alpha_q24: l.alpha.to_bits(),
            beta_q24: l.beta.to_bits(),
            gamma_q24: l.gamma.to_bits(),
            fast_start: (l.fast_start == FastStart::Enabled) as u8,
            probe_timeout_rtts: l.probe_timeout_rtts,
            reserved: [0; 2],
        }
    }
}

impl Mirrored for LdcpConfig {
    type C = cc_ldcp_config;
}
