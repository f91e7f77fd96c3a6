//! Every telemetry format and every HPCC++ placement carries the same
//! 2-to-1 workload: real bytes through cc-core's wire layer, integrity tags
//! checked, and the link near eta.

mod common;

use hal_sim::report;

fn run(extra_nic: &str, extra_cc: &str) -> report::Summary {
    common::run(&common::incast(2, 20_000_000, 10.0, 200_000, extra_nic, extra_cc)).1
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
    for f in ["compact", "int_md", "ioam", "ifa"] {
        check(&run(&format!("telemetry = \"{f}\""), ""), f, 0.9);
    }
}

#[test]
fn rx_hpcc_and_probe_mode_drive_hpcc() {
    check(&run("", "mode = \"rx_hpcc\""), "rx_hpcc", 0.85);
    check(&run("", "mode = \"probe\""), "probe", 0.85);
    check(&run("", "sojourn = true"), "sojourn", 0.85);
}
