//! Reports: the run summary (terminal table and JSON with DESIGN §6's
//! keys), the per-flow CSV, and SVG plots (queue over time, window and rate
//! over time, FCT slowdown by flow size).

use std::io::Write;
use std::path::Path;

use plotters::prelude::*;
use serde::Serialize;

use crate::metrics::{ns, percentile, Counters, FlowResult, PortSeries};
use crate::world::World;

/// Percentiles of a distribution.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Pcts {
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Maximum.
    pub max: f64,
}

/// Utilization of one monitored port.
#[derive(Clone, Debug, Serialize)]
pub struct PortUtil {
    /// The port.
    pub port: String,
    /// Bytes sent / (capacity · time) from the warm-up to the port's last data packet.
    pub utilization: f64,
    /// The interval measured, ns.
    pub from_ns: f64,
    /// End of the interval, ns.
    pub to_ns: f64,
}

/// The run's headline figures.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Scenario name.
    pub scenario: String,
    /// Simulated time at the end, ns.
    pub sim_ns: f64,
    /// Wall-clock seconds of the simulation loop.
    pub wall_s: f64,
    /// Events handled.
    pub events: u64,
    /// Data packets sent.
    pub data_packets: u64,
    /// Data packets per CPU-second.
    pub data_packets_per_s: f64,
    /// Per monitored port, after the warm-up.
    pub link_utilization: Vec<PortUtil>,
    /// Queue samples of all monitored ports after the warm-up, bytes.
    pub queue_bytes: Pcts,
    /// FCT slowdown over finished flows.
    pub fct_slowdown: Pcts,
    /// Mean Jain index over windows after the warm-up.
    pub jain_fairness: f64,
    /// Drops, all causes.
    pub drops: u64,
    /// Retransmitted data packets.
    pub retransmits: u64,
    /// Flows that finished / all flows.
    pub flows_finished: usize,
    /// All flows.
    pub flows: usize,
    /// Every counter.
    pub counters: Counters,
}

/// Per-flow results.
pub fn flow_results(w: &World) -> Vec<FlowResult> {
    w.flows
        .iter()
        .map(|f| {
            let fct = f.finish_ps.map(|e| ns(e - f.start_ps));
            let pkts = f.size.div_ceil(w.cfg.payload as u64);
            let wire = f.size + pkts * (w.cfg.header as u64 + w.cfg.tel.wire_bytes(f.hops + 1) as u64);
            let ideal = f.base_rtt_ns as f64 + wire as f64 * 8.0 / f.bottleneck_bps as f64 * 1e9;
            FlowResult {
                id: f.id,
                src: f.src_host,
                dst: f.dst_host,
                bytes: f.size,
                start_ns: ns(f.start_ps),
                fct_ns: fct,
                slowdown: fct.map(|x| (x / ideal).max(1.0)),
                base_rtt_ns: f.base_rtt_ns as f64,
                retransmits: f.retransmits,
            }
        })
        .collect()
}

fn pcts(v: &[f64]) -> Pcts {
    Pcts {
        p50: percentile(v, 50.0),
        p95: percentile(v, 95.0),
        p99: percentile(v, 99.0),
        max: v.iter().copied().fold(0.0, f64::max),
    }
}

fn utilization(p: &PortSeries, warmup_ns: f64) -> Option<PortUtil> {
    let to = ns(p.last_data_ps);
    let i0 = p.t_ns.iter().position(|&t| t >= warmup_ns)?;
    let i1 = p.t_ns.iter().rposition(|&t| t <= to)?;
    if i1 <= i0 {
        return None;
    }
    let bytes = (p.tx_bytes[i1] - p.tx_bytes[i0]) as f64;
    let secs = (p.t_ns[i1] - p.t_ns[i0]) / 1e9;
    Some(PortUtil {
        port: p.name.clone(),
        utilization: bytes * 8.0 / (p.bps as f64 * secs),
        from_ns: p.t_ns[i0],
        to_ns: p.t_ns[i1],
    })
}

