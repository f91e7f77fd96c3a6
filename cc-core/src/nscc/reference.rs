//! NSCC in `f64`, as uet-htsim's `uec.cpp` computes it
//! (`updateCwndOnAck_NSCC`, `quick_adapt`, `fair_increase`,
//! `proportional_increase`, `fast_increase`, `multiplicative_decrease`,
//! `fulfill_adjustment`, `update_delay`, `update_base_rtt`,
//! `updateCwndOnNack_NSCC`, `mark_packet_for_retransmission`), in bytes
//! and nanoseconds, with its parameters as `initNsccParams` derives them
//! in `f64`: the model the fixed-point controller is held to. The window
//! and the accumulator are truncated where uet-htsim stores them in
//! integers; the accumulator does not wrap (uet-htsim's 32 bits do at
//! 800 Gb/s) and is not bounded (the engine's saturates at 2^43 − 1,
//! past every period the tests reach).

use super::NsccConfig;

/// ⌊x⌋ for 0 ≤ x < 2^63 (`no_std` has no `f64::floor`); other values
/// as they are.
pub fn floor(x: f64) -> f64 {
    if (0.0..9.2e18).contains(&x) {
        x as u64 as f64
    } else {
        x
    }
}

/// `initNsccParams`'s values in `f64` (bytes, ns).
#[derive(Clone, Copy, Debug)]
pub struct NsccRefParams {
    /// MTU, bytes.
    pub mtu: f64,
    /// Host link rate, bytes per ns.
    pub bytes_per_ns: f64,
    /// Network RTT, ns.
    pub network_rtt: f64,
    /// Target queueing delay, ns.
    pub target: f64,
    /// Quick adapt's delay threshold, ns.
    pub qa_threshold: f64,
    /// Quick adapt's gate (a shift).
    pub qa_gate: u32,
    /// Fair increase gain, bytes.
    pub fi: f64,
    /// Proportional gain, bytes per ns.
    pub alpha: f64,
    /// Fast increase gain.
    pub fi_scale: f64,
    /// Added once a period, bytes.
    pub eta: f64,
    /// γ.
    pub gamma: f64,
    /// The decrease's floor.
    pub md_floor: f64,
    /// The delay average's weight.
    pub delay_alpha: f64,
    /// Fulfil threshold, bytes.
    pub adjust_bytes: f64,
    /// Fast increase delay gate, ns.
    pub fast_gate: f64,
    /// NACK RTTs lower the base RTT.
    pub nack_base: bool,
    /// Quick adapt runs.
    pub quick_adapt: bool,
}

impl NsccRefParams {
    /// `initNsccParams` in `f64`, from the host rate (Mb/s), the network
    /// RTT (ps), the MTU and whether the fabric trims.
    pub fn derive(line_rate_mbps: u32, network_rtt_ps: u64, mtu: u32, trimming: bool) -> Self {
        let rtt_ps = network_rtt_ps as f64;
        let bps = line_rate_mbps as f64 * 1e6;
        let bdp = rtt_ps * 1e-12 * bps / 8.0;
        let target_ps = if trimming { floor(rtt_ps * 0.75) } else { rtt_ps };
        let mss = (mtu - 64) as f64;
        let a = bdp / (12e-6 * 100e9 / 8.0);
        let b = target_ps / 12e6;
        NsccRefParams {
            mtu: mtu as f64,
            bytes_per_ns: bps / 8e9,
            network_rtt: rtt_ps / 1000.0,
            target: target_ps / 1000.0,
            qa_threshold: 4.0 * target_ps / 1000.0,
            qa_gate: 3,
            fi: 5.0 * mss * a,
            alpha: 4.0 * mss * a * b / target_ps * 1000.0,
            fi_scale: 0.25 * a,
            eta: 0.15 * mss * a,
            gamma: 0.8,
            md_floor: 0.5,
            delay_alpha: 0.0125,
            adjust_bytes: 8.0 * mtu as f64,
            fast_gate: 1000.0,
            nack_base: true,
            quick_adapt: true,
        }
    }

    /// The parameters of a fixed-point configuration, read back.
    pub fn from_config(c: &NsccConfig) -> Self {
        let f = |x: crate::units::Fraction| x.to_bits() as f64 / (1u32 << 24) as f64;
        NsccRefParams {
            mtu: c.mtu as f64,
            bytes_per_ns: c.line_rate_mbps as f64 / 8000.0,
            network_rtt: c.network_rtt_ns as f64,
            target: c.target_delay_ns as f64,
            qa_threshold: c.qa_threshold_ns as f64,
            qa_gate: c.qa_gate as u32,
            fi: c.fi as f64,
            alpha: c.alpha_q16 as f64 / 65_536.0,
            fi_scale: c.fi_scale_q16 as f64 / 65_536.0,
            eta: c.eta as f64,
            gamma: f(c.gamma),
            md_floor: f(c.md_floor),
            delay_alpha: f(c.delay_ewma),
            adjust_bytes: c.adjust_bytes as f64,
            fast_gate: c.fast_increase_delay_ns as f64,
            nack_base: c.nack_updates_base_rtt,
            quick_adapt: c.quick_adapt,
        }
    }

