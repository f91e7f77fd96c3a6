//! The file format's tests: every refusal names its file, line and field.

use super::*;

const GOOD: &str = MINIMAL;

#[test]
fn a_good_file_parses() {
    let s = parse(GOOD, "good.toml").unwrap();
    assert_eq!(s.topology.shape, Shape::Incast { senders: Count(2) });
    assert_eq!(s.cc.algorithm, Cc::Hpcc(HpccCfg::default()));
    assert_eq!(
        s.workload.flows,
        Flows::Incast {
            receiver: 0,
            bytes: Bytes(1_000_000),
            start_ns: 0
        }
    );
}

#[test]
fn a_k_ary_fat_tree_is_a_fat_tree_of_k_pods() {
    let text = GOOD.replace("kind = \"incast\"\nsenders = 2", "kind = \"k_ary_fat_tree\"\nk = 4");
    let s = parse(&text, "k.toml").unwrap();
    let four_halves = Count(2);
    assert_eq!(
        s.topology.shape,
        Shape::FatTree {
            pods: Count(4),
            tors_per_pod: four_halves,
            hosts_per_tor: four_halves,
            aggs_per_pod: four_halves,
            cores_per_agg: four_halves,
            fabric_gbps: None
        }
    );
    let e = parse(&text.replace("k = 4", "k = 5"), "k.toml").unwrap_err();
    assert_eq!((e.field.as_str(), e.line), ("topology.k", Some(6)), "{e}");
}

#[test]
fn a_field_of_another_kind_is_refused_at_its_line() {
    let e = parse(&GOOD.replace("senders = 2", "senders = 2\nhosts = 4"), "x.toml").unwrap_err();
    assert_eq!((e.field.as_str(), e.line), ("topology.hosts", Some(7)), "{e}");
    assert!(e.message.contains("does not apply to kind = \"incast\""), "{e}");

    let e = parse(
        &GOOD.replace("algorithm = \"hpcc\"", "algorithm = \"hpcc\"\ngamma = 0.25"),
        "x.toml",
    )
    .unwrap_err();
    assert_eq!((e.field.as_str(), e.line), ("cc.gamma", Some(11)), "{e}");

    let e = parse(
        &GOOD.replace("algorithm = \"hpcc\"", "algorithm = \"ldcp\"\neta = 0.9"),
        "x.toml",
    )
    .unwrap_err();
    assert_eq!(e.field, "cc.eta", "{e}");

    let e = parse(
        &GOOD.replace("bytes = 1000000", "bytes = 1000000\nload = 0.3"),
        "x.toml",
    )
    .unwrap_err();
    assert_eq!((e.field.as_str(), e.line), ("workload.load", Some(14)), "{e}");
}

#[test]
fn errors_name_file_line_and_field() {
    let bad = GOOD.replace("link_gbps = 100", "link_gbps = 0");
    let e = parse(&bad, "bad.toml").unwrap_err();
    assert_eq!(e.line, Some(7), "{e}");
    assert_eq!(e.field, "topology.link_gbps", "{e}");
    assert!(
        e.to_string()
            .starts_with("bad.toml:7: topology.link_gbps: must be in 1 ..= 1600"),
        "{e}"
    );

    let e = parse(&GOOD.replace("senders = 2", "senders = 2\nsendrs = 3"), "typo.toml").unwrap_err();
    assert_eq!(e.line, Some(7), "{e}");
    assert!(e.message.contains("sendrs"), "{e}");

    let e = parse(&GOOD.replace("algorithm = \"hpcc\"", "algorithm = \"bbr\""), "x.toml").unwrap_err();
    assert_eq!(e.field, "cc.algorithm", "{e}");

    let pfc = |body: &str| GOOD.replace("[cc]", &format!("[switch.pfc]\n{body}\n[cc]"));
    assert!(parse(&pfc("xoff_bytes = 500000"), "p.toml").is_ok());
    assert!(parse(&pfc("dynamic_alpha = 0.125"), "p.toml").is_ok());
    for bad in ["", "xoff_bytes = 1\ndynamic_alpha = 0.5", "dynamic_alpha = 0.0"] {
        let e = parse(&pfc(bad), "p.toml").unwrap_err();
        assert!(e.field.starts_with("switch.pfc"), "{e}");
    }

    let e = parse("name = \"t\"\nstop_ms = [", "syntax.toml").unwrap_err();
    assert_eq!(e.line, Some(2), "{e}");

    let e = parse(&GOOD.replace("senders = 2\n", ""), "missing.toml").unwrap_err();
    assert_eq!(e.field, "topology.senders", "{e}");

    let e = parse(
        &GOOD.replace(
            "[cc]\nalgorithm = \"hpcc\"",
            "[cc]\nalgorithm = \"hpcc\"\nwai_mbps = 50\nwai_flows = 4",
        ),
        "both.toml",
    )
    .unwrap_err();
    assert_eq!(e.field, "cc.wai_flows", "{e}");
    assert!(e.line.is_some());
}

