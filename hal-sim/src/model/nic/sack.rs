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
//! Where switches drop rather than trim (`switch.drop_by_coin`,
//! uet-htsim's `-disable_trim`), SLEEK (`nic.sleek`, its `-sleek`) finds
//! losses without NACKs ([`Sleek`]): each ACK carries the receiver's count
//! of packets held out of order; once it reaches 1.5 windows' worth (at
//! least 5 packets, at most the window's ceiling) the sender enters
//! recovery and puts up again what the ACKs leave out from the cumulative
//! ACK, up to a window past it and below the first packet not yet sent
//! when recovery began, and may then resend past its window. A header-only
//! probe goes when a flow's ACKs stop (a base RTT and the target after the
//! last with nothing left to send, three base RTTs while new data waits,
//! five after a probe); its ACK, back with a delay below the target,
//! starts recovery from the cumulative ACK. The retransmission timer is
//! then uet-htsim's own, and in recovery a timeout leaves its packet to
//! SLEEK ([`SackTx::timed_out`]).
//!
//! Departures from uet-htsim are in docs/design-notes.md, "The SACK
//! transport and trimming" and "SLEEK and dropping switches".

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
    /// It was sent before (uet-htsim's `_rtx_times` above 0).
    pub resent: bool,
    /// SLEEK's recovery took it off the timer (uet-htsim's
    /// `rtxTimerExpired` takes its send time out of `_send_times` and
    /// leaves it in flight): it times out no more unless it is sent again.
    pub untimed: bool,
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
    /// SLEEK's state, when the flow runs it.
    pub sleek: Option<Sleek>,
}

/// SLEEK, uet-htsim's loss recovery for fabrics that drop rather than
/// trim (`UecSrc::runSleek`, its probes, and the retransmission timer as
/// uet-htsim runs it: `startRTO`, `recalculateRTO`).
#[derive(Clone, Debug, Default)]
pub struct Sleek {
    /// Loss recovery (`_loss_recovery_mode`): what the ACKs leave out
    /// below `recovery_seq` is sent again, past the window.
    pub recovery: bool,
    /// `_recovery_seqno`: the first packet not sent when recovery began.
    pub recovery_seq: u32,
    /// `_highest_rtx_sent`: the packet after the last one put up again.
    pub highest_rtx: u32,
    /// The last probe's number (`_probe_seqno`; the first is 1).
    pub probe_seq: u32,
    /// When a probe goes (`_probe_timer_when`), if one is due.
    pub probe_at: Option<Ps>,
    /// The probe event queued, if any: its time (an event at another
    /// time is stale).
    pub probe_event: Option<Ps>,
    /// The retransmission timer: the send time it runs for
    /// (`_rto_send_time`) and when it was started (it fires at the later
    /// of that send time plus the least RTO and its start); none while
    /// it is idle.
    timer: Option<(Ps, Ps)>,
    /// The packet the timer runs for was answered or put up again: the
    /// timer follows the oldest packet in flight once the event is done.
    retime: bool,
}

/// What SLEEK reads after an ACK the engine took.
#[derive(Clone, Copy, Debug)]
pub struct SleekAck {
    /// The ACK's cumulative ACK.
    pub cum: u32,
    /// The receiver's out-of-order count it carried.
    pub ooo: u32,
    /// Packets sent for the first time (`_highest_sent`).
    pub highest_sent: u32,
    /// New data is still to be sent (`_backlog > 0`).
    pub backlog: bool,
    /// It answered the last probe with a delay below the target: the
    /// flow enters recovery.
    pub probe_calm: bool,
    /// NSCC's window, its ceiling, and its base RTT and target delay.
    pub cwnd: u64,
    /// See `cwnd`.
    pub max_window: u64,
    /// See `cwnd`.
    pub base_rtt: Ps,
    /// See `cwnd`.
    pub target: Ps,
    /// Payload bytes a packet (uet-htsim's `_mss`, its average packet).
    pub mss: u64,
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
    /// The receiver's out-of-order count.
    pub ooo: u32,
    /// It answers a SLEEK probe (`acked` is the probe's number).
    pub probe: bool,
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
    /// The receiver's out-of-order count.
    pub ooo: u32,
    /// A SLEEK probe's ACK: the probe's round trip if it answers the
    /// last probe sent.
    pub probe: Option<Option<Ps>>,
}

