//! Every telemetry format and every HPCC++ placement carries the same
//! 2-to-1 workload: real bytes through cc-core's wire layer, integrity tags
//! checked, and the link near eta.

use std::path::Path;

use hal_sim::{report, scenario, world::World};

fn run(extra_nic: &str, extra_cc: &str) -> report::Summary {
    let text = format!(
        r#"name = "variant"
stop_ms = 10.0
[topology]
kind = "incast"
senders = 2
link_gbps = 100
link_delay_ns = 1000
[nic]
{extra_nic}
[cc]
algorithm = "hpcc"
max_stage = 0
wai_mbps = 50
{extra_cc}
[workload]
kind = "incast"
bytes = 20000000
[metrics]
warmup_ns = 200000
"#
    );
    let s = scenario::parse(&text, "variant.toml").unwrap_or_else(|e| panic!("{e}"));
    let mut w = World::new(&s, Path::new("."), "variant.toml").unwrap();
    w.run(|_| {});
    report::summary(&w, "variant", 1.0)
}

fn check(s: &report::Summary, what: &str, min_util: f64) {
    assert_eq!(s.flows_finished, 2, "{what}");
    assert_eq!(s.counters.bad_telemetry, 0, "{what}");
    assert_eq!(s.counters.bad_tags, 0, "{what}");
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
