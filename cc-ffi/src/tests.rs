//! The C API from Rust: configurations, the table's life cycle and every
//! refusal. The C programs (examples/c) are run, on the host and both
//! soft cores, by the integration tests (tests/tests/firmware.rs).

use core::ffi::{c_char, CStr};
use core::ptr;

use cc_core::algorithms::AnyConfig;
use cc_core::event::Algorithm;

use crate::convert::algorithm;

use crate::*;

/// Memory for an engine, aligned as it asks.
struct Mem(Vec<u128>);

impl Mem {
    fn for_capacity(capacity: u32) -> Mem {
        assert!(cc_engine_align() <= 16);
        Mem(vec![0u128; cc_engine_size(capacity).div_ceil(16)])
    }
}

/// The defaults of the algorithm `code` names, as its C struct `T`.
fn defaults<T: Copy>(code: u8) -> T {
    assert_eq!(cc_config_size(code), core::mem::size_of::<T>());
    let mut c = core::mem::MaybeUninit::<T>::uninit();
    let s = unsafe { cc_config_default(code, c.as_mut_ptr().cast(), core::mem::size_of::<T>()) };
    assert_eq!(s, cc_status::Ok);
    unsafe { c.assume_init() }
}

fn engine(mem: &mut Mem, capacity: u32) -> *mut cc_engine {
    let mut e = ptr::null_mut();
    let len = mem.0.len() * 16;
    let s = unsafe { cc_engine_init(mem.0.as_mut_ptr().cast(), len, capacity, &mut e) };
    assert_eq!(s, cc_status::Ok);
    e
}

/// `cc_engine_configure` with the C struct `c` of the algorithm `code`.
fn configure<T>(e: *mut cc_engine, code: u8, c: &T) -> cc_status {
    unsafe { cc_engine_configure(e, code, (c as *const T).cast(), core::mem::size_of::<T>()) }
}

/// The engine's configuration of the algorithm `code`, as its C struct.
fn configured<T: Copy>(e: *mut cc_engine, code: u8) -> T {
    let mut c = core::mem::MaybeUninit::<T>::uninit();
    let s = unsafe { cc_engine_config(e, code, c.as_mut_ptr().cast(), core::mem::size_of::<T>()) };
    assert_eq!(s, cc_status::Ok);
    unsafe { c.assume_init() }
}

fn params(algorithm: u8) -> cc_flow_params {
    cc_flow_params {
        algorithm,
        reserved: [0; 3],
        base_rtt_ns: 8000,
        line_rate_mbps: 100_000,
        start_seq: 0,
    }
}

fn start(e: *mut cc_engine, algorithm: u8) -> Result<(u32, cc_decision), cc_status> {
    let (mut h, mut d) = (0, cc_decision::default());
    match unsafe { cc_flow_start(e, 0, &params(algorithm), &mut h, &mut d) } {
        cc_status::Ok => Ok((h, d)),
        s => Err(s),
    }
}

/// An ACK of bytes 1000 (2000 sent) with ECN-Echo `ece` and `n_hops` hops
/// at `hops`.
fn ack(ece: u8, n_hops: u32, hops: *const cc_hop) -> cc_ack {
    cc_ack {
        cum_ack: 1000,
        snd_nxt: 2000,
        ece,
        has_rtt: 0,
        has_nic: 0,
        rx_buffer_level: 0,
        rtt_ns: 0,
        t1_ns: 0,
        t2_ns: 0,
        t3_ns: 0,
        t4_ns: 0,
        hops,
        n_hops,
        forward_hops: 0,
        pint_width: 0,
        pint_code: 0,
        ev: 0,
        has_ev: 0,
        reserved: 0,
    }
}

fn field<T>(code: u8, c: &T) -> Option<String> {
    let mut name: *const c_char = ptr::null();
    match unsafe { cc_config_check(code, (c as *const T).cast(), core::mem::size_of::<T>(), &mut name) } {
        cc_status::Ok => None,
        s => {
            assert_eq!(s, cc_status::InvalidParams);
            Some(unsafe { CStr::from_ptr(name) }.to_str().unwrap().to_owned())
        }
    }
}

/// Every algorithm's defaults as raw bytes of its struct's size, checked,
/// configured, and read back byte for byte; the engine then holds the
/// engine's own defaults.
#[test]
fn the_defaults_are_the_engines_and_go_through_c_unchanged() {
    let mut mem = Mem::for_capacity(4);
    let e = engine(&mut mem, 4);
    for a in Algorithm::ALL {
        let code = a.code();
        let size = cc_config_size(code);
        assert!(size > 0 && size.is_multiple_of(4), "{a:?}");
        let mut bytes = vec![0xa5u8; size];
        assert_eq!(
            unsafe { cc_config_default(code, bytes.as_mut_ptr().cast(), size) },
            cc_status::Ok
        );
        let mut name: *const c_char = ptr::null();
        assert_eq!(
            unsafe { cc_config_check(code, bytes.as_ptr().cast(), size, &mut name) },
            cc_status::Ok
        );
        assert_eq!(
            unsafe { cc_engine_configure(e, code, bytes.as_ptr().cast(), size) },
            cc_status::Ok
        );
        let mut back = vec![0u8; size];
        assert_eq!(
            unsafe { cc_engine_config(e, code, back.as_mut_ptr().cast(), size) },
            cc_status::Ok
        );
        assert_eq!(back, bytes, "{a:?}");
    }
    // The speed and RTT lists are sets: their order may change, what they
    // hold may not.
    let h: cc_hpcc_config = defaults(CC_ALGORITHM_HPCC);
    assert_eq!(cc_core::hpcc::HpccConfig::try_from(&h), Ok(AnyConfig::DEFAULT.hpcc));
    assert_eq!(
        configured::<cc_ldcp_config>(e, CC_ALGORITHM_LDCP_RATE),
        defaults(CC_ALGORITHM_LDCP)
    );
}

