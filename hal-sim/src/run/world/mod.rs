//! The simulation loop: it owns the clock and the event queue, and moves
//! each event to the component it is for — a [`Switch`] (`switch.rs`
//! decides what a switch does with a packet), a [`Nic`] (`nic/scheduler.rs`
//! decides when a NIC sends, `nic/rx.rs` what it does with what arrives) —
//! lending it a [`Ctx`]: the clock, the queue to schedule into, the
//! packets in flight, the run's settings and what the run measures.
//! `build.rs` makes a world from a scenario.
//!
//! ```text
//!  NIC scheduler+pacer ─▶ Tx pipeline ─▶ link ─▶ Switch (ECMP, queue, WRED/ECN, telemetry) ─▶ … ─▶ link
//!        ▲                                                                                          │
//!        └── cc-core engine ◀── NIC Rx pipeline (sender) ◀── … ◀── NIC Rx pipeline (receiver) ◀──────┘
//! ```

mod build;

pub use crate::run::ctx::{Ctx, Rngs, RunCfg, Tap};

use std::path::Path;

use cc_core::prelude::*;
use cc_core::wire::auth::FeedbackKey;

use crate::model::flow::FlowRecord;
use crate::model::net::Network;
use crate::model::nic::Nic;
use crate::model::packet::Slab;
use crate::model::switch::Switch;
use crate::output::metrics::Metrics;
use crate::run::event::{Ev, EventQueue, Ps};
use crate::setup::connection_matrix::Runtime;

/// How far a run has come.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// The simulated time.
    pub now: Ps,
    /// Flows finished.
    pub finished: usize,
    /// All flows.
    pub flows: usize,
}

/// The simulated world.
pub struct World {
    /// The simulated clock, ps: the time of the event being handled.
    pub now: Ps,
    /// Pending events.
    pub q: EventQueue,
    /// Nodes, links, and the routes between hosts.
    pub net: Network,
    /// The NICs, by host index.
    pub nics: Vec<Nic>,
    /// The switches.
    pub switches: Vec<Switch>,
    /// Each node's component: its NIC or its switch, by index.
    component: Vec<Component>,
    /// Every flow, by id.
    pub flows: Vec<FlowRecord>,
    /// Packets in flight.
    pub pkts: Slab,
    /// The run's settings, derived from the scenario.
    pub cfg: RunCfg,
    /// Random streams.
    pub rng: Rngs,
    /// What the run measures: counters, port series, flow traces.
    pub metrics: Metrics,
    /// The notification key shared by all NICs.
    pub key: FeedbackKey,
    /// Trace and co-simulation.
    pub tap: Tap,
    /// Flows not yet finished.
    pub unfinished: usize,
    finished: Vec<u32>,
    /// Delivered bytes per flow at the last fairness window.
    last_delivered: Vec<u64>,
    /// The flows a fairness window can count, in id order: started by the
    /// last window's end and not finished before it (a run of 10^5 flows
    /// has a few hundred in flight; the window looks at those).
    window_flows: Vec<u32>,
    /// How many of `starts` `window_flows` has taken in.
    window_admitted: usize,
    /// Every flow's delivered bytes at the last window, to check
    /// `window_flows` against.
    #[cfg(test)]
    every_delivered: Vec<u64>,
    /// Fairness windows checked so far.
    #[cfg(test)]
    windows_checked: usize,
    /// Flow ids by (start, id): the order FlowStart events come in.
    starts: Vec<u32>,
    /// The next of `starts` to queue.
    next_start: usize,
    /// The sequence number reserved for flow 0's FlowStart (flow i's is
    /// this + i).
    start_seq: u64,
    /// Last fairness window end.
    last_window_ps: Ps,
    /// The workload's triggers (a connection matrix's): the flows each
    /// finish starts.
    triggers: Runtime,
}

impl World {
    /// Takes into `window_flows` every flow started by `upto` (from
    /// `starts`, in start order), keeping it in id order.
    fn admit_window_flows(&mut self, upto: Ps) {
        let before = self.window_flows.len();
        while let Some(&id) = self.starts.get(self.window_admitted) {
            if self.flows[id as usize].start_ps > upto {
                break;
            }
            self.window_flows.push(id);
            self.window_admitted += 1;
        }
        if self.window_flows.len() > before {
            self.window_flows.sort_unstable();
        }
    }

