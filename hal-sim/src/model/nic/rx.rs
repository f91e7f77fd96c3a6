//! The NIC's Rx pipelines.
//!
//! As a receiver: data is delivered in order (a gap asks for go-back-N
//! once, with a NACK), acknowledged per packet or every n (a CE mark at
//! once, LDCP §2.2), with the data's telemetry echoed and sealed when the
//! profile asks; a CE mark may bring a CNP; Rx-HPCC hands the telemetry to
//! the receiver engine, whose decision may send window feedback; probes
//! go to the responder engine, RTT requests are answered at once.
//!
//! As a sender: every notification (ACK, NACK, probe reply, feedback,
//! CNP, RTT response) is checked (integrity tag, replay) and parsed, and
//! goes to the engine as its event; the decision is applied and the
//! scheduler runs.

use cc_core::prelude::*;
use cc_core::wire::auth::{self, TAG_LEN};
use cc_core::wire::{Hops, WireError};

use super::Nic;
use crate::model::nic::flows::Receiver;
use crate::model::packet::{nic_clock, Aux, EcnBits, Packet, PktKind, NO_TEL, TTL};
use crate::run::ctx::Ctx;
use crate::run::event::{Ev, Ps};

/// The time `bytes` take to drain at `gbps` (≥ 1), rounded up: bytes·8/gbps
/// ns.
fn rx_drain_time(bytes: u64, gbps: u32) -> Ps {
    Ps::from_ps((bytes * 8_000).div_ceil(gbps.max(1) as u64))
}

/// The bytes that drain at `gbps` in `t`, rounded down: what an Rx buffer
/// that empties `t` from now holds (a lone packet's own drain time, rounded
/// up, gives back its length: gbps < 8000).
fn rx_bytes(t: Ps, gbps: u32) -> u64 {
    t.as_ps().saturating_mul(gbps as u64) / 8_000
}

impl Nic {
    /// A packet reached this host. Data is stamped with the NIC's clock
    /// (t2) and, where the host drains its Rx buffer at a limited rate,
    /// waits there first.
    pub fn receive(&mut self, cx: &mut Ctx, pkt: u32) {
        if cx.pkts.get(pkt).kind == PktKind::Data {
            cx.pkts.get_mut(pkt).t2 = nic_clock(self.node, cx.now);
            if let Some((gbps, size)) = cx.cfg.rx_buffer {
                return self.rx_enqueue(cx, pkt, gbps, size);
            }
        }
        self.deliver(cx, pkt);
    }

    /// Packet `pkt` to its pipeline, now; the slab gives it up after.
    pub fn deliver(&mut self, cx: &mut Ctx, pkt: u32) {
        let p = cx.pkts.get(pkt).clone();
        self.dispatch(cx, pkt, &p);
        cx.pkts.remove(pkt);
    }

    /// The Rx buffer: a FIFO drained to the host at `gbps`, holding `size`
    /// bytes of payload. The data joins its tail and is delivered when its
    /// last byte has drained; if it does not fit, the NIC drops it (the
    /// receiver's gap then asks for it again).
    #[inline(never)]
    fn rx_enqueue(&mut self, cx: &mut Ctx, pkt: u32, gbps: u32, size: u64) {
        let len = cx.pkts.get(pkt).len;
        let done = self.rx_free_at.max(cx.now) + rx_drain_time(len as u64, gbps);
        let held = rx_bytes(done.saturating_sub(cx.now), gbps);
        if held > size {
            cx.metrics.counters.drops += 1;
            cx.metrics.counters.rx_buffer_drops += 1;
            cx.pkts.remove(pkt);
            return;
        }
        self.rx_free_at = done;
        let c = &mut cx.metrics.counters;
        c.rx_buffer_peak_bytes = c.rx_buffer_peak_bytes.max(held);
        cx.q.push(done, Ev::RxDeliver { host: self.host, pkt });
    }