#[test]
fn a_field_out_of_range_is_named() {
    fn case<T: Copy>(code: u8, name: &str, spoil: fn(&mut T)) {
        let mut c: T = defaults(code);
        spoil(&mut c);
        assert_eq!(field(code, &c).as_deref(), Some(name));
        // The engine refuses it too, and keeps what it had.
        let mut mem = Mem::for_capacity(4);
        let e = engine(&mut mem, 4);
        let before: T = configured(e, code);
        assert_eq!(configure(e, code, &c), cc_status::InvalidParams, "{name}");
        let after: T = configured(e, code);
        // SAFETY: plain integers, compared as bytes.
        let bytes = |t: &T| {
            unsafe { core::slice::from_raw_parts((t as *const T).cast::<u8>(), core::mem::size_of::<T>()) }.to_vec()
        };
        assert_eq!(bytes(&after), bytes(&before), "{name}");
    }
    let h = CC_ALGORITHM_HPCC;
    case::<cc_hpcc_config>(h, "hpcc.eta_q24", |c| c.eta_q24 = 0);
    case::<cc_hpcc_config>(h, "hpcc.eta_q24", |c| c.eta_q24 = (1 << 24) + 1);
    case::<cc_hpcc_config>(h, "hpcc.max_stage", |c| c.max_stage = 16);
    case::<cc_hpcc_config>(h, "hpcc.w_ai_kind", |c| c.w_ai_kind = 7);
    case::<cc_hpcc_config>(h, "hpcc.n_speeds", |c| c.n_speeds = 9);
    case::<cc_hpcc_config>(h, "hpcc.speeds_mbps", |c| {
        c.n_speeds = 1;
        c.speeds_mbps[0] = 5;
    });
    case::<cc_hpcc_config>(CC_ALGORITHM_HPCC_RECEIVER, "hpcc.base_rtts_ns", |c| {
        c.n_base_rtts = 1;
        c.base_rtts_ns[0] = 50;
    });
    case::<cc_ldcp_config>(CC_ALGORITHM_LDCP, "ldcp.mtu", |c| c.mtu = 63);
    case::<cc_ldcp_config>(CC_ALGORITHM_LDCP_RATE, "ldcp.gamma_q24", |c| c.gamma_q24 = 1 << 24);
    case::<cc_dctcp_config>(CC_ALGORITHM_DCTCP, "dctcp.w_min_q4", |c| c.w_min_q4 = 0);
    case::<cc_dcqcn_config>(CC_ALGORITHM_DCQCN, "dcqcn.byte_counter", |c| c.byte_counter = 100);
    case::<cc_dcqcn_config>(CC_ALGORITHM_DCQCN, "dcqcn.clamp_target", |c| c.clamp_target = 2);
}

