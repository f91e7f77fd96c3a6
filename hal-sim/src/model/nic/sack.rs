//! The SACK transport (`nic.transport = "sack"`): Ultra Ethernet's
//! reliable delivery as uet-htsim models it (`UecSrc` and `UecSink`,
//! `htsim/sim/uec.cpp` at commit 40ccb05), for trimming fabrics.
//!
//! Packets are numbered (a packet's number is its first byte over the
//! payload size). The receiver ([`SackRx`]) keeps what arrives out of
//! order, and counts the wire bytes of every distinct packet it got. It
//! ACKs once `sack_bytes` arrived since its last ACK, at once on a CE mark,
//! on the sender's ack request (AR), on its first packet and on a
//! duplicate, and again when the gap that an AR packet found is filled.
//! An ACK carries the cumulative ACK, the bytes received, the packet that
//! sent it and a 64-bit bitmap of the packets received beyond the
//! cumulative ACK, from `max(psn − 63, cum + 1)` (from the packet itself
//! on CE or AR). A trimmed header is NACKed at once, with whether the cut
//! was at the last switch.
//!
//! The sender ([`SackTx`]) keeps each packet sent until it is answered,
//! with its send time: the oldest one's time plus the least RTO is the
//! timer. Its bytes in flight are uet-htsim's `_in_flight`: each packet
//! sent adds its wire bytes, each ACK takes off what the receiver counted
//! since the last, a NACK or a timeout takes the packet off (and puts it
//! back if an ACK then shows it arrived after all). What was NACKed or
//! timed out is sent again before new data, lowest number first, with AR
//! set; a new packet has AR when it is the last or fills the window. The
//! engine sees an ACK's `cum_ack` as the bytes received and
//! `snd_nxt − cum_ack` as the bytes in flight (cc-core's NSCC contract).
//!
//! Departures from uet-htsim are in docs/design-notes.md, "The SACK
//! transport".

use std::collections::{BTreeMap, VecDeque};

use cc_core::path::Ev as Entropy;
use cc_core::prelude::*;

use super::Nic;
use crate::model::flow::NOWHERE;
use crate::model::net::ev_hash;
use crate::model::packet::{Aux, EcnBits, Packet, PktKind};
use crate::run::ctx::Ctx;
use crate::run::event::{Ev, Ps};

/// A packet sent and not yet answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sent {
    /// When it was sent (last).
    pub at: Ps,
    /// Its wire bytes.
    pub wire: u32,
    /// The entropy value it took (0 unsprayed): a timeout blames its own
    /// path.
    pub ev: u16,
}

/// The sender's side of a flow.
///
/// Packets are numbered in the order they are first sent and answered
/// mostly in that order, so the records live in a ring from the lowest
/// unanswered number, and the send times in a queue in the order they
/// were taken (times only grow): the oldest live entry is the timer's.
/// An entry whose packet was answered or sent again since is dropped
/// when it reaches the front.
#[derive(Clone, Debug, Default)]
pub struct SackTx {
    /// Packet `first + i`'s record at `i`, while it is sent and not
    /// answered; the front is always a record (or the ring is empty).
    sent: VecDeque<Option<Sent>>,
    /// The number of `sent`'s front.
    first: u32,
    /// `(send time, number)` in the order sent, each time at or after the
    /// one before (and equal times by number); the front is live: its
    /// packet is in flight, sent at that time.
    by_time: VecDeque<(Ps, u32)>,
    /// Packets to send again, by number: their wire bytes.
    rtx: BTreeMap<u32, u32>,
    /// Wire bytes in flight (may dip below zero for a moment, as
    /// uet-htsim's, when an ACK counts a packet that a NACK or a timeout
    /// already took off; the ACK's bitmap puts it back).
    in_flight: i64,
    /// The receiver's count of wire bytes, as its latest ACK gave it.
    recvd: u64,
}

/// What an ACK carries, as the sender reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SackAck {
    /// The cumulative ACK: the next packet expected in order.
    pub cum: u32,
    /// Wire bytes of every distinct data packet received.
    pub recvd: u64,
    /// The packet whose arrival sent the ACK.
    pub acked: u32,
    /// The send time that packet carried, echoed.
    pub ts: Ps,
    /// The packet of the bitmap's bit 0.
    pub base: u32,
    /// Bit i: packet `base + i` was received.
    pub bitmap: u64,
}

