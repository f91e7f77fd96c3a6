//! HPCC++ (draft-miao-iccrg-hpccplus, October 2022, §4.2 Figures 4-6 and
//! §6.3.2 Figure 8) in `f64`.

use crate::telemetry::HopSample;

/// Parameters of the model, in plain units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HpccRefParams {
    /// Base RTT T, ns.
    pub t_ns: f64,
    /// Target utilization eta.
    pub eta: f64,
    /// maxStage.
    pub max_stage: u32,
    /// W_ai, bytes.
    pub w_ai: f64,
    /// W_min, bytes.
    pub w_min: f64,
    /// W_init = W_max, bytes.
    pub w_init: f64,
    /// Use sojourn time (§9.3) instead of queue length.
    pub sojourn: bool,
}

/// HPCC++ state of one flow, sender or receiver.
#[derive(Clone, Debug, PartialEq)]
pub struct HpccRef {
    /// Parameters.
    pub p: HpccRefParams,
    /// Normalized inflight U.
    pub u: f64,
    /// Window W, bytes.
    pub w: f64,
    /// Reference window Wc, bytes.
    pub wc: f64,
    /// incStage.
    pub inc_stage: u32,
    /// lastUpdateSeq (sender).
    pub last_update_seq: u32,
    /// lastUpdateTime, ns (Rx-HPCC).
    pub last_update_time: f64,
    /// L: the last telemetry, empty before the first.
    pub last: [Option<HopSample>; 16],
    /// Number of hops in `last`.
    pub n_last: usize,
    /// Path position of `last[0]` (probe responses report one hop).
    pub first_index: u8,
    /// Local time `last` was recorded, ns.
    pub recorded_at_ns: u64,
    /// Set by each MeasureInflight: how many other measured hops had a u'
    /// within a relative 10^-3 of the busiest's (U's tolerance against
    /// the engine) and a different Δts, near ties that fixed-point
    /// rounding may decide the other way.
    pub near_ties: usize,
    /// When k > 0, MeasureInflight takes the k-th such hop as the busiest
    /// instead: the model of an engine that decided the tie that way.
    pub take_near_tie: usize,
}

/// What one telemetry stack did to the model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RefOutcome {
    /// First sample or new path: recorded only.
    Recorded,
    /// Older than the last sample: ignored.
    Stale,
    /// W was recomputed.
    Updated,
    /// No hop measured anything (Δts 0 or skipped): recorded, nothing else.
    Unmeasured,
}

/// `now − before` modulo 2^bits.
fn modular(now: u32, before: u32, bits: u8) -> u64 {
    let modulus = 1u64 << bits;
    (now as u64 % modulus + modulus - before as u64 % modulus) % modulus
}

/// The timestamp interval rule: with W = 2^bits ns and `elapsed` the local
/// time since the history was recorded, a gap of a wrap or more expires
/// the history (`Err(Recorded)`), a difference past max(W/2, min(elapsed +
/// W/4, W − 1)) is an older sample (`Err(Stale)`), anything else is the
/// interval.
fn ts_delta(now: u32, before: u32, bits: u8, elapsed: f64) -> Result<f64, RefOutcome> {
    let wrap = (1u64 << bits) as f64;
    if elapsed >= wrap {
        return Err(RefOutcome::Recorded);
    }
    let d = modular(now, before, bits) as f64;
    let quarter = ((1u64 << bits) / 4) as f64;
    let limit = (wrap / 2.0).max((elapsed + quarter).min(wrap - 1.0));
    if d > limit {
        Err(RefOutcome::Stale)
    } else {
        Ok(d)
    }
}

/// Bytes sent between two samples `dts` ns apart on a link of `b_mbps`,
/// unless a whole counter wrap fits in the interval or the counter moved
/// more than twice the line rate (plus one unit): then none. (The tests in
/// bytes · 8000, as exact integers.)
fn tx_delta(now: u32, before: u32, bits: u8, unit: f64, dts: f64, b_mbps: f64) -> Option<f64> {
    let most_x8000 = dts as u64 * b_mbps as u64;
    if most_x8000 as f64 >= (1u64 << bits) as f64 * unit * 8000.0 {
        return None;
    }
    let d = modular(now, before, bits) as f64 * unit;
    (d * 8000.0 <= 2.0 * most_x8000 as f64 + unit * 8000.0).then_some(d)
}

