//! When a NIC sends: the scheduler and pacer, and the Tx pipeline.
//!
//! The uplink serves control packets first, then the flows round robin:
//! a flow is eligible when its [`Gate`] allows (bytes in flight below the
//! window, a timer credit below one packet of window, or always for a
//! rate-gated flow) and its pacer's next send time has come. After each
//! packet the NIC plans one wake-up at the earliest instant something can
//! go; a flow that waits for an ACK needs none (the ACK calls the
//! scheduler). The Tx pipeline asks the engine for the packet's ECN
//! codepoint (`Sent`), adds the telemetry header the profile asks for, and
//! arms the go-back-N timer.

use cc_core::prelude::*;

use super::{Gate, Nic};
use crate::model::packet::{nic_clock, EcnBits, Packet, PktKind};
use crate::run::ctx::Ctx;
use crate::run::event::{ser_ps, Ev, Ps};

/// A window of `bytes` (in flight, or to be), saturating far above any
/// window.
fn window_of(bytes: u64) -> Window {
    Window::from_bytes(u32::try_from(bytes).unwrap_or(u32::MAX))
}

/// Gives a packet being built an empty telemetry header of the run's
/// format, counted in its wire bytes.
#[inline(always)]
pub(crate) fn attach_telemetry(cx: &mut Ctx, p: &mut Packet) {
    p.tel = cx.pkts.new_tel();
    let mut t = cx.pkts.tel_buf_mut(p.tel);
    cx.cfg.tel.init(&mut t);
    p.wire += t.len();
}

impl Nic {
    /// If `flow`'s window lets it send: when its pacer does, and whether it
    /// would use a timer credit to send.
    fn window_allows(&self, cx: &Ctx, flow: u32) -> Option<(Ps, bool)> {
        let f = self.sender(cx, flow)?;
        if let Some(tx) = f.sack.as_deref() {
            // The SACK transport: a resend first, else new data; the
            // window bounds the wire bytes in flight with it (uet-htsim's
            // `can_send_NSCC`).
            let wire = match tx.next_rtx() {
                Some((_, w)) => w as u64,
                None if f.snd_nxt < f.app_limit => {
                    cx.cfg.header as u64 + (f.app_limit - f.snd_nxt).min(cx.cfg.payload as u64)
                }
                None => return None,
            };
            // Under SLEEK's recovery a resend goes past the window.
            let ok = self.profile.gate == Gate::Rate || tx.recovering() || window_of(tx.in_flight() + wire) <= f.window;
            return ok.then_some((f.pacer.next_send_ps, false));
        }
        if f.snd_nxt >= f.app_limit {
            return None;
        }
        let sub_packet = self.profile.gate == Gate::WindowOrTicks && f.window < Window::from_bytes(cx.cfg.payload);
        let ok = match self.profile.gate {
            Gate::Rate => true,
            _ if sub_packet => f.credits > 0,
            // Bytes in flight under the window (which has 1/16-byte steps).
            _ => window_of(f.snd_nxt - f.snd_una) < f.window,
        };
        ok.then_some((f.pacer.next_send_ps, sub_packet))
    }

    /// Makes sure the NIC wakes at `t` (or earlier).
    #[inline(always)]
    fn wake(&mut self, cx: &mut Ctx, t: Ps) {
        if self.wake_at.is_none_or(|w| w > t) {
            self.wake_at = Some(t);
            cx.q.wake(self.host, t);
        }
    }

    /// The pending wake-up fired.
    pub fn woken(&mut self, cx: &mut Ctx) {
        self.wake_at = None;
        self.try_send(cx);
    }

    /// A PFC frame from the switch: data stops (control packets too, unless
    /// they have a priority of their own) until it resumes.
    #[inline(never)]
    pub fn pause(&mut self, cx: &mut Ctx, on: bool) {
        match (on, self.uplink.paused_since) {
            (true, None) => self.uplink.paused_since = Some(cx.now),
            (false, Some(since)) => {
                self.uplink.paused_since = None;
                cx.metrics.counters.pfc_host_paused_ns += (cx.now - since).as_ns();
                self.try_send(cx);
            }
            _ => {}
        }
    }

    /// Whether control packets may go now (PFC pauses them with the data
    /// unless they travel in a priority of their own).
    fn ctrl_may_go(&self, cx: &Ctx) -> bool {
        self.uplink.paused_since.is_none() || cx.cfg.control_priority
    }

    /// After a transmission: one wake-up at the earliest instant something
    /// can go (control packets when the port frees; a flow when the port
    /// frees and its pacer allows). Nothing if every flow waits for an ACK.
    #[inline(always)]
    fn plan_next(&mut self, cx: &mut Ctx) {
        let free = self.uplink.busy_until;
        if !self.ctrl.is_empty() && self.ctrl_may_go(cx) {
            self.wake(cx, free);
            return;
        }
        if self.uplink.paused_since.is_some() {
            // The resume sends again.
            return;
        }
        let mut earliest: Option<Ps> = None;
        for &flow in &self.active {
            if let Some((next, _)) = self.window_allows(cx, flow) {
                let t = next.max(free);
                earliest = Some(earliest.map_or(t, |e: Ps| e.min(t)));
            }
        }
        if let Some(t) = earliest {
            self.wake(cx, t);
        }
    }

