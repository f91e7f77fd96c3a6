//! DCQCN's configuration as a C struct, and its conversions.

use core::ffi::CStr;

use cc_core::dcqcn::DcqcnConfig;

use super::{flag, fraction, Mirrored};

/// DCQCN.
pub const CC_ALGORITHM_DCQCN: u8 = 5;

/// DCQCN.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct cc_dcqcn_config {
    /// Gain g of alpha's average, 2^-24 (> 0).
    pub g_q24: u32,
    /// Alpha's update period, ns (1 ..= 2^30).
    pub alpha_interval_ns: u32,
    /// Rate decrease check period, ns (1 ..= 2^30).
    pub decrease_interval_ns: u32,
    /// Rate increase timer, ns (1 ..= 2^30).
    pub increase_interval_ns: u32,
    /// Additive increase, a fraction of the line rate, 2^-24 (> 0).
    pub rate_ai_q24: u32,
    /// Hyper increase, a fraction of the line rate, 2^-24 (> 0).
    pub rate_hai_q24: u32,
    /// Lowest rate, Mb/s (1 ..= 16 000 000).
    pub min_rate_mbps: u32,
    /// Bytes per byte-counter increase event (0: none, else 1024 ..= 2^30).
    pub byte_counter: u32,
    /// Notification point: at most one CNP per flow per this, ns (≤ 2^30;
    /// 0: a CNP for every CE-marked packet, flagged on its ACK).
    pub cnp_interval_ns: u32,
    /// F: fast-recovery steps, 0 ..= 31.
    pub fast_recovery_steps: u8,
    /// 1: Rt = Rc on every decrease; 0: only after an increase.
    pub clamp_target: u8,
    /// Zero.
    pub reserved: [u8; 2],
}

impl TryFrom<&cc_dcqcn_config> for DcqcnConfig {
    /// The first field out of range, as `cc_config_check` names it.
    type Error = &'static CStr;

    fn try_from(q: &cc_dcqcn_config) -> Result<DcqcnConfig, &'static CStr> {
        let dcqcn = DcqcnConfig {
            g: fraction(q.g_q24, c"dcqcn.g_q24")?,
            alpha_interval_ns: q.alpha_interval_ns,
            decrease_interval_ns: q.decrease_interval_ns,
            increase_interval_ns: q.increase_interval_ns,
            fast_recovery_steps: q.fast_recovery_steps,
            rate_ai: fraction(q.rate_ai_q24, c"dcqcn.rate_ai_q24")?,
            rate_hai: fraction(q.rate_hai_q24, c"dcqcn.rate_hai_q24")?,
            min_rate_mbps: q.min_rate_mbps,
            byte_counter: q.byte_counter,
            clamp_target: flag(q.clamp_target, c"dcqcn.clamp_target")?,
            cnp_interval_ns: q.cnp_interval_ns,
        };
        match dcqcn.invalid_field() {
            None => Ok(dcqcn),
            Some(f) => Err(match f {
                "g" => c"dcqcn.g_q24",
                "alpha_interval_ns" => c"dcqcn.alpha_interval_ns",
                "decrease_interval_ns" => c"dcqcn.decrease_interval_ns",
                "increase_interval_ns" => c"dcqcn.increase_interval_ns",
                "fast_recovery_steps" => c"dcqcn.fast_recovery_steps",
                "rate_ai" => c"dcqcn.rate_ai_q24",
                "rate_hai" => c"dcqcn.rate_hai_q24",
                "min_rate_mbps" => c"dcqcn.min_rate_mbps",
                "byte_counter" => c"dcqcn.byte_counter",
                _ => c"dcqcn.cnp_interval_ns",
            }),
        }
    }
}

impl From<&DcqcnConfig> for cc_dcqcn_config {
    fn from(q: &DcqcnConfig) -> cc_dcqcn_config {
        cc_dcqcn_config {
            g_q24: q.g.to_bits(),
            alpha_interval_ns: q.alpha_interval_ns,
            decrease_interval_ns: q.decrease_interval_ns,
            increase_interval_ns: q.increase_interval_ns,
            rate_ai_q24: q.rate_ai.to_bits(),
            rate_hai_q24: q.rate_hai.to_bits(),
            min_rate_mbps: q.min_rate_mbps,
            byte_counter: q.byte_counter,
            cnp_interval_ns: q.cnp_interval_ns,
            fast_recovery_steps: q.fast_recovery_steps,
            clamp_target: q.clamp_target as u8,
            reserved: [0; 2],
        }
    }
}

impl Mirrored for DcqcnConfig {
    type C = cc_dcqcn_config;
}
