//! IOAM against implementations no one here wrote (vectors made by
//! interop/ioam/generate.py; provenance inside interop/ioam/vectors.json):
//!
//! - "kernel" vectors: IPv6 packets whose IOAM node data the Linux kernel's
//!   IOAM transit code wrote at two hops, dissected by tshark. cc-core's
//!   decoder must read every field as tshark does.
//! - "cc-core encoder" vectors: options cc-core emitted, dissected by
//!   tshark. The bytes must still be what the encoder emits today, and
//!   tshark's reading must match what the encoder meant.

#[path = "../examples/ioam_vectors/cases.rs"]
mod cases;

use cc_core::wire::ioam::{bits, find_in_hop_by_hop, IoamOption, IoamRepr, TraceKind};
use cc_core::wire::{PortSpeedStack, TxCounter, UnitsProfile};
use serde_json::Value;

const VECTORS: &str = include_str!("../../interop/ioam/vectors.json");

fn num(s: &str) -> u64 {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).unwrap(),
        None => s.parse().unwrap(),
    }
}

fn field<'a>(t: &'a Value, name: &str) -> Vec<&'a str> {
    t[format!("ipv6.opt.ioam.trace.{name}")]
        .as_array()
        .map(|a| a.iter().map(|v| v.as_str().unwrap()).collect())
        .unwrap_or_default()
}

fn nums(t: &Value, name: &str) -> Vec<u64> {
    field(t, name).into_iter().map(num).collect()
}

