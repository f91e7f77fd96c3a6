//! The HPCC++ receiver: Rx-HPCC (draft 2022-10 §6.3.2, Figure 8) and the
//! probe responder (§7.1).
//!
//! Rx-HPCC runs MeasureInflight and ComputeWind on the telemetry of
//! arriving data packets (`int.L` instead of `ack.L`) and sends the window
//! back at most once per T. The probe responder picks the hop with the
//! highest inflight and returns only that hop, so the sender's state holds
//! a single hop of history.
//!
//! State: [`HpccCore`] + lastUpdateTime + the last reported hop = 48 +
//! 12·H bytes.

use super::{initial_window, HpccConfig, HpccCore, Measured};
use crate::controller::Controller;
use crate::error::Error;
use crate::event::{Algorithm, Decision, FlowParams, Request};
use crate::telemetry::HopSample;
use crate::units::Instant;

/// HPCC++ receiver state for one flow with `H` hops of history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct HpccReceiver<const H: usize> {
    core: HpccCore<H>,
    last_update_time: Instant,
    /// The probe responder's last reported hop ([`NONE_REPORTED`] before the
    /// first).
    reported: u8,
}

/// No hop reported yet.
const NONE_REPORTED: u8 = u8::MAX;

impl<const H: usize> HpccReceiver<H> {
    /// Receiver state for a flow whose sender has `p.line_rate` and T.
    /// lastUpdateTime starts at `now`.
    pub fn new(cfg: &HpccConfig, p: &FlowParams, now: Instant) -> Result<Self, Error> {
        if !p.line_rate.is_plausible() {
            return Err(Error::InvalidParams);
        }
        let w_init = initial_window(p);
        Ok(HpccReceiver {
            core: HpccCore::new(cfg, p.base_rtt, w_init)?,
            last_update_time: now,
            reported: NONE_REPORTED,
        })
    }

    /// The shared HPCC++ state.
    pub fn core(&self) -> &HpccCore<H> {
        &self.core
    }

    /// lastUpdateTime of Figure 8.
    pub fn last_update_time(&self) -> Instant {
        self.last_update_time
    }

    /// The receiver's current W and W/T; nothing requested.
    pub fn decision(&self) -> Decision {
        self.core.decision()
    }
}

impl<const H: usize> Controller for HpccReceiver<H> {
    type Config = HpccConfig;

    fn validate(cfg: &HpccConfig) -> Result<(), Error> {
        cfg.validate()
    }

    fn start(cfg: &HpccConfig, now: Instant, p: &FlowParams) -> Result<(Self, Decision), Error> {
        if p.algorithm != Algorithm::HpccReceiver {
            return Err(Error::NotApplicable);
        }
        let r = HpccReceiver::new(cfg, p, now)?;
        let d = r.decision();
        Ok((r, d))
    }

    fn decision(&self, _cfg: &HpccConfig) -> Decision {
        HpccReceiver::decision(self)
    }

    /// `NewINT` (draft 2022-10 §6.3.2, Figure 8):
    ///
    /// ```text
    /// 28:   Procedure NewINT(int.L)
    /// 29:   if now > (lastUpdateTime + T) then
    /// 30:      W = ComputeWind(MeasureInflight(int), True);
    /// 31:      send_ack(W)
    /// 32:      lastUpdateTime = now;
    /// 33:   else
    /// 34:      W = ComputeWind(MeasureInflight(int), False);
    /// ```
    ///
    /// `send_ack(W)` is the decision's `Request::Feedback`. The first packet
    /// of a path only records its telemetry and sends nothing.
    #[inline]
    fn rx_telemetry(&mut self, cfg: &HpccConfig, now: Instant, telemetry: &[HopSample]) -> Result<Decision, Error> {
        if telemetry.is_empty() {
            return Ok(self.decision());
        }
        let Measured::Updated(u) = self.core.measure_inflight(cfg, now, telemetry, 0)? else {
            return Ok(self.decision());
        };
        let due = now
            > self
                .last_update_time
                .saturating_add_nanos(self.core.base_rtt().as_nanos() as u64);
        let w = self.core.compute_wind(cfg, u, due);
        let mut d = self.decision();
        if due {
            self.last_update_time = now;
            d.request = Request::Feedback { window: w };
        }
        Ok(d)
    }

