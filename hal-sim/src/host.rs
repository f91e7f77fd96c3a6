//! The NIC of a host (HPCC++ §6.3, Figure 7): a per-flow scheduler with a
//! pacer (round robin among flows the window and pacing rate allow), the Tx
//! pipeline that builds packets with the telemetry header and the ECN
//! codepoint the engine chose, and the Rx pipelines: the receiver
//! acknowledges (per packet or every n, a CE mark at once), echoes telemetry
//! and ECE, sends Rx-HPCC feedback, answers probes and RTT requests, sends
//! CNPs and NACKs; the sender hands every event to the cc-core engine and
//! applies its decision. Loss recovery is go-back-N with a timeout.

use cc_core::prelude::*;
use cc_core::wire::auth::{self, TAG_LEN};
use cc_core::wire::WireError;

use crate::event::{ser_ps, Ev, Ps, PS_PER_NS};
use crate::packet::{EcnBits, Packet, PktKind, NO_TEL, TEL_CAP};
use crate::scenario::{Algo, HpccMode};
use crate::world::World;

/// Largest notification an integrity tag covers: telemetry plus a sequence.
const SEAL_CAP: usize = TEL_CAP + 8 + TAG_LEN;

impl World {
    fn algorithm(&self) -> Algorithm {
        match self.cfg.algo {
            Algo::Hpcc => Algorithm::Hpcc,
            Algo::Ldcp => Algorithm::Ldcp,
            Algo::LdcpRate => Algorithm::LdcpRate,
        }
    }

    fn receiver_role(&self) -> bool {
        self.cfg.algo == Algo::Hpcc && matches!(self.cfg.mode, HpccMode::RxHpcc | HpccMode::Probe)
    }

    fn data_telemetry(&self) -> bool {
        self.cfg.algo == Algo::Hpcc && self.cfg.mode != HpccMode::Probe
    }

    fn params(&self, flow: u32, algorithm: Algorithm) -> FlowParams {
        let f = &self.flows[flow as usize];
        let node = self.hosts[f.src_host as usize].node;
        let bps = self.net.nodes[node as usize].ports[0].bps;
        FlowParams {
            algorithm,
            base_rtt: BaseRtt::from_nanos(f.base_rtt_ns)
                .unwrap_or(BaseRtt::from_nanos(BaseRtt::MAX_NS).expect("in range")),
            line_rate: LinkSpeed::from_mbps((bps / 1_000_000) as u32),
            start_seq: Seq(0),
        }
    }

    /// Hands an event to a host's engine; a refusal is counted.
    fn engine(&mut self, host: u32, flow: u32, kind: EventKind<'_>) -> Option<Decision> {
        let now = Instant::from_nanos(self.now / PS_PER_NS);
        let event = Event {
            flow: FlowId(flow),
            kind,
        };
        if let Some(t) = self.trace.as_mut().filter(|t| t.selection.wants(host, flow)) {
            t.record(now, &event);
        }
        let answer = match self
            .cosim
            .as_mut()
            .filter(|f| f.failure.is_none() && f.selection.wants(host, flow))
        {
            Some(fw) => fw.handle(now, &event).unwrap_or_else(|e| {
                fw.failure = Some(e);
                Err(Error::NotApplicable)
            }),
            None => self.hosts[host as usize].engine.handle(now, &event),
        };
        match answer {
            Ok(d) => Some(d),
            Err(_) => {
                self.metrics.counters.engine_refusals += 1;
                None
            }
        }
    }

    pub(crate) fn flow_start(&mut self, flow: u32) {
        let (src, dst) = (self.flows[flow as usize].src_host, self.flows[flow as usize].dst_host);
        let p = self.params(flow, self.algorithm());
        if let Some(d) = self.engine(src, flow, EventKind::Start(p)) {
            self.apply(flow, &d);
        }
        if self.receiver_role() {
            let p = self.params(flow, Algorithm::HpccReceiver);
            self.engine(dst, flow, EventKind::Start(p));
        }
        self.hosts[src as usize].active.push(flow);
        self.try_send(src);
    }