/// With no marking field, each algorithm gets the marking it needs
/// (ECN-driven ones mark; HPCC++ does not), per Gb/s of the host link;
/// a field given overrides only itself.
#[test]
fn marking_defaults_follow_the_algorithm_and_the_link_speed() {
    let with = |cc: &str, extra: &str| {
        let text = GOOD
            .replace("algorithm = \"hpcc\"", &format!("algorithm = \"{cc}\""))
            .replace("[cc]", &format!("{extra}\n[cc]"));
        let s = parse(&text, "m.toml").unwrap();
        s.switch.marking(&s.cc.algorithm, s.topology.link_gbps.0)
    };
    let dcqcn = with("dcqcn", "");
    assert_eq!((dcqcn.kmin, dcqcn.kmax, dcqcn.pmax), (400_000, 1_600_000, 0.2));
    let dctcp = with("dctcp", "");
    assert_eq!((dctcp.kmin, dctcp.kmax, dctcp.pmax), (300_000, 300_000, 1.0));
    let ldcp = with("ldcp", "");
    assert_eq!(
        (ldcp.kmin, ldcp.kmax, ldcp.pmax, ldcp.drop_k),
        (5_000, 40_000, 0.2, 20_000)
    );
    assert_eq!(with("hpcc", "").pmax, 0.0);
    let given = with("dcqcn", "[switch]\necn_kmax_bytes = 800000");
    assert_eq!((given.kmin, given.kmax, given.pmax), (400_000, 800_000, 0.2));
    let e = parse(
        &GOOD
            .replace("algorithm = \"hpcc\"", "algorithm = \"dcqcn\"")
            .replace("[cc]", "[switch]\necn_kmax_bytes = 1000\n[cc]"),
        "m.toml",
    )
    .unwrap_err();
    assert_eq!(e.field, "switch.ecn_kmin_bytes", "{e}");
    assert!(e.message.contains("400000 > 1000"), "{e}");
}

/// The default RTO outlasts a full port queue; a given one is kept.
#[test]
fn the_default_rto_outlasts_the_port_buffer() {
    let s = parse(GOOD, "r.toml").unwrap();
    // 8 MB at 100 Gb/s drains in 671 µs.
    assert_eq!(s.nic.rto_us_for(s.switch.port_buffer_bytes.0, 100), 1_342);
    assert_eq!(s.nic.rto_us_for(100_000, 100), 1_000);
    let s = parse(&GOOD.replace("[cc]", "[nic]\nrto_us = 300\n[cc]"), "r.toml").unwrap();
    assert_eq!(s.nic.rto_us_for(8 << 20, 100), 300);
}

#[test]
fn a_load_of_zero_is_refused_at_its_line() {
    let text = GOOD.replace(
        "kind = \"incast\"\nbytes = 1000000",
        "kind = \"cdf\"\ndistribution = \"websearch\"\nload = 0.0\ncount = 10",
    );
    let e = parse(&text, "l.toml").unwrap_err();
    assert_eq!((e.field.as_str(), e.line), ("workload.load", Some(14)), "{e}");
    assert!(e.message.contains("(0, 1]"), "{e}");
}

