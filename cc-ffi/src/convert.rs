//! The C structs of an event's fields and of a decision, and their
//! conversions to and from the engine's types. Every value a C caller
//! writes is checked here; an enumerated field is a plain integer in C,
//! so an unlisted value is refused (`cc_status::BadEnum`), never
//! taken as a Rust enum.

use cc_core::event::{
    Ack, Algorithm, Decision, Ecn, EcnEcho, FlowParams, Nack, NicSample, PintSample, Request, TimerRequest,
};
use cc_core::path::{Balancer, Ev, Paths, Spray};
use cc_core::telemetry::{CounterWidths, HopSample};
use cc_core::units::{BaseRtt, Fraction, LinkSpeed, Seq};
use cc_core::wire::pint::PintWidth;

use crate::cc_status;
use crate::table::Answer;

/// One hop of in-band telemetry, as a switch reported it (HPCC++ §4.1).
/// The engine reads an event's hops where they lie (this is its own
/// sample's layout), checking each: they stay unchanged during the call,
/// 4-byte aligned as C keeps them.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct cc_hop {
    /// Egress timestamp, in the switch's clock, `ts_bits` wide (ns).
    pub ts: u32,
    /// Bytes transmitted on the egress port, in units of `tx_unit_bytes`,
    /// `tx_bits` wide.
    pub tx: u32,
    /// Queue length at the egress port, bytes.
    pub qlen_bytes: u32,
    /// Sojourn time of the packet in the queue, ns (0 if not reported).
    pub sojourn_ns: u32,
    /// The egress link's speed, Mb/s (1 ..= 4 294 967 295).
    pub speed_mbps: u32,
    /// The switch's or port's identifier (path changes are seen by it).
    pub id: u32,
    /// Width of `ts` in bits, 1 ..= 32.
    pub ts_bits: u8,
    /// Width of `tx` in bits, 1 ..= 32.
    pub tx_bits: u8,
    /// Bytes per unit of `tx`, 1 ..= 65 535.
    pub tx_unit_bytes: u16,
    /// 1 if the switch reported its own utilisation in `utilization_q24`.
    pub has_utilization: u8,
    /// Zero (checked).
    pub reserved: [u8; 3],
    /// Transmit utilisation the switch computed, 2^-24 (at most 2^24).
    pub utilization_q24: u32,
}

/// The ACK of a flow's data.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct cc_ack {
    /// Cumulative acknowledgement: every byte before it was received.
    pub cum_ack: u32,
    /// The sender's next sequence number when the ACK arrived.
    pub snd_nxt: u32,
    /// 1 if the ACK echoes a congestion mark (ECN-Echo), else 0.
    pub ece: u8,
    /// 1 if `rtt_ns` holds the RTT of the acknowledged data.
    pub has_rtt: u8,
    /// 1 if `t1_ns` ..= `t4_ns`, `forward_hops` and `rx_buffer_level`
    /// hold the NICs' sample of the acknowledged packet, else 0.
    pub has_nic: u8,
    /// The receiver's Rx buffer occupancy in 1/32 steps of its size,
    /// 0 ..= 31.
    pub rx_buffer_level: u8,
    /// RTT measured for the acknowledged data, ns (LDCP, TIMELY).
    pub rtt_ns: u32,
    /// The sender's NIC sent the data packet (its counter, ns mod 2^32).
    pub t1_ns: u32,
    /// The receiver's NIC received it (the receiver's counter).
    pub t2_ns: u32,
    /// The receiver's NIC sent the ACK (the receiver's counter).
    pub t3_ns: u32,
    /// The sender's NIC received the ACK (the sender's counter).
    pub t4_ns: u32,
    /// Telemetry echoed by the receiver, first hop first; NULL if
    /// `n_hops` is 0.
    pub hops: *const cc_hop,
    /// Number of hops at `hops`, 0 ..= `CC_MAX_HOPS`.
    pub n_hops: u32,
    /// Switches the data packet crossed (from its TTL).
    pub forward_hops: u8,
    /// HPCC-PINT's code echoed on the ACK: 0 if it carries none, else the
    /// field's bytes, 1 (b = 1.05) or 2 (b = 1.01).
    pub pint_width: u8,
    /// The PINT code when `pint_width` is 1 or 2 (0 ..= 255 or 0 ..= 1254).
    pub pint_code: u16,
    /// The entropy value of the packet that sent the ACK, echoed, when
    /// `has_ev` is 1: its path's answer for a sprayed flow (`cc_on_spray`).
    pub ev: u16,
    /// 1 if `ev` holds the packet's entropy value, else 0.
    pub has_ev: u8,
    /// Zero (checked).
    pub reserved: u8,
}

