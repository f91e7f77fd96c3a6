//! Output: what a run leaves. Per-flow and per-port figures
//! ([`metrics`]), the summary and its files: table, JSON, CSV and SVG
//! ([`report`]), packet traces ([`trace`]), and sweeps over seeds and
//! parameters ([`sweep`]).

pub mod metrics;
pub mod report;
pub mod sweep;
pub mod trace;
