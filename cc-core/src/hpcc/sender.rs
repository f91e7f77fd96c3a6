//! The HPCC++ sender: `NewAck` (draft 2022-10 §4.2, Figure 6), probe mode
//! (§6.2.1 item 2, §7.1), and applying Rx-HPCC feedback (§6.3.2).
//!
//! State: [`HpccCore`] + lastUpdateSeq = 36 + 12·H bytes: 48 bytes with the
//! one-hop history of probe mode, 96 bytes with five hops.
//!
//! Probe mode, per flow (one probe outstanding; each probe has a number,
//! and only the response to the current number counts):
//!
//! ```text
//!            Sent (data now in flight)             ProbeResponse(current), still in flight
//!   [idle] ─────────────────────────────▶ [probe out] ◀──────────────────────┐
//!      ▲      request Probe n+1, arm timeout  │  │  request Probe n+1, re-arm │
//!      │                                      │  └────────────────────────────┘
//!      ├──── ProbeResponse(current), ─────────┤  Timer, in flight: Probe n+1 supersedes n
//!      │     nothing in flight (cancel timer) │  ProbeResponse(other number): ignored
//!      └──── Timer, nothing in flight ────────┘
//!            (the probe is lost)
//! ```
//!
//! Probe mode reads no telemetry on ACKs, so lastUpdateSeq has no use
//! there: its slot holds the current probe's number (the state stays at
//! 48 bytes with one hop).

use super::{initial_window, HpccConfig, HpccCore, Measured, TelemetrySource};
use crate::controller::Controller;
use crate::error::Error;
use crate::event::{Ack, Algorithm, Decision, FlowParams, MessageEnd, ProbeId, Request, TimerRequest};
use crate::telemetry::HopSample;
use crate::units::{Instant, Seq, Window};

/// HPCC++ sender state for one flow with `H` hops of history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct HpccSender<const H: usize> {
    core: HpccCore<H>,
    /// lastUpdateSeq (in-band telemetry), or the current probe's number in
    /// the low 8 bits (probe mode).
    last_update_seq: Seq,
}

impl<const H: usize> HpccSender<H> {
    /// A flow starting at W = Wc = W_init = line rate · T (the BDP).
    pub fn new(cfg: &HpccConfig, p: &FlowParams) -> Result<Self, Error> {
        if !p.line_rate.is_plausible() {
            return Err(Error::InvalidParams);
        }
        let w_init = initial_window(p);
        Ok(HpccSender {
            core: HpccCore::new(cfg, p.base_rtt, w_init)?,
            last_update_seq: p.start_seq,
        })
    }

    /// The shared HPCC++ state (W, Wc, U, history).
    pub fn core(&self) -> &HpccCore<H> {
        &self.core
    }

    /// Mutable access to the shared state, e.g. to restore a snapshot.
    pub fn core_mut(&mut self) -> &mut HpccCore<H> {
        &mut self.core
    }

    /// lastUpdateSeq of Figure 6 (in-band telemetry).
    pub fn last_update_seq(&self) -> Seq {
        self.last_update_seq
    }

    /// The number of the probe last sent (probe mode).
    pub fn probe_id(&self) -> ProbeId {
        ProbeId(self.last_update_seq.0 as u8)
    }

    /// Numbers a new probe, which supersedes any outstanding one.
    fn next_probe(&mut self) -> ProbeId {
        let id = self.probe_id().next();
        self.last_update_seq = Seq(id.0 as u32);
        self.core.status.set_probe_outstanding(true);
        id
    }

    /// W and R = W/T (Figure 6, line 27), nothing requested.
    pub fn decision(&self) -> Decision {
        self.core.decision()
    }

    /// Lines 22-26 for an ACK with telemetry: a stack of one hop to
    /// [`Self::one_hop`], any other to [`Self::hops`]. Each is out of
    /// line, with MeasureInflight inlined into it: the engine's ACK (and
    /// cc-ffi's) keep a small frame around the call. Inlined into them, the
    /// hop loop spills more registers (`nic-firmware/scripts/profile.sh
    /// hpcc-ack-5-c`). This entry has no frame: it jumps to the one it
    /// picks.
    #[inline(never)]
    fn apply_telemetry(
        &mut self,
        cfg: &HpccConfig,
        now: Instant,
        hops: &[HopSample],
        update: bool,
        snd_nxt: Seq,
    ) -> Result<(), Error> {
        match hops {
            [hop] => self.one_hop(cfg, now, hop, update, snd_nxt),
            _ => self.hops(cfg, now, hops, update, snd_nxt),
        }
    }

