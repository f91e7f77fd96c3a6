//! One event kind's engine path, bracketed for `scripts/profile.sh`, which
//! traces every instruction QEMU executes and counts those between the
//! brackets by function (see README.md, "Profile").
//!
//! The image reads the kind's name (`ldcp-ack`, `hpcc-ack-5`, …; the names
//! of `common/paths.rs`) as one line on the UART, runs [`WARMUP`] events
//! unbracketed and then [`EVENTS`] events, each between a call to
//! [`profile_resume`] and one to [`profile_pause`]. Unknown name: exit 2.
#![no_std]
#![no_main]

use nic_firmware::uart::Uart;
use nic_firmware::{exit, println};

#[path = "common/paths.rs"]
#[allow(dead_code)]
mod paths;
#[path = "../../../cc-core/benches/common/workload.rs"]
#[allow(dead_code)]
mod workload;
use paths::{Bracket, Path};

/// Events counted.
const EVENTS: u32 = 64;
/// Events run first, uncounted, so the counted ones see a flow in its steady state.
const WARMUP: u32 = 64;

/// Marks the start of a counted stretch: the profiler counts from this
/// function's return. Never inlined, so its address is a marker.
#[no_mangle]
#[inline(never)]
pub extern "C" fn profile_resume() {
    // A side effect the optimizer keeps, and a body unlike the other
    // marker's, so the two are never folded into one function.
    core::hint::black_box(1u32);
}

/// Marks the end of a counted stretch.
#[no_mangle]
#[inline(never)]
pub extern "C" fn profile_pause() {
    core::hint::black_box(2u32);
}

struct Marks {
    counting: bool,
}

impl Bracket for Marks {
    fn around<P>(&mut self, prep: P, event: impl FnOnce(&P)) {
        if self.counting {
            profile_resume();
            event(core::hint::black_box(&prep));
            profile_pause();
        } else {
            event(&prep);
        }
    }
}

#[riscv_rt::entry]
fn main() -> ! {
    let mut uart = Uart::take();
    let mut name = heapless::Vec::<u8, 32>::new();
    loop {
        match uart.read_byte() {
            b'\n' | b'\r' => break,
            b => {
                if name.push(b).is_err() {
                    exit(2)
                }
            }
        }
    }
    let Some(path) = Path::from_name(&name) else {
        println!("unknown event kind; one of:");
        for p in Path::all() {
            println!("  {}", p.name());
        }
        exit(2)
    };
    println!(
        "profile: {} ({} events after {} of warm-up)",
        path.name(),
        EVENTS,
        WARMUP
    );
    paths::run(path, WARMUP, &mut Marks { counting: false });
    paths::run(path, EVENTS, &mut Marks { counting: true });
    exit(0)
}
