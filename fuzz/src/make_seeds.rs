//! Writes the seed corpora under `fuzz/seeds/<target>/` from known-good
//! encodings made by cc-core's own emitters:
//!
//! ```text
//! cd fuzz && cargo run --bin make_seeds
//! ```

use std::fs;
use std::path::Path;

use cc_core::codec::{encode_answer, encode_config, encode_event, MAX_FRAME};
use cc_core::prelude::*;
use cc_core::wire::compact::{CompactHop, CompactRepr, CompactStack, SpeedCode};
use cc_core::wire::ifa::{self, IfaHop, IfaPacket, IfaRepr};
use cc_core::wire::int_md::{instr, IntHop, IntMdPacket, IntMdRepr};
use cc_core::wire::ioam::{bits, IoamNode, IoamOption, IoamRepr, OpaqueSnapshot, TraceFlags, TraceKind};
use cc_core::wire::pint::PintWidth;

fn write(target: &str, name: &str, bytes: &[u8]) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds").join(target);
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join(name), bytes).unwrap();
}

fn compact() {
    let mut hops = heapless::Vec::new();
    for (i, s) in [SpeedCode::G100, SpeedCode::G400, SpeedCode::G100]
        .into_iter()
        .enumerate()
    {
        hops.push(CompactHop {
            speed: s,
            ts: 1000 * i as u32,
            tx: 77 * i as u32,
            qlen: 5 * i as u32,
        })
        .unwrap();
    }
    let r = CompactRepr { hops };
    let mut buf = vec![0u8; r.buffer_len()];
    r.emit(&mut CompactStack::new_unchecked(&mut buf[..])).unwrap();
    write("compact", "three-hops", &buf);
}

/// Codes of both widths, each from the encoder at a utilization, then
/// that utilization (bytes 2-9, shifted up 20 bits) and a draw (the last
/// two), which the target hands the encoder.
fn pint() {
    use cc_core::units::Utilization;
    use cc_core::wire::pint::{PintCode, PintRepr, PintWidth};
    for (name, width, u) in [
        ("one-byte-full", PintWidth::One, Utilization::ONE),
        ("two-bytes-95", PintWidth::Two, Utilization::from_bits(15_938_355)),
        ("two-bytes-queue", PintWidth::Two, Utilization::from_bits(40 << 24)),
    ] {
        let mut buf = vec![0u8; 12];
        let repr = PintRepr {
            width,
            code: width.encode(u, 0x8000),
        };
        repr.emit(&mut PintCode::new_unchecked(&mut buf[..], width)).unwrap();
        buf[2..10].copy_from_slice(&(u.to_bits() << 20).to_le_bytes());
        buf[10..12].copy_from_slice(&0x8000u16.to_le_bytes());
        write("pint", name, &buf);
    }
}

fn int_md() {
    // (name, bitmap, domain-specific bytes per hop)
    for (name, bitmap, ds) in [
        (
            "hpcc-fields",
            instr::NODE_ID | instr::L1_PORTS | instr::HOP_LATENCY | instr::QUEUE | instr::EGRESS_TS | instr::TX_UTIL,
            0,
        ),
        ("all-fields", 0xFF81, 0),
        (
            "reserved-bits-and-domain-metadata",
            instr::NODE_ID | instr::EGRESS_TS | instr::TX_UTIL | instr::reserved(2) | instr::CHECKSUM,
            8,
        ),
    ] {
        let mut hops = heapless::Vec::new();
        for k in 0..3u32 {
            hops.push(IntHop {
                node_id: k,
                egress_ts: 1000 + k as u64,
                tx_util: 5000,
                queue_occupancy: 100,
                reserved: if bitmap & instr::reserved(2) != 0 {
                    [0, 0, 0xFFFF_FFFF, 0, 0, 0]
                } else {
                    [0; 6]
                },
                domain_specific: (0..ds).map(|i| i as u8).collect(),
                ..Default::default()
            })
            .unwrap();
        }
        let r = IntMdRepr {
            npt: 1,
            npt_field: 17,
            flags: 0,
            hop_ml: IntMdRepr::hop_ml_for(bitmap) + ds as u8 / 4,
            remaining_hops: 4,
            instructions: bitmap,
            domain_id: 0,
            ds_instructions: 0,
            ds_flags: 0,
            hops,
        };
        let mut buf = vec![0u8; r.buffer_len()];
        r.emit(&mut IntMdPacket::new_unchecked(&mut buf[..])).unwrap();
        write("int_md", name, &buf);
    }
    // The INT v2.0 specification's example over TCP: shim length 7 for a
    // 12-byte metadata header and two hops of switch id + queue occupancy.
    let spec_tcp: [u8; 32] = [
        0x10, 0x07, 0x00, 0x5C, 0x20, 0x00, 0x02, 0x06, 0x90, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, //
        0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x01, 0x2C, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x64,
    ];
    write("int_md", "spec-example-tcp", &spec_tcp);
}

