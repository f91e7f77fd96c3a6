//! What a switch does with a packet: pick the egress port among equal-cost
//! ones (ECMP by the packet's flow hash), admit it to the port's queue
//! over the shared buffer or drop it, mark it (WRED/ECN, LDCP §2.1), and
//! when the port sends it, write the port's telemetry into it (HPCC++
//! §6.1: a snapshot at dequeue).
//!
//! ```text
//! Arrive ─▶ ECMP ─▶ admit: full buffer → drop; Not-ECT data at q ≥ K → drop (eq. 3)
//!                          ECT: mark CE with p = (q − K_min)/(K_max − K_min)·P_max
//!              ─▶ idle port: send now │ busy: queue, PortFree when it frees
//!   send: telemetry hop, tx counter, INT utilization ─▶ Arrive at the peer after
//!         serialization + propagation
//! ```

use std::collections::VecDeque;

use cc_core::units::Utilization;
use rand_chacha::rand_core::Rng;

pub mod egress;

pub use self::egress::{Buffers, ControlQueue, Egress, MarkAt, Marking, Pfc, PortUtil, Trim, Xoff};
use crate::model::net::Link;
use crate::model::packet::{EcnBits, PktKind};
use crate::model::telemetry::HopState;
use crate::run::ctx::Ctx;
use crate::run::event::{ser_ps, Ev, Ps, NO_PKT};

/// A PFC frame's wire size (a MAC control frame with its preamble and gap).
const PFC_FRAME_BYTES: u32 = 84;

/// One egress port: its link and what waits for it.
#[derive(Clone, Debug)]
pub struct EgressPort {
    /// The link it sends on.
    pub link: Link,
    /// Packets waiting.
    pub queue: VecDeque<u32>,
    /// Bytes waiting in `queue`.
    pub queued_bytes: u64,
    /// Control packets waiting ahead of `queue` ([`ControlQueue`]).
    pub urgent: VecDeque<u32>,
    /// Bytes waiting in `urgent`.
    pub urgent_bytes: u64,
    /// Paused by the port downstream (PFC XOFF): data waits.
    pub paused: bool,
    /// Since when it is paused.
    pub paused_since: Ps,
    /// When the packet being serialized is done.
    pub busy_until: Ps,
    /// A PortFree event is queued.
    pub free_pending: bool,
    /// Bytes transmitted since the start (the telemetry txBytes counter).
    pub tx_bytes: u64,
    /// Utilization estimate for INT-MD (time-decayed tx rate / B), or
    /// HPCC-PINT's U.
    pub util: f64,
    /// Last time `util` was updated (INT-MD), or a packet left (PINT).
    pub util_t: Ps,
    /// Bytes of the last packet sent (PINT).
    pub last_wire: u32,
    /// Index into the metrics' monitored ports, if monitored.
    pub monitor: Option<usize>,
    /// The largest queue any enqueue saw, bytes, and the last time the
    /// port sent a data packet: kept here, beside what every packet's
    /// hop reads anyway, and copied into the port's series when the run
    /// stops (`World::run`), instead of a line of the metrics touched on
    /// every hop.
    pub max_queue: u64,
    /// See `max_queue`.
    pub last_data_ps: Ps,
    /// WRED/ECN thresholds of this port (K_min, K_max).
    pub ecn_k: (u64, u64),
    /// buf_max of this port ([`Buffers::port`], a quarter of it on a
    /// degraded link).
    pub port_buffer: u64,
    /// On a trimming port, the packet being serialized, which its queue
    /// still holds until the serialization ends (uet-htsim's
    /// `CompositeQueue`): it counts against the queue's room, and a data
    /// packet's ECN is decided as it finishes.
    pub on_wire: OnWire,
}

