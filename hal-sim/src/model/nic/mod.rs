//! A host's NIC (HPCC++ §6.3, Figure 7): the cc-core engine, the state of
//! the flows the host sends ([`Sender`]) and receives ([`Receiver`]), and
//! the three parts of the data path:
//!
//! - [`scheduler`]: when the NIC sends — control packets first, then the
//!   next flow round robin that its window (or timer credits) and pacer
//!   allow — and the Tx pipeline that builds each packet (telemetry
//!   header, the ECN codepoint the engine chose) and the go-back-N timer;
//! - [`rx`]: the Rx pipelines — the receiver acknowledges, echoes
//!   telemetry, answers probes and RTT requests, sends CNPs, NACKs and
//!   window feedback; the sender hands every event to the engine;
//! - this module: the engine's door — every event goes to it through
//!   `Nic::engine`, and `Nic::apply` carries out its decision.
//!
//! What the NIC does for a flow comes from its [`Profile`] (capabilities),
//! never from which algorithm runs.

pub mod flows;
pub mod nscc_sums;
pub mod processor;
pub mod profile;
pub mod rx;
pub mod sack;
pub mod scheduler;

use std::collections::VecDeque;

use cc_core::engine::FlowHandle;
use cc_core::path::Sprayer;
use cc_core::prelude::*;
use cc_core::wire::auth::Verifier;

use self::processor::{Job, Processor, Work};
pub use self::profile::{Gate, ProbeKind, Profile};
use crate::model::flow::NOWHERE;
use crate::model::net::Link;
use crate::model::packet::{EcnBits, PktKind};
use crate::run::ctx::Ctx;
use crate::run::event::{ser_ps, Ev, Ps};
use flows::{PerFlow, Receiver, Sender};

/// Flows per NIC's engine table.
pub const FLOWS_PER_NIC: usize = 2048;

/// Flows per NIC's engine table where no host of the workload has more
/// flows than this in all (each flow it sends, and each it receives when
/// the receiver runs an engine).
pub const FEW_FLOWS_PER_NIC: usize = 64;

/// The engine a NIC runs: any algorithm, 8 hops of HPCC++ history, in a
/// table of [`FLOWS_PER_NIC`] flows, or of [`FEW_FLOWS_PER_NIC`] where the
/// workload never needs more, each slot with a path chooser where the
/// scenario sprays. A table of 2048 is about 430 KB: 1024 NICs of them
/// took 440 MB on a permutation that uses one flow a NIC, and their
/// scattered slots cost the loop its caches. The decisions are the same
/// either way (a table that holds every flow refuses none).
pub enum NicEngine {
    /// A table of [`FEW_FLOWS_PER_NIC`].
    Few(Box<Engine<AnyController<8>, FEW_FLOWS_PER_NIC>>),
    /// A table of [`FLOWS_PER_NIC`].
    Many(Box<Engine<AnyController<8>, FLOWS_PER_NIC>>),
    /// A table of [`FEW_FLOWS_PER_NIC`] whose flows may spray.
    FewSprayed(Box<Engine<AnyController<8>, FEW_FLOWS_PER_NIC, Sprayer>>),
    /// A table of [`FLOWS_PER_NIC`] whose flows may spray.
    ManySprayed(Box<Engine<AnyController<8>, FLOWS_PER_NIC, Sprayer>>),
}

/// `$body` with `$e` bound to the engine inside, whichever it is.
macro_rules! each_engine {
    ($self:expr, $e:ident => $body:expr) => {
        match $self {
            NicEngine::Few($e) => $body,
            NicEngine::Many($e) => $body,
            NicEngine::FewSprayed($e) => $body,
            NicEngine::ManySprayed($e) => $body,
        }
    };
}

/// An empty engine of a checked configuration on the heap, one table's
/// frame at a time (a table of [`FLOWS_PER_NIC`] sprayed flows is most of
/// a test thread's 2 MiB stack).
#[inline(never)]
fn boxed<const N: usize, P: cc_core::path::PathState>(cfg: AnyConfig) -> Box<Engine<AnyController<8>, N, P>> {
    Box::new(Engine::new_const(cfg))
}

