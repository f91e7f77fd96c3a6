//! Every telemetry format and every HPCC++ placement carries the same
//! 2-to-1 workload: real bytes through cc-core's wire layer, integrity tags
//! checked, and the link near eta.

mod common;

use hal_sim::model::telemetry::TelFormat;
use hal_sim::output::report;
use hal_sim::setup::scenario::{HpccCfg, HpccMode, Scenario};

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
    check_flows(s, what);
    let u = s.link_utilization[0].utilization;
    assert!(u >= min_util, "{what}: utilization {u:.3}");
    eprintln!("{what}: utilization {u:.3}, queue p99 {} B", s.queue_bytes.p99);
}

/// Both flows finished, every notification taken.
fn check_flows(s: &report::Summary, what: &str) {
    assert_eq!(s.flows_finished, 2, "{what}");
    assert_eq!(s.counters.bad_telemetry, 0, "{what}");
    assert_eq!(s.counters.bad_tags, 0, "{what}");
    // Rx-HPCC feedback is sequenced: in-order delivery is never a replay.
    assert_eq!(s.counters.replayed_feedback, 0, "{what}");
    assert_eq!(s.counters.engine_refusals, 0, "{what}");
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

/// INT-MD and IOAM carry no link speed: on a fabric whose links differ
/// (400 Gb/s hosts, a 100 Gb/s link between the switches) each hop gets its
/// port's speed from the NIC's table. Read at the hosts' 400 Gb/s, the
/// bottleneck would look a quarter as loaded as it is and its queue grow.
#[test]
fn int_md_and_ioam_run_on_mixed_link_speeds() {
    use hal_sim::setup::scenario::*;
    for f in [TelFormat::Compact, TelFormat::IntMd, TelFormat::Ioam] {
        let mut s = two_to_one();
        s.topology = Topology {
            shape: Shape::Dumbbell {
                left: Count(2),
                right: Count(1),
                bottleneck_gbps: Some(Gbps(100)),
            },
            link_gbps: Gbps(400),
            link_delay_ns: DelayNs(1000),
            failed_links: 0,
        };
        s.workload.flows = Flows::List(
            (0..2)
                .map(|src| FlowSpec {
                    src,
                    dst: 2,
                    bytes: 20_000_000,
                    start_ns: 0,
                    dport: 100,
                })
                .collect(),
        );
        s.nic.telemetry = f;
        let r = run(&s);
        let what = format!("{f:?} on mixed speeds");
        check_flows(&r, &what);
        let u = r.link_utilization.iter().map(|p| p.utilization).fold(0.0, f64::max);
        assert!(u >= 0.85, "{what}: bottleneck utilization {u:.3}");
        assert!(
            r.queue_bytes.p99 < 30_000.0,
            "{what}: queue p99 {} B",
            r.queue_bytes.p99
        );
        eprintln!("{what}: utilization {u:.3}, queue p99 {} B", r.queue_bytes.p99);
    }
}