/// The packet a trimming port is serializing ([`EgressPort::on_wire`]).
#[derive(Clone, Copy, Debug)]
pub struct OnWire {
    /// The packet, or [`NO_PKT`].
    pub pkt: u32,
    /// Its bytes, in the data queue's count ...
    pub data: u64,
    /// ... or in the control queue's.
    pub urgent: u64,
    /// When it started out.
    pub start: Ps,
    /// Whether it is ECN-capable and unmarked as it starts out, as it
    /// still is at its end (a holding port marks only then): the end's
    /// test need not read the packet, whose line is cold by then.
    pub ect: bool,
}

impl OnWire {
    const NONE: OnWire = OnWire {
        pkt: NO_PKT,
        data: 0,
        urgent: 0,
        start: Ps::ZERO,
        ect: false,
    };
}

impl EgressPort {
    fn new(link: Link, egress: &Egress) -> Self {
        EgressPort {
            ecn_k: egress.marking.thresholds(link.bps),
            port_buffer: egress.buffers.port,
            link,
            queue: VecDeque::new(),
            queued_bytes: 0,
            urgent: VecDeque::new(),
            urgent_bytes: 0,
            paused: false,
            paused_since: Ps::ZERO,
            busy_until: Ps::ZERO,
            free_pending: false,
            tx_bytes: 0,
            util: 0.0,
            util_t: Ps::ZERO,
            last_wire: 0,
            monitor: None,
            max_queue: 0,
            last_data_ps: Ps::ZERO,
            on_wire: OnWire::NONE,
        }
    }
}

/// Time constant of the ports' tx utilization estimate (INT-MD).
const UTIL_TAU_PS: f64 = 10_000_000.0;

/// An output-queued switch.
#[derive(Clone, Debug)]
pub struct Switch {
    /// Its node id.
    pub node: u32,
    /// Egress ports, by port index.
    pub ports: Vec<EgressPort>,
    /// Bytes queued over all ports (the shared buffer's use).
    pub buffered: u64,
    /// The egress parts its ports apply.
    pub egress: Egress,
    /// PFC: bytes waiting in the switch by the port they came in on.
    pub ingress_bytes: Vec<u64>,
    /// PFC: the ingress ports that have paused their upstream.
    pub pausing: Vec<bool>,
    /// When the last packet came in by each port (kept by trimming
    /// switches only: `Switch::ends_first`, which orders an arrival and an
    /// end of one instant).
    pub last_arrival: Vec<Ps>,
    /// The forwarding latency: an arrival joins its egress queue this long
    /// after ([`Ev::Forward`]); zero: at once.
    pub latency: Ps,
    /// When the last packet reached its egress queue through the latency
    /// (kept by trimming switches with one: `Switch::forward`).
    pub last_forward: Ps,
}

impl Switch {
    /// A switch at `node` with a port on each of `links`; `degraded` ports
    /// keep a quarter of the port buffer.
    pub fn new(node: u32, links: &[Link], egress: Egress, degraded: &[u16]) -> Self {
        let mut ports: Vec<EgressPort> = links.iter().map(|&l| EgressPort::new(l, &egress)).collect();
        for &d in degraded {
            if let Some(p) = ports.get_mut(d as usize) {
                p.port_buffer /= 4;
            }
        }
        Switch {
            node,
            ports,
            buffered: 0,
            egress,
            ingress_bytes: vec![0; links.len()],
            pausing: vec![false; links.len()],
            last_arrival: vec![Ps::ZERO; links.len()],
            latency: Ps::ZERO,
            last_forward: Ps::ZERO,
        }
    }