/// A configuration passed with a size other than its struct's, an unknown
/// code, a NULL pointer, or while flows are live is refused and changes
/// nothing; a reset keeps the configuration.
#[test]
fn configuring_checks_the_code_the_size_and_the_live_flows() {
    let mut mem = Mem::for_capacity(4);
    let e = engine(&mut mem, 4);
    let mut l: cc_ldcp_config = defaults(CC_ALGORITHM_LDCP);
    let size = core::mem::size_of::<cc_ldcp_config>();
    let p = (&l as *const cc_ldcp_config).cast();
    for bad in [0, size - 1, size + 1, core::mem::size_of::<cc_hpcc_config>()] {
        assert_eq!(
            unsafe { cc_engine_configure(e, CC_ALGORITHM_LDCP, p, bad) },
            cc_status::BadSize
        );
        assert_eq!(
            unsafe { cc_config_check(CC_ALGORITHM_LDCP, p, bad, ptr::null_mut()) },
            cc_status::BadSize
        );
        let mut out = [0u8; 512];
        assert_eq!(
            unsafe { cc_config_default(CC_ALGORITHM_LDCP, out.as_mut_ptr().cast(), bad) },
            cc_status::BadSize
        );
    }
    let unknown = Algorithm::COUNT as u8;
    assert_eq!(cc_config_size(unknown), 0);
    assert_eq!(unsafe { cc_engine_configure(e, unknown, p, size) }, cc_status::BadEnum);
    assert_eq!(
        unsafe { cc_config_check(unknown, p, size, ptr::null_mut()) },
        cc_status::BadEnum
    );
    assert_eq!(
        unsafe { cc_engine_configure(e, CC_ALGORITHM_LDCP, ptr::null(), size) },
        cc_status::NullPointer
    );
    // An unaligned struct is read as it lies.
    let mut unaligned = vec![0u8; size + 1];
    l.alpha_q24 = 1 << 22;
    unsafe {
        unaligned
            .as_mut_ptr()
            .add(1)
            .cast::<cc_ldcp_config>()
            .write_unaligned(l)
    };
    assert_eq!(
        unsafe { cc_engine_configure(e, CC_ALGORITHM_LDCP, unaligned.as_ptr().add(1).cast(), size) },
        cc_status::Ok
    );
    assert_eq!(configured::<cc_ldcp_config>(e, CC_ALGORITHM_LDCP).alpha_q24, 1 << 22);
    // While a flow lives, no algorithm's configuration changes.
    let (h, _) = start(e, CC_ALGORITHM_DCTCP).unwrap();
    l.alpha_q24 = 1 << 21;
    assert_eq!(configure(e, CC_ALGORITHM_LDCP, &l), cc_status::FlowsLive);
    let mut d = cc_decision::default();
    assert_eq!(unsafe { cc_flow_end(e, h, &mut d) }, cc_status::Ok);
    assert_eq!(configure(e, CC_ALGORITHM_LDCP, &l), cc_status::Ok);
    start(e, CC_ALGORITHM_LDCP).unwrap();
    assert_eq!(unsafe { cc_engine_reset(e) }, cc_status::Ok);
    assert_eq!(configured::<cc_ldcp_config>(e, CC_ALGORITHM_LDCP).alpha_q24, 1 << 21);
    assert_eq!(
        configure(e, CC_ALGORITHM_LDCP, &defaults::<cc_ldcp_config>(CC_ALGORITHM_LDCP)),
        cc_status::Ok
    );
}

#[test]
fn memory_too_small_misaligned_or_missing_is_refused() {
    assert_eq!(cc_engine_size(0), 0);
    assert_eq!(cc_engine_size(CC_MAX_CAPACITY + 1), 0);
    assert!(cc_engine_size(1) >= cc_engine_flow_size());
    let mut mem = Mem::for_capacity(8);
    let base = mem.0.as_mut_ptr().cast::<u8>();
    let len = cc_engine_size(8);
    let mut e = ptr::null_mut();
    let init = |p: *mut u8, len, e: &mut *mut cc_engine| unsafe { cc_engine_init(p.cast(), len, 8, e) };
    assert_eq!(init(base, len - 1, &mut e), cc_status::BadMemory);
    assert_eq!(init(unsafe { base.add(1) }, len, &mut e), cc_status::BadMemory);
    assert_eq!(init(ptr::null_mut(), len, &mut e), cc_status::NullPointer);
    assert!(e.is_null());
    // Memory that was never made an engine is refused by every call.
    let mut d = cc_decision::default();
    let stray = base.cast::<cc_engine>();
    assert_eq!(unsafe { cc_on_timer(stray, 0, 0, &mut d) }, cc_status::BadMemory);
    assert_eq!(
        unsafe { cc_on_timer(ptr::null_mut(), 0, 0, &mut d) },
        cc_status::BadMemory
    );
}

#[test]
fn handles_live_from_start_to_end_and_slots_are_reused() {
    let mut mem = Mem::for_capacity(2);
    let e = engine(&mut mem, 2);
    let (a, d) = start(e, CC_ALGORITHM_HPCC).unwrap();
    // W_init = line rate · T = 100 Gb/s · 8 µs = 100 000 bytes.
    assert_eq!(d.window_q4, 100_000 * 16);
    let (b, _) = start(e, CC_ALGORITHM_DCQCN).unwrap();
    assert_eq!(start(e, CC_ALGORITHM_LDCP).unwrap_err(), cc_status::TableFull);
    let mut d = cc_decision::default();
    assert_eq!(unsafe { cc_flow_end(e, a, &mut d) }, cc_status::Ok);
    // The ended handle is refused; its slot goes to the next flow under a
    // new generation.
    assert_eq!(unsafe { cc_on_timer(e, a, 1, &mut d) }, cc_status::UnknownFlow);
    let (c, _) = start(e, CC_ALGORITHM_LDCP).unwrap();
    assert_eq!(c & 0xffff, a & 0xffff);
    assert_ne!(c, a);
    assert_eq!(unsafe { cc_on_timer(e, a, 1, &mut d) }, cc_status::UnknownFlow);
    assert_eq!(unsafe { cc_on_cnp(e, b, 1, &mut d) }, cc_status::Ok);
    // An event the algorithm does not take changes nothing.
    assert_eq!(
        unsafe { cc_on_feedback(e, c, 1, 1 << 10, &mut d) },
        cc_status::NotApplicable
    );
    let mut s = cc_stats::default();
    assert_eq!(unsafe { cc_engine_stats(e, &mut s) }, cc_status::Ok);
    assert_eq!(
        (s.live_flows, s.table_full, s.unknown_flow, s.not_applicable),
        (2, 1, 2, 1)
    );
    // A reset ends every flow.
    assert_eq!(unsafe { cc_engine_reset(e) }, cc_status::Ok);
    assert_eq!(unsafe { cc_on_cnp(e, b, 2, &mut d) }, cc_status::UnknownFlow);
    assert!(start(e, CC_ALGORITHM_HPCC).is_ok());
}

