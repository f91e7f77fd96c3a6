//! The flow table and the engine's entry points.
//!
//! `Engine<C, N>` holds up to `N` flows of controller `C` in fixed slots (N
//! at most 65536): no heap, a full table or unknown flow is an error value,
//! and a refused event touches no flow. Every refusal is counted in
//! [`Stats`].
//!
//! Two ways to address a flow:
//!
//! - by [`FlowHandle`], the slot [`Engine::start`] hands out: what a NIC
//!   keeps in its queue-pair context and passes with every event, as
//!   hardware passes a flow context to its congestion-control core. No
//!   hashing: [`Engine::event`] indexes the slot and checks its generation,
//!   so a handle kept past its flow's end is refused, never taken for the
//!   flow that reuses the slot. This is the firmware's hot path.
//! - by [`FlowId`] through [`Engine::handle`], for hosts that name flows by
//!   a number of their own: a `heapless` FNV index map finds the slot.

use heapless::index_map::FnvIndexMap;
use heapless::Vec;

use crate::controller::{sprayed_sent, Controller};
use crate::error::Error;
use crate::event::{Ack, Decision, EcnEcho, Event, EventKind, FlowId, FlowParams, MessageEnd, Nack, ProbeId};
use crate::path::{Ev, Feedback, NoPaths, PathState, Spray};
use crate::telemetry::HopSample;
use crate::units::{Instant, Seq, Window};

/// Counters of refused events, by reason.
///
/// Events handled are not counted here: whoever hands the engine its
/// events knows how many it handed (a firmware's dispatch loop, the
/// simulator's event count), and a count in the engine cost every event
/// a 64-bit add, 7 instructions on rv32imac.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Stats {
    /// Events for flows not in the table (or for a handle whose flow ended).
    pub unknown_flow: u32,
    /// Starts refused because the table was full.
    pub table_full: u32,
    /// Starts for ids already in the table, or with bad parameters.
    pub bad_start: u32,
    /// Telemetry refused (too many hops, bad widths, stale) and delay
    /// samples refused (missing, wrapped, absurd).
    pub bad_telemetry: u32,
    /// Events that do not apply to the flow's algorithm.
    pub not_applicable: u32,
}

impl Stats {
    /// Every refusal, whatever its reason.
    pub fn refused(&self) -> u64 {
        [
            self.unknown_flow,
            self.table_full,
            self.bad_start,
            self.bad_telemetry,
            self.not_applicable,
        ]
        .iter()
        .map(|&n| n as u64)
        .sum()
    }
}

/// Where a flow lives in an [`Engine`]: its slot and the slot's generation
/// when the flow started. Handed out by [`Engine::start`], valid until the
/// flow ends; afterwards every use is refused with
/// [`Error::UnknownFlow`].
///
/// One word, the generation in its high half and the slot in its low half:
/// it travels in one register, and an event's check that it names the
/// slot's flow is one compare of the word the slot keeps.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct FlowHandle(u32);

impl FlowHandle {
    /// The slot, 0 ..= N − 1: an index for the NIC's own per-flow arrays.
    pub const fn index(self) -> u16 {
        self.0 as u16
    }

    /// The slot's generation when the flow started.
    pub const fn generation(self) -> u16 {
        (self.0 >> 16) as u16
    }

    /// The handle as one word (generation in the high half), for a queue
    /// pair context or a message.
    pub const fn to_bits(self) -> u32 {
        self.0
    }

    /// A handle from [`FlowHandle::to_bits`]. Any word is accepted; the
    /// engine refuses one that names no live flow.
    pub const fn from_bits(bits: u32) -> Self {
        FlowHandle(bits)
    }
}

impl core::fmt::Debug for FlowHandle {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FlowHandle")
            .field("index", &self.index())
            .field("generation", &self.generation())
            .finish()
    }
}

/// A slot's generation step in its handle word.
const NEXT_GENERATION: u32 = 1 << 16;

/// One slot of the table.
#[derive(Clone, Copy)]
struct Slot<C, P> {
    /// The handle of the slot's flow (of its last flow, or of its next
    /// when it holds none): the generation, bumped when the flow ends, in
    /// the high half; the slot's index, set when a flow starts, in the low.
    handle: u32,
    state: Option<C>,
    /// The flow's path choice (nothing for [`NoPaths`]).
    path: P,
}

impl<C, P> Slot<C, P> {
    /// The slot's flow, if `flow` names it (the slot holds a flow and
    /// `flow` has the slot's current generation).
    fn live(&self, flow: FlowHandle) -> Option<&C> {
        match self.state {
            Some(ref c) if self.handle == flow.0 => Some(c),
            _ => None,
        }
    }

