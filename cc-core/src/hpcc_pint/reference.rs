//! HPCC-PINT in `f64`, line for line as the HPCC reference simulator's
//! `HandleAckHpPint` / `UpdateRateHpPint` state it, on rates (U decoded as
//! `pow(b, p)/512`): the property tests' reference.

use super::HpccPintConfig;
use crate::wire::pint::PintWidth;

/// One flow's HPCC-PINT state, in plain units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HpccPintRef {
    /// η.
    pub eta: f64,
    /// maxStage (the reference's `m_miThresh`).
    pub max_stage: u32,
    /// The rate step, b/s (`m_rai`).
    pub rai: f64,
    /// The rate floor, b/s (`m_minRate`).
    pub min_rate: f64,
    /// The line rate, b/s (`m_max_rate`).
    pub line: f64,
    /// The rate in force, b/s (`ChangeRate`'s).
    pub rate: f64,
    /// The reference rate, b/s (`m_curRate`).
    pub cur_rate: f64,
    /// incStage.
    pub inc_stage: u32,
    /// lastUpdateSeq (0: none yet, as the reference's first RTT).
    pub last_update_seq: u64,
    /// Whether a code has been seen.
    pub seen: bool,
}

/// U = b^p/512, as the reference's `Pint::decode_u` (`pow` by squaring
/// in `f64`: the crate is `no_std`; within a few units of the last bit).
pub fn decode(width: PintWidth, p: u16) -> f64 {
    let mut b: f64 = match width {
        PintWidth::One => 1.05,
        PintWidth::Two => 1.01,
    };
    let (mut v, mut e) = (1.0f64, p);
    while e > 0 {
        if e & 1 == 1 {
            v *= b;
        }
        b *= b;
        e >>= 1;
    }
    v / 512.0
}

impl HpccPintRef {
    /// A flow at the line rate `line_bps`.
    pub fn new(cfg: &HpccPintConfig, line_bps: f64) -> Self {
        let f = |x: crate::units::Fraction| x.to_bits() as f64 / (1u64 << 24) as f64;
        HpccPintRef {
            eta: f(cfg.eta),
            max_stage: cfg.max_stage as u32,
            rai: f(cfg.additive_increase) * line_bps,
            min_rate: f(cfg.min_window) * line_bps,
            line: line_bps,
            rate: line_bps,
            cur_rate: line_bps,
            inc_stage: 0,
            last_update_seq: 0,
            seen: false,
        }
    }

    /// A sampled ACK with code `p` of `width`, cumulative ACK `ack_seq`
    /// and the sender's `snd_nxt` (sequence numbers without wrap).
    pub fn ack(&mut self, width: PintWidth, p: u16, ack_seq: u64, snd_nxt: u64) {
        if !self.seen {
            self.seen = true;
            self.last_update_seq = snd_nxt;
            return;
        }
        let fast_react = ack_seq <= self.last_update_seq;
        let u = decode(width, p);
        let max_c = u / self.eta;
        let (mut new_rate, new_stage) = if max_c >= 1.0 || self.inc_stage >= self.max_stage {
            (self.cur_rate / max_c + self.rai, 0)
        } else {
            (self.cur_rate + self.rai, self.inc_stage + 1)
        };
        if new_rate < self.min_rate {
            new_rate = self.min_rate;
        }
        if new_rate > self.line {
            new_rate = self.line;
        }
        self.rate = new_rate;
        if !fast_react {
            self.cur_rate = new_rate;
            self.inc_stage = new_stage;
            if snd_nxt > self.last_update_seq {
                self.last_update_seq = snd_nxt;
            }
        }
    }
}
