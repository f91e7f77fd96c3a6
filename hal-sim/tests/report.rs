//! What the reports say a flow should have taken.

mod common;

use hal_sim::report;
use hal_sim::scenario::TimeNs;

/// The ideal FCT is the flow's own path's base RTT plus its bytes at the
/// bottleneck, whatever T the engine is given: a global `cc.base_rtt_ns`
/// changes the run, not the yardstick.
#[test]
fn the_ideal_fct_is_the_paths_whatever_t_the_engine_uses() {
    let s = common::incast(2, 100_000, 2.0, 0);
    let mut global = s.clone();
    global.cc.base_rtt_ns = Some(TimeNs(40_000));
    let (w, _) = common::run(&s);
    let (wg, _) = common::run(&global);
    let (a, b) = (report::flow_results(&w), report::flow_results(&wg));
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.ideal_fct_ns, y.ideal_fct_ns, "flow {}", x.id);
        assert_eq!(x.base_rtt_ns, y.base_rtt_ns, "flow {}", x.id);
        // The path: 2 links of 1 µs each way, plus serialization.
        assert!((4_000.0..4_400.0).contains(&x.base_rtt_ns), "{}", x.base_rtt_ns);
    }
    // And the engines did use the global T.
    assert_eq!(wg.flows[0].base_rtt_ns, 40_000);
}
