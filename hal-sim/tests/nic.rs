//! The NIC model: Tx jitter keeps each link in order, and the pacer
//! re-times its gap when the engine changes the rate.

mod common;

use hal_sim::setup::scenario::{self, DelayNs, NicCfg};
use hal_sim::{output::report, run::world::World};

fn run(nic: impl FnOnce(&mut NicCfg)) -> (World, report::Summary) {
    let mut s = common::incast(4, 2_000_000, 10.0, 0);
    nic(&mut s.nic);
    common::run(&s)
}

fn jitter(ns: u64) -> impl FnOnce(&mut NicCfg) {
    move |n| n.tx_jitter_ns = DelayNs(ns)
}

#[test]
fn tx_jitter_delays_packets_but_keeps_each_link_in_order() {
    // 2 µs of jitter is 24 packet times at 100 Gb/s: drawn independently,
    // arrivals would overtake each other, and the receiver would NACK and
    // the sender's engine refuse stale (reordered) telemetry.
    let (w, s) = run(jitter(2000));
    assert_eq!(s.flows_finished, 4);
    assert_eq!(s.retransmits, 0);
    assert_eq!(s.counters.engine_refusals, 0);
    assert_eq!(s.counters.bad_telemetry, 0);
    // It did delay packets: a mean of 1 µs more per data packet makes
    // the measured RTT longer than without jitter, and changes the run.
    let (w0, s0) = run(|_| {});
    assert_eq!(s0.retransmits, 0);
    let end = |w: &World| w.flows.iter().filter_map(|f| f.finish_ps).max().unwrap();
    assert!(
        end(&w) > end(&w0),
        "jitter did not delay the last flow: {} vs {}",
        end(&w),
        end(&w0)
    );
    // And a seed makes it repeatable.
    let (w2, _) = run(jitter(2000));
    assert_eq!(end(&w), end(&w2));
}

#[test]
fn telemetry_buffers_are_reused_and_all_returned() {
    // Every data packet carries telemetry and its ACK echoes it: a buffer
    // per packet in flight, handed from data packet to ACK, freed at the
    // sender. 8 000 packets must not need 8 000 buffers, and none may be
    // left over.
    let (w, s) = run(|n| n.telemetry = hal_sim::model::telemetry::TelFormat::Compact);
    assert!(s.data_packets >= 7_500, "{} data packets", s.data_packets);
    let (allocated, free) = w.pkts.tel_buffers();
    assert!(allocated < 400, "{allocated} buffers for {} packets", s.data_packets);
    assert_eq!(free, allocated, "buffers not returned");
}

#[test]
fn a_bad_jitter_is_refused_with_its_field() {
    let good = common::incast_text(2, 1000, 1.0, 0, "tx_jitter_ns = 50", "");
    assert!(scenario::parse(&good, "x.toml").is_ok());
    let e = scenario::parse(&good.replace("tx_jitter_ns = 50", "tx_jitter_ns = -5"), "x.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("x.toml:9") && e.contains("nic.tx_jitter_ns"), "{e}");
}