    /// A packet arrived whole on port `ingress`.
    pub fn arrive(&mut self, cx: &mut Ctx, ingress: u16, pkt: u32) {
        let (src, dst, hash, tel) = {
            let p = cx.pkts.get(pkt);
            (p.src, p.dst, p.hash, p.tel)
        };
        // The hop's telemetry is written when the packet goes out.
        cx.pkts.prefetch_tel(tel);
        let Some(egress) = cx.net.next_port(self.node, src, dst, hash) else {
            cx.metrics.counters.drops += 1;
            cx.pkts.remove(pkt);
            return;
        };
        let p = cx.pkts.get_mut(pkt);
        p.ingress_ps = cx.now;
        p.ingress_port = ingress;
        p.ttl = p.ttl.saturating_sub(1);
        if self.latency > Ps::ZERO {
            let node = self.node;
            cx.q.push(cx.now + self.latency, Ev::Forward { node, egress, pkt });
            return;
        }
        if self.egress.trim.is_some() {
            // Only a trimming switch orders one instant's arrivals and ends.
            if self.end_due(cx, egress) {
                if let (Some(&prev), Some(port)) = (
                    self.last_arrival.get(ingress as usize),
                    self.ports.get(ingress as usize),
                ) {
                    // The link's delay is the same both ways.
                    let entered = cx.now.saturating_sub(port.link.delay_ps);
                    if self.ends_first(egress, entered, prev) {
                        self.port_free(cx, egress);
                    }
                }
            }
            if let Some(t) = self.last_arrival.get_mut(ingress as usize) {
                *t = cx.now;
            }
        }
        self.enqueue(cx, egress, pkt, ingress);
    }

    /// A packet that arrived `latency` ago reaches its egress queue,
    /// `egress`, the one its arrival chose. uet-htsim's switch delays its
    /// arrivals in one pipe (`CallbackPipe`), which, as a link, keeps one
    /// event for the packets in it: the order of an instant's ends and
    /// forwards at a trimming port follows from the pipe as from a link
    /// (`ends_first`).
    #[inline(never)]
    pub fn forward(&mut self, cx: &mut Ctx, egress: u16, pkt: u32) {
        let ingress = cx.pkts.get(pkt).ingress_port;
        if self.egress.trim.is_some() {
            let entered = cx.now.saturating_sub(self.latency);
            if self.end_due(cx, egress) && self.ends_first(egress, entered, self.last_forward) {
                self.port_free(cx, egress);
            }
            self.last_forward = cx.now;
        }
        self.enqueue(cx, egress, pkt, ingress);
    }

    /// Whether trimming port `egress`, whose packet on the wire ends at
    /// this instant, ends it before it takes the packet arriving now, as
    /// uet-htsim orders the two. Its events of one instant
    /// run in the order they were queued: a queue's end of service was
    /// queued as the service began; an arrival as the packet entered the
    /// link, or, while an earlier one was still on it, as that one was
    /// delivered (`Pipe` keeps one event for its packets in flight). So
    /// on a link carrying packets back to back (the previous arrival no
    /// later than this packet's entry) the arrival was queued at the
    /// previous arrival, and the end comes first unless its service began
    /// later; at an equal instant the end comes first, as in uet-htsim's
    /// trace of an incast's lockstep arrivals. hal-sim queues each
    /// arrival as its packet starts out, ahead of the end: this decides
    /// the order instead, and runs the end now (its PortFree, when it
    /// comes, finds the port busy and does nothing).
    ///
    /// Asked only where [`Switch::end_due`]: `entered` is when the arrival
    /// entered what delayed it (its link, or the switch's latency), `prev`
    /// when that last delivered a packet.
    #[inline(always)]
    fn ends_first(&self, egress: u16, entered: Ps, prev: Ps) -> bool {
        let queued = if entered <= prev { prev } else { entered };
        self.ports[egress as usize].on_wire.start <= queued
    }

    /// Whether trimming port `egress` holds a packet whose serialization
    /// ends at this instant, its PortFree still to run.
    #[inline(always)]
    fn end_due(&self, cx: &Ctx, egress: u16) -> bool {
        let p = &self.ports[egress as usize];
        self.holds(egress) && p.free_pending && p.busy_until == cx.now
    }