#[test]
fn bad_enumerations_and_pointers_are_refused() {
    let mut mem = Mem::for_capacity(4);
    let e = engine(&mut mem, 4);
    assert_eq!(start(e, Algorithm::COUNT as u8).unwrap_err(), cc_status::BadEnum);
    let (h, _) = start(e, CC_ALGORITHM_LDCP).unwrap();
    let mut d = cc_decision::default();
    assert_eq!(
        unsafe { cc_on_ack(e, h, 1, &ack(2, 0, ptr::null()), &mut d) },
        cc_status::BadEnum
    );
    assert_eq!(
        unsafe { cc_on_ack(e, h, 1, &ack(0, 1, ptr::null()), &mut d) },
        cc_status::NullPointer
    );
    // Each flag byte is 0 or 1 (`pint_width` 0, 1 or 2), whatever its
    // neighbours; `rx_buffer_level` beside them is not a flag.
    let bad: [fn(&mut cc_ack); 6] = [
        |a| a.has_rtt = 2,
        |a| a.has_nic = 0x80,
        |a| a.ece = 0xFF,
        |a| a.pint_width = 3,
        |a| (a.has_rtt, a.has_nic) = (1, 2),
        |a| (a.ece, a.rx_buffer_level) = (2, 31),
    ];
    for f in bad {
        let mut a = ack(0, 0, ptr::null());
        f(&mut a);
        assert_eq!(unsafe { cc_on_ack(e, h, 1, &a, &mut d) }, cc_status::BadEnum, "{a:?}");
    }
    let hops = [cc_hop::default(); 9];
    assert_eq!(
        unsafe { cc_on_ack(e, h, 1, &ack(0, 9, hops.as_ptr()), &mut d) },
        cc_status::TooManyHops
    );
    // Widths of 0 bits are no counter.
    assert_eq!(
        unsafe { cc_on_ack(e, h, 1, &ack(0, 1, hops.as_ptr()), &mut d) },
        cc_status::BadCounterWidths
    );
    assert_eq!(unsafe { cc_on_sent(e, h, 1, 0, 1000, 2, &mut d) }, cc_status::BadEnum);
    assert_eq!(unsafe { cc_on_timer(e, h, 1, ptr::null_mut()) }, cc_status::NullPointer);
    // No refusal wrote the decision; the telemetry refusals are counted,
    // the C caller's own mistakes (NULL, a bad enumeration) are not.
    assert_eq!(d, cc_decision::default());
    let mut s = cc_stats::default();
    assert_eq!(unsafe { cc_engine_stats(e, &mut s) }, cc_status::Ok);
    assert_eq!((s.bad_telemetry, s.unknown_flow, s.bad_start), (2, 0, 1));
    assert_eq!(
        unsafe { cc_on_ack(e, h, 1, &ack(0, 0, ptr::null()), &mut d) },
        cc_status::Ok
    );
}

/// Hops are read where the caller keeps them, each checked there: what
/// cc_engine.h says a `cc_hop` holds, and nothing else.
#[test]
fn hops_read_in_place_are_checked_field_by_field() {
    let mut mem = Mem::for_capacity(4);
    let e = engine(&mut mem, 4);
    let (h, _) = start(e, CC_ALGORITHM_HPCC).unwrap();
    let good = cc_hop {
        speed_mbps: 100_000,
        ts_bits: 32,
        tx_bits: 32,
        tx_unit_bytes: 1,
        ..cc_hop::default()
    };
    let on_ack_of = |hops: *const cc_hop, n: u32| {
        let mut d = cc_decision::default();
        unsafe { cc_on_ack(e, h, 1, &ack(0, n, hops), &mut d) }
    };
    let on_ack = |hops: &[cc_hop]| on_ack_of(hops.as_ptr(), hops.len() as u32);
    assert_eq!(on_ack(&[good, good]), cc_status::Ok);
    let with = |f: fn(&mut cc_hop)| {
        let mut bad = good;
        f(&mut bad);
        // The second hop is the bad one: every hop is checked.
        on_ack(&[good, bad])
    };
    assert_eq!(with(|h| h.tx_bits = 33), cc_status::BadCounterWidths);
    assert_eq!(with(|h| h.ts_bits = 0), cc_status::BadCounterWidths);
    // Widths that change along the path are checked where they change.
    let other = cc_hop { ts_bits: 24, ..good };
    let bad = cc_hop { ts_bits: 33, ..good };
    assert_eq!(on_ack(&[good, other, good]), cc_status::Ok);
    assert_eq!(on_ack(&[good, other, bad]), cc_status::BadCounterWidths);
    assert_eq!(on_ack(&[bad, good]), cc_status::BadCounterWidths);
    assert_eq!(with(|h| h.tx_unit_bytes = 0), cc_status::BadCounterWidths);
    assert_eq!(with(|h| h.has_utilization = 2), cc_status::BadEnum);
    assert_eq!(with(|h| h.reserved = [0, 1, 0]), cc_status::BadEnum);
    assert_eq!(
        with(|h| {
            h.has_utilization = 1;
            h.utilization_q24 = (1 << 24) + 1;
        }),
        cc_status::InvalidParams
    );
    assert_eq!(
        with(|h| {
            h.has_utilization = 1;
            h.utilization_q24 = 1 << 24;
        }),
        cc_status::Ok
    );
    // The engine keeps the widths word it last found valid, so that most
    // hops compare one word; it is a hint only. Every hop is still checked
    // on every ACK, whichever word the ACK before it taught.
    let util = cc_hop {
        has_utilization: 1,
        utilization_q24: 1 << 23,
        ..good
    };
    let flagged = cc_hop {
        has_utilization: 2,
        ..other
    };
    for first in [good, other, util] {
        assert_eq!(on_ack(&[first]), cc_status::Ok);
        assert_eq!(on_ack(&[good, bad]), cc_status::BadCounterWidths);
        assert_eq!(on_ack(&[bad]), cc_status::BadCounterWidths);
        assert_eq!(on_ack(&[other, good, other]), cc_status::Ok);
        assert_eq!(on_ack(&[good, util, other, util]), cc_status::Ok);
        // The first hop that fails decides the answer.
        assert_eq!(on_ack(&[good, flagged, bad]), cc_status::BadEnum);
        assert_eq!(on_ack(&[good, bad, flagged]), cc_status::BadCounterWidths);
    }
    // A pointer that is not a cc_hop's alignment is refused, not read.
    let words = [0u32; 20];
    let odd = unsafe { (words.as_ptr() as *const u8).add(2) }.cast::<cc_hop>();
    assert_eq!(on_ack_of(odd, 1), cc_status::BadMemory);
}