    /// Queues the next flow's start, if any is left.
    #[inline(never)]
    fn schedule_next_start(&mut self) {
        if let Some(&id) = self.starts.get(self.next_start) {
            self.next_start += 1;
            let t = self.flows[id as usize].start_ps;
            self.q
                .push_reserved(t, Ev::FlowStart { flow: id }, self.start_seq + id as u64);
        }
    }

    /// The engine configuration every NIC runs.
    pub fn engine_config(&self) -> AnyConfig {
        *self.nics[0].engine.config()
    }

    /// Records the selected engine events from now on; take the trace with
    /// `world.tap.trace.take().map(TraceRecorder::finish)`. `Err` if the
    /// engine configuration does not fit a trace's configuration frame.
    pub fn record(&mut self, selection: crate::output::trace::Selection) -> Result<(), String> {
        let cfg = self.engine_config();
        self.tap.trace = Some(crate::output::trace::TraceRecorder::new(&cfg, selection)?);
        Ok(())
    }

    /// Runs the selected flows' congestion control in the firmware image
    /// `elf` under `runner` (co-simulation); call before [`World::run`] and
    /// take the firmware back with `world.tap.cosim.take()` to finish it.
    pub fn cosimulate(
        &mut self,
        runner: &Path,
        elf: &Path,
        selection: crate::output::trace::Selection,
    ) -> Result<(), String> {
        let cfg = self.engine_config();
        self.tap.cosim = Some(crate::run::cosim::Firmware::spawn(runner, elf, &cfg, selection)?);
        Ok(())
    }

    /// Runs until every flow has finished (the simulated time ends at the
    /// last completion, not at timers left behind) or the stop time;
    /// `progress` is called now and then.
    pub fn run(&mut self, mut progress: impl FnMut(&Progress)) {
        self.run_with(&mut progress);
    }

    /// [`World::run`], one function whatever the caller's `progress`: a
    /// profile-guided build (`scripts/pgo.sh`) then finds its profile of
    /// the loop in every program that runs it (the CLI that trained it,
    /// the benchmark), where a copy per closure type would have none.
    fn run_with(&mut self, progress: &mut dyn FnMut(&Progress)) {
        let mut n = 0u64;
        let mut next = self.next_event();
        while let Some((t, ev)) = next {
            self.now = t;
            // The world's own events: a sample is the world's alone; a flow
            // start schedules the next start, then goes to its NIC.
            match ev {
                Ev::Sample => {
                    self.sample();
                    next = self.next_event();
                    continue;
                }
                // A flow a trigger started was never in `starts`.
                Ev::FlowStart { flow } if !self.triggers.waits(flow) => self.schedule_next_start(),
                _ => {}
            }
            next = self.run_components(ev, &mut n, progress);
        }
        self.settle_ports();
        progress(&self.progress());
    }

    /// The monitored ports' largest queue and last data packet into their
    /// series (the ports keep them while the run goes).
    fn settle_ports(&mut self) {
        for s in &self.switches {
            for p in &s.ports {
                if let Some(series) = p.monitor.and_then(|m| self.metrics.ports.get_mut(m)) {
                    series.max_queue = p.max_queue;
                    series.last_data_ps = p.last_data_ps;
                }
            }
        }
    }

    fn progress(&self) -> Progress {
        Progress {
            now: self.now,
            finished: self.flows.len() - self.unfinished,
            flows: self.flows.len(),
        }
    }

    /// The next event, if the run goes on: flows unfinished, an event
    /// pending, not past the stop time.
    fn next_event(&mut self) -> Option<(Ps, Ev)> {
        if self.unfinished == 0 {
            return None;
        }
        self.q.pop().filter(|&(t, _)| t <= self.cfg.stop_ps)
    }

    /// The components and the context they are lent, as disjoint borrows.
    pub(crate) fn parts(&mut self) -> (Ctx<'_>, &mut [Nic], &mut [Switch], &[Component]) {
        let cx = Ctx {
            now: self.now,
            q: &mut self.q,
            pkts: &mut self.pkts,
            cfg: &self.cfg,
            net: &self.net,
            flows: &mut self.flows,
            metrics: &mut self.metrics,
            rng: &mut self.rng,
            tap: &mut self.tap,
            key: self.key,
            finished: &mut self.finished,
        };
        (cx, &mut self.nics, &mut self.switches, &self.component)
    }

