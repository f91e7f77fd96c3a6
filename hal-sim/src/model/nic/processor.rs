//! The NIC's congestion-control processor (`[nic.cc_processor]`): a few
//! soft cores that run the engine, fed by an event queue, as a SmartNIC
//! runs its congestion-control firmware (one event per ACK, NACK, CNP,
//! RTT or probe reply, window feedback and engine timer).
//!
//! An event the Rx pipeline or a timer hands over waits in the queue;
//! the next free core takes the oldest, the engine runs on it then (with
//! that time as its `now`), and its decision reaches the pacer when the
//! core is done, `instructions / (clock · IPC)` later. The datapath does
//! not wait: an ACK still advances `snd_una`, finishes its flow and arms
//! the retransmission timer when it arrives. Without a processor (the
//! default) the engine answers every event at once, as before.
//!
//! When the queue is full an event is dropped and counted, as a NIC's
//! hardware drops events it has no room for; the engine's own timers and
//! a flow's end are never dropped (a lost tick would stall a flow below
//! one packet of window for good). A flow that finishes on the datapath
//! queues its end behind its waiting events, so the engine still sees its
//! last ACKs. Two policies thin the ACKs before they queue:
//!
//! - `latest`: an ACK for a flow whose last ACK still waits, with the same
//!   ECN echo, replaces it, carrying the newest cumulative ACK (so every
//!   acknowledged byte), telemetry and RTT.
//! - `thinning` (as Falcon's rate-update engine sees its events): a
//!   flow's ACK is handed over only every `thin_every_acks` ACKs, or once
//!   `thin_interval_ns` has passed since its last one, or when it echoes
//!   a congestion mark; the newest ACK between is held back and the next
//!   handed over carries its bytes.
//!
//! Neither mixes echoes: an ACK whose echo differs from the one waiting
//! (or held) queues on its own, after it, so the engine counts marked and
//! unmarked bytes as the receiver echoed them (LDCP's PAWA and DCTCP's
//! alpha depend on it).
//!
//! A cumulative ACK standing for several is what HPCC++'s τ-weighted
//! update (τ is the telemetry's own interval) and LDCP's PAWA (n is the
//! acknowledged bytes over the MTU) take by their equations.
//!
//! Sent, start and end events, retransmission timeouts and the
//! receiver's events (Rx-HPCC telemetry, probe requests) are not queued:
//! the Tx pipeline needs the ECN codepoint of the packet it builds at
//! once, and the others are rare.

use std::collections::{HashMap, VecDeque};

use cc_core::engine::FlowHandle;
use cc_core::prelude::*;
use cc_core::wire::Hops;

use crate::run::event::Ps;

/// Instructions each kind of event costs on one core.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Costs {
    /// An ACK (an HPCC++ ACK with one hop of telemetry).
    pub ack: u32,
    /// An HPCC++ ACK with two hops of telemetry: the engine's general
    /// walk, whose shortest stack it is (one hop has a path of its own).
    pub ack_2_hops: u32,
    /// Each hop of an HPCC++ ACK's telemetry after the second.
    pub ack_per_hop: u32,
    /// The engine's timer.
    pub timer: u32,
    /// A CNP.
    pub cnp: u32,
    /// An HPCC++ probe reply.
    pub probe_response: u32,
    /// A NACK, an RTT response, window feedback.
    pub other: u32,
}

impl Costs {
    /// The cost of `work`.
    fn of(&self, work: &Work) -> u32 {
        match work {
            Work::Ack { hops, .. } => match hops.len() {
                0 | 1 => self.ack,
                n => {
                    let extra = (n - 2) as u32;
                    self.ack_2_hops.saturating_add(self.ack_per_hop.saturating_mul(extra))
                }
            },
            Work::Timer { .. } => self.timer,
            Work::Event(EventKind::Cnp) => self.cnp,
            Work::Event(EventKind::ProbeResponse { .. }) => self.probe_response,
            Work::Event(_) | Work::End => self.other,
        }
    }
}

