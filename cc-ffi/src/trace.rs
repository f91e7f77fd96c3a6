//! Recorded event traces from C: the frames `hal-sim run --record` writes
//! (cc-core's codec: events, configurations, a halt) read into the C
//! structs, and the engine's answers written back as the codec's decision
//! and refusal frames. A replay program in C feeds a trace through the
//! per-event functions and compares its answers, byte for byte, with the
//! Rust engine's (`examples/c/replay.c`).

use cc_core::codec::{self, FrameKind};
use cc_core::event::{EcnEcho, EventKind, FlowId, MessageEnd, NicSample};
use cc_core::wire::WireError;

use crate::cc_status;
use crate::convert::{cc_ack, cc_decision, cc_flow_params, cc_hop, cc_spray};
use crate::table::cc_engine;

/// Bytes of the largest frame.
pub const CC_TRACE_MAX_FRAME: u32 = 332;
const _: () = assert!(CC_TRACE_MAX_FRAME as usize == codec::MAX_FRAME);

/// `cc_trace_frame`: an event (`cc_trace_event`).
pub const CC_FRAME_EVENT: u8 = 1;
/// `cc_trace_frame`: a decision (an answer; not in a trace).
pub const CC_FRAME_DECISION: u8 = 2;
/// `cc_trace_frame`: a refusal (an answer; not in a trace).
pub const CC_FRAME_REFUSAL: u8 = 3;
/// `cc_trace_frame`: a new configuration (`cc_trace_read_config`).
pub const CC_FRAME_CONFIG: u8 = 4;
/// `cc_trace_frame`: the end of the trace.
pub const CC_FRAME_HALT: u8 = 5;

/// A flow starts: `params`.
pub const CC_EVENT_START: u8 = 0;
/// The flow ends.
pub const CC_EVENT_END: u8 = 1;
/// An ACK: `ack` (its hops in the caller's array).
pub const CC_EVENT_ACK: u8 = 2;
/// Data sent: `seq`, `len`, `last`.
pub const CC_EVENT_SENT: u8 = 3;
/// A loss from `seq`.
pub const CC_EVENT_LOSS: u8 = 4;
/// A CNP.
pub const CC_EVENT_CNP: u8 = 5;
/// An RTT response: `probe_id`, `has_rtt`, `rtt_ns`.
pub const CC_EVENT_RTT_RESPONSE: u8 = 6;
/// A probe response: `probe_id`, `hop_index`, the hop first in the array.
pub const CC_EVENT_PROBE_RESPONSE: u8 = 7;
/// Telemetry at the receiver: `n_hops` hops in the array.
pub const CC_EVENT_RX_TELEMETRY: u8 = 8;
/// A probe at the receiver: `n_hops` hops in the array.
pub const CC_EVENT_PROBE_REQUEST: u8 = 9;
/// Window feedback: `window_q4`.
pub const CC_EVENT_FEEDBACK: u8 = 10;
/// A flow count: `flows`.
pub const CC_EVENT_FLOW_COUNT: u8 = 11;
/// The flow's timer.
pub const CC_EVENT_TIMER: u8 = 12;
/// A NACK of a trimmed packet: `seq`, `len`, `last` (trimmed at the last
/// hop), `has_rtt`, `rtt_ns`, and `ack.cum_ack`, `ack.snd_nxt`, `ack.ece`,
/// `ack.has_ev`, `ack.ev`.
pub const CC_EVENT_NACK: u8 = 13;
/// The flow sprays: `spray`.
pub const CC_EVENT_SPRAY: u8 = 14;

