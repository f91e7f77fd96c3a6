//! CPU time of the simulation loop: speed figures are per CPU-second, so a
//! busy machine slows the wall clock, not the figure.

use std::time::Instant;

/// CPU time this thread has run, from Linux's /proc/thread-self/schedstat
/// (nanoseconds on a CPU, the first field); `None` where that file is not.
fn thread_cpu() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
}

/// Wall and CPU time since it started.
pub struct Stopwatch {
    wall: Instant,
    cpu: Option<f64>,
}

impl Stopwatch {
    /// Starts now.
    pub fn start() -> Self {
        Stopwatch {
            wall: Instant::now(),
            cpu: thread_cpu(),
        }
    }

    /// Wall-clock seconds since the start.
    pub fn wall_s(&self) -> f64 {
        self.wall.elapsed().as_secs_f64()
    }

    /// CPU seconds of this thread since the start (wall-clock seconds
    /// where the CPU time cannot be read).
    pub fn cpu_s(&self) -> f64 {
        match (self.cpu, thread_cpu()) {
            (Some(a), Some(b)) => b - a,
            _ => self.wall_s(),
        }
    }
}

/// This process's peak resident memory, MiB, from Linux's
/// /proc/self/status (`VmHWM`); `None` where that file is not.
pub fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb / 1024.0)
}

/// How this crate was built, for the speed figures: `"plain"`,
/// `"profile-guided"` (`scripts/pgo.sh`) or `"instrumented"` (its
/// training build). From the rustc flags, by `build.rs`.
pub const BUILD: &str = env!("HAL_SIM_BUILD");