/// How ACKs are thinned before they queue.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Coalescing {
    /// Every event queues; a full queue drops the new one.
    None,
    /// An ACK replaces its flow's waiting ACK.
    Latest,
    /// One ACK event per flow per `every_acks` ACKs, or after `interval`
    /// since its last one (`Ps::ZERO`: no interval).
    Thinning {
        /// ACKs per event.
        every_acks: u32,
        /// Time after which the next ACK goes through whatever the count.
        interval: Ps,
    },
}

/// A processor's make-up, from the scenario.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// Cores.
    pub cores: u16,
    /// Picoseconds an instruction takes: 1000 / (clock in GHz × IPC).
    pub ps_per_instruction: f64,
    /// Events the queue holds (those in service not counted).
    pub queue_depth: u32,
    /// ACK thinning.
    pub coalescing: Coalescing,
    /// Cost of each event.
    pub costs: Costs,
}

/// An event waiting for a core: what the engine will be handed. (Most
/// queued events are ACKs, so their hops stay inline: boxing them would
/// cost an allocation an ACK and save nothing.)
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Work {
    /// An ACK (perhaps standing for several): the engine's ACK, its
    /// telemetry kept beside it.
    Ack {
        /// The ACK, its `telemetry` empty (it is `hops`).
        ack: Ack<'static>,
        /// Echoed telemetry.
        hops: Hops,
    },
    /// A NACK, a CNP, an RTT or probe reply, window feedback: the
    /// engine's event as it came (none of them borrows anything).
    Event(EventKind<'static>),
    /// The engine's timer, of generation `gen`.
    Timer {
        /// The timer's generation.
        gen: u32,
    },
    /// The flow finished: the engine lets it go once its earlier events
    /// are served.
    End,
}

impl Work {
    /// The work of a sender-side event: an ACK (its hops copied), a NACK,
    /// a CNP, an RTT or probe reply, window feedback; `None` for others.
    pub fn of(kind: &EventKind<'_>) -> Option<Work> {
        Some(Work::Event(match *kind {
            EventKind::Ack(a) => {
                let mut hops = Hops::new();
                // Never more than the engine's own limit, which the
                // samples were read under.
                let _ = hops.extend_from_slice(a.telemetry);
                let ack = Ack { telemetry: &[], ..a };
                return Some(Work::Ack { ack, hops });
            }
            EventKind::Loss { first_lost, ev } => EventKind::Loss { first_lost, ev },
            EventKind::Nack(n) => EventKind::Nack(n),
            EventKind::Cnp => EventKind::Cnp,
            EventKind::RttResponse { probe, rtt_ns } => EventKind::RttResponse { probe, rtt_ns },
            EventKind::ProbeResponse { probe, hop_index, hop } => EventKind::ProbeResponse { probe, hop_index, hop },
            EventKind::Feedback { window } => EventKind::Feedback { window },
            _ => return None,
        }))
    }

    /// The engine's event, borrowing the telemetry kept here; `None` for
    /// a timer or an end, which the NIC turns into events itself.
    pub fn event(&self) -> Option<EventKind<'_>> {
        match self {
            Work::Ack { ack, hops } => Some(EventKind::Ack(Ack {
                telemetry: hops,
                ..*ack
            })),
            Work::Event(kind) => Some(*kind),
            Work::Timer { .. } | Work::End => None,
        }
    }
}

/// A queued event.
#[derive(Clone, Debug)]
pub struct Job {
    /// The flow.
    pub flow: u32,
    /// Its handle in the NIC's engine, taken when the event came (the
    /// sender's state may be gone when it runs: a finished flow's last
    /// ACKs and its end still reach the engine).
    pub at: Option<FlowHandle>,
    /// When it was handed over.
    pub arrived: Ps,
    /// Its number in the queue's order.
    ticket: u64,
    /// What it carries.
    pub work: Work,
}

/// Queueing delays, ns, in buckets of 1/32 of their power of two (exact
/// below 64 ns): p99 of millions of events in a few kilobytes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Delays {
    counts: Vec<u64>,
    total: u64,
    max_ns: u64,
}

impl Delays {
    fn bucket(ns: u64) -> usize {
        if ns < 64 {
            return ns as usize;
        }
        let e = 63 - ns.leading_zeros() as usize; // ≥ 6
        64 + (e - 6) * 32 + ((ns >> (e - 5)) & 31) as usize
    }

