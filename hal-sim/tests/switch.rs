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
            failed_links: 0,
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

/// Eight NSCC flows of 2 MB into one host through ports of 100 KB, on the
/// SACK transport: trimming on (`trim` true) or tail drop.
fn into_small_ports(trim: bool) -> (World, hal_sim::output::report::Summary) {
    into_small_ports_with(|s| s.switch.trim_bytes = trim.then_some(HeaderBytes(64)))
}

/// [`into_small_ports`] with tail drop, then `change` made.
fn into_small_ports_with(change: impl Fn(&mut Scenario)) -> (World, hal_sim::output::report::Summary) {
    let mut s = Scenario::new(
        "test",
        20.0,
        Topology::incast(8, 100, 1000),
        CcCfg {
            algorithm: Cc::registered(cc_core::Algorithm::Nscc).unwrap(),
            base_rtt_ns: None,
        },
        Workload::incast(2_000_000),
    );
    s.nic.telemetry = hal_sim::model::telemetry::TelFormat::None;
    s.nic.payload_bytes = Payload(4086);
    s.nic.header_bytes = HeaderBytes(64);
    s.nic.transport = Transport::Sack;
    s.switch.port_buffer_bytes = Bytes(100_000);
    change(&mut s);
    common::run(&s)
}

use hal_sim::run::world::World;

/// Trimming turns each overflow into a header that the receiver NACKs at
/// once, and the packet is sent again without waiting for a timeout; the
/// same overflows dropped cost the SACK transport's least RTO each (15 µs
/// plus six 100 KB drains, 63 µs) of the flow's progress. Each flow's
/// 490 packets are sent new exactly once either way, and every resend is
/// a NACK's or a timeout's (a few of those are found to have arrived
/// before their resend: a timed-out packet's first copy). A few timeouts remain with trimming, as in
/// uet-htsim: NACKs can cut a window to one MTU while two packets that
/// arrived, fewer than the 16 KB an ACK waits for, still count in flight;
/// nothing then moves until the oldest times out.
#[test]
fn trimmed_packets_are_nacked_and_resent() {
    let tail = |w: &World| w.flows.iter().map(|f| f.finish_ps.unwrap().as_ns()).max().unwrap();
    let (w, s) = into_small_ports(true);
    let c = s.counters;
    assert_eq!(s.flows_finished, 8);
    assert!(c.trims > 200 && c.drops == 0, "{c:?}");
    assert!(c.nacks <= c.trims && c.nacks + c.timeouts >= c.trims, "{c:?}");
    assert!(c.timeouts * 20 < c.nacks, "{c:?}");
    // An ACK can show that a NACKed or timed-out packet arrived after
    // all (another copy did) before it is resent.
    assert!(
        c.retransmits <= c.nacks + c.timeouts && c.retransmits + 10 >= c.nacks + c.timeouts,
        "{c:?}"
    );
    assert_eq!(s.data_packets - c.retransmits, 8 * 490);
    let (trimmed, timeouts) = (tail(&w), c.timeouts);

    let (w, s) = into_small_ports(false);
    let c = s.counters;
    assert_eq!(s.flows_finished, 8);
    assert!(c.drops > 200 && c.trims == 0 && c.nacks == 0, "{c:?}");
    assert!(c.retransmits <= c.timeouts && c.timeouts >= c.drops, "{c:?}");
    assert!(c.timeouts > 10 * timeouts, "{c:?}");
    assert_eq!(s.data_packets - c.retransmits, 8 * 490);
    // The receiver's link sets the tail either way (8 × 2 MB at 100 Gb/s).
    assert!(
        tail(&w).abs_diff(trimmed) < 20_000,
        "dropped: {} ns, trimmed: {trimmed} ns",
        tail(&w)
    );
}

