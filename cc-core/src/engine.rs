//! The flow table and the engine's single entry point.
//!
//! `Engine<C, N>` holds up to `N` flows of controller `C` in a
//! `heapless::FnvIndexMap` (N a power of two, at most 65536): no heap, a
//! full table or unknown flow is an error value, and a refused event
//! touches no flow. Every refusal is counted in [`Stats`].

use heapless::index_map::FnvIndexMap;

use crate::controller::Controller;
use crate::event::{Decision, Error, Event, EventKind, FlowId};
use crate::units::Instant;

/// Counters of refused events, by reason.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Stats {
    /// Events handled without error.
    pub handled: u64,
    /// Events for flows not in the table.
    pub unknown_flow: u32,
    /// Starts refused because the table was full.
    pub table_full: u32,
    /// Starts for ids already in the table, or with bad parameters.
    pub bad_start: u32,
    /// Telemetry refused: too many hops, bad widths, stale.
    pub bad_telemetry: u32,
    /// Events that do not apply to the flow's algorithm.
    pub not_applicable: u32,
}

/// The congestion-control engine: a config and a table of flows.
pub struct Engine<C: Controller, const N: usize> {
    cfg: C::Config,
    flows: FnvIndexMap<FlowId, C, N>,
    stats: Stats,
}

impl<C: Controller, const N: usize> Engine<C, N> {
    /// An empty engine; `InvalidParams` if the config is out of range.
    pub fn new(cfg: C::Config) -> Result<Self, Error> {
        C::validate(&cfg)?;
        Ok(Engine {
            cfg,
            flows: FnvIndexMap::new(),
            stats: Stats::default(),
        })
    }

    /// Replaces the configuration and empties the table and the counters,
    /// in place (a firmware need not hold a second table while it
    /// reconfigures). A config out of range is refused and changes nothing.
    pub fn reset(&mut self, cfg: C::Config) -> Result<(), Error> {
        C::validate(&cfg)?;
        self.cfg = cfg;
        self.flows.clear();
        self.stats = Stats::default();
        Ok(())
    }

    /// The shared parameters.
    pub fn config(&self) -> &C::Config {
        &self.cfg
    }

    /// Refusal counters.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// Flows in the table.
    pub fn len(&self) -> usize {
        self.flows.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.flows.is_empty()
    }

    /// A flow's state.
    pub fn flow(&self, id: FlowId) -> Option<&C> {
        self.flows.get(&id)
    }

    /// A flow's state, mutably (to restore a checkpoint).
    pub fn flow_mut(&mut self, id: FlowId) -> Option<&mut C> {
        self.flows.get_mut(&id)
    }

    /// A flow's current decision: what stands after a refused event.
    pub fn decision(&self, id: FlowId) -> Option<Decision> {
        self.flows.get(&id).map(|c| c.decision(&self.cfg))
    }

    /// Handles one event at `now`.
    pub fn handle(&mut self, now: Instant, event: &Event<'_>) -> Result<Decision, Error> {
        let r = self.dispatch(now, event);
        match r {
            Ok(_) => self.stats.handled += 1,
            Err(e) => {
                let s = &mut self.stats;
                let counter = match e {
                    Error::UnknownFlow => &mut s.unknown_flow,
                    Error::TableFull => &mut s.table_full,
                    Error::FlowExists | Error::InvalidParams => &mut s.bad_start,
                    Error::TooManyHops | Error::BadCounterWidths | Error::StaleTelemetry => &mut s.bad_telemetry,
                    Error::NotApplicable => &mut s.not_applicable,
                };
                *counter = counter.saturating_add(1);
            }
        }
        r
    }

    fn dispatch(&mut self, now: Instant, event: &Event<'_>) -> Result<Decision, Error> {
        match event.kind {
            EventKind::Start(ref params) => {
                if self.flows.contains_key(&event.flow) {
                    return Err(Error::FlowExists);
                }
                if self.flows.len() == N {
                    return Err(Error::TableFull);
                }
                let (state, d) = C::start(&self.cfg, now, params)?;
                self.flows.insert(event.flow, state).map_err(|_| Error::TableFull)?;
                Ok(d)
            }
            EventKind::End => {
                let state = self.flows.swap_remove(&event.flow).ok_or(Error::UnknownFlow)?;
                Ok(state.decision(&self.cfg))
            }
            ref kind => {
                let state = self.flows.get_mut(&event.flow).ok_or(Error::UnknownFlow)?;
                // Each controller validates before it mutates, so an Err
                // leaves the flow as it was (checked by the property tests).
                state.on_event(&self.cfg, now, kind)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Algorithm, EventKind, FlowParams};
    use crate::ldcp::{Ldcp, LdcpConfig};
    use crate::units::{BaseRtt, Instant, LinkSpeed, Seq};

    #[test]
    fn reset_refuses_a_bad_config_and_otherwise_empties_the_table() {
        let mut e: Engine<Ldcp, 4> = Engine::new(LdcpConfig::draft_default()).unwrap();
        let p = FlowParams {
            algorithm: Algorithm::Ldcp,
            base_rtt: BaseRtt::from_nanos(8_000).unwrap(),
            line_rate: LinkSpeed::from_gbps(100),
            start_seq: Seq(0),
        };
        e.handle(
            Instant::ZERO,
            &Event {
                flow: FlowId(1),
                kind: EventKind::Start(p),
            },
        )
        .unwrap();
        let mut bad = LdcpConfig::draft_default();
        bad.mtu = 0;
        assert_eq!(e.reset(bad), Err(Error::InvalidParams));
        assert_eq!(e.len(), 1);
        assert_eq!(e.config(), &LdcpConfig::draft_default());
        let mut other = LdcpConfig::draft_default();
        other.mtu = 4096;
        assert_eq!(e.reset(other), Ok(()));
        assert!(e.is_empty());
        assert_eq!(e.config().mtu, 4096);
        assert_eq!(e.stats(), Stats::default());
    }
}