fn ioam() {
    let data = [9u8; 8];
    for (name, kind, tt, oss) in [
        (
            "prealloc",
            TraceKind::PreAllocated,
            bits::ID_SHORT | bits::IF_SHORT | bits::TS_SEC | bits::TS_FRAC | bits::NS_SHORT | bits::QUEUE_DEPTH,
            false,
        ),
        (
            "incremental-wide-oss",
            TraceKind::Incremental,
            bits::ID_WIDE | bits::IF_WIDE | bits::NS_WIDE | bits::BUFFER | (1 << 5) | bits::OSS,
            true,
        ),
    ] {
        let mut nodes = heapless::Vec::new();
        for k in 0..2u32 {
            let snapshot = oss.then_some(OpaqueSnapshot {
                schema_id: 7,
                data: &data[..4 * k as usize],
            });
            nodes
                .push(IoamNode {
                    node_id: k,
                    ts_seconds: 1,
                    ts_fraction: k,
                    ns_data: k,
                    snapshot,
                    ..Default::default()
                })
                .unwrap();
        }
        let r = IoamRepr {
            kind,
            namespace: 1,
            flags: TraceFlags {
                overflow: false,
                loopback: true,
                active: false,
            },
            remaining_len: if kind == TraceKind::PreAllocated { 3 } else { 0 },
            trace_type: tt,
            nodes,
        };
        let mut buf = vec![0u8; r.buffer_len()];
        r.emit(&mut IoamOption::new_unchecked(&mut buf[..])).unwrap();
        write("ioam", name, &buf);
    }
}

fn ifa() {
    let mut hops = heapless::Vec::new();
    for k in 0..2u32 {
        hops.push(IfaHop {
            lns: 1,
            device_id: k,
            speed: 4,
            rx_seconds: 1,
            rx_nanoseconds: k,
            queue_bytes: 100,
            tail: k,
            ..Default::default()
        })
        .unwrap();
    }
    // The packet's own L4 header stays between the IFA header and the
    // metadata: UDP (8 bytes), TCP without and with options.
    let udp: &[u8] = &[0xC0, 0x00, 0x12, 0xB7, 0x00, 0x40, 0x00, 0x00];
    let tcp = vec![
        0xC0, 0x00, 0x00, 0x50, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x10, 0xFF, 0xFF, 0, 0, 0, 0,
    ];
    let mut tcp_opts = tcp.clone();
    tcp_opts[12] = 0x70;
    tcp_opts.extend_from_slice(&[1; 8]);
    for (name, next_header, l4) in [
        ("two-hops-udp", ifa::UDP, udp),
        ("two-hops-tcp", ifa::TCP, &tcp[..]),
        ("two-hops-tcp-options", ifa::TCP, &tcp_opts[..]),
    ] {
        let r = IfaRepr {
            gns: 0,
            next_header,
            flags: ifa::flags::INBAND,
            max_length: 32,
            l4: ifa::L4Header::from_slice(l4).unwrap(),
            request_vector: 0,
            action_vector: 0,
            hop_limit: 8,
            hops: hops.clone(),
        };
        let mut buf = vec![0u8; r.buffer_len()];
        r.emit(&mut IfaPacket::new_unchecked(&mut buf[..])).unwrap();
        // The target reads a u32 profile table first (2 bits per LNS; 0b10 = TxBytes).
        let mut seed = 0xAAAA_AAAAu32.to_le_bytes().to_vec();
        seed.extend_from_slice(&buf);
        write("ifa", name, &seed);
    }
}