/// One event of a trace. Which fields hold values depends on `kind`
/// (`CC_EVENT_*`); the others are zero.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct cc_trace_event {
    /// When it happened, ns.
    pub now_ns: u64,
    /// The flow, by the recording host's own number.
    pub flow_id: u32,
    /// One of `CC_EVENT_*`.
    pub kind: u8,
    /// `CC_EVENT_SENT`: 1 if the last packet of its message;
    /// `CC_EVENT_NACK`: 1 if trimmed at the last hop.
    pub last: u8,
    /// `CC_EVENT_RTT_RESPONSE`, `CC_EVENT_PROBE_RESPONSE`: the request's number.
    pub probe_id: u8,
    /// `CC_EVENT_PROBE_RESPONSE`: the hop's place on the path.
    pub hop_index: u8,
    /// `CC_EVENT_RTT_RESPONSE`, `CC_EVENT_NACK`: 1 if `rtt_ns` holds a
    /// measurement.
    pub has_rtt: u8,
    /// Zero.
    pub reserved: [u8; 3],
    /// `CC_EVENT_RTT_RESPONSE`, `CC_EVENT_NACK`: the RTT, ns.
    pub rtt_ns: u32,
    /// `CC_EVENT_SENT`, `CC_EVENT_NACK`: the first byte; `CC_EVENT_LOSS`:
    /// the first byte lost.
    pub seq: u32,
    /// `CC_EVENT_SENT`, `CC_EVENT_NACK`: bytes.
    pub len: u32,
    /// `CC_EVENT_FEEDBACK`: the window, 1/16 byte.
    pub window_q4: u32,
    /// `CC_EVENT_FLOW_COUNT`: flows.
    pub flows: u16,
    /// Zero.
    pub reserved2: u16,
    /// Hops written to the caller's array.
    pub n_hops: u32,
    /// Zero (named so that no byte before `ack` is padding on a 64-bit
    /// host).
    pub reserved3: u32,
    /// `CC_EVENT_ACK`: the ACK; its `hops` is the caller's array.
    /// `CC_EVENT_NACK`: its `cum_ack`, `snd_nxt`, `ece`, `has_ev` and
    /// `ev`. `CC_EVENT_LOSS`: its `has_ev` and `ev` (a timed-out
    /// packet's path).
    pub ack: cc_ack,
    /// `CC_EVENT_START`: the flow's parameters.
    pub params: cc_flow_params,
    /// `CC_EVENT_SPRAY`: how the flow sprays.
    pub spray: cc_spray,
}

fn wire(e: WireError) -> cc_status {
    match e {
        WireError::Truncated => cc_status::BufferTooSmall,
        _ => cc_status::BadFrame,
    }
}

/// The frame at `buf`, if whole and sound.
///
/// # Safety
/// `buf` points to `len` readable bytes.
unsafe fn frame<'a>(buf: *const u8, len: usize) -> Result<codec::Frame<'a>, cc_status> {
    if buf.is_null() {
        return Err(cc_status::NullPointer);
    }
    // SAFETY: the caller's promise.
    let bytes = unsafe { core::slice::from_raw_parts(buf, len) };
    codec::read_frame(bytes).map_err(wire)
}

/// Reads the frame at the start of `buf` (`len` bytes): its length in
/// `*frame_len` and its kind (`CC_FRAME_*`) in `*kind`.
/// `CC_STATUS_BUFFER_TOO_SMALL` if `buf` holds only part of it;
/// `CC_STATUS_BAD_FRAME` if it is not a frame (magic, version, length,
/// CRC).
///
/// # Safety
/// `buf` points to `len` readable bytes; the other pointers are valid.
#[no_mangle]
pub unsafe extern "C" fn cc_trace_frame(buf: *const u8, len: usize, frame_len: *mut usize, kind: *mut u8) -> cc_status {
    if frame_len.is_null() || kind.is_null() {
        return cc_status::NullPointer;
    }
    // SAFETY: the caller's promise.
    match unsafe { frame(buf, len) } {
        Ok(f) => {
            // SAFETY: the pointers are valid.
            unsafe {
                frame_len.write(f.len);
                kind.write(f.kind as u8);
            }
            cc_status::Ok
        }
        Err(s) => s,
    }
}

/// Configures the engine `e` from the configuration frame at `buf`: every
/// algorithm's configuration at once, checked, under
/// `cc_engine_configure`'s rule (no live flow).
///
/// # Safety
/// `buf` points to `len` readable bytes; `e` was made by `cc_engine_init`.
#[no_mangle]
pub unsafe extern "C" fn cc_trace_read_config(buf: *const u8, len: usize, e: *mut cc_engine) -> cc_status {
    // SAFETY: the caller's promise.
    let f = match unsafe { frame(buf, len) } {
        Ok(f) if f.kind == FrameKind::Config => f,
        Ok(_) => return cc_status::BadFrame,
        Err(s) => return s,
    };
    match codec::decode_config(&f) {
        // SAFETY: the caller's promise.
        Ok(c) => unsafe { crate::table::configure_all(e, c) },
        Err(e) => wire(e),
    }
}