impl NicEngine {
    /// An engine of configuration `cfg` for a NIC that takes part in at
    /// most `flows` flows, with path choosers if `sprays`.
    pub fn new(cfg: AnyConfig, flows: usize, sprays: bool) -> Result<Self, Error> {
        <AnyController<8> as cc_core::controller::Controller>::validate(&cfg)?;
        Ok(match (flows <= FEW_FLOWS_PER_NIC, sprays) {
            (true, false) => NicEngine::Few(boxed(cfg)),
            (false, false) => NicEngine::Many(boxed(cfg)),
            (true, true) => NicEngine::FewSprayed(boxed(cfg)),
            (false, true) => NicEngine::ManySprayed(boxed(cfg)),
        })
    }

    /// [`Engine::event`].
    #[inline(always)]
    pub fn event(&mut self, h: FlowHandle, now: Instant, kind: &EventKind<'_>) -> Result<Decision, Error> {
        each_engine!(self, e => e.event(h, now, kind))
    }

    /// [`Engine::handle`].
    pub fn handle(&mut self, now: Instant, event: &Event<'_>) -> Result<Decision, Error> {
        each_engine!(self, e => e.handle(now, event))
    }

    /// [`Engine::reset`].
    pub fn reset(&mut self, cfg: AnyConfig) -> Result<(), Error> {
        each_engine!(self, e => e.reset(cfg))
    }

    /// [`Engine::config`].
    pub fn config(&self) -> &AnyConfig {
        each_engine!(self, e => e.config())
    }

    /// [`Engine::get`].
    pub fn get(&self, h: FlowHandle) -> Option<&AnyController<8>> {
        each_engine!(self, e => e.get(h))
    }

    /// [`Engine::start`].
    pub fn start(&mut self, now: Instant, id: FlowId, params: &FlowParams) -> Result<(FlowHandle, Decision), Error> {
        each_engine!(self, e => e.start(now, id, params))
    }

    /// [`Engine::next_ev`].
    pub fn next_ev(&mut self, h: FlowHandle) -> Option<cc_core::path::Ev> {
        each_engine!(self, e => e.next_ev(h))
    }
}

/// The NIC's uplink: one link, one packet at a time.
#[derive(Clone, Copy, Debug)]
pub struct Uplink {
    /// The link to the first switch.
    pub link: Link,
    /// When the packet being serialized is done.
    pub busy_until: Ps,
    /// When the last packet sent reaches the peer (Tx jitter keeps
    /// arrivals in order).
    pub last_arrival: Ps,
    /// Paused by the switch (PFC XOFF) since this instant.
    pub paused_since: Option<Ps>,
}

/// A host's NIC.
pub struct Nic {
    /// Host index.
    pub host: u32,
    /// Node id.
    pub node: u32,
    /// The cc-core engine (sender and receiver roles).
    pub engine: NicEngine,
    /// What it does for its flows.
    pub profile: Profile,
    /// The uplink.
    pub uplink: Uplink,
    /// Flows this host sends, each at its record's `tx_at`.
    pub senders: PerFlow<Sender>,
    /// Flows this host receives, each at its record's `rx_at`.
    pub receivers: PerFlow<Receiver>,
    /// Flows with data to send, in round-robin order.
    pub active: Vec<u32>,
    /// Round-robin position in `active`.
    pub rr: usize,
    /// Control packets waiting for the uplink (served before data).
    pub ctrl: VecDeque<u32>,
    /// When the pending wake-up fires.
    pub wake_at: Option<Ps>,
    /// Integrity checks of notifications arriving here.
    pub verifier: Verifier,
    /// The congestion-control processor the engine runs on, if the
    /// scenario has one; without it every event is answered at once.
    pub ccp: Option<Box<Processor>>,
    /// When its Rx buffer will have drained to the host
    /// (`nic.rx_drain_gbps`): the buffer is a FIFO emptied at a constant
    /// rate, so this instant is its whole state.
    pub rx_free_at: Ps,
    /// The SACK transport's receiving state of the flows it receives, each
    /// at its receiver's `sack_at`.
    pub sack_rx: PerFlow<sack::SackRx>,
}

impl Nic {
    /// The NIC of host `host` (node `node`) on `uplink`.
    pub fn new(host: u32, node: u32, uplink: Link, engine: NicEngine, profile: Profile, verifier: Verifier) -> Self {
        Nic {
            host,
            node,
            engine,
            profile,
            uplink: Uplink {
                link: uplink,
                busy_until: Ps::ZERO,
                last_arrival: Ps::ZERO,
                paused_since: None,
            },
            senders: PerFlow::default(),
            receivers: PerFlow::default(),
            active: Vec::new(),
            rr: 0,
            ctrl: VecDeque::new(),
            wake_at: None,
            verifier,
            ccp: None,
            rx_free_at: Ps::ZERO,
            sack_rx: PerFlow::default(),
        }
    }

