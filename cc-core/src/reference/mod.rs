//! `f64` models of the drafts' pseudocode, written for clarity, not speed.
//!
//! They exist to hold the fixed-point engine to the drafts: the property
//! tests run both on the same state and input and compare every output, and
//! the benchmark compares their cost. Firmware never enables the
//! `reference` feature.
//!
//! What the models share with the engine is only what the drafts leave to
//! the implementation and the engine documents: which sample is stale, what
//! counts as a path change, and that the first sample only records.

mod dcqcn;
mod dctcp;
mod hpcc;
mod ldcp;

pub use self::dcqcn::{DcqcnRef, DcqcnRefParams};
pub use self::dctcp::{DctcpRef, DctcpRefParams};
pub use self::hpcc::{HpccRef, HpccRefParams, RefOutcome};
pub use self::ldcp::{LdcpRateRef, LdcpRef, LdcpRefParams};
