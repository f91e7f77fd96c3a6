//! One function per event kind, as a NIC's congestion-control core is
//! handed one event type at a time. Each takes the engine, the flow's
//! handle and the time (ns), and writes the flow's decision to `*out`.
//! An event that does not apply to the flow's algorithm is refused with
//! `CC_STATUS_NOT_APPLICABLE` and changes nothing.

use cc_core::controller::{AnyConfig, Controller};
use cc_core::event::{Decision, Error, MessageEnd, ProbeId};
use cc_core::telemetry::HopSample;
use cc_core::units::{Instant, Seq, Window};
use cc_core::wire::Hops;

use crate::cc_status;
use crate::convert::{self, cc_ack, cc_decision, cc_hop};
use crate::table::{apply, cc_engine, Flow};

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
    let mut buf = Hops::new();
    // SAFETY: the caller's promise.
    let a = match unsafe { convert::ack(&*ack, &mut buf) } {
        Ok(a) => a,
        Err(s) => return s,
    };
    // SAFETY: the caller's promise.
    unsafe { apply(e, handle, out, |c, cfg| c.ack(cfg, Instant::from_nanos(now_ns), &a)) }
}

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
    unsafe {
        apply(e, handle, out, |c, cfg| {
            c.sent(cfg, Instant::from_nanos(now_ns), Seq(seq), len, end)
        })
    }
}

/// A loss from `first_lost` (a NACK or a timeout).
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
    unsafe {
        apply(e, handle, out, |c, cfg| {
            c.loss(cfg, Instant::from_nanos(now_ns), Seq(first_lost))
        })
    }
}

/// A congestion notification packet (DCQCN, LDCP's rate variant).
///
/// # Safety
/// `e` was made by `cc_engine_init`; `out` is a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn cc_on_cnp(e: *mut cc_engine, handle: u32, now_ns: u64, out: *mut cc_decision) -> cc_status {
    // SAFETY: the caller's promise.
    unsafe { apply(e, handle, out, |c, cfg| c.cnp(cfg, Instant::from_nanos(now_ns))) }
}

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
    // SAFETY: the caller's promise.
    unsafe {
        apply(e, handle, out, |c, cfg| {
            c.rtt_response(cfg, Instant::from_nanos(now_ns), ProbeId(probe_id), rtt)
        })
    }
}

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
    let h = match convert::hop(unsafe { &*hop }) {
        Ok(h) => h,
        Err(s) => return s,
    };
    // SAFETY: the caller's promise.
    unsafe {
        apply(e, handle, out, |c, cfg| {
            c.probe_response(cfg, Instant::from_nanos(now_ns), ProbeId(probe_id), hop_index, &h)
        })
    }
}

/// An event that carries a stack of hops: the hops checked and copied,
/// then `hook` with them.
///
/// # Safety
/// As `cc_on_rx_telemetry`.
#[inline(always)]
unsafe fn with_hops(
    e: *mut cc_engine,
    handle: u32,
    hops: *const cc_hop,
    n_hops: u32,
    out: *mut cc_decision,
    hook: impl FnOnce(&mut Flow, &AnyConfig, &[HopSample]) -> Result<Decision, Error>,
) -> cc_status {
    let mut buf = Hops::new();
    // SAFETY: the caller's promise.
    if let Err(s) = unsafe { convert::hops(hops, n_hops, &mut buf) } {
        return s;
    }
    // SAFETY: the caller's promise.
    unsafe { apply(e, handle, out, |c, cfg| hook(c, cfg, &buf)) }
}

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
    unsafe {
        with_hops(e, handle, hops, n_hops, out, |c, cfg, t| {
            c.rx_telemetry(cfg, Instant::from_nanos(now_ns), t)
        })
    }
}

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
    unsafe {
        with_hops(e, handle, hops, n_hops, out, |c, cfg, t| {
            c.probe_request(cfg, Instant::from_nanos(now_ns), t)
        })
    }
}

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
    unsafe {
        apply(e, handle, out, |c, cfg| {
            c.feedback(cfg, Instant::from_nanos(now_ns), Window::from_bits(window_q4))
        })
    }
}

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
    unsafe {
        apply(e, handle, out, |c, cfg| {
            c.flow_count(cfg, Instant::from_nanos(now_ns), flows)
        })
    }
}

/// The flow's timer fired (the one a decision armed).
///
/// # Safety
/// `e` was made by `cc_engine_init`; `out` is a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn cc_on_timer(e: *mut cc_engine, handle: u32, now_ns: u64, out: *mut cc_decision) -> cc_status {
    // SAFETY: the caller's promise.
    unsafe { apply(e, handle, out, |c, cfg| c.timer(cfg, Instant::from_nanos(now_ns))) }
}