    /// Handles `first` and the events after it for as long as each is one
    /// for a component (a NIC or a switch), lending the components one
    /// context for all of them; the answer is the next event that needs
    /// the whole world (a sample, a flow start), if the run goes on. The
    /// loop's one body: every event a component handles passes here, and
    /// the context is built once for a run of them, not per event. Kept a
    /// function of its own, so the handlers it inlines do not depend on
    /// what else [`World::run`] holds.
    #[inline(never)]
    fn run_components(&mut self, first: Ev, n: &mut u64, progress: &mut dyn FnMut(&Progress)) -> Option<(Ps, Ev)> {
        let mut unfinished = self.unfinished;
        let mut triggers = std::mem::take(&mut self.triggers);
        let (mut cx, nics, switches, component) = self.parts();
        let mut ev = first;
        let next = loop {
            dispatch(&mut cx, nics, switches, component, ev);
            if !cx.finished.is_empty() {
                unfinished -= close_finished(&mut cx, nics, &mut triggers);
            }
            *n += 1;
            if n.is_multiple_of(PROGRESS_EVERY) {
                progress(&Progress {
                    now: cx.now,
                    finished: cx.flows.len() - unfinished,
                    flows: cx.flows.len(),
                });
            }
            if unfinished == 0 {
                break None;
            }
            let Some((t, e)) = cx.q.pop() else { break None };
            // A fabric's next arrival: its packet comes into cache while
            // this event is handled.
            cx.pkts.prefetch(cx.q.next_pkt());
            if t > cx.cfg.stop_ps {
                break None;
            }
            if matches!(e, Ev::Sample | Ev::FlowStart { .. }) {
                break Some((t, e));
            }
            cx.now = t;
            ev = e;
        };
        self.now = cx.now;
        self.unfinished = unfinished;
        self.triggers = triggers;
        next
    }

    /// Bytes of `flow` delivered in order so far.
    fn delivered(&self, flow: &FlowRecord) -> u64 {
        if flow.finish_ps.is_some() {
            // Every byte was acknowledged, so every byte was delivered.
            return flow.size;
        }
        self.nics[flow.dst_host as usize]
            .receivers
            .get(flow.rx_at, flow.id)
            .map_or(0, |r| r.delivered)
    }

    #[inline(never)]
    fn sample(&mut self) {
        let now = self.now;
        let t = crate::output::metrics::ns(now);
        let ports = self.metrics.port_tick();
        if ports {
            let c = self.metrics.counters;
            self.metrics.signals.push(t, &c);
        }
        for s in self.switches.iter().filter(|_| ports) {
            for p in &s.ports {
                if let Some(m) = p.monitor {
                    let series = &mut self.metrics.ports[m];
                    series.t_ns.push(t);
                    series.queue.push(p.queued_bytes);
                    series.tx_bytes.push(p.tx_bytes);
                }
            }
        }
        for tr in &mut self.metrics.traces {
            let f = &self.flows[tr.id as usize];
            if f.finish_ps.is_none() && now >= f.start_ps {
                let Some(s) = self.nics[f.src_host as usize].senders.get(f.tx_at, f.id) else {
                    continue;
                };
                tr.t_ns.push(t);
                tr.window.push(s.window.to_fixed().to_num::<f64>());
                tr.rate_gbps.push(s.rate.as_bps() as f64 / 1e9);
                if !tr.case_names.is_empty() {
                    tr.cases.push(std::mem::take(&mut tr.pending_cases));
                }
            }
        }
        if now >= self.last_window_ps + self.cfg.window_ps {
            // A flow counts when it was active the whole window: started by
            // its start, not finished before its end. Only `window_flows`
            // can be (in id order, as the sums below want them: the same
            // values in the same order as over every flow).
            self.admit_window_flows(self.last_window_ps);
            let mut x = Vec::new();
            for &id in &self.window_flows {
                let f = &self.flows[id as usize];
                let started = f.start_ps < now;
                let active_all_window = f.start_ps <= self.last_window_ps && f.finish_ps.is_none_or(|e| e >= now);
                if started && active_all_window {
                    x.push((self.delivered(f) - self.last_delivered[f.id as usize]) as f64);
                }
            }
            // Held, in hal-sim's own tests, to the count over every flow
            // with its own record of every flow's bytes.
            #[cfg(test)]
            {
                let every: Vec<f64> = self
                    .flows
                    .iter()
                    .filter(|f| {
                        f.start_ps < now && f.start_ps <= self.last_window_ps && f.finish_ps.is_none_or(|e| e >= now)
                    })
                    .map(|f| (self.delivered(f) - self.every_delivered[f.id as usize]) as f64)
                    .collect();
                assert_eq!(every, x, "the fairness window's flows at {now:?}");
                self.windows_checked += 1;
                for i in 0..self.flows.len() {
                    self.every_delivered[i] = self.delivered(&self.flows[i]);
                }
            }
            // The next window counts from here the flows started by now; a
            // finished flow (finished by now) is never counted again. A flow
            // not yet started has delivered nothing: its count stays 0.
            self.admit_window_flows(now);
            let mut live = std::mem::take(&mut self.window_flows);
            let mut kept = 0;
            for k in 0..live.len() {
                let id = live[k] as usize;
                self.last_delivered[id] = self.delivered(&self.flows[id]);
                if self.flows[id].finish_ps.is_none() {
                    live[kept] = live[k];
                    kept += 1;
                }
            }
            live.truncate(kept);
            self.window_flows = live;
            if x.len() >= 2 {
                self.metrics.jain.push((t, crate::output::metrics::jain(&x), x.len()));
            }
            self.last_window_ps = now;
        }
        if self.unfinished > 0 {
            self.q.push(now + self.cfg.sample_ps, Ev::Sample);
        }
    }
}

