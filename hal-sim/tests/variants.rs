//! Every telemetry format and every HPCC++ placement carries the same
//! 2-to-1 workload: real bytes through cc-core's wire layer, integrity tags
//! checked, and the link near eta.

mod common;

use hal_sim::report;
use hal_sim::scenario::{HpccCfg, HpccMode, Scenario};
use hal_sim::telemetry::TelFormat;

fn two_to_one() -> Scenario {
    common::incast(2, 20_000_000, 10.0, 200_000)
}

fn run(s: &Scenario) -> report::Summary {
    common::run(s).1
}

fn with_hpcc(change: impl FnOnce(&mut HpccCfg)) -> Scenario {
    let mut s = two_to_one();
    change(common::hpcc(&mut s));
    s
}

fn check(s: &report::Summary, what: &str, min_util: f64) {
    assert_eq!(s.flows_finished, 2, "{what}");
    assert_eq!(s.counters.bad_telemetry, 0, "{what}");
    assert_eq!(s.counters.bad_tags, 0, "{what}");
    // Rx-HPCC feedback is sequenced: in-order delivery is never a replay.
    assert_eq!(s.counters.replayed_feedback, 0, "{what}");
    assert_eq!(s.counters.engine_refusals, 0, "{what}");
    let u = s.link_utilization[0].utilization;
    assert!(u >= min_util, "{what}: utilization {u:.3}");
    eprintln!("{what}: utilization {u:.3}, queue p99 {} B", s.queue_bytes.p99);
}

#[test]
fn every_telemetry_format_drives_hpcc() {
    for f in [TelFormat::Compact, TelFormat::IntMd, TelFormat::Ioam, TelFormat::Ifa] {
        let mut s = two_to_one();
        s.nic.telemetry = f;
        check(&run(&s), &format!("{f:?}"), 0.9);
    }
}

#[test]
fn rx_hpcc_and_probe_mode_drive_hpcc() {
    check(&run(&with_hpcc(|h| h.mode = HpccMode::RxHpcc)), "rx_hpcc", 0.85);
    check(&run(&with_hpcc(|h| h.mode = HpccMode::Probe)), "probe", 0.85);
    check(&run(&with_hpcc(|h| h.sojourn = true)), "sojourn", 0.85);
}