/// A NACK of one packet a switch trimmed to its header (a trimming
/// fabric's transport, such as Ultra Ethernet's).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct cc_nack {
    /// First byte of the trimmed packet.
    pub seq: u32,
    /// The packet's bytes, as the sender counts them in flight.
    pub len: u32,
    /// The flow's cumulative acknowledgement when the NACK arrived (a
    /// byte-counting transport's received bytes, as on its ACKs).
    pub cum_ack: u32,
    /// The sender's next sequence number when the NACK arrived, this
    /// packet still counted: `snd_nxt - cum_ack` bytes are in flight.
    pub snd_nxt: u32,
    /// The time from the packet's sending to the NACK, ns, if `has_rtt`.
    pub rtt_ns: u32,
    /// 1 if `rtt_ns` holds a time, else 0 (the packet was sent more than
    /// once).
    pub has_rtt: u8,
    /// 1 if the packet was trimmed at its last hop, else 0.
    pub last_hop: u8,
    /// 1 if the trimmed header was CE-marked, else 0.
    pub ece: u8,
    /// 1 if `ev` holds the trimmed packet's entropy value, else 0.
    pub has_ev: u8,
    /// The trimmed packet's entropy value, echoed, when `has_ev` is 1.
    pub ev: u16,
    /// Zero (checked).
    pub reserved: u16,
}

/// How a flow sprays its packets over many paths (`cc_on_spray`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct cc_spray {
    /// The paths' count: a power of two, 2 ..= 256.
    pub paths: u16,
    /// One of `CC_BALANCER_*`.
    pub balancer: u8,
    /// Zero (checked).
    pub reserved: u8,
    /// The seed of the flow's own random numbers (any value).
    pub seed: u32,
}

/// `cc_spray::balancer`: every EV once a round, in a random order;
/// answers ignored.
pub const CC_BALANCER_OBLIVIOUS: u8 = 0;
/// `cc_spray::balancer`: the same round, skipping EVs that ECN (+1),
/// NACKs (+4) and timeouts (+15) penalised.
pub const CC_BALANCER_BITMAP: u8 = 1;
/// `cc_spray::balancer`: REPS, the EVs of unmarked ACKs reused; a
/// timeout freezes them.
pub const CC_BALANCER_REPS: u8 = 2;
/// `cc_spray::balancer`: a recycled EV while one is kept, else the
/// bitmap's (Ultra Ethernet's simulator's default).
pub const CC_BALANCER_MIXED: u8 = 3;

/// The engine's spray of a C one: `BadEnum` for a balancer code or
/// reserved byte no spray has, `InvalidParams` for a count of paths.
pub(crate) fn spray(s: &cc_spray) -> Result<Spray, cc_status> {
    let balancer = match (Balancer::from_code(s.balancer), s.reserved) {
        (Some(b), 0) => b,
        _ => return Err(cc_status::BadEnum),
    };
    Ok(Spray {
        paths: Paths::new(s.paths).ok_or(cc_status::InvalidParams)?,
        balancer,
        seed: s.seed,
    })
}

impl From<&Spray> for cc_spray {
    fn from(s: &Spray) -> Self {
        cc_spray {
            paths: s.paths.get(),
            balancer: s.balancer as u8,
            reserved: 0,
            seed: s.seed,
        }
    }
}

/// What a new flow is.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct cc_flow_params {
    /// One of `CC_ALGORITHM_*`.
    pub algorithm: u8,
    /// Zero.
    pub reserved: [u8; 3],
    /// The path's base RTT, ns, 100 ..= 1 048 576.
    pub base_rtt_ns: u32,
    /// The NIC's line rate, Mb/s.
    pub line_rate_mbps: u32,
    /// The flow's first sequence number.
    pub start_seq: u32,
}

// Each algorithm's file in `config/` declares its `CC_ALGORITHM_*` codes.