fn hex_bytes(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// Checks cc-core's parse of `r` against tshark's fields `t`.
fn compare(r: &IoamRepr<'_>, t: &Value, what: &str) {
    assert_eq!(nums(t, "ns"), [r.namespace as u64], "{what}: namespace");
    assert_eq!(nums(t, "remlen"), [r.remaining_len as u64], "{what}: RemainingLen");
    assert_eq!(nums(t, "type"), [r.trace_type as u64], "{what}: trace type");
    assert_eq!(nums(t, "flag.o"), [r.flags.overflow as u64], "{what}: O");
    assert_eq!(nums(t, "flag.l"), [r.flags.loopback as u64], "{what}: L");
    assert_eq!(nums(t, "flag.a"), [r.flags.active as u64], "{what}: A");
    let kind = t["ipv6.opt.ioam.opt_type"][0].as_str().unwrap();
    assert_eq!(
        num(kind),
        if r.kind == TraceKind::PreAllocated { 0 } else { 1 },
        "{what}: option type"
    );
    let tt = r.trace_type;
    let has = |b: u32| tt & b != 0;
    let sel = |b: u32, f: &dyn Fn(&cc_core::wire::ioam::IoamNode<'_>) -> u64| -> Vec<u64> {
        if has(b) {
            r.nodes.iter().map(f).collect()
        } else {
            vec![]
        }
    };
    // tshark lists the hop limits of the short and the wide node id, per node.
    let mut hlim = vec![];
    for n in &r.nodes {
        if has(bits::ID_SHORT) {
            hlim.push(n.hop_limit as u64);
        }
        if has(bits::ID_WIDE) {
            hlim.push(n.hop_limit_wide as u64);
        }
    }
    assert_eq!(nums(t, "node.hlim"), hlim, "{what}: hop limits");
    assert_eq!(
        nums(t, "node.id"),
        sel(bits::ID_SHORT, &|n| n.node_id as u64),
        "{what}: node ids"
    );
    assert_eq!(
        nums(t, "node.iif"),
        sel(bits::IF_SHORT, &|n| n.ingress_if as u64),
        "{what}: ingress"
    );
    assert_eq!(
        nums(t, "node.eif"),
        sel(bits::IF_SHORT, &|n| n.egress_if as u64),
        "{what}: egress"
    );
    assert_eq!(
        nums(t, "node.tss"),
        sel(bits::TS_SEC, &|n| n.ts_seconds as u64),
        "{what}: seconds"
    );
    assert_eq!(
        nums(t, "node.tsf"),
        sel(bits::TS_FRAC, &|n| n.ts_fraction as u64),
        "{what}: fraction"
    );
    assert_eq!(
        nums(t, "node.trdelay"),
        sel(bits::TRANSIT_DELAY, &|n| n.transit_delay as u64),
        "{what}: transit delay"
    );
    assert_eq!(
        nums(t, "node.nsdata"),
        sel(bits::NS_SHORT, &|n| n.ns_data as u64),
        "{what}: namespace data"
    );
    assert_eq!(
        nums(t, "node.qdepth"),
        sel(bits::QUEUE_DEPTH, &|n| n.queue_depth as u64),
        "{what}: queue depth"
    );
    assert_eq!(
        nums(t, "node.csum"),
        sel(bits::CHECKSUM, &|n| n.checksum_complement as u64),
        "{what}: checksum"
    );
    assert_eq!(
        nums(t, "node.id_wide"),
        sel(bits::ID_WIDE, &|n| n.node_id_wide),
        "{what}: wide ids"
    );
    assert_eq!(
        nums(t, "node.iif_wide"),
        sel(bits::IF_WIDE, &|n| n.ingress_if_wide as u64),
        "{what}: wide ingress"
    );
    assert_eq!(
        nums(t, "node.eif_wide"),
        sel(bits::IF_WIDE, &|n| n.egress_if_wide as u64),
        "{what}: wide egress"
    );
    assert_eq!(
        nums(t, "node.nsdata_wide"),
        sel(bits::NS_WIDE, &|n| n.ns_data_wide),
        "{what}: wide namespace data"
    );
    assert_eq!(
        nums(t, "node.bufoccup"),
        sel(bits::BUFFER, &|n| n.buffer_occupancy as u64),
        "{what}: buffer"
    );
    let snaps: Vec<_> = r.nodes.iter().filter_map(|n| n.snapshot).collect();
    assert_eq!(
        nums(t, "node.oss.len"),
        snaps.iter().map(|s| s.data.len() as u64 / 4).collect::<Vec<_>>(),
        "{what}: OSS length"
    );
    assert_eq!(
        nums(t, "node.oss.scid"),
        snaps.iter().map(|s| s.schema_id as u64).collect::<Vec<_>>(),
        "{what}: OSS schema"
    );
    let data: Vec<Vec<u8>> = field(t, "node.oss.data").into_iter().map(hex_bytes).collect();
    let ours: Vec<Vec<u8>> = snaps
        .iter()
        .filter(|s| !s.data.is_empty())
        .map(|s| s.data.to_vec())
        .collect();
    assert_eq!(data, ours, "{what}: OSS data");
}

fn option_of(packet: &[u8]) -> &[u8] {
    assert_eq!(packet[0] >> 4, 6, "IPv6");
    assert_eq!(packet[6], 0, "hop-by-hop header first");
    find_in_hop_by_hop(&packet[40..]).expect("an IOAM option")
}

#[test]
fn vectors_name_their_provenance() {
    let doc: Value = serde_json::from_str(VECTORS).unwrap();
    let p = &doc["produced_by"];
    assert!(p["node_data"].as_str().unwrap().contains("Linux"));
    assert!(p["dissector"].as_str().unwrap().contains("TShark"));
    let sources: Vec<&str> = doc["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["source"].as_str().unwrap())
        .collect();
    assert!(sources.iter().filter(|s| **s == "kernel").count() >= 3);
    assert!(sources.iter().filter(|s| **s == "cc-core encoder").count() >= 3);
}

#[test]
fn decoder_reads_kernel_written_traces_as_tshark_does() {
    let doc: Value = serde_json::from_str(VECTORS).unwrap();
    for v in doc["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["source"] == "kernel")
    {
        let what = v["description"].as_str().unwrap();
        let packet = hex_bytes(v["packet"].as_str().unwrap());
        let opt = IoamOption::new_checked(option_of(&packet)).unwrap_or_else(|e| panic!("{what}: {e}"));
        let r = IoamRepr::parse(&opt).unwrap();
        assert_eq!(r.nodes.len(), 2, "{what}: two transit nodes");
        compare(&r, &v["tshark"], what);
        // Newest first on the wire: the second router's node leads.
        if r.trace_type & bits::ID_SHORT != 0 {
            assert_eq!((r.nodes[0].node_id, r.nodes[1].node_id), (0xA00002, 0xA00001), "{what}");
        }
        // And the engine's samples come out first hop first.
        if r.trace_type & bits::NS_SHORT != 0 && r.trace_type & bits::TS_FRAC != 0 && r.trace_type & bits::TS_SEC != 0 {
            let mut profile = UnitsProfile::default_100g();
            profile.tx_counter = TxCounter::Present { unit_bytes: 1 };
            let s = r.hop_samples(&profile).unwrap();
            assert_eq!((s[0].tx, s[1].tx), (0xDA7A_0001, 0xDA7A_0002), "{what}");
        }
    }
}

#[test]
fn encoder_output_is_dissected_by_tshark_as_intended() {
    let doc: Value = serde_json::from_str(VECTORS).unwrap();
    let enc: Vec<&Value> = doc["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["source"] == "cc-core encoder")
        .collect();
    let ours = cases::cases();
    assert_eq!(enc.len(), ours.len());
    for (v, r) in enc.iter().zip(&ours) {
        let what = v["description"].as_str().unwrap();
        let packet = hex_bytes(v["packet"].as_str().unwrap());
        assert_eq!(
            option_of(&packet),
            &cases::emit(r)[..],
            "{what}: the vector is today's encoder output"
        );
        compare(r, &v["tshark"], what);
    }
}
