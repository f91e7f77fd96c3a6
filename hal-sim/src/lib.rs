//! hal-sim: a packet-level datacenter simulator whose NICs run the cc-core
//! engine, the same one the RISC-V firmware runs (DESIGN §6).
//!
//! ```text
//!  NIC scheduler+pacer ─PktSend─▶ Tx pipeline ─▶ link ─▶ switch(es) ─▶ link ─▶ Rx pipeline (receiver)
//!        ▲                        (telemetry header,     (queue, WRED/ECN,        │ ACK / NACK / CNP /
//!        │ window, rate, timers    ECN codepoint)         telemetry at dequeue)   │ feedback / probe reply
//!  cc-core engine ◀── Rx pipeline (sender) ◀──────────── reverse path ◀───────────┘
//! ```
//!
//! Deterministic for a seed: one event queue ordered by (time, sequence),
//! generators seeded from the scenario, the clock owned by the [`world::World`].
//!
//! Two attributes shape the compiled datapath, and neither changes what
//! it computes. `#[inline(always)]` marks the small functions that every
//! packet goes through (a NIC's transmit and next wake-up, a switch's
//! transmit, the slab's and the telemetry buffers' helpers, the queue's
//! wake-up), so that each is inlined into the handler that calls it
//! rather than paid as a call. `#[inline(never)]` marks the handlers that
//! are rare in every scenario (a flow's start and end, timers, PFC pauses,
//! control packets other than ACKs) and the queue's paths other than its
//! ring, keeping them out of the event loop's hot code. docs/simulator.md
//! ("Speed") has the measurements.
#![warn(missing_docs)]

pub mod model;
pub mod output;
pub mod run;
pub mod setup;

use output::report;
use run::{cpu, world};
use setup::scenario;

use std::path::Path;

/// Loads and runs a scenario file to completion; returns the world (for
/// per-flow and per-port figures) and its summary.
pub fn run_file(path: &Path) -> Result<(world::World, report::Summary), scenario::ScenarioError> {
    let s = scenario::load(path)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    run_scenario(&s, dir, &path.display().to_string())
}

/// Runs a scenario value to completion (`dir` resolves its relative paths,
/// `file` names it in errors); returns the world and its summary.
pub fn run_scenario(
    s: &scenario::Scenario,
    dir: &Path,
    file: &str,
) -> Result<(world::World, report::Summary), scenario::ScenarioError> {
    let mut w = world::World::new(s, dir, file)?;
    let t0 = cpu::Stopwatch::start();
    w.run(|_| {});
    let sum = report::summary(&w, &s.name, &t0);
    Ok((w, sum))
}

/// Puts `v` in a free place of `items` (the last one freed, from `free`,
/// else a new one at the end); the answer is its index. The slab's packets
/// and hops, the event queue's slots and a NIC's per-flow tables reuse
/// their places this way.
#[inline(always)]
pub(crate) fn place<T>(items: &mut Vec<T>, free: &mut Vec<u32>, v: T) -> u32 {
    match free.pop() {
        Some(i) => {
            items[i as usize] = v;
            i
        }
        None => {
            items.push(v);
            (items.len() - 1) as u32
        }
    }
}