    /// [`Self::telemetry`] of a stack of any length. A function of its
    /// own, not inlined into [`Self::apply_telemetry`], so that the entry
    /// keeps no frame: with this body in it, it saved its registers before
    /// it chose, and the one-hop path paid for them.
    #[inline(never)]
    fn hops(
        &mut self,
        cfg: &HpccConfig,
        now: Instant,
        hops: &[HopSample],
        update: bool,
        snd_nxt: Seq,
    ) -> Result<(), Error> {
        self.telemetry(cfg, now, hops, update, snd_nxt)
    }

    /// [`Self::telemetry`] of a stack of one hop (a path of one switch):
    /// the same code made for a length the compiler knows, so that the
    /// walk is laid out straight, with no loop and no spill around it
    /// (about a sixth fewer instructions an ACK on every core;
    /// `nic-firmware/scripts/profile.sh hpcc-ack-1`).
    #[inline(never)]
    fn one_hop(
        &mut self,
        cfg: &HpccConfig,
        now: Instant,
        hop: &HopSample,
        update: bool,
        snd_nxt: Seq,
    ) -> Result<(), Error> {
        self.telemetry(cfg, now, core::slice::from_ref(hop), update, snd_nxt)
    }

    /// Lines 22-26: MeasureInflight, then ComputeWind on a measurement;
    /// lastUpdateSeq moved where Wc is committed, and at the first sample.
    #[inline(always)]
    fn telemetry(
        &mut self,
        cfg: &HpccConfig,
        now: Instant,
        hops: &[HopSample],
        update: bool,
        snd_nxt: Seq,
    ) -> Result<(), Error> {
        let first = !self.core.status.has_history();
        let measured = self.core.measure_inflight(cfg, now, hops, 0)?;
        match measured {
            Measured::Unmeasured => {}
            Measured::Recorded => {
                if first {
                    self.last_update_seq = snd_nxt;
                }
            }
            Measured::Updated(u) => {
                self.core.compute_wind(cfg, u, update);
                if update {
                    self.last_update_seq = snd_nxt;
                }
            }
        }
        Ok(())
    }

    fn probe_timeout(&self, now: Instant, timeout_rtts: u8) -> TimerRequest {
        let ns = timeout_rtts as u64 * self.core.base_rtt().as_nanos() as u64;
        TimerRequest::Arm(now.saturating_add_nanos(ns))
    }

    /// Sends a probe (and arms its timeout) if in probe mode, none is out,
    /// and data is in flight: "the end-host issues probe packets only when
    /// it has data packet in the flight" (§6.2.1 item 2).
    fn maybe_probe(&mut self, cfg: &HpccConfig, now: Instant, d: &mut Decision) {
        if let TelemetrySource::Probe { timeout_rtts } = cfg.telemetry {
            if !self.core.status.probe_outstanding() && self.core.status.in_flight() {
                d.request = Request::Probe { id: self.next_probe() };
                d.timer = self.probe_timeout(now, timeout_rtts);
            }
        }
    }
}

impl<const H: usize> Controller for HpccSender<H> {
    type Config = HpccConfig;

    fn validate(cfg: &HpccConfig) -> Result<(), Error> {
        cfg.validate()
    }

    fn start(cfg: &HpccConfig, _now: Instant, p: &FlowParams) -> Result<(Self, Decision), Error> {
        if p.algorithm != Algorithm::Hpcc {
            return Err(Error::NotApplicable);
        }
        let s = HpccSender::new(cfg, p)?;
        let d = s.decision();
        Ok((s, d))
    }

    fn decision(&self, _cfg: &HpccConfig) -> Decision {
        HpccSender::decision(self)
    }

