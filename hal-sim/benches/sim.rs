//! Simulator speed beside its targets:
//!
//! ```text
//! cargo bench -p hal-sim --bench sim
//! ```
//!
//! Runs two scenarios and reports, for each, data packets per CPU-second
//! (the loop's own CPU time), the best of its runs:
//!
//! - scenarios/hpcc-2to1.toml: 2-to-1 at 100 Gb/s, 2 × 200 MB, 1000-byte
//!   payloads, HPCC++ with compact telemetry on every packet and SipHash
//!   tags on every ACK (three runs);
//! - scenarios/websearch-leafspine320.toml: 320 hosts (20 leaves × 16 at
//!   100 Gb/s, 4 spines at 400 Gb/s), WebSearch flows at 30 % load, HPCC++
//!   as the SIGCOMM'19 evaluation ran it (two runs). Its target is ten
//!   times the HPCC reference simulator (ns-3) on the same work;
//! - scenarios/fattree320-fbhadoop.toml with 99 000 flows instead of
//!   20 000 (about 11 ms of arrivals, as the reference simulator's FB_Hadoop
//!   30 % flow list): the HPCC paper's 3-tier fat-tree (one run, about 40 s).
//!   Its targets: ten times the reference simulator's 31 k data packets per
//!   second, and a peak resident memory below its 340 MB. It runs last, so
//!   the benchmark's peak is its peak.

use std::path::Path;

use hal_sim::run::cpu::Stopwatch;

struct Figures {
    name: String,
    packets_per_s: f64,
    events_per_packet: f64,
    cpu_s: f64,
    packets: u64,
}

fn measure(file: &str, runs: u32) -> Figures {
    measure_with(file, runs, |_| {})
}

fn measure_with(file: &str, runs: u32, change: impl FnOnce(&mut hal_sim::setup::scenario::Scenario)) -> Figures {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios").join(file);
    let mut s = hal_sim::setup::scenario::load(&path).expect("scenario loads");
    change(&mut s);
    let dir = path.parent().expect("has a parent");
    let mut best = f64::MAX;
    let mut packets = 0;
    let mut events = 0;
    for _ in 0..runs {
        let mut w = hal_sim::run::world::World::new(&s, dir, file).expect("world builds");
        let t0 = Stopwatch::start();
        w.run(|_| {});
        best = best.min(t0.cpu_s());
        packets = w.metrics.counters.data_packets;
        events = w.q.handled();
    }
    Figures {
        name: s.name,
        packets_per_s: packets as f64 / best,
        events_per_packet: events as f64 / packets as f64,
        cpu_s: best,
        packets,
    }
}

fn main() {
    use hal_sim::setup::scenario::{FlowCount, Flows, TimeMs};
    let rows = [
        (measure("hpcc-2to1.toml", 3), 2.6),
        (measure("websearch-leafspine320.toml", 2), 0.36),
        (
            measure_with("fattree320-fbhadoop.toml", 1, |s| {
                if let Flows::Cdf { count, .. } = &mut s.workload.flows {
                    *count = FlowCount(99_000);
                }
                s.stop_ms = TimeMs(200.0);
                s.name = "fattree320-fbhadoop-99k".into();
            }),
            0.31,
        ),
    ];
    println!(
        "hal-sim benchmark (best of the runs; {} build{})",
        hal_sim::run::cpu::BUILD,
        if hal_sim::run::cpu::BUILD == "plain" {
            ", ./scripts/pgo.sh bench for the profile-guided one"
        } else {
            ""
        }
    );
    println!();
    println!(
        "{:<28} {:>16} {:>10} {:>12} {:>10}",
        "", "data packets/s", "target", "events/pkt", "CPU s"
    );
    let mut missed = 0;
    for (f, target) in &rows {
        let ok = f.packets_per_s >= target * 1e6;
        missed += usize::from(!ok);
        println!(
            "{:<28} {:>14.2} M {:>8.2} M {:>12.2} {:>10.3}  {} ({} data packets)",
            f.name,
            f.packets_per_s / 1e6,
            target,
            f.events_per_packet,
            f.cpu_s,
            if ok { "ok" } else { "NOT met" },
            f.packets
        );
    }
    if let Some(mib) = hal_sim::run::cpu::peak_rss_mib() {
        // 340 MB (the reference simulator's peak on the 99 k-flow run).
        let ok = mib * 1.048_576 < 340.0;
        missed += usize::from(!ok);
        println!(
            "peak resident memory: {mib:.0} MiB, target < 340 MB (324 MiB): {}",
            if ok { "ok" } else { "NOT met" }
        );
    }
    println!();
    println!("(for scale: ns-3 ≈ 0.26 M/s and htsim ≈ 0.9 M/s on a 2-to-1; {missed} target(s) not met)");
}