/// What an ACK told the sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckView {
    /// Packets received in order (the cumulative ACK).
    pub cum: u32,
    /// Wire bytes the receiver counts.
    pub recvd: u64,
    /// Wire bytes in flight after the ACK.
    pub in_flight: u64,
    /// The round trip of the packet that sent the ACK, if this sender
    /// still waits for that very transmission.
    pub rtt: Option<Ps>,
    /// The EV of the packet that sent the ACK, for a sprayed flow.
    pub ev: Option<Entropy>,
}

impl SackTx {
    /// The next packet to resend, if any: its number and wire bytes.
    pub fn next_rtx(&self) -> Option<(u32, u32)> {
        self.rtx.first_key_value().map(|(&n, &w)| (n, w))
    }

    /// Wire bytes in flight (none below zero).
    pub fn in_flight(&self) -> u64 {
        self.in_flight.max(0) as u64
    }

    /// The receiver's count of wire bytes.
    pub fn recvd(&self) -> u64 {
        self.recvd
    }

    /// Packet `n`'s record, if it is in flight.
    fn get(&self, n: u32) -> Option<&Sent> {
        let i = n.wrapping_sub(self.first) as usize;
        self.sent.get(i)?.as_ref()
    }

    /// Packet `n` of `wire` bytes goes now on entropy value `ev` (a
    /// resend leaves the queue).
    pub fn send(&mut self, n: u32, wire: u32, now: Ps, ev: u16) {
        self.rtx.remove(&n);
        if self.sent.is_empty() {
            self.first = n;
        } else if n < self.first {
            // Below the ring (only after a gap at its front): widen it.
            for _ in n..self.first {
                self.sent.push_front(None);
            }
            self.first = n;
        }
        let i = (n - self.first) as usize;
        if i >= self.sent.len() {
            self.sent.resize(i + 1, None);
        }
        if let Some(old) = self.sent[i].replace(Sent { at: now, wire, ev }) {
            // Sent again before it was answered: one record, the latest
            // (its older time leaves the queue when it reaches the front).
            self.in_flight -= old.wire as i64;
        }
        // Times only grow; at an equal time the queue keeps number order.
        let mut at = self.by_time.len();
        while at > 0 && self.by_time[at - 1] > (now, n) {
            at -= 1;
        }
        self.by_time.insert(at, (now, n));
        self.in_flight += wire as i64;
        self.settle();
    }

    /// When the oldest packet in flight times out, given the least RTO.
    pub fn deadline(&self, rto: Ps) -> Option<Ps> {
        self.by_time.front().map(|&(at, _)| at + rto)
    }

    /// Forgets packet `n` as answered.
    fn answered(&mut self, n: u32) -> Option<Sent> {
        self.sent.get_mut(n.wrapping_sub(self.first) as usize)?.take()
    }

    /// Drops what was answered from the ring's front and the stale times
    /// from the queue's, so that both fronts are live.
    fn settle(&mut self) {
        while let Some(None) = self.sent.front() {
            self.sent.pop_front();
            self.first = self.first.wrapping_add(1);
        }
        while let Some(&(at, n)) = self.by_time.front() {
            if self.get(n).is_some_and(|s| s.at == at) {
                break;
            }
            self.by_time.pop_front();
        }
    }

    /// Packet `n` is known to have arrived: answered if it is in flight,
    /// out of the resend queue (and back in flight, as the receiver
    /// counted it) if it waits there (uet-htsim's `handleAckno`).
    fn arrived(&mut self, n: u32) {
        if self.answered(n).is_none() {
            if let Some(w) = self.rtx.remove(&n) {
                self.in_flight += w as i64;
            }
        }
    }

    /// An ACK (uet-htsim's `processAck`): the bytes the receiver counts
    /// come off the bytes in flight, then the cumulative ACK and the
    /// bitmap answer their packets.
    pub fn ack(&mut self, now: Ps, a: &SackAck) -> AckView {
        let SackAck {
            cum,
            recvd,
            acked,
            ts,
            base,
            bitmap,
        } = *a;
        if recvd > self.recvd {
            self.in_flight -= (recvd - self.recvd) as i64;
            self.recvd = recvd;
        }
        let rtt = self.get(acked).filter(|s| s.at == ts).map(|s| now - s.at);
        while let Some((&n, &w)) = self.rtx.first_key_value() {
            if n >= cum {
                break;
            }
            self.rtx.remove(&n);
            self.in_flight += w as i64;
        }
        // Everything below the cumulative ACK is answered.
        while !self.sent.is_empty() && self.first < cum {
            self.sent.pop_front();
            self.first = self.first.wrapping_add(1);
        }
        let mut bits = bitmap;
        while bits != 0 {
            let i = bits.trailing_zeros();
            bits &= bits - 1;
            self.arrived(base.wrapping_add(i));
        }
        self.settle();
        AckView {
            cum,
            recvd: self.recvd,
            in_flight: self.in_flight(),
            rtt,
            ev: None,
        }
    }

