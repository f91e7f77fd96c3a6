//! NSCC's window changes by rule, per flow, as uet-htsim sums them
//! (`cc_core::nscc::Stats`, its "finished at" line's `fair_inc …
//! nack_dec`), and what SLEEK reads of a flow's NSCC ([`NsccView`]): the
//! one place hal-sim names NSCC's controller. A run whose
//! senders run NSCC keeps a sum for each flow
//! ([`Metrics::nscc`](crate::output::metrics::Metrics::nscc)); the
//! engine's event API carries no observer, so each ACK and NACK also runs
//! on a copy of the flow's state with one.

use cc_core::algorithms::AnyController;
use cc_core::engine::FlowHandle;
use cc_core::event::{Algorithm, Decision, EventKind};
use cc_core::nscc::{Nscc, Stats};
use cc_core::units::Instant;

use super::Nic;
use crate::run::ctx::Ctx;

/// What SLEEK reads of a flow's NSCC (uet-htsim's `_cwnd`, `_maxwnd`,
/// `_base_rtt`, `_target_Qdelay` and `_avg_delay`), as it stands.
#[derive(Clone, Copy, Debug)]
pub struct NsccView {
    /// The window, bytes.
    pub window: u32,
    /// The window's ceiling at the flow's base RTT, bytes.
    pub max_window: u32,
    /// The base RTT, ns.
    pub base_rtt_ns: u32,
    /// The target queueing delay, ns.
    pub target_ns: u32,
    /// The queueing delay's average, ns.
    pub avg_delay_ns: u32,
}

/// Whether senders running `sender` run NSCC (SLEEK reads its state).
pub fn is_nscc(sender: Algorithm) -> bool {
    sender == Algorithm::Nscc
}

/// The sums a run keeps: one for each of its `flows` when its senders
/// run NSCC, none otherwise.
pub fn for_run(sender: Algorithm, flows: usize) -> Vec<Stats> {
    match is_nscc(sender) {
        true => vec![Stats::default(); flows],
        false => Vec::new(),
    }
}

impl Nic {
    /// The NSCC state of the flow at `at`, if it runs NSCC.
    pub(super) fn nscc_view(&self, at: Option<FlowHandle>) -> Option<NsccView> {
        let Some(AnyController::Nscc(n)) = at.and_then(|h| self.engine.get(h)) else {
            return None;
        };
        let cfg = &self.engine.config().nscc;
        Some(NsccView {
            window: n.window(),
            max_window: cfg.max_window(n.base_rtt_ns()),
            base_rtt_ns: n.base_rtt_ns(),
            target_ns: cfg.target_delay_ns,
            avg_delay_ns: n.avg_delay_q8() >> 8,
        })
    }

    /// [`Nic::engine`] where the run keeps the sums: an ACK's or NACK's
    /// rules added to the flow's sums when the engine takes it.
    #[inline(never)]
    pub(super) fn engine_nscc(
        &mut self,
        cx: &mut Ctx,
        flow: u32,
        at: Option<FlowHandle>,
        now: Instant,
        kind: EventKind<'_>,
    ) -> Option<Decision> {
        let observed = self.nscc_observe(cx, flow, at, now, &kind);
        let answer = self.answer(cx, flow, at, now, kind);
        if let (Some((stats, copy)), Ok(_), Some(sum)) = (observed, &answer, cx.metrics.nscc.get_mut(flow as usize)) {
            *sum = stats;
            debug_assert!(
                cx.tap.cosim.is_some() || at.and_then(|h| self.engine.get(h)) == Some(&AnyController::Nscc(copy)),
                "flow {flow}: the observed copy left the engine's path"
            );
        }
        Self::count(cx, answer)
    }

    /// An NSCC sender's ACK or NACK run on a copy of its state, each rule
    /// that runs added to the flow's sums: the sums it will have if the
    /// engine takes the event. The copy ends as the engine's state will
    /// (checked in debug builds). Not cold: it runs on every ACK and NACK
    /// of a run that keeps the sums; out of line, beside the engine's own
    /// path.
    #[inline(never)]
    fn nscc_observe(
        &self,
        cx: &Ctx,
        flow: u32,
        at: Option<FlowHandle>,
        now: Instant,
        kind: &EventKind<'_>,
    ) -> Option<(Stats, Nscc)> {
        let cfg = &self.engine.config().nscc;
        let Some(AnyController::Nscc(n)) = at.and_then(|h| self.engine.get(h)) else {
            return None;
        };
        let (mut copy, mut stats) = (*n, *cx.metrics.nscc.get(flow as usize)?);
        match kind {
            EventKind::Ack(a) => copy.ack_observed(cfg, now, a, &mut stats).ok()?,
            EventKind::Nack(k) => copy.nack_observed(cfg, now, k, &mut stats).ok()?,
            _ => return None,
        };
        Some((stats, copy))
    }
}
