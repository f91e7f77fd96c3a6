//! A switch's egress as a chain of parts, each with its own configuration
//! type, read once from the scenario (`Egress::from_scenario`) with the
//! checks that part needs, and applied by every port in this order:
//!
//! ```text
//! admission (Buffers; Trim when the port is full) ─▶ Marking at enqueue
//!   ─▶ queues: data, and ControlQueue ahead of it ─▶ Pfc (ingress counts)
//!   ─▶ Marking at dequeue ─▶ PortUtil (the telemetry's utilization) ─▶ link
//! ```
//!
//! A part that is not configured is `None` (or, for marking and the
//! utilization estimate, a variant that does nothing), so a new part (a
//! receiver's credit, say) is a new field and its own type, not a new
//! branch in every other.

use crate::model::telemetry::TelFormat;
use crate::setup::scenario::{EcnAt, Scenario, Transport};

/// The egress parts every port of a switch applies.
#[derive(Clone, Copy, Debug)]
pub struct Egress {
    /// Admission: the shared buffer and each port's.
    pub buffers: Buffers,
    /// WRED/ECN marking and the ECN-incapable threshold drop.
    pub marking: Marking,
    /// A strict-priority queue for control packets (and trimmed
    /// headers), ahead of data.
    pub control: Option<ControlQueue>,
    /// Data that does not fit its port's queue is cut to a header.
    pub trim: Option<Trim>,
    /// PFC: ingress ports pause their upstream.
    pub pfc: Option<Pfc>,
    /// How a port keeps the utilization its telemetry reports.
    pub util: PortUtil,
}

/// Buffer sizes (LDCP §2.1).
#[derive(Clone, Copy, Debug)]
pub struct Buffers {
    /// Shared buffer of the switch, bytes.
    pub shared: u64,
    /// buf_max per port: tail drop above this queue (a quarter of it on a
    /// degraded link).
    pub port: u64,
}

/// When ECN-capable data is marked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkAt {
    /// As it joins its queue, from the queue ahead of it.
    Enqueue,
    /// As it leaves, from the queue it leaves behind (the HPCC reference
    /// simulator's switch, uet-htsim's).
    Dequeue,
}

/// WRED/ECN (LDCP §2.1) and eq. (3)'s drop of ECN-incapable data.
#[derive(Clone, Copy, Debug)]
pub struct Marking {
    /// Below this queue (bytes) no ECN-capable packet is marked.
    pub kmin: u64,
    /// Above this queue (bytes) every ECN-capable packet is marked.
    pub kmax: u64,
    /// The marking probability at `kmax`, rising linearly from 0 at `kmin`.
    pub pmax: f64,
    /// Eq. (3) threshold for ECN-incapable data.
    pub drop_k: u64,
    /// When set, `kmin` and `kmax` are for links of this speed (bit/s) and
    /// every port scales them by its own speed, as deployments set K per
    /// port speed (the HPCC reference's per-bandwidth K maps).
    pub ecn_ref_bps: Option<u64>,
    /// Enqueue or dequeue.
    pub at: MarkAt,
}

impl Marking {
    /// The marking thresholds (K_min, K_max) of a port of `bps`.
    pub fn thresholds(&self, bps: u64) -> (u64, u64) {
        match self.ecn_ref_bps {
            Some(r) if r > 0 => {
                let scale = |k: u64| (k as u128 * bps as u128 / r as u128).min(u64::MAX as u128) as u64;
                (scale(self.kmin), scale(self.kmax))
            }
            _ => (self.kmin, self.kmax),
        }
    }

    /// Whether a packet at queue `q` of a port with thresholds `k` is
    /// marked, `unit` a uniform draw in [0, 1) taken only between the
    /// thresholds: p = (q − K_min)/(K_max − K_min)·P_max there, always
    /// above K_max.
    #[inline(always)]
    pub fn marks(&self, q: u64, (kmin, kmax): (u64, u64), unit: impl FnOnce() -> f64) -> bool {
        if q >= kmax {
            true
        } else if q >= kmin && kmax > kmin {
            unit() < (q - kmin) as f64 / (kmax - kmin) as f64 * self.pmax
        } else {
            false
        }
    }
}