/// `cc_decision::ecn`: the next packets are not ECN-capable.
pub const CC_ECN_NOT_ECT: u8 = 0;
/// `cc_decision::ecn`: the next packets are ECN-capable (ECT(0)).
pub const CC_ECN_ECT: u8 = 1;

/// `cc_decision::timer`: leave the flow's timer as it is.
pub const CC_TIMER_KEEP: u8 = 0;
/// `cc_decision::timer`: arm the flow's timer at `timer_at_ns`.
pub const CC_TIMER_ARM: u8 = 1;
/// `cc_decision::timer`: cancel the flow's timer.
pub const CC_TIMER_CANCEL: u8 = 2;

/// `cc_decision::request`: nothing to send.
pub const CC_REQUEST_NONE: u8 = 0;
/// Send a probe (HPCC++) or RTT request (LDCP) numbered `request_arg`
/// (0 ..= 255).
pub const CC_REQUEST_PROBE: u8 = 1;
/// Send window feedback `request_arg` (1/16 byte) to the sender (Rx-HPCC).
pub const CC_REQUEST_FEEDBACK: u8 = 2;
/// Reply to the probe with the hop at index `request_arg` only
/// (0 .. `CC_MAX_HOPS`).
pub const CC_REQUEST_PROBE_REPLY: u8 = 3;
/// Send one packet now although the window is below one packet (LDCP).
pub const CC_REQUEST_RELEASE_ONE: u8 = 4;
/// Retransmit from sequence number `request_arg` (go-back-N).
pub const CC_REQUEST_GO_BACK_N: u8 = 5;

/// What the flow may do now: its window, its pace, the ECN codepoint of
/// its next packets, its timer and at most one request.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct cc_decision {
    /// Bytes in flight allowed, in 1/16 byte (below 16 × MTU: less than
    /// one packet).
    pub window_q4: u32,
    /// The pacer adds `pacing_bytes_q4` (1/16 byte) of credit every
    /// `pacing_per_ns`: R = W/T without a division.
    pub pacing_bytes_q4: u32,
    /// See `pacing_bytes_q4`, ns (100 ..= 1 048 576).
    pub pacing_per_ns: u32,
    /// One of `CC_TIMER_*`.
    pub timer: u8,
    /// One of `CC_REQUEST_*`.
    pub request: u8,
    /// 1 if `ev` holds the entropy value for the packet of a
    /// `cc_on_sent` (a sprayed flow's), else 0.
    pub has_ev: u8,
    /// One of `CC_ECN_*`. (Last of the four bytes: the fields after it
    /// are zero in most decisions, and a run of zeros that starts on a
    /// word is written a word at a time.)
    pub ecn: u8,
    /// When to fire the timer (`CC_TIMER_ARM`), ns; 0 otherwise.
    pub timer_at_ns: u64,
    /// The request's argument, as each `CC_REQUEST_*` says: the probe's
    /// number, the window to feed back, the hop to reply with or the
    /// first byte to send again; 0 for the others.
    pub request_arg: u32,
    /// The packet's entropy value when `has_ev` is 1, else 0.
    pub ev: u16,
    /// Zero.
    pub reserved: u16,
}

impl From<&Decision> for cc_decision {
    /// Every field written once (the decision is written to the caller's
    /// struct on every event).
    #[inline(always)]
    fn from(d: &Decision) -> Self {
        let (timer, timer_at_ns) = match d.timer {
            TimerRequest::Keep => (CC_TIMER_KEEP, 0),
            TimerRequest::Arm(at) => (CC_TIMER_ARM, at.as_nanos()),
            TimerRequest::Cancel => (CC_TIMER_CANCEL, 0),
        };
        let (request, request_arg) = match d.request {
            Request::None => (CC_REQUEST_NONE, 0),
            Request::Probe { id } => (CC_REQUEST_PROBE, id.0.into()),
            Request::Feedback { window } => (CC_REQUEST_FEEDBACK, window.to_bits()),
            Request::ProbeReply { hop_index } => (CC_REQUEST_PROBE_REPLY, hop_index.into()),
            Request::ReleaseOne => (CC_REQUEST_RELEASE_ONE, 0),
            Request::GoBackN { from } => (CC_REQUEST_GO_BACK_N, from.0),
        };
        cc_decision {
            window_q4: d.window.to_bits(),
            pacing_bytes_q4: d.pacing.bytes.to_bits(),
            pacing_per_ns: d.pacing.per.as_nanos(),
            timer,
            request,
            has_ev: d.ev.is_some() as u8,
            ecn: match d.ecn {
                Ecn::NotEct => CC_ECN_NOT_ECT,
                Ecn::Ect => CC_ECN_ECT,
            },
            timer_at_ns,
            request_arg,
            ev: d.ev.unwrap_or_default().get(),
            reserved: 0,
        }
    }
}