    /// 1.5 BDP at base RTT `base` (ns), each truncated (`update_base_rtt`).
    pub fn max_window(&self, base: f64) -> f64 {
        floor(1.5 * floor(base * self.bytes_per_ns))
    }
}

/// One flow's NSCC state, as uet-htsim's `UecSrc` keeps it. Times are ns
/// modulo 2^32 as the engine's (a window's end compared by its sign).
#[derive(Clone, Copy, Debug)]
#[allow(missing_docs)]
pub struct NsccRef {
    pub p: NsccRefParams,
    pub cwnd: f64,
    pub base_rtt: f64,
    pub avg_delay: f64,
    pub achieved: f64,
    pub received: f64,
    pub bytes_to_ignore: f64,
    pub bytes_ignored: f64,
    pub inc: f64,
    pub fi_count: f64,
    pub increase: bool,
    pub trigger_qa: bool,
    pub qa_open: bool,
    pub qa_end: u32,
    pub last_adjust: u32,
    pub last_dec: u32,
    pub recvd: u32,
    /// uet-htsim's `_nscc_overall_stats`, kept where it keeps them.
    pub stats: RefStats,
}

/// uet-htsim's per-flow NSCC sums (`_nscc_overall_stats`, and the
/// fulfil's pending fair and proportional gatherings), bytes.
#[derive(Clone, Copy, Debug, Default)]
#[allow(missing_docs)]
pub struct RefStats {
    pub fair_inc: f64,
    pub prop_inc: f64,
    pub fast_inc: f64,
    pub eta_inc: f64,
    pub multi_dec: f64,
    pub quick_dec: f64,
    pub nack_dec: f64,
    pub fair_pending: f64,
    pub prop_pending: f64,
}

impl NsccRef {
    /// `initNscc`: base RTT `base` (ns), the window at the ceiling or at
    /// `cwnd` bytes (bounded as the engine bounds it), cumulative bytes
    /// from `start`.
    pub fn new(p: NsccRefParams, base: f64, cwnd: Option<f64>, start: u32) -> Self {
        let max = p.max_window(base);
        NsccRef {
            p,
            cwnd: cwnd.unwrap_or(max).max(p.mtu).min(max),
            base_rtt: base,
            avg_delay: 0.0,
            achieved: 0.0,
            received: 0.0,
            bytes_to_ignore: 0.0,
            bytes_ignored: 0.0,
            inc: 0.0,
            fi_count: 0.0,
            increase: false,
            trigger_qa: false,
            qa_open: false,
            qa_end: 0,
            last_adjust: 0,
            last_dec: 0,
            recvd: start,
            stats: RefStats::default(),
        }
    }

    fn bounds(&mut self) {
        if self.cwnd < self.p.mtu {
            self.cwnd = self.p.mtu;
        }
        let max = self.p.max_window(self.base_rtt);
        if self.cwnd > max {
            self.cwnd = max;
        }
    }

    fn update_base_rtt(&mut self, rtt: f64) {
        if self.base_rtt > rtt {
            self.base_rtt = rtt;
        }
    }

    fn update_delay(&mut self, raw_rtt: f64, skip: bool) {
        let d = raw_rtt - self.base_rtt;
        let a = self.p.delay_alpha;
        self.avg_delay = if !skip && d > self.p.target {
            a * self.base_rtt * 0.25 + (1.0 - a) * self.avg_delay
        } else {
            a * d + (1.0 - a) * self.avg_delay
        };
    }

    fn quick_adapt(&mut self, now: u32, is_loss: bool, skip: bool, delay: f64, in_flight: f64) -> bool {
        if !self.p.quick_adapt {
            return false;
        }
        let mut done = false;
        if self.bytes_ignored < self.bytes_to_ignore && skip {
            done = true;
        } else if !self.qa_open || (now.wrapping_sub(self.qa_end) as i32) > 0 {
            let gate = (self.p.max_window(self.base_rtt) as u64 >> self.p.qa_gate) as f64;
            if self.qa_open && (self.trigger_qa || is_loss || delay > self.p.qa_threshold) && self.achieved < gate {
                let before = self.cwnd;
                self.cwnd = self.achieved.max(self.p.mtu);
                self.stats.quick_dec += before - self.cwnd;
                self.bytes_to_ignore = in_flight;
                self.bytes_ignored = 0.0;
                self.trigger_qa = false;
                done = true;
            }
            self.achieved = 0.0;
            self.qa_end = now
                .wrapping_add(self.base_rtt as u32)
                .wrapping_add(self.p.target as u32);
            self.qa_open = true;
        }
        if done {
            self.inc = 0.0;
            self.received = 0.0;
        }
        done
    }