/// A value the engine cannot run with is refused at its line, with its
/// range, not later as "parameters out of range".
#[test]
fn engine_ranges_are_checked_at_the_field() {
    for (field, line, want) in [
        ("eta = 0.0", "cc.eta", "(0, 1]"),
        ("base_rtt_ns = 50", "cc.base_rtt_ns", "100 ..= 1048576 ns"),
    ] {
        let e = parse(
            &GOOD.replace("algorithm = \"hpcc\"", &format!("algorithm = \"hpcc\"\n{field}")),
            "r.toml",
        )
        .unwrap_err();
        assert_eq!((e.field.as_str(), e.line), (line, Some(11)), "{e}");
        assert!(e.message.contains(want), "{e}");
    }
    let e = parse(
        &GOOD.replace("algorithm = \"hpcc\"", "algorithm = \"ldcp\"\nbeta = 0"),
        "r.toml",
    )
    .unwrap_err();
    assert_eq!((e.field.as_str(), e.line), ("cc.beta", Some(11)), "{e}");
}

/// An unknown field is named with its table, gets the nearest field the
/// table's kind takes, and the list holds only that kind's fields.
#[test]
fn an_unknown_field_gets_a_suggestion_from_its_kind() {
    let e = parse(
        &GOOD.replace("algorithm = \"hpcc\"", "algorithm = \"hpcc\"\netaa = 0.9"),
        "u.toml",
    )
    .unwrap_err();
    assert_eq!((e.field.as_str(), e.line), ("cc.etaa", Some(11)), "{e}");
    assert!(e.message.contains("did you mean `eta`?"), "{e}");
    assert!(
        e.message.contains("`max_stage`") && !e.message.contains("`alpha`"),
        "{e}"
    );
    let e = parse(&GOOD.replace("senders = 2", "sendrs = 2"), "u.toml").unwrap_err();
    assert_eq!((e.field.as_str(), e.line), ("topology.sendrs", Some(6)), "{e}");
    assert!(e.message.contains("did you mean `senders`?"), "{e}");
    assert!(!e.message.contains("`hosts_per_leaf`"), "{e}");
    // Nothing near: no suggestion, still the list.
    let e = parse(&GOOD.replace("senders = 2", "senders = 2\nzzzz = 1"), "u.toml").unwrap_err();
    assert!(
        !e.message.contains("did you mean") && e.message.contains("`senders`"),
        "{e}"
    );
    // A field of another algorithm says whose it is.
    let e = parse(
        &GOOD.replace("algorithm = \"hpcc\"", "algorithm = \"hpcc\"\nalpha = 0.5"),
        "u.toml",
    )
    .unwrap_err();
    assert_eq!(e.field, "cc.alpha", "{e}");
    assert!(e.message.contains("ldcp, ldcp_rate"), "{e}");
}

#[test]
fn a_duplicate_key_is_named_with_its_first_line() {
    let e = parse(&GOOD.replace("senders = 2", "senders = 2\nsenders = 3"), "d.toml").unwrap_err();
    assert_eq!(e.line, Some(7), "{e}");
    assert_eq!(e.message, "duplicate key `senders` (first written at line 6)", "{e}");
}

