//! Swift in `f64`, as Isekai's `swift.h` computes it (its
//! `ComputeAckFabricCongestionWindow`, BNA's `ComputeAckNicCongestionWindow`,
//! `ComputeTimeoutFabricCongestionWindow`, `GetTargetDelay`,
//! `GetFabricWindowTimeMarker`), in packets and nanoseconds: the model the
//! fixed-point controller is held to.

use super::{SwiftConfig, ONE_PACKET};
use crate::event::NicSample;

/// The configuration in `f64`: windows in packets, fractions as ratios.
#[derive(Clone, Copy, Debug)]
pub struct SwiftRefParams {
    /// Bytes per packet.
    pub mtu: f64,
    /// Base delay, ns.
    pub base_delay: f64,
    /// Delay per forward hop, ns.
    pub hop_scaling: f64,
    /// α of the flow scaling, ns·√packet.
    pub fs_alpha: f64,
    /// The flow scaling's ceiling, ns.
    pub fs_max: f64,
    /// Additive increase, packets.
    pub ai: f64,
    /// β.
    pub beta: f64,
    /// max_mdf.
    pub max_mdf: f64,
    /// Fabric window bounds, packets.
    pub min_w: f64,
    /// Upper bound (and the flow scaling's W_max).
    pub max_w: f64,
    /// Rx level target.
    pub target_level: f64,
    /// Endpoint window: increase per ACK, β, max_mdf, bounds.
    pub nic_ai: f64,
    /// Endpoint β.
    pub nic_beta: f64,
    /// Endpoint max_mdf.
    pub nic_max_mdf: f64,
    /// Endpoint floor.
    pub nic_min_w: f64,
    /// Endpoint ceiling.
    pub nic_max_w: f64,
    /// Losses in a row to the minimum window.
    pub retransmit_limit: u32,
}

impl SwiftRefParams {
    /// The parameters of a fixed-point configuration.
    pub fn from_config(c: &SwiftConfig) -> Self {
        let p = |w: u32| w as f64 / ONE_PACKET as f64;
        let f = |x: crate::units::Fraction| x.to_bits() as f64 / (1u32 << 24) as f64;
        SwiftRefParams {
            mtu: c.mtu as f64,
            base_delay: c.base_delay_ns as f64,
            hop_scaling: c.hop_scaling_ns as f64,
            fs_alpha: c.flow_scaling_alpha_ns as f64,
            fs_max: c.max_flow_scaling_ns as f64,
            ai: p(c.ai),
            beta: f(c.beta),
            max_mdf: f(c.max_mdf),
            min_w: p(c.min_window),
            max_w: p(c.max_window),
            target_level: c.target_rx_level as f64,
            nic_ai: p(c.nic_ai),
            nic_beta: f(c.nic_beta),
            nic_max_mdf: f(c.nic_max_mdf),
            nic_min_w: p(c.nic_min_window),
            nic_max_w: p(c.nic_max_window),
            retransmit_limit: c.retransmit_limit as u32,
        }
    }
}

/// One flow in `f64`.
#[derive(Clone, Copy, Debug)]
pub struct SwiftRef {
    /// Parameters.
    pub p: SwiftRefParams,
    /// Fabric window, packets.
    pub fcwnd: f64,
    /// Endpoint window, packets.
    pub ncwnd: f64,
    /// Fabric window time marker, ns (u32 counter, as the NIC's).
    pub f_marker: u32,
    /// Endpoint window time marker.
    pub n_marker: u32,
    /// Last cumulative ACK.
    pub acked: u32,
    /// Last RTT, ns.
    pub rtt: u32,
    /// Losses in a row.
    pub retransmits: u32,
}

/// √x for x > 0 by Newton's method from the exponent's half (the engine
/// is `no_std`: `f64::sqrt` needs `std`); to the last bit or next to it.
fn sqrt(x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    // Halving the exponent: within a factor of √2 of the root.
    let mut y = f64::from_bits((x.to_bits() >> 1) + (1023u64 << 51));
    for _ in 0..6 {
        y = 0.5 * (y + x / y);
    }
    y
}