#[test]
fn decisions_keep_every_field_through_c() {
    use cc_core::event::{Decision, Ecn, Pacing, ProbeId, Request, TimerRequest};
    use cc_core::units::{BaseRtt, Instant, Seq, Window};
    let base = Decision {
        window: Window::from_bits(12345),
        pacing: Pacing {
            bytes: Window::from_bits(999),
            per: BaseRtt::from_nanos(8000).unwrap(),
        },
        ecn: Ecn::NotEct,
        timer: TimerRequest::Arm(Instant::from_nanos(1 << 40)),
        request: Request::None,
        ev: None,
    };
    let requests = [
        Request::None,
        Request::Probe { id: ProbeId(7) },
        Request::Feedback {
            window: Window::from_bits(77),
        },
        Request::ProbeReply { hop_index: 3 },
        Request::ReleaseOne,
        Request::GoBackN { from: Seq(u32::MAX) },
    ];
    for request in requests {
        for timer in [TimerRequest::Keep, TimerRequest::Cancel, base.timer] {
            for ev in [None, Some(0), Some(u16::MAX)].map(|e| e.map(cc_core::path::Ev::new)) {
                let d = Decision {
                    request,
                    timer,
                    ev,
                    ..base
                };
                assert_eq!(cc_decision::from(&d).to_decision(), Ok(d));
            }
        }
    }
}

#[test]
fn a_decision_is_laid_out_as_the_header_says() {
    use cc_core::event::{Decision, Ecn, Pacing, Request, TimerRequest};
    use cc_core::units::{BaseRtt, Window};
    use core::mem::{align_of, offset_of, size_of};
    // cc_engine.h: three words, four bytes (timer, request, has_ev,
    // ecn), the timer's u64, the request's argument, the EV and a
    // reserved half word.
    let offsets = [
        offset_of!(cc_decision, window_q4),
        offset_of!(cc_decision, pacing_bytes_q4),
        offset_of!(cc_decision, pacing_per_ns),
        offset_of!(cc_decision, timer),
        offset_of!(cc_decision, request),
        offset_of!(cc_decision, has_ev),
        offset_of!(cc_decision, ecn),
        offset_of!(cc_decision, timer_at_ns),
        offset_of!(cc_decision, request_arg),
        offset_of!(cc_decision, ev),
        offset_of!(cc_decision, reserved),
    ];
    assert_eq!(offsets, [0, 4, 8, 12, 13, 14, 15, 16, 24, 28, 30]);
    assert_eq!((size_of::<cc_decision>(), align_of::<cc_decision>()), (32, 8));
    // Each request's argument in the one field; the others zero.
    let d = Decision {
        window: Window::from_bits(1),
        pacing: Pacing {
            bytes: Window::from_bits(2),
            per: BaseRtt::from_nanos(3000).unwrap(),
        },
        ecn: Ecn::Ect,
        timer: TimerRequest::Keep,
        request: Request::Feedback {
            window: Window::from_bits(77),
        },
        ev: None,
    };
    let c = cc_decision::from(&d);
    assert_eq!(
        (
            c.request,
            c.request_arg,
            c.timer,
            c.timer_at_ns,
            c.ecn,
            c.has_ev,
            c.ev,
            c.reserved
        ),
        (CC_REQUEST_FEEDBACK, 77, CC_TIMER_KEEP, 0, CC_ECN_ECT, 0, 0, 0)
    );
}

