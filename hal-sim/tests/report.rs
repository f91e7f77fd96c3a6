//! What the reports say a flow should have taken.

mod common;

use hal_sim::output::report;
use hal_sim::setup::scenario::TimeNs;

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

/// A long run's queue plot stays small (each line thinned to what 800
/// pixels show, peaks kept), and the plots say what they show: the
/// scenario and the algorithm in every title, flow sizes in bytes with a
/// unit, slowdown from 1.
#[test]
fn plots_are_small_and_labelled() {
    // Samples every 100 ns over the 3.2 ms the flows take.
    let mut s = common::incast(4, 10_000_000, 20.0, 0);
    s.metrics.sample_ns = TimeNs(100);
    s.name = "plot-check".into();
    let (w, _) = common::run(&s);
    let dir = std::env::temp_dir().join(format!("hal-sim-plots-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    report::write_plots(&w, &s.name, &dir).unwrap();
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let samples: usize = w.metrics.ports.iter().map(|p| p.queue.len()).sum();
    assert!(samples > 20 * 800, "{samples} samples: too few to test the thinning");
    let queue = read("queue.svg");
    assert!(queue.len() < 100_000, "queue.svg is {} bytes", queue.len());
    for f in ["queue.svg", "window.svg", "window_rate.svg", "fct_slowdown.svg"] {
        assert!(read(f).contains("(plot-check, HPCC++)"), "{f} does not name the run");
    }
    let fct = read("fct_slowdown.svg");
    assert!(
        fct.contains("MB") || fct.contains("kB"),
        "fct_slowdown.svg's sizes carry no unit"
    );
    assert!(
        !fct.contains("000000.0"),
        "fct_slowdown.svg prints sizes as bare numbers"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Thinning keeps the ends, every column's extremes in order, and drops
/// the inside of flat runs.
#[test]
fn thinning_keeps_peaks_and_ends() {
    let mut pts: Vec<(f64, f64)> = (0..100_000).map(|i| (i as f64, 0.0)).collect();
    pts[50_001].1 = 7.0; // a one-sample peak
    pts[70_000].1 = -3.0; // a one-sample dip
    let t = report::thin(&pts, 100);
    assert!(t.len() < 20, "{} points", t.len());
    assert_eq!(t.first(), Some(&(0.0, 0.0)));
    assert_eq!(t.last(), Some(&(99_999.0, 0.0)));
    assert!(t.contains(&(50_001.0, 7.0)) && t.contains(&(70_000.0, -3.0)));
    assert!(t.windows(2).all(|w| w[0].0 < w[1].0), "not in x order");
    let noisy: Vec<(f64, f64)> = (0..100_000).map(|i| (i as f64, ((i * 7919) % 101) as f64)).collect();
    let t = report::thin(&noisy, 100);
    assert!(t.len() <= 2 * 100 + 2, "{} points", t.len());
    assert_eq!(t.iter().map(|p| p.1).fold(f64::MIN, f64::max), 100.0);
}

/// A one-packet flow smaller than the MTU finishes sooner than the ideal,
/// whose base RTT stores and forwards a full packet at each hop: its
/// slowdown counts as 1 and the summary counts it; flows that share a
/// link are slower than the ideal and are not counted.
#[test]
fn flows_faster_than_the_ideal_are_counted() {
    let (w, sum) = common::run(&common::incast(3, 200, 1.0, 0));
    let flows = report::flow_results(&w);
    assert!(flows.iter().all(|f| f.fct_ns.unwrap() < f.ideal_fct_ns), "{flows:?}");
    assert!(flows.iter().all(|f| f.slowdown == Some(1.0)));
    assert_eq!(sum.slowdown_clamped, 3);
    let (_, sum) = common::run(&common::incast(2, 1_000_000, 2.0, 0));
    assert_eq!((sum.slowdown_clamped, sum.flows_finished), (0, 2));
}

/// An NSCC incast's plots show its window beside the case of each ACK
/// (NSCC's four: ECN-Echo × the delay against the target): the traced
/// flows' ACKs are counted by case between samples, every case comes up
/// over uet-htsim's 15-to-1 incast, and nscc.svg draws them as shares of
/// the ACKs. A run of another algorithm counts none and draws no nscc.svg.
#[test]
fn an_nscc_incast_plots_its_window_and_each_acks_case() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let s = hal_sim::setup::scenario::load(&dir.join("uet-incast.toml")).unwrap();
    let mut w = hal_sim::run::world::World::new(&s, &dir, "uet-incast").unwrap();
    w.run(|_| {});
    let mut total = [0u32; 4];
    for tr in &w.metrics.traces {
        assert_eq!(tr.cases.len(), tr.t_ns.len(), "flow {}: a count at each sample", tr.id);
        for c in &tr.cases {
            for (t, n) in total.iter_mut().zip(c) {
                *t += n;
            }
        }
    }
    assert!(total.iter().all(|&n| n > 0), "every case: {total:?}");
    let shares = report::case_shares(&w.metrics.traces).unwrap();
    assert_eq!(shares.len(), 4);
    for (name, pts) in &shares {
        assert!(pts.iter().all(|&(_, v)| (0.0..=1.0).contains(&v)), "{name}");
    }
    // At each sample the four shares make the whole.
    for i in 0..shares[0].1.len() {
        let sum: f64 = shares.iter().map(|(_, p)| p[i].1).sum();
        assert!((sum - 1.0).abs() < 1e-9, "{sum}");
    }
    let out = std::env::temp_dir().join(format!("hal-sim-nscc-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    report::write_plots(&w, "uet-incast", &out).unwrap();
    // nscc.csv: each flow's window changes by rule, as the run summed them.
    assert!(report::write_nscc_csv(&w, &out.join("nscc.csv")).unwrap());
    let csv = std::fs::read_to_string(out.join("nscc.csv")).unwrap();
    let rows: Vec<Vec<i64>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 15);
    let nack: i64 = rows.iter().map(|r| r[9]).sum();
    let eta: i64 = rows.iter().map(|r| r[6]).sum();
    assert_eq!(nack, w.metrics.nscc.iter().map(|n| n.nack_dec as i64).sum::<i64>());
    // A NACK counts its packet's wire bytes (at most 4150), and eta came
    // at least once a flow.
    assert!(nack > 0 && nack <= w.metrics.counters.nacks as i64 * 4150, "{csv}");
    assert!(rows.iter().all(|r| r[6] > 0), "{eta}");
    let svg = std::fs::read_to_string(out.join("nscc.svg")).unwrap();
    for label in [
        "fair increase",
        "multiplicative decrease",
        "window (KB)",
        "share of the ACKs",
    ] {
        assert!(svg.contains(label), "{label}");
    }
    let _ = std::fs::remove_dir_all(&out);
    let (other, _) = common::run(&common::incast(2, 100_000, 2.0, 0));
    assert!(other.metrics.traces.iter().all(|t| t.cases.is_empty()));
    assert!(!report::write_nscc_csv(&other, &out.join("other.csv")).unwrap());
    assert!(report::case_shares(&other.metrics.traces).is_none());
}
