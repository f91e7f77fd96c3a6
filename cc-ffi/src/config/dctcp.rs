//! DCTCP's configuration as a C struct, and its conversions.

use core::ffi::CStr;

use cc_core::dctcp::DctcpConfig;
use cc_core::units::Window;

use super::{fraction, Mirrored};

/// DCTCP (RFC 8257).
pub const CC_ALGORITHM_DCTCP: u8 = 4;

/// DCTCP (RFC 8257).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct cc_dctcp_config {
    /// MSS, bytes (64 ..= 65 535).
    pub mtu: u32,
    /// Gain g of alpha's average, 2^-24 (> 0; 1/16 is 1 048 576).
    pub g_q24: u32,
    /// Smallest window, 1/16 byte (at least one byte).
    pub w_min_q4: u32,
}

impl TryFrom<&cc_dctcp_config> for DctcpConfig {
    /// The first field out of range, as `cc_config_check` names it.
    type Error = &'static CStr;

    fn try_from(d: &cc_dctcp_config) -> Result<DctcpConfig, &'static CStr> {
        let dctcp = DctcpConfig {
            mtu: d.mtu,
            g: fraction(d.g_q24, c"dctcp.g_q24")?,
            w_min: Window::from_bits(d.w_min_q4),
        };
        match dctcp.invalid_field() {
            None => Ok(dctcp),
            Some(f) => Err(match f {
                "mtu" => c"dctcp.mtu",
                "g" => c"dctcp.g_q24",
                _ => c"dctcp.w_min_q4",
            }),
        }
    }
}

impl From<&DctcpConfig> for cc_dctcp_config {
    fn from(d: &DctcpConfig) -> cc_dctcp_config {
        cc_dctcp_config {
            mtu: d.mtu,
            g_q24: d.g.to_bits(),
            w_min_q4: d.w_min.to_bits(),
        }
    }
}

impl Mirrored for DctcpConfig {
    type C = cc_dctcp_config;
}
