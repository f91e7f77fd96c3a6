//! The `hal-sim run` command as a user meets it.

use std::path::PathBuf;
use std::process::Command;

mod common;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hal-sim"))
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hal-sim-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A 5 ms HPCC++ 2-to-1 of 2 MB flows.
fn small() -> String {
    common::incast_text(2, 2_000_000, 5.0, 0, "", "")
}

#[test]
fn a_malformed_scenario_names_file_line_and_field() {
    let d = tmp("bad");
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
    let d = tmp("good");
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
    let d = tmp("det");
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