    /// [`Slot::live`], mutably.
    #[inline(always)]
    fn live_mut(&mut self, flow: FlowHandle) -> Option<&mut C> {
        match self.state {
            Some(ref mut c) if self.handle == flow.0 => Some(c),
            _ => None,
        }
    }

    /// [`Slot::live_mut`] with the flow's path state.
    #[inline(always)]
    fn live_path(&mut self, flow: FlowHandle) -> Option<(&mut C, &mut P)> {
        match self.state {
            Some(ref mut c) if self.handle == flow.0 => Some((c, &mut self.path)),
            _ => None,
        }
    }
}

/// The congestion-control engine: a config and a table of flows, each
/// with its path state `P`: [`NoPaths`] (the default, of no size) for
/// flows that take one path, [`crate::path::Sprayer`] for an engine whose
/// flows may spray ([`EventKind::Spray`]).
pub struct Engine<C: Controller, const N: usize, P: PathState = NoPaths> {
    cfg: C::Config,
    slots: [Slot<C, P>; N],
    /// The id each slot's flow was started with (to remove it from `ids`
    /// when it ends), apart from the slots so that an event's slot is the
    /// state and its handle alone.
    slot_ids: [FlowId; N],
    /// Slots given back by ended flows, the next one to reuse last.
    free: Vec<u16, N>,
    /// Slots `fresh..N` have never held a flow.
    fresh: u32,
    ids: FnvIndexMap<FlowId, u16, N>,
    stats: Stats,
}

impl<C: Controller, const N: usize, P: PathState> Engine<C, N, P> {
    const EMPTY: Slot<C, P> = Slot {
        handle: 0,
        state: None,
        path: P::OFF,
    };

    /// An empty engine; `InvalidParams` if the config is out of range.
    /// `N` must be a power of two (the index map's rule) of at most 65536.
    pub fn new(cfg: C::Config) -> Result<Self, Error> {
        C::validate(&cfg)?;
        Ok(Self::new_const(cfg))
    }

    /// An empty engine as a constant expression, for a table in a `static`
    /// (a firmware's flow table is far too large to build on the stack and
    /// copy: `static_cell::ConstStaticCell::new(Engine::new_const(cfg))`).
    /// A `const fn` cannot call [`Controller::validate`], so the
    /// configuration is not checked here: give one that [`Engine::new`]
    /// accepts (the drafts' defaults are), or check it with
    /// [`Engine::reset`] before the first event.
    pub const fn new_const(cfg: C::Config) -> Self {
        const {
            assert!(N <= 1 << 16, "an engine holds at most 65536 flows");
            assert!(N.is_power_of_two(), "an engine's table size is a power of two");
        };
        Engine {
            cfg,
            slots: [Self::EMPTY; N],
            slot_ids: [FlowId(0); N],
            free: Vec::new(),
            fresh: 0,
            ids: FnvIndexMap::new(),
            stats: Stats {
                unknown_flow: 0,
                table_full: 0,
                bad_start: 0,
                bad_telemetry: 0,
                not_applicable: 0,
            },
        }
    }

    /// Replaces the configuration and empties the table and the counters,
    /// in place (a firmware need not hold a second table while it
    /// reconfigures). A config out of range is refused and changes nothing.
    /// Handles of the old flows are refused from then on.
    pub fn reset(&mut self, cfg: C::Config) -> Result<(), Error> {
        C::validate(&cfg)?;
        self.cfg = cfg;
        for s in self.slots.iter_mut() {
            if s.state.take().is_some() {
                s.handle = s.handle.wrapping_add(NEXT_GENERATION);
            }
        }
        self.ids.clear();
        self.free.clear();
        self.fresh = 0;
        self.stats = Stats::default();
        Ok(())
    }

    /// The slot `flow` names: its index bits taken modulo N (a power of
    /// two), so always a slot of the table. A handle whose index is N or
    /// more lands on a slot whose handle word has another index, and is
    /// refused by [`Slot::live`]'s compare of the whole word.
    #[inline(always)]
    fn slot_of(flow: FlowHandle) -> usize {
        flow.0 as usize & (N - 1)
    }

    /// The shared parameters.
    pub fn config(&self) -> &C::Config {
        &self.cfg
    }

    /// Event counters.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// Flows in the table.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The handle of the flow started with `id`.
    pub fn lookup(&self, id: FlowId) -> Option<FlowHandle> {
        let &index = self.ids.get(&id)?;
        let slot = self.slots.get(index as usize)?;
        Some(FlowHandle(slot.handle))
    }

    /// A flow's state.
    pub fn flow(&self, id: FlowId) -> Option<&C> {
        self.get(self.lookup(id)?)
    }

    /// A flow's state, mutably (to restore a checkpoint).
    pub fn flow_mut(&mut self, id: FlowId) -> Option<&mut C> {
        let h = self.lookup(id)?;
        self.get_mut(h)
    }