    /// `NewAck` (draft 2022-10 §4.2, Figure 6):
    ///
    /// ```text
    /// 21: Procedure NewAck(ack)
    /// 22:    if ack.seq > lastUpdateSeq then
    /// 23:       W = ComputeWind(MeasureInflight(ack), True);
    /// 24:       lastUpdateSeq = snd_nxt;
    /// 25:    else
    /// 26:       W = ComputeWind(MeasureInflight(ack), False);
    /// 27:    R = W/T; L = ack.L;
    /// ```
    ///
    /// `ack.seq` is the cumulative ACK, compared with serial arithmetic. The
    /// first ACK with telemetry only records it and sets lastUpdateSeq =
    /// snd_nxt, so Wc is first committed one RTT of data later. An ACK
    /// without telemetry, or any ACK in probe mode (telemetry comes from
    /// probes there), only updates whether data is in flight. A duplicate
    /// ACK has Δts = 0 on every hop: nothing is measured and W, Wc and U
    /// stay as they are (ComputeWind is not run on no measurement; run, it
    /// would apply Wc·eta/U a second time right after a commit).
    #[inline]
    fn ack(&mut self, cfg: &HpccConfig, now: Instant, ack: &Ack<'_>) -> Result<Decision, Error> {
        if let TelemetrySource::Probe { .. } = cfg.telemetry {
            self.core.status.set_in_flight(ack.snd_nxt.after(ack.cum_ack));
            return Ok(self.decision());
        }
        // MeasureInflight checks the stack before it changes anything (an
        // empty stack is valid and measures nothing).
        if !ack.telemetry.is_empty() {
            let update = ack.cum_ack.after(self.last_update_seq);
            self.apply_telemetry(cfg, now, ack.telemetry, update, ack.snd_nxt)?;
        }
        self.core.status.set_in_flight(ack.snd_nxt.after(ack.cum_ack));
        Ok(self.decision())
    }

    /// The scheduler is sending a data packet (PktSend): data is in flight,
    /// and in probe mode a probe goes out if none is.
    fn sent(&mut self, cfg: &HpccConfig, now: Instant, _: Seq, _: u32, _: MessageEnd) -> Result<Decision, Error> {
        self.core.status.set_in_flight(true);
        let mut d = self.decision();
        self.maybe_probe(cfg, now, &mut d);
        Ok(d)
    }

    /// Loss recovery is the transport's; HPCC++ has no loss rule.
    fn loss(&mut self, _cfg: &HpccConfig, _now: Instant, _first_lost: Seq) -> Result<Decision, Error> {
        Ok(HpccSender::decision(self))
    }

    /// A probe response with the responder's chosen hop (§7.1). Each
    /// response to the current probe commits Wc: probes go out once per RTT
    /// ("it sends a new probe packet once it receives the response",
    /// §6.2.1), which is the once-per-RTT update of pan-02 §6.1. The next
    /// probe follows at once if data is still in flight; otherwise the
    /// timeout is cancelled. A response to another number (a probe a
    /// timeout superseded, or a duplicate) is ignored: it neither starts a
    /// second probe chain nor commits Wc twice. A refused reply (stale,
    /// malformed) changes nothing, as every refused event: the probe stays
    /// out and its timeout, still armed, re-probes or counts it lost.
    #[inline]
    fn probe_response(
        &mut self,
        cfg: &HpccConfig,
        now: Instant,
        probe: ProbeId,
        hop_index: u8,
        hop: &HopSample,
    ) -> Result<Decision, Error> {
        let TelemetrySource::Probe { .. } = cfg.telemetry else {
            return Err(Error::NotApplicable);
        };
        if !self.core.status.probe_outstanding() || probe != self.probe_id() {
            return Ok(self.decision());
        }
        if let Measured::Updated(u) = self
            .core
            .measure_inflight(cfg, now, core::slice::from_ref(hop), hop_index)?
        {
            self.core.compute_wind(cfg, u, true);
        }
        self.core.status.set_probe_outstanding(false);
        let mut d = self.decision();
        d.timer = TimerRequest::Cancel;
        self.maybe_probe(cfg, now, &mut d);
        Ok(d)
    }

    /// Rx-HPCC feedback: the receiver's W becomes the sender's W and Wc,
    /// clamped to [W_min, W_init].
    fn feedback(&mut self, cfg: &HpccConfig, _now: Instant, window: Window) -> Result<Decision, Error> {
        self.core.apply_window(cfg, window);
        Ok(self.decision())
    }

    /// Receiver-reported N: W_ai = W_init·(1−eta)/N (§5).
    fn flow_count(&mut self, cfg: &HpccConfig, _now: Instant, flows: u16) -> Result<Decision, Error> {
        self.core.set_flow_count(cfg, flows)?;
        Ok(self.decision())
    }

