//! Simulator speed beside DESIGN §8's target:
//!
//! ```text
//! cargo bench -p hal-sim --bench sim
//! ```
//!
//! Runs scenarios/hpcc-2to1.toml (2-to-1 at 100 Gb/s, 2 × 200 MB, 1000-byte
//! payloads, HPCC++ with compact telemetry on every packet and SipHash tags
//! on every ACK) three times and reports the best, as data packets per
//! CPU-second (the loop is single-threaded: process CPU time ≈ wall time).

use std::path::Path;
use std::time::Instant;

fn main() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/hpcc-2to1.toml");
    let s = hal_sim::scenario::load(&path).expect("scenario loads");
    let dir = path.parent().expect("has a parent");
    let mut best = f64::MAX;
    let mut packets = 0;
    let mut events = 0;
    for _ in 0..3 {
        let mut w = hal_sim::world::World::new(&s, dir, "hpcc-2to1").expect("world builds");
        let t0 = Instant::now();
        w.run(|_| {});
        best = best.min(t0.elapsed().as_secs_f64());
        packets = w.metrics.counters.data_packets;
        events = w.q.handled();
    }
    let rate = packets as f64 / best;
    println!("hal-sim benchmark: {} (best of 3)", s.name);
    println!();
    println!("{:<46} {:>14} {:>12}", "", "measured", "target");
    println!(
        "{:<46} {:>14.2} {:>12}",
        "data packets per CPU-second (millions)",
        rate / 1e6,
        "≥ 2.60"
    );
    println!(
        "{:<46} {:>14.2} {:>12}",
        "events per data packet",
        events as f64 / packets as f64,
        "-"
    );
    println!(
        "{:<46} {:>14.3} {:>12}",
        "wall seconds for 400 000 data packets", best, "-"
    );
    println!();
    println!(
        "(DESIGN §8 for scale: ns-3 ≈ 0.26 M/s and htsim ≈ 0.9 M/s on a 2-to-1; {})",
        if rate >= 2.6e6 { "target met" } else { "target NOT met" }
    );
}