/// DCQCN named alone runs the HPCC paper's simulator's parameters, with
/// its receivers' CNPs on every CE-marked packet and marking on dequeue; a
/// preset applies before the fields beside it, whichever comes first.
#[test]
fn dcqcn_presets_apply_before_their_fields() {
    use crate::model::nic::profile::{Gate, Profile};
    use crate::setup::scenario::EcnAt;
    use cc_core::dcqcn::DcqcnConfig;
    let text = GOOD.replace("algorithm = \"hpcc\"", "algorithm = \"dcqcn\"");
    let engine = |text: &str| {
        let s = parse(text, "d.toml").unwrap();
        super::super::engine::engine_config(&s.cc, 1000).unwrap()
    };
    let s = parse(&text, "d.toml").unwrap();
    let e = engine(&text);
    assert_eq!(e.dcqcn, DcqcnConfig::hpcc_sim());
    let p = Profile::of(&s.cc, &e);
    assert_eq!((p.sender, p.gate), (cc_core::Algorithm::Dcqcn, Gate::Rate));
    assert_eq!(p.cnp_on_ce, Some(crate::run::event::Ps::ZERO));
    assert_eq!(s.cc.algorithm.ecn_at_default(), EcnAt::Dequeue);
    for fields in [
        "preset = \"paper\"\nta_us = 10\nclamp_target = true",
        "clamp_target = true\nta_us = 10\npreset = \"paper\"",
    ] {
        let given = text.replace("\"dcqcn\"", &format!("\"dcqcn\"\n{fields}"));
        let d = engine(&given).dcqcn;
        assert_eq!(
            d,
            DcqcnConfig {
                alpha_interval_ns: 10_000,
                clamp_target: true,
                ..DcqcnConfig::paper()
            }
        );
        let p = Profile::of(&parse(&given, "d.toml").unwrap().cc, &engine(&given));
        assert_eq!(p.cnp_on_ce, Some(crate::run::event::Ps::from_ns(50_000)));
    }
    let e = parse(&text.replace("\"dcqcn\"", "\"dcqcn\"\nfast_recovery = 32"), "d.toml").unwrap_err();
    assert_eq!(e.field, "cc.fast_recovery");
    let e = parse(&text.replace("\"dcqcn\"", "\"dcqcn\"\npreset = \"ns3\""), "d.toml").unwrap_err();
    assert_eq!(
        (e.field.as_str(), e.message.as_str()),
        ("cc.preset", "must be one of \"hpcc_sim\", \"paper\" (got \"ns3\")")
    );
}

/// DCTCP counts in the NIC's packets (RFC 8257's MSS, its W_min one
/// packet) and Swift's windows too, whatever the payload, unless the
/// table names the field; a W_min of 0 is refused at its line.
#[test]
fn packet_sizes_follow_the_nics_payload_unless_given() {
    use cc_core::units::Window;
    let dctcp = GOOD.replace("algorithm = \"hpcc\"", "algorithm = \"dctcp\"");
    let engine = |text: &str, payload| {
        let s = parse(text, "p.toml").unwrap();
        super::super::engine::engine_config(&s.cc, payload).unwrap()
    };
    for payload in [1000, 4000, 9000] {
        let d = engine(&dctcp, payload).dctcp;
        assert_eq!((d.mtu, d.w_min), (payload, Window::from_bytes(payload)));
        assert_eq!(d.g.to_bits(), 1 << 20);
        let w = engine(&dctcp.replace("\"dctcp\"", "\"dctcp\"\nw_min_bytes = 1500"), payload).dctcp;
        assert_eq!((w.mtu, w.w_min), (payload, Window::from_bytes(1500)));
        let m = engine(&dctcp.replace("\"dctcp\"", "\"dctcp\"\nmtu_bytes = 1024"), payload).dctcp;
        assert_eq!((m.mtu, m.w_min), (1024, Window::from_bytes(payload)));
        let swift = GOOD.replace("algorithm = \"hpcc\"", "algorithm = \"swift\"");
        assert_eq!(engine(&swift, payload).swift.mtu, payload);
        let given = swift.replace("\"swift\"", "\"swift\"\nmtu_bytes = 1500");
        assert_eq!(engine(&given, payload).swift.mtu, 1500);
    }
    let e = parse(&dctcp.replace("\"dctcp\"", "\"dctcp\"\nw_min_bytes = 0"), "p.toml").unwrap_err();
    assert_eq!(e.field, "cc.w_min_bytes");
    assert!(e.message.contains("1 ..= 67108864"), "{}", e.message);
}