    /// The Rx buffer's level now, 0 ..= 31 (in 32 steps of its size;
    /// Falcon's 5-bit level), and counted for the summary; 0 where the
    /// host takes data as it arrives.
    fn rx_level(&self, cx: &mut Ctx) -> u8 {
        let Some((gbps, size)) = cx.cfg.rx_buffer else { return 0 };
        let held = rx_bytes(self.rx_free_at.saturating_sub(cx.now), gbps);
        let level = (held.saturating_mul(32) / size.max(1)).min(31) as u8;
        cx.metrics.counters.rx_level_acks += 1;
        cx.metrics.counters.rx_level_sum += level as u64;
        level
    }

    /// Hands packet `pkt` (a copy of it in `p`; its telemetry stays in the
    /// slab until the caller removes it) to its pipeline. Once a flow has
    /// finished, only late copies of its data are still answered.
    fn dispatch(&mut self, cx: &mut Ctx, pkt: u32, p: &Packet) {
        if cx.flows[p.flow as usize].finish_ps.is_some() && p.kind != PktKind::Data {
            return;
        }
        match p.kind {
            PktKind::Data => self.on_data(cx, pkt, p),
            PktKind::Ack => self.on_ack(cx, p),
            _ => self.on_control(cx, p),
        }
        // The CNP an ACK or NACK carries, after the answer itself (the
        // reference simulator's order).
        if p.cnp() {
            self.sender_event(cx, p.flow, EventKind::Cnp);
        }
    }

    /// Every packet but data and ACKs: NACKs, probes and their replies,
    /// window feedback, CNPs, RTT requests and responses. Out of line:
    /// a few per flow and RTT at most, so the per-packet path through the
    /// loop stays short (docs/simulator.md, "Speed", sixth round).
    #[inline(never)]
    fn on_control(&mut self, cx: &mut Ctx, p: &Packet) {
        match p.kind {
            // `dispatch` hands these to their own pipelines.
            PktKind::Data | PktKind::Ack => {}
            PktKind::Nack => self.on_nack(cx, p),
            PktKind::Probe => self.on_probe(cx, p),
            PktKind::ProbeReply => {
                // A lossy path (nic.probe_loss) drops some replies.
                let lost = cx.cfg.probe_loss > 0.0
                    && (rand_chacha::rand_core::Rng::next_u64(&mut cx.rng.loss) as f64)
                        < cx.cfg.probe_loss * u64::MAX as f64;
                if lost {
                    cx.metrics.counters.probes_lost += 1;
                    return;
                }
                cx.metrics.counters.probe_replies += 1;
                if let Some((hop_index, hop)) = cx.pkts.hop(p) {
                    let kind = EventKind::ProbeResponse {
                        probe: p.probe,
                        hop_index,
                        hop,
                    };
                    self.sender_event(cx, p.flow, kind);
                }
            }
            PktKind::Feedback => self.on_feedback(cx, p),
            PktKind::Cnp => self.sender_event(cx, p.flow, EventKind::Cnp),
            PktKind::RttReq => {
                let (to, ts, probe) = (cx.flows[p.flow as usize].src_host, p.ts_ps, p.probe);
                self.send_ctrl(cx, to, p.flow, PktKind::RttResp, |_, q| {
                    q.ts_ps = ts;
                    q.probe = probe;
                });
            }
            PktKind::RttResp => {
                let rtt_ns = Some((cx.now - p.ts_ps).as_ns().min(u32::MAX as u64) as u32);
                self.sender_event(cx, p.flow, EventKind::RttResponse { probe: p.probe, rtt_ns })
            }
        }
    }

    /// A sender-side event: the engine, its decision, the scheduler.
    fn sender_event(&mut self, cx: &mut Ctx, flow: u32, kind: EventKind<'_>) {
        let at = self.sender(cx, flow).and_then(|f| f.engine);
        self.sender_to_engine(cx, flow, at, kind);
        self.try_send(cx);
    }

