//! The NIC's congestion-control processor (`[nic.cc_processor]`), on the
//! shipped scenarios: a processor that costs nothing changes nothing; one
//! slower than its events drops what its queue cannot hold and counts
//! every event; `latest` loses no acknowledged byte; and with coalescing,
//! HPCC++ on the 2-to-1 holds the link and an empty queue on a quarter of
//! the cores its ACKs would need.

use std::path::{Path, PathBuf};

use cc_core::codec::{self, Frame};
use cc_core::event::EventKind;
use hal_sim::output::report::{ProcessorCounts, Summary};
use hal_sim::output::trace::Selection;
use hal_sim::run::world::World;
use hal_sim::setup::scenario::{CcProcessorCfg, CoalescingCfg, Cores, CostsCfg, Depth, Ghz, Ipc, Scenario};

fn scenario(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(format!("{name}.toml"))
}

fn load(name: &str) -> Scenario {
    hal_sim::setup::scenario::load(&scenario(name)).unwrap_or_else(|e| panic!("{e}"))
}

fn world(s: &Scenario, name: &str) -> World {
    World::new(s, scenario(name).parent().unwrap(), name).unwrap_or_else(|e| panic!("{e}"))
}

fn run(s: &Scenario, name: &str) -> (World, Summary) {
    hal_sim::run_scenario(s, scenario(name).parent().unwrap(), name).unwrap_or_else(|e| panic!("{e}"))
}

/// One core at 1 GHz, one instruction a cycle (1 ns an instruction), an
/// ACK costing `ack` instructions and every other event as much.
fn processor(ack: u32, depth: u32, coalescing: CoalescingCfg) -> CcProcessorCfg {
    CcProcessorCfg {
        cores: Cores(1),
        clock_ghz: Ghz(1.0),
        ipc: Ipc(1.0),
        queue_depth: Depth(depth),
        coalescing,
        thin_every_acks: None,
        thin_interval_ns: None,
        costs_from: None,
        core: None,
        costs: Some(CostsCfg {
            ack,
            ack_per_hop: None,
            timer: None,
            cnp: None,
            probe_response: None,
            other: None,
        }),
    }
}

fn counts(s: &Summary) -> &ProcessorCounts {
    &s.cc_processor.as_ref().expect("a processor").total
}

/// Events that cost nothing are decided at once: the run is the one
/// without a processor, to the picosecond, for HPCC++ (ACK events), LDCP
/// (its timer below one packet, fast start) and HPCC++'s probe mode
/// (probe replies).
#[test]
fn a_processor_that_costs_nothing_changes_nothing() {
    for name in ["hpcc-2to1", "ldcp-incast60", "hpcc-probe-loss"] {
        let mut s = load(name);
        if let hal_sim::setup::scenario::Flows::Incast { bytes, .. } = &mut s.workload.flows {
            // 2 × 20 MB is enough to compare.
            bytes.0 = bytes.0.min(20_000_000);
        }
        let (plain, a) = run(&s, name);
        s.nic.cc_processor = Some(processor(0, 1024, CoalescingCfg::None));
        let (with, b) = run(&s, name);
        let finish = |w: &World| w.flows.iter().map(|f| f.finish_ps).collect::<Vec<_>>();
        assert_eq!(finish(&plain), finish(&with), "{name}: flow completion times");
        assert_eq!(
            format!("{:?}", a.counters),
            format!("{:?}", b.counters),
            "{name}: counters"
        );
        assert_eq!(a.events, b.events, "{name}: events handled");
        let queues = |w: &World| w.metrics.ports.iter().map(|p| p.queue.clone()).collect::<Vec<_>>();
        assert_eq!(queues(&plain), queues(&with), "{name}: queue samples");
        let c = counts(&b);
        assert!(
            c.offered > 0 && c.offered == c.served && c.dropped == 0,
            "{name}: {c:?}"
        );
    }
}

/// Each sender of the 2-to-1 gets about 5.6 M ACKs a second; one core
/// taking 700 ns an ACK serves 1.4 M of them. With no coalescing the
/// queue (64 events) stays full, the rest are dropped, and every event is
/// accounted for: offered = served + dropped + left waiting.
#[test]
fn a_processor_below_its_event_rate_drops_and_counts() {
    let name = "hpcc-2to1";
    let mut s = load(name);
    if let hal_sim::setup::scenario::Flows::Incast { bytes, .. } = &mut s.workload.flows {
        bytes.0 = 20_000_000;
    }
    s.nic.cc_processor = Some(processor(700, 64, CoalescingCfg::None));
    let (_, sum) = run(&s, name);
    let c = counts(&sum);
    assert_eq!(c.offered, c.served + c.dropped + c.waiting_at_end, "{c:?}");
    assert_eq!(c.coalesced, 0);
    // Most ACK events cannot be served: 1.4 M of 5.6 M a second.
    let dropped = c.dropped as f64 / c.offered as f64;
    assert!(dropped > 0.5, "dropped {:.1} % of {}", dropped * 100.0, c.offered);
    // The senders' cores never rest (the receiver offers no event).
    let p = sum.cc_processor.as_ref().unwrap();
    for (host, n) in &p.per_nic {
        assert!(n.utilization > 0.95, "host {host}: {n:?}");
        // A full queue of 64 events at 700 ns each: 44.8 µs of wait.
        assert!(n.wait_p99_ns >= 40_000 && n.wait_max_ns <= 46_000, "host {host}: {n:?}");
    }
}

