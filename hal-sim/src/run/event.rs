//! The simulator's clock and event queue, ordered by (time, insertion
//! sequence), so equal-time events run in the order they were scheduled
//! and a run is deterministic for a seed.
//!
//! Four files, because the queue serves two shapes of run, and one
//! structure served neither well (docs/simulator.md, "Speed", has what
//! was tried):
//!
//! - `event.rs` (this file): the time type, the events, which slot each
//!   waits in, and the queue's push and pop, which choose among the three
//!   below;
//! - `ring.rs`: while no more than 128 entries are near (a 2-to-1 keeps
//!   about fifty), one sorted ring: the first is at hand, and a new one,
//!   nearly always among the latest, goes in a few places from the back;
//! - `calendar.rs`: past that (a 320-host fabric keeps thousands pending
//!   within a link's delay of the clock), buckets of 512 ps threaded
//!   through the slots, a bitmap to find the first occupied one, and a
//!   heap for entries beyond the calendar's 8.4 µs reach;
//! - `wakes.rs`: the NICs' wake-ups, which move on every ACK, one entry a
//!   host, keyed as the other entries are so that one compare orders a
//!   wake-up among them.

mod calendar;
mod ring;
mod wakes;

use calendar::Calendar;
#[cfg(test)]
use calendar::{BUCKETS, BUCKET_BITS};
use wakes::{Wakes, NO_WAKE};

/// Simulated time in picoseconds, an instant since the run began or a span
/// between two (2^64 ps ≈ 213 days). Picoseconds keep a 1.6 Tb/s link's
/// per-byte time (5 ps) exact. Sums and differences stay `Ps`; a span
/// leaves the type only through [`Ps::as_ns`] and friends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ps(u64);

/// Picoseconds per nanosecond.
pub const PS_PER_NS: u64 = 1_000;

impl Ps {
    /// The start of the run, or no time at all.
    pub const ZERO: Ps = Ps(0);
    /// Later than any event: "never".
    pub const NEVER: Ps = Ps(u64::MAX);

    /// `ps` picoseconds.
    pub const fn from_ps(ps: u64) -> Ps {
        Ps(ps)
    }

    /// `ns` nanoseconds (saturating at [`Ps::NEVER`]).
    pub const fn from_ns(ns: u64) -> Ps {
        Ps(ns.saturating_mul(PS_PER_NS))
    }

    /// `ms` milliseconds, to the picosecond.
    pub fn from_ms_f64(ms: f64) -> Ps {
        Ps((ms * 1e9) as u64)
    }

    /// In picoseconds.
    pub const fn as_ps(self) -> u64 {
        self.0
    }

    /// In whole nanoseconds, rounded down.
    pub const fn as_ns(self) -> u64 {
        self.0 / PS_PER_NS
    }

    /// In nanoseconds, for reports.
    pub fn as_ns_f64(self) -> f64 {
        self.0 as f64 / PS_PER_NS as f64
    }

    /// `self − earlier`, or zero if `earlier` is later.
    pub const fn saturating_sub(self, earlier: Ps) -> Ps {
        Ps(self.0.saturating_sub(earlier.0))
    }
}

impl std::fmt::Display for Ps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ps", self.0)
    }
}

impl std::ops::Add for Ps {
    type Output = Ps;
    fn add(self, o: Ps) -> Ps {
        Ps(self.0 + o.0)
    }
}

impl std::ops::AddAssign for Ps {
    fn add_assign(&mut self, o: Ps) {
        self.0 += o.0;
    }
}

impl std::ops::Sub for Ps {
    type Output = Ps;
    fn sub(self, o: Ps) -> Ps {
        Ps(self.0 - o.0)
    }
}

impl std::ops::SubAssign for Ps {
    fn sub_assign(&mut self, o: Ps) {
        self.0 -= o.0;
    }
}

/// Serialization time of `bytes` on a link of `bps` bit/s, rounded up.
pub fn ser_ps(bytes: u32, bps: u64) -> Ps {
    Ps((bytes as u64 * 8 * 1_000_000_000_000).div_ceil(bps.max(1)))
}