impl cc_decision {
    /// The engine's decision this one was made from (for the trace
    /// helpers, which encode it); `BadEnum` for a value no decision has.
    pub(crate) fn to_decision(self) -> Result<Decision, cc_status> {
        use cc_core::event::{Pacing, ProbeId};
        use cc_core::units::{Instant, Window};
        let per = BaseRtt::from_nanos(self.pacing_per_ns).ok_or(cc_status::InvalidParams)?;
        Ok(Decision {
            window: Window::from_bits(self.window_q4),
            pacing: Pacing {
                bytes: Window::from_bits(self.pacing_bytes_q4),
                per,
            },
            ecn: match self.ecn {
                CC_ECN_NOT_ECT => Ecn::NotEct,
                CC_ECN_ECT => Ecn::Ect,
                _ => return Err(cc_status::BadEnum),
            },
            timer: match self.timer {
                CC_TIMER_KEEP => TimerRequest::Keep,
                CC_TIMER_ARM => TimerRequest::Arm(Instant::from_nanos(self.timer_at_ns)),
                CC_TIMER_CANCEL => TimerRequest::Cancel,
                _ => return Err(cc_status::BadEnum),
            },
            request: match self.request {
                CC_REQUEST_NONE => Request::None,
                CC_REQUEST_PROBE => Request::Probe {
                    id: ProbeId(u8::try_from(self.request_arg).map_err(|_| cc_status::InvalidParams)?),
                },
                CC_REQUEST_FEEDBACK => Request::Feedback {
                    window: Window::from_bits(self.request_arg),
                },
                CC_REQUEST_PROBE_REPLY => Request::ProbeReply {
                    hop_index: u8::try_from(self.request_arg).map_err(|_| cc_status::InvalidParams)?,
                },
                CC_REQUEST_RELEASE_ONE => Request::ReleaseOne,
                CC_REQUEST_GO_BACK_N => Request::GoBackN {
                    from: Seq(self.request_arg),
                },
                _ => return Err(cc_status::BadEnum),
            },
            ev: match self.has_ev {
                0 => None,
                1 => Some(Ev::new(self.ev)),
                _ => return Err(cc_status::BadEnum),
            },
        })
    }
}

impl From<&HopSample> for cc_hop {
    fn from(h: &HopSample) -> Self {
        let utilization = h.tx_utilization.get();
        cc_hop {
            ts: h.ts,
            tx: h.tx,
            qlen_bytes: h.qlen_bytes,
            sojourn_ns: h.sojourn_ns,
            speed_mbps: h.bandwidth.as_mbps(),
            id: h.id,
            ts_bits: h.widths.ts_bits(),
            tx_bits: h.widths.tx_bits(),
            tx_unit_bytes: h.widths.tx_unit_bytes(),
            has_utilization: utilization.is_some() as u8,
            reserved: [0; 3],
            utilization_q24: utilization.map_or(0, Fraction::to_bits),
        }
    }
}