    /// The smallest delay of bucket `b`.
    fn floor(b: usize) -> u64 {
        if b < 64 {
            return b as u64;
        }
        let (e, sub) = (6 + (b - 64) / 32, ((b - 64) % 32) as u64);
        (32 + sub) << (e - 5)
    }

    /// Counts one delay.
    pub fn add(&mut self, ns: u64) {
        let b = Self::bucket(ns);
        if self.counts.len() <= b {
            self.counts.resize(b + 1, 0);
        }
        self.counts[b] += 1;
        self.total += 1;
        self.max_ns = self.max_ns.max(ns);
    }

    /// Adds `other`'s counts.
    pub fn merge(&mut self, other: &Delays) {
        if self.counts.len() < other.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.total += other.total;
        self.max_ns = self.max_ns.max(other.max_ns);
    }

    /// The delay at quantile `q` (0 ..= 1), as its bucket's floor (at most
    /// 3 % below the true value); 0 with nothing counted.
    pub fn quantile(&self, q: f64) -> u64 {
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total.max(1));
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Self::floor(b).min(self.max_ns);
            }
        }
        0
    }

    /// The longest delay counted.
    pub fn max_ns(&self) -> u64 {
        self.max_ns
    }
}

/// What a processor counted.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// Events handed over (ACKs thinned or coalesced included).
    pub offered: u64,
    /// Events a core took.
    pub served: u64,
    /// ACKs folded into another ACK event (`latest`, `thinning`).
    pub coalesced: u64,
    /// Events dropped on a full queue.
    pub dropped: u64,
    /// Time the cores were busy, summed over cores, ps.
    pub busy_ps: u64,
    /// Time events waited for a core.
    pub delays: Delays,
}

/// Per flow under `thinning`: ACKs since its last event, when that was,
/// and the newest ACK held back (when it came, its handle, itself).
#[derive(Clone, Debug, Default)]
struct Thin {
    acks: u32,
    last: Option<Ps>,
    held: Option<(Ps, Option<FlowHandle>, Work)>,
}

/// One NIC's congestion-control processor.
#[derive(Clone, Debug)]
pub struct Processor {
    /// Its make-up.
    pub params: Params,
    queue: VecDeque<Job>,
    /// The ticket the next job gets; the front's is `next_ticket − len`.
    next_ticket: u64,
    /// `latest`: each flow's waiting ACK, by ticket.
    waiting_ack: HashMap<u32, u64>,
    thin: HashMap<u32, Thin>,
    /// Per core, the flow and decision of the event it serves.
    pub(crate) results: Vec<Option<(u32, Option<Decision>)>>,
    /// Cores with nothing to do.
    idle: Vec<u16>,
    /// What it counted.
    pub stats: Stats,
}

/// What [`Processor::offer`] did with an event ([`Processor::ready`]
/// then says whether a free core can take it).
#[derive(Debug, PartialEq, Eq)]
pub enum Offer {
    /// Queued, or folded into a waiting ACK.
    Queued,
    /// Held back by thinning: the next ACK of its flow that goes carries it.
    Held,
    /// Dropped: the queue was full.
    Gone,
}

impl Processor {
    /// An idle processor.
    pub fn new(params: Params) -> Self {
        Processor {
            params,
            queue: VecDeque::new(),
            next_ticket: 0,
            waiting_ack: HashMap::new(),
            thin: HashMap::new(),
            results: vec![None; params.cores as usize],
            idle: (0..params.cores).rev().collect(),
            stats: Stats::default(),
        }
    }