/// The control packets' strict-priority queue (ACKs, NACKs, CNPs,
/// feedback, probes, and trimmed headers): counted in the shared buffer,
/// not in the data queue's length that marking and telemetry read.
#[derive(Clone, Copy, Debug)]
pub struct ControlQueue;

/// Trimming (uet-htsim's `CompositeQueue`): data that does not fit its
/// port's queue is cut to `bytes` and waits as a header in the control
/// queue, which then holds at most twice the port's buffer. With `drop`
/// (uet-htsim's `-disable_trim`), the same queue drops what it would cut.
#[derive(Clone, Copy, Debug)]
pub struct Trim {
    /// The header's bytes (none kept when `drop`).
    pub bytes: u16,
    /// Drop instead of cutting.
    pub drop: bool,
}

/// PFC's thresholds (see `scenario::PfcCfg`).
#[derive(Clone, Copy, Debug)]
pub struct Pfc {
    /// When an ingress port pauses its upstream.
    pub xoff: Xoff,
    /// It resumes at XOFF minus this.
    pub xon_gap: u64,
}

/// An XOFF threshold.
#[derive(Clone, Copy, Debug)]
pub enum Xoff {
    /// Bytes per ingress port.
    Static(u64),
    /// This fraction of the shared buffer still free.
    Dynamic(f64),
}

/// The utilization a port keeps for its telemetry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortUtil {
    /// None (the telemetry reports counters, or there is none).
    None,
    /// INT-MD's time-decayed tx rate over the link's.
    IntMd,
    /// HPCC-PINT's U, updated on each data packet's dequeue.
    Pint,
}

impl PortUtil {
    /// The estimate a telemetry format reports.
    pub fn of(format: TelFormat) -> PortUtil {
        match format {
            TelFormat::IntMd => PortUtil::IntMd,
            TelFormat::Pint => PortUtil::Pint,
            _ => PortUtil::None,
        }
    }
}