/// `f` of the hops at `hops`, `n` of them (none if `n` is 0), each
/// checked where it lies: a `cc_hop` is laid out as the engine's
/// `HopSample` (asserted below), so the engine reads the caller's memory
/// and nothing is copied (a copy was about 35 instructions a hop on
/// rv32imac; the check is 7 a hop where a hop has the widths the last
/// ACK taught and no utilization).
///
/// # Safety
/// `hops` points to `n` readable `cc_hop`s, or `n` is 0.
#[inline(always)]
pub(crate) unsafe fn with_hops(
    hops: *const cc_hop,
    n: u32,
    to: Answer<'_>,
    f: impl FnOnce(&[HopSample], Answer<'_>) -> cc_status,
) -> cc_status {
    // SAFETY: the caller's promise.
    match unsafe { in_place(hops, n, &mut to.tally.hop_widths) } {
        Ok(h) => f(h, to),
        Err(s) => to.refuse(s),
    }
}

/// The hops at `hops`, `n` of them, as the engine's samples, each checked
/// first as the C struct it is: counter widths `CounterWidths::new` would
/// take, `has_utilization` 0 or 1 with zero reserved bytes, a reported
/// utilization of at most 1. Only then are the bytes samples: the flag's
/// word is an enumeration of 0 and 1 there.
///
/// `known` is a valid widths word (the last one found, or
/// `CounterWidths::FULL`'s): a path's hops nearly always share one, ACK
/// after ACK, so a hop's widths are checked only where they differ from
/// it, and the word found valid then is kept in `known` for the next call.
///
/// # Safety
/// As `with_hops`; the hops stay unchanged while the slice is in use.
#[inline(always)]
unsafe fn in_place<'a>(hops: *const cc_hop, n: u32, known: &mut u32) -> Result<&'a [HopSample], cc_status> {
    if n == 0 {
        return Ok(&[]);
    }
    if n > crate::CC_MAX_HOPS {
        return Err(cc_status::TooManyHops);
    }
    if hops.is_null() {
        return Err(cc_status::NullPointer);
    }
    if !(hops as usize).is_multiple_of(core::mem::align_of::<cc_hop>()) {
        return Err(cc_status::BadMemory);
    }
    // The common hop (the known widths, no utilization) is two loads and
    // two compares in a loop of its own; the first other hop ends it, and
    // that hop and the rest are checked field by field in a second loop,
    // whose constants are set up only when it runs. (The word compared
    // stays in a register, not updated in the first loop, so that no
    // hop's test waits on the one before; the walk is by pointer while
    // below the end, one induction variable where a slice's iterator,
    // and a test of `p != end`, kept two: 6 instructions a hop.)
    let valid = *known;
    let words = hops.cast::<[u32; HOP_WORDS]>();
    // SAFETY: the caller's promise; 0 < n ≤ CC_MAX_HOPS, aligned. A
    // `cc_hop` is nine words with no padding.
    let end = unsafe { words.add(n as usize) };
    let mut p = words;
    // SAFETY (both loops): `p` is one of the `n` hops, or one past the
    // last after its `add`.
    while p < end && unsafe { (*p)[WIDTHS] == valid && (*p)[FLAG] == 0 } {
        p = unsafe { p.add(1) };
    }
    while p != end {
        let w = unsafe { &*p };
        if w[WIDTHS] != *known {
            if !CounterWidths::is_valid_word(w[WIDTHS]) {
                return Err(cc_status::BadCounterWidths);
            }
            *known = w[WIDTHS];
        }
        if w[FLAG] != 0 {
            if w[FLAG] != 1 {
                return Err(cc_status::BadEnum);
            }
            if w[UTILIZATION] > 1 << 24 {
                return Err(cc_status::InvalidParams);
            }
        }
        p = unsafe { p.add(1) };
    }
    // SAFETY: each hop holds a sample (checked above; the layout
    // assertions below): the engine reads the caller's hops.
    Ok(unsafe { core::slice::from_raw_parts(hops.cast::<HopSample>(), n as usize) })
}

/// A `cc_hop` as words: the counter widths' (`ts_bits | tx_bits << 8 |
/// tx_unit_bytes << 16`), the flag's (`has_utilization` and the reserved
/// bytes) and the utilization's.
const HOP_WORDS: usize = 9;
const WIDTHS: usize = 6;
const FLAG: usize = 7;
const UTILIZATION: usize = 8;

/// The engine's sample of one C hop, checked as [`with_hops`] checks each.
pub(crate) fn hop(c: &cc_hop) -> Result<HopSample, cc_status> {
    // SAFETY: one readable hop.
    unsafe { in_place(c, 1, &mut CounterWidths::FULL.to_word()) }.map(|h| h[0])
}

// A `cc_hop` is a `HopSample`, field by field (both `repr(C)`; the widths'
// word is `ts_bits | tx_bits << 8 | tx_unit_bytes << 16`, which is the
// three C fields' bytes on a little-endian core).
const _: () = {
    use core::mem::{align_of, offset_of, size_of};
    assert!(size_of::<cc_hop>() == size_of::<HopSample>());
    assert!(align_of::<cc_hop>() == align_of::<HopSample>());
    assert!(offset_of!(cc_hop, ts) == offset_of!(HopSample, ts));
    assert!(offset_of!(cc_hop, tx) == offset_of!(HopSample, tx));
    assert!(offset_of!(cc_hop, qlen_bytes) == offset_of!(HopSample, qlen_bytes));
    assert!(offset_of!(cc_hop, sojourn_ns) == offset_of!(HopSample, sojourn_ns));
    assert!(offset_of!(cc_hop, speed_mbps) == offset_of!(HopSample, bandwidth));
    assert!(offset_of!(cc_hop, id) == offset_of!(HopSample, id));
    assert!(offset_of!(cc_hop, ts_bits) == offset_of!(HopSample, widths));
    assert!(offset_of!(cc_hop, tx_bits) == offset_of!(HopSample, widths) + 1);
    assert!(offset_of!(cc_hop, tx_unit_bytes) == offset_of!(HopSample, widths) + 2);
    assert!(offset_of!(cc_hop, has_utilization) == offset_of!(HopSample, tx_utilization));
    assert!(offset_of!(cc_hop, utilization_q24) == offset_of!(HopSample, tx_utilization) + 4);
    assert!(size_of::<cc_hop>() == HOP_WORDS * 4);
    assert!(offset_of!(cc_hop, ts_bits) == WIDTHS * 4);
    assert!(offset_of!(cc_hop, has_utilization) == FLAG * 4);
    assert!(offset_of!(cc_hop, reserved) == FLAG * 4 + 1);
    assert!(offset_of!(cc_hop, utilization_q24) == UTILIZATION * 4);
};
#[cfg(not(target_endian = "little"))]
compile_error!("cc_hop's counter widths are read as a little-endian word");

/// The engine's NACK of a C NACK; its flag bytes are 0 or 1 and
/// `reserved` is 0 (`BadEnum` otherwise).
#[inline(always)]
pub(crate) fn nack(n: &cc_nack) -> Result<Nack, cc_status> {
    if (n.has_rtt | n.last_hop | n.ece | n.has_ev) > 1 || n.reserved != 0 {
        return Err(cc_status::BadEnum);
    }
    Ok(Nack {
        rtt_ns: if n.has_rtt == 0 { None } else { Some(n.rtt_ns) },
        last_hop: n.last_hop == 1,
        ece: if n.ece == 0 {
            EcnEcho::NotMarked
        } else {
            EcnEcho::Marked
        },
        ev: if n.has_ev == 0 { None } else { Some(Ev::new(n.ev)) },
        ..Nack::new(Seq(n.seq), n.len, Seq(n.cum_ack), Seq(n.snd_nxt))
    })
}

/// The engine's ACK of a C ACK, with `telemetry` its hops. Its flag bytes
/// (`ece`, `has_rtt`, `has_nic`: 0 or 1; `pint_width`: 0, 1 or 2) are
/// checked first, the three adjacent ones as one little-endian word with
/// `rx_buffer_level` (any bits of the top byte).
#[inline(always)]
pub(crate) fn ack<'a>(a: &cc_ack, telemetry: &'a [HopSample]) -> Result<Ack<'a>, cc_status> {
    // SAFETY: the four bytes at ACK_FLAGS are those four fields, inside
    // `a` and 4-aligned (asserted below).
    let flags = unsafe { (a as *const cc_ack).cast::<u8>().add(ACK_FLAGS).cast::<u32>().read() };
    if flags & 0x00FE_FEFE != 0 || a.pint_width > 2 {
        return Err(cc_status::BadEnum);
    }
    Ok(Ack {
        ece: if a.ece == 0 {
            EcnEcho::NotMarked
        } else {
            EcnEcho::Marked
        },
        telemetry,
        rtt_ns: if a.has_rtt == 0 { None } else { Some(a.rtt_ns) },
        pint: match a.pint_width {
            0 => None,
            1 => Some(PintSample {
                width: PintWidth::One,
                code: a.pint_code,
            }),
            _ => Some(PintSample {
                width: PintWidth::Two,
                code: a.pint_code,
            }),
        },
        nic: if a.has_nic == 0 {
            None
        } else {
            Some(NicSample {
                t1: a.t1_ns,
                t2: a.t2_ns,
                t3: a.t3_ns,
                t4: a.t4_ns,
                forward_hops: a.forward_hops,
                rx_buffer_level: a.rx_buffer_level,
            })
        },
        ..Ack::new(Seq(a.cum_ack), Seq(a.snd_nxt))
    })
}