    /// The uplink: control first, then the next eligible flow round robin;
    /// then plan the next wake-up.
    #[inline(never)]
    pub(crate) fn try_send(&mut self, cx: &mut Ctx) {
        let free = self.uplink.busy_until;
        if cx.now < free {
            self.wake(cx, free);
            return;
        }
        if self.ctrl_may_go(cx) {
            if let Some(p) = self.ctrl.pop_front() {
                // An ack's t3: when it leaves the receiver's NIC.
                let q = cx.pkts.get_mut(p);
                if q.kind == PktKind::Ack {
                    q.t3 = nic_clock(self.node, cx.now);
                }
                self.transmit(cx, p);
                self.plan_next(cx);
                return;
            }
        }
        if self.uplink.paused_since.is_some() {
            return;
        }
        // Round robin from `rr`, each flow once: idx = (rr + i) mod n, kept
        // by a wrap rather than a divide per flow (this runs for every
        // packet). `rr` is the place after the flow served last, not
        // wrapped: n when that was the last flow, so that a flow that
        // joins after it is served next (as the reference simulators'
        // NICs take their queue pairs), and past n only when flows left.
        let n = self.active.len();
        let mut idx = if self.rr < n { self.rr } else { self.rr % n.max(1) };
        for _ in 0..n {
            let flow = self.active[idx];
            let after = idx + 1;
            idx = if after == n { 0 } else { after };
            let Some((next, sub_packet)) = self.window_allows(cx, flow) else {
                continue;
            };
            if next > cx.now {
                continue;
            }
            self.rr = after;
            self.send_data(cx, flow, sub_packet);
            self.plan_next(cx);
            return;
        }
        self.plan_next(cx);
    }

    /// Starts serializing `pkt` on the uplink; it reaches the far end
    /// after serialization, propagation and any Tx jitter.
    #[inline(always)]
    fn transmit(&mut self, cx: &mut Ctx, pkt: u32) {
        let u = &mut self.uplink;
        let ser = ser_ps(cx.pkts.get(pkt).wire.into(), u.link.bps);
        u.busy_until = cx.now + ser;
        let mut arrival = cx.now + ser + u.link.delay_ps;
        if cx.cfg.tx_jitter_ps > Ps::ZERO {
            // Tx path jitter: a later arrival, never ahead of the packet before.
            let jitter = rand_chacha::rand_core::Rng::next_u64(&mut cx.rng.jitter) % cx.cfg.tx_jitter_ps.as_ps();
            arrival += Ps::from_ps(jitter);
            arrival = arrival.max(u.last_arrival);
            u.last_arrival = arrival;
        }
        let (node, port) = u.link.peer;
        cx.q.push(arrival, Ev::Arrive { node, port, pkt });
    }

    /// Queues a control packet for host `to` on the uplink (ahead of data).
    pub(crate) fn send_ctrl(
        &mut self,
        cx: &mut Ctx,
        to: u32,
        flow: u32,
        kind: PktKind,
        fill: impl FnOnce(&mut Ctx, &mut Packet),
    ) {
        let f = &cx.flows[flow as usize];
        // Back towards the flow's source, or on with the data.
        let hash = if to == f.src_host { f.back_hash } else { f.hash };
        let dst = cx.net.hosts[to as usize];
        let mut p = Packet::new(kind, flow, hash, self.node, dst);
        p.wire = cx.cfg.ack_bytes;
        fill(cx, &mut p);
        let id = cx.pkts.insert(p);
        cx.metrics.counters.ctrl_packets += 1;
        self.ctrl.push_back(id);
        self.try_send(cx);
    }

