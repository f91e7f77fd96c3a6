//! One function per event kind, as a NIC's congestion-control core is
//! handed one event type at a time. Each takes the engine, the flow's
//! handle and the time (ns), and writes the flow's decision to `*out`.
//! An event that does not apply to the flow's algorithm is refused with
//! `CC_STATUS_NOT_APPLICABLE` and changes nothing.
//!
//! Each event is a small struct of what the C function was given, and
//! its `Event::run` turns it into the controller's hook; `table::apply`
//! finds the flow and runs it on the flow's own algorithm.

use cc_core::controller::Controller;
use cc_core::event::{MessageEnd, Nack, ProbeId};
use cc_core::telemetry::HopSample;
use cc_core::units::{Instant, Seq, Window};

use crate::cc_status;
use crate::convert::{self, cc_ack, cc_decision, cc_hop, cc_nack};
use crate::table::{apply, cc_engine, Answer, Event};

/// An event's hook and its arguments, as a struct whose `run` calls the
/// hook: `event!(Name { field: Type, … }, |c, cfg, now, to| body)`,
/// where `body` uses the fields by name and answers through `to`.
macro_rules! event {
    ($name:ident { $($f:ident: $t:ty),* }, |$c:ident, $cfg:ident, $now:ident, $to:ident| $body:expr) => {
        #[derive(Clone, Copy)]
        struct $name {
            now_ns: u64,
            $($f: $t),*
        }

        impl Event for $name {
            #[inline(always)]
            unsafe fn run<C: Controller>(self, $c: &mut C, $cfg: &C::Config, $to: Answer<'_>) -> cc_status {
                let $name { now_ns, $($f),* } = self;
                let $now = Instant::from_nanos(now_ns);
                $body
            }
        }
    };
}

event!(AckEvent { ack: *const cc_ack }, |c, cfg, now, to| {
    // SAFETY: `ack` is valid (the caller's promise).
    let a = unsafe { &*ack };
    if C::SHORT_ACK {
        // The controller's short path (Engine::ack's), with no call and
        // no frame; anything else (a refusal included) out of line.
        if let (0, Ok(ack)) = (a.n_hops, convert::ack(a, &[])) {
            if let Some(d) = c.short_ack(cfg, &ack) {
                return to.give(Ok(d));
            }
        }
        // SAFETY: as this event's.
        return unsafe { ack_cold(c, cfg, now, a, to) };
    }
    // SAFETY: as this event's.
    unsafe { ack_all(c, cfg, now, a, to) }
});

/// [`ack_all`] out of line, behind a controller's short path.
///
/// # Safety
/// As [`ack_all`].
#[cold]
#[inline(never)]
unsafe fn ack_cold<C: Controller>(c: &mut C, cfg: &C::Config, now: Instant, a: &cc_ack, to: Answer<'_>) -> cc_status {
    // SAFETY: as this function's.
    unsafe { ack_all(c, cfg, now, a, to) }
}

/// The ACK converted and run on the controller's `ack`.
///
/// # Safety
/// `a.hops` points to `a.n_hops` hops (the caller's promise).
#[inline(always)]
unsafe fn ack_all<C: Controller>(c: &mut C, cfg: &C::Config, now: Instant, a: &cc_ack, to: Answer<'_>) -> cc_status {
    if a.n_hops == 0 {
        return match convert::ack(a, &[]) {
            Ok(ack) => to.give(c.ack(cfg, now, &ack)),
            Err(s) => to.refuse(s),
        };
    }
    // SAFETY: its hops are `n_hops` hops (the caller's promise).
    unsafe {
        convert::with_hops(a.hops, a.n_hops, to, |t, to| match convert::ack(a, t) {
            Ok(ack) => to.give(c.ack(cfg, now, &ack)),
            Err(s) => to.refuse(s),
        })
    }
}

/// An ACK for the flow's data (HPCC++ NewAck with the echoed telemetry;
/// LDCP PAWA; DCTCP).
///
/// # Safety
/// `e` was made by `cc_engine_init`; `ack` and `out` are valid pointers,
/// and `ack->hops` points to `ack->n_hops` hops.
#[no_mangle]
pub unsafe extern "C" fn cc_on_ack(
    e: *mut cc_engine,
    handle: u32,
    now_ns: u64,
    ack: *const cc_ack,
    out: *mut cc_decision,
) -> cc_status {
    if ack.is_null() {
        return cc_status::NullPointer;
    }
    // SAFETY: the caller's promise.
    unsafe { apply(e, handle, out, AckEvent { now_ns, ack }) }
}

