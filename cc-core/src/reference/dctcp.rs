//! DCTCP (RFC 8257 §3.3, §3.5, with RFC 5681 congestion avoidance) in `f64`,
//! written from the RFC's steps, as the engine's module documents them.

use super::hpcc::seq_after;

/// Parameters of the model, in plain units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DctcpRefParams {
    /// MSS, bytes.
    pub mss: f64,
    /// Estimation gain g.
    pub g: f64,
    /// Smallest window, bytes.
    pub w_min: f64,
    /// Largest (and initial) window, bytes: line rate · T.
    pub w_max: f64,
}

/// One flow.
#[derive(Clone, Debug, PartialEq)]
pub struct DctcpRef {
    /// Parameters.
    pub p: DctcpRefParams,
    /// cwnd, bytes.
    pub cwnd: f64,
    /// DCTCP.Alpha.
    pub alpha: f64,
    /// SND.UNA.
    pub snd_una: u32,
    /// SND.NXT as far as known.
    pub snd_nxt: u32,
    /// DCTCP.WindowEnd.
    pub window_end: u32,
    /// DCTCP.BytesAcked.
    pub bytes_acked: f64,
    /// DCTCP.BytesMarked.
    pub bytes_marked: f64,
    /// End of the reduction in force, if one is.
    pub cwr_until: Option<u32>,
}

impl DctcpRef {
    /// A flow at cwnd = W_max, alpha = 1, every sequence at `start`.
    pub fn new(p: DctcpRefParams, start: u32) -> Self {
        DctcpRef {
            p,
            cwnd: p.w_max,
            alpha: 1.0,
            snd_una: start,
            snd_nxt: start,
            window_end: start,
            bytes_acked: 0.0,
            bytes_marked: 0.0,
            cwr_until: None,
        }
    }

    /// Data `[seq, seq + len)` sent.
    pub fn on_sent(&mut self, seq: u32, len: u32) {
        let end = seq.wrapping_add(len);
        if seq_after(end, self.snd_nxt) {
            self.snd_nxt = end;
        }
    }

    /// An ACK of everything below `cum`, sent when `snd_nxt` was the
    /// sender's next sequence, with ECN-Echo `ece`.
    pub fn on_ack(&mut self, cum: u32, snd_nxt: u32, ece: bool) {
        let mut newly = 0.0;
        if seq_after(cum, self.snd_una) {
            newly = cum.wrapping_sub(self.snd_una) as f64;
            self.snd_una = cum;
        }
        if seq_after(snd_nxt, self.snd_nxt) {
            self.snd_nxt = snd_nxt;
        }
        if seq_after(self.snd_una, self.snd_nxt) {
            self.snd_nxt = self.snd_una;
        }
        // Steps 1-3: count the bytes.
        self.bytes_acked += newly;
        if ece {
            self.bytes_marked += newly;
        }
        // Steps 4-8: at the end of the observation window, alpha.
        if seq_after(self.snd_una, self.window_end) {
            if self.bytes_acked > 0.0 {
                let f = self.bytes_marked / self.bytes_acked;
                self.alpha = (1.0 - self.p.g) * self.alpha + self.p.g * f;
            }
            self.window_end = self.snd_nxt;
            self.bytes_acked = 0.0;
            self.bytes_marked = 0.0;
        }
        if let Some(end) = self.cwr_until {
            if seq_after(self.snd_una, end) {
                self.cwr_until = None;
            }
        }
        if ece {
            if self.cwr_until.is_none() {
                self.cwnd = (self.cwnd * (1.0 - self.alpha / 2.0)).clamp(self.p.w_min, self.p.w_max);
                self.cwr_until = Some(self.snd_nxt);
            }
        } else if self.cwr_until.is_none() && newly > 0.0 {
            // RFC 5681 congestion avoidance, counted in bytes.
            self.cwnd = (self.cwnd + self.p.mss * newly / self.cwnd).clamp(self.p.w_min, self.p.w_max);
        }
    }

    /// A loss: halve once per window.
    pub fn on_loss(&mut self) {
        if self.cwr_until.is_none() {
            self.cwnd = (self.cwnd / 2.0).clamp(self.p.w_min, self.p.w_max);
            self.cwr_until = Some(self.snd_nxt);
        }
    }
}