    /// A flow's state by handle.
    pub fn get(&self, flow: FlowHandle) -> Option<&C> {
        self.slots.get(Self::slot_of(flow))?.live(flow)
    }

    /// A flow's state by handle, mutably (to restore a checkpoint).
    pub fn get_mut(&mut self, flow: FlowHandle) -> Option<&mut C> {
        self.slots.get_mut(Self::slot_of(flow))?.live_mut(flow)
    }

    /// A flow's path state by handle (a NIC's view of its sprayer).
    pub fn path(&self, flow: FlowHandle) -> Option<&P> {
        let s = self.slots.get(Self::slot_of(flow))?;
        s.live(flow).map(|_| &s.path)
    }

    /// The next entropy value of a sprayed flow's chooser, for a packet
    /// that no event of the controller's sends (a loss-recovery probe:
    /// uet-htsim's `sendProbe` asks its chooser as a data packet does);
    /// `None` for a flow that does not spray or an unknown flow. The
    /// chooser moves on as it does for a data packet.
    pub fn next_ev(&mut self, flow: FlowHandle) -> Option<Ev> {
        let (_, path) = self.slots.get_mut(Self::slot_of(flow))?.live_path(flow)?;
        path.next()
    }

    /// A flow's current decision: what stands after a refused event.
    pub fn decision(&self, id: FlowId) -> Option<Decision> {
        self.flow(id).map(|c| c.decision(&self.cfg))
    }

    /// Starts flow `id` at `now`: its handle and first decision.
    /// `FlowExists` if `id` is in the table, `TableFull`, or the
    /// controller's refusal of the parameters.
    pub fn start(&mut self, now: Instant, id: FlowId, params: &FlowParams) -> Result<(FlowHandle, Decision), Error> {
        let r = self.start_flow(now, id, params);
        let _ = self.count(r.map(|(_, d)| d));
        r
    }

    fn start_flow(&mut self, now: Instant, id: FlowId, params: &FlowParams) -> Result<(FlowHandle, Decision), Error> {
        if self.ids.contains_key(&id) {
            return Err(Error::FlowExists);
        }
        // A slot given back, else one never used.
        let (index, reused) = match self.free.last() {
            Some(&i) => (i, true),
            None if (self.fresh as usize) < N => (self.fresh as u16, false),
            None => return Err(Error::TableFull),
        };
        let (state, d) = C::start(&self.cfg, now, params)?;
        let slot = self.slots.get_mut(index as usize).ok_or(Error::TableFull)?;
        self.ids.insert(id, index).map_err(|_| Error::TableFull)?;
        if let Some(s) = self.slot_ids.get_mut(index as usize) {
            *s = id;
        }
        if reused {
            self.free.pop();
        } else {
            self.fresh += 1;
        }
        slot.state = Some(state);
        slot.path = P::OFF;
        slot.handle = (slot.handle & !0xFFFF) | index as u32;
        let handle = FlowHandle(slot.handle);
        Ok((handle, d))
    }

    /// Ends a flow: its state is dropped, its handle refused from now on.
    /// The answer is its last decision.
    pub fn end(&mut self, flow: FlowHandle) -> Result<Decision, Error> {
        let r = self.end_flow(flow);
        self.count(r)
    }

    fn end_flow(&mut self, flow: FlowHandle) -> Result<Decision, Error> {
        let slot = self.slots.get_mut(Self::slot_of(flow)).ok_or(Error::UnknownFlow)?;
        slot.live(flow).ok_or(Error::UnknownFlow)?;
        let state = slot.state.take().ok_or(Error::UnknownFlow)?;
        slot.handle = slot.handle.wrapping_add(NEXT_GENERATION);
        if let Some(id) = self.slot_ids.get(flow.index() as usize) {
            self.ids.swap_remove(id);
        }
        // Ended slots plus live flows are at most N: there is room.
        let _ = self.free.push(flow.index());
        Ok(state.decision(&self.cfg))
    }