    /// Admission and marking (LDCP §2.1): ECN-capable packets are marked
    /// with p = (q − K_min)/(K_max − K_min)·P_max between the thresholds
    /// and always above K_max; ECN-incapable data is dropped at q ≥ K
    /// (eq. 3); anything is dropped when the port passes buf_max or the
    /// shared buffer is full. Inlined into both callers: called, it cost
    /// the arrivals of a run without forwarding latency 1.7 % more
    /// instructions.
    #[inline(always)]
    fn enqueue(&mut self, cx: &mut Ctx, port: u16, pkt: u32, ingress: u16) {
        let eg = self.egress;
        let (q, port_buffer) = (
            self.ports[port as usize].queued_bytes,
            self.ports[port as usize].port_buffer,
        );
        // A trimming port's queue still holds the packet on the wire.
        let held = self.held(cx, port);
        let (mut wire, ecn, kind, mut trimmed) = {
            let x = cx.pkts.get(pkt);
            (x.wire as u64, x.ecn(), x.kind, x.trimmed())
        };
        // With PFC the upstream is paused before a port overflows; only the
        // shared buffer (the headroom included) can.
        let mut port_full = eg.pfc.is_none() && q + held.data + wire > port_buffer;
        if let (Some(Trim { bytes, drop }), true) = (eg.trim, port_full && kind == PktKind::Data && !trimmed) {
            if !self.trim(cx, port, bytes, drop) {
                if drop {
                    // The arrival goes instead (uet-htsim's `-disable_trim`).
                    return coin_drop(cx, pkt);
                }
                cut(cx, pkt, bytes);
                (wire, trimmed) = (bytes as u64, true);
            }
            port_full = false;
        }
        // Data waits in the data queue; headers, cut data and every control
        // packet in the control queue, when there is one.
        let header = kind != PktKind::Data || trimmed;
        if eg.trim.is_some() && header {
            // Headers see only the control queue's room.
            port_full = self.ports[port as usize].urgent_bytes + held.urgent + wire > 2 * port_buffer;
        }
        let full = port_full || self.buffered + wire > eg.buffers.shared;
        let threshold_drop = ecn == EcnBits::NotEct && kind == PktKind::Data && !trimmed && q >= eg.marking.drop_k;
        if full || threshold_drop {
            let c = &mut cx.metrics.counters;
            c.drops += 1;
            if threshold_drop && !full {
                c.drops_fast_start += 1;
            } else if ecn != EcnBits::NotEct {
                c.drops_stable += 1;
            }
            cx.pkts.remove(pkt);
            return;
        }
        if ecn == EcnBits::Ect && eg.marking.at == MarkAt::Enqueue && !trimmed {
            self.wred(cx, port, pkt, q);
        }
        let p = &mut self.ports[port as usize];
        p.max_queue = p.max_queue.max(q + wire);
        let urgent = eg.control.is_some() && header;
        if cx.now < p.busy_until || !p.queue.is_empty() || !p.urgent.is_empty() || (p.paused && !urgent) {
            if urgent {
                // Counted in the shared buffer, not in the data queue whose
                // length the marking and the telemetry report.
                p.urgent.push_back(pkt);
                p.urgent_bytes += wire;
            } else {
                p.queue.push_back(pkt);
                p.queued_bytes += wire;
            }
            self.buffered += wire;
            self.schedule_free(cx, port);
            if eg.pfc.is_some() {
                self.ingress_bytes[ingress as usize] += wire;
                self.check_pause(cx, ingress);
            }
        } else {
            self.transmit(cx, port, pkt, ingress);
        }
    }