/// `cc_ack`'s last word: `ev` in its low half, `has_ev` and `reserved`
/// in its high half, which is 0 on an ACK that names no path (one load
/// and one compare on every ACK: `cc_on_ack`'s test for the path's).
#[inline(always)]
pub(crate) fn ack_path_word(a: &cc_ack) -> u32 {
    // SAFETY: the four bytes at ACK_PATH are `ev`, `has_ev` and
    // `reserved`, inside `a` and 4-aligned (asserted below).
    unsafe { (a as *const cc_ack).cast::<u8>().add(ACK_PATH).cast::<u32>().read() }
}

/// The EV an ACK names: `None` for `has_ev` 0, `BadEnum` for a `has_ev`
/// above 1 or a nonzero `reserved`. ([`ack`] leaves the EV out: the
/// path's answer is the event function's, after the controller's.)
pub(crate) fn ack_ev(a: &cc_ack) -> Result<Option<u16>, cc_status> {
    match (a.has_ev, a.reserved) {
        (0, 0) => Ok(None),
        (1, 0) => Ok(Some(a.ev)),
        _ => Err(cc_status::BadEnum),
    }
}

/// Where `cc_ack`'s path word starts (`ack_path_word`).
const ACK_PATH: usize = core::mem::offset_of!(cc_ack, ev);
const _: () = {
    use core::mem::offset_of;
    assert!(ACK_PATH.is_multiple_of(4));
    assert!(offset_of!(cc_ack, has_ev) == ACK_PATH + 2);
    assert!(offset_of!(cc_ack, reserved) == ACK_PATH + 3);
    assert!(cfg!(target_endian = "little"));
};