    /// One event for the flow at `flow`, at `now`. `Start` is refused
    /// here (`FlowExists`: use [`Engine::start`]); `End` ends the flow;
    /// every other kind goes to its entry below ([`Engine::ack`],
    /// [`Engine::timer`], ...), which a firmware that knows the kind calls
    /// directly, as a NIC's congestion-control core is handed one event
    /// type at a time.
    pub fn event(&mut self, flow: FlowHandle, now: Instant, kind: &EventKind<'_>) -> Result<Decision, Error> {
        match *kind {
            EventKind::Start(_) => self.count(Err(Error::FlowExists)),
            EventKind::End => self.end(flow),
            EventKind::Ack(ref ack) => self.ack(flow, now, ack),
            EventKind::Sent { seq, len, end } => self.sent(flow, now, seq, len, end),
            EventKind::Loss { first_lost, ev } => self.loss(flow, now, first_lost, ev),
            EventKind::Nack(ref nack) => self.nack(flow, now, nack),
            EventKind::Cnp => self.cnp(flow, now),
            EventKind::RttResponse { probe, rtt_ns } => self.rtt_response(flow, now, probe, rtt_ns),
            EventKind::ProbeResponse {
                probe,
                hop_index,
                ref hop,
            } => self.probe_response(flow, now, probe, hop_index, hop),
            EventKind::RxTelemetry { telemetry } => self.rx_telemetry(flow, now, telemetry),
            EventKind::ProbeRequest { telemetry } => self.probe_request(flow, now, telemetry),
            EventKind::Feedback { window } => self.feedback(flow, now, window),
            EventKind::FlowCount { flows } => self.flow_count(flow, now, flows),
            EventKind::Timer => self.timer(flow, now),
            EventKind::Spray(ref spray) => self.spray(flow, now, spray),
        }
    }

    /// The one path of every per-flow event: the slot by index, its
    /// generation checked, the controller's hook, the answer counted. Each
    /// entry below is its own function, so one event kind's code (and the
    /// registers it needs) stays out of every other's way.
    #[inline(always)]
    fn apply(
        &mut self,
        flow: FlowHandle,
        hook: impl FnOnce(&mut C, &C::Config) -> Result<Decision, Error>,
    ) -> Result<Decision, Error> {
        // Each controller validates before it mutates, so an Err leaves
        // the flow as it was (checked by the property tests).
        let r = match self.slots.get_mut(Self::slot_of(flow)).and_then(|s| s.live_mut(flow)) {
            Some(state) => hook(state, &self.cfg),
            None => Err(Error::UnknownFlow),
        };
        self.count(r)
    }

    /// [`Engine::apply`] for an event that tells the flow's path state
    /// something (a `Sent` where flows can spray, or an answer that
    /// echoes an EV): the controller's hook, told whether the flow
    /// sprays, then the path's `step` with the decision, unless the
    /// controller refused (a refused answer tells the path nothing).
    #[cold]
    #[inline(never)]
    fn apply_path(
        &mut self,
        flow: FlowHandle,
        hook: impl FnOnce(&mut C, &C::Config, bool) -> Result<Decision, Error>,
        step: impl FnOnce(&mut P, &mut Decision),
    ) -> Result<Decision, Error> {
        let r = match self.slots.get_mut(Self::slot_of(flow)).and_then(|s| s.live_path(flow)) {
            Some((state, path)) => hook(state, &self.cfg, path.on()).map(|mut d| {
                step(path, &mut d);
                d
            }),
            None => Err(Error::UnknownFlow),
        };
        self.count(r)
    }

    /// The EV an event names, where flows can spray: such an event goes
    /// by [`Engine::apply_path`].
    #[inline(always)]
    fn path_of(ev: Option<Ev>) -> Option<Ev> {
        ev.filter(|_| P::CAN_SPRAY)
    }

    /// [`EventKind::Ack`] for the flow at `flow`.
    #[inline(never)]
    pub fn ack(&mut self, flow: FlowHandle, now: Instant, ack: &Ack<'_>) -> Result<Decision, Error> {
        if let Some(ev) = Self::path_of(ack.ev) {
            let f = Feedback::of_ack(ack.ece == EcnEcho::Marked);
            return self.apply_path(flow, |c, cfg, _| c.ack(cfg, now, ack), |p, _| p.feedback(ev, f, now));
        }
        if C::SHORT_ACK {
            // The controller's short path first; every other case (an
            // unknown flow included) out of line, where the general path's
            // frame and registers are paid only when it runs.
            let slot = self.slots.get_mut(Self::slot_of(flow)).and_then(|s| s.live_mut(flow));
            if let Some(d) = slot.and_then(|c| c.short_ack(&self.cfg, ack)) {
                return Ok(d);
            }
            return self.ack_general(flow, now, ack);
        }
        self.apply(flow, |c, cfg| c.ack(cfg, now, ack))
    }

    /// [`Engine::ack`]'s general path, for a controller with a short one.
    #[cold]
    #[inline(never)]
    fn ack_general(&mut self, flow: FlowHandle, now: Instant, ack: &Ack<'_>) -> Result<Decision, Error> {
        self.apply(flow, |c, cfg| c.ack(cfg, now, ack))
    }

    /// [`EventKind::Sent`] for the flow at `flow`.
    #[inline(never)]
    pub fn sent(
        &mut self,
        flow: FlowHandle,
        now: Instant,
        seq: Seq,
        len: u32,
        end: MessageEnd,
    ) -> Result<Decision, Error> {
        if P::CAN_SPRAY {
            return self.apply_path(
                flow,
                |c, cfg, sprays| match sprays {
                    true => sprayed_sent(c, cfg, now, seq, len, end),
                    false => c.sent(cfg, now, seq, len, end),
                },
                |p, d| d.ev = p.next(),
            );
        }
        self.apply(flow, |c, cfg| c.sent(cfg, now, seq, len, end))
    }