/// `algorithm = "timely"` and nothing else of it runs as the HPCC
/// reference simulator's TIMELY runs do: its parameters (cc-core's
/// `TimelyConfig::hpcc_sim`), no marking, rate-gated, ACKs in the data's
/// queues at the switches (ahead of data only at the NICs, as everywhere);
/// a field given overrides only itself, and another algorithm's field is
/// refused at its line.
#[test]
fn timely_named_alone_runs_as_the_reference_simulators() {
    use crate::model::nic::profile::{Gate, Profile};
    use cc_core::timely::{TimelyClock, TimelyConfig};
    let text = GOOD.replace("algorithm = \"hpcc\"", "algorithm = \"timely\"");
    let s = parse(&text, "t.toml").unwrap();
    assert_eq!(s.cc.algorithm, Cc::registered(cc_core::Algorithm::Timely).unwrap());
    let engine = super::super::engine::engine_config(&s.cc, 1000).unwrap();
    assert_eq!(engine.timely, TimelyConfig::hpcc_sim());
    assert_eq!(s.switch.marking(&s.cc.algorithm, 100).pmax, 0.0);
    assert!(s.switch.control_priority.is_none() && !s.cc.algorithm.control_priority_default());
    let p = Profile::of(&s.cc, &engine);
    assert_eq!((p.sender, p.gate), (cc_core::Algorithm::Timely, Gate::Rate));
    let given = text.replace(
        "algorithm = \"timely\"",
        "algorithm = \"timely\"\nt_low_us = 20\nclock = \"per_sample\"",
    );
    let s = parse(&given, "t.toml").unwrap();
    let engine = super::super::engine::engine_config(&s.cc, 1000).unwrap();
    assert_eq!(
        engine.timely,
        TimelyConfig {
            t_low_ns: 20_000,
            clock: TimelyClock::PerSample,
            ..TimelyConfig::hpcc_sim()
        }
    );
    let e = parse(
        &text.replace("algorithm = \"timely\"", "algorithm = \"timely\"\ng = 0.5"),
        "t.toml",
    )
    .unwrap_err();
    assert_eq!(e.field, "cc.g", "{e}");
    let bad = text.replace("algorithm = \"timely\"", "algorithm = \"timely\"\nt_low_us = 600");
    let e = parse(&bad, "t.toml").unwrap_err();
    assert_eq!((e.field.as_str(), e.line), ("cc.t_low_us", Some(11)), "{e}");
    assert!(e.message.contains("below t_high_us"), "{e}");
    // Each value in its unit; a near miss is named.
    for (line, field, says) in [
        ("clock = \"per_ack\"", "cc.clock", "one of \"per_rtt\", \"per_sample\""),
        ("clock = 1", "cc.clock", "one of"),
        ("alpha = 1.5", "cc.alpha", "a ratio, (0, 1]"),
        ("alpha = 0", "cc.alpha", "(0, 1]"),
        ("min_rate_mbps = 1.5", "cc.min_rate_mbps", "Mb/s"),
        ("t_low_us = -1", "cc.t_low_us", "µs"),
        ("t_lo_us = 1", "cc.t_lo_us", "did you mean `t_low_us`?"),
        ("base_rtt_ns = 1", "cc.base_rtt_ns", "range of T"),
        ("eta = 0.9", "cc.eta", "it is a field of hpcc"),
    ] {
        let bad = text.replace("algorithm = \"timely\"", &format!("algorithm = \"timely\"\n{line}"));
        let e = parse(&bad, "t.toml").unwrap_err();
        assert_eq!((e.field.as_str(), e.line), (field, Some(11)), "{line}: {e}");
        assert!(e.message.contains(says), "{line}: {e}");
    }
    // A field of TIMELY's is named as such for another algorithm.
    let e = parse(
        &GOOD.replace("algorithm = \"hpcc\"", "algorithm = \"dctcp\"\nt_high_us = 5"),
        "t.toml",
    )
    .unwrap_err();
    assert!(e.message.contains("it is a field of timely"), "{e}");
    let e = parse(
        &GOOD.replace("algorithm = \"hpcc\"", "algorithm = \"timelee\""),
        "t.toml",
    )
    .unwrap_err();
    assert_eq!(e.field, "cc.algorithm", "{e}");
    assert!(e.message.contains("`timely`"), "{e}");
}