impl SackTx {
    /// A sender's state, running SLEEK or not.
    pub fn new(sleek: bool) -> Self {
        SackTx {
            sleek: sleek.then(Sleek::default),
            ..Default::default()
        }
    }

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
        let mut resent = self.rtx.remove(&n).is_some();
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
        if let Some(old) = self.sent[i] {
            // Sent again before it was answered: one record, the latest
            // (its older time leaves the queue when it reaches the front).
            self.in_flight -= old.wire as i64;
            self.forget(&old);
            resent = true;
        }
        self.sent[i] = Some(Sent {
            at: now,
            wire,
            ev,
            resent,
            untimed: false,
        });
        if let Some(k) = &mut self.sleek {
            // `startRTO(now)`: an idle timer starts for this packet.
            k.timer.get_or_insert((now, now));
        }
        // Times only grow; at an equal time the queue keeps number order.
        let mut at = self.by_time.len();
        while at > 0 && self.by_time[at - 1] > (now, n) {
            at -= 1;
        }
        self.by_time.insert(at, (now, n));
        self.in_flight += wire as i64;
        self.settle(now);
    }

    /// When the timer fires, given the least RTO: the oldest packet in
    /// flight's send time plus it; under SLEEK, uet-htsim's timer, which
    /// may run for a later packet (it starts, when idle, with the packet
    /// sent).
    pub fn deadline(&self, rto: Ps) -> Option<Ps> {
        match &self.sleek {
            Some(k) => k.timer.map(|(at, start)| (at + rto).max(start)),
            None => self.by_time.front().map(|&(at, _)| at + rto),
        }
    }

    /// Forgets packet `n` as answered.
    fn answered(&mut self, n: u32) -> Option<Sent> {
        let s = self.sent.get_mut(n.wrapping_sub(self.first) as usize)?.take()?;
        self.forget(&s);
        Some(s)
    }

    /// A record leaves: under SLEEK, if the timer ran for it, the timer
    /// follows the oldest packet left (`recalculateRTO`).
    fn forget(&mut self, s: &Sent) {
        if let Some(k) = &mut self.sleek {
            if k.timer.is_some_and(|(at, _)| at == s.at) {
                k.retime = true;
            }
        }
    }

    /// Drops what was answered from the ring's front and the stale times
    /// from the queue's, so that both fronts are live; under SLEEK, a timer
    /// whose packet left follows the oldest packet in flight, started now.
    fn settle(&mut self, now: Ps) {
        while let Some(None) = self.sent.front() {
            self.sent.pop_front();
            self.first = self.first.wrapping_add(1);
        }
        while let Some(&(at, n)) = self.by_time.front() {
            if self.get(n).is_some_and(|s| s.at == at && !s.untimed) {
                break;
            }
            self.by_time.pop_front();
        }
        if let Some(k) = self.sleek.as_mut().filter(|k| k.retime) {
            k.retime = false;
            k.timer = self.by_time.front().map(|&(at, _)| (at, now));
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
            ooo,
            probe,
        } = *a;
        if recvd > self.recvd {
            self.in_flight -= (recvd - self.recvd) as i64;
            self.recvd = recvd;
        }
        let (rtt, probe) = match probe {
            // A probe's number is not a packet's: its round trip is the
            // probe's, if it answers the last one sent.
            true => {
                let last = self.sleek.as_ref().is_some_and(|k| k.probe_seq == acked);
                (None, Some(last.then(|| now - ts)))
            }
            false => (self.get(acked).filter(|s| s.at == ts).map(|s| now - s.at), None),
        };
        while let Some((&n, &w)) = self.rtx.first_key_value() {
            if n >= cum {
                break;
            }
            self.rtx.remove(&n);
            self.in_flight += w as i64;
        }
        // Everything below the cumulative ACK is answered.
        while !self.sent.is_empty() && self.first < cum {
            if let Some(s) = self.sent.pop_front().flatten() {
                self.forget(&s);
            }
            self.first = self.first.wrapping_add(1);
        }
        let mut bits = bitmap;
        while bits != 0 {
            let i = bits.trailing_zeros();
            bits &= bits - 1;
            self.arrived(base.wrapping_add(i));
        }
        self.settle(now);
        AckView {
            cum,
            recvd: self.recvd,
            in_flight: self.in_flight(),
            rtt,
            ev: None,
            ooo,
            probe,
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
    pub fn resend(&mut self, n: u32, now: Ps) {
        if let Some(s) = self.answered(n) {
            self.in_flight -= s.wire as i64;
            self.rtx.insert(n, s.wire);
            self.settle(now);
        }
    }

    /// The oldest packet in flight, if the timer fired by `now` (it has
    /// waited `rto`; under SLEEK, uet-htsim's timer): its number, entropy
    /// value and whether it was sent before.
    pub fn expired(&self, now: Ps, rto: Ps) -> Option<(u32, u16, bool)> {
        let &(at, n) = self.by_time.front()?;
        let due = match &self.sleek {
            Some(_) => self.deadline(rto).is_some_and(|d| d <= now),
            None => at + rto <= now,
        };
        due.then(|| {
            let s = self.get(n);
            (n, s.map_or(0, |s| s.ev), s.is_some_and(|s| s.resent))
        })
    }

    /// Packet `n` timed out (`rtxTimerExpired`); `resent`: it was sent
    /// before. The answer: whether it is sent again (off the bytes in
    /// flight, into the resend queue), as every timeout's is without
    /// SLEEK. Under SLEEK the timer stops, and in recovery the packet
    /// stays in flight but off the timer, left to SLEEK (the answer
    /// false): if it was sent before, SLEEK looks from it again at the
    /// next ACK and the timer waits for the next packet sent; if not, the
    /// timer follows the oldest packet left on it. Outside recovery it is
    /// sent again, and the timer follows the oldest packet left.
    pub fn timed_out(&mut self, n: u32, resent: bool, now: Ps) -> bool {
        let Some(k) = &mut self.sleek else {
            self.resend(n, now);
            return true;
        };
        k.timer = None;
        if k.recovery {
            if resent {
                k.highest_rtx = n;
            } else {
                k.retime = true;
            }
            let i = n.wrapping_sub(self.first) as usize;
            if let Some(Some(s)) = self.sent.get_mut(i) {
                s.untimed = true;
            }
            self.settle(now);
            return false;
        }
        k.retime = true;
        self.resend(n, now);
        // `resend` retimes only when it found the packet.
        self.settle(now);
        true
    }

    /// Whether the flow is in SLEEK's recovery with a packet to resend:
    /// it may then send past its window (`can_send_NSCC`).
    pub fn recovering(&self) -> bool {
        self.sleek.as_ref().is_some_and(|k| k.recovery) && !self.rtx.is_empty()
    }

    /// SLEEK after an ACK the engine took (`processAck`'s end and
    /// `runSleek`, uet-htsim at 40ccb05): the probe timer is set again,
    /// recovery entered or left, and the packets the receiver's
    /// out-of-order count shows lost put up to be sent again. The answer:
    /// how many were put up (`sleek_pkts`).
    pub fn sleek_ack(&mut self, now: Ps, a: &SleekAck) -> u32 {
        let Some(k) = &mut self.sleek else { return 0 };
        // The probe timer: while packets are unanswered or new data waits,
        // a probe goes one base RTT and the target after this ACK with
        // nothing left to send, three base RTTs otherwise.
        k.probe_at = (a.cum < a.highest_sent || a.backlog).then(|| {
            now + match a.backlog {
                false => a.base_rtt + a.target,
                true => Ps::from_ps(3 * a.base_rtt.as_ps()),
            }
        });
        if a.probe_calm {
            k.recovery = true;
            k.recovery_seq = a.highest_sent;
            k.highest_rtx = a.cum;
        }
        // runSleek: the threshold is 1.5 windows (as uet-htsim's float
        // product, truncated), at most the ceiling, at least 5 packets.
        let threshold = (a.cwnd + a.cwnd / 2).min(a.max_window).max(5 * a.mss);
        if k.recovery && a.cum >= k.recovery_seq {
            k.recovery = false;
        }
        if (a.ooo as u64) < threshold / a.mss.max(1) && !k.recovery {
            return 0;
        }
        if !k.recovery && self.rtx.is_empty() {
            k.recovery = true;
            k.recovery_seq = a.highest_sent;
        }
        let end = (a.cum as u64 + a.cwnd / a.mss.max(1)).min(k.recovery_seq as u64) as u32;
        let mut from = a.cum.max(k.highest_rtx);
        let mut put = 0;
        while from < end {
            // Answered, or already waiting to go again: skipped.
            if let Some(s) = self.answered(from) {
                self.in_flight -= s.wire as i64;
                self.rtx.insert(from, s.wire);
                put += 1;
                if let Some(k) = &mut self.sleek {
                    k.highest_rtx = from + 1;
                }
            }
            from += 1;
        }
        self.settle(now);
        put
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

/// What the ACK of packet or probe `p` (number `acked`) carries: the
/// receiver's byte count, the bitmap and its base, and its out-of-order
/// count, as `counts` gives them; `p`'s EV; whether it answers a probe.
fn sack_aux(p: &Packet, acked: u32, counts: (u64, u32, u64, u32), probe: bool) -> Aux {
    let (recvd, base, bitmap, ooo) = counts;
    Aux::Sack {
        recvd,
        acked,
        base,
        bitmap,
        ev: p.ev(),
        ooo,
        probe,
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
        if p.sleek_probe() {
            return self.sack_probe(cx, pkt, p, r);
        }
        // The answer, and an ACK's byte count, bitmap and out-of-order
        // count.
        let (answer, recvd, bitmap, ooo) = match self.sack_rx.get_mut(r.sack_at, flow) {
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
                    RxAnswer::Ack { base } => (a, rx.recvd, rx.bitmap(base), rx.ooo_count),
                    _ => (a, 0, 0, 0),
                }
            }
            // A late copy of a finished flow's data: a duplicate.
            None => (RxAnswer::Ack { base: n }, 0, 0, 0),
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
                let sack = sack_aux(p, n, (recvd, base, bitmap, ooo), false);
                self.send_ack(cx, flow, pkt, p, &mut r, false, Some(sack));
            }
        }
    }

    /// A SLEEK probe reached the receiver (uet-htsim's `processData` of a
    /// `DATA_PROBE`): an ACK at once, marked as the probe's, with the
    /// bitmap from `max(probe − 63, cum + 1)` and the out-of-order count;
    /// nothing else changes. A probe a switch cut goes unanswered.
    fn sack_probe(&mut self, cx: &mut Ctx, pkt: u32, p: &Packet, mut r: super::flows::Receiver) {
        if p.trimmed() {
            return;
        }
        let n = p.seq;
        let (recvd, base, bitmap, ooo) = match self.sack_rx.get(r.sack_at, p.flow) {
            Some(rx) => {
                let base = rx.base(n);
                (rx.recvd, base, rx.bitmap(base), rx.ooo_count)
            }
            None => (0, n, 0, 0),
        };
        r.ce_pending = p.ecn() == EcnBits::Ce;
        let sack = sack_aux(p, n, (recvd, base, bitmap, ooo), true);
        self.send_ack(cx, p.flow, pkt, p, &mut r, false, Some(sack));
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
            ooo,
            probe,
        }) = cx.pkts.aux(p)
        else {
            return None;
        };
        // Every ACK that reaches the sender counts, its flow finished or
        // not (uet-htsim's `processAck` counts before it looks at the
        // flow): a sprayed flow's last ACKs can overtake the ones before.
        cx.metrics.counters.acks += 1;
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
            ooo,
            probe,
        };
        let tx = f.sack.as_deref_mut()?;
        let mut view = tx.ack(now, &a);
        f.snd_una = f.snd_una.max((cum as u64 * payload).min(size));
        // The engine's path choice takes the ACK's EV (uet-htsim's
        // `processEv`).
        view.ev = cx.cfg.spray.map(|_| Entropy::new(ev));
        if let Some(Some(rtt)) = view.probe {
            // The probe's round trip moves the delay average, never the
            // base RTT; one below the base RTT counts as no delay
            // (uet-htsim's probe ACK leaves the average alone there).
            let at = self.sender(cx, p.flow).and_then(|f| f.engine);
            if let Some(n) = self.nscc_view(at) {
                view.rtt = Some(rtt.max(Ps::from_ns(n.base_rtt_ns as u64)));
            }
        }
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
        tx.resend(n, now);
        let at = f.engine;
        self.sender_to_engine(cx, p.flow, at, EventKind::Nack(nack));
        self.arm_rto(cx, p.flow);
        self.try_send(cx);
    }

    /// The SACK transport's timer of `flow` fired: the oldest packet in
    /// flight, if it waited the least RTO, is sent again (uet-htsim's
    /// `rtxTimerExpired`: the engine's timeout, one packet off the bytes in
    /// flight), and the timer follows the next oldest. Under SLEEK's
    /// recovery the packet is left to SLEEK.
    pub(super) fn sack_rto(&mut self, cx: &mut Ctx, flow: u32) {
        let (rto, now, payload, sleek) = (cx.cfg.rto_ps, cx.now, cx.cfg.payload, cx.cfg.sleek);
        let Some(f) = self.sender_mut(cx, flow) else { return };
        if sleek && f.rto_deadline != now {
            // Under SLEEK the deadline can move earlier, and an event
            // queued for a later one is stale.
            return;
        }
        f.rto_pending = false;
        let Some(tx) = f.sack.as_deref_mut() else { return };
        if let Some((n, ev, resent)) = tx.expired(now, rto) {
            if tx.timed_out(n, resent, now) {
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
        }
        self.arm_rto(cx, flow);
        self.try_send(cx);
    }

    /// The SACK transport's timer of `flow`: one event at the oldest
    /// packet's deadline (an early one finds nothing expired and comes
    /// again; deadlines only move later, as the oldest packets are
    /// answered). Under SLEEK a deadline can move earlier: an event is
    /// queued for it, and the one queued before goes stale.
    pub(super) fn sack_arm(&mut self, cx: &mut Ctx, flow: u32) {
        let (rto, now, sleek) = (cx.cfg.rto_ps, cx.now, cx.cfg.sleek);
        let Some(f) = self.sender_mut(cx, flow) else { return };
        let Some(deadline) = f.sack.as_deref().and_then(|t| t.deadline(rto)) else {
            return;
        };
        let deadline = deadline.max(now);
        if !f.rto_pending || (sleek && deadline < f.rto_deadline) {
            f.rto_pending = true;
            f.rto_deadline = deadline;
            cx.q.push(deadline, Ev::Rto { flow });
        }
    }

    /// After an ACK the engine took, SLEEK's part (`processAck`): the
    /// probe timer, recovery, and what to send again.
    pub(super) fn sleek_after_ack(&mut self, cx: &mut Ctx, flow: u32, v: &AckView) {
        let (now, payload) = (cx.now, cx.cfg.payload as u64);
        let Some(f) = self.sender(cx, flow) else { return };
        let Some(n) = self.nscc_view(f.engine) else { return };
        let target = Ps::from_ns(n.target_ns as u64);
        // The delay the ACK showed (`processAck`'s): a probe's round trip
        // less the base RTT, none below it; a stale probe's, the average.
        let probe_calm = match v.probe {
            Some(Some(rtt)) => rtt.as_ns().saturating_sub(n.base_rtt_ns as u64) < target.as_ns(),
            Some(None) => (n.avg_delay_ns as u64) < target.as_ns(),
            None => false,
        };
        let a = SleekAck {
            cum: v.cum,
            ooo: v.ooo,
            highest_sent: f.snd_nxt.div_ceil(payload) as u32,
            backlog: f.snd_nxt < f.app_limit,
            probe_calm,
            cwnd: n.window as u64,
            max_window: n.max_window as u64,
            base_rtt: Ps::from_ns(n.base_rtt_ns as u64),
            target,
            mss: payload,
        };
        let Some(f) = self.sender_mut(cx, flow) else { return };
        let Some(tx) = f.sack.as_deref_mut() else { return };
        let put = tx.sleek_ack(now, &a);
        cx.metrics.counters.sleek_pkts += put as u64;
        self.sleek_arm_probe(cx, flow);
        self.arm_rto(cx, flow);
    }

    /// Queues `flow`'s probe event if its probe is due before the one
    /// queued (or none is).
    fn sleek_arm_probe(&mut self, cx: &mut Ctx, flow: u32) {
        let Some(k) = self
            .sender_mut(cx, flow)
            .and_then(|f| f.sack.as_deref_mut()?.sleek.as_mut())
        else {
            return;
        };
        if let Some(at) = k.probe_at {
            if k.probe_event.is_none_or(|e| at < e) {
                k.probe_event = Some(at);
                cx.q.push(at, Ev::SleekProbe { flow });
            }
        }
    }

    /// `flow`'s probe event (`UecSrc::sendProbe`): when the probe is due
    /// now, a header-only probe goes out, numbered, on the next entropy
    /// value of the flow's chooser, and the next is due five base RTTs
    /// later.
    pub fn sleek_probe(&mut self, cx: &mut Ctx, flow: u32) {
        let now = cx.now;
        let Some(base) = self
            .sender(cx, flow)
            .and_then(|f| self.nscc_view(f.engine))
            .map(|n| n.base_rtt_ns as u64)
        else {
            return;
        };
        let Some(k) = self
            .sender_mut(cx, flow)
            .and_then(|f| f.sack.as_deref_mut()?.sleek.as_mut())
        else {
            return;
        };
        if k.probe_event != Some(now) {
            return;
        }
        k.probe_event = None;
        match k.probe_at {
            Some(at) if at == now => {}
            Some(_) => return self.sleek_arm_probe(cx, flow),
            None => return,
        }
        k.probe_seq += 1;
        k.probe_at = Some(now + Ps::from_ns(5 * base));
        let seq = k.probe_seq;
        self.sleek_arm_probe(cx, flow);
        let ev = self
            .sender(cx, flow)
            .and_then(|f| f.engine)
            .and_then(|h| self.engine.next_ev(h))
            .map(cc_core::path::Ev::get);
        cx.metrics.counters.sleek_probes += 1;
        let (dst, header) = (cx.flows[flow as usize].dst_host, cx.cfg.header);
        self.send_ctrl(cx, dst, flow, PktKind::Data, |_, q| {
            q.seq = seq;
            q.len = 0;
            q.wire = header;
            q.ts_ps = now;
            q.set_ecn(EcnBits::Ect);
            q.set_sleek_probe(true);
            if let Some(ev) = ev {
                q.set_ev(ev);
                q.hash = ev_hash(q.hash, ev);
            }
        });
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
                let mut resent = self.rtx.remove(&n).is_some();
                if let Some(old) = self.sent.remove(&n) {
                    self.by_time.remove(&(old.at, n));
                    self.in_flight -= old.wire as i64;
                    resent = true;
                }
                self.sent.insert(
                    n,
                    Sent {
                        at: now,
                        wire,
                        ev,
                        resent,
                        untimed: false,
                    },
                );
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
            pub fn expired(&self, now: Ps, rto: Ps) -> Option<(u32, u16, bool)> {
                let &(at, n) = self.by_time.first()?;
                (at + rto <= now).then(|| {
                    let s = self.sent.get(&n);
                    (n, s.map_or(0, |s| s.ev), s.is_some_and(|s| s.resent))
                })
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
                            ooo: 0,
                            probe: false,
                        };
                        let v = tx.ack(t, &a);
                        assert_eq!((v.in_flight, v.rtt), m.ack(t, &a), "seed {seed} step {step}");
                    }
                    7 => {
                        let n = cum + draw(32) as u32;
                        assert_eq!(tx.nacked(n), m.sent.get(&n).copied(), "seed {seed} step {step}");
                        tx.resend(n, t);
                        m.resend(n);
                    }
                    8 => {
                        let e = tx.expired(t, rto);
                        assert_eq!(e, m.expired(t, rto), "seed {seed} step {step}");
                        if let Some((n, _, _)) = e {
                            tx.resend(n, t);
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
                ev: 0,
                resent: false,
                untimed: false
            })
        );
        tx.resend(1, ns(10));
        assert_eq!((tx.in_flight(), tx.next_rtx()), (3 * w as u64, Some((1, w))));
        // An ACK of packet 0 and, by the bitmap, 2 and 3: 3 packets counted.
        let ack = |cum, recvd: u32, acked, ts, base, bitmap| SackAck {
            cum,
            recvd: recvd as u64 * w as u64,
            acked,
            ts: ns(ts),
            base,
            bitmap,
            ooo: 0,
            probe: false,
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
        assert_eq!(tx.expired(ns(150), ns(100)), Some((4, 0, false)));
        tx.resend(4, ns(150));
        assert_eq!(tx.in_flight(), 0);
        let v = tx.ack(ns(160), &ack(4, 5, 4, 50, 4, 1));
        assert_eq!((v.in_flight, tx.next_rtx(), v.rtt), (0, None, None));
    }

    /// SLEEK as uet-htsim's `runSleek` and `processAck` run it, worked by
    /// hand: 4150-byte packets of 4086 bytes of payload, a window of 8
    /// packets (32 680 bytes), its ceiling 64 packets, a base RTT of
    /// 10 µs and a target of 14 µs.
    #[test]
    fn sleek_resends_what_the_out_of_order_count_shows_lost() {
        let (w, mss, ns) = (4150u32, 4086u64, |n: u64| Ps::from_ns(n));
        let mut tx = SackTx::new(true);
        for n in 0..20 {
            tx.send(n, w, ns(n as u64), 0);
        }
        // The timer runs for the first packet sent.
        let rto = ns(1000);
        assert_eq!(tx.deadline(rto), Some(ns(1000)));
        let a = |cum, ooo, backlog| SleekAck {
            cum,
            ooo,
            highest_sent: 20,
            backlog,
            probe_calm: false,
            cwnd: 8 * mss,
            max_window: 64 * mss,
            base_rtt: ns(10_000),
            target: ns(14_000),
            mss,
        };
        // Packets 0 and 1 arrived; 2 and 3 are lost, 4 ..= 15 held: the
        // receiver's count 12, the threshold max(min(1.5 · 8, 64), 5) = 12
        // packets. Below it nothing happens; the probe is due three base
        // RTTs on while new data waits, a base RTT and the target after.
        let ack = SackAck {
            cum: 2,
            recvd: 14 * w as u64,
            acked: 15,
            ts: ns(15),
            base: 4,
            bitmap: 0xfff,
            ooo: 11,
            probe: false,
        };
        let v = tx.ack(ns(20_000), &ack);
        assert_eq!((v.ooo, v.probe), (11, None));
        // The first packet, answered, hands the timer to the oldest left,
        // packet 2: started now, and past due (`startRTO` fires it now).
        assert_eq!(tx.deadline(rto), Some(ns(20_000)));
        assert_eq!(tx.sleek_ack(ns(20_000), &a(2, 11, true)), 0);
        let k = tx.sleek.as_ref().unwrap();
        assert_eq!((k.recovery, k.probe_at), (false, Some(ns(50_000))));
        assert_eq!(tx.sleek_ack(ns(20_000), &a(2, 11, false)), 0);
        assert_eq!(tx.sleek.as_ref().unwrap().probe_at, Some(ns(44_000)));
        // At the threshold: recovery from packet 2 up to the first packet
        // not sent (20), at most a window (8 packets) past the cumulative
        // ACK: 2 and 3 go up again, 4 ..= 9 were answered.
        assert_eq!(tx.sleek_ack(ns(21_000), &a(2, 12, true)), 2);
        let k = tx.sleek.as_ref().unwrap();
        assert_eq!((k.recovery, k.recovery_seq, k.highest_rtx), (true, 20, 4));
        assert_eq!(tx.next_rtx(), Some((2, w)));
        assert_eq!(tx.in_flight(), 4 * w as u64);
        // In recovery a resend goes past the window; the timer follows the
        // oldest packet left in flight (16, sent at 16 ns).
        assert!(tx.recovering());
        assert_eq!(tx.deadline(rto), Some(ns(21_000)));
        // The next ACK puts up nothing below `highest_rtx` again.
        assert_eq!(tx.sleek_ack(ns(22_000), &a(2, 12, true)), 0);
        // Resent, then answered: recovery ends at the cumulative ACK 20.
        tx.send(2, w, ns(23_000), 0);
        tx.send(3, w, ns(23_001), 0);
        assert!(!tx.recovering());
        assert!(tx.get(2).is_some_and(|s| s.resent));
        assert_eq!(tx.sleek_ack(ns(40_000), &a(20, 0, false)), 0);
        assert!(!tx.sleek.as_ref().unwrap().recovery);
    }

    /// A timeout under SLEEK (`rtxTimerExpired`): outside recovery the
    /// packet goes again and the timer follows the oldest left; in
    /// recovery the packet is left to SLEEK, and one sent before becomes
    /// where SLEEK looks from next; a probe's ACK below the target begins
    /// recovery from the first packet not sent.
    #[test]
    fn sleek_timeouts_and_probes_follow_uet_htsim() {
        let (w, mss, ns) = (4150u32, 4086u64, |n: u64| Ps::from_ns(n));
        let rto = ns(1000);
        let mut tx = SackTx::new(true);
        for n in 0..4 {
            tx.send(n, w, ns(n as u64), 0);
        }
        assert_eq!(tx.expired(ns(999), rto), None);
        assert_eq!(tx.expired(ns(1000), rto), Some((0, 0, false)));
        assert!(tx.timed_out(0, false, ns(1000)));
        assert_eq!((tx.next_rtx(), tx.in_flight()), (Some((0, w)), 3 * w as u64));
        // The timer, started again now, for packet 1 (sent at 1 ns): due at
        // once.
        assert_eq!(tx.deadline(rto), Some(ns(1001)));
        // A probe's ACK: its round trip if it answers the last probe.
        tx.sleek.as_mut().unwrap().probe_seq = 1;
        let probe = |acked| SackAck {
            cum: 0,
            recvd: 0,
            acked,
            ts: ns(2000),
            base: 1,
            bitmap: 0,
            ooo: 0,
            probe: true,
        };
        assert_eq!(tx.ack(ns(2500), &probe(1)).probe, Some(Some(ns(500))));
        assert_eq!(tx.ack(ns(2500), &probe(7)).probe, Some(None));
        let calm = SleekAck {
            cum: 0,
            ooo: 0,
            highest_sent: 4,
            backlog: false,
            probe_calm: true,
            cwnd: 8 * mss,
            max_window: 64 * mss,
            base_rtt: ns(10_000),
            target: ns(14_000),
            mss,
        };
        // Recovery from 0 to 4; packet 0 waits already, 1 ..= 3 go up.
        assert_eq!(tx.sleek_ack(ns(2500), &calm), 3);
        assert_eq!(tx.sleek.as_ref().unwrap().highest_rtx, 4);
        // Resent, then timed out in recovery: left to SLEEK, which looks
        // from it again.
        tx.send(1, w, ns(3000), 0);
        assert_eq!(tx.expired(ns(4000), rto), Some((1, 0, true)));
        assert!(!tx.timed_out(1, true, ns(4000)));
        let k = tx.sleek.as_ref().unwrap();
        assert_eq!((k.highest_rtx, tx.deadline(rto)), (1, None));
        // The next packet sent starts the idle timer for itself.
        tx.send(2, w, ns(4100), 0);
        assert_eq!(tx.deadline(rto), Some(ns(5100)));
        // A packet never sent again, timed out in recovery, stays in
        // flight off the timer, which follows the oldest left on it. (The
        // timer runs for packet 5, sent when it was idle; what times out
        // is the oldest, 4.)
        tx.send(4, w, ns(4200), 0);
        assert_eq!(tx.expired(ns(5100), rto), Some((2, 0, true)));
        assert!(!tx.timed_out(2, true, ns(5100)));
        tx.send(5, w, ns(5150), 0);
        let flight = tx.in_flight();
        assert_eq!(tx.expired(ns(6149), rto), None);
        assert_eq!(tx.expired(ns(6150), rto), Some((4, 0, false)));
        assert!(!tx.timed_out(4, false, ns(6150)));
        assert_eq!((tx.in_flight(), tx.next_rtx()), (flight, Some((0, w))));
        assert_eq!(tx.deadline(rto), Some(ns(6150)));
        assert_eq!(tx.expired(ns(6150), rto), Some((5, 0, false)));
    }
}
