//! One function per event kind, as a NIC's congestion-control core is
//! handed one event type at a time. Each takes the engine, the flow's
//! handle and the time (ns), and writes the flow's decision to `*out`.
//! An event that does not apply to the flow's algorithm is refused with
//! `CC_STATUS_NOT_APPLICABLE` and changes nothing.
//!
//! Each event is a small struct of what the C function was given, and
//! its `Event::run` turns it into the controller's hook; `table::apply`
//! finds the flow and runs it on the flow's own algorithm.

use cc_core::controller::{sprayed_sent, Controller};
use cc_core::event::{EcnEcho, MessageEnd, Nack, ProbeId};
use cc_core::path::{Ev, Feedback, PathState};
use cc_core::telemetry::HopSample;
use cc_core::units::{Instant, Seq, Window};

use crate::cc_status;
use crate::convert::{self, cc_ack, cc_decision, cc_hop, cc_nack, cc_spray};
use crate::table::{apply, cc_engine, has_paths, path_of, refuse, Answer, Event};

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
    // SAFETY: `ack` is valid (the caller's promise).
    if convert::ack_path_word(unsafe { &*ack }) >> 16 != 0 {
        // SAFETY: the caller's promise.
        return unsafe { ack_with_ev(e, handle, now_ns, ack, out) };
    }
    // SAFETY: the caller's promise.
    unsafe { apply(e, handle, out, AckEvent { now_ns, ack }) }
}

/// [`cc_on_ack`] of an ACK that names its packet's path (or whose path
/// bytes are not 0 or 1 and 0: `CC_STATUS_BAD_ENUM`): the ACK, then, if
/// the flow took it, the path's answer (ECN-Echo: marked, else good).
///
/// # Safety
/// As [`cc_on_ack`]'s.
#[cold]
#[inline(never)]
unsafe fn ack_with_ev(
    e: *mut cc_engine,
    handle: u32,
    now_ns: u64,
    ack: *const cc_ack,
    out: *mut cc_decision,
) -> cc_status {
    // SAFETY: the caller's promise.
    let a = unsafe { &*ack };
    let Ok(Some(ev)) = convert::ack_ev(a) else {
        return cc_status::BadEnum;
    };
    let f = Feedback::of_ack(a.ece != 0);
    // SAFETY: the caller's promise.
    let s = unsafe { apply(e, handle, out, AckEvent { now_ns, ack }) };
    // SAFETY: the caller's promise.
    unsafe { tell_path(e, handle, s, ev, f, now_ns) }
}

/// The path's answer `f` for `ev`, after an event answered `s`: told
/// only if the flow took the event and sprays.
///
/// # Safety
/// As `path_of`'s.
unsafe fn tell_path(e: *mut cc_engine, handle: u32, s: cc_status, ev: u16, f: Feedback, now_ns: u64) -> cc_status {
    if s == cc_status::Ok {
        // SAFETY: the caller's promise.
        if let Ok(Some(p)) = unsafe { path_of(e, handle) } {
            p.feedback(Ev::new(ev), f, Instant::from_nanos(now_ns));
        }
    }
    s
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
    if unsafe { has_paths(e) } {
        // SAFETY: the caller's promise.
        return unsafe { sent_with_paths(e, handle, now_ns, seq, len, end, out) };
    }
    // SAFETY: the caller's promise.
    unsafe { apply(e, handle, out, SentEvent { now_ns, seq, len, end }) }
}

event!(
    SprayedSentEvent {
        seq: u32,
        len: u32,
        end: MessageEnd
    },
    |c, cfg, now, to| to.give(sprayed_sent(c, cfg, now, Seq(seq), len, end))
);

/// [`cc_on_sent`] in an engine with path memory: a sprayed flow's
/// decision names its packet's EV.
///
/// # Safety
/// As [`cc_on_sent`]'s.
#[cold]
#[inline(never)]
unsafe fn sent_with_paths(
    e: *mut cc_engine,
    handle: u32,
    now_ns: u64,
    seq: u32,
    len: u32,
    end: MessageEnd,
    out: *mut cc_decision,
) -> cc_status {
    // SAFETY: the caller's promise.
    let sprays = matches!(unsafe { path_of(e, handle) }, Ok(Some(p)) if p.on());
    if !sprays {
        // SAFETY: the caller's promise.
        return unsafe { apply(e, handle, out, SentEvent { now_ns, seq, len, end }) };
    }
    // SAFETY: the caller's promise.
    let s = unsafe { apply(e, handle, out, SprayedSentEvent { now_ns, seq, len, end }) };
    if s == cc_status::Ok {
        // SAFETY: the caller's promise; `out` was written.
        if let Ok(Some(p)) = unsafe { path_of(e, handle) } {
            if let Some(ev) = p.next() {
                // SAFETY: `out` is valid (apply answered Ok through it).
                unsafe {
                    (*out).has_ev = 1;
                    (*out).ev = ev.get();
                }
            }
        }
    }
    s
}