fn codec() {
    let hop = HopSample {
        ts: 1,
        tx: 2,
        qlen_bytes: 3,
        sojourn_ns: 4,
        bandwidth: LinkSpeed::from_gbps(100),
        id: 5,
        widths: CounterWidths::FULL,
        tx_utilization: TxUtilization::NONE,
    };
    let hops = [hop, hop];
    let params = FlowParams {
        algorithm: Algorithm::Hpcc,
        base_rtt: BaseRtt::from_nanos(12_000).unwrap(),
        line_rate: LinkSpeed::from_gbps(100),
        start_seq: Seq(0),
    };
    let mut stream = Vec::new();
    let mut buf = [0u8; MAX_FRAME];
    for kind in [
        EventKind::Start(params),
        EventKind::Ack(Ack {
            ece: EcnEcho::Marked,
            telemetry: &hops,
            ..Ack::new(Seq(1), Seq(2))
        }),
        EventKind::Timer,
        // A sprayed flow: its spray, an ACK and a NACK that name their
        // packets' paths, a timeout of one.
        EventKind::Spray(cc_core::path::Spray {
            paths: cc_core::path::Paths::new(64).unwrap(),
            balancer: cc_core::path::Balancer::Mixed,
            seed: 13,
        }),
        EventKind::Ack(Ack {
            rtt_ns: Some(9_000),
            ev: Some(cc_core::path::Ev::new(0x1F)),
            ..Ack::new(Seq(4_150), Seq(8_300))
        }),
        EventKind::Nack(cc_core::event::Nack {
            last_hop: true,
            ev: Some(cc_core::path::Ev::new(7)),
            ..cc_core::event::Nack::new(Seq(4_150), 4_150, Seq(4_150), Seq(8_300))
        }),
        EventKind::Loss {
            first_lost: Seq(8_300),
            ev: Some(cc_core::path::Ev::new(3)),
        },
    ] {
        let n = encode_event(Instant::from_nanos(5), &Event { flow: FlowId(1), kind }, &mut buf).unwrap();
        stream.extend_from_slice(&buf[..n]);
    }
    let d = Decision {
        window: Window::from_bytes(1000),
        pacing: Pacing {
            bytes: Window::from_bytes(1000),
            per: BaseRtt::from_nanos(8_000).unwrap(),
        },
        ecn: Ecn::Ect,
        timer: TimerRequest::Cancel,
        request: Request::Probe { id: ProbeId(3) },
        ev: Some(cc_core::path::Ev::new(42)),
    };
    let n = encode_answer(FlowId(1), &Ok(d), &mut buf).unwrap();
    stream.extend_from_slice(&buf[..n]);
    let n = encode_answer(FlowId(1), &Err(Error::StaleTelemetry), &mut buf).unwrap();
    stream.extend_from_slice(&buf[..n]);
    write("codec", "stream", &stream);
    // One stream per algorithm of the engine's registry: the default
    // configuration frame, the flow's start, an ACK with an RTT sample and
    // the NICs' timestamps, hop count and Rx buffer level (the delay-based
    // algorithms' input; t2, t3 on another counter, wrapped between t1
    // and t4), a two-byte PINT code (HPCC-PINT's) and a timer.
    for algorithm in Algorithm::ALL {
        let mut stream = Vec::new();
        let n = encode_config(&AnyConfig::DEFAULT, &mut buf).unwrap();
        stream.extend_from_slice(&buf[..n]);
        for kind in [
            EventKind::Start(FlowParams { algorithm, ..params }),
            EventKind::Ack(Ack {
                rtt_ns: Some(14_000),
                pint: Some(PintSample {
                    width: PintWidth::Two,
                    code: 627,
                }),
                nic: Some(NicSample {
                    t1: u32::MAX - 4_000,
                    t2: 77_000,
                    t3: 78_000,
                    t4: 10_000,
                    forward_hops: 5,
                    rx_buffer_level: 15,
                }),
                ..Ack::new(Seq(1000), Seq(8000))
            }),
            EventKind::Timer,
        ] {
            let n = encode_event(Instant::from_nanos(9), &Event { flow: FlowId(2), kind }, &mut buf).unwrap();
            stream.extend_from_slice(&buf[..n]);
        }
        write("codec", &format!("stream-{}", algorithm.name()), &stream);
    }
}

fn auth() {
    let mut seed = b"0123456789abcdef".to_vec();
    seed.extend_from_slice(&7u32.to_le_bytes());
    seed.extend_from_slice(&3u16.to_le_bytes());
    seed.extend_from_slice(b"window feedback");
    write("auth", "message", &seed);
}