/// What happens at an instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ev {
    /// A port finished serializing a packet.
    PortFree {
        /// The node (switch or host) the port belongs to, an index into
        /// the network's nodes.
        node: u32,
        /// The port's index on that node.
        port: u16,
        /// The packet first in the port's queues when the event was
        /// queued, or [`NO_PKT`]: a hint only (the loop prefetches it; an
        /// urgent packet may come first), never read to decide anything.
        next: u32,
    },
    /// A packet arrived whole at a node's port.
    Arrive {
        /// The receiving node, an index into the network's nodes.
        node: u32,
        /// The port it came in by.
        port: u16,
        /// Packet (slab index).
        pkt: u32,
    },
    /// A packet that arrived at a switch with a forwarding latency
    /// (`switch.latency_ns`) reaches its egress queue.
    Forward {
        /// The switch, an index into the network's nodes.
        node: u32,
        /// The egress port its arrival chose.
        egress: u16,
        /// Packet (slab index).
        pkt: u32,
    },
    /// A flow starts.
    FlowStart {
        /// The flow's id (its index in `World::flows`).
        flow: u32,
    },
    /// An on/off flow's application hands over its next burst.
    AppData {
        /// The flow's id.
        flow: u32,
    },
    /// A flow's congestion-control timer (valid if `gen` is current).
    CcTimer {
        /// The flow's id.
        flow: u32,
        /// Generation; older ones were cancelled.
        gen: u32,
    },
    /// A flow's retransmission deadline may have passed (the flow keeps the
    /// deadline; one event per flow is queued at a time).
    Rto {
        /// The flow's id.
        flow: u32,
    },
    /// A SLEEK sender's probe may be due (the flow keeps when; one event
    /// per flow is live at a time).
    SleekProbe {
        /// The flow's id.
        flow: u32,
    },
    /// A host NIC's pacer may have a flow ready (see [`EventQueue::wake`]).
    NicWake {
        /// Host index.
        host: u32,
    },
    /// A PFC frame reaches the egress port it pauses or resumes.
    Pause {
        /// The node whose port it is.
        node: u32,
        /// The port.
        port: u16,
        /// XOFF (true) or XON (false).
        on: bool,
    },
    /// A core of a NIC's congestion-control processor finished its event
    /// (`model::nic::processor`).
    CcDone {
        /// Host index.
        host: u32,
        /// The core.
        core: u16,
    },
    /// A data packet has drained from a host NIC's Rx buffer to the host
    /// (`nic.rx_drain_gbps`): its receiver handles it now.
    RxDeliver {
        /// Host index.
        host: u32,
        /// Packet (slab index).
        pkt: u32,
    },
    /// Periodic metrics sample.
    Sample,
}

/// A pending entry: time << 64 | insertion sequence << 24 | slot of the
/// event in the slab, one integer ordered as (time, sequence): the
/// sequence keeps equal-time events in insertion order.
pub(crate) type Key = u128;

pub(crate) const SLOT_BITS: u32 = 24;

const fn key(t: Ps, seq: u64, slot: u32) -> Key {
    (t.0 as u128) << 64 | (seq << SLOT_BITS | slot as u64) as u128
}

/// The key of a host's wake-up at `t` under sequence number `seq`: an
/// event key naming no slot, so one compare orders it among the others.
const fn wake_key(t: Ps, seq: u64) -> Key {
    key(t, seq, 0)
}

const fn time_of(k: Key) -> Ps {
    Ps((k >> 64) as u64)
}

/// The pending events. Host wake-ups live apart, one per host, moved in
/// place when a NIC's pacer re-plans (every ACK may change a rate), so
/// they leave no superseded entries behind in the calendar.
#[derive(Debug, Default)]
pub struct EventQueue {
    /// The pending entries, and each event slot's event.
    cal: Calendar,
    wakes: Wakes,
    seq: u64,
    popped: u64,
    /// See [`EventQueue::next_pkt`].
    next_pkt: u32,
}

/// No packet (an index past any slab's).
pub const NO_PKT: u32 = u32::MAX;

impl EventQueue {
    /// Schedules `ev` at `t`.
    pub fn push(&mut self, t: Ps, ev: Ev) {
        self.seq += 1;
        self.push_reserved(t, ev, self.seq);
    }

    /// Reserves `n` sequence numbers for events queued later with
    /// [`EventQueue::push_reserved`]; returns the first.
    pub fn reserve(&mut self, n: u64) -> u64 {
        let first = self.seq + 1;
        self.seq += n;
        first
    }