/// Local ns between two instants as the engine keeps them: in units of
/// 4096 ns, modulo 2^23 units.
fn elapsed_ns(now_ns: u64, then_ns: u64) -> f64 {
    let units = ((now_ns >> 12).wrapping_sub(then_ns >> 12)) & ((1 << 23) - 1);
    (units << 12) as f64
}

/// u' and U saturate here, as the engine's: a queue of 8191 BDPs.
const SATURATED: f64 = 8192.0;

impl HpccRef {
    /// A flow at W = Wc = W_init, U = 0.
    pub fn new(p: HpccRefParams) -> Self {
        HpccRef {
            p,
            u: 0.0,
            w: p.w_init,
            wc: p.w_init,
            inc_stage: 0,
            last_update_seq: 0,
            last_update_time: 0.0,
            last: [None; 16],
            n_last: 0,
            first_index: 0,
            recorded_at_ns: 0,
            near_ties: 0,
            take_near_tie: 0,
        }
    }

    fn same_path(&self, hops: &[HopSample], first_index: u8) -> bool {
        self.first_index == first_index
            && self.n_last == hops.len()
            && hops.iter().zip(self.last.iter()).all(|(a, b)| match b {
                Some(b) => a.id == b.id && a.bandwidth == b.bandwidth && a.widths == b.widths,
                None => false,
            })
    }

    fn record(&mut self, now_ns: u64, hops: &[HopSample], first_index: u8) {
        self.recorded_at_ns = now_ns;
        self.first_index = first_index;
        self.last = [None; 16];
        for (slot, h) in self.last.iter_mut().zip(hops) {
            *slot = Some(*h);
        }
        self.n_last = hops.len();
    }

    fn queue(&self, h: &HopSample) -> f64 {
        if self.p.sojourn {
            h.sojourn_ns as f64
        } else {
            h.qlen_bytes as f64
        }
    }

    /// MeasureInflight (Figure 4) at local time `now_ns`, `U` updated in
    /// place. Each hop's u' is capped at 8192 (the engine's range) before
    /// the busiest hop is chosen; of the hops at the cap, the first.
    pub fn measure_inflight(&mut self, now_ns: u64, hops: &[HopSample], first_index: u8) -> RefOutcome {
        if self.n_last == 0 || !self.same_path(hops, first_index) {
            self.record(now_ns, hops, first_index);
            return RefOutcome::Recorded;
        }
        let elapsed = elapsed_ns(now_ns, self.recorded_at_ns);
        let t = self.p.t_ns;
        let mut u = 0.0f64;
        let mut tau = 0.0f64;
        let mut dts_max = 0.0f64;
        let mut measured = false;
        // Each measured hop's (u', Δts), for the near tie.
        let mut seen = [(0.0f64, 0.0f64); 16];
        let mut n_seen = 0;
        for (i, h) in hops.iter().enumerate() {
            let l = self.last[i].expect("same path has every hop");
            let dts = match ts_delta(h.ts, l.ts, h.widths.ts_bits(), elapsed) {
                Ok(d) => d,
                Err(RefOutcome::Recorded) => {
                    self.record(now_ns, hops, first_index);
                    return RefOutcome::Recorded;
                }
                Err(other) => return other,
            };
            let b_bytes_per_ns = h.bandwidth.as_mbps() as f64 * 1e6 / 8.0 / 1e9;
            if dts == 0.0 || !h.bandwidth.is_plausible() {
                continue;
            }
            // line 4 (or the switch's own tx utilization, times B)
            let tx_rate = match h.tx_utilization.get() {
                Some(util) => util.to_bits() as f64 / (1u64 << 24) as f64 * b_bytes_per_ns,
                None => {
                    let unit = h.widths.tx_unit_bytes() as f64;
                    let Some(dtx) = tx_delta(h.tx, l.tx, h.widths.tx_bits(), unit, dts, h.bandwidth.as_mbps() as f64)
                    else {
                        continue;
                    };
                    dtx / dts
                }
            };
            // line 5
            let q = self.queue(h).min(self.queue(&l));
            let u_prime = if self.p.sojourn {
                q / t + tx_rate / b_bytes_per_ns
            } else {
                q / (b_bytes_per_ns * t) + tx_rate / b_bytes_per_ns
            };
            // The engine holds u' and U below 8192 (a queue of 8191 BDPs):
            // each hop's u' is capped before the busiest is chosen, and of
            // the hops at the cap the first on the path is the busiest
            // (strict `>` below), in the engine as here.
            let u_prime = u_prime.min(SATURATED);
            if let Some(slot) = seen.get_mut(n_seen) {
                *slot = (u_prime, dts);
                n_seen += 1;
            }
            // lines 6-7
            if u_prime > u {
                u = u_prime;
                tau = dts;
            }
            dts_max = dts_max.max(dts);
            measured = true;
        }
        if !measured {
            self.record(now_ns, hops, first_index);
            return RefOutcome::Unmeasured;
        }
        // tau is undefined when no u' > 0: the longest Δts of a measured hop.
        if u == 0.0 {
            tau = dts_max;
        }
        let (u_best, tau_best) = (u, tau);
        // Hops within the engine's rounding of the busiest may be taken
        // for it, except two at the cap: those tie exactly, and the rule
        // keeps the first.
        let ties = seen[..n_seen].iter().filter(|&&(u_other, dts)| {
            u_best > 0.0
                && dts != tau_best
                && u_other >= u_best * (1.0 - 1e-3)
                && !(u_other >= SATURATED && u_best >= SATURATED)
        });
        self.near_ties = ties.clone().count();
        if let Some(&(u_other, dts)) = ties.clone().nth(self.take_near_tie.wrapping_sub(1)) {
            u = u_other;
            tau = dts;
        }
        // line 8
        let tau = tau.min(t);
        // line 9
        self.u = (1.0 - tau / t) * self.u + tau / t * u;
        self.record(now_ns, hops, first_index);
        RefOutcome::Updated
    }

