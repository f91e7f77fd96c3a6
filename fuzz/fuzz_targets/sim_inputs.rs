//! hal-sim's input files: a scenario, a connection matrix, an htsim
//! `.topo`, an ns-3 topology, ns-3 and CSV flow files, a flow-size CDF
//! and a uet-htsim command line (and the scenario it makes) each parse or
//! are refused with an error, never a panic (the first byte picks the
//! parser, the rest is the text). What parses keeps the bounds the simulator builds on: a shape
//! within the routing tables hal-sim builds, a matrix's flows between its
//! nodes, a small ns-3 network routed, a CDF's samples within its range.
#![no_main]
use hal_sim::setup::scenario::{self, check_size};
use hal_sim::setup::{connection_matrix, htsim_topo, topo, uet_htsim, workload};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    match which % 8 {
        0 => {
            if let Ok(s) = scenario::parse(text, "f.toml") {
                if let Some((hosts, switches)) = s.topology.shape.size() {
                    assert_eq!(check_size(hosts, switches), Ok(()));
                }
            }
        }
        1 => {
            if let Ok(m) = connection_matrix::parse(text, "f.cm") {
                for f in &m.flows {
                    assert!(f.src < m.nodes && f.dst < m.nodes && f.src != f.dst, "{f:?}");
                }
            }
        }
        2 => {
            if let Ok(r) = htsim_topo::resolve(text) {
                assert!(r.shape.size().is_some());
            }
        }
        3 => {
            if let Ok(mut n) = topo::ns3_topology(text) {
                if n.nodes.len() <= 64 {
                    n.compute_routes();
                }
            }
        }
        4 => {
            let _ = workload::ns3_flow_text(text, "f.txt", &|_| Ok(()));
        }
        5 => {
            let _ = workload::csv_flows(text, "f.csv", &|_| Ok(()));
        }
        6 => {
            if let Ok(c) = workload::SizeCdf::parse(text) {
                let (first, last) = (c.points[0].0, c.points[c.points.len() - 1].0);
                for u in [0.0, 0.25, 0.5, 0.999] {
                    let b = c.sample(u) as f64;
                    assert!(
                        !(b < first.floor() || b > last.ceil()),
                        "{b} outside {first} ..= {last}"
                    );
                }
            }
        }
        _ => {
            let args: Vec<String> = text.split_whitespace().map(String::from).collect();
            if let Ok(mut c) = uet_htsim::parse_args(&args) {
                // The scenario the line makes, on a stored matrix of 16
                // hosts and the fat-tree built for it (the fuzzer's file
                // names are not read).
                c.tm = "one.cm".into();
                c.topo = None;
                let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/reference/uet-htsim");
                let _ = uet_htsim::scenario(&c, &dir);
            }
        }
    }
});