/// Isekai's `GetFabricWindowTimeMarker`.
fn marker(now: u32, last: u32, rtt: u32, old: f64, new: f64, floor: f64) -> u32 {
    if new < old || new == floor {
        now
    } else if now.wrapping_sub(last) > rtt {
        now.wrapping_sub(rtt)
    } else {
        last
    }
}

impl SwiftRef {
    /// A flow with the given windows (packets), markers at `now`, last
    /// ACK `acked` and RTT `rtt`.
    pub fn new(p: SwiftRefParams, fcwnd: f64, ncwnd: f64, now: u32, acked: u32, rtt: u32) -> Self {
        SwiftRef {
            p,
            fcwnd,
            ncwnd,
            f_marker: now,
            n_marker: now,
            acked,
            rtt,
            retransmits: 0,
        }
    }

    /// `GetTargetDelay`: base + hops·scaling + clamp(α/√W + β_fs, 0, max)
    /// with β_fs = −α/√W_max.
    pub fn target(&self, hops: u8) -> f64 {
        let fs = (self.p.fs_alpha / sqrt(self.fcwnd) - self.p.fs_alpha / sqrt(self.p.max_w)).clamp(0.0, self.p.fs_max);
        self.p.base_delay + hops as f64 * self.p.hop_scaling + fs
    }

    /// An ACK at `now` (ns) with cumulative ACK `cum` and the NICs'
    /// sample; `None` if the sample is refused.
    pub fn ack(&mut self, now: u32, cum: u32, n: &NicSample) -> Option<()> {
        let (rtt, delay) = n.delays().ok()?;
        let d = cum.wrapping_sub(self.acked);
        let acked = if d != 0 && d < 1 << 31 {
            self.acked = cum;
            self.retransmits = 0;
            d as f64
        } else {
            0.0
        };
        self.rtt = rtt;
        let target = self.target(n.forward_hops);
        // Fabric window.
        let old = self.fcwnd;
        let mut w = old;
        if (delay as f64) < target {
            let mut inc = self.p.ai * acked.min((1u32 << 24) as f64) / self.p.mtu;
            if w >= 1.0 {
                inc /= w;
            }
            w += inc;
        } else if now.wrapping_sub(self.f_marker) >= rtt {
            let scale = (delay as f64 - target) / delay as f64;
            w *= 1.0 - (scale * self.p.beta).min(self.p.max_mdf);
        }
        self.fcwnd = w.clamp(self.p.min_w, self.p.max_w);
        self.f_marker = marker(now, self.f_marker, rtt, old, self.fcwnd, self.p.min_w);
        // Endpoint window.
        let old = self.ncwnd;
        let mut w = old;
        let level = n.rx_buffer_level as f64;
        if level < self.p.target_level {
            w += self.p.nic_ai;
        } else if now.wrapping_sub(self.n_marker) >= rtt {
            let scale = (level - self.p.target_level) / level.max(1.0);
            w *= 1.0 - (scale * self.p.nic_beta).min(self.p.nic_max_mdf);
        }
        self.ncwnd = w.clamp(self.p.nic_min_w, self.p.nic_max_w);
        self.n_marker = marker(now, self.n_marker, rtt, old, self.ncwnd, self.p.nic_min_w);
        Some(())
    }

    /// A loss at `now`.
    pub fn loss(&mut self, now: u32) {
        self.retransmits += 1;
        let old = self.fcwnd;
        if now.wrapping_sub(self.f_marker) >= self.rtt {
            if self.retransmits == 1 {
                self.fcwnd *= 1.0 - self.p.max_mdf;
            } else if self.retransmits >= self.p.retransmit_limit {
                self.fcwnd = self.p.min_w;
            }
        }
        self.fcwnd = self.fcwnd.clamp(self.p.min_w, self.p.max_w);
        self.f_marker = marker(now, self.f_marker, self.rtt, old, self.fcwnd, self.p.min_w);
    }

    /// The window that governs, packets.
    pub fn window(&self) -> f64 {
        self.fcwnd.min(self.ncwnd)
    }
}