    /// The probe timeout fired: probe again if one is still out and data is
    /// in flight. With nothing in flight the decision is unchanged (DESIGN
    /// §9), but the probe counts as lost, so the next data packet sent
    /// starts probing again.
    fn timer(&mut self, cfg: &HpccConfig, now: Instant) -> Result<Decision, Error> {
        let mut d = self.decision();
        if let TelemetrySource::Probe { timeout_rtts } = cfg.telemetry {
            if self.core.status.probe_outstanding() {
                if self.core.status.in_flight() {
                    d.request = Request::Probe { id: self.next_probe() };
                    d.timer = self.probe_timeout(now, timeout_rtts);
                } else {
                    self.core.status.set_probe_outstanding(false);
                }
            }
        }
        Ok(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Algorithm;
    use crate::testing::{flow, hop, T_NS};
    use crate::units::{BaseRtt, LinkSpeed};

    fn params() -> FlowParams {
        flow(Algorithm::Hpcc, T_NS, 100)
    }

    fn ack(cum: u32, nxt: u32, tel: &[HopSample]) -> Ack<'_> {
        Ack {
            telemetry: tel,
            ..Ack::new(Seq(cum), Seq(nxt))
        }
    }

    #[test]
    fn starts_at_bdp_and_line_rate() {
        let cfg = HpccConfig::draft_default();
        let s = HpccSender::<5>::new(&cfg, &params()).unwrap();
        let d = s.decision();
        assert_eq!(d.window, Window::from_bytes(150_000));
        assert_eq!(d.rate().as_bps(), 100_000_000_000);
    }

    #[test]
    fn first_ack_records_and_sets_last_update_seq() {
        let cfg = HpccConfig::draft_default();
        let mut s = HpccSender::<5>::new(&cfg, &params()).unwrap();
        let d = s
            .ack(&cfg, Instant::ZERO, &ack(1000, 150_000, &[hop(0, 0, 50_000)]))
            .unwrap();
        assert_eq!(d.window, Window::from_bytes(150_000));
        assert_eq!(s.last_update_seq(), Seq(150_000));
        assert_eq!(s.core().utilization().to_bits(), 0);
    }

    /// ACKs inside the current RTT move W but not Wc; the first ACK past
    /// lastUpdateSeq commits Wc and advances lastUpdateSeq to snd_nxt.
    #[test]
    fn wc_is_committed_once_per_rtt() {
        let cfg = HpccConfig::sigcomm19();
        let mut s = HpccSender::<5>::new(&cfg, &params()).unwrap();
        s.ack(&cfg, Instant::ZERO, &ack(1000, 150_000, &[hop(0, 0, 150_000)]))
            .unwrap();
        // Link 2x overloaded (queue of one BDP, full rate): U → 2 over one T.
        let d = s
            .ack(&cfg, Instant::ZERO, &ack(2000, 151_000, &[hop(T_NS, 150_000, 150_000)]))
            .unwrap();
        assert_eq!(
            s.core().reference_window(),
            Window::from_bytes(150_000),
            "Wc unchanged inside the RTT"
        );
        // W = Wc · 0.95 / 2 + 75 B = 71325 B (eta/U within a relative 2^-15).
        let w = d.window.to_bits() as f64 / 16.0;
        assert!((w - 71_325.0).abs() < 71_325.0 * 2f64.powi(-15), "W = {w}");
        assert_eq!(s.last_update_seq(), Seq(150_000));
        // Past lastUpdateSeq: commit.
        let d = s
            .ack(
                &cfg,
                Instant::ZERO,
                &ack(150_001, 300_000, &[hop(2 * T_NS, 300_000, 150_000)]),
            )
            .unwrap();
        assert_eq!(s.core().reference_window(), d.window);
        assert_eq!(s.last_update_seq(), Seq(300_000));
    }

    #[test]
    fn duplicate_ack_changes_nothing() {
        let cfg = HpccConfig::draft_default();
        let mut s = HpccSender::<5>::new(&cfg, &params()).unwrap();
        s.ack(&cfg, Instant::ZERO, &ack(1000, 150_000, &[hop(0, 0, 0)]))
            .unwrap();
        let tel = [hop(T_NS, 120_000, 10_000)];
        let d1 = s.ack(&cfg, Instant::ZERO, &ack(2000, 151_000, &tel)).unwrap();
        let before = s;
        let d2 = s.ack(&cfg, Instant::ZERO, &ack(2000, 151_000, &tel)).unwrap();
        assert_eq!(d1, d2);
        assert_eq!(s.core().snapshot(), before.core().snapshot());
    }

    /// Issue: a duplicate of the ACK that committed Wc ran ComputeWind
    /// again and halved W once more, contrary to this doc comment.
    #[test]
    fn a_duplicate_of_the_committing_ack_changes_nothing() {
        let cfg = HpccConfig::sigcomm19();
        let mut s = HpccSender::<5>::new(&cfg, &params()).unwrap();
        s.ack(&cfg, Instant::ZERO, &ack(1000, 150_000, &[hop(0, 0, 150_000)]))
            .unwrap();
        s.ack(&cfg, Instant::ZERO, &ack(2000, 151_000, &[hop(T_NS, 150_000, 150_000)]))
            .unwrap();
        // Past lastUpdateSeq with U ≈ 2: commits Wc ≈ W_init / 2.
        let tel = [hop(2 * T_NS, 300_000, 150_000)];
        let d1 = s.ack(&cfg, Instant::ZERO, &ack(150_001, 300_000, &tel)).unwrap();
        assert_eq!(s.core().reference_window(), d1.window);
        let before = s.core().snapshot();
        let d2 = s.ack(&cfg, Instant::ZERO, &ack(150_001, 300_000, &tel)).unwrap();
        assert_eq!(d2, d1, "W {:?} after the duplicate, {:?} before", d2.window, d1.window);
        assert_eq!(s.core().snapshot(), before);
    }

    #[test]
    fn reordered_ack_is_rejected_without_change() {
        let cfg = HpccConfig::draft_default();
        let mut s = HpccSender::<5>::new(&cfg, &params()).unwrap();
        s.ack(&cfg, Instant::ZERO, &ack(1000, 150_000, &[hop(5_000, 0, 0)]))
            .unwrap();
        s.ack(&cfg, Instant::ZERO, &ack(3000, 151_000, &[hop(T_NS, 60_000, 0)]))
            .unwrap();
        let before = s;
        assert_eq!(
            s.ack(&cfg, Instant::ZERO, &ack(2000, 151_000, &[hop(8_000, 30_000, 0)])),
            Err(Error::StaleTelemetry)
        );
        assert_eq!(s, before);
    }

    fn probe_cfg(timeout_rtts: u8) -> HpccConfig {
        let mut cfg = HpccConfig::draft_default();
        cfg.telemetry = TelemetrySource::Probe { timeout_rtts };
        cfg
    }

    /// The number of the probe a decision asks for.
    fn probe_of(d: &Decision) -> ProbeId {
        match d.request {
            Request::Probe { id } => id,
            other => panic!("expected a probe, got {other:?}"),
        }
    }

    #[test]
    fn probe_mode_one_probe_per_rtt_only_while_in_flight() {
        let cfg = probe_cfg(2);
        let mut s = HpccSender::<1>::new(&cfg, &params()).unwrap();
        let now = Instant::from_nanos(1_000);
        let d = s.sent(&cfg, now, Seq(0), 0, MessageEnd::More).unwrap();
        let p1 = probe_of(&d);
        assert_eq!(d.timer, TimerRequest::Arm(Instant::from_nanos(1_000 + 24_000)));
        // A second packet does not send a second probe.
        assert_eq!(
            s.sent(&cfg, now, Seq(0), 0, MessageEnd::More).unwrap().request,
            Request::None
        );
        // Response while data is in flight: the next probe goes at once.
        let d = s.probe_response(&cfg, now, p1, 2, &hop(0, 0, 0)).unwrap();
        let p2 = probe_of(&d);
        assert_eq!(p2, p1.next());
        // All data acknowledged (plain ACKs in probe mode).
        s.ack(&cfg, Instant::ZERO, &ack(150_000, 150_000, &[])).unwrap();
        let d = s.probe_response(&cfg, now, p2, 2, &hop(T_NS, 150_000, 0)).unwrap();
        assert_eq!(d.request, Request::None);
        assert_eq!(d.timer, TimerRequest::Cancel);
        // Timer with nothing in flight: the decision is unchanged.
        assert_eq!(s.timer(&cfg, now).unwrap(), s.decision());
    }

    #[test]
    fn probe_timeout_reissues_the_probe() {
        let cfg = probe_cfg(1);
        let mut s = HpccSender::<1>::new(&cfg, &params()).unwrap();
        let p1 = probe_of(&s.sent(&cfg, Instant::ZERO, Seq(0), 0, MessageEnd::More).unwrap());
        let d = s.timer(&cfg, Instant::from_nanos(12_000)).unwrap();
        assert_eq!(probe_of(&d), p1.next());
        assert_eq!(d.timer, TimerRequest::Arm(Instant::from_nanos(24_000)));
    }

    /// Issue: a spurious timeout started a second probe chain that never
    /// merged, and every response committed Wc: with two chains at u' = 2,
    /// Wc after 3 T was 6 019 B instead of 16 203 B. Now the re-probe
    /// supersedes the first probe: its late response is ignored, one chain
    /// goes on, and Wc is committed once per response of that chain.
    #[test]
    fn a_spurious_timeout_does_not_start_a_second_chain() {
        let cfg = probe_cfg(1);
        let mut s = HpccSender::<1>::new(&cfg, &params()).unwrap();
        let t = T_NS as u64;
        // Hop at u' = 2: a standing queue of one BDP and the link at line
        // rate (12.5 bytes per ns at 100 Gb/s).
        let at = |k: u64| hop((k * t) as u32, (k * t * 25 / 2) as u32, 150_000);
        let mut id = probe_of(&s.sent(&cfg, Instant::ZERO, Seq(0), 0, MessageEnd::More).unwrap());
        let d = s.probe_response(&cfg, Instant::from_nanos(t), id, 0, &at(1)).unwrap();
        id = probe_of(&d);
        // The RTT grows past the timeout: the probe is sent again.
        let d = s.timer(&cfg, Instant::from_nanos(2 * t)).unwrap();
        let resent = probe_of(&d);
        assert_ne!(resent, id);
        // Both responses come back, T/2 apart, for three RTTs: only the
        // current number counts, and each counted response asks for the next.
        let mut committed = 0;
        let mut current = resent;
        for k in 2..5u64 {
            let late = s
                .probe_response(&cfg, Instant::from_nanos(k * t + t / 2), id, 0, &at(k))
                .unwrap();
            assert_eq!(
                late.request,
                Request::None,
                "a superseded probe's response starts nothing"
            );
            let d = s
                .probe_response(&cfg, Instant::from_nanos((k + 1) * t), current, 0, &at(k + 1))
                .unwrap();
            committed += 1;
            id = current;
            current = probe_of(&d);
        }
        assert_eq!(committed, 3);
        // One chain, one commit per RTT: Wc ≈ 16.3 kB after 3 T (the
        // issue's single-chain figure is 16 203 B); two chains committing
        // on every response had cut it to 6 019 B.
        let wc = s.core().reference_window().bytes_floor();
        assert!((15_000..17_500).contains(&wc), "Wc after 3 T: {wc} B");
    }

    /// Issue: a probe lost while the flow went idle left the probe
    /// "outstanding" for good; 10 000 later packets produced no probe and W
    /// never changed again. The timeout with nothing in flight now counts
    /// it lost, and the next packet sent probes.
    #[test]
    fn a_probe_lost_while_idle_does_not_stop_probing() {
        let cfg = probe_cfg(2);
        let mut s = HpccSender::<1>::new(&cfg, &params()).unwrap();
        probe_of(&s.sent(&cfg, Instant::ZERO, Seq(0), 0, MessageEnd::More).unwrap());
        // The probe is lost; all data is acknowledged; the timeout fires.
        s.ack(&cfg, Instant::from_nanos(10_000), &ack(150_000, 150_000, &[]))
            .unwrap();
        let d = s.timer(&cfg, Instant::from_nanos(24_000)).unwrap();
        assert_eq!((d.request, d.timer), (Request::None, TimerRequest::Keep));
        // Traffic resumes: the first packet sent probes again.
        let d = s
            .sent(&cfg, Instant::from_nanos(1_000_000), Seq(0), 0, MessageEnd::More)
            .unwrap();
        probe_of(&d);
        assert_eq!(d.timer, TimerRequest::Arm(Instant::from_nanos(1_024_000)));
    }

    /// Issue: a probe reply the engine refused (stale telemetry) left the
    /// probe outstanding: the same dead state once the flow went idle. The
    /// refusal still changes nothing, and the probe's timeout recovers:
    /// with data in flight it re-probes, with none it counts the probe lost.
    #[test]
    fn a_refused_probe_reply_is_recovered_by_the_timeout() {
        let cfg = probe_cfg(2);
        let mut s = HpccSender::<1>::new(&cfg, &params()).unwrap();
        let p1 = probe_of(&s.sent(&cfg, Instant::ZERO, Seq(0), 0, MessageEnd::More).unwrap());
        let d = s
            .probe_response(&cfg, Instant::from_nanos(12_000), p1, 0, &hop(50_000, 0, 0))
            .unwrap();
        let p2 = probe_of(&d);
        // The reply to p2 carries an older timestamp: refused, nothing changes.
        let before = s;
        let r = s.probe_response(&cfg, Instant::from_nanos(24_000), p2, 0, &hop(40_000, 0, 0));
        assert_eq!(r, Err(Error::StaleTelemetry));
        assert_eq!(s, before);
        // Data still in flight: the timeout probes again.
        probe_of(&s.timer(&cfg, Instant::from_nanos(36_000)).unwrap());
        // The flow goes idle and that probe is lost too: the next timeout
        // counts it lost and the next packet sent probes.
        s.ack(&cfg, Instant::from_nanos(40_000), &ack(150_000, 150_000, &[]))
            .unwrap();
        assert_eq!(
            s.timer(&cfg, Instant::from_nanos(60_000)).unwrap().request,
            Request::None
        );
        probe_of(
            &s.sent(&cfg, Instant::from_nanos(2_000_000), Seq(0), 0, MessageEnd::More)
                .unwrap(),
        );
    }

    #[test]
    fn a_duplicate_response_is_ignored() {
        let cfg = probe_cfg(2);
        let mut s = HpccSender::<1>::new(&cfg, &params()).unwrap();
        let p1 = probe_of(&s.sent(&cfg, Instant::ZERO, Seq(0), 0, MessageEnd::More).unwrap());
        s.probe_response(&cfg, Instant::from_nanos(12_000), p1, 0, &hop(12_000, 0, 0))
            .unwrap();
        let before = s;
        let d = s
            .probe_response(&cfg, Instant::from_nanos(13_000), p1, 0, &hop(24_000, 300_000, 150_000))
            .unwrap();
        assert_eq!(s, before);
        assert_eq!(d, s.decision());
    }

    #[test]
    fn probe_response_is_not_for_inband_mode() {
        let cfg = HpccConfig::draft_default();
        let mut s = HpccSender::<1>::new(&cfg, &params()).unwrap();
        assert_eq!(
            s.probe_response(&cfg, Instant::ZERO, ProbeId(1), 0, &hop(0, 0, 0)),
            Err(Error::NotApplicable)
        );
    }

    #[test]
    fn feedback_is_clamped() {
        let cfg = HpccConfig::draft_default();
        let mut s = HpccSender::<1>::new(&cfg, &params()).unwrap();
        assert_eq!(
            s.feedback(&cfg, Instant::ZERO, Window::from_bytes(1)).unwrap().window,
            cfg.w_min
        );
        assert_eq!(
            s.feedback(&cfg, Instant::ZERO, Window::from_bytes(1 << 27))
                .unwrap()
                .window,
            Window::from_bytes(150_000)
        );
        let d = s.feedback(&cfg, Instant::ZERO, Window::from_bytes(75_000)).unwrap();
        assert_eq!(d.rate().as_bps(), 50_000_000_000);
    }

    /// Issue: W_ai rounded to 1/16 byte, so at 10 Gb/s × 1 µs a reported N
    /// of 2000 gave W_ai = 0 and fairness never converged.
    #[test]
    fn w_ai_never_rounds_to_zero() {
        let cfg = HpccConfig::draft_default();
        let p = FlowParams {
            base_rtt: BaseRtt::from_nanos(1_000).unwrap(),
            line_rate: LinkSpeed::from_gbps(10),
            ..params()
        };
        let mut s = HpccSender::<1>::new(&cfg, &p).unwrap();
        s.flow_count(&cfg, Instant::ZERO, 2000).unwrap();
        assert_eq!(s.core().additive_increase().to_bits(), 1);
    }

    /// Issue: Start was refused above a 64 MiB BDP (1.6 Tb/s × 1 ms is
    /// 200 MB) where clamping serves.
    #[test]
    fn a_bdp_past_64_mib_starts_at_64_mib() {
        let cfg = HpccConfig::draft_default();
        let p = FlowParams {
            base_rtt: BaseRtt::from_nanos(1_000_000).unwrap(),
            line_rate: LinkSpeed::from_gbps(1600),
            ..params()
        };
        let s = HpccSender::<1>::new(&cfg, &p).unwrap();
        assert_eq!(s.core().initial_window(), Window::from_bytes(64 << 20));
        assert_eq!(s.decision().window, Window::from_bytes(64 << 20));
    }

    #[test]
    fn flow_count_sets_w_ai() {
        let cfg = HpccConfig::draft_default();
        let mut s = HpccSender::<1>::new(&cfg, &params()).unwrap();
        s.flow_count(&cfg, Instant::ZERO, 2).unwrap();
        let w = s.core().additive_increase().to_bits() as f64 / 16.0;
        assert!((w - 3_750.0).abs() < 0.1);
        assert_eq!(s.flow_count(&cfg, Instant::ZERO, 0), Err(Error::InvalidParams));
    }

    /// A stack of one hop takes [`HpccSender::one_hop`], the same code made
    /// for a known length: held bit for bit to the general
    /// [`HpccSender::hops`] (its stack's length hidden from the compiler)
    /// on the same events, the answer and the whole state after each,
    /// with histories of one, five and eight hops.
    /// The traces take every branch a hop has: first samples, changes of
    /// identity, speed and counter widths, repeated, stale and expired
    /// stamps, idle gaps past T, counter resets, a switch's own
    /// utilization, both queue signals, with and without AI stages.
    #[test]
    fn one_hop_is_the_general_walk_bit_for_bit() {
        use super::super::QueueSignal;
        use crate::telemetry::{CounterWidths, TxUtilization};
        use crate::testing::Lcg;
        use crate::units::Fraction;
        let widths = [
            CounterWidths::FULL,
            CounterWidths::new(24, 32, 1).unwrap(),
            CounterWidths::new(32, 20, 64).unwrap(),
        ];
        let speeds = [25, 100, 400];
        for seed in 0..400u64 {
            let mut r = Lcg(seed);
            let mut cfg = if seed % 2 == 0 {
                HpccConfig::sigcomm19()
            } else {
                HpccConfig::draft_default()
            };
            if seed % 3 == 0 {
                cfg.queue_signal = QueueSignal::Sojourn;
            }
            // Histories of one hop (a bottleneck hop's), five and eight (the
            // C API's).
            let mut a = HpccSender::<5>::new(&cfg, &params()).unwrap();
            let mut b = a;
            let mut a1 = HpccSender::<1>::new(&cfg, &params()).unwrap();
            let mut b1 = a1;
            let mut a8 = HpccSender::<8>::new(&cfg, &params()).unwrap();
            let mut b8 = a8;
            let (mut now, mut ts, mut tx) = (0u64, r.draw(), r.draw());
            let (mut id, mut speed, mut w) = (1u32, 1usize, 0usize);
            for _ in 0..80 {
                let x = r.draw();
                match x % 64 {
                    0..=2 => id = r.draw(),
                    3 => speed = r.draw() as usize % speeds.len(),
                    4 => w = r.draw() as usize % widths.len(),
                    _ => {}
                }
                let gap = match x % 16 {
                    0 => 0,
                    1 => T_NS * 3,
                    _ => r.draw() % T_NS,
                };
                now += gap as u64 + (x % 7) as u64;
                ts = match x % 32 {
                    5 => ts.wrapping_sub(r.draw() % 4000),
                    _ => ts.wrapping_add(gap),
                };
                let bytes = (gap as u64 * speeds[speed] as u64 / 8 * (r.draw() % 140) as u64 / 100) as u32;
                let unit = widths[w].tx_unit_bytes() as u32;
                tx = match x % 41 {
                    6 => r.draw(),
                    _ => tx.wrapping_add(bytes / unit),
                };
                let hop = HopSample {
                    ts,
                    tx,
                    qlen_bytes: r.draw() % 400_000,
                    sojourn_ns: r.draw() % 60_000,
                    bandwidth: LinkSpeed::from_gbps(speeds[speed]),
                    id,
                    widths: widths[w],
                    tx_utilization: if x.is_multiple_of(9) {
                        TxUtilization::reported(Fraction::from_bits_trusted(r.draw() % (1 << 24)))
                    } else {
                        TxUtilization::NONE
                    },
                };
                let (update, nxt) = (r.draw().is_multiple_of(4), Seq(r.draw()));
                let ack = (&cfg, Instant::from_nanos(now), &hop, update, nxt);
                same(&mut a, &mut b, ack, seed, "five hops of history");
                same(&mut a1, &mut b1, ack, seed, "one hop of history");
                same(&mut a8, &mut b8, ack, seed, "eight hops of history");
            }
        }
    }

    /// One ACK of one hop through [`HpccSender::one_hop`] on `a` and
    /// through [`HpccSender::hops`] on `b`, the stack's length hidden from
    /// the compiler there: the same answer and the same state after.
    fn same<const H: usize>(
        a: &mut HpccSender<H>,
        b: &mut HpccSender<H>,
        (cfg, at, hop, update, nxt): (&HpccConfig, Instant, &HopSample, bool, Seq),
        seed: u64,
        history: &str,
    ) {
        let one = [*hop];
        let ra = a.one_hop(cfg, at, hop, update, nxt);
        let rb = b.hops(cfg, at, core::hint::black_box(&one[..]), update, nxt);
        assert_eq!((ra, *a), (rb, *b), "seed {seed}, {history}");
    }
}
