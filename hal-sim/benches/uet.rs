//! uet-htsim's 1024-host permutation, held to uet-htsim's own runs and
//! timed:
//!
//! ```text
//! cargo bench -p hal-sim --bench uet
//! ```
//!
//! `perm_1024n_1024c_0u_2000000b.cm` (each of 1024 hosts sends 2 MB to
//! another) on uet-htsim's default k = 16 fat-tree at 100 Gb/s, NSCC,
//! sprayed over 128 entropy values, as `hal-sim uet-htsim` runs uet-htsim's
//! command lines from its `validate_load_balancing_snd.txt` plan: the
//! oblivious and REPS choosers, with no failure (`-end 1000`) and with
//! eight core links at a quarter of their rate (`-failed 8 -end 3000`).
//! Each row prints the tail FCT beside uet-htsim's
//! (`scenarios/reference/uet-htsim/validate_load_balancing_snd.out`) and
//! whether it is within 10 %, its resends beside uet-htsim's, and the
//! run's CPU time beside a tenth of uet-htsim's on the same work. With
//! `UET_HTSIM` naming uet-htsim's binary (`htsim_uec`, built as
//! docs/reference-runs.md says), each row runs uet-htsim's own command
//! line too, in turn with hal-sim's, for `UET_ROUNDS` rounds (3 unless
//! set): this machine's speed drifts by half over an hour, and a busy host
//! slows hal-sim, which waits on memory, more than uet-htsim, which
//! computes, so only runs taken in turn compare. As `scripts/in-turn.sh`
//! does, each side's lowest CPU time over the rounds is its cost (what a
//! busy host adds is not the program's), and the median is printed beside
//! it. Without `UET_HTSIM` the target is a tenth of the 19.3 s uet-htsim's
//! oblivious row took when it was recorded, and hal-sim runs
//! `UET_ROUNDS` rounds (1 unless set). Then the peak resident memory.
//! About 5 s of CPU a round, and uet-htsim's (10-25 s a row) with
//! `UET_HTSIM`.
//!
//! `cargo bench -p hal-sim --bench uet -- 8192` also runs uet-htsim's
//! 8192-host permutation on its 400 Gb/s leaf-spine
//! (`perm_8192n_8192c_2MB.cm`, `leaf_spine_8192_400g.topo`, `-linkspeed
//! 400000 -paths 128 -end 1000`) to the end and prints its tail, CPU
//! time and the peak memory.

use std::path::Path;

use hal_sim::run::cpu::Stopwatch;
use hal_sim::run::world::World;
use hal_sim::setup::uet_htsim;

/// uet-htsim's CPU seconds for its oblivious run of the matrix, as
/// recorded (docs/reference-runs.md): the target without `UET_HTSIM`.
const UET_HTSIM_CPU_S: f64 = 19.3;