/// The summary of a finished run.
pub fn summary(w: &World, name: &str, wall_s: f64) -> Summary {
    let warm = ns(w.cfg.warmup_ps);
    let mut queue = Vec::new();
    for p in &w.metrics.ports {
        let to = ns(p.last_data_ps);
        queue.extend(
            p.t_ns
                .iter()
                .zip(&p.queue)
                .filter(|(t, _)| **t >= warm && **t <= to)
                .map(|(_, q)| *q as f64),
        );
    }
    let flows = flow_results(w);
    let slow: Vec<f64> = flows.iter().filter_map(|f| f.slowdown).collect();
    let jain: Vec<f64> = w
        .metrics
        .jain
        .iter()
        .filter(|(t, _, _)| *t >= warm)
        .map(|(_, j, _)| *j)
        .collect();
    let c = w.metrics.counters;
    Summary {
        scenario: name.into(),
        sim_ns: ns(w.now),
        wall_s,
        events: w.q.handled(),
        data_packets: c.data_packets,
        data_packets_per_s: c.data_packets as f64 / wall_s.max(1e-9),
        link_utilization: w.metrics.ports.iter().filter_map(|p| utilization(p, warm)).collect(),
        queue_bytes: pcts(&queue),
        fct_slowdown: pcts(&slow),
        jain_fairness: if jain.is_empty() {
            1.0
        } else {
            jain.iter().sum::<f64>() / jain.len() as f64
        },
        drops: c.drops,
        retransmits: c.retransmits,
        flows_finished: flows.iter().filter(|f| f.fct_ns.is_some()).count(),
        flows: flows.len(),
        counters: c,
    }
}

/// The summary as a terminal table.
pub fn table(s: &Summary) -> String {
    let mut out = String::new();
    let mut row = |k: &str, v: String| out.push_str(&format!("  {k:<28} {v}\n"));
    row("scenario", s.scenario.clone());
    row("simulated", format!("{:.3} ms", s.sim_ns / 1e6));
    row("flows finished", format!("{} / {}", s.flows_finished, s.flows));
    if s.link_utilization.len() <= 4 {
        for u in &s.link_utilization {
            row(
                "utilization",
                format!(
                    "{:.1} %  {}  ({:.2}-{:.2} ms)",
                    u.utilization * 100.0,
                    u.port,
                    u.from_ns / 1e6,
                    u.to_ns / 1e6
                ),
            );
        }
    } else if let Some(top) = s
        .link_utilization
        .iter()
        .max_by(|a, b| a.utilization.total_cmp(&b.utilization))
    {
        let mean = s.link_utilization.iter().map(|u| u.utilization).sum::<f64>() / s.link_utilization.len() as f64;
        row(
            "utilization",
            format!(
                "{} monitored ports: mean {:.1} %, max {:.1} % ({}); all in the JSON",
                s.link_utilization.len(),
                mean * 100.0,
                top.utilization * 100.0,
                top.port
            ),
        );
    }
    let q = s.queue_bytes;
    row(
        "queue p50 / p99 / max",
        format!("{:.0} / {:.0} / {:.0} B", q.p50, q.p99, q.max),
    );
    let f = s.fct_slowdown;
    row(
        "FCT slowdown p50/p95/p99",
        format!("{:.2} / {:.2} / {:.2}", f.p50, f.p95, f.p99),
    );
    row("Jain fairness (mean)", format!("{:.3}", s.jain_fairness));
    row("ECN marks", s.counters.ecn_marks.to_string());
    row(
        "drops (fast start / stable)",
        format!(
            "{} ({} / {})",
            s.drops, s.counters.drops_fast_start, s.counters.drops_stable
        ),
    );
    row(
        "retransmits / timeouts",
        format!("{} / {}", s.retransmits, s.counters.timeouts),
    );
    row(
        "integrity rejects / replays",
        format!("{} / {}", s.counters.bad_tags, s.counters.replayed_feedback),
    );
    if s.counters.probe_replies + s.counters.probes_lost > 0 {
        row(
            "probe replies / lost",
            format!("{} / {}", s.counters.probe_replies, s.counters.probes_lost),
        );
    }
    row("events / data packets", format!("{} / {}", s.events, s.data_packets));
    row(
        "speed",
        format!(
            "{:.2} M data packets per CPU-second ({:.2} s)",
            s.data_packets_per_s / 1e6,
            s.wall_s
        ),
    );
    out
}