    /// The Tx pipeline for the next data packet of `flow`.
    fn send_data(&mut self, cx: &mut Ctx, flow: u32, sub_packet: bool) {
        let (seq, len, last, dst, at, resend) = {
            let Some(f) = self.sender(cx, flow) else { return };
            // The SACK transport resends what was NACKed or timed out
            // first, lowest number first.
            let rtx = f.sack.as_deref().and_then(|t| t.next_rtx());
            let seq = match rtx {
                Some((n, _)) => n as u64 * cx.cfg.payload as u64,
                None => f.snd_nxt,
            };
            // A message ends where the application's bytes end (the flow,
            // or an on/off burst).
            let len = (f.app_limit - seq).min(cx.cfg.payload as u64) as u32;
            (
                seq,
                len,
                seq + len as u64 == f.app_limit,
                cx.flows[flow as usize].dst_host,
                f.engine,
                rtx.is_some(),
            )
        };
        let end = if last { MessageEnd::Last } else { MessageEnd::More };
        let d = self.engine(
            cx,
            flow,
            at,
            EventKind::Sent {
                seq: Seq(seq as u32),
                len,
                end,
            },
        );
        let ecn = match d.map(|d| d.ecn) {
            Some(Ecn::NotEct) => EcnBits::NotEct,
            _ => EcnBits::Ect,
        };
        let mut hash = cx.flows[flow as usize].hash;
        // A sprayed flow's packet takes the EV the engine chose for it.
        let ev = d.and_then(|d| d.ev).map(cc_core::path::Ev::get);
        if let Some(ev) = ev {
            hash = crate::model::net::ev_hash(hash, ev);
        }
        let mut p = Packet::new(PktKind::Data, flow, hash, self.node, cx.net.hosts[dst as usize]);
        if let Some(ev) = ev {
            p.set_ev(ev);
        }
        // A flow is shorter than 2^31 bytes (the workload's bound) and a
        // payload at most 9000 (the scenario's).
        p.seq = seq as u32;
        p.len = len as u16;
        p.set_ecn(ecn);
        p.ts_ps = cx.now;
        p.wire = cx.cfg.header + len as u16;
        if self.profile.data_telemetry {
            attach_telemetry(cx, &mut p);
        }
        let wire = u32::from(p.wire);
        let id = cx.pkts.insert(p);
        let rec = &mut cx.flows[flow as usize];
        let Some(f) = self.senders.get_mut(rec.tx_at, flow) else {
            return;
        };
        if seq < f.max_sent {
            rec.retransmits += 1;
            cx.metrics.counters.retransmits += 1;
        }
        // Go-back-N sends at snd_nxt; a SACK resend lies below it.
        f.snd_nxt = f.snd_nxt.max(seq + len as u64);
        f.max_sent = f.max_sent.max(f.snd_nxt);
        if let Some(tx) = f.sack.as_deref_mut() {
            tx.send((seq / cx.cfg.payload as u64) as u32, wire, cx.now, ev.unwrap_or(0));
            // The ack request (uet-htsim's AR): on a resend, on the last
            // packet, and when this packet, now in flight, fills the window.
            let full = window_of(tx.in_flight() + wire as u64) >= f.window;
            cx.pkts.get_mut(id).set_ar(resend || last || full);
        }
        if sub_packet {
            f.credits = f.credits.saturating_sub(1);
            cx.metrics.counters.timer_releases += 1;
        }
        if wire != f.pacer.wire {
            // Otherwise the gap is already ser_ps(wire, rate) (kept so on
            // every change of rate), and a divide is saved.
            f.pacer.wire = wire;
            f.pacer.gap_ps = ser_ps(wire, f.rate.as_bps());
        }
        f.pacer.next_send_ps = f.pacer.next_send_ps.max(cx.now) + f.pacer.gap_ps;
        cx.metrics.counters.data_packets += 1;
        if let Some(d) = d {
            self.apply(cx, flow, &d);
        }
        self.arm_rto(cx, flow);
        self.transmit(cx, id);
    }

    /// Sets the go-back-N deadline to now + RTO. At most one Rto event per
    /// flow is queued; when it fires early (the deadline moved) it requeues
    /// itself at the deadline.
    #[inline(always)]
    pub(crate) fn arm_rto(&mut self, cx: &mut Ctx, flow: u32) {
        if cx.cfg.sack_bytes.is_some() {
            return self.sack_arm(cx, flow);
        }
        let Some(f) = self.sender_mut(cx, flow) else { return };
        f.rto_deadline = cx.now + cx.cfg.rto_ps;
        if !f.rto_pending {
            f.rto_pending = true;
            cx.q.push(f.rto_deadline, Ev::Rto { flow });
        }
    }

    /// The go-back-N timer of `flow` may have expired.
    #[inline(never)]
    pub fn rto(&mut self, cx: &mut Ctx, flow: u32) {
        if cx.cfg.sack_bytes.is_some() {
            return self.sack_rto(cx, flow);
        }
        let Some(f) = self.sender_mut(cx, flow) else { return };
        f.rto_pending = false;
        if f.rto_deadline == Ps::NEVER || f.snd_una >= f.snd_nxt {
            return;
        }
        if cx.now < f.rto_deadline {
            f.rto_pending = true;
            cx.q.push(f.rto_deadline, Ev::Rto { flow });
            return;
        }
        cx.metrics.counters.timeouts += 1;
        let (una, at) = (f.snd_una, f.engine);
        f.snd_nxt = una;
        if let Some(d) = self.engine(
            cx,
            flow,
            at,
            EventKind::Loss {
                first_lost: Seq(una as u32),
                ev: None,
            },
        ) {
            self.apply(cx, flow, &d);
        }
        self.arm_rto(cx, flow);
        self.try_send(cx);
    }
}