event!(LossEvent { first_lost: u32 }, |c, cfg, now, to| {
    to.give(c.loss(cfg, now, Seq(first_lost)))
});

/// A loss from `first_lost` (a go-back-N NACK or a timeout). For a
/// sprayed flow's timeout, `has_ev` is 1 and `ev` the entropy value the
/// timed-out packet took: its path is penalised as a timeout's. 0 and 0
/// otherwise; `CC_STATUS_BAD_ENUM` for a `has_ev` other than 0 or 1.
///
/// # Safety
/// `e` was made by `cc_engine_init`; `out` is a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn cc_on_loss(
    e: *mut cc_engine,
    handle: u32,
    now_ns: u64,
    first_lost: u32,
    has_ev: u8,
    ev: u16,
    out: *mut cc_decision,
) -> cc_status {
    match has_ev {
        // SAFETY: the caller's promise.
        0 => unsafe { apply(e, handle, out, LossEvent { now_ns, first_lost }) },
        1 => {
            // SAFETY: the caller's promise.
            let s = unsafe { apply(e, handle, out, LossEvent { now_ns, first_lost }) };
            // SAFETY: the caller's promise.
            unsafe { tell_path(e, handle, s, ev, Feedback::Timeout, now_ns) }
        }
        _ => cc_status::BadEnum,
    }
}

event!(NackEvent { nack: Nack }, |c, cfg, now, to| to
    .give(c.nack(cfg, now, &nack)));

/// A NACK of one trimmed packet (NSCC's NACK rule; every other
/// algorithm takes it as a loss at the packet's first byte).
/// `CC_STATUS_BAD_ENUM` for a flag byte other than 0 or 1 or a nonzero
/// `reserved`. With `has_ev`, a sprayed flow's path is penalised as a
/// NACK's if the cut was before the last hop; at the last hop it
/// answered as `ece` says.
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
    let Some(ev) = nack.ev else {
        // SAFETY: the caller's promise.
        return unsafe { apply(e, handle, out, NackEvent { now_ns, nack }) };
    };
    let f = Feedback::of_nack(nack.last_hop, nack.ece == EcnEcho::Marked);
    // SAFETY: the caller's promise.
    let s = unsafe { apply(e, handle, out, NackEvent { now_ns, nack }) };
    // SAFETY: the caller's promise.
    unsafe { tell_path(e, handle, s, ev.get(), f, now_ns) }
}

event!(DecisionEvent {}, |c, cfg, now, to| {
    let _ = now;
    to.give(Ok(c.decision(cfg)))
});

/// The flow sprays its packets over many paths from now on, as `*spray`
/// says (a new chooser): each `cc_on_sent` decision names the packet's
/// entropy value (`has_ev`, `ev`), and the EVs echoed on ACKs, NACKs and
/// timeouts steer the choice. The decision is the flow's. Needs the
/// engine's path memory (`cc_engine_attach_paths`):
/// `CC_STATUS_NOT_APPLICABLE` without it. `CC_STATUS_INVALID_PARAMS` for
/// a count of paths that is not a power of two in 2 ..= 256,
/// `CC_STATUS_BAD_ENUM` for a balancer code or reserved byte.
///
/// # Safety
/// `e` was made by `cc_engine_init`; `spray` and `out` are valid
/// pointers.
#[no_mangle]
pub unsafe extern "C" fn cc_on_spray(
    e: *mut cc_engine,
    handle: u32,
    now_ns: u64,
    spray: *const cc_spray,
    out: *mut cc_decision,
) -> cc_status {
    if spray.is_null() || out.is_null() {
        return cc_status::NullPointer;
    }
    // SAFETY: `spray` is valid (the caller's promise).
    let s = match convert::spray(unsafe { &*spray }) {
        Ok(s) => s,
        Err(st) => return st,
    };
    // SAFETY: the caller's promise.
    match unsafe { path_of(e, handle) } {
        Ok(Some(p)) => p.spray(&s),
        // SAFETY: the caller's promise.
        Ok(None) => return unsafe { refuse(e, cc_status::NotApplicable) },
        // SAFETY: the caller's promise.
        Err(st) => return unsafe { refuse(e, st) },
    }
    // SAFETY: the caller's promise.
    unsafe { apply(e, handle, out, DecisionEvent { now_ns }) }
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
