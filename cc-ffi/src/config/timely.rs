//! TIMELY's configuration as a C struct, and its conversions.

use core::ffi::CStr;

use cc_core::timely::{TimelyClock, TimelyConfig};

use super::{fraction, Mirrored};

/// TIMELY (rate from RTT samples: an ACK's `rtt_ns`).
pub const CC_ALGORITHM_TIMELY: u8 = 6;

/// TIMELY.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct cc_timely_config {
    /// EWMA weight of the new RTT difference, 2^-24 (> 0, ≤ 2^24).
    pub alpha_q24: u32,
    /// Multiplicative-decrease factor, 2^-24 (> 0, ≤ 2^24).
    pub beta_q24: u32,
    /// T_low, ns (below T_high).
    pub t_low_ns: u32,
    /// T_high, ns (below 2^24).
    pub t_high_ns: u32,
    /// minRTT, the gradient's normaliser, ns (1 ..= 2^20).
    pub min_rtt_ns: u32,
    /// Additive step, a fraction of the line rate, 2^-24 (> 0).
    pub delta_q24: u32,
    /// Hyperactive-increase step, a fraction of the line rate, 2^-24 (≥ delta).
    pub hai_q24: u32,
    /// Lowest rate, Mb/s (1 ..= 2^24).
    pub min_rate_mbps: u32,
    /// `CC_TIMELY_PER_RTT` or `CC_TIMELY_PER_SAMPLE`.
    pub clock: u8,
    /// Zero.
    pub reserved: [u8; 3],
}

/// `cc_timely_config::clock`: one update per RTT (the HPCC reference
/// simulator's TIMELY).
pub const CC_TIMELY_PER_RTT: u8 = 0;
/// `cc_timely_config::clock`: one update per RTT sample, scaled by the
/// time since the last (eRPC's).
pub const CC_TIMELY_PER_SAMPLE: u8 = 1;

impl TryFrom<&cc_timely_config> for TimelyConfig {
    /// The first field out of range, as `cc_config_check` names it.
    type Error = &'static CStr;

    fn try_from(t: &cc_timely_config) -> Result<TimelyConfig, &'static CStr> {
        let timely = TimelyConfig {
            alpha: fraction(t.alpha_q24, c"timely.alpha_q24")?,
            beta: fraction(t.beta_q24, c"timely.beta_q24")?,
            t_low_ns: t.t_low_ns,
            t_high_ns: t.t_high_ns,
            min_rtt_ns: t.min_rtt_ns,
            delta: fraction(t.delta_q24, c"timely.delta_q24")?,
            hai: fraction(t.hai_q24, c"timely.hai_q24")?,
            min_rate_mbps: t.min_rate_mbps,
            clock: match t.clock {
                CC_TIMELY_PER_RTT => TimelyClock::PerRtt,
                CC_TIMELY_PER_SAMPLE => TimelyClock::PerSample,
                _ => return Err(c"timely.clock"),
            },
        };
        match timely.invalid_field() {
            None => Ok(timely),
            Some(f) => Err(match f {
                "alpha" => c"timely.alpha_q24",
                "beta" => c"timely.beta_q24",
                "t_low_ns" => c"timely.t_low_ns",
                "t_high_ns" => c"timely.t_high_ns",
                "min_rtt_ns" => c"timely.min_rtt_ns",
                "delta" => c"timely.delta_q24",
                "hai" => c"timely.hai_q24",
                _ => c"timely.min_rate_mbps",
            }),
        }
    }
}

impl From<&TimelyConfig> for cc_timely_config {
    fn from(t: &TimelyConfig) -> cc_timely_config {
        cc_timely_config {
            alpha_q24: t.alpha.to_bits(),
            beta_q24: t.beta.to_bits(),
            t_low_ns: t.t_low_ns,
            t_high_ns: t.t_high_ns,
            min_rtt_ns: t.min_rtt_ns,
            delta_q24: t.delta.to_bits(),
            hai_q24: t.hai.to_bits(),
            min_rate_mbps: t.min_rate_mbps,
            clock: match t.clock {
                TimelyClock::PerRtt => CC_TIMELY_PER_RTT,
                TimelyClock::PerSample => CC_TIMELY_PER_SAMPLE,
            },
            reserved: [0; 3],
        }
    }
}

impl Mirrored for TimelyConfig {
    type C = cc_timely_config;
}