    /// Hands over `work` for `flow` (engine handle `at`) at `now`.
    pub fn offer(&mut self, now: Ps, flow: u32, at: Option<FlowHandle>, work: Work) -> Offer {
        self.stats.offered += 1;
        let Work::Ack { ack, .. } = &work else {
            return self.push(now, flow, at, work);
        };
        let ece = ack.ece;
        match self.params.coalescing {
            Coalescing::None => self.push(now, flow, at, work),
            Coalescing::Latest => {
                // Folded only into a waiting ACK with the same echo: each
                // packet's echo reaches the engine as the receiver gave it.
                if let Some(&ticket) = self.waiting_ack.get(&flow) {
                    let front = self.next_ticket - self.queue.len() as u64;
                    if let Some(job) = ticket.checked_sub(front).and_then(|i| self.queue.get_mut(i as usize)) {
                        if matches!(&job.work, Work::Ack { ack: old, .. } if old.ece == ece) {
                            job.work = work;
                            self.stats.coalesced += 1;
                            return Offer::Queued;
                        }
                    }
                }
                self.push(now, flow, at, work)
            }
            Coalescing::Thinning { every_acks, interval } => {
                let t = self.thin.entry(flow).or_default();
                // An ACK whose echo differs from the one held back sends
                // that one on first, on its own.
                let flushed = match &t.held {
                    Some((_, _, Work::Ack { ack: held, .. })) if held.ece != ece => {
                        t.acks = 0;
                        t.held.take()
                    }
                    _ => None,
                };
                t.acks += 1;
                // A marked ACK is never held back: a congestion signal goes
                // at once.
                let due = match t.last {
                    None => true,
                    Some(last) => {
                        ece == EcnEcho::Marked
                            || t.acks >= every_acks
                            || (interval > Ps::ZERO && now.saturating_sub(last) >= interval)
                    }
                };
                let absorbed = if due {
                    t.acks = 0;
                    t.last = Some(now);
                    t.held.take().is_some()
                } else {
                    t.held.replace((now, at, work.clone())).is_some()
                };
                if absorbed {
                    self.stats.coalesced += 1;
                }
                if let Some((when, held_at, held)) = flushed {
                    self.push(when, flow, held_at, held);
                }
                if due {
                    self.push(now, flow, at, work)
                } else {
                    Offer::Held
                }
            }
        }
    }

    /// Queues `work`, or drops it if the queue is full (a timer or an end
    /// never is).
    fn push(&mut self, now: Ps, flow: u32, at: Option<FlowHandle>, work: Work) -> Offer {
        let keep = matches!(work, Work::Timer { .. } | Work::End);
        if self.queue.len() >= self.params.queue_depth as usize && !keep {
            self.stats.dropped += 1;
            return Offer::Gone;
        }
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        if matches!(work, Work::Ack { .. }) && self.params.coalescing == Coalescing::Latest {
            self.waiting_ack.insert(flow, ticket);
        }
        self.queue.push_back(Job {
            flow,
            at,
            arrived: now,
            ticket,
            work,
        });
        Offer::Queued
    }

    /// A free core, if an event waits for one.
    pub fn ready(&mut self) -> Option<u16> {
        if self.queue.is_empty() {
            return None;
        }
        self.idle.pop()
    }

    /// The oldest waiting event for `core`, which has just freed, with the
    /// time it takes to run (zero for an event that costs nothing: its
    /// decision applies at once); `None` leaves the core idle.
    pub fn take(&mut self, now: Ps, core: u16) -> Option<(Job, Ps)> {
        let Some(job) = self.queue.pop_front() else {
            self.idle.push(core);
            return None;
        };
        if matches!(job.work, Work::Ack { .. }) && self.waiting_ack.get(&job.flow) == Some(&job.ticket) {
            self.waiting_ack.remove(&job.flow);
        }
        let instructions = self.params.costs.of(&job.work);
        let service = Ps::from_ps((instructions as f64 * self.params.ps_per_instruction).round() as u64);
        self.stats.served += 1;
        self.stats.busy_ps += service.as_ps();
        self.stats.delays.add(now.saturating_sub(job.arrived).as_ns());
        Some((job, service))
    }

    /// Forgets `flow`'s thinning state (it finished): an ACK it held back
    /// goes now, before the flow's end.
    pub fn forget(&mut self, now: Ps, flow: u32) {
        if let Some((_, at, work)) = self.thin.remove(&flow).and_then(|t| t.held) {
            self.push(now, flow, at, work);
        }
    }

    /// Events waiting (not in service), ACKs held back by thinning
    /// included.
    pub fn waiting(&self) -> usize {
        self.queue.len() + self.thin.values().filter(|t| t.held.is_some()).count()
    }