#[test]
fn the_abi_version_is_the_headers() {
    assert_eq!(cc_abi_version() >> 16, CC_ABI_VERSION_MAJOR);
}

#[test]
fn hns_blocks_read_into_the_config_and_back() {
    let mut c: cc_ldcp_config = defaults(CC_ALGORITHM_LDCP);
    let ldcp = [0, 0, 0, 0, 64, 4, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0];
    let mut name: *const c_char = ptr::null();
    assert_eq!(
        unsafe { cc_hns_ldcp_read(&mut c, ldcp.as_ptr(), &mut name) },
        cc_status::Ok
    );
    // alpha 64/128 packet, gamma 2^-4, beta 2^-2; the rest as it was.
    assert_eq!((c.alpha_q24, c.gamma_q24, c.beta_q24), (1 << 23, 1 << 20, 1 << 22));
    assert_eq!(c.mtu, defaults::<cc_ldcp_config>(CC_ALGORITHM_LDCP).mtu);
    let mut out = [0u8; 16];
    assert_eq!(
        unsafe { cc_hns_ldcp_write(&c, out.as_mut_ptr(), &mut name) },
        cc_status::Ok
    );
    assert_eq!(out, ldcp);
    // Refused: the field named, the config unchanged.
    let before = c;
    let bad = [0, 0, 0, 0, 64, 9, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0];
    assert_eq!(
        unsafe { cc_hns_ldcp_read(&mut c, bad.as_ptr(), &mut name) },
        cc_status::InvalidParams
    );
    assert_eq!(unsafe { CStr::from_ptr(name) }.to_str(), Ok("gamma"));
    assert_eq!(c, before);
    // A struct out of range is refused before the block is read.
    let mut spoilt = c;
    spoilt.gamma_q24 = 1 << 24;
    assert_eq!(
        unsafe { cc_hns_ldcp_read(&mut spoilt, ldcp.as_ptr(), &mut name) },
        cc_status::InvalidParams
    );
    assert_eq!(unsafe { CStr::from_ptr(name) }.to_str(), Ok("ldcp.gamma_q24"));
    // The defaults' DCQCN timers (300 µs) are no power of two µs.
    let q: cc_dcqcn_config = defaults(CC_ALGORITHM_DCQCN);
    assert_eq!(
        unsafe { cc_hns_dcqcn_write(&q, 100_000, out.as_mut_ptr(), &mut name) },
        cc_status::InvalidParams
    );
    assert_eq!(unsafe { CStr::from_ptr(name) }.to_str(), Ok("tkp"));
}

#[test]
fn every_refusal_code_names_its_engine_error() {
    for code in 1..=8 {
        let e = cc_status::refusal_of_code(code).unwrap();
        assert_eq!(cc_status::from(e) as u32, code);
    }
    for code in [0, 9, 10, 11, 12, 13, 15, 16, u32::MAX] {
        assert_eq!(cc_status::refusal_of_code(code), None);
    }
}

/// The header names every algorithm of the engine's registry, each by
/// its name (`ldcp-rate`: `CC_ALGORITHM_LDCP_RATE`) and with its code,
/// and names no other: a C caller's constants are the engine's codes.
#[test]
fn the_header_names_every_algorithm_by_its_code() {
    let header = include_str!("../include/cc_engine.h");
    // In code order: an algorithm with a configuration file of its own
    // defines its code there (config/<name>.rs), beside its struct.
    let mut defined: Vec<(String, u8)> = header
        .lines()
        .filter_map(|l| l.strip_prefix("#define CC_ALGORITHM_"))
        .map(|l| {
            let (name, code) = l.split_once(' ').unwrap();
            (name.to_string(), code.trim().parse().unwrap())
        })
        .collect();
    defined.sort_by_key(|(_, code)| *code);
    let expected: Vec<(String, u8)> = Algorithm::ALL
        .iter()
        .map(|a| (a.name().to_uppercase().replace('-', "_"), a.code()))
        .collect();
    assert_eq!(defined, expected);
    for (name, code) in expected {
        assert_eq!(
            algorithm(code).map(|a| a.name().to_uppercase().replace('-', "_")),
            Ok(name)
        );
    }
    assert_eq!(algorithm(Algorithm::COUNT as u8), Err(cc_status::BadEnum));
}