event!(
    SentEvent {
        seq: u32,
        len: u32,
        end: MessageEnd
    },
    |c, cfg, now, to| to.give(c.sent(cfg, now, Seq(seq), len, end))
);

/// The scheduler is sending `[seq, seq + len)`; `last` is 1 if it is the
/// last packet of its message (LDCP's fast start marks by it).
///
/// # Safety
/// `e` was made by `cc_engine_init`; `out` is a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn cc_on_sent(
    e: *mut cc_engine,
    handle: u32,
    now_ns: u64,
    seq: u32,
    len: u32,
    last: u8,
    out: *mut cc_decision,
) -> cc_status {
    let end = match last {
        0 => MessageEnd::More,
        1 => MessageEnd::Last,
        _ => return cc_status::BadEnum,
    };
    // SAFETY: the caller's promise.
    unsafe { apply(e, handle, out, SentEvent { now_ns, seq, len, end }) }
}

event!(LossEvent { first_lost: u32 }, |c, cfg, now, to| {
    to.give(c.loss(cfg, now, Seq(first_lost)))
});

/// A loss from `first_lost` (a go-back-N NACK or a timeout).
///
/// # Safety
/// `e` was made by `cc_engine_init`; `out` is a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn cc_on_loss(
    e: *mut cc_engine,
    handle: u32,
    now_ns: u64,
    first_lost: u32,
    out: *mut cc_decision,
) -> cc_status {
    // SAFETY: the caller's promise.
    unsafe { apply(e, handle, out, LossEvent { now_ns, first_lost }) }
}

event!(NackEvent { nack: Nack }, |c, cfg, now, to| to
    .give(c.nack(cfg, now, &nack)));

/// A NACK of one trimmed packet (NSCC's NACK rule; every other
/// algorithm takes it as a loss at the packet's first byte).
/// `CC_STATUS_BAD_ENUM` for a flag byte other than 0 or 1 or a nonzero
/// `reserved`.
///
/// # Safety
/// `e` was made by `cc_engine_init`; `nack` and `out` are valid pointers.
#[no_mangle]
pub unsafe extern "C" fn cc_on_nack(
    e: *mut cc_engine,
    handle: u32,
    now_ns: u64,
    nack: *const cc_nack,
    out: *mut cc_decision,
) -> cc_status {
    if nack.is_null() {
        return cc_status::NullPointer;
    }
    // SAFETY: `nack` is valid (the caller's promise).
    let nack = match convert::nack(unsafe { &*nack }) {
        Ok(n) => n,
        Err(s) => return s,
    };
    // SAFETY: the caller's promise.
    unsafe { apply(e, handle, out, NackEvent { now_ns, nack }) }
}

event!(CnpEvent {}, |c, cfg, now, to| to.give(c.cnp(cfg, now)));

/// A congestion notification packet (DCQCN, LDCP's rate variant).
///
/// # Safety
/// `e` was made by `cc_engine_init`; `out` is a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn cc_on_cnp(e: *mut cc_engine, handle: u32, now_ns: u64, out: *mut cc_decision) -> cc_status {
    // SAFETY: the caller's promise.
    unsafe { apply(e, handle, out, CnpEvent { now_ns }) }
}

event!(RttResponseEvent { probe: ProbeId, rtt: Option<u32> }, |c, cfg, now, to| {
    to.give(c.rtt_response(cfg, now, probe, rtt))
});

/// The response to RTT request `probe_id` (LDCP's rate variant); `has_rtt`
/// is 1 if `rtt_ns` is the RTT it measured.
///
/// # Safety
/// `e` was made by `cc_engine_init`; `out` is a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn cc_on_rtt_response(
    e: *mut cc_engine,
    handle: u32,
    now_ns: u64,
    probe_id: u8,
    has_rtt: u8,
    rtt_ns: u32,
    out: *mut cc_decision,
) -> cc_status {
    let rtt = match has_rtt {
        0 => None,
        1 => Some(rtt_ns),
        _ => return cc_status::BadEnum,
    };
    let probe = ProbeId(probe_id);
    // SAFETY: the caller's promise.
    unsafe { apply(e, handle, out, RttResponseEvent { now_ns, probe, rtt }) }
}

event!(
    ProbeResponseEvent {
        probe: ProbeId,
        hop_index: u8,
        hop: HopSample
    },
    |c, cfg, now, to| to.give(c.probe_response(cfg, now, probe, hop_index, &hop))
);