impl Egress {
    /// The parts scenario `s` configures, its host links at `link_bps`:
    /// each part checked here, the field named where one does not fit.
    pub fn from_scenario(s: &Scenario, link_bps: u64, format: TelFormat) -> Result<Egress, (&'static str, String)> {
        let m = s.switch.marking(&s.cc.algorithm, s.topology.link_gbps.0);
        if m.kmin > m.kmax {
            return Err((
                "switch.ecn_kmin_bytes",
                format!("must not exceed ecn_kmax_bytes ({} > {})", m.kmin, m.kmax),
            ));
        }
        if let Some(p) = &s.switch.pfc {
            match (p.xoff_bytes, p.dynamic_alpha) {
                (Some(_), Some(_)) | (None, None) => {
                    return Err(("switch.pfc", "give xoff_bytes or dynamic_alpha, one of them".into()))
                }
                (None, Some(a)) if !(a > 0.0 && a <= 64.0) => {
                    return Err(("switch.pfc.dynamic_alpha", format!("must be in (0, 64] (got {a})")))
                }
                _ => {}
            }
        }
        let control = s
            .switch
            .control_priority
            .unwrap_or_else(|| s.cc.algorithm.control_priority_default())
            .then_some(ControlQueue);
        let pfc = s.switch.pfc.as_ref().map(|p| Pfc {
            xoff: match (p.xoff_bytes, p.dynamic_alpha) {
                (Some(b), _) => Xoff::Static(b.0),
                // One of the two is given (checked above).
                (None, a) => Xoff::Dynamic(a.unwrap_or(1.0)),
            },
            xon_gap: p.xon_gap_bytes.0,
        });
        let trim = match (s.switch.trim_bytes, s.switch.drop_by_coin) {
            (None, false) => None,
            (Some(_), true) => {
                return Err((
                    "switch.drop_by_coin",
                    "and switch.trim_bytes exclude each other (a full port drops or cuts)".into(),
                ))
            }
            (None, true) => {
                let why = if control.is_none() {
                    Some("needs switch.control_priority = true (control packets go ahead of data)")
                } else if pfc.is_some() {
                    Some("and PFC exclude each other (a paused queue never overflows)")
                } else {
                    None
                };
                if let Some(why) = why {
                    return Err(("switch.drop_by_coin", why.into()));
                }
                Some(Trim { bytes: 0, drop: true })
            }
            (Some(t), false) => {
                let why = if s.nic.transport != Transport::Sack {
                    Some("needs nic.transport = \"sack\" (its receivers NACK the headers)")
                } else if control.is_none() {
                    Some("needs switch.control_priority = true (headers go ahead of data)")
                } else if pfc.is_some() {
                    Some("and PFC exclude each other (a paused queue never overflows)")
                } else if (t.0 as u32) < s.nic.header_bytes.0 as u32 || t.0 < 64 {
                    Some("must keep the data's header and at least 64 bytes")
                } else {
                    None
                };
                if let Some(why) = why {
                    return Err(("switch.trim_bytes", why.into()));
                }
                Some(Trim {
                    bytes: t.0,
                    drop: false,
                })
            }
        };
        Ok(Egress {
            buffers: Buffers {
                shared: s.switch.buffer_bytes.0,
                port: s.switch.port_buffer_bytes.0,
            },
            marking: Marking {
                kmin: m.kmin,
                kmax: m.kmax,
                pmax: m.pmax,
                drop_k: m.drop_k,
                ecn_ref_bps: s.switch.ecn_scale_with_speed.then_some(link_bps),
                at: match s.switch.ecn_at.unwrap_or_else(|| s.cc.algorithm.ecn_at_default()) {
                    EcnAt::Dequeue => MarkAt::Dequeue,
                    EcnAt::Enqueue => MarkAt::Enqueue,
                },
            },
            control,
            trim,
            pfc,
            util: PortUtil::of(format),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marking(ecn_ref_bps: Option<u64>) -> Marking {
        Marking {
            kmin: 5_000,
            kmax: 40_000,
            pmax: 0.2,
            drop_k: 20_000,
            ecn_ref_bps,
            at: MarkAt::Enqueue,
        }
    }

    /// Thresholds given for 100 Gb/s scale with each port's speed when
    /// asked to, and are the same everywhere otherwise.
    #[test]
    fn ecn_thresholds_scale_with_the_port_speed() {
        let g = 1_000_000_000;
        let scaled = marking(Some(100 * g));
        assert_eq!(scaled.thresholds(100 * g), (5_000, 40_000));
        assert_eq!(scaled.thresholds(400 * g), (20_000, 160_000));
        assert_eq!(scaled.thresholds(25 * g), (1_250, 10_000));
        assert_eq!(marking(None).thresholds(400 * g), (5_000, 40_000));
    }

    /// Marked always at or above K_max, never below K_min, between them
    /// by the draw against the line from 0 to P_max (the draw taken only
    /// there).
    #[test]
    fn marking_follows_the_line_between_the_thresholds() {
        let m = marking(None);
        let k = (5_000, 40_000);
        let never = || -> f64 { panic!("no draw outside the thresholds") };
        assert!(m.marks(40_000, k, never));
        assert!(!m.marks(4_999, k, never));
        // Halfway: p = 0.1.
        assert!(m.marks(22_500, k, || 0.099));
        assert!(!m.marks(22_500, k, || 0.1));
        // Equal thresholds: a step at K.
        assert!(m.marks(5_000, (5_000, 5_000), never));
        assert!(!m.marks(4_999, (5_000, 5_000), never));
    }
}
