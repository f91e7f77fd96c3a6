//! The scenario the hal-sim integration tests build on: HPCC++ as the
//! SIGCOMM'19 simulator ran it, N senders into one receiver at 100 Gb/s
//! over 1 µs links; as a value ([`incast`]) and, for the tests of the file
//! format, as text with room for extra `[nic]` and `[cc]` fields.
// Each test file compiles this module and uses only part of it.
#![allow(dead_code)]

use std::path::Path;

use hal_sim::setup::scenario::*;
use hal_sim::{output::report, run::world::World};

/// The scenario.
pub fn incast(senders: u32, bytes: u64, stop_ms: f64, warmup_ns: u64) -> Scenario {
    let cc = CcCfg {
        algorithm: Cc::Hpcc(HpccCfg {
            max_stage: Stage(0),
            additive_increase: Wai::RateMbps(50),
            ..HpccCfg::default()
        }),
        base_rtt_ns: None,
    };
    let mut s = Scenario::new(
        "test",
        stop_ms,
        Topology::incast(senders, 100, 1000),
        cc,
        Workload::incast(bytes),
    );
    s.metrics.warmup_ns = warmup_ns;
    s
}

/// A scenario's HPCC++ parameters.
pub fn hpcc(s: &mut Scenario) -> &mut HpccCfg {
    match &mut s.cc.algorithm {
        Cc::Hpcc(h) => h,
        other => panic!("not HPCC++: {other:?}"),
    }
}

/// The scenario as text; `topology.link_gbps` is on line 6.
pub fn incast_text(senders: u32, bytes: u64, stop_ms: f64, warmup_ns: u64, nic: &str, cc: &str) -> String {
    format!(
        r#"name = "test"
stop_ms = {stop_ms:?}
[topology]
kind = "incast"
senders = {senders}
link_gbps = 100
link_delay_ns = 1000
[nic]
{nic}
[cc]
algorithm = "hpcc"
max_stage = 0
wai_mbps = 50
{cc}
[workload]
kind = "incast"
bytes = {bytes}
[metrics]
warmup_ns = {warmup_ns}
"#
    )
}

/// Runs a scenario to the end.
pub fn run(s: &Scenario) -> (World, report::Summary) {
    let mut w = World::new(s, Path::new("."), "test").unwrap();
    w.run(|_| {});
    let sum = report::summary(&w, "test", &hal_sim::run::cpu::Stopwatch::start());
    (w, sum)
}