    /// Applies the sender's decision.
    pub(crate) fn apply(&mut self, flow: u32, d: &Decision) {
        let f = &mut self.flows[flow as usize];
        f.window = d.window;
        // At least 1 Mb/s: a pace the simulated pacer can time.
        let rate = Rate::from_bps(d.rate().as_bps().max(1_000_000));
        if rate != f.rate && f.pace_wire > 0 {
            // The pacer re-times the gap after the last packet at the new
            // rate (as the SIGCOMM'19 simulator's NIC does): a flow whose
            // rate rises need not wait out a gap set at the old one.
            let gap = ser_ps(f.pace_wire, rate.as_bps());
            f.next_send_ps = f.next_send_ps - f.pace_gap_ps + gap;
            f.pace_gap_ps = gap;
        }
        f.rate = rate;
        match d.timer {
            TimerRequest::Keep => {}
            TimerRequest::Arm(t) => {
                f.cc_gen = f.cc_gen.wrapping_add(1);
                let at = (t.as_nanos() * PS_PER_NS).max(self.now);
                self.q.push(at, Ev::CcTimer { flow, gen: f.cc_gen });
            }
            TimerRequest::Cancel => f.cc_gen = f.cc_gen.wrapping_add(1),
        }
        match d.request {
            Request::ReleaseOne => f.credits = f.credits.saturating_add(1),
            Request::GoBackN { from } => {
                let from = from.0 as u64;
                if from < f.snd_nxt {
                    f.snd_nxt = from.max(f.snd_una);
                }
            }
            Request::Probe { id } => {
                let kind = if self.cfg.algo == Algo::LdcpRate {
                    PktKind::RttReq
                } else {
                    PktKind::Probe
                };
                let (src, dst) = (f.src_host, f.dst_host);
                self.send_ctrl(src, dst, flow, kind, |w, p| {
                    p.ts_ps = w.now;
                    p.probe = id;
                    if kind == PktKind::Probe {
                        w.attach_telemetry(p);
                        p.ecn = EcnBits::Ect;
                    }
                });
            }
            Request::None | Request::Feedback { .. } | Request::ProbeReply { .. } => {}
        }
    }

    /// Gives a packet being built an empty telemetry header of the
    /// configured format, counted in its wire bytes.
    fn attach_telemetry(&mut self, p: &mut Packet) {
        p.tel = self.pkts.new_tel();
        let t = self.pkts.tel_buf_mut(p.tel);
        self.cfg.tel.init(t);
        p.wire += t.len as u32;
    }

    /// Queues a control packet on `from`'s uplink (ahead of data).
    fn send_ctrl(&mut self, from: u32, to: u32, flow: u32, kind: PktKind, fill: impl FnOnce(&mut World, &mut Packet)) {
        let (src, dst) = (self.hosts[from as usize].node, self.hosts[to as usize].node);
        let mut p = Packet::new(kind, flow, src, dst);
        p.wire = self.cfg.ack_bytes;
        fill(self, &mut p);
        let id = self.pkts.insert(p);
        self.metrics.counters.ctrl_packets += 1;
        self.hosts[from as usize].ctrl.push_back(id);
        self.try_send(from);
    }

    /// Whether `flow` may send now as far as its window goes, and whether
    /// it would use a timer credit to do so.
    fn window_allows(&self, flow: u32) -> Option<bool> {
        let f = &self.flows[flow as usize];
        if f.snd_nxt >= f.app_limit {
            return None;
        }
        let sub_packet = self.cfg.algo == Algo::Ldcp && f.window < Window::from_bytes(self.cfg.payload);
        let ok = match self.cfg.algo {
            Algo::LdcpRate => true,
            _ if sub_packet => f.credits > 0,
            // Bytes in flight under the window (which has 1/16-byte steps);
            // from_bytes saturates far above any window.
            _ => Window::from_bytes(u32::try_from(f.snd_nxt - f.snd_una).unwrap_or(u32::MAX)) < f.window,
        };
        ok.then_some(sub_packet)
    }