    /// Port `port` finished a packet: the next one in its queue goes.
    pub fn port_free(&mut self, cx: &mut Ctx, port: u16) {
        let p = &mut self.ports[port as usize];
        if p.busy_until > cx.now {
            // Its packet's end ran already, at an arrival of this instant
            // ([`Switch::ends_first`]): the port is busy with the next.
            return;
        }
        p.free_pending = false;
        // A trimming port's last packet finishes now: its ECN from the data
        // queue it leaves behind (uet-htsim's `completeService`). Only at
        // that instant: a port resumed later (PFC) let its packet go long
        // ago, and the packet may be gone.
        let done = std::mem::replace(&mut p.on_wire, OnWire::NONE);
        let at_end = cx.now == p.busy_until;
        if done.data != 0 && at_end && self.egress.marking.at == MarkAt::Dequeue && done.ect {
            let q = p.queued_bytes;
            self.wred(cx, port, done.pkt, q);
        }
        let p = &mut self.ports[port as usize];
        let mut left = None;
        let next = match p.urgent.pop_front() {
            Some(pkt) => {
                p.urgent_bytes -= cx.pkts.get(pkt).wire as u64;
                Some(pkt)
            }
            None if p.paused => None,
            None => {
                let pkt = p.queue.pop_front();
                if let Some(pkt) = pkt {
                    p.queued_bytes -= cx.pkts.get(pkt).wire as u64;
                    left = Some(p.queued_bytes);
                }
                pkt
            }
        };
        if let (Some(pkt), Some(q), MarkAt::Dequeue, false) = (next, left, self.egress.marking.at, self.holds(port)) {
            if cx.pkts.get(pkt).ecn() == EcnBits::Ect {
                self.wred(cx, port, pkt, q);
            }
        }
        let p = &mut self.ports[port as usize];
        if let Some(pkt) = next {
            let wire = cx.pkts.get(pkt).wire as u64;
            self.buffered -= wire;
            let more = !p.urgent.is_empty() || (!p.paused && !p.queue.is_empty());
            let ingress = cx.pkts.get(pkt).ingress_port;
            self.transmit(cx, port, pkt, ingress);
            if more {
                self.schedule_free(cx, port);
            }
            if self.egress.pfc.is_some() {
                let b = &mut self.ingress_bytes[ingress as usize];
                *b = b.saturating_sub(wire);
                self.check_pause(cx, ingress);
            }
        }
    }

    /// Trimming (uet-htsim's `CompositeQueue::receivePacket`): data that
    /// does not fit port `port`'s queue. By a coin, the newest data packet
    /// queued there is cut to `size` bytes and joins the control queue
    /// (the answer is then true, and the arrival takes its place in the
    /// data queue, even if it still does not fit), or, the answer false,
    /// the arrival is cut instead. A header the control queue has no room
    /// for (twice the data queue) is dropped. With `drop`, what would be
    /// cut is dropped (uet-htsim's `-disable_trim`).
    #[inline(never)]
    fn trim(&mut self, cx: &mut Ctx, port: u16, size: u16, drop: bool) -> bool {
        if crate::setup::workload::unit(&mut cx.rng.trim) >= 0.5 {
            return false;
        }
        let p = &mut self.ports[port as usize];
        let cap = 2 * p.port_buffer;
        let Some(victim) = p.queue.pop_back() else {
            return false;
        };
        let wire = cx.pkts.get(victim).wire as u64;
        p.queued_bytes -= wire;
        self.buffered -= wire;
        if drop {
            coin_drop(cx, victim);
            return true;
        }
        cut(cx, victim, size);
        if p.urgent_bytes + size as u64 > cap {
            cx.metrics.counters.drops += 1;
            cx.pkts.remove(victim);
        } else {
            p.urgent.push_back(victim);
            p.urgent_bytes += size as u64;
            self.buffered += size as u64;
        }
        true
    }

    /// WRED/ECN on packet `pkt` of port `port` at queue `q` bytes: marked
    /// with p = (q − K_min)/(K_max − K_min)·P_max between the thresholds,
    /// always above K_max.
    // Inline at both calls (every ECN-capable packet at every hop).
    #[inline(always)]
    fn wred(&self, cx: &mut Ctx, port: u16, pkt: u32, q: u64) {
        let k = self.ports[port as usize].ecn_k;
        if self
            .egress
            .marking
            .marks(q, k, || crate::setup::workload::unit(&mut cx.rng.wred))
        {
            cx.pkts.get_mut(pkt).set_ecn(EcnBits::Ce);
            cx.metrics.counters.ecn_marks += 1;
        }
    }