/// Ports that drop by trimming's coin (uet-htsim's `-disable_trim`) lose
/// packets as tail drop does, with nothing trimmed or NACKed; without
/// SLEEK each loss costs a timeout. SLEEK finds most of them from the
/// receiver's out-of-order count instead (and sends more again than was
/// lost, as in uet-htsim: packets past the SACK bitmap's reach look lost
/// too), so far fewer timeouts fire; the receiver's link sets the tail
/// either way.
#[test]
fn sleek_recovers_what_dropping_ports_lose() {
    let tail = |w: &World| w.flows.iter().map(|f| f.finish_ps.unwrap().as_ns()).max().unwrap();
    let (w, s) = into_small_ports_with(|s| s.switch.drop_by_coin = true);
    let c = s.counters;
    assert_eq!(s.flows_finished, 8);
    assert!(
        c.drops > 200 && c.trims == 0 && c.nacks == 0 && c.sleek_pkts == 0,
        "{c:?}"
    );
    assert!(c.timeouts >= c.drops, "{c:?}");
    assert_eq!(s.data_packets - c.retransmits, 8 * 490);
    let (timed_out, timeouts) = (tail(&w), c.timeouts);
    let (w, s) = into_small_ports_with(|s| {
        s.switch.drop_by_coin = true;
        s.nic.sleek = true;
    });
    let c = s.counters;
    assert_eq!(s.flows_finished, 8);
    assert!(
        c.drops > 200 && c.trims == 0 && c.nacks == 0 && c.sleek_probes > 0,
        "{c:?}"
    );
    assert!(
        c.sleek_pkts > 4 * c.timeouts && 2 * c.timeouts < timeouts,
        "{c:?} against {timeouts} timeouts without SLEEK"
    );
    assert!(c.retransmits <= c.sleek_pkts + c.timeouts, "{c:?}");
    assert_eq!(s.data_packets - c.retransmits, 8 * 490);
    assert!(
        tail(&w).abs_diff(timed_out) * 50 < timed_out,
        "SLEEK: {} ns, timeouts: {timed_out} ns",
        tail(&w)
    );
}

/// What trimming and the SACK transport need is refused by name.
#[test]
fn trimming_and_sack_refuse_what_they_do_not_model() {
    let refused = |change: &dyn Fn(&mut Scenario)| {
        let mut s = common::incast(2, 100_000, 1.0, 0);
        s.nic.transport = Transport::Sack;
        s.cc.algorithm = Cc::registered(cc_core::Algorithm::Nscc).unwrap();
        change(&mut s);
        match World::new(&s, std::path::Path::new("."), "t.toml") {
            Ok(_) => String::new(),
            Err(e) => e.to_string(),
        }
    };
    assert_eq!(refused(&|s| s.switch.trim_bytes = Some(HeaderBytes(64))), "");
    let e = refused(&|s| {
        s.nic.transport = Transport::GoBackN;
        s.switch.trim_bytes = Some(HeaderBytes(64));
    });
    assert!(e.contains("switch.trim_bytes") && e.contains("sack"), "{e}");
    let e = refused(&|s| {
        s.switch.trim_bytes = Some(HeaderBytes(64));
        s.switch.control_priority = Some(false);
    });
    assert!(e.contains("control_priority"), "{e}");
    let e = refused(&|s| s.switch.trim_bytes = Some(HeaderBytes(32)));
    assert!(e.contains("64 bytes"), "{e}");
    assert_eq!(
        refused(&|s| {
            s.switch.drop_by_coin = true;
            s.nic.sleek = true;
        }),
        ""
    );
    let e = refused(&|s| {
        s.switch.drop_by_coin = true;
        s.switch.trim_bytes = Some(HeaderBytes(64));
    });
    assert!(e.contains("switch.drop_by_coin") && e.contains("trim_bytes"), "{e}");
    let e = refused(&|s| {
        s.switch.drop_by_coin = true;
        s.switch.control_priority = Some(false);
    });
    assert!(
        e.contains("switch.drop_by_coin") && e.contains("control_priority"),
        "{e}"
    );
    assert_eq!(refused(&|s| s.switch.ecmp_salt = 7), "");
    let e = refused(&|s| {
        s.switch.ecmp_salt = 7;
        s.switch.ecmp = hal_sim::model::net::Ecmp::Reference;
    });
    assert!(e.contains("switch.ecmp_salt") && e.contains("flow_hash"), "{e}");
    let e = refused(&|s| {
        s.nic.transport = Transport::GoBackN;
        s.nic.sleek = true;
    });
    assert!(e.contains("nic.sleek"), "{e}");
    let e = refused(&|s| {
        s.cc.algorithm = Cc::registered(cc_core::Algorithm::Dctcp).unwrap();
        s.nic.sleek = true;
    });
    assert!(e.contains("nic.sleek") && e.contains("nscc"), "{e}");
    let e = refused(&|s| {
        s.nic.transport = Transport::GoBackN;
        s.nic.sack_bytes = Some(Bytes(4000));
    });
    assert!(e.contains("nic.sack_bytes"), "{e}");
    let e = refused(&|s| {
        s.cc.algorithm = Cc::Ldcp {
            params: LdcpCfg::default(),
            fast_start: true,
        }
    });
    assert!(e.contains("nic.transport") && e.contains("go-back-N"), "{e}");
    let e = refused(&|s| s.nic.paths = Count(3));
    assert!(e.contains("nic.paths") && e.contains("power of two"), "{e}");
    let e = refused(&|s| {
        s.nic.transport = Transport::GoBackN;
        s.nic.paths = Count(64);
    });
    assert!(e.contains("nic.paths") && e.contains("sack"), "{e}");
}