fn engine() {
    // Arbitrary-encoded inputs; a few byte patterns to start from.
    write("engine", "zeros", &[0u8; 64]);
    write("engine", "ramp", &(0..=255u8).collect::<Vec<_>>());
}

/// The hns blocks: the LDCP drafts' defaults and a DCQCN block as the HPCC
/// evaluation's settings with a 256 µs increase timer, as the driver lays
/// them out (cc_core::hns), LDCP's block first.
fn hns() {
    let ldcp = [0u8, 0, 0, 0, 128, 3, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0];
    let dcqcn = [20u8, 0, 1, 8, 2, 0, 1, 0, 0xa0, 0x86, 0x01, 0, 8, 1, 4, 0];
    write("hns", "defaults", &[ldcp, dcqcn].concat());
}

/// The C API's hops (fuzz_targets/c_hops.rs): five hops of a 100 Gb/s
/// path, then the same path 10 us later, 125 kB more sent on each link,
/// the third hop's switch reporting its own utilization (one half).
fn c_hops() {
    let hop = |ts: u32, tx: u32, util: Option<u32>| {
        let mut b = Vec::new();
        for w in [ts, tx, 3000, 0, 100_000, 7] {
            b.extend_from_slice(&w.to_le_bytes());
        }
        b.extend_from_slice(&[32, 32, 1, 0, util.is_some() as u8, 0, 0, 0]);
        b.extend_from_slice(&util.unwrap_or(0).to_le_bytes());
        b
    };
    let mut seed = vec![5u8];
    for (ts, tx) in [(1_000u32, 1_000_000u32), (11_000, 1_125_000)] {
        for i in 0..5 {
            seed.extend(hop(ts, tx, (i == 2 && ts > 1_000).then_some(1 << 23)));
        }
    }
    write("c_hops", "two-acks", &seed);
}

/// hal-sim's input files as the project ships them, each behind the byte
/// that picks its parser in `sim_inputs` (the target's order).
fn sim_inputs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let files: [(u8, &str, &str); 14] = [
        (0, "scenario-minimal", ""),
        (0, "scenario-uet-perm16", "scenarios/uet-perm16.toml"),
        (0, "scenario-leafspine", "scenarios/websearch-leafspine.toml"),
        (0, "scenario-ccp", "scenarios/fattree320-websearch50-ccp.toml"),
        (1, "cm-incast", "scenarios/reference/uet-htsim/incast.cm"),
        (1, "cm-allreduce", "scenarios/allreduce-ring8.cm"),
        (
            2,
            "topo-fat-tree",
            "scenarios/reference/uet-htsim/fat_tree_1024_4os.topo",
        ),
        (
            2,
            "topo-leaf-spine",
            "scenarios/reference/uet-htsim/leaf_spine_1024_oversub.topo",
        ),
        (3, "ns3-topology", "scenarios/reference/twotoone-topology.txt"),
        (4, "ns3-flows", "scenarios/reference/twotoone20-flows.txt"),
        (5, "csv-flows", "scenarios/incast255-flows.csv"),
        (6, "cdf-websearch", "hal-sim/data/websearch_flow_sizes.csv"),
        (6, "cdf-fb-hadoop", "hal-sim/data/fb_hadoop_flow_sizes.csv"),
        (7, "args", ""),
    ];
    for (which, name, path) in files {
        let text = match (which, path) {
            (0, "") => hal_sim::setup::scenario::MINIMAL.to_string(),
            (7, _) => "-tm incast.cm -paths 128 -linkspeed 100000 -failed 1 -load_balancing_algo reps \
                       -sack_threshold 16384 -end 1000 -sender_cc_only -seed 13 -cwnd 50"
                .to_string(),
            _ => fs::read_to_string(root.join(path)).unwrap(),
        };
        let mut bytes = vec![which];
        bytes.extend_from_slice(text.as_bytes());
        write("sim_inputs", name, &bytes);
    }
}

fn main() {
    sim_inputs();
    compact();
    pint();
    int_md();
    ioam();
    ifa();
    codec();
    auth();
    engine();
    hns();
    c_hops();
    println!("seeds written under {}/seeds", env!("CARGO_MANIFEST_DIR"));
}
