//! The firmware benchmark's rows, as each algorithm declares them
//! ([`crate::controller::AlgorithmConfig::ACK_BENCH`] and `CNP_BENCH`):
//! how nic-firmware's benchmark and profiler drive an algorithm, what
//! its instruction budgets are, and what hal-sim's processor model
//! charges its events. Feature `bench`, which the benchmark, the profiler
//! and the simulator enable; firmware never needs it.

use crate::event::{Ack, Nack};
use crate::telemetry::HopSample;

/// The firmware benchmark's bracket around one call of an algorithm's
/// `f64` reference model ([`crate::controller::AlgorithmConfig::reference_ack`]):
/// `prep` is made before the counted region, `step` runs inside it.
#[cfg(feature = "reference")]
pub trait RefBracket {
    /// Counts `step(&prep)`'s instructions.
    fn around<P>(&mut self, prep: P, step: impl FnOnce(&P));
}

/// How the firmware benchmark drives an algorithm's ACK row: a flow of
/// 100 Gb/s with T = 8 µs started at time 0 (cc-core's benchmark flow),
/// then ACK n (from 1) at n · `interval_ns`. The hal-sim processor model
/// charges the algorithm's ACKs what this row measured.
#[derive(Clone, Copy, Debug)]
pub struct AckBench {
    /// The profiler's name of the path (`"timely-ack"`).
    pub name: &'static str,
    /// The benchmark table's row (`"TIMELY ACK"`).
    pub row: &'static str,
    /// ACK n; the ACKs should take every branch of the update.
    /// ACK n, its telemetry (for an algorithm that reads any) written into
    /// the buffer it borrows; filled before the counted region.
    pub ack: for<'a> fn(u32, &'a mut [HopSample; 5]) -> Ack<'a>,
    /// Time between ACKs, ns.
    pub interval_ns: u32,
    /// The engine path's instruction targets, mean and maximum: on
    /// rv32imac (also shown for rv64imac), and on a core with Zbb.
    pub targets: Option<(u32, u32)>,
    /// The target for one flow's state, bytes (the benchmark's state table).
    pub state_bytes: Option<u32>,
}

/// How the firmware benchmark drives the CNP row of an algorithm whose
/// reaction point answers congestion notification packets: a flow as
/// [`AckBench`]'s, then CNP n (from 1) at n · `interval_ns`. The hal-sim
/// processor model charges the algorithm's CNPs, and its ACKs where it
/// has no ACK row, what this row measured.
#[derive(Clone, Copy, Debug)]
pub struct CnpBench {
    /// The profiler's name of the path (`"dcqcn-cnp"`).
    pub name: &'static str,
    /// The benchmark table's row (`"DCQCN CNP (baseline)"`).
    pub row: &'static str,
    /// Time between CNPs, ns.
    pub interval_ns: u32,
}

/// How the firmware benchmark drives the NACK row of an algorithm with a
/// rule of its own for a trimmed packet's NACK: a flow as [`AckBench`]'s,
/// then NACK n (from 1) at n · `interval_ns`.
#[derive(Clone, Copy, Debug)]
pub struct NackBench {
    /// The profiler's name of the path (`"nscc-nack"`).
    pub name: &'static str,
    /// The benchmark table's row (`"NSCC NACK"`).
    pub row: &'static str,
    /// NACK n, filled before the counted region.
    pub nack: fn(u32) -> Nack,
    /// Time between NACKs, ns.
    pub interval_ns: u32,
}

/// How the firmware benchmark drives the timeout row of an algorithm with
/// a rule of its own for a timeout (`Loss`): a flow as [`AckBench`]'s,
/// then a loss at n · `interval_ns` for n from 1.
#[derive(Clone, Copy, Debug)]
pub struct LossBench {
    /// The profiler's name of the path (`"nscc-timeout"`).
    pub name: &'static str,
    /// The benchmark table's row (`"NSCC timeout"`).
    pub row: &'static str,
    /// Time between losses, ns.
    pub interval_ns: u32,
}
