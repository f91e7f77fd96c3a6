//! Support for the nic-firmware images: the QEMU `virt` machine's UART as
//! the event channel, the retired-instruction counter, and logging.
//!
//! The images themselves are in `src/bin/`: `replay` (the event loop: codec
//! frames in over the UART, answers out) and `bench` (instructions per
//! event from `minstret`); the on-target tests are in `tests/`.
//!
//! # Logging
//!
//! Every image logs through [`defmt`]: compact frames, formatted on the host.
//! The transport is a feature: `log-semihosting` (default) under QEMU, where
//! `scripts/qemu.sh` pipes the frames through `defmt-print`; `log-rtt` on a
//! real board, where probe-rs reads them. Log lines carry the retired
//! instruction count as their timestamp. `DEFMT_LOG` (set in
//! `.cargo/config.toml`) picks the level at build time.
#![no_std]

#[cfg(feature = "channel-semihosting")]
pub mod host_channel;
pub mod uart;

// The runtime (reset handler, trap vector, .data/.bss set-up): linked into
// every image through this crate, the on-target tests included.
use riscv_rt as _;

#[cfg(all(feature = "log-semihosting", feature = "log-rtt"))]
compile_error!("pick one log transport: `log-semihosting` (QEMU) or `log-rtt` (probe-rs)");

#[cfg(feature = "log-semihosting")]
use defmt_semihosting as _;

#[cfg(feature = "log-rtt")]
use defmt_rtt as _;

// With `panic-never` the panic handler is one that fails the link if any
// panic path survived optimization.
#[cfg(feature = "panic-never")]
use panic_never as _;

/// A panic (including a failed on-target test) is logged and ends the run
/// with exit status 101, the status a failed host test has.
#[cfg(not(feature = "panic-never"))]
#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    defmt::error!("{}", defmt::Display2Format(info));
    exit(101)
}

/// `defmt::panic!` (and defmt's failed `assert!`s, as in the on-target
/// tests) has logged its message already: end the run without a second one.
#[cfg(not(feature = "panic-never"))]
#[defmt::panic_handler]
fn defmt_panic() -> ! {
    exit(101)
}

defmt::timestamp!("{=u64}", instret());

// The rv64 image runs from flash (memory-rv64.x); QEMU starts it at the
// start of RAM, where this jumps on to riscv-rt's entry. `la` is
// PC-relative: flash is within reach of RAM.
#[cfg(target_arch = "riscv64")]
core::arch::global_asm!(
    ".section .trampoline, \"ax\"",
    ".globl _trampoline",
    "_trampoline:",
    "la t0, _start",
    "jr t0"
);

/// Retired instructions so far (`minstret`, 64 bits on both XLENs).
/// Exact and repeatable when QEMU runs with `-icount shift=0`.
#[inline(always)]
pub fn instret() -> u64 {
    riscv::register::minstret::read64()
}

/// Ends the run with `code` as QEMU's exit status (semihosting
/// SYS_EXIT_EXTENDED): 0 is the pass verdict.
pub fn exit(code: i32) -> ! {
    #[cfg(target_feature = "zbb")]
    core::hint::black_box(&ZBB_MARKER);
    semihosting::process::exit(code)
}

/// Text `scripts/qemu.sh` looks for in an image built with Zbb
/// (`-C target-feature=+zbb`), to give QEMU's core the extension: the
/// ELF's ISA attributes do not name it. Every image ends through
/// [`exit`], which keeps it.
#[cfg(target_feature = "zbb")]
#[used]
pub static ZBB_MARKER: [u8; 24] = *b"nic-firmware:isa-ext:zbb";

/// Formats one line with `core::fmt` and logs it as a single defmt
/// `println!` frame: for tables, which defmt's own hints cannot pad.
/// Lines longer than 160 bytes are cut.
#[macro_export]
macro_rules! println {
    () => {
        $crate::export::defmt::println!("")
    };
    ($($arg:tt)*) => {{
        let mut line = $crate::export::heapless::String::<160>::new();
        let _ = ::core::fmt::Write::write_fmt(&mut line, format_args!($($arg)*));
        $crate::export::defmt::println!("{=str}", line.as_str());
    }};
}

#[doc(hidden)]
pub mod export {
    pub use defmt;
    pub use heapless;
}
