//! The NIC model: Tx jitter keeps each link in order, and the pacer
//! re-times its gap when the engine changes the rate.

use std::path::Path;

use hal_sim::{report, scenario, world::World};

fn world(extra_nic: &str) -> World {
    let text = format!(
        r#"name = "nic"
stop_ms = 10.0
[topology]
kind = "incast"
senders = 4
link_gbps = 100
link_delay_ns = 1000
[nic]
{extra_nic}
[cc]
algorithm = "hpcc"
max_stage = 0
wai_mbps = 50
[workload]
kind = "incast"
bytes = 2000000
[metrics]
warmup_ns = 0
"#
    );
    let s = scenario::parse(&text, "nic.toml").unwrap_or_else(|e| panic!("{e}"));
    World::new(&s, Path::new("."), "nic.toml").unwrap()
}

fn run(extra_nic: &str) -> (World, report::Summary) {
    let mut w = world(extra_nic);
    w.run(|_| {});
    let s = report::summary(&w, "nic", 1.0);
    (w, s)
}

#[test]
fn tx_jitter_delays_packets_but_keeps_each_link_in_order() {
    // 2 µs of jitter is 24 packet times at 100 Gb/s: drawn independently,
    // arrivals would overtake each other, and the receiver would NACK and
    // the sender's engine refuse stale (reordered) telemetry.
    let (w, s) = run("tx_jitter_ns = 2000");
    assert_eq!(s.flows_finished, 4);
    assert_eq!(s.retransmits, 0);
    assert_eq!(s.counters.engine_refusals, 0);
    assert_eq!(s.counters.bad_telemetry, 0);
    // It did delay packets: a mean of 1 µs more per data packet makes
    // the measured RTT longer than without jitter, and changes the run.
    let (w0, s0) = run("");
    assert_eq!(s0.retransmits, 0);
    let end = |w: &World| w.flows.iter().filter_map(|f| f.finish_ps).max().unwrap();
    assert!(end(&w) > end(&w0), "jitter did not delay the last flow: {} vs {}", end(&w), end(&w0));
    // And a seed makes it repeatable.
    let (w2, _) = run("tx_jitter_ns = 2000");
    assert_eq!(end(&w), end(&w2));
}

#[test]
fn telemetry_buffers_are_reused_and_all_returned() {
    // Every data packet carries telemetry and its ACK echoes it: a buffer
    // per packet in flight, handed from data packet to ACK, freed at the
    // sender. 8 000 packets must not need 8 000 buffers, and none may be
    // left over.
    let (w, s) = run("telemetry = \"compact\"");
    assert!(s.data_packets >= 7_500, "{} data packets", s.data_packets);
    let (allocated, free) = w.pkts.tel_buffers();
    assert!(allocated < 400, "{allocated} buffers for {} packets", s.data_packets);
    assert_eq!(free, allocated, "buffers not returned");
}

#[test]
fn a_bad_jitter_is_refused_with_its_field() {
    let good = r#"name = "x"
stop_ms = 1.0
[topology]
kind = "incast"
senders = 2
link_gbps = 100
link_delay_ns = 1000
[nic]
tx_jitter_ns = 50
[cc]
algorithm = "hpcc"
[workload]
kind = "incast"
bytes = 1000
"#;
    assert!(scenario::parse(good, "x.toml").is_ok());
    let e = scenario::parse(&good.replace("= 50", "= -5"), "x.toml").unwrap_err().to_string();
    assert!(e.contains("x.toml:9") && e.contains("nic.tx_jitter_ns"), "{e}");
}
