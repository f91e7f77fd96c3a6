//! `hal-sim run SCENARIO.toml [--json FILE] [--out DIR] [--fct FILE] [--record FILE] [--cosim ELF]`
//! `hal-sim sweep SCENARIO.toml… --vary FIELD=V1,V2,… [--baseline FILE [--baseline-name NAME]] [--plot all|short-long|tail] [--shard I/N] [--jobs N] --out DIR`
//! `hal-sim uet-htsim -tm FILE -sender_cc_only [uet-htsim's flags…]`

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use hal_sim::output::trace::Selection;
use hal_sim::{output::report, run::world::World, setup::scenario};
use indicatif::{ProgressBar, ProgressStyle};

/// Packet-level datacenter simulator driving the cc-core engine.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a scenario: a summary table on the terminal, optional JSON, and
    /// with --out a per-flow CSV and SVG plots.
    Run(RunArgs),
    /// Run a grid: every scenario file with every combination of the
    /// varied fields' values, on all cores; one JSON per point in --out,
    /// and sweep.svg (FCT slowdown against the first varied field).
    Sweep(SweepArgs),
    /// Run a uet-htsim command line (`htsim_uec`'s flags: -tm FILE
    /// [-topo FILE] [-paths N] [-linkspeed MBPS] [-failed N]
    /// [-load_balancing_algo NAME] [-sack_threshold B] [-end US] [-seed N]
    /// [-mtu B] [-q PKTS] [-queue_size_bdp_factor N] [-ecn LOW HIGH]
    /// [-trimsize B] [-hop_latency US] [-cwnd PKTS] [-target_q_delay US]
    /// [-qa_gate N] [-disable_trim] [-sleek] [-sender_cc_only] …; each
    /// of its flags is read or refused with why, docs/scenarios.md): each
    /// finished flow's line and the packet counts as uet-htsim prints them
    /// (its validate.py reads them); hal-sim's table on standard error.
    #[command(name = "uet-htsim")]
    UetHtsim(UetArgs),
}

/// `hal-sim uet-htsim`'s arguments: uet-htsim's own.
#[derive(Args)]
struct UetArgs {
    /// uet-htsim's flags, as its `htsim_uec` takes them.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    flags: Vec<String>,
}

/// `hal-sim run`'s arguments.
#[derive(Args)]
struct RunArgs {
    /// The scenario file (TOML).
    scenario: PathBuf,
    /// Write the summary as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write flows.csv and the plots into this directory.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Write the finished flows in the HPCC reference simulator's (ns-3)
    /// FCT file format here: sip dip sport dport bytes start_ns fct_ns
    /// standalone_ns.
    #[arg(long, value_name = "FILE")]
    fct: Option<PathBuf>,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
    /// Record the engine events of the selected host and flows here, in
    /// the firmware codec (replay it into nic-firmware's `replay` image).
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
    /// Run the selected host and flows' congestion control in this
    /// nic-firmware `replay` image under QEMU (co-simulation).
    #[arg(long, value_name = "ELF")]
    cosim: Option<PathBuf>,
    /// The QEMU runner for --cosim.
    #[arg(long, value_name = "SCRIPT", default_value = "nic-firmware/scripts/qemu.sh")]
    runner: PathBuf,
    /// The host whose engine --record/--cosim take (default: every host;
    /// name one when a flow also has receiver state: Rx-HPCC, probe mode).
    #[arg(long)]
    host: Option<u32>,
    /// The flows --record/--cosim take, e.g. 0,3 (default: all).
    #[arg(long, value_delimiter = ',')]
    flows: Option<Vec<u32>>,
}

/// `hal-sim sweep`'s arguments.
#[derive(Args)]
struct SweepArgs {
    /// The scenario files (one line of the plot each, e.g. one per
    /// algorithm).
    #[arg(required = true)]
    scenarios: Vec<PathBuf>,
    /// A field and its values, as in a scenario file:
    /// `workload.load=0.3,0.5`; repeat for more axes (`seed=1,2,3`
    /// averages the plot over seeds).
    #[arg(long, value_name = "FIELD=V1,V2,…")]
    vary: Vec<String>,
    /// Run this machine's share of the grid: points whose number is I
    /// modulo N (the numbering is the whole grid's).
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
    /// Runs at a time (default: the cores there are).
    #[arg(long)]
    jobs: Option<usize>,
    /// Where the point files and the plot go.
    #[arg(long)]
    out: PathBuf,
    /// What the plot shows: `all` (slowdown p50 and p99 over all flows),
    /// `short-long` (p99 of flows ≤ 30 kB and of flows > 1 MB) or `tail`
    /// (the last flow's and p99).
    #[arg(long, value_enum, default_value = "all")]
    plot: PlotArg,
    /// A reference scenario, run once (per seed if `seed` is varied) and
    /// drawn as a level line across the plot: e.g. the same run without
    /// the field the sweep varies. Repeat for more.
    #[arg(long, value_name = "FILE")]
    baseline: Vec<PathBuf>,
    /// The baselines' name in the plot's legend (e.g. `unlimited` for the
    /// run with no congestion-control processor).
    #[arg(long, value_name = "NAME", default_value = "baseline")]
    baseline_name: String,
}