    /// Packet `n` was NACKed: its record, if it is still in flight (a NACK
    /// after an ACK that covered the packet is void). The caller hands the
    /// NACK to the engine with the packet still counted in flight, then
    /// calls [`SackTx::resend`].
    pub fn nacked(&self, n: u32) -> Option<Sent> {
        self.get(n).copied()
    }

    /// Packet `n` comes off the bytes in flight and waits to be sent again
    /// (after a NACK or a timeout).
    pub fn resend(&mut self, n: u32) {
        if let Some(s) = self.answered(n) {
            self.in_flight -= s.wire as i64;
            self.rtx.insert(n, s.wire);
            self.settle();
        }
    }

    /// The oldest packet in flight, if it has waited `rto`: its number
    /// and entropy value.
    pub fn expired(&self, now: Ps, rto: Ps) -> Option<(u32, u16)> {
        let &(at, n) = self.by_time.front()?;
        (at + rto <= now).then(|| (n, self.get(n).map_or(0, |s| s.ev)))
    }
}

/// The receiver's side of a flow.
#[derive(Clone, Debug, Default)]
pub struct SackRx {
    /// The next packet expected in order (the cumulative ACK).
    pub expected: u32,
    /// Packets received beyond `expected`, a bit each: bit `i % 64` of
    /// word `i / 64` is packet `ooo_base + i`, `ooo_base` a multiple of
    /// 64 at or below `expected`.
    ooo: VecDeque<u64>,
    /// The packet of `ooo`'s first bit.
    ooo_base: u32,
    /// Bits set in `ooo`.
    ooo_count: u32,
    /// Wire bytes of every distinct data packet received.
    pub recvd: u64,
    /// Wire bytes arrived since the last ACK.
    accepted: u64,
    /// Some data arrived (the first packet is ACKed at once).
    any: bool,
    /// An AR packet arrived while packets were missing: ACK once the gap
    /// is filled.
    ack_request: bool,
}

/// What the receiver does with a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RxAnswer {
    /// Nothing yet.
    Hold,
    /// An ACK with the bitmap from this packet.
    Ack {
        /// Bit 0 of the bitmap.
        base: u32,
    },
    /// A NACK of the trimmed packet.
    Nack,
}

impl SackRx {
    /// Whether packet `n` is held out of order.
    fn held(&self, n: u32) -> bool {
        let Some(i) = n.checked_sub(self.ooo_base) else {
            return false;
        };
        self.ooo.get((i / 64) as usize).is_some_and(|w| w >> (i % 64) & 1 == 1)
    }

    /// Whether packet `n` was received already.
    fn has(&self, n: u32) -> bool {
        n < self.expected || self.held(n)
    }

    /// Holds packet `n` (beyond `expected`, not held yet).
    fn hold(&mut self, n: u32) {
        let i = n - self.ooo_base;
        let w = (i / 64) as usize;
        if w >= self.ooo.len() {
            self.ooo.resize(w + 1, 0);
        }
        self.ooo[w] |= 1 << (i % 64);
        self.ooo_count += 1;
    }

    /// `expected` moves past the packets held in order after it; words
    /// wholly below it go.
    fn advance(&mut self) {
        while self.held(self.expected) {
            let i = self.expected - self.ooo_base;
            self.ooo[(i / 64) as usize] &= !(1 << (i % 64));
            self.ooo_count -= 1;
            self.expected += 1;
        }
        while self.expected - self.ooo_base >= 64 {
            self.ooo.pop_front();
            self.ooo_base += 64;
        }
    }

    /// uet-htsim's `sackBitmapBase`: `max(n − 63, expected + 1)`.
    fn base(&self, n: u32) -> u32 {
        n.saturating_sub(63).max(self.expected + 1)
    }