/// What a node is in the simulation: the NIC of host index `.0`, or
/// switch `.0` of the world's switches. Events for a node go by it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Component {
    Nic(u32),
    Switch(u32),
}

/// Events between two progress reports.
const PROGRESS_EVERY: u64 = 1 << 16;

/// Moves one event to the component it is for. A flow start opens both
/// sides of the flow (the world has queued the next start first); a
/// sample is the world's, not a component's.
///
/// Inlined into the loop (the compiler left it a call): the components'
/// handlers then inline into it too, and the call's saving and restoring
/// of registers on every event goes.
#[inline(always)]
fn dispatch(cx: &mut Ctx, nics: &mut [Nic], switches: &mut [Switch], component: &[Component], ev: Ev) {
    let src_of = |cx: &Ctx, flow: u32| cx.flows[flow as usize].src_host as usize;
    match ev {
        Ev::PortFree { node, port, .. } => match component[node as usize] {
            Component::Switch(s) => switches[s as usize].port_free(cx, port),
            // A NIC's port frees without an event: it plans a wake-up.
            Component::Nic(_) => debug_assert!(false, "a port-free event for a host"),
        },
        Ev::Arrive { node, port, pkt } => match component[node as usize] {
            Component::Nic(h) => nics[h as usize].receive(cx, pkt),
            Component::Switch(s) => switches[s as usize].arrive(cx, port, pkt),
        },
        Ev::Forward { node, egress, pkt } => {
            if let Component::Switch(s) = component[node as usize] {
                switches[s as usize].forward(cx, egress, pkt);
            }
        }
        Ev::FlowStart { flow } => {
            let (src, dst) = (src_of(cx, flow), cx.flows[flow as usize].dst_host as usize);
            nics[src].start_sender(cx, flow);
            nics[dst].open_receiver(cx, flow);
            nics[src].active.push(flow);
            nics[src].try_send(cx);
        }
        Ev::AppData { flow } => nics[src_of(cx, flow)].app_data(cx, flow),
        Ev::CcTimer { flow, gen } => nics[src_of(cx, flow)].cc_timer(cx, flow, gen),
        Ev::Rto { flow } => nics[src_of(cx, flow)].rto(cx, flow),
        Ev::SleekProbe { flow } => nics[src_of(cx, flow)].sleek_probe(cx, flow),
        Ev::NicWake { host } => nics[host as usize].woken(cx),
        Ev::CcDone { host, core } => nics[host as usize].cc_done(cx, core),
        Ev::RxDeliver { host, pkt } => nics[host as usize].deliver(cx, pkt),
        Ev::Pause { node, port, on } => match component[node as usize] {
            Component::Nic(h) => nics[h as usize].pause(cx, on),
            Component::Switch(s) => switches[s as usize].pause(cx, port, on),
        },
        Ev::Sample => {}
    }
}