    /// [`EventKind::Loss`] for the flow at `flow`; `ev`, the timed-out
    /// packet's EV, is penalised with a timeout's weight.
    #[inline(never)]
    pub fn loss(&mut self, flow: FlowHandle, now: Instant, first_lost: Seq, ev: Option<Ev>) -> Result<Decision, Error> {
        if let Some(ev) = Self::path_of(ev) {
            return self.apply_path(
                flow,
                |c, cfg, _| c.loss(cfg, now, first_lost),
                |p, _| p.feedback(ev, Feedback::Timeout, now),
            );
        }
        self.apply(flow, |c, cfg| c.loss(cfg, now, first_lost))
    }

    /// [`EventKind::Nack`] for the flow at `flow`. A trim before the last
    /// hop penalises the packet's path as a NACK; at the last hop (the
    /// receiver's link was full, not the path), the path answered as the
    /// header's ECN-Echo says.
    #[inline(never)]
    pub fn nack(&mut self, flow: FlowHandle, now: Instant, nack: &Nack) -> Result<Decision, Error> {
        if let Some(ev) = Self::path_of(nack.ev) {
            let f = Feedback::of_nack(nack.last_hop, nack.ece == EcnEcho::Marked);
            return self.apply_path(flow, |c, cfg, _| c.nack(cfg, now, nack), |p, _| p.feedback(ev, f, now));
        }
        self.apply(flow, |c, cfg| c.nack(cfg, now, nack))
    }

    /// [`EventKind::Spray`] for the flow at `flow`: its path choice from
    /// now on (a new chooser); the answer is the flow's decision.
    /// `NotApplicable` where the engine keeps no path state.
    #[inline(never)]
    pub fn spray(&mut self, flow: FlowHandle, now: Instant, spray: &Spray) -> Result<Decision, Error> {
        let _ = now;
        let r = match self.slots.get_mut(Self::slot_of(flow)).and_then(|s| s.live_path(flow)) {
            Some(_) if !P::CAN_SPRAY => Err(Error::NotApplicable),
            Some((state, path)) => {
                path.spray(spray);
                Ok(state.decision(&self.cfg))
            }
            None => Err(Error::UnknownFlow),
        };
        self.count(r)
    }

    /// [`EventKind::Cnp`] for the flow at `flow`.
    #[inline(never)]
    pub fn cnp(&mut self, flow: FlowHandle, now: Instant) -> Result<Decision, Error> {
        self.apply(flow, |c, cfg| c.cnp(cfg, now))
    }

    /// [`EventKind::RttResponse`] for the flow at `flow`.
    #[inline(never)]
    pub fn rtt_response(
        &mut self,
        flow: FlowHandle,
        now: Instant,
        probe: ProbeId,
        rtt_ns: Option<u32>,
    ) -> Result<Decision, Error> {
        self.apply(flow, |c, cfg| c.rtt_response(cfg, now, probe, rtt_ns))
    }

    /// [`EventKind::ProbeResponse`] for the flow at `flow`.
    #[inline(never)]
    pub fn probe_response(
        &mut self,
        flow: FlowHandle,
        now: Instant,
        probe: ProbeId,
        hop_index: u8,
        hop: &HopSample,
    ) -> Result<Decision, Error> {
        self.apply(flow, |c, cfg| c.probe_response(cfg, now, probe, hop_index, hop))
    }

    /// [`EventKind::RxTelemetry`] for the flow at `flow`.
    #[inline(never)]
    pub fn rx_telemetry(&mut self, flow: FlowHandle, now: Instant, telemetry: &[HopSample]) -> Result<Decision, Error> {
        self.apply(flow, |c, cfg| c.rx_telemetry(cfg, now, telemetry))
    }

    /// [`EventKind::ProbeRequest`] for the flow at `flow`.
    #[inline(never)]
    pub fn probe_request(
        &mut self,
        flow: FlowHandle,
        now: Instant,
        telemetry: &[HopSample],
    ) -> Result<Decision, Error> {
        self.apply(flow, |c, cfg| c.probe_request(cfg, now, telemetry))
    }

    /// [`EventKind::Feedback`] for the flow at `flow`.
    #[inline(never)]
    pub fn feedback(&mut self, flow: FlowHandle, now: Instant, window: Window) -> Result<Decision, Error> {
        self.apply(flow, |c, cfg| c.feedback(cfg, now, window))
    }