    /// Data packet `n` of `wire` bytes arrived (uet-htsim's `processData`
    /// and `processTrimmed`); `sack_bytes` is the ACK threshold.
    pub fn data(&mut self, n: u32, wire: u32, ce: bool, ar: bool, trimmed: bool, sack_bytes: u64) -> RxAnswer {
        if trimmed {
            return if self.has(n) {
                RxAnswer::Ack { base: self.base(n) }
            } else {
                RxAnswer::Nack
            };
        }
        self.accepted += wire as u64;
        if self.has(n) {
            // A duplicate: the sender is confused, ACK at once.
            self.accepted = 0;
            let base = if ce { n } else { self.base(n) };
            return RxAnswer::Ack { base };
        }
        let mut now = !self.any;
        self.any = true;
        self.recvd += wire as u64;
        if ar {
            now = true;
            self.ack_request = true;
        }
        if n == self.expected {
            self.expected += 1;
            self.advance();
            if self.ooo_count == 0 && self.ack_request {
                now = true;
                self.ack_request = false;
            }
        } else {
            self.hold(n);
        }
        if ce || now || self.accepted >= sack_bytes {
            self.accepted = 0;
            let base = if ce || ar { n } else { self.base(n) };
            RxAnswer::Ack { base }
        } else {
            RxAnswer::Hold
        }
    }

    /// The bitmap from `base`: bit i, packet `base + i` is held out of
    /// order (uet-htsim's `buildSackBitmap`).
    pub fn bitmap(&self, base: u32) -> u64 {
        // The 64 bits from `base`, held packets being at or after
        // `ooo_base`: the bits below it are clear.
        let word = |w: i64| -> u64 {
            usize::try_from(w)
                .ok()
                .and_then(|w| self.ooo.get(w))
                .copied()
                .unwrap_or(0)
        };
        let off = base as i64 - self.ooo_base as i64;
        let (w, s) = (off.div_euclid(64), off.rem_euclid(64) as u32);
        let lo = word(w) >> s;
        let hi = if s == 0 { 0 } else { word(w + 1) << (64 - s) };
        // No packet at or past u32::MAX (the range's end saturates there).
        match u32::MAX - base {
            room @ 0..64 => (lo | hi) & ((1u64 << room) - 1),
            _ => lo | hi,
        }
    }
}

impl Nic {
    /// A data packet of `flow` reached its receiver over the SACK
    /// transport; `r` is the flow's receiving state.
    pub(super) fn sack_data(&mut self, cx: &mut Ctx, pkt: u32, p: &Packet, mut r: super::flows::Receiver) {
        let (flow, payload) = (p.flow, cx.cfg.payload);
        let (src, size) = (cx.flows[flow as usize].src_host, cx.flows[flow as usize].size);
        let n = p.seq / payload;
        let ce = p.ecn() == EcnBits::Ce;
        // The answer, and an ACK's byte count and bitmap.
        let (answer, recvd, bitmap) = match self.sack_rx.get_mut(r.sack_at, flow) {
            Some(rx) => {
                let a = rx.data(
                    n,
                    p.wire.into(),
                    ce,
                    p.ar(),
                    p.trimmed(),
                    cx.cfg.sack_bytes.unwrap_or(0),
                );
                r.rcv_nxt = (rx.expected as u64 * payload as u64).min(size);
                r.delivered = r.rcv_nxt;
                match a {
                    RxAnswer::Ack { base } => (a, rx.recvd, rx.bitmap(base)),
                    _ => (a, 0, 0),
                }
            }
            // A late copy of a finished flow's data: a duplicate.
            None => (RxAnswer::Ack { base: n }, 0, 0),
        };
        match answer {
            RxAnswer::Hold => self.store(cx, flow, r),
            RxAnswer::Nack => {
                self.store(cx, flow, r);
                let (last_hop, ts, seq, len) = (p.ttl == p.fwd_hops, p.ts_ps, p.seq, p.len);
                let (ev, spray) = (p.ev(), cx.cfg.spray.is_some());
                self.send_ctrl(cx, src, flow, PktKind::Nack, |_, q| {
                    q.seq = seq;
                    q.len = len;
                    q.ts_ps = ts;
                    q.set_last_hop(last_hop);
                    q.set_ece(ce);
                    if spray {
                        // Back on the data's entropy value.
                        q.set_ev(ev);
                        q.hash = ev_hash(q.hash, ev);
                    }
                });
            }
            RxAnswer::Ack { base } => {
                r.ce_pending = ce && !p.trimmed();
                let sack = Aux::Sack {
                    recvd,
                    acked: n,
                    base,
                    bitmap,
                    ev: p.ev(),
                };
                self.send_ack(cx, flow, pkt, p, &mut r, false, Some(sack));
            }
        }
    }