    fn fast_increase(&mut self, acked: f64, delay: f64) {
        if delay < self.p.fast_gate {
            self.fi_count += acked;
            if self.fi_count > self.cwnd || self.increase {
                let before = self.cwnd;
                self.cwnd = floor(self.cwnd + acked * self.p.fi_scale);
                self.stats.fast_inc += self.cwnd - before;
                self.increase = true;
                return;
            }
        } else {
            self.fi_count = 0.0;
        }
        self.increase = false;
    }

    fn multiplicative_decrease(&mut self, now: u32) {
        self.increase = false;
        self.fi_count = 0.0;
        let avg = self.avg_delay;
        let t = self.p.target;
        if avg > t && (now.wrapping_sub(self.last_dec) as f64) > self.base_rtt {
            let k = (1.0 - self.p.gamma * (avg - t) / avg).max(self.p.md_floor);
            let before = self.cwnd;
            self.cwnd = floor(self.cwnd * k).max(self.p.mtu);
            self.stats.multi_dec += before - self.cwnd;
            self.last_dec = now;
        }
    }

    fn fulfill(&mut self, now: u32) {
        self.cwnd += floor(self.inc / self.cwnd);
        // The pending gatherings over the window just set, truncated.
        let s = &mut self.stats;
        s.fair_inc += floor(s.fair_pending / self.cwnd);
        s.prop_inc += floor(s.prop_pending / self.cwnd);
        (s.fair_pending, s.prop_pending) = (0.0, 0.0);
        if now.wrapping_sub(self.last_adjust) as f64 >= self.p.network_rtt {
            self.stats.eta_inc += floor(self.p.eta);
            self.cwnd += floor(self.p.eta);
            self.last_adjust = now;
        }
        self.inc = 0.0;
        self.received = 0.0;
    }

    fn newly(&mut self, cum: u32) -> f64 {
        let d = cum.wrapping_sub(self.recvd);
        if d == 0 || d >= 1 << 31 {
            return 0.0;
        }
        self.recvd = cum;
        let n = d as f64;
        self.achieved += n;
        self.received += n;
        self.bytes_ignored += n;
        n
    }

    /// `processAck` and `updateCwndOnAck_NSCC`: cumulative received bytes
    /// `cum`, `in_flight` after it, RTT sample (ns) if any, ECN-Echo.
    pub fn ack(&mut self, now: u32, cum: u32, in_flight: u32, rtt: Option<u32>, ecn: bool) {
        let acked = self.newly(cum);
        let delay = match rtt {
            Some(r) => {
                let r = r.min(super::MAX_RTT_NS) as f64;
                self.update_base_rtt(r);
                if r >= self.base_rtt {
                    self.update_delay(r, ecn);
                    r - self.base_rtt
                } else {
                    self.avg_delay
                }
            }
            None => floor(self.avg_delay),
        };
        let skip = ecn;
        if self.quick_adapt(now, false, skip, delay, in_flight as f64) {
            return;
        }
        let t = self.p.target;
        if !skip && delay >= t {
            let add = floor(self.p.fi * acked);
            self.stats.fair_pending += add;
            self.inc += add;
        } else if !skip && delay < t {
            self.fast_increase(acked, delay);
            if !self.increase {
                let add = floor(self.p.alpha * acked * (t - delay));
                self.stats.prop_pending += add;
                self.inc += add;
            }
        } else if skip && delay >= t {
            self.multiplicative_decrease(now);
        }
        self.bounds();
        if self.received > self.p.adjust_bytes || now.wrapping_sub(self.last_adjust) as f64 > self.p.network_rtt {
            self.fulfill(now);
        }
        self.bounds();
    }

    /// `processNack` and `updateCwndOnNack_NSCC` (no receiver credit: a
    /// last-hop trim cuts too).
    pub fn nack(&mut self, now: u32, len: u32, in_flight: u32, rtt: Option<u32>) {
        if let (Some(r), true) = (rtt, self.p.nack_base) {
            self.update_base_rtt(r.min(super::MAX_RTT_NS) as f64);
        }
        self.bytes_ignored += len as f64;
        self.stats.nack_dec += len as f64;
        let raw = self.base_rtt + self.p.network_rtt;
        self.update_delay(raw, true);
        self.trigger_qa = true;
        if !self.quick_adapt(now, true, true, 0.0, in_flight as f64) {
            self.cwnd -= len as f64;
            self.bounds();
        }
    }

    /// `mark_packet_for_retransmission` on a timeout: one MTU off.
    pub fn timeout(&mut self) {
        self.cwnd = (self.cwnd - self.p.mtu).max(self.p.mtu);
    }
}