    /// Schedules `ev` at `t` under sequence number `seq` (from
    /// [`EventQueue::reserve`]): it runs where it would have run had it
    /// been queued when the number was reserved.
    pub fn push_reserved(&mut self, t: Ps, ev: Ev, seq: u64) {
        let slot = self.cal.put(ev);
        debug_assert!(slot < 1 << SLOT_BITS, "more than 2^24 pending events");
        self.cal.push(key(t, seq, slot));
    }

    /// Schedules `host`'s wake-up at `t`, replacing the one pending (if
    /// any): it runs in the order of this call among events at time `t`.
    #[inline(always)]
    pub fn wake(&mut self, host: u32, t: Ps) {
        self.seq += 1;
        self.wakes.set(host, wake_key(t, self.seq));
    }

    /// The earliest event. The common case, the near entries in the ring
    /// (every pop of a 2-to-1), is a short path: the ring's first or the
    /// first wake-up, whichever is earlier. The rest (the calendar's
    /// buckets, the far heap) is out of line, so that the short path
    /// saves and restores few registers. Not inlined: in the
    /// loop it measured slower (the loop spills around it).
    #[inline(never)]
    pub fn pop(&mut self) -> Option<(Ps, Ev)> {
        if let Some(k) = self.cal.ring_first() {
            let w = self.wakes.first();
            if w < k {
                return Some(self.take_wake(w));
            }
            let slot = self.cal.take_ring_first(k);
            self.next_pkt = NO_PKT;
            return Some(self.take_slot(time_of(k), slot));
        }
        self.pop_other()
    }

    /// [`EventQueue::pop`] when the ring holds no entry: the entries are
    /// in the calendar's buckets or far, or there are only wake-ups.
    #[inline(never)]
    fn pop_other(&mut self) -> Option<(Ps, Ev)> {
        let main = self.cal.first();
        let w = self.wakes.first();
        if w != NO_WAKE && main.is_none_or(|f| w < f.key) {
            return Some(self.take_wake(w));
        }
        let f = main?;
        // The next entry in the buckets: if an arrival, its packet is what
        // the loop prefetches.
        self.next_pkt = match self.cal.take(f).and_then(|next| self.cal.ev(next)) {
            Some(Ev::Arrive { pkt, .. } | Ev::PortFree { next: pkt, .. }) => *pkt,
            _ => NO_PKT,
        };
        Some(self.take_slot(time_of(f.key), f.slot))
    }

    /// Takes the first wake-up, `w` (keys are distinct, each with its own
    /// sequence number, so the caller found it below every other entry).
    #[inline(always)]
    fn take_wake(&mut self, w: Key) -> (Ps, Ev) {
        self.popped += 1;
        (
            time_of(w),
            Ev::NicWake {
                host: self.wakes.pop_min(),
            },
        )
    }

    /// The event of an entry at `t` taken from the calendar; its slot is
    /// free.
    #[inline(always)]
    fn take_slot(&mut self, t: Ps, slot: u32) -> (Ps, Ev) {
        self.popped += 1;
        (t, self.cal.take_event(slot))
    }

    /// The packet of the next arrival, if the calendar's buckets hold
    /// the queue's entries and their next is one (else [`NO_PKT`]), found
    /// at the last pop: the loop prefetches it while it handles the event
    /// popped, since a fabric's packets are mostly out of cache by the
    /// time they arrive. A hint only: a wake-up or an entry pushed since
    /// may come first.
    pub fn next_pkt(&self) -> u32 {
        self.next_pkt
    }

    /// Events handled so far.
    pub fn handled(&self) -> u64 {
        self.popped
    }

    /// Events pending.
    pub fn len(&self) -> usize {
        self.cal.len() + self.wakes.len()
    }