    /// Answers a probe (§7.1): "HPCC++ module chooses the link with the
    /// highest inflight bytes and sends its telemetry (queue length,
    /// timestamp and tx bytes) back". The whole stack is kept as history so
    /// the next probe's choice uses rates, not just queues.
    fn probe_request(&mut self, cfg: &HpccConfig, now: Instant, telemetry: &[HopSample]) -> Result<Decision, Error> {
        let sticky = (self.reported != NONE_REPORTED).then_some(self.reported as usize);
        let i = self.core.bottleneck(cfg, now, telemetry, sticky)?;
        self.core.measure_inflight(cfg, now, telemetry, 0)?;
        self.reported = i as u8;
        let mut d = self.decision();
        // check_stack bounds the stack at 15 hops.
        d.request = Request::ProbeReply { hop_index: i as u8 };
        Ok(d)
    }

    /// A number of flows the receiver counted itself (§6.3.2: Rx-HPCC
    /// "can also measure the number of flows N"): W_ai = W_init·(1−eta)/N
    /// for the windows it feeds back.
    fn flow_count(&mut self, cfg: &HpccConfig, _now: Instant, flows: u16) -> Result<Decision, Error> {
        self.core.set_flow_count(cfg, flows)?;
        Ok(self.decision())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Algorithm;
    use crate::testing::{flow, hop_of as hop, T_NS};
    use crate::units::LinkSpeed;

    fn params() -> FlowParams {
        flow(Algorithm::HpccReceiver, T_NS, 100)
    }

    /// Feedback goes out at most once per T, and only with a Wc update.
    #[test]
    fn feedback_at_most_once_per_t() {
        let cfg = HpccConfig::draft_default();
        let mut r = HpccReceiver::<5>::new(&cfg, &params(), Instant::ZERO).unwrap();
        let at = |ns| Instant::from_nanos(ns);
        let mut sent = 0;
        let mut last_feedback = None::<u64>;
        for k in 0..200u32 {
            let ns = 1_000 * k as u64;
            // 1 us apart, link at 90 % with no queue.
            let d = r
                .rx_telemetry(&cfg, at(ns), &[hop(1, 1_000 * k, 11_250 * k, 0)])
                .unwrap();
            if let Request::Feedback { window } = d.request {
                assert_eq!(window, d.window);
                if let Some(prev) = last_feedback {
                    assert!(ns - prev > T_NS as u64, "feedback {} ns apart", ns - prev);
                }
                last_feedback = Some(ns);
                sent += 1;
            }
        }
        // 199 us of updates, one per 13 us (strictly more than T apart).
        assert!((14..=16).contains(&sent), "{sent} feedbacks");
    }

    #[test]
    fn first_packet_sends_nothing() {
        let cfg = HpccConfig::draft_default();
        let mut r = HpccReceiver::<5>::new(&cfg, &params(), Instant::ZERO).unwrap();
        let d = r
            .rx_telemetry(&cfg, Instant::from_nanos(50_000), &[hop(1, 0, 0, 0)])
            .unwrap();
        assert_eq!(d.request, Request::None);
    }

    /// The responder reports the most loaded hop: by queue on the first
    /// probe, by u' (rate + queue) once it has history.
    #[test]
    fn responder_picks_highest_inflight_hop() {
        let cfg = HpccConfig::draft_default();
        let mut r = HpccReceiver::<5>::new(&cfg, &params(), Instant::ZERO).unwrap();
        let first = [hop(1, 0, 0, 1_000), hop(2, 0, 0, 9_000), hop(3, 0, 0, 0)];
        let d = r.probe_request(&cfg, Instant::ZERO, &first).unwrap();
        assert_eq!(d.request, Request::ProbeReply { hop_index: 1 });
        // Next: hop 2 is now sending at line rate, hop 1's queue is gone.
        let second = [
            hop(1, T_NS, 10_000, 0),
            hop(2, T_NS, 20_000, 0),
            hop(3, T_NS, 150_000, 0),
        ];
        let d = r.probe_request(&cfg, Instant::ZERO, &second).unwrap();
        assert_eq!(d.request, Request::ProbeReply { hop_index: 2 });
    }

    /// Issue: the reported hop index is part of the sender's path
    /// signature, so a bottleneck alternating between two equally loaded
    /// hops made every probe a new path and the sender never updated. The
    /// responder keeps its hop while it carries at least 7/8 of the highest
    /// load.
    #[test]
    fn the_responder_sticks_to_a_hop_among_equals() {
        let cfg = HpccConfig::draft_default();
        let mut r = HpccReceiver::<5>::new(&cfg, &params(), Instant::ZERO).unwrap();
        // Hops 1 and 2 share the load; which sent more in the last T
        // alternates by 3 %.
        let (mut tx1, mut tx2) = (0u32, 0u32);
        let mut reported = [0u8; 10];
        let mut last = [hop(1, 0, 0, 0); 3];
        for k in 0..10u32 {
            let (a, b) = if k % 2 == 0 {
                (100_000, 103_000)
            } else {
                (103_000, 100_000)
            };
            if k > 0 {
                tx1 += a;
                tx2 += b;
            }
            last = [
                hop(1, k * T_NS, 0, 0),
                hop(2, k * T_NS, tx1, 0),
                hop(3, k * T_NS, tx2, 0),
            ];
            let d = r
                .probe_request(&cfg, Instant::from_nanos((k * T_NS) as u64), &last)
                .unwrap();
            let Request::ProbeReply { hop_index } = d.request else {
                panic!("a reply")
            };
            reported[k as usize] = hop_index;
        }
        // From the second probe on (the first has no rates yet) one hop.
        assert!(reported[1..].iter().all(|&i| i == reported[1]), "{reported:?}");
        // A hop that carries clearly more takes over.
        let other = 3 - reported[1] as usize;
        let mut next = last;
        for (i, h) in next.iter_mut().enumerate() {
            h.ts += T_NS;
            h.tx += if i == other {
                140_000
            } else if i == 0 {
                0
            } else {
                100_000
            };
        }
        let d = r
            .probe_request(&cfg, Instant::from_nanos(10 * T_NS as u64), &next)
            .unwrap();
        assert_eq!(d.request, Request::ProbeReply { hop_index: other as u8 });
    }

    /// Issue: on a path's first probe the sojourn variant compared
    /// `sojourn · 8000 / B`, a time treated as bytes: 1 µs at 25 Gb/s beat
    /// 3 µs at 100 Gb/s. Sojourn times compare as times.
    #[test]
    fn sojourn_responder_compares_times() {
        let mut cfg = HpccConfig::draft_default();
        cfg.queue_signal = crate::hpcc::QueueSignal::Sojourn;
        let mut r = HpccReceiver::<5>::new(&cfg, &params(), Instant::ZERO).unwrap();
        let mut slow = hop(1, 0, 0, 0);
        slow.bandwidth = LinkSpeed::from_gbps(25);
        slow.sojourn_ns = 1_000;
        let mut fast = hop(2, 0, 0, 0);
        fast.sojourn_ns = 3_000;
        let d = r.probe_request(&cfg, Instant::ZERO, &[slow, fast]).unwrap();
        assert_eq!(d.request, Request::ProbeReply { hop_index: 1 });
    }

    /// Issue: `FlowCount` at the receiver was `NotApplicable`, so Rx-HPCC
    /// could not use the N it measures (§6.3.2).
    #[test]
    fn the_receiver_takes_its_own_flow_count() {
        let cfg = HpccConfig::draft_default();
        let mut r = HpccReceiver::<5>::new(&cfg, &params(), Instant::ZERO).unwrap();
        r.flow_count(&cfg, Instant::ZERO, 2).unwrap();
        // W_ai = 150 000 B · 0.05 / 2 = 3 750 B.
        let w = r.core().additive_increase().to_bits() as f64 / 16.0;
        assert!((w - 3_750.0).abs() < 0.1, "{w}");
        assert_eq!(r.flow_count(&cfg, Instant::ZERO, 0), Err(Error::InvalidParams));
    }

    #[test]
    fn idle_path_reports_slowest_link() {
        let cfg = HpccConfig::draft_default();
        let mut r = HpccReceiver::<5>::new(&cfg, &params(), Instant::ZERO).unwrap();
        let mut slow = hop(2, 0, 0, 0);
        slow.bandwidth = LinkSpeed::from_gbps(25);
        let d = r.probe_request(&cfg, Instant::ZERO, &[hop(1, 0, 0, 0), slow]).unwrap();
        assert_eq!(d.request, Request::ProbeReply { hop_index: 1 });
        assert_eq!(r.probe_request(&cfg, Instant::ZERO, &[]), Err(Error::NotApplicable));
    }
}
