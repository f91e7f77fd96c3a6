//! The switch model's options, seen from the flows they change.

mod common;

use hal_sim::setup::scenario::*;

/// Host 0 sends to host 1 while hosts 1 and 2 fill the port towards host 0
/// with DCTCP data queued near K = 300 KB (24 µs at 100 Gb/s). Flow 0's
/// ACKs leave through that port: in one FIFO they wait behind the queue and
/// its window of a BDP (about 4 µs of RTT) stalls; ahead of the data, as
/// `switch.control_priority` puts them, they do not wait. Measured: flow 0
/// ends at 0.45 ms with its ACKs ahead (0.40 ms of wire time), at 0.87 ms
/// in one FIFO.
fn acks_through_a_queue(priority: bool) -> f64 {
    let spec = |src, dst, bytes| FlowSpec {
        src,
        dst,
        bytes,
        start_ns: 0,
        dport: 100,
    };
    let mut s = Scenario::new(
        "test",
        20.0,
        Topology {
            shape: Shape::Star { hosts: Count(3) },
            link_gbps: Gbps(100),
            link_delay_ns: DelayNs(1000),
        },
        CcCfg {
            algorithm: Cc::registered(cc_core::Algorithm::Dctcp).unwrap(),
            base_rtt_ns: None,
        },
        Workload {
            flows: Flows::List(vec![
                spec(0, 1, 5_000_000),
                spec(1, 0, 20_000_000),
                spec(2, 0, 20_000_000),
            ]),
            on_off: None,
        },
    );
    s.nic.telemetry = hal_sim::model::telemetry::TelFormat::None;
    s.switch.ecn_kmin_bytes = Some(Bytes(300_000));
    s.switch.ecn_kmax_bytes = Some(Bytes(300_000));
    s.switch.ecn_pmax = Some(Prob(1.0));
    s.switch.control_priority = Some(priority);
    let (w, sum) = common::run(&s);
    assert_eq!(sum.flows_finished, 3);
    w.flows[0].finish_ps.unwrap().as_ns_f64()
}

#[test]
fn control_priority_lets_acks_skip_the_data_queue() {
    let fifo = acks_through_a_queue(false);
    let ahead = acks_through_a_queue(true);
    // 5 MB at 100 Gb/s is 0.4 ms on the wire.
    assert!(ahead < 0.6e6, "with ACKs ahead of data: {ahead} ns");
    assert!(fifo > 1.5 * ahead, "in one FIFO: {fifo} ns, ahead: {ahead} ns");
}