    /// Events a core is running.
    pub fn in_service(&self) -> usize {
        self.results.iter().filter(|r| r.is_some()).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(cores: u16, depth: u32, coalescing: Coalescing) -> Params {
        Params {
            cores,
            // 1 GHz, one instruction a cycle: 1 ns an instruction.
            ps_per_instruction: 1000.0,
            queue_depth: depth,
            coalescing,
            costs: Costs {
                ack: 100,
                ack_2_hops: 130,
                ack_per_hop: 10,
                timer: 50,
                cnp: 30,
                probe_response: 70,
                other: 20,
            },
        }
    }

    fn ack(cum: u64, ece: bool, hops: usize) -> Work {
        let mut h = Hops::new();
        for _ in 0..hops {
            h.push(HopSample::default()).unwrap();
        }
        let ack = Ack {
            ece: if ece { EcnEcho::Marked } else { EcnEcho::NotMarked },
            rtt_ns: Some(cum as u32),
            ..Ack::new(Seq(cum as u32), Seq(cum as u32 + 1000))
        };
        Work::Ack { ack, hops: h }
    }

    #[test]
    fn events_wait_in_order_for_the_next_free_core() {
        let mut p = Processor::new(params(2, 8, Coalescing::None));
        let t = Ps::from_ns(1000);
        assert_eq!(p.offer(t, 1, None, ack(1000, false, 5)), Offer::Queued);
        assert_eq!(p.ready(), Some(0));
        // Core 0 takes the first: two hops' 130 + 3 · 10 instructions at
        // 1 ns each (one hop alone would be 100).
        let (job, service) = p.take(t, 0).unwrap();
        assert_eq!((job.flow, service), (1, Ps::from_ns(160)));
        p.offer(t, 2, None, Work::Event(EventKind::Cnp));
        assert_eq!(p.ready(), Some(1));
        let (job, service) = p.take(t, 1).unwrap();
        assert_eq!((job.flow, service), (2, Ps::from_ns(30)));
        // Both busy: the timer waits, 30 ns, for core 1.
        p.offer(t, 3, None, Work::Timer { gen: 1 });
        assert_eq!(p.ready(), None);
        let (job, _) = p.take(t + Ps::from_ns(30), 1).unwrap();
        assert_eq!(job.flow, 3);
        // Then the queue is empty and both cores go idle.
        assert!(p.take(t + Ps::from_ns(80), 1).is_none());
        assert!(p.take(t + Ps::from_ns(160), 0).is_none());
        p.offer(t, 4, None, Work::Event(EventKind::Cnp));
        assert_eq!(p.ready(), Some(0));
        assert_eq!(p.stats.delays.quantile(1.0), 30);
        assert_eq!((p.stats.offered, p.stats.served, p.stats.busy_ps), (4, 3, 240_000));
    }

    #[test]
    fn a_full_queue_drops_the_new_event_but_never_a_timer() {
        let mut p = Processor::new(params(1, 2, Coalescing::None));
        let t = Ps::ZERO;
        let cnp = || Work::Event(EventKind::Cnp);
        p.offer(t, 1, None, cnp());
        let core = p.ready().unwrap();
        p.take(t, core).unwrap();
        assert_eq!(p.offer(t, 2, None, cnp()), Offer::Queued);
        assert_eq!(p.offer(t, 3, None, cnp()), Offer::Queued);
        assert_eq!(p.offer(t, 4, None, cnp()), Offer::Gone);
        assert_eq!(p.offer(t, 5, None, Work::Timer { gen: 0 }), Offer::Queued);
        assert_eq!(p.offer(t, 6, None, Work::End), Offer::Queued);
        assert_eq!((p.stats.offered, p.stats.dropped, p.waiting()), (6, 1, 4));
    }

    /// The ACK a job carries: its cumulative ACK, echo and hops.
    fn carried(job: &Job) -> (u64, bool, usize) {
        match &job.work {
            Work::Ack { ack, hops } => (ack.cum_ack.0 as u64, ack.ece == EcnEcho::Marked, hops.len()),
            w => panic!("{w:?}"),
        }
    }

    #[test]
    fn latest_replaces_a_waiting_ack_with_the_same_echo() {
        let mut p = Processor::new(params(1, 8, Coalescing::Latest));
        let t = Ps::ZERO;
        p.offer(t, 9, None, Work::Event(EventKind::Cnp));
        let core = p.ready().unwrap();
        p.take(t, core).unwrap();
        p.offer(t, 1, None, ack(1000, false, 1));
        p.offer(t, 2, None, ack(500, false, 1));
        p.offer(t, 1, None, ack(3000, false, 2));
        // A marked ACK does not fold into an unmarked one: it queues after
        // it, and the next marked one folds into it.
        p.offer(t, 1, None, ack(4000, true, 1));
        p.offer(t, 1, None, ack(5000, true, 3));
        assert_eq!((p.stats.coalesced, p.waiting()), (2, 3));
        let jobs: Vec<(u32, (u64, bool, usize))> = std::iter::from_fn(|| p.take(t, 0))
            .map(|(j, _)| (j.flow, carried(&j)))
            .collect();
        assert_eq!(
            jobs,
            [(1, (3000, false, 2)), (2, (500, false, 1)), (1, (5000, true, 3))]
        );
        // Once in service, a new ACK queues behind, not into it.
        assert_eq!(p.offer(t, 1, None, ack(6000, true, 1)), Offer::Queued);
        assert_eq!((p.waiting(), p.stats.coalesced), (1, 2));
    }

    #[test]
    fn thinning_hands_over_one_ack_in_n_or_one_per_interval() {
        let every = Coalescing::Thinning {
            every_acks: 3,
            interval: Ps::ZERO,
        };
        let mut p = Processor::new(params(4, 64, every));
        let mut through = vec![];
        for i in 0..7u64 {
            if p.offer(Ps::ZERO, 1, None, ack(i * 1000, false, 1)) == Offer::Queued {
                through.push(i);
            }
        }
        // The first (nothing before it), then every third; the last is held.
        assert_eq!(through, [0, 3, 6]);
        assert_eq!((p.stats.coalesced, p.waiting()), (4, 3));
        // A marked ACK goes at once, after the held unmarked one, on its
        // own; the flow's end sends a held one before it.
        p.offer(Ps::ZERO, 1, None, ack(7000, false, 1));
        assert_eq!(p.offer(Ps::ZERO, 1, None, ack(8000, true, 1)), Offer::Queued);
        p.offer(Ps::ZERO, 1, None, ack(9000, false, 1));
        p.forget(Ps::ZERO, 1);
        p.offer(Ps::ZERO, 1, None, Work::End);
        let cums: Vec<Option<(u64, bool, usize)>> = std::iter::from_fn(|| p.take(Ps::ZERO, 0))
            .map(|(j, _)| matches!(j.work, Work::Ack { .. }).then(|| carried(&j)))
            .collect();
        assert_eq!(
            cums,
            [
                Some((0, false, 1)),
                Some((3000, false, 1)),
                Some((6000, false, 1)),
                Some((7000, false, 1)),
                Some((8000, true, 1)),
                Some((9000, false, 1)),
                None
            ]
        );
        assert_eq!(p.stats.offered, p.stats.served + p.stats.coalesced);
        let timed = Coalescing::Thinning {
            every_acks: u32::MAX,
            interval: Ps::from_ns(100),
        };
        let mut p = Processor::new(params(4, 64, timed));
        let through: Vec<u64> = (0..10u64)
            .filter(|&i| p.offer(Ps::from_ns(i * 40), 1, None, ack(i, false, 1)) == Offer::Queued)
            .collect();
        // At 0, then the first at least 100 ns after each.
        assert_eq!(through, [0, 3, 6, 9]);
    }

    #[test]
    fn delays_come_back_within_their_bucket() {
        let mut d = Delays::default();
        for ns in 0..10_000u64 {
            d.add(ns);
        }
        for q in [0.5, 0.9, 0.99] {
            let want = q * 10_000.0;
            let got = d.quantile(q) as f64;
            assert!(
                got <= want && got >= want * (1.0 - 1.0 / 32.0) - 1.0,
                "q {q}: {got} for {want}"
            );
        }
        assert_eq!(
            (d.quantile(1.0), d.max_ns()),
            (9_999u64.min(Delays::floor(Delays::bucket(9_999))), 9_999)
        );
        assert_eq!(Delays::default().quantile(0.99), 0);
    }
}