    /// Whether nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn time_then_insertion_order() {
        let mut q = EventQueue::default();
        q.push(Ps(20), Ev::Sample);
        q.push(Ps(10), Ev::FlowStart { flow: 1 });
        q.push(Ps(10), Ev::FlowStart { flow: 2 });
        q.push(Ps(5), Ev::FlowStart { flow: 3 });
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (Ps(5), Ev::FlowStart { flow: 3 }),
                (Ps(10), Ev::FlowStart { flow: 1 }),
                (Ps(10), Ev::FlowStart { flow: 2 }),
                (Ps(20), Ev::Sample)
            ]
        );
        assert_eq!(q.handled(), 4);
    }

    #[test]
    fn a_wake_up_is_moved_in_place_and_keeps_call_order() {
        let mut q = EventQueue::default();
        q.push(Ps(10), Ev::FlowStart { flow: 1 });
        q.wake(7, Ps(30));
        q.wake(8, Ps(20));
        q.wake(7, Ps(10)); // moved earlier: after FlowStart 1 (called later)
        q.push(Ps(10), Ev::FlowStart { flow: 2 });
        q.wake(8, Ps(40)); // moved later
        q.wake(9, Ps(40));
        assert_eq!(q.len(), 5);
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (Ps(10), Ev::FlowStart { flow: 1 }),
                (Ps(10), Ev::NicWake { host: 7 }),
                (Ps(10), Ev::FlowStart { flow: 2 }),
                (Ps(40), Ev::NicWake { host: 8 }),
                (Ps(40), Ev::NicWake { host: 9 }),
            ]
        );
        assert!(q.is_empty());
        assert_eq!(q.handled(), 5);
    }

    #[test]
    fn many_wake_ups_come_out_in_time_order() {
        let mut q = EventQueue::default();
        let mut x = 12345u64;
        let mut last = vec![Ps::ZERO; 64];
        for _ in 0..2000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let host = (x >> 58) as u32;
            let t = Ps((x >> 20) % 1000);
            q.wake(host, t);
            last[host as usize] = t;
        }
        let out: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert!(out.windows(2).all(|w| w[0].0 <= w[1].0));
        assert_eq!(out.len(), 64);
        for (t, ev) in out {
            let Ev::NicWake { host } = ev else { panic!("{ev:?}") };
            assert_eq!(t, last[host as usize]);
        }
    }

    /// The tests' random steps: a 64-bit linear congruential generator.
    fn lcg(mut x: u64) -> impl FnMut() -> u64 {
        move || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            x >> 11
        }
    }

    /// Pops one event, checks that it is the reference's first and takes
    /// that out; its time.
    fn pop_checked(q: &mut EventQueue, reference: &mut BTreeMap<(Ps, u64), Ev>) -> Option<Ps> {
        let (t, ev) = q.pop()?;
        let (&k, &want) = reference.iter().next().expect("the reference has as many");
        assert_eq!((t, ev), (k.0, want));
        reference.remove(&k);
        Some(t)
    }

    /// The queue against a sorted reference, pushes never before the clock
    /// (as the simulator's) interleaved with pops, over spans from
    /// picoseconds to seconds; some events under reserved numbers.
    #[test]
    fn the_queue_pops_in_key_order_as_a_sorted_list_would() {
        let mut q = EventQueue::default();
        let mut reference = BTreeMap::new();
        let mut rnd = lcg(99);
        // Ten events whose numbers come before everything pushed below.
        let first = q.reserve(10);
        let (mut now, mut n) = (Ps::ZERO, 0u32);
        let mut reserved = (0..10u64).map(|i| (Ps(1000 * i), first + i)).peekable();
        for _ in 0..20_000 {
            let r = rnd();
            if let Some(&(t, seq)) = reserved.peek().filter(|(t, _)| *t >= now && r.is_multiple_of(7)) {
                reserved.next();
                let ev = Ev::AppData { flow: seq as u32 };
                q.push_reserved(t, ev, seq);
                reference.insert((t, seq), ev);
            } else if r.is_multiple_of(3) {
                if let Some(t) = pop_checked(&mut q, &mut reference) {
                    now = t;
                }
            } else {
                let span = [7, 1_000, 1_000_000, 1 << 40][(r >> 8) as usize % 4];
                let t = now + Ps(rnd() % span);
                n += 1;
                let ev = Ev::FlowStart { flow: n };
                q.push(t, ev);
                reference.insert((t, first + 9 + n as u64), ev);
            }
        }
        while pop_checked(&mut q, &mut reference).is_some() {}
        assert!(reference.is_empty());
    }

    /// The calendar against a sorted reference where it is most likely to
    /// go wrong: entries at the same picosecond and within one bucket,
    /// spans across the calendar's reach (about 8.4 µs) and far past it, a
    /// clock that goes round the calendar many times, and far entries
    /// brought in as it moves.
    #[test]
    fn the_calendar_goes_round_and_brings_far_entries_in_order() {
        let mut q = EventQueue::default();
        let mut reference = BTreeMap::new();
        let mut rnd = lcg(7);
        let reach = (BUCKETS as u64) << BUCKET_BITS;
        let spans = [1, 1 << BUCKET_BITS, reach / 2, reach - 1, reach + 1, 3 * reach, 1 << 40];
        let (mut now, mut n, mut rounds) = (Ps::ZERO, 0u64, 0u64);
        for _ in 0..50_000 {
            let r = rnd();
            if r.is_multiple_of(2) {
                if let Some(t) = pop_checked(&mut q, &mut reference) {
                    rounds = rounds.max(t.as_ps() / reach);
                    now = t;
                }
            } else {
                let span = spans[(r >> 8) as usize % spans.len()];
                let t = now + Ps(rnd() % span);
                n += 1;
                let ev = Ev::FlowStart { flow: n as u32 };
                q.push(t, ev);
                reference.insert((t, n), ev);
            }
        }
        assert!(rounds > 100, "the clock went round {rounds} times");
        while pop_checked(&mut q, &mut reference).is_some() {}
        assert!(reference.is_empty() && q.is_empty());
    }

    /// A lockstep fabric's pattern: runs of entries at one instant, each
    /// filed behind a later instant of its bucket (the walk then starts at
    /// the bucket's last filed entry), interleaved with pops that take
    /// that entry or its neighbours, and with instants a bucket apart and
    /// a reach apart (another round of the same bucket). Pops in key
    /// order throughout.
    #[test]
    fn lockstep_runs_filed_behind_a_later_instant_keep_their_order() {
        let mut q = EventQueue::default();
        let mut reference = BTreeMap::new();
        let mut rnd = lcg(99);
        let reach = (BUCKETS as u64) << BUCKET_BITS;
        let (mut now, mut n) = (Ps::ZERO, 0u64);
        let mut push = |q: &mut EventQueue, reference: &mut BTreeMap<(Ps, u64), Ev>, t: Ps| {
            n += 1;
            let ev = Ev::FlowStart { flow: n as u32 };
            q.push(t, ev);
            reference.insert((t, n), ev);
        };
        for _ in 0..3_000 {
            // Past the ring's room, so that the buckets hold the entries.
            while q.len() < 3 * ring::RING {
                push(&mut q, &mut reference, now + Ps(rnd() % 4_000_000));
            }
            // A later instant of a bucket, then a run at an earlier one.
            let t = now + Ps(1_000 + (rnd() % 64) * (1 << BUCKET_BITS));
            push(&mut q, &mut reference, t + Ps(1 + rnd() % 500));
            for _ in 0..rnd() % 40 {
                let at = match rnd() % 8 {
                    0 => t + Ps(reach),
                    1 => t + Ps(1 << BUCKET_BITS),
                    2 => t.saturating_sub(Ps(rnd() % 300)).max(now),
                    _ => t,
                };
                push(&mut q, &mut reference, at);
                if rnd().is_multiple_of(5) {
                    if let Some(p) = pop_checked(&mut q, &mut reference) {
                        now = p;
                    }
                }
            }
            for _ in 0..rnd() % 60 {
                if let Some(p) = pop_checked(&mut q, &mut reference) {
                    now = p;
                }
            }
        }
        while pop_checked(&mut q, &mut reference).is_some() {}
        assert!(reference.is_empty() && q.is_empty());
    }

    /// Few pending entries live in a sorted ring, many in the calendar's
    /// buckets: a queue that swells past the ring's room and shrinks below
    /// the hand-back point again and again, with near and far entries,
    /// pops in key order throughout, across both hand-overs.
    #[test]
    fn the_queue_keeps_its_order_across_ring_and_buckets() {
        let mut q = EventQueue::default();
        let mut reference = BTreeMap::new();
        let mut rnd = lcg(2024);
        let (mut now, mut n) = (Ps::ZERO, 0u64);
        let (mut to_buckets, mut to_ring) = (0, 0);
        let mut in_ring = q.cal.in_ring();
        for round in 0..60 {
            // Swell to a few times the ring, then drain to a handful.
            let (swell, keep) = (3 * ring::RING + round, 4 + round % 20);
            while q.len() < swell {
                let span = [80_000, 1_000_000, 20_000_000][(rnd() % 3) as usize];
                let t = now + Ps(rnd() % span);
                n += 1;
                let ev = Ev::FlowStart { flow: n as u32 };
                q.push(t, ev);
                reference.insert((t, n), ev);
            }
            while q.len() > keep {
                now = pop_checked(&mut q, &mut reference).expect("entries are left");
                if q.cal.in_ring() != in_ring {
                    in_ring = q.cal.in_ring();
                    if in_ring {
                        to_ring += 1;
                    } else {
                        to_buckets += 1;
                    }
                }
            }
            if q.cal.in_ring() != in_ring {
                in_ring = q.cal.in_ring();
                to_buckets += usize::from(!in_ring);
            }
        }
        while pop_checked(&mut q, &mut reference).is_some() {}
        assert!(reference.is_empty() && q.is_empty());
        assert!(
            to_ring >= 50 && to_buckets >= 50,
            "{to_ring} to the ring, {to_buckets} to the buckets"
        );
    }

    /// Entries crowding a few buckets in no order (a fabric's hosts in
    /// lockstep), and entries filed into the first bucket between pops,
    /// before its earliest or among its entries: every bucket's list stays
    /// in order.
    #[test]
    fn crowded_buckets_filed_in_any_order_pop_in_order() {
        let mut q = EventQueue::default();
        let mut reference = BTreeMap::new();
        let mut rnd = lcg(512);
        let (mut now, mut n) = (Ps::ZERO, 0u64);
        let width = 1u64 << BUCKET_BITS;
        for _ in 0..200 {
            // A burst into the next eight buckets, in random order.
            for _ in 0..(rnd() % 300) {
                let t = now + Ps(rnd() % (8 * width));
                n += 1;
                q.push(t, Ev::FlowStart { flow: n as u32 });
                reference.insert((t, n), Ev::FlowStart { flow: n as u32 });
            }
            // Pops, each followed by entries into the first bucket.
            for _ in 0..(rnd() % 200) {
                let Some(t) = pop_checked(&mut q, &mut reference) else {
                    break;
                };
                now = t;
                for _ in 0..(rnd() % 3) {
                    let t = now + Ps(rnd() % (width - now.as_ps() % width));
                    n += 1;
                    q.push(t, Ev::FlowStart { flow: n as u32 });
                    reference.insert((t, n), Ev::FlowStart { flow: n as u32 });
                }
            }
        }
        assert!(!q.cal.in_ring() || n > 10_000, "the buckets were used");
        while pop_checked(&mut q, &mut reference).is_some() {}
        assert!(reference.is_empty() && q.is_empty());
    }

    /// With its entries in the buckets, each pop names the packet of the
    /// next arrival (the loop prefetches it), and the entry it found ahead
    /// stays the next one popped however many pushes come between.
    #[test]
    fn a_pop_names_the_next_arrivals_packet() {
        let mut q = EventQueue::default();
        let mut rnd = lcg(31);
        let mut reference = BTreeMap::new();
        let arrive = |pkt| Ev::Arrive { node: 0, port: 0, pkt };
        for n in 0..4 * ring::RING as u32 {
            let t = Ps(rnd() % 2_000_000);
            q.push(t, arrive(n));
            reference.insert((t, n as u64 + 1), arrive(n));
        }
        let (mut named, mut seq) = (0, 4 * ring::RING as u64);
        while let Some(now) = pop_checked(&mut q, &mut reference) {
            let hint = q.next_pkt();
            // Pushes after the pop, some before the entry found ahead.
            for _ in 0..rnd() % 3 {
                let t = now + Ps(rnd() % 3_000);
                seq += 1;
                let ev = arrive(seq as u32);
                q.push(t, ev);
                reference.insert((t, seq), ev);
            }
            let Some((_, &Ev::Arrive { pkt, .. })) = reference.iter().next() else {
                break;
            };
            if q.cal.in_ring() {
                continue;
            }
            let first_is_new = pkt > 4 * ring::RING as u32;
            if !first_is_new {
                assert_eq!(hint, pkt, "the pop before named another packet");
                named += 1;
            }
        }
        assert!(named > 100, "{named} named in the buckets");
        assert!(reference.is_empty());
    }

    #[test]
    fn serialization_times() {
        assert_eq!(ser_ps(1000, 100_000_000_000), Ps(80_000));
        assert_eq!(ser_ps(1, 1_600_000_000_000), Ps(5));
        assert_eq!(ser_ps(1048, 100_000_000_000), Ps(83_840));
    }
}