    /// Makes sure the NIC wakes at `t` (or earlier).
    fn wake(&mut self, host: u32, t: Ps) {
        let h = &mut self.hosts[host as usize];
        if h.wake_at.is_none_or(|w| w > t) {
            h.wake_at = Some(t);
            self.q.wake(host, t);
        }
    }

    /// After a transmission: one wake-up at the earliest instant something
    /// can go (control packets when the port frees; a flow when the port
    /// frees and its pacer allows). Nothing if every flow waits for an ACK:
    /// the ACK calls the scheduler.
    fn plan_next(&mut self, host: u32) {
        let node = self.hosts[host as usize].node;
        let free = self.net.nodes[node as usize].ports[0].busy_until;
        if !self.hosts[host as usize].ctrl.is_empty() {
            self.wake(host, free);
            return;
        }
        let mut earliest: Option<Ps> = None;
        for i in 0..self.hosts[host as usize].active.len() {
            let flow = self.hosts[host as usize].active[i];
            if self.window_allows(flow).is_some() {
                let t = self.flows[flow as usize].next_send_ps.max(free);
                earliest = Some(earliest.map_or(t, |e: Ps| e.min(t)));
            }
        }
        if let Some(t) = earliest {
            self.wake(host, t);
        }
    }

    /// The NIC uplink: control first, then the next eligible flow round
    /// robin; then plan the next wake-up.
    pub(crate) fn try_send(&mut self, host: u32) {
        let node = self.hosts[host as usize].node;
        let free = self.net.nodes[node as usize].ports[0].busy_until;
        if self.now < free {
            self.wake(host, free);
            return;
        }
        if let Some(p) = self.hosts[host as usize].ctrl.pop_front() {
            self.transmit(node, 0, p, 0);
            self.plan_next(host);
            return;
        }
        let n = self.hosts[host as usize].active.len();
        for i in 0..n {
            let idx = (self.hosts[host as usize].rr + i) % n;
            let flow = self.hosts[host as usize].active[idx];
            let Some(sub_packet) = self.window_allows(flow) else {
                continue;
            };
            if self.flows[flow as usize].next_send_ps > self.now {
                continue;
            }
            self.hosts[host as usize].rr = (idx + 1) % n;
            self.send_data(host, flow, sub_packet);
            self.plan_next(host);
            return;
        }
        self.plan_next(host);
    }