    /// The sending state of `flow`, if this NIC sends it.
    pub fn sender(&self, cx: &Ctx, flow: u32) -> Option<&Sender> {
        self.senders.get(cx.flows.get(flow as usize)?.tx_at, flow)
    }

    /// The sending state of `flow`, mutably.
    pub fn sender_mut(&mut self, cx: &Ctx, flow: u32) -> Option<&mut Sender> {
        self.senders.get_mut(cx.flows.get(flow as usize)?.tx_at, flow)
    }

    /// The receiving state of `flow`, if this NIC receives it.
    pub fn receiver(&self, cx: &Ctx, flow: u32) -> Option<&Receiver> {
        self.receivers.get(cx.flows.get(flow as usize)?.rx_at, flow)
    }

    /// The receiving state of `flow`, mutably.
    pub fn receiver_mut(&mut self, cx: &Ctx, flow: u32) -> Option<&mut Receiver> {
        self.receivers.get_mut(cx.flows.get(flow as usize)?.rx_at, flow)
    }

    /// Flow parameters for this NIC's engine: the flow's base RTT and the
    /// uplink's speed.
    fn params(&self, cx: &Ctx, flow: u32, algorithm: Algorithm) -> FlowParams {
        FlowParams {
            algorithm,
            base_rtt: BaseRtt::from_nanos(cx.flows[flow as usize].base_rtt_ns)
                .unwrap_or(BaseRtt::from_nanos(BaseRtt::MAX_NS).expect("in range")),
            line_rate: LinkSpeed::from_mbps((self.uplink.link.bps / 1_000_000) as u32),
            start_seq: Seq(0),
        }
    }

    /// Hands an event for `flow` to the engine (or to the firmware
    /// co-simulating it); a refusal is counted. `at` is the flow's handle
    /// in this NIC's engine, from its start: the event goes straight to
    /// the flow's slot. Without one (the engine refused the start, or the
    /// firmware runs the flow) it goes by flow id, as the trace records it.
    #[inline]
    pub(crate) fn engine(
        &mut self,
        cx: &mut Ctx,
        flow: u32,
        at: Option<FlowHandle>,
        kind: EventKind<'_>,
    ) -> Option<Decision> {
        let now = Instant::from_nanos(cx.now.as_ns());
        if !cx.metrics.nscc.is_empty() {
            return self.engine_nscc(cx, flow, at, now, kind);
        }
        let answer = self.answer(cx, flow, at, now, kind);
        Self::count(cx, answer)
    }

    /// The engine's answer to `kind`: by handle, or by id with a trace or
    /// co-simulation (or without a handle).
    #[inline(always)]
    pub(super) fn answer(
        &mut self,
        cx: &mut Ctx,
        flow: u32,
        at: Option<FlowHandle>,
        now: Instant,
        kind: EventKind<'_>,
    ) -> Result<Decision, Error> {
        match at {
            Some(h) if cx.tap.trace.is_none() && cx.tap.cosim.is_none() => self.engine.event(h, now, &kind),
            _ => self.engine_by_id(cx, flow, at, now, kind),
        }
    }

    /// [`Nic::engine`] with a trace or co-simulation, or without a handle.
    #[inline(never)]
    fn engine_by_id(
        &mut self,
        cx: &mut Ctx,
        flow: u32,
        at: Option<FlowHandle>,
        now: Instant,
        kind: EventKind<'_>,
    ) -> Result<Decision, Error> {
        let event = Event {
            flow: FlowId(flow),
            kind,
        };
        match self.tapped(cx, flow, now, &event) {
            Some(answer) => answer,
            None => match at {
                Some(h) => self.engine.event(h, now, &event.kind),
                None => self.engine.handle(now, &event),
            },
        }
    }

    /// Starts `flow` in the engine (or the firmware): its handle in this
    /// NIC's engine, if the engine runs it, and its first decision.
    fn engine_start(&mut self, cx: &mut Ctx, flow: u32, params: FlowParams) -> (Option<FlowHandle>, Option<Decision>) {
        let now = Instant::from_nanos(cx.now.as_ns());
        let event = Event {
            flow: FlowId(flow),
            kind: EventKind::Start(params),
        };
        if let Some(answer) = self.tapped(cx, flow, now, &event) {
            return (None, Self::count(cx, answer));
        }
        match self.engine.start(now, FlowId(flow), &params) {
            Ok((h, d)) => (Some(h), Some(d)),
            Err(e) => (None, Self::count(cx, Err(e))),
        }
    }