/// A NACK through C: an algorithm without a NACK rule takes it as the
/// loss of the packet's first byte (DCTCP's window as `cc_on_loss` leaves
/// it); a flag byte other than 0 or 1, or a nonzero `reserved`, is
/// refused with nothing changed.
#[test]
fn a_nack_goes_through_c_and_bad_flags_are_refused() {
    let mut mem = Mem::for_capacity(4);
    let e = engine(&mut mem, 4);
    let code = Algorithm::Dctcp.code();
    let (a, _) = start(e, code).unwrap();
    let (b, _) = start(e, code).unwrap();
    let nack = cc_nack {
        seq: 4_000,
        len: 1_000,
        cum_ack: 3_000,
        snd_nxt: 9_000,
        rtt_ns: 12_000,
        has_rtt: 1,
        last_hop: 0,
        ece: 1,
        has_ev: 0,
        ev: 0,
        reserved: 0,
    };
    let (mut da, mut db) = (cc_decision::default(), cc_decision::default());
    assert_eq!(unsafe { cc_on_nack(e, a, 50_000, &nack, &mut da) }, cc_status::Ok);
    assert_eq!(unsafe { cc_on_loss(e, b, 50_000, 4_000, 0, 0, &mut db) }, cc_status::Ok);
    assert_eq!(da, db);
    for bad in [
        cc_nack { has_rtt: 2, ..nack },
        cc_nack { last_hop: 7, ..nack },
        cc_nack { ece: 2, ..nack },
        cc_nack { reserved: 1, ..nack },
        cc_nack { has_ev: 2, ..nack },
    ] {
        let mut d = cc_decision::default();
        assert_eq!(unsafe { cc_on_nack(e, a, 60_000, &bad, &mut d) }, cc_status::BadEnum);
    }
    let mut d = cc_decision::default();
    assert_eq!(
        unsafe { cc_on_nack(e, a, 60_000, ptr::null(), &mut d) },
        cc_status::NullPointer
    );
}

/// Path choice through C is the Rust engine's: a sprayed NSCC flow's
/// EVs and decisions, event for event over random ACKs, NACKs and
/// timeouts that echo EVs, for every balancer; a flow that was not
/// sprayed names no EV.
#[test]
fn a_sprayed_flow_through_c_is_the_rust_engines() {
    use cc_core::engine::Engine;
    use cc_core::event::{MessageEnd, Nack};
    use cc_core::path::{Balancer, Paths, Spray, Sprayer};
    use cc_core::units::{Instant, Seq};
    let mut rng = 0x1234_5678u32;
    let mut draw = move || {
        rng ^= rng << 13;
        rng ^= rng >> 17;
        rng ^= rng << 5;
        rng
    };
    for b in Balancer::ALL {
        let mut mem = Mem::for_capacity(4);
        let e = engine(&mut mem, 4);
        let mut paths = vec![0u128; cc_paths_size(4).div_ceil(16)];
        assert!(cc_paths_align() <= 16);
        let ok = unsafe { cc_engine_attach_paths(e, paths.as_mut_ptr().cast(), paths.len() * 16) };
        assert_eq!(ok, cc_status::Ok);
        let mut rust: Engine<cc_core::algorithms::AnyController<{ crate::table::H }>, 4, Sprayer> =
            Engine::new(AnyConfig::DEFAULT).unwrap();
        let code = Algorithm::Nscc.code();
        let (h, _) = start(e, code).unwrap();
        let p = crate::convert::flow_params(&params(code)).unwrap();
        let (rh, _) = rust.start(Instant::ZERO, cc_core::event::FlowId(1), &p).unwrap();
        let (plain, _) = start(e, code).unwrap();
        let spray = cc_spray {
            paths: 64,
            balancer: b as u8,
            reserved: 0,
            seed: draw(),
        };
        let mut d = cc_decision::default();
        assert_eq!(unsafe { cc_on_spray(e, h, 0, &spray, &mut d) }, cc_status::Ok);
        let rs = Spray {
            paths: Paths::new(64).unwrap(),
            balancer: b,
            seed: spray.seed,
        };
        assert_eq!(d.to_decision(), Ok(rust.spray(rh, Instant::ZERO, &rs).unwrap()));
        let (mut sent, mut cum) = (0u32, 0u32);
        for step in 0..2_000u64 {
            let now = step * 30_000;
            let t = Instant::from_nanos(now);
            let ev = (draw() % 64) as u16;
            let ece = (draw() % 4 == 0) as u8;
            let mut d = cc_decision::default();
            let (s, want) = match draw() % 5 {
                0 | 1 => {
                    sent = sent.wrapping_add(4096);
                    let s = unsafe { cc_on_sent(e, h, now, sent, 4096, 0, &mut d) };
                    (s, rust.sent(rh, t, Seq(sent), 4096, MessageEnd::More))
                }
                2 => {
                    cum = cum.wrapping_add(4096).min(sent);
                    let mut a = ack(ece, 0, ptr::null());
                    (a.cum_ack, a.snd_nxt, a.has_rtt, a.rtt_ns) = (cum, sent, 1, 10_000 + draw() % 40_000);
                    (a.has_ev, a.ev) = (1, ev);
                    let r = cc_core::event::Ack {
                        ev: Some(cc_core::path::Ev::new(ev)),
                        ..crate::convert::ack(&a, &[]).unwrap()
                    };
                    let s = unsafe { cc_on_ack(e, h, now, &a, &mut d) };
                    (s, rust.ack(rh, t, &r))
                }
                3 => {
                    let n = cc_nack {
                        seq: cum,
                        len: 4096,
                        cum_ack: cum,
                        snd_nxt: sent,
                        rtt_ns: 0,
                        has_rtt: 0,
                        last_hop: (draw() % 2) as u8,
                        ece,
                        has_ev: 1,
                        ev,
                        reserved: 0,
                    };
                    let r: Nack = crate::convert::nack(&n).unwrap();
                    let s = unsafe { cc_on_nack(e, h, now, &n, &mut d) };
                    (s, rust.nack(rh, t, &r))
                }
                _ => {
                    let s = unsafe { cc_on_loss(e, h, now, cum, 1, ev, &mut d) };
                    (s, rust.loss(rh, t, Seq(cum), Some(cc_core::path::Ev::new(ev))))
                }
            };
            match want {
                Ok(w) => {
                    assert_eq!(s, cc_status::Ok, "{b:?} step {step}");
                    assert_eq!(d.to_decision(), Ok(w), "{b:?} step {step}");
                }
                Err(err) => assert_eq!(s, cc_status::from(err), "{b:?} step {step}"),
            }
        }
        // The unsprayed flow's packets name no EV.
        let mut d = cc_decision::default();
        assert_eq!(unsafe { cc_on_sent(e, plain, 0, 0, 4096, 0, &mut d) }, cc_status::Ok);
        assert_eq!((d.has_ev, d.ev), (0, 0));
    }
}