    /// PFC at ingress port `ingress`: pause its upstream when the bytes it
    /// brought pass XOFF, resume it at XOFF − gap (or when none are left).
    fn check_pause(&mut self, cx: &mut Ctx, ingress: u16) {
        let Some(pfc) = self.egress.pfc else { return };
        let i = ingress as usize;
        let xoff = match pfc.xoff {
            Xoff::Static(b) => b,
            Xoff::Dynamic(alpha) => (alpha * self.egress.buffers.shared.saturating_sub(self.buffered) as f64) as u64,
        };
        let bytes = self.ingress_bytes[i];
        let on = if self.pausing[i] {
            !(bytes == 0 || bytes + pfc.xon_gap <= xoff)
        } else {
            bytes >= xoff
        };
        if on == self.pausing[i] {
            return;
        }
        self.pausing[i] = on;
        if on {
            cx.metrics.counters.pfc_pauses += 1;
        }
        // The frame goes out at once (MAC control, between packets) and
        // takes the link's delay to reach the upstream port.
        let link = self.ports[i].link;
        let at = cx.now + ser_ps(PFC_FRAME_BYTES, link.bps) + link.delay_ps;
        let (node, port) = link.peer;
        cx.q.push(at, Ev::Pause { node, port, on });
    }

    /// A PFC frame from downstream reached egress port `port`.
    #[inline(never)]
    pub fn pause(&mut self, cx: &mut Ctx, port: u16, on: bool) {
        let p = &mut self.ports[port as usize];
        if on == p.paused {
            return;
        }
        p.paused = on;
        if on {
            p.paused_since = cx.now;
            return;
        }
        cx.metrics.counters.pfc_paused_ns += (cx.now - p.paused_since).as_ns();
        if !p.queue.is_empty() {
            self.schedule_free(cx, port);
        }
    }

    /// Whether port `port` keeps its packet on the wire in its queue until
    /// the serialization ends (a trimming port on a link with a delay:
    /// on a link of none the packet would arrive before its mark was
    /// decided, so there it is decided as it starts out).
    #[inline(always)]
    fn holds(&self, port: u16) -> bool {
        self.egress.trim.is_some() && self.ports[port as usize].link.delay_ps > Ps::ZERO
    }

    /// What a trimming port's queue still holds of the packet on the wire:
    /// the packet until its serialization ends, or until the PortFree
    /// queued for that instant has run.
    #[inline(always)]
    fn held(&self, cx: &Ctx, port: u16) -> OnWire {
        let p = &self.ports[port as usize];
        if cx.now < p.busy_until || p.free_pending {
            p.on_wire
        } else {
            OnWire::NONE
        }
    }

    /// Queues the PortFree event of a port at its busy_until. A port needs
    /// one only when a packet waits behind the one it is sending.
    #[inline(always)]
    fn schedule_free(&mut self, cx: &mut Ctx, port: u16) {
        let p = &mut self.ports[port as usize];
        if !p.free_pending {
            p.free_pending = true;
            // The packet that will most likely go next, for the loop to
            // prefetch when this event comes up.
            let next = p.urgent.front().or(p.queue.front()).copied().unwrap_or(NO_PKT);
            // A paused idle port's busy_until is in the past.
            cx.q.push(
                p.busy_until.max(cx.now),
                Ev::PortFree {
                    node: self.node,
                    port,
                    next,
                },
            );
        }
    }

