//! The `hal-sim run` command as a user meets it.

use std::process::Command;

mod common;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hal-sim"))
}

/// A folder of the test's own under the system's temporary folder,
/// removed when the test ends.
fn tmp(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("hal-sim-cli-{name}-"))
        .tempdir()
        .unwrap()
}

/// A 5 ms HPCC++ 2-to-1 of 2 MB flows.
fn small() -> String {
    common::incast_text(2, 2_000_000, 5.0, 0, "", "")
}

#[test]
fn a_malformed_scenario_names_file_line_and_field() {
    let dir = tmp("bad");
    let d = dir.path();
    let f = d.join("bad.toml");
    std::fs::write(&f, small().replace("link_gbps = 100", "link_gbps = \"fast\"")).unwrap();
    let out = bin().args(["run", f.to_str().unwrap(), "--quiet"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{}:6: topology.link_gbps:", f.display())),
        "{err}"
    );
    let out = bin()
        .args(["run", d.join("missing.toml").to_str().unwrap()])
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.toml"));
}

#[test]
fn a_run_prints_the_table_and_writes_json_csv_and_plots() {
    let dir = tmp("good");
    let d = dir.path();
    let f = d.join("small.toml");
    std::fs::write(&f, small()).unwrap();
    let json = d.join("out.json");
    let out = bin()
        .args([
            "run",
            f.to_str().unwrap(),
            "--quiet",
            "--json",
            json.to_str().unwrap(),
            "--out",
            d.join("o").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("utilization") && table.contains("flows finished               2 / 2"),
        "{table}"
    );
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for key in [
        "sim_ns",
        "wall_s",
        "events",
        "data_packets",
        "link_utilization",
        "queue_bytes",
        "fct_slowdown",
        "jain_fairness",
        "drops",
        "retransmits",
    ] {
        assert!(v.get(key).is_some(), "JSON lacks {key}");
    }
    for key in ["p50", "p99", "max"] {
        assert!(v["queue_bytes"].get(key).is_some());
    }
    for key in ["p50", "p95", "p99"] {
        assert!(v["fct_slowdown"].get(key).is_some());
    }
    let csv = std::fs::read_to_string(d.join("o/flows.csv")).unwrap();
    assert_eq!(csv.lines().count(), 3, "{csv}");
    for svg in ["queue.svg", "window.svg", "window_rate.svg", "fct_slowdown.svg"] {
        let s = std::fs::read_to_string(d.join("o").join(svg)).unwrap();
        assert!(
            s.starts_with("<svg") && s.contains("polyline") || s.contains("circle"),
            "{svg}"
        );
    }
}

#[test]
fn the_same_seed_gives_the_same_run() {
    let dir = tmp("det");
    let d = dir.path();
    let f = d.join("small.toml");
    std::fs::write(&f, small()).unwrap();
    let run = || {
        let out = bin()
            .args([
                "run",
                f.to_str().unwrap(),
                "--quiet",
                "--out",
                d.join("o").to_str().unwrap(),
            ])
            .output()
            .unwrap();
        assert!(out.status.success());
        std::fs::read_to_string(d.join("o/flows.csv")).unwrap()
    };
    assert_eq!(run(), run());
}

/// A flow file of the HPCC reference simulator in, its FCT file out: the
/// flow count, then `src dst pg dport bytes start_s` per flow (the
/// reference's traffic generator writes pg 3 and dport 100); back come
/// `sip dip sport dport bytes start_ns fct_ns standalone_ns` lines, the
/// addresses as the reference numbers its nodes (node n: 0x0b000001 +
/// (n / 256)·0x10000 + (n mod 256)·0x100), source ports from 10000 per
/// source.
#[test]
fn an_ns3_flow_file_in_and_its_fct_file_out() {
    let dir = tmp("ns3");
    let d = dir.path();
    std::fs::write(
        d.join("flows.txt"),
        "3\n1 0 3 100 200000 0.000001\n2 0 3 100 100000 0.000002\n1 0 3 7 5000 0.000003\n",
    )
    .unwrap();
    let text = small().replace(
        "kind = \"incast\"\nbytes = 2000000",
        "kind = \"ns3\"\npath = \"flows.txt\"",
    );
    assert!(text.contains("kind = \"ns3\""), "{text}");
    let f = d.join("ns3.toml");
    std::fs::write(&f, text).unwrap();
    let fct = d.join("fct.txt");
    let out = bin()
        .args(["run", f.to_str().unwrap(), "--quiet", "--fct", fct.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<Vec<String>> = std::fs::read_to_string(&fct)
        .unwrap()
        .lines()
        .map(|l| l.split(' ').map(String::from).collect())
        .collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    let by_size = |bytes: &str| lines.iter().find(|l| l[4] == bytes).unwrap();
    let (a, b, c) = (by_size("200000"), by_size("100000"), by_size("5000"));
    // Host 1 → host 0, host 2 → host 0.
    assert_eq!((a[0].as_str(), a[1].as_str()), ("0b000101", "0b000001"));
    assert_eq!(b[0], "0b000201");
    // Source ports in each source's order; destination ports as given.
    assert_eq!(
        (a[2].as_str(), c[2].as_str(), b[2].as_str()),
        ("10000", "10001", "10000")
    );
    assert_eq!((a[3].as_str(), c[3].as_str()), ("100", "7"));
    assert_eq!((a[5].as_str(), b[5].as_str(), c[5].as_str()), ("1000", "2000", "3000"));
    for l in &lines {
        let (fct, ideal): (u64, u64) = (l[6].parse().unwrap(), l[7].parse().unwrap());
        assert!(fct >= ideal && ideal > 4_000, "{l:?}");
    }
    // A malformed line is refused with the flow file's name and line.
    std::fs::write(d.join("flows.txt"), "2\n1 0 3 100 200000 0.000001\n1 0 3 100 x 0\n").unwrap();
    let out = bin().args(["run", f.to_str().unwrap(), "--quiet"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("flows.txt:3"), "{err}");
}

/// A sweep runs every point of its grid (or its shard of it), writes a file
/// per point with the values it set, plots the first axis, and refuses a
/// value out of range before running anything.
#[test]
fn a_sweep_runs_its_grid_and_its_shards() {
    let dir = tmp("sweep");
    let d = dir.path();
    let f = d.join("small.toml");
    std::fs::write(&f, common::incast_text(2, 100_000, 5.0, 0, "", "")).unwrap();
    let sweep = |extra: &[&str], out: &str| {
        let mut args = vec![
            "sweep",
            f.to_str().unwrap(),
            "--vary",
            "workload.bytes=100000,300000",
            "--vary",
            "cc.mode=sender,rx_hpcc",
            "--jobs",
            "2",
            "--out",
        ];
        let out = d.join(out);
        let out_s = out.to_str().unwrap().to_string();
        args.push(&out_s);
        args.extend_from_slice(extra);
        let o = bin().args(&args).output().unwrap();
        (o, out)
    };
    let (o, out) = sweep(&[], "all");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let point = |out: &std::path::Path, i: usize| -> String {
        std::fs::read_to_string(out.join(format!("point-{i:04}.json"))).unwrap()
    };
    // Four points, the last axis innermost; the bytes reached the run.
    let packets = |text: &str| -> u64 {
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        v["summary"]["Ok"]["data_packets"].as_u64().unwrap()
    };
    let (p0, p3) = (point(&out, 0), point(&out, 3));
    assert!(p0.contains("\"sender\"") && p3.contains("\"rx_hpcc\""), "{p0}\n{p3}");
    assert_eq!((packets(&p0), packets(&p3)), (200, 600));
    assert!(out.join("sweep.svg").exists());
    // Shard 1 of 2: the odd points only, numbered as in the whole grid.
    let (o, out) = sweep(&["--shard", "1/2"], "shard");
    assert!(o.status.success());
    let mut files: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".json"))
        .collect();
    files.sort();
    assert_eq!(files, ["point-0001.json", "point-0003.json"]);
    assert_eq!(packets(&point(&out, 3)), packets(&p3));
    // A value out of range: refused, naming the point and the field.
    let o = bin()
        .args([
            "sweep",
            f.to_str().unwrap(),
            "--vary",
            "cc.eta=0.9,1.5",
            "--out",
            d.join("bad").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("cc.eta=1.5") && err.contains("cc.eta"), "{err}");
    // A baseline runs once, after the grid, and its level lines join the
    // short and long flows' p99 lines in the plot, named as asked; the
    // other lines by the word that tells them apart, without quotes.
    let base = d.join("base.toml");
    std::fs::write(&base, common::incast_text(2, 200_000, 5.0, 0, "", "")).unwrap();
    let (o, out) = sweep(
        &[
            "--baseline",
            base.to_str().unwrap(),
            "--baseline-name",
            "reference run",
            "--plot",
            "short-long",
        ],
        "base",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let last = point(&out, 4);
    assert!(
        last.contains("\"baseline\": true") && last.contains("base.toml"),
        "{last}"
    );
    assert!(!out.join("point-0005.json").exists());
    let svg = std::fs::read_to_string(out.join("sweep.svg")).unwrap();
    // Each text of the picture on a line of its own.
    let texts: Vec<&str> = svg.lines().map(str::trim).collect();
    for name in ["sender", "rx_hpcc", "reference run"] {
        assert!(texts.contains(&name), "the legend names {name}");
    }
    assert!(
        !svg.contains("&quot;") && !svg.contains("small"),
        "the legend says no more"
    );
    assert!(
        texts.contains(&"short flows (≤ 30 kB), p99")
            && (texts.contains(&"long flows (&gt; 1 MB), p99") || texts.contains(&"long flows (> 1 MB), p99")),
        "the panels' titles"
    );
}

/// What uet-htsim's `validate.py` reads of an output, by its own rules:
/// each line with `finished` is a flow, its FCT the ninth word and, if
/// it says `total messages`, its count of connections the twelfth; the
/// last line with `New:` and `Rtx:` is the summary. The FCTs in order,
/// the connections, the summary.
fn as_validate_reads(out: &str) -> (Vec<f64>, u32, String) {
    let (mut fcts, mut conns, mut summary) = (Vec::new(), 0, String::new());
    for line in out.lines() {
        if line.contains("finished") {
            let w: Vec<&str> = line.split_whitespace().collect();
            fcts.push(w[8].parse::<f64>().unwrap());
            if line.contains("total messages") {
                assert_eq!((w[9], w[10]), ("total", "messages"), "{line}");
                conns += w[11].parse::<u32>().unwrap();
            } else {
                conns += 1;
            }
        } else if line.contains("New:") && line.contains("Rtx:") {
            summary = line.to_string();
        }
    }
    (fcts, conns, summary)
}

/// uet-htsim's own command lines, from its validation plan, run as they
/// are in the folder of its matrices: what its `validate.py` reads gives
/// uet-htsim's figures (one.cm: 176.2 µs, `New: 490 Rtx: 0 … ACKs: 124
/// NACKs: 0`; incast.cm: 2478.53 µs, 15 connections, 811 NACKs).
#[test]
fn uet_htsim_command_lines_print_what_validate_reads() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios/reference/uet-htsim");
    let uet = |flags: &str| {
        bin()
            .current_dir(dir)
            .arg("uet-htsim")
            .args(flags.split_whitespace())
            .output()
            .unwrap()
    };
    let run = |flags: &str| {
        let out = uet(flags);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        as_validate_reads(&String::from_utf8_lossy(&out.stdout))
    };
    // NSCC at the sender alone is uet-htsim's default: the same run with
    // -sender_cc_only or without it.
    for line in ["-tm one.cm -end 1000 -sender_cc_only", "-tm one.cm -end 1000"] {
        let (fcts, conns, summary) = run(line);
        assert_eq!((fcts, conns), (vec![176.2], 1), "{line}");
        assert_eq!(
            summary, "New: 490 Rtx: 0 RTS: 0 Bounced: 0 ACKs: 124 NACKs: 0 Pulls: 0 sleek_pkts: 0",
            "{line}"
        );
    }
    let (fcts, conns, summary) = run("-tm incast.cm -sender_cc_only -end 3000");
    assert_eq!((fcts.len(), conns), (15, 15));
    assert!(fcts.windows(2).all(|w| w[0] <= w[1]), "in finishing order: {fcts:?}");
    let tail = fcts[14];
    assert!((tail / 2478.53 - 1.0).abs() < 0.10, "{tail}");
    let w: Vec<&str> = summary.split_whitespace().collect();
    assert_eq!((w[0], w[1]), ("New:", "7350"), "{summary}");
    let nacks: f64 = w[11].parse().unwrap();
    assert!((nacks / 811.0 - 1.0).abs() < 0.30, "{summary}");

    // `-cwnd`: the first window in packets (uet-htsim's 3-to-1 run of
    // its plan: 221.731 µs, 614 new packets, 80 NACKs).
    let (fcts, conns, summary) = run("-tm incast_3-1_overlapped.tm -sender_cc_only -end 1000 -cwnd 50");
    assert_eq!((fcts.len(), conns), (3, 3));
    assert!((fcts[2] / 221.731 - 1.0).abs() < 0.10, "{fcts:?}");
    let w: Vec<&str> = summary.split_whitespace().collect();
    assert_eq!((w[0], w[1]), ("New:", "614"), "{summary}");
    let nacks: f64 = w[11].parse().unwrap();
    assert!((nacks / 80.0 - 1.0).abs() < 0.30, "{summary}");

    // -disable_trim -sleek: ports that drop, and SLEEK (uet-htsim's run
    // of its SLEEK plan: 2456.3 µs, 485 resends, all SLEEK's, no NACK).
    let (fcts, conns, summary) = run("-tm incast.cm -sender_cc_only -sleek -disable_trim -q 190 -end 3000");
    assert_eq!((fcts.len(), conns), (15, 15));
    assert!((fcts[14] / 2456.3 - 1.0).abs() < 0.10, "{fcts:?}");
    let w: Vec<&str> = summary.split_whitespace().collect();
    assert_eq!(
        (w[0], w[1], w[10], w[11], w[14]),
        ("New:", "7350", "NACKs:", "0", "sleek_pkts:"),
        "{summary}"
    );
    let sleek: f64 = w[15].parse().unwrap();
    assert!((sleek / 485.0 - 1.0).abs() < 0.30, "{summary}");

    // What hal-sim does not model, or uet-htsim refuses, is refused by
    // name.
    for (flags, named) in [
        ("-tm one.cm -sender_cc_only -q 24", "-q 24"),
        ("-tm one.cm -sender_cc_only -ecn 20 10", "-ecn"),
        ("-tm one.cm -sender_cc_only -conn_reuse", "-conn_reuse"),
        ("-tm one.cm -sender_cc_only -cwnd 100000", "-cwnd"),
        ("-tm one.cm -receiver_cc_only", "-receiver_cc_only"),
        ("-tm one.cm -switch_latency 0.0001", "-switch_latency"),
        (
            "-tm one.cm -sender_cc_only -load_balancing_algo reps_legacy",
            "reps_legacy",
        ),
        (
            "-tm incast_3-1_overlapped.tm -sender_cc_only -linkspeed 100",
            "-linkspeed",
        ),
    ] {
        let out = uet(flags);
        assert_eq!(out.status.code(), Some(2), "{flags}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(named), "{flags}: {err}");
    }
}
