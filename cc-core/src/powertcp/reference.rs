//! θ-PowerTCP in `f64`, as the paper's Algorithm 2 and the authors' Linux
//! module compute it (`rttptcp_norm_power`, `update_window`,
//! `rttptcp_update_old`), and PowerTCP with in-band telemetry as its
//! Algorithm 1 does ([`PowerTcpRef`]), in bytes and nanoseconds: the
//! models the fixed-point controllers are held to.

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

/// One hop's sample for [`PowerTcpRef`]: what the switch wrote, in bytes
/// and ns, counters already unwrapped.
#[derive(Clone, Copy, Debug, Default)]
pub struct HopRef {
    /// Egress timestamp, ns.
    pub ts: f64,
    /// Bytes the port has sent.
    pub tx: f64,
    /// Queue length, bytes.
    pub qlen: f64,
    /// Link speed, bytes per ns.
    pub b: f64,
}

/// PowerTCP with in-band telemetry in `f64`, as the paper's Algorithm 1
/// computes it (NORMPOWER, UPDATEWINDOW), with the engine's readings
/// where the paper is silent: Δt of the busiest hop, or the longest
/// interval when no hop shows any load; the first Γ is Γ_norm.
#[derive(Clone, Copy, Debug)]
pub struct PowerTcpRef {
    /// γ.
    pub gamma: f64,
    /// β, bytes.
    pub beta: f64,
    /// η.
    pub eta: f64,
    /// λ's floor, a fraction of B.
    pub min_arrival: f64,
    /// Whether λ includes the queue's growth.
    pub queue_growth: bool,
    /// Whether the window law runs on every ACK (W_old the window at the
    /// last RTT boundary).
    pub per_ack: bool,
    /// The window's floor, bytes.
    pub min_window: f64,
    /// The host's BDP, bytes.
    pub bdp: f64,
    /// τ, ns.
    pub tau: f64,
    /// The window, bytes.
    pub w: f64,
    /// W_old for the per-ACK clock, bytes.
    pub w_old: f64,
    /// Γ (0: none yet).
    pub power: f64,
    /// The next RTT boundary.
    pub mark: f64,
}

impl PowerTcpRef {
    /// A flow at the host's BDP `bdp_bytes` with base RTT `tau_ns`.
    pub fn new(c: &super::PowerTcpConfig, tau_ns: f64, bdp_bytes: f64, mark: f64) -> Self {
        let f = |x: crate::units::Fraction| x.to_bits() as f64 / (1u32 << 24) as f64;
        let w = bdp_bytes.max(c.min_window_bytes as f64);
        PowerTcpRef {
            gamma: f(c.gamma),
            beta: if c.beta_mbps == 0 {
                bdp_bytes / c.expected_flows as f64
            } else {
                c.beta_mbps as f64 * 1e6 / 8.0 * tau_ns * 1e-9
            },
            eta: f(c.eta),
            min_arrival: f(c.min_arrival),
            queue_growth: c.arrivals == super::Arrivals::QueueAndSent,
            per_ack: c.clock == super::UpdateClock::PerAck,
            min_window: c.min_window_bytes as f64,
            bdp: bdp_bytes,
            tau: tau_ns,
            w,
            w_old: w,
            power: 0.0,
            mark,
        }
    }

    /// Γ_norm and its Δt over the hops `now` against `before`; `None`
    /// where no hop's interval is positive.
    pub fn norm_power(&self, now: &[HopRef], before: &[HopRef]) -> Option<(f64, f64)> {
        let mut best: Option<(f64, f64)> = None;
        let mut longest = 0.0f64;
        for (s, h) in now.iter().zip(before) {
            let dt = s.ts - h.ts;
            if dt <= 0.0 {
                continue;
            }
            longest = longest.max(dt);
            let sent = s.tx - h.tx;
            let arrived = if self.queue_growth {
                (sent + s.qlen - h.qlen).max(0.0)
            } else {
                sent
            };
            let lambda = (arrived / dt).max(self.min_arrival * s.b);
            let power = lambda * (s.qlen + s.b * self.tau) / (s.b * s.b * self.tau);
            if power > 0.0 && best.is_none_or(|(p, _)| power > p) {
                best = Some((power, dt));
            }
        }
        match best {
            Some(b) => Some(b),
            None if longest > 0.0 => Some((0.0, longest)),
            None => None,
        }
    }

    /// An ACK with cumulative ACK `cum`, `snd_nxt` `nxt` (unwrapped) and
    /// its hops against the hops of the ACK before.
    pub fn ack(&mut self, cum: f64, nxt: f64, now: &[HopRef], before: &[HopRef]) {
        let Some((norm, dt)) = self.norm_power(now, before) else {
            return;
        };
        let limit = (POWER_LIMIT as f64) / (1u64 << POWER_BITS) as f64;
        let norm = norm.clamp(MIN_POWER as f64 / (1u64 << POWER_BITS) as f64, limit);
        let dt = dt.min(self.tau);
        self.power = if self.power == 0.0 {
            norm
        } else {
            ((self.tau - dt) * self.power + dt * norm) / self.tau
        };
        let reached = cum >= self.mark;
        let law = |w_old: f64, w: f64| {
            let next = self.gamma * (self.eta * w_old / self.power + self.beta) + (1.0 - self.gamma) * w;
            next.min(self.bdp).max(self.min_window)
        };
        if self.per_ack {
            self.w = law(self.w_old, self.w);
            if reached {
                self.w_old = self.w;
                self.mark = nxt;
            }
        } else if reached {
            self.w = law(self.w, self.w);
            self.mark = nxt;
        }
    }
}