/// The reply to HPCC++ probe `probe_id`: the hop at `hop_index` of the
/// path, which the responder chose.
///
/// # Safety
/// `e` was made by `cc_engine_init`; `hop` and `out` are valid pointers.
#[no_mangle]
pub unsafe extern "C" fn cc_on_probe_response(
    e: *mut cc_engine,
    handle: u32,
    now_ns: u64,
    probe_id: u8,
    hop_index: u8,
    hop: *const cc_hop,
    out: *mut cc_decision,
) -> cc_status {
    if hop.is_null() {
        return cc_status::NullPointer;
    }
    // SAFETY: hop is valid.
    let hop = match convert::hop(unsafe { &*hop }) {
        Ok(h) => h,
        Err(s) => return s,
    };
    let probe = ProbeId(probe_id);
    // SAFETY: the caller's promise.
    unsafe {
        apply(
            e,
            handle,
            out,
            ProbeResponseEvent {
                now_ns,
                probe,
                hop_index,
                hop,
            },
        )
    }
}

event!(RxTelemetryEvent { hops: *const cc_hop, n_hops: u32 }, |c, cfg, now, to| {
    // SAFETY: `hops` points to `n_hops` hops (the caller's promise).
    unsafe { convert::with_hops(hops, n_hops, to, |t, to| to.give(c.rx_telemetry(cfg, now, t))) }
});

/// Telemetry on a data packet at the receiver (Rx-HPCC NewINT).
///
/// # Safety
/// `e` was made by `cc_engine_init`; `out` is a valid pointer; `hops`
/// points to `n_hops` hops.
#[no_mangle]
pub unsafe extern "C" fn cc_on_rx_telemetry(
    e: *mut cc_engine,
    handle: u32,
    now_ns: u64,
    hops: *const cc_hop,
    n_hops: u32,
    out: *mut cc_decision,
) -> cc_status {
    // SAFETY: the caller's promise.
    unsafe { apply(e, handle, out, RxTelemetryEvent { now_ns, hops, n_hops }) }
}

event!(ProbeRequestEvent { hops: *const cc_hop, n_hops: u32 }, |c, cfg, now, to| {
    // SAFETY: `hops` points to `n_hops` hops (the caller's promise).
    unsafe { convert::with_hops(hops, n_hops, to, |t, to| to.give(c.probe_request(cfg, now, t))) }
});

/// A probe arrived at the receiver with the path's telemetry; the
/// decision's request says which hop to reply with.
///
/// # Safety
/// As `cc_on_rx_telemetry`.
#[no_mangle]
pub unsafe extern "C" fn cc_on_probe_request(
    e: *mut cc_engine,
    handle: u32,
    now_ns: u64,
    hops: *const cc_hop,
    n_hops: u32,
    out: *mut cc_decision,
) -> cc_status {
    // SAFETY: the caller's promise.
    unsafe { apply(e, handle, out, ProbeRequestEvent { now_ns, hops, n_hops }) }
}

event!(FeedbackEvent { window_q4: u32 }, |c, cfg, now, to| {
    to.give(c.feedback(cfg, now, Window::from_bits(window_q4)))
});

/// Window feedback from the receiver (Rx-HPCC), in 1/16 byte.
///
/// # Safety
/// `e` was made by `cc_engine_init`; `out` is a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn cc_on_feedback(
    e: *mut cc_engine,
    handle: u32,
    now_ns: u64,
    window_q4: u32,
    out: *mut cc_decision,
) -> cc_status {
    // SAFETY: the caller's promise.
    unsafe { apply(e, handle, out, FeedbackEvent { now_ns, window_q4 }) }
}

event!(FlowCountEvent { flows: u16 }, |c, cfg, now, to| to
    .give(c.flow_count(cfg, now, flows)));

/// The number of flows sharing the bottleneck (HPCC++ W_ai = W_init·(1 −
/// eta)/N), 1 ..= 65 535.
///
/// # Safety
/// `e` was made by `cc_engine_init`; `out` is a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn cc_on_flow_count(
    e: *mut cc_engine,
    handle: u32,
    now_ns: u64,
    flows: u16,
    out: *mut cc_decision,
) -> cc_status {
    // SAFETY: the caller's promise.
    unsafe { apply(e, handle, out, FlowCountEvent { now_ns, flows }) }
}

event!(TimerEvent {}, |c, cfg, now, to| to.give(c.timer(cfg, now)));

/// The flow's timer fired (the one a decision armed).
///
/// # Safety
/// `e` was made by `cc_engine_init`; `out` is a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn cc_on_timer(e: *mut cc_engine, handle: u32, now_ns: u64, out: *mut cc_decision) -> cc_status {
    // SAFETY: the caller's promise.
    unsafe { apply(e, handle, out, TimerEvent { now_ns }) }
}
