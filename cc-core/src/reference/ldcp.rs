//! LDCP (draft-dai-tsvwg-pfc-free-congestion-control-01 §2.2, §2.3, §3.1,
//! §3.2) in `f64`.

use super::hpcc::seq_after;

/// Parameters of the model, in plain units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LdcpRefParams {
    /// Packet size, bytes.
    pub mtu: f64,
    /// alpha of eq. (1).
    pub alpha: f64,
    /// beta of eq. (1).
    pub beta: f64,
    /// gamma of §2.2.
    pub gamma: f64,
    /// RTT T, ns.
    pub t_ns: f64,
    /// IW in packets (ceil(BDP/MTU)).
    pub iw_pkts: f64,
    /// Zero-RTT fast start on.
    pub fast_start: bool,
}

/// The window variant (§2.2, §2.3, §3.1).
#[derive(Clone, Debug, PartialEq)]
pub struct LdcpRef {
    /// Parameters.
    pub p: LdcpRefParams,
    /// cw in packets.
    pub cw: f64,
    /// In fast start.
    pub fast: bool,
    /// Highest cumulative ACK.
    pub snd_una: u32,
    /// First sequence number.
    pub start: u32,
    /// Next tick when cw < 1, ns.
    pub next_tick: Option<f64>,
    /// Smoothed RTT, ns.
    pub srtt: f64,
}

impl LdcpRef {
    /// A flow starting at `start` with cw = IW.
    pub fn new(p: LdcpRefParams, start: u32) -> Self {
        LdcpRef {
            p,
            cw: p.iw_pkts,
            fast: p.fast_start,
            snd_una: start,
            start,
            next_tick: None,
            srtt: p.t_ns,
        }
    }

    /// Window in bytes.
    pub fn window_bytes(&self) -> f64 {
        self.cw * self.p.mtu
    }

    /// Pacing rate in bit/s: min(cw, IW)·MTU/RTT.
    pub fn rate_bps(&self) -> f64 {
        self.cw.min(self.p.iw_pkts) * self.p.mtu * 8.0 / self.srtt * 1e9
    }

    /// Folds an RTT sample into the smoothed RTT, floored at the base RTT;
    /// fast start takes no samples (as the engine documents). The gain is
    /// 1/8 a sample at cw ≥ 1 and min(1, 1/(8·cw)) below, where a sample
    /// comes once every 1/cw RTTs (as the engine documents).
    pub fn rtt_sample(&mut self, sample_ns: f64) {
        if !self.fast {
            let gain = if self.cw >= 1.0 {
                1.0 / 8.0
            } else {
                (1.0 / (8.0 * self.cw)).min(1.0)
            };
            self.srtt = smooth(self.srtt, sample_ns.max(self.p.t_ns), gain);
        }
    }

    fn iw_end(&self) -> u32 {
        // IW·MTU bytes, rounded up to a whole byte.
        let bytes = self.p.iw_pkts * self.p.mtu;
        let whole = bytes as u32;
        self.start
            .wrapping_add(if (whole as f64) < bytes { whole + 1 } else { whole })
    }

    /// Whether a packet `[seq, seq+len)` is ECN-capable.
    pub fn ect(&self, seq: u32, len: u32, last_of_message: bool) -> bool {
        if !self.fast {
            return true;
        }
        let iw_end = self.iw_end();
        let in_first_rtt = seq_after(iw_end, seq);
        let closes_iw = !seq_after(iw_end, seq.wrapping_add(len));
        !in_first_rtt || closes_iw || last_of_message
    }

    /// Arms the tick when cw falls below 1, drops it above; a rise below 1
    /// brings the pending tick to now + RTT/cw if that is sooner.
    fn crossed(&mut self, now_ns: f64, old: f64) {
        if self.cw < 1.0 && (old >= 1.0 || self.next_tick.is_none()) {
            self.next_tick = Some(now_ns + self.srtt / self.cw);
        } else if self.cw >= 1.0 {
            self.next_tick = None;
        } else if let Some(t) = self.next_tick.filter(|_| self.cw > old) {
            self.next_tick = Some(t.min(now_ns + self.srtt / self.cw));
        }
    }