    /// Sends `pkt` on `port`: its telemetry hop (HPCC++ §6.1, at dequeue),
    /// the port's counters, and its arrival at the far end.
    #[inline(always)]
    fn transmit(&mut self, cx: &mut Ctx, port: u16, pkt: u32, ingress_port: u16) {
        let now = cx.now;
        let holds = self.holds(port);
        let p = &mut self.ports[port as usize];
        let (packet, tel) = cx.pkts.with_tel_mut(pkt);
        let util = self.egress.util;
        let mut pint_code = 0;
        if util == PortUtil::Pint && packet.kind.collects_telemetry() {
            // HPCC-PINT's port utilization (PINT §4.2; the HPCC reference
            // simulator's SwitchNotifyDequeue, CC mode 10, without its
            // log-domain approximations), on each data packet's dequeue:
            // dt = min(now − last packet, T), B in bytes/ns,
            // U ← (1 − dt/T)·U + (dt/T)·(q/(B·T) + last bytes/(dt·B)).
            let t = cx.cfg.tel.pint_t_ns as f64;
            let dt = ((now - p.util_t).as_ps() as f64 / 1000.0).min(t);
            let b = p.link.bps as f64 / 8e9;
            let u = (1.0 - dt / t) * p.util + dt / t * p.queued_bytes as f64 / (b * t) + p.last_wire as f64 / (b * t);
            p.util = u;
            let u24 = Utilization::from_bits((u * (1u64 << Utilization::FRAC_BITS) as f64) as u64);
            pint_code = cx.cfg.tel.pint.encode(u24, (cx.rng.pint.next_u32() >> 16) as u16);
        }
        if util == PortUtil::Pint {
            p.util_t = now;
            p.last_wire = packet.wire.into();
        }
        if let Some(mut tel) = tel.filter(|_| packet.kind.collects_telemetry()) {
            let h = HopState {
                ts_ns: now.as_ns(),
                ingress_ns: packet.ingress_ps.as_ns(),
                tx_bytes: p.tx_bytes,
                qlen_bytes: p.queued_bytes,
                bps: p.link.bps,
                node: self.node,
                ingress_port,
                egress_port: port,
                util: p.util,
                pint_code,
            };
            let before = tel.len();
            if cx.cfg.tel.push_hop(&mut tel, &h).is_ok() {
                packet.wire = packet.wire + tel.len() - before;
            }
        }
        if util == PortUtil::IntMd {
            // Time-decayed tx rate: R ← R·e^(−Δt/τ) + bits/τ; util = R/B.
            let dt = (now - p.util_t).as_ps() as f64;
            let decayed = p.util * (-dt / UTIL_TAU_PS).exp();
            p.util = decayed + packet.wire as f64 * 8.0 * 1e12 / UTIL_TAU_PS / p.link.bps as f64;
            p.util_t = now;
        }
        p.tx_bytes += packet.wire as u64;
        if packet.kind == PktKind::Data {
            p.last_data_ps = now;
        }
        let ser = ser_ps(packet.wire.into(), p.link.bps);
        p.busy_until = now + ser;
        if holds {
            let (header, bytes) = (packet.kind != PktKind::Data || packet.trimmed(), packet.wire as u64);
            p.on_wire = OnWire {
                pkt,
                data: if header { 0 } else { bytes },
                urgent: if header { bytes } else { 0 },
                start: now,
                ect: packet.ecn() == EcnBits::Ect,
            };
        }
        let (node, port) = p.link.peer;
        cx.q.push(now + ser + p.link.delay_ps, Ev::Arrive { node, port, pkt });
    }
}

/// Data a full port's coin dropped instead of cutting (`-disable_trim`).
fn coin_drop(cx: &mut Ctx, pkt: u32) {
    let c = &mut cx.metrics.counters;
    c.drops += 1;
    c.drops_stable += u64::from(cx.pkts.get(pkt).ecn() != EcnBits::NotEct);
    cx.pkts.remove(pkt);
}

/// Cuts data packet `pkt` to its first `size` bytes (a header that still
/// names its flow, sequence and length), keeping its TTL at the cut.
fn cut(cx: &mut Ctx, pkt: u32, size: u16) {
    cx.metrics.counters.trims += 1;
    let p = cx.pkts.get_mut(pkt);
    p.wire = size;
    p.set_trimmed(true);
    p.fwd_hops = p.ttl;
}
