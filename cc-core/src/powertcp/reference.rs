//! θ-PowerTCP in `f64`, as the paper's Algorithm 2 and the authors' Linux
//! module compute it (`rttptcp_norm_power`, `update_window`,
//! `rttptcp_update_old`), in bytes and nanoseconds: the model the
//! fixed-point controller is held to.

use super::{PowerClock, ThetaPowerTcpConfig, MIN_POWER, POWER_BITS, POWER_LIMIT};

/// The configuration and the flow's constants in `f64`.
#[derive(Clone, Copy, Debug)]
pub struct ThetaRefParams {
    /// γ.
    pub gamma: f64,
    /// β, bytes.
    pub beta: f64,
    /// The factor's floor.
    pub min_growth: f64,
    /// The window's floor, bytes.
    pub min_window: f64,
    /// The host's BDP, bytes (the window's ceiling).
    pub bdp: f64,
    /// τ, ns.
    pub tau: f64,
    /// When Γ takes a sample.
    pub clock: PowerClock,
    /// τ's scale in Γ_norm.
    pub tau_scale: f64,
}

impl ThetaRefParams {
    /// The parameters of a configuration for a flow of base RTT `tau_ns`
    /// and host BDP `bdp_bytes`.
    pub fn from_config(c: &ThetaPowerTcpConfig, tau_ns: f64, bdp_bytes: f64) -> Self {
        let f = |x: crate::units::Fraction| x.to_bits() as f64 / (1u32 << 24) as f64;
        ThetaRefParams {
            gamma: f(c.gamma),
            beta: if c.beta_mbps == 0 {
                bdp_bytes / c.expected_flows as f64
            } else {
                c.beta_mbps as f64 * 1e6 / 8.0 * tau_ns * 1e-9
            },
            min_growth: f(c.min_growth),
            min_window: c.min_window_bytes as f64,
            bdp: bdp_bytes,
            tau: tau_ns,
            clock: c.clock,
            tau_scale: c.tau_scale_pct as f64 / 100.0,
        }
    }
}

/// One flow's state.
#[derive(Clone, Copy, Debug)]
pub struct ThetaRef {
    /// Parameters.
    pub p: ThetaRefParams,
    /// The window, bytes.
    pub w: f64,
    /// Γ (0: none yet).
    pub power: f64,
    /// The RTT Γ last took, ns (0: none yet).
    pub prev_rtt: f64,
    /// Its time, ns.
    pub t_prev: f64,
    /// The next window update comes when the cumulative ACK reaches it.
    pub mark: f64,
}

impl ThetaRef {
    /// A flow at the host's BDP at time `now`, its first sequence number
    /// `mark`.
    pub fn new(p: ThetaRefParams, now: f64, mark: f64) -> Self {
        ThetaRef {
            p,
            w: p.bdp.max(p.min_window),
            power: 0.0,
            prev_rtt: 0.0,
            t_prev: now,
            mark,
        }
    }

    /// An ACK at `now` with cumulative ACK `cum`, `snd_nxt` `nxt` and the
    /// sample `rtt` (sequence numbers unwrapped).
    pub fn ack(&mut self, now: f64, cum: f64, nxt: f64, rtt: f64) {
        let reached = cum >= self.mark;
        if !reached && self.p.clock == PowerClock::PerRtt {
            return;
        }
        self.sample(now, rtt);
        if reached {
            self.update_window();
            self.mark = nxt;
        }
    }

    /// Γ_norm = (1 + dθ/dt)·θ/τ for a sample `rtt` at `now`, the factor
    /// floored as configured, Γ_norm at the module's cutoff (655·2^-16) and
    /// below the engine's ceiling of 256.
    pub fn norm_power(&self, now: f64, rtt: f64) -> f64 {
        let dt = (now - self.t_prev).max(1.0);
        let a = if self.prev_rtt == 0.0 {
            1.0
        } else if rtt >= self.prev_rtt {
            1.0 + (rtt - self.prev_rtt) / dt
        } else {
            1.0 - ((self.prev_rtt - rtt) / dt).min(1.0)
        };
        let a = a.max(self.p.min_growth);
        let scale = (1u64 << POWER_BITS) as f64;
        (a * rtt / (self.p.tau * self.p.tau_scale)).clamp(MIN_POWER as f64 / scale, POWER_LIMIT as f64 / scale)
    }

    /// Γ after a sample `rtt` at `now`, ns (NORMPOWER).
    pub fn sample(&mut self, now: f64, rtt: f64) {
        let dt = (now - self.t_prev).max(1.0);
        let delta_t = dt.min(self.p.tau);
        let norm = self.norm_power(now, rtt);
        self.power = if self.power == 0.0 {
            norm
        } else {
            ((self.p.tau - delta_t) * self.power + delta_t * norm) / self.p.tau
        };
        self.prev_rtt = rtt;
        self.t_prev = now;
    }

    /// The window law with the current Γ (UPDATEWINDOW).
    pub fn update_window(&mut self) {
        let g = self.p.gamma;
        let w = g * (self.w / self.power + self.p.beta) + (1.0 - g) * self.w;
        self.w = w.min(self.p.bdp).max(self.p.min_window);
    }
}
