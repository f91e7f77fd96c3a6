//! The C API's telemetry (cc-ffi), read where the caller keeps it: any
//! bytes as `cc_hop`s are refused for the first hop that breaks
//! cc_engine.h's rules, written out here field by field from the header
//! (widths of 1 ..= 32 bits, a unit of at least one byte,
//! `has_utilization` 0 or 1 with its reserved bytes zero, a reported
//! utilization of at most 2^24), or reach the engine; never a panic.
#![no_main]
use cc_ffi::*;
use libfuzzer_sys::fuzz_target;

/// What cc_engine.h's field comments make of the hops: the status of the
/// first rule broken, `None` if every hop keeps them.
fn header_rules(hops: &[cc_hop]) -> Option<cc_status> {
    if hops.len() > CC_MAX_HOPS as usize {
        return Some(cc_status::TooManyHops);
    }
    for h in hops {
        if !(1..=32).contains(&h.ts_bits) || !(1..=32).contains(&h.tx_bits) || h.tx_unit_bytes == 0 {
            return Some(cc_status::BadCounterWidths);
        }
        if h.has_utilization > 1 || h.reserved != [0; 3] {
            return Some(cc_status::BadEnum);
        }
        if h.has_utilization == 1 && h.utilization_q24 > 1 << 24 {
            return Some(cc_status::InvalidParams);
        }
    }
    None
}

fn hop(b: &[u8; 36]) -> cc_hop {
    let w = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    cc_hop {
        ts: w(0),
        tx: w(4),
        qlen_bytes: w(8),
        sojourn_ns: w(12),
        speed_mbps: w(16),
        id: w(20),
        ts_bits: b[24],
        tx_bits: b[25],
        tx_unit_bytes: u16::from_le_bytes([b[26], b[27]]),
        has_utilization: b[28],
        reserved: [b[29], b[30], b[31]],
        utilization_q24: w(32),
    }
}

/// Two ACKs' hops from `data`: its first byte is the first ACK's hop
/// count (mod 10, up to one more than the API takes), then 36 bytes a
/// hop (a `cc_hop` as C lays it out, little-endian); what follows, in
/// 36-byte hops, is the second ACK's.
fn acks(data: &[u8]) -> [Vec<cc_hop>; 2] {
    let (&n, rest) = data.split_first().unwrap_or((&0, &[]));
    let chunks: Vec<cc_hop> = rest.chunks_exact(36).map(|c| hop(c.try_into().unwrap())).collect();
    let first = (n as usize % 10).min(chunks.len());
    [chunks[..first].to_vec(), chunks[first..].to_vec()]
}

fuzz_target!(|data: &[u8]| {
    let mut mem = vec![0u128; cc_engine_size(1) / 16 + 1];
    let mut e = core::ptr::null_mut();
    let mut handle = 0;
    let mut d = cc_decision::default();
    let params = cc_flow_params {
        algorithm: CC_ALGORITHM_HPCC,
        reserved: [0; 3],
        base_rtt_ns: 8000,
        line_rate_mbps: 100_000,
        start_seq: 0,
    };
    // SAFETY: every pointer is to live memory of its type, `mem` to
    // enough aligned bytes for one flow.
    unsafe {
        let len = mem.len() * 16;
        assert_eq!(cc_engine_init(mem.as_mut_ptr().cast(), len, 1, &mut e), cc_status::Ok);
        assert_eq!(cc_flow_start(e, 0, &params, &mut handle, &mut d), cc_status::Ok);
    }
    // Two ACKs: the first records a path, the second measures against it.
    for (i, hops) in acks(data).iter().enumerate() {
        let ack = cc_ack {
            cum_ack: 1000 * (i as u32 + 1),
            snd_nxt: 4000,
            ece: 0,
            has_rtt: 0,
            has_nic: 0,
            rx_buffer_level: 0,
            rtt_ns: 0,
            t1_ns: 0,
            t2_ns: 0,
            t3_ns: 0,
            t4_ns: 0,
            hops: hops.as_ptr(),
            n_hops: hops.len() as u32,
            forward_hops: 0,
            pint_width: 0,
            pint_code: 0,
            ev: 0,
            has_ev: 0,
            reserved: 0,
        };
        // SAFETY: the engine, the ACK and its hops are valid.
        let got = unsafe { cc_on_ack(e, handle, 1000 * i as u64, &ack, &mut d) };
        match header_rules(hops) {
            Some(refused) => assert_eq!(got, refused),
            None => assert!(
                matches!(got, cc_status::Ok | cc_status::StaleTelemetry),
                "hops the header allows were refused: {got:?}"
            ),
        }
    }
});
