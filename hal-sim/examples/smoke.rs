use hal_sim::run::world::World;
use hal_sim::setup::scenario;
use std::path::Path;

fn main() {
    let path = std::env::args().nth(1).expect("scenario path");
    let s = scenario::load(Path::new(&path)).unwrap_or_else(|e| panic!("{e}"));
    let mut w = World::new(&s, Path::new("."), &path).unwrap_or_else(|e| panic!("{e}"));
    let t0 = std::time::Instant::now();
    w.run(|_| {});
    let wall = t0.elapsed().as_secs_f64();
    println!(
        "sim end {:.1} us, wall {:.2} s, events {}, {:?}",
        w.now.as_ns_f64() / 1e3,
        wall,
        w.q.handled(),
        w.metrics.counters
    );
    for f in &w.flows {
        println!(
            "flow {} {}B fct {:?} us rtt {} ns retx {}",
            f.id,
            f.size,
            f.finish_ps.map(|t| (t - f.start_ps).as_ns_f64() / 1e3),
            f.base_rtt_ns,
            f.retransmits
        );
    }
    for p in &w.metrics.ports {
        let q: Vec<u64> = p.queue.clone();
        let max = q.iter().max().copied().unwrap_or(0);
        println!("{} max_q {} max_seen {}", p.name, max, p.max_queue);
    }
}
