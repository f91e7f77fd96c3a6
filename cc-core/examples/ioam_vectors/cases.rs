//! IOAM options that cc-core's encoder emits for the interop vectors; the
//! interop test builds the same ones and checks tshark's dissection.

use cc_core::wire::ioam::{bits, IoamNode, IoamOption, IoamRepr, OpaqueSnapshot, TraceFlags, TraceKind};

const SNAPSHOT: [u8; 8] = *b"opaque!!";

/// The encoder cases.
pub fn cases() -> Vec<IoamRepr<'static>> {
    let node = |k: u32| IoamNode {
        hop_limit: 60 + k as u8,
        node_id: 0x00AB_0000 + k,
        ingress_if: 100 + k as u16,
        egress_if: 200 + k as u16,
        ts_seconds: 1_700_000_000 + k,
        ts_fraction: 123_456_789 + k,
        transit_delay: 4_000 + k,
        ns_data: 0xDA7A_0000 + k,
        queue_depth: 50_000 + k,
        checksum_complement: 0xC5C5_0000 + k,
        hop_limit_wide: 30 + k as u8,
        node_id_wide: 0x0012_3456_789A_0000 + k as u64,
        ingress_if_wide: 0x0001_0000 + k,
        egress_if_wide: 0x0002_0000 + k,
        ns_data_wide: 0x0123_4567_89AB_0000 + k as u64,
        buffer_occupancy: 77_000 + k,
        snapshot: None,
    };
    let nodes = |n: u32, oss: bool| {
        let mut v = heapless::Vec::new();
        for k in (0..n).rev() {
            let mut x = node(k);
            if oss {
                x.snapshot = Some(OpaqueSnapshot {
                    schema_id: 0x0007_7700 + k,
                    data: &SNAPSHOT[..4 * (k as usize % 3)],
                });
            }
            v.push(x).unwrap();
        }
        v
    };
    vec![
        IoamRepr {
            kind: TraceKind::PreAllocated,
            namespace: 123,
            flags: TraceFlags {
                overflow: true,
                loopback: false,
                active: true,
            },
            remaining_len: 7,
            trace_type: 0xFFF000,
            nodes: nodes(2, false),
        },
        IoamRepr {
            kind: TraceKind::Incremental,
            namespace: 0xFFFE,
            flags: TraceFlags {
                overflow: false,
                loopback: true,
                active: false,
            },
            // tshark 4.0 reads an incremental trace's RemainingLen as free
            // space in the packet (RFC 9197 puts none there); 0 is read the
            // same way by both.
            remaining_len: 0,
            trace_type: bits::ID_WIDE | bits::IF_WIDE | bits::NS_WIDE | bits::TS_SEC | bits::TS_FRAC,
            nodes: nodes(3, false),
        },
        IoamRepr {
            kind: TraceKind::Incremental,
            namespace: 9,
            flags: TraceFlags::default(),
            remaining_len: 0,
            trace_type: bits::ID_SHORT | bits::QUEUE_DEPTH | bits::OSS,
            nodes: nodes(3, true),
        },
    ]
}

/// The option bytes the encoder writes for a case.
pub fn emit(r: &IoamRepr<'_>) -> Vec<u8> {
    let mut buf = vec![0u8; r.buffer_len()];
    r.emit(&mut IoamOption::new_unchecked(&mut buf[..]))
        .expect("case emits");
    buf
}