/// `latest` folds every ACK into its flow's waiting one, carrying the
/// newest cumulative ACK: the engine's last ACK before the flow's end
/// acknowledges every byte the receiver delivered, and its end comes
/// after it although the flow finished on the datapath first. (Of the
/// flow that finishes first: the run stops when the last flow finishes,
/// with its last events still waiting.)
#[test]
fn latest_loses_no_acknowledged_byte() {
    let name = "hpcc-2to1";
    let mut s = load(name);
    if let hal_sim::setup::scenario::Flows::Incast { bytes, .. } = &mut s.workload.flows {
        bytes.0 = 20_000_000;
    }
    s.nic.cc_processor = Some(processor(700, 64, CoalescingCfg::Latest));
    // Which flow finishes first, from a run without the trace.
    let (first_run, _) = run(&s, name);
    let flow = (0..2).min_by_key(|&f| first_run.flows[f].finish_ps).unwrap();
    let mut w = world(&s, name);
    let src = w.flows[flow].src_host;
    w.record(Selection {
        host: Some(src),
        flows: Some(vec![flow as u32]),
    })
    .unwrap();
    w.run(|_| {});
    assert!(w.flows[flow].finish_ps.is_some());
    let trace = w.tap.trace.take().expect("recorded").finish();
    let mut at = 0;
    let (mut acks, mut last_cum, mut ended_after) = (0u64, None, false);
    while at < trace.len() {
        let frame: Frame<'_> = codec::read_frame(&trace[at..]).expect("a frame");
        at += frame.len;
        let Ok(e) = codec::decode_event(&frame) else { continue };
        match e.event().kind {
            EventKind::Ack(a) => {
                acks += 1;
                last_cum = Some(a.cum_ack.0);
            }
            EventKind::End => ended_after = last_cum.is_some(),
            _ => {}
        }
    }
    let size = w.flows[flow].size;
    assert_eq!(last_cum, Some(size as u32), "the last ACK the engine saw");
    assert!(ended_after, "the flow's end came after its last ACK");
    let c = &w.nics[src as usize].ccp.as_ref().unwrap().stats;
    assert_eq!(c.dropped, 0, "one waiting ACK per flow never fills 64 places");
    assert!(
        c.coalesced > 3 * acks,
        "{} ACK events for {} coalesced",
        acks,
        c.coalesced
    );
}

/// HPCC++ on the 2-to-1 with a quarter of the processor its ACKs need
/// (one core whose ACK takes four times the mean gap between ACKs,
/// measured on the run without one): coalesced ACKs carry the newest
/// telemetry and the τ-weighted update takes them, so the bottleneck
/// stays at least 90 % used and its queue p99 within 10 KB, with either
/// policy. (Thinning must leave the core some slack: one ACK in 5 loads
/// it to 80 %; one in 4 loads it fully, its wait grows without bound and
/// the queue p99 reaches 45 KB.)
#[test]
fn coalescing_holds_hpcc_on_a_quarter_of_the_cores_it_needs() {
    let name = "hpcc-2to1";
    let mut s = load(name);
    if let hal_sim::setup::scenario::Flows::Incast { bytes, .. } = &mut s.workload.flows {
        bytes.0 = 50_000_000;
    }
    // The event rate a sender's processor is offered, measured.
    s.nic.cc_processor = Some(processor(0, 1024, CoalescingCfg::None));
    let (_, base) = run(&s, name);
    let p = base.cc_processor.as_ref().unwrap();
    let rate = p.per_nic.iter().map(|(_, n)| n.offered as f64).fold(0.0, f64::max) / (base.sim_ns * 1e-9);
    let ack_ns = (4.0 / rate * 1e9).round() as u32;
    assert!((600..800).contains(&ack_ns), "an ACK every {:.0} ns", 1e9 / rate);
    for (coalescing, every) in [(CoalescingCfg::Latest, None), (CoalescingCfg::Thinning, Some(5))] {
        let mut cfg = processor(ack_ns, 1024, coalescing);
        cfg.thin_every_acks = every.map(hal_sim::setup::scenario::Count);
        s.nic.cc_processor = Some(cfg);
        let (_, sum) = run(&s, name);
        let u = sum.link_utilization.iter().map(|u| u.utilization).fold(0.0, f64::max);
        let c = counts(&sum);
        assert!(u >= 0.90, "{coalescing:?}: utilization {:.1} %", u * 100.0);
        assert!(
            sum.queue_bytes.p99 <= 10_000.0,
            "{coalescing:?}: queue p99 {} B",
            sum.queue_bytes.p99
        );
        assert!(c.coalesced > c.served, "{coalescing:?}: {c:?}");
        assert_eq!(c.dropped, 0, "{coalescing:?}");
    }
}
