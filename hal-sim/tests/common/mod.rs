//! The scenario the hal-sim integration tests build on: HPCC++ as the
//! SIGCOMM'19 simulator ran it, N senders into one receiver at 100 Gb/s
//! over 1 µs links, with room for extra `[nic]` and `[cc]` fields.
// Each test file compiles this module and uses only part of it.
#![allow(dead_code)]

use std::path::Path;

use hal_sim::{report, scenario, world::World};

/// Scenario text; `topology.link_gbps` is on line 6.
pub fn incast(senders: u32, bytes: u64, stop_ms: f64, warmup_ns: u64, nic: &str, cc: &str) -> String {
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

/// Runs scenario text to the end.
pub fn run(text: &str) -> (World, report::Summary) {
    let s = scenario::parse(text, "test.toml").unwrap_or_else(|e| panic!("{e}"));
    let mut w = World::new(&s, Path::new("."), "test.toml").unwrap();
    w.run(|_| {});
    let sum = report::summary(&w, "test", 1.0);
    (w, sum)
}