    /// Records `event` if the trace selects the flow; the firmware's
    /// answer if it co-simulates the flow.
    fn tapped(&self, cx: &mut Ctx, flow: u32, now: Instant, event: &Event<'_>) -> Option<Result<Decision, Error>> {
        let host = self.host;
        if let Some(t) = cx.tap.trace.as_mut().filter(|t| t.selection.wants(host, flow)) {
            t.record(now, event);
        }
        let fw = cx
            .tap
            .cosim
            .as_mut()
            .filter(|f| f.failure.is_none() && f.selection.wants(host, flow))?;
        Some(fw.handle(now, event).unwrap_or_else(|e| {
            fw.failure = Some(e);
            Err(Error::NotApplicable)
        }))
    }

    /// The engine's answer, a refusal counted.
    pub(super) fn count(cx: &mut Ctx, answer: Result<Decision, Error>) -> Option<Decision> {
        match answer {
            Ok(d) => Some(d),
            Err(_) => {
                cx.metrics.counters.engine_refusals += 1;
                None
            }
        }
    }

    /// Opens the receiving side of `flow`: its state, and its receiver
    /// engine if the profile has one.
    #[inline(never)]
    pub fn open_receiver(&mut self, cx: &mut Ctx, flow: u32) {
        let mut r = Receiver::new();
        if cx.cfg.sack_bytes.is_some() {
            r.sack_at = self.sack_open_rx(flow);
        }
        if let Some(algorithm) = self.profile.receiver {
            let p = self.params(cx, flow, algorithm);
            r.engine = self.engine_start(cx, flow, p).0;
        }
        cx.flows[flow as usize].rx_at = self.receivers.open(flow, r);
    }

    /// Closes the receiving side of a finished flow.
    #[inline(never)]
    pub fn close_receiver(&mut self, cx: &mut Ctx, flow: u32) {
        let rec = &mut cx.flows[flow as usize];
        let r = self.receivers.close(rec.rx_at, flow);
        rec.rx_at = NOWHERE;
        if let Some(r) = &r {
            self.sack_close_rx(r.sack_at, flow);
        }
        if self.profile.receiver.is_some() {
            self.engine(cx, flow, r.and_then(|r| r.engine), EventKind::End);
        }
    }

    /// Starts sending `flow`.
    #[inline(never)]
    pub fn start_sender(&mut self, cx: &mut Ctx, flow: u32) {
        let f = &cx.flows[flow as usize];
        let app_limit = match cx.cfg.on_off {
            Some((burst, _)) => burst.min(f.size),
            None => f.size,
        };
        let p = self.params(cx, flow, self.profile.sender);
        let mut s = Sender::new(app_limit);
        if cx.cfg.sack_bytes.is_some() {
            s.sack = Some(Box::new(sack::SackTx::new(cx.cfg.sleek)));
        }
        let (at, mut d) = self.engine_start(cx, flow, p);
        // A sprayed flow's path choice, seeded from the run's stream.
        if let (Some((paths, lb)), Some(_)) = (cx.cfg.spray, at) {
            let spray = cc_core::path::Spray {
                paths,
                balancer: lb.balancer(),
                seed: rand_chacha::rand_core::Rng::next_u32(&mut cx.rng.ev),
            };
            d = self.engine(cx, flow, at, EventKind::Spray(spray)).or(d);
        }
        s.engine = at;
        cx.flows[flow as usize].tx_at = self.senders.open(flow, s);
        if let Some(d) = d {
            self.apply(cx, flow, &d);
        }
    }

    /// Every byte of `flow` is acknowledged: its sender state and engine
    /// entry go, and the world is told (the receiver closes its side).
    #[inline(never)]
    fn finish(&mut self, cx: &mut Ctx, flow: u32) {
        let rec = &mut cx.flows[flow as usize];
        let Some(s) = self.senders.close(rec.tx_at, flow) else {
            return;
        };
        rec.tx_at = NOWHERE;
        rec.finish_ps = Some(cx.now);
        if let Some(p) = self.ccp.as_mut() {
            p.forget(cx.now, flow);
            p.offer(cx.now, flow, s.engine, Work::End);
            self.cc_start(cx);
        } else {
            self.engine(cx, flow, s.engine, EventKind::End);
        }
        self.active.retain(|&x| x != flow);
        cx.finished.push(flow);
    }

