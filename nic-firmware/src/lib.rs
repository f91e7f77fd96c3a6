//! Support for the nic-firmware images: the QEMU `virt` machine's UART as
//! the event channel, and the retired-instruction counter.
//!
//! The images themselves are in `src/bin/`: `replay` (the event loop: codec
//! frames in over the UART, answers out) and `bench` (instructions per
//! event from `minstret`).
#![no_std]

pub mod uart;

// The panic handler: semihosting's (message, non-zero exit) or, for the
// no-panic proof, panic-never's, which fails the link if any panic path
// survived optimization.
#[cfg(feature = "panic-never")]
use panic_never as _;

/// Retired instructions so far (`minstret`, 64 bits on both XLENs).
/// Exact and repeatable when QEMU runs with `-icount shift=0`.
#[inline(always)]
pub fn instret() -> u64 {
    riscv::register::minstret::read64()
}

/// Ends the run with `code` as QEMU's exit status (semihosting
/// SYS_EXIT_EXTENDED): 0 is the pass verdict.
pub fn exit(code: i32) -> ! {
    semihosting::process::exit(code)
}