/// Closes the receiving side of each flow that finished while handling
/// the last event, and starts now the flows their triggers start; the
/// answer is how many finished.
fn close_finished(cx: &mut Ctx, nics: &mut [Nic], triggers: &mut Runtime) -> usize {
    let done = std::mem::take(cx.finished);
    for &flow in &done {
        let dst = cx.flows[flow as usize].dst_host as usize;
        nics[dst].close_receiver(cx, flow);
    }
    if !triggers.is_empty() {
        let mut start = Vec::new();
        for &flow in &done {
            triggers.finished(flow, &mut start);
        }
        for flow in start {
            cx.flows[flow as usize].start_ps = cx.now;
            cx.q.push(cx.now, Ev::FlowStart { flow });
        }
    }
    done.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A connection matrix's triggers start flows when the flows before
    /// them finish: a chain (send_done one-shots), a barrier on two flows,
    /// one of them timed at 5 µs; each triggered flow starts at exactly the
    /// finish that fires it, and every flow finishes.
    #[test]
    fn triggered_flows_start_when_their_trigger_fires() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("t.cm"),
            "Nodes 8\nConnections 5\nTriggers 2\n\
             0->1 id 1 start 0 size 200000 send_done_trigger 1\n\
             1->2 id 2 trigger 1 size 200000 send_done_trigger 2\n\
             3->4 id 3 start 0 size 100000 send_done_trigger 2\n\
             5->4 id 4 start 5 size 100000 recv_done_trigger 2\n\
             6->7 id 5 trigger 2 size 50000\n\
             trigger id 1 oneshot\ntrigger id 2 barrier count 3\n",
        )
        .unwrap();
        let text = "name = \"t\"\nseed = 1\nstop_ms = 20.0\n\
            [topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 1\nhosts_per_leaf = 4\n\
            link_gbps = 100\nfabric_gbps = 100\nlink_delay_ns = 1000\n\
            [nic]\ntelemetry = \"compact\"\n[cc]\nalgorithm = \"hpcc\"\n\
            [workload]\nkind = \"connection_matrix\"\npath = \"t.cm\"\n";
        let s = crate::setup::scenario::parse(text, "t.toml").unwrap();
        let mut w = World::new(&s, dir.path(), "t.toml").unwrap();
        w.run(|_| {});
        let finish = |i: usize| w.flows[i].finish_ps.unwrap_or_else(|| panic!("flow {i} finished"));
        assert_eq!(w.flows[3].start_ps, Ps::from_ns(5_000));
        assert_eq!(w.flows[1].start_ps, finish(0), "the chain");
        let last = finish(1).max(finish(2)).max(finish(3));
        assert_eq!(w.flows[4].start_ps, last, "the barrier's third activation");
        assert!(finish(4) > last);
    }

    /// The fairness windows take their flows from `window_flows`: at
    /// every window the counts are those over every flow (the check in
    /// `sample`), here on flows that start and finish all through the run,
    /// some within one window, some across many.
    #[test]
    fn fairness_windows_count_the_flows_every_flow_would() {
        let text = "name = \"w\"\nseed = 3\nstop_ms = 20.0\n\
            [topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 1\nhosts_per_leaf = 4\n\
            link_gbps = 100\nfabric_gbps = 100\nlink_delay_ns = 1000\n\
            [nic]\ntelemetry = \"compact\"\n[cc]\nalgorithm = \"hpcc\"\n\
            [workload]\nkind = \"cdf\"\ndistribution = \"websearch\"\nload = 0.5\ncount = 300\n\
            [metrics]\nsample_ns = 5000\nwindow_ns = 20000\n";
        let s = crate::setup::scenario::parse(text, "w.toml").unwrap();
        let mut w = World::new(&s, std::path::Path::new("."), "w.toml").unwrap();
        w.run(|_| {});
        assert!(w.windows_checked > 100, "{} windows", w.windows_checked);
        assert!(
            w.metrics.jain.len() > 50,
            "{} windows with two flows or more",
            w.metrics.jain.len()
        );
        let finished = w.flows.iter().filter(|f| f.finish_ps.is_some()).count();
        assert!(finished > 250, "{finished} flows finished");
    }
}