/// Spraying's refusals through C: without path memory a spray is not
/// applicable; path memory is attached only to an engine without live
/// flows, and only if large and aligned enough; a spray out of range is
/// refused by name.
#[test]
fn sprays_and_path_memory_are_checked() {
    let mut mem = Mem::for_capacity(4);
    let e = engine(&mut mem, 4);
    let code = Algorithm::Nscc.code();
    let (h, _) = start(e, code).unwrap();
    let good = cc_spray {
        paths: 8,
        balancer: CC_BALANCER_MIXED,
        reserved: 0,
        seed: 1,
    };
    let mut d = cc_decision::default();
    assert_eq!(unsafe { cc_on_spray(e, h, 0, &good, &mut d) }, cc_status::NotApplicable);
    let mut paths = vec![0u128; cc_paths_size(4).div_ceil(16) + 1];
    let len = cc_paths_size(4);
    let at = paths.as_mut_ptr().cast::<core::ffi::c_void>();
    assert_eq!(unsafe { cc_engine_attach_paths(e, at, len) }, cc_status::FlowsLive);
    assert_eq!(unsafe { cc_engine_reset(e) }, cc_status::Ok);
    assert_eq!(unsafe { cc_engine_attach_paths(e, at, len - 1) }, cc_status::BadMemory);
    let odd = unsafe { at.cast::<u8>().add(1) }.cast();
    assert_eq!(unsafe { cc_engine_attach_paths(e, odd, len) }, cc_status::BadMemory);
    assert_eq!(
        unsafe { cc_engine_attach_paths(e, ptr::null_mut(), 4) },
        cc_status::NullPointer
    );
    assert_eq!(unsafe { cc_engine_attach_paths(e, at, len) }, cc_status::Ok);
    let (h, _) = start(e, code).unwrap();
    for (bad, want) in [
        (cc_spray { paths: 6, ..good }, cc_status::InvalidParams),
        (cc_spray { paths: 512, ..good }, cc_status::InvalidParams),
        (cc_spray { paths: 1, ..good }, cc_status::InvalidParams),
        (cc_spray { balancer: 4, ..good }, cc_status::BadEnum),
        (cc_spray { reserved: 1, ..good }, cc_status::BadEnum),
    ] {
        assert_eq!(unsafe { cc_on_spray(e, h, 0, &bad, &mut d) }, want, "{bad:?}");
    }
    assert_eq!(
        unsafe { cc_on_spray(e, h, 0, ptr::null(), &mut d) },
        cc_status::NullPointer
    );
    assert_eq!(
        unsafe { cc_on_spray(e, h + 1, 0, &good, &mut d) },
        cc_status::UnknownFlow
    );
    assert_eq!(unsafe { cc_on_spray(e, h, 0, &good, &mut d) }, cc_status::Ok);
    assert_eq!(unsafe { cc_on_sent(e, h, 0, 0, 100, 0, &mut d) }, cc_status::Ok);
    assert_eq!(d.has_ev, 1);
    assert!(d.ev < 8);
    // A bad flag on a loss, or bad path bytes on an ACK, is refused.
    assert_eq!(unsafe { cc_on_loss(e, h, 0, 0, 2, 0, &mut d) }, cc_status::BadEnum);
    for (has_ev, reserved) in [(2, 0), (0, 1), (1, 7)] {
        let a = cc_ack {
            has_ev,
            reserved,
            ..ack(0, 0, ptr::null())
        };
        assert_eq!(unsafe { cc_on_ack(e, h, 0, &a, &mut d) }, cc_status::BadEnum);
    }
    // Taken back, the paths' memory is no longer used.
    assert_eq!(unsafe { cc_engine_reset(e) }, cc_status::Ok);
    assert_eq!(unsafe { cc_engine_attach_paths(e, ptr::null_mut(), 0) }, cc_status::Ok);
    let (h, _) = start(e, code).unwrap();
    assert_eq!(unsafe { cc_on_spray(e, h, 0, &good, &mut d) }, cc_status::NotApplicable);
}