    /// ComputeWind (Figure 5), with W clamped to [W_min, W_init].
    pub fn compute_wind(&mut self, update_wc: bool) -> f64 {
        let p = self.p;
        if self.u >= p.eta || self.inc_stage >= p.max_stage {
            // line 13; U = 0 gives +inf, which the clamp makes W_init.
            self.w = (self.wc / (self.u / p.eta) + p.w_ai).clamp(p.w_min, p.w_init);
            if update_wc {
                self.inc_stage = 0;
                self.wc = self.w;
            }
        } else {
            self.w = (self.wc + p.w_ai).clamp(p.w_min, p.w_init);
            if update_wc {
                self.inc_stage += 1;
                self.wc = self.w;
            }
        }
        self.w
    }

    /// NewAck (Figure 6). `seq_after(a, b)` is serial-number order.
    pub fn new_ack(&mut self, now_ns: u64, cum_ack: u32, snd_nxt: u32, hops: &[HopSample]) -> RefOutcome {
        if hops.is_empty() {
            return RefOutcome::Recorded;
        }
        let first = self.n_last == 0;
        let update = seq_after(cum_ack, self.last_update_seq);
        let out = self.measure_inflight(now_ns, hops, 0);
        match out {
            RefOutcome::Recorded if first => self.last_update_seq = snd_nxt,
            RefOutcome::Updated => {
                self.compute_wind(update);
                if update {
                    self.last_update_seq = snd_nxt;
                }
            }
            _ => {}
        }
        out
    }

    /// NewINT (Figure 8); returns the fed-back window if one is sent.
    pub fn new_int(&mut self, now_ns: f64, hops: &[HopSample]) -> Option<f64> {
        if self.measure_inflight(now_ns as u64, hops, 0) != RefOutcome::Updated {
            return None;
        }
        if now_ns > self.last_update_time + self.p.t_ns {
            let w = self.compute_wind(true);
            self.last_update_time = now_ns;
            Some(w)
        } else {
            self.compute_wind(false);
            None
        }
    }

    /// R = W/T in bit/s (line 27).
    pub fn rate_bps(&self) -> f64 {
        self.w * 8.0 / self.p.t_ns * 1e9
    }
}

/// `a` after `b` in 32-bit serial-number order.
pub fn seq_after(a: u32, b: u32) -> bool {
    let d = a.wrapping_sub(b);
    d != 0 && d < 1 << 31
}
