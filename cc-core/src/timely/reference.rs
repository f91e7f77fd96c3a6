//! TIMELY in `f64`, line for line as the two public codes state it (the
//! HPCC reference simulator's `UpdateRateTimely` per RTT; eRPC's
//! `Timely::update_rate` per sample): the property tests' reference.

use super::{TimelyClock, TimelyConfig, HAI_AFTER};

/// The reference's parameters, in plain units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimelyRefParams {
    /// α, the new difference's weight.
    pub alpha: f64,
    /// β.
    pub beta: f64,
    /// T_low, ns.
    pub t_low: f64,
    /// T_high, ns.
    pub t_high: f64,
    /// minRTT, ns.
    pub min_rtt: f64,
    /// δ, b/s.
    pub delta: f64,
    /// The HAI step, b/s.
    pub hai: f64,
    /// The minimum rate, b/s.
    pub min_rate: f64,
    /// The line rate, b/s.
    pub line: f64,
    /// The clock.
    pub clock: TimelyClock,
}

impl TimelyRefParams {
    /// The engine's configuration for a flow at `line_bps`, in plain units.
    pub fn from_config(cfg: &TimelyConfig, line_bps: f64) -> Self {
        let f = |x: crate::units::Fraction| x.to_bits() as f64 / (1u64 << 24) as f64;
        TimelyRefParams {
            alpha: f(cfg.alpha),
            beta: f(cfg.beta),
            t_low: cfg.t_low_ns as f64,
            t_high: cfg.t_high_ns as f64,
            min_rtt: cfg.min_rtt_ns as f64,
            delta: f(cfg.delta) * line_bps,
            hai: f(cfg.hai) * line_bps,
            min_rate: (cfg.min_rate_mbps as f64 * 1e6).min(line_bps),
            line: line_bps,
            clock: cfg.clock,
        }
    }
}

/// One flow's TIMELY state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimelyRef {
    /// Parameters.
    pub p: TimelyRefParams,
    /// The rate, b/s.
    pub rate: f64,
    /// rtt_diff, ns.
    pub rtt_diff: f64,
    /// The previous sample, ns (0: none yet).
    pub prev_rtt: f64,
    /// Increases in a row (per RTT) or negative differences in a row (per
    /// sample).
    pub count: u32,
    /// Per RTT: lastUpdateSeq. Per sample: the last update's time, ns.
    pub mark: f64,
}

impl TimelyRef {
    /// A flow at the line rate; `mark` the first sequence number (per
    /// RTT) or the start time (per sample).
    pub fn new(p: TimelyRefParams, mark: f64) -> Self {
        TimelyRef {
            p,
            rate: p.line,
            rtt_diff: 0.0,
            prev_rtt: 0.0,
            count: 0,
            mark,
        }
    }

    /// One rate update with sample `rtt`, each step scaled by `phi`.
    pub fn update(&mut self, rtt: f64, phi: f64) {
        let p = self.p;
        let per_sample = p.clock == TimelyClock::PerSample;
        let new_diff = rtt - self.prev_rtt;
        let diff = (1.0 - p.alpha) * self.rtt_diff + p.alpha * new_diff;
        let gradient = diff / p.min_rtt;
        if per_sample {
            self.count = if new_diff < 0.0 { self.count + 1 } else { 0 };
        }
        let hai = self.count >= HAI_AFTER as u32;
        let old = self.rate;
        let (inc, c) = if rtt < p.t_low {
            (Some(if hai && !per_sample { p.hai } else { p.delta }), 0.0)
        } else if rtt > p.t_high {
            (None, 1.0 - p.beta * phi * (1.0 - p.t_high / rtt))
        } else if gradient <= 0.0 {
            (Some(if hai { p.hai } else { p.delta }), 0.0)
        } else {
            (None, (1.0 - p.beta * phi * gradient).max(0.0))
        };
        let mut next = match inc {
            Some(step) => (old + step * phi).min(p.line),
            None => {
                let r = old * c;
                if per_sample {
                    r.max(old * 0.5)
                } else {
                    r
                }
            }
        };
        next = next.max(p.min_rate);
        self.rate = next;
        if !per_sample {
            self.count = if inc.is_some() { self.count + 1 } else { 0 };
        }
        self.rtt_diff = diff;
    }

    /// An ACK at `now` (ns) acknowledging up to `cum_ack`, with `snd_nxt`
    /// and the RTT sample `rtt` (ns), as the engine takes it (sequence
    /// numbers without wrap).
    pub fn ack(&mut self, now: f64, cum_ack: f64, snd_nxt: f64, rtt: f64) {
        match self.p.clock {
            TimelyClock::PerRtt => {
                if cum_ack <= self.mark {
                    return;
                }
                if self.prev_rtt != 0.0 {
                    self.update(rtt, 1.0);
                }
                if snd_nxt > self.mark {
                    self.mark = snd_nxt;
                    self.prev_rtt = rtt;
                }
            }
            TimelyClock::PerSample => {
                if rtt < self.p.min_rtt {
                    return;
                }
                if self.prev_rtt == 0.0 {
                    self.prev_rtt = self.p.min_rtt;
                }
                let phi = ((now - self.mark) / self.p.min_rtt).min(1.0);
                self.update(rtt, phi);
                self.mark = now;
                self.prev_rtt = rtt;
            }
        }
    }
}