/// Writes the per-flow CSV.
pub fn write_csv(w: &World, path: &Path) -> std::io::Result<()> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(f, "flow,src,dst,bytes,start_ns,fct_ns,slowdown,base_rtt_ns,retransmits")?;
    for r in flow_results(w) {
        let fct = r.fct_ns.map_or(String::new(), |x| format!("{x:.1}"));
        let sd = r.slowdown.map_or(String::new(), |x| format!("{x:.4}"));
        writeln!(
            f,
            "{},{},{},{},{:.1},{},{},{:.1},{}",
            r.id, r.src, r.dst, r.bytes, r.start_ns, fct, sd, r.base_rtt_ns, r.retransmits
        )?;
    }
    f.flush()
}

type PlotResult = Result<(), Box<dyn std::error::Error>>;

fn line_plot(path: &Path, title: &str, y_label: &str, series: &[(String, Vec<(f64, f64)>)]) -> PlotResult {
    let root = SVGBackend::new(path, (900, 480)).into_drawing_area();
    root.fill(&WHITE)?;
    let xs = series.iter().flat_map(|(_, v)| v.iter().map(|p| p.0));
    let ys = series.iter().flat_map(|(_, v)| v.iter().map(|p| p.1));
    let (x0, x1) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
    let y1 = ys.fold(0.0f64, f64::max).max(1e-9) * 1.05;
    let (x0, x1) = if x0 < x1 { (x0, x1) } else { (0.0, 1.0) };
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, 0.0..y1)?;
    chart.configure_mesh().x_desc("time (ms)").y_desc(y_label).draw()?;
    for (i, (name, pts)) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))?
            .label(name.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .draw()?;
    root.present()?;
    Ok(())
}

/// Writes queue.svg, window_rate.svg and fct_slowdown.svg into `dir`.
pub fn write_plots(w: &World, dir: &Path) -> PlotResult {
    let queues: Vec<(String, Vec<(f64, f64)>)> = w
        .metrics
        .ports
        .iter()
        .take(6)
        .map(|p| {
            (
                p.name.clone(),
                p.t_ns
                    .iter()
                    .zip(&p.queue)
                    .map(|(t, q)| (t / 1e6, *q as f64 / 1e3))
                    .collect(),
            )
        })
        .collect();
    line_plot(
        &dir.join("queue.svg"),
        "Queue at monitored ports",
        "queue (KB)",
        &queues,
    )?;
    // One series per traced flow, `value` picking the quantity.
    let traces =
        |label: &str, value: &dyn Fn(&crate::metrics::FlowTrace, usize) -> f64| -> Vec<(String, Vec<(f64, f64)>)> {
            w.metrics
                .traces
                .iter()
                .map(|tr| {
                    (
                        format!("flow {} {label}", tr.id),
                        (0..tr.t_ns.len()).map(|i| (tr.t_ns[i] / 1e6, value(tr, i))).collect(),
                    )
                })
                .collect()
        };
    let rates = traces("rate", &|tr, i| tr.rate_gbps[i]);
    line_plot(
        &dir.join("window_rate.svg"),
        "Pacing rate of traced flows (R = W/T for HPCC++)",
        "rate (Gb/s)",
        &rates,
    )?;
    let windows = traces("window", &|tr, i| tr.window[i] / 1e3);
    line_plot(
        &dir.join("window.svg"),
        "Window of traced flows",
        "window (KB)",
        &windows,
    )?;
    // FCT slowdown by flow size (log x).
    let pts: Vec<(f64, f64)> = flow_results(w)
        .iter()
        .filter_map(|f| Some((f.bytes as f64, f.slowdown?)))
        .collect();
    let fct_path = dir.join("fct_slowdown.svg");
    let root = SVGBackend::new(&fct_path, (900, 480)).into_drawing_area();
    root.fill(&WHITE)?;
    let (xmin, xmax) = pts
        .iter()
        .fold((f64::MAX, 1.0f64), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let ymax = pts.iter().map(|p| p.1).fold(1.0f64, f64::max) * 1.1;
    let mut chart = ChartBuilder::on(&root)
        .caption("FCT slowdown by flow size", ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d((xmin.min(xmax * 0.5).max(1.0)..xmax * 1.5).log_scale(), 0.0..ymax)?;
    chart
        .configure_mesh()
        .x_desc("flow size (bytes)")
        .y_desc("slowdown")
        .draw()?;
    chart.draw_series(pts.iter().map(|p| Circle::new(*p, 3, BLUE.filled())))?;
    root.present()?;
    Ok(())
}