    /// The receiver's Rx pipeline for a data packet.
    fn on_data(&mut self, cx: &mut Ctx, pkt: u32, p: &Packet) {
        let flow = p.flow;
        let rec = &cx.flows[flow as usize];
        // A finished flow's receiving side is closed; a late copy of its
        // data is answered as the open side would have answered it.
        let mut r = match self.receivers.get(rec.rx_at, flow) {
            Some(r) => *r,
            None if rec.finish_ps.is_some() => Receiver::finished(rec.size),
            None => return,
        };
        if cx.cfg.sack_bytes.is_some() {
            return self.sack_data(cx, pkt, p, r);
        }
        let (src, size) = (rec.src_host, rec.size);
        let ce = p.ecn() == EcnBits::Ce;
        // A CNP for every CE-marked packet rides on its answer.
        let cnp_flag = ce && self.profile.cnp_on_ce == Some(Ps::ZERO);
        if let (true, Some(gap)) = (ce && !cnp_flag, self.profile.cnp_on_ce) {
            let now = cc_core::units::Instant::from_nanos(cx.now.as_ns());
            if r.np.on_ce(now, gap.as_ns().min(u32::MAX as u64) as u32) {
                self.send_ctrl(cx, src, flow, PktKind::Cnp, |_, _| {});
            }
        }
        if self.profile.rx_telemetry && !cx.pkts.tel(p).is_empty() {
            self.rx_telemetry(cx, flow, src, p, &mut r);
        }
        if ce {
            r.ce_pending = true;
        }
        let in_order = p.seq as u64 == r.rcv_nxt;
        if in_order {
            r.rcv_nxt += p.len as u64;
            r.delivered += p.len as u64;
            r.unacked += 1;
            r.nack_for = None;
        } else if p.seq as u64 > r.rcv_nxt {
            // A gap: go-back-N asks once per gap, the packet is discarded.
            let ask = r.nack_for != Some(r.rcv_nxt);
            r.nack_for = Some(r.rcv_nxt);
            self.store(cx, flow, r);
            if ask {
                let cum = r.rcv_nxt;
                self.send_ctrl(cx, src, flow, PktKind::Nack, |_, q| {
                    q.seq = cum as u32;
                    q.set_cnp(cnp_flag);
                });
            }
            return;
        }
        let done = r.rcv_nxt >= size;
        if !in_order || done || cc_core::ldcp::ack_now(r.ce_pending, r.unacked, cx.cfg.ack_every) {
            // It keeps the state before the ACK goes.
            self.send_ack(cx, flow, pkt, p, &mut r, cnp_flag, None);
        } else {
            self.store(cx, flow, r);
        }
    }

    /// Keeps a receiver's state if its side is still open.
    pub(super) fn store(&mut self, cx: &Ctx, flow: u32, r: Receiver) {
        if let Some(x) = self.receiver_mut(cx, flow) {
            *x = r;
        }
    }

    /// Rx-HPCC: the data's telemetry to the receiver engine, and the
    /// window feedback its decision asks for, sealed.
    fn rx_telemetry(&mut self, cx: &mut Ctx, flow: u32, src: u32, p: &Packet, r: &mut Receiver) {
        let Ok(hops) = cx.cfg.tel.samples(cx.pkts.tel(p), &cx.cfg.port_speeds) else {
            return;
        };
        let Some(d) = self.engine(cx, flow, r.engine, EventKind::RxTelemetry { telemetry: &hops }) else {
            return;
        };
        if let Request::Feedback { window } = d.request {
            // On the wire: the window's raw bits, big-endian, sealed with
            // the sequence number.
            let (key, bits) = (cx.key, window.to_bits());
            let seq = r.feedback_seq;
            r.feedback_seq = seq.wrapping_add(1);
            self.store(cx, flow, *r);
            self.send_ctrl(cx, src, flow, PktKind::Feedback, |cx, q| {
                q.seq = seq;
                let mut sealed = [0u8; 4 + auth::SEQ_LEN + TAG_LEN];
                let mut tag = [0; TAG_LEN];
                if auth::seal_sequenced(&key, FlowId(flow), seq, &bits.to_be_bytes(), &mut sealed).is_ok() {
                    tag.copy_from_slice(&sealed[4 + auth::SEQ_LEN..]);
                }
                q.aux = cx.pkts.put_aux(Aux::Feedback { window, tag });
            });
        }
    }