/// A table's decimals become the engine's numbers in each unit's steps.
#[test]
fn decimals_round_to_the_engine_unit() {
    use super::engine_number as n;
    use cc_core::params::Unit;
    assert_eq!(n(Unit::Fraction, 1.0), Some(1 << 24));
    assert_eq!(n(Unit::Fraction, 0.875), Some(14_680_064));
    // 0.001 · 2^24 = 16777.216.
    assert_eq!(n(Unit::Fraction, 0.001), Some(16_777));
    assert_eq!(n(Unit::Fraction, 1.01), None);
    assert_eq!(n(Unit::Micros, 0.0015), Some(2));
    assert_eq!(n(Unit::Micros, 500.0), Some(500_000));
    assert_eq!(n(Unit::Micros, 4_294_967.295), Some(u32::MAX));
    assert_eq!(n(Unit::Micros, 4_294_967.296), None);
    assert_eq!(n(Unit::Mbps, 1000.0), Some(1000));
    assert_eq!(n(Unit::Mbps, 1000.5), None);
    assert_eq!(n(Unit::Count, -1.0), None);
    assert_eq!(n(Unit::Count, f64::NAN), None);
    assert_eq!(n(Unit::Flag, 1.0), None);
    assert_eq!(n(Unit::Packets, 0.01), Some(655));
}

/// HPCC-PINT needs the switches' code, HPCC++ a hop stack: each told so at
/// `nic.telemetry`; the code's width and sampling checked at theirs.
#[test]
fn pint_and_stack_readers_get_their_telemetry() {
    let with = |nic: &str, algorithm: &str| {
        GOOD.replace(
            "[cc]\nalgorithm = \"hpcc\"",
            &format!("[nic]\n{nic}\n[cc]\nalgorithm = \"{algorithm}\""),
        )
    };
    for (nic, algorithm, field, want) in [
        ("telemetry = \"compact\"", "hpcc_pint", "nic.telemetry", "pint"),
        ("telemetry = \"none\"", "hpcc_pint", "nic.telemetry", "pint"),
        ("telemetry = \"pint\"", "hpcc", "nic.telemetry", "compact"),
        ("telemetry = \"pint\"", "powertcp", "nic.telemetry", "compact"),
        (
            "telemetry = \"pint\"\npint_bytes = 3",
            "hpcc_pint",
            "nic.pint_bytes",
            "1 or 2",
        ),
        (
            "telemetry = \"pint\"\npint_sampling = 0.0",
            "hpcc_pint",
            "nic.pint_sampling",
            "(0, 1]",
        ),
    ] {
        let e = parse(&with(nic, algorithm), "p.toml").unwrap_err();
        assert_eq!(e.field, field, "{nic} {algorithm}: {e}");
        assert!(e.message.contains(want), "{e}");
    }
    let s = parse(&with("telemetry = \"pint\"\npint_bytes = 1", "hpcc_pint"), "p.toml").unwrap();
    assert_eq!(s.nic.pint_bytes, 1);
    // Named alone, HPCC-PINT gets the code, in two bytes.
    let s = parse(
        &GOOD.replace("algorithm = \"hpcc\"", "algorithm = \"hpcc_pint\""),
        "p.toml",
    )
    .unwrap();
    assert_eq!((s.nic.telemetry, s.nic.pint_bytes), (TelFormat::Pint, 2));
}