/// `hal-sim sweep --plot`.
#[derive(Clone, Copy, clap::ValueEnum)]
enum PlotArg {
    All,
    ShortLong,
    Tail,
}

/// `println!` that ends the program quietly when standard output is
/// closed (`hal-sim run … | head`) instead of panicking.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write;
        if writeln!(std::io::stdout(), $($arg)*).is_err() {
            return ExitCode::SUCCESS;
        }
    }};
}

fn main() -> ExitCode {
    match Cli::parse().cmd {
        Cmd::Run(a) => run(a),
        Cmd::Sweep(a) => sweep(a),
        Cmd::UetHtsim(a) => uet_htsim(a),
    }
}

/// `hal-sim uet-htsim`.
fn uet_htsim(a: UetArgs) -> ExitCode {
    use hal_sim::setup::uet_htsim;
    let cwd = std::path::Path::new(".");
    let s = match uet_htsim::parse_args(&a.flags).and_then(|c| uet_htsim::scenario(&c, cwd)) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let t0 = hal_sim::run::cpu::Stopwatch::start();
    let mut w = match World::new(&s, cwd, "uet-htsim") {
        Ok(w) => w,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    w.run(|_| {});
    say!("{}", uet_htsim::report(&w, s.nic.payload_bytes.0).trim_end());
    // hal-sim's own table goes to standard error: its `flows finished`
    // row would read as a flow to validate.py, which reads standard output.
    let sum = report::summary(&w, &s.name, &t0);
    eprintln!("{}", report::table(&sum));
    ExitCode::SUCCESS
}

/// `hal-sim sweep`.
fn sweep(a: SweepArgs) -> ExitCode {
    use hal_sim::output::sweep;
    let SweepArgs {
        scenarios: files,
        vary,
        shard,
        jobs,
        out,
        plot,
        baseline,
        baseline_name,
    } = a;
    let plot = match plot {
        PlotArg::All => sweep::Plot::All,
        PlotArg::ShortLong => sweep::Plot::ShortLong,
        PlotArg::Tail => sweep::Plot::Tail,
    };
    let (shard, out) = (shard.as_deref(), out.as_path());
    let axes = match vary
        .iter()
        .map(|v| sweep::Axis::parse(v))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let mut points = sweep::grid(&files, &axes);
    // The baselines vary only by seed, numbered after the grid.
    let seeds: Vec<sweep::Axis> = axes.iter().filter(|a| a.field == "seed").cloned().collect();
    for mut p in sweep::grid(&baseline, &seeds) {
        p.index += points.len();
        p.baseline = true;
        points.push(p);
    }
    let all = points.len();
    if let Some(spec) = shard {
        points = match sweep::shard(points, spec) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        };
    }
    // Every point's scenario is checked before anything runs.
    for p in &points {
        if let Err(e) = p.scenario() {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    }
    let jobs = jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    say!(
        "{} of {all} points, {jobs} at a time, into {}",
        points.len(),
        out.display()
    );
    let outcomes = match sweep::run(&points, jobs, out, |o| match &o.summary {
        Ok(s) => {
            let by_size: Vec<String> = s
                .slowdown_by_size
                .iter()
                .filter(|b| b.flows > 0)
                .map(|b| match b.upto_bytes {
                    Some(u) => format!("≤{} {:.2}", report::bytes(u), b.p99),
                    None => format!(">{} {:.2}", report::bytes(b.from_bytes), b.p99),
                })
                .collect();
            eprintln!(
                "  {}: slowdown p50 {:.2} p99 {:.2}, {} / {} flows finished; p99 by size: {}",
                o.point.label(),
                s.fct_slowdown.p50,
                s.fct_slowdown.p99,
                s.flows_finished,
                s.flows,
                by_size.join(", ")
            )
        }
        Err(e) => eprintln!("  {}: {e}", o.point.label()),
    }) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {}: {e}", out.display());
            return ExitCode::FAILURE;
        }
    };
    let failed = outcomes.iter().filter(|o| o.summary.is_err()).count();
    let panels = axes
        .first()
        .and_then(|x| sweep::panels(&outcomes, &x.field, plot, &baseline_name).map(|p| (p, x)));
    match panels {
        Some((panels, x)) => {
            let path = out.join("sweep.svg");
            let title = match axes.iter().find(|a| a.field == "seed" && a.field != x.field) {
                Some(seeds) => format!("{}, each point the mean of {} seeds", plot.title(), seeds.values.len()),
                None => plot.title().to_string(),
            };
            let dashed: Vec<String> = panels
                .iter()
                .flat_map(|(_, lines)| lines.iter().map(|(n, _)| n.clone()))
                .filter(|n| n == &baseline_name || n.starts_with(&format!("{baseline_name} ")))
                .collect();
            let x_label = x.field.rsplit('.').next().unwrap_or(&x.field);
            if let Err(e) = report::panel_plot(&path, &title, x_label, "FCT slowdown", &panels, &dashed) {
                eprintln!("error: {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
            say!("wrote {} point files and {}", outcomes.len(), path.display());
        }
        _ => say!(
            "wrote {} point files (no plot: the first varied field is not a number)",
            outcomes.len()
        ),
    }
    if failed > 0 {
        eprintln!("error: {failed} point(s) failed");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

/// `hal-sim run`.
fn run(a: RunArgs) -> ExitCode {
    let RunArgs {
        scenario: path,
        json,
        out,
        fct,
        quiet,
        record,
        cosim,
        runner,
        host,
        flows,
    } = a;
    let s = match scenario::load(&path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let dir = path.parent().map(PathBuf::from).unwrap_or_default();
    let mut w = match World::new(&s, &dir, &path.display().to_string()) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let selection = Selection { host, flows };
    if record.is_some() {
        if let Err(e) = w.record(selection.clone()) {
            eprintln!("error: --record: {e}");
            return ExitCode::FAILURE;
        }
    }
    if let Some(elf) = &cosim {
        if let Err(e) = w.cosimulate(&runner, elf, selection) {
            eprintln!("error: co-simulation: {e}");
            return ExitCode::FAILURE;
        }
    }
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(w.flows.len() as u64)
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} flows finished {pos}/{len} [{bar:40}] {msg} elapsed {elapsed_precise}, ETA {eta}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    let t0 = hal_sim::run::cpu::Stopwatch::start();
    w.run(|p| {
        bar.set_position(p.finished as u64);
        bar.set_message(format!("at {:.3} ms simulated", p.now.as_ns_f64() / 1e6));
    });
    bar.finish_and_clear();
    let sum = report::summary(&w, &s.name, &t0);
    say!("{}", report::table(&sum));
    if let Some(fw) = w.tap.cosim.take() {
        let (rate, waited) = (fw.events_per_second(), fw.waited.as_secs_f64());
        match fw.finish() {
            Ok(n) => say!(
                "co-simulation: the firmware answered {n} events in {waited:.2} s of round trips: \
                 {rate:.0} events per second (target ≥ 20 000)"
            ),
            Err(e) => {
                eprintln!("error: co-simulation: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    if let (Some(file), Some(t)) = (&record, w.tap.trace.take()) {
        let n = t.events();
        if let Err(e) = std::fs::write(file, t.finish()) {
            eprintln!("error: {}: {e}", file.display());
            return ExitCode::FAILURE;
        }
        say!("recorded {n} engine events to {}", file.display());
    }
    if let Some(j) = json {
        let text = serde_json::to_string_pretty(&sum).expect("summary serializes");
        if let Err(e) = std::fs::write(&j, text + "\n") {
            eprintln!("error: {}: {e}", j.display());
            return ExitCode::FAILURE;
        }
    }
    if let Some(f) = fct {
        if let Err(e) = report::write_ns3_fct(&w, &f) {
            eprintln!("error: {}: {e}", f.display());
            return ExitCode::FAILURE;
        }
        say!("wrote the FCT file {}", f.display());
    }
    if let Some(o) = out {
        let result = std::fs::create_dir_all(&o)
            .map_err(|e| e.to_string())
            .and_then(|_| report::write_csv(&w, &o.join("flows.csv")).map_err(|e| e.to_string()))
            .and_then(|_| report::write_plots(&w, &s.name, &o).map_err(|e| e.to_string()))
            .and_then(|_| report::write_nscc_csv(&w, &o.join("nscc.csv")).map_err(|e| e.to_string()));
        match result {
            Ok(nscc) => say!(
                "wrote {}/flows.csv{}, queue.svg, window.svg, window_rate.svg, fct_slowdown.svg{}{}",
                o.display(),
                if nscc { ", nscc.csv" } else { "" },
                if report::signal_rates(&w.metrics.signals).is_some() {
                    ", signals.svg"
                } else {
                    ""
                },
                if report::case_shares(&w.metrics.traces).is_some() {
                    format!(", {}.svg", w.cfg.sender_name)
                } else {
                    String::new()
                }
            ),
            Err(e) => {
                eprintln!("error: {}: {e}", o.display());
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}