    /// Acknowledges up to the receiver's `rcv_nxt` (data packet `pkt`),
    /// with the SACK transport's fields if given; an echo takes over the
    /// data's telemetry buffer.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn send_ack(
        &mut self,
        cx: &mut Ctx,
        flow: u32,
        pkt: u32,
        data: &Packet,
        r: &mut Receiver,
        cnp: bool,
        sack: Option<Aux>,
    ) {
        let echo = self.profile.echo_telemetry && data.tel != NO_TEL;
        let (cum, ece, src) = (r.rcv_nxt, r.ce_pending, cx.flows[flow as usize].src_host);
        r.unacked = 0;
        r.ce_pending = false;
        self.store(cx, flow, *r);
        let (key, integrity) = (cx.key, cx.cfg.integrity);
        let (ts, t2, fwd_hops) = (data.ts_ps, data.t2, TTL.saturating_sub(data.ttl));
        let rx_level = self.rx_level(cx);
        self.send_ctrl(cx, src, flow, PktKind::Ack, |cx, q| {
            q.ts_ps = ts;
            q.t2 = t2;
            q.fwd_hops = fwd_hops;
            q.rx_level = rx_level;
            q.seq = cum as u32;
            q.set_ece(ece);
            q.set_cnp(cnp);
            if let Some(a) = sack {
                if let (Aux::Sack { ev, .. }, Some(_)) = (a, cx.cfg.spray) {
                    // Back on the data's entropy value, as uet-htsim's ACKs.
                    q.hash = crate::model::net::ev_hash(q.hash, ev);
                }
                q.aux = cx.pkts.put_aux(a);
            }
            if echo {
                q.tel = cx.pkts.take_tel(pkt);
                let t = cx.pkts.tel(q);
                q.wire += t.len() as u16;
                if integrity {
                    // The tag covers the echoed telemetry and the cumulative
                    // ACK; it lies after the buffer.
                    let tag = auth::tag_parts(&key, FlowId(flow), &[t, &cum.to_be_bytes()]);
                    cx.pkts.set_tag(q.tel, tag);
                }
            }
        });
    }

    /// The sender's Rx pipeline for an ACK: check the tag, parse the
    /// echoed telemetry, hand the ACK to the engine.
    fn on_ack(&mut self, cx: &mut Ctx, p: &Packet) {
        let t = cx.pkts.tel(p);
        if t.is_empty() {
            return self.ack_to_engine(cx, p, &[], None);
        }
        if cx.cfg.integrity
            && self
                .verifier
                .open_parts(FlowId(p.flow), &[t, &(p.seq as u64).to_be_bytes()], &cx.pkts.tag(p.tel))
                .is_err()
        {
            cx.metrics.counters.bad_tags += 1;
            return;
        }
        // The samples are read into this buffer and used where they are
        // (by reference: 300-odd bytes, not worth a copy).
        let mut hops = Hops::new();
        let pint = match cx.cfg.tel.pint_sample(t) {
            Ok(s) => s,
            Err(_) => {
                cx.metrics.counters.bad_telemetry += 1;
                None
            }
        };
        // The reference's PINT_PROB: a code reaches the engine with this
        // probability (a drawn ACK still acknowledges).
        let pint = pint.filter(|_| {
            let r = cx.cfg.tel.pint_sampling;
            r >= 1.0 || crate::setup::workload::unit(&mut cx.rng.pint) < r
        });
        match cx.cfg.tel.samples_into(t, &cx.cfg.port_speeds, &mut hops) {
            Ok(()) => self.ack_to_engine(cx, p, &hops, pint),
            Err(_) => {
                cx.metrics.counters.bad_telemetry += 1;
                self.ack_to_engine(cx, p, &[], pint)
            }
        }
    }

    /// The ACK, its telemetry samples read, to the engine; the flow
    /// finishes, re-arms its timer or waits for its application.
    fn ack_to_engine(&mut self, cx: &mut Ctx, p: &Packet, hops: &[HopSample], pint: Option<PintSample>) {
        let flow = p.flow;
        let size = cx.flows[flow as usize].size;
        let ns = |t: Ps| t.as_ns().min(u32::MAX as u64) as u32;
        // The SACK transport hands the engine the bytes received and in
        // flight (module `sack`); go-back-N its cumulative ACK and snd_nxt.
        let sack = match cx.cfg.sack_bytes {
            Some(_) => match self.sack_ack(cx, p) {
                Some(v) => Some(v),
                None => return,
            },
            None => None,
        };
        let Some(f) = self.sender_mut(cx, flow) else { return };
        let (una, nxt, rtt_ns) = match sack {
            Some(v) => (v.recvd, v.recvd.wrapping_add(v.in_flight), v.rtt.map(ns)),
            None => {
                if p.seq as u64 > f.snd_una {
                    f.snd_una = (p.seq as u64).min(size);
                    f.snd_nxt = f.snd_nxt.max(f.snd_una);
                }
                (f.snd_una, f.snd_nxt, Some(ns(cx.now - p.ts_ps)))
            }
        };
        let at = f.engine;
        let ece = if p.ece() { EcnEcho::Marked } else { EcnEcho::NotMarked };
        let ack = Ack {
            ece,
            telemetry: hops,
            rtt_ns,
            pint,
            nic: Some(NicSample {
                t1: nic_clock(self.node, p.ts_ps),
                t2: p.t2,
                t3: p.t3,
                t4: nic_clock(self.node, cx.now),
                forward_hops: p.fwd_hops,
                rx_buffer_level: p.rx_level,
            }),
            ev: sack.and_then(|v| v.ev),
            ..Ack::new(Seq(una as u32), Seq(nxt as u32))
        };
        if !cx.cfg.ack_cases.is_empty() && (flow as usize) < cx.metrics.traces.len() {
            self.count_case(cx, flow, at, &ack);
        }
        self.sender_to_engine(cx, flow, at, EventKind::Ack(ack));
        if let (Some(v), true) = (sack, cx.cfg.sleek) {
            self.sleek_after_ack(cx, flow, &v);
        }
        let Some(f) = self.sender(cx, flow) else { return };
        if f.snd_una >= size {
            self.finish(cx, flow);
        } else if f.snd_una < f.snd_nxt {
            self.arm_rto(cx, flow);
        } else if f.snd_una >= f.app_limit && !f.app_waiting {
            // An on/off burst is acknowledged: the next after the idle time.
            if let Some((_, idle_ps)) = cx.cfg.on_off {
                if let Some(f) = self.sender_mut(cx, flow) {
                    f.app_waiting = true;
                }
                cx.q.push(cx.now + idle_ps, Ev::AppData { flow });
            }
        }
        self.try_send(cx);
    }

    /// A traced flow's ACK: the case its algorithm sorts it into (NSCC's
    /// quadrant: ECN-Echo × delay against the target, as the flow stands
    /// before it) counted for the plots.
    #[cold]
    fn count_case(&self, cx: &mut Ctx, flow: u32, at: Option<cc_core::engine::FlowHandle>, ack: &Ack<'_>) {
        let cfg = self.engine.config();
        let Some(case) = at.and_then(|h| self.engine.get(h)).and_then(|c| c.ack_case(cfg, ack)) else {
            return;
        };
        let tr = cx.metrics.traces.get_mut(flow as usize);
        if let Some(n) = tr.and_then(|t| t.pending_cases.get_mut(case as usize)) {
            *n += 1;
        }
    }

    /// A NACK: go back to its sequence number (go-back-N), or send the
    /// trimmed packet again (SACK).
    fn on_nack(&mut self, cx: &mut Ctx, p: &Packet) {
        if cx.cfg.sack_bytes.is_some() {
            return self.sack_nack(cx, p);
        }
        let Some(f) = self.sender_mut(cx, p.flow) else { return };
        let from = (p.seq as u64).max(f.snd_una);
        f.snd_una = from;
        f.snd_nxt = from;
        let kind = EventKind::Loss {
            first_lost: Seq(from as u32),
            ev: None,
        };
        self.sender_event(cx, p.flow, kind);
    }

    /// Window feedback from the receiver (Rx-HPCC): its seal and sequence
    /// checked, then to the engine.
    fn on_feedback(&mut self, cx: &mut Ctx, p: &Packet) {
        let Some(Aux::Feedback { window, tag }) = cx.pkts.aux(p) else {
            return;
        };
        let mut sealed = [0u8; 4 + auth::SEQ_LEN + TAG_LEN];
        sealed[..4].copy_from_slice(&window.to_bits().to_be_bytes());
        sealed[4..4 + auth::SEQ_LEN].copy_from_slice(&p.seq.to_be_bytes());
        sealed[4 + auth::SEQ_LEN..].copy_from_slice(&tag);
        if cx.cfg.integrity {
            let at = cx.flows[p.flow as usize].tx_at;
            let Some(f) = self.senders.get_mut(at, p.flow) else {
                return;
            };
            match self
                .verifier
                .open_sequenced(FlowId(p.flow), &mut f.feedback_guard, &sealed)
            {
                Ok(_) => {}
                Err(WireError::Replayed) => {
                    cx.metrics.counters.replayed_feedback += 1;
                    return;
                }
                Err(_) => {
                    cx.metrics.counters.bad_tags += 1;
                    return;
                }
            }
        }
        let kind = EventKind::Feedback { window };
        self.sender_event(cx, p.flow, kind);
    }

    /// The probe responder (HPCC++ §7.1): the receiver's engine picks the
    /// hop with the highest inflight; only that hop goes back.
    fn on_probe(&mut self, cx: &mut Ctx, p: &Packet) {
        let flow = p.flow;
        let Ok(hops) = cx.cfg.tel.samples(cx.pkts.tel(p), &cx.cfg.port_speeds) else {
            cx.metrics.counters.bad_telemetry += 1;
            return;
        };
        let at = self.receiver(cx, flow).and_then(|r| r.engine);
        let Some(d) = self.engine(cx, flow, at, EventKind::ProbeRequest { telemetry: &hops }) else {
            return;
        };
        if let Request::ProbeReply { hop_index } = d.request {
            let Some(hop) = hops.get(hop_index as usize).copied() else {
                return;
            };
            let (src, probe) = (cx.flows[flow as usize].src_host, p.probe);
            self.send_ctrl(cx, src, flow, PktKind::ProbeReply, |cx, q| {
                q.aux = cx.pkts.put_aux(Aux::Hop(hop_index, hop));
                q.probe = probe;
                q.wire += cc_core::codec::HOP_LEN as u16;
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::model::packet::{Packet, PktKind};
    use crate::run::world::World;

    /// A finished flow's receiving side is closed, and a late copy of its
    /// data is still acknowledged (as go-back-N's copies in flight are),
    /// without opening it again.
    #[test]
    fn a_late_copy_of_a_finished_flows_data_is_acknowledged() {
        let text = "name = \"p\"\nstop_ms = 1.0\n[topology]\nkind = \"incast\"\nsenders = 1\nlink_gbps = 100\nlink_delay_ns = 1000\n[cc]\nalgorithm = \"hpcc\"\n[workload]\nkind = \"incast\"\nbytes = 100000\n";
        let s = crate::setup::scenario::parse(text, "p.toml").unwrap();
        let mut w = World::new(&s, std::path::Path::new("."), "p.toml").unwrap();
        w.run(|_| {});
        assert!(w.flows[0].finish_ps.is_some());
        let (src, dst) = (w.flows[0].src_host as usize, w.flows[0].dst_host as usize);
        assert!(w.nics[dst].receivers.is_empty() && w.nics[src].senders.is_empty());
        let acks = w.metrics.counters.ctrl_packets;
        let (mut cx, nics, _, _) = w.parts();
        let mut p = Packet::new(PktKind::Data, 0, cx.flows[0].hash, nics[src].node, nics[dst].node);
        p.len = 1000;
        p.wire = 1048;
        let id = cx.pkts.insert(p);
        nics[dst].receive(&mut cx, id);
        assert_eq!(cx.metrics.counters.ctrl_packets, acks + 1);
        assert!(nics[dst].receivers.is_empty());
    }
}