    /// [`EventKind::FlowCount`] for the flow at `flow`.
    #[inline(never)]
    pub fn flow_count(&mut self, flow: FlowHandle, now: Instant, flows: u16) -> Result<Decision, Error> {
        self.apply(flow, |c, cfg| c.flow_count(cfg, now, flows))
    }

    /// [`EventKind::Timer`] for the flow at `flow`.
    #[inline(never)]
    pub fn timer(&mut self, flow: FlowHandle, now: Instant) -> Result<Decision, Error> {
        self.apply(flow, |c, cfg| c.timer(cfg, now))
    }

    /// Handles one event addressed by flow id, at `now`.
    pub fn handle(&mut self, now: Instant, event: &Event<'_>) -> Result<Decision, Error> {
        match event.kind {
            EventKind::Start(ref params) => self.start(now, event.flow, params).map(|(_, d)| d),
            ref kind => match self.lookup(event.flow) {
                Some(h) => self.event(h, now, kind),
                None => self.count(Err(Error::UnknownFlow)),
            },
        }
    }

    /// Counts a refusal in [`Stats`].
    #[inline(always)]
    fn count(&mut self, r: Result<Decision, Error>) -> Result<Decision, Error> {
        if let Err(e) = r {
            let s = &mut self.stats;
            let counter = match e {
                Error::UnknownFlow => &mut s.unknown_flow,
                Error::TableFull => &mut s.table_full,
                Error::FlowExists | Error::InvalidParams => &mut s.bad_start,
                Error::TooManyHops | Error::BadCounterWidths | Error::StaleTelemetry | Error::BadSample => {
                    &mut s.bad_telemetry
                }
                Error::NotApplicable => &mut s.not_applicable,
            };
            *counter = counter.saturating_add(1);
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Ack, Algorithm, EventKind, FlowParams};
    use crate::ldcp::{Ldcp, LdcpConfig};
    use crate::units::{BaseRtt, Fraction, Instant, LinkSpeed, Mtu, Seq};

    fn params() -> FlowParams {
        FlowParams {
            algorithm: Algorithm::Ldcp,
            base_rtt: BaseRtt::from_nanos(8_000).unwrap(),
            line_rate: LinkSpeed::from_gbps(100),
            start_seq: Seq(0),
        }
    }

    #[test]
    fn reset_refuses_a_bad_config_and_otherwise_empties_the_table() {
        let mut e: Engine<Ldcp, 4> = Engine::new(LdcpConfig::draft_default()).unwrap();
        let (h, _) = e.start(Instant::ZERO, FlowId(1), &params()).unwrap();
        let mut bad = LdcpConfig::draft_default();
        bad.gamma = Fraction::ONE;
        assert_eq!(e.reset(bad), Err(Error::InvalidParams));
        assert_eq!(e.len(), 1);
        assert_eq!(e.config(), &LdcpConfig::draft_default());
        let mut other = LdcpConfig::draft_default();
        other.mtu = Mtu::new(4096).unwrap();
        assert_eq!(e.reset(other), Ok(()));
        assert!(e.is_empty());
        assert_eq!(e.config().mtu.bytes(), 4096);
        assert_eq!(e.stats(), Stats::default());
        // The old flow's handle names nothing now, even once its slot is
        // taken again.
        let (h2, _) = e.start(Instant::ZERO, FlowId(2), &params()).unwrap();
        assert_eq!(h2.index(), h.index());
        assert_eq!(e.event(h, Instant::ZERO, &EventKind::Timer), Err(Error::UnknownFlow));
    }

    /// A handle outlives its flow only as a refusal: the slot's next flow
    /// has a new generation.
    #[test]
    fn a_handle_is_refused_once_its_flow_ends() {
        let mut e: Engine<Ldcp, 2> = Engine::new(LdcpConfig::draft_default()).unwrap();
        let (a, _) = e.start(Instant::ZERO, FlowId(10), &params()).unwrap();
        let (b, _) = e.start(Instant::ZERO, FlowId(11), &params()).unwrap();
        assert_ne!(a.index(), b.index());
        assert_eq!(
            e.start(Instant::ZERO, FlowId(12), &params()).map(|(h, _)| h),
            Err(Error::TableFull)
        );
        assert_eq!(e.lookup(FlowId(10)), Some(a));
        assert!(e.event(a, Instant::ZERO, &EventKind::End).is_ok());
        assert_eq!(e.lookup(FlowId(10)), None);
        assert_eq!(e.event(a, Instant::ZERO, &EventKind::Timer), Err(Error::UnknownFlow));
        let (c, _) = e.start(Instant::ZERO, FlowId(12), &params()).unwrap();
        assert_eq!(c.index(), a.index());
        assert_ne!(c, a);
        assert_eq!(e.event(a, Instant::ZERO, &EventKind::Timer), Err(Error::UnknownFlow));
        assert!(e.event(c, Instant::ZERO, &EventKind::Timer).is_ok());
        assert_eq!(FlowHandle::from_bits(c.to_bits()), c);
        // Out of range and by id.
        assert_eq!(
            e.event(FlowHandle::from_bits(7), Instant::ZERO, &EventKind::Timer),
            Err(Error::UnknownFlow)
        );
        assert!(e
            .handle(
                Instant::ZERO,
                &Event {
                    flow: FlowId(11),
                    kind: EventKind::Timer
                }
            )
            .is_ok());
        let s = e.stats();
        assert_eq!((s.unknown_flow, s.table_full), (3, 1));
        assert_eq!(s.refused(), 4);
    }

    /// The slot is the handle's index modulo the table's size, so a
    /// handle whose index is past the table lands on a live slot: the
    /// whole word's compare refuses it, on every entry (the ACK's short
    /// path included) and by every accessor, and the flow is untouched.
    #[test]
    fn a_handle_past_the_table_is_refused_on_every_path() {
        let mut e: Engine<Ldcp, 4> = Engine::new(LdcpConfig::draft_default()).unwrap();
        let (h, _) = e.start(Instant::ZERO, FlowId(1), &params()).unwrap();
        let before = *e.get(h).unwrap();
        let ack = Ack::new(Seq(1000), Seq(1000));
        for extra in [4u32, 8, 0xfffc, 0x8000] {
            let past = FlowHandle::from_bits(h.to_bits() + extra);
            assert_eq!(past.generation(), h.generation());
            assert_eq!(e.ack(past, Instant::ZERO, &ack), Err(Error::UnknownFlow));
            assert_eq!(e.timer(past, Instant::ZERO), Err(Error::UnknownFlow));
            assert!(e.get(past).is_none() && e.get_mut(past).is_none());
            assert_eq!(e.end(past), Err(Error::UnknownFlow));
        }
        assert_eq!(*e.get(h).unwrap(), before);
        assert_eq!(e.stats().unknown_flow, 12);
        // The flow itself takes the same ACK.
        assert!(e.ack(h, Instant::ZERO, &ack).is_ok());
        assert_ne!(*e.get(h).unwrap(), before);
    }

    /// Path choice in the engine: each `Sent` of a sprayed flow carries
    /// the EV its chooser gives, as does [`Engine::next_ev`] (a probe's),
    /// and every ACK, NACK and timeout that echoes an EV steers it as the
    /// chooser's own feedback would, for every balancer, over random
    /// answers (held against a chooser driven by hand).
    #[test]
    fn a_sprayed_flows_evs_are_its_choosers_steered_by_its_answers() {
        use crate::algorithms::{AnyConfig, AnyController};
        use crate::event::{EcnEcho, Nack};
        use crate::path::{Balancer, Feedback, PathState, Paths, Spray, Sprayer};
        use crate::testing::Lcg;
        let mut g = Lcg(11);
        for b in Balancer::ALL {
            for n in [2u16, 8, 128] {
                let mut e: Engine<AnyController<8>, 4, Sprayer> = Engine::new(AnyConfig::DEFAULT).unwrap();
                let p = FlowParams {
                    algorithm: Algorithm::Nscc,
                    ..params()
                };
                let (h, _) = e.start(Instant::ZERO, FlowId(1), &p).unwrap();
                let spray = Spray {
                    paths: Paths::new(n).unwrap(),
                    balancer: b,
                    seed: g.draw(),
                };
                assert!(e.spray(h, Instant::ZERO, &spray).is_ok());
                let mut hand = Sprayer::new(&spray);
                let (mut sent, mut cum) = (0u32, 0u32);
                for step in 0..3_000u64 {
                    // Time runs past REPS' 10 ms freeze now and then.
                    let now = Instant::from_nanos(step * 20_000);
                    let ev = Ev::new((g.draw() % n as u32) as u16 | (g.draw() as u16 & 0xFF00));
                    let marked = g.draw().is_multiple_of(4);
                    let ece = if marked { EcnEcho::Marked } else { EcnEcho::NotMarked };
                    match g.draw() % 6 {
                        5 => assert_eq!(e.next_ev(h), hand.next(), "{b:?} {n} step {step}"),
                        0 | 1 => {
                            let d = e.sent(h, now, Seq(sent), 4096, MessageEnd::More).unwrap();
                            assert_eq!(d.ev, hand.next(), "{b:?} {n} step {step}");
                            sent = sent.wrapping_add(4096);
                        }
                        2 => {
                            cum = cum.wrapping_add(4096).min(sent);
                            let ack = Ack {
                                ece,
                                rtt_ns: Some(10_000 + g.draw() % 50_000),
                                ev: Some(ev),
                                ..Ack::new(Seq(cum), Seq(sent))
                            };
                            let d = e.ack(h, now, &ack).unwrap();
                            assert_eq!(d.ev, None);
                            let f = if marked { Feedback::Ecn } else { Feedback::Good };
                            hand.feedback(ev, f, now);
                        }
                        3 => {
                            let last_hop = g.draw().is_multiple_of(2);
                            let nack = Nack {
                                last_hop,
                                ece,
                                ev: Some(ev),
                                ..Nack::new(Seq(cum), 4096, Seq(cum), Seq(sent))
                            };
                            assert!(e.nack(h, now, &nack).is_ok());
                            let f = match (last_hop, marked) {
                                (false, _) => Feedback::Nack,
                                (true, true) => Feedback::Ecn,
                                (true, false) => Feedback::Good,
                            };
                            hand.feedback(ev, f, now);
                        }
                        _ => {
                            assert!(e.loss(h, now, Seq(cum), Some(ev)).is_ok());
                            hand.feedback(ev, Feedback::Timeout, now);
                        }
                    }
                    assert_eq!(e.path(h), Some(&hand), "{b:?} {n} step {step}");
                }
            }
        }
    }

    /// Where path choice is off: an engine without path state refuses a
    /// spray and names no EV; a flow that was not sprayed names none;
    /// an answer the algorithm refuses tells the path nothing; a sprayed
    /// flow whose algorithm takes no `Sent` still gets its packet's EV;
    /// a flow started in a reused slot does not spray.
    #[test]
    fn path_choice_applies_only_to_sprayed_flows_and_taken_answers() {
        use crate::algorithms::{AnyConfig, AnyController};
        use crate::path::{Balancer, PathState, Paths, Spray, Sprayer};
        let spray = Spray {
            paths: Paths::new(16).unwrap(),
            balancer: Balancer::Bitmap,
            seed: 3,
        };
        let nscc = FlowParams {
            algorithm: Algorithm::Nscc,
            ..params()
        };
        let mut plain: Engine<AnyController<8>, 4> = Engine::new(AnyConfig::DEFAULT).unwrap();
        let (h, _) = plain.start(Instant::ZERO, FlowId(1), &nscc).unwrap();
        assert_eq!(plain.spray(h, Instant::ZERO, &spray), Err(Error::NotApplicable));
        assert_eq!(
            plain.sent(h, Instant::ZERO, Seq(0), 100, MessageEnd::More).unwrap().ev,
            None
        );
        assert_eq!(plain.next_ev(h), None);

        let mut e: Engine<AnyController<8>, 4, Sprayer> = Engine::new(AnyConfig::DEFAULT).unwrap();
        let (h, _) = e.start(Instant::ZERO, FlowId(1), &nscc).unwrap();
        assert_eq!(
            e.sent(h, Instant::ZERO, Seq(0), 100, MessageEnd::More).unwrap().ev,
            None
        );
        assert_eq!(e.next_ev(h), None);
        assert_eq!(e.next_ev(FlowHandle::from_bits(h.to_bits() + 1)), None);
        assert!(!e.path(h).unwrap().on());
        e.spray(h, Instant::ZERO, &spray).unwrap();
        let before = *e.path(h).unwrap();
        // NSCC refuses an RTT of 0: the path hears nothing of it.
        let bad = Ack {
            rtt_ns: Some(0),
            ev: Some(Ev::new(4)),
            ..Ack::new(Seq(0), Seq(100))
        };
        assert_eq!(e.ack(h, Instant::ZERO, &bad), Err(Error::BadSample));
        assert_eq!(e.path(h), Some(&before));
        assert_eq!(e.path(FlowHandle::from_bits(h.to_bits() + 1)), None);
        // A slot reused by a new flow starts without path choice.
        e.end(h).unwrap();
        let (h2, _) = e.start(Instant::ZERO, FlowId(2), &nscc).unwrap();
        assert_eq!(h2.index(), h.index());
        assert!(!e.path(h2).unwrap().on());
        // TIMELY takes no `Sent`: refused unsprayed, answered sprayed.
        let timely = FlowParams {
            algorithm: Algorithm::Timely,
            ..params()
        };
        let (t, _) = e.start(Instant::ZERO, FlowId(3), &timely).unwrap();
        assert_eq!(
            e.sent(t, Instant::ZERO, Seq(0), 100, MessageEnd::More),
            Err(Error::NotApplicable)
        );
        let d0 = e.spray(t, Instant::ZERO, &spray).unwrap();
        let d = e.sent(t, Instant::ZERO, Seq(0), 100, MessageEnd::More).unwrap();
        assert_eq!(d.ev, Sprayer::new(&spray).next());
        assert_eq!(Decision { ev: None, ..d }, d0);
        assert_eq!(e.stats().not_applicable, 1);
    }
}