    /// Opens the SACK receiving state of `flow`: its place.
    pub(super) fn sack_open_rx(&mut self, flow: u32) -> u32 {
        self.sack_rx.open(flow, SackRx::default())
    }

    /// Closes the SACK receiving state at `at`.
    pub(super) fn sack_close_rx(&mut self, at: u32, flow: u32) {
        if at != NOWHERE {
            self.sack_rx.close(at, flow);
        }
    }

    /// An ACK of `flow` over the SACK transport, at its sender: what it
    /// tells, the flow's cumulative ACK in bytes updated. None if the ACK
    /// carries no SACK (or the flow is not sent here).
    pub(super) fn sack_ack(&mut self, cx: &mut Ctx, p: &Packet) -> Option<AckView> {
        let Some(Aux::Sack {
            recvd,
            acked,
            base,
            bitmap,
            ev,
        }) = cx.pkts.aux(p)
        else {
            return None;
        };
        let (payload, size, now) = (cx.cfg.payload as u64, cx.flows[p.flow as usize].size, cx.now);
        let f = self.sender_mut(cx, p.flow)?;
        // The cumulative ACK travels in bytes (the first not received in
        // order, the flow's size once all was).
        let cum = (p.seq as u64).div_ceil(payload) as u32;
        let a = SackAck {
            cum,
            recvd,
            acked,
            ts: p.ts_ps,
            base,
            bitmap,
        };
        let tx = f.sack.as_deref_mut()?;
        let mut view = tx.ack(now, &a);
        // The engine's path choice takes the ACK's EV (uet-htsim's
        // `processEv`).
        view.ev = cx.cfg.spray.map(|_| Entropy::new(ev));
        f.snd_una = f.snd_una.max((cum as u64 * payload).min(size));
        cx.metrics.counters.acks += 1;
        Some(view)
    }

    /// A NACK of a trimmed packet over the SACK transport (uet-htsim's
    /// `processNack`): to the engine with the packet still in flight, then
    /// the packet waits to be sent again.
    pub(super) fn sack_nack(&mut self, cx: &mut Ctx, p: &Packet) {
        cx.metrics.counters.nacks += 1;
        let (payload, now) = (cx.cfg.payload, cx.now);
        let n = p.seq / payload;
        let Some(f) = self.sender_mut(cx, p.flow) else { return };
        let Some(tx) = f.sack.as_deref_mut() else { return };
        let Some(s) = tx.nacked(n) else { return };
        let nack = Nack {
            rtt_ns: Some((now - s.at).as_ns().min(u32::MAX as u64) as u32),
            last_hop: p.last_hop(),
            ece: if p.ece() { EcnEcho::Marked } else { EcnEcho::NotMarked },
            ev: cx.cfg.spray.map(|_| Entropy::new(p.ev())),
            ..Nack::new(
                Seq(p.seq),
                s.wire,
                Seq(tx.recvd() as u32),
                Seq(tx.recvd().wrapping_add(tx.in_flight()) as u32),
            )
        };
        tx.resend(n);
        let at = f.engine;
        self.sender_to_engine(cx, p.flow, at, EventKind::Nack(nack));
        self.arm_rto(cx, p.flow);
        self.try_send(cx);
    }

    /// The SACK transport's timer of `flow` fired: the oldest packet in
    /// flight, if it waited the least RTO, is sent again (uet-htsim's
    /// `rtxTimerExpired`: the engine's timeout, one packet off the bytes in
    /// flight), and the timer follows the next oldest.
    pub(super) fn sack_rto(&mut self, cx: &mut Ctx, flow: u32) {
        let (rto, now, payload) = (cx.cfg.rto_ps, cx.now, cx.cfg.payload);
        let Some(f) = self.sender_mut(cx, flow) else { return };
        f.rto_pending = false;
        let Some(tx) = f.sack.as_deref_mut() else { return };
        if let Some((n, ev)) = tx.expired(now, rto) {
            tx.resend(n);
            cx.metrics.counters.timeouts += 1;
            let at = f.engine;
            // The timed-out packet's own path is penalised (uet-htsim
            // blames EV 0).
            let kind = EventKind::Loss {
                first_lost: Seq(n.wrapping_mul(payload)),
                ev: cx.cfg.spray.map(|_| Entropy::new(ev)),
            };
            self.sender_to_engine(cx, flow, at, kind);
        }
        self.arm_rto(cx, flow);
        self.try_send(cx);
    }

