//! NSCC's configuration as a C struct, and its conversions.

use core::ffi::CStr;

use cc_core::nscc::NsccConfig;

use super::{flag, fraction, Mirrored};

/// NSCC (Ultra Ethernet's sender congestion control: an ACK's ECN-Echo
/// and `rtt_ns`, `cc_on_nack` for trimmed packets, `cc_on_loss` for
/// timeouts).
pub const CC_ALGORITHM_NSCC: u8 = 11;

/// NSCC, as `cc_config_default` derives it for 100 Gb/s hosts and a
/// 14.02 µs network (uet-htsim's defaults).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct cc_nscc_config {
    /// Bytes of a full packet, header included (64 ..= 65 535).
    pub mtu: u32,
    /// The link rate the window's ceiling follows, Mb/s, a multiple of
    /// 125 (125 ..= 1 600 000).
    pub line_rate_mbps: u32,
    /// The network's largest unloaded RTT, ns (1 ..= 2^20).
    pub network_rtt_ns: u32,
    /// The target queueing delay, ns (1 ..= 2^23).
    pub target_delay_ns: u32,
    /// The delay that runs quick adapt at a window's end, ns (≤ 2^24).
    pub qa_threshold_ns: u32,
    /// Fair increase, bytes² per byte acknowledged (≤ 2^26).
    pub fi: u32,
    /// Proportional increase, bytes² per byte per ns, 2^-16 (≤ 2^24).
    pub alpha_q16: u32,
    /// Fast increase, window bytes per byte acknowledged, 2^-16 (≤ 2^20).
    pub fi_scale_q16: u32,
    /// Added once a fulfil period, bytes (≤ 2^20).
    pub eta: u32,
    /// γ of the decrease, 2^-24 (> 0, ≤ 2^24).
    pub gamma_q24: u32,
    /// The part of the window a decrease keeps at least, 2^-24 (> 0, ≤ 2^24).
    pub md_floor_q24: u32,
    /// The delay average's weight, 2^-24 (> 0, ≤ 2^24).
    pub delay_ewma_q24: u32,
    /// Fulfil once more than this was received, bytes (≥ 1).
    pub adjust_bytes: u32,
    /// Fast increase counts ACKs below this delay, ns (≤ 2^24).
    pub fast_increase_delay_ns: u32,
    /// A new flow's window, bytes; 0: the ceiling.
    pub initial_window: u32,
    /// Quick adapt when less than `maxwnd >> qa_gate` was delivered (0 ..= 31).
    pub qa_gate: u8,
    /// 1: a NACK's RTT lowers the base RTT; 0: not.
    pub nack_updates_base_rtt: u8,
    /// 1: quick adapt runs; 0: not.
    pub quick_adapt: u8,
    /// Zero.
    pub reserved: u8,
}

impl TryFrom<&cc_nscc_config> for NsccConfig {
    /// The first field out of range, as `cc_config_check` names it.
    type Error = &'static CStr;

    fn try_from(c: &cc_nscc_config) -> Result<NsccConfig, &'static CStr> {
        let nscc = NsccConfig {
            mtu: c.mtu,
            line_rate_mbps: c.line_rate_mbps,
            network_rtt_ns: c.network_rtt_ns,
            target_delay_ns: c.target_delay_ns,
            qa_threshold_ns: c.qa_threshold_ns,
            qa_gate: c.qa_gate,
            fi: c.fi,
            alpha_q16: c.alpha_q16,
            fi_scale_q16: c.fi_scale_q16,
            eta: c.eta,
            gamma: fraction(c.gamma_q24, c"nscc.gamma_q24")?,
            md_floor: fraction(c.md_floor_q24, c"nscc.md_floor_q24")?,
            delay_ewma: fraction(c.delay_ewma_q24, c"nscc.delay_ewma_q24")?,
            adjust_bytes: c.adjust_bytes,
            fast_increase_delay_ns: c.fast_increase_delay_ns,
            initial_window: c.initial_window,
            nack_updates_base_rtt: flag(c.nack_updates_base_rtt, c"nscc.nack_updates_base_rtt")?,
            quick_adapt: flag(c.quick_adapt, c"nscc.quick_adapt")?,
        };
        if c.reserved != 0 {
            return Err(c"nscc.reserved");
        }
        match nscc.invalid_field() {
            None => Ok(nscc),
            Some(f) => Err(match f {
                "mtu" => c"nscc.mtu",
                "line_rate_mbps" => c"nscc.line_rate_mbps",
                "network_rtt_ns" => c"nscc.network_rtt_ns",
                "target_delay_ns" => c"nscc.target_delay_ns",
                "qa_threshold_ns" => c"nscc.qa_threshold_ns",
                "qa_gate" => c"nscc.qa_gate",
                "fi" => c"nscc.fi",
                "alpha_q16" => c"nscc.alpha_q16",
                "fi_scale_q16" => c"nscc.fi_scale_q16",
                "eta" => c"nscc.eta",
                "gamma" => c"nscc.gamma_q24",
                "md_floor" => c"nscc.md_floor_q24",
                "delay_ewma" => c"nscc.delay_ewma_q24",
                "adjust_bytes" => c"nscc.adjust_bytes",
                "fast_increase_delay_ns" => c"nscc.fast_increase_delay_ns",
                _ => c"nscc.initial_window",
            }),
        }
    }
}

impl From<&NsccConfig> for cc_nscc_config {
    fn from(c: &NsccConfig) -> cc_nscc_config {
        cc_nscc_config {
            mtu: c.mtu,
            line_rate_mbps: c.line_rate_mbps,
            network_rtt_ns: c.network_rtt_ns,
            target_delay_ns: c.target_delay_ns,
            qa_threshold_ns: c.qa_threshold_ns,
            fi: c.fi,
            alpha_q16: c.alpha_q16,
            fi_scale_q16: c.fi_scale_q16,
            eta: c.eta,
            gamma_q24: c.gamma.to_bits(),
            md_floor_q24: c.md_floor.to_bits(),
            delay_ewma_q24: c.delay_ewma.to_bits(),
            adjust_bytes: c.adjust_bytes,
            fast_increase_delay_ns: c.fast_increase_delay_ns,
            initial_window: c.initial_window,
            qa_gate: c.qa_gate,
            nack_updates_base_rtt: c.nack_updates_base_rtt as u8,
            quick_adapt: c.quick_adapt as u8,
            reserved: 0,
        }
    }
}

impl Mirrored for NsccConfig {
    type C = cc_nscc_config;
}
