//! The cc-core engine behind a C ABI, for NIC firmware written in C.
//!
//! A static library (`libcc_ffi.a`) and its header, `include/cc_engine.h`,
//! generated from this file by cbindgen. Everything the engine needs lives
//! in memory the caller gives it: no allocation, no global state, no
//! panic (a build with the `panic-never` feature links only if none is
//! left). Flows are addressed by the handle `cc_flow_start` hands out,
//! which the NIC keeps in its flow context; every event of a flow takes
//! it. Every function answers a `cc_status`; on anything but
//! `CC_STATUS_OK` nothing changed and the output was not written.
//!
//! Units, as in the Rust API: time in nanoseconds since an epoch the
//! caller chooses, windows in 1/16 byte (`_q4`), fractions in 2^-24
//! (`_q24`), speeds in Mb/s, sequence numbers as 32-bit serial numbers.
//! docs/c-abi.md states what a version may change.
#![cfg_attr(not(test), no_std)]
#![allow(non_camel_case_types)]
#![deny(missing_docs)]

mod config;
mod convert;
mod events;
mod hns;
mod table;
mod trace;

pub use config::*;
pub use convert::*;
pub use events::*;
pub use hns::*;
pub use table::{
    cc_engine, cc_engine_align, cc_engine_attach_paths, cc_engine_config, cc_engine_configure, cc_engine_flow_size,
    cc_engine_init, cc_engine_reset, cc_engine_size, cc_engine_stats, cc_flow_end, cc_flow_start, cc_paths_align,
    cc_paths_size, cc_stats,
};
pub use trace::*;

use cc_core::event::Error;

/// What a call did. `CC_STATUS_OK` is 0; every other value says why
/// nothing changed.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum cc_status {
    /// Done; the outputs are written.
    Ok = 0,
    /// No live flow has this handle (never started, or ended).
    UnknownFlow = 1,
    /// No free slot for a new flow.
    TableFull = 2,
    /// The flow already exists (the trace helpers' flow ids).
    FlowExists = 3,
    /// A parameter out of its range (`cc_config_check` names the field).
    InvalidParams = 4,
    /// More hops than `CC_MAX_HOPS`.
    TooManyHops = 5,
    /// A hop's counter widths or unit are not supported.
    BadCounterWidths = 6,
    /// Telemetry older than the flow's history (a reordered ACK).
    StaleTelemetry = 7,
    /// The event does not apply to the flow's algorithm.
    NotApplicable = 8,
    /// A pointer argument was NULL.
    NullPointer = 9,
    /// The engine's memory is too small or misaligned, or the capacity
    /// is 0 or above `CC_MAX_CAPACITY`.
    BadMemory = 10,
    /// An enumerated field (algorithm, ECN echo, …) holds no listed value.
    BadEnum = 11,
    /// A trace frame is malformed (magic, version, length, CRC or a field).
    BadFrame = 12,
    /// An output buffer is too small.
    BufferTooSmall = 13,
    /// An ACK's delay sample is missing where the algorithm needs one, or
    /// its NIC timestamps are wrapped, stale or absurd.
    BadSample = 14,
    /// A configuration's `size` is not the size of the struct of the
    /// algorithm named (`cc_config_size`).
    BadSize = 15,
    /// The engine has live flows: configure it before the first
    /// `cc_flow_start` or after `cc_engine_reset`.
    FlowsLive = 16,
}

impl From<Error> for cc_status {
    fn from(e: Error) -> Self {
        match e {
            Error::UnknownFlow => cc_status::UnknownFlow,
            Error::TableFull => cc_status::TableFull,
            Error::FlowExists => cc_status::FlowExists,
            Error::InvalidParams => cc_status::InvalidParams,
            Error::TooManyHops => cc_status::TooManyHops,
            Error::BadCounterWidths => cc_status::BadCounterWidths,
            Error::StaleTelemetry => cc_status::StaleTelemetry,
            Error::BadSample => cc_status::BadSample,
            Error::NotApplicable => cc_status::NotApplicable,
        }
    }
}

impl cc_status {
    /// The engine's refusal whose status code C passed (the trace helpers
    /// encode refusals with it); `None` for any other code.
    pub(crate) fn refusal_of_code(code: u32) -> Option<Error> {
        Error::ALL.into_iter().find(|&e| cc_status::from(e) as u32 == code)
    }
}

/// Hops of telemetry an event may carry.
pub const CC_MAX_HOPS: u32 = 8;
const _: () = assert!(CC_MAX_HOPS as usize == cc_core::wire::MAX_HOPS);
/// Flows an engine may hold.
pub const CC_MAX_CAPACITY: u32 = 1 << 16;

/// The library's ABI version: the major part changes when a type's layout
/// or a function's meaning changes (docs/c-abi.md).
pub const CC_ABI_VERSION_MAJOR: u32 = 6;
/// The minor part: functions or enumerated values added.
pub const CC_ABI_VERSION_MINOR: u32 = 0;

/// `(major << 16) | minor` of the library linked, to compare with the
/// header's `CC_ABI_VERSION_MAJOR` at start-up.
#[no_mangle]
pub extern "C" fn cc_abi_version() -> u32 {
    CC_ABI_VERSION_MAJOR << 16 | CC_ABI_VERSION_MINOR
}

#[cfg(all(not(test), feature = "panic-handler", feature = "panic-never"))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    extern "C" {
        /// Defined nowhere: a panic path left in the library fails the link.
        fn cc_ffi_panic_is_reachable() -> !;
    }
    // SAFETY: never linked; the call only names the symbol.
    unsafe { cc_ffi_panic_is_reachable() }
}

#[cfg(all(not(test), feature = "panic-handler", not(feature = "panic-never")))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // No panic path is reachable (the `panic-never` build proves it); a
    // firmware's watchdog would take over here.
    loop {
        core::hint::spin_loop();
    }
}

#[cfg(test)]
mod tests;