/// A topology file: `path` required, `link_delay_ns` refused (the file
/// gives each link's), the shape's own fields refused.
#[test]
fn an_ns3_topology_takes_a_path_and_no_delay() {
    let ns3 = |body: &str| {
        GOOD.replace(
            "kind = \"incast\"\nsenders = 2\nlink_gbps = 100\nlink_delay_ns = 1000",
            &format!("kind = \"ns3\"\nlink_gbps = 100\n{body}"),
        )
    };
    let s = parse(&ns3("path = \"topo.txt\""), "t.toml").unwrap();
    assert_eq!(
        s.topology.shape,
        Shape::Ns3 {
            path: "topo.txt".into()
        }
    );
    let e = parse(&ns3(""), "t.toml").unwrap_err();
    assert_eq!(e.field, "topology.path", "{e}");
    let e = parse(&ns3("path = \"topo.txt\"\nlink_delay_ns = 1000"), "t.toml").unwrap_err();
    assert_eq!(e.field, "topology.link_delay_ns", "{e}");
    assert!(e.message.contains("the file gives the links' delays"), "{e}");
    let e = parse(&ns3("path = \"topo.txt\"\nsenders = 2"), "t.toml").unwrap_err();
    assert_eq!(e.field, "topology.senders", "{e}");
    let e = parse(&GOOD.replace("link_delay_ns = 1000\n", ""), "t.toml").unwrap_err();
    assert_eq!(e.field, "topology.link_delay_ns", "{e}");
}

/// An htsim topology (uet-htsim's `.topo`) takes a path, and no delay
/// (the file gives it) nor any shape's field.
#[test]
fn an_htsim_topology_takes_a_path_and_no_delay() {
    let htsim = |body: &str| {
        GOOD.replace(
            "kind = \"incast\"\nsenders = 2\nlink_gbps = 100\nlink_delay_ns = 1000",
            &format!("kind = \"htsim\"\nlink_gbps = 100\n{body}"),
        )
    };
    let s = parse(&htsim("path = \"ls.topo\""), "t.toml").unwrap();
    assert_eq!(s.topology.shape, Shape::Htsim { path: "ls.topo".into() });
    let e = parse(&htsim(""), "t.toml").unwrap_err();
    assert_eq!(e.field, "topology.path", "{e}");
    let e = parse(&htsim("path = \"ls.topo\"\nlink_delay_ns = 1000"), "t.toml").unwrap_err();
    assert_eq!(e.field, "topology.link_delay_ns", "{e}");
    let e = parse(&htsim("path = \"ls.topo\"\nleaves = 2"), "t.toml").unwrap_err();
    assert_eq!(e.field, "topology.leaves", "{e}");
}

/// A topology whose routing tables no machine here holds is refused where
/// it is read, naming its size, rather than ending the run with an
/// allocation failure (a 69 024-host leaf-spine asked for 21 GB at once);
/// the largest shipped one (8192 hosts) is far inside the bound.
#[test]
fn a_topology_too_large_to_route_is_refused_at_its_kind() {
    let leaf_spine = |leaves: u32| {
        GOOD.replace(
            "kind = \"incast\"\nsenders = 2",
            &format!("kind = \"leaf_spine\"\nleaves = {leaves}\nspines = 2\nhosts_per_leaf = 8"),
        )
    };
    assert!(parse(&leaf_spine(1024), "ok.toml").is_ok());
    let e = parse(&leaf_spine(8628), "big.toml").unwrap_err();
    assert_eq!((e.field.as_str(), e.line), ("topology.kind", Some(5)), "{e}");
    assert!(e.message.contains("69024 hosts and 8630 switches"), "{e}");
    // Counts whose product passes 2^32 (each in range): refused, not wrapped.
    let fat = GOOD.replace(
        "kind = \"incast\"\nsenders = 2",
        "kind = \"fat_tree\"\npods = 100000\ntors_per_pod = 100000\nhosts_per_tor = 100000\n\
         aggs_per_pod = 1\ncores_per_agg = 1",
    );
    let e = parse(&fat, "huge.toml").unwrap_err();
    assert_eq!(e.field, "topology.kind", "{e}");
}
