//! HPCC-PINT's configuration as a C struct, and its conversions.

use core::ffi::CStr;

use cc_core::hpcc_pint::HpccPintConfig;

use super::{fraction, Mirrored};

/// HPCC-PINT (HPCC's window from the switches' utilization code: an ACK's
/// `pint_width` and `pint_code`).
pub const CC_ALGORITHM_HPCC_PINT: u8 = 10;

/// HPCC-PINT.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct cc_hpcc_pint_config {
    /// Target utilization η, 2^-24 (> 0, ≤ 2^24).
    pub eta_q24: u32,
    /// W_ai as a fraction of the BDP (the rate step, of the line rate),
    /// 2^-24 (> 0, ≤ 2^24).
    pub additive_increase_q24: u32,
    /// The smallest window as a fraction of the BDP, 2^-24 (16 ..= 2^24).
    pub min_window_q24: u32,
    /// Additive-increase stages before a multiplicative step, 0 ..= 15.
    pub max_stage: u8,
    /// Zero.
    pub reserved: [u8; 3],
}

impl TryFrom<&cc_hpcc_pint_config> for HpccPintConfig {
    /// The first field out of range, as `cc_config_check` names it.
    type Error = &'static CStr;

    fn try_from(t: &cc_hpcc_pint_config) -> Result<HpccPintConfig, &'static CStr> {
        let c = HpccPintConfig {
            eta: fraction(t.eta_q24, c"hpcc_pint.eta_q24")?,
            max_stage: t.max_stage,
            additive_increase: fraction(t.additive_increase_q24, c"hpcc_pint.additive_increase_q24")?,
            min_window: fraction(t.min_window_q24, c"hpcc_pint.min_window_q24")?,
        };
        match c.invalid_field() {
            None => Ok(c),
            Some(f) => Err(match f {
                "eta" => c"hpcc_pint.eta_q24",
                "max_stage" => c"hpcc_pint.max_stage",
                "additive_increase" => c"hpcc_pint.additive_increase_q24",
                _ => c"hpcc_pint.min_window_q24",
            }),
        }
    }
}

impl From<&HpccPintConfig> for cc_hpcc_pint_config {
    fn from(c: &HpccPintConfig) -> cc_hpcc_pint_config {
        cc_hpcc_pint_config {
            eta_q24: c.eta.to_bits(),
            additive_increase_q24: c.additive_increase.to_bits(),
            min_window_q24: c.min_window.to_bits(),
            max_stage: c.max_stage,
            reserved: [0; 3],
        }
    }
}

impl Mirrored for HpccPintConfig {
    type C = cc_hpcc_pint_config;
}