/// Decodes the event frame at `buf` into `*out`, its hops into `hops`
/// (room for `hops_cap`; `CC_MAX_HOPS` is always enough).
///
/// # Safety
/// `buf` points to `len` readable bytes; `out` is a valid pointer;
/// `hops` points to `hops_cap` writable hops.
#[no_mangle]
pub unsafe extern "C" fn cc_trace_read_event(
    buf: *const u8,
    len: usize,
    out: *mut cc_trace_event,
    hops: *mut cc_hop,
    hops_cap: u32,
) -> cc_status {
    if out.is_null() || hops.is_null() {
        return cc_status::NullPointer;
    }
    // SAFETY: the caller's promise.
    let f = match unsafe { frame(buf, len) } {
        Ok(f) if f.kind == FrameKind::Event => f,
        Ok(_) => return cc_status::BadFrame,
        Err(s) => return s,
    };
    let ev = match codec::decode_event(&f) {
        Ok(ev) => ev,
        Err(e) => return wire(e),
    };
    let event = ev.event();
    let mut t = cc_trace_event {
        now_ns: ev.now.as_nanos(),
        flow_id: event.flow.0,
        kind: 0,
        last: 0,
        probe_id: 0,
        hop_index: 0,
        has_rtt: 0,
        reserved: [0; 3],
        rtt_ns: 0,
        seq: 0,
        len: 0,
        window_q4: 0,
        flows: 0,
        reserved2: 0,
        reserved3: 0,
        n_hops: 0,
        ack: cc_ack {
            cum_ack: 0,
            snd_nxt: 0,
            ece: 0,
            has_rtt: 0,
            has_nic: 0,
            rx_buffer_level: 0,
            rtt_ns: 0,
            t1_ns: 0,
            t2_ns: 0,
            t3_ns: 0,
            t4_ns: 0,
            hops,
            n_hops: 0,
            forward_hops: 0,
            pint_width: 0,
            pint_code: 0,
            ev: 0,
            has_ev: 0,
            reserved: 0,
        },
        params: cc_flow_params {
            algorithm: 0,
            reserved: [0; 3],
            base_rtt_ns: 0,
            line_rate_mbps: 0,
            start_seq: 0,
        },
        spray: cc_spray::default(),
    };
    // SAFETY: the caller's promise: hops_cap writable hops.
    let room = unsafe { core::slice::from_raw_parts_mut(hops, hops_cap as usize) };
    let mut put = |telemetry: &[cc_core::telemetry::HopSample]| -> Result<u32, cc_status> {
        let dst = room.get_mut(..telemetry.len()).ok_or(cc_status::BufferTooSmall)?;
        for (d, s) in dst.iter_mut().zip(telemetry) {
            *d = cc_hop::from(s);
        }
        Ok(telemetry.len() as u32)
    };
    let filled = match event.kind {
        EventKind::Start(p) => {
            t.kind = CC_EVENT_START;
            t.params = cc_flow_params::from(&p);
            Ok(0)
        }
        EventKind::End => {
            t.kind = CC_EVENT_END;
            Ok(0)
        }
        EventKind::Ack(a) => {
            t.kind = CC_EVENT_ACK;
            t.ack.cum_ack = a.cum_ack.0;
            t.ack.snd_nxt = a.snd_nxt.0;
            t.ack.ece = (a.ece == EcnEcho::Marked) as u8;
            t.ack.has_rtt = a.rtt_ns.is_some() as u8;
            t.ack.rtt_ns = a.rtt_ns.unwrap_or(0);
            let n = a.nic.unwrap_or(NicSample {
                t1: 0,
                t2: 0,
                t3: 0,
                t4: 0,
                forward_hops: 0,
                rx_buffer_level: 0,
            });
            t.ack.has_nic = a.nic.is_some() as u8;
            (t.ack.t1_ns, t.ack.t2_ns, t.ack.t3_ns, t.ack.t4_ns) = (n.t1, n.t2, n.t3, n.t4);
            (t.ack.forward_hops, t.ack.rx_buffer_level) = (n.forward_hops, n.rx_buffer_level);
            (t.ack.pint_width, t.ack.pint_code) = match a.pint {
                None => (0, 0),
                Some(p) => (p.width.bytes() as u8, p.code),
            };
            (t.ack.has_ev, t.ack.ev) = (a.ev.is_some() as u8, a.ev.unwrap_or_default().get());
            put(a.telemetry).inspect(|&n| t.ack.n_hops = n)
        }
        EventKind::Sent { seq, len, end } => {
            t.kind = CC_EVENT_SENT;
            t.seq = seq.0;
            t.len = len;
            t.last = (end == MessageEnd::Last) as u8;
            Ok(0)
        }
        EventKind::Loss { first_lost, ev } => {
            t.kind = CC_EVENT_LOSS;
            t.seq = first_lost.0;
            (t.ack.has_ev, t.ack.ev) = (ev.is_some() as u8, ev.unwrap_or_default().get());
            Ok(0)
        }
        EventKind::Nack(n) => {
            t.kind = CC_EVENT_NACK;
            t.seq = n.seq.0;
            t.len = n.len;
            t.last = n.last_hop as u8;
            t.has_rtt = n.rtt_ns.is_some() as u8;
            t.rtt_ns = n.rtt_ns.unwrap_or(0);
            t.ack.cum_ack = n.cum_ack.0;
            t.ack.snd_nxt = n.snd_nxt.0;
            t.ack.ece = (n.ece == EcnEcho::Marked) as u8;
            (t.ack.has_ev, t.ack.ev) = (n.ev.is_some() as u8, n.ev.unwrap_or_default().get());
            Ok(0)
        }
        EventKind::Cnp => {
            t.kind = CC_EVENT_CNP;
            Ok(0)
        }
        EventKind::RttResponse { probe, rtt_ns } => {
            t.kind = CC_EVENT_RTT_RESPONSE;
            t.probe_id = probe.0;
            t.has_rtt = rtt_ns.is_some() as u8;
            t.rtt_ns = rtt_ns.unwrap_or(0);
            Ok(0)
        }
        EventKind::ProbeResponse { probe, hop_index, hop } => {
            t.kind = CC_EVENT_PROBE_RESPONSE;
            t.probe_id = probe.0;
            t.hop_index = hop_index;
            put(core::slice::from_ref(&hop))
        }
        EventKind::RxTelemetry { telemetry } => {
            t.kind = CC_EVENT_RX_TELEMETRY;
            put(telemetry)
        }
        EventKind::ProbeRequest { telemetry } => {
            t.kind = CC_EVENT_PROBE_REQUEST;
            put(telemetry)
        }
        EventKind::Feedback { window } => {
            t.kind = CC_EVENT_FEEDBACK;
            t.window_q4 = window.to_bits();
            Ok(0)
        }
        EventKind::FlowCount { flows } => {
            t.kind = CC_EVENT_FLOW_COUNT;
            t.flows = flows;
            Ok(0)
        }
        EventKind::Timer => {
            t.kind = CC_EVENT_TIMER;
            Ok(0)
        }
        EventKind::Spray(s) => {
            t.kind = CC_EVENT_SPRAY;
            t.spray = cc_spray::from(&s);
            Ok(0)
        }
    };
    match filled {
        Ok(n) => {
            t.n_hops = n;
            // SAFETY: out is valid.
            unsafe { out.write(t) };
            cc_status::Ok
        }
        Err(s) => s,
    }
}