    /// The SACK transport's timer of `flow`: one event at the oldest
    /// packet's deadline (an early one finds nothing expired and comes
    /// again; deadlines only move later, as the oldest packets are
    /// answered).
    pub(super) fn sack_arm(&mut self, cx: &mut Ctx, flow: u32) {
        let rto = cx.cfg.rto_ps;
        let now = cx.now;
        let Some(f) = self.sender_mut(cx, flow) else { return };
        let Some(deadline) = f.sack.as_deref().and_then(|t| t.deadline(rto)) else {
            return;
        };
        if !f.rto_pending {
            f.rto_pending = true;
            f.rto_deadline = deadline;
            cx.q.push(deadline.max(now), Ev::Rto { flow });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: u64 = 16_384;

    /// The ordered sets the transport kept before its rings: the model
    /// `held_to_the_ordered_model` holds them to.
    mod model {
        use std::collections::{BTreeMap, BTreeSet};

        use super::super::{SackAck, Sent};
        use crate::run::event::Ps;

        #[derive(Default)]
        pub struct Tx {
            pub sent: BTreeMap<u32, Sent>,
            pub by_time: BTreeSet<(Ps, u32)>,
            pub rtx: BTreeMap<u32, u32>,
            pub in_flight: i64,
            pub recvd: u64,
        }

        impl Tx {
            pub fn send(&mut self, n: u32, wire: u32, now: Ps, ev: u16) {
                self.rtx.remove(&n);
                if let Some(old) = self.sent.insert(n, Sent { at: now, wire, ev }) {
                    self.by_time.remove(&(old.at, n));
                    self.in_flight -= old.wire as i64;
                }
                self.by_time.insert((now, n));
                self.in_flight += wire as i64;
            }
            fn answered(&mut self, n: u32) -> Option<Sent> {
                let s = self.sent.remove(&n)?;
                self.by_time.remove(&(s.at, n));
                Some(s)
            }
            pub fn ack(&mut self, now: Ps, a: &SackAck) -> (u64, Option<Ps>) {
                if a.recvd > self.recvd {
                    self.in_flight -= (a.recvd - self.recvd) as i64;
                    self.recvd = a.recvd;
                }
                let rtt = self.sent.get(&a.acked).filter(|s| s.at == a.ts).map(|s| now - s.at);
                while let Some((&n, &w)) = self.rtx.first_key_value() {
                    if n >= a.cum {
                        break;
                    }
                    self.rtx.remove(&n);
                    self.in_flight += w as i64;
                }
                while let Some((&n, _)) = self.sent.first_key_value() {
                    if n >= a.cum {
                        break;
                    }
                    self.answered(n);
                }
                for i in 0..64 {
                    if a.bitmap >> i & 1 == 1 {
                        let n = a.base.wrapping_add(i);
                        if self.answered(n).is_none() {
                            if let Some(w) = self.rtx.remove(&n) {
                                self.in_flight += w as i64;
                            }
                        }
                    }
                }
                (self.in_flight.max(0) as u64, rtt)
            }
            pub fn resend(&mut self, n: u32) {
                if let Some(s) = self.answered(n) {
                    self.in_flight -= s.wire as i64;
                    self.rtx.insert(n, s.wire);
                }
            }
            pub fn expired(&self, now: Ps, rto: Ps) -> Option<(u32, u16)> {
                let &(at, n) = self.by_time.first()?;
                (at + rto <= now).then(|| (n, self.sent.get(&n).map_or(0, |s| s.ev)))
            }
        }

        /// The receiver's out-of-order set.
        #[derive(Default)]
        pub struct Rx {
            pub expected: u32,
            pub ooo: BTreeSet<u32>,
        }

        impl Rx {
            pub fn take(&mut self, n: u32) {
                if n == self.expected {
                    self.expected += 1;
                    while self.ooo.remove(&self.expected) {
                        self.expected += 1;
                    }
                } else if n > self.expected {
                    self.ooo.insert(n);
                }
            }
            pub fn bitmap(&self, base: u32) -> u64 {
                self.ooo
                    .range(base..base.saturating_add(64))
                    .fold(0, |b, &n| b | 1 << (n - base))
            }
        }
    }

    /// Random sends, resends, ACKs (cumulative and by bitmap), NACKs and
    /// timeouts over windows of up to 200 packets, and random arrivals at
    /// the receiver: the rings answer as the ordered sets did, at every
    /// step (bytes in flight, RTTs, the timer, the resend queue, the
    /// receiver's cumulative ACK, holdings and bitmaps).
    #[test]
    fn held_to_the_ordered_model() {
        for seed in 1..=20u64 {
            let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let mut draw = move |m: u64| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x % m
            };
            let (mut tx, mut m) = (SackTx::default(), model::Tx::default());
            let (mut rx, mut mr) = (SackRx::default(), model::Rx::default());
            let (mut now, mut next, mut cum) = (0u64, 0u32, 0u32);
            let rto = Ps::from_ns(500);
            for step in 0..20_000 {
                // Some sends at the same time, most later.
                now += [0, 1, 7, 40][draw(4) as usize];
                let t = Ps::from_ns(now);
                match draw(10) {
                    0..=3 => {
                        let n = if draw(4) == 0 && next > cum {
                            cum + draw((next - cum) as u64) as u32
                        } else if next - cum < 200 {
                            next += 1;
                            next - 1
                        } else {
                            continue;
                        };
                        let (w, ev) = (4150 - draw(3) as u32 * 100, draw(128) as u16);
                        tx.send(n, w, t, ev);
                        m.send(n, w, t, ev);
                    }
                    4..=6 => {
                        cum = (cum + draw(4) as u32).min(next);
                        let base = cum + draw(8) as u32;
                        let a = SackAck {
                            cum,
                            recvd: m.recvd + draw(3) * 4150,
                            acked: cum + draw(16) as u32,
                            ts: Ps::from_ns(now.saturating_sub(draw(600))),
                            base,
                            bitmap: draw(u64::MAX) & draw(u64::MAX),
                        };
                        let v = tx.ack(t, &a);
                        assert_eq!((v.in_flight, v.rtt), m.ack(t, &a), "seed {seed} step {step}");
                    }
                    7 => {
                        let n = cum + draw(32) as u32;
                        assert_eq!(tx.nacked(n), m.sent.get(&n).copied(), "seed {seed} step {step}");
                        tx.resend(n);
                        m.resend(n);
                    }
                    8 => {
                        let e = tx.expired(t, rto);
                        assert_eq!(e, m.expired(t, rto), "seed {seed} step {step}");
                        if let Some((n, _)) = e {
                            tx.resend(n);
                            m.resend(n);
                        }
                    }
                    _ => {
                        let n = rx.expected + draw(70) as u32;
                        let had = rx.has(n);
                        assert_eq!(had, n < mr.expected || mr.ooo.contains(&n), "seed {seed} step {step}");
                        rx.data(n, 4150, false, false, false, T);
                        mr.take(n);
                        assert_eq!((rx.expected, rx.ooo_count as usize), (mr.expected, mr.ooo.len()));
                        let base = rx.expected.saturating_sub(draw(70) as u32) + draw(140) as u32;
                        assert_eq!(rx.bitmap(base), mr.bitmap(base), "seed {seed} step {step} base {base}");
                    }
                }
                assert_eq!(tx.in_flight(), m.in_flight.max(0) as u64, "seed {seed} step {step}");
                assert_eq!(tx.deadline(rto), m.by_time.first().map(|&(at, _)| at + rto));
                assert_eq!(tx.next_rtx(), m.rtx.first_key_value().map(|(&n, &w)| (n, w)));
            }
        }
    }

    /// The receiver's answers, as uet-htsim's `processData` gives them for
    /// 4150-byte packets: the first packet at once, then one ACK every
    /// four (16 600 bytes ≥ 16 384), a CE or an AR at once, a gap held.
    #[test]
    fn the_receiver_acks_as_uet_htsim() {
        let mut rx = SackRx::default();
        let w = 4150;
        assert_eq!(rx.data(0, w, false, false, false, T), RxAnswer::Ack { base: 2 });
        for n in 1..4 {
            assert_eq!(rx.data(n, w, false, false, false, T), RxAnswer::Hold);
        }
        assert_eq!(rx.data(4, w, false, false, false, T), RxAnswer::Ack { base: 6 });
        // CE: at once, the bitmap from the packet itself.
        assert_eq!(rx.data(5, w, true, false, false, T), RxAnswer::Ack { base: 5 });
        assert_eq!(rx.expected, 6);
        // Packet 6 is lost: 7, 8 and 10 are held out of order.
        assert_eq!(rx.data(7, w, false, false, false, T), RxAnswer::Hold);
        assert_eq!(rx.data(8, w, false, false, false, T), RxAnswer::Hold);
        assert_eq!(rx.data(10, w, false, false, false, T), RxAnswer::Hold);
        // The fourth since the last ACK: bitmap from max(n - 63, 7) = 7.
        assert_eq!(rx.data(11, w, false, false, false, T), RxAnswer::Ack { base: 7 });
        assert_eq!(rx.bitmap(7), 0b1_1011);
        // An AR packet while 6 and 9 are missing: at once, and again when
        // the gap closes.
        assert_eq!(rx.data(12, w, false, true, false, T), RxAnswer::Ack { base: 12 });
        assert_eq!(rx.data(9, w, false, false, false, T), RxAnswer::Hold);
        assert_eq!(rx.data(6, w, false, false, false, T), RxAnswer::Ack { base: 14 });
        assert_eq!(rx.expected, 13);
        assert_eq!(rx.recvd, 13 * w as u64);
        // A duplicate: at once, counted once.
        assert_eq!(rx.data(3, w, false, false, false, T), RxAnswer::Ack { base: 14 });
        assert_eq!(rx.recvd, 13 * w as u64);
        // A trimmed header: a NACK if missing, an ACK if held already.
        assert_eq!(rx.data(20, 64, false, false, true, T), RxAnswer::Nack);
        assert_eq!(rx.data(2, 64, false, false, true, T), RxAnswer::Ack { base: 14 });
        assert_eq!(rx.recvd, 13 * w as u64);
    }

    /// The sender's bytes in flight, as uet-htsim's `_in_flight` moves:
    /// sends add, the receiver's count takes off, a NACK takes the packet
    /// off and queues it, and an ACK that shows a queued packet arrived
    /// puts it back and unqueues it.
    #[test]
    fn the_senders_bytes_in_flight_follow_uet_htsim() {
        let mut tx = SackTx::default();
        let (w, ns) = (4150u32, |n: u64| Ps::from_ns(n));
        for n in 0..4 {
            tx.send(n, w, ns(n as u64), 0);
        }
        assert_eq!(tx.in_flight(), 4 * w as u64);
        assert_eq!(tx.deadline(ns(100)), Some(ns(100)));
        // Packet 1 is trimmed: NACKed, off the flight, queued.
        assert_eq!(
            tx.nacked(1),
            Some(Sent {
                at: ns(1),
                wire: w,
                ev: 0
            })
        );
        tx.resend(1);
        assert_eq!((tx.in_flight(), tx.next_rtx()), (3 * w as u64, Some((1, w))));
        // An ACK of packet 0 and, by the bitmap, 2 and 3: 3 packets counted.
        let ack = |cum, recvd: u32, acked, ts, base, bitmap| SackAck {
            cum,
            recvd: recvd as u64 * w as u64,
            acked,
            ts: ns(ts),
            base,
            bitmap,
        };
        let v = tx.ack(ns(20), &ack(1, 3, 3, 3, 2, 0b11));
        assert_eq!(v.in_flight, 0);
        assert_eq!(v.rtt, Some(ns(17)));
        assert_eq!(tx.deadline(ns(100)), None);
        // The resend, then an ACK of everything.
        tx.send(1, w, ns(30), 0);
        assert_eq!(tx.next_rtx(), None);
        let v = tx.ack(ns(40), &ack(4, 4, 1, 30, 5, 0));
        assert_eq!((v.in_flight, v.rtt), (0, Some(ns(10))));
        // A timeout of a packet that did arrive: off the flight, queued;
        // the ACK that counts it puts it back and unqueues it.
        tx.send(4, w, ns(50), 0);
        assert_eq!(tx.expired(ns(149), ns(100)), None);
        assert_eq!(tx.expired(ns(150), ns(100)), Some((4, 0)));
        tx.resend(4);
        assert_eq!(tx.in_flight(), 0);
        let v = tx.ack(ns(160), &ack(4, 5, 4, 50, 4, 1));
        assert_eq!((v.in_flight, tx.next_rtx(), v.rtt), (0, None, None));
    }
}