    /// Carries out the engine's decision for a flow this NIC sends.
    #[inline(always)]
    pub(crate) fn apply(&mut self, cx: &mut Ctx, flow: u32, d: &Decision) {
        let Some(f) = self.sender_mut(cx, flow) else { return };
        f.window = d.window;
        // At least 1 Mb/s: a pace the simulated pacer can time. The rate
        // only when the pacing is not the one it came from, and its
        // divisions (five) only when its base RTT is new.
        let rate = match f.pacing {
            Some(p) if p == d.pacing => f.rate,
            _ => {
                f.pacing = Some(d.pacing);
                let r = d.pacing.rate_with(&mut f.rate_div);
                Rate::from_bps(r.as_bps().max(1_000_000))
            }
        };
        if rate != f.rate && f.pacer.wire > 0 {
            // The pacer re-times the gap after the last packet at the new
            // rate (as the SIGCOMM'19 simulator's NIC does): a flow whose
            // rate rises need not wait out a gap set at the old one.
            let gap = ser_ps(f.pacer.wire, rate.as_bps());
            f.pacer.next_send_ps = f.pacer.next_send_ps - f.pacer.gap_ps + gap;
            f.pacer.gap_ps = gap;
        }
        f.rate = rate;
        match d.timer {
            TimerRequest::Keep => {}
            TimerRequest::Arm(t) => {
                f.cc_gen = f.cc_gen.wrapping_add(1);
                let at = Ps::from_ns(t.as_nanos()).max(cx.now);
                cx.q.push(at, Ev::CcTimer { flow, gen: f.cc_gen });
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
                let probe = self.profile.probe;
                let kind = match probe {
                    ProbeKind::Rtt => PktKind::RttReq,
                    ProbeKind::Telemetry => PktKind::Probe,
                };
                let dst = cx.flows[flow as usize].dst_host;
                self.send_ctrl(cx, dst, flow, kind, |cx, p| {
                    p.ts_ps = cx.now;
                    p.probe = id;
                    if probe == ProbeKind::Telemetry {
                        scheduler::attach_telemetry(cx, p);
                        p.set_ecn(EcnBits::Ect);
                    }
                });
            }
            Request::None | Request::Feedback { .. } | Request::ProbeReply { .. } => {}
        }
    }

    /// The engine's timer for `flow` fired (void if `gen` is stale).
    #[inline(never)]
    pub fn cc_timer(&mut self, cx: &mut Ctx, flow: u32, gen: u32) {
        let Some(f) = self.sender(cx, flow) else { return };
        if f.cc_gen != gen {
            return;
        }
        if self.ccp.is_some() {
            self.cc_offer(cx, flow, f.engine, Work::Timer { gen });
            return self.try_send(cx);
        }
        if let Some(d) = self.engine(cx, flow, f.engine, EventKind::Timer) {
            self.apply(cx, flow, &d);
        }
        self.try_send(cx);
    }

    /// A sender-side event of `flow` (engine handle `at`) to the engine:
    /// queued for the congestion-control processor if the NIC has one,
    /// else answered and its decision applied at once.
    #[inline(always)]
    pub(crate) fn sender_to_engine(&mut self, cx: &mut Ctx, flow: u32, at: Option<FlowHandle>, kind: EventKind<'_>) {
        if self.ccp.is_some() {
            if let Some(work) = Work::of(&kind) {
                return self.cc_offer(cx, flow, at, work);
            }
        }
        if let Some(d) = self.engine(cx, flow, at, kind) {
            self.apply(cx, flow, &d);
        }
    }

    /// Hands `work` for `flow` (engine handle `at`) to the
    /// congestion-control processor; a free core takes it at once.
    #[inline(never)]
    pub(crate) fn cc_offer(&mut self, cx: &mut Ctx, flow: u32, at: Option<FlowHandle>, work: Work) {
        let Some(p) = self.ccp.as_mut() else { return };
        p.offer(cx.now, flow, at, work);
        self.cc_start(cx);
    }

    /// Free cores take the waiting events.
    fn cc_start(&mut self, cx: &mut Ctx) {
        while let Some(core) = self.ccp.as_mut().and_then(|p| p.ready()) {
            self.cc_serve(cx, core);
        }
    }