/// Writes the answer to an event of flow `flow_id` as the codec's frame:
/// the decision `*d` if `status` is `CC_STATUS_OK`, else the refusal
/// `status`, one of the engine's (`CC_STATUS_UNKNOWN_FLOW` ..=
/// `CC_STATUS_NOT_APPLICABLE`). Its length goes to `*written`.
///
/// # Safety
/// `out` points to `cap` writable bytes; `d` is a valid pointer when
/// `status` is `CC_STATUS_OK`; `written` is a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn cc_trace_answer(
    flow_id: u32,
    status: u32,
    d: *const cc_decision,
    out: *mut u8,
    cap: usize,
    written: *mut usize,
) -> cc_status {
    if out.is_null() || written.is_null() {
        return cc_status::NullPointer;
    }
    let answer = if status == cc_status::Ok as u32 {
        if d.is_null() {
            return cc_status::NullPointer;
        }
        // SAFETY: d is valid.
        match unsafe { *d }.to_decision() {
            Ok(d) => Ok(d),
            Err(s) => return s,
        }
    } else {
        match cc_status::refusal_of_code(status) {
            Some(e) => Err(e),
            None => return cc_status::BadEnum,
        }
    };
    // SAFETY: the caller's promise.
    let buf = unsafe { core::slice::from_raw_parts_mut(out, cap) };
    match codec::encode_answer(FlowId(flow_id), &answer, buf) {
        Ok(n) => {
            // SAFETY: written is valid.
            unsafe { written.write(n) };
            cc_status::Ok
        }
        Err(_) => cc_status::BufferTooSmall,
    }
}