/// Where `cc_ack`'s flag bytes start: `ece`, `has_rtt`, `has_nic` and
/// `rx_buffer_level`, one aligned word (little-endian, as asserted above).
const ACK_FLAGS: usize = core::mem::offset_of!(cc_ack, ece);
const _: () = {
    use core::mem::{align_of, offset_of};
    assert!(offset_of!(cc_ack, has_rtt) == ACK_FLAGS + 1);
    assert!(offset_of!(cc_ack, has_nic) == ACK_FLAGS + 2);
    assert!(offset_of!(cc_ack, rx_buffer_level) == ACK_FLAGS + 3);
    assert!(ACK_FLAGS.is_multiple_of(4) && align_of::<cc_ack>() >= 4);
};

/// An algorithm code's algorithm: the codes are the engine's
/// ([`Algorithm::code`], places in its registry), and each
/// `CC_ALGORITHM_*` constant names one (held by a test).
pub(crate) fn algorithm(code: u8) -> Result<Algorithm, cc_status> {
    Algorithm::from_code(code).ok_or(cc_status::BadEnum)
}

/// An algorithm's code.
pub(crate) fn algorithm_code(a: Algorithm) -> u8 {
    a.code()
}

/// The engine's parameters of a new flow.
pub(crate) fn flow_params(p: &cc_flow_params) -> Result<FlowParams, cc_status> {
    Ok(FlowParams {
        algorithm: algorithm(p.algorithm)?,
        base_rtt: BaseRtt::from_nanos(p.base_rtt_ns).ok_or(cc_status::InvalidParams)?,
        line_rate: LinkSpeed::from_mbps(p.line_rate_mbps),
        start_seq: Seq(p.start_seq),
    })
}

impl From<&FlowParams> for cc_flow_params {
    fn from(p: &FlowParams) -> Self {
        cc_flow_params {
            algorithm: algorithm_code(p.algorithm),
            reserved: [0; 3],
            base_rtt_ns: p.base_rtt.as_nanos(),
            line_rate_mbps: p.line_rate.as_mbps(),
            start_seq: p.start_seq.0,
        }
    }
}