    /// `core` takes the oldest waiting event: the engine runs on it now,
    /// and its decision waits for the core to finish (an event that costs
    /// nothing is decided at once, as without a processor).
    fn cc_serve(&mut self, cx: &mut Ctx, core: u16) {
        loop {
            let Some(p) = self.ccp.as_mut() else { return };
            let Some((job, service)) = p.take(cx.now, core) else {
                return;
            };
            let (flow, d) = (job.flow, self.cc_run(cx, &job));
            if service == Ps::ZERO {
                if let Some(d) = d {
                    self.apply(cx, flow, &d);
                }
                continue;
            }
            if let Some(slot) = self.ccp.as_mut().and_then(|p| p.results.get_mut(core as usize)) {
                *slot = Some((flow, d));
            }
            cx.q.push(cx.now + service, Ev::CcDone { host: self.host, core });
            return;
        }
    }

    /// The engine on a queued event (a timer only if it is still the
    /// flow's current one).
    fn cc_run(&mut self, cx: &mut Ctx, job: &Job) -> Option<Decision> {
        let kind = match (&job.work, job.work.event()) {
            (_, Some(kind)) => kind,
            (Work::Timer { gen }, _) => match self.sender(cx, job.flow) {
                Some(f) if f.cc_gen == *gen => EventKind::Timer,
                _ => return None,
            },
            _ => EventKind::End,
        };
        self.engine(cx, job.flow, job.at, kind)
    }

    /// A core of the processor finished: its decision reaches the flow,
    /// and it takes the next event.
    #[inline(never)]
    pub fn cc_done(&mut self, cx: &mut Ctx, core: u16) {
        let done = self.ccp.as_mut().and_then(|p| p.results.get_mut(core as usize)?.take());
        if let Some((flow, Some(d))) = done {
            self.apply(cx, flow, &d);
        }
        self.cc_serve(cx, core);
        self.try_send(cx);
    }

    /// An on/off flow's next burst: the application hands it over and the
    /// scheduler may send again.
    #[inline(never)]
    pub fn app_data(&mut self, cx: &mut Ctx, flow: u32) {
        let Some((burst, _)) = cx.cfg.on_off else { return };
        let size = cx.flows[flow as usize].size;
        if let Some(f) = self.sender_mut(cx, flow) {
            f.app_waiting = false;
            f.app_limit = (f.app_limit + burst).min(size);
        }
        self.try_send(cx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::nic::flows::Sender;
    use crate::run::world::World;

    fn world() -> World {
        let text = "name = \"p\"\nstop_ms = 1.0\n[topology]\nkind = \"incast\"\nsenders = 1\nlink_gbps = 100\nlink_delay_ns = 1000\n[cc]\nalgorithm = \"hpcc\"\n[workload]\nkind = \"incast\"\nbytes = 100000\n";
        let s = crate::setup::scenario::parse(text, "p.toml").unwrap();
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
            ev: None,
        }
    }

    /// Applies `d` to flow 0 at `now` ns and returns its pacer's next send time.
    fn apply_at(w: &mut World, now_ns: u64, d: &Decision) -> Ps {
        w.now = Ps::from_ns(now_ns);
        let src = w.flows[0].src_host as usize;
        let (mut cx, nics, _, _) = w.parts();
        nics[src].apply(&mut cx, 0, d);
        nics[src].sender(&cx, 0).unwrap().pacer.next_send_ps
    }

    #[test]
    fn a_new_rate_retimes_the_gap_after_the_last_packet() {
        let mut w = world();
        let src = w.flows[0].src_host as usize;
        w.flows[0].tx_at = w.nics[src].senders.open(0, Sender::new(100_000));
        apply_at(&mut w, 1_000, &decision(10));
        // A 1000-byte packet sent at 1 µs at 10 Gb/s: next one at 1.8 µs.
        {
            let f = w.nics[src].senders.get_mut(w.flows[0].tx_at, 0).unwrap();
            f.pacer.wire = 1000;
            f.pacer.gap_ps = ser_ps(1000, f.rate.as_bps());
            f.pacer.next_send_ps = Ps::from_ns(1_000) + f.pacer.gap_ps;
            assert_eq!(f.pacer.next_send_ps, Ps::from_ns(1_800));
        }
        // The rate doubles 100 ns later: the gap is now 400 ns from the send.
        assert_eq!(apply_at(&mut w, 1_100, &decision(20)), Ps::from_ns(1_400));
        // It falls to 1 Gb/s: 8 µs after the send.
        assert_eq!(apply_at(&mut w, 1_100, &decision(1)), Ps::from_ns(9_000));
        // Unchanged rate, unchanged plan.
        assert_eq!(apply_at(&mut w, 1_100, &decision(1)), Ps::from_ns(9_000));
    }
}