/// One NSCC flow of 2 MB from host 0 to host 15 of a k = 4 fat-tree
/// (four cores between the pods), over `paths` entropy values.
fn across_the_cores(paths: u32) -> World {
    let text = format!(
        "name = \"t\"\nstop_ms = 2.0\n[topology]\nkind = \"k_ary_fat_tree\"\nk = 4\nlink_gbps = 100\nlink_delay_ns = 1000\n\
         [switch]\nport_buffer_bytes = 178450\ntrim_bytes = 64\n\
         [nic]\ntelemetry = \"none\"\npayload_bytes = 4086\nheader_bytes = 64\ntransport = \"sack\"\npaths = {paths}\n\
         [cc]\nalgorithm = \"nscc\"\n[workload]\nkind = \"list\"\nflows = [{{ src = 0, dst = 15, bytes = 2000000 }}]\n"
    );
    let s = hal_sim::setup::scenario::parse(&text, "t.toml").unwrap_or_else(|e| panic!("{e}"));
    let (w, sum) = common::run(&s);
    assert_eq!(sum.flows_finished, 1);
    w
}

/// The data bytes each core switch sent on, in order.
fn core_bytes(w: &World) -> Vec<u64> {
    let hosts = w.net.hosts.len();
    // A k = 4 fat-tree's cores are its last four nodes.
    let first_core = w.net.nodes.len() - 4;
    let mut out: Vec<u64> = w
        .switches
        .iter()
        .filter(|s| s.node as usize >= first_core)
        .map(|s| s.ports.iter().map(|p| p.tx_bytes).sum())
        .collect();
    assert_eq!((out.len(), hosts), (4, 16));
    out.sort_unstable();
    out
}

/// A sprayed flow's packets cross every core, in near-equal shares (each
/// switch hashes the flow and each packet's entropy value); on one path
/// they all cross one core (and their ACKs one core, from the other side).
#[test]
fn sprayed_packets_take_every_path() {
    let one = core_bytes(&across_the_cores(1));
    // The data on one core; its ACKs, hashed the other way, on another.
    assert_eq!(one.iter().filter(|&&b| b > 100_000).count(), 1, "{one:?}");
    let many = core_bytes(&across_the_cores(128));
    let total: u64 = many.iter().sum();
    assert_eq!(total, one.iter().sum::<u64>(), "the same packets, no resend");
    for b in &many {
        assert!(
            *b * 8 > total && *b * 3 < total,
            "each core's share of {total}: {many:?}"
        );
    }
}