/// CPU seconds (user and system) of this process's waited-for children,
/// from Linux's /proc/self/stat (`cutime`, `cstime`: fields 16 and 17, in
/// USER_HZ ticks, 100 a second on Linux's ABI).
fn children_cpu_s() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields from the third on follow the command's closing parenthesis.
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(13)?.parse::<f64>().ok()? + f.get(14)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// uet-htsim's own run of command line `line`, its files in `dir`, if
/// `UET_HTSIM` names its binary: its CPU seconds. It runs in a folder of
/// its own under the system's temporary one, where it writes its logs
/// (`logout.dat`, `idmap.txt`), and is given the files by their paths.
fn uet_htsim_cpu(line: &str, dir: &Path) -> Option<f64> {
    let bin = std::env::var_os("UET_HTSIM")?;
    let work = std::env::temp_dir().join(format!("hal-sim-uet-bench-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap_or_else(|e| panic!("{}: {e}", work.display()));
    let mut args: Vec<String> = line.split_whitespace().map(String::from).collect();
    for i in 1..args.len() {
        if matches!(args[i - 1].as_str(), "-tm" | "-topo") {
            args[i] = dir.join(&args[i]).display().to_string();
        }
    }
    let before = children_cpu_s()?;
    let status = std::process::Command::new(&bin)
        .args(&args)
        .current_dir(&work)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap_or_else(|e| panic!("UET_HTSIM={}: {e}", bin.to_string_lossy()));
    assert!(status.success(), "uet-htsim {line}: {status}");
    let cpu = children_cpu_s()? - before;
    let _ = std::fs::remove_dir_all(&work);
    Some(cpu)
}

/// Runs uet-htsim's command line `line` from `dir`: the world at its end
/// and the loop's CPU seconds.
fn run_line(line: &str, dir: &Path) -> (World, f64) {
    let args: Vec<String> = line.split_whitespace().map(String::from).collect();
    let s = uet_htsim::parse_args(&args)
        .and_then(|c| uet_htsim::scenario(&c, dir))
        .expect("the command line reads");
    let mut w = World::new(&s, dir, "uet-htsim").expect("the world builds");
    let t0 = Stopwatch::start();
    w.run(|_| {});
    (w, t0.cpu_s())
}

/// The last flow's finish, µs.
fn last_finish_us(w: &World) -> f64 {
    w.flows
        .iter()
        .filter_map(|f| f.finish_ps)
        .max()
        .map_or(f64::NAN, |t| t.as_ps() as f64 / 1e6)
}

/// The lowest and the median of `v` (not empty).
fn lowest_median(v: &[f64]) -> (f64, f64) {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    (v[0], median)
}

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/reference/uet-htsim");
    let rows = [
        ("oblivious", "-end 1000", 212.794, 628),
        ("oblivious", "-end 3000 -failed 8", 280.775, 2958),
        ("reps", "-end 1000", 208.239, 44),
        ("reps", "-end 3000 -failed 8", 245.821, 1696),
    ];
    let same_run = std::env::var_os("UET_HTSIM").is_some();
    let rounds = match std::env::var("UET_ROUNDS") {
        Ok(r) => r
            .parse::<usize>()
            .ok()
            .filter(|&r| r > 0)
            .unwrap_or_else(|| panic!("UET_ROUNDS={r}: a count of rounds, 1 or more")),
        Err(_) if same_run => 3,
        Err(_) => 1,
    };
    println!(
        "uet-htsim's perm_1024n_1024c_0u_2000000b.cm, -sender_cc_only -paths 128 ({} build, {rounds} round(s) in turn)",
        hal_sim::run::cpu::BUILD
    );
    println!();
    println!(
        "{:<30} {:>8} {:>9} {:>7} {:>13} {:>13} {:>13} {:>7} {:>7} {:>7}",
        "", "tail µs", "uet-htsim", "", "resends (its)", "CPU s (med)", "theirs (med)", "target", "", "ratio"
    );
    let mut missed = 0;
    for (lb, flags, tail_us, rtx) in rows {
        let line =
            format!("-tm perm_1024n_1024c_0u_2000000b.cm -sender_cc_only -paths 128 -load_balancing_algo {lb} {flags}");
        let mut ours = Vec::with_capacity(rounds);
        let mut theirs = Vec::with_capacity(rounds);
        let mut last = None;
        for _ in 0..rounds {
            // One world at a time: the last round's goes first.
            drop(last.take());
            // uet-htsim's CPU on this line, measured now, or as recorded.
            theirs.push(uet_htsim_cpu(&line, &dir).unwrap_or(UET_HTSIM_CPU_S));
            let (w, cpu) = run_line(&line, &dir);
            ours.push(cpu);
            last = Some(w);
        }
        let w = last.expect("at least one round");
        let (cpu, cpu_med) = lowest_median(&ours);
        let (them, them_med) = lowest_median(&theirs);
        let all = w.flows.iter().all(|f| f.finish_ps.is_some());
        let tail = last_finish_us(&w);
        let close = all && (tail / tail_us - 1.0).abs() <= 0.10;
        let fast = cpu <= them / 10.0;
        missed += usize::from(!close) + usize::from(!fast);
        println!(
            "{:<30} {:>8.3} {:>9.3} {:>7} {:>6} ({:>4}) {:>5.2} ({:>5.2}) {:>5.2} ({:>5.2}) {:>7.2} {:<7} {:.3} ({:.3})",
            format!("{lb} {flags}"),
            tail,
            tail_us,
            if close { "ok" } else { "NOT met" },
            w.metrics.counters.retransmits,
            rtx,
            cpu,
            cpu_med,
            them,
            them_med,
            them / 10.0,
            if fast { "ok" } else { "NOT met" },
            cpu / them,
            cpu_med / them_med,
        );
    }
    println!();
    if same_run {
        println!(
            "(CPU: the lowest of {rounds} round(s), the median in brackets; target: a tenth of uet-htsim's lowest, its runs in turn with hal-sim's)"
        );
    } else {
        println!("(target CPU: a tenth of uet-htsim's {UET_HTSIM_CPU_S} s as recorded; UET_HTSIM=path/to/htsim_uec times it in turn)");
    }
    if let Some(mib) = hal_sim::run::cpu::peak_rss_mib() {
        println!();
        println!("peak resident memory: {mib:.0} MiB");
    }
    if std::env::args().any(|a| a == "8192") {
        let line = "-tm perm_8192n_8192c_2MB.cm -topo leaf_spine_8192_400g.topo -linkspeed 400000 -sender_cc_only -paths 128 -end 1000";
        let (w, cpu) = run_line(line, &dir);
        let done = w.flows.iter().filter(|f| f.finish_ps.is_some()).count();
        let tail = last_finish_us(&w);
        let ran = done == w.flows.len();
        missed += usize::from(!ran);
        println!();
        println!(
            "8192 hosts at 400 Gb/s ({line}): {done} / {} flows finished ({}), tail {tail:.3} µs, {:.1} s CPU, peak resident memory {:.0} MiB",
            w.flows.len(),
            if ran { "ok" } else { "NOT met" },
            cpu,
            hal_sim::run::cpu::peak_rss_mib().unwrap_or(f64::NAN),
        );
    }
    println!();
    println!("({missed} target(s) not met)");
}