    /// An ACK with cumulative `cum_ack` and ECN-Echo `ece`.
    pub fn on_ack(&mut self, now_ns: f64, cum_ack: u32, ece: bool) {
        if !seq_after(cum_ack, self.snd_una) {
            return;
        }
        let newly = cum_ack.wrapping_sub(self.snd_una) as f64;
        self.snd_una = cum_ack;
        if self.fast {
            if !seq_after(self.iw_end(), cum_ack) {
                self.fast = false;
                self.cw = self.p.iw_pkts;
            }
            return;
        }
        let n = newly / self.p.mtu;
        let old = self.cw;
        let p = self.p;
        self.cw = if old >= 1.0 {
            if ece {
                old - n * p.beta
            } else {
                old + n * p.alpha / old
            }
        } else {
            // Below one packet the rules are per packet acknowledged:
            // k = ⌈n⌉ times (an ACK for one packet applies them once).
            // (In integers: `core` has no f64 ceil; the bytes and the MTU
            // are whole numbers.)
            let k = (newly as u64).div_ceil((p.mtu as u64).max(1)).max(1);
            if ece {
                // Halved k times; past 64 halvings only gamma is left.
                (0..k.min(64)).fold(old, |cw, _| cw / 2.0).max(p.gamma)
            } else {
                old + k as f64 * p.gamma
            }
        };
        self.cw = self.cw.max(p.gamma);
        self.crossed(now_ns, old);
    }

    /// A loss: fast start → stable at the packets acked before it.
    pub fn on_loss(&mut self, now_ns: f64) {
        let old = self.cw;
        if self.fast {
            self.fast = false;
            let acked = self.snd_una.wrapping_sub(self.start) as f64;
            self.cw = (acked / self.p.mtu).max(self.p.gamma);
        }
        self.crossed(now_ns, old);
    }

    /// The timer fired; true if it released a packet.
    pub fn on_timer(&mut self, now_ns: f64) -> bool {
        match self.next_tick {
            Some(t) if self.cw < 1.0 && now_ns >= t => {
                self.next_tick = Some(now_ns + self.srtt / self.cw);
                true
            }
            _ => false,
        }
    }
}

/// srtt + (sample − srtt)·gain within the engine's RTT range.
fn smooth(srtt: f64, sample: f64, gain: f64) -> f64 {
    (srtt + (sample - srtt) * gain).clamp(100.0, (1u32 << 20) as f64)
}

/// The commercial-NIC variant (§3.2).
#[derive(Clone, Debug, PartialEq)]
pub struct LdcpRateRef {
    /// Parameters.
    pub p: LdcpRefParams,
    /// cw in packets.
    pub cw: f64,
    /// Smoothed RTT, ns.
    pub srtt: f64,
}

impl LdcpRateRef {
    /// A flow at cw = IW.
    pub fn new(p: LdcpRefParams) -> Self {
        LdcpRateRef {
            p,
            cw: p.iw_pkts,
            srtt: p.t_ns,
        }
    }

    /// MD per CNP.
    pub fn on_cnp(&mut self) {
        self.cw = (self.cw - self.p.beta).max(self.p.gamma);
    }

    /// AI per RTT response, with the response's RTT sample.
    pub fn on_rtt_response(&mut self, rtt_ns: Option<f64>) {
        if let Some(r) = rtt_ns {
            self.srtt = smooth(self.srtt, r.max(self.p.t_ns), 1.0 / 8.0);
        }
        self.cw = (self.cw + self.p.alpha).min(self.p.iw_pkts);
    }

    /// rate = cw·MTU/RTT in bit/s.
    pub fn rate_bps(&self) -> f64 {
        self.cw * self.p.mtu * 8.0 / self.srtt * 1e9
    }
}