    fn send_data(&mut self, host: u32, flow: u32, sub_packet: bool) {
        let (seq, len, last, dst) = {
            let f = &self.flows[flow as usize];
            // A message ends where the application's bytes end (the flow,
            // or an on/off burst).
            let len = (f.app_limit - f.snd_nxt).min(self.cfg.payload as u64) as u32;
            (f.snd_nxt, len, f.snd_nxt + len as u64 == f.app_limit, f.dst_host)
        };
        let end = if last { MessageEnd::Last } else { MessageEnd::More };
        let d = self.engine(
            host,
            flow,
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
        let mut p = Packet::new(
            PktKind::Data,
            flow,
            self.hosts[host as usize].node,
            self.hosts[dst as usize].node,
        );
        p.seq = seq;
        p.len = len;
        p.ecn = ecn;
        p.ts_ps = self.now;
        p.wire = self.cfg.header + len;
        if self.data_telemetry() {
            self.attach_telemetry(&mut p);
        }
        let wire = p.wire;
        let node = self.hosts[host as usize].node;
        let id = self.pkts.insert(p);
        let f = &mut self.flows[flow as usize];
        if seq < f.max_sent {
            f.retransmits += 1;
            self.metrics.counters.retransmits += 1;
        }
        f.snd_nxt = seq + len as u64;
        f.max_sent = f.max_sent.max(f.snd_nxt);
        if sub_packet {
            f.credits = f.credits.saturating_sub(1);
            self.metrics.counters.timer_releases += 1;
        }
        f.pace_wire = wire;
        f.pace_gap_ps = ser_ps(wire, f.rate.as_bps());
        f.next_send_ps = f.next_send_ps.max(self.now) + f.pace_gap_ps;
        self.metrics.counters.data_packets += 1;
        if let Some(d) = d {
            self.apply(flow, &d);
        }
        self.arm_rto(flow);
        self.transmit(node, 0, id, 0);
    }

    /// Sets the go-back-N deadline to now + RTO. At most one Rto event per
    /// flow is queued; when it fires early (the deadline moved) it requeues
    /// itself at the deadline.
    fn arm_rto(&mut self, flow: u32) {
        let f = &mut self.flows[flow as usize];
        f.rto_deadline = self.now + self.cfg.rto_ps;
        if !f.rto_pending {
            f.rto_pending = true;
            self.q.push(f.rto_deadline, Ev::Rto { flow });
        }
    }

    pub(crate) fn rto(&mut self, flow: u32) {
        let f = &mut self.flows[flow as usize];
        f.rto_pending = false;
        if f.finish_ps.is_some() || f.rto_deadline == u64::MAX || f.snd_una >= f.snd_nxt {
            return;
        }
        if self.now < f.rto_deadline {
            f.rto_pending = true;
            self.q.push(f.rto_deadline, Ev::Rto { flow });
            return;
        }
        self.metrics.counters.timeouts += 1;
        let (src, una) = (f.src_host, f.snd_una);
        f.snd_nxt = una;
        if let Some(d) = self.engine(
            src,
            flow,
            EventKind::Loss {
                first_lost: Seq(una as u32),
            },
        ) {
            self.apply(flow, &d);
        }
        self.arm_rto(flow);
        self.try_send(src);
    }

    pub(crate) fn cc_timer(&mut self, flow: u32, gen: u32) {
        let f = &self.flows[flow as usize];
        if f.cc_gen != gen || f.finish_ps.is_some() {
            return;
        }
        let src = f.src_host;
        if let Some(d) = self.engine(src, flow, EventKind::Timer) {
            self.apply(flow, &d);
        }
        self.try_send(src);
    }

    /// A packet reached host `host`.
    pub(crate) fn receive(&mut self, host: u32, pkt: u32) {
        let p = self.pkts.get(pkt).clone();
        self.dispatch(host, pkt, &p);
        self.pkts.remove(pkt);
    }

    /// Hands packet `pkt` (a copy of it in `p`; its telemetry stays in the
    /// slab until the caller removes it) to the host's Rx pipeline.
    fn dispatch(&mut self, host: u32, pkt: u32, p: &Packet) {
        if self.flows[p.flow as usize].finish_ps.is_some() && p.kind != PktKind::Data {
            return;
        }
        match p.kind {
            PktKind::Data => self.on_data(host, pkt, p),
            PktKind::Ack => self.on_ack(host, p),
            PktKind::Nack => self.on_nack(host, p),
            PktKind::Probe => self.on_probe(host, p),
            PktKind::ProbeReply => {
                // A lossy path (nic.probe_loss) drops some replies.
                let lost = self.cfg.probe_loss > 0.0
                    && (rand_chacha::rand_core::Rng::next_u64(&mut self.loss_rng) as f64)
                        < self.cfg.probe_loss * u64::MAX as f64;
                if lost {
                    self.metrics.counters.probes_lost += 1;
                    return;
                }
                self.metrics.counters.probe_replies += 1;
                if let Some((hop_index, hop)) = p.hop {
                    self.sender_event(
                        host,
                        p.flow,
                        EventKind::ProbeResponse {
                            probe: p.probe,
                            hop_index,
                            hop,
                        },
                    );
                }
            }
            PktKind::Feedback => {
                let mut sealed = [0u8; 4 + auth::SEQ_LEN + TAG_LEN];
                sealed[..4].copy_from_slice(&p.window_bits.to_be_bytes());
                sealed[4..4 + auth::SEQ_LEN].copy_from_slice(&(p.seq as u32).to_be_bytes());
                sealed[4 + auth::SEQ_LEN..].copy_from_slice(&p.tag);
                if self.cfg.integrity {
                    let guard = &mut self.flows[p.flow as usize].feedback_guard;
                    match self.hosts[host as usize]
                        .verifier
                        .open_sequenced(FlowId(p.flow), guard, &sealed)
                    {
                        Ok(_) => {}
                        Err(WireError::Replayed) => {
                            self.metrics.counters.replayed_feedback += 1;
                            return;
                        }
                        Err(_) => {
                            self.metrics.counters.bad_tags += 1;
                            return;
                        }
                    }
                }
                self.sender_event(
                    host,
                    p.flow,
                    EventKind::Feedback {
                        window: Window::from_bits(p.window_bits),
                    },
                );
            }
            PktKind::Cnp => self.sender_event(host, p.flow, EventKind::Cnp),
            PktKind::RttReq => {
                let (to, ts, probe) = (self.flows[p.flow as usize].src_host, p.ts_ps, p.probe);
                self.send_ctrl(host, to, p.flow, PktKind::RttResp, |_, q| {
                    q.ts_ps = ts;
                    q.probe = probe;
                });
            }
            PktKind::RttResp => {
                let rtt_ns = Some(((self.now - p.ts_ps) / PS_PER_NS).min(u32::MAX as u64) as u32);
                self.sender_event(host, p.flow, EventKind::RttResponse { probe: p.probe, rtt_ns })
            }
        }
    }

    fn sender_event(&mut self, host: u32, flow: u32, kind: EventKind<'_>) {
        if let Some(d) = self.engine(host, flow, kind) {
            self.apply(flow, &d);
        }
        self.try_send(host);
    }

    /// The receiver's Rx pipeline.
    fn on_data(&mut self, host: u32, pkt: u32, p: &Packet) {
        let flow = p.flow;
        let src = self.flows[flow as usize].src_host;
        let ce = p.ecn == EcnBits::Ce;
        if ce && self.cfg.algo == Algo::LdcpRate {
            self.send_ctrl(host, src, flow, PktKind::Cnp, |_, _| {});
        }
        if self.cfg.algo == Algo::Hpcc && self.cfg.mode == HpccMode::RxHpcc && !self.pkts.tel(p).is_empty() {
            if let Ok(hops) = self.cfg.tel.samples(self.pkts.tel(p)) {
                if let Some(d) = self.engine(host, flow, EventKind::RxTelemetry { telemetry: &hops }) {
                    if let Request::Feedback { window } = d.request {
                        let (key, bits) = (self.key, window.to_bits());
                        let f = &mut self.flows[flow as usize];
                        let seq = f.feedback_seq;
                        f.feedback_seq = seq.wrapping_add(1);
                        self.send_ctrl(host, src, flow, PktKind::Feedback, |_, q| {
                            q.window_bits = bits;
                            q.seq = seq as u64;
                            let mut sealed = [0u8; 4 + auth::SEQ_LEN + TAG_LEN];
                            if auth::seal_sequenced(&key, FlowId(flow), seq, &bits.to_be_bytes(), &mut sealed).is_ok() {
                                q.tag.copy_from_slice(&sealed[4 + auth::SEQ_LEN..]);
                            }
                        });
                    }
                }
            }
        }
        let f = &mut self.flows[flow as usize];
        if ce {
            f.ce_pending = true;
        }
        let in_order = p.seq == f.rcv_nxt;
        if in_order {
            f.rcv_nxt += p.len as u64;
            f.delivered += p.len as u64;
            f.unacked += 1;
            f.nack_for = None;
        } else if p.seq > f.rcv_nxt {
            // A gap: go-back-N asks once per gap, the packet is discarded.
            if f.nack_for != Some(f.rcv_nxt) {
                f.nack_for = Some(f.rcv_nxt);
                let cum = f.rcv_nxt;
                self.send_ctrl(host, src, flow, PktKind::Nack, |_, q| q.seq = cum);
            }
            return;
        }
        let f = &self.flows[flow as usize];
        let done = f.rcv_nxt >= f.size;
        if !in_order || done || cc_core::ldcp::ack_now(f.ce_pending, f.unacked, self.cfg.ack_every) {
            self.send_ack(host, flow, pkt, p);
        }
    }

    /// Acknowledges up to `data` (packet `pkt`); an echo takes over its
    /// telemetry buffer.
    fn send_ack(&mut self, host: u32, flow: u32, pkt: u32, data: &Packet) {
        let echo = self.cfg.algo == Algo::Hpcc && self.cfg.mode == HpccMode::Sender && data.tel != NO_TEL;
        let f = &mut self.flows[flow as usize];
        let (cum, ece, n, src) = (f.rcv_nxt, f.ce_pending, f.unacked, f.src_host);
        f.unacked = 0;
        f.ce_pending = false;
        let (key, integrity) = (self.key, self.cfg.integrity);
        let ts = data.ts_ps;
        self.send_ctrl(host, src, flow, PktKind::Ack, |w, q| {
            q.ts_ps = ts;
            q.seq = cum;
            q.ece = ece;
            q.acked_pkts = n;
            if echo {
                q.tel = w.pkts.take_tel(pkt);
                let t = w.pkts.tel(q);
                q.wire += t.len() as u32;
                if integrity {
                    let mut msg = [0u8; SEAL_CAP];
                    msg[..t.len()].copy_from_slice(t);
                    msg[t.len()..t.len() + 8].copy_from_slice(&cum.to_be_bytes());
                    q.tag = auth::tag(&key, FlowId(flow), &msg[..t.len() + 8]);
                }
            }
        });
    }

    /// The sender's Rx pipeline for an ACK: check the tag, parse the
    /// echoed telemetry, hand the ACK to the engine.
    fn on_ack(&mut self, host: u32, p: &Packet) {
        let flow = p.flow;
        let mut hops = cc_core::wire::Hops::new();
        if !self.pkts.tel(p).is_empty() {
            if self.cfg.integrity {
                let t = self.pkts.tel(p);
                let mut sealed = [0u8; SEAL_CAP];
                sealed[..t.len()].copy_from_slice(t);
                sealed[t.len()..t.len() + 8].copy_from_slice(&p.seq.to_be_bytes());
                sealed[t.len() + 8..t.len() + 8 + TAG_LEN].copy_from_slice(&p.tag);
                if self.hosts[host as usize]
                    .verifier
                    .open(FlowId(flow), &sealed[..t.len() + 8 + TAG_LEN])
                    .is_err()
                {
                    self.metrics.counters.bad_tags += 1;
                    return;
                }
            }
            match self.cfg.tel.samples(self.pkts.tel(p)) {
                Ok(h) => hops = h,
                Err(_) => self.metrics.counters.bad_telemetry += 1,
            }
        }
        let f = &mut self.flows[flow as usize];
        if p.seq > f.snd_una {
            f.snd_una = p.seq.min(f.size);
            f.snd_nxt = f.snd_nxt.max(f.snd_una);
        }
        let (una, nxt) = (f.snd_una, f.snd_nxt);
        let ece = if p.ece { EcnEcho::Marked } else { EcnEcho::NotMarked };
        let rtt_ns = Some(((self.now - p.ts_ps) / PS_PER_NS).min(u32::MAX as u64) as u32);
        let ack = Ack {
            cum_ack: Seq(una as u32),
            snd_nxt: Seq(nxt as u32),
            ece,
            telemetry: &hops,
            rtt_ns,
        };
        if let Some(d) = self.engine(host, flow, EventKind::Ack(ack)) {
            self.apply(flow, &d);
        }
        let f = &self.flows[flow as usize];
        if f.snd_una >= f.size {
            self.finish(flow);
        } else if f.snd_una < f.snd_nxt {
            self.arm_rto(flow);
        } else if f.snd_una >= f.app_limit && !f.app_waiting {
            // An on/off burst is acknowledged: the next after the idle time.
            if let Some((_, idle_ps)) = self.cfg.on_off {
                self.flows[flow as usize].app_waiting = true;
                self.q.push(self.now + idle_ps, Ev::AppData { flow });
            }
        }
        self.try_send(host);
    }

    /// An on/off flow's next burst: the application hands it over and the
    /// scheduler may send again.
    pub(crate) fn app_data(&mut self, flow: u32) {
        let Some((burst, _)) = self.cfg.on_off else { return };
        let f = &mut self.flows[flow as usize];
        f.app_waiting = false;
        f.app_limit = (f.app_limit + burst).min(f.size);
        let src = f.src_host;
        self.try_send(src);
    }

    fn on_nack(&mut self, host: u32, p: &Packet) {
        let f = &mut self.flows[p.flow as usize];
        let from = p.seq.max(f.snd_una);
        f.snd_una = from;
        f.snd_nxt = from;
        self.sender_event(
            host,
            p.flow,
            EventKind::Loss {
                first_lost: Seq(from as u32),
            },
        );
    }

    /// The probe responder (HPCC++ §7.1): the receiver's engine picks the
    /// hop with the highest inflight; only that hop goes back.
    fn on_probe(&mut self, host: u32, p: &Packet) {
        let flow = p.flow;
        let Ok(hops) = self.cfg.tel.samples(self.pkts.tel(p)) else {
            self.metrics.counters.bad_telemetry += 1;
            return;
        };
        let Some(d) = self.engine(host, flow, EventKind::ProbeRequest { telemetry: &hops }) else {
            return;
        };
        if let Request::ProbeReply { hop_index } = d.request {
            let Some(hop) = hops.get(hop_index as usize).copied() else {
                return;
            };
            let (src, probe) = (self.flows[flow as usize].src_host, p.probe);
            self.send_ctrl(host, src, flow, PktKind::ProbeReply, |_, q| {
                q.hop = Some((hop_index, hop));
                q.probe = probe;
                q.wire += cc_core::codec::HOP_LEN as u32;
            });
        }
    }

    fn finish(&mut self, flow: u32) {
        let f = &mut self.flows[flow as usize];
        if f.finish_ps.is_some() {
            return;
        }
        f.finish_ps = Some(self.now);
        f.cc_gen = f.cc_gen.wrapping_add(1);
        f.rto_deadline = u64::MAX;
        let (src, dst) = (f.src_host, f.dst_host);
        self.unfinished -= 1;
        self.engine(src, flow, EventKind::End);
        if self.receiver_role() {
            self.engine(dst, flow, EventKind::End);
        }
        self.hosts[src as usize].active.retain(|&x| x != flow);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn world() -> World {
        let text = "name = \"p\"\nstop_ms = 1.0\n[topology]\nkind = \"incast\"\nsenders = 1\nlink_gbps = 100\nlink_delay_ns = 1000\n[cc]\nalgorithm = \"hpcc\"\n[workload]\nkind = \"incast\"\nbytes = 100000\n";
        let s = crate::scenario::parse(text, "p.toml").unwrap();
        World::new(&s, std::path::Path::new("."), "p.toml").unwrap()
    }

    fn decision(gbps: u64) -> Decision {
        Decision {
            window: Window::from_bytes(100_000),
            // gbps Gb/s: gbps · 1000 bytes every 8 µs.
            pacing: Pacing {
                bytes: Window::from_bytes(gbps as u32 * 1000),
                per: BaseRtt::from_nanos(8_000).unwrap(),
            },
            ecn: Ecn::Ect,
            timer: TimerRequest::Keep,
            request: Request::None,
        }
    }

    #[test]
    fn a_new_rate_retimes_the_gap_after_the_last_packet() {
        let mut w = world();
        w.now = 1_000_000;
        w.apply(0, &decision(10));
        // A 1000-byte packet sent at 1 µs at 10 Gb/s: next one at 1.8 µs.
        {
            let f = &mut w.flows[0];
            f.pace_wire = 1000;
            f.pace_gap_ps = ser_ps(1000, f.rate.as_bps());
            f.next_send_ps = w.now + f.pace_gap_ps;
        }
        assert_eq!(w.flows[0].next_send_ps, 1_800_000);
        // The rate doubles 100 ns later: the gap is now 400 ns from the send.
        w.now = 1_100_000;
        w.apply(0, &decision(20));
        assert_eq!(w.flows[0].next_send_ps, 1_400_000);
        // It falls to 1 Gb/s: 8 µs after the send.
        w.apply(0, &decision(1));
        assert_eq!(w.flows[0].next_send_ps, 9_000_000);
        // Unchanged rate, unchanged plan.
        w.apply(0, &decision(1));
        assert_eq!(w.flows[0].next_send_ps, 9_000_000);
    }
}
